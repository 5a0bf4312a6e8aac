/*
 * cw-floor-hook: argument checks, the token file (never a link, FIFO or directory,
 * never a bad token), input sanity, the answer parser (only an unmistakable allow
 * allows, only an unmistakable ask asks), the "ask" output Claude Code reads, and the
 * exits of the real static binary: fail-closed, and exit 0 with the ask JSON.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <fcntl.h>
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

#include "hook.h"
#include "wire.h"

#define OK_HEAD "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n"

static int
judge(const char *resp, char *reason, size_t len)
{
	return hook_parse_answer(resp, strlen(resp), reason, len);
}

static void
test_args(void **state)
{
	char		 err[128];
	const char	*file;
	int		 port;
	char		*good[] = { "h", "--port", "4242", "--token-file", "/x/hook.token", NULL };
	char		*noport[] = { "h", "--token-file", "/x/t", NULL };
	char		*nofile[] = { "h", "--port", "1", NULL };
	char		*badport[] = { "h", "--port", "70000", "--token-file", "/x/t", NULL };
	char		*junkport[] = { "h", "--port", "12x", "--token-file", "/x/t", NULL };
	char		*relative[] = { "h", "--port", "1", "--token-file", "t", NULL };
	char		*extra[] = { "h", "--port", "1", "--token-file", "/x/t", "--what", NULL };
	/* The token itself on argv is gone for good: --run is an unknown argument. */
	char		*run[] = { "h", "--port", "1", "--run", "abc123", NULL };

	(void)state;
	assert_int_equal(hook_args(5, good, &port, &file, err, sizeof err), 0);
	assert_int_equal(port, 4242);
	assert_string_equal(file, "/x/hook.token");
	assert_int_equal(hook_args(3, noport, &port, &file, err, sizeof err), -1);
	assert_int_equal(hook_args(3, nofile, &port, &file, err, sizeof err), -1);
	assert_int_equal(hook_args(5, badport, &port, &file, err, sizeof err), -1);
	assert_int_equal(hook_args(5, junkport, &port, &file, err, sizeof err), -1);
	assert_int_equal(hook_args(5, relative, &port, &file, err, sizeof err), -1);
	assert_int_equal(hook_args(6, extra, &port, &file, err, sizeof err), -1);
	assert_int_equal(hook_args(5, run, &port, &file, err, sizeof err), -1);
	assert_non_null(strstr(err, "--run"));
}

static void
put(const char *path, const char *text, size_t len)
{
	int	fd;

	assert_true((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0400)) != -1);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	close(fd);
}

