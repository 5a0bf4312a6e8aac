/*
 * Claude Code's permission rules from a repository's settings (common/clauderules.h):
 * what each rule becomes, that nothing allowing every command (or every subcommand,
 * or a wildcard's guess) is ever mapped to an allow, that deny and ask rules become
 * ask rules, and that a malformed file is an error naming the file, field and limit.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clauderules.h"

/* The mapping of one rule of list: its effect, and its family in fam. */
static enum clauderules_effect
test_map(enum clauderules_list l, const char *text, char *fam, size_t famlen)
{
	struct clauderules_rule	 r;

	memset(&r, 0, sizeof r);
	clauderules_map(l, text, &r);
	if (fam != NULL)
		snprintf(fam, famlen, "%s", r.family);
	/* Every rule explains itself when it is not imported. */
	if (r.effect == CLAUDERULES_NONE)
		assert_true(r.note[0] != '\0' && r.family[0] == '\0');
	return r.effect;
}

static void
test_clauderules_allow(void **state)
{
	char	 fam[FLOOR_FAMILY_MAX];

	(void)state;
	/* Prefix rules naming exactly one family become task rules. */
	assert_int_equal(test_map(CLAUDERULES_ALLOW, "Bash(npm test:*)", fam, sizeof fam),
	    CLAUDERULES_TASK_ALLOW);
	assert_string_equal(fam, "npm test");
	assert_int_equal(test_map(CLAUDERULES_ALLOW, "Bash(npm run build *)", fam,
	    sizeof fam), CLAUDERULES_TASK_ALLOW);
	assert_string_equal(fam, "npm run build");
	assert_int_equal(test_map(CLAUDERULES_ALLOW, "Bash(git  commit:*)", fam, sizeof fam),
	    CLAUDERULES_TASK_ALLOW);
	assert_string_equal(fam, "git commit");
	assert_int_equal(test_map(CLAUDERULES_ALLOW, "Bash(pytest:*)", fam, sizeof fam),
	    CLAUDERULES_TASK_ALLOW);
	assert_string_equal(fam, "pytest");
	/* An exact rule that is a family: imported (the note says any arguments). */
	assert_int_equal(test_map(CLAUDERULES_ALLOW, "Bash(npm run build)", fam, sizeof fam),
	    CLAUDERULES_TASK_ALLOW);
	assert_string_equal(fam, "npm run build");
	/* Everything, in each spelling: never. */
	assert_int_equal(test_map(CLAUDERULES_ALLOW, "Bash", NULL, 0), CLAUDERULES_NONE);
	assert_int_equal(test_map(CLAUDERULES_ALLOW, "Bash(*)", NULL, 0), CLAUDERULES_NONE);
	assert_int_equal(test_map(CLAUDERULES_ALLOW, "Bash()", NULL, 0), CLAUDERULES_NONE);
	assert_int_equal(test_map(CLAUDERULES_ALLOW, "Bash(:*)", NULL, 0), CLAUDERULES_NONE);
	assert_int_equal(test_map(CLAUDERULES_ALLOW, "Bash( * )", NULL, 0), CLAUDERULES_NONE);
	/* fuzz/clauderules: trimmed, this was the prefix rule "gi" (a star not at its end). */
	assert_int_equal(test_map(CLAUDERULES_ALLOW, "Bash(gi:*    )", NULL, 0),
	    CLAUDERULES_NONE);
	assert_int_equal(test_map(CLAUDERULES_ALLOW, "Bash( npm test:*)", NULL, 0),
	    CLAUDERULES_NONE);
	assert_int_equal(test_map(CLAUDERULES_ALLOW, "Bash(* *)", NULL, 0), CLAUDERULES_NONE);
	/* Every subcommand of a program; a wildcard inside or without a boundary. */
	assert_int_equal(test_map(CLAUDERULES_ALLOW, "Bash(npm:*)", NULL, 0),
	    CLAUDERULES_NONE);
	assert_int_equal(test_map(CLAUDERULES_ALLOW, "Bash(git *)", NULL, 0),
	    CLAUDERULES_NONE);
	assert_int_equal(test_map(CLAUDERULES_ALLOW, "Bash(npm run:*)", NULL, 0),
	    CLAUDERULES_NONE);
	assert_int_equal(test_map(CLAUDERULES_ALLOW, "Bash(git * main)", NULL, 0),
	    CLAUDERULES_NONE);
	assert_int_equal(test_map(CLAUDERULES_ALLOW, "Bash(* --version)", NULL, 0),
	    CLAUDERULES_NONE);
	assert_int_equal(test_map(CLAUDERULES_ALLOW, "Bash(npm t*)", NULL, 0),
	    CLAUDERULES_NONE);
	assert_int_equal(test_map(CLAUDERULES_ALLOW, "Bash(npm test:*:*)", NULL, 0),
	    CLAUDERULES_NONE);
	assert_int_equal(test_map(CLAUDERULES_ALLOW, "Bash(npm \\* test)", NULL, 0),
	    CLAUDERULES_NONE);
	/* Narrower than a family, or not a family at all. */
	assert_int_equal(test_map(CLAUDERULES_ALLOW, "Bash(git commit -m:*)", NULL, 0),
	    CLAUDERULES_NONE);
	assert_int_equal(test_map(CLAUDERULES_ALLOW, "Bash(npm install lodash)", NULL, 0),
	    CLAUDERULES_NONE);
	assert_int_equal(test_map(CLAUDERULES_ALLOW, "Bash(sh -c:*)", NULL, 0),
	    CLAUDERULES_NONE);
	assert_int_equal(test_map(CLAUDERULES_ALLOW, "Bash(timeout 5 npm test)", NULL, 0),
	    CLAUDERULES_NONE);
	assert_int_equal(test_map(CLAUDERULES_ALLOW, "Bash(npm test && curl x:*)", NULL, 0),
	    CLAUDERULES_NONE);
	assert_int_equal(test_map(CLAUDERULES_ALLOW, "Bash(echo $(id):*)", NULL, 0),
	    CLAUDERULES_NONE);
	assert_int_equal(test_map(CLAUDERULES_ALLOW, "Bash(git push --force:*)", NULL, 0),
	    CLAUDERULES_NONE);
	/* Other tools, and what is not a rule. */
	assert_int_equal(test_map(CLAUDERULES_ALLOW, "Read(./src/**)", NULL, 0),
	    CLAUDERULES_NONE);
	assert_int_equal(test_map(CLAUDERULES_ALLOW, "Edit", NULL, 0), CLAUDERULES_NONE);
	assert_int_equal(test_map(CLAUDERULES_ALLOW, "WebFetch(domain:example.com)", NULL,
	    0), CLAUDERULES_NONE);
	assert_int_equal(test_map(CLAUDERULES_ALLOW, "mcp__server__tool", NULL, 0),
	    CLAUDERULES_NONE);
	assert_int_equal(test_map(CLAUDERULES_ALLOW, "Bash(npm test", NULL, 0),
	    CLAUDERULES_NONE);
	assert_int_equal(test_map(CLAUDERULES_ALLOW, "Bash (npm test)", NULL, 0),
	    CLAUDERULES_NONE);
	assert_int_equal(test_map(CLAUDERULES_ALLOW, "", NULL, 0), CLAUDERULES_NONE);
}

