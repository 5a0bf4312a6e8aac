/*
 * Who answers, per task (store.h, SPEC A1): the families a person answered "always
 * for this task" for (task_rules) and the risks the task asks about (task_approvals).
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

static int
store_task_rule_row(sqlite3_stmt *stmt, void *p)
{
	struct store_task_rule	*r = p;

	r->id = sqlite3_column_int64(stmt, 0);
	if (store_col_text(stmt, 1, &r->family) || store_col_text(stmt, 2, &r->max_risk) ||
	    store_col_text(stmt, 3, &r->approval_id) ||
	    store_col_text(stmt, 4, &r->created_by) ||
	    store_col_text(stmt, 5, &r->created_at) ||
	    store_col_text(stmt, 6, &r->kind) || store_col_text(stmt, 7, &r->source))
		return ENOMEM;
	return 0;
}

static void
store_task_rule_free_v(void *p)
{
	struct store_task_rule	*r = p;

	free(r->family);
	free(r->max_risk);
	free(r->approval_id);
	free(r->created_by);
	free(r->created_at);
	free(r->kind);
	free(r->source);
	memset(r, 0, sizeof *r);
}

int
store_task_rules_list(struct store *st, int64_t task_id, struct store_task_rule **out,
    size_t *n)
{
	sqlite3_stmt	*stmt;

	*out = NULL;
	*n = 0;
	if (store_prepare(st, "SELECT id, family, max_risk, approval_id, created_by,"
	    " created_at, kind, source FROM task_rules WHERE task_id = ?1 ORDER BY id", &stmt,
	    "task rules") == -1)
		return -1;
	sqlite3_bind_int64(stmt, 1, task_id);
	return store_collect(st, stmt, sizeof **out, store_task_rule_row,
	    store_task_rule_free_v, (void **)out, n, "task rules");
}

void
store_task_rules_free(struct store_task_rule *v, size_t n)
{
	for (size_t i = 0; v != NULL && i < n; i++)
		store_task_rule_free_v(&v[i]);
	free(v);
}

/* The task's rules other than family's: at most AUTOALLOW_RULES_MAX may be kept. */
static int
store_task_rule_room(struct store *st, int64_t task_id, const char *family)
{
	sqlite3_stmt	*stmt;
	int		 count;

	if (store_prepare(st, "SELECT count(*) FROM task_rules WHERE task_id = ?1 AND"
	    " family <> ?2", &stmt, "task rules count") == -1)
		return -1;
	sqlite3_bind_int64(stmt, 1, task_id);
	store_bind_text(stmt, 2, family);
	if (sqlite3_step(stmt) != SQLITE_ROW)
		return store_sqlfail(st, stmt, "task rules count");
	count = sqlite3_column_int(stmt, 0);
	sqlite3_finalize(stmt);
	if (count >= AUTOALLOW_RULES_MAX)
		return store_fail(st, ENOSPC, "task rule: the task has %d rules already "
		    "(the most it may keep)", AUTOALLOW_RULES_MAX);
	return 0;
}

