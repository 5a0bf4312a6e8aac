/*
 * Clockwork's own agent (byok), the parts that can be shown without a run:
 *   - the SSE reader: line endings, joined data lines, comments, split feeds, limits;
 *   - the Messages API stream (text and tool_use with streamed input, usage, stop
 *     reason, error events, out-of-order and malformed events) and a whole answer;
 *   - Chat Completions chunks (content, tool_calls by index with split arguments, the
 *     usage chunk, [DONE]) and a whole answer, and both error bodies;
 *   - the request bodies (cache_control; tool_calls and tool messages);
 *   - agent_narrow(), measured in a child: not dumpable, no_new_privs, nothing
 *     writable, only the CA certificates readable, exec, ptrace and process_vm_readv
 *     refused; and the engine's hook body and stream lines.
 */
#define _GNU_SOURCE
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "anthropic.h"
#include "engine.h"
#include "json.h"
#include "openai.h"
#include "sse.h"

struct got {
	char	 all[4096];
	int	 n;
};

static int
got_cb(void *arg, const char *event, const char *data, size_t len)
{
	struct got	*g = arg;
	size_t		 l = strlen(g->all);

	assert_int_equal(strlen(data), len);
	snprintf(g->all + l, sizeof g->all - l, "[%s|%s]", event, data);
	g->n++;
	return 0;
}

static void
test_sse(void **state)
{
	const char	*in = ": comment\r\nevent: a\r\ndata: one\r\ndata:two\r\n\r\n"
	    "data: plain\n\nevent: b\rdata: cr\r\rid: 7\nretry: 10\ndata\n\n";
	struct got	 g;
	struct sse	*s;

	(void)state;
	/* Whole, then one byte at a time: the same events. */
	for (int bytewise = 0; bytewise < 2; bytewise++) {
		memset(&g, 0, sizeof g);
		assert_non_null(s = sse_new(64, got_cb, &g));
		if (bytewise) {
			for (size_t i = 0; i < strlen(in); i++)
				assert_int_equal(sse_feed(s, in + i, 1), 0);
		} else
			assert_int_equal(sse_feed(s, in, strlen(in)), 0);
		assert_string_equal(g.all, "[a|one\ntwo][message|plain][b|cr][message|]");
		sse_free(s);
	}
	/* An event past its limit fails the stream. */
	memset(&g, 0, sizeof g);
	assert_non_null(s = sse_new(8, got_cb, &g));
	assert_int_equal(sse_feed(s, "data: 12345\ndata: 6789\n", 23), -1);
	sse_free(s);
}

static struct anthropic_turn turn;

static int
feed_anthropic(const char *stream)
{
	struct sse	*s = sse_new(1 << 16, NULL, NULL);
	int		 rc = 0;
	const char	*p = stream, *e;

	/* The events one data line each: parse them as the agent does. */
	(void)s;
	sse_free(s);
	anthropic_turn_init(&turn);
	while ((e = strchr(p, '\n')) != NULL) {
		if (strncmp(p, "data: ", 6) == 0 &&
		    anthropic_stream_event(&turn, "x", p + 6, (size_t)(e - p - 6)) == -1)
			rc = -1;
		p = e + 1;
	}
	return rc;
}

