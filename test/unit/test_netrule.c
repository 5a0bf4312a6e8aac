/*
 * Egress rules (common/netrule.c), the proxy's request parser (common/proxyreq.c) and
 * the run's rule list (runner/egress.c): what a rule covers, which addresses only an
 * address rule reaches, and what a request head may and may not be.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <cmocka.h>

#include "config.h"
#include "egress.h"
#include "netrule.h"
#include "netsets.h"
#include "proxyreq.h"

static struct sockaddr_storage ss;

static const struct sockaddr *
sa(const char *text)
{
	memset(&ss, 0, sizeof ss);
	if (strchr(text, ':') != NULL) {
		ss.ss_family = AF_INET6;
		assert_int_equal(inet_pton(AF_INET6, text,
		    &((struct sockaddr_in6 *)&ss)->sin6_addr), 1);
	} else {
		ss.ss_family = AF_INET;
		assert_int_equal(inet_pton(AF_INET, text,
		    &((struct sockaddr_in *)&ss)->sin_addr), 1);
	}
	return (const struct sockaddr *)&ss;
}

static void
test_parse(void **state)
{
	struct netrule	 r;
	char		 err[256];

	(void)state;
	assert_int_equal(netrule_parse("API.Anthropic.com:443", &r, err, sizeof err), 0);
	assert_string_equal(r.host, "api.anthropic.com");
	assert_int_equal(r.port, 443);
	assert_int_equal(r.addr, 0);
	assert_string_equal(r.text, "api.anthropic.com:443");
	assert_int_equal(netrule_parse("[::1]:*", &r, err, sizeof err), 0);
	assert_int_equal(r.addr, 1);
	assert_int_equal(r.port, 0);
	assert_string_equal(r.text, "[::1]:*");
	assert_int_equal(netrule_parse("*.npmjs.org:443", &r, err, sizeof err), 0);
	assert_int_equal(netrule_parse("*:443", &r, err, sizeof err), 0);
	/* Refused: no port, port 0 or past 65535, a wildcard over a TLD or an address, the
	 * short and hex forms of an address inet_aton would take, junk. */
	const char *bad[] = { "example.com", "example.com:", "example.com:0",
	    "example.com:65536", "example.com:44x", "*.com:443", "*.10.0.0.1:80",
	    "127.1:80", "0x7f000001:80", "2130706433:80", "exa mple.com:80", ":80",
	    "-bad.com:80", "a..b:80", "[::1:80", "ex@mple.com:80" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		if (netrule_parse(bad[i], &r, err, sizeof err) != -1)
			fail_msg("accepted '%s'", bad[i]);
}

static void
test_match(void **state)
{
	struct netrule	 r[4];
	char		 err[256];

	(void)state;
	assert_int_equal(netrule_parse("*.npmjs.org:443", &r[0], err, sizeof err), 0);
	assert_true(netrule_match(&r[0], "registry.npmjs.org", 443));
	assert_false(netrule_match(&r[0], "npmjs.org", 443));
	assert_false(netrule_match(&r[0], "registry.npmjs.org", 80));
	assert_false(netrule_match(&r[0], "evilnpmjs.org", 443));
	assert_int_equal(netrule_parse("*:443", &r[1], err, sizeof err), 0);
	assert_true(netrule_match(&r[1], "example.com", 443));
	/* A wildcard never covers an address: addresses are reached by naming them. */
	assert_false(netrule_match(&r[1], "93.184.216.34", 443));
	assert_false(netrule_match(&r[1], "::1", 443));
	assert_int_equal(netrule_parse("127.0.0.1:8080", &r[2], err, sizeof err), 0);
	assert_true(netrule_match(&r[2], "127.0.0.1", 8080));
	assert_false(netrule_match(&r[2], "127.0.0.2", 8080));
	assert_false(netrule_match(&r[2], "localhost", 8080));
	assert_int_equal(netrule_parse("git.example.com:*", &r[3], err, sizeof err), 0);
	assert_true(netrule_match(&r[3], "git.example.com", 9418));
	assert_ptr_equal(netrule_find(r, 4, "127.0.0.1", 8080), &r[2]);
	assert_null(netrule_find(r, 4, "example.org", 80));
}

