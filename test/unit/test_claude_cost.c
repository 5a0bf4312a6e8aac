/*
 * The dollars of a Claude Code run, counted by the runner (issue 23): each response's
 * usage in the stream-json output (runner/engine_claude.c) priced by prices.h
 * (common/prices.c), once per message id, the output counted from message_delta. The
 * lines below are the shapes Claude Code 2.1.332 printed against
 * test/fixtures/model-server.js with --include-partial-messages (ids and uuids cut).
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "engine.h"
#include "engine_claude.h"
#include "json.h"
#include "prices.h"

#define NEAR(a, b)	assert_true(fabs((a) - (b)) < 1e-12)

static void
test_prices_cost(void **state)
{
	const double	price[4] = { 10, 50, 12.5, 1 };
	double		t[4] = { 1000, 100, 0, 0 };

	(void)state;
	/* 1000 in at $10/M, 100 out at $50/M. */
	NEAR(prices_cost(price, t), 0.015);
	t[PRICES_CACHE_WRITE] = 2000;
	t[PRICES_CACHE_READ] = 10000;
	NEAR(prices_cost(price, t), 0.015 + 0.025 + 0.01);
	/* A count or price no provider would send adds nothing, never subtracts. */
	t[PRICES_INPUT] = -1e9;
	t[PRICES_CACHE_READ] = NAN;
	NEAR(prices_cost(price, t), 0.005 + 0.025);
	t[PRICES_INPUT] = INFINITY;
	NEAR(prices_cost(price, t), 0.005 + 0.025);
	NEAR(prices_cost((const double[4]){ -1, 0, 0, 0 },
	    (const double[4]){ 1000, 0, 0, 0 }), 0);
}

static void
test_usage_merge(void **state)
{
	double	 t[PRICES_N_KINDS] = { 0 };
	cJSON	*u;

	(void)state;
	u = cJSON_Parse("{\"input_tokens\":100,\"output_tokens\":1,"
	    "\"cache_creation_input_tokens\":30,\"cache_read_input_tokens\":4000}");
	assert_int_equal(engine_claude_usage(u, t), 1);
	NEAR(t[PRICES_INPUT], 100);
	NEAR(t[PRICES_OUTPUT], 1);
	NEAR(t[PRICES_CACHE_WRITE], 30);
	NEAR(t[PRICES_CACHE_READ], 4000);
	/* The same report again changes nothing. */
	assert_int_equal(engine_claude_usage(u, t), 0);
	cJSON_Delete(u);
	/* message_delta names only what grew; the rest is kept, and nothing shrinks. */
	u = cJSON_Parse("{\"output_tokens\":20,\"input_tokens\":5}");
	assert_int_equal(engine_claude_usage(u, t), 1);
	NEAR(t[PRICES_INPUT], 100);
	NEAR(t[PRICES_OUTPUT], 20);
	NEAR(t[PRICES_CACHE_READ], 4000);
	cJSON_Delete(u);
	/* Not numbers, absurd counts, not an object: nothing. */
	u = cJSON_Parse("{\"output_tokens\":\"999\",\"input_tokens\":1e15}");
	assert_int_equal(engine_claude_usage(u, t), 0);
	cJSON_Delete(u);
	u = cJSON_Parse("[1,2]");
	assert_int_equal(engine_claude_usage(u, t), 0);
	cJSON_Delete(u);
	assert_int_equal(engine_claude_usage(NULL, t), 0);
}

struct feed {
	const struct engine_ops	*ops;
	struct engine_stream	*st;
	struct engine_progress	 p;
};

static void
say(void *arg, cJSON *entry)
{
	(void)arg;
	cJSON_Delete(entry);
}

static int
feed(struct feed *f, const char *line)
{
	return f->ops->stream_line(f->st, line, strlen(line), &f->p, say, NULL);
}

#define START(id, model, in, cw, cr) \
	"{\"type\":\"stream_event\",\"event\":{\"type\":\"message_start\",\"message\":" \
	"{\"id\":\"" id "\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"" model \
	"\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":" \
	"{\"input_tokens\":" #in ",\"output_tokens\":1,\"cache_creation_input_tokens\":" \
	#cw ",\"cache_read_input_tokens\":" #cr "}}},\"session_id\":\"s\"," \
	"\"parent_tool_use_id\":null,\"api_message_id\":\"" id "\"}"
