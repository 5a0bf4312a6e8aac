/*
 * A run's conversation, kept and resumed (issue 23): the id checks (common/
 * conversation.c), the engines' stream parsers taking an id only when it passes, the
 * resume argv, and the runner's copy out of a home the run wrote (runner/engine.c),
 * which must never follow a link or block on a FIFO.
 */
#include <sys/stat.h>

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

#include "conversation.h"
#include "engine.h"
#include "rmtree.h"

static void
test_ids(void **state)
{
	(void)state;
	assert_true(conversation_id_valid("claude", "0315fcf4-c9b0-4453-b4fe-ec75b5120ec0"));
	assert_true(conversation_id_valid("codex", "01a233b5-9ce8-7040-99d9-59eedf9aa51e"));
	assert_true(conversation_id_valid("opencode", "ses_dcc49e9a6ffeI2P2VP15NdZpdU"));
	assert_true(conversation_id_valid("byok", "0f0a5ca3b8afa191b704625159c03411"));
	/* What a run could print to get onto the next run's command line. */
	assert_false(conversation_id_valid("claude", "--dangerously-skip-permissions"));
	assert_false(conversation_id_valid("claude", "0315fcf4-c9b0-4453-b4fe-ec75b5120ec0 x"));
	assert_false(conversation_id_valid("claude", "0315fcf4-c9b0-4453-b4fe-ec75b5120ec"));
	assert_false(conversation_id_valid("claude", "0315fcf4c9b04453b4feec75b5120ec0aaaa"));
	assert_false(conversation_id_valid("codex", "../../../../etc/passwd"));
	assert_false(conversation_id_valid("opencode", "ses_short"));
	assert_false(conversation_id_valid("opencode", "ses_dcc49e9a6ffeI2P2VP15Nd/ZpdU"));
	assert_false(conversation_id_valid("opencode", "--session=ses_dcc49e9a6ffeI2P2VP"));
	assert_false(conversation_id_valid("byok", "0F0A5CA3B8AFA191B704625159C03411"));
	assert_false(conversation_id_valid("command", "0315fcf4-c9b0-4453-b4fe-ec75b5120ec0"));
	assert_false(conversation_id_valid("claude", ""));
	assert_false(conversation_id_valid("claude", NULL));
}

static void
test_dir(void **state)
{
	char	out[256];

	(void)state;
	assert_int_equal(conversation_dir("/h/.clockwork", 7, "20261201-a", out, sizeof out), 0);
	assert_string_equal(out, "/h/.clockwork/conversations/tasks/7/20261201-a");
	assert_int_equal(conversation_dir("/h", 7, "../8/x", out, sizeof out), -1);
	assert_int_equal(conversation_dir("/h", 7, "a/b", out, sizeof out), -1);
	assert_int_equal(conversation_dir("/h", 7, ".x", out, sizeof out), -1);
	assert_int_equal(conversation_dir("/h", 0, "x", out, sizeof out), -1);
}

static void
noop_say(void *arg, cJSON *e)
{
	(void)arg;
	cJSON_Delete(e);
}

/* One line through an engine's stream: the session it took, or "". */
static void
stream_session(const char *engine, const char *line, char *out, size_t outlen)
{
	const struct engine_ops	*ops = engine_find(engine);
	struct engine_progress	 p;
	struct engine_stream	*st;

	assert_non_null(ops);
	memset(&p, 0, sizeof p);
	assert_non_null(st = ops->stream_new());
	(void)ops->stream_line(st, line, strlen(line), &p, noop_say, NULL);
	snprintf(out, outlen, "%s", p.session);
	engine_progress_free(&p);
	ops->stream_free(st);
}

static void
test_stream_ids(void **state)
{
	char	s[128];

	(void)state;
	stream_session("claude", "{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":"
	    "\"0315fcf4-c9b0-4453-b4fe-ec75b5120ec0\"}", s, sizeof s);
	assert_string_equal(s, "0315fcf4-c9b0-4453-b4fe-ec75b5120ec0");
	stream_session("claude", "{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":"
	    "\"--settings=/tmp/evil.json\"}", s, sizeof s);
	assert_string_equal(s, "");
	stream_session("codex", "{\"type\":\"thread.started\",\"thread_id\":"
	    "\"01a233b5-9ce8-7040-99d9-59eedf9aa51e\"}", s, sizeof s);
	assert_string_equal(s, "01a233b5-9ce8-7040-99d9-59eedf9aa51e");
	stream_session("codex", "{\"type\":\"thread.started\",\"thread_id\":\"-c x=1\"}", s,
	    sizeof s);
	assert_string_equal(s, "");
	stream_session("opencode", "{\"type\":\"step_start\",\"sessionID\":"
	    "\"ses_dcc49e9a6ffeI2P2VP15NdZpdU\"}", s, sizeof s);
	assert_string_equal(s, "ses_dcc49e9a6ffeI2P2VP15NdZpdU");
	stream_session("opencode", "{\"type\":\"step_start\",\"sessionID\":\"ses_$(id)aaaaaaaaaaaaaaaaaaaa\"}",
	    s, sizeof s);
	assert_string_equal(s, "");
	/* byok's id is the runner's own, set once the agent reports a message. */
	stream_session("byok", "{\"type\":\"message\",\"n\":0,\"message\":{\"role\":\"user\","
	    "\"content\":\"hi\"}}", s, sizeof s);
	assert_true(conversation_id_valid("byok", s));
}

