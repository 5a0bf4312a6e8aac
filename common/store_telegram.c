/*
 * The store's Telegram tables (common/store.h): the poller's state (the update
 * offset) and the message sent for each approval, so it can be edited when the
 * approval is answered, expires or its run ends, and is never sent twice.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "store.h"
#include "store_impl.h"

int
store_telegram_state_get(struct store *st, const char *key, char **value)
{
	sqlite3_stmt	*stmt;
	int		 rc;

	*value = NULL;
	if (store_prepare(st, "SELECT value FROM telegram_state WHERE key = ?1", &stmt,
	    "telegram state") == -1)
		return -1;
	store_bind_text(stmt, 1, key);
	if ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		if (store_col_text(stmt, 0, value) != 0) {
			sqlite3_finalize(stmt);
			return store_fail(st, ENOMEM, "telegram state: out of memory");
		}
		sqlite3_finalize(stmt);
		return 1;
	}
	if (rc != SQLITE_DONE)
		return store_sqlfail(st, stmt, "telegram state");
	sqlite3_finalize(stmt);
	return 0;
}

int
store_telegram_state_set(struct store *st, const char *key, const char *value)
{
	sqlite3_stmt	*stmt;

	if (store_prepare(st, "INSERT INTO telegram_state (key, value) VALUES (?1, ?2)"
	    " ON CONFLICT(key) DO UPDATE SET value = excluded.value", &stmt,
	    "telegram state") == -1)
		return -1;
	store_bind_text(stmt, 1, key);
	store_bind_text(stmt, 2, value);
	return store_step_done(st, stmt, "telegram state");
}

#define TELEGRAM_ITEM_SELECT \
	"SELECT a.id, a.run_id, t.name, a.tool, a.input, a.deadline, a.state," \
	" a.answered_by, t.telegram_allowed_user_ids, m.shown," \
	" COALESCE(t.telegram_chat_id, 0), COALESCE(m.chat_id, 0)," \
	" COALESCE(m.message_id, 0), a.risk, a.risk_rule," \
	" (SELECT count(*) FROM approvals o WHERE o.run_id = a.run_id" \
	"   AND o.state = 'pending' AND o.id <> a.id)" \
	" FROM approvals a JOIN runs r ON r.id = a.run_id" \
	" JOIN tasks t ON t.id = r.task_id" \
	" LEFT JOIN telegram_messages m ON m.approval_id = a.id"

static int
store_telegram_row(sqlite3_stmt *stmt, void *p)
{
	struct store_telegram_item	*it = p;

	it->task_chat_id = sqlite3_column_int64(stmt, 10);
	it->chat_id = sqlite3_column_int64(stmt, 11);
	it->message_id = sqlite3_column_int64(stmt, 12);
	it->run_others = sqlite3_column_int64(stmt, 15);
	if (store_col_text(stmt, 0, &it->approval_id) ||
	    store_col_text(stmt, 1, &it->run_id) || store_col_text(stmt, 2, &it->task) ||
	    store_col_text(stmt, 3, &it->tool) || store_col_text(stmt, 4, &it->input) ||
	    store_col_text(stmt, 5, &it->deadline) ||
	    store_col_text(stmt, 6, &it->state) ||
	    store_col_text(stmt, 7, &it->answered_by) ||
	    store_col_text(stmt, 8, &it->allowed_user_ids) ||
	    store_col_text(stmt, 9, &it->shown) ||
	    store_col_text(stmt, 13, &it->risk) ||
	    store_col_text(stmt, 14, &it->risk_rule))
		return ENOMEM;
	return 0;
}

void
store_telegram_item_free(struct store_telegram_item *it)
{
	if (it == NULL)
		return;
	free(it->approval_id);
	free(it->run_id);
	free(it->task);
	free(it->tool);
	free(it->input);
	free(it->deadline);
	free(it->state);
	free(it->answered_by);
	free(it->allowed_user_ids);
	free(it->shown);
	free(it->risk);
	free(it->risk_rule);
	memset(it, 0, sizeof *it);
}

static void
store_telegram_item_free_v(void *p)
{
	store_telegram_item_free(p);
}

void
store_telegram_item_list_free(struct store_telegram_item *v, size_t n)
{
	for (size_t i = 0; v != NULL && i < n; i++)
		store_telegram_item_free(&v[i]);
	free(v);
}

int
store_telegram_due(struct store *st, size_t limit, struct store_telegram_item **out,
    size_t *n)
{
	sqlite3_stmt	*stmt;

	if (store_prepare(st, TELEGRAM_ITEM_SELECT
	    " WHERE (m.approval_id IS NULL AND a.state = 'pending'"
	    "   AND t.telegram_chat_id IS NOT NULL"
	    /*
	     * One live message per run: while one of the run's pending approvals is
	     * in the chat, the others wait for it to be answered (the message counts
	     * them), so a burst of asks is one message, not one per call.
	     */
	    "   AND NOT EXISTS (SELECT 1 FROM approvals o JOIN telegram_messages mo"
	    "     ON mo.approval_id = o.id WHERE o.run_id = a.run_id"
	    "     AND o.state = 'pending'))"
	    " OR (m.approval_id IS NOT NULL AND m.shown <> a.state)"
	    " ORDER BY a.created_at, a.rowid LIMIT ?1", &stmt, "telegram due") == -1)
		return -1;
	sqlite3_bind_int64(stmt, 1, store_limit(limit));
	return store_collect(st, stmt, sizeof **out, store_telegram_row,
	    store_telegram_item_free_v, (void **)out, n, "telegram due");
}

