/*
 * bench_hook N HOOK NODE NODEHOOK: the cost of one PreToolUse check, process start to
 * exit, against a live bridge (libcwrunner's, in a thread of this program), for
 * cw-floor-hook and for the Node.js hook of the reference design, N calls each,
 * interleaved so both see the same machine. Each call gets a realistic PreToolUse JSON
 * for an allowed Bash command on stdin and must exit 0. Prints median, p90, p99 and
 * the median ratio, and the median CPU time (user + system) of each. A third series,
 * `cw-floor-hook --version` (same binary, no network), is the machine's cost of
 * starting a process, so the check's own share can be read off.
 * Both hooks read the run token from a 0400 file (--token-file), as in a real run.
 * `bench_hook serve` only runs the bridge and prints "PORT TOKENFILE", for manual
 * probes.
 */
#define _GNU_SOURCE
#include <sys/resource.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/thread.h>

#include "bridge.h"
#include "engine.h"
#include "engine_claude.h"
#include "floor.h"

#define WARMUP	10
#define TOKEN	"0123456789abcdef0123456789abcdef"

extern char **environ;

static const char bench_input[] = "{\"session_id\":\"5b8a4c1e-2f0d-4c6b-9a57-3c1e0f9d2b7a\","
    "\"transcript_path\":\"/home/user/.claude/projects/-work-repo/5b8a4c1e.jsonl\","
    "\"cwd\":\"/home/user/.clockwork/worktrees/task/run-1\",\"permission_mode\":"
    "\"acceptEdits\",\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Bash\","
    "\"tool_input\":{\"command\":\"git status --short && ls -la src | head -n 20\","
    "\"description\":\"Show the working tree state\"},\"tool_use_id\":"
    "\"toolu_01A2B3C4D5E6F7G8H9J0K1L2\"}";

static struct event_base	*bench_base;

static void
bench_emit(void *arg, cJSON *msg)
{
	cJSON_Delete(msg);
}

static void *
bench_loop(void *arg)
{
	event_base_loop(bench_base, EVLOOP_NO_EXIT_ON_EMPTY);
	return NULL;
}

static double
bench_ms(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) * 1e3 + (double)(b->tv_nsec - a->tv_nsec) / 1e6;
}

