/*
 * bench_sandbox RUNS LABEL -- CMD ARGS...: start CMD RUNS times (fork, execvp, wait;
 * stdout and stderr to /dev/null), timing each start-to-exit with CLOCK_MONOTONIC, after
 * a few untimed warm-up runs. Prints one line:
 *   LABEL runs=N median_ms=M p90_ms=P min_ms=L mean_ms=A cpu_median_ms=C failures=F
 * cpu_median_ms is the median CPU time (user + system, from wait4's rusage: the child
 * and the descendants it waited for), which a busy machine disturbs far less than the
 * wall-clock figures. A run whose command exits non-zero counts as a failure (and is still timed). Exit 0
 * when every run succeeded, 1 otherwise, 2 on a usage error.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WARMUP	10

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
static double
run_once(char **argv, int devnull, int *failed, double *cpu)
{
	struct timespec t0, t1;
	struct rusage ru;
	pid_t pid;
	int status;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if ((pid = fork()) < 0) {
		perror("fork");
		exit(2);
	}
	if (pid == 0) {
		dup2(devnull, STDOUT_FILENO);
		dup2(devnull, STDERR_FILENO);
		execvp(argv[0], argv);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) < 0) {
		perror("waitpid");
		exit(2);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	*failed = !WIFEXITED(status) || WEXITSTATUS(status) != 0;
	*cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
	    (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
	return (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
}

int
main(int argc, char **argv)
{
	double *ms, *cpu, sum = 0, dummy;
	long runs, i;
	int devnull, failed, failures = 0;

	if (argc < 5 || strcmp(argv[3], "--") != 0 || (runs = atol(argv[1])) < 1) {
		fprintf(stderr, "usage: bench_sandbox RUNS LABEL -- CMD [ARGS...]\n");
		return 2;
	}
	if ((devnull = open("/dev/null", O_WRONLY | O_CLOEXEC)) < 0 ||
	    (ms = calloc((size_t)runs, sizeof(*ms))) == NULL ||
	    (cpu = calloc((size_t)runs, sizeof(*cpu))) == NULL) {
		perror("bench_sandbox");
		return 2;
	}
	for (i = 0; i < WARMUP; i++)
		run_once(argv + 4, devnull, &failed, &dummy);
	for (i = 0; i < runs; i++) {
		ms[i] = run_once(argv + 4, devnull, &failed, &cpu[i]);
		failures += failed;
		sum += ms[i];
	}
	qsort(ms, (size_t)runs, sizeof(*ms), cmp_double);
	qsort(cpu, (size_t)runs, sizeof(*cpu), cmp_double);
	printf("%s runs=%ld median_ms=%.3f p90_ms=%.3f min_ms=%.3f mean_ms=%.3f "
	    "cpu_median_ms=%.3f failures=%d\n", argv[2], runs, median(ms, runs),
	    ms[(runs * 9) / 10], ms[0], sum / (double)runs, median(cpu, runs), failures);
	free(ms);
	free(cpu);
	return failures != 0;
}
