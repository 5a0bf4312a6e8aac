/*
 * common/httpd: the shared helpers (Host and Origin gates, constant-time compare,
 * bounded body, replies) and the listeners' limits over real sockets: per-peer and
 * per-listener caps, the reserved budget, the request deadline, one request per
 * connection, unix-socket ownership and peers, and accept() failing for want of
 * descriptors (it must back off, not spin). Every wait has a deadline.
 */
#define _GNU_SOURCE
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "httpd.h"

struct fx {
	struct event_base	*base;
	struct httpd		*h;
	int			 port;
	int			 served;
	struct httpd_peer	 peer;
	char			 dir[256];
};

static long long
now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Run the loop for ms milliseconds, in slices, or until *flag is set. */
static void
pump(struct fx *f, int ms, const int *flag)
{
	long long	end = now_ms() + ms;
	struct timeval	tv = { 0, 10 * 1000 };

	while (now_ms() < end && (flag == NULL || !*flag)) {
		event_base_loopexit(f->base, &tv);
		event_base_dispatch(f->base);
	}
}

static void
fx_cb(struct evhttp_request *req, void *arg)
{
	struct fx	*f = arg;

	httpd_begin(f->h, req, &f->peer);
	f->served++;
	httpd_reply_json(req, 200, "{\"ok\":true}");
}

static struct fx *
fx_new(int max_total)
{
	struct fx	*f = calloc(1, sizeof *f);
	char		 err[256];

	assert_non_null(f);
	assert_non_null(f->base = event_base_new());
	f->h = httpd_new(f->base, "test", max_total, 5, err, sizeof err);
	assert_non_null(f->h);
	evhttp_set_gencb(httpd_evhttp(f->h), fx_cb, f);
	return f;
}

static void
fx_free(struct fx *f)
{
	httpd_free(f->h);
	event_base_free(f->base);
	if (f->dir[0] != '\0')
		rmdir(f->dir);
	free(f);
}

static void
fx_tcp(struct fx *f, int max, int per_peer, int deadline_ms)
{
	struct httpd_limits	l = { max, per_peer, deadline_ms, 0, NULL, NULL, 0 };
	char			err[256];

	assert_int_equal(httpd_listen_tcp(f->h, 0, &l, &f->port, err, sizeof err), 0);
	assert_true(f->port > 0);
}

/* A TCP connection from source address src (127.0.0.x) to the fixture's port. */
static int
tcp_connect(struct fx *f, const char *src)
{
	struct sockaddr_in	sin;
	int			fd;

	assert_true((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) >= 0);
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	inet_pton(AF_INET, src, &sin.sin_addr);
	assert_int_equal(bind(fd, (struct sockaddr *)&sin, sizeof sin), 0);
	sin.sin_port = htons((unsigned short)f->port);
	inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
	assert_int_equal(connect(fd, (struct sockaddr *)&sin, sizeof sin), 0);
	fcntl(fd, F_SETFL, O_NONBLOCK);
	return fd;
}

/* 1 when the server closed fd (EOF or reset), 0 when it is still open. */
static int
closed_by_server(int fd)
{
	char	c;
	ssize_t	n = recv(fd, &c, 1, MSG_DONTWAIT);

	return n == 0 || (n == -1 && errno != EAGAIN && errno != EWOULDBLOCK);
}