static void
test_token_file(void **state)
{
	char	dir[] = "/tmp/cw-test-hook.XXXXXX", p[256], q[256], tok[HOOK_MAX_TOKEN + 2];
	char	err[512], big[HOOK_MAX_TOKEN + 2];

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(p, sizeof p, "%s/good", dir);
	put(p, "abc123", 6);
	assert_int_equal(hook_token_read(p, tok, sizeof tok, err, sizeof err), 0);
	assert_string_equal(tok, "abc123");
	snprintf(p, sizeof p, "%s/newline", dir);
	put(p, "abc123\n", 7);
	assert_int_equal(hook_token_read(p, tok, sizeof tok, err, sizeof err), 0);
	assert_string_equal(tok, "abc123");
	/* Nothing that could smuggle a header, nothing empty or oversized. */
	snprintf(p, sizeof p, "%s/crlf", dir);
	put(p, "a\r\nX: y", 8);
	assert_int_equal(hook_token_read(p, tok, sizeof tok, err, sizeof err), -1);
	snprintf(p, sizeof p, "%s/space", dir);
	put(p, "a b", 3);
	assert_int_equal(hook_token_read(p, tok, sizeof tok, err, sizeof err), -1);
	snprintf(p, sizeof p, "%s/empty", dir);
	put(p, "", 0);
	assert_int_equal(hook_token_read(p, tok, sizeof tok, err, sizeof err), -1);
	snprintf(p, sizeof p, "%s/big", dir);
	memset(big, 'a', sizeof big);
	put(p, big, sizeof big);
	assert_int_equal(hook_token_read(p, tok, sizeof tok, err, sizeof err), -1);
	assert_non_null(strstr(err, "bad token"));
	/* Missing, a link to a good one, a FIFO (must not block), a directory. */
	snprintf(p, sizeof p, "%s/missing", dir);
	assert_int_equal(hook_token_read(p, tok, sizeof tok, err, sizeof err), -1);
	assert_non_null(strstr(err, "cannot open the token file"));
	snprintf(p, sizeof p, "%s/link", dir);
	snprintf(q, sizeof q, "%s/good", dir);
	assert_int_equal(symlink(q, p), 0);
	assert_int_equal(hook_token_read(p, tok, sizeof tok, err, sizeof err), -1);
	snprintf(p, sizeof p, "%s/fifo", dir);
	assert_int_equal(mkfifo(p, 0600), 0);
	assert_int_equal(hook_token_read(p, tok, sizeof tok, err, sizeof err), -1);
	assert_non_null(strstr(err, "not a regular file"));
	assert_int_equal(hook_token_read(dir, tok, sizeof tok, err, sizeof err), -1);
	for (const char *n = "good\0newline\0crlf\0space\0empty\0big\0link\0fifo\0"; *n;
	    n += strlen(n) + 1) {
		snprintf(p, sizeof p, "%s/%s", dir, n);
		unlink(p);
	}
	rmdir(dir);
}

static void
test_input(void **state)
{
	assert_int_equal(hook_input_ok("{\"a\":1}", 7), 0);
	assert_int_equal(hook_input_ok("  \n{}\n", 6), 0);
	assert_int_equal(hook_input_ok("", 0), -1);
	assert_int_equal(hook_input_ok("[1,2]", 5), -1);
	assert_int_equal(hook_input_ok("{", 1), -1);
	assert_int_equal(hook_input_ok("{\0}", 3), -1);
	assert_int_equal(hook_input_ok("hello", 5), -1);
}

static int
hc(const char *s)
{
	char	 reason[256];

	return hook_input_controls(s, strlen(s), reason, sizeof reason);
}

/* A body that decodes to a NUL (or another control character) is refused. */
static void
test_input_controls(void **state)
{
	char		 reason[256];
	const char	*nul = "{\"tool_name\":\"Bash\",\"tool_input\":{\"command\":"
	    "\"ls\\u0000; git push -f origin main\"}}";

	(void)state;
	assert_int_equal(hook_input_controls(nul, strlen(nul), reason, sizeof reason), -1);
	assert_non_null(strstr(reason, "0x00"));
	/* Not an escape JSON knows: the decoder refuses the body anyway. */
	assert_int_equal(hc("{\"c\":\"a\\U0000\"}"), 0);
	assert_int_equal(hc("{\"c\":\"a\\u001B\"}"), -1);
	assert_int_equal(hc("{\"c\":\"a\\r\"}"), -1);
	/* An escaped backslash, then text. */
	assert_int_equal(hc("{\"c\":\"a\\\\u0000\"}"), 0);
	assert_int_equal(hc("{\"c\":\"a\\nb\\tc\\u000a\"}"), 0);
	/* A raw NUL right after a backslash (found by fuzz_hook). */
	assert_int_equal(hook_input_controls("{\"c\":\"a\\\0b\"}", 12, reason,
	    sizeof reason), -1);
	/* Cut short: not a control character. */
	assert_int_equal(hc("{\"c\":\"a\\u00"), 0);
}