static void
test_anthropic_stream(void **state)
{
	const cJSON	*b;

	(void)state;
	assert_int_equal(feed_anthropic(
	    "data: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":12,"
	    "\"cache_read_input_tokens\":5,\"output_tokens\":1}}}\n"
	    "data: {\"type\":\"ping\"}\n"
	    "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":"
	    "{\"type\":\"text\",\"text\":\"\"}}\n"
	    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":"
	    "\"text_delta\",\"text\":\"Let me \"}}\n"
	    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":"
	    "\"text_delta\",\"text\":\"look.\"}}\n"
	    "data: {\"type\":\"content_block_stop\",\"index\":0}\n"
	    "data: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":"
	    "{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"bash\",\"input\":{}}}\n"
	    "data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":"
	    "\"input_json_delta\",\"partial_json\":\"{\\\"comm\"}}\n"
	    "data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":"
	    "\"input_json_delta\",\"partial_json\":\"and\\\": \\\"ls\\\"}\"}}\n"
	    "data: {\"type\":\"content_block_stop\",\"index\":1}\n"
	    "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},"
	    "\"usage\":{\"output_tokens\":30}}\n"
	    "data: {\"type\":\"message_stop\"}\n"), 0);
	assert_true(turn.done);
	assert_string_equal(turn.stop_reason, "tool_use");
	assert_int_equal(turn.usage.input, 12);
	assert_int_equal(turn.usage.cache_read, 5);
	assert_int_equal(turn.usage.output, 30);
	assert_int_equal(cJSON_GetArraySize(turn.content), 2);
	assert_string_equal(json_get_string(cJSON_GetArrayItem(turn.content, 0), "text"),
	    "Let me look.");
	b = cJSON_GetArrayItem(turn.content, 1);
	assert_string_equal(json_get_string(b, "name"), "bash");
	assert_string_equal(json_get_string(cJSON_GetObjectItem(b, "input"), "command"),
	    "ls");
	assert_null(cJSON_GetObjectItem(b, "_partial"));
	anthropic_turn_free(&turn);

	/* A stream cut before message_stop is not whole. */
	assert_int_equal(feed_anthropic("data: {\"type\":\"message_start\",\"message\":{}}\n"
	    "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":"
	    "{\"type\":\"text\",\"text\":\"\"}}\n"), 0);
	assert_false(turn.done);
	anthropic_turn_free(&turn);
	/* An error event names itself. */
	assert_int_equal(feed_anthropic("data: {\"type\":\"error\",\"error\":{\"type\":"
	    "\"overloaded_error\",\"message\":\"Overloaded\"}}\n"), -1);
	assert_string_equal(turn.err_type, "overloaded_error");
	anthropic_turn_free(&turn);
	/* Malformed: out of order, a block index that is not the next, bad JSON input. */
	assert_int_equal(feed_anthropic("data: {\"type\":\"content_block_start\",\"index\":0,"
	    "\"content_block\":{\"type\":\"text\"}}\n"), -1);
	anthropic_turn_free(&turn);
	assert_int_equal(feed_anthropic("data: {\"type\":\"message_start\",\"message\":{}}\n"
	    "data: {\"type\":\"content_block_start\",\"index\":3,\"content_block\":"
	    "{\"type\":\"text\"}}\n"), -1);
	anthropic_turn_free(&turn);
	assert_int_equal(feed_anthropic("data: {\"type\":\"message_start\",\"message\":{}}\n"
	    "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":"
	    "{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"bash\",\"input\":{}}}\n"
	    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":"
	    "\"input_json_delta\",\"partial_json\":\"[1,\"}}\n"
	    "data: {\"type\":\"content_block_stop\",\"index\":0}\n"), -1);
	anthropic_turn_free(&turn);
	assert_int_equal(feed_anthropic("data: not json\n"), -1);
	anthropic_turn_free(&turn);
}

