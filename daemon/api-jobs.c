/*
 * The API's routes for repository jobs, templates, task history and runs made from
 * earlier runs (SPEC W2; the work is in jobs.c and runs.c). They share api.c's request
 * and helpers through api-impl.h and are listed in api.c's one route table.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/http.h>

#include "api-impl.h"
#include "conversation.h"
#include "daemon.h"
#include "jobs.h"
#include "journal.h"
#include "json.h"
#include "recover.h"
#include "runbranch.h"
#include "runs.h"
#include "store.h"
#include "tasks.h"

/*
 * Inside a new transaction: the definition before an edit goes to the task's history
 * when the edit changes it (the caller commits or rolls back).
 */
int
api_jobs_history_record(struct api_req *q, const struct store_task *before,
    const struct store_task *after)
{
	cJSON	*a = jobs_definition(before), *b = jobs_definition(after);
	char	*def = NULL;
	int	 rc = -1;

	if (store_begin(q->d->store) == -1)
		goto out;
	cJSON_DeleteItemFromObject(a, "enabled");
	cJSON_DeleteItemFromObject(b, "enabled");
	if (cJSON_Compare(a, b, 1)) {
		rc = 0;
		goto out;
	}
	cJSON_AddBoolToObject(a, "enabled", before->enabled);
	if ((def = cJSON_PrintUnformatted(a)) != NULL &&
	    store_task_history_add(q->d->store, before->id, q->actor, def) == 0)
		rc = 0;
out:
	cJSON_free(def);
	cJSON_Delete(a);
	cJSON_Delete(b);
	return rc;
}

/* Only the listed keys in body; else 400 naming the first other one. */
int
api_body_keys(struct api_req *q, const cJSON *body, const char *const *keys, size_t n)
{
	const cJSON	*a;
	size_t		 i;

	cJSON_ArrayForEach(a, body) {
		for (i = 0; i < n; i++)
			if (a->string != NULL && strcmp(a->string, keys[i]) == 0)
				break;
		if (i == n) {
			api_error(q, 400, "invalid_field", "%.64s: unknown field",
			    a->string != NULL ? a->string : "?");
			return -1;
		}
	}
	return 0;
}

void
api_jobs_discover(struct api_req *q)
{
	static const char *const keys[] = { "repo" };
	const char	*repo;
	char		 err[1024];
	cJSON		*body, *res;
	int		 code;

	if ((body = api_body(q)) == NULL)
		return;
	if (api_body_keys(q, body, keys, 1) == -1) {
		cJSON_Delete(body);
		return;
	}
	if ((repo = json_get_string(body, "repo")) == NULL || repo[0] != '/') {
		cJSON_Delete(body);
		api_error(q, 400, "invalid_field", "repo: an absolute path is required");
		return;
	}
	if (jobs_discover(q->d, repo, q->actor, &res, &code, err, sizeof err) == -1)
		api_error(q, code, code == 400 ? "invalid_jobs" : code == 409 ? "no_engine" :
		    "internal", "%s", err);
	else
		api_ok(q, 200, res);
	cJSON_Delete(body);
}

/* An imported task as the jobs routes show it: the task, its source and preview. */
static cJSON *
api_jobs_json(const struct store_task *t, int with_preview)
{
	cJSON	*o = tasks_to_json(t), *p;

	cJSON_AddItemToObject(o, "source", api_masked_json(t->source));
	if (with_preview)
		cJSON_AddItemToObject(o, "preview", api_masked_json(t->preview));
	else if (t->preview != NULL && (p = json_parse(t->preview,
	    strlen(t->preview))) != NULL) {
		cJSON_AddItemToObject(o, "warnings", cJSON_Duplicate(
		    cJSON_GetObjectItem(p, "warnings"), 1));
		json_add_string(o, "definition_hash", json_get_string(p, "definition_hash"));
		cJSON_Delete(p);
	}
	return o;
}