static void
test_request_head(void **state)
{
	char	buf[512];
	int	n;

	n = hook_request_head(buf, sizeof buf, 4242, "tok", 17);
	assert_true(n > 0);
	assert_non_null(strstr(buf, "POST /floor HTTP/1.1\r\n"));
	assert_non_null(strstr(buf, "Content-Length: 17\r\n"));
	assert_non_null(strstr(buf, CW_HOOK_RUN_HEADER ": tok\r\n"));
	assert_non_null(strstr(buf, "Connection: close\r\n\r\n"));
	assert_int_equal(hook_request_head(buf, 20, 4242, "tok", 17), -1);
}

static void
test_answers(void **state)
{
	char	r[256];

	assert_int_equal(judge(OK_HEAD "{\"decision\":\"allow\",\"reason\":\"\"}", r, sizeof r),
	    HOOK_EXIT_ALLOW);
	assert_int_equal(judge("HTTP/1.0 200 OK\r\n\r\n {\"decision\" : \"allow\"} ", r,
	    sizeof r), HOOK_EXIT_ALLOW);
	assert_int_equal(judge(OK_HEAD "{\"decision\":\"deny\",\"reason\":\"no \\\"way\\\"\"}",
	    r, sizeof r), HOOK_EXIT_DENY);
	assert_string_equal(r, "no \"way\"");
	/* "allow" only inside another value, or nested, counts for nothing. */
	assert_int_equal(judge(OK_HEAD "{\"reason\":\"\\\"decision\\\":\\\"allow\\\"\"}", r,
	    sizeof r), HOOK_EXIT_DENY);
	assert_int_equal(judge(OK_HEAD "{\"x\":{\"decision\":\"allow\"}}", r, sizeof r),
	    HOOK_EXIT_DENY);
	assert_int_equal(judge(OK_HEAD "{\"x\":[\"decision\",\"allow\"]}", r, sizeof r),
	    HOOK_EXIT_DENY);
	/* Any deny among duplicates wins. */
	assert_int_equal(judge(OK_HEAD "{\"decision\":\"allow\",\"decision\":\"deny\"}", r,
	    sizeof r), HOOK_EXIT_DENY);
	assert_int_equal(judge(OK_HEAD "{\"decision\":\"allowed\"}", r, sizeof r),
	    HOOK_EXIT_DENY);
	assert_int_equal(judge(OK_HEAD "{\"decision\":\"ALLOW\"}", r, sizeof r),
	    HOOK_EXIT_DENY);
	assert_int_equal(judge(OK_HEAD "{\"decision\":true}", r, sizeof r), HOOK_EXIT_DENY);
	/* Not 200, truncated, trailing junk, not HTTP. */
	assert_int_equal(judge("HTTP/1.1 500 Oops\r\n\r\n{\"decision\":\"allow\"}", r,
	    sizeof r), HOOK_EXIT_DENY);
	assert_non_null(strstr(r, "500"));
	assert_int_equal(judge("HTTP/1.1 2000 OK\r\n\r\n{\"decision\":\"allow\"}", r,
	    sizeof r), HOOK_EXIT_DENY);
	assert_int_equal(judge(OK_HEAD "{\"decision\":\"allow\"", r, sizeof r),
	    HOOK_EXIT_DENY);
	assert_int_equal(judge(OK_HEAD "{\"decision\":\"allow\"}x", r, sizeof r),
	    HOOK_EXIT_DENY);
	assert_int_equal(judge("HTTP/1.1 200 OK\r\n{\"decision\":\"allow\"}", r, sizeof r),
	    HOOK_EXIT_DENY);
	assert_int_equal(judge("SSH-2.0-x\r\n\r\n{\"decision\":\"allow\"}", r, sizeof r),
	    HOOK_EXIT_DENY);
	assert_int_equal(judge("", r, sizeof r), HOOK_EXIT_DENY);
	/* Escapes decode before the comparison; other values are skipped properly. */
	assert_int_equal(judge(OK_HEAD "{\"n\":-1.5e3,\"t\":true,\"z\":null,\"a\":[{},[]],"
	    "\"decision\":\"\\u0061llow\"}", r, sizeof r), HOOK_EXIT_ALLOW);
	/* A reason longer than the buffer is cut, never overflowed. */
	assert_int_equal(judge(OK_HEAD "{\"decision\":\"deny\",\"reason\":\"0123456789"
	    "0123456789\"}", r, 8), HOOK_EXIT_DENY);
	assert_int_equal(strlen(r), 7);
}

