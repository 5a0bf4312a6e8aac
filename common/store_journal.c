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
	sqlite3_stmt	*stmt;
	char		 now[STORE_TIME_LEN];

	if (store_prepare(st, "INSERT INTO journal (ts, run_id, kind, data)"
	    " VALUES (?1, ?2, ?3, ?4)", &stmt, "journal append") == -1)
		return -1;
	store_now(now, sizeof now);
	store_bind_text(stmt, 1, now);
	store_bind_text(stmt, 2, run_id);
	store_bind_text(stmt, 3, kind);
	store_bind_text(stmt, 4, data_json);
	return store_step_done(st, stmt, "journal append");
}

int
store_journal_list(struct store *st, const char *run_id, int64_t since_id,
    size_t limit, struct store_journal_entry **out, size_t *n)
{
	sqlite3_stmt	*stmt;

	if (store_prepare(st, "SELECT id, ts, run_id, kind, data FROM journal"
	    " WHERE (?1 IS NULL OR run_id = ?1) AND id > ?2 ORDER BY id LIMIT ?3",
	    &stmt, "journal list") == -1)
		return -1;
	store_bind_text(stmt, 1, run_id);
	sqlite3_bind_int64(stmt, 2, since_id);
	sqlite3_bind_int64(stmt, 3, store_limit(limit));
	return store_collect(st, stmt, sizeof **out, store_journal_row,
	    store_journal_entry_free_v, (void **)out, n, "journal list");
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
