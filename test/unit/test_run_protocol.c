/*
 * `cw-runner run` as the daemon sees it, with the command engine: the hello, engine
 * output as bounded log lines, exactly one report as the last line, malformed lines
 * and unknown decision ids that change nothing, stop, stdin EOF, the wall-clock
 * budget, refused run messages, CW_SANDBOX=off made loud, and no process of the run
 * left behind.
 */
#include <sys/stat.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "json.h"

static char	tmp[] = "/tmp/cw-test-run.XXXXXX";
static char	workdir[256];

struct runner {
	pid_t	pid;
	int	in, out;
	char	buf[1 << 20];
	size_t	len;
};

static void
runner_start(struct runner *r, int sandbox_off)
{
	int	pin[2], pout[2];

	assert_int_equal(pipe(pin), 0);
	assert_int_equal(pipe(pout), 0);
	if ((r->pid = fork()) == 0) {
		dup2(pin[0], 0);
		dup2(pout[1], 1);
		close(pin[1]);
		close(pout[0]);
		if (sandbox_off)
			setenv("CW_SANDBOX", "off", 1);
		else
			unsetenv("CW_SANDBOX");
		execl(CW_BIN_DIR "/cw-runner", "cw-runner", "run", (char *)NULL);
		_exit(127);
	}
	close(pin[0]);
	close(pout[1]);
	r->in = pin[1];
	r->out = pout[0];
	r->len = 0;
}

static void
runner_send(struct runner *r, const char *line)
{
	assert_int_equal(write(r->in, line, strlen(line)), (ssize_t)strlen(line));
	assert_int_equal(write(r->in, "\n", 1), 1);
}

/* Read until the output holds needle (or the runner closes it); 1 when found. */
static int
runner_wait_for(struct runner *r, const char *needle, int ms)
{
	struct pollfd	pfd = { .fd = r->out, .events = POLLIN };
	ssize_t		n;

	for (; ms > 0; ms -= 10) {
		r->buf[r->len] = '\0';
		if (strstr(r->buf, needle) != NULL)
			return 1;
		if (poll(&pfd, 1, 10) == 1) {
			n = read(r->out, r->buf + r->len, sizeof r->buf - 1 - r->len);
			if (n <= 0)
				break;
			r->len += (size_t)n;
		}
	}
	r->buf[r->len] = '\0';
	return strstr(r->buf, needle) != NULL;
}

/* Connect to a run's control socket, as a restarted daemon does. */
static int
runner_attach(const char *run_id)
{
	struct sockaddr_un	 sun;
	int			 fd;

	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof sun.sun_path, "%s/runs/%s.sock",
	    getenv("CLOCKWORK_HOME"), run_id);
	assert_true((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&sun, sizeof sun), 0);
	return fd;
}

