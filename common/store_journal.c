/*
 * The store's append-only journal and audit tables (common/store.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "store.h"
#include "store_impl.h"

/* ---- journal ------------------------------------------------------------------- */

static int
store_journal_row(sqlite3_stmt *stmt, void *p)
{
	struct store_journal_entry	*j = p;

	j->id = sqlite3_column_int64(stmt, 0);
	if (store_col_text(stmt, 1, &j->ts) || store_col_text(stmt, 2, &j->run_id) ||
	    store_col_text(stmt, 3, &j->kind) || store_col_text(stmt, 4, &j->data))
		return ENOMEM;
	j->event_id = sqlite3_column_int64(stmt, 5);
	return 0;
}

void
store_journal_entry_free(struct store_journal_entry *j)
{
	if (j == NULL)
		return;
	free(j->ts);
	free(j->run_id);
	free(j->kind);
	free(j->data);
	memset(j, 0, sizeof *j);
}

static void
store_journal_entry_free_v(void *p)
{
	store_journal_entry_free(p);
}

void
store_journal_list_free(struct store_journal_entry *v, size_t n)
{
	for (size_t i = 0; v != NULL && i < n; i++)
		store_journal_entry_free(&v[i]);
	free(v);
}

int
store_journal_append(struct store *st, const char *run_id, const char *kind,
    const char *data_json)
{
	return store_journal_append_event(st, run_id, kind, data_json, 0);
}

int
store_journal_append_event(struct store *st, const char *run_id, const char *kind,
    const char *data_json, int64_t event_id)
{
	sqlite3_stmt	*stmt;
	char		 now[STORE_TIME_LEN];

	/* Without an event, the columns every version has (a store being migrated). */
	if (store_prepare(st, event_id > 0 ?
	    "INSERT INTO journal (ts, run_id, kind, data, event_id)"
	    " VALUES (?1, ?2, ?3, ?4, ?5)" :
	    "INSERT INTO journal (ts, run_id, kind, data) VALUES (?1, ?2, ?3, ?4)",
	    &stmt, "journal append") == -1)
		return -1;
	store_now(now, sizeof now);
	store_bind_text(stmt, 1, now);
	store_bind_text(stmt, 2, run_id);
	store_bind_text(stmt, 3, kind);
	store_bind_text(stmt, 4, data_json);
	if (event_id > 0)
		sqlite3_bind_int64(stmt, 5, event_id);
	return store_step_done(st, stmt, "journal append");
}

int
store_journal_list_events(struct store *st, int64_t after, int64_t before, size_t limit,
    struct store_journal_entry **out, size_t *n)
{
	sqlite3_stmt	*stmt;

	if (store_prepare(st, "SELECT id, ts, run_id, kind, data, event_id FROM journal"
	    " WHERE event_id > ?1 AND (?2 = 0 OR event_id < ?2) ORDER BY event_id"
	    " LIMIT ?3", &stmt, "journal events") == -1)
		return -1;
	sqlite3_bind_int64(stmt, 1, after);
	sqlite3_bind_int64(stmt, 2, before);
	sqlite3_bind_int64(stmt, 3, store_limit(limit));
	return store_collect(st, stmt, sizeof **out, store_journal_row,
	    store_journal_entry_free_v, (void **)out, n, "journal events");
}

int
store_journal_max_event(struct store *st, int64_t *out)
{
	sqlite3_stmt	*stmt;
	int		 rc;

	*out = 0;
	if (store_prepare(st, "SELECT coalesce(max(event_id), 0) FROM journal", &stmt,
	    "journal max event") == -1)
		return -1;
	if ((rc = sqlite3_step(stmt)) != SQLITE_ROW)
		return store_sqlfail(st, stmt, "journal max event");
	*out = sqlite3_column_int64(stmt, 0);
	sqlite3_finalize(stmt);
	return 0;
}

