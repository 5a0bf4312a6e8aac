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

static void
test_egress(void **state)
{
	struct config	 cfg;
	struct netrule	*rules = NULL;
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
		cmocka_unit_test(test_egress),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
