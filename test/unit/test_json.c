/*
 * Records masked as JSON (common/json.c json_mask_text, json_print_masked): a value is
 * judged with its name; a key block cut off inside a string, which masking the text
 * whole would mask to the end of the text, leaves JSON that still parses, the key gone
 * and the other fields kept; text that is not JSON is masked as text.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "json.h"

static void
test_name_context(void **state)
{
	char	*m;

	(void)state;
	m = json_mask_text("{\"db_password\":\"hunter2Qx9v\",\"n\":1}");
	assert_non_null(m);
	assert_string_equal(m, "{\"db_password\":\"[MASKED]\",\"n\":1}");
	free(m);
}

static void
test_cut_key_stays_json(void **state)
{
	const char	*in = "{\"text\":\"-----BEGIN RSA PRIVATE KEY-----\\nMIIEpAIBAAKCAQEA3Tz2mr7S"
	    "\",\"command\":\"echo ghp_BkdfQ1y3GQsMpSscDlkrCaqx9vJupc94tnwl\",\"turns\":3}";
	cJSON		*o;
	char		*m;
	double		 turns = 0;

	(void)state;
	m = json_mask_text(in);
	assert_non_null(m);
	assert_null(strstr(m, "MIIEpAIB"));
	assert_null(strstr(m, "SscDlkr"));
	o = json_parse(m, strlen(m));
	assert_non_null(o);
	assert_string_equal(json_get_string(o, "text"), "[MASKED:private-key]");
	assert_string_equal(json_get_string(o, "command"), "echo ghp_[MASKED]");
	assert_int_equal(json_get_number(o, "turns", &turns), 0);
	assert_true(turns == 3);
	cJSON_Delete(o);
	free(m);
}

static void
test_not_json(void **state)
{
	char	*m;

	(void)state;
	m = json_mask_text("token=ghp_BkdfQ1y3GQsMpSscDlkrCaqx9vJupc94tnwl {");
	assert_non_null(m);
	assert_null(strstr(m, "SscDlkr"));
	free(m);
}

static void
test_print_masked(void **state)
{
	cJSON	*o = cJSON_CreateObject();
	char	*m;

	(void)state;
	assert_non_null(o);
	json_add_string(o, "command", "export API_KEY=Zq9XkP3mLw7RtY2vAb");
	m = json_print_masked(o);
	assert_non_null(m);
	assert_string_equal(m, "{\"command\":\"export API_KEY=[MASKED]\"}");
	free(m);
	cJSON_Delete(o);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_name_context),
		cmocka_unit_test(test_cut_key_stays_json),
		cmocka_unit_test(test_not_json),
		cmocka_unit_test(test_print_masked),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
