#define _GNU_SOURCE
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "peerns.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD	77	/* Linux 6.5 */
#endif

int
peerns_init(struct peerns *self)
{
	struct stat	st;

	if (stat("/proc/self/ns/pid", &st) == -1)
		return -1;
	self->dev = st.st_dev;
	self->ino = st.st_ino;
	return 0;
}

/* A pidfd for the peer, -1 where the kernel has none to give (ENOPROTOOPT, EINVAL). */
static int
peerns_pidfd(int fd, int *gone)
{
	int		pidfd = -1;
	socklen_t	len = sizeof pidfd;

	*gone = 0;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len) == 0 &&
	    len == sizeof pidfd)
		return pidfd;
	/* ESRCH: the process that connected has exited; its pid proves nothing now. */
	if (errno == ESRCH)
		*gone = 1;
	return -1;
}

int
peerns_check(const struct peerns *self, int fd, pid_t pid, char *why, size_t whylen)
{
	struct stat	st;
	char		path[64];
	int		pidfd, gone, rc = -1;

	if (pid <= 0) {
		snprintf(why, whylen, "pid %d: the peer is in a PID namespace this daemon "
		    "cannot see", (int)pid);
		return -1;
	}
	pidfd = peerns_pidfd(fd, &gone);
	if (gone) {
		snprintf(why, whylen, "pid %d: the process that connected has exited",
		    (int)pid);
		return -1;
	}
	snprintf(path, sizeof path, "/proc/%d/ns/pid", (int)pid);
	if (stat(path, &st) == -1)
		snprintf(why, whylen, "pid %d: %s: %s", (int)pid, path, strerror(errno));
	else if (st.st_dev != self->dev || st.st_ino != self->ino)
		snprintf(why, whylen, "pid %d: its PID namespace (pid:[%lu]) is not ours "
		    "(pid:[%lu])", (int)pid, (unsigned long)st.st_ino,
		    (unsigned long)self->ino);
	/* The pidfd pins the process: alive now, so the namespace read was its own. */
	else if (pidfd != -1 && syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) == -1)
		snprintf(why, whylen, "pid %d: the process that connected has exited",
		    (int)pid);
	else
		rc = 0;
	if (pidfd != -1)
		close(pidfd);
	return rc;
}
