/*
 * The store's runs and run_events tables (common/store.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "store.h"
#include "store_impl.h"

/* ---- runs ------------------------------------------------------------------------- */

#define RUN_COLUMNS \
	"r.id, r.task_id, t.name, r.status, r.exit_reason, r.worktree, r.branch," \
	" r.base_commit, r.final_commit, r.runner_pid, r.runner_pgid," \
	" r.runner_start_time, r.sandboxed, r.spent_dollars, r.spent_turns," \
	" r.spent_seconds, r.report, r.log_path, r.exported, r.created_at," \
	" r.started_at, r.ended_at, r.prompt, r.base_ref, r.parent_run, r.continues," \
	" r.review_state, r.review_at, r.review_detail, r.pushed_remote," \
	" r.pushed_branch, r.pushed_at"
#define RUN_FROM	" FROM runs r JOIN tasks t ON t.id = r.task_id"

static int
store_run_row(sqlite3_stmt *stmt, void *p)
{
	struct store_run	*r = p;
	int			 s;

	r->task_id = sqlite3_column_int64(stmt, 1);
	if ((s = store_run_status_parse((const char *)
	    sqlite3_column_text(stmt, 3))) == -1)
		return EIO;
	r->status = s;
	r->exit_reason = store_exit_reason_parse((const char *)
	    sqlite3_column_text(stmt, 4));
	r->runner_pid = sqlite3_column_int64(stmt, 9);
	r->runner_pgid = sqlite3_column_int64(stmt, 10);
	r->runner_start_time = sqlite3_column_int64(stmt, 11);
	if (sqlite3_column_type(stmt, 12) == SQLITE_NULL)
		r->sandboxed = -1;
	else
		r->sandboxed = sqlite3_column_int(stmt, 12);
	r->spent_dollars = sqlite3_column_double(stmt, 13);
	r->spent_turns = sqlite3_column_int(stmt, 14);
	r->spent_seconds = sqlite3_column_double(stmt, 15);
	r->exported = sqlite3_column_int(stmt, 18);
	if (store_col_text(stmt, 0, &r->id) ||
	    store_col_text(stmt, 2, &r->task_name) ||
	    store_col_text(stmt, 5, &r->worktree) ||
	    store_col_text(stmt, 6, &r->branch) ||
	    store_col_text(stmt, 7, &r->base_commit) ||
	    store_col_text(stmt, 8, &r->final_commit) ||
	    store_col_text(stmt, 16, &r->report) ||
	    store_col_text(stmt, 17, &r->log_path) ||
	    store_col_text(stmt, 19, &r->created_at) ||
	    store_col_text(stmt, 20, &r->started_at) ||
	    store_col_text(stmt, 21, &r->ended_at) ||
	    store_col_text(stmt, 22, &r->prompt) ||
	    store_col_text(stmt, 23, &r->base_ref) ||
	    store_col_text(stmt, 24, &r->parent_run) ||
	    store_col_text(stmt, 25, &r->continues) ||
	    store_col_text(stmt, 26, &r->review_state) ||
	    store_col_text(stmt, 27, &r->review_at) ||
	    store_col_text(stmt, 28, &r->review_detail) ||
	    store_col_text(stmt, 29, &r->pushed_remote) ||
	    store_col_text(stmt, 30, &r->pushed_branch) ||
	    store_col_text(stmt, 31, &r->pushed_at))
		return ENOMEM;
	return 0;
}

void
store_run_free(struct store_run *r)
{
	if (r == NULL)
		return;
	free(r->id);
	free(r->task_name);
	free(r->worktree);
	free(r->branch);
	free(r->base_commit);
	free(r->final_commit);
	free(r->report);
	free(r->log_path);
	free(r->created_at);
	free(r->started_at);
	free(r->ended_at);
	free(r->prompt);
	free(r->base_ref);
	free(r->parent_run);
	free(r->continues);
	free(r->review_state);
	free(r->review_at);
	free(r->review_detail);
	free(r->pushed_remote);
	free(r->pushed_branch);
	free(r->pushed_at);
	memset(r, 0, sizeof *r);
}

