#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "procid.h"

/* Older C libraries' headers lack the pidfd calls' numbers (the same on every arch). */
#ifndef SYS_pidfd_open
#define SYS_pidfd_open		434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal	424
#endif

int
procid_stat(pid_t pid, struct procid *out)
{
	char		 path[64], buf[1024], *p, *save = NULL, *tok;
	ssize_t		 n;
	int		 fd, field;

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0) {
		errno = ESRCH;
		return -1;
	}
	buf[n] = '\0';
	/* The command name may hold spaces and ')': the fields restart after the last one. */
	if ((p = strrchr(buf, ')')) == NULL || p[1] != ' ') {
		errno = EINVAL;
		return -1;
	}
	memset(out, 0, sizeof *out);
	field = 3;
	for (tok = strtok_r(p + 2, " ", &save); tok != NULL;
	    tok = strtok_r(NULL, " ", &save), field++) {
		if (field == 3)
			out->state = tok[0];
		else if (field == 4)
			out->ppid = (pid_t)strtol(tok, NULL, 10);
		else if (field == 5)
			out->pgid = (pid_t)strtol(tok, NULL, 10);
		else if (field == 22) {
			out->start = strtoull(tok, NULL, 10);
			return 0;
		}
	}
	errno = EINVAL;
	return -1;
}

int
procid_pidfd(pid_t pid, unsigned long long start)
{
	struct procid	 now;
	int		 fd;

	if (pid <= 1) {
		errno = EINVAL;
		return -1;
	}
	if ((fd = (int)syscall(SYS_pidfd_open, pid, 0)) == -1)
		return -1;
	if (procid_stat(pid, &now) == -1 || now.start != start) {
		close(fd);
		errno = ESRCH;
		return -1;
	}
	return fd;
}

int
procid_send(int pidfd, int sig)
{
	return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}

int
procid_signal(pid_t pid, unsigned long long start, int sig)
{
	int	 fd, rc, save;

	if ((fd = procid_pidfd(pid, start)) == -1)
		return -1;
	rc = procid_send(fd, sig);
	save = errno;
	close(fd);
	errno = save;
	return rc;
}