int
store_journal_list(struct store *st, const char *run_id, int64_t since_id,
    size_t limit, struct store_journal_entry **out, size_t *n)
{
	sqlite3_stmt	*stmt;

	if (store_prepare(st, "SELECT id, ts, run_id, kind, data, event_id FROM journal"
	    " WHERE (?1 IS NULL OR run_id = ?1) AND id > ?2 ORDER BY id LIMIT ?3",
	    &stmt, "journal list") == -1)
		return -1;
	store_bind_text(stmt, 1, run_id);
	sqlite3_bind_int64(stmt, 2, since_id);
	sqlite3_bind_int64(stmt, 3, store_limit(limit));
	return store_collect(st, stmt, sizeof **out, store_journal_row,
	    store_journal_entry_free_v, (void **)out, n, "journal list");
}

int
store_bus_reserved(struct store *st, int64_t *out)
{
	sqlite3_stmt	*stmt;
	int		 rc;

	*out = 0;
	if (store_prepare(st, "SELECT coalesce(max(reserved), 0) FROM bus_state", &stmt,
	    "bus state") == -1)
		return -1;
	if ((rc = sqlite3_step(stmt)) != SQLITE_ROW)
		return store_sqlfail(st, stmt, "bus state");
	*out = sqlite3_column_int64(stmt, 0);
	sqlite3_finalize(stmt);
	return 0;
}

int
store_bus_reserve(struct store *st, int64_t upto)
{
	sqlite3_stmt	*stmt;

	if (store_prepare(st, "INSERT INTO bus_state (id, reserved) VALUES (1, ?1)"
	    " ON CONFLICT (id) DO UPDATE SET reserved = max(reserved, excluded.reserved)",
	    &stmt, "bus reserve") == -1)
		return -1;
	sqlite3_bind_int64(stmt, 1, upto);
	return store_step_done(st, stmt, "bus reserve");
}

/* ---- audit log ------------------------------------------------------------------- */

static int
store_audit_row(sqlite3_stmt *stmt, void *p)
{
	struct store_audit_entry	*a = p;

	a->id = sqlite3_column_int64(stmt, 0);
	if (store_col_text(stmt, 1, &a->ts) || store_col_text(stmt, 2, &a->actor) ||
	    store_col_text(stmt, 3, &a->action) ||
	    store_col_text(stmt, 4, &a->target) || store_col_text(stmt, 5, &a->data))
		return ENOMEM;
	return 0;
}

void
store_audit_entry_free(struct store_audit_entry *a)
{
	if (a == NULL)
		return;
	free(a->ts);
	free(a->actor);
	free(a->action);
	free(a->target);
	free(a->data);
	memset(a, 0, sizeof *a);
}

static void
store_audit_entry_free_v(void *p)
{
	store_audit_entry_free(p);
}

void
store_audit_list_free(struct store_audit_entry *v, size_t n)
{
	for (size_t i = 0; v != NULL && i < n; i++)
		store_audit_entry_free(&v[i]);
	free(v);
}

int
store_audit_append(struct store *st, const char *actor, const char *action,
    const char *target, const char *data_json)
{
	sqlite3_stmt	*stmt;
	char		 now[STORE_TIME_LEN];

	if (store_prepare(st, "INSERT INTO audit (ts, actor, action, target, data)"
	    " VALUES (?1, ?2, ?3, ?4, ?5)", &stmt, "audit append") == -1)
		return -1;
	store_now(now, sizeof now);
	store_bind_text(stmt, 1, now);
	store_bind_text(stmt, 2, actor);
	store_bind_text(stmt, 3, action);
	store_bind_text(stmt, 4, target);
	store_bind_text(stmt, 5, data_json);
	return store_step_done(st, stmt, "audit append");
}

int
store_audit_list(struct store *st, int64_t since_id, size_t limit,
    struct store_audit_entry **out, size_t *n)
{
	sqlite3_stmt	*stmt;

	if (store_prepare(st, "SELECT id, ts, actor, action, target, data FROM audit"
	    " WHERE id > ?1 ORDER BY id LIMIT ?2", &stmt, "audit list") == -1)
		return -1;
	sqlite3_bind_int64(stmt, 1, since_id);
	sqlite3_bind_int64(stmt, 2, store_limit(limit));
	return store_collect(st, stmt, sizeof **out, store_audit_row,
	    store_audit_entry_free_v, (void **)out, n, "audit list");
}