static void
test_private(void **state)
{
	const char	*priv[] = { "127.0.0.1", "127.0.0.2", "10.1.2.3", "172.16.0.1",
	    "172.31.255.255", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0",
	    "224.0.0.1", "255.255.255.255", "::1", "::", "fe80::1", "fd00::1", "fc00::1",
	    "::ffff:127.0.0.1", "::ffff:10.0.0.1", "64:ff9b::a9fe:a9fe", "ff02::1" };
	const char	*pub[] = { "93.184.216.34", "1.1.1.1", "172.32.0.1", "100.128.0.1",
	    "2606:4700::1111", "::ffff:8.8.8.8" };
	struct netrule	 name, addr;
	char		 err[256];

	(void)state;
	for (size_t i = 0; i < sizeof priv / sizeof priv[0]; i++)
		if (!netrule_private(sa(priv[i])))
			fail_msg("%s counted as public", priv[i]);
	for (size_t i = 0; i < sizeof pub / sizeof pub[0]; i++)
		if (netrule_private(sa(pub[i])))
			fail_msg("%s counted as private", pub[i]);
	/* A name rule never reaches a private address (a name resolving to loopback). */
	assert_int_equal(netrule_parse("localhost:8080", &name, err, sizeof err), 0);
	assert_false(netrule_addr_ok(&name, sa("127.0.0.1")));
	assert_true(netrule_addr_ok(&name, sa("93.184.216.34")));
	/* An address rule reaches the one address it names, and no other private one. */
	assert_int_equal(netrule_parse("127.0.0.1:8080", &addr, err, sizeof err), 0);
	assert_true(netrule_addr_ok(&addr, sa("127.0.0.1")));
	assert_false(netrule_addr_ok(&addr, sa("127.0.0.2")));
}