/* The policy's ask: exactly one top-level "decision" that is exactly "ask". */
static void
test_answers_ask(void **state)
{
	char	r[256];

	(void)state;
	assert_int_equal(judge(OK_HEAD "{\"decision\":\"ask\",\"reason\":\"a person "
	    "answers\",\"rule\":\"x\"}", r, sizeof r), HOOK_ASK);
	assert_string_equal(r, "a person answers");
	assert_int_equal(judge(OK_HEAD "{\"decision\":\"\\u0061sk\"}", r, sizeof r),
	    HOOK_ASK);
	assert_non_null(strstr(r, "asks a person"));	/* a reason even when none came */
	/* Two decisions, whichever they are, are a deny. */
	assert_int_equal(judge(OK_HEAD "{\"decision\":\"ask\",\"decision\":\"allow\"}",
	    r, sizeof r), HOOK_EXIT_DENY);
	assert_int_equal(judge(OK_HEAD "{\"decision\":\"allow\",\"decision\":\"ask\"}",
	    r, sizeof r), HOOK_EXIT_DENY);
	assert_int_equal(judge(OK_HEAD "{\"decision\":\"ask\",\"decision\":\"ask\"}",
	    r, sizeof r), HOOK_EXIT_DENY);
	assert_int_equal(judge(OK_HEAD "{\"decision\":\"ASK\"}", r, sizeof r),
	    HOOK_EXIT_DENY);
	assert_int_equal(judge(OK_HEAD "{\"decision\":\"asking\"}", r, sizeof r),
	    HOOK_EXIT_DENY);
	assert_int_equal(judge(OK_HEAD "{\"x\":{\"decision\":\"ask\"}}", r, sizeof r),
	    HOOK_EXIT_DENY);
	assert_int_equal(judge("HTTP/1.1 403 No\r\n\r\n{\"decision\":\"ask\"}", r,
	    sizeof r), HOOK_EXIT_DENY);
	assert_int_equal(judge(OK_HEAD "{\"decision\":\"ask\"}x", r, sizeof r),
	    HOOK_EXIT_DENY);
}

/* Is s (length n) the ask JSON, its reason a valid string of printable ASCII? */
static int
ask_json_ok(const char *s, int n)
{
	static const char	head[] = "{\"hookSpecificOutput\":{\"hookEventName\":"
	    "\"PreToolUse\",\"permissionDecision\":\"ask\",\"permissionDecisionReason\":\"";
	int			i;

	if (n < (int)sizeof head + 3 || (size_t)n != strlen(s) ||
	    memcmp(s, head, sizeof head - 1) != 0 || strcmp(s + n - 4, "\"}}\n") != 0)
		return 0;
	for (i = (int)sizeof head - 1; i < n - 4; i++) {
		if (s[i] < 0x20 || s[i] > 0x7e || s[i] == '"')
			return 0;
		if (s[i] == '\\' && (i + 1 >= n - 4 || (s[i + 1] != '"' &&
		    s[i + 1] != '\\')))
			return 0;
		if (s[i] == '\\')
			i++;
	}
	return 1;
}