static void
test_helpers(void **state)
{
	struct evhttp_request	*req;
	char			*b;
	size_t			 len;

	assert_true(httpd_equal("abcdef", "abcdef"));
	assert_false(httpd_equal("abcdef", "abcdeg"));
	assert_false(httpd_equal("abcde", "abcdef"));
	assert_false(httpd_equal("abcdefg", "abcdef"));
	assert_false(httpd_equal("", ""));
	assert_false(httpd_equal(NULL, "abc"));
	assert_true(httpd_host_ok("127.0.0.1:8080", 8080));
	assert_true(httpd_host_ok("LOCALHOST:8080", 8080));
	assert_false(httpd_host_ok("127.0.0.1:8081", 8080));
	assert_false(httpd_host_ok("evil.example:8080", 8080));
	assert_false(httpd_host_ok("127.0.0.1", 8080));
	assert_false(httpd_host_ok(NULL, 8080));
	assert_true(httpd_origin_ok("http://localhost:9", 9));
	assert_false(httpd_origin_ok("https://localhost:9", 9));
	assert_false(httpd_origin_ok("null", 9));
	assert_false(httpd_origin_ok(NULL, 9));
	assert_string_equal(httpd_reason(413), "Payload Too Large");

	assert_non_null(req = evhttp_request_new(NULL, NULL));
	errno = 0;
	assert_null(httpd_body(req, 10, 0, &len));
	assert_int_equal(errno, ENODATA);
	assert_non_null(b = httpd_body(req, 10, 1, &len));
	assert_int_equal(len, 0);
	assert_string_equal(b, "");
	free(b);
	evbuffer_add(evhttp_request_get_input_buffer(req), "hello", 5);
	assert_non_null(b = httpd_body(req, 5, 0, &len));
	assert_int_equal(len, 5);
	assert_string_equal(b, "hello");
	free(b);
	evbuffer_add(evhttp_request_get_input_buffer(req), "!", 1);
	errno = 0;
	assert_null(httpd_body(req, 5, 0, &len));
	assert_int_equal(errno, E2BIG);
	evhttp_request_free(req);
}

/* Two per peer, four on the listener: a second source address gets its own two. */
static void
test_caps(void **state)
{
	struct fx		*f = fx_new(100);
	struct httpd_stats	 s;
	int			 a[5], b[3];

	fx_tcp(f, 4, 2, 0);
	for (int i = 0; i < 5; i++)
		a[i] = tcp_connect(f, "127.0.0.1");
	pump(f, 300, NULL);
	httpd_stats(f->h, &s);
	assert_int_equal(s.open, 2);
	assert_int_equal(s.refused, 3);
	assert_true(closed_by_server(a[4]));
	assert_false(closed_by_server(a[0]));
	for (int i = 0; i < 2; i++)
		b[i] = tcp_connect(f, "127.0.0.2");
	pump(f, 300, NULL);
	httpd_stats(f->h, &s);
	assert_int_equal(s.open, 4);
	assert_int_equal(s.admitted, 4);
	/* The listener is full and not accepting: a newcomer waits in the backlog. */
	b[2] = tcp_connect(f, "127.0.0.3");
	pump(f, 300, NULL);
	httpd_stats(f->h, &s);
	assert_int_equal(s.admitted, 4);
	assert_int_equal(s.refused, 3);
	assert_false(closed_by_server(b[2]));
	/* A slot frees: the waiting connection is accepted and admitted. */
	close(a[0]);
	pump(f, 300, NULL);
	httpd_stats(f->h, &s);
	assert_int_equal(s.admitted, 5);
	assert_int_equal(s.open, 4);
	for (int i = 1; i < 5; i++)
		close(a[i]);
	for (int i = 0; i < 3; i++)
		close(b[i]);
	pump(f, 200, NULL);
	httpd_stats(f->h, &s);
	assert_int_equal(s.open, 0);
	fx_free(f);
}

/*
 * evict_idle (the run's bridge): four idle connections fill the listener; a fifth,
 * which asks at once, is served, and the oldest idle one is closed to make room.
 * Without it the fifth waits in the backlog behind them (test_caps above).
 */
static void
test_evict_idle(void **state)
{
	struct fx		*f = fx_new(100);
	struct httpd_limits	 l = { 4, 4, 0, 0, NULL, NULL, 1 };
	struct httpd_stats	 s;
	const char		*rq = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
	char			 err[256];
	int			 idle[4], fd;

	assert_int_equal(httpd_listen_tcp(f->h, 0, &l, &f->port, err, sizeof err), 0);
	for (int i = 0; i < 4; i++)
		idle[i] = tcp_connect(f, "127.0.0.1");
	pump(f, 300, NULL);
	httpd_stats(f->h, &s);
	assert_int_equal(s.open, 4);
	fd = tcp_connect(f, "127.0.0.1");
	assert_int_equal(write(fd, rq, strlen(rq)), (ssize_t)strlen(rq));
	pump(f, 1000, &f->served);
	assert_int_equal(f->served, 1);
	assert_true(closed_by_server(idle[0]));
	assert_false(closed_by_server(idle[1]));
	httpd_stats(f->h, &s);
	assert_true(s.open <= 4);
	for (int i = 0; i < 4; i++)
		close(idle[i]);
	close(fd);
	fx_free(f);
}

