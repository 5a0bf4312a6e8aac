/*
 * The Hermes engine (runner/engine_hermes.c): home() points HERMES_HOME at the run's
 * private home; prepare() writes the token and the floor plugin read-only into the
 * state directory, config.yaml into the home (the key named, never written) with the
 * plugin linked there, the key only in the environment, and refuses a run without a
 * provider URL, a model or its hook. stream_line() turns the plugin's event lines into
 * turns, dollars (at the built-in price table), the final message and transcript
 * entries, and leaves other lines alone; floor_command() finds the terminal command.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sys/stat.h>

#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine_hermes.h"
#include "json.h"
#include "rmtree.h"
#include "transcript.h"

static char	*read_all(const char *path);

static char *
read_all(const char *path)
{
	static char	 buf[65536];
	int		 fd = open(path, O_RDONLY);
	ssize_t		 n;

	if (fd == -1)
		return NULL;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n < 0)
		return NULL;
	buf[n] = '\0';
	return buf;
}

static void
test_prepare_and_home(void **state)
{
	char			 root[] = "/tmp/cw-hermes-XXXXXX", st_dir[PATH_MAX];
	char			 work[PATH_MAX], hook[PATH_MAX], hdir[PATH_MAX], p[PATH_MAX + 64];
	char			 err[512], lnk[PATH_MAX];
	struct strlist		 argv = { 0 }, env = { 0 }, files = { 0 }, henv = { 0 };
	struct engine_run	 r;
	struct engine_home	 h;
	struct stat		 sb;
	const char		*text;
	ssize_t			 n;

	(void)state;
	assert_non_null(mkdtemp(root));
	snprintf(st_dir, sizeof st_dir, "%s/state", root);
	snprintf(work, sizeof work, "%s/work", root);
	snprintf(hdir, sizeof hdir, "%s/home", root);
	snprintf(hook, sizeof hook, "%s/hook", root);
	assert_int_equal(mkdir(st_dir, 0700), 0);
	assert_int_equal(mkdir(work, 0700), 0);
	assert_int_equal(mkdir(hdir, 0700), 0);
	snprintf(p, sizeof p, "printf '#!/bin/sh\\n' > '%s' && chmod 755 '%s'", hook, hook);
	assert_int_equal(system(p), 0);

	memset(&h, 0, sizeof h);
	h.dir = hdir;
	h.env = &henv;
	assert_int_equal(engine_hermes_ops.home(&h, err, sizeof err), 0);
	snprintf(p, sizeof p, "HERMES_HOME=%s", hdir);
	assert_true(strlist_contains(&henv, p));

	memset(&r, 0, sizeof r);
	r.run_id = "r1";
	r.workdir = work;
	r.state_dir = st_dir;
	r.prompt = "-starts with a dash";
	r.mode = "acceptEdits";
	r.hook_path = hook;
	r.token = "tok";
	r.port = 4242;
	r.key = "sk-secret-hermes";
	r.model = "cw-test";
	/* No provider URL: refused, naming the setting. */
	assert_int_equal(engine_hermes_ops.prepare(&r, &argv, &env, &files, err,
	    sizeof err), -1);
	assert_non_null(strstr(err, "engines.hermes.base_url"));
	r.base_url = "http://127.0.0.1:9/v1";
	assert_int_equal(engine_hermes_ops.prepare(&r, &argv, &env, &files, err,
	    sizeof err), 0);

	assert_string_equal(argv.v[0], "hermes");
	assert_string_equal(argv.v[1], "--oneshot=-starts with a dash");
	assert_string_equal(argv.v[2], "--toolsets");
	assert_string_equal(argv.v[3], ENGINE_HERMES_TOOLSETS);
	assert_true(strlist_contains(&env, "OPENAI_API_KEY=sk-secret-hermes"));
	assert_true(strlist_contains(&env, "TERMINAL_ENV=" ENGINE_HERMES_NO_FLOOR));
	snprintf(p, sizeof p, "TERMINAL_CWD=%s", work);
	assert_true(strlist_contains(&env, p));
	assert_true(strlist_contains(&files, st_dir));
	assert_true(strlist_contains(&files, hook));

	/* config.yaml: the provider and the plugin; the key named, not written. */
	snprintf(p, sizeof p, "%s/config.yaml", hdir);
	assert_non_null(text = read_all(p));
	assert_non_null(strstr(text, "base_url: \"http://127.0.0.1:9/v1\""));
	assert_non_null(strstr(text, "default: \"cw-test\""));
	assert_non_null(strstr(text, "api_key: \"${OPENAI_API_KEY}\""));
	assert_non_null(strstr(text, "enabled: [\"clockwork-floor\"]"));
	assert_null(strstr(text, "sk-secret"));
	/* The plugin: read-only in the state directory, linked from the home. */
	snprintf(p, sizeof p, "%s/hermes-plugin/clockwork-floor/__init__.py", st_dir);
	assert_int_equal(stat(p, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0400);
	assert_non_null(text = read_all(p));
	assert_non_null(strstr(text, "\"pre_tool_call\""));
	assert_non_null(strstr(text, "os.environ[\"TERMINAL_ENV\"] = \"local\""));
	snprintf(p, sizeof p, "%s/hermes-plugin/clockwork-floor/clockwork.json", st_dir);
	assert_non_null(text = read_all(p));
	assert_null(strstr(text, "sk-secret"));
	{
		cJSON	*c = json_parse(text, strlen(text));
		double	 port = 0;

		assert_non_null(c);
		assert_int_equal(json_get_number(c, "port", &port), 0);
		assert_true(port == 4242);
		assert_string_equal(json_get_string(c, "hook"), hook);
		cJSON_Delete(c);
	}
	snprintf(p, sizeof p, "%s/plugins/clockwork-floor", hdir);
	assert_true((n = readlink(p, lnk, sizeof lnk - 1)) > 0);
	lnk[n] = '\0';
	snprintf(p, sizeof p, "%s/hermes-plugin/clockwork-floor", st_dir);
	assert_string_equal(lnk, p);
	/* The token, nowhere but its file. */
	snprintf(p, sizeof p, "%s/hook.token", st_dir);
	assert_string_equal(read_all(p), "tok");

	strlist_free(&argv);
	strlist_free(&env);
	strlist_free(&files);
	strlist_free(&henv);
	snprintf(p, sizeof p, "chmod -R u+w '%s' && rm -rf '%s'", root, root);
	assert_int_equal(system(p), 0);
}