static void
test_ask_output(void **state)
{
	char	out[HOOK_MAX_ASK_OUTPUT], big[4 * HOOK_MAX_ASK_OUTPUT];
	int	n;

	(void)state;
	n = hook_ask_output(out, sizeof out, "risk destructive (task_ask:rm)");
	assert_string_equal(out, "{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\","
	    "\"permissionDecision\":\"ask\",\"permissionDecisionReason\":\"risk "
	    "destructive (task_ask:rm)\"}}\n");
	assert_int_equal(n, (int)strlen(out));
	/* Quotes and backslashes escaped; controls and non-ASCII bytes made '?'. */
	n = hook_ask_output(out, sizeof out, "a \"b\" \\c\nd\xc3\xa9\x7f");
	assert_true(ask_json_ok(out, n));
	assert_non_null(strstr(out, "\"a \\\"b\\\" \\\\c?d???\"}}"));
	/* A reason of any length fits, cut, still valid JSON (a cut never splits \"). */
	memset(big, '"', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	n = hook_ask_output(out, sizeof out, big);
	assert_true(n > 0 && n < HOOK_MAX_ASK_OUTPUT);
	assert_true(ask_json_ok(out, n));
	memset(big, 'x', sizeof big - 1);
	n = hook_ask_output(out, sizeof out, big);
	assert_true(n > 0 && n < HOOK_MAX_ASK_OUTPUT);
	assert_true(ask_json_ok(out, n));
	n = hook_ask_output(out, sizeof out, "");
	assert_true(ask_json_ok(out, n));
	/* A buffer below the bound is refused, not overrun. */
	assert_int_equal(hook_ask_output(out, sizeof out - 1, "x"), -1);
}

static void
test_deep_nesting(void **state)
{
	char	buf[4096], r[64];
	size_t	n = 0;

	n += (size_t)snprintf(buf, sizeof buf, OK_HEAD "{\"x\":");
	while (n < 2000)
		buf[n++] = '[';
	buf[n] = '\0';
	assert_int_equal(judge(buf, r, sizeof r), HOOK_EXIT_DENY);
}

/* A listening socket that accepts nothing: connects succeed, answers never come. */
static int
silent_listener(int *port)
{
	struct sockaddr_in	sin;
	socklen_t		sl = sizeof sin;
	int			fd;

	fd = socket(AF_INET, SOCK_STREAM, 0);
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&sin, sizeof sin), 0);
	assert_int_equal(listen(fd, 8), 0);
	getsockname(fd, (struct sockaddr *)&sin, &sl);
	*port = ntohs(sin.sin_port);
	return fd;
}

