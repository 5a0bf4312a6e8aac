/*
 * The OpenCode engine (runner/engine_opencode.c): prepare() writes the token and the
 * floor plugin read-only into the state directory and puts the whole configuration in
 * OPENCODE_CONFIG_CONTENT, the key only in the environment; it refuses a run without
 * a provider URL or model, without its hook, and in a worktree carrying OpenCode
 * configuration (from the worktree up to its git top). home() makes the four XDG
 * homes private. stream_line() turns OpenCode's JSON events (lines as the pinned CLI
 * prints them) into turns, dollars, the final message and transcript entries, and
 * floor_command() finds the bash command in the plugin's body.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sys/stat.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine_opencode.h"
#include "json.h"
#include "rmtree.h"
#include "transcript.h"

struct fixture {
	char	root[256], state[300], work[300], hook[300];
};

static void
write_text(const char *path, const char *text, mode_t mode)
{
	int	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static int
setup(void **state)
{
	struct fixture	*f = calloc(1, sizeof *f);

	snprintf(f->root, sizeof f->root, "%s/engine-opencode-XXXXXX", CW_TEST_TMP_DIR);
	assert_non_null(mkdtemp(f->root));
	snprintf(f->state, sizeof f->state, "%s/state", f->root);
	snprintf(f->work, sizeof f->work, "%s/work", f->root);
	snprintf(f->hook, sizeof f->hook, "%s/cw-floor-hook", f->root);
	assert_int_equal(mkdir(f->state, 0700), 0);
	assert_int_equal(mkdir(f->work, 0700), 0);
	/* The worktree's git top: the project-config walk stops here. */
	{
		char	git[400];

		snprintf(git, sizeof git, "%s/.git", f->work);
		write_text(git, "gitdir: elsewhere\n", 0600);
	}
	write_text(f->hook, "#!/bin/sh\nexit 0\n", 0700);
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fixture	*f = *state;

	(void)rmtree_path(f->root);
	free(f);
	return 0;
}

static struct engine_run
run_for(const struct fixture *f)
{
	struct engine_run	r;

	memset(&r, 0, sizeof r);
	r.run_id = "r1";
	r.workdir = f->work;
	r.state_dir = f->state;
	r.prompt = "-n looks like a flag";
	r.mode = "acceptEdits";
	r.hook_path = f->hook;
	r.token = "tok-123";
	r.port = 4242;
	r.max_turns = 5;
	r.key = "sk-secret-9";
	r.base_url = "http://127.0.0.1:9/v1";
	r.model = "gpt-test";
	return r;
}

static const char *
env_value(const struct strlist *env, const char *name)
{
	size_t	n = strlen(name);

	for (size_t i = 0; i < env->n; i++)
		if (strncmp(env->v[i], name, n) == 0 && env->v[i][n] == '=')
			return env->v[i] + n + 1;
	return NULL;
}

static void
test_prepare(void **state)
{
	struct fixture		*f = *state;
	struct engine_run	 r = run_for(f);
	struct strlist		 argv = { 0 }, env = { 0 }, files = { 0 };
	struct stat		 st;
	const char		*cfg;
	cJSON			*c, *p;
	char			 err[512];

	assert_int_equal(engine_opencode_ops.prepare(&r, &argv, &env, &files, err, sizeof err), 0);
	/* The prompt comes after "--": it cannot be read as an option. */
	assert_int_equal(argv.n, 8);
	assert_string_equal(argv.v[0], "opencode");
	assert_string_equal(argv.v[1], "run");
	assert_string_equal(argv.v[5], "build");
	assert_string_equal(argv.v[6], "--");
	assert_string_equal(argv.v[7], r.prompt);
	/*
	 * Token and plugin: in the state directory, read-only; granted to the engine with
	 * the directory itself (Bun reads it to import the plugin) and the hook.
	 */
	assert_int_equal(files.n, 4);
	assert_string_equal(files.v[2], f->state);
	assert_string_equal(files.v[3], f->hook);
	for (size_t i = 0; i < 2; i++) {
		assert_int_equal(strncmp(files.v[i], f->state, strlen(f->state)), 0);
		assert_int_equal(stat(files.v[i], &st), 0);
		assert_int_equal(st.st_mode & 0777, 0400);
	}
	assert_string_equal(env_value(&env, "OPENAI_API_KEY"), "sk-secret-9");
	assert_string_equal(env_value(&env, "OPENCODE_DISABLE_PROJECT_CONFIG"), "1");
	assert_non_null(cfg = env_value(&env, "OPENCODE_CONFIG_CONTENT"));
	/* The key is in no file and not in the configuration text. */
	assert_null(strstr(cfg, "sk-secret-9"));
	assert_non_null(c = json_parse(cfg, strlen(cfg)));
	assert_string_equal(json_get_string(c, "model"), "clockwork/gpt-test");
	p = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(c, "provider"),
	    "clockwork"), "options");
	assert_string_equal(json_get_string(p, "baseURL"), "http://127.0.0.1:9/v1");
	assert_string_equal(json_get_string(p, "apiKey"), "{env:OPENAI_API_KEY}");
	/* The shell is denied unless the floor plugin's config hook allows it. */
	p = cJSON_GetObjectItem(c, "permission");
	assert_string_equal(json_get_string(p, "bash"), "deny");
	p = cJSON_GetArrayItem(cJSON_GetObjectItem(c, "plugin"), 0);
	assert_true(cJSON_IsString(p) && strncmp(p->valuestring, "file:///", 8) == 0);
	assert_non_null(strstr(p->valuestring, ENGINE_OPENCODE_PLUGIN));
	cJSON_Delete(c);
	strlist_free(&argv);
	strlist_free(&env);
	strlist_free(&files);

	/* plan mode runs OpenCode's plan agent. */
	r.mode = "plan";
	{
		char	path[400];

		snprintf(path, sizeof path, "%s/%s", f->state, ENGINE_OPENCODE_TOKEN_FILE);
		unlink(path);
		snprintf(path, sizeof path, "%s/%s", f->state, ENGINE_OPENCODE_PLUGIN);
		unlink(path);
	}
	assert_int_equal(engine_opencode_ops.prepare(&r, &argv, &env, &files, err, sizeof err), 0);
	assert_string_equal(argv.v[5], "plan");
	strlist_free(&argv);
	strlist_free(&env);
	strlist_free(&files);
}