void
api_jobs_list(struct api_req *q)
{
	struct store_task	*v;
	size_t			 n;
	cJSON			*o, *a;
	int			 full = api_param(q, "preview") != NULL;

	if (store_task_list(q->d->store, &v, &n) == -1) {
		api_error(q, 500, "internal", "%s", store_errmsg(q->d->store));
		return;
	}
	o = cJSON_CreateObject();
	a = cJSON_AddArrayToObject(o, "jobs");
	for (size_t i = 0; i < n; i++)
		if (v[i].source != NULL)
			cJSON_AddItemToArray(a, api_jobs_json(&v[i], full));
	store_task_list_free(v, n);
	api_ok(q, 200, o);
}

void
api_jobs_show(struct api_req *q)
{
	struct store_task	t;

	if (api_task_lookup(q, q->seg[2], &t) == -1)
		return;
	if (t.source == NULL)
		api_error(q, 404, "not_found", "task '%s' was not imported: it has no "
		    "preview", t.name);
	else
		api_ok(q, 200, api_jobs_json(&t, 1));
	store_task_free(&t);
}

void
api_jobs_enable(struct api_req *q)
{
	static const char *const keys[] = { "hash" };
	struct evbuffer	*in = evhttp_request_get_input_buffer(q->req);
	cJSON		*body = NULL, *o;
	char		 err[512];
	int		 code;

	if (evbuffer_get_length(in) > 0) {
		if ((body = api_body(q)) == NULL)
			return;
		if (api_body_keys(q, body, keys, 1) == -1) {
			cJSON_Delete(body);
			return;
		}
	}
	if (jobs_enable(q->d, q->seg[2], json_get_string(body, "hash"), q->actor, &code,
	    err, sizeof err) == -1)
		api_error(q, code, code == 404 ? "not_found" : code == 409 ? "refused" :
		    "internal", "%s", err);
	else {
		o = cJSON_CreateObject();
		json_add_string(o, "enabled", q->seg[2]);
		json_add_string(o, "by", q->actor);
		api_ok(q, 200, o);
	}
	cJSON_Delete(body);
}

void
api_jobs_template_import(struct api_req *q)
{
	static const char *const keys[] = { "file", "text", "repo" };
	const char	*file, *text, *repo;
	char		 err[1024];
	cJSON		*body, *res;
	int		 code;

	if ((body = api_body(q)) == NULL)
		return;
	if (api_body_keys(q, body, keys, 3) == -1) {
		cJSON_Delete(body);
		return;
	}
	file = json_get_string(body, "file");
	text = json_get_string(body, "text");
	repo = json_get_string(body, "repo");
	if (file == NULL || text == NULL || (repo != NULL && repo[0] != '/'))
		api_error(q, 400, "invalid_field", "file and text are required; repo, when "
		    "given, an absolute path");
	else if (jobs_template_import(q->d, file, text, strlen(text), repo, q->actor,
	    &res, &code, err, sizeof err) == -1)
		api_error(q, code, code == 400 ? "invalid_template" : code != 409 ?
		    "internal" : strstr(err, "no engine to default to") != NULL ?
		    "no_engine" : "exists", "%s", err);
	else
		api_ok(q, 201, res);
	cJSON_Delete(body);
}

void
api_jobs_template_export(struct api_req *q)
{
	struct store_task	t;

	if (api_task_lookup(q, q->seg[2], &t) == -1)
		return;
	journal_audit(q->d, q->actor, "template.export", t.name, NULL);
	api_ok(q, 200, jobs_template_export(&t));
	store_task_free(&t);
}

