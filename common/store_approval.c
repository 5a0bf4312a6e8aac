/*
 * The store's approvals table (common/store.h): one answer each, by compare-and-set.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "autoallow.h"
#include "floor.h"
#include "store.h"
#include "store_impl.h"

/* ---- approvals ------------------------------------------------------------------ */

#define APPROVAL_COLUMNS \
	"id, run_id, tool, input, state, message, answered_by, created_at," \
	" deadline, answered_at, risk, risk_rule, family"

static int
store_approval_row(sqlite3_stmt *stmt, void *p)
{
	struct store_approval	*a = p;
	int			 s;

	if ((s = store_approval_state_parse((const char *)
	    sqlite3_column_text(stmt, 4))) == -1)
		return EIO;
	a->state = s;
	if (store_col_text(stmt, 0, &a->id) || store_col_text(stmt, 1, &a->run_id) ||
	    store_col_text(stmt, 2, &a->tool) || store_col_text(stmt, 3, &a->input) ||
	    store_col_text(stmt, 5, &a->message) ||
	    store_col_text(stmt, 6, &a->answered_by) ||
	    store_col_text(stmt, 7, &a->created_at) ||
	    store_col_text(stmt, 8, &a->deadline) ||
	    store_col_text(stmt, 9, &a->answered_at) ||
	    store_col_text(stmt, 10, &a->risk) ||
	    store_col_text(stmt, 11, &a->risk_rule) ||
	    store_col_text(stmt, 12, &a->family))
		return ENOMEM;
	return 0;
}

void
store_approval_free(struct store_approval *a)
{
	if (a == NULL)
		return;
	free(a->id);
	free(a->run_id);
	free(a->tool);
	free(a->input);
	free(a->message);
	free(a->answered_by);
	free(a->created_at);
	free(a->deadline);
	free(a->answered_at);
	free(a->risk);
	free(a->risk_rule);
	free(a->family);
	memset(a, 0, sizeof *a);
}

static void
store_approval_free_v(void *p)
{
	store_approval_free(p);
}

void
store_approval_list_free(struct store_approval *v, size_t n)
{
	for (size_t i = 0; v != NULL && i < n; i++)
		store_approval_free(&v[i]);
	free(v);
}

int
store_approval_create(struct store *st, const char *id, const char *run_id,
    const char *tool, const char *input_json, int64_t deadline_ms)
{
	sqlite3_stmt	*stmt;
	char		 now[STORE_TIME_LEN], deadline[STORE_TIME_LEN];

	if (id == NULL || *id == '\0')
		return store_fail(st, EINVAL, "approval create: an id is required");
	if (store_prepare(st, "INSERT INTO approvals (id, run_id, tool, input, state,"
	    " created_at, deadline) VALUES (?1, ?2, ?3, ?4, 'pending', ?5, ?6)", &stmt,
	    "approval create") == -1)
		return -1;
	store_now(now, sizeof now);
	store_bind_text(stmt, 1, id);
	store_bind_text(stmt, 2, run_id);
	store_bind_text(stmt, 3, tool);
	store_bind_text(stmt, 4, input_json);
	store_bind_text(stmt, 5, now);
	if (deadline_ms > 0) {
		store_format_time(deadline_ms, deadline, sizeof deadline);
		store_bind_text(stmt, 6, deadline);
	} else
		sqlite3_bind_null(stmt, 6);
	return store_step_done(st, stmt, "approval create");
}

int
store_approval_set_risk(struct store *st, const char *id, const char *risk,
    const char *risk_rule)
{
	sqlite3_stmt	*stmt;

	if (risk == NULL || floor_risk_parse(risk) == -1)
		return store_fail(st, EINVAL, "approval %s: bad risk level", id);
	if (store_prepare(st, "UPDATE approvals SET risk = ?1, risk_rule = ?2"
	    " WHERE id = ?3", &stmt, "approval risk") == -1)
		return -1;
	store_bind_text(stmt, 1, risk);
	store_bind_text(stmt, 2, risk_rule);
	store_bind_text(stmt, 3, id);
	if (store_step_done(st, stmt, "approval risk") == -1)
		return -1;
	if (sqlite3_changes(st->db) != 1)
		return store_fail(st, ENOENT, "approval %s: no such approval", id);
	return 0;
}

