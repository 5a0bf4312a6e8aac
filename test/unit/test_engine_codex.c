/*
 * The Codex engine (runner/engine_codex.c): its command line (the floor hook pinned in
 * the session-flags layer, its own sandbox off only while ours is on, the provider from
 * configuration, the key in the environment and never on argv), its private home, the
 * reading of `codex exec --json` lines (taken from the pinned CLI's real output) into
 * progress and transcript entries, and the hook body's shell command.
 */
#include <sys/stat.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "engine.h"
#include "engine_codex.h"
#include "json.h"
#include "transcript.h"

struct said {
	cJSON	*list;
};

static void
collect(void *arg, cJSON *entry)
{
	struct said	*s = arg;

	cJSON_AddItemToArray(s->list, entry);
}

static int
feed(struct engine_stream *st, const char *line, struct engine_progress *pr,
    struct said *s)
{
	return engine_codex_ops.stream_line(st, line, strlen(line), pr, collect, s);
}

static const cJSON *
entry_of(const struct said *s, const char *kind, int nth)
{
	const cJSON	*e;
	const char	*k;

	cJSON_ArrayForEach(e, s->list) {
		if ((k = json_get_string(e, "k")) != NULL && strcmp(k, kind) == 0 &&
		    nth-- == 0)
			return e;
	}
	return NULL;
}

/* Lines as codex-cli 0.171.0 printed them for a run of test/fixtures/responses-server.js. */
static const char *const run_lines[] = {
	"{\"type\":\"thread.started\",\"thread_id\":\"01a22d3d-8504-7c83-acf1-70cc3da7ccc3\"}",
	"{\"type\":\"item.completed\",\"item\":{\"id\":\"item_0\",\"type\":\"error\","
	    "\"message\":\"Model metadata for `gpt-test` not found.\"}}",
	"{\"type\":\"turn.started\"}",
	"{\"type\":\"item.started\",\"item\":{\"id\":\"item_1\",\"type\":\"command_execution\","
	    "\"command\":\"/bin/bash -lc 'echo hello > a.txt && cat a.txt'\","
	    "\"aggregated_output\":\"\",\"exit_code\":null,\"status\":\"in_progress\"}}",
	"{\"type\":\"item.completed\",\"item\":{\"id\":\"item_1\",\"type\":\"command_execution\","
	    "\"command\":\"/bin/bash -lc 'echo hello > a.txt && cat a.txt'\","
	    "\"aggregated_output\":\"hello\\n\",\"exit_code\":0,\"status\":\"completed\"}}",
	"{\"type\":\"item.started\",\"item\":{\"id\":\"item_2\",\"type\":\"command_execution\","
	    "\"command\":\"/bin/bash -lc 'git push origin main'\",\"aggregated_output\":\"\","
	    "\"exit_code\":null,\"status\":\"in_progress\"}}",
	"{\"type\":\"item.completed\",\"item\":{\"id\":\"item_2\",\"type\":\"command_execution\","
	    "\"command\":\"/bin/bash -lc 'git push origin main'\",\"aggregated_output\":"
	    "\"error: src refspec main does not match any\\n\",\"exit_code\":1,"
	    "\"status\":\"failed\"}}",
	"{\"type\":\"item.completed\",\"item\":{\"id\":\"item_3\",\"type\":\"file_change\","
	    "\"changes\":[{\"path\":\"/w/a.txt\",\"kind\":\"update\"},{\"path\":\"/w/b.txt\","
	    "\"kind\":\"add\"}],\"status\":\"completed\"}}",
	"{\"type\":\"item.completed\",\"item\":{\"id\":\"item_4\",\"type\":\"agent_message\","
	    "\"text\":\"all done here\"}}",
	"{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":300,\"cached_input_tokens\":0,"
	    "\"output_tokens\":60,\"reasoning_output_tokens\":0}}",
};

