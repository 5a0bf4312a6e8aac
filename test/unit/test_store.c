/*
 * The store: schema creation and migration from every earlier version, refusals that
 * leave the file unchanged, append-only journal and audit log enforced by the
 * database, the approval compare-and-set, and two handles on one file.
 */
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sqlite3.h>

#include "store.h"

struct fixture {
	char	dir[64];
	char	path[128];
};

static int
setup(void **state)
{
	struct fixture	*fx;

	if ((fx = calloc(1, sizeof *fx)) == NULL)
		return -1;
	snprintf(fx->dir, sizeof fx->dir, "/tmp/cw-test-store.XXXXXX");
	if (mkdtemp(fx->dir) == NULL) {
		free(fx);
		return -1;
	}
	snprintf(fx->path, sizeof fx->path, "%s/clockwork.db", fx->dir);
	*state = fx;
	return 0;
}

static int
teardown(void **state)
{
	struct fixture	*fx = *state;
	struct dirent	*de;
	DIR		*d;
	char		 p[384];

	/* Everything a test left, also when it failed half-way. */
	if ((d = opendir(fx->dir)) != NULL) {
		while ((de = readdir(d)) != NULL) {
			if (de->d_name[0] == '.')
				continue;
			snprintf(p, sizeof p, "%s/%s", fx->dir, de->d_name);
			unlink(p);
		}
		closedir(d);
	}
	rmdir(fx->dir);
	free(fx);
	return 0;
}

static struct store *
open_ok(const char *path)
{
	struct store	*st = NULL;
	char		 err[512] = "";

	if (store_open(path, &st, err, sizeof err) != 0)
		fail_msg("store_open %s: %s", path, err);
	return st;
}

/* Run one SQL statement that yields a single integer. */
static int64_t
sql_int(struct store *st, const char *sql)
{
	sqlite3_stmt	*stmt;
	int64_t		 v;

	if (sqlite3_prepare_v2(store_db(st), sql, -1, &stmt, NULL) != SQLITE_OK)
		fail_msg("%s: %s", sql, sqlite3_errmsg(store_db(st)));
	assert_int_equal(sqlite3_step(stmt), SQLITE_ROW);
	v = sqlite3_column_int64(stmt, 0);
	sqlite3_finalize(stmt);
	return v;
}

static void
sql_text(struct store *st, const char *sql, char *out, size_t len)
{
	sqlite3_stmt	*stmt;

	if (sqlite3_prepare_v2(store_db(st), sql, -1, &stmt, NULL) != SQLITE_OK)
		fail_msg("%s: %s", sql, sqlite3_errmsg(store_db(st)));
	assert_int_equal(sqlite3_step(stmt), SQLITE_ROW);
	snprintf(out, len, "%s", (const char *)sqlite3_column_text(stmt, 0));
	sqlite3_finalize(stmt);
}

static int
table_exists(struct store *st, const char *name)
{
	sqlite3_stmt	*stmt;
	int		 rc;

	assert_int_equal(sqlite3_prepare_v2(store_db(st), "SELECT 1 FROM sqlite_master"
	    " WHERE type = 'table' AND name = ?1", -1, &stmt, NULL), SQLITE_OK);
	sqlite3_bind_text(stmt, 1, name, -1, SQLITE_STATIC);
	rc = sqlite3_step(stmt);
	sqlite3_finalize(stmt);
	return rc == SQLITE_ROW;
}

static int64_t
add_task(struct store *st, const char *name)
{
	struct store_task	t = { 0 };
	int64_t			id = 0;

	t.name = (char *)name;
	t.repo = "/srv/repo";
	t.prompt = "fix the tests";
	t.engine = "claude";
	t.permission_mode = "acceptEdits";
	t.budget_dollars = 2.0;
	t.budget_turns = 50;
	t.budget_seconds = 3600;
	t.schedule = "queued";
	t.enabled = 1;
	if (store_task_add(st, &t, &id) != 0)
		fail_msg("task add: %s", store_errmsg(st));
	assert_true(id > 0);
	return id;
}

/* A task in a store at an older version, whose tasks table lacks later columns. */
static int64_t
add_task_old(struct store *st, const char *name)
{
	char	 sql[256];

	snprintf(sql, sizeof sql, "INSERT INTO tasks (name, repo, prompt, engine,"
	    " permission_mode, created_at, updated_at) VALUES ('%s', '/srv/repo',"
	    " 'fix the tests', 'claude', 'acceptEdits', 'now', 'now')", name);
	assert_int_equal(sqlite3_exec(store_db(st), sql, NULL, NULL, NULL), SQLITE_OK);
	return sqlite3_last_insert_rowid(store_db(st));
}

