/*
 * The daemon's front-door pieces that need no running daemon: the token file (made
 * 0600, refused when others can read it, refused when it is not a token), the
 * constant-time comparison, task validation (no bypass mode, every field checked,
 * unknown keys refused, PATCH semantics), and the service files cwctl writes matching
 * the ones in packaging/.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "config.h"
#include "daemon.h"
#include "httpd.h"
#include "json.h"
#include "store.h"
#include "tasks.h"
#include "token.h"

static char	tmp[256];

static int
setup(void **state)
{
	snprintf(tmp, sizeof tmp, "/tmp/cw-api.XXXXXX");
	assert_non_null(mkdtemp(tmp));
	return 0;
}

static int
teardown(void **state)
{
	char	cmd[300];

	snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
	assert_int_equal(system(cmd), 0);
	return 0;
}

static void
test_token_file(void **state)
{
	char		tok[DAEMON_TOKEN_BYTES * 2 + 1], again[sizeof tok], err[512];
	char		path[300];
	struct stat	st;
	FILE		*f;

	snprintf(path, sizeof path, "%s/api.token", tmp);
	unlink(path);
	assert_int_equal(token_load_or_create(tmp, tok, sizeof tok, err, sizeof err), 0);
	assert_int_equal(strlen(tok), 64);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(token_load_or_create(tmp, again, sizeof again, err, sizeof err), 0);
	assert_string_equal(tok, again);

	/* Readable by group or others: refused, naming the file, mode left alone. */
	chmod(path, 0640);
	assert_int_equal(token_load_or_create(tmp, again, sizeof again, err, sizeof err), -1);
	assert_non_null(strstr(err, path));
	assert_non_null(strstr(err, "group or others"));
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0640);
	chmod(path, 0604);
	assert_int_equal(token_load_or_create(tmp, again, sizeof again, err, sizeof err), -1);

	/* Not a token. */
	chmod(path, 0600);
	assert_non_null(f = fopen(path, "w"));
	fputs("hunter2\n", f);
	fclose(f);
	assert_int_equal(token_load_or_create(tmp, again, sizeof again, err, sizeof err), -1);
	assert_non_null(strstr(err, "does not hold a token"));

	/* A symlink is not followed. */
	unlink(path);
	assert_int_equal(symlink("/etc/hostname", path), 0);
	assert_int_equal(token_load_or_create(tmp, again, sizeof again, err, sizeof err), -1);
	unlink(path);

	/* Two starts make two different tokens. */
	assert_int_equal(token_load_or_create(tmp, tok, sizeof tok, err, sizeof err), 0);
	unlink(path);
	assert_int_equal(token_load_or_create(tmp, again, sizeof again, err, sizeof err), 0);
	assert_string_not_equal(tok, again);
}

static void
test_token_equal(void **state)
{
	assert_true(httpd_equal("abcdef", "abcdef"));
	assert_false(httpd_equal("abcdef", "abcdeg"));
	assert_false(httpd_equal("abcde", "abcdef"));
	assert_false(httpd_equal("abcdefg", "abcdef"));
	assert_false(httpd_equal("", "abcdef"));
	assert_false(httpd_equal("", ""));
}

/* Validate text; returns 0 or -1 and copies the field named. */
static int
validate(const char *text, const struct store_task *base, struct store_task *out,
    char *field)
{
	char	 err[512];
	cJSON	*j = json_parse(text, strlen(text));
	int	 rc;

	assert_non_null(j);
	rc = tasks_from_json(NULL, j, base, out, field, 64, err, sizeof err);
	if (rc == -1)
		assert_true(strlen(err) > 0);
	cJSON_Delete(j);
	return rc;
}

/* An executable (mode 0755) or plain (0644) file at tmp/REL. */
static void
put_file(const char *rel, mode_t mode)
{
	char	path[512];
	FILE	*f;

	snprintf(path, sizeof path, "%s/%s", tmp, rel);
	assert_non_null(f = fopen(path, "w"));
	fputs("#!/bin/sh\n", f);
	fclose(f);
	assert_int_equal(chmod(path, mode), 0);
}