static void
test_stream_run(void **state)
{
	struct engine_progress	 pr = { 0 };
	struct said		 s = { cJSON_CreateArray() };
	struct engine_stream	*st = engine_codex_ops.stream_new();
	const cJSON		*e;
	char			*line;
	int			 turns_before_final;

	(void)state;
	assert_non_null(st);
	for (size_t i = 0; i < sizeof run_lines / sizeof run_lines[0]; i++)
		assert_true(feed(st, run_lines[i], &pr, &s) >= 0);
	/* One turn to start, one more after each of the three tool calls. */
	assert_int_equal(pr.turns, 4);
	assert_true(pr.have_result);
	assert_false(pr.is_error);
	assert_string_equal(pr.subtype, "success");
	assert_non_null(pr.result);
	assert_string_equal(pr.result, "all done here");

	assert_non_null(e = entry_of(&s, "tool", 0));
	assert_string_equal(json_get_string(e, "tool"), "shell");
	assert_string_equal(json_get_string(e, "command"), "echo hello > a.txt && cat a.txt");
	assert_non_null(e = entry_of(&s, "result", 0));
	assert_string_equal(json_get_string(e, "text"), "hello\n");
	assert_true(cJSON_IsFalse(cJSON_GetObjectItem(e, "error")));
	assert_non_null(e = entry_of(&s, "result", 1));
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(e, "error")));
	assert_non_null(e = entry_of(&s, "tool", 2));
	assert_string_equal(json_get_string(e, "tool"), "apply_patch");
	assert_string_equal(json_get_string(e, "detail"), "update /w/a.txt, add /w/b.txt");
	assert_non_null(e = entry_of(&s, "text", 0));
	assert_string_equal(json_get_string(e, "text"), "all done here");
	assert_non_null(e = entry_of(&s, "final", 0));
	assert_string_equal(json_get_string(e, "text"), "all done here");
	assert_non_null(e = entry_of(&s, "usage", 0));
	assert_true(json_get_int(e, "turns", &turns_before_final) == 0);
	assert_int_equal(turns_before_final, 4);
	/* Codex reports no cost: the entry says so rather than "$0". */
	assert_non_null(line = transcript_render(e, 0));
	assert_non_null(strstr(line, "4 turns (no cost reported)"));
	assert_null(strchr(line, '$'));
	free(line);
	/* The warning item is no transcript entry, and every entry is well formed. */
	cJSON_ArrayForEach(e, s.list)
		assert_int_equal(transcript_check(e), 0);
	assert_null(entry_of(&s, "note", 0));

	engine_codex_ops.stream_free(st);
	engine_progress_free(&pr);
	cJSON_Delete(s.list);
}

static void
test_stream_failed(void **state)
{
	struct engine_progress	 pr = { 0 };
	struct said		 s = { cJSON_CreateArray() };
	struct engine_stream	*st = engine_codex_ops.stream_new();
	const cJSON		*e;

	(void)state;
	assert_int_equal(feed(st, "{\"type\":\"turn.started\"}", &pr, &s), 1);
	assert_int_equal(feed(st, "{\"type\":\"turn.failed\",\"error\":{\"message\":"
	    "\"stream disconnected before completion\"}}", &pr, &s), 1);
	assert_true(pr.have_result);
	assert_true(pr.is_error);
	assert_string_equal(pr.result, "stream disconnected before completion");
	assert_non_null(e = entry_of(&s, "final", 0));
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(e, "error")));
	engine_codex_ops.stream_free(st);
	engine_progress_free(&pr);
	cJSON_Delete(s.list);
}

static void
test_stream_not_codex(void **state)
{
	struct engine_progress	 pr = { 0 };
	struct said		 s = { cJSON_CreateArray() };
	struct engine_stream	*st = engine_codex_ops.stream_new();

	(void)state;
	assert_int_equal(feed(st, "Reading additional input from stdin...", &pr, &s), -1);
	assert_int_equal(feed(st, "[1,2]", &pr, &s), -1);
	assert_int_equal(feed(st, "{\"no\":\"type\"}", &pr, &s), -1);
	assert_int_equal(feed(st, "{\"type\":\"item.completed\",\"item\":7}", &pr, &s), 0);
	assert_int_equal(feed(st, "{\"type\":\"item.completed\",\"item\":{\"type\":"
	    "\"command_execution\"}}", &pr, &s), 1);
	assert_int_equal(pr.turns, 1);
	assert_int_equal(cJSON_GetArraySize(s.list), 1);
	/* A call the floor refused shows in no line: the runner reports it. */
	assert_int_equal(engine_codex_ops.floor_denied(st, &pr), 1);
	assert_int_equal(pr.turns, 2);
	engine_codex_ops.stream_free(st);
	engine_progress_free(&pr);
	cJSON_Delete(s.list);
}