int
store_telegram_item_get(struct store *st, const char *approval_id,
    struct store_telegram_item *out)
{
	sqlite3_stmt	*stmt;

	if (store_prepare(st, TELEGRAM_ITEM_SELECT " WHERE a.id = ?1", &stmt,
	    "telegram item") == -1)
		return -1;
	store_bind_text(stmt, 1, approval_id);
	return store_get_one(st, stmt, sizeof *out, store_telegram_row,
	    store_telegram_item_free_v, out, "telegram item");
}

int
store_telegram_message_add(struct store *st, const char *approval_id, int64_t chat_id,
    int64_t message_id)
{
	sqlite3_stmt	*stmt;
	char		 now[STORE_TIME_LEN];

	if (store_prepare(st, "INSERT OR REPLACE INTO telegram_messages (approval_id,"
	    " chat_id, message_id, shown, created_at) VALUES (?1, ?2, ?3, 'pending', ?4)",
	    &stmt, "telegram message") == -1)
		return -1;
	store_now(now, sizeof now);
	store_bind_text(stmt, 1, approval_id);
	sqlite3_bind_int64(stmt, 2, chat_id);
	sqlite3_bind_int64(stmt, 3, message_id);
	store_bind_text(stmt, 4, now);
	return store_step_done(st, stmt, "telegram message");
}

int
store_telegram_message_shown(struct store *st, const char *approval_id,
    const char *shown)
{
	sqlite3_stmt	*stmt;

	if (store_prepare(st, "UPDATE telegram_messages SET shown = ?2"
	    " WHERE approval_id = ?1", &stmt, "telegram message") == -1)
		return -1;
	store_bind_text(stmt, 1, approval_id);
	store_bind_text(stmt, 2, shown);
	return store_step_done(st, stmt, "telegram message");
}

/* ---- run notices (SPEC U3) ------------------------------------------------------------ */

static void
store_telegram_notice_free_v(void *p)
{
	struct store_telegram_notice	*it = p;

	free(it->run_id);
	free(it->task);
	free(it->report);
	memset(it, 0, sizeof *it);
}

static int
store_telegram_notice_row(sqlite3_stmt *stmt, void *p)
{
	struct store_telegram_notice	*it = p;

	it->chat_id = sqlite3_column_int64(stmt, 2);
	it->notify_end = sqlite3_column_int(stmt, 4);
	if (store_col_text(stmt, 0, &it->run_id) || store_col_text(stmt, 1, &it->task) ||
	    store_col_text(stmt, 3, &it->report))
		return ENOMEM;
	return 0;
}

void
store_telegram_notice_list_free(struct store_telegram_notice *v, size_t n)
{
	for (size_t i = 0; v != NULL && i < n; i++)
		store_telegram_notice_free_v(&v[i]);
	free(v);
}

int
store_telegram_notices_due(struct store *st, size_t limit,
    struct store_telegram_notice **out, size_t *n)
{
	sqlite3_stmt	*stmt;

	/*
	 * An ended run (its report is stored once it has ended and its work has been
	 * imported) of a task with a chat: announced when the task says so (notify_end),
	 * and always when its work needs a person's eye.
	 */
	if (store_prepare(st, "SELECT r.id, t.name, t.telegram_chat_id, r.report,"
	    " t.notify_end"
	    " FROM runs r JOIN tasks t ON t.id = r.task_id"
	    " LEFT JOIN telegram_run_notices n ON n.run_id = r.id"
	    " WHERE n.run_id IS NULL AND t.telegram_chat_id IS NOT NULL"
	    "   AND r.report IS NOT NULL"
	    "   AND (t.notify_end = 1"
	    "     OR COALESCE(json_array_length(r.report, '$.git.automation'), 0) > 0"
	    "     OR json_extract(r.report, '$.git.quarantine') IS NOT NULL)"
	    " ORDER BY r.rowid LIMIT ?1", &stmt, "telegram notices") == -1)
		return -1;
	sqlite3_bind_int64(stmt, 1, store_limit(limit));
	return store_collect(st, stmt, sizeof **out, store_telegram_notice_row,
	    store_telegram_notice_free_v, (void **)out, n, "telegram notices");
}

int
store_telegram_notice_add(struct store *st, const char *run_id, int64_t chat_id,
    int64_t message_id)
{
	sqlite3_stmt	*stmt;
	char		 now[STORE_TIME_LEN];

	if (store_prepare(st, "INSERT OR REPLACE INTO telegram_run_notices (run_id,"
	    " chat_id, message_id, created_at) VALUES (?1, ?2, ?3, ?4)", &stmt,
	    "telegram notice") == -1)
		return -1;
	store_now(now, sizeof now);
	store_bind_text(stmt, 1, run_id);
	sqlite3_bind_int64(stmt, 2, chat_id);
	sqlite3_bind_int64(stmt, 3, message_id);
	store_bind_text(stmt, 4, now);
	return store_step_done(st, stmt, "telegram notice");
}