static void
test_anthropic_whole_and_errors(void **state)
{
	const char	*m = "{\"type\":\"message\",\"content\":[{\"type\":\"text\",\"text\":"
	    "\"hi\"},{\"type\":\"tool_use\",\"id\":\"a\",\"name\":\"grep\",\"input\":"
	    "{\"pattern\":\"x\"}}],\"stop_reason\":\"tool_use\",\"usage\":{\"input_tokens\""
	    ":3,\"output_tokens\":4}}";
	char		 type[64], msg[128];
	const char	*e;
	cJSON		*tools, *msgs, *r;

	(void)state;
	anthropic_turn_init(&turn);
	assert_int_equal(anthropic_parse_message(&turn, m, strlen(m)), 0);
	assert_int_equal(cJSON_GetArraySize(turn.content), 2);
	assert_int_equal(turn.usage.output, 4);
	anthropic_turn_free(&turn);
	anthropic_turn_init(&turn);
	assert_int_equal(anthropic_parse_message(&turn, "{\"type\":\"message\"}", 18), -1);
	anthropic_turn_free(&turn);
	e = "{\"type\":\"error\",\"error\":{\"type\":\"authentication_error\","
	    "\"message\":\"invalid x-api-key\"}}";
	assert_int_equal(anthropic_parse_error(e, strlen(e), type, sizeof type, msg,
	    sizeof msg), 0);
	assert_string_equal(type, "authentication_error");
	assert_string_equal(msg, "invalid x-api-key");
	assert_int_equal(anthropic_parse_error("<html>", 6, type, sizeof type, msg,
	    sizeof msg), -1);
	/* Prompt caching: the system prompt and the last tool carry cache_control. */
	tools = cJSON_Parse("[{\"name\":\"a\"},{\"name\":\"b\"}]");
	msgs = cJSON_Parse("[{\"role\":\"user\",\"content\":\"go\"}]");
	r = anthropic_request("m", 100, "sys", tools, msgs, 1);
	assert_non_null(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(r,
	    "system"), 0), "cache_control"));
	assert_null(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(r,
	    "tools"), 0), "cache_control"));
	assert_non_null(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(r,
	    "tools"), 1), "cache_control"));
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(r, "stream")));
	/* The caller's tools are not changed. */
	assert_null(cJSON_GetObjectItem(cJSON_GetArrayItem(tools, 1), "cache_control"));
	cJSON_Delete(r);
	cJSON_Delete(tools);
	cJSON_Delete(msgs);
}

static int
feed_openai(const char *const *chunks)
{
	int	 rc = 0;

	anthropic_turn_init(&turn);
	for (; *chunks != NULL; chunks++)
		if (openai_stream_event(&turn, *chunks, strlen(*chunks)) == -1)
			rc = -1;
	return rc;
}