#define ASSISTANT(id, model, in, parent) \
	"{\"type\":\"assistant\",\"message\":{\"id\":\"" id "\",\"type\":\"message\"," \
	"\"role\":\"assistant\",\"model\":\"" model "\",\"content\":[{\"type\":" \
	"\"tool_use\",\"id\":\"toolu_1\",\"name\":\"Bash\",\"input\":{\"command\":" \
	"\"echo one > a.txt\"}}],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":" \
	"{\"input_tokens\":" #in ",\"output_tokens\":1,\"cache_creation_input_tokens\":0," \
	"\"cache_read_input_tokens\":0}},\"parent_tool_use_id\":" parent "," \
	"\"session_id\":\"s\"}"
#define DELTA(id, stop, out, parent) \
	"{\"type\":\"stream_event\",\"event\":{\"type\":\"message_delta\",\"delta\":" \
	"{\"stop_reason\":\"" stop "\",\"stop_sequence\":null},\"usage\":" \
	"{\"output_tokens\":" #out "}},\"session_id\":\"s\",\"parent_tool_use_id\":" \
	parent ",\"api_message_id\":\"" id "\"}"
#define FRAGMENT \
	"{\"type\":\"stream_event\",\"event\":{\"type\":\"content_block_delta\",\"index\":0," \
	"\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{}\"}}," \
	"\"session_id\":\"s\",\"parent_tool_use_id\":null,\"api_message_id\":\"m1\"}"

static void
test_stream_cost(void **state)
{
	struct config_price	 row = { "claude-e2e", { 10, 50, 12.5, 1 } };
	struct config		 cfg;
	struct feed		 f;

	(void)state;
	memset(&f, 0, sizeof f);
	f.ops = engine_find("claude");
	memset(&cfg, 0, sizeof cfg);
	cfg.prices = &row;
	cfg.n_prices = 1;
	assert_non_null(f.ops);
	assert_non_null(f.ops->stream_prices);
	assert_non_null(f.st = f.ops->stream_new());
	f.ops->stream_prices(f.st, &cfg);

	/* message_start: 100 in, 1 out so far: $0.001 + $0.00005. */
	assert_int_equal(feed(&f, START("m1", "claude-e2e", 100, 0, 0)), 1);
	NEAR(f.p.dollars, 0.00105);
	assert_int_equal(f.p.more, 0);
	/* A fragment of the response: no cost, and the log does not keep it. */
	assert_int_equal(feed(&f, FRAGMENT), 0);
	assert_int_equal(f.ops->log_skip(FRAGMENT, strlen(FRAGMENT)), 1);
	/* The assistant event repeats message_start's usage: a turn, no new cost. */
	assert_int_equal(feed(&f, ASSISTANT("m1", "claude-e2e", 100, "null")), 1);
	assert_int_equal(f.p.turns, 1);
	NEAR(f.p.dollars, 0.00105);
	/* message_delta: the whole output (20), and the response asks for a tool. */
	assert_int_equal(f.ops->log_skip(DELTA("m1", "tool_use", 20, "null"),
	    strlen(DELTA("m1", "tool_use", 20, "null"))), 0);
	assert_int_equal(feed(&f, DELTA("m1", "tool_use", 20, "null")), 1);
	NEAR(f.p.dollars, 0.002);
	assert_int_equal(f.p.more, 1);
	/* The same delta again (a repeat) is not counted twice. */
	assert_int_equal(feed(&f, DELTA("m1", "tool_use", 20, "null")), 0);
	NEAR(f.p.dollars, 0.002);

	/* The next response: cache writes and reads at their own prices. */
	assert_int_equal(feed(&f, START("m2", "claude-e2e", 10, 2000, 10000)), 1);
	NEAR(f.p.dollars, 0.002 + (10 * 10 + 1 * 50 + 2000 * 12.5 + 10000 * 1) / 1e6);
	/* A subagent's response streams beside it: counted, but it is not the agent's
	 * own answer, so it says nothing of whether the run goes on. */
	assert_int_equal(feed(&f, START("sub1", "claude-e2e", 1000, 0, 0)), 1);
	assert_int_equal(feed(&f, DELTA("sub1", "end_turn", 100, "\"toolu_9\"")), 1);
	assert_int_equal(f.p.more, 1);
	/* m2 ends after it: its output still lands on m2 (matched by id). */
	assert_int_equal(feed(&f, DELTA("m2", "end_turn", 40, "null")), 1);
	assert_int_equal(f.p.more, 0);
	NEAR(f.p.dollars, 0.002 + (10 * 10 + 40 * 50 + 2000 * 12.5 + 10000 * 1) / 1e6 +
	    (1000 * 10 + 100 * 50) / 1e6);
	assert_string_equal(f.p.unpriced, "");

	/* Claude Code's own total, lower than ours (other prices): ours stays. */
	assert_int_equal(feed(&f, "{\"type\":\"result\",\"subtype\":\"success\","
	    "\"total_cost_usd\":0.0001,\"num_turns\":2,\"is_error\":false,"
	    "\"result\":\"done\"}"), 1);
	assert_true(f.p.dollars > 0.05);
	/* ... and higher (requests the stream did not show): Claude Code's. */
	assert_int_equal(feed(&f, "{\"type\":\"result\",\"subtype\":\"success\","
	    "\"total_cost_usd\":2.5,\"num_turns\":2,\"is_error\":false}"), 1);
	NEAR(f.p.dollars, 2.5);
	engine_progress_free(&f.p);
	f.ops->stream_free(f.st);
}

static void
test_stream_unpriced(void **state)
{
	struct feed	f;

	(void)state;
	memset(&f, 0, sizeof f);
	f.ops = engine_find("claude");
	assert_non_null(f.st = f.ops->stream_new());
	/* No configuration: the built-in table, which knows Sonnet 4.5 by any spelling. */
	f.ops->stream_prices(f.st, NULL);
	assert_int_equal(feed(&f, START("a1", "claude-sonnet-4-5-20250929", 1000000, 0,
	    0)), 1);
	NEAR(f.p.dollars, 3.0 + 15.0 / 1e6);
	/* A model with no price: named, and its tokens add nothing. */
	assert_int_equal(feed(&f, START("a2", "claude-e2e-unpriced", 1000000, 0, 0)), 0);
	assert_string_equal(f.p.unpriced, "claude-e2e-unpriced");
	assert_int_equal(feed(&f, DELTA("a2", "tool_use", 5000, "null")), 1);
	NEAR(f.p.dollars, 3.0 + 15.0 / 1e6);
	assert_int_equal(f.p.more, 1);
	/* A delta for an id never started (no model known): nothing is priced. */
	assert_int_equal(feed(&f, DELTA("zz", "end_turn", 5000, "null")), 1);
	NEAR(f.p.dollars, 3.0 + 15.0 / 1e6);
	/* Usage that is no usage, an id too long to hold: ignored, never fatal. */
	assert_int_equal(feed(&f, "{\"type\":\"stream_event\",\"event\":{\"type\":"
	    "\"message_start\",\"message\":{\"id\":\"q\",\"model\":\"claude-sonnet-4-5\","
	    "\"usage\":\"lots\"}}}"), 0);
	assert_int_equal(feed(&f, "{\"type\":\"stream_event\",\"event\":{\"type\":"
	    "\"message_start\",\"message\":{\"id\":\"" "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
	    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
	    "xxxxxxxxxxxxxxxxxxxxx\",\"model\":\"claude-sonnet-4-5\",\"usage\":"
	    "{\"input_tokens\":1000000}}}}"), 0);
	assert_int_equal(feed(&f, "{\"type\":\"stream_event\",\"event\":7}"), 0);
	NEAR(f.p.dollars, 3.0 + 15.0 / 1e6);
	engine_progress_free(&f.p);
	f.ops->stream_free(f.st);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prices_cost),
		cmocka_unit_test(test_usage_merge),
		cmocka_unit_test(test_stream_cost),
		cmocka_unit_test(test_stream_unpriced),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