void
api_jobs_task_history(struct api_req *q)
{
	struct store_task		 t;
	struct store_task_history	*v;
	size_t				 n;
	cJSON				*o, *a, *e;

	if (api_task_lookup(q, q->seg[2], &t) == -1)
		return;
	if (store_task_history_list(q->d->store, t.id, &v, &n) == -1) {
		store_task_free(&t);
		api_error(q, 500, "internal", "%s", store_errmsg(q->d->store));
		return;
	}
	o = cJSON_CreateObject();
	json_add_string(o, "task", t.name);
	a = cJSON_AddArrayToObject(o, "history");
	for (size_t i = 0; i < n; i++) {
		e = cJSON_CreateObject();
		json_add_string(e, "ts", v[i].ts);
		json_add_string(e, "actor", v[i].actor);
		cJSON_AddItemToObject(e, "definition", api_masked_json(v[i].definition));
		cJSON_AddItemToArray(a, e);
	}
	cJSON_AddItemToObject(o, "current", jobs_definition(&t));
	store_task_history_list_free(v, n);
	store_task_free(&t);
	api_ok(q, 200, o);
}

/*
 * A new run from an earlier one: retry repeats it (its prompt and base as they were
 * asked for), continue works on its branch (runbranch.c) with a follow-up prompt.
 * A retry of a continue is that continue again: the same run, branch and follow-up.
 */