/*
 * evict_idle under a flood (e2e/claude_floor's flood rows, 2 CI runs in 5): three idle
 * connections; the hook's connection sends its request at once, and four more idle ones
 * arrive with it, all accepted in one go before any is read. The hook's, then the
 * oldest connection without a request, was evicted by the fourth newcomer: the hook
 * read the close as an answer that is not HTTP. A connection whose request is waiting
 * to be read is not idle.
 */
static void
test_evict_idle_flood(void **state)
{
	struct fx		*f = fx_new(100);
	struct httpd_limits	 l = { 4, 4, 0, 0, NULL, NULL, 1 };
	const char		*rq = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
	char			 err[256];
	int			 idle[3], flood[4], fd;

	assert_int_equal(httpd_listen_tcp(f->h, 0, &l, &f->port, err, sizeof err), 0);
	for (int i = 0; i < 3; i++)
		idle[i] = tcp_connect(f, "127.0.0.1");
	pump(f, 300, NULL);
	fd = tcp_connect(f, "127.0.0.1");
	assert_int_equal(write(fd, rq, strlen(rq)), (ssize_t)strlen(rq));
	for (int i = 0; i < 4; i++)
		flood[i] = tcp_connect(f, "127.0.0.1");
	pump(f, 1000, &f->served);
	assert_int_equal(f->served, 1);
	for (int i = 0; i < 3; i++)
		close(idle[i]);
	for (int i = 0; i < 4; i++)
		close(flood[i]);
	close(fd);
	fx_free(f);
}

/* A connection that never sends a whole request is closed at the deadline. */
static void
test_deadline(void **state)
{
	struct fx		*f = fx_new(100);
	struct httpd_stats	 s;
	int			 idle, slow;

	fx_tcp(f, 8, 8, 200);
	idle = tcp_connect(f, "127.0.0.1");
	slow = tcp_connect(f, "127.0.0.1");
	assert_int_equal(write(slow, "GET / HTTP/1.1\r\nHo", 18), 18);
	pump(f, 100, NULL);
	assert_false(closed_by_server(idle));
	pump(f, 400, NULL);
	httpd_stats(f->h, &s);
	assert_int_equal(s.expired, 2);
	assert_int_equal(s.open, 0);
	assert_true(closed_by_server(idle));
	assert_true(closed_by_server(slow));
	close(idle);
	close(slow);
	fx_free(f);
}

/* A whole request is served once, with Connection: close, and the peer is named. */
static void
test_one_request(void **state)
{
	struct fx	*f = fx_new(100);
	const char	*rq = "GET /x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
			    "GET /y HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
	char		 buf[4096];
	size_t		 got = 0;
	ssize_t		 n;
	long long	 end;
	int		 fd;

	fx_tcp(f, 8, 8, 1000);
	fd = tcp_connect(f, "127.0.0.1");
	assert_int_equal(write(fd, rq, strlen(rq)), (ssize_t)strlen(rq));
	end = now_ms() + 2000;
	for (;;) {
		pump(f, 20, NULL);
		n = recv(fd, buf + got, sizeof buf - 1 - got, MSG_DONTWAIT);
		if (n == 0)
			break;
		if (n > 0)
			got += (size_t)n;
		assert_true(now_ms() < end);
	}
	buf[got] = '\0';
	assert_int_equal(f->served, 1);
	assert_non_null(strstr(buf, "HTTP/1.1 200 OK"));
	assert_non_null(strcasestr(buf, "Connection: close"));
	assert_non_null(strstr(buf, "{\"ok\":true}"));
	assert_int_equal(f->peer.kind, HTTPD_TCP);
	assert_string_equal(f->peer.addr, "127.0.0.1");
	close(fd);
	fx_free(f);
}