static void
store_run_free_v(void *p)
{
	store_run_free(p);
}

void
store_run_list_free(struct store_run *v, size_t n)
{
	for (size_t i = 0; v != NULL && i < n; i++)
		store_run_free(&v[i]);
	free(v);
}

/*
 * A run id becomes a directory name and part of a branch name: letters, digits,
 * '.', '_' and '-' only, not starting with '.' or '-', no "..", and short.
 */
static int
store_run_id_valid(const char *id)
{
	size_t	len = strlen(id);

	if (len == 0 || len >= STORE_ID_LEN || id[0] == '.' || id[0] == '-' ||
	    strstr(id, "..") != NULL)
		return 0;
	for (const char *p = id; *p != '\0'; p++)
		if (strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		    "0123456789._-", *p) == NULL)
			return 0;
	return 1;
}

int
store_run_create(struct store *st, int64_t task_id, const char *id, char *id_out,
    size_t id_outlen)
{
	sqlite3_stmt	*stmt;
	char		 now[STORE_TIME_LEN], made[STORE_ID_LEN];

	if (id == NULL || *id == '\0') {
		if (store_make_run_id(made, sizeof made) == -1)
			return store_fail(st, EIO, "run create: cannot make an id");
		id = made;
	}
	if (!store_run_id_valid(id))
		return store_fail(st, EINVAL, "run create: bad run id \"%.64s\"", id);
	if (id_out != NULL && strlen(id) >= id_outlen)
		return store_fail(st, EINVAL, "run create: id buffer too small");
	if (store_prepare(st, "INSERT INTO runs (id, task_id, status, created_at)"
	    " VALUES (?1, ?2, 'queued', ?3)", &stmt, "run create") == -1)
		return -1;
	store_now(now, sizeof now);
	store_bind_text(stmt, 1, id);
	sqlite3_bind_int64(stmt, 2, task_id);
	store_bind_text(stmt, 3, now);
	if (store_step_done(st, stmt, "run create") == -1)
		return -1;
	if (id_out != NULL)
		memcpy(id_out, id, strlen(id) + 1);
	return 0;
}

int
store_run_get(struct store *st, const char *id, struct store_run *out)
{
	sqlite3_stmt	*stmt;

	if (store_prepare(st, "SELECT " RUN_COLUMNS RUN_FROM " WHERE r.id = ?1",
	    &stmt, "run get") == -1)
		return -1;
	store_bind_text(stmt, 1, id);
	return store_get_one(st, stmt, sizeof *out, store_run_row,
	    store_run_free_v, out, "run get");
}

int
store_run_list(struct store *st, int64_t task_id, int status, size_t limit,
    struct store_run **out, size_t *n)
{
	sqlite3_stmt	*stmt;

	if (status != STORE_RUN_ANY && store_run_status_name(status) == NULL)
		return store_fail(st, EINVAL, "run list: bad status %d", status);
	if (store_prepare(st, "SELECT " RUN_COLUMNS RUN_FROM
	    " WHERE (?1 = 0 OR r.task_id = ?1) AND (?2 IS NULL OR r.status = ?2)"
	    " ORDER BY r.created_at DESC, r.rowid DESC LIMIT ?3", &stmt,
	    "run list") == -1)
		return -1;
	sqlite3_bind_int64(stmt, 1, task_id);
	store_bind_text(stmt, 2, status == STORE_RUN_ANY ? NULL :
	    store_run_status_name(status));
	sqlite3_bind_int64(stmt, 3, store_limit(limit));
	return store_collect(st, stmt, sizeof **out, store_run_row,
	    store_run_free_v, (void **)out, n, "run list");
}

