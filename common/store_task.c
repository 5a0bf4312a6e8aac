/*
 * The store's tasks table (common/store.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "store.h"
#include "store_impl.h"

/* ---- tasks ------------------------------------------------------------------------ */

#define TASK_COLUMNS \
	"id, name, repo, prompt, engine, permission_mode, budget_dollars," \
	" budget_turns, budget_seconds, schedule, enabled, created_at, updated_at," \
	" limit_processes, limit_memory_mb, telegram_chat_id, telegram_allowed_user_ids," \
	" base, archived, source, preview, needs_review, key_name, budget_wait," \
	" max_dollars, keep_build_outputs, notify_end"

static int
store_task_row(sqlite3_stmt *stmt, void *p)
{
	struct store_task	*t = p;

	t->id = sqlite3_column_int64(stmt, 0);
	t->budget_dollars = sqlite3_column_double(stmt, 6);
	t->budget_turns = sqlite3_column_int(stmt, 7);
	t->budget_seconds = sqlite3_column_int(stmt, 8);
	t->enabled = sqlite3_column_int(stmt, 10);
	t->limit_processes = sqlite3_column_int(stmt, 13);
	t->limit_memory_mb = sqlite3_column_int(stmt, 14);
	t->telegram_chat_id = sqlite3_column_int64(stmt, 15);
	t->archived = sqlite3_column_int(stmt, 18);
	t->needs_review = sqlite3_column_int(stmt, 21);
	t->budget_wait = sqlite3_column_type(stmt, 23) == SQLITE_NULL ? -1 :
	    sqlite3_column_int(stmt, 23);
	t->max_dollars = sqlite3_column_type(stmt, 24) == SQLITE_NULL ? -1 :
	    sqlite3_column_double(stmt, 24);
	t->keep_build_outputs = sqlite3_column_int(stmt, 25);
	t->notify_end = sqlite3_column_int(stmt, 26);
	if (store_col_text(stmt, 16, &t->telegram_allowed_user_ids) ||
	    store_col_text(stmt, 22, &t->key_name) ||
	    store_col_text(stmt, 1, &t->name) || store_col_text(stmt, 2, &t->repo) ||
	    store_col_text(stmt, 3, &t->prompt) ||
	    store_col_text(stmt, 4, &t->engine) ||
	    store_col_text(stmt, 5, &t->permission_mode) ||
	    store_col_text(stmt, 9, &t->schedule) ||
	    store_col_text(stmt, 11, &t->created_at) ||
	    store_col_text(stmt, 12, &t->updated_at) ||
	    store_col_text(stmt, 17, &t->base) ||
	    store_col_text(stmt, 19, &t->source) ||
	    store_col_text(stmt, 20, &t->preview))
		return ENOMEM;
	return 0;
}

void
store_task_free(struct store_task *t)
{
	if (t == NULL)
		return;
	free(t->name);
	free(t->repo);
	free(t->prompt);
	free(t->engine);
	free(t->permission_mode);
	free(t->schedule);
	free(t->created_at);
	free(t->updated_at);
	free(t->telegram_allowed_user_ids);
	free(t->base);
	free(t->source);
	free(t->preview);
	free(t->key_name);
	memset(t, 0, sizeof *t);
}

static void
store_task_free_v(void *p)
{
	store_task_free(p);
}

void
store_task_list_free(struct store_task *v, size_t n)
{
	for (size_t i = 0; v != NULL && i < n; i++)
		store_task_free(&v[i]);
	free(v);
}

/*
 * Bind the editable fields of t at ?1..?10 (name .. enabled), ?13 and ?14 (limits),
 * ?15 and ?16 (Telegram delivery), ?17 (base), ?21 (key), ?22 and ?23 (budget pause),
 * ?24 (the seal keeps build outputs).
 */