static void
expect_refused(struct engine_run *r, const char *want)
{
	struct strlist	argv = { 0 }, env = { 0 }, files = { 0 };
	char		err[512] = "";

	assert_int_equal(engine_opencode_ops.prepare(r, &argv, &env, &files, err, sizeof err), -1);
	if (strstr(err, want) == NULL)
		fail_msg("refusal '%s' does not mention '%s'", err, want);
	assert_int_equal(files.n, 0);
	strlist_free(&argv);
	strlist_free(&env);
	strlist_free(&files);
}

static void
test_prepare_refuses(void **state)
{
	struct fixture		*f = *state;
	struct engine_run	 r;
	char			 path[400], sub[400];

	r = run_for(f);
	r.base_url = NULL;
	expect_refused(&r, "engines.opencode.base_url");
	r = run_for(f);
	r.base_url = "file:///etc/passwd";
	expect_refused(&r, "engines.opencode.base_url");
	r = run_for(f);
	r.model = "";
	expect_refused(&r, "engines.opencode.model");
	r = run_for(f);
	snprintf(path, sizeof path, "%s/no-such-hook", f->root);
	r.hook_path = path;
	expect_refused(&r, "floor hook");
	r = run_for(f);
	r.mode = "bypassPermissions";
	expect_refused(&r, "permission mode");

	/* A worktree's own OpenCode configuration, of any kind, a link included. */
	r = run_for(f);
	snprintf(path, sizeof path, "%s/opencode.json", f->work);
	write_text(path, "{}", 0600);
	expect_refused(&r, "opencode.json");
	unlink(path);
	snprintf(path, sizeof path, "%s/opencode.jsonc", f->work);
	assert_int_equal(symlink("/nonexistent", path), 0);
	expect_refused(&r, "opencode.jsonc");
	unlink(path);
	snprintf(path, sizeof path, "%s/.opencode", f->work);
	assert_int_equal(mkdir(path, 0700), 0);
	expect_refused(&r, ".opencode");
	rmdir(path);
	/* ... and in a directory between the cwd and the git top. */
	snprintf(sub, sizeof sub, "%s/pkg", f->work);
	assert_int_equal(mkdir(sub, 0700), 0);
	assert_int_equal(mkdir(path, 0700), 0);
	r.workdir = sub;
	expect_refused(&r, "OpenCode configuration");
	rmdir(path);
	/* Above the git top is not the project's. */
	snprintf(path, sizeof path, "%s/.opencode", f->root);
	assert_int_equal(mkdir(path, 0700), 0);
	{
		char	err[512];

		assert_int_equal(engine_opencode_project_config(sub, err, sizeof err), 0);
	}
	rmdir(path);
	rmdir(sub);
}

