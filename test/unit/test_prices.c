/*
 * The built-in price table and its lookup (common/prices.c): the spellings of one
 * model that providers, gateways and clouds use find one row (dated snapshots,
 * provider prefixes, Bedrock and Vertex ids, tags, dotted Claude versions), a name
 * that only looks alike does not, and config.yaml's prices: wins over the table.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "config.h"
#include "prices.h"

static void
test_normalise(void **state)
{
	static const struct {
		const char	*in, *want;
	} rows[] = {
		{ "claude-sonnet-4-5", "claude-sonnet-4-5" },
		{ "claude-sonnet-4-5-20250929", "claude-sonnet-4-5" },
		{ "Claude-Sonnet-4-5-20250929", "claude-sonnet-4-5" },
		{ "anthropic/claude-sonnet-4.5", "claude-sonnet-4-5" },
		{ "openrouter/anthropic/claude-opus-4.1", "claude-opus-4-1" },
		{ "anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5" },
		{ "us.anthropic.claude-opus-4-1-20250805-v1:0", "claude-opus-4-1" },
		{ "claude-sonnet-4-5@20250929", "claude-sonnet-4-5" },
		{ "claude-sonnet-4-5[1m]", "claude-sonnet-4-5" },
		{ "claude-3-5-haiku-latest", "claude-3-5-haiku" },
		{ "claude-opus-4-0", "claude-opus-4" },
		{ "claude-sonnet-4-20250514", "claude-sonnet-4" },
		{ "gpt-5-2025-08-07", "gpt-5" },
		{ "openai/gpt-4.1-2025-04-14", "gpt-4.1" },
		{ "gpt-4o-mini:latest", "gpt-4o-mini" },
		/* Only Bedrock ids lose a "-vN": elsewhere it is part of the name. */
		{ "deepseek-v4-pro", "deepseek-v4-pro" },
		{ "some-model-v2", "some-model-v2" },
	};
	char	out[128];

	(void)state;
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		assert_int_equal(prices_normalise(rows[i].in, out, sizeof out), 0);
		if (strcmp(out, rows[i].want) != 0)
			fail_msg("%s: '%s', want '%s'", rows[i].in, out, rows[i].want);
	}
	assert_int_equal(prices_normalise("", out, sizeof out), -1);
	assert_int_equal(prices_normalise(NULL, out, sizeof out), -1);
	assert_int_equal(prices_normalise("anthropic/", out, sizeof out), -1);
	assert_int_equal(prices_normalise("claude-sonnet-4-5", out, 4), -1);
}

static void
test_builtin(void **state)
{
	const struct prices_entry	*e;

	(void)state;
	assert_non_null(e = prices_builtin("claude-sonnet-4-5-20250929"));
	assert_string_equal(e->model, "claude-sonnet-4-5");
	assert_true(e->per_mtok[0] == 3.00 && e->per_mtok[1] == 15.00 &&
	    e->per_mtok[2] == 3.75 && e->per_mtok[3] == 0.30);
	assert_non_null(e = prices_builtin("anthropic/claude-opus-4.5"));
	assert_true(e->per_mtok[0] == 5.00 && e->per_mtok[1] == 25.00);
	/* Opus 4.1 is on the old tier, not 4.5's. */
	assert_non_null(e = prices_builtin("claude-opus-4-1-20250805"));
	assert_true(e->per_mtok[0] == 15.00 && e->per_mtok[1] == 75.00);
	assert_non_null(e = prices_builtin("openai/gpt-5-codex"));
	assert_true(e->per_mtok[0] == 1.25 && e->per_mtok[3] == 0.125);
	assert_non_null(e = prices_builtin("gpt-4o-2024-08-06"));
	assert_string_equal(e->model, "gpt-4o");
	/* Alike is not the same: no prefix match, no family guess. */
	assert_null(prices_builtin("claude-sonnet"));
	assert_null(prices_builtin("claude-sonnet-4-5-turbo"));
	assert_null(prices_builtin("gpt-5-ultra"));
	assert_null(prices_builtin("claude-unpriced"));
	assert_null(prices_builtin("o3"));	/* its price could not be confirmed */
}

static void
test_find(void **state)
{
	struct config	 cfg;
	const double	*p;
	const char	*from = NULL;
	char		 err[512];
	static const char text[] =
	    "prices:\n"
	    "  claude-sonnet-4-5: {input: 1, output: 2}\n"
	    "  openrouter/acme/coder-7b: {input: 0.1, output: 0.2}\n";

	(void)state;
	assert_int_equal(config_parse("test.yaml", text, sizeof text - 1, &cfg, err,
	    sizeof err), 0);
	/* The configuration wins over the table, for every spelling of the model. */
	assert_non_null(p = prices_find(&cfg, "claude-sonnet-4-5-20250929", &from));
	assert_true(p[0] == 1 && p[1] == 2);
	assert_string_equal(from, "prices.claude-sonnet-4-5 in config.yaml");
	/* A configured model the table does not know, under another prefix. */
	assert_non_null(p = prices_find(&cfg, "coder-7b", &from));
	assert_true(p[0] == 0.1);
	/* The table for the rest. */
	assert_non_null(p = prices_find(&cfg, "claude-haiku-4-5", &from));
	assert_true(p[0] == 1.00 && p[1] == 5.00);
	assert_non_null(strstr(from, "built-in table (checked " PRICES_TABLE_DATE));
	assert_non_null(prices_find(NULL, "gpt-5", NULL));
	assert_null(prices_find(&cfg, "claude-unpriced", &from));
	assert_null(prices_find(&cfg, NULL, &from));
	config_free(&cfg);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_normalise),
		cmocka_unit_test(test_builtin),
		cmocka_unit_test(test_find),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