static void
store_task_bind(sqlite3_stmt *stmt, const struct store_task *t)
{
	store_bind_text(stmt, 1, t->name);
	store_bind_text(stmt, 2, t->repo);
	store_bind_text(stmt, 3, t->prompt);
	store_bind_text(stmt, 4, t->engine);
	store_bind_text(stmt, 5, t->permission_mode != NULL ? t->permission_mode :
	    "plan");
	sqlite3_bind_double(stmt, 6, t->budget_dollars);
	sqlite3_bind_int(stmt, 7, t->budget_turns);
	sqlite3_bind_int(stmt, 8, t->budget_seconds);
	store_bind_text(stmt, 9, t->schedule != NULL ? t->schedule : "queued");
	sqlite3_bind_int(stmt, 10, t->enabled ? 1 : 0);
	sqlite3_bind_int(stmt, 13, t->limit_processes);
	sqlite3_bind_int(stmt, 14, t->limit_memory_mb);
	if (t->telegram_chat_id != 0)
		sqlite3_bind_int64(stmt, 15, t->telegram_chat_id);
	else
		sqlite3_bind_null(stmt, 15);
	store_bind_text(stmt, 16, t->telegram_allowed_user_ids);
	store_bind_text(stmt, 17, t->base);
	store_bind_text(stmt, 21, t->key_name);
	if (t->budget_wait >= 0)
		sqlite3_bind_int(stmt, 22, t->budget_wait);
	else
		sqlite3_bind_null(stmt, 22);
	if (t->max_dollars >= 0)
		sqlite3_bind_double(stmt, 23, t->max_dollars);
	else
		sqlite3_bind_null(stmt, 23);
	sqlite3_bind_int(stmt, 24, t->keep_build_outputs ? 1 : 0);
	sqlite3_bind_int(stmt, 25, t->notify_end ? 1 : 0);
}

int
store_task_add(struct store *st, const struct store_task *t, int64_t *id)
{
	sqlite3_stmt	*stmt;
	char		 now[STORE_TIME_LEN];

	if (t->name == NULL || t->prompt == NULL || t->engine == NULL)
		return store_fail(st, EINVAL, "task add: name, prompt and engine are "
		    "required");
	if (store_prepare(st, "INSERT INTO tasks (name, repo, prompt, engine,"
	    " permission_mode, budget_dollars, budget_turns, budget_seconds, schedule,"
	    " enabled, created_at, updated_at, limit_processes, limit_memory_mb,"
	    " telegram_chat_id, telegram_allowed_user_ids, base, source, preview,"
	    " needs_review, key_name, budget_wait, max_dollars, keep_build_outputs,"
	    " notify_end)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?11, ?13, ?14, ?15,"
	    " ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25)", &stmt, "task add") == -1)
		return -1;
	store_now(now, sizeof now);
	store_task_bind(stmt, t);
	store_bind_text(stmt, 18, t->source);
	store_bind_text(stmt, 19, t->preview);
	sqlite3_bind_int(stmt, 20, t->needs_review ? 1 : 0);
	store_bind_text(stmt, 11, now);
	if (store_step_done(st, stmt, "task add") == -1)
		return -1;
	if (id != NULL)
		*id = sqlite3_last_insert_rowid(st->db);
	return 0;
}

int
store_task_update(struct store *st, const struct store_task *t)
{
	sqlite3_stmt	*stmt;
	char		 now[STORE_TIME_LEN];

	if (t->name == NULL || t->prompt == NULL || t->engine == NULL)
		return store_fail(st, EINVAL, "task update: name, prompt and engine "
		    "are required");
	if (store_prepare(st, "UPDATE tasks SET name = ?1, repo = ?2, prompt = ?3,"
	    " engine = ?4, permission_mode = ?5, budget_dollars = ?6,"
	    " budget_turns = ?7, budget_seconds = ?8, schedule = ?9, enabled = ?10,"
	    " updated_at = ?11, limit_processes = ?13, limit_memory_mb = ?14,"
	    " telegram_chat_id = ?15, telegram_allowed_user_ids = ?16, base = ?17,"
	    " key_name = ?21, budget_wait = ?22, max_dollars = ?23,"
	    " keep_build_outputs = ?24, notify_end = ?25 WHERE id = ?12", &stmt, "task update") == -1)
		return -1;
	store_now(now, sizeof now);
	store_task_bind(stmt, t);
	store_bind_text(stmt, 11, now);
	sqlite3_bind_int64(stmt, 12, t->id);
	if (store_step_done(st, stmt, "task update") == -1)
		return -1;
	if (sqlite3_changes(st->db) == 0)
		return store_fail(st, ENOENT, "task %lld: no such task",
		    (long long)t->id);
	return 0;
}

int
store_task_get(struct store *st, int64_t id, struct store_task *out)
{
	sqlite3_stmt	*stmt;

	if (store_prepare(st, "SELECT " TASK_COLUMNS " FROM tasks WHERE id = ?1",
	    &stmt, "task get") == -1)
		return -1;
	sqlite3_bind_int64(stmt, 1, id);
	return store_get_one(st, stmt, sizeof *out, store_task_row,
	    store_task_free_v, out, "task get");
}