static void
test_check_errors(void **state)
{
	char		r[256];
	int		port, fd;
	struct timespec	a, b;

	/* Nothing listening: refused, deny. */
	fd = silent_listener(&port);
	close(fd);
	assert_int_equal(hook_check(port, "t", "{}", 2, 1000, r, sizeof r), HOOK_EXIT_DENY);
	assert_non_null(strstr(r, "cannot reach"));
	/* Listening but silent: the deadline ends it, deny. */
	fd = silent_listener(&port);
	clock_gettime(CLOCK_MONOTONIC, &a);
	assert_int_equal(hook_check(port, "t", "{}", 2, 300, r, sizeof r), HOOK_EXIT_DENY);
	clock_gettime(CLOCK_MONOTONIC, &b);
	assert_true((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 < 2000);
	assert_non_null(strstr(r, "timed out"));
	close(fd);
}

/*
 * A bridge that closes its first `closes` connections unread and answers `answer`
 * (a JSON body) on the next one (the bridge under a run's flood of idle connections
 * closes one of ours before it reads it: e2e/claude_floor's flood rows). Forked;
 * returns its pid.
 */
static pid_t
answering_bridge(int closes, int *port, const char *answer)
{
	int	fd = silent_listener(port);
	pid_t	pid;

	assert_true((pid = fork()) != -1);
	if (pid == 0) {
		char	buf[4096];
		int	c;

		for (int i = 0; i < closes; i++)
			if ((c = accept(fd, NULL, NULL)) != -1)
				close(c);
		if ((c = accept(fd, NULL, NULL)) == -1)
			_exit(1);
		(void)!read(c, buf, sizeof buf);
		(void)!write(c, OK_HEAD, strlen(OK_HEAD));
		(void)!write(c, answer, strlen(answer));
		close(c);
		_exit(0);
	}
	close(fd);
	return pid;
}

static pid_t
closing_bridge(int closes, int *port)
{
	return answering_bridge(closes, port, "{\"decision\":\"allow\"}");
}

static void
test_check_closed_unanswered(void **state)
{
	char	r[256];
	int	port, st;
	pid_t	pid;

	/* Closed once, unanswered: asked again, allowed. */
	pid = closing_bridge(1, &port);
	assert_int_equal(hook_check(port, "t", "{}", 2, 5000, r, sizeof r), HOOK_EXIT_ALLOW);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	/* Closed every time: a bounded number of tries, then deny, saying why. */
	pid = closing_bridge(1000, &port);
	assert_int_equal(hook_check(port, "t", "{}", 2, 5000, r, sizeof r), HOOK_EXIT_DENY);
	assert_non_null(strstr(r, "without an answer"));
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
}

/* Run the static binary with input on stdin; its exit status, stdout and stderr. */
static int
run_hook(char *const argv[], const char *in, size_t inlen, char *err, size_t errlen)
{
	int	pin[2], perr[2], st;
	pid_t	pid;
	ssize_t	n;
	size_t	off = 0, got = 0;

	assert_int_equal(pipe(pin), 0);
	assert_int_equal(pipe(perr), 0);
	if ((pid = fork()) == 0) {
		dup2(pin[0], 0);
		dup2(perr[1], 1);
		dup2(perr[1], 2);
		close(pin[1]);
		close(perr[0]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(pin[0]);
	close(perr[1]);
	signal(SIGPIPE, SIG_IGN);
	while (off < inlen && (n = write(pin[1], in + off, inlen - off)) > 0)
		off += (size_t)n;
	close(pin[1]);
	while (got + 1 < errlen && (n = read(perr[0], err + got, errlen - 1 - got)) > 0)
		got += (size_t)n;
	err[got] = '\0';
	close(perr[0]);
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void
test_binary_fails_closed(void **state)
{
	char		 err[512], portbuf[16];
	char		*big;
	int		 port, fd;
	char		 dir[] = "/tmp/cw-test-hook.XXXXXX", tokfile[128], nofile[128];
	char		*noargs[] = { CW_BIN_DIR "/cw-floor-hook", NULL };
	char		*args[] = { CW_BIN_DIR "/cw-floor-hook", "--port", portbuf,
			    "--token-file", tokfile, NULL };
	char		*noargs_tok[] = { CW_BIN_DIR "/cw-floor-hook", "--port", portbuf,
			    "--token-file", nofile, NULL };
	const char	*in = "{\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"ls\"}}";

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(tokfile, sizeof tokfile, "%s/hook.token", dir);
	snprintf(nofile, sizeof nofile, "%s/missing", dir);
	put(tokfile, "tok\n", 4);
	assert_int_equal(run_hook(noargs, in, strlen(in), err, sizeof err), HOOK_EXIT_DENY);
	assert_non_null(strstr(err, "usage"));
	fd = silent_listener(&port);
	close(fd);
	snprintf(portbuf, sizeof portbuf, "%d", port);
	/* A token file that cannot be read denies before anything else. */
	assert_int_equal(run_hook(noargs_tok, in, strlen(in), err, sizeof err),
	    HOOK_EXIT_DENY);
	assert_non_null(strstr(err, "Clockwork floor: cannot open the token file"));
	/* Bridge unreachable. */
	assert_int_equal(run_hook(args, in, strlen(in), err, sizeof err), HOOK_EXIT_DENY);
	assert_non_null(strstr(err, "Clockwork floor: cannot reach"));
	/* Malformed and oversized input never reach the network. */
	assert_int_equal(run_hook(args, "not json", 8, err, sizeof err), HOOK_EXIT_DENY);
	assert_non_null(strstr(err, "not a JSON object"));
	big = malloc(CW_HOOK_MAX_INPUT + 100);
	memset(big, ' ', CW_HOOK_MAX_INPUT + 100);
	big[0] = '{';
	big[CW_HOOK_MAX_INPUT + 99] = '}';
	assert_int_equal(run_hook(args, big, CW_HOOK_MAX_INPUT + 100, err, sizeof err),
	    HOOK_EXIT_DENY);
	assert_non_null(strstr(err, "larger than the limit"));
	free(big);
	unlink(tokfile);
	rmdir(dir);
}

/*
 * The bridge says the policy asks: the binary exits 0 with the ask JSON on stdout
 * and nothing else (Claude Code then consults the approval tool); an allow exits 0
 * with nothing on stdout (Claude Code decides, as before).
 */
static void
test_binary_asks(void **state)
{
	char		 out[2048], portbuf[16];
	int		 port, st;
	pid_t		 pid;
	char		 dir[] = "/tmp/cw-test-hook.XXXXXX", tokfile[128];
	char		*args[] = { CW_BIN_DIR "/cw-floor-hook", "--port", portbuf,
			    "--token-file", tokfile, NULL };
	const char	*in = "{\"tool_name\":\"Bash\",\"tool_input\":{\"command\":"
			    "\"rm -rf sub\"}}";
	const char	*ctl = "{\"tool_name\":\"Bash\",\"tool_input\":{\"command\":"
			    "\"ls\\r; rm -rf sub\"}}";

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(tokfile, sizeof tokfile, "%s/hook.token", dir);
	put(tokfile, "tok\n", 4);
	pid = answering_bridge(0, &port, "{\"decision\":\"ask\",\"reason\":\"Clockwork "
	    "asks a person about this ordinary command (task_ask:rm)\"}");
	snprintf(portbuf, sizeof portbuf, "%d", port);
	assert_int_equal(run_hook(args, in, strlen(in), out, sizeof out), HOOK_EXIT_ALLOW);
	assert_string_equal(out, "{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\","
	    "\"permissionDecision\":\"ask\",\"permissionDecisionReason\":\"Clockwork asks a "
	    "person about this ordinary command (task_ask:rm)\"}}\n");
	assert_int_equal(waitpid(pid, &st, 0), pid);
	pid = answering_bridge(0, &port, "{\"decision\":\"allow\",\"reason\":\"\"}");
	snprintf(portbuf, sizeof portbuf, "%d", port);
	assert_int_equal(run_hook(args, in, strlen(in), out, sizeof out), HOOK_EXIT_ALLOW);
	assert_string_equal(out, "");
	assert_int_equal(waitpid(pid, &st, 0), pid);
	/* A control character is refused whatever the bridge says, ask included. */
	pid = answering_bridge(0, &port, "{\"decision\":\"ask\"}");
	snprintf(portbuf, sizeof portbuf, "%d", port);
	assert_int_equal(run_hook(args, ctl, strlen(ctl), out, sizeof out), HOOK_EXIT_DENY);
	assert_non_null(strstr(out, "control character"));
	assert_null(strstr(out, "permissionDecision"));
	assert_int_equal(waitpid(pid, &st, 0), pid);
	unlink(tokfile);
	rmdir(dir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_args),
		cmocka_unit_test(test_token_file),
		cmocka_unit_test(test_input),
		cmocka_unit_test(test_input_controls),
		cmocka_unit_test(test_request_head),
		cmocka_unit_test(test_answers),
		cmocka_unit_test(test_answers_ask),
		cmocka_unit_test(test_ask_output),
		cmocka_unit_test(test_deep_nesting),
		cmocka_unit_test(test_check_errors),
		cmocka_unit_test(test_check_closed_unanswered),
		cmocka_unit_test(test_binary_fails_closed),
		cmocka_unit_test(test_binary_asks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