int
store_approval_set_family(struct store *st, const char *id, const char *family)
{
	sqlite3_stmt	*stmt;

	if (family == NULL || !autoallow_family_valid(family))
		return store_fail(st, EINVAL, "approval %s: bad command family", id);
	if (store_prepare(st, "UPDATE approvals SET family = ?1 WHERE id = ?2", &stmt,
	    "approval family") == -1)
		return -1;
	store_bind_text(stmt, 1, family);
	store_bind_text(stmt, 2, id);
	if (store_step_done(st, stmt, "approval family") == -1)
		return -1;
	if (sqlite3_changes(st->db) != 1)
		return store_fail(st, ENOENT, "approval %s: no such approval", id);
	return 0;
}

int
store_approval_get(struct store *st, const char *id, struct store_approval *out)
{
	sqlite3_stmt	*stmt;

	if (store_prepare(st, "SELECT " APPROVAL_COLUMNS " FROM approvals"
	    " WHERE id = ?1", &stmt, "approval get") == -1)
		return -1;
	store_bind_text(stmt, 1, id);
	return store_get_one(st, stmt, sizeof *out, store_approval_row,
	    store_approval_free_v, out, "approval get");
}

/*
 * The compare-and-set: the WHERE clause, not a read before the write, decides who
 * answers. Two channels answering at once both run this UPDATE; sqlite serialises
 * them and exactly one sees a changed row.
 */
int
store_approval_answer(struct store *st, const char *id,
    enum store_approval_state new_state, const char *message,
    const char *answered_by)
{
	sqlite3_stmt	*stmt;
	char		 now[STORE_TIME_LEN];
	int		 rc;

	if (new_state == STORE_APPROVAL_PENDING ||
	    store_approval_state_name(new_state) == NULL)
		return store_fail(st, EINVAL, "approval %s: cannot answer with state %d",
		    id, (int)new_state);
	if (store_prepare(st, "UPDATE approvals SET state = ?1, message = ?2,"
	    " answered_by = ?3, answered_at = ?4 WHERE id = ?5 AND state = 'pending'",
	    &stmt, "approval answer") == -1)
		return -1;
	store_now(now, sizeof now);
	store_bind_text(stmt, 1, store_approval_state_name(new_state));
	store_bind_text(stmt, 2, message);
	store_bind_text(stmt, 3, answered_by);
	store_bind_text(stmt, 4, now);
	store_bind_text(stmt, 5, id);
	if (store_step_done(st, stmt, "approval answer") == -1)
		return -1;
	if (sqlite3_changes(st->db) == 1)
		return 1;
	rc = store_exists(st, "SELECT 1 FROM approvals WHERE id = ?1", id,
	    "approval answer");
	if (rc == -1)
		return -1;
	if (rc == 0)
		return store_fail(st, ENOENT, "approval %s: no such approval", id);
	return 0;
}

int
store_approval_expire_run(struct store *st, const char *run_id)
{
	sqlite3_stmt	*stmt;
	char		 now[STORE_TIME_LEN];

	if (store_prepare(st, "UPDATE approvals SET state = 'expired',"
	    " answered_by = 'clockworkd', answered_at = ?1"
	    " WHERE run_id = ?2 AND state = 'pending'", &stmt,
	    "approval expire") == -1)
		return -1;
	store_now(now, sizeof now);
	store_bind_text(stmt, 1, now);
	store_bind_text(stmt, 2, run_id);
	if (store_step_done(st, stmt, "approval expire") == -1)
		return -1;
	return sqlite3_changes(st->db);
}

int
store_approval_count_run(struct store *st, const char *run_id)
{
	sqlite3_stmt	*stmt;
	int		 n;

	if (store_prepare(st, "SELECT count(*) FROM approvals WHERE run_id = ?1", &stmt,
	    "approval count") == -1)
		return -1;
	store_bind_text(stmt, 1, run_id);
	if (sqlite3_step(stmt) != SQLITE_ROW)
		return store_sqlfail(st, stmt, "approval count");
	n = sqlite3_column_int(stmt, 0);
	sqlite3_finalize(stmt);
	return n;
}

int
store_approval_list_pending(struct store *st, const char *run_id,
    struct store_approval **out, size_t *n)
{
	sqlite3_stmt	*stmt;

	if (store_prepare(st, "SELECT " APPROVAL_COLUMNS " FROM approvals"
	    " WHERE state = 'pending' AND (?1 IS NULL OR run_id = ?1)"
	    " ORDER BY created_at, rowid", &stmt, "approval list") == -1)
		return -1;
	store_bind_text(stmt, 1, run_id);
	return store_collect(st, stmt, sizeof **out, store_approval_row,
	    store_approval_free_v, (void **)out, n, "approval list");
}