int
store_task_get_by_name(struct store *st, const char *name, struct store_task *out)
{
	sqlite3_stmt	*stmt;

	if (store_prepare(st, "SELECT " TASK_COLUMNS " FROM tasks WHERE name = ?1",
	    &stmt, "task get") == -1)
		return -1;
	store_bind_text(stmt, 1, name);
	return store_get_one(st, stmt, sizeof *out, store_task_row,
	    store_task_free_v, out, "task get");
}

int
store_task_list(struct store *st, struct store_task **out, size_t *n)
{
	sqlite3_stmt	*stmt;

	if (store_prepare(st, "SELECT " TASK_COLUMNS " FROM tasks WHERE archived = 0"
	    " ORDER BY name", &stmt, "task list") == -1)
		return -1;
	return store_collect(st, stmt, sizeof **out, store_task_row,
	    store_task_free_v, (void **)out, n, "task list");
}

int
store_task_list_archived(struct store *st, struct store_task **out, size_t *n)
{
	sqlite3_stmt	*stmt;

	if (store_prepare(st, "SELECT " TASK_COLUMNS " FROM tasks WHERE archived = 1"
	    " ORDER BY id", &stmt, "task list") == -1)
		return -1;
	return store_collect(st, stmt, sizeof **out, store_task_row,
	    store_task_free_v, (void **)out, n, "task list");
}

int
store_task_set_review(struct store *st, int64_t id, const char *source,
    const char *preview, int needs_review, int enabled)
{
	sqlite3_stmt	*stmt;
	char		 now[STORE_TIME_LEN];

	if (store_prepare(st, "UPDATE tasks SET source = coalesce(?1, source),"
	    " preview = coalesce(?2, preview), needs_review = ?3, enabled = ?4,"
	    " updated_at = ?5 WHERE id = ?6", &stmt, "task review") == -1)
		return -1;
	store_now(now, sizeof now);
	store_bind_text(stmt, 1, source);
	store_bind_text(stmt, 2, preview);
	sqlite3_bind_int(stmt, 3, needs_review ? 1 : 0);
	sqlite3_bind_int(stmt, 4, enabled ? 1 : 0);
	store_bind_text(stmt, 5, now);
	sqlite3_bind_int64(stmt, 6, id);
	if (store_step_done(st, stmt, "task review") == -1)
		return -1;
	if (sqlite3_changes(st->db) == 0)
		return store_fail(st, ENOENT, "task %lld: no such task", (long long)id);
	return 0;
}

int
store_task_history_add(struct store *st, int64_t task_id, const char *actor,
    const char *definition)
{
	sqlite3_stmt	*stmt;
	char		 now[STORE_TIME_LEN];

	if (store_prepare(st, "INSERT INTO task_history (task_id, ts, actor, definition)"
	    " VALUES (?1, ?2, ?3, ?4)", &stmt, "task history") == -1)
		return -1;
	store_now(now, sizeof now);
	sqlite3_bind_int64(stmt, 1, task_id);
	store_bind_text(stmt, 2, now);
	store_bind_text(stmt, 3, actor != NULL ? actor : "?");
	store_bind_text(stmt, 4, definition);
	return store_step_done(st, stmt, "task history");
}

static int
store_task_history_row(sqlite3_stmt *stmt, void *p)
{
	struct store_task_history	*h = p;

	h->id = sqlite3_column_int64(stmt, 0);
	if (store_col_text(stmt, 1, &h->ts) || store_col_text(stmt, 2, &h->actor) ||
	    store_col_text(stmt, 3, &h->definition))
		return ENOMEM;
	return 0;
}

static void
store_task_history_free(void *p)
{
	struct store_task_history	*h = p;

	free(h->ts);
	free(h->actor);
	free(h->definition);
	memset(h, 0, sizeof *h);
}

int
store_task_history_list(struct store *st, int64_t task_id,
    struct store_task_history **out, size_t *n)
{
	sqlite3_stmt	*stmt;

	if (store_prepare(st, "SELECT id, ts, actor, definition FROM task_history"
	    " WHERE task_id = ?1 ORDER BY id", &stmt, "task history") == -1)
		return -1;
	sqlite3_bind_int64(stmt, 1, task_id);
	return store_collect(st, stmt, sizeof **out, store_task_history_row,
	    store_task_history_free, (void **)out, n, "task history");
}

