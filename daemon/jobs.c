/*
 * Work that arrives with someone else's commit (SPEC W2): a repository's
 * .clockwork/jobs.{json,yaml} and imported templates become tasks that are
 * untrusted by construction.
 *
 *  - The file is read from the default branch as committed (jobsgit.c) and parsed
 *    by a schema that names only the job fields (common/jobspec.c).
 *  - Every imported task gets the same conservative defaults (JOBS_*: acceptEdits,
 *    $2 / 50 turns / 3600 s, queued, the engine a task without --engine gets),
 *    whatever the file said,
 *    and is created disabled with needs_review set and a security preview
 *    (preview.c) stored beside it.
 *  - Only jobs_enable (cwctl jobs enable, the Inbox's button) turns needs_review
 *    off; the task API refuses to enable such a task, and both are audited.
 *  - A later commit that changes a job's definition disables its task again, with
 *    the old definition in the task's history and a new preview listing the
 *    changes; a job gone from the file is disabled and marked removed.
 *  - Discovery is all or nothing: one transaction, and any error (unreadable file,
 *    malformed input, a bad schedule) leaves every task as it was.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cron.h"
#include "daemon.h"
#include "jobpins.h"
#include "jobs.h"
#include "jobsgit.h"
#include "jobspec.h"
#include "journal.h"
#include "json.h"
#include "keys.h"
#include "log.h"
#include "parsechild.h"
#include "paths.h"
#include "preview.h"
#include "sha256.h"
#include "store.h"
#include "strlist.h"
#include "tasks.h"
#include "worktree.h"

cJSON *
jobs_definition(const struct store_task *t)
{
	cJSON	*o = cJSON_CreateObject();

	json_add_string(o, "name", t->name);
	json_add_string(o, "repo", t->repo);
	json_add_string(o, "prompt", t->prompt);
	json_add_string(o, "engine", t->engine);
	json_add_string(o, "permission_mode", t->permission_mode);
	cJSON_AddNumberToObject(o, "budget_dollars", t->budget_dollars);
	cJSON_AddNumberToObject(o, "budget_turns", t->budget_turns);
	cJSON_AddNumberToObject(o, "budget_seconds", t->budget_seconds);
	json_add_string(o, "schedule", t->schedule);
	json_add_string(o, "base", t->base);
	cJSON_AddBoolToObject(o, "enabled", t->enabled);
	return o;
}

/*
 * The hash of what a job says (all five fields) and of the objects its prompt names
 * (pins, jobpins.c), hex: equal text and equal files, equal hash. The person's review
 * covers both: a changed ./nightly.sh is a changed definition.
 */
static void
jobs_job_hash(const struct jobspec_job *j, const cJSON *pins, char hex[SHA256_HEX])
{
	cJSON	*o = cJSON_CreateObject(), *a;
	char	*s;

	json_add_string(o, "name", j->name);
	json_add_string(o, "prompt", j->prompt);
	json_add_string(o, "description", j->description);
	json_add_string(o, "schedule", j->schedule);
	a = cJSON_AddArrayToObject(o, "context");
	for (size_t i = 0; i < j->n_context; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(j->context[i]));
	if (pins != NULL && cJSON_GetArraySize(pins) > 0)
		cJSON_AddItemToObject(o, "pins", cJSON_Duplicate(pins, 1));
	s = cJSON_PrintUnformatted(o);
	sha256_hex(s != NULL ? s : "", s != NULL ? strlen(s) : 0, hex);
	cJSON_free(s);
	cJSON_Delete(o);
}

/* The prompt the task runs: the job's, and the context paths it names after it. */
static char *
jobs_prompt(const struct jobspec_job *j)
{
	char	*p, *q;

	if ((p = strdup(j->prompt)) == NULL)
		return NULL;
	for (size_t i = 0; i < j->n_context; i++) {
		if (asprintf(&q, "%s%s%s", p, i == 0 ? "\n\nContext (paths in the "
		    "repository): " : ", ", j->context[i]) == -1) {
			free(p);
			return NULL;
		}
		free(p);
		p = q;
	}
	return p;
}

