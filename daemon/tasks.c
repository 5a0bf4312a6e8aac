/*
 * Task documents: what the API accepts and what it shows. A document is checked
 * field by field and refused whole with the first bad field named; unknown keys are
 * refused too, so a misspelt "permision_mode" is an error rather than a silent default.
 * There is no bypass permission mode and no way to spell one.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "engines.h"
#include "json.h"
#include "paths.h"

static const char *const tasks_keys[] = {
	"name", "repo", "prompt", "engine", "permission_mode", "budget_dollars",
	"budget_turns", "budget_seconds", "schedule", "enabled", "limit_processes",
	"limit_memory_mb", "delivery",
};


/*
 * Names appear in paths and branch names: letters, digits, '.', '_', '-', not
 * starting with '.' or '-', no "..", not ending in ".lock".
 */
int
tasks_name_valid(const char *s)
{
	size_t	len = strlen(s);

	if (len == 0 || len > DAEMON_TASK_NAME_MAX || s[0] == '.' || s[0] == '-')
		return 0;
	if (strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
	    != len)
		return 0;
	if (strstr(s, "..") != NULL || (len >= 5 && strcmp(s + len - 5, ".lock") == 0))
		return 0;
	return 1;
}

static int
tasks_dup(char **dst, const char *src)
{
	free(*dst);
	*dst = NULL;
	if (src != NULL && (*dst = strdup(src)) == NULL)
		return -1;
	return 0;
}

#define TASKS_FAIL(f, ...) do {						\
	snprintf(field, fieldlen, "%s", (f));					\
	snprintf(err, errlen, __VA_ARGS__);					\
	goto fail;								\
} while (0)

#define TASKS_TELEGRAM_ID_MAX		9007199254740991.0	/* 2^53 - 1 */
#define TASKS_TELEGRAM_USERS_MAX	64

/* A Telegram id: a whole number in the range a double carries exactly. */
static int
tasks_telegram_id(const cJSON *v, int64_t *out)
{
	if (!cJSON_IsNumber(v) || v->valuedouble != (double)(int64_t)v->valuedouble ||
	    v->valuedouble == 0 || v->valuedouble > TASKS_TELEGRAM_ID_MAX ||
	    v->valuedouble < -TASKS_TELEGRAM_ID_MAX)
		return -1;
	*out = (int64_t)v->valuedouble;
	return 0;
}

/*
 * delivery: {"telegram": {"chat_id": N, "allowed_user_ids": [N, ...]}}; null (or
 * "telegram": null) ends Telegram delivery for the task. In a group chat, a press
 * counts only from a user on the list, so a group without one is refused here rather
 * than left with buttons that can never work.
 */