void
store_task_history_list_free(struct store_task_history *v, size_t n)
{
	for (size_t i = 0; v != NULL && i < n; i++)
		store_task_history_free(&v[i]);
	free(v);
}

int
store_task_set_enabled(struct store *st, int64_t id, int enabled)
{
	sqlite3_stmt	*stmt;
	char		 now[STORE_TIME_LEN];

	if (store_prepare(st, "UPDATE tasks SET enabled = ?1, updated_at = ?2"
	    " WHERE id = ?3", &stmt, "task enable") == -1)
		return -1;
	store_now(now, sizeof now);
	sqlite3_bind_int(stmt, 1, enabled ? 1 : 0);
	store_bind_text(stmt, 2, now);
	sqlite3_bind_int64(stmt, 3, id);
	if (store_step_done(st, stmt, "task enable") == -1)
		return -1;
	if (sqlite3_changes(st->db) == 0)
		return store_fail(st, ENOENT, "task %lld: no such task", (long long)id);
	return 0;
}

/*
 * The end of a task, removed or archived (store_task_archive()). The check and the
 * change share one write transaction, so a run queued between them cannot slip
 * through (for a delete the schema's trigger would stop it anyway): a task that does
 * not exist (or, to archive, is archived already) or still has an active run is
 * refused. Inside a caller's store_begin() it nests as a savepoint.
 */
static int
store_task_end(struct store *st, int64_t id, int archive)
{
	const char	*what = archive ? "task archive" : "task remove";
	sqlite3_stmt	*stmt;
	char		 now[STORE_TIME_LEN];
	int		 rc, e, outer;

	outer = !sqlite3_get_autocommit(st->db);
	if (store_exec(st, outer ? "SAVEPOINT task_end" : "BEGIN IMMEDIATE", what) == -1)
		return -1;
	if (store_prepare(st, archive ?
	    "SELECT (SELECT count(*) FROM tasks WHERE id = ?1 AND archived = 0),"
	    " (SELECT count(*) FROM runs WHERE task_id = ?1 AND status IN"
	    " ('queued', 'starting', 'running'))" :
	    "SELECT (SELECT count(*) FROM tasks WHERE id = ?1),"
	    " (SELECT count(*) FROM runs WHERE task_id = ?1 AND status IN"
	    " ('queued', 'starting', 'running'))", &stmt, what) == -1)
		goto fail;
	sqlite3_bind_int64(stmt, 1, id);
	if (sqlite3_step(stmt) != SQLITE_ROW) {
		store_sqlfail(st, stmt, what);
		goto fail;
	}
	if (sqlite3_column_int(stmt, 0) == 0) {
		sqlite3_finalize(stmt);
		store_fail(st, ENOENT, "task %lld: no such task", (long long)id);
		goto fail;
	}
	if ((rc = sqlite3_column_int(stmt, 1)) > 0) {
		sqlite3_finalize(stmt);
		store_fail(st, EBUSY, "task %lld: has %d active run%s; stop %s first",
		    (long long)id, rc, rc == 1 ? "" : "s", rc == 1 ? "it" : "them");
		goto fail;
	}
	sqlite3_finalize(stmt);
	if (store_prepare(st, archive ? "UPDATE tasks SET archived = 1, enabled = 0,"
	    " name = printf('%s (archived %d)', name, id), updated_at = ?2"
	    " WHERE id = ?1" : "DELETE FROM tasks WHERE id = ?1", &stmt, what) == -1)
		goto fail;
	sqlite3_bind_int64(stmt, 1, id);
	if (archive) {
		store_now(now, sizeof now);
		store_bind_text(stmt, 2, now);
	}
	if (store_step_done(st, stmt, what) == -1)
		goto fail;
	if (store_exec(st, outer ? "RELEASE task_end" : "COMMIT", what) == -1)
		goto fail;
	return 0;
fail:
	e = errno;
	if (outer)
		sqlite3_exec(st->db, "ROLLBACK TO task_end; RELEASE task_end", NULL, NULL,
		    NULL);
	else
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	errno = e;
	return -1;
}

int
store_task_remove(struct store *st, int64_t id)
{
	return store_task_end(st, id, 0);
}

/*
 * Archiving keeps the row (and so every run, event and approval of the task) and
 * frees the name: "NAME (archived ID)" can never be a task name again (a space and
 * parentheses are not allowed in one), so it collides with nothing.
 */
int
store_task_archive(struct store *st, int64_t id)
{
	return store_task_end(st, id, 1);
}