/*
 * A new imported task: the defaults, whatever the file said. Its engine is the one a
 * task added without --engine gets (tasks_default_engine): the file has no say in it.
 */
static int
jobs_task_defaults(struct daemon *d, struct store_task *t, const char *name,
    const char *repo, char *prompt, char *err, size_t errlen)
{
	char	engine[32], key[KEYS_NAME_MAX + 1], why[1024];

	memset(t, 0, sizeof *t);
	t->prompt = prompt;
	if (tasks_default_engine(d, NULL, engine, sizeof engine, key, sizeof key, why,
	    sizeof why) == -1) {
		snprintf(err, errlen, "job %s: %s", name, why);
		return -1;
	}
	if ((t->name = strdup(name)) == NULL ||
	    (repo != NULL && (t->repo = strdup(repo)) == NULL) ||
	    (t->engine = strdup(engine)) == NULL ||
	    (key[0] != '\0' && (t->key_name = strdup(key)) == NULL) ||
	    (t->permission_mode = strdup(JOBS_MODE)) == NULL ||
	    (t->schedule = strdup("queued")) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	t->budget_dollars = JOBS_DOLLARS;
	t->budget_turns = JOBS_TURNS;
	t->budget_seconds = JOBS_SECONDS;
	t->budget_wait = -1;	/* the configuration's */
	t->max_dollars = -1;
	t->enabled = 0;
	t->needs_review = 1;
	t->notify_end = 1;
	return 0;
}

static cJSON *
jobs_source(const char *kind, const char *repo, const char *path, const char *commit,
    const char *branch, const struct jobspec_job *j, const char *hash, const cJSON *pins)
{
	cJSON	*o = cJSON_CreateObject();

	json_add_string(o, "kind", kind);
	json_add_string(o, "repo", repo);
	json_add_string(o, "path", path);
	json_add_string(o, "commit", commit);
	json_add_string(o, "branch", branch);
	json_add_string(o, "job", j->name);
	json_add_string(o, "description", j->description);
	json_add_string(o, "schedule", j->schedule);
	json_add_string(o, "definition_hash", hash);
	cJSON_AddBoolToObject(o, "removed", 0);
	if (pins != NULL)
		cJSON_AddItemToObject(o, "pins", cJSON_Duplicate(pins, 1));
	return o;
}

/*
 * The evaluations left to the discovery or import in progress (JOBS_PREVIEW_EVALS at
 * its start): one call at a time on the daemon's one thread.
 */
static size_t	jobs_budget;

static cJSON *
jobs_preview(struct daemon *d, const struct store_task *t, const struct jobspec *js,
    const struct jobspec_job *j, const cJSON *source, const cJSON *previous)
{
	struct preview_input	 in;
	cJSON			*p;

	memset(&in, 0, sizeof in);
	in.name = t->name;
	in.prompt = t->prompt;
	in.description = j->description;
	in.proposed_schedule = j->schedule;
	in.context = (const char *const *)j->context;
	in.n_context = j->n_context;
	in.ignored = (const char *const *)js->ignored;
	in.n_ignored = js->n_ignored;
	in.ignored_more = js->ignored_more;
	in.task = t;
	in.source = source;
	in.previous = previous;
	in.budget = &jobs_budget;
	if ((p = preview_build(d, &in)) != NULL) {
		const cJSON	*pins = cJSON_GetObjectItemCaseSensitive(source, "pins");

		json_add_string(p, "definition_hash", json_get_string(source,
		    "definition_hash"));
		/* What the prompt points at is part of what the person approves. */
		if (pins != NULL)
			cJSON_AddItemToObject(p, "pinned_files", cJSON_Duplicate(pins, 1));
	}
	return p;
}

static char *
jobs_print(const cJSON *o)
{
	return o != NULL ? cJSON_PrintUnformatted(o) : NULL;
}

/* Store a new imported task; name taken is the caller's check. */
static int
jobs_create(struct daemon *d, const struct jobspec *js, const struct jobspec_job *j,
    const char *repo, cJSON *source, char *err, size_t errlen)
{
	struct store_task	 t;
	char			*prompt;
	cJSON			*pv;
	int			 rc = -1;

	if ((prompt = jobs_prompt(j)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (jobs_task_defaults(d, &t, j->name, repo, prompt, err, errlen) == -1) {
		/* t owns the prompt from the start; freeing t frees it. */
		store_task_free(&t);
		return -1;
	}
	pv = jobs_preview(d, &t, js, j, source, NULL);
	t.source = jobs_print(source);
	t.preview = jobs_print(pv);
	if (t.source == NULL || t.preview == NULL)
		snprintf(err, errlen, "out of memory");
	else if (store_task_add(d->store, &t, NULL) == -1)
		snprintf(err, errlen, "%s", store_errmsg(d->store));
	else
		rc = 0;
	cJSON_Delete(pv);
	store_task_free(&t);
	return rc;
}

/* A changed job: its task takes the new prompt, disabled, with a new preview. */
static int
jobs_redefine(struct daemon *d, struct store_task *t, const struct jobspec *js,
    const struct jobspec_job *j, cJSON *source, const char *actor, char *err,
    size_t errlen)
{
	cJSON	*prev, *pv, *ps;
	char	*def, *prompt, *src = NULL, *pre = NULL;
	int	 rc = -1;

	prev = jobs_definition(t);
	if ((ps = json_parse(t->source, strlen(t->source))) != NULL) {
		/* What the file said before, for the preview's list of changes. */
		json_add_string(prev, "description", json_get_string(ps, "description"));
		json_add_string(prev, "proposed_schedule", json_get_string(ps, "schedule"));
		cJSON_Delete(ps);
	}
	def = jobs_print(prev);
	if (def == NULL || (prompt = jobs_prompt(j)) == NULL) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (store_task_history_add(d->store, t->id, actor, def) == -1) {
		free(prompt);
		snprintf(err, errlen, "%s", store_errmsg(d->store));
		goto out;
	}
	free(t->prompt);
	t->prompt = prompt;
	t->enabled = 0;
	if (store_task_update(d->store, t) == -1) {
		snprintf(err, errlen, "%s", store_errmsg(d->store));
		goto out;
	}
	pv = jobs_preview(d, t, js, j, source, prev);
	json_add_string(pv, "description_before", json_get_string(prev, "description"));
	if ((ps = json_parse(t->source, strlen(t->source))) != NULL) {
		const cJSON	*was = cJSON_GetObjectItemCaseSensitive(ps, "pins");
		char		*changed = jobpins_changed(was,
				    cJSON_GetObjectItemCaseSensitive(source, "pins"));

		if (changed != NULL)
			json_add_string(pv, "pins_changed", changed);
		free(changed);
		cJSON_Delete(ps);
	}
	src = jobs_print(source);
	pre = jobs_print(pv);
	cJSON_Delete(pv);
	if (src == NULL || pre == NULL ||
	    store_task_set_review(d->store, t->id, src, pre, 1, 0) == -1) {
		snprintf(err, errlen, "%s", store_errmsg(d->store));
		goto out;
	}
	rc = 0;
out:
	cJSON_free(def);
	cJSON_free(src);
	cJSON_free(pre);
	cJSON_Delete(prev);
	return rc;
}

/* Parse every file read; one error anywhere refuses them all. */
static int
jobs_parse_all(const char *repo, const struct jobsgit_result *g, struct jobspec *js,
    char *err, size_t errlen)
{
	struct cron	 cron;
	char		 name[PATH_MAX + 80], cerr[160];

	for (size_t i = 0; i < g->n_files; i++) {
		snprintf(name, sizeof name, "%s: %s at %.12s", repo, g->files[i].path,
		    g->commit);
		/* Someone else's commit: parsed by cw-parse (parsechild.h). */
		if (parsechild_jobspec(name, g->files[i].text, g->files[i].len,
		    jobspec_format_of(g->files[i].path), &js[i], err, errlen) == -1)
			return -1;
		for (size_t k = 0; k < js[i].n_jobs; k++) {
			if (js[i].jobs[k].schedule != NULL &&
			    cron_parse(js[i].jobs[k].schedule, &cron, cerr, sizeof cerr) == -1) {
				snprintf(err, errlen, "%s: jobs[%zu].schedule: not a cron "
				    "expression: %s", name, k, cerr);
				return -1;
			}
			for (size_t p = 0; p < i; p++)
				for (size_t q = 0; q < js[p].n_jobs; q++)
					if (strcmp(js[p].jobs[q].name, js[i].jobs[k].name) == 0) {
						snprintf(err, errlen, "%s: jobs[%zu].name: '%s' is "
						    "defined in %s too", name, k,
						    js[i].jobs[k].name, g->files[p].path);
						return -1;
					}
		}
	}
	return 0;
}

static int
jobs_from_repo(const struct store_task *t, const char *repo, cJSON **src)
{
	const char	*r;

	*src = NULL;
	if (t->source == NULL || (*src = json_parse(t->source, strlen(t->source))) == NULL)
		return 0;
	r = json_get_string(*src, "repo");
	if (r != NULL && strcmp(r, repo) == 0 && json_get_string(*src, "kind") != NULL &&
	    strcmp(json_get_string(*src, "kind"), "repo") == 0)
		return 1;
	cJSON_Delete(*src);
	*src = NULL;
	return 0;
}

/* Tasks from repo whose job is no longer in the file: disabled and marked. */
static int
jobs_mark_removed(struct daemon *d, const char *repo, const struct jobspec *js,
    size_t nfiles, const char *commit, cJSON *removed, char *err, size_t errlen)
{
	struct store_task	*v;
	cJSON			*src;
	const char		*job;
	char			*s;
	size_t			 n;
	int			 found, was, rc = 0;

	if (store_task_list(d->store, &v, &n) == -1) {
		snprintf(err, errlen, "%s", store_errmsg(d->store));
		return -1;
	}
	for (size_t i = 0; i < n && rc == 0; i++) {
		if (!jobs_from_repo(&v[i], repo, &src))
			continue;
		job = json_get_string(src, "job");
		found = 0;
		for (size_t f = 0; f < nfiles; f++)
			for (size_t k = 0; k < js[f].n_jobs; k++)
				if (job != NULL && strcmp(js[f].jobs[k].name, job) == 0)
					found = 1;
		was = 0;
		(void)json_get_bool(src, "removed", &was);
		if (!found && !was) {
			cJSON_ReplaceItemInObject(src, "removed", cJSON_CreateBool(1));
			json_add_string(src, "removed_at_commit", commit);
			if ((s = jobs_print(src)) == NULL ||
			    store_task_set_review(d->store, v[i].id, s, NULL, 1, 0) == -1) {
				snprintf(err, errlen, "%s", store_errmsg(d->store));
				rc = -1;
			} else
				cJSON_AddItemToArray(removed, cJSON_CreateString(v[i].name));
			cJSON_free(s);
		}
		cJSON_Delete(src);
	}
	store_task_list_free(v, n);
	return rc;
}

/* One job against the store: created, changed, unchanged or a name conflict. */
static int
jobs_sync_one(struct daemon *d, const char *repo, const struct jobsgit_result *g,
    const struct jobsgit_file *f, const struct jobspec *js, const struct jobspec_job *j,
    const char *actor, cJSON *res, char *err, size_t errlen)
{
	struct store_task	 t;
	cJSON			*source, *old = NULL, *pins = NULL;
	char			 hash[SHA256_HEX], *s;
	const char		*oh;
	int			 rc, removed = 0;

	if ((s = jobs_prompt(j)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	rc = jobpins_at(repo, g->commit, s, &pins, err, errlen);
	free(s);
	if (rc == -1)
		return -1;
	jobs_job_hash(j, pins, hash);
	source = jobs_source("repo", repo, f->path, g->commit, g->branch, j, hash, pins);
	cJSON_Delete(pins);
	if ((rc = store_task_get_by_name(d->store, j->name, &t)) == -1) {
		snprintf(err, errlen, "%s", store_errmsg(d->store));
		cJSON_Delete(source);
		return -1;
	}
	if (rc == 0) {
		rc = jobs_create(d, js, j, repo, source, err, errlen);
		if (rc == 0)
			cJSON_AddItemToArray(cJSON_GetObjectItem(res, "created"),
			    cJSON_CreateString(j->name));
		cJSON_Delete(source);
		return rc;
	}
	if (!jobs_from_repo(&t, repo, &old)) {
		/* A task of the person's own (or another source) keeps its name. */
		cJSON_AddItemToArray(cJSON_GetObjectItem(res, "conflicts"),
		    cJSON_CreateString(j->name));
		store_task_free(&t);
		cJSON_Delete(source);
		return 0;
	}
	oh = json_get_string(old, "definition_hash");
	(void)json_get_bool(old, "removed", &removed);
	if (oh != NULL && strcmp(oh, hash) == 0 && !removed) {
		/* The same definition at a newer commit: only the link moves on. */
		rc = 0;
		if ((s = jobs_print(source)) == NULL ||
		    store_task_set_review(d->store, t.id, s, NULL, t.needs_review,
		    t.enabled) == -1) {
			snprintf(err, errlen, "%s", store_errmsg(d->store));
			rc = -1;
		}
		cJSON_free(s);
		if (rc == 0)
			cJSON_AddItemToArray(cJSON_GetObjectItem(res, "unchanged"),
			    cJSON_CreateString(j->name));
	} else {
		rc = jobs_redefine(d, &t, js, j, source, actor, err, errlen);
		if (rc == 0)
			cJSON_AddItemToArray(cJSON_GetObjectItem(res, "changed"),
			    cJSON_CreateString(j->name));
	}
	cJSON_Delete(old);
	cJSON_Delete(source);
	store_task_free(&t);
	return rc;
}

/*
 * A job that would become a new task needs an engine to default to; with none to be
 * had, say so before anything is written (409: the machine's state, not the file).
 */
static int
jobs_engine_check(struct daemon *d, const struct jobspec *js, size_t n, char *err,
    size_t errlen)
{
	struct store_task	 t;
	char			 engine[32], key[KEYS_NAME_MAX + 1], why[1024];

	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < js[i].n_jobs; k++) {
			if (store_task_get_by_name(d->store, js[i].jobs[k].name, &t) == 1) {
				store_task_free(&t);
				continue;
			}
			if (tasks_default_engine(d, NULL, engine, sizeof engine, key,
			    sizeof key, why, sizeof why) == -1) {
				snprintf(err, errlen, "job %s: %s", js[i].jobs[k].name, why);
				return -1;
			}
			return 0;	/* the same answer for every new job */
		}
	return 0;
}

int
jobs_discover(struct daemon *d, const char *repo_in, const char *actor, cJSON **result,
    int *code, char *err, size_t errlen)
{
	struct jobsgit_result	 g;
	struct jobspec		 js[2];
	char			 repo[PATH_MAX];
	cJSON			*res = NULL, *audit;
	int			 rc = -1;

	*result = NULL;
	*code = 400;
	err[0] = '\0';
	memset(js, 0, sizeof js);
	if (paths_canonical(repo_in, repo, sizeof repo) == -1) {
		snprintf(err, errlen, "%.200s: %s", repo_in, strerror(errno));
		return -1;
	}
	if (!worktree_is_repo(repo)) {
		snprintf(err, errlen, "%.200s is not a git repository (its top directory)",
		    repo);
		return -1;
	}
	if (jobsgit_read(repo, &g, err, errlen) == -1)
		return -1;
	if (jobs_parse_all(repo, &g, js, err, errlen) == -1)
		goto out;
	jobs_budget = JOBS_PREVIEW_EVALS;
	res = cJSON_CreateObject();
	json_add_string(res, "repo", repo);
	json_add_string(res, "branch", g.branch);
	json_add_string(res, "commit", g.commit);
	cJSON_AddArrayToObject(res, "files");
	for (size_t i = 0; i < g.n_files; i++)
		cJSON_AddItemToArray(cJSON_GetObjectItem(res, "files"),
		    cJSON_CreateString(g.files[i].path));
	cJSON_AddArrayToObject(res, "created");
	cJSON_AddArrayToObject(res, "changed");
	cJSON_AddArrayToObject(res, "unchanged");
	cJSON_AddArrayToObject(res, "removed");
	cJSON_AddArrayToObject(res, "conflicts");
	*code = 409;
	if (jobs_engine_check(d, js, g.n_files, err, errlen) == -1)
		goto out;
	*code = 500;
	if (store_begin(d->store) == -1) {
		snprintf(err, errlen, "%s", store_errmsg(d->store));
		goto out;
	}
	for (size_t i = 0; i < g.n_files; i++)
		for (size_t k = 0; k < js[i].n_jobs; k++)
			if (jobs_sync_one(d, repo, &g, &g.files[i], &js[i], &js[i].jobs[k],
			    actor, res, err, errlen) == -1) {
				store_rollback(d->store);
				goto out;
			}
	if (jobs_mark_removed(d, repo, js, g.n_files, g.commit,
	    cJSON_GetObjectItem(res, "removed"), err, errlen) == -1 ||
	    store_commit(d->store) == -1) {
		if (err[0] == '\0')
			snprintf(err, errlen, "%s", store_errmsg(d->store));
		store_rollback(d->store);
		goto out;
	}
	/* A person's discovery is always in the audit log; the daemon's when it changed something. */
	if (strcmp(actor, "clockworkd") != 0 ||
	    cJSON_GetArraySize(cJSON_GetObjectItem(res, "created")) > 0 ||
	    cJSON_GetArraySize(cJSON_GetObjectItem(res, "changed")) > 0 ||
	    cJSON_GetArraySize(cJSON_GetObjectItem(res, "removed")) > 0) {
		audit = cJSON_Duplicate(res, 1);
		journal_audit(d, actor, "jobs.discover", repo, audit);
	}
	*result = res;
	res = NULL;
	rc = 0;
out:
	cJSON_Delete(res);
	for (size_t i = 0; i < 2; i++)
		jobspec_free(&js[i]);
	jobsgit_result_free(&g);
	return rc;
}

void
jobs_discover_all(struct daemon *d)
{
	struct store_task	*v;
	struct strlist		 repos;
	cJSON			*res;
	char			 err[1024];
	int			 code;
	size_t			 n;

	memset(&repos, 0, sizeof repos);
	if (store_task_list(d->store, &v, &n) == -1) {
		log_warn("jobs: cannot list tasks: %s", store_errmsg(d->store));
		return;
	}
	for (size_t i = 0; i < n; i++)
		if (v[i].repo != NULL)
			(void)strlist_add_unique(&repos, v[i].repo);
	store_task_list_free(v, n);
	for (size_t i = 0; i < repos.n; i++) {
		err[0] = '\0';
		if (jobs_discover(d, repos.v[i], "clockworkd", &res, &code, err,
		    sizeof err) == -1)
			log_warn("jobs: %s", err);
		cJSON_Delete(res);
	}
	strlist_free(&repos);
}

int
jobs_template_import(struct daemon *d, const char *file, const char *text, size_t len,
    const char *repo_in, const char *actor, cJSON **result, int *code, char *err,
    size_t errlen)
{
	struct jobspec		 js;
	struct store_task	 got;
	struct cron		 cron;
	char			 repo[PATH_MAX], hash[SHA256_HEX], cerr[160];
	cJSON			*source, *res;
	int			 fmt, rc = -1;

	*result = NULL;
	*code = 400;
	if ((fmt = jobspec_format_of(file)) == -1) {
		snprintf(err, errlen, "%.200s: a template file must end in .json, .yaml or "
		    ".yml", file);
		return -1;
	}
	if (repo_in != NULL) {
		if (paths_canonical(repo_in, repo, sizeof repo) == -1 ||
		    !worktree_is_repo(repo)) {
			snprintf(err, errlen, "repo: %.200s is not a git repository (its top "
			    "directory)", repo_in);
			return -1;
		}
	}
	if (parsechild_jobspec(file, text, len, fmt, &js, err, errlen) == -1)
		return -1;
	if (js.n_jobs != 1) {
		snprintf(err, errlen, "%.200s: jobs: a template holds exactly one job, this "
		    "has %zu", file, js.n_jobs);
		goto out;
	}
	if (js.jobs[0].schedule != NULL &&
	    cron_parse(js.jobs[0].schedule, &cron, cerr, sizeof cerr) == -1) {
		snprintf(err, errlen, "%.200s: jobs[0].schedule: not a cron expression: %s",
		    file, cerr);
		goto out;
	}
	if (store_task_get_by_name(d->store, js.jobs[0].name, &got) == 1) {
		store_task_free(&got);
		*code = 409;
		snprintf(err, errlen, "a task named '%s' already exists", js.jobs[0].name);
		goto out;
	}
	*code = 409;
	if (jobs_engine_check(d, &js, 1, err, errlen) == -1)
		goto out;
	jobs_job_hash(&js.jobs[0], NULL, hash);
	jobs_budget = JOBS_PREVIEW_EVALS;
	source = jobs_source("template", repo_in != NULL ? repo : NULL, file, NULL, NULL,
	    &js.jobs[0], hash, NULL);
	*code = 500;
	if (jobs_create(d, &js, &js.jobs[0], repo_in != NULL ? repo : NULL, source, err,
	    errlen) == 0) {
		res = cJSON_CreateObject();
		json_add_string(res, "created", js.jobs[0].name);
		journal_audit(d, actor, "template.import", js.jobs[0].name,
		    cJSON_Duplicate(source, 1));
		*result = res;
		rc = 0;
	}
	cJSON_Delete(source);
out:
	jobspec_free(&js);
	return rc;
}

/*
 * What a task shares: its name, prompt and schedule. Not its engine, mode, budgets,
 * limits, repository or base: an importer gets the defaults and chooses the rest.
 */
cJSON *
jobs_template_export(const struct store_task *t)
{
	cJSON	*o = cJSON_CreateObject(), *a, *j;

	a = cJSON_AddArrayToObject(o, "jobs");
	j = cJSON_CreateObject();
	json_add_string(j, "name", t->name);
	json_add_string(j, "prompt", t->prompt);
	if (t->schedule != NULL && strcmp(t->schedule, "queued") != 0)
		json_add_string(j, "schedule", t->schedule);
	cJSON_AddItemToArray(a, j);
	return o;
}

int
jobs_enable(struct daemon *d, const char *name, const char *hash, const char *actor,
    int *code, char *err, size_t errlen)
{
	struct store_task	 t;
	cJSON			*src = NULL, *pv = NULL, *audit;
	const char		*ph;
	int			 rc, removed = 0;

	*code = 404;
	if (!jobspec_name_valid(name) || (rc = store_task_get_by_name(d->store, name,
	    &t)) == 0) {
		snprintf(err, errlen, "no task named '%.64s'", name);
		return -1;
	}
	if (rc == -1) {
		*code = 500;
		snprintf(err, errlen, "%s", store_errmsg(d->store));
		return -1;
	}
	rc = -1;
	*code = 409;
	if (t.source == NULL || t.preview == NULL) {
		snprintf(err, errlen, "task '%s' was not imported; use cwctl task enable",
		    t.name);
		goto out;
	}
	src = json_parse(t.source, strlen(t.source));
	pv = json_parse(t.preview, strlen(t.preview));
	(void)json_get_bool(src, "removed", &removed);
	if (removed) {
		snprintf(err, errlen, "task '%s': its job was removed from %s; it cannot be "
		    "enabled", t.name, json_get_string(src, "path"));
		goto out;
	}
	ph = json_get_string(pv, "definition_hash");
	if (hash != NULL && (ph == NULL || strcmp(hash, ph) != 0)) {
		snprintf(err, errlen, "task '%s': the preview has changed since it was shown; "
		    "review it again", t.name);
		goto out;
	}
	if (store_task_set_review(d->store, t.id, NULL, NULL, 0, 1) == -1) {
		*code = 500;
		snprintf(err, errlen, "%s", store_errmsg(d->store));
		goto out;
	}
	audit = cJSON_CreateObject();
	json_add_string(audit, "definition_hash", ph);
	json_add_string(audit, "commit", json_get_string(src, "commit"));
	json_add_string(audit, "source", json_get_string(src, "path"));
	journal_audit(d, actor, "jobs.enable", t.name, audit);
	rc = 0;
out:
	cJSON_Delete(src);
	cJSON_Delete(pv);
	store_task_free(&t);
	return rc;
}

int
jobs_pins_check(struct daemon *d, const struct store_task *t, const char *base_commit,
    char *err, size_t errlen)
{
	struct store_task	 now;
	cJSON			*src, *pins = NULL, *res = NULL;
	const cJSON		*was;
	char			*changed = NULL, derr[256];
	int			 rc = -1, code;

	if (t->source == NULL || t->repo == NULL ||
	    (src = json_parse(t->source, strlen(t->source))) == NULL)
		return 0;		/* not imported from a repository */
	if (strcmp(json_get_string(src, "kind") ? json_get_string(src, "kind") : "",
	    "repo") != 0) {
		cJSON_Delete(src);
		return 0;
	}
	if (jobpins_at(t->repo, base_commit, t->prompt, &pins, err, errlen) == -1)
		goto out;
	was = cJSON_GetObjectItemCaseSensitive(src, "pins");
	if (was == NULL && cJSON_GetArraySize(pins) == 0) {
		rc = 0;			/* reviewed before pins existed, and names none */
		goto out;
	}
	if ((changed = jobpins_changed(was, pins)) == NULL) {
		rc = 0;
		goto out;
	}
	/*
	 * Bring the preview up to date from the default branch, then hold the task for
	 * review whatever that found: the run's base may be another commit.
	 */
	if (jobs_discover(d, t->repo, "clockworkd (pinned files changed)", &res, &code,
	    derr, sizeof derr) == -1)
		log_warn("task %s: pinned files changed; discovery failed: %s", t->name,
		    derr);
	cJSON_Delete(res);
	if (store_task_get(d->store, t->id, &now) == 1) {
		if (!now.needs_review && store_task_set_review(d->store, t->id, NULL, NULL,
		    1, 0) == -1)
			log_warn("task %s: %s", t->name, store_errmsg(d->store));
		store_task_free(&now);
	}
	snprintf(err, errlen, "its prompt names %s, changed since the job was reviewed; "
	    "it waits for review again (cwctl jobs preview %s)", changed, t->name);
	rc = 1;
out:
	free(changed);
	cJSON_Delete(pins);
	cJSON_Delete(src);
	return rc;
}