static void
test_openai(void **state)
{
	const char *const ok[] = {
		"{\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}",
		"{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Checking\"}}]}",
		"{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":"
		    "\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"read_file\","
		    "\"arguments\":\"\"}}]}}]}",
		"{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":"
		    "\"call_2\",\"function\":{\"name\":\"bash\",\"arguments\":\"{\\\"command\"}}]}}]}",
		"{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,"
		    "\"function\":{\"arguments\":\"{\\\"path\\\":\\\"README\\\"}\"}}]}}]}",
		"{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,"
		    "\"function\":{\"arguments\":\"\\\":\\\"ls\\\"}\"}}]}}]}",
		"{\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}",
		"{\"choices\":[],\"usage\":{\"prompt_tokens\":100,\"completion_tokens\":7,"
		    "\"prompt_tokens_details\":{\"cached_tokens\":60}}}",
		"[DONE]", NULL,
	};
	const char *const cut[] = {
		"{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Checking\"}}]}", NULL,
	};
	const char *const bad[] = {
		"{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,"
		    "\"function\":{\"arguments\":\"{not json\"}}]}}]}", "[DONE]", NULL,
	};
	const char	*m = "{\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":"
	    "null,\"tool_calls\":[{\"id\":\"c\",\"type\":\"function\",\"function\":{\"name\":"
	    "\"grep\",\"arguments\":\"{\\\"pattern\\\":\\\"x\\\"}\"}}]},\"finish_reason\":"
	    "\"tool_calls\"}],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":2}}";
	const cJSON	*b;
	char		 type[64], msg[128];
	cJSON		*msgs, *tools, *r, *om;

	(void)state;
	assert_int_equal(feed_openai(ok), 0);
	assert_true(turn.done);
	assert_string_equal(turn.stop_reason, "tool_use");
	assert_int_equal(turn.usage.input, 40);
	assert_int_equal(turn.usage.cache_read, 60);
	assert_int_equal(turn.usage.output, 7);
	assert_int_equal(cJSON_GetArraySize(turn.content), 3);
	assert_string_equal(json_get_string(cJSON_GetArrayItem(turn.content, 0), "text"),
	    "Checking");
	b = cJSON_GetArrayItem(turn.content, 1);
	assert_string_equal(json_get_string(b, "id"), "call_1");
	assert_string_equal(json_get_string(cJSON_GetObjectItem(b, "input"), "path"),
	    "README");
	b = cJSON_GetArrayItem(turn.content, 2);
	assert_string_equal(json_get_string(cJSON_GetObjectItem(b, "input"), "command"),
	    "ls");
	assert_null(cJSON_GetObjectItem(b, "_oi"));
	anthropic_turn_free(&turn);
	assert_int_equal(feed_openai(cut), 0);
	assert_false(turn.done);		/* no [DONE]: the stream broke off */
	anthropic_turn_free(&turn);
	assert_int_equal(feed_openai(bad), -1);
	anthropic_turn_free(&turn);

	anthropic_turn_init(&turn);
	assert_int_equal(openai_parse_message(&turn, m, strlen(m)), 0);
	assert_string_equal(turn.stop_reason, "tool_use");
	assert_string_equal(json_get_string(cJSON_GetObjectItem(cJSON_GetArrayItem(
	    turn.content, 0), "input"), "pattern"), "x");
	anthropic_turn_free(&turn);
	m = "{\"error\":{\"message\":\"You exceeded your current quota\",\"type\":"
	    "\"insufficient_quota\",\"code\":\"insufficient_quota\"}}";
	assert_int_equal(openai_parse_error(m, strlen(m), type, sizeof type, msg,
	    sizeof msg), 0);
	assert_string_equal(type, "insufficient_quota");

	/* The agent's conversation as Chat Completions messages. */
	msgs = cJSON_Parse("[{\"role\":\"user\",\"content\":\"go\"},"
	    "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"ok\"},"
	    "{\"type\":\"tool_use\",\"id\":\"c1\",\"name\":\"bash\",\"input\":{\"command\":"
	    "\"ls\"}}]},{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\","
	    "\"tool_use_id\":\"c1\",\"content\":\"README\"}]}]");
	tools = cJSON_Parse("[{\"name\":\"bash\",\"description\":\"d\",\"input_schema\":"
	    "{\"type\":\"object\"}}]");
	r = openai_request("m", 100, "sys", tools, msgs, 1);
	om = cJSON_GetObjectItem(r, "messages");
	assert_int_equal(cJSON_GetArraySize(om), 4);
	assert_string_equal(json_get_string(cJSON_GetArrayItem(om, 0), "role"), "system");
	b = cJSON_GetArrayItem(om, 2);
	assert_string_equal(json_get_string(b, "content"), "ok");
	assert_string_equal(json_get_string(cJSON_GetObjectItem(cJSON_GetArrayItem(
	    cJSON_GetObjectItem(b, "tool_calls"), 0), "function"), "arguments"),
	    "{\"command\":\"ls\"}");
	b = cJSON_GetArrayItem(om, 3);
	assert_string_equal(json_get_string(b, "role"), "tool");
	assert_string_equal(json_get_string(b, "tool_call_id"), "c1");
	assert_string_equal(json_get_string(cJSON_GetObjectItem(cJSON_GetArrayItem(
	    cJSON_GetObjectItem(r, "tools"), 0), "function"), "name"), "bash");
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(r,
	    "stream_options"), "include_usage")));
	cJSON_Delete(r);
	cJSON_Delete(tools);
	cJSON_Delete(msgs);
}

