/*
 * A task's network policy (store.h, SPEC N1): one row in task_network per task that
 * has one; the rules are a JSON array of "host:port" strings.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <sqlite3.h>

#include "store.h"
#include "store_impl.h"

int
store_task_network_get(struct store *st, int64_t task_id, int *ask, struct strlist *allow)
{
	sqlite3_stmt	*stmt;
	const cJSON	*e;
	cJSON		*arr;
	int		 rc;

	*ask = 0;
	if (store_prepare(st, "SELECT ask, allow FROM task_network WHERE task_id = ?1",
	    &stmt, "task network") == -1)
		return -1;
	sqlite3_bind_int64(stmt, 1, task_id);
	if ((rc = sqlite3_step(stmt)) == SQLITE_DONE) {
		sqlite3_finalize(stmt);
		return 0;
	}
	if (rc != SQLITE_ROW)
		return store_sqlfail(st, stmt, "task network");
	*ask = sqlite3_column_int(stmt, 0);
	arr = cJSON_Parse((const char *)sqlite3_column_text(stmt, 1));
	sqlite3_finalize(stmt);
	cJSON_ArrayForEach(e, arr)
		if (cJSON_IsString(e) && strlist_add_unique(allow, e->valuestring) == -1) {
			cJSON_Delete(arr);
			return store_fail(st, ENOMEM, "task network: out of memory");
		}
	cJSON_Delete(arr);
	return 0;
}

int
store_task_network_set(struct store *st, int64_t task_id, int ask,
    const struct strlist *allow)
{
	sqlite3_stmt	*stmt;
	cJSON		*arr;
	char		*text;
	int		 rc;

	if ((arr = cJSON_CreateArray()) == NULL)
		return store_fail(st, ENOMEM, "task network: out of memory");
	for (size_t i = 0; allow != NULL && i < allow->n; i++)
		cJSON_AddItemToArray(arr, cJSON_CreateString(allow->v[i]));
	text = cJSON_PrintUnformatted(arr);
	cJSON_Delete(arr);
	if (text == NULL)
		return store_fail(st, ENOMEM, "task network: out of memory");
	if (store_prepare(st, "INSERT INTO task_network (task_id, ask, allow)"
	    " VALUES (?1, ?2, ?3) ON CONFLICT(task_id) DO UPDATE SET ask = ?2, allow = ?3",
	    &stmt, "task network set") == -1) {
		cJSON_free(text);
		return -1;
	}
	sqlite3_bind_int64(stmt, 1, task_id);
	sqlite3_bind_int(stmt, 2, ask ? 1 : 0);
	store_bind_text(stmt, 3, text);
	rc = store_step_done(st, stmt, "task network set");
	cJSON_free(text);
	return rc;
}

int
store_task_network_allow(struct store *st, int64_t task_id, const char *rule)
{
	struct strlist	 allow = { 0 };
	int		 ask, rc;

	if (store_task_network_get(st, task_id, &ask, &allow) == -1)
		return -1;
	if (strlist_add_unique(&allow, rule) == -1) {
		strlist_free(&allow);
		return store_fail(st, ENOMEM, "task network: out of memory");
	}
	rc = store_task_network_set(st, task_id, ask, &allow);
	strlist_free(&allow);
	return rc;
}