static void
test_home(void **state)
{
	struct fixture		*f = *state;
	struct engine_home	 h;
	struct strlist		 env = { 0 }, notes = { 0 };
	struct stat		 st;
	char			 dir[400], want[450], err[256];
	const char		*vars[] = { "XDG_CONFIG_HOME", "XDG_DATA_HOME",
				    "XDG_CACHE_HOME", "XDG_STATE_HOME" };

	snprintf(dir, sizeof dir, "%s/engine-home", f->root);
	assert_int_equal(mkdir(dir, 0700), 0);
	memset(&h, 0, sizeof h);
	h.dir = dir;
	h.user_home = "/nonexistent-home";
	h.env = &env;
	h.notes = &notes;
	assert_int_equal(engine_opencode_ops.home(&h, err, sizeof err), 0);
	for (size_t i = 0; i < 4; i++) {
		const char	*v = env_value(&env, vars[i]);

		assert_non_null(v);
		assert_int_equal(strncmp(v, dir, strlen(dir)), 0);
		assert_int_equal(stat(v, &st), 0);
		assert_true(S_ISDIR(st.st_mode) && (st.st_mode & 0777) == 0700);
	}
	snprintf(want, sizeof want, "%s/config", dir);
	assert_string_equal(env_value(&env, "XDG_CONFIG_HOME"), want);
	assert_true(notes.n >= 1);
	/* Made new: a second call on the same home fails rather than reuse it. */
	assert_int_equal(engine_opencode_ops.home(&h, err, sizeof err), -1);
	strlist_free(&env);
	strlist_free(&notes);
}

struct said {
	cJSON	*all;
};

static void
say(void *arg, cJSON *entry)
{
	struct said	*s = arg;

	assert_int_equal(transcript_check(entry), 0);
	cJSON_AddItemToArray(s->all, entry);
}

static const cJSON *
said_kind(const struct said *s, const char *kind, int nth)
{
	const cJSON	*e;

	cJSON_ArrayForEach(e, s->all) {
		const char	*k = json_get_string(e, "k");

		if (k != NULL && strcmp(k, kind) == 0 && nth-- == 0)
			return e;
	}
	return NULL;
}

static int
feed(struct engine_stream *st, const char *line, struct engine_progress *pr,
    struct said *s)
{
	return engine_opencode_ops.stream_line(st, line, strlen(line), pr, say, s);
}

/* Lines as opencode-ai 1.18.33 prints them with --format json (trimmed of ids). */
static void
test_stream(void **state)
{
	struct engine_stream	*st = engine_opencode_ops.stream_new();
	struct engine_progress	 pr;
	struct said		 s = { cJSON_CreateArray() };
	const cJSON		*e;

	(void)state;
	memset(&pr, 0, sizeof pr);
	assert_int_equal(feed(st, "{\"type\":\"step_start\",\"sessionID\":\"ses_1\","
	    "\"part\":{\"type\":\"step-start\"}}", &pr, &s), 1);
	assert_int_equal(pr.turns, 1);
	assert_int_equal(feed(st, "{\"type\":\"tool_use\",\"part\":{\"type\":\"tool\","
	    "\"tool\":\"bash\",\"callID\":\"call_1\",\"state\":{\"status\":\"error\","
	    "\"input\":{\"command\":\"git push --force origin main\"},\"error\":"
	    "\"Clockwork floor: force-push refused\"}}}", &pr, &s), 0);
	assert_non_null(e = said_kind(&s, "tool", 0));
	assert_string_equal(json_get_string(e, "tool"), "bash");
	assert_string_equal(json_get_string(e, "command"), "git push --force origin main");
	assert_non_null(e = said_kind(&s, "result", 0));
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(e, "error")));
	assert_non_null(strstr(json_get_string(e, "text"), "Clockwork floor"));
	assert_int_equal(feed(st, "{\"type\":\"step_finish\",\"part\":{\"reason\":"
	    "\"tool-calls\",\"cost\":0.25}}", &pr, &s), 1);
	assert_false(pr.have_result);
	assert_true(pr.dollars > 0.24 && pr.dollars < 0.26);
	feed(st, "{\"type\":\"step_start\",\"part\":{}}", &pr, &s);
	feed(st, "{\"type\":\"tool_use\",\"part\":{\"tool\":\"write\",\"callID\":\"c2\","
	    "\"state\":{\"status\":\"completed\",\"input\":{\"filePath\":\"/w/a.txt\","
	    "\"content\":\"x\"},\"output\":\"Wrote file successfully.\"}}}", &pr, &s);
	assert_non_null(e = said_kind(&s, "tool", 1));
	assert_string_equal(json_get_string(e, "path"), "/w/a.txt");
	feed(st, "{\"type\":\"step_finish\",\"part\":{\"reason\":\"tool-calls\"}}", &pr, &s);
	feed(st, "{\"type\":\"step_start\",\"part\":{}}", &pr, &s);
	feed(st, "{\"type\":\"text\",\"part\":{\"type\":\"text\",\"text\":\"The plan:\"}}",
	    &pr, &s);
	feed(st, "{\"type\":\"text\",\"part\":{\"type\":\"text\",\"text\":\"1. do X\"}}",
	    &pr, &s);
	assert_int_equal(feed(st, "{\"type\":\"step_finish\",\"part\":{\"reason\":\"stop\","
	    "\"cost\":0}}", &pr, &s), 1);
	assert_int_equal(pr.turns, 3);
	assert_true(pr.have_result);
	assert_false(pr.is_error);
	assert_string_equal(pr.subtype, "success");
	assert_string_equal(pr.result, "The plan:\n1. do X");
	assert_non_null(e = said_kind(&s, "final", 0));
	assert_string_equal(json_get_string(e, "text"), "The plan:\n1. do X");
	assert_non_null(said_kind(&s, "usage", 2));
	assert_non_null(said_kind(&s, "text", 1));

	/* Not its format: kept in the raw log by the caller, never fatal. */
	assert_int_equal(feed(st, "not json", &pr, &s), -1);
	assert_int_equal(feed(st, "[1,2]", &pr, &s), -1);
	assert_int_equal(feed(st, "{\"no\":\"type\"}", &pr, &s), -1);
	/* An unknown event changes nothing. */
	assert_int_equal(feed(st, "{\"type\":\"reasoning\",\"part\":{\"text\":\"hm\"}}",
	    &pr, &s), 0);

	/* An error event ends the run as an error, with its message. */
	assert_int_equal(feed(st, "{\"type\":\"error\",\"error\":{\"name\":\"APIError\","
	    "\"data\":{\"message\":\"provider said no\"}}}", &pr, &s), 1);
	assert_true(pr.is_error);
	assert_string_equal(pr.result, "provider said no");
	assert_non_null(e = said_kind(&s, "final", 1));
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(e, "error")));

	engine_progress_free(&pr);
	engine_opencode_ops.stream_free(st);
	cJSON_Delete(s.all);
}

