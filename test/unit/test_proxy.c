/*
 * The egress proxy (runner/proxy.c) on a real event loop with real sockets: a host no
 * rule names is refused with 403 and recorded; an allowed absolute-form request reaches
 * the upstream with the head rebuilt and is recorded with its bytes; a name rule whose
 * name resolves to loopback is refused; at its connection cap the proxy stops accepting
 * and takes the next connection when one closes; in ask mode a CONNECT is held until
 * proxy_decide() answers it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <event2/event.h>

#include "json.h"
#include "proxy.h"

static cJSON		*events;
static struct event_base *base;

static void
capture(void *arg, cJSON *msg)
{
	(void)arg;
	cJSON_AddItemToArray(events, msg);
}

static int
listen_any(int *port)
{
	struct sockaddr_in	 sin;
	socklen_t		 sl = sizeof sin;
	int			 fd;

	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_true((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) != -1);
	assert_int_equal(bind(fd, (struct sockaddr *)&sin, sizeof sin), 0);
	assert_int_equal(listen(fd, 128), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sin, &sl), 0);
	*port = ntohs(sin.sin_port);
	return fd;
}

static int
dial(int port)
{
	struct sockaddr_in	 sin;
	int			 fd;

	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_port = htons((unsigned short)port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_true((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) != -1);
	assert_int_equal(connect(fd, (struct sockaddr *)&sin, sizeof sin), 0);
	fcntl(fd, F_SETFL, O_NONBLOCK);
	return fd;
}

/* Turn the loop until fd is readable (or has hung up), at most ms; 1 if it is. */
static int
pump_until(int fd, int ms)
{
	struct pollfd	 p = { fd, POLLIN, 0 };

	for (int i = 0; i < ms / 5; i++) {
		event_base_loop(base, EVLOOP_NONBLOCK);
		if (poll(&p, 1, 5) == 1)
			return 1;
	}
	return 0;
}

static void
pump(int ms)
{
	for (int i = 0; i < ms / 5; i++) {
		event_base_loop(base, EVLOOP_NONBLOCK);
		usleep(5000);
	}
}

/* Read what fd sends until EOF, turning the loop, at most ms. */
static size_t
slurp(int fd, char *buf, size_t len, int ms)
{
	size_t	 got = 0;
	ssize_t	 n;

	for (int i = 0; i < ms / 5 && got < len - 1; i++) {
		event_base_loop(base, EVLOOP_NONBLOCK);
		n = read(fd, buf + got, len - 1 - got);
		if (n == 0)
			break;
		if (n > 0)
			got += (size_t)n;
		else
			usleep(5000);
	}
	buf[got] = '\0';
	return got;
}

static const cJSON *
find_event(const char *kind)
{
	const cJSON	*e;

	cJSON_ArrayForEach(e, events)
		if (json_get_string(e, "kind") != NULL &&
		    strcmp(json_get_string(e, "kind"), kind) == 0)
			return e;
	return NULL;
}

static struct proxy *
start(const char *const *rules, size_t n, int ask, int *port)
{
	struct proxy_config	 pc;
	struct netrule		 r[8];
	struct proxy		*p;
	char			 err[256];

	for (size_t i = 0; i < n; i++)
		assert_int_equal(netrule_parse(rules[i], &r[i], err, sizeof err), 0);
	memset(&pc, 0, sizeof pc);
	pc.run_id = "r1";
	pc.rules = r;
	pc.n_rules = n;
	pc.ask = ask;
	pc.hold_seconds = 30;
	pc.emit = capture;
	assert_non_null(p = proxy_new(base, &pc, err, sizeof err));
	assert_int_equal(proxy_adopt(p, listen_any(port), err, sizeof err), 0);
	return p;
}

static int
setup(void **state)
{
	(void)state;
	base = event_base_new();
	events = cJSON_CreateArray();
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	cJSON_Delete(events);
	event_base_free(base);
	return 0;
}