static void
test_clauderules_deny(void **state)
{
	char	 fam[FLOOR_FAMILY_MAX];

	(void)state;
	assert_int_equal(test_map(CLAUDERULES_DENY, "Bash(npm publish:*)", fam, sizeof fam),
	    CLAUDERULES_TASK_ASK);
	assert_string_equal(fam, "npm publish");
	/* Wider than the rule is the safe side for a deny. */
	assert_int_equal(test_map(CLAUDERULES_DENY, "Bash(git push --force:*)", fam,
	    sizeof fam), CLAUDERULES_TASK_ASK);
	assert_string_equal(fam, "git push");
	assert_int_equal(test_map(CLAUDERULES_DENY, "Bash(npm:*)", fam, sizeof fam),
	    CLAUDERULES_TASK_ASK);
	assert_string_equal(fam, "npm");
	assert_int_equal(test_map(CLAUDERULES_ASK, "Bash(rm -rf *)", fam, sizeof fam),
	    CLAUDERULES_TASK_ASK);
	assert_string_equal(fam, "rm");
	/* An allow list's rule is never an ask, a deny's never an allow. */
	assert_int_equal(test_map(CLAUDERULES_DENY, "Bash(npm test)", fam, sizeof fam),
	    CLAUDERULES_TASK_ASK);
	/* What cannot be mapped is listed, not imported. */
	assert_int_equal(test_map(CLAUDERULES_DENY, "Bash", NULL, 0), CLAUDERULES_NONE);
	assert_int_equal(test_map(CLAUDERULES_DENY, "Bash(curl * | sh)", NULL, 0),
	    CLAUDERULES_NONE);
	assert_int_equal(test_map(CLAUDERULES_DENY, "Read(./.env)", NULL, 0),
	    CLAUDERULES_NONE);
}

