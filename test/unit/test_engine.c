/*
 * The engine seam: the shared table (common/engines.c) and the runner's side
 * (runner/engine.c) agree; Claude Code's stream-json becomes the transcript's entries
 * (runner/engine_claude.c) with its turns, cost and final message; its hook body gives
 * the floor the Bash command and nothing else; and the transcript vocabulary
 * (common/transcript.c) bounds what an engine says and renders it safely.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "engine_claude.h"
#include "json.h"
#include "transcript.h"

static void
test_table(void **state)
{
	const struct engine_info	*e;
	size_t				 runnable = 0;

	(void)state;
	assert_int_equal(engines_count() > 0, 1);
	for (size_t i = 0; (e = engines_at(i)) != NULL; i++) {
		assert_non_null(e->floor);
		assert_non_null(e->ask);
		/* A runnable engine other than "command" has a runtime side. */
		if ((e->caps & ENGINE_RUNNABLE) && strcmp(e->name, "command") != 0) {
			assert_non_null(engine_find(e->name));
			assert_string_equal(engine_info(engine_find(e->name))->name, e->name);
			runnable++;
		}
		/* A claim of a floor needs the hook reading; of asking, the floor too. */
		if (e->caps & ENGINE_CAN_FLOOR)
			assert_non_null(engine_find(e->name)->floor_command);
	}
	assert_true(runnable >= 1);
	assert_non_null(engines_runnable("hermes"));
	assert_null(engines_find("nope"));
	assert_null(engine_find("command"));
	assert_non_null(strstr(engines_names(1), "claude"));
	assert_non_null(strstr(engines_names(1), "hermes"));
	assert_null(strstr(engines_names(1), "nope"));
}

struct said {
	cJSON	*all;
};

static void
say(void *arg, cJSON *entry)
{
	struct said	*s = arg;

	assert_non_null(entry);
	assert_int_equal(transcript_check(entry), 0);
	cJSON_AddItemToArray(s->all, entry);
}

static const char *
kind_at(const struct said *s, int i)
{
	return json_get_string(cJSON_GetArrayItem(s->all, i), "k");
}

static int
feed(const struct engine_ops *ops, struct engine_stream *st, struct engine_progress *p,
    struct said *s, const char *line)
{
	return ops->stream_line(st, line, strlen(line), p, say, s);
}

static void
test_claude_stream(void **state)
{
	const struct engine_ops	*ops = engine_find("claude");
	struct engine_stream	*st;
	struct engine_progress	 p;
	struct said		 s = { cJSON_CreateArray() };
	const cJSON		*e;

	(void)state;
	assert_non_null(ops);
	st = ops->stream_new();
	memset(&p, 0, sizeof p);
	assert_int_equal(feed(ops, st, &p, &s, "not json"), -1);
	assert_int_equal(feed(ops, st, &p, &s,
	    "{\"type\":\"system\",\"subtype\":\"init\"}"), 0);
	assert_int_equal(feed(ops, st, &p, &s, "{\"type\":\"assistant\",\"message\":"
	    "{\"id\":\"m1\",\"content\":[{\"type\":\"text\",\"text\":\"Looking.\"},"
	    "{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"Bash\",\"input\":"
	    "{\"command\":\"git push --force origin main\"}}]}}"), 1);
	/* The same message id again is the same turn. */
	assert_int_equal(feed(ops, st, &p, &s, "{\"type\":\"assistant\",\"message\":"
	    "{\"id\":\"m1\",\"content\":[{\"type\":\"tool_use\",\"id\":\"t2\",\"name\":"
	    "\"Edit\",\"input\":{\"file_path\":\"/w/a.c\"}}]}}"), 0);
	assert_int_equal(feed(ops, st, &p, &s, "{\"type\":\"user\",\"message\":"
	    "{\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"t1\",\"content\":"
	    "[{\"type\":\"text\",\"text\":\"Clockwork floor: force-push\"}],"
	    "\"is_error\":true}]}}"), 0);
	assert_int_equal(p.turns, 1);
	assert_int_equal(feed(ops, st, &p, &s, "{\"type\":\"result\",\"subtype\":"
	    "\"success\",\"result\":\"The plan:\\n1. fix\",\"total_cost_usd\":0.0123,"
	    "\"num_turns\":3,\"is_error\":false}"), 1);
	assert_int_equal(p.turns, 3);
	assert_true(p.dollars > 0.012 && p.dollars < 0.013);
	assert_string_equal(p.result, "The plan:\n1. fix");
	assert_int_equal(cJSON_GetArraySize(s.all), 6);
	assert_string_equal(kind_at(&s, 0), "text");
	assert_string_equal(kind_at(&s, 1), "tool");
	e = cJSON_GetArrayItem(s.all, 1);
	assert_string_equal(json_get_string(e, "command"), "git push --force origin main");
	assert_string_equal(json_get_string(e, "id"), "t1");
	e = cJSON_GetArrayItem(s.all, 2);
	assert_string_equal(json_get_string(e, "path"), "/w/a.c");
	e = cJSON_GetArrayItem(s.all, 3);
	assert_string_equal(kind_at(&s, 3), "result");
	assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "error")));
	assert_string_equal(kind_at(&s, 4), "final");
	assert_string_equal(kind_at(&s, 5), "usage");
	engine_progress_free(&p);
	ops->stream_free(st);
	cJSON_Delete(s.all);
}