static void
test_request(void **state)
{
	struct proxyreq	 r;
	char		 err[256];
	const char	*c = "CONNECT api.anthropic.com:443 HTTP/1.1\r\nHost: x\r\n\r\nTLS";
	const char	*g = "POST http://127.0.0.1:8080/v1/messages?beta=1 HTTP/1.1\r\n"
	    "Host: evil.example\r\nProxy-Connection: keep-alive\r\nProxy-Authorization: x\r\n"
	    "Content-Length: 2\r\n\r\n{}";

	(void)state;
	assert_int_equal(proxyreq_parse(c, strlen(c), &r, err, sizeof err), 1);
	assert_int_equal(r.connect, 1);
	assert_string_equal(r.host, "api.anthropic.com");
	assert_int_equal(r.port, 443);
	assert_int_equal(r.head_len, strlen(c) - 3);
	proxyreq_free(&r);
	/* Incomplete: ask for more. */
	assert_int_equal(proxyreq_parse(c, 20, &r, err, sizeof err), 0);
	assert_int_equal(proxyreq_parse(g, strlen(g), &r, err, sizeof err), 1);
	assert_int_equal(r.connect, 0);
	assert_string_equal(r.host, "127.0.0.1");
	assert_int_equal(r.is_addr, 1);
	assert_int_equal(r.port, 8080);
	/* Origin-form, the client's Host and the proxy headers gone, our Host and close. */
	assert_string_equal(r.upstream, "POST /v1/messages?beta=1 HTTP/1.1\r\n"
	    "Content-Length: 2\r\nHost: 127.0.0.1:8080\r\nConnection: close\r\n\r\n");
	proxyreq_free(&r);
	const char *bad[] = {
	    "GET / HTTP/1.1\r\nHost: x\r\n\r\n",			/* origin-form */
	    "GET https://example.com/ HTTP/1.1\r\n\r\n",		/* https: use CONNECT */
	    "GET http://user:pw@example.com/ HTTP/1.1\r\n\r\n",	/* userinfo */
	    "CONNECT example.com HTTP/1.1\r\n\r\n",			/* no port */
	    "CONNECT example.com:99999 HTTP/1.1\r\n\r\n",
	    "CONNECT 127.1:443 HTTP/1.1\r\n\r\n",			/* short address form */
	    "CONNECT example.com:443 HTTP/2\r\n\r\n",
	    "GET http://a.com/ HTTP/1.1\r\nX: a\r\n folded\r\n\r\n",	/* obs-fold */
	    "GET http://a.com/ HTTP/1.1\r\nX: a\rb\r\n\r\n",		/* bare CR */
	    "GET http://a.com/ HTTP/1.1\r\nX a\r\n\r\n",		/* no colon */
	    "G\x01T http://a.com/ HTTP/1.1\r\n\r\n",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		if (proxyreq_parse(bad[i], strlen(bad[i]), &r, err, sizeof err) != -1)
			fail_msg("accepted request %zu", i);
	/* A head past the limit is refused, not waited for. */
	char *big = malloc(PROXYREQ_MAX_HEAD + 10);
	memset(big, 'a', PROXYREQ_MAX_HEAD + 10);
	assert_int_equal(proxyreq_parse(big, PROXYREQ_MAX_HEAD + 10, &r, err, sizeof err), -1);
	free(big);
}

/*
 * Issue 26 item 9: framing that two readers could read two ways is refused; what is
 * accepted says where the body ends.
 */
static void
test_framing(void **state)
{
	struct proxyreq	 r;
	char		 err[256];
	const char	*ok_cl = "POST http://a.com/ HTTP/1.1\r\nContent-Length:  12 \r\n\r\n";
	const char	*ok_te = "POST http://a.com/ HTTP/1.1\r\nTransfer-Encoding: Chunked\r\n\r\n";
	static const struct { const char *req, *why; } bad[] = {
	    { "POST http://a.com/ HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: "
	      "chunked\r\n\r\n", "both Content-Length and Transfer-Encoding" },
	    { "POST http://a.com/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: "
	      "5\r\n\r\n", "both Content-Length and Transfer-Encoding" },
	    { "POST http://a.com/ HTTP/1.1\r\nContent-Length: 0\r\nContent-Length: 50\r\n\r\n",
	      "more than one Content-Length" },
	    { "POST http://a.com/ HTTP/1.1\r\nContent-Length: 5\r\ncontent-length: 5\r\n\r\n",
	      "more than one Content-Length" },
	    { "POST http://a.com/ HTTP/1.1\r\nContent-Length: 5, 5\r\n\r\n",
	      "malformed Content-Length" },
	    { "POST http://a.com/ HTTP/1.1\r\nContent-Length: +5\r\n\r\n",
	      "malformed Content-Length" },
	    { "POST http://a.com/ HTTP/1.1\r\nContent-Length:\r\n\r\n",
	      "malformed Content-Length" },
	    { "POST http://a.com/ HTTP/1.1\r\nContent-Length: 1234567890123456789\r\n\r\n",
	      "malformed Content-Length" },
	    { "POST http://a.com/ HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
	      "Transfer-Encoding other than chunked" },
	    { "POST http://a.com/ HTTP/1.1\r\nTransfer-Encoding: chunked, chunked\r\n\r\n",
	      "Transfer-Encoding other than chunked" },
	    { "POST http://a.com/ HTTP/1.1\r\nTransfer-Encoding: xchunked\r\n\r\n",
	      "Transfer-Encoding other than chunked" },
	    { "POST http://a.com/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: "
	      "chunked\r\n\r\n", "more than one Transfer-Encoding" },
	    { "POST http://a.com/ HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n",
	      "Transfer-Encoding in an HTTP/1.0 request" },
	    { "POST http://a.com/ HTTP/1.1\r\nX: a\r\n Transfer-Encoding: chunked\r\n\r\n",
	      "folded" },
	    { "POST http://a.com/ HTTP/1.1\r\nX: a\r\n\tContent-Length: 4\r\n\r\n", "folded" },
	    { "POST http://a.com/ HTTP/1.1\r\nTransfer-Encoding : chunked\r\n\r\n",
	      "malformed header name" },
	};

	(void)state;
	assert_int_equal(proxyreq_parse(ok_cl, strlen(ok_cl), &r, err, sizeof err), 1);
	assert_int_equal(r.chunked, 0);
	assert_int_equal(r.content_length, 12);
	proxyreq_free(&r);
	assert_int_equal(proxyreq_parse(ok_te, strlen(ok_te), &r, err, sizeof err), 1);
	assert_int_equal(r.chunked, 1);
	assert_non_null(strstr(r.upstream, "Transfer-Encoding: Chunked\r\n"));
	proxyreq_free(&r);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		if (proxyreq_parse(bad[i].req, strlen(bad[i].req), &r, err, sizeof err) != -1)
			fail_msg("accepted request %zu", i);
		if (strstr(err, bad[i].why) == NULL)
			fail_msg("request %zu: \"%s\", want \"%s\"", i, err, bad[i].why);
	}
	/* A CONNECT's headers are not sent anywhere: its framing is the tunnel's. */
	ok_cl = "CONNECT a.com:443 HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n";
	assert_int_equal(proxyreq_parse(ok_cl, strlen(ok_cl), &r, err, sizeof err), 1);
	proxyreq_free(&r);
}