static void
test_task_validation(void **state)
{
	static const struct {
		const char	*json, *field;
	} bad[] = {
		{ "{\"name\":\"t\",\"prompt\":\"x\",\"permission_mode\":\"bypassPermissions\"}", "permission_mode" },
		{ "{\"name\":\"t\",\"prompt\":\"x\",\"permission_mode\":\"dontAsk\"}", "permission_mode" },
		{ "{\"name\":\"t\",\"prompt\":\"x\",\"permission_mode\":null}", "permission_mode" },
		{ "{\"name\":\"t\",\"prompt\":\"x\",\"dangerously_skip_permissions\":true}", "dangerously_skip_permissions" },
		{ "{\"prompt\":\"x\"}", "name" },
		{ "{\"name\":\"\",\"prompt\":\"x\"}", "name" },
		{ "{\"name\":\"a/b\",\"prompt\":\"x\"}", "name" },
		{ "{\"name\":\"-x\",\"prompt\":\"x\"}", "name" },
		{ "{\"name\":\"x.lock\",\"prompt\":\"x\"}", "name" },
		{ "{\"name\":\"a..b\",\"prompt\":\"x\"}", "name" },
		{ "{\"name\":7,\"prompt\":\"x\"}", "name" },
		{ "{\"name\":\"t\"}", "prompt" },
		{ "{\"name\":\"t\",\"prompt\":[]}", "prompt" },
		{ "{\"name\":\"t\",\"prompt\":\"x\",\"engine\":\"bash\"}", "engine" },
		{ "{\"name\":\"t\",\"prompt\":\"x\",\"budget_dollars\":-0.01}", "budget_dollars" },
		{ "{\"name\":\"t\",\"prompt\":\"x\",\"budget_turns\":0}", "budget_turns" },
		{ "{\"name\":\"t\",\"prompt\":\"x\",\"budget_seconds\":1e9}", "budget_seconds" },
		{ "{\"name\":\"t\",\"prompt\":\"x\",\"schedule\":\"* * *\"}", "schedule" },
		{ "{\"name\":\"t\",\"prompt\":\"x\",\"repo\":\"/nonexistent/repo\"}", "repo" },
		{ "{\"name\":\"t\",\"prompt\":\"x\",\"repo\":\"rel/path\"}", "repo" },
		{ "{\"name\":\"t\",\"prompt\":\"x\",\"enabled\":1}", "enabled" },
		{ "{\"name\":\"t\",\"prompt\":\"x\",\"delivery\":7}", "delivery" },
		{ "{\"name\":\"t\",\"prompt\":\"x\",\"delivery\":{\"email\":{}}}", "delivery" },
		{ "{\"name\":\"t\",\"prompt\":\"x\",\"delivery\":{\"telegram\":{}}}", "delivery.telegram.chat_id" },
		{ "{\"name\":\"t\",\"prompt\":\"x\",\"delivery\":{\"telegram\":{\"chat_id\":0}}}", "delivery.telegram.chat_id" },
		{ "{\"name\":\"t\",\"prompt\":\"x\",\"delivery\":{\"telegram\":{\"chat_id\":\"111\"}}}", "delivery.telegram.chat_id" },
		{ "{\"name\":\"t\",\"prompt\":\"x\",\"delivery\":{\"telegram\":{\"chat_id\":1.5}}}", "delivery.telegram.chat_id" },
		{ "{\"name\":\"t\",\"prompt\":\"x\",\"delivery\":{\"telegram\":{\"chat_id\":1,\"bot_token\":\"x\"}}}", "delivery.telegram" },
		{ "{\"name\":\"t\",\"prompt\":\"x\",\"delivery\":{\"telegram\":{\"chat_id\":-100}}}", "delivery.telegram.allowed_user_ids" },
		{ "{\"name\":\"t\",\"prompt\":\"x\",\"delivery\":{\"telegram\":{\"chat_id\":-100,\"allowed_user_ids\":[]}}}", "delivery.telegram.allowed_user_ids" },
		{ "{\"name\":\"t\",\"prompt\":\"x\",\"delivery\":{\"telegram\":{\"chat_id\":-100,\"allowed_user_ids\":[-5]}}}", "delivery.telegram.allowed_user_ids" },
		{ "{\"name\":\"t\",\"prompt\":\"x\",\"delivery\":{\"telegram\":{\"chat_id\":5,\"allowed_user_ids\":\"7\"}}}", "delivery.telegram.allowed_user_ids" },
	};
	struct store_task	t;
	char			field[64], path[300];
	char			*saved = getenv("PATH") != NULL ? strdup(getenv("PATH")) :
				    NULL;

	/* The engine defaults to a claude on PATH: each row fails on its own field. */
	snprintf(path, sizeof path, "%s/v", tmp);
	assert_int_equal(mkdir(path, 0755), 0);
	put_file("v/claude", 0755);
	setenv("PATH", path, 1);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		field[0] = '\0';
		assert_int_equal(validate(bad[i].json, NULL, &t, field), -1);
		if (strcmp(field, bad[i].field) != 0)
			fail_msg("%s: field '%s', want '%s'", bad[i].json, field, bad[i].field);
		assert_null(t.name);
	}
	if (saved != NULL)
		setenv("PATH", saved, 1);
	free(saved);
}