static void
fx_unix(struct fx *f, const char *name, struct httpd_limits *l, char *path, size_t len)
{
	char	err[256];

	/*
	 * Under /tmp, not the suite's scratch root: test_unix_peer connects as another
	 * uid, which must be able to reach the socket (the scratch root may be under a
	 * 0700 home), and a unix socket's path is short.
	 */
	snprintf(f->dir, sizeof f->dir, "/tmp/cw-httpd.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(path, len, "%s/%s", f->dir, name);
	assert_int_equal(httpd_listen_unix(f->h, path, l, err, sizeof err), 0);
}

static int
unix_connect(const char *path)
{
	struct sockaddr_un	sun;
	int			fd;

	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof sun.sun_path, "%s", path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	if (connect(fd, (struct sockaddr *)&sun, sizeof sun) == -1) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * The unix socket: 0600; a second server on the same path is refused while the
 * first answers; a stale one is replaced; a path that is not a socket is refused.
 */
static void
test_unix_path(void **state)
{
	struct fx		*f = fx_new(100), *g;
	struct httpd_limits	 l = { 4, 4, 1000, 4, NULL, NULL, 0 };
	struct stat		 st;
	char			 path[200], file[200], err[256];
	int			 fd;

	fx_unix(f, "s.sock", &l, path, sizeof path);
	assert_int_equal(stat(path, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0600);
	g = fx_new(100);
	errno = 0;
	assert_int_equal(httpd_listen_unix(g->h, path, &l, err, sizeof err), -1);
	assert_int_equal(errno, EADDRINUSE);
	assert_non_null(strstr(err, "another server"));
	/* The first one still answers. */
	assert_true((fd = unix_connect(path)) >= 0);
	close(fd);

	/* A stale socket: bound, never listened on, its server gone. */
	snprintf(file, sizeof file, "%s/stale.sock", f->dir);
	{
		struct sockaddr_un	sun = { .sun_family = AF_UNIX };
		int			s = socket(AF_UNIX, SOCK_STREAM, 0);

		snprintf(sun.sun_path, sizeof sun.sun_path, "%s", file);
		assert_int_equal(bind(s, (struct sockaddr *)&sun, sizeof sun), 0);
		close(s);
	}
	assert_int_equal(httpd_listen_unix(g->h, file, &l, err, sizeof err), 0);
	assert_true((fd = unix_connect(file)) >= 0);
	close(fd);
	httpd_free(g->h);
	g->h = NULL;
	assert_int_equal(stat(file, &st), -1);	/* removed on the way out */

	/* Not a socket: left alone. */
	assert_true((fd = open(file, O_CREAT | O_WRONLY, 0600)) >= 0);
	close(fd);
	g->h = httpd_new(g->base, "test2", 10, 5, err, sizeof err);
	assert_int_equal(httpd_listen_unix(g->h, file, &l, err, sizeof err), -1);
	assert_non_null(strstr(err, "not a socket of ours"));
	unlink(file);
	fx_free(g);
	fx_free(f);
	unlink(path);
}

/* The peer's credentials: ours are admitted and named. */
static void
test_unix_peer(void **state)
{
	struct fx		*f = fx_new(100);
	struct httpd_limits	 l = { 4, 4, 1000, 4, NULL, NULL, 0 };
	char			 path[200];
	const char		*rq = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
	int			 fd;

	fx_unix(f, "p.sock", &l, path, sizeof path);
	fd = unix_connect(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, rq, strlen(rq)), (ssize_t)strlen(rq));
	pump(f, 1000, &f->served);
	assert_int_equal(f->served, 1);
	assert_int_equal(f->peer.kind, HTTPD_UNIX);
	assert_int_equal(f->peer.uid, geteuid());
	assert_int_equal(f->peer.pid, getpid());
	close(fd);
	fx_free(f);
	unlink(path);
}

/*
 * Another uid is refused. Only root can become another uid, so this is its own ctest
 * entry (unit/test_httpd_other_uid, `test_httpd --other-uid`), which exits 77 for a
 * normal user and shows as skipped, never as passed.
 */
static void
test_unix_peer_other_uid(void **state)
{
	struct fx		*f = fx_new(100);
	struct httpd_limits	 l = { 4, 4, 1000, 4, NULL, NULL, 0 };
	struct httpd_stats	 s;
	char			 path[200], c;
	pid_t			 pid;
	int			 fd, st;

	fx_unix(f, "p.sock", &l, path, sizeof path);
	/* Open the way for another uid, so that only httpd can refuse it. */
	chmod(f->dir, 0755);
	chmod(path, 0666);
	if ((pid = fork()) == 0) {
		if (setgid(65534) == -1 || setuid(65534) == -1)
			_exit(2);
		if ((fd = unix_connect(path)) == -1)
			_exit(3);
		/* Hold it until the server closes it. */
		_exit(read(fd, &c, 1) == 0 ? 0 : 4);
	}
	assert_true(pid > 0);
	{
		long long	end = now_ms() + 3000;

		for (;;) {
			pump(f, 20, NULL);
			if (waitpid(pid, &st, WNOHANG) == pid)
				break;
			assert_true(now_ms() < end);
		}
	}
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	httpd_stats(f->h, &s);
	assert_int_equal(s.refused, 1);
	assert_int_equal(f->served, 0);
	fx_free(f);
	unlink(path);
}

/* A reserve is kept: the TCP listener cannot take the unix socket's share. */
static void
test_reserve(void **state)
{
	struct fx		*f = fx_new(5);
	struct httpd_limits	 ul = { 3, 3, 0, 3, NULL, NULL, 0 };
	struct httpd_stats	 s;
	char			 path[200];
	int			 t[4], u[3];

	fx_tcp(f, 100, 100, 0);
	fx_unix(f, "r.sock", &ul, path, sizeof path);
	for (int i = 0; i < 4; i++)
		t[i] = tcp_connect(f, "127.0.0.1");
	pump(f, 300, NULL);
	httpd_stats(f->h, &s);
	assert_int_equal(s.open, 2);		/* 5 in all, 3 kept for the socket */
	for (int i = 0; i < 3; i++)
		assert_true((u[i] = unix_connect(path)) >= 0);
	pump(f, 300, NULL);
	httpd_stats(f->h, &s);
	assert_int_equal(s.open, 5);
	for (int i = 0; i < 3; i++)
		assert_false(closed_by_server(u[i]));
	for (int i = 0; i < 4; i++)
		close(t[i]);
	for (int i = 0; i < 3; i++)
		close(u[i]);
	pump(f, 100, NULL);
	fx_free(f);
	unlink(path);
}

/*
 * accept() failing with EMFILE: the listener pauses and retries with a growing
 * interval (a handful of attempts a second, not millions), then recovers.
 */
static void
test_accept_backoff(void **state)
{
	struct fx		*f = fx_new(100);
	struct httpd_stats	 s;
	struct rlimit		 saved, rl;
	int			 c[6], hi;

	fx_tcp(f, 100, 100, 0);
	for (int i = 0; i < 6; i++)
		c[i] = tcp_connect(f, "127.0.0.1");
	/* No descriptor left for accept(): the lowest free number is the limit. */
	assert_true((hi = dup(0)) >= 0);
	close(hi);
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &saved), 0);
	rl = saved;
	rl.rlim_cur = (rlim_t)hi;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
	pump(f, 1000, NULL);
	httpd_stats(f->h, &s);
	assert_true(s.accept_errors >= 1);
	assert_true(s.accept_errors <= 8);	/* 50+100+200+400 ms: about five tries */
	assert_int_equal(s.admitted, 0);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &saved), 0);
	pump(f, 1500, NULL);
	httpd_stats(f->h, &s);
	assert_int_equal(s.admitted, 6);
	for (int i = 0; i < 6; i++)
		close(c[i]);
	fx_free(f);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_helpers),
		cmocka_unit_test(test_caps),
		cmocka_unit_test(test_evict_idle),
		cmocka_unit_test(test_evict_idle_flood),
		cmocka_unit_test(test_deadline),
		cmocka_unit_test(test_one_request),
		cmocka_unit_test(test_unix_path),
		cmocka_unit_test(test_unix_peer),
		cmocka_unit_test(test_reserve),
		cmocka_unit_test(test_accept_backoff),
	};
	const struct CMUnitTest other_uid[] = {
		cmocka_unit_test(test_unix_peer_other_uid),
	};

	if (argc > 1 && strcmp(argv[1], "--other-uid") == 0) {
		if (geteuid() != 0) {
			fprintf(stderr, "skipped: only root can connect as another uid\n");
			return 77;
		}
		return cmocka_run_group_tests(other_uid, NULL, NULL);
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
