/*
 * probe_tiocsti: push a character into a terminal's input queue with TIOCSTI, the way a
 * sandboxed program would type a command into the user's shell. Uses the controlling
 * terminal when there is one (/dev/tty); otherwise opens a pseudo-terminal from
 * /dev/ptmx, makes it the controlling terminal of a new session and tries there, so the
 * only thing that can refuse is the sandbox (the seccomp filter), not a missing tty.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <signal.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "probe_common.h"

/* In a child that leads a new session, so the pty can become its controlling tty. */
static int
tiocsti_pty(void)
{
	int fd, master;
	long rc;
	char c = '#', *name;

	signal(SIGHUP, SIG_IGN);	/* closing our own controlling tty hangs us up */
	if (setsid() < 0) {
		probe_result("setsid", -1, errno);
		return 0;
	}
	if ((master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0 ||
	    grantpt(master) < 0 || unlockpt(master) < 0 ||
	    (name = ptsname(master)) == NULL) {
		probe_result("open_ptmx", -1, errno);
		return 0;
	}
	fprintf(stderr, "probe_tiocsti: no controlling tty, on a new pty\n");
	if ((fd = open(name, O_RDWR | O_CLOEXEC)) < 0) {
		probe_result("open_pts", -1, errno);
		return 0;
	}
	if (ioctl(fd, TIOCSCTTY, 0) < 0)
		fprintf(stderr, "probe_tiocsti: TIOCSCTTY: %s (trying anyway)\n",
		    strerror(errno));
	rc = ioctl(fd, TIOCSTI, &c);
	probe_result("tiocsti", rc, errno);
	close(fd);
	close(master);
	return probe_escaped;
}

int
main(void)
{
	int fd, status;
	long rc;
	char c = '#';
	pid_t pid;

	if ((fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)) >= 0) {
		rc = ioctl(fd, TIOCSTI, &c);
		fprintf(stderr, "probe_tiocsti: on the controlling tty\n");
		probe_result("tiocsti", rc, errno);
		close(fd);
		return probe_escaped;
	}
	fflush(stdout);
	if ((pid = fork()) < 0) {
		perror("fork");
		return 2;
	}
	if (pid == 0)
		_exit(tiocsti_pty());
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status))
		return 1;
	return WEXITSTATUS(status);
}
