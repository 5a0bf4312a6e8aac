/*
 * bench_sandbox RUNS LABEL [NAME=VALUE...] -- CMD ARGS... [:: LABEL [NAME=VALUE...] -- CMD ARGS...]...
 * Start each CMD RUNS times (fork, execvp, wait; stdout and stderr to /dev/null), timing
 * each start-to-exit with CLOCK_MONOTONIC, after a few untimed warm-up runs. Several
 * commands are run in turn, one start of each per round, so that a change in the
 * machine's load (other builds on a shared machine) falls on all of them alike instead
 * of on whichever ran during it. NAME=VALUE words are set in that command's own
 * environment (in the forked child, so no env(1) is timed). Prints one line a command:
 *   LABEL runs=N median_ms=M p90_ms=P min_ms=L mean_ms=A cpu_median_ms=C failures=F
 * cpu_median_ms is the median CPU time (user + system, from wait4's rusage: the child
 * and the descendants it waited for), which a busy machine disturbs far less than the
 * wall-clock figures. A run whose command exits non-zero counts as a failure (and is
 * still timed). Exit 0 when every run succeeded, 1 otherwise, 2 on a usage error.
 *
 * Every child of ours is waited for, not only the one forked: cw-sandbox makes the
 * run's PID 1 our child too (CLONE_PARENT), and a start ends when both have exited;
 * the CPU times of all of them are summed. The word CW_BENCH_PLAN=FILE is not put in
 * the environment: the child opens FILE on fd 4 and puts our end of a socket on fd 3,
 * as cw-runner does for `cw-sandbox --plan-fd 4 -- CMD` (the sandbox's reports on it
 * are read and dropped), so that cw-sandbox's own start is timed without cw-runner.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WARMUP	10
#define MAXCMDS	8

struct bench_cmd {
	const char	 *label;
	char		**env;		/* NAME=VALUE words, NULL-terminated */
	char		**argv;		/* NULL-terminated */
	double		 *ms, *cpu, sum;
	int		  failures;
};

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The median of n sorted values. */
static double
median(const double *v, long n)
{
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/*
 * One start of argv; returns the elapsed milliseconds, *cpu the CPU milliseconds,
 * *failed set on a bad exit.
 */
/* The socket cw-sandbox reports on: [0] ours (drained), [1] the child's fd 3. */
static int	 plansock[2] = { -1, -1 };

static double
run_once(char **env, char **argv, int devnull, int *failed, double *cpu)
{
	struct timespec t0, t1;
	struct rusage ru;
	char buf[1024];
	pid_t pid, w;
	int status;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if ((pid = fork()) < 0) {
		perror("fork");
		exit(2);
	}
	if (pid == 0) {
		dup2(devnull, STDOUT_FILENO);
		dup2(devnull, STDERR_FILENO);
		for (; *env != NULL; env++) {
			int	 fd;

			if (strncmp(*env, "CW_BENCH_PLAN=", 14) != 0) {
				putenv(*env);
				continue;
			}
			/* The socket is above 9 (main): neither dup2 clobbers the other. */
			if (dup2(plansock[1], 3) == -1 ||
			    (fd = open(*env + 14, O_RDONLY)) == -1 || dup2(fd, 4) == -1)
				_exit(126);
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	*failed = 0;
	*cpu = 0;
	while ((w = wait4(-1, &status, 0, &ru)) != -1 || errno == EINTR) {
		if (w == -1)
			continue;
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			*failed = 1;
		*cpu += (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
		    (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (errno != ECHILD) {
		perror("wait4");
		exit(2);
	}
	while (plansock[0] != -1 && recv(plansock[0], buf, sizeof buf, MSG_DONTWAIT) > 0)
		;
	return (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
}

/* Split argv into commands at "::"; each is LABEL [NAME=VALUE...] -- CMD [ARGS...]. */
static int
parse(int argc, char **argv, struct bench_cmd *cmds)
{
	int	 n = 0, i = 0, j;

	while (i < argc) {
		if (n == MAXCMDS)
			return -1;
		cmds[n].label = argv[i++];
		cmds[n].env = argv + i;
		for (j = i; j < argc && strcmp(argv[j], "--") != 0; j++)
			if (strchr(argv[j], '=') == NULL)
				return -1;
		if (j >= argc - 1)
			return -1;
		argv[j] = NULL;		/* ends env */
		cmds[n].argv = argv + j + 1;
		for (i = j + 1; i < argc && strcmp(argv[i], "::") != 0; i++)
			;
		if (i < argc)
			argv[i++] = NULL;	/* ends argv */
		n++;
	}
	return n;
}

int
main(int argc, char **argv)
{
	struct bench_cmd	 cmds[MAXCMDS];
	double			 dummy;
	long			 runs, i;
	int			 devnull, failed, n, c, bad = 0;

	memset(cmds, 0, sizeof cmds);
	if (argc < 5 || (runs = atol(argv[1])) < 1 ||
	    (n = parse(argc - 2, argv + 2, cmds)) < 1) {
		fprintf(stderr, "usage: bench_sandbox RUNS LABEL [NAME=VALUE...] -- CMD "
		    "[ARGS...] [:: LABEL ... -- CMD ...]...\n");
		return 2;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, plansock) == -1 ||
	    (plansock[0] = fcntl(plansock[0], F_DUPFD_CLOEXEC, 10)) == -1 ||
	    (plansock[1] = fcntl(plansock[1], F_DUPFD_CLOEXEC, 10)) == -1 ||
	    (devnull = open("/dev/null", O_WRONLY | O_CLOEXEC)) < 0) {
		perror("bench_sandbox");
		return 2;
	}
	for (c = 0; c < n; c++)
		if ((cmds[c].ms = calloc((size_t)runs, sizeof(double))) == NULL ||
		    (cmds[c].cpu = calloc((size_t)runs, sizeof(double))) == NULL) {
			perror("bench_sandbox");
			return 2;
		}
	for (i = 0; i < WARMUP; i++)
		for (c = 0; c < n; c++)
			run_once(cmds[c].env, cmds[c].argv, devnull, &failed, &dummy);
	for (i = 0; i < runs; i++)
		for (c = 0; c < n; c++) {
			cmds[c].ms[i] = run_once(cmds[c].env, cmds[c].argv, devnull, &failed,
			    &cmds[c].cpu[i]);
			cmds[c].failures += failed;
			cmds[c].sum += cmds[c].ms[i];
		}
	for (c = 0; c < n; c++) {
		double	*ms = cmds[c].ms, *cpu = cmds[c].cpu;

		qsort(ms, (size_t)runs, sizeof(*ms), cmp_double);
		qsort(cpu, (size_t)runs, sizeof(*cpu), cmp_double);
		printf("%s runs=%ld median_ms=%.3f p90_ms=%.3f min_ms=%.3f mean_ms=%.3f "
		    "cpu_median_ms=%.3f failures=%d\n", cmds[c].label, runs, median(ms, runs),
		    ms[(runs * 9) / 10], ms[0], cmds[c].sum / (double)runs, median(cpu, runs),
		    cmds[c].failures);
		bad |= cmds[c].failures != 0;
		free(ms);
		free(cpu);
	}
	return bad;
}