/* Close stdin if asked, read everything, reap; the exit code. */
static int
runner_end(struct runner *r, int close_in)
{
	int	st;

	if (close_in && r->in != -1) {
		close(r->in);
		r->in = -1;
	}
	runner_wait_for(r, "\x01never", 20000);
	if (r->in != -1)
		close(r->in);
	close(r->out);
	waitpid(r->pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* The report: the last line, parsed. */
static cJSON *
runner_report(struct runner *r)
{
	char	*last, *end;

	assert_true(r->len > 0);
	end = r->buf + r->len - 1;
	assert_true(*end == '\n');
	*end = '\0';
	last = strrchr(r->buf, '\n');
	last = last ? last + 1 : r->buf;
	*end = '\n';
	cJSON	*j = json_parse(last, (size_t)(end - last));
	assert_non_null(j);
	assert_string_equal(json_get_string(j, "type"), "report");
	return j;
}

static int
count(const char *hay, const char *needle)
{
	int	n = 0;

	while ((hay = strstr(hay, needle)) != NULL) {
		n++;
		hay++;
	}
	return n;
}

static void
run_line(char *out, size_t outlen, const char *id, const char *argv_json, int seconds)
{
	snprintf(out, outlen, "{\"v\":1,\"type\":\"run\",\"run_id\":\"%s\",\"task\":\"t\","
	    "\"engine\":\"command\",\"prompt\":\"the prompt\",\"argv\":%s,\"workdir\":\"%s\","
	    "\"budget\":{\"seconds\":%d}}", id, argv_json, workdir, seconds);
}

static int
setup_all(void **state)
{
	char	p[512];

	if (mkdtemp(tmp) == NULL)
		return -1;
	snprintf(workdir, sizeof workdir, "%s/work", tmp);
	mkdir(workdir, 0700);
	snprintf(p, sizeof p, "%s/home", tmp);
	mkdir(p, 0700);
	setenv("HOME", p, 1);
	snprintf(p, sizeof p, "%s/cw", tmp);
	mkdir(p, 0700);
	setenv("CLOCKWORK_HOME", p, 1);
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

static int
teardown_all(void **state)
{
	char	cmd[600];

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
	return system(cmd) == 0 ? 0 : -1;
}

static void
test_completed(void **state)
{
	struct runner	*r = malloc(sizeof *r);
	char		 line[2048];
	cJSON		*rep, *spent;
	int		 n;

	runner_start(r, 0);
	run_line(line, sizeof line, "r-ok", "[\"/bin/sh\",\"-c\",\"echo out; echo err >&2; "
	    "echo \\\"$CW_PROMPT\\\"; head -c 40000 /dev/zero | tr '\\\\\\\\0' x; echo\"]", 30);
	runner_send(r, line);
	assert_true(runner_wait_for(r, "\"type\":\"report\"", 15000));
	assert_int_equal(runner_end(r, 1), 0);
	assert_non_null(strstr(r->buf, "\"type\":\"hello\",\"pid\":"));
	assert_non_null(strstr(r->buf, "\"kind\":\"engine_started\""));
	assert_non_null(strstr(r->buf, "{\"v\":1,\"type\":\"log\",\"stream\":\"stdout\",\"text\":\"out\"}"));
	assert_non_null(strstr(r->buf, "\"stream\":\"stderr\",\"text\":\"err\""));
	assert_non_null(strstr(r->buf, "\"text\":\"the prompt\""));
	/* A 40,000-byte line is cut to the log limit and marked. */
	assert_non_null(strstr(r->buf, "\"truncated\":true"));
	assert_int_equal(count(r->buf, "\"type\":\"report\""), 1);
	rep = runner_report(r);
	assert_string_equal(json_get_string(rep, "status"), "succeeded");
	assert_string_equal(json_get_string(rep, "exit_reason"), "completed");
	assert_int_equal(json_get_int(rep, "exit_code", &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(json_get_bool(rep, "sandboxed", &n), 0);
	assert_int_equal(n, 1);
	assert_true(cJSON_IsArray(cJSON_GetObjectItem(rep, "not_enforced")));
	spent = cJSON_GetObjectItem(rep, "spent");
	assert_non_null(spent);
	assert_non_null(cJSON_GetObjectItem(rep, "denials"));
	assert_non_null(cJSON_GetObjectItem(rep, "approvals"));
	cJSON_Delete(rep);
	free(r);
}

static void
test_failed_and_noise(void **state)
{
	struct runner	*r = malloc(sizeof *r);
	char		 line[2048];
	cJSON		*rep;

	runner_start(r, 0);
	run_line(line, sizeof line, "r-fail", "[\"/bin/sh\",\"-c\",\"sleep 1; exit 3\"]", 30);
	runner_send(r, line);
	assert_true(runner_wait_for(r, "engine_started", 10000));
	runner_send(r, "this is not json");
	runner_send(r, "{\"v\":1,\"type\":\"decision\",\"id\":\"ap-nope\",\"behavior\":\"allow\"}");
	runner_send(r, "{\"v\":1,\"type\":\"what\"}");
	runner_send(r, "{\"v\":1,\"type\":\"run\",\"run_id\":\"again\"}");
	assert_true(runner_wait_for(r, "\"type\":\"report\"", 15000));
	assert_int_equal(runner_end(r, 1), 1);
	assert_int_equal(count(r->buf, "\"kind\":\"malformed_line\""), 3);
	assert_non_null(strstr(r->buf, "\"kind\":\"decision_unknown_id\",\"run_id\":\"r-fail\","
	    "\"id\":\"ap-nope\""));
	rep = runner_report(r);
	assert_string_equal(json_get_string(rep, "status"), "failed");
	assert_string_equal(json_get_string(rep, "exit_reason"), "failed");
	cJSON_Delete(rep);
	free(r);
}

static void
test_stop_eof_budget(void **state)
{
	struct runner	*r = malloc(sizeof *r);
	char		 line[2048];
	cJSON		*rep;
	time_t		 t0;

	/* stop */
	runner_start(r, 0);
	run_line(line, sizeof line, "r-stop", "[\"/bin/sleep\",\"300\"]", 60);
	runner_send(r, line);
	assert_true(runner_wait_for(r, "engine_started", 10000));
	runner_send(r, "{\"v\":1,\"type\":\"stop\",\"reason\":\"asked\"}");
	assert_true(runner_wait_for(r, "\"type\":\"report\"", 10000));
	assert_int_equal(runner_end(r, 1), 1);
	rep = runner_report(r);
	assert_string_equal(json_get_string(rep, "exit_reason"), "stopped");
	cJSON_Delete(rep);

	/*
	 * stdin EOF: the daemon is gone, and the run goes on (SPEC R1). A daemon that
	 * attaches through the control socket gets what was queued (daemon_gone) and a
	 * hello, then talks to the run as before: here it stops it and takes the report.
	 */
	runner_start(r, 0);
	run_line(line, sizeof line, "r-eof", "[\"/bin/sleep\",\"300\"]", 60);
	runner_send(r, line);
	assert_true(runner_wait_for(r, "engine_started", 10000));
	close(r->in);
	r->in = -1;
	/* Its stdout is let go too; the engine still runs. */
	assert_false(runner_wait_for(r, "\"type\":\"report\"", 1500));
	assert_int_equal(kill(r->pid, 0), 0);
	close(r->out);
	r->out = runner_attach("r-eof");
	r->in = dup(r->out);
	r->len = 0;
	assert_true(runner_wait_for(r, "\"reattached\":true", 10000));
	assert_non_null(strstr(r->buf, "\"kind\":\"daemon_gone\""));
	assert_non_null(strstr(r->buf, "\"run_goes_on\":true"));
	/* One daemon at a time: a second connection is closed at once. */
	{
		int	 fd2 = runner_attach("r-eof");
		char	 c;

		assert_int_equal(read(fd2, &c, 1), 0);
		close(fd2);
	}
	runner_send(r, "{\"v\":1,\"type\":\"stop\",\"reason\":\"asked\"}");
	assert_true(runner_wait_for(r, "\"type\":\"report\"", 10000));
	assert_int_equal(runner_end(r, 1), 1);
	rep = runner_report(r);
	assert_string_equal(json_get_string(rep, "exit_reason"), "stopped");
	cJSON_Delete(rep);
	/* The report was kept in a file for a daemon that comes back later. */
	{
		char	 path[600];

		snprintf(path, sizeof path, "%s/runs/r-eof.report.json",
		    getenv("CLOCKWORK_HOME"));
		assert_int_equal(access(path, F_OK), 0);
		snprintf(path, sizeof path, "%s/runs/r-eof.sock", getenv("CLOCKWORK_HOME"));
		assert_int_equal(access(path, F_OK), -1);
	}

	/* budget: a group that ignores SIGTERM is still ended */
	runner_start(r, 0);
	run_line(line, sizeof line, "r-budget", "[\"/bin/sh\",\"-c\",\"trap '' TERM; "
	    "sleep 300 & wait\"]", 2);
	t0 = time(NULL);
	runner_send(r, line);
	assert_true(runner_wait_for(r, "\"type\":\"report\"", 20000));
	assert_int_equal(runner_end(r, 1), 1);
	assert_true(time(NULL) - t0 < 12);
	assert_non_null(strstr(r->buf, "\"kind\":\"budget_exceeded\""));
	rep = runner_report(r);
	assert_string_equal(json_get_string(rep, "exit_reason"), "budget_seconds");
	assert_string_equal(json_get_string(rep, "status"), "stopped");
	cJSON_Delete(rep);
	free(r);
}

/* How many processes on the host have exactly argv { a0, a1 }. */
static int
count_argv(const char *a0, const char *a1)
{
	char		 path[64], buf[256], want[256];
	size_t		 wlen;
	DIR		*d;
	struct dirent	*de;
	int		 n = 0;

	wlen = (size_t)snprintf(want, sizeof want, "%s%c%s%c", a0, '\0', a1, '\0');
	assert_non_null(d = opendir("/proc"));
	while ((de = readdir(d)) != NULL) {
		ssize_t	 len;
		int	 fd;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "/proc/%.16s/cmdline", de->d_name);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
			continue;
		len = read(fd, buf, sizeof buf);
		close(fd);
		if (len == (ssize_t)wlen && memcmp(buf, want, wlen) == 0)
			n++;
	}
	closedir(d);
	return n;
}

static void
test_no_descendant_survives(void **state)
{
	struct runner	*r = malloc(sizeof *r);
	char		 line[2048], argv[256], marker[64];

	/*
	 * A child that leaves the group with setsid and outlives the engine. The pid it
	 * could print is its PID namespace's, so it is found on the host by its argv: a
	 * sleep length no other process has.
	 */
	snprintf(marker, sizeof marker, "300.%d", (int)getpid());
	runner_start(r, 0);
	snprintf(argv, sizeof argv, "[\"/bin/sh\",\"-c\",\"setsid sleep %s > /dev/null 2>&1 "
	    "< /dev/null & echo escapee=$!\"]", marker);
	run_line(line, sizeof line, "r-escape", argv, 30);
	runner_send(r, line);
	assert_true(runner_wait_for(r, "\"type\":\"report\"", 20000));
	runner_end(r, 1);
	assert_non_null(strstr(r->buf, "escapee="));
	assert_int_equal(count_argv("sleep", marker), 0);
	free(r);
}

static void
test_refused(void **state)
{
	struct runner	*r = malloc(sizeof *r);
	char		 line[2048];
	cJSON		*rep;

	runner_start(r, 0);
	runner_send(r, "{\"v\":1,\"type\":\"run\",\"run_id\":\"../up\",\"engine\":\"command\","
	    "\"argv\":[\"/bin/true\"],\"workdir\":\"/tmp\",\"budget\":{\"seconds\":5}}");
	assert_int_equal(runner_end(r, 1), 2);
	rep = runner_report(r);
	assert_string_equal(json_get_string(rep, "status"), "refused");
	assert_non_null(strstr(json_get_string(rep, "error"), "run_id"));
	cJSON_Delete(rep);

	/* There is no bypass mode. */
	runner_start(r, 0);
	snprintf(line, sizeof line, "{\"v\":1,\"type\":\"run\",\"run_id\":\"r-mode\","
	    "\"engine\":\"claude\",\"prompt\":\"p\",\"permission_mode\":\"bypassPermissions\","
	    "\"workdir\":\"%s\",\"budget\":{\"seconds\":5}}", workdir);
	runner_send(r, line);
	assert_int_equal(runner_end(r, 1), 2);
	rep = runner_report(r);
	assert_string_equal(json_get_string(rep, "status"), "refused");
	assert_non_null(strstr(json_get_string(rep, "error"), "permission_mode"));
	assert_null(strstr(r->buf, "engine_started"));
	cJSON_Delete(rep);

	/* The run message may not steer the sandbox through the environment. */
	runner_start(r, 0);
	snprintf(line, sizeof line, "{\"v\":1,\"type\":\"run\",\"run_id\":\"r-env\","
	    "\"engine\":\"command\",\"argv\":[\"/bin/true\"],\"workdir\":\"%s\","
	    "\"budget\":{\"seconds\":5},\"env\":{\"LD_PRELOAD\":\"/tmp/x.so\"}}", workdir);
	runner_send(r, line);
	assert_int_equal(runner_end(r, 1), 2);
	rep = runner_report(r);
	assert_non_null(strstr(json_get_string(rep, "error"), "LD_PRELOAD"));
	cJSON_Delete(rep);
	free(r);
}

static void
test_sandbox_off_is_loud(void **state)
{
	struct runner	*r = malloc(sizeof *r);
	char		 line[2048];
	cJSON		*rep;
	int		 b;

	runner_start(r, 1);
	run_line(line, sizeof line, "r-off", "[\"/bin/true\"]", 10);
	runner_send(r, line);
	assert_true(runner_wait_for(r, "\"type\":\"report\"", 10000));
	assert_int_equal(runner_end(r, 1), 0);
	assert_non_null(strstr(r->buf, "\"stream\":\"runner\",\"text\":\"WARNING: CW_SANDBOX=off"));
	assert_non_null(strstr(r->buf, "\"kind\":\"sandbox_disabled\""));
	rep = runner_report(r);
	assert_int_equal(json_get_bool(rep, "sandboxed", &b), 0);
	assert_int_equal(b, 0);
	cJSON_Delete(rep);
	free(r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_completed),
		cmocka_unit_test(test_failed_and_noise),
		cmocka_unit_test(test_stop_eof_budget),
		cmocka_unit_test(test_no_descendant_survives),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_sandbox_off_is_loud),
	};

	return cmocka_run_group_tests(tests, setup_all, teardown_all);
}