/* Feed s to a body of request head in pieces of step bytes; the bytes taken, or -1. */
static ssize_t
body_feed(const char *head, const char *s, size_t step, int *done, char *err, size_t el)
{
	struct proxyreq		 r;
	struct proxyreq_body	 b;
	size_t			 len = strlen(s), off = 0;
	ssize_t			 n;

	assert_int_equal(proxyreq_parse(head, strlen(head), &r, err, el), 1);
	proxyreq_body_init(&b, &r);
	proxyreq_free(&r);
	while (off < len && !b.done) {
		size_t	 k = len - off < step ? len - off : step;

		if ((n = proxyreq_body_take(&b, s + off, k, err, el)) == -1)
			return -1;
		off += (size_t)n;
		if ((size_t)n < k && !b.done)
			fail_msg("took %zd of %zu without ending", n, k);
	}
	*done = b.done;
	return (ssize_t)off;
}

static void
test_body(void **state)
{
	const char	*te = "POST http://a.com/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n";
	const char	*cl = "POST http://a.com/ HTTP/1.1\r\nContent-Length: 5\r\n\r\n";
	const char	*none = "GET http://a.com/ HTTP/1.1\r\n\r\n";
	const char	*next = "GET /smuggled HTTP/1.1\r\nHost: evil.example\r\n\r\n";
	static const char *const good[] = {
	    "0\r\n\r\n",
	    "5\r\nhello\r\n0\r\n\r\n",
	    "5;name=value\r\nhello\r\nA\r\n0123456789\r\n0\r\n\r\n",
	    "1f\r\n0123456789012345678901234567890\r\n0\r\nTrailer: x\r\nT2: y\r\n\r\n",
	};
	static const struct { const char *body, *why; } bad[] = {
	    { "5\r\nhelloXX\r\n0\r\n\r\n", "chunk data not followed by CRLF" },
	    { "5\nhello\r\n0\r\n\r\n", "malformed chunk size line" },
	    { "5\r\nhello\n0\r\n\r\n", "chunk data not followed by CRLF" },
	    { "zz\r\n", "malformed chunk size" },
	    { "-5\r\n", "malformed chunk size" },
	    { " 5\r\n", "malformed chunk size" },
	    { "5 \r\n", "malformed chunk size line" },
	    { "0x5\r\n", "malformed chunk size line" },
	    { "1000000000000000\r\n", "chunk size too long" },
	    { "5;a\001b\r\n", "control byte in a chunk extension" },
	    { "0\r\nBad Trailer: x\r\n\r\n", "malformed trailer name" },
	    { "0\r\nT: x\rz\r\n\r\n", "trailer line not ended by CRLF" },
	    { "0\r\n\n", "malformed trailer line" },
	    { "0\r\n\r\r", "chunked body not ended by CRLF" },
	};
	char		 err[256], buf[512];
	int		 done;
	ssize_t		 n;

	(void)state;
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
		for (size_t step = 1; step <= 64; step *= 4) {
			/* The body ends where it should: the request after it is not taken. */
			snprintf(buf, sizeof buf, "%s%s", good[i], next);
			n = body_feed(te, buf, step, &done, err, sizeof err);
			if (n != (ssize_t)strlen(good[i]) || !done)
				fail_msg("body %zu step %zu: took %zd (%s)", i, step, n,
				    n == -1 ? err : "");
		}
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		for (size_t step = 1; step <= 64; step *= 4) {
			snprintf(buf, sizeof buf, "%s%s", bad[i].body, next);
			if (body_feed(te, buf, step, &done, err, sizeof err) != -1)
				fail_msg("accepted body %zu", i);
			if (strstr(err, bad[i].why) == NULL)
				fail_msg("body %zu: \"%s\", want \"%s\"", i, err, bad[i].why);
		}
	/* Content-Length: exactly that many bytes; none at all: the body is empty. */
	snprintf(buf, sizeof buf, "hello%s", next);
	assert_int_equal(body_feed(cl, buf, 3, &done, err, sizeof err), 5);
	assert_true(done);
	assert_int_equal(body_feed(none, next, 3, &done, err, sizeof err), 0);
	assert_true(done);
}

