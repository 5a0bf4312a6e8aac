/*
 * common/spawnchild.c, the one way clockworkd and cwctl start a child (issue 25): each
 * promise of spawnchild.h is checked on a real child (/bin/sh and coreutils):
 * exactly the environment given (none by default), exactly the descriptors given (a
 * descriptor the parent left inheritable is not there), descriptors that trade places,
 * default signals and an empty mask whatever the parent had, a failed exec reported
 * with its errno, exit statuses and signals, a process group and a working directory.
 */
#define _GNU_SOURCE
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "spawnchild.h"

/* Run argv with env and extra descriptors 3.. ; its stdout, its status. */
static int
run_out(char *const *argv, char *const *env, const int *extra, int nextra, char *out,
    size_t outlen)
{
	char			 err[512];
	struct spawnchild	 sp;
	size_t			 got = 0;
	ssize_t			 n;
	pid_t			 pid;
	int			 p[2], st;

	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	memset(&sp, 0, sizeof sp);
	sp.path = argv[0];
	sp.argv = argv;
	sp.env = env;
	sp.fds[0] = -1;
	sp.fds[1] = p[1];
	sp.fds[2] = -1;
	for (int i = 0; i < nextra; i++)
		sp.fds[3 + i] = extra[i];
	sp.nfds = 3 + nextra;
	if (spawnchild_start(&sp, &pid, err, sizeof err) == -1)
		fail_msg("spawnchild_start: %s", err);
	close(p[1]);
	while (got < outlen - 1 && (n = read(p[0], out + got, outlen - 1 - got)) > 0)
		got += (size_t)n;
	out[got] = '\0';
	close(p[0]);
	assert_int_equal(spawnchild_wait(pid, &st), 0);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

static int
sh_out(const char *script, char *const *env, const int *extra, int nextra, char *out,
    size_t outlen)
{
	char	*argv[] = { "/bin/sh", "-c", (char *)script, NULL };

	return run_out(argv, env, extra, nextra, out, outlen);
}

static void
test_environment_is_what_is_given(void **state)
{
	char	 out[4096], a[] = "A=1", b[] = "PATH=/usr/bin:/bin";
	char	*env[] = { a, b, NULL };

	(void)state;
	setenv("CW_SPAWN_SECRET", "leaked", 1);
	{
		char	*argv[] = { "/usr/bin/env", NULL };

		assert_int_equal(run_out(argv, env, NULL, 0, out, sizeof out), 0);
	}
	assert_string_equal(out, "A=1\nPATH=/usr/bin:/bin\n");
	/* None given: an empty environment, not the parent's. */
	assert_int_equal(sh_out("echo \"[${CW_SPAWN_SECRET-}]\"; /usr/bin/env | wc -l",
	    NULL, NULL, 0, out, sizeof out), 0);
	assert_non_null(strstr(out, "[]\n"));
	assert_null(strstr(out, "leaked"));
}

static void
test_only_the_descriptors_given(void **state)
{
	char	 out[256];
	int	 first, leak, p[2];

	(void)state;
	/* Left inheritable by mistake: the child must not see it. */
	assert_true((first = open("/dev/null", O_RDONLY)) >= 0);
	assert_true((leak = fcntl(first, F_DUPFD, 20)) >= 20);
	close(first);
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	snprintf(out, sizeof out, "for fd in 3 4 %d; do [ -e /proc/self/fd/$fd ] && "
	    "echo \"open $fd\"; done; echo hi >&3", leak);
	{
		char	script[256];

		snprintf(script, sizeof script, "%s", out);
		assert_int_equal(sh_out(script, NULL, &p[1], 1, out, sizeof out), 0);
	}
	assert_string_equal(out, "open 3\n");
	close(p[1]);
	{
		char	buf[8] = "";

		assert_int_equal(read(p[0], buf, sizeof buf - 1), 3);
		assert_string_equal(buf, "hi\n");
	}
	close(p[0]);
	close(leak);
}

/* fds = {b, a} when the parent has them on 1 and 0 the other way round. */
static void
test_descriptors_trade_places(void **state)
{
	char			*argv[] = { "/bin/sh", "-c", "echo one; echo two >&2", NULL };
	char			 err[256], buf[64];
	struct spawnchild	 sp;
	int			 a[2], b[2], st, saved0 = dup(0), saved1 = dup(1);
	pid_t			 pid;
	ssize_t			 n;

	(void)state;
	assert_int_equal(pipe(a), 0);
	assert_int_equal(pipe(b), 0);
	/* a's write end on our 0, b's on our 1, then ask for them crossed over. */
	assert_int_equal(dup2(a[1], 0), 0);
	assert_int_equal(dup2(b[1], 1), 1);
	memset(&sp, 0, sizeof sp);
	sp.path = argv[0];
	sp.argv = argv;
	sp.fds[0] = -1;
	sp.fds[1] = 0;	/* stdout: what is our 0 (a) */
	sp.fds[2] = 1;	/* stderr: what is our 1 (b) */
	sp.nfds = 3;
	st = spawnchild_start(&sp, &pid, err, sizeof err);
	dup2(saved0, 0);
	dup2(saved1, 1);
	close(saved0);
	close(saved1);
	close(a[1]);
	close(b[1]);
	assert_int_equal(st, 0);
	assert_int_equal(spawnchild_wait(pid, &st), 0);
	n = read(a[0], buf, sizeof buf - 1);
	buf[n > 0 ? n : 0] = '\0';
	assert_string_equal(buf, "one\n");
	n = read(b[0], buf, sizeof buf - 1);
	buf[n > 0 ? n : 0] = '\0';
	assert_string_equal(buf, "two\n");
	close(a[0]);
	close(b[0]);
}

static void
test_signals_reset(void **state)
{
	char		 out[256];
	sigset_t	 term, old;

	(void)state;
	signal(SIGPIPE, SIG_IGN);
	signal(SIGUSR1, SIG_IGN);
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigprocmask(SIG_BLOCK, &term, &old);
	assert_int_equal(sh_out("grep -E '^Sig(Blk|Ign)' /proc/self/status", NULL, NULL,
	    0, out, sizeof out), 0);
	sigprocmask(SIG_SETMASK, &old, NULL);
	signal(SIGPIPE, SIG_DFL);
	signal(SIGUSR1, SIG_DFL);
	assert_string_equal(out, "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n");
}

static void
test_exec_failure_is_the_callers(void **state)
{
	char			*argv[] = { "x", NULL }, err[512];
	struct spawnchild	 sp;
	pid_t			 pid = 0;

	(void)state;
	memset(&sp, 0, sizeof sp);
	sp.argv = argv;
	sp.path = "/nonexistent/cw-no-such-program";
	assert_int_equal(spawnchild_start(&sp, &pid, err, sizeof err), -1);
	assert_non_null(strstr(err, "/nonexistent/cw-no-such-program"));
	assert_non_null(strstr(err, strerror(ENOENT)));
	/* Found, but not executable: the exec's own errno comes back. */
	{
		char	 plain[] = "/tmp/cw-spawnchild-XXXXXX";
		int	 fd = mkstemp(plain);

		assert_true(fd >= 0);
		close(fd);
		sp.path = plain;
		assert_int_equal(spawnchild_start(&sp, &pid, err, sizeof err), -1);
		unlink(plain);
		assert_non_null(strstr(err, strerror(EACCES)));
	}
	/* A name is looked up in PATH, never in the working directory. */
	sp.path = "cw-no-such-program-anywhere";
	assert_int_equal(spawnchild_start(&sp, &pid, err, sizeof err), -1);
	/* A bad working directory is reported the same way. */
	sp.path = "/bin/true";
	sp.cwd = "/nonexistent-dir";
	assert_int_equal(spawnchild_start(&sp, &pid, err, sizeof err), -1);
	assert_non_null(strstr(err, strerror(ENOENT)));
	/* No child is left behind by any of them. */
	assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
	assert_int_equal(errno, ECHILD);
}

static void
test_status_group_and_cwd(void **state)
{
	char			*exit7[] = { "/bin/sh", "-c", "exit 7", NULL };
	char			*kill9[] = { "/bin/sh", "-c", "kill -9 $$", NULL };
	char			 err[256], out[128], want[64];
	struct spawnchild	 sp;

	(void)state;
	memset(&sp, 0, sizeof sp);
	sp.path = exit7[0];
	sp.argv = exit7;
	assert_int_equal(spawnchild_run(&sp, err, sizeof err), 7);
	sp.argv = kill9;
	assert_int_equal(spawnchild_run(&sp, err, sizeof err), -1);
	assert_non_null(strstr(err, "signal 9"));

	/* Its own process group: the group id is its own pid. */
	{
		char			*argv[] = { "/bin/sh", "-c",
		    "echo $$ $(cut -d' ' -f5 /proc/$$/stat); pwd", NULL };
		struct spawnchild	 g;
		int			 p[2], st, pid1, pg;
		pid_t			 pid;
		ssize_t			 n;
		size_t			 got;

		assert_int_equal(pipe2(p, O_CLOEXEC), 0);
		memset(&g, 0, sizeof g);
		g.path = argv[0];
		g.argv = argv;
		g.fds[0] = -1;
		g.fds[1] = p[1];
		g.fds[2] = -1;
		g.nfds = 3;
		g.new_pgrp = 1;
		g.cwd = "/tmp";
		assert_int_equal(spawnchild_start(&g, &pid, err, sizeof err), 0);
		close(p[1]);
		/* Two writes (echo, then pwd): read to the end. */
		got = 0;
		while ((n = read(p[0], out + got, sizeof out - 1 - got)) > 0)
			got += (size_t)n;
		out[got] = '\0';
		close(p[0]);
		assert_int_equal(spawnchild_wait(pid, &st), 0);
		assert_int_equal(sscanf(out, "%d %d", &pid1, &pg), 2);
		assert_int_equal(pid1, (int)pid);
		assert_int_equal(pg, (int)pid);
		snprintf(want, sizeof want, "\n/tmp\n");
		assert_non_null(strstr(out, want));
	}
}

static void
test_tool_environment(void **state)
{
	char	*env[SPAWNCHILD_ENV_MAX], extra1[] = "GIT_TERMINAL_PROMPT=0";
	char	*extra[] = { extra1, NULL };
	int	 n = 0, path = 0;

	(void)state;
	setenv("GIT_DIR", "/elsewhere", 1);
	setenv("DISPLAY", ":9", 1);
	spawnchild_env_tool(env, SPAWNCHILD_ENV_MAX, 0, extra);
	for (; env[n] != NULL; n++) {
		assert_null(strstr(env[n], "GIT_DIR"));
		assert_null(strstr(env[n], "DISPLAY"));
		assert_null(strstr(env[n], "CW_SPAWN_SECRET"));
		path += strncmp(env[n], "PATH=", 5) == 0;
	}
	assert_true(n >= 1);
	assert_string_equal(env[n - 1], "GIT_TERMINAL_PROMPT=0");
	assert_int_equal(path, getenv("PATH") != NULL);
	spawnchild_env_tool(env, SPAWNCHILD_ENV_MAX, 1, NULL);
	for (n = 0, path = 0; env[n] != NULL; n++)
		path += strcmp(env[n], "DISPLAY=:9") == 0;
	assert_int_equal(path, 1);
	unsetenv("GIT_DIR");
	unsetenv("DISPLAY");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_environment_is_what_is_given),
		cmocka_unit_test(test_only_the_descriptors_given),
		cmocka_unit_test(test_descriptors_trade_places),
		cmocka_unit_test(test_signals_reset),
		cmocka_unit_test(test_exec_failure_is_the_callers),
		cmocka_unit_test(test_status_group_and_cwd),
		cmocka_unit_test(test_tool_environment),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