static int
tasks_delivery(const cJSON *v, struct store_task *out, char *field, size_t fieldlen,
    char *err, size_t errlen)
{
	const cJSON	*tg, *it, *ids;
	cJSON		*arr = NULL;
	char		*text;
	int64_t		 chat = 0, uid;
	int		 n = 0;

	if (cJSON_IsNull(v) || (cJSON_IsObject(v) &&
	    cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(v, "telegram")))) {
		out->telegram_chat_id = 0;
		free(out->telegram_allowed_user_ids);
		out->telegram_allowed_user_ids = NULL;
		return 0;
	}
	if (!cJSON_IsObject(v))
		TASKS_FAIL("delivery", "must be an object or null");
	cJSON_ArrayForEach(it, v)
		if (it->string == NULL || strcmp(it->string, "telegram") != 0)
			TASKS_FAIL("delivery", "unknown field '%.64s'",
			    it->string != NULL ? it->string : "?");
	if ((tg = cJSON_GetObjectItemCaseSensitive(v, "telegram")) == NULL)
		return 0;
	if (!cJSON_IsObject(tg))
		TASKS_FAIL("delivery.telegram", "must be an object or null");
	cJSON_ArrayForEach(it, tg)
		if (it->string == NULL || (strcmp(it->string, "chat_id") != 0 &&
		    strcmp(it->string, "allowed_user_ids") != 0))
			TASKS_FAIL("delivery.telegram", "unknown field '%.64s'",
			    it->string != NULL ? it->string : "?");
	if (tasks_telegram_id(cJSON_GetObjectItemCaseSensitive(tg, "chat_id"),
	    &chat) == -1)
		TASKS_FAIL("delivery.telegram.chat_id", "must be a non-zero whole number "
		    "(a Telegram chat id)");
	ids = cJSON_GetObjectItemCaseSensitive(tg, "allowed_user_ids");
	if (ids != NULL && !cJSON_IsArray(ids))
		TASKS_FAIL("delivery.telegram.allowed_user_ids", "must be a list of user ids");
	if ((arr = cJSON_CreateArray()) == NULL)
		TASKS_FAIL("delivery.telegram", "out of memory");
	cJSON_ArrayForEach(it, ids) {
		if (++n > TASKS_TELEGRAM_USERS_MAX) {
			cJSON_Delete(arr);
			TASKS_FAIL("delivery.telegram.allowed_user_ids", "at most %d users",
			    TASKS_TELEGRAM_USERS_MAX);
		}
		if (tasks_telegram_id(it, &uid) == -1 || uid < 0) {
			cJSON_Delete(arr);
			TASKS_FAIL("delivery.telegram.allowed_user_ids", "entry %d: must be a "
			    "positive whole number (a Telegram user id)", n - 1);
		}
		cJSON_AddItemToArray(arr, cJSON_CreateNumber((double)uid));
	}
	/* Negative ids are groups and supergroups: they need the list (SECURITY.md). */
	if (chat < 0 && n == 0) {
		cJSON_Delete(arr);
		TASKS_FAIL("delivery.telegram.allowed_user_ids", "a group chat (negative "
		    "chat_id) needs the user ids allowed to answer");
	}
	text = cJSON_PrintUnformatted(arr);
	cJSON_Delete(arr);
	if (text == NULL)
		TASKS_FAIL("delivery.telegram", "out of memory");
	free(out->telegram_allowed_user_ids);
	out->telegram_allowed_user_ids = n > 0 ? strdup(text) : NULL;
	cJSON_free(text);
	out->telegram_chat_id = chat;
	return 0;
fail:
	return -1;
}


/*
 * Fill out from the JSON object in over base (NULL: a new task, with the config's
 * defaults). Returns 0, or -1 with field naming the bad field and err saying why.
 */
int
tasks_from_json(struct daemon *d, const cJSON *in, const struct store_task *base,
    struct store_task *out, char *field, size_t fieldlen, char *err, size_t errlen)
{
	const cJSON	*it, *v;
	const char	*s;
	char		 canon[PATH_MAX], cerr[160];
	struct cron	 cron;
	double		 num;
	int		 known, i;

	memset(out, 0, sizeof *out);
	field[0] = '\0';
	if (!cJSON_IsObject(in)) {
		snprintf(field, fieldlen, "(body)");
		snprintf(err, errlen, "expected a JSON object");
		return -1;
	}
	cJSON_ArrayForEach(it, in) {
		known = 0;
		for (size_t k = 0; k < sizeof tasks_keys / sizeof tasks_keys[0]; k++)
			if (it->string != NULL && strcmp(it->string, tasks_keys[k]) == 0)
				known = 1;
		if (!known)
			TASKS_FAIL(it->string != NULL ? it->string : "?",
			    "unknown field '%.64s'", it->string != NULL ? it->string : "?");
	}

	if (base != NULL) {
		out->id = base->id;
		if (tasks_dup(&out->name, base->name) == -1 ||
		    tasks_dup(&out->repo, base->repo) == -1 ||
		    tasks_dup(&out->prompt, base->prompt) == -1 ||
		    tasks_dup(&out->engine, base->engine) == -1 ||
		    tasks_dup(&out->permission_mode, base->permission_mode) == -1 ||
		    tasks_dup(&out->schedule, base->schedule) == -1)
			TASKS_FAIL("(body)", "out of memory");
		out->budget_dollars = base->budget_dollars;
		out->budget_turns = base->budget_turns;
		out->budget_seconds = base->budget_seconds;
		out->limit_processes = base->limit_processes;
		out->limit_memory_mb = base->limit_memory_mb;
		out->telegram_chat_id = base->telegram_chat_id;
		if (tasks_dup(&out->telegram_allowed_user_ids,
		    base->telegram_allowed_user_ids) == -1)
			TASKS_FAIL("(body)", "out of memory");
		out->enabled = base->enabled;
	} else {
		if (tasks_dup(&out->engine, "command") == -1 ||
		    tasks_dup(&out->permission_mode, "plan") == -1 ||
		    tasks_dup(&out->schedule, "queued") == -1)
			TASKS_FAIL("(body)", "out of memory");
		out->budget_dollars = d != NULL ? d->cfg.budget_dollars : CONFIG_DEFAULT_DOLLARS;
		out->budget_turns = d != NULL ? d->cfg.budget_turns : CONFIG_DEFAULT_TURNS;
		out->budget_seconds = d != NULL ? d->cfg.budget_seconds : CONFIG_DEFAULT_SECONDS;
		out->enabled = 1;
	}