static void
test_task_defaults_and_patch(void **state)
{
	struct store_task	t, p;
	char			field[64];

	assert_int_equal(validate("{\"name\":\"nightly.build_1\",\"prompt\":\"make\","
	    "\"engine\":\"command\"}", NULL, &t, field), 0);
	assert_string_equal(t.name, "nightly.build_1");
	assert_string_equal(t.engine, "command");
	assert_string_equal(t.permission_mode, "plan");	/* a command has no mode */
	assert_string_equal(t.schedule, "queued");
	assert_null(t.repo);
	assert_true(t.enabled);
	assert_true(t.budget_dollars == CONFIG_DEFAULT_DOLLARS);
	assert_int_equal(t.budget_turns, CONFIG_DEFAULT_TURNS);
	assert_int_equal(t.budget_seconds, CONFIG_DEFAULT_SECONDS);

	/* A patch changes what it names and keeps the rest; a rename is refused. */
	assert_int_equal(validate("{\"enabled\":false,\"permission_mode\":\"acceptEdits\","
	    "\"schedule\":\"@daily\"}", &t, &p, field), 0);
	assert_false(p.enabled);
	assert_string_equal(p.permission_mode, "acceptEdits");
	assert_string_equal(p.schedule, "@daily");
	assert_string_equal(p.prompt, "make");
	assert_string_equal(p.name, "nightly.build_1");
	store_task_free(&p);
	assert_int_equal(validate("{\"name\":\"other\"}", &t, &p, field), -1);
	assert_string_equal(field, "name");
	assert_int_equal(validate("{\"permission_mode\":\"bypassPermissions\"}", &t, &p,
	    field), -1);
	assert_string_equal(field, "permission_mode");

	/* Telegram delivery: set, kept by an unrelated patch, ended with null. */
	assert_int_equal(validate("{\"delivery\":{\"telegram\":{\"chat_id\":"
	    "-1001234567890,\"allowed_user_ids\":[7001,7002]}}}", &t, &p, field), 0);
	assert_true(p.telegram_chat_id == -1001234567890LL);
	assert_string_equal(p.telegram_allowed_user_ids, "[7001,7002]");
	store_task_free(&t);
	assert_int_equal(validate("{\"enabled\":true}", &p, &t, field), 0);
	assert_true(t.telegram_chat_id == -1001234567890LL);
	assert_string_equal(t.telegram_allowed_user_ids, "[7001,7002]");
	store_task_free(&p);
	assert_int_equal(validate("{\"delivery\":null}", &t, &p, field), 0);
	assert_true(p.telegram_chat_id == 0);
	assert_null(p.telegram_allowed_user_ids);
	store_task_free(&p);
	store_task_free(&t);
}

static void
test_service_files(void **state)
{
	static const struct {
		const char	*flag, *file;
	} files[] = {
		{ "--systemd", "packaging/clockworkd.service" },
		{ "--launchd", "packaging/dev.clockwork.clockworkd.plist" },
	};
	char	 cmd[1024], got[8192], want[8192];
	FILE	*p, *f;
	size_t	 n, m;

	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		/* The files are rendered with no CLOCKWORK_HOME and PATH=/usr/bin:/bin. */
		snprintf(cmd, sizeof cmd, "env -u CLOCKWORK_HOME PATH=/usr/bin:/bin "
		    "%s/cwctl service install --print %s | sed 's|%s|/usr/local/bin|g'",
		    CW_BIN_DIR, files[i].flag, CW_BIN_DIR);
		assert_non_null(p = popen(cmd, "r"));
		n = fread(got, 1, sizeof got - 1, p);
		got[n] = '\0';
		assert_int_equal(pclose(p), 0);
		snprintf(cmd, sizeof cmd, "%s/%s", CW_SRC_DIR, files[i].file);
		assert_non_null(f = fopen(cmd, "r"));
		m = fread(want, 1, sizeof want - 1, f);
		want[m] = '\0';
		fclose(f);
		assert_string_equal(got, want);
	}
	assert_non_null(strstr(want, "--foreground"));
}