static void
test_copy_beneath(void **state)
{
	char	 dir[256], path[400], err[256];
	int	 fd, from, to;

	(void)state;
	snprintf(dir, sizeof dir, "%s/conversation-XXXXXX", CW_TEST_TMP_DIR);
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/home", dir);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof path, "%s/keep", dir);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof path, "%s/secret", dir);
	assert_true((fd = open(path, O_WRONLY | O_CREAT, 0600)) >= 0);
	assert_int_equal(write(fd, "SECRET", 6), 6);
	close(fd);
	snprintf(path, sizeof path, "%s/home", dir);
	assert_true((from = open(path, O_RDONLY | O_DIRECTORY)) >= 0);
	snprintf(path, sizeof path, "%s/keep", dir);
	assert_true((to = open(path, O_RDONLY | O_DIRECTORY)) >= 0);

	/* A plain file is copied, once. */
	assert_int_equal(engine_mkdirs_beneath(from, "projects/p"), 0);
	assert_true((fd = engine_open_beneath(from, "projects/p/s.jsonl", O_WRONLY |
	    O_CREAT | O_EXCL)) >= 0);
	assert_int_equal(write(fd, "{}\n", 3), 3);
	close(fd);
	assert_int_equal(engine_copy_beneath(from, "projects/p/s.jsonl", to, "s.jsonl", err,
	    sizeof err), 0);
	assert_int_equal(engine_copy_beneath(from, "projects/p/s.jsonl", to, "s.jsonl", err,
	    sizeof err), -1);
	assert_int_equal(errno, EEXIST);
	/* The transcript swapped for a link to a secret: refused, nothing written. */
	snprintf(path, sizeof path, "%s/secret", dir);
	assert_int_equal(symlinkat(path, from, "projects/p/l.jsonl"), 0);
	assert_int_equal(engine_copy_beneath(from, "projects/p/l.jsonl", to, "l.jsonl", err,
	    sizeof err), -1);
	assert_int_equal(errno, ELOOP);
	assert_int_equal(faccessat(to, "l.jsonl", F_OK, 0), -1);
	/* A directory on the way swapped for a link. */
	snprintf(path, sizeof path, "%s", dir);
	assert_int_equal(symlinkat(path, from, "projects/q"), 0);
	assert_int_equal(engine_copy_beneath(from, "projects/q/secret", to, "q", err,
	    sizeof err), -1);
	/* O_DIRECTORY | O_NOFOLLOW on a link: ENOTDIR (Linux), or ELOOP. */
	assert_true(errno == ENOTDIR || errno == ELOOP);
	assert_int_equal(faccessat(to, "q", F_OK, 0), -1);
	/* A FIFO: refused at once, not waited on. */
	assert_int_equal(mkfifoat(from, "projects/p/f.jsonl", 0600), 0);
	assert_int_equal(engine_copy_beneath(from, "projects/p/f.jsonl", to, "f.jsonl", err,
	    sizeof err), -1);
	assert_int_equal(errno, EINVAL);
	/* Names that climb out. */
	assert_int_equal(engine_open_beneath(from, "../secret", O_RDONLY), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(engine_open_beneath(from, "/etc/passwd", O_RDONLY), -1);
	assert_int_equal(errno, EINVAL);
	close(from);
	close(to);
	assert_int_equal(rmtree_path(dir), 0);
}

/* A state directory with a hook in it, as the runner gives prepare(). */
static void
claude_run(struct engine_run *r, char *dir, size_t dirlen, char *hook, size_t hooklen)
{
	FILE	*f;

	snprintf(dir, dirlen, "%s/conversation-argv-XXXXXX", CW_TEST_TMP_DIR);
	assert_non_null(mkdtemp(dir));
	snprintf(hook, hooklen, "%s/cw-floor-hook", dir);
	assert_non_null(f = fopen(hook, "w"));
	fclose(f);
	assert_int_equal(chmod(hook, 0755), 0);
	memset(r, 0, sizeof *r);
	r->run_id = "r1";
	r->workdir = "/w";
	r->state_dir = dir;
	r->prompt = "go on";
	r->mode = "acceptEdits";
	r->hook_path = hook;
	r->token = "tok";
	r->port = 4242;
	r->resume_fd = -1;
}

/* The resume id goes on argv only after it passes the check. */
static void
test_claude_resume_argv(void **state)
{
	struct strlist		 argv = { 0 }, env = { 0 }, files = { 0 };
	struct engine_run	 r;
	char			 dir[256], hook[300], err[256];
	size_t			 i;

	(void)state;
	claude_run(&r, dir, sizeof dir, hook, sizeof hook);
	r.resume_id = "0315fcf4-c9b0-4453-b4fe-ec75b5120ec0";
	assert_int_equal(engine_find("claude")->prepare(&r, &argv, &env, &files, err,
	    sizeof err), 0);
	for (i = 0; i < argv.n && strcmp(argv.v[i], "--resume") != 0; i++)
		continue;
	assert_true(i + 1 < argv.n);
	assert_string_equal(argv.v[i + 1], "0315fcf4-c9b0-4453-b4fe-ec75b5120ec0");
	strlist_free(&argv);
	strlist_free(&env);
	strlist_free(&files);
	assert_int_equal(rmtree_path(dir), 0);

	/* A hostile id is refused, not passed on. */
	claude_run(&r, dir, sizeof dir, hook, sizeof hook);
	r.resume_id = "--settings=/tmp/evil.json";
	assert_int_equal(engine_find("claude")->prepare(&r, &argv, &env, &files, err,
	    sizeof err), -1);
	assert_non_null(strstr(err, "is not a session id"));
	for (i = 0; i < argv.n; i++)
		assert_null(strstr(argv.v[i], "evil"));
	strlist_free(&argv);
	strlist_free(&env);
	strlist_free(&files);
	assert_int_equal(rmtree_path(dir), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ids),
		cmocka_unit_test(test_dir),
		cmocka_unit_test(test_stream_ids),
		cmocka_unit_test(test_copy_beneath),
		cmocka_unit_test(test_claude_resume_argv),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