/* Read a whole file; *len gets its size. */
static char *
slurp(const char *path, size_t *len)
{
	FILE	*f;
	char	*buf;
	long	 n;

	if ((f = fopen(path, "rb")) == NULL)
		fail_msg("%s: %s", path, strerror(errno));
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	if ((buf = malloc(n > 0 ? (size_t)n : 1)) == NULL)
		fail_msg("out of memory");
	if (n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n)
		fail_msg("%s: short read", path);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static void
test_open_creates_schema(void **state)
{
	struct fixture	*fx = *state;
	struct store	*st;
	struct stat	 sb;
	char		 mode[32];

	assert_int_equal(access(fx->path, F_OK), -1);
	st = open_ok(fx->path);
	assert_int_equal(store_schema_version(st), STORE_SCHEMA_LATEST);
	assert_int_equal(sql_int(st, "SELECT count(*) FROM schema_migrations"),
	    (int)store_n_migrations);
	assert_int_equal(sql_int(st, "SELECT min(version) FROM schema_migrations"), 1);
	sql_text(st, "PRAGMA journal_mode", mode, sizeof mode);
	assert_string_equal(mode, "wal");
	assert_int_equal(sql_int(st, "PRAGMA foreign_keys"), 1);
	assert_int_equal(sql_int(st, "PRAGMA busy_timeout"), 5000);
	assert_true(table_exists(st, "tasks"));
	assert_true(table_exists(st, "runs"));
	assert_true(table_exists(st, "run_events"));
	assert_true(table_exists(st, "approvals"));
	assert_true(table_exists(st, "journal"));
	assert_true(table_exists(st, "audit"));

	assert_int_equal(stat(fx->path, &sb), 0);
	assert_int_equal(sb.st_mode & 07777, 0600);
	store_close(st);

	/* Reopening an up-to-date store applies nothing. */
	st = open_ok(fx->path);
	assert_int_equal(sql_int(st, "SELECT count(*) FROM schema_migrations"),
	    (int)store_n_migrations);
	store_close(st);
}

static void
test_open_missing_directory(void **state)
{
	struct fixture	*fx = *state;
	struct store	*st = NULL;
	char		 path[192], err[512] = "";

	snprintf(path, sizeof path, "%s/nope/clockwork.db", fx->dir);
	assert_int_equal(store_open(path, &st, err, sizeof err), -1);
	assert_null(st);
	assert_non_null(strstr(err, path));
	assert_int_equal(access(path, F_OK), -1);
}

/* Put rows in every table that exists at version v. */
static void
populate(struct store *st, int v)
{
	int64_t	tid;

	if (v < 1)
		return;
	if (v < 20) {
		/*
		 * Before migration 5 the tasks table has no limit columns, before 6 no
		 * Telegram columns, before 7 no base or review columns, before 10 no key
		 * name, before 13 no budget pause, before 19 no keep_build_outputs, before
		 * 20 no notify_end: raw SQL.
		 */
		assert_int_equal(sqlite3_exec(store_db(st), "INSERT INTO tasks (name, repo,"
		    " prompt, engine, permission_mode, created_at, updated_at) VALUES"
		    " ('nightly', '/srv/repo', 'fix the tests', 'claude', 'acceptEdits',"
		    " 'now', 'now')", NULL, NULL, NULL), SQLITE_OK);
		tid = sqlite3_last_insert_rowid(store_db(st));
	} else
		tid = add_task(st, "nightly");
	assert_int_equal(store_run_create(st, tid, "run-1", NULL, 0), 0);
	assert_int_equal(store_run_event_append(st, "run-1", "log",
	    "{\"line\":\"hello\"}", NULL), 0);
	if (v < 2)
		return;
	assert_int_equal(store_approval_create(st, "ap-1", "run-1", "Bash",
	    "{\"command\":\"ls\"}", 0), 0);
	if (v < 3)
		return;
	assert_int_equal(store_journal_append(st, "run-1", "floor_deny",
	    "{\"rule\":\"floor.force_push\"}"), 0);
	assert_int_equal(store_audit_append(st, "cwctl", "task.add", "nightly",
	    NULL), 0);
}

static void
check_populated(struct store *st, int v)
{
	struct store_task		 t;
	struct store_run		 r;
	struct store_run_event		*ev;
	struct store_approval		 a;
	struct store_journal_entry	*j;
	struct store_audit_entry	*au;
	size_t				 n;

	if (v < 1) {
		assert_int_equal(sql_int(st, "SELECT count(*) FROM tasks"), 0);
		return;
	}
	assert_int_equal(store_task_get_by_name(st, "nightly", &t), 1);
	assert_string_equal(t.prompt, "fix the tests");
	assert_string_equal(t.permission_mode, "acceptEdits");
	assert_int_equal(store_run_get(st, "run-1", &r), 1);
	assert_int_equal(r.task_id, t.id);
	assert_string_equal(r.task_name, "nightly");
	assert_int_equal(r.status, STORE_RUN_QUEUED);
	store_run_free(&r);
	store_task_free(&t);
	assert_int_equal(store_run_event_list(st, "run-1", 0, 0, &ev, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(ev[0].data, "{\"line\":\"hello\"}");
	store_run_event_list_free(ev, n);

	if (v < 2) {
		assert_int_equal(sql_int(st, "SELECT count(*) FROM approvals"), 0);
		return;
	}
	assert_int_equal(store_approval_get(st, "ap-1", &a), 1);
	assert_int_equal(a.state, STORE_APPROVAL_PENDING);
	assert_string_equal(a.tool, "Bash");
	/* Migration 6: an approval from before risk levels is ordinary. */
	assert_string_equal(a.risk, "ordinary");
	assert_null(a.risk_rule);
	store_approval_free(&a);
	assert_int_equal(store_approval_set_risk(st, "ap-1", "destructive",
	    "config.rm_root"), 0);
	assert_int_equal(store_approval_set_risk(st, "ap-1", "scary", NULL), -1);
	assert_int_equal(store_approval_set_risk(st, "ap-none", "ordinary", NULL), -1);
	assert_int_equal(store_approval_get(st, "ap-1", &a), 1);
	assert_string_equal(a.risk, "destructive");
	assert_string_equal(a.risk_rule, "config.rm_root");
	store_approval_free(&a);

	if (v < 3) {
		assert_int_equal(sql_int(st, "SELECT count(*) FROM journal"), 0);
		return;
	}
	assert_int_equal(store_journal_list(st, NULL, 0, 0, &j, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(j[0].kind, "floor_deny");
	store_journal_list_free(j, n);
	assert_int_equal(store_audit_list(st, 0, 0, &au, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(au[0].action, "task.add");
	store_audit_list_free(au, n);
}

/*
 * Whether v is a migration's number. Numbers are handed out to branches in parallel,
 * so a branch may carry 13 before 12 has landed: a store cannot be left at 12 then.
 */
static int
migration_exists(int v)
{
	for (size_t i = 0; i < store_n_migrations; i++)
		if (store_migrations[i].version == v)
			return 1;
	return v == 0;
}

static void
test_migrate_from_each_version(void **state)
{
	struct fixture	*fx = *state;
	struct store	*st;
	char		 err[512], path[192];

	for (int v = 0; v < STORE_SCHEMA_LATEST; v++) {
		if (!migration_exists(v))
			continue;
		snprintf(path, sizeof path, "%s/v%d.db", fx->dir, v);
		st = NULL;
		if (store_open_at_version(path, v, &st, err, sizeof err) != 0)
			fail_msg("open at %d: %s", v, err);
		assert_int_equal(store_schema_version(st), v);
		/* The version is real: later tables are not there yet. */
		assert_int_equal(table_exists(st, "tasks"), v >= 1);
		assert_int_equal(table_exists(st, "approvals"), v >= 2);
		assert_int_equal(table_exists(st, "journal"), v >= 3);
		populate(st, v);
		store_close(st);

		st = open_ok(path);
		assert_int_equal(store_schema_version(st), STORE_SCHEMA_LATEST);
		assert_int_equal(sql_int(st, "SELECT count(*) FROM schema_migrations"),
		    (int)store_n_migrations);
		check_populated(st, v);
		/* Migration 5 rebuilt runs: the limit reasons are accepted now. */
		if (v >= 1) {
			assert_int_equal(store_run_set_status(st, "run-1", STORE_RUN_FAILED,
			    STORE_EXIT_LIMIT_PIDS), 1);
			assert_int_equal(sql_int(st, "SELECT count(*) FROM runs WHERE"
			    " exit_reason = 'limit_pids'"), 1);
		}
		/* And the latest schema works on the migrated file. */
		if (v == 0)
			populate(st, STORE_SCHEMA_LATEST);
		else
			assert_int_equal(store_approval_create(st, "ap-new", "run-1",
			    "Bash", NULL, 0), 0);
		assert_int_equal(store_journal_append(st, NULL, "migrated", NULL), 0);
		assert_int_equal(sql_int(st, "SELECT count(*) FROM sqlite_master"
		    " WHERE type = 'index' AND name = 'journal_run'"), 1);
		/* Migration 6: Telegram delivery state, and the task columns. */
		assert_true(table_exists(st, "telegram_messages"));
		assert_int_equal(store_telegram_state_set(st, "offset", "42"), 0);
		assert_int_equal(sql_int(st, "SELECT count(*) FROM tasks WHERE"
		    " telegram_chat_id IS NULL"), 1);
		/* Migration 10: a task's provider key name; none for the older tasks. */
		assert_int_equal(sql_int(st, "SELECT count(*) FROM tasks WHERE"
		    " key_name IS NULL"), 1);
		store_close(st);

	}
	/* Out of range versions are refused. */
	snprintf(path, sizeof path, "%s/bad.db", fx->dir);
	st = NULL;
	assert_int_equal(store_open_at_version(path, STORE_SCHEMA_LATEST + 1, &st, err,
	    sizeof err), -1);
	assert_null(st);
}

/*
 * Migration 17 masks what an older daemon stored raw (records are masked as they enter
 * from then on), and the journal and the audit log are append-only again after it.
 */
/*
 * Migration 20: a task announces its runs' ends unless told not to, and the runs that
 * had ended before count as announced (no chat gets every old run at the upgrade);
 * one still running is announced when it ends.
 */
static void
test_migration_20_announced(void **state)
{
	struct fixture	*fx = *state;
	struct store	*st = NULL;
	struct store_task t;
	char		 err[512], path[192];
	int64_t		 tid;

	snprintf(path, sizeof path, "%s/v19.db", fx->dir);
	if (store_open_at_version(path, 19, &st, err, sizeof err) != 0)
		fail_msg("open at 19: %s", err);
	assert_int_equal(sqlite3_exec(store_db(st), "INSERT INTO tasks (name, repo,"
	    " prompt, engine, permission_mode, created_at, updated_at, telegram_chat_id)"
	    " VALUES ('nightly', '/srv/repo', 'fix', 'claude', 'acceptEdits', 'now', 'now',"
	    " 42)", NULL, NULL, NULL), SQLITE_OK);
	tid = sqlite3_last_insert_rowid(store_db(st));
	assert_int_equal(store_run_create(st, tid, "run-old", NULL, 0), 0);
	assert_int_equal(store_run_set_report(st, "run-old", "{\"status\":\"completed\"}"), 0);
	assert_int_equal(store_run_create(st, tid, "run-live", NULL, 0), 0);
	store_close(st);

	st = open_ok(path);
	assert_int_equal(store_task_get(st, tid, &t), 1);
	assert_int_equal(t.notify_end, 1);
	store_task_free(&t);
	assert_int_equal(sql_int(st, "SELECT count(*) FROM telegram_run_notices"
	    " WHERE run_id = 'run-old'"), 1);
	assert_int_equal(sql_int(st, "SELECT count(*) FROM telegram_run_notices"
	    " WHERE run_id = 'run-live'"), 0);
	assert_int_equal(store_run_set_report(st, "run-live", "{\"status\":\"completed\"}"), 0);
	{
		struct store_telegram_notice	*v;
		size_t				 n;

		assert_int_equal(store_telegram_notices_due(st, 10, &v, &n), 0);
		assert_int_equal(n, 1);
		assert_string_equal(v[0].run_id, "run-live");
		assert_int_equal(v[0].notify_end, 1);
		store_telegram_notice_list_free(v, n);
	}
	/* A task that does not announce: nothing due for an ordinary run. */
	assert_int_equal(sqlite3_exec(store_db(st), "UPDATE tasks SET notify_end = 0",
	    NULL, NULL, NULL), SQLITE_OK);
	{
		struct store_telegram_notice	*v;
		size_t				 n;

		assert_int_equal(store_telegram_notices_due(st, 10, &v, &n), 0);
		assert_int_equal(n, 0);
		store_telegram_notice_list_free(v, n);
	}
	store_close(st);
}

static void
test_migration_17_masks(void **state)
{
	struct fixture	*fx = *state;
	struct store	*st = NULL;
	char		 err[512], path[192];
	const char	*tok = "ghp_BkdfQ1y3GQsMpSscDlkrCaqx9vJupc94tnwl";
	char		 json[256];
	int64_t		 tid;

	snprintf(path, sizeof path, "%s/v16.db", fx->dir);
	if (store_open_at_version(path, 16, &st, err, sizeof err) != 0)
		fail_msg("open at 16: %s", err);
	snprintf(json, sizeof json, "{\"command\":\"git push https://%s@github.com/o/r\"}", tok);
	tid = add_task_old(st, "nightly");
	assert_int_equal(store_run_create(st, tid, "run-1", NULL, 0), 0);
	assert_int_equal(store_run_set_report(st, "run-1", json), 0);
	assert_int_equal(store_run_event_append(st, "run-1", "log", json, NULL), 0);
	assert_int_equal(store_approval_create(st, "ap-1", "run-1", "Bash", json, 0), 0);
	assert_int_equal(store_journal_append(st, "run-1", "floor_deny", json), 0);
	assert_int_equal(store_audit_append(st, "cwctl", "task.add", "nightly", json), 0);
	store_close(st);

	st = open_ok(path);
	assert_int_equal(store_schema_version(st), STORE_SCHEMA_LATEST);
	assert_int_equal(sql_int(st, "SELECT (SELECT count(*) FROM runs WHERE report LIKE"
	    " '%SscDlkr%') + (SELECT count(*) FROM run_events WHERE data LIKE '%SscDlkr%')"
	    " + (SELECT count(*) FROM approvals WHERE input LIKE '%SscDlkr%')"
	    " + (SELECT count(*) FROM journal WHERE data LIKE '%SscDlkr%')"
	    " + (SELECT count(*) FROM audit WHERE data LIKE '%SscDlkr%')"), 0);
	assert_int_equal(sql_int(st, "SELECT count(*) FROM journal WHERE data ="
	    " '{\"command\":\"git push https://ghp_[MASKED]@github.com/o/r\"}'"), 1);
	assert_int_not_equal(sqlite3_exec(store_db(st), "UPDATE journal SET kind = 'x'",
	    NULL, NULL, NULL), SQLITE_OK);
	assert_int_not_equal(sqlite3_exec(store_db(st), "UPDATE audit SET action = 'x'",
	    NULL, NULL, NULL), SQLITE_OK);
	store_close(st);
}

/*
 * Migration 18 (issue 27): runs an older daemon merged or discarded come back with
 * that state from the journal (a discard after a merge wins); the state is set once,
 * by the store's compare-and-set and by the trigger under raw SQL; a push is recorded
 * beside a merge but not after a land or discard; the waiting list leaves them out.
 */
static void
test_migration_18_review(void **state)
{
	struct fixture		*fx = *state;
	struct store		*st = NULL;
	struct store_run	 r, *v;
	char			 err[512], path[192], at[STORE_TIME_LEN];
	size_t			 n;
	int64_t			 tid;

	snprintf(path, sizeof path, "%s/v17.db", fx->dir);
	if (store_open_at_version(path, 17, &st, err, sizeof err) != 0)
		fail_msg("open at 17: %s", err);
	tid = add_task_old(st, "nightly");
	for (int i = 0; i < 4; i++) {
		char id[16], sql[160];

		snprintf(id, sizeof id, "run-%d", i);
		assert_int_equal(store_run_create(st, tid, id, NULL, 0), 0);
		assert_int_equal(store_run_set_status(st, id, STORE_RUN_COMPLETED,
		    STORE_EXIT_COMPLETED), 1);
		snprintf(sql, sizeof sql, "clockwork/nightly/%s", id);
		assert_int_equal(store_run_set_git(st, id, NULL, sql, "abc", NULL), 0);
	}
	assert_int_equal(store_journal_append(st, "run-1", "run_merged",
	    "{\"into\":\"main\",\"result\":\"fast-forward\"}"), 0);
	assert_int_equal(store_journal_append(st, "run-2", "run_merged",
	    "{\"into\":\"main\",\"result\":\"merged\"}"), 0);
	assert_int_equal(store_journal_append(st, "run-2", "run_discarded", "{}"), 0);
	store_close(st);

	st = open_ok(path);
	assert_int_equal(store_run_get(st, "run-1", &r), 1);
	assert_string_equal(r.review_state, "merged");
	assert_string_equal(r.review_detail, "into main, fast-forward");
	assert_non_null(r.review_at);
	store_run_free(&r);
	assert_int_equal(store_run_get(st, "run-2", &r), 1);
	assert_string_equal(r.review_state, "discarded");
	store_run_free(&r);
	assert_int_equal(store_run_get(st, "run-0", &r), 1);
	assert_null(r.review_state);
	store_run_free(&r);
	assert_int_equal(store_run_list_waiting(st, 0, &v, &n), 0);
	assert_int_equal(n, 2);
	assert_true(strcmp(v[0].id, "run-3") == 0 && strcmp(v[1].id, "run-0") == 0);
	store_run_list_free(v, n);

	/* Once: a second state is refused by the store and by the trigger. */
	assert_int_equal(store_run_set_review(st, "run-0", "landed", "into main, merged",
	    at, sizeof at), 1);
	assert_true(strlen(at) == STORE_TIME_LEN - 1 && at[STORE_TIME_LEN - 2] == 'Z');
	assert_int_equal(store_run_set_review(st, "run-0", "merged", "again", NULL, 0), 0);
	assert_int_equal(store_run_set_review(st, "run-1", "discarded", "x", NULL, 0), 0);
	assert_int_equal(store_run_set_review(st, "nope", "merged", "x", NULL, 0), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(store_run_set_review(st, "run-3", "waiting", "x", NULL, 0), -1);
	assert_int_not_equal(sqlite3_exec(store_db(st), "UPDATE runs SET review_state ="
	    " 'discarded' WHERE id = 'run-1'", NULL, NULL, NULL), SQLITE_OK);
	assert_int_not_equal(sqlite3_exec(store_db(st), "UPDATE runs SET review_state ="
	    " 'pushed' WHERE id = 'run-3'", NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(store_run_get(st, "run-0", &r), 1);
	assert_string_equal(r.review_state, "landed");
	assert_string_equal(r.review_detail, "into main, merged");
	store_run_free(&r);

	/* A push beside a merge, or before any state; not after a land or a discard. */
	assert_int_equal(store_run_set_pushed(st, "run-1", "origin", "clockwork/nightly/run-1",
	    at, sizeof at), 1);
	assert_int_equal(store_run_set_pushed(st, "run-3", "up", "b3", NULL, 0), 1);
	assert_int_equal(store_run_set_pushed(st, "run-0", "origin", "b0", NULL, 0), 0);
	assert_int_equal(store_run_set_pushed(st, "run-2", "origin", "b2", NULL, 0), 0);
	assert_int_equal(store_run_get(st, "run-1", &r), 1);
	assert_string_equal(r.review_state, "merged");
	assert_string_equal(r.pushed_remote, "origin");
	assert_string_equal(r.pushed_branch, "clockwork/nightly/run-1");
	assert_string_equal(r.pushed_at, at);
	store_run_free(&r);
	/* Pushed is not reviewed: run-3 still waits for a person. */
	assert_int_equal(store_run_list_waiting(st, 0, &v, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(v[0].id, "run-3");
	store_run_list_free(v, n);
	store_close(st);
}

static void
test_newer_version_refused(void **state)
{
	struct fixture	*fx = *state;
	struct store	*st = NULL;
	sqlite3		*db;
	sqlite3_stmt	*stmt;
	char		 err[512] = "", *before, *after;
	size_t		 nbefore, nafter;

	st = open_ok(fx->path);
	add_task(st, "keep-me");
	assert_int_equal(sqlite3_exec(store_db(st), "INSERT INTO schema_migrations"
	    " VALUES (99, '2030-01-01T00:00:00.000Z')", NULL, NULL, NULL), SQLITE_OK);
	store_close(st);
	before = slurp(fx->path, &nbefore);

	st = NULL;
	assert_int_equal(store_open(fx->path, &st, err, sizeof err), -1);
	assert_null(st);
	assert_non_null(strstr(err, fx->path));
	assert_non_null(strstr(err, "newer"));
	assert_non_null(strstr(err, "99"));

	after = slurp(fx->path, &nafter);
	assert_int_equal(nbefore, nafter);
	assert_memory_equal(before, after, nbefore);
	free(before);
	free(after);

	assert_int_equal(sqlite3_open_v2(fx->path, &db, SQLITE_OPEN_READONLY, NULL),
	    SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT max(version) FROM"
	    " schema_migrations", -1, &stmt, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(stmt), SQLITE_ROW);
	assert_int_equal(sqlite3_column_int(stmt, 0), 99);
	sqlite3_finalize(stmt);
	sqlite3_close(db);
}

static void
test_not_a_database_refused(void **state)
{
	struct fixture	*fx = *state;
	struct store	*st = NULL;
	char		 err[512] = "", text[4096], *after;
	size_t		 n;
	FILE		*f;

	for (size_t i = 0; i < sizeof text; i++)
		text[i] = "not a database, just some text\n"[i % 31];
	assert_non_null(f = fopen(fx->path, "wb"));
	assert_int_equal(fwrite(text, 1, sizeof text, f), sizeof text);
	fclose(f);

	assert_int_equal(store_open(fx->path, &st, err, sizeof err), -1);
	assert_null(st);
	assert_non_null(strstr(err, fx->path));
	assert_non_null(strstr(err, "not a sqlite database"));
	after = slurp(fx->path, &n);
	assert_int_equal(n, sizeof text);
	assert_memory_equal(after, text, n);
	free(after);
}

static void
test_foreign_database_refused(void **state)
{
	struct fixture	*fx = *state;
	struct store	*st = NULL;
	sqlite3		*db;
	char		 err[512] = "";

	assert_int_equal(sqlite3_open(fx->path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "CREATE TABLE tasks (x)", NULL, NULL,
	    NULL), SQLITE_OK);
	sqlite3_close(db);
	assert_int_equal(store_open(fx->path, &st, err, sizeof err), -1);
	assert_null(st);
	assert_non_null(strstr(err, "not a clockwork store"));
}

static void
test_journal_audit_append_only(void **state)
{
	struct fixture			*fx = *state;
	struct store			*st;
	struct store_journal_entry	*j;
	struct store_audit_entry	*a;
	size_t				 n;
	char				*msg = NULL;
	const char			*bad[] = {
		"UPDATE journal SET kind = 'nothing'",
		"DELETE FROM journal",
		"DELETE FROM journal WHERE id = 1",
		"UPDATE audit SET actor = 'someone-else'",
		"DELETE FROM audit",
		"INSERT OR REPLACE INTO journal (id, ts, kind) VALUES (1, 'x', 'y')",
		"REPLACE INTO audit (id, ts, actor, action) VALUES (1, 'x', 'y', 'z')",
		("INSERT INTO journal (id, ts, kind) VALUES (2, 'x', 'y')"
		" ON CONFLICT (id) DO UPDATE SET kind = 'z'"),
	};

	st = open_ok(fx->path);
	assert_int_equal(store_journal_append(st, NULL, "sandbox_disabled",
	    "{\"why\":\"CW_SANDBOX=off\"}"), 0);
	assert_int_equal(store_journal_append(st, "r1", "floor_deny", NULL), 0);
	assert_int_equal(store_audit_append(st, "cwctl", "approval.answer", "ap-1",
	    "{\"state\":\"allowed\"}"), 0);
	/* Bad JSON never lands. */
	assert_int_equal(store_journal_append(st, NULL, "x", "{not json"), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(store_journal_append(st, NULL, NULL, NULL), -1);

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		assert_int_not_equal(sqlite3_exec(store_db(st), bad[i], NULL, NULL,
		    &msg), SQLITE_OK);
		assert_non_null(msg);
		assert_non_null(strstr(msg, "append-only"));
		sqlite3_free(msg);
		msg = NULL;
	}

	assert_int_equal(store_journal_list(st, NULL, 0, 0, &j, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(j[0].kind, "sandbox_disabled");
	assert_null(j[0].run_id);
	assert_string_equal(j[1].kind, "floor_deny");
	assert_string_equal(j[1].run_id, "r1");
	assert_true(j[1].id > j[0].id);
	/* ISO-8601 UTC with milliseconds. */
	assert_int_equal(strlen(j[0].ts), STORE_TIME_LEN - 1);
	assert_int_equal(j[0].ts[10], 'T');
	assert_int_equal(j[0].ts[19], '.');
	assert_int_equal(j[0].ts[23], 'Z');
	store_journal_list_free(j, n);

	assert_int_equal(store_journal_list(st, "r1", 0, 0, &j, &n), 0);
	assert_int_equal(n, 1);
	store_journal_list_free(j, n);
	assert_int_equal(store_journal_list(st, NULL, 1, 0, &j, &n), 0);
	assert_int_equal(n, 1);
	store_journal_list_free(j, n);

	assert_int_equal(store_audit_list(st, 0, 0, &a, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(a[0].actor, "cwctl");
	assert_string_equal(a[0].target, "ap-1");
	store_audit_list_free(a, n);
	store_close(st);
}

static void
test_approval_compare_and_set(void **state)
{
	struct fixture		*fx = *state;
	struct store		*st;
	struct store_approval	 a, *v;
	size_t			 n;
	int64_t			 tid;

	st = open_ok(fx->path);
	tid = add_task(st, "t");
	assert_int_equal(store_run_create(st, tid, "run-a", NULL, 0), 0);
	assert_int_equal(store_approval_create(st, "ap-1", "run-a", "Bash",
	    "{\"command\":\"rm -rf build\"}", 1700000000123LL), 0);
	assert_int_equal(store_approval_create(st, "ap-2", "run-a", "Edit", NULL, 0),
	    0);
	assert_int_equal(store_approval_create(st, "ap-1", "run-a", "Bash", NULL, 0),
	    -1);
	/* An approval for a run that does not exist is refused by the foreign key. */
	assert_int_equal(store_approval_create(st, "ap-x", "no-run", "Bash", NULL, 0),
	    -1);

	assert_int_equal(store_approval_list_pending(st, NULL, &v, &n), 0);
	assert_int_equal(n, 2);
	store_approval_list_free(v, n);

	assert_int_equal(store_approval_answer(st, "ap-1", STORE_APPROVAL_ALLOWED,
	    "ok", "inbox"), 1);
	assert_int_equal(store_approval_answer(st, "ap-1", STORE_APPROVAL_DENIED,
	    "no", "telegram:42"), 0);
	/* Answered or not, each counts toward the run's approval budget. */
	assert_int_equal(store_approval_count_run(st, "run-a"), 2);
	assert_int_equal(store_approval_count_run(st, "no-run"), 0);
	assert_int_equal(store_approval_get(st, "ap-1", &a), 1);
	assert_int_equal(a.state, STORE_APPROVAL_ALLOWED);
	assert_string_equal(a.answered_by, "inbox");
	assert_string_equal(a.message, "ok");
	assert_string_equal(a.deadline, "2023-11-14T22:13:20.123Z");
	assert_non_null(a.answered_at);
	store_approval_free(&a);

	assert_int_equal(store_approval_answer(st, "nope", STORE_APPROVAL_DENIED,
	    NULL, "cwctl"), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(store_approval_answer(st, "ap-2", STORE_APPROVAL_PENDING,
	    NULL, "cwctl"), -1);
	assert_int_equal(errno, EINVAL);

	/* The database itself keeps an answer final, even through raw SQL. */
	assert_int_not_equal(sqlite3_exec(store_db(st), "UPDATE approvals SET state ="
	    " 'denied' WHERE id = 'ap-1'", NULL, NULL, NULL), SQLITE_OK);

	assert_int_equal(store_approval_list_pending(st, "run-a", &v, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(v[0].id, "ap-2");
	store_approval_list_free(v, n);

	assert_int_equal(store_approval_expire_run(st, "run-a"), 1);
	assert_int_equal(store_approval_answer(st, "ap-2", STORE_APPROVAL_ALLOWED,
	    NULL, "cwctl"), 0);
	assert_int_equal(store_approval_get(st, "ap-2", &a), 1);
	assert_int_equal(a.state, STORE_APPROVAL_EXPIRED);
	store_approval_free(&a);
	assert_int_equal(store_approval_list_pending(st, NULL, &v, &n), 0);
	assert_int_equal(n, 0);
	store_approval_list_free(v, n);
	store_close(st);
}

static void
test_task_remove_refused_with_active_run(void **state)
{
	struct fixture		*fx = *state;
	struct store		*st;
	struct store_task	 t;
	struct store_run	 r;
	struct store_journal_entry *j;
	size_t			 n;
	int64_t			 tid;
	const enum store_run_status active[] = { STORE_RUN_QUEUED,
	    STORE_RUN_STARTING, STORE_RUN_RUNNING };

	st = open_ok(fx->path);
	tid = add_task(st, "busy");
	assert_int_equal(store_run_create(st, tid, "run-b", NULL, 0), 0);
	assert_int_equal(store_run_event_append(st, "run-b", "log", NULL, NULL), 0);
	assert_int_equal(store_journal_append(st, "run-b", "floor_deny", NULL), 0);

	for (size_t i = 0; i < 3; i++) {
		if (active[i] != STORE_RUN_QUEUED)
			assert_int_equal(store_run_set_status(st, "run-b", active[i],
			    STORE_EXIT_NONE), 1);
		assert_int_equal(store_task_remove(st, tid), -1);
		assert_int_equal(errno, EBUSY);
		assert_non_null(strstr(store_errmsg(st), "active run"));
		assert_int_equal(store_task_get(st, tid, &t), 1);
		store_task_free(&t);
		/* Raw SQL hits the trigger. */
		assert_int_not_equal(sqlite3_exec(store_db(st),
		    "DELETE FROM tasks", NULL, NULL, NULL), SQLITE_OK);
	}

	assert_int_equal(store_run_set_status(st, "run-b", STORE_RUN_COMPLETED,
	    STORE_EXIT_COMPLETED), 1);
	assert_int_equal(store_task_remove(st, tid), 0);
	assert_int_equal(store_task_get(st, tid, &t), 0);
	assert_int_equal(store_run_get(st, "run-b", &r), 0);
	assert_int_equal(sql_int(st, "SELECT count(*) FROM run_events"), 0);
	/* The journal keeps what happened. */
	assert_int_equal(store_journal_list(st, "run-b", 0, 0, &j, &n), 0);
	assert_int_equal(n, 1);
	store_journal_list_free(j, n);

	assert_int_equal(store_task_remove(st, tid), -1);
	assert_int_equal(errno, ENOENT);

	/* Inside a caller's transaction: a refusal leaves the caller's work intact. */
	tid = add_task(st, "busy2");
	assert_int_equal(store_run_create(st, tid, "run-c", NULL, 0), 0);
	assert_int_equal(store_begin(st), 0);
	assert_int_equal(store_audit_append(st, "cwctl", "task.remove", "busy2",
	    NULL), 0);
	assert_int_equal(store_task_remove(st, tid), -1);
	assert_int_equal(errno, EBUSY);
	assert_int_equal(store_commit(st), 0);
	assert_int_equal(sql_int(st, "SELECT count(*) FROM audit"), 1);
	assert_int_equal(store_task_get(st, tid, &t), 1);
	store_task_free(&t);

	/* And a rollback undoes everything since store_begin. */
	assert_int_equal(store_begin(st), 0);
	assert_int_equal(store_run_set_status(st, "run-c", STORE_RUN_FAILED,
	    STORE_EXIT_FAILED), 1);
	assert_int_equal(store_task_remove(st, tid), 0);
	store_rollback(st);
	assert_int_equal(store_task_get(st, tid, &t), 1);
	store_task_free(&t);
	assert_int_equal(store_run_get(st, "run-c", &r), 1);
	assert_int_equal(r.status, STORE_RUN_QUEUED);
	store_run_free(&r);
	store_close(st);
}

static void
test_permission_mode_check(void **state)
{
	struct fixture		*fx = *state;
	struct store		*st;
	struct store_task	 t = { 0 };
	int64_t			 id;

	st = open_ok(fx->path);
	assert_int_not_equal(sqlite3_exec(store_db(st), "INSERT INTO tasks (name,"
	    " prompt, engine, permission_mode, created_at, updated_at) VALUES"
	    " ('x', 'p', 'claude', 'bypassPermissions', 'now', 'now')", NULL, NULL,
	    NULL), SQLITE_OK);
	assert_int_equal(sqlite3_extended_errcode(store_db(st)),
	    SQLITE_CONSTRAINT_CHECK);

	t.name = "bypass";
	t.prompt = "p";
	t.engine = "claude";
	t.permission_mode = "bypassPermissions";
	assert_int_equal(store_task_add(st, &t, &id), -1);
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(store_errmsg(st), "CHECK"));
	assert_int_equal(sql_int(st, "SELECT count(*) FROM tasks"), 0);

	/* Nor can an existing task be switched to it. */
	t.permission_mode = "plan";
	assert_int_equal(store_task_add(st, &t, &id), 0);
	assert_int_not_equal(sqlite3_exec(store_db(st), "UPDATE tasks SET"
	    " permission_mode = 'bypassPermissions'", NULL, NULL, NULL), SQLITE_OK);
	t.id = id;
	t.permission_mode = "bypassPermissions";
	assert_int_equal(store_task_update(st, &t), -1);
	store_close(st);
}

/* A task's remembered answers and ask setting (migration 12), kept per task. */
static void
test_task_rules(void **state)
{
	struct fixture		*fx = *state;
	struct store		*st;
	struct store_task_rule	*v;
	size_t			 n;
	int64_t			 a, b;
	char			*ask;

	st = open_ok(fx->path);
	a = add_task(st, "rules-a");
	b = add_task(st, "rules-b");
	assert_int_equal(store_task_rule_add(st, a, "npm test", "ordinary", "ap-1",
	    "cli"), 0);
	assert_int_equal(store_task_rule_add(st, a, "git push", "outside_worktree", NULL,
	    "inbox"), 0);
	/* Again at a higher risk: kept once, the higher risk wins; lower never lowers. */
	assert_int_equal(store_task_rule_add(st, a, "npm test", "fetch_exec", NULL, "cli"),
	    0);
	assert_int_equal(store_task_rule_add(st, a, "npm test", "ordinary", NULL, "cli"),
	    0);
	assert_int_equal(store_task_rule_add(st, a, "bad\tfamily", "ordinary", NULL,
	    "cli"), -1);
	assert_int_equal(store_task_rule_add(st, a, "x", "risky", NULL, "cli"), -1);
	assert_int_equal(store_task_rules_list(st, a, &v, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(v[0].family, "npm test");
	assert_string_equal(v[0].max_risk, "fetch_exec");
	assert_string_equal(v[0].approval_id, "ap-1");
	assert_string_equal(v[1].created_by, "inbox");
	store_task_rules_free(v, n);
	/* Another task has none. */
	assert_int_equal(store_task_rules_list(st, b, &v, &n), 0);
	assert_int_equal(n, 0);
	store_task_rules_free(v, n);
	assert_int_equal(store_task_rule_remove(st, a, "npm test"), 0);
	assert_int_equal(store_task_rule_remove(st, a, "npm test"), -1);
	assert_int_equal(store_task_rules_list(st, a, &v, &n), 0);
	assert_int_equal(n, 1);
	store_task_rules_free(v, n);
	assert_int_equal(store_task_ask_get(st, a, &ask), 0);
	assert_null(ask);
	assert_int_equal(store_task_ask_set(st, a, "all"), 0);
	assert_int_equal(store_task_ask_get(st, a, &ask), 0);
	assert_string_equal(ask, "all");
	free(ask);
	assert_int_equal(store_task_ask_set(st, a, NULL), 0);
	assert_int_equal(store_task_ask_get(st, a, &ask), 0);
	assert_null(ask);
	store_close(st);
}

/*
 * Imported rules (migration 14): kind and source kept; an import twice changes
 * nothing; an ask replaces an allow, an allow never replaces anything, and a
 * person's "always for this task" does not undo an ask.
 */
static void
test_task_rules_import(void **state)
{
	struct fixture		*fx = *state;
	struct store		*st;
	struct store_task_rule	*v;
	size_t			 n;
	int64_t			 a;
	int			 ch;

	st = open_ok(fx->path);
	a = add_task(st, "import-a");
	assert_int_equal(store_task_rule_add(st, a, "make", "ordinary", "ap-1", "cli"), 0);
	assert_int_equal(store_task_rule_import(st, a, "allow", "npm test", "ordinary",
	    ".claude/settings.json@abc: Bash(npm test:*)", "cli", &ch), 0);
	assert_int_equal(ch, 1);
	assert_int_equal(store_task_rule_import(st, a, "allow", "npm test", "ordinary",
	    ".claude/settings.json@abc: Bash(npm test:*)", "cli", &ch), 0);
	assert_int_equal(ch, 0);
	assert_int_equal(store_task_rule_import(st, a, "ask", "make", "ordinary",
	    ".claude/settings.json@abc: Bash(make:*)", "cli", &ch), 0);
	assert_int_equal(ch, 1);
	assert_int_equal(store_task_rule_import(st, a, "ask", "make", "ordinary",
	    ".claude/settings.json@abc: Bash(make:*)", "cli", &ch), 0);
	assert_int_equal(ch, 0);
	assert_int_equal(store_task_rule_import(st, a, "allow", "make", "ordinary",
	    "x: Bash(make)", "cli", &ch), 0);
	assert_int_equal(ch, 0);
	assert_int_equal(store_task_rule_add(st, a, "make", "ordinary", "ap-2", "cli"), -1);
	assert_int_equal(errno, EEXIST);
	assert_int_equal(store_task_rule_import(st, a, "deny", "x", "ordinary", "s", "cli",
	    &ch), -1);
	assert_int_equal(store_task_rule_import(st, a, "allow", "x", "ordinary", NULL,
	    "cli", &ch), -1);
	assert_int_equal(store_task_rules_list(st, a, &v, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(v[0].family, "make");
	assert_string_equal(v[0].kind, "ask");
	assert_null(v[0].approval_id);
	assert_string_equal(v[0].source, ".claude/settings.json@abc: Bash(make:*)");
	assert_string_equal(v[1].family, "npm test");
	assert_string_equal(v[1].kind, "allow");
	assert_string_equal(v[1].max_risk, "ordinary");
	store_task_rules_free(v, n);
	store_close(st);
}

static void
test_tasks_crud(void **state)
{
	struct fixture		*fx = *state;
	struct store		*st;
	struct store_task	 t = { 0 }, got, *v;
	size_t			 n;
	int64_t			 a, b;

	st = open_ok(fx->path);
	b = add_task(st, "zeta");
	t.name = "alpha";
	t.prompt = "write docs";
	t.engine = "byok";
	t.key_name = "work-key";
	assert_int_equal(store_task_add(st, &t, &a), 0);
	/* Defaults for omitted mode and schedule; NULL repo is scratch. */
	assert_int_equal(store_task_get(st, a, &got), 1);
	/* byok: the key's name round-trips (the key itself is never stored). */
	assert_string_equal(got.key_name, "work-key");
	assert_string_equal(got.permission_mode, "plan");
	assert_string_equal(got.schedule, "queued");
	assert_null(got.repo);
	assert_int_equal(got.enabled, 0);
	assert_non_null(got.created_at);
	store_task_free(&got);
	/* Names are unique. */
	assert_int_equal(store_task_add(st, &t, NULL), -1);
	assert_int_equal(errno, EINVAL);

	assert_int_equal(store_task_list(st, &v, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(v[0].name, "alpha");
	assert_string_equal(v[1].name, "zeta");
	assert_int_equal(v[1].id, b);
	assert_string_equal(v[1].repo, "/srv/repo");
	assert_true(v[1].budget_dollars == 2.0);
	assert_int_equal(v[1].budget_turns, 50);
	store_task_list_free(v, n);

	assert_int_equal(store_task_set_enabled(st, a, 1), 0);
	assert_int_equal(store_task_get_by_name(st, "alpha", &got), 1);
	assert_int_equal(got.enabled, 1);
	store_task_free(&got);
	assert_int_equal(store_task_set_enabled(st, 9999, 1), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(store_task_get_by_name(st, "nope", &got), 0);

	t.id = a;
	t.schedule = "0 3 * * *";
	t.prompt = "write more docs";
	t.keep_build_outputs = 1;
	assert_int_equal(store_task_update(st, &t), 0);
	assert_int_equal(store_task_get(st, a, &got), 1);
	assert_string_equal(got.schedule, "0 3 * * *");
	assert_string_equal(got.prompt, "write more docs");
	assert_int_equal(got.keep_build_outputs, 1);
	store_task_free(&got);
	/* The column's CHECK: only 0 and 1. */
	assert_int_not_equal(sqlite3_exec(store_db(st), "UPDATE tasks SET "
	    "keep_build_outputs = 2", NULL, NULL, NULL), SQLITE_OK);
	store_close(st);
}

static void
test_runs_lifecycle(void **state)
{
	struct fixture		*fx = *state;
	struct store		*st;
	struct store_run	 r, *v;
	struct store_run_event	*ev;
	size_t			 n;
	int64_t			 tid, eid;
	char			 id[STORE_ID_LEN], id2[STORE_ID_LEN];

	st = open_ok(fx->path);
	tid = add_task(st, "life");
	assert_int_equal(store_run_create(st, tid, NULL, id, sizeof id), 0);
	assert_int_equal(strlen(id), 24);
	assert_null(strpbrk(id, " /:~^?*[\\"));
	assert_int_equal(store_run_create(st, tid, NULL, id2, sizeof id2), 0);
	assert_string_not_equal(id, id2);
	assert_int_equal(store_run_create(st, 4242, "orphan", NULL, 0), -1);
	assert_int_equal(store_run_create(st, tid, "../../etc", NULL, 0), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(store_run_create(st, tid, "-x", NULL, 0), -1);
	assert_int_equal(store_run_create(st, tid, "a b", NULL, 0), -1);
	assert_int_equal(store_run_create(st, tid, "ok", id2, 2), -1);

	assert_int_equal(store_run_get(st, id, &r), 1);
	assert_int_equal(r.status, STORE_RUN_QUEUED);
	assert_int_equal(r.exit_reason, STORE_EXIT_NONE);
	assert_int_equal(r.sandboxed, -1);
	assert_null(r.started_at);
	assert_null(r.ended_at);
	store_run_free(&r);

	assert_int_equal(store_run_set_status(st, id, STORE_RUN_STARTING,
	    STORE_EXIT_NONE), 1);
	assert_int_equal(store_run_set_runner(st, id, 1234, 1234, 987654321, 1), 0);
	assert_int_equal(store_run_set_git(st, id, "/w/life/x", "clockwork/life/x",
	    "abc123", NULL), 0);
	assert_int_equal(store_run_set_git(st, id, NULL, NULL, NULL, "def456"), 0);
	assert_int_equal(store_run_set_status(st, id, STORE_RUN_RUNNING,
	    STORE_EXIT_NONE), 1);
	assert_int_equal(store_run_set_spent(st, id, 0.42, 7, 12.5), 0);
	assert_int_equal(store_run_set_log_path(st, id, "/logs/x.log"), 0);
	assert_int_equal(store_run_set_report(st, id, "{\"ok\":"), -1);
	assert_int_equal(store_run_set_report(st, id, "{\"ok\":true}"), 0);
	assert_int_equal(store_run_add_export(st, id), 0);
	assert_int_equal(store_run_add_export(st, id), 0);
	assert_int_equal(store_run_set_spent(st, "missing", 0, 0, 0), -1);
	assert_int_equal(errno, ENOENT);

	assert_int_equal(store_run_list_unfinished(st, &v, &n), 0);
	assert_int_equal(n, 2);
	store_run_list_free(v, n);

	assert_int_equal(store_run_set_status(st, id, STORE_RUN_STOPPED,
	    STORE_EXIT_BUDGET_TURNS), 1);
	/* A terminal status is final. */
	assert_int_equal(store_run_set_status(st, id, STORE_RUN_RUNNING,
	    STORE_EXIT_NONE), 0);
	assert_int_equal(store_run_set_status(st, "missing", STORE_RUN_RUNNING,
	    STORE_EXIT_NONE), -1);
	assert_int_equal(errno, ENOENT);

	assert_int_equal(store_run_get(st, id, &r), 1);
	assert_int_equal(r.status, STORE_RUN_STOPPED);
	assert_int_equal(r.exit_reason, STORE_EXIT_BUDGET_TURNS);
	assert_int_equal(r.runner_pid, 1234);
	assert_int_equal(r.runner_start_time, 987654321);
	assert_int_equal(r.sandboxed, 1);
	assert_string_equal(r.worktree, "/w/life/x");
	assert_string_equal(r.base_commit, "abc123");
	assert_string_equal(r.final_commit, "def456");
	assert_true(r.spent_dollars == 0.42);
	assert_int_equal(r.spent_turns, 7);
	assert_string_equal(r.report, "{\"ok\":true}");
	assert_string_equal(r.log_path, "/logs/x.log");
	assert_int_equal(r.exported, 2);
	assert_non_null(r.started_at);
	assert_non_null(r.ended_at);
	store_run_free(&r);

	assert_int_equal(store_run_list(st, tid, STORE_RUN_STOPPED, 0, &v, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(v[0].id, id);
	store_run_list_free(v, n);
	assert_int_equal(store_run_list(st, 0, STORE_RUN_ANY, 1, &v, &n), 0);
	assert_int_equal(n, 1);
	store_run_list_free(v, n);
	assert_int_equal(store_run_list(st, tid, STORE_RUN_ANY, 0, &v, &n), 0);
	assert_int_equal(n, 2);
	store_run_list_free(v, n);
	assert_int_equal(store_run_list_unfinished(st, &v, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(v[0].id, id2);
	store_run_list_free(v, n);

	assert_int_equal(store_run_event_append(st, id, "log", "{\"n\":1}", &eid), 0);
	assert_int_equal(store_run_event_append(st, id, "log", "{\"n\":2}", NULL), 0);
	assert_int_equal(store_run_event_append(st, id, "log", "[", NULL), -1);
	assert_int_equal(store_run_event_list(st, id, eid, 0, &ev, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(ev[0].data, "{\"n\":2}");
	store_run_event_list_free(ev, n);

	assert_string_equal(store_run_status_name(STORE_RUN_INTERRUPTED),
	    "interrupted");
	assert_int_equal(store_run_status_parse("refused"), STORE_RUN_REFUSED);
	assert_int_equal(store_run_status_parse("bogus"), -1);
	assert_string_equal(store_exit_reason_name(STORE_EXIT_BUDGET_DOLLARS),
	    "budget_dollars");
	assert_null(store_exit_reason_name(STORE_EXIT_NONE));
	store_close(st);
}

static void
test_two_handles(void **state)
{
	struct fixture			*fx = *state;
	struct store			*a, *b;
	struct store_journal_entry	*j;
	struct store_task		 t;
	size_t				 n;
	pid_t				 pid;
	int				 status;
	const int			 per = 150;

	a = open_ok(fx->path);
	b = open_ok(fx->path);
	add_task(a, "shared");
	assert_int_equal(store_task_get_by_name(b, "shared", &t), 1);
	store_task_free(&t);

	/* A reader is not blocked by an open write transaction (WAL). */
	assert_int_equal(sqlite3_exec(store_db(a), "BEGIN IMMEDIATE", NULL, NULL,
	    NULL), SQLITE_OK);
	assert_int_equal(store_journal_append(a, NULL, "in-flight", NULL), 0);
	assert_int_equal(store_journal_list(b, NULL, 0, 0, &j, &n), 0);
	assert_int_equal(n, 0);
	store_journal_list_free(j, n);
	assert_int_equal(sqlite3_exec(store_db(a), "COMMIT", NULL, NULL, NULL),
	    SQLITE_OK);
	assert_int_equal(store_journal_list(b, NULL, 0, 0, &j, &n), 0);
	assert_int_equal(n, 1);
	store_journal_list_free(j, n);
	store_close(b);

	/* Two processes writing at once: the busy timeout queues them, none fails. */
	pid = fork();
	assert_true(pid != -1);
	if (pid == 0) {
		struct store	*c = NULL;
		char		 err[512];
		int		 bad = 0;

		if (store_open(fx->path, &c, err, sizeof err) != 0)
			_exit(2);
		for (int i = 0; i < per; i++)
			if (store_journal_append(c, NULL, "child", NULL) != 0)
				bad++;
		store_close(c);
		_exit(bad ? 1 : 0);
	}
	for (int i = 0; i < per; i++)
		assert_int_equal(store_journal_append(a, NULL, "parent", NULL), 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(sql_int(a, "SELECT count(*) FROM journal"), 1 + 2 * per);
	store_close(a);
}

/* Two processes opening one new file at once: it is migrated exactly once. */
static void
test_concurrent_first_open(void **state)
{
	struct fixture	*fx = *state;
	struct store	*st;
	pid_t		 pids[3];
	int		 status;

	for (size_t i = 0; i < 3; i++) {
		pids[i] = fork();
		assert_true(pids[i] != -1);
		if (pids[i] == 0) {
			struct store	*c = NULL;
			char		 err[512];

			if (store_open(fx->path, &c, err, sizeof err) != 0) {
				fprintf(stderr, "child: %s\n", err);
				_exit(1);
			}
			store_close(c);
			_exit(0);
		}
	}
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	}
	st = open_ok(fx->path);
	assert_int_equal(sql_int(st, "SELECT count(*) FROM schema_migrations"),
	    (int)store_n_migrations);
	store_close(st);
}

static void
test_time_format(void **state)
{
	char	buf[STORE_TIME_LEN];

	(void)state;
	store_format_time(0, buf, sizeof buf);
	assert_string_equal(buf, "1970-01-01T00:00:00.000Z");
	store_format_time(1700000000999LL, buf, sizeof buf);
	assert_string_equal(buf, "2023-11-14T22:13:20.999Z");
	store_now(buf, sizeof buf);
	assert_int_equal(strlen(buf), STORE_TIME_LEN - 1);
}

/*
 * Migration 7: task rm archives (runs stay, the name is free, EBUSY while a run is
 * active), history and run origins round-trip, the imported task's review columns.
 */
/*
 * Issue 23: a continued run holds the branch of the run it continues; the store lets
 * one run that has not ended hold a branch, and says which holds it.
 */
static void
test_run_continues_branch(void **state)
{
	struct fixture		*fx = *state;
	struct store		*st;
	struct store_run	 r;
	char			 id[STORE_ID_LEN];
	int64_t			 tid;
	int			 live = -1;

	st = open_ok(fx->path);
	tid = add_task(st, "cont");
	assert_int_equal(store_run_create(st, tid, "run-1", NULL, 0), 0);
	assert_int_equal(store_run_set_git(st, "run-1", "/w/run-1", "clockwork/cont/run-1",
	    "abc", NULL), 0);
	/* run-1 is live: nobody may continue on its branch. */
	assert_int_equal(store_run_create(st, tid, "run-2", NULL, 0), 0);
	assert_int_equal(store_run_set_continues(st, "run-2", "run-1",
	    "clockwork/cont/run-1"), -1);
	assert_int_equal(errno, EBUSY);
	assert_non_null(strstr(store_errmsg(st), "held by run run-1"));
	assert_int_equal(store_run_set_status(st, "run-1", STORE_RUN_COMPLETED,
	    STORE_EXIT_COMPLETED), 1);
	assert_int_equal(store_run_branch_holder(st, "clockwork/cont/run-1", "run-2", id,
	    sizeof id, &live), 1);
	assert_string_equal(id, "run-1");
	assert_int_equal(live, 0);
	assert_int_equal(store_run_set_continues(st, "run-2", "run-1",
	    "clockwork/cont/run-1"), 0);
	assert_int_equal(store_run_get(st, "run-2", &r), 1);
	assert_string_equal(r.continues, "run-1");
	assert_string_equal(r.branch, "clockwork/cont/run-1");
	store_run_free(&r);
	/* A second continue while run-2 is queued: refused, by the check and the index. */
	assert_int_equal(store_run_create(st, tid, "run-3", NULL, 0), 0);
	assert_int_equal(store_run_set_continues(st, "run-3", "run-1",
	    "clockwork/cont/run-1"), -1);
	assert_int_equal(errno, EBUSY);
	assert_non_null(strstr(store_errmsg(st), "held by run run-2"));
	assert_int_equal(store_run_set_git(st, "run-3", NULL, "clockwork/cont/run-1", NULL,
	    NULL), -1);
	assert_int_equal(store_run_branch_holder(st, "clockwork/cont/run-1", NULL, id,
	    sizeof id, &live), 1);
	assert_string_equal(id, "run-2");
	assert_int_equal(live, 1);
	/* Once run-2 ends the branch is free again; only a queued run takes it. */
	assert_int_equal(store_run_set_status(st, "run-2", STORE_RUN_COMPLETED,
	    STORE_EXIT_COMPLETED), 1);
	assert_int_equal(store_run_set_continues(st, "run-3", "run-1",
	    "clockwork/cont/run-1"), 0);
	assert_int_equal(store_run_set_continues(st, "run-2", "run-1",
	    "clockwork/cont/run-1"), -1);
	assert_int_equal(store_run_branch_holder(st, "clockwork/cont/none", NULL, id,
	    sizeof id, &live), 0);
	store_close(st);
}

static void
test_task_archive_history_origin(void **state)
{
	struct fixture			*fx = *state;
	struct store			*st;
	struct store_task		 t, *v;
	struct store_run		 r;
	struct store_task_history	*h;
	size_t				 n;
	int64_t				 tid, tid2;

	st = open_ok(fx->path);
	tid = add_task(st, "arch");
	assert_int_equal(store_run_create(st, tid, "run-a", NULL, 0), 0);
	assert_int_equal(store_task_archive(st, tid), -1);
	assert_int_equal(errno, EBUSY);
	assert_int_equal(store_run_set_origin(st, "run-a", "run-0", "follow up",
	    "clockwork/arch/run-0"), 0);
	assert_int_equal(store_run_get(st, "run-a", &r), 1);
	assert_string_equal(r.parent_run, "run-0");
	assert_string_equal(r.prompt, "follow up");
	assert_string_equal(r.base_ref, "clockwork/arch/run-0");
	store_run_free(&r);
	assert_int_equal(store_run_set_status(st, "run-a", STORE_RUN_COMPLETED,
	    STORE_EXIT_COMPLETED), 1);
	/* Only a queued run's origin may be set. */
	assert_int_equal(store_run_set_origin(st, "run-a", NULL, "x", NULL), -1);

	assert_int_equal(store_task_history_add(st, tid, "cwctl", "{\"prompt\":\"old\"}"), 0);
	assert_int_equal(store_task_history_add(st, tid, "cwctl", "not json"), -1);
	assert_int_equal(store_task_archive(st, tid), 0);
	assert_int_equal(store_task_get(st, tid, &t), 1);
	assert_true(t.archived);
	assert_false(t.enabled);
	assert_string_equal(t.name, "arch (archived 1)");
	store_task_free(&t);
	assert_int_equal(store_task_get_by_name(st, "arch", &t), 0);
	assert_int_equal(store_run_get(st, "run-a", &r), 1);
	assert_string_equal(r.task_name, "arch (archived 1)");
	store_run_free(&r);
	assert_int_equal(store_task_list(st, &v, &n), 0);
	for (size_t i = 0; i < n; i++)
		assert_string_not_equal(v[i].name, "arch (archived 1)");
	store_task_list_free(v, n);
	assert_int_equal(store_task_list_archived(st, &v, &n), 0);
	assert_int_equal(n, 1);
	store_task_list_free(v, n);
	assert_int_equal(store_task_history_list(st, tid, &h, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(h[0].definition, "{\"prompt\":\"old\"}");
	store_task_history_list_free(h, n);
	assert_int_equal(store_task_archive(st, tid), -1);
	assert_int_equal(errno, ENOENT);

	tid2 = add_task(st, "arch");
	assert_true(tid2 != tid);
	assert_int_equal(store_task_set_review(st, tid2, "{\"kind\":\"repo\"}",
	    "{\"warnings\":0}", 1, 0), 0);
	assert_int_equal(store_task_get(st, tid2, &t), 1);
	assert_true(t.needs_review);
	assert_string_equal(t.source, "{\"kind\":\"repo\"}");
	store_task_free(&t);
	assert_int_equal(store_task_set_review(st, tid2, NULL, NULL, 0, 1), 0);
	assert_int_equal(store_task_get(st, tid2, &t), 1);
	assert_false(t.needs_review);
	assert_true(t.enabled);
	assert_string_equal(t.preview, "{\"warnings\":0}");
	store_task_free(&t);
	assert_int_equal(store_task_set_review(st, tid2, "bad json", NULL, 0, 1), -1);
	store_close(st);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_open_creates_schema, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_open_missing_directory, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_migration_20_announced, setup, teardown),
		cmocka_unit_test_setup_teardown(test_migrate_from_each_version, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_migration_17_masks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_newer_version_refused, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_not_a_database_refused, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_foreign_database_refused, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_journal_audit_append_only, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_approval_compare_and_set, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_task_remove_refused_with_active_run,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_permission_mode_check, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_tasks_crud, setup, teardown),
		cmocka_unit_test_setup_teardown(test_run_continues_branch, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_task_archive_history_origin, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_runs_lifecycle, setup, teardown),
		cmocka_unit_test_setup_teardown(test_two_handles, setup, teardown),
		cmocka_unit_test_setup_teardown(test_concurrent_first_open, setup,
		    teardown),
		cmocka_unit_test(test_time_format),
		cmocka_unit_test_setup_teardown(test_migration_18_review, setup, teardown),
		cmocka_unit_test_setup_teardown(test_task_rules_import, setup, teardown),
		cmocka_unit_test_setup_teardown(test_task_rules, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