static void
test_floor_command(void **state)
{
	const char	*cmd = "x";
	cJSON		*b;

	(void)state;
	b = cJSON_Parse("{\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Bash\","
	    "\"tool_input\":{\"command\":\"git push --force origin main\"},"
	    "\"tool_use_id\":\"call_1\",\"permission_mode\":\"bypassPermissions\"}");
	assert_int_equal(engine_codex_ops.floor_command(b, &cmd), 0);
	assert_string_equal(cmd, "git push --force origin main");
	cJSON_Delete(b);
	b = cJSON_Parse("{\"tool_name\":\"apply_patch\",\"tool_input\":{\"command\":\"x\"}}");
	assert_int_equal(engine_codex_ops.floor_command(b, &cmd), 0);
	assert_null(cmd);
	cJSON_Delete(b);
	b = cJSON_Parse("{\"tool_name\":\"Bash\",\"tool_input\":{\"cmd\":\"x\"}}");
	assert_int_equal(engine_codex_ops.floor_command(b, &cmd), -1);
	cJSON_Delete(b);
	b = cJSON_Parse("[\"Bash\"]");
	assert_int_equal(engine_codex_ops.floor_command(b, &cmd), -1);
	cJSON_Delete(b);
}

static void
test_quoting(void **state)
{
	char	out[64], small[6];

	(void)state;
	assert_int_equal(engine_codex_toml_string("a\"b\\c\nd", out, sizeof out), 0);
	assert_string_equal(out, "\"a\\\"b\\\\c\\u000ad\"");
	assert_int_equal(engine_codex_toml_string("abcdefgh", small, sizeof small), -1);
	assert_int_equal(engine_codex_sh_quote("/x/it's", out, sizeof out), 0);
	assert_string_equal(out, "'/x/it'\\''s'");
	assert_int_equal(engine_codex_sh_quote("abcdefgh", small, sizeof small), -1);
	engine_codex_command_text("/bin/bash -lc 'echo hi > a'", out, sizeof out);
	assert_string_equal(out, "echo hi > a");
	engine_codex_command_text("/bin/bash -lc ls", out, sizeof out);
	assert_string_equal(out, "ls");
	engine_codex_command_text("/bin/bash -lc 'it'\\''s'", out, sizeof out);
	assert_string_equal(out, "'it'\\''s'");
	engine_codex_command_text("python3 x.py", out, sizeof out);
	assert_string_equal(out, "python3 x.py");
}

struct prep {
	char		 dir[256], hook[300];
	struct strlist	 argv, env, files;
	struct engine_run r;
};

static void
prep_init(struct prep *p, const char *mode)
{
	FILE	*f;

	memset(p, 0, sizeof *p);
	snprintf(p->dir, sizeof p->dir, "%s/engine-codex-XXXXXX", CW_TEST_TMP_DIR);
	assert_non_null(mkdtemp(p->dir));
	snprintf(p->hook, sizeof p->hook, "%s/cw-floor-hook", p->dir);
	assert_non_null(f = fopen(p->hook, "w"));
	fclose(f);
	assert_int_equal(chmod(p->hook, 0755), 0);
	p->r.run_id = "r1";
	p->r.workdir = "/w";
	p->r.state_dir = p->dir;
	p->r.prompt = "-do it";
	p->r.mode = mode;
	p->r.hook_path = p->hook;
	p->r.token = "tok-secret-1";
	p->r.port = 4242;
	p->r.max_turns = 5;
	p->r.key = "sk-codex-unit";
	p->r.base_url = "http://127.0.0.1:9/v1";
	p->r.model = "gpt-test";
	p->r.sandboxed = 1;
}

static void
prep_free(struct prep *p)
{
	char	path[400];

	snprintf(path, sizeof path, "%s/%s", p->dir, ENGINE_CODEX_TOKEN_FILE);
	unlink(path);
	unlink(p->hook);
	rmdir(p->dir);
	strlist_free(&p->argv);
	strlist_free(&p->env);
	strlist_free(&p->files);
}

static int
argv_has(const struct strlist *l, const char *s)
{
	for (size_t i = 0; i < l->n; i++)
		if (strstr(l->v[i], s) != NULL)
			return 1;
	return 0;
}