/*
 * Agent-first defaults (issue 23): a task that names no engine gets the first agent
 * CLI on PATH in the table's order (claude, codex, opencode, hermes), whatever PATH's order;
 * a program that cannot run, a directory, an empty or relative PATH entry is not
 * one; a named key means byok; nothing found is an error naming the engine field and
 * what to do. An agent's default mode is acceptEdits, the editing one.
 */
static void
test_task_default_engine(void **state)
{
	struct store_task	 t;
	char			 field[64], path[1024], eng[32], key[64], why[1024];
	const char		*old = getenv("PATH");
	char			*saved = old != NULL ? strdup(old) : NULL;

	(void)state;
	snprintf(path, sizeof path, "%s/a", tmp);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof path, "%s/b", tmp);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof path, "%s/b/claude", tmp);
	assert_int_equal(mkdir(path, 0755), 0);		/* a directory named claude */
	put_file("a/claude", 0644);			/* not executable */
	put_file("a/opencode", 0755);

	snprintf(path, sizeof path, "%s/empty", tmp);
	assert_int_equal(mkdir(path, 0755), 0);
	setenv("PATH", path, 1);
	assert_int_equal(validate("{\"name\":\"t\",\"prompt\":\"Fix it\"}", NULL, &t,
	    field), -1);
	assert_string_equal(field, "engine");
	assert_int_equal(tasks_default_engine(NULL, NULL, eng, sizeof eng, key,
	    sizeof key, why, sizeof why), -1);
	assert_non_null(strstr(why, "none of claude, codex, opencode, hermes is on the daemon's "
	    "PATH"));
	assert_non_null(strstr(why, "--command LINE"));

	/* Only opencode can run; "" and "." entries are not searched. */
	put_file("claude", 0755);	/* in tmp itself, reachable only as "." */
	assert_int_equal(chdir(tmp), 0);
	snprintf(path, sizeof path, ":.:%s/b:%s/a", tmp, tmp);
	setenv("PATH", path, 1);
	assert_int_equal(validate("{\"name\":\"t\",\"prompt\":\"Fix it\"}", NULL, &t,
	    field), 0);
	assert_string_equal(t.engine, "opencode");
	assert_string_equal(t.permission_mode, "acceptEdits");
	store_task_free(&t);

	/* claude later in PATH still comes first; an explicit mode stands. */
	put_file("b/codex", 0755);
	snprintf(path, sizeof path, "%s/c", tmp);
	assert_int_equal(mkdir(path, 0755), 0);
	put_file("c/claude", 0755);
	snprintf(path, sizeof path, "%s/a:%s/b:%s/c", tmp, tmp, tmp);
	setenv("PATH", path, 1);
	assert_int_equal(validate("{\"name\":\"t\",\"prompt\":\"Fix it\","
	    "\"permission_mode\":\"plan\"}", NULL, &t, field), 0);
	assert_string_equal(t.engine, "claude");
	assert_string_equal(t.permission_mode, "plan");
	store_task_free(&t);
	assert_int_equal(tasks_default_engine(NULL, NULL, eng, sizeof eng, key,
	    sizeof key, why, sizeof why), 0);
	assert_string_equal(eng, "claude");
	snprintf(path, sizeof path, "found %s/c/claude on the daemon's PATH", tmp);
	assert_non_null(strstr(why, path));

	/* A key named means byok, whatever is installed. */
	assert_int_equal(tasks_default_engine(NULL, "work", eng, sizeof eng, key,
	    sizeof key, why, sizeof why), 0);
	assert_string_equal(eng, "byok");
	assert_string_equal(key, "");

	/* Explicit engines are kept: an old script's --engine command still works. */
	assert_int_equal(validate("{\"name\":\"t\",\"prompt\":\"make\","
	    "\"engine\":\"command\"}", NULL, &t, field), 0);
	assert_string_equal(t.engine, "command");
	store_task_free(&t);
	if (saved != NULL)
		setenv("PATH", saved, 1);
	free(saved);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_token_file),
		cmocka_unit_test(test_token_equal),
		cmocka_unit_test(test_task_validation),
		cmocka_unit_test(test_task_defaults_and_patch),
		cmocka_unit_test(test_task_default_engine),
		cmocka_unit_test(test_service_files),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