int
store_run_list_unfinished(struct store *st, struct store_run **out, size_t *n)
{
	sqlite3_stmt	*stmt;

	if (store_prepare(st, "SELECT " RUN_COLUMNS RUN_FROM
	    " WHERE r.status IN ('queued', 'starting', 'running')"
	    " ORDER BY r.created_at, r.rowid", &stmt, "run list unfinished") == -1)
		return -1;
	return store_collect(st, stmt, sizeof **out, store_run_row,
	    store_run_free_v, (void **)out, n, "run list unfinished");
}

int
store_run_list_waiting(struct store *st, size_t limit, struct store_run **out,
    size_t *n)
{
	sqlite3_stmt	*stmt;

	if (store_prepare(st, "SELECT " RUN_COLUMNS RUN_FROM
	    " WHERE r.status NOT IN ('queued', 'starting', 'running')"
	    " AND r.branch IS NOT NULL AND r.review_state IS NULL"
	    " ORDER BY r.created_at DESC, r.rowid DESC LIMIT ?1", &stmt,
	    "run list waiting") == -1)
		return -1;
	sqlite3_bind_int64(stmt, 1, store_limit(limit));
	return store_collect(st, stmt, sizeof **out, store_run_row,
	    store_run_free_v, (void **)out, n, "run list waiting");
}