/* Each property of the narrowed key holder, one bit of the child's exit code each. */
static void
test_agent_narrow(void **state)
{
	const char	*ca = NULL;
	pid_t		 pid;
	int		 st, fd;

	(void)state;
	if (access("/etc/ssl/certs", R_OK) == 0)
		ca = "/etc/ssl/certs";
	if ((pid = fork()) == 0) {
		char	 err[256], *argv[] = { "/bin/true", NULL }, buf[8];
		int	 bad = 0;
		struct iovec	l = { buf, sizeof buf }, rv = { (void *)&bad, sizeof buf };

		if (agent_narrow(err, sizeof err) == -1) {
			fprintf(stderr, "agent_narrow: %s\n", err);
			_exit(255);
		}
		if (prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) != 0)
			bad |= 1;
		if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
			bad |= 2;
		if ((fd = open(CW_TEST_TMP_DIR "/byok-narrow-write", O_WRONLY | O_CREAT,
		    0600)) != -1 || errno != EACCES)
			bad |= 4;
		if (open("/etc/passwd", O_RDONLY) != -1 || errno != EACCES)
			bad |= 8;
		if (ca != NULL && open(ca, O_RDONLY | O_DIRECTORY) == -1)
			bad |= 16;
		execv(argv[0], argv);
		if (errno != EPERM)
			bad |= 32;
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) != -1 || errno != EPERM)
			bad |= 64;
		if (process_vm_readv(getppid(), &l, 1, &rv, 1, 0) != -1 || errno != EPERM)
			bad |= 128;
		_exit(bad);
	}
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	if (WEXITSTATUS(st) != 0)
		fail_msg("narrowed agent: property bits failing: 0x%x", WEXITSTATUS(st));
}

static void
say(void *arg, cJSON *entry)
{
	cJSON_AddItemToArray(arg, entry);
}

static void
test_engine_byok(void **state)
{
	const struct engine_ops	*ops = engine_find("byok");
	struct engine_progress	 p = { 0 };
	struct engine_stream	*s;
	const char		*cmd;
	cJSON			*body, *said = cJSON_CreateArray();
	const char		*l1 = "{\"type\":\"entry\",\"entry\":{\"k\":\"text\",\"text\":\"hi\"}}";
	const char		*l2 = "{\"type\":\"usage\",\"turns\":3,\"dollars\":0.25}";
	const char		*l3 = "{\"type\":\"result\",\"subtype\":\"error_max_budget_usd\","
	    "\"is_error\":true,\"result\":\"spent\"}";

	(void)state;
	assert_non_null(ops);
	assert_non_null(ops->companion);
	assert_non_null(s = ops->stream_new());
	assert_int_equal(ops->stream_line(s, l1, strlen(l1), &p, say, said), 0);
	assert_int_equal(cJSON_GetArraySize(said), 1);
	assert_int_equal(ops->stream_line(s, l2, strlen(l2), &p, say, said), 1);
	assert_int_equal(p.turns, 3);
	assert_true(p.dollars == 0.25);
	assert_int_equal(ops->stream_line(s, l3, strlen(l3), &p, say, said), 1);
	assert_true(p.have_result && p.is_error);
	assert_string_equal(p.subtype, "error_max_budget_usd");
	assert_string_equal(p.result, "spent");
	assert_int_equal(ops->stream_line(s, "{\"type\":\"entry\",\"entry\":{\"k\":\"bogus\"}}",
	    38, &p, say, said), -1);
	assert_int_equal(ops->stream_line(s, "nope", 4, &p, say, said), -1);
	ops->stream_free(s);
	engine_progress_free(&p);
	cJSON_Delete(said);
	/* The tool host's /floor body: bash carries a command; other tools none. */
	body = cJSON_Parse("{\"tool\":\"bash\",\"command\":\"git push -f\"}");
	assert_int_equal(ops->floor_command(body, &cmd), 0);
	assert_string_equal(cmd, "git push -f");
	cJSON_Delete(body);
	body = cJSON_Parse("{\"tool\":\"read_file\"}");
	assert_int_equal(ops->floor_command(body, &cmd), 0);
	assert_null(cmd);
	cJSON_Delete(body);
	body = cJSON_Parse("{\"tool_name\":\"Bash\"}");
	assert_int_equal(ops->floor_command(body, &cmd), -1);
	cJSON_Delete(body);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sse),
		cmocka_unit_test(test_anthropic_stream),
		cmocka_unit_test(test_anthropic_whole_and_errors),
		cmocka_unit_test(test_openai),
		cmocka_unit_test(test_agent_narrow),
		cmocka_unit_test(test_engine_byok),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