static void
expect_floor(const char *body, int rc, const char *command)
{
	cJSON		*b = json_parse(body, strlen(body));
	const char	*got = "unset";

	assert_int_equal(engine_opencode_ops.floor_command(b, &got), rc);
	if (command == NULL)
		assert_null(got);
	else
		assert_string_equal(got, command);
	cJSON_Delete(b);
}

static void
test_floor_command(void **state)
{
	(void)state;
	expect_floor("{\"tool\":\"bash\",\"sessionID\":\"s\",\"callID\":\"c\","
	    "\"args\":{\"command\":\"rm -rf /\",\"description\":\"d\"}}", 0, "rm -rf /");
	expect_floor("{\"tool\":\"read\",\"args\":{\"filePath\":\"/etc/passwd\"}}", 0, NULL);
	/* A bash call the floor cannot read is not one it allows. */
	expect_floor("{\"tool\":\"bash\",\"args\":{\"command\":42}}", -1, NULL);
	expect_floor("{\"tool\":\"bash\"}", -1, NULL);
	/* Claude's PreToolUse body is not this engine's. */
	expect_floor("{\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"ls\"}}", -1, NULL);
	expect_floor("[]", -1, NULL);
}

static void
test_plugin(void **state)
{
	struct fixture		*f = *state;
	struct engine_run	 r = run_for(f);
	char			*js;

	/* Paths with quotes and backslashes stay inside their string literals. */
	r.hook_path = "/odd\"path\\with/cw-floor-hook";
	assert_non_null(js = engine_opencode_plugin(&r, "/state/hook.token"));
	assert_non_null(strstr(js, "const HOOK = \"/odd\\\"path\\\\with/cw-floor-hook\";"));
	assert_non_null(strstr(js, "\"--port\", \"4242\", \"--token-file\", "
	    "\"/state/hook.token\""));
	assert_non_null(strstr(js, "\"tool.execute.before\""));
	assert_non_null(strstr(js, "config: async (cfg)"));
	assert_non_null(strstr(js, "const MAX_TURNS = 5;"));
	assert_null(strstr(js, "tok-123"));
	free(js);
	/*
	 * A budget that pauses (issue 23): no fixed limit, and the gate reads the one the
	 * runner keeps in the state directory, quoted as a literal too.
	 */
	r.max_turns = 0;
	r.state_dir = "/st\"ate";
	assert_non_null(js = engine_opencode_plugin(&r, "/state/hook.token"));
	assert_non_null(strstr(js, "const MAX_TURNS = 0;"));
	assert_non_null(strstr(js, "const TURNS_FILE = \"/st\\\"ate/" ENGINE_TURNS_FILE "\";"));
	assert_non_null(strstr(js, "await turnGate();"));
	free(js);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_prepare, setup, teardown),
		cmocka_unit_test_setup_teardown(test_prepare_refuses, setup, teardown),
		cmocka_unit_test_setup_teardown(test_home, setup, teardown),
		cmocka_unit_test(test_stream),
		cmocka_unit_test(test_floor_command),
		cmocka_unit_test_setup_teardown(test_plugin, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
