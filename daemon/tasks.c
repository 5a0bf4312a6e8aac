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

#include <git2.h>

#include "config.h"
#include "cron.h"
#include "daemon.h"
#include "enginepick.h"
#include "engines.h"
#include "jobspec.h"
#include "json.h"
#include "keys.h"
#include "paths.h"
#include "prices.h"
#include "store.h"
#include "tasks.h"
#include "worktree.h"

static const char *const tasks_keys[] = {
	"name", "repo", "prompt", "engine", "permission_mode", "budget_dollars",
	"budget_turns", "budget_seconds", "schedule", "enabled", "limit_processes",
	"limit_memory_mb", "delivery", "base", "key", "budget_wait", "max_dollars",
	"keep_build_outputs", "notify_end",
};


/* A task's name is a job file's name: jobspec_name_valid holds the one set of rules. */
_Static_assert(DAEMON_TASK_NAME_MAX == JOBSPEC_MAX_NAME, "task and job names differ");

/* A branch name by git's rules, short (no "refs/heads/"), not starting with '-'. */
int
tasks_branch_valid(const char *s)
{
	char	ref[320];
	int	valid = 0;

	if (*s == '\0' || *s == '-' || strlen(s) > 255)
		return 0;
	snprintf(ref, sizeof ref, "refs/heads/%s", s);
	worktree_init();
	return git_reference_name_is_valid(&valid, ref) == 0 && valid;
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

/* Is name in the key index? (The index only: no key is read for this.) */
static int
tasks_key_known(struct daemon *d, const char *name)
{
	char		 err[256];
	cJSON		*a;
	const cJSON	*it;
	const char	*n;
	int		 found = 0;

	if ((a = keys_list(d->home, err, sizeof err)) == NULL)
		return 0;
	cJSON_ArrayForEach(it, a)
		if ((n = json_get_string(it, "name")) != NULL && strcmp(n, name) == 0)
			found = 1;
	cJSON_Delete(a);
	return found;
}

/*
 * byok picked with no key named: 0 and the only stored key; 1 when none is stored;
 * -1 with why naming them when there are several (a choice that is the person's).
 */
static int
tasks_default_key(struct daemon *d, const char *how, char *key, size_t keylen,
    char *why, size_t whylen)
{
	char		 err[256], names[256] = "";
	cJSON		*a = d != NULL ? keys_list(d->home, err, sizeof err) : NULL;
	const cJSON	*it;
	const char	*n;
	size_t		 len = 0;
	int		 count = 0;

	cJSON_ArrayForEach(it, a)
		if ((n = json_get_string(it, "name")) != NULL) {
			if (count++ == 0)
				snprintf(key, keylen, "%s", n);
			if (len < sizeof names)
				len += (size_t)snprintf(names + len, sizeof names - len,
				    "%s%s", len > 0 ? ", " : "", n);
		}
	cJSON_Delete(a);
	if (count == 1)
		return 0;
	key[0] = '\0';
	if (count == 0) {
		snprintf(why, whylen, "%s, but no provider key is stored: cwctl key add "
		    "NAME --provider anthropic, then --key NAME", how);
		return 1;
	}
	snprintf(why, whylen, "%s, and several provider keys are stored (%s): name one "
	    "with --key NAME", how, names);
	return -1;
}

int
tasks_default_engine(struct daemon *d, const char *key_name, char *engine,
    size_t enginelen, char *key, size_t keylen, char *why, size_t whylen)
{
	const char	*conf = d != NULL && d->config_path[0] != '\0' ? d->config_path :
			    "config.yaml";
	const char	*path = getenv("PATH"), *e;
	char		 found[PATH_MAX], how[768];

	key[0] = '\0';
	if (key_name != NULL) {
		snprintf(engine, enginelen, "byok");
		snprintf(why, whylen, "the task names a provider key (--key %s), which "
		    "only byok takes", key_name);
		return 0;
	}
	if (d != NULL && d->cfg.engine_default != NULL) {
		snprintf(engine, enginelen, "%s", d->cfg.engine_default);
		snprintf(how, sizeof how, "engines.default in %.600s", conf);
		if (strcmp(engine, "byok") == 0 &&
		    tasks_default_key(d, how, key, keylen, why, whylen) != 0)
			return -1;
		snprintf(why, whylen, "%s%s%s", how, key[0] != '\0' ? ", with the only "
		    "stored key, " : "", key);
		return 0;
	}
	if ((e = enginepick_on_path(path, found, sizeof found)) != NULL) {
		snprintf(engine, enginelen, "%s", e);
		snprintf(why, whylen, "found %.400s on the daemon's PATH (engines.default "
		    "is not set in %.300s; the order is %s, then byok)", found, conf,
		    enginepick_order());
		return 0;
	}
	snprintf(how, sizeof how, "none of %s is on the daemon's PATH (%.200s) "
	    "and engines.default is not set in %.300s", enginepick_order(),
	    path != NULL ? path : "unset", conf);
	switch (tasks_default_key(d, how, key, keylen, why, whylen)) {
	case 0:
		snprintf(engine, enginelen, "byok");
		snprintf(why, whylen, "%s; a provider key is stored, so Clockwork's own "
		    "agent runs with it (%s)", how, key);
		return 0;
	case -1:
		engine[0] = '\0';
		return -1;
	}
	engine[0] = '\0';
	snprintf(why, whylen, "no engine to default to: none of %s is on the daemon's "
	    "PATH (%.200s), engines.default is not set in %.300s, and no provider key is "
	    "stored for byok. Install one (scripts/setup-engines, or npm install -g "
	    "@anthropic-ai/claude-code), set engines.default, store a key (cwctl key "
	    "add), or name the engine: --engine E, or --command LINE for a shell line",
	    enginepick_order(), path != NULL ? path : "unset", conf);
	return -1;
}

/* The model a byok task's key runs (its own, else engines.byok.model), or NULL. */
static const char *
tasks_byok_model(struct daemon *d, const char *key_name)
{
	static char			 model[257];
	const struct config_engine	*ce;
	char				 err[256];
	cJSON				*a;
	const cJSON			*it;
	const char			*n, *m;

	if (d == NULL || key_name == NULL)
		return NULL;
	model[0] = '\0';
	if ((a = keys_list(d->home, err, sizeof err)) != NULL) {
		cJSON_ArrayForEach(it, a)
			if ((n = json_get_string(it, "name")) != NULL &&
			    strcmp(n, key_name) == 0 &&
			    (m = json_get_string(it, "model")) != NULL)
				snprintf(model, sizeof model, "%s", m);
		cJSON_Delete(a);
	}
	if (model[0] == '\0' && (ce = config_engine(&d->cfg, "byok")) != NULL &&
	    ce->model != NULL)
		snprintf(model, sizeof model, "%s", ce->model);
	return model[0] != '\0' ? model : NULL;
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
	char		 canon[PATH_MAX], cerr[160], why[PATH_MAX + 128];
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
		    tasks_dup(&out->schedule, base->schedule) == -1 ||
		    tasks_dup(&out->base, base->base) == -1)
			TASKS_FAIL("(body)", "out of memory");
		out->budget_dollars = base->budget_dollars;
		out->budget_turns = base->budget_turns;
		out->budget_seconds = base->budget_seconds;
		out->budget_wait = base->budget_wait;
		out->max_dollars = base->max_dollars;
		out->limit_processes = base->limit_processes;
		out->limit_memory_mb = base->limit_memory_mb;
		out->keep_build_outputs = base->keep_build_outputs;
		out->notify_end = base->notify_end;
		out->telegram_chat_id = base->telegram_chat_id;
		if (tasks_dup(&out->telegram_allowed_user_ids,
		    base->telegram_allowed_user_ids) == -1 ||
		    tasks_dup(&out->key_name, base->key_name) == -1)
			TASKS_FAIL("(body)", "out of memory");
		out->enabled = base->enabled;
	} else {
		if (tasks_dup(&out->schedule, "queued") == -1)
			TASKS_FAIL("(body)", "out of memory");
		out->budget_dollars = d != NULL ? d->cfg.budget_dollars : CONFIG_DEFAULT_DOLLARS;
		out->budget_turns = d != NULL ? d->cfg.budget_turns : CONFIG_DEFAULT_TURNS;
		out->budget_seconds = d != NULL ? d->cfg.budget_seconds : CONFIG_DEFAULT_SECONDS;
		out->budget_wait = -1;	/* the configuration's, at each run's start */
		out->max_dollars = -1;
		out->enabled = 1;
		out->notify_end = 1;
	}

	if ((v = cJSON_GetObjectItemCaseSensitive(in, "name")) != NULL) {
		if (base != NULL)
			TASKS_FAIL("name", "a task cannot be renamed");
		if (!cJSON_IsString(v) || !jobspec_name_valid(v->valuestring))
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
		else if (worktree_check_repo(canon, why, sizeof why) == -1)
			TASKS_FAIL("repo", "%s", why);
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
	} else if (base == NULL) {
		/* Agent-first (issue 23): a shell line is asked for, never defaulted to. */
		char	eng[32], key[KEYS_NAME_MAX + 1], dwhy[1024];

		v = cJSON_GetObjectItemCaseSensitive(in, "key");
		if (tasks_default_engine(d, cJSON_IsString(v) ? v->valuestring : NULL, eng,
		    sizeof eng, key, sizeof key, dwhy, sizeof dwhy) == -1)
			TASKS_FAIL("engine", "%s", dwhy);
		if (tasks_dup(&out->engine, eng) == -1 ||
		    (key[0] != '\0' && tasks_dup(&out->key_name, key) == -1))
			TASKS_FAIL("engine", "out of memory");
	}

	if ((v = cJSON_GetObjectItemCaseSensitive(in, "permission_mode")) != NULL) {
		s = cJSON_IsString(v) ? v->valuestring : NULL;
		if (s == NULL || (strcmp(s, "plan") != 0 && strcmp(s, "acceptEdits") != 0))
			TASKS_FAIL("permission_mode", "must be \"plan\" or \"acceptEdits\" "
			    "(there is no bypass mode)");
		if (tasks_dup(&out->permission_mode, s) == -1)
			TASKS_FAIL("permission_mode", "out of memory");
	} else if (base == NULL) {
		/*
		 * An agent edits by default (acceptEdits: every engine's editing mode), with
		 * the approvals the risk of each call asks for; a command has no mode.
		 */
		if (tasks_dup(&out->permission_mode, engines_find(out->engine)->caps &
		    ENGINE_TAKES_PROMPT ? "acceptEdits" : "plan") == -1)
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
	/* The budget pause (issue 23): null takes the configuration's at each run's start. */
	if ((v = cJSON_GetObjectItemCaseSensitive(in, "budget_wait")) != NULL) {
		if (cJSON_IsNull(v))
			out->budget_wait = -1;
		else if (json_get_int(in, "budget_wait", &i) == -1 || (i != 0 &&
		    (i < CONFIG_BUDGET_WAIT_MIN || i > CONFIG_BUDGET_WAIT_MAX)))
			TASKS_FAIL("budget_wait", "must be 0 (a budget ends the run at once), "
			    "null (the configuration's budgets.wait) or a whole number of "
			    "seconds from %d to %d", CONFIG_BUDGET_WAIT_MIN,
			    CONFIG_BUDGET_WAIT_MAX);
		else
			out->budget_wait = i;
	}
	if ((v = cJSON_GetObjectItemCaseSensitive(in, "max_dollars")) != NULL) {
		if (cJSON_IsNull(v))
			out->max_dollars = -1;
		else if (json_get_number(in, "max_dollars", &num) == -1 || num < 0 ||
		    num > CONFIG_MAX_DOLLARS_MAX)
			TASKS_FAIL("max_dollars", "must be 0 (no ceiling), null (the "
			    "configuration's budgets.max_dollars) or a number up to %d",
			    CONFIG_MAX_DOLLARS_MAX);
		else
			out->max_dollars = num;
	}
	{
		double	ceil = out->max_dollars >= 0 ? out->max_dollars : d != NULL ?
			    d->cfg.max_dollars : 0;

		if (ceil > 0 && out->budget_dollars > ceil)
			TASKS_FAIL(out->max_dollars >= 0 ? "max_dollars" : "budget_dollars",
			    "the dollar budget ($%.2f) is above the hard ceiling max_dollars "
			    "($%.2f)%s", out->budget_dollars, ceil, out->max_dollars >= 0 ? "" :
			    " of the configuration");
	}
	/* Resource limits (SPEC R2): 0 takes the configuration's at each run's start. */
	if ((v = cJSON_GetObjectItemCaseSensitive(in, "limit_processes")) != NULL) {
		if (json_get_int(in, "limit_processes", &i) == -1 || i < 0 || i > 4194304 ||
		    (i > 0 && i < CONFIG_MIN_LIMIT_PROCESSES))
			TASKS_FAIL("limit_processes", "must be 0 (the configuration's) or a "
			    "whole number from %d to 4194304", CONFIG_MIN_LIMIT_PROCESSES);
		/* The configuration's limit is the most a task may ask for. */
		if (d != NULL && d->cfg.limit_processes > 0 && i > d->cfg.limit_processes)
			TASKS_FAIL("limit_processes", "%d is more than the configuration's "
			    "limits.processes (%d)", i, d->cfg.limit_processes);
		out->limit_processes = i;
	}
	if ((v = cJSON_GetObjectItemCaseSensitive(in, "limit_memory_mb")) != NULL) {
		if (json_get_int(in, "limit_memory_mb", &i) == -1 || i < 0 || i > 16777216 ||
		    (i > 0 && i < CONFIG_MIN_LIMIT_MEMORY_MB))
			TASKS_FAIL("limit_memory_mb", "must be 0 (the configuration's) or a "
			    "whole number of MiB from %d to 16777216", CONFIG_MIN_LIMIT_MEMORY_MB);
		if (d != NULL && d->cfg.limit_memory_mb > 0 && i > d->cfg.limit_memory_mb)
			TASKS_FAIL("limit_memory_mb", "%d MiB is more than the configuration's "
			    "limits.memory_mb (%d)", i, d->cfg.limit_memory_mb);
		out->limit_memory_mb = i;
	}

	/* The seal commits build outputs too (runner/sealskip.c): the repository's choice. */
	if ((v = cJSON_GetObjectItemCaseSensitive(in, "keep_build_outputs")) != NULL) {
		if (!cJSON_IsBool(v))
			TASKS_FAIL("keep_build_outputs", "must be true or false");
		out->keep_build_outputs = cJSON_IsTrue(v);
	}
	/* Each run's end announced (desktop, the task's chat): notify.c, telegram.c. */
	if ((v = cJSON_GetObjectItemCaseSensitive(in, "notify_end")) != NULL) {
		if (!cJSON_IsBool(v))
			TASKS_FAIL("notify_end", "must be true or false");
		out->notify_end = cJSON_IsTrue(v);
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

	/* The branch a run starts from; null: the repository's default branch. */
	if ((v = cJSON_GetObjectItemCaseSensitive(in, "base")) != NULL) {
		if (cJSON_IsNull(v) || (cJSON_IsString(v) && v->valuestring[0] == '\0')) {
			if (tasks_dup(&out->base, NULL) == -1)
				TASKS_FAIL("base", "out of memory");
		} else if (!cJSON_IsString(v) || !tasks_branch_valid(v->valuestring))
			TASKS_FAIL("base", "must be a branch name (git's rules), or null for "
			    "the repository's default branch");
		else if (tasks_dup(&out->base, v->valuestring) == -1)
			TASKS_FAIL("base", "out of memory");
	}

	if ((v = cJSON_GetObjectItemCaseSensitive(in, "enabled")) != NULL) {
		if (!cJSON_IsBool(v))
			TASKS_FAIL("enabled", "must be true or false");
		out->enabled = cJSON_IsTrue(v);
	}

	if ((v = cJSON_GetObjectItemCaseSensitive(in, "delivery")) != NULL &&
	    tasks_delivery(v, out, field, fieldlen, err, errlen) == -1)
		goto fail;

	/* byok: the name of a provider key (cwctl key); the key never comes here. */
	if ((v = cJSON_GetObjectItemCaseSensitive(in, "key")) != NULL) {
		if (cJSON_IsNull(v)) {
			if (tasks_dup(&out->key_name, NULL) == -1)
				TASKS_FAIL("key", "out of memory");
		} else if (!cJSON_IsString(v) || !keys_name_valid(v->valuestring))
			TASKS_FAIL("key", "must be the name of a key (cwctl key list): 1-%d "
			    "of a-z 0-9 _ -", KEYS_NAME_MAX);
		else if (d != NULL && !tasks_key_known(d, v->valuestring))
			TASKS_FAIL("key", "no key named %s (cwctl key list; cwctl key add)",
			    v->valuestring);
		else if (tasks_dup(&out->key_name, v->valuestring) == -1)
			TASKS_FAIL("key", "out of memory");
	}
	if (strcmp(out->engine, "byok") == 0 && out->key_name == NULL)
		TASKS_FAIL("key", "the byok engine needs a provider key: cwctl key add NAME "
		    "--provider anthropic, then --key NAME");
	/*
	 * A dollar budget asked for a byok model with no price cannot hold: say so now.
	 * (The configuration's default budget is not asked for: such a run goes on with
	 * its cost unknown, and its report says the dollar budget was refused.)
	 */
	if (strcmp(out->engine, "byok") == 0 && out->budget_dollars > 0 &&
	    cJSON_GetObjectItemCaseSensitive(in, "budget_dollars") != NULL &&
	    (s = tasks_byok_model(d, out->key_name)) != NULL &&
	    prices_find(&d->cfg, s, NULL) == NULL)
		TASKS_FAIL("budget_dollars", "model '%.200s' (key %s) has no price, so a "
		    "dollar budget cannot hold: add prices.%.200s (input and output, $ per "
		    "million tokens) to %s, or leave the dollar budget out (0)", s,
		    out->key_name, s, d->config_path[0] != '\0' ? d->config_path :
		    "config.yaml");
	if (strcmp(out->engine, "byok") != 0 && out->key_name != NULL)
		TASKS_FAIL("key", "only the byok engine takes a key by name");
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
	if (t->key_name != NULL)
		json_add_string(o, "key", t->key_name);
	json_add_string(o, "permission_mode", t->permission_mode);
	cJSON_AddNumberToObject(o, "budget_dollars", t->budget_dollars);
	cJSON_AddNumberToObject(o, "budget_turns", t->budget_turns);
	cJSON_AddNumberToObject(o, "budget_seconds", t->budget_seconds);
	if (t->budget_wait >= 0)
		cJSON_AddNumberToObject(o, "budget_wait", t->budget_wait);
	else
		cJSON_AddNullToObject(o, "budget_wait");
	if (t->max_dollars >= 0)
		cJSON_AddNumberToObject(o, "max_dollars", t->max_dollars);
	else
		cJSON_AddNullToObject(o, "max_dollars");
	cJSON_AddNumberToObject(o, "limit_processes", t->limit_processes);
	cJSON_AddNumberToObject(o, "limit_memory_mb", t->limit_memory_mb);
	cJSON_AddBoolToObject(o, "keep_build_outputs", t->keep_build_outputs);
	cJSON_AddBoolToObject(o, "notify_end", t->notify_end);
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
	json_add_string(o, "base", t->base);
	cJSON_AddBoolToObject(o, "archived", t->archived);
	cJSON_AddBoolToObject(o, "imported", t->source != NULL);
	cJSON_AddBoolToObject(o, "needs_review", t->needs_review);
	return o;
}