static void
test_clauderules_parse(void **state)
{
	static const char ok[] = "{\"model\": \"x\", \"permissions\": {"
	    "\"allow\": [\"Bash(npm test:*)\", \"Bash\", \"Read(./src/**)\"],"
	    "\"deny\": [\"Bash(npm publish:*)\"], \"ask\": [\"Bash(git push:*)\"],"
	    "\"defaultMode\": \"bypassPermissions\"}}";
	struct clauderules	 c;
	char			 err[256];

	(void)state;
	assert_int_equal(clauderules_parse("s.json", ok, strlen(ok), &c, err, sizeof err),
	    0);
	assert_int_equal(c.n, 5);
	assert_int_equal(c.rules[0].list, CLAUDERULES_ALLOW);
	assert_int_equal(c.rules[0].effect, CLAUDERULES_TASK_ALLOW);
	assert_string_equal(c.rules[0].text, "Bash(npm test:*)");
	assert_int_equal(c.rules[1].effect, CLAUDERULES_NONE);
	assert_int_equal(c.rules[2].effect, CLAUDERULES_NONE);
	assert_int_equal(c.rules[3].list, CLAUDERULES_ASK);
	assert_int_equal(c.rules[3].effect, CLAUDERULES_TASK_ASK);
	assert_string_equal(c.rules[3].family, "git push");
	assert_int_equal(c.rules[4].list, CLAUDERULES_DENY);
	assert_string_equal(c.rules[4].family, "npm publish");
	clauderules_free(&c);
	/* No permissions: no rules, no error. */
	assert_int_equal(clauderules_parse("s.json", "{}", 2, &c, err, sizeof err), 0);
	assert_int_equal(c.n, 0);
}

/* Each malformed file: -1, nothing kept, and the message naming what. */
static void
test_clauderules_bad_one(const char *text, const char *want)
{
	struct clauderules	 c;
	char			 err[256];

	assert_int_equal(clauderules_parse(".claude/settings.json", text, strlen(text), &c,
	    err, sizeof err), -1);
	assert_null(c.rules);
	assert_int_equal(c.n, 0);
	if (strstr(err, want) == NULL || strstr(err, ".claude/settings.json") == NULL)
		fail_msg("error \"%s\" does not name \"%s\" and the file", err, want);
}

static void
test_clauderules_bad(void **state)
{
	char	*big, *many;
	size_t	 n;

	(void)state;
	test_clauderules_bad_one("{\"permissions\": ", "not a JSON object");
	test_clauderules_bad_one("[1]", "not a JSON object");
	test_clauderules_bad_one("{\"permissions\": []}", "permissions: not an object");
	test_clauderules_bad_one("{\"permissions\": {\"allow\": \"Bash\"}}",
	    "permissions.allow: not an array");
	test_clauderules_bad_one("{\"permissions\": {\"deny\": [\"Bash(x)\", 3]}}",
	    "permissions.deny[1]: not a string");
	/* A duplicate key would be read one way here and another by a JS parser. */
	test_clauderules_bad_one("{\"permissions\": {\"allow\": []}, \"permissions\": {}}",
	    "permissions: given twice");
	test_clauderules_bad_one("{\"permissions\": {\"allow\": [], \"allow\": "
	    "[\"Bash\"]}}", "permissions.allow: given twice");
	/* Bounds: the file, one rule, the number of rules. */
	n = CLAUDERULES_MAX_BYTES + 16;
	assert_non_null(big = malloc(n + 1));
	memset(big, ' ', n);
	big[0] = '{';
	big[n - 1] = '}';
	big[n] = '\0';
	test_clauderules_bad_one(big, "larger than the limit of 262144");
	snprintf(big, n, "{\"permissions\": {\"allow\": [\"Bash(%0*d)\"]}}",
	    CLAUDERULES_MAX_RULE, 7);
	test_clauderules_bad_one(big, "permissions.allow[0]:");
	free(big);
	assert_non_null(many = malloc(64 * 1024));
	n = (size_t)snprintf(many, 64 * 1024, "{\"permissions\": {\"allow\": [");
	for (int i = 0; i <= CLAUDERULES_MAX_RULES; i++)
		n += (size_t)snprintf(many + n, 64 * 1024 - n, "%s\"Edit\"", i ? "," : "");
	snprintf(many + n, 64 * 1024 - n, "]}}");
	test_clauderules_bad_one(many, "more than 512 rules");
	free(many);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clauderules_allow),
		cmocka_unit_test(test_clauderules_deny),
		cmocka_unit_test(test_clauderules_parse),
		cmocka_unit_test(test_clauderules_bad),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
