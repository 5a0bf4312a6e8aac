/*
 * wiremsg.c: each message type decodes into its fields, and a message with the wrong
 * version, no type, or a field out of shape or bounds is refused with a reason.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "wiremsg.h"

static int
dec(const char *line, struct wiremsg *m, char *err, size_t errlen)
{
	return wiremsg_decode(line, strlen(line), m, err, errlen);
}

static void
test_types(void **state)
{
	struct wiremsg	 m;
	char		 err[128];

	assert_int_equal(dec("{\"v\":1,\"type\":\"hello\",\"sandboxed\":false}", &m, err,
	    sizeof err), 0);
	assert_int_equal(m.type, WIREMSG_HELLO);
	assert_int_equal(m.sandboxed, 0);
	wiremsg_free(&m);

	assert_int_equal(dec("{\"v\":1,\"type\":\"event\",\"kind\":\"approval_timeout\","
	    "\"id\":\"ap-1\"}", &m, err, sizeof err), 0);
	assert_int_equal(m.type, WIREMSG_EVENT);
	assert_string_equal(m.kind, "approval_timeout");
	assert_string_equal(m.id, "ap-1");
	assert_int_equal(m.sandboxed, -1);
	wiremsg_free(&m);

	assert_int_equal(dec("{\"v\":1,\"type\":\"approval_request\",\"id\":\"ap-2\","
	    "\"tool\":\"Bash\",\"input\":{\"command\":\"ls\"},\"deadline\":5}", &m, err,
	    sizeof err), 0);
	assert_int_equal(m.type, WIREMSG_APPROVAL_REQUEST);
	assert_string_equal(m.tool, "Bash");
	assert_non_null(m.input);
	assert_true(m.deadline == 5);
	assert_string_equal(m.risk, "ordinary");	/* a runner from before risk */
	assert_null(m.risk_rule);
	wiremsg_free(&m);
	assert_int_equal(dec("{\"v\":1,\"type\":\"approval_request\",\"id\":\"ap-3\","
	    "\"tool\":\"Bash\",\"risk\":\"destructive\",\"risk_rule\":\"config.rm_root\"}",
	    &m, err, sizeof err), 0);
	assert_string_equal(m.risk, "destructive");
	assert_string_equal(m.risk_rule, "config.rm_root");
	wiremsg_free(&m);

	assert_int_equal(dec("{\"v\":1,\"type\":\"usage\",\"dollars\":-3,\"turns\":4}", &m,
	    err, sizeof err), 0);
	assert_true(m.dollars == -1);	/* a negative figure is no figure */
	assert_int_equal(m.turns, 4);
	wiremsg_free(&m);

	assert_int_equal(dec("{\"v\":1,\"type\":\"log\",\"text\":\"x\"}", &m, err,
	    sizeof err), 0);
	assert_string_equal(m.text, "x");
	wiremsg_free(&m);

	/* A type this daemon does not know is kept, not refused. */
	assert_int_equal(dec("{\"v\":1,\"type\":\"future\"}", &m, err, sizeof err), 0);
	assert_int_equal(m.type, WIREMSG_OTHER);
	assert_string_equal(m.type_name, "future");
	wiremsg_free(&m);
}

static void
test_refusals(void **state)
{
	static const char *const bad[] = {
		"not json",
		"[1,2]",
		"{\"type\":\"hello\"}",
		"{\"v\":2,\"type\":\"hello\"}",
		"{\"v\":1}",
		"{\"v\":1,\"type\":7}",
		"{\"v\":1,\"type\":\"event\"}",
		("{\"v\":1,\"type\":\"event\",\"kind\":\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
		    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}"),
		"{\"v\":1,\"type\":\"approval_request\",\"tool\":\"Bash\"}",
		"{\"v\":1,\"type\":\"approval_request\",\"id\":\"\",\"tool\":\"Bash\"}",
		"{\"v\":1,\"type\":\"approval_request\",\"id\":\"a\"}",
		"{\"v\":1,\"type\":\"approval_request\",\"id\":\"a\",\"tool\":\"Bash\","
		    "\"risk\":\"harmless\"}",
		"{\"v\":1,\"type\":\"approval_request\",\"id\":\"a\",\"tool\":\"Bash\","
		    "\"risk\":7}",
	};
	struct wiremsg	 m;
	char		 err[128];

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		err[0] = '\0';
		if (dec(bad[i], &m, err, sizeof err) != -1)
			fail_msg("accepted: %s", bad[i]);
		assert_true(err[0] != '\0');
		assert_null(m.obj);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_types),
		cmocka_unit_test(test_refusals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