/* One call: spawn argv with the input on stdin; wall and CPU ms; -1 on a non-zero exit. */
static int
bench_call(char *const argv[], double *wall, double *cpu)
{
	posix_spawn_file_actions_t	fa;
	struct timespec			a, b;
	struct rusage			ru;
	pid_t				pid;
	int				p[2], st, devnull;

	if (pipe(p) == -1)
		return -1;
	devnull = open("/dev/null", O_WRONLY);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[0], 0);
	posix_spawn_file_actions_adddup2(&fa, devnull, 1);
	posix_spawn_file_actions_adddup2(&fa, devnull, 2);
	posix_spawn_file_actions_addclose(&fa, p[1]);
	clock_gettime(CLOCK_MONOTONIC, &a);
	if (posix_spawn(&pid, argv[0], &fa, NULL, argv, environ) != 0) {
		posix_spawn_file_actions_destroy(&fa);
		return -1;
	}
	posix_spawn_file_actions_destroy(&fa);
	close(p[0]);
	close(devnull);
	/* The input fits in the pipe: the write never waits for the child. */
	if (write(p[1], bench_input, sizeof bench_input - 1) < 0 && errno != EPIPE) {
		close(p[1]);
		return -1;
	}
	close(p[1]);
	if (wait4(pid, &st, 0, &ru) == -1)
		return -1;
	clock_gettime(CLOCK_MONOTONIC, &b);
	*wall = bench_ms(&a, &b);
	*cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
	    (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static int
bench_cmp(const void *a, const void *b)
{
	double	x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double
bench_pct(double *v, int n, double q)
{
	int	i = (int)(q * (n - 1) + 0.5);

	return v[i];
}

static void
bench_print(const char *label, double *wall, double *cpu, int n, int failures)
{
	qsort(wall, (size_t)n, sizeof *wall, bench_cmp);
	qsort(cpu, (size_t)n, sizeof *cpu, bench_cmp);
	printf("%-14s calls=%d median_ms=%.3f p90_ms=%.3f p99_ms=%.3f min_ms=%.3f "
	    "cpu_median_ms=%.3f failures=%d\n", label, n, bench_pct(wall, n, 0.5),
	    bench_pct(wall, n, 0.9), bench_pct(wall, n, 0.99), wall[0],
	    bench_pct(cpu, n, 0.5), failures);
}

int
main(int argc, char **argv)
{
	struct bridge_config	 c;
	struct floor_policy	 pol = { 0 };
	struct bridge		*b;
	pthread_t		 t;
	char			 err[256], port[16], tokdir[] = "/tmp/cw-bench-hook.XXXXXX";
	char			 tokfile[64];
	double			*hw, *hc, *nw, *nc, w, u;
	int			 n = 0, i, hf = 0, nf = 0, fd;

	int	serve = argc == 2 && strcmp(argv[1], "serve") == 0;

	if (!serve && (argc != 5 || (n = atoi(argv[1])) <= 0)) {
		fprintf(stderr, "usage: bench_hook N HOOK NODE NODEHOOK | bench_hook serve\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	pol.home = getenv("HOME") ? getenv("HOME") : "/root";
	bench_base = event_base_new();
	memset(&c, 0, sizeof c);
	c.run_id = "bench";
	c.token = TOKEN;
	c.policy = &pol;
	c.emit = bench_emit;
	/* The body is Claude Code's PreToolUse hook: its engine reads the command. */
	c.floor_command = engine_claude_ops.floor_command;
	if ((b = bridge_new(bench_base, &c, err, sizeof err)) == NULL) {
		fprintf(stderr, "bench_hook: %s\n", err);
		return 1;
	}
	snprintf(port, sizeof port, "%d", bridge_port(b));
	if (mkdtemp(tokdir) == NULL) {
		fprintf(stderr, "bench_hook: mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	snprintf(tokfile, sizeof tokfile, "%s/hook.token", tokdir);
	if ((fd = open(tokfile, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0400)) == -1 ||
	    write(fd, TOKEN, strlen(TOKEN)) != (ssize_t)strlen(TOKEN) || close(fd) == -1) {
		fprintf(stderr, "bench_hook: %s: %s\n", tokfile, strerror(errno));
		return 1;
	}
	if (serve) {
		/* For profiling a single hook by hand: the port, then serve until killed. */
		printf("%s %s\n", port, tokfile);
		fflush(stdout);
		bench_loop(NULL);
		return 0;
	}
	if (pthread_create(&t, NULL, bench_loop, NULL) != 0)
		return 1;

	char	*hook[] = { argv[2], "--port", port, "--token-file", tokfile, NULL };
	char	*node[] = { argv[3], argv[4], "--port", port, "--token-file", tokfile, NULL };
	char	*bare[] = { argv[2], "--version", NULL };
	double	*bw, *bc;
	int	 bf = 0;

	hw = calloc((size_t)n, sizeof *hw);
	hc = calloc((size_t)n, sizeof *hc);
	nw = calloc((size_t)n, sizeof *nw);
	nc = calloc((size_t)n, sizeof *nc);
	bw = calloc((size_t)n, sizeof *bw);
	bc = calloc((size_t)n, sizeof *bc);
	for (i = 0; i < WARMUP; i++) {
		if (bench_call(hook, &w, &u) == -1 || bench_call(node, &w, &u) == -1) {
			fprintf(stderr, "bench_hook: a warm-up call did not allow\n");
			return 1;
		}
	}
	for (i = 0; i < n; i++) {
		hf += bench_call(hook, &hw[i], &hc[i]) == -1;
		nf += bench_call(node, &nw[i], &nc[i]) == -1;
		bf += bench_call(bare, &bw[i], &bc[i]) == -1;
	}
	bench_print("hook --version", bw, bc, n, bf);
	bench_print("cw-floor-hook", hw, hc, n, hf);
	bench_print("node-hook.js", nw, nc, n, nf);
	printf("ratio (node / cw-floor-hook, median wall) = %.1fx\n",
	    bench_pct(nw, n, 0.5) / bench_pct(hw, n, 0.5));
	event_base_loopbreak(bench_base);
	unlink(tokfile);
	rmdir(tokdir);
	return hf || nf;
}