/* 1 when the task always asks about family (an ask rule), 0 when not, -1 on error. */
static int
store_task_rule_is_ask(struct store *st, int64_t task_id, const char *family)
{
	sqlite3_stmt	*stmt;
	int		 rc;

	if (store_prepare(st, "SELECT 1 FROM task_rules WHERE task_id = ?1 AND family = ?2"
	    " AND kind = 'ask'", &stmt, "task rule kind") == -1)
		return -1;
	sqlite3_bind_int64(stmt, 1, task_id);
	store_bind_text(stmt, 2, family);
	rc = sqlite3_step(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_sqlfail(st, stmt, "task rule kind");
	sqlite3_finalize(stmt);
	return rc == SQLITE_ROW;
}

int
store_task_rule_add(struct store *st, int64_t task_id, const char *family,
    const char *max_risk, const char *approval_id, const char *actor)
{
	sqlite3_stmt	*stmt;
	char		 now[32];
	int		 rc;

	if (family == NULL || !autoallow_family_valid(family) || max_risk == NULL ||
	    floor_risk_parse(max_risk) == -1)
		return store_fail(st, EINVAL, "task rule: a family and a risk are needed");
	if ((rc = store_task_rule_is_ask(st, task_id, family)) == -1)
		return -1;
	if (rc == 1)
		return store_fail(st, EEXIST, "the task always asks about '%s' (an ask rule "
		    "imported from its repository): cwctl task unrule forgets it first",
		    family);
	if (store_task_rule_room(st, task_id, family) == -1)
		return -1;
	store_now(now, sizeof now);
	/* A family remembered twice keeps the higher of the two risks. */
	if (store_prepare(st, "INSERT INTO task_rules (task_id, family, max_risk,"
	    " approval_id, created_by, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"
	    " ON CONFLICT(task_id, family) DO UPDATE SET"
	    "  max_risk = CASE WHEN"
	    "   instr('ordinary outside_worktree fetch_exec destructive', excluded.max_risk) >"
	    "   instr('ordinary outside_worktree fetch_exec destructive', max_risk)"
	    "  THEN excluded.max_risk ELSE max_risk END WHERE kind = 'allow'", &stmt,
	    "task rule add") == -1)
		return -1;
	sqlite3_bind_int64(stmt, 1, task_id);
	store_bind_text(stmt, 2, family);
	store_bind_text(stmt, 3, max_risk);
	store_bind_text(stmt, 4, approval_id);
	store_bind_text(stmt, 5, actor != NULL ? actor : "unknown");
	store_bind_text(stmt, 6, now);
	return store_step_done(st, stmt, "task rule add");
}

int
store_task_rule_import(struct store *st, int64_t task_id, const char *kind,
    const char *family, const char *max_risk, const char *source, const char *actor,
    int *changed)
{
	sqlite3_stmt	*stmt;
	char		 now[32];
	int		 ask;

	*changed = 0;
	if (kind == NULL || (strcmp(kind, "allow") != 0 && strcmp(kind, "ask") != 0) ||
	    family == NULL || !autoallow_family_valid(family) || max_risk == NULL ||
	    floor_risk_parse(max_risk) == -1 || source == NULL || source[0] == '\0')
		return store_fail(st, EINVAL, "task rule import: a kind, a family, a risk "
		    "and a source are needed");
	ask = strcmp(kind, "ask") == 0;
	if (store_task_rule_room(st, task_id, family) == -1)
		return -1;
	store_now(now, sizeof now);
	/*
	 * An allow never replaces what is kept (a person's own answer, or an ask); an
	 * ask replaces an allow, and an ask kept already stays as it was.
	 */
	if (store_prepare(st, ask ?
	    "INSERT INTO task_rules (task_id, family, max_risk, created_by, created_at,"
	    " kind, source) VALUES (?1, ?2, ?3, ?4, ?5, 'ask', substr(?6, 1, 600))"
	    " ON CONFLICT(task_id, family) DO UPDATE SET kind = 'ask',"
	    "  source = excluded.source, created_by = excluded.created_by,"
	    "  created_at = excluded.created_at, approval_id = NULL WHERE kind = 'allow'" :
	    "INSERT INTO task_rules (task_id, family, max_risk, created_by, created_at,"
	    " kind, source) VALUES (?1, ?2, ?3, ?4, ?5, 'allow', substr(?6, 1, 600))"
	    " ON CONFLICT(task_id, family) DO NOTHING", &stmt, "task rule import") == -1)
		return -1;
	sqlite3_bind_int64(stmt, 1, task_id);
	store_bind_text(stmt, 2, family);
	store_bind_text(stmt, 3, max_risk);
	store_bind_text(stmt, 4, actor != NULL ? actor : "unknown");
	store_bind_text(stmt, 5, now);
	store_bind_text(stmt, 6, source);
	if (store_step_done(st, stmt, "task rule import") == -1)
		return -1;
	*changed = sqlite3_changes(st->db) > 0;
	return 0;
}

int
store_task_rule_remove(struct store *st, int64_t task_id, const char *family)
{
	sqlite3_stmt	*stmt;

	if (store_prepare(st, "DELETE FROM task_rules WHERE task_id = ?1 AND family = ?2",
	    &stmt, "task rule remove") == -1)
		return -1;
	sqlite3_bind_int64(stmt, 1, task_id);
	store_bind_text(stmt, 2, family);
	if (store_step_done(st, stmt, "task rule remove") == -1)
		return -1;
	if (sqlite3_changes(st->db) != 1)
		return store_fail(st, ENOENT, "the task has no rule '%s'", family);
	return 0;
}

int
store_task_ask_get(struct store *st, int64_t task_id, char **ask)
{
	sqlite3_stmt	*stmt;
	int		 rc;

	*ask = NULL;
	if (store_prepare(st, "SELECT ask FROM task_approvals WHERE task_id = ?1", &stmt,
	    "task approvals") == -1)
		return -1;
	sqlite3_bind_int64(stmt, 1, task_id);
	if ((rc = sqlite3_step(stmt)) == SQLITE_DONE) {
		sqlite3_finalize(stmt);
		return 0;
	}
	if (rc != SQLITE_ROW)
		return store_sqlfail(st, stmt, "task approvals");
	rc = store_col_text(stmt, 0, ask);
	sqlite3_finalize(stmt);
	return rc == 0 ? 0 : store_fail(st, ENOMEM, "task approvals: out of memory");
}

int
store_task_ask_set(struct store *st, int64_t task_id, const char *ask)
{
	sqlite3_stmt	*stmt;

	if (ask == NULL) {
		if (store_prepare(st, "DELETE FROM task_approvals WHERE task_id = ?1", &stmt,
		    "task approvals") == -1)
			return -1;
		sqlite3_bind_int64(stmt, 1, task_id);
		return store_step_done(st, stmt, "task approvals");
	}
	if (store_prepare(st, "INSERT INTO task_approvals (task_id, ask) VALUES (?1, ?2)"
	    " ON CONFLICT(task_id) DO UPDATE SET ask = ?2", &stmt, "task approvals set") ==
	    -1)
		return -1;
	sqlite3_bind_int64(stmt, 1, task_id);
	store_bind_text(stmt, 2, ask);
	return store_step_done(st, stmt, "task approvals set");
}