static void
test_egress(void **state)
{
	struct config	 cfg;
	struct netrule	*rules = NULL, rules_one;
	struct strlist	 task = { 0 };
	size_t		 n = 0;
	char		 err[512], buf[300];
	const char	*text = "network:\n  allow: [\"registry.npmjs.org:443\"]\n"
	    "engines:\n  claude:\n    network:\n      allow: [\"proxy.corp:3128\"]\n";

	(void)state;
	assert_int_equal(egress_url_rule("http://127.0.0.1:4010/v1", buf, sizeof buf), 0);
	assert_string_equal(buf, "127.0.0.1:4010");
	assert_int_equal(egress_url_rule("https://api.example.com", buf, sizeof buf), 0);
	assert_string_equal(buf, "api.example.com:443");
	assert_int_equal(egress_url_rule("http://[::1]/x", buf, sizeof buf), 0);
	assert_string_equal(buf, "[::1]:80");
	assert_int_equal(egress_url_rule("ftp://x", buf, sizeof buf), -1);
	assert_int_equal(config_parse("t.yaml", text, strlen(text), &cfg, err, sizeof err), 0);
	assert_int_equal(strlist_add(&task, "git.example.com:443"), 0);
	assert_int_equal(egress_rules(&cfg, "claude", "http://127.0.0.1:4010", &task, &rules,
	    &n, err, sizeof err), 0);
	/* Task, global, engine config, engine table (two Anthropic hosts), base URL. */
	assert_int_equal(n, 6);
	assert_string_equal(rules[0].text, "git.example.com:443");
	assert_string_equal(rules[1].text, "registry.npmjs.org:443");
	assert_string_equal(rules[2].text, "proxy.corp:3128");
	assert_string_equal(rules[3].text, "api.anthropic.com:443");
	assert_string_equal(rules[5].text, "127.0.0.1:4010");
	assert_int_equal(rules[5].addr, 1);
	free(rules);
	/* The command engine gets no provider host. */
	assert_int_equal(egress_rules(&cfg, "command", NULL, NULL, &rules, &n, err,
	    sizeof err), 0);
	assert_int_equal(n, 1);
	free(rules);
	/* A rule set's name stands for its hosts, in place (issue 30). */
	strlist_free(&task);
	assert_int_equal(strlist_add(&task, "rust"), 0);
	assert_int_equal(strlist_add(&task, "git.example.com:443"), 0);
	assert_int_equal(egress_rules(&cfg, "command", NULL, &task, &rules, &n, err,
	    sizeof err), 0);
	assert_int_equal(n, 4);
	assert_string_equal(rules[0].text, "index.crates.io:443");
	assert_string_equal(rules[1].text, "static.crates.io:443");
	assert_string_equal(rules[2].text, "git.example.com:443");
	free(rules);
	for (const char *const *set = netsets_find("python"); *set != NULL; set++)
		assert_int_equal(netrule_parse(*set, &rules_one, err, sizeof err), 0);
	assert_null(netsets_find("Python"));
	assert_null(netsets_find(""));
	/* The JVM gets the proxy as properties (SPEC N2). */
	strlist_free(&task);
	assert_int_equal(egress_env(&task), 0);
	{
		int	 found = 0;

		for (size_t i = 0; i < task.n; i++)
			if (strncmp(task.v[i], "JAVA_TOOL_OPTIONS=", 18) == 0 &&
			    strstr(task.v[i], "-Dhttps.proxyHost=127.0.0.1") != NULL &&
			    strstr(task.v[i], "-Dhttp.nonProxyHosts=") != NULL)
				found = 1;
		assert_true(found);
	}
	strlist_free(&task);
	config_free(&cfg);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_match),
		cmocka_unit_test(test_private),
		cmocka_unit_test(test_request),
		cmocka_unit_test(test_framing),
		cmocka_unit_test(test_body),
		cmocka_unit_test(test_egress),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