/* After an UPDATE ... WHERE id = ? that changed nothing: was the row there? */
int
store_exists(struct store *st, const char *sql, const char *id, const char *what)
{
	sqlite3_stmt	*stmt;
	int		 rc;

	if (store_prepare(st, sql, &stmt, what) == -1)
		return -1;
	store_bind_text(stmt, 1, id);
	rc = sqlite3_step(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_sqlfail(st, stmt, what);
	sqlite3_finalize(stmt);
	return rc == SQLITE_ROW;
}

static int
store_run_missing(struct store *st, const char *id, const char *what)
{
	int	rc;

	rc = store_exists(st, "SELECT 1 FROM runs WHERE id = ?1", id, what);
	if (rc == -1)
		return -1;
	if (rc == 0)
		return store_fail(st, ENOENT, "run %s: no such run", id);
	return 0;
}

int
store_run_set_status(struct store *st, const char *id, enum store_run_status status,
    enum store_exit_reason reason)
{
	sqlite3_stmt	*stmt;
	char		 now[STORE_TIME_LEN];

	if (store_run_status_name(status) == NULL ||
	    (reason != STORE_EXIT_NONE && store_exit_reason_name(reason) == NULL))
		return store_fail(st, EINVAL, "run %s: bad status %d or exit reason %d",
		    id, (int)status, (int)reason);
	if (store_prepare(st, "UPDATE runs SET status = ?1, exit_reason = ?2,"
	    " started_at = CASE WHEN started_at IS NULL AND ?1 IN ('starting',"
	    "  'running') THEN ?3 ELSE started_at END,"
	    " ended_at = CASE WHEN ?4 THEN ?3 ELSE ended_at END"
	    " WHERE id = ?5 AND status IN ('queued', 'starting', 'running')", &stmt,
	    "run status") == -1)
		return -1;
	store_now(now, sizeof now);
	store_bind_text(stmt, 1, store_run_status_name(status));
	store_bind_text(stmt, 2, store_exit_reason_name(reason));
	store_bind_text(stmt, 3, now);
	sqlite3_bind_int(stmt, 4, store_run_status_terminal(status));
	store_bind_text(stmt, 5, id);
	if (store_step_done(st, stmt, "run status") == -1)
		return -1;
	if (sqlite3_changes(st->db) == 1)
		return 1;
	return store_run_missing(st, id, "run status");
}

/* Finish a one-row UPDATE of runs: ENOENT when it matched nothing. */
static int
store_run_update(struct store *st, sqlite3_stmt *stmt, const char *id,
    const char *what)
{
	if (store_step_done(st, stmt, what) == -1)
		return -1;
	if (sqlite3_changes(st->db) == 0)
		return store_fail(st, ENOENT, "run %s: no such run", id);
	return 0;
}

int
store_run_set_report(struct store *st, const char *id, const char *report_json)
{
	sqlite3_stmt	*stmt;

	if (store_prepare(st, "UPDATE runs SET report = ?1 WHERE id = ?2", &stmt,
	    "run report") == -1)
		return -1;
	store_bind_text(stmt, 1, report_json);
	store_bind_text(stmt, 2, id);
	return store_run_update(st, stmt, id, "run report");
}

int
store_run_set_spent(struct store *st, const char *id, double dollars, int turns,
    double seconds)
{
	sqlite3_stmt	*stmt;

	if (store_prepare(st, "UPDATE runs SET spent_dollars = ?1, spent_turns = ?2,"
	    " spent_seconds = ?3 WHERE id = ?4", &stmt, "run spent") == -1)
		return -1;
	sqlite3_bind_double(stmt, 1, dollars);
	sqlite3_bind_int(stmt, 2, turns);
	sqlite3_bind_double(stmt, 3, seconds);
	store_bind_text(stmt, 4, id);
	return store_run_update(st, stmt, id, "run spent");
}

int
store_run_set_git(struct store *st, const char *id, const char *worktree,
    const char *branch, const char *base_commit, const char *final_commit)
{
	sqlite3_stmt	*stmt;

	if (store_prepare(st, "UPDATE runs SET worktree = coalesce(?1, worktree),"
	    " branch = coalesce(?2, branch), base_commit = coalesce(?3, base_commit),"
	    " final_commit = coalesce(?4, final_commit) WHERE id = ?5", &stmt,
	    "run git") == -1)
		return -1;
	store_bind_text(stmt, 1, worktree);
	store_bind_text(stmt, 2, branch);
	store_bind_text(stmt, 3, base_commit);
	store_bind_text(stmt, 4, final_commit);
	store_bind_text(stmt, 5, id);
	return store_run_update(st, stmt, id, "run git");
}

int
store_run_set_runner(struct store *st, const char *id, int64_t pid, int64_t pgid,
    int64_t start_time, int sandboxed)
{
	sqlite3_stmt	*stmt;

	if (store_prepare(st, "UPDATE runs SET runner_pid = ?1, runner_pgid = ?2,"
	    " runner_start_time = ?3, sandboxed = ?4 WHERE id = ?5", &stmt,
	    "run runner") == -1)
		return -1;
	sqlite3_bind_int64(stmt, 1, pid);
	sqlite3_bind_int64(stmt, 2, pgid);
	sqlite3_bind_int64(stmt, 3, start_time);
	if (sandboxed < 0)
		sqlite3_bind_null(stmt, 4);
	else
		sqlite3_bind_int(stmt, 4, sandboxed ? 1 : 0);
	store_bind_text(stmt, 5, id);
	return store_run_update(st, stmt, id, "run runner");
}

int
store_run_set_log_path(struct store *st, const char *id, const char *path)
{
	sqlite3_stmt	*stmt;

	if (store_prepare(st, "UPDATE runs SET log_path = ?1 WHERE id = ?2", &stmt,
	    "run log path") == -1)
		return -1;
	store_bind_text(stmt, 1, path);
	store_bind_text(stmt, 2, id);
	return store_run_update(st, stmt, id, "run log path");
}

int
store_run_add_export(struct store *st, const char *id)
{
	sqlite3_stmt	*stmt;

	if (store_prepare(st, "UPDATE runs SET exported = exported + 1 WHERE id = ?1",
	    &stmt, "run export") == -1)
		return -1;
	store_bind_text(stmt, 1, id);
	return store_run_update(st, stmt, id, "run export");
}

/* ---- run events ----------------------------------------------------------------- */

static int
store_run_event_row(sqlite3_stmt *stmt, void *p)
{
	struct store_run_event	*ev = p;

	ev->id = sqlite3_column_int64(stmt, 0);
	if (store_col_text(stmt, 1, &ev->run_id) || store_col_text(stmt, 2, &ev->ts) ||
	    store_col_text(stmt, 3, &ev->kind) || store_col_text(stmt, 4, &ev->data))
		return ENOMEM;
	return 0;
}

void
store_run_event_free(struct store_run_event *ev)
{
	if (ev == NULL)
		return;
	free(ev->run_id);
	free(ev->ts);
	free(ev->kind);
	free(ev->data);
	memset(ev, 0, sizeof *ev);
}

static void
store_run_event_free_v(void *p)
{
	store_run_event_free(p);
}

void
store_run_event_list_free(struct store_run_event *v, size_t n)
{
	for (size_t i = 0; v != NULL && i < n; i++)
		store_run_event_free(&v[i]);
	free(v);
}

int
store_run_event_append(struct store *st, const char *run_id, const char *kind,
    const char *data_json, int64_t *id)
{
	sqlite3_stmt	*stmt;
	char		 now[STORE_TIME_LEN];

	if (store_prepare(st, "INSERT INTO run_events (run_id, ts, kind, data)"
	    " VALUES (?1, ?2, ?3, ?4)", &stmt, "run event") == -1)
		return -1;
	store_now(now, sizeof now);
	store_bind_text(stmt, 1, run_id);
	store_bind_text(stmt, 2, now);
	store_bind_text(stmt, 3, kind);
	store_bind_text(stmt, 4, data_json);
	if (store_step_done(st, stmt, "run event") == -1)
		return -1;
	if (id != NULL)
		*id = sqlite3_last_insert_rowid(st->db);
	return 0;
}

int
store_run_event_list(struct store *st, const char *run_id, int64_t since_id,
    size_t limit, struct store_run_event **out, size_t *n)
{
	sqlite3_stmt	*stmt;

	if (store_prepare(st, "SELECT id, run_id, ts, kind, data FROM run_events"
	    " WHERE run_id = ?1 AND id > ?2 ORDER BY id LIMIT ?3", &stmt,
	    "run event list") == -1)
		return -1;
	store_bind_text(stmt, 1, run_id);
	sqlite3_bind_int64(stmt, 2, since_id);
	sqlite3_bind_int64(stmt, 3, store_limit(limit));
	return store_collect(st, stmt, sizeof **out, store_run_event_row,
	    store_run_event_free_v, (void **)out, n, "run event list");
}

int
store_run_set_origin(struct store *st, const char *id, const char *parent_run,
    const char *prompt, const char *base_ref)
{
	sqlite3_stmt	*stmt;

	if (store_prepare(st, "UPDATE runs SET parent_run = ?2, prompt = ?3, base_ref = ?4"
	    " WHERE id = ?1 AND status = 'queued'", &stmt, "run origin") == -1)
		return -1;
	store_bind_text(stmt, 1, id);
	store_bind_text(stmt, 2, parent_run);
	store_bind_text(stmt, 3, prompt);
	store_bind_text(stmt, 4, base_ref);
	if (store_step_done(st, stmt, "run origin") == -1)
		return -1;
	if (sqlite3_changes(st->db) == 0)
		return store_fail(st, ENOENT, "run %s: no such queued run", id);
	return 0;
}

int
store_run_branch_holder(struct store *st, const char *branch, const char *except,
    char *id_out, size_t idlen, int *live)
{
	sqlite3_stmt	*stmt;
	const char	*id;
	int		 rc;

	if (store_prepare(st, "SELECT id, status IN ('queued', 'starting', 'running')"
	    " FROM runs WHERE branch = ?1 AND (?2 IS NULL OR id != ?2)"
	    " ORDER BY status IN ('queued', 'starting', 'running') DESC, created_at DESC,"
	    " rowid DESC LIMIT 1", &stmt, "run branch holder") == -1)
		return -1;
	store_bind_text(stmt, 1, branch);
	store_bind_text(stmt, 2, except);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_DONE) {
		sqlite3_finalize(stmt);
		return 0;
	}
	if (rc != SQLITE_ROW)
		return store_sqlfail(st, stmt, "run branch holder");
	id = (const char *)sqlite3_column_text(stmt, 0);
	if (live != NULL)
		*live = sqlite3_column_int(stmt, 1);
	if (id_out != NULL)
		snprintf(id_out, idlen, "%s", id != NULL ? id : "");
	sqlite3_finalize(stmt);
	return 1;
}