	if ((v = cJSON_GetObjectItemCaseSensitive(in, "name")) != NULL) {
		if (base != NULL)
			TASKS_FAIL("name", "a task cannot be renamed");
		if (!cJSON_IsString(v) || !tasks_name_valid(v->valuestring))
			TASKS_FAIL("name", "must be 1-%d of A-Z a-z 0-9 . _ -, not starting with "
			    "'.' or '-'", DAEMON_TASK_NAME_MAX);
		if (tasks_dup(&out->name, v->valuestring) == -1)
			TASKS_FAIL("name", "out of memory");
	} else if (base == NULL)
		TASKS_FAIL("name", "is required");

	if ((v = cJSON_GetObjectItemCaseSensitive(in, "repo")) != NULL) {
		if (cJSON_IsNull(v) || (cJSON_IsString(v) && v->valuestring[0] == '\0')) {
			if (tasks_dup(&out->repo, NULL) == -1)
				TASKS_FAIL("repo", "out of memory");
		} else if (!cJSON_IsString(v) || v->valuestring[0] != '/')
			TASKS_FAIL("repo", "must be an absolute path to a git repository, or null "
			    "for a scratch directory");
		else if (paths_canonical(v->valuestring, canon, sizeof canon) == -1)
			TASKS_FAIL("repo", "%.200s: %s", v->valuestring, strerror(errno));
		else if (!worktree_is_repo(canon))
			TASKS_FAIL("repo", "%.200s is not a git repository (its top directory)",
			    canon);
		else if (tasks_dup(&out->repo, canon) == -1)
			TASKS_FAIL("repo", "out of memory");
	}

	if ((v = cJSON_GetObjectItemCaseSensitive(in, "prompt")) != NULL) {
		if (!cJSON_IsString(v) || v->valuestring[0] == '\0' ||
		    strlen(v->valuestring) > DAEMON_PROMPT_MAX)
			TASKS_FAIL("prompt", "must be a non-empty string of at most %d bytes",
			    DAEMON_PROMPT_MAX);
		if (tasks_dup(&out->prompt, v->valuestring) == -1)
			TASKS_FAIL("prompt", "out of memory");
	} else if (base == NULL)
		TASKS_FAIL("prompt", "is required");

	if ((v = cJSON_GetObjectItemCaseSensitive(in, "engine")) != NULL) {
		if (!cJSON_IsString(v) || engines_runnable(v->valuestring) == NULL)
			TASKS_FAIL("engine", "must be one of: %s", engines_names(1));
		if (tasks_dup(&out->engine, v->valuestring) == -1)
			TASKS_FAIL("engine", "out of memory");
	}

	if ((v = cJSON_GetObjectItemCaseSensitive(in, "permission_mode")) != NULL) {
		s = cJSON_IsString(v) ? v->valuestring : NULL;
		if (s == NULL || (strcmp(s, "plan") != 0 && strcmp(s, "acceptEdits") != 0))
			TASKS_FAIL("permission_mode", "must be \"plan\" or \"acceptEdits\" "
			    "(there is no bypass mode)");
		if (tasks_dup(&out->permission_mode, s) == -1)
			TASKS_FAIL("permission_mode", "out of memory");
	}

