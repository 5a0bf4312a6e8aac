/*
 * The kernel fact the rlimit layer of a run's limits stands on (sandbox/runlimits.h):
 * since Linux 5.14 RLIMIT_NPROC is counted per user namespace, so a process limit set
 * inside a run's own user namespace bounds the run's processes only, and the user's
 * other processes are not counted against it.
 *
 * usage: probe_nproc OUTSIDE LIMIT userns|plain
 *
 * Starts OUTSIDE idle processes of our user in our own user namespace (the user's
 * "other processes"), then a child that (userns) makes a user namespace of its own,
 * sets RLIMIT_NPROC to LIMIT and forks idle children until a fork fails (at most
 * LIMIT + 8, so that it ends even where nothing holds it). Prints
 * "forked N errno NAME": with userns, N is LIMIT - 1 (the child counts itself) however
 * many OUTSIDE there are; with plain, the same limit counts every process of the user
 * and N is 0 once OUTSIDE >= LIMIT. Run as root, it first becomes uid/gid 65534:
 * RLIMIT_NPROC does not bind root. Every process it started is gone when it exits.
 * Exit status: 0 done, 2 usage or setup failure.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

/* An idle child that dies with its parent. */
static pid_t
probe_idle(void)
{
	pid_t	 pid = fork();

	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (;;)
			pause();
	}
	return pid;
}

static int
probe_run(int limit, int userns)
{
	struct rlimit	 rl = { (rlim_t)limit, (rlim_t)limit };
	pid_t		*kids;
	int		 n = 0, e = 0;
	const char	*name;

	if (userns && unshare(CLONE_NEWUSER) == -1) {
		printf("unshare(CLONE_NEWUSER) %s\n", strerror(errno));
		return 2;
	}
	if (setrlimit(RLIMIT_NPROC, &rl) == -1) {
		printf("setrlimit %s\n", strerror(errno));
		return 2;
	}
	if ((kids = calloc((size_t)limit + 8, sizeof *kids)) == NULL)
		return 2;
	while (n < limit + 8) {
		pid_t	 pid = probe_idle();

		if (pid == -1) {
			e = errno;
			break;
		}
		kids[n++] = pid;
	}
	name = e != 0 ? strerrorname_np(e) : "none";
	printf("forked %d errno %s\n", n, name != NULL ? name : "E?");
	fflush(stdout);
	for (int i = 0; i < n; i++)
		kill(kids[i], SIGKILL);
	while (wait(NULL) > 0 || errno == EINTR)
		;
	return 0;
}

int
main(int argc, char **argv)
{
	int	 outside, limit, userns, st = 0;
	pid_t	*idle, run;

	if (argc != 4 || (outside = atoi(argv[1])) < 0 || (limit = atoi(argv[2])) < 2 ||
	    (strcmp(argv[3], "userns") != 0 && strcmp(argv[3], "plain") != 0)) {
		fprintf(stderr, "usage: probe_nproc OUTSIDE LIMIT userns|plain\n");
		return 2;
	}
	userns = strcmp(argv[3], "userns") == 0;
	if (geteuid() == 0 && (setgroups(0, NULL) == -1 || setgid(65534) == -1 ||
	    setuid(65534) == -1)) {
		perror("probe_nproc: become uid 65534");
		return 2;
	}
	if ((idle = calloc((size_t)outside + 1, sizeof *idle)) == NULL)
		return 2;
	for (int i = 0; i < outside; i++)
		if ((idle[i] = probe_idle()) == -1) {
			perror("probe_nproc: the outside processes");
			return 2;
		}
	printf("outside %d limit %d mode %s\n", outside, limit, argv[3]);
	fflush(stdout);
	if ((run = fork()) == 0)
		_exit(probe_run(limit, userns));
	if (run > 0)
		while (waitpid(run, &st, 0) == -1 && errno == EINTR)
			;
	for (int i = 0; i < outside; i++)
		kill(idle[i], SIGKILL);
	while (wait(NULL) > 0 || errno == EINTR)
		;
	return run > 0 && WIFEXITED(st) ? WEXITSTATUS(st) : 2;
}