static void
test_refused(void **state)
{
	static const char *const rules[] = { "api.anthropic.com:443" };
	struct proxy	*p;
	char		 buf[2048];
	int		 port, c;
	const cJSON	*e;
	cJSON		*t;

	(void)state;
	p = start(rules, 1, 0, &port);
	c = dial(port);
	dprintf(c, "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n");
	slurp(c, buf, sizeof buf, 2000);
	assert_non_null(strstr(buf, "HTTP/1.1 403"));
	assert_non_null(strstr(buf, "no rule allows example.com:443"));
	assert_non_null(e = find_event("net_deny"));
	assert_string_equal(json_get_string(e, "host"), "example.com");
	assert_string_equal(json_get_string(e, "verdict"), "denied");
	close(c);
	/* A malformed head is refused too (400), and recorded. */
	c = dial(port);
	dprintf(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
	slurp(c, buf, sizeof buf, 2000);
	assert_non_null(strstr(buf, "HTTP/1.1 400"));
	close(c);
	pump(50);
	t = proxy_totals(p);
	assert_int_equal(cJSON_GetObjectItem(t, "denied")->valueint, 2);
	assert_int_equal(cJSON_GetObjectItem(t, "allowed")->valueint, 0);
	cJSON_Delete(t);
	proxy_free(p);
}

static void
test_allowed(void **state)
{
	char		 rule[64], buf[4096], req[2048];
	const char	*rules[1] = { rule };
	struct proxy	*p;
	int		 port, up, uport, c, s;
	size_t		 n;
	const cJSON	*e;
	double		 d;

	(void)state;
	up = listen_any(&uport);
	snprintf(rule, sizeof rule, "127.0.0.1:%d", uport);
	p = start(rules, 1, 0, &port);
	c = dial(port);
	dprintf(c, "GET http://127.0.0.1:%d/x?y=1 HTTP/1.1\r\nHost: evil.example\r\n"
	    "Proxy-Connection: keep-alive\r\nX-A: b\r\n\r\n", uport);
	assert_true(pump_until(up, 2000));
	assert_true((s = accept(up, NULL, NULL)) != -1);
	fcntl(s, F_SETFL, O_NONBLOCK);
	n = slurp(s, req, sizeof req, 300);
	assert_true(n > 0);
	assert_non_null(strstr(req, "GET /x?y=1 HTTP/1.1\r\n"));
	assert_non_null(strstr(req, "X-A: b\r\n"));
	assert_null(strstr(req, "evil.example"));
	assert_null(strstr(req, "Proxy-Connection"));
	assert_non_null(strstr(req, "Connection: close\r\n\r\n"));
	dprintf(s, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello");
	close(s);
	slurp(c, buf, sizeof buf, 2000);
	assert_non_null(strstr(buf, "200 OK"));
	assert_non_null(strstr(buf, "hello"));
	close(c);
	pump(50);
	assert_non_null(e = find_event("net"));
	assert_string_equal(json_get_string(e, "rule"), rule);
	assert_int_equal(json_get_number(e, "bytes_down", &d), 0);
	assert_true(d >= 40);
	close(up);
	proxy_free(p);
}

static void
test_name_to_loopback(void **state)
{
	char		 rule[64], buf[2048];
	const char	*rules[1] = { rule };
	struct proxy	*p;
	int		 port, up, uport, c;

	(void)state;
	up = listen_any(&uport);
	snprintf(rule, sizeof rule, "localhost:%d", uport);
	p = start(rules, 1, 0, &port);
	c = dial(port);
	dprintf(c, "CONNECT localhost:%d HTTP/1.1\r\n\r\n", uport);
	slurp(c, buf, sizeof buf, 3000);
	assert_non_null(strstr(buf, "HTTP/1.1 403"));
	assert_non_null(strstr(buf, "localhost resolves to"));
	/* Nothing reached the service. */
	assert_int_equal(pump_until(up, 100), 0);
	close(c);
	close(up);
	proxy_free(p);
}

static void
test_cap(void **state)
{
	struct proxy	*p;
	int		 port, idle[PROXY_MAX_CONNS], c;
	char		 buf[1024];

	(void)state;
	p = start(NULL, 0, 0, &port);
	for (int i = 0; i < PROXY_MAX_CONNS; i++)
		idle[i] = dial(port);
	pump(100);
	/* The kernel's backlog takes the next one; the proxy does not read it yet. */
	c = dial(port);
	dprintf(c, "CONNECT example.com:443 HTTP/1.1\r\n\r\n");
	assert_int_equal(pump_until(c, 300), 0);
	close(idle[0]);
	assert_int_equal(pump_until(c, 2000), 1);
	slurp(c, buf, sizeof buf, 1000);
	assert_non_null(strstr(buf, "HTTP/1.1 403"));
	close(c);
	for (int i = 1; i < PROXY_MAX_CONNS; i++)
		close(idle[i]);
	pump(50);
	proxy_free(p);
}

static void
test_ask(void **state)
{
	char		 buf[2048];
	struct proxy	*p;
	int		 port, up, uport, c, s;
	const cJSON	*e;
	const char	*id;

	(void)state;
	up = listen_any(&uport);
	p = start(NULL, 0, 1, &port);
	c = dial(port);
	dprintf(c, "CONNECT 127.0.0.1:%d HTTP/1.1\r\n\r\n", uport);
	assert_int_equal(pump_until(c, 200), 0);	/* held */
	e = NULL;
	{
		const cJSON	*m;

		cJSON_ArrayForEach(m, events)
			if (json_get_string(m, "type") != NULL &&
			    strcmp(json_get_string(m, "type"), "approval_request") == 0)
				e = m;
	}
	assert_non_null(e);
	assert_string_equal(json_get_string(e, "tool"), PROXY_TOOL);
	assert_non_null(id = json_get_string(e, "id"));
	assert_int_equal(pump_until(up, 100), 0);	/* nothing connected upstream */
	assert_int_equal(proxy_decide(p, "net-unknown", 1, NULL), -1);
	assert_int_equal(proxy_decide(p, id, 1, NULL), 0);
	assert_int_equal(pump_until(up, 2000), 1);
	assert_true((s = accept(up, NULL, NULL)) != -1);
	slurp(c, buf, sizeof buf, 300);
	assert_non_null(strstr(buf, "200 Connection established"));
	/* Answered once: a second answer finds nothing held. */
	assert_int_equal(proxy_decide(p, id, 0, NULL), -1);
	close(s);
	close(c);
	pump(50);
	/* A held client that hangs up withdraws its question: the approval expires. (The
	 * allowed address is granted for the run now: ask about another.) */
	c = dial(port);
	dprintf(c, "CONNECT unlisted.example:443 HTTP/1.1\r\n\r\n");
	pump(100);
	close(c);
	pump(100);
	e = NULL;
	{
		const cJSON	*m;

		cJSON_ArrayForEach(m, events)
			if (json_get_string(m, "kind") != NULL &&
			    strcmp(json_get_string(m, "kind"), "approval_timeout") == 0)
				e = m;
	}
	assert_non_null(e);
	assert_non_null(json_get_string(e, "id"));
	assert_int_equal(proxy_decide(p, json_get_string(e, "id"), 1, NULL), -1);
	close(up);
	proxy_free(p);
}

/* The approval_requests captured so far, counted. */
static int
count_asks(void)
{
	const cJSON	*m;
	int		 n = 0;

	cJSON_ArrayForEach(m, events)
		if (json_get_string(m, "type") != NULL &&
		    strcmp(json_get_string(m, "type"), "approval_request") == 0)
			n++;
	return n;
}

/* The id of the n-th approval_request (0-based), or NULL. */
static const char *
ask_id(int n)
{
	const cJSON	*m;

	cJSON_ArrayForEach(m, events)
		if (json_get_string(m, "type") != NULL &&
		    strcmp(json_get_string(m, "type"), "approval_request") == 0 && n-- == 0)
			return json_get_string(m, "id");
	return NULL;
}

/* The proxy's count of refused connections. */
static int
denied(struct proxy *p)
{
	cJSON	*t = proxy_totals(p);
	int	 n = cJSON_GetObjectItem(t, "denied")->valueint;

	cJSON_Delete(t);
	return n;
}

/* Turn the loop until count_asks() reaches want, at most ms. */
static int
pump_asks(int want, int ms)
{
	for (int i = 0; i < ms / 5 && count_asks() < want; i++) {
		event_base_loop(base, EVLOOP_NONBLOCK);
		usleep(5000);
	}
	return count_asks();
}

/*
 * Issue 26 item 10: the table of hosts answered "allow" has PROXY_MAX_GRANTS places.
 * With it one short of full, as many held asks as the proxy will hold are answered
 * "allow" at once: every answer beyond the table's end must be refused, not written
 * past it (under ASan the unfixed proxy wrote past the end of struct proxy here).
 */
static void
test_grant_table_full(void **state)
{
	struct proxy	*p;
	int		 port, c, held[PROXY_MAX_HELD], nheld, asks;
	char		 buf[2048];

	(void)state;
	p = start(NULL, 0, 1, &port);
	/* Fill the table to one short: each grant is a loopback port nothing serves. */
	for (int i = 0; i < PROXY_MAX_GRANTS - 1; i++) {
		c = dial(port);
		dprintf(c, "CONNECT 127.0.0.1:%d HTTP/1.1\r\n\r\n", 1 + i);
		assert_int_equal(pump_asks(i + 1, 2000), i + 1);
		assert_int_equal(proxy_decide(p, ask_id(i), 1, NULL), 0);
		/* Connected or refused upstream: the connection ends either way. */
		close(c);
	}
	pump(50);
	asks = count_asks();
	/* Now as many as can be held, each for a host not granted yet. */
	for (int i = 0; i < PROXY_MAX_HELD; i++) {
		held[i] = dial(port);
		dprintf(held[i], "CONNECT held-%d.example:443 HTTP/1.1\r\n\r\n", i);
	}
	/* Each is either held (an approval_request) or refused (a denial). */
	for (int i = 0; i < 2000 / 5 && count_asks() - asks + denied(p) < PROXY_MAX_HELD;
	    i++) {
		event_base_loop(base, EVLOOP_NONBLOCK);
		usleep(5000);
	}
	nheld = count_asks() - asks;
	assert_int_equal(nheld + denied(p), PROXY_MAX_HELD);
	/* Every held one is answered "allow" at once. */
	for (int i = 0; i < nheld; i++)
		assert_int_equal(proxy_decide(p, ask_id(asks + i), 1, NULL), 0);
	pump(100);
	for (int i = 0; i < PROXY_MAX_HELD; i++) {
		slurp(held[i], buf, sizeof buf, 3000);
		close(held[i]);
	}
	/* Only as many were held as the table had room for; the rest were told why. */
	assert_int_equal(nheld, 1);
	assert_int_equal(denied(p), PROXY_MAX_HELD - 1);
	/* The proxy still answers, and refuses a new host for a full table by name. */
	c = dial(port);
	dprintf(c, "CONNECT another.example:443 HTTP/1.1\r\n\r\n");
	slurp(c, buf, sizeof buf, 2000);
	assert_non_null(strstr(buf, "HTTP/1.1 403"));
	close(c);
	proxy_free(p);
}

/*
 * Issue 26 item 9, one request per connection: an allowed absolute-form request with
 * a second one pipelined behind it (a Host: no rule names) reaches the upstream alone,
 * body and all; a request whose framing can be read two ways is refused with 400 and
 * reaches nothing; a malformed chunk ends the connection there.
 */
static void
test_one_request(void **state)
{
	char		 rule[64], buf[4096], req[4096];
	const char	*rules[1] = { rule };
	struct proxy	*p;
	int		 port, up, uport, c, s;
	const cJSON	*e;

	(void)state;
	up = listen_any(&uport);
	snprintf(rule, sizeof rule, "127.0.0.1:%d", uport);
	p = start(rules, 1, 0, &port);

	/* Pipelined, chunked body: the first request whole, nothing after it. */
	c = dial(port);
	dprintf(c, "POST http://127.0.0.1:%d/first HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
	    "\r\n5\r\nhello\r\n0\r\n\r\nGET /second HTTP/1.1\r\nHost: evil-exfil.example\r\n\r\n",
	    uport);
	assert_true(pump_until(up, 2000));
	assert_true((s = accept(up, NULL, NULL)) != -1);
	fcntl(s, F_SETFL, O_NONBLOCK);
	shutdown(c, SHUT_WR);		/* the proxy ends the upstream side after it */
	slurp(s, req, sizeof req, 2000);
	assert_non_null(strstr(req, "POST /first HTTP/1.1\r\n"));
	assert_non_null(strstr(req, "\r\n\r\n5\r\nhello\r\n0\r\n\r\n"));
	assert_null(strstr(req, "second"));
	assert_null(strstr(req, "evil-exfil"));
	close(s);
	slurp(c, buf, sizeof buf, 2000);
	close(c);
	pump(50);
	assert_non_null(e = find_event("net"));
	assert_non_null(strstr(json_get_string(e, "reason"), "one request per connection"));

	/* Pipelined after a Content-Length body. */
	c = dial(port);
	dprintf(c, "PUT http://127.0.0.1:%d/cl HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc"
	    "GET /second HTTP/1.1\r\nHost: evil-exfil.example\r\n\r\n", uport);
	assert_true(pump_until(up, 2000));
	assert_true((s = accept(up, NULL, NULL)) != -1);
	fcntl(s, F_SETFL, O_NONBLOCK);
	shutdown(c, SHUT_WR);
	slurp(s, req, sizeof req, 2000);
	assert_non_null(strstr(req, "\r\n\r\nabc"));
	assert_null(strstr(req, "second"));
	close(s);
	slurp(c, buf, sizeof buf, 2000);
	close(c);

	/* Ambiguous framing: 400 and nothing upstream. */
	c = dial(port);
	dprintf(c, "POST http://127.0.0.1:%d/x HTTP/1.1\r\nContent-Length: 5\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\n"
	    "Host: evil-exfil.example\r\n\r\n", uport);
	slurp(c, buf, sizeof buf, 2000);
	assert_non_null(strstr(buf, "HTTP/1.1 400"));
	assert_non_null(strstr(buf, "both Content-Length and Transfer-Encoding"));
	close(c);
	assert_int_equal(pump_until(up, 100), 0);

	/* A malformed chunk: 400 (the server has not answered), and no more upstream. */
	c = dial(port);
	dprintf(c, "POST http://127.0.0.1:%d/x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
	    "\r\n5\r\nhelloXX\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: evil-exfil.example"
	    "\r\n\r\n", uport);
	assert_true(pump_until(up, 2000));
	assert_true((s = accept(up, NULL, NULL)) != -1);
	fcntl(s, F_SETFL, O_NONBLOCK);
	slurp(c, buf, sizeof buf, 2000);
	assert_non_null(strstr(buf, "HTTP/1.1 400"));
	assert_non_null(strstr(buf, "chunk data not followed by CRLF"));
	slurp(s, req, sizeof req, 2000);
	assert_null(strstr(req, "smuggled"));
	close(s);
	close(c);
	close(up);
	proxy_free(p);
}

/* Issue 26 item 9: a CONNECT to a loopback address is asked as what it is. */
static void
test_ask_risk(void **state)
{
	struct proxy	*p;
	int		 port, c[3];
	const cJSON	*e = NULL, *m;

	(void)state;
	p = start(NULL, 0, 1, &port);
	c[0] = dial(port);
	dprintf(c[0], "CONNECT 127.0.0.1:9 HTTP/1.1\r\n\r\n");
	assert_int_equal(pump_asks(1, 2000), 1);
	c[1] = dial(port);
	dprintf(c[1], "CONNECT [fe80::1]:443 HTTP/1.1\r\n\r\n");
	assert_int_equal(pump_asks(2, 2000), 2);
	c[2] = dial(port);
	dprintf(c[2], "CONNECT public.example:443 HTTP/1.1\r\n\r\n");
	assert_int_equal(pump_asks(3, 2000), 3);
	for (int i = 0; i < 3; i++) {
		int	 n = 0;

		cJSON_ArrayForEach(m, events)
			if (json_get_string(m, "type") != NULL &&
			    strcmp(json_get_string(m, "type"), "approval_request") == 0 && n++ == i)
				e = m;
		if (i < 2) {
			assert_non_null(json_get_string(e, "risk"));
			assert_string_equal(json_get_string(e, "risk"), "outside_worktree");
			assert_string_equal(json_get_string(e, "risk_rule"),
			    "network.private_address");
		} else
			assert_null(json_get_string(e, "risk"));	/* a name: ordinary */
	}
	proxy_free(p);
	for (int i = 0; i < 3; i++)
		close(c[i]);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_allowed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_name_to_loopback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ask, setup, teardown),
		cmocka_unit_test_setup_teardown(test_grant_table_full, setup, teardown),
		cmocka_unit_test_setup_teardown(test_one_request, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ask_risk, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