int
store_run_set_continues(struct store *st, const char *id, const char *continues,
    const char *branch)
{
	sqlite3_stmt	*stmt;
	char		 holder[STORE_ID_LEN];
	int		 live = 0, rc;

	/* The index refuses a second holder too; this says which run holds it. */
	if ((rc = store_run_branch_holder(st, branch, id, holder, sizeof holder,
	    &live)) == -1)
		return -1;
	if (rc == 1 && live)
		return store_fail(st, EBUSY, "branch %s is held by run %s, which has not "
		    "ended", branch, holder);
	if (store_prepare(st, "UPDATE runs SET continues = ?2, branch = ?3"
	    " WHERE id = ?1 AND status = 'queued'", &stmt, "run continues") == -1)
		return -1;
	store_bind_text(stmt, 1, id);
	store_bind_text(stmt, 2, continues);
	store_bind_text(stmt, 3, branch);
	if (store_step_done(st, stmt, "run continues") == -1)
		return -1;
	if (sqlite3_changes(st->db) == 0)
		return store_fail(st, ENOENT, "run %s: no such queued run", id);
	return 0;
}

/*
 * Step stmt, a compare-and-set UPDATE of run id stamped now: 1 when it changed the run
 * (at, when given, gets now), 0 when the run is there but was not changed, -1 (the
 * run is missing: ENOENT; or the store failed).
 */