static void
api_jobs_run_again(struct api_req *q, int follow)
{
	static const char *const keys[] = { "prompt", "fresh" };
	struct store_run	 r, nr;
	struct store_task	 t;
	struct runbranch	 cb;
	struct evbuffer		*in = evhttp_request_get_input_buffer(q->req);
	const char		*prompt = NULL, *base, *continues = NULL;
	char			 id[STORE_ID_LEN], err[1024];
	char			 conv[CONVERSATION_ID_MAX + 1], from[STORE_ID_LEN];
	cJSON			*body = NULL, *a, *fj, *o;
	int			 rc, fresh = 0, retry_resume = 0, resumes;

	memset(&t, 0, sizeof t);
	if (evbuffer_get_length(in) > 0 || follow) {
		if ((body = api_body(q)) == NULL)
			return;
		if (api_body_keys(q, body, keys, follow ? 2 : 0) == -1)
			goto out0;
		prompt = json_get_string(body, "prompt");
		if ((fj = cJSON_GetObjectItemCaseSensitive(body, "fresh")) != NULL) {
			if (!follow || !cJSON_IsBool(fj)) {
				api_error(q, 400, "invalid_field", "fresh: true or false, and "
				    "only for continue");
				goto out0;
			}
			fresh = cJSON_IsTrue(fj);
		}
	}
	if (follow && (prompt == NULL || prompt[0] == '\0' ||
	    strlen(prompt) > DAEMON_PROMPT_MAX)) {
		api_error(q, 400, "invalid_field", "prompt: a follow-up prompt of 1-%d bytes "
		    "is required", DAEMON_PROMPT_MAX);
		goto out0;
	}
	if (api_run_lookup(q, q->seg[2], &r) == -1)
		goto out0;
	if ((rc = store_task_get(q->d->store, r.task_id, &t)) != 1) {
		api_error(q, 500, "internal", "run %s: its task cannot be read", r.id);
		goto out;
	}
	if (t.archived || !t.enabled) {
		api_error(q, 409, "task_disabled", "task '%s' is %s", t.name, t.archived ?
		    "archived" : "disabled; enable it first");
		goto out;
	}
	if (!store_run_status_terminal(r.status)) {
		api_error(q, 409, "run_active", "run %s has not ended yet (%s): %s it once "
		    "it ends", r.id, store_run_status_name(r.status), follow ? "continue" :
		    "retry");
		goto out;
	}
	if (follow)
		continues = r.id;
	else if (r.continues != NULL)
		continues = r.continues;
	/* The branch first: a refusal there changes nothing and says what to do. */
	if (continues != NULL && runbranch_check(q->d, &t, &r, &cb, err, sizeof err) == -1) {
		api_error(q, cb.code != NULL && strcmp(cb.code, "internal") != 0 ? 409 : 500,
		    cb.code != NULL ? cb.code : "internal", "%s", err);
		goto out;
	}
	if (follow) {
		base = r.branch;
		/*
		 * An agent's run: the same conversation, or a refusal that says why, never
		 * a new one in its place unless it was asked for (fresh). An engine with no
		 * conversation (command) follows up on the branch as it always did.
		 */
		if (!conversation_engine_resumes(t.engine))
			fresh = 0;
		else if (!fresh && runs_conversation_of(&r, t.engine, conv, sizeof conv, err,
		    sizeof err) == -1) {
			api_error(q, 409, "no_conversation", "%s: it cannot be resumed "
			    "(cwctl run continue --fresh starts a new conversation on its "
			    "branch)", err);
			goto out;
		}
	} else {
		prompt = r.prompt;
		base = r.base_ref;
		/*
		 * A retry of a continue repeats it whole: the same follow-up, in the same
		 * conversation, not the follow-up alone in a new one.
		 */
		if ((rc = runs_conversation_resumed(q->d, r.id, t.engine, from,
		    sizeof from, conv, sizeof conv, err, sizeof err)) == -1) {
			api_error(q, 409, "no_conversation", "run %s: %s", r.id, err);
			goto out;
		}
		retry_resume = rc == 1;
	}
	if (q->d->shutting_down) {
		api_error(q, 503, "shutting_down", "clockworkd is shutting down");
		goto out;
	}
	resumes = (follow && !fresh && conversation_engine_resumes(t.engine)) ||
	    retry_resume;
	if ((rc = runs_enqueue_from(q->d, &t, r.id, prompt, base, retry_resume ? from :
	    r.id, resumes ? conv : NULL, follow && fresh, continues,
	    continues != NULL ? &cb : NULL, id, sizeof id, err, sizeof err)) != 0) {
		if (rc == 1)
			api_error(q, 409, "branch_held", "%s: one run at a time works on a "
			    "branch; continue once it ends", err);
		else
			api_error(q, 500, "internal", "%s", err);
		goto out;
	}
	a = cJSON_CreateObject();
	json_add_string(a, "task", t.name);
	json_add_string(a, "from", r.id);
	if (follow && (resumes || fresh))
		cJSON_AddStringToObject(a, "conversation", fresh ? "new" : conv);
	if (continues != NULL) {
		json_add_string(a, "continues", continues);
		json_add_string(a, "branch", cb.branch);
		json_add_string(a, "branch_tip", cb.tip);
		if (cb.hold.detached > 0)
			json_add_string(a, "detached_worktree", cb.hold.path);
		if (cb.landed_into[0] != '\0')
			json_add_string(a, "already_merged_into", cb.landed_into);
	}
	journal_audit(q->d, q->actor, follow ? "run.continue" : "run.retry", id, a);
	if (continues != NULL && cb.hold.detached > 0 &&
	    (o = cJSON_CreateObject()) != NULL) {
		/* The earlier run's own record says where its worktree's branch went. */
		json_add_string(o, "worktree", cb.hold.path);
		json_add_string(o, "branch", cb.branch);
		json_add_string(o, "by_run", id);
		journal_add(q->d, r.id, "worktree_detached", o);
	}
	if (api_run_lookup(q, id, &nr) == 0) {
		o = runs_to_json(&nr, 0);
		/* What the person should know before the run starts. */
		if (continues != NULL && cb.hold.detached > 0)
			json_add_string(o, "detached_worktree", cb.hold.path);
		if (continues != NULL && cb.landed_into[0] != '\0')
			json_add_string(o, "already_merged_into", cb.landed_into);
		api_ok(q, 201, o);
		store_run_free(&nr);
	}
out:
	store_task_free(&t);
	store_run_free(&r);
out0:
	cJSON_Delete(body);
}

void api_jobs_run_retry(struct api_req *q) { api_jobs_run_again(q, 0); }
void api_jobs_run_continue(struct api_req *q) { api_jobs_run_again(q, 1); }