	if ((v = cJSON_GetObjectItemCaseSensitive(in, "budget_dollars")) != NULL) {
		if (json_get_number(in, "budget_dollars", &num) == -1 || num < 0 || num > 1000)
			TASKS_FAIL("budget_dollars", "must be a number from 0 to 1000");
		out->budget_dollars = num;
	}
	if ((v = cJSON_GetObjectItemCaseSensitive(in, "budget_turns")) != NULL) {
		if (json_get_int(in, "budget_turns", &i) == -1 || i < 1 || i > 100000)
			TASKS_FAIL("budget_turns", "must be a whole number from 1 to 100000");
		out->budget_turns = i;
	}
	if ((v = cJSON_GetObjectItemCaseSensitive(in, "budget_seconds")) != NULL) {
		if (json_get_int(in, "budget_seconds", &i) == -1 || i < 1 || i > 7 * 86400)
			TASKS_FAIL("budget_seconds", "must be a whole number from 1 to 604800");
		out->budget_seconds = i;
	}
	/* Resource limits (SPEC R2): 0 takes the configuration's at each run's start. */
	if ((v = cJSON_GetObjectItemCaseSensitive(in, "limit_processes")) != NULL) {
		if (json_get_int(in, "limit_processes", &i) == -1 || i < 0 || i > 4194304 ||
		    (i > 0 && i < CONFIG_MIN_LIMIT_PROCESSES))
			TASKS_FAIL("limit_processes", "must be 0 (the configuration's) or a "
			    "whole number from %d to 4194304", CONFIG_MIN_LIMIT_PROCESSES);
		out->limit_processes = i;
	}
	if ((v = cJSON_GetObjectItemCaseSensitive(in, "limit_memory_mb")) != NULL) {
		if (json_get_int(in, "limit_memory_mb", &i) == -1 || i < 0 || i > 16777216 ||
		    (i > 0 && i < CONFIG_MIN_LIMIT_MEMORY_MB))
			TASKS_FAIL("limit_memory_mb", "must be 0 (the configuration's) or a "
			    "whole number of MiB from %d to 16777216", CONFIG_MIN_LIMIT_MEMORY_MB);
		out->limit_memory_mb = i;
	}

	if ((v = cJSON_GetObjectItemCaseSensitive(in, "schedule")) != NULL) {
		if (!cJSON_IsString(v))
			TASKS_FAIL("schedule", "must be \"queued\" or a cron expression");
		if (strcmp(v->valuestring, "queued") != 0 &&
		    cron_parse(v->valuestring, &cron, cerr, sizeof cerr) == -1)
			TASKS_FAIL("schedule", "must be \"queued\" or a cron expression: %s", cerr);
		if (tasks_dup(&out->schedule, v->valuestring) == -1)
			TASKS_FAIL("schedule", "out of memory");
	}

	if ((v = cJSON_GetObjectItemCaseSensitive(in, "enabled")) != NULL) {
		if (!cJSON_IsBool(v))
			TASKS_FAIL("enabled", "must be true or false");
		out->enabled = cJSON_IsTrue(v);
	}

	if ((v = cJSON_GetObjectItemCaseSensitive(in, "delivery")) != NULL &&
	    tasks_delivery(v, out, field, fieldlen, err, errlen) == -1)
		goto fail;
	return 0;
fail:
	store_task_free(out);
	memset(out, 0, sizeof *out);
	return -1;
}

cJSON *
tasks_to_json(const struct store_task *t)
{
	cJSON	*o = cJSON_CreateObject();

	if (o == NULL)
		return NULL;
	cJSON_AddNumberToObject(o, "id", (double)t->id);
	json_add_string(o, "name", t->name);
	json_add_string(o, "repo", t->repo);
	json_add_string(o, "prompt", t->prompt);
	json_add_string(o, "engine", t->engine);
	json_add_string(o, "permission_mode", t->permission_mode);
	cJSON_AddNumberToObject(o, "budget_dollars", t->budget_dollars);
	cJSON_AddNumberToObject(o, "budget_turns", t->budget_turns);
	cJSON_AddNumberToObject(o, "budget_seconds", t->budget_seconds);
	cJSON_AddNumberToObject(o, "limit_processes", t->limit_processes);
	cJSON_AddNumberToObject(o, "limit_memory_mb", t->limit_memory_mb);
	json_add_string(o, "schedule", t->schedule);
	cJSON_AddBoolToObject(o, "enabled", t->enabled);
	if (t->telegram_chat_id != 0) {
		cJSON	*dl = cJSON_AddObjectToObject(o, "delivery");
		cJSON	*tg = cJSON_AddObjectToObject(dl, "telegram");
		cJSON	*ids = t->telegram_allowed_user_ids != NULL ?
			    cJSON_Parse(t->telegram_allowed_user_ids) : NULL;

		cJSON_AddNumberToObject(tg, "chat_id", (double)t->telegram_chat_id);
		cJSON_AddItemToObject(tg, "allowed_user_ids", ids != NULL ? ids :
		    cJSON_CreateArray());
	}
	json_add_string(o, "created_at", t->created_at);
	json_add_string(o, "updated_at", t->updated_at);
	return o;
}