static void
test_prepare(void **state)
{
	struct prep	p;
	struct stat	st;
	char		err[256], want[400];

	(void)state;
	prep_init(&p, "acceptEdits");
	assert_int_equal(engine_codex_ops.prepare(&p.r, &p.argv, &p.env, &p.files, err,
	    sizeof err), 0);
	assert_string_equal(p.argv.v[0], "codex");
	assert_string_equal(p.argv.v[1], "exec");
	assert_true(argv_has(&p.argv, "--json"));
	assert_true(argv_has(&p.argv, "--ignore-user-config"));
	assert_true(argv_has(&p.argv, "--strict-config"));
	assert_true(argv_has(&p.argv, "analytics.enabled=false"));
	assert_true(argv_has(&p.argv, "--dangerously-bypass-approvals-and-sandbox"));
	assert_true(argv_has(&p.argv, "unified_exec_tty"));
	assert_true(argv_has(&p.argv, "features.hooks=true"));
	assert_true(argv_has(&p.argv, ":pre_tool_use:0:0\"={enabled=true}"));
	/* The hook, wrapped in a /bin/sh guard that turns any failure into a block. */
	snprintf(want, sizeof want, "' '%s' --port 4242 --token-file '%s/%s'\", timeout_sec",
	    p.hook, p.dir, ENGINE_CODEX_TOKEN_FILE);
	assert_true(argv_has(&p.argv, want));
	assert_true(argv_has(&p.argv, "command=\"/bin/sh -c '\\\"$0\\\" \\\"$@\\\"; s=$?;"));
	assert_true(argv_has(&p.argv, "exit 2'"));
	assert_true(argv_has(&p.argv, "base_url=\"http://127.0.0.1:9/v1\""));
	assert_true(argv_has(&p.argv, "model=\"gpt-test\""));
	/* The prompt comes after "--", so a prompt starting with '-' is no option. */
	assert_string_equal(p.argv.v[p.argv.n - 2], "--");
	assert_string_equal(p.argv.v[p.argv.n - 1], "-do it");
	/* The key and the token are on no command line; the key is in the environment. */
	assert_false(argv_has(&p.argv, "sk-codex-unit"));
	assert_false(argv_has(&p.argv, "tok-secret-1"));
	assert_true(argv_has(&p.env, ENGINE_CODEX_KEY_ENV "=sk-codex-unit"));
	assert_true(argv_has(&p.argv, "env_key=\"" ENGINE_CODEX_KEY_ENV "\", wire_api"));
	/* The token file: 0400, named in files. */
	snprintf(want, sizeof want, "%s/%s", p.dir, ENGINE_CODEX_TOKEN_FILE);
	assert_int_equal(stat(want, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0400);
	assert_true(argv_has(&p.files, want));
	assert_true(argv_has(&p.files, p.hook));
	prep_free(&p);
}

static void
test_prepare_refusals(void **state)
{
	struct prep	p;
	char		err[256];

	(void)state;
	prep_init(&p, "plan");
	assert_int_equal(engine_codex_ops.prepare(&p.r, &p.argv, &p.env, &p.files, err,
	    sizeof err), -1);
	assert_non_null(strstr(err, "plan"));
	prep_free(&p);

	/* Without our sandbox, codex's own: read-only for a plan, approvals never. */
	prep_init(&p, "plan");
	p.r.sandboxed = 0;
	assert_int_equal(engine_codex_ops.prepare(&p.r, &p.argv, &p.env, &p.files, err,
	    sizeof err), 0);
	assert_true(argv_has(&p.argv, "read-only"));
	assert_false(argv_has(&p.argv, "--dangerously-bypass-approvals-and-sandbox"));
	assert_true(argv_has(&p.argv, "approval_policy=\"never\""));
	prep_free(&p);

	prep_init(&p, "acceptEdits");
	unlink(p.hook);
	assert_int_equal(engine_codex_ops.prepare(&p.r, &p.argv, &p.env, &p.files, err,
	    sizeof err), -1);
	assert_non_null(strstr(err, "hook"));
	assert_int_equal(p.argv.n, 0);
	prep_free(&p);

	/* No key: a provider with no env_key (codex would refuse a missing variable). */
	prep_init(&p, "acceptEdits");
	p.r.key = NULL;
	assert_int_equal(engine_codex_ops.prepare(&p.r, &p.argv, &p.env, &p.files, err,
	    sizeof err), 0);
	assert_false(argv_has(&p.argv, "env_key"));
	assert_int_equal(p.env.n, 0);
	prep_free(&p);

	prep_init(&p, "acceptEdits");
	p.r.prompt = "";
	assert_int_equal(engine_codex_ops.prepare(&p.r, &p.argv, &p.env, &p.files, err,
	    sizeof err), -1);
	prep_free(&p);
}

static void
test_home(void **state)
{
	struct strlist		env = { 0 }, notes = { 0 };
	struct engine_home	h = { "/tmp/x/engine-home", "/home/u", &env, &notes, NULL, -1 };
	char			err[128];

	(void)state;
	assert_int_equal(engine_codex_ops.home(&h, err, sizeof err), 0);
	assert_true(argv_has(&env, "CODEX_HOME=/tmp/x/engine-home"));
	assert_true(notes.n > 0);
	strlist_free(&env);
	strlist_free(&notes);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stream_run),
		cmocka_unit_test(test_stream_failed),
		cmocka_unit_test(test_stream_not_codex),
		cmocka_unit_test(test_floor_command),
		cmocka_unit_test(test_quoting),
		cmocka_unit_test(test_prepare),
		cmocka_unit_test(test_prepare_refusals),
		cmocka_unit_test(test_home),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