static int
store_run_cas(struct store *st, sqlite3_stmt *stmt, const char *id, const char *now,
    char *at, size_t atlen, const char *what)
{
	if (store_step_done(st, stmt, what) == -1)
		return -1;
	if (sqlite3_changes(st->db) == 1) {
		if (at != NULL)
			snprintf(at, atlen, "%s", now);
		return 1;
	}
	return store_run_missing(st, id, what) == -1 ? -1 : 0;
}

/* ---- what a person did with the run's work (issue 27) ------------------------- */

int
store_run_set_review(struct store *st, const char *id, const char *state,
    const char *detail, char *at, size_t atlen)
{
	sqlite3_stmt	*stmt;
	char		 now[STORE_TIME_LEN];

	if (state == NULL || (strcmp(state, "merged") != 0 &&
	    strcmp(state, "landed") != 0 && strcmp(state, "discarded") != 0))
		return store_fail(st, EINVAL, "run %s: bad review state", id);
	/* The WHERE is the compare-and-set; the trigger is the backstop. */
	if (store_prepare(st, "UPDATE runs SET review_state = ?2, review_at = ?3,"
	    " review_detail = ?4 WHERE id = ?1 AND review_state IS NULL", &stmt,
	    "run review") == -1)
		return -1;
	store_now(now, sizeof now);
	store_bind_text(stmt, 1, id);
	store_bind_text(stmt, 2, state);
	store_bind_text(stmt, 3, now);
	store_bind_text(stmt, 4, detail);
	return store_run_cas(st, stmt, id, now, at, atlen, "run review");
}

int
store_run_set_pushed(struct store *st, const char *id, const char *remote,
    const char *branch, char *at, size_t atlen)
{
	sqlite3_stmt	*stmt;
	char		 now[STORE_TIME_LEN];

	if (store_prepare(st, "UPDATE runs SET pushed_remote = ?2, pushed_branch = ?3,"
	    " pushed_at = ?4 WHERE id = ?1 AND (review_state IS NULL OR"
	    " review_state = 'merged')", &stmt, "run pushed") == -1)
		return -1;
	store_now(now, sizeof now);
	store_bind_text(stmt, 1, id);
	store_bind_text(stmt, 2, remote);
	store_bind_text(stmt, 3, branch);
	store_bind_text(stmt, 4, now);
	return store_run_cas(st, stmt, id, now, at, atlen, "run pushed");
}
