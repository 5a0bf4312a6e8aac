/*
 * cw-sandbox: builds the sandbox of one process and execs it (steps.c), from a plan
 * cw-runner decided (plan.h). It links the C library only: no TLS, no store, no JSON,
 * no libseccomp (the filter was compiled when it was built), so that what every run
 * start pays for is the sandbox and nothing else.
 *
 *   cw-sandbox --plan-fd 4 -- CMD [ARG...]
 *
 * Only cw-runner starts it (runner/sandbox.c), with the message socket on fd 3;
 * started any other way it refuses.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plan.h"
#include "steps.h"

static void __attribute__((noreturn))
usage(void)
{
	fprintf(stderr, "usage: cw-sandbox --plan-fd 4 -- COMMAND [ARG...]\n"
	    "cw-sandbox is started by cw-runner, which writes the plan; see "
	    "`cw-runner spec --plan`.\n");
	exit(2);
}

/* Tell the runner, if it is there, and stderr. */
static void __attribute__((noreturn))
fatal(const char *what)
{
	struct sandbox_msg	 m;

	memset(&m, 0, sizeof m);
	m.kind = SANDBOX_MSG_FATAL;
	m.err = EINVAL;
	snprintf(m.text, sizeof m.text, "cw-sandbox: %s", what);
	(void)!write(PLAN_MSGFD, &m, sizeof m);
	fprintf(stderr, "%s\n", m.text);
	_exit(127);
}

/* The whole plan from fd: a regular file (a memfd) of at most PLAN_MAX bytes. */
static char *
read_plan(int fd, size_t *len)
{
	struct stat	 st;
	char		*buf;
	size_t		 off = 0;
	ssize_t		 n;

	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode))
		fatal("the plan descriptor is not a file");
	if (st.st_size <= 0 || st.st_size > PLAN_MAX)
		fatal("the plan is empty or larger than cw-sandbox accepts");
	if ((buf = malloc((size_t)st.st_size)) == NULL)
		fatal("out of memory for the plan");
	while (off < (size_t)st.st_size) {
		n = pread(fd, buf + off, (size_t)st.st_size - off, (off_t)off);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			fatal("reading the plan failed or it was cut short");
		off += (size_t)n;
	}
	*len = off;
	return buf;
}

int
main(int argc, char **argv)
{
	struct plan	 p;
	struct stat	 st;
	char		 err[512], *buf;
	size_t		 len;
	int		 fd;

	if (argc < 5 || strcmp(argv[1], "--plan-fd") != 0 || strcmp(argv[3], "--") != 0)
		usage();
	if (strcmp(argv[2], "4") != 0)
		usage();	/* the one descriptor the runner uses: nothing to parse */
	fd = PLAN_FD;
	/* The runner's socket on fd 3, or nobody to report to: refuse (run by hand). */
	if (fstat(PLAN_MSGFD, &st) == -1 || !S_ISSOCK(st.st_mode)) {
		fprintf(stderr, "cw-sandbox: no runner on fd %d; only cw-runner starts "
		    "cw-sandbox\n", PLAN_MSGFD);
		return 127;
	}
	/* Ours only: the command must not inherit the runner's socket (its EOF says "exec'd"). */
	if (fcntl(PLAN_MSGFD, F_SETFD, FD_CLOEXEC) == -1)
		fatal("fd 3: fcntl");
	buf = read_plan(fd, &len);
	close(fd);
	if (plan_parse(buf, len, &p, err, sizeof err) == -1)
		fatal(err);
	free(buf);
	steps_run(&p, argv + 4);
}