struct said {
	int	 tools, results, texts, finals, notes, errors;
	char	 last_command[128];
};

static void
say(void *arg, cJSON *entry)
{
	struct said	*s = arg;
	const char	*kind = json_get_string(entry, "k"), *c;

	assert_int_equal(transcript_check(entry), 0);
	if (kind != NULL && strcmp(kind, "tool") == 0) {
		s->tools++;
		if ((c = json_get_string(entry, "command")) != NULL)
			snprintf(s->last_command, sizeof s->last_command, "%s", c);
	} else if (kind != NULL && strcmp(kind, "result") == 0) {
		s->results++;
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(entry, "error")))
			s->errors++;
	} else if (kind != NULL && strcmp(kind, "text") == 0)
		s->texts++;
	else if (kind != NULL && strcmp(kind, "final") == 0)
		s->finals++;
	else if (kind != NULL && strcmp(kind, "note") == 0)
		s->notes++;
	cJSON_Delete(entry);
}

#define LINE(st, pr, s, l) \
	engine_hermes_ops.stream_line((st), (l), strlen(l), (pr), say, (s))

static void
test_stream(void **state)
{
	struct engine_stream	*st;
	struct engine_progress	 pr;
	struct said		 s;

	(void)state;
	memset(&pr, 0, sizeof pr);
	memset(&s, 0, sizeof s);
	assert_non_null(st = engine_hermes_ops.stream_new());
	engine_hermes_ops.stream_prices(st, NULL);
	assert_int_equal(LINE(st, &pr, &s, "{\"cw_hermes\": 1, \"type\": \"hello\"}"), 0);
	assert_int_equal(LINE(st, &pr, &s, "{\"cw_hermes\": 1, \"type\": \"api\", "
	    "\"model\": \"gpt-4o\", \"finish\": \"tool_calls\", \"usage\": {\"input_tokens\": "
	    "100, \"output_tokens\": 20}, \"text\": null, \"tool_calls\": 1}"), 1);
	assert_int_equal(pr.turns, 1);
	assert_true(pr.more);
	assert_true(fabs(pr.dollars - 0.00045) < 1e-12);	/* 2.5 and 10 $/Mtok */
	assert_int_equal(LINE(st, &pr, &s, "{\"cw_hermes\": 1, \"type\": \"tool\", "
	    "\"name\": \"terminal\", \"id\": \"c1\", \"args\": {\"command\": \"git push "
	    "--force origin main\"}}"), 0);
	assert_string_equal(s.last_command, "git push --force origin main");
	assert_int_equal(LINE(st, &pr, &s, "{\"cw_hermes\": 1, \"type\": \"result\", "
	    "\"id\": \"c1\", \"status\": \"blocked\", \"result\": \"refused\"}"), 0);
	assert_int_equal(s.errors, 1);
	/* Negative and absurd counts add nothing; a model with no price is named. */
	assert_int_equal(LINE(st, &pr, &s, "{\"cw_hermes\": 1, \"type\": \"api\", "
	    "\"model\": \"gpt-4o\", \"usage\": {\"input_tokens\": -1e9, \"output_tokens\": "
	    "1e300}}"), 1);
	assert_true(fabs(pr.dollars - 0.00045) < 1e-12);
	assert_int_equal(LINE(st, &pr, &s, "{\"cw_hermes\": 1, \"type\": \"api\", "
	    "\"model\": \"cw-unpriced\", \"finish\": \"stop\", \"usage\": {\"input_tokens\": "
	    "10}, \"text\": \"all done\", \"tool_calls\": 0}"), 1);
	assert_string_equal(pr.unpriced, "cw-unpriced");
	assert_false(pr.more);
	assert_int_equal(pr.turns, 3);
	/* Hermes' own final text, and lines that are not the plugin's: not the format. */
	assert_int_equal(LINE(st, &pr, &s, "all done"), -1);
	assert_int_equal(LINE(st, &pr, &s, "{\"type\": \"end\", \"completed\": true}"), -1);
	assert_int_equal(LINE(st, &pr, &s, "{\"cw_hermes\": 2, \"type\": \"end\"}"), -1);
	assert_false(pr.have_result);
	assert_int_equal(LINE(st, &pr, &s, "{\"cw_hermes\": 1, \"type\": \"end\", "
	    "\"completed\": true}"), 1);
	assert_true(pr.have_result);
	assert_false(pr.is_error);
	assert_string_equal(pr.result, "all done");
	assert_int_equal(s.tools, 1);
	assert_int_equal(s.finals, 1);
	assert_int_equal(s.texts, 1);
	engine_progress_free(&pr);
	engine_hermes_ops.stream_free(st);
}

static void
test_floor_command(void **state)
{
	const char	*cmd;
	cJSON		*b;

	(void)state;
	b = json_parse("{\"tool\":\"terminal\",\"args\":{\"command\":\"ls\"}}", 45);
	assert_int_equal(engine_hermes_ops.floor_command(b, &cmd), 0);
	assert_string_equal(cmd, "ls");
	cJSON_Delete(b);
	b = json_parse("{\"tool\":\"read_file\",\"args\":{\"path\":\"x\"}}", 42);
	assert_int_equal(engine_hermes_ops.floor_command(b, &cmd), 0);
	assert_null(cmd);
	cJSON_Delete(b);
	/* A terminal call the floor cannot read is refused. */
	b = json_parse("{\"tool\":\"terminal\",\"args\":{\"command\":7}}", 41);
	assert_int_equal(engine_hermes_ops.floor_command(b, &cmd), -1);
	cJSON_Delete(b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prepare_and_home),
		cmocka_unit_test(test_stream),
		cmocka_unit_test(test_floor_command),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