static void
test_claude_floor_command(void **state)
{
	const struct engine_ops	*ops = engine_find("claude");
	const char		*cmd;
	cJSON			*b;

	(void)state;
	b = json_parse("{\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"ls\"}}", 53);
	assert_non_null(b);
	assert_int_equal(ops->floor_command(b, &cmd), 0);
	assert_string_equal(cmd, "ls");
	cJSON_Delete(b);
	b = cJSON_Parse("{\"tool_name\":\"Edit\",\"tool_input\":{\"file_path\":\"x\"}}");
	assert_int_equal(ops->floor_command(b, &cmd), 0);
	assert_null(cmd);
	cJSON_Delete(b);
	/* A Bash call without a command string is malformed: the bridge denies it. */
	b = cJSON_Parse("{\"tool_name\":\"Bash\",\"tool_input\":{\"command\":7}}");
	assert_int_equal(ops->floor_command(b, &cmd), -1);
	cJSON_Delete(b);
	b = cJSON_Parse("{\"tool_input\":{}}");
	assert_int_equal(ops->floor_command(b, &cmd), -1);
	cJSON_Delete(b);
}

static void
test_transcript_bounds(void **state)
{
	char	*big, *line;
	cJSON	*e;
	double	 cut;

	(void)state;
	big = malloc(TRANSCRIPT_RESULT_MAX * 3);
	memset(big, 'a', TRANSCRIPT_RESULT_MAX * 3);
	/* A multi-byte character across the cut is not split. */
	memcpy(big + TRANSCRIPT_RESULT_MAX - 1, "\xc3\xa9", 2);
	e = transcript_result("t1", big, TRANSCRIPT_RESULT_MAX * 3, 0);
	assert_int_equal(transcript_check(e), 0);
	assert_int_equal(strlen(json_get_string(e, "text")), TRANSCRIPT_RESULT_MAX - 1);
	assert_int_equal(json_get_number(e, "cut", &cut), 0);
	assert_int_equal((int)cut, TRANSCRIPT_RESULT_MAX * 3 - (TRANSCRIPT_RESULT_MAX - 1));
	line = transcript_render(e, 0);
	assert_non_null(strstr(line, "bytes more]"));
	free(line);
	cJSON_Delete(e);
	free(big);
	/* A NUL inside a tool's output ends the kept text; the rest counts as cut. */
	e = transcript_result(NULL, "ok\0; git push -f", 17, 0);
	assert_string_equal(json_get_string(e, "text"), "ok");
	cJSON_Delete(e);
}

static void
test_transcript_render(void **state)
{
	char	*line;
	cJSON	*e;

	(void)state;
	/* Control characters and escapes an engine prints are made visible. */
	e = transcript_text("hi\033]52;c;aGk=\007 there\n\n");
	line = transcript_render(e, 0);
	assert_string_equal(line, "agent    hi\\e]52;c;aGk=\\x07 there");
	free(line);
	cJSON_Delete(e);
	e = transcript_tool("Bash", "t", "rm -rf /\r\033[2Kls", NULL, NULL);
	line = transcript_render(e, 0);
	assert_string_equal(line, "tool     Bash  rm -rf /\\r\\e[2Kls");
	free(line);
	cJSON_Delete(e);
	/* A pending approval says how to answer it. */
	e = transcript_ask("ap-1", "Bash", "make deploy", 0);
	line = transcript_render(e, 0);
	assert_non_null(strstr(line, "WAITING  approval ap-1: Bash make deploy"));
	assert_non_null(strstr(line, "cwctl approve ap-1"));
	assert_non_null(strstr(line, "cwctl deny ap-1"));
	free(line);
	cJSON_Delete(e);
	e = transcript_answer("ap-1", "allow", "cwctl uid=1000 pid=7", NULL);
	line = transcript_render(e, 0);
	assert_string_equal(line, "answer   approval ap-1 allowed by cwctl uid=1000 pid=7");
	free(line);
	cJSON_Delete(e);
	e = transcript_usage(0.0032, 1);
	line = transcript_render(e, 0);
	assert_string_equal(line, "usage    $0.0032, 1 turn");
	free(line);
	cJSON_Delete(e);
	e = transcript_final("line one\nline two", 0);
	line = transcript_render(e, 1);
	assert_non_null(strstr(line, "line one\n         line two"));
	assert_non_null(strstr(line, "\033["));
	free(line);
	cJSON_Delete(e);
}

static void
test_transcript_check(void **state)
{
	static const char *const bad[] = {
		"{}", "{\"k\":\"text\"}", "{\"k\":\"text\",\"text\":5}",
		"{\"k\":\"usage\",\"dollars\":\"1\",\"turns\":2}", "{\"k\":\"nope\",\"text\":\"x\"}",
		"{\"k\":\"tool\",\"tool\":\"Bash\",\"command\":[1]}", "{\"k\":7}",
	};
	static const char *const good[] = {
		"{\"k\":\"text\",\"text\":\"x\"}", "{\"k\":\"usage\",\"dollars\":1,\"turns\":2}",
		"{\"k\":\"tool\",\"tool\":\"Bash\"}",
		"{\"k\":\"answer\",\"approval\":\"a\",\"decision\":\"deny\",\"by\":\"x\"}",
	};
	cJSON	*o;

	(void)state;
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		o = cJSON_Parse(bad[i]);
		if (transcript_check(o) != -1)
			fail_msg("accepted %s", bad[i]);
		assert_null(transcript_render(o, 0));
		cJSON_Delete(o);
	}
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		o = cJSON_Parse(good[i]);
		if (transcript_check(o) != 0)
			fail_msg("refused %s", good[i]);
		cJSON_Delete(o);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_claude_stream),
		cmocka_unit_test(test_claude_floor_command),
		cmocka_unit_test(test_transcript_bounds),
		cmocka_unit_test(test_transcript_render),
		cmocka_unit_test(test_transcript_check),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
