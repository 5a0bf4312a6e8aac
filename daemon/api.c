/*
 * The local HTTP API (SPEC D2), on libevent's evhttp, bound to 127.0.0.1 only.
 *
 * Every request passes three checks, in this order, before any route runs:
 *  1. Host must be 127.0.0.1:<port> or localhost:<port> (403). A web page that
 *     re-binds its own DNS name to 127.0.0.1 still sends its own name as Host, so this
 *     stops DNS rebinding even before the token is looked at.
 *  2. Authorization: Bearer <token from api.token> (401, compared in constant time).
 *  3. On state-changing methods, Origin absent or the daemon's own origin (403), so a
 *     page in a browser cannot drive the API even with a leaked token in a form.
 * Bodies are bounded by evhttp (413 past DAEMON_MAX_BODY, never read further). Errors
 * are {"error":{"code":"...","message":"..."}}. A malformed request is answered and
 * logged; it never ends the daemon. Everything that leaves is secret-masked where it
 * carries run output (reports, logs, journal data).
 */
#define _GNU_SOURCE
#include <sys/socket.h>
#include <sys/stat.h>
#include <netinet/in.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <sqlite3.h>

#include "api-impl.h"
#include "api.h"
#include "approvals.h"
#include "autoallow.h"
#include "daemon.h"
#include "events.h"
#include "export.h"
#include "floor.h"
#include "gc.h"
#include "httpd.h"
#include "inbox.h"
#include "jobspec.h"
#include "journal.h"
#include "json.h"
#include "keys.h"
#include "log.h"
#include "mask.h"
#include "netrule.h"
#include "netsets.h"
#include "notify.h"
#include "peerns.h"
#include "recover.h"
#include "reporules.h"
#include "review.h"
#include "runreview.h"
#include "runs.h"
#include "secret.h"
#include "store.h"
#include "strlist.h"
#include "tasks.h"
#include "telegram.h"
#include "tgapi.h"
#include "transcripts.h"

#define API_LOG_CHUNK	(256 * 1024)

static void
api_send(struct evhttp_request *req, int code, cJSON *body)
{
	struct evkeyvalq *h = evhttp_request_get_output_headers(req);
	char		*text = NULL, *line = NULL;

	evhttp_add_header(h, "Referrer-Policy", "no-referrer");
	evhttp_add_header(h, "Content-Security-Policy", "default-src 'none'; "
	    "frame-ancestors 'none'");
	if (body != NULL && (text = json_print(body)) != NULL &&
	    asprintf(&line, "%s\n", text) == -1)
		line = NULL;
	httpd_reply(req, code, "application/json", line, line != NULL ? strlen(line) : 0);
	free(line);
	cJSON_free(text);
	cJSON_Delete(body);
}

void
api_error(struct api_req *q, int code, const char *ecode, const char *fmt, ...)
{
	char	 msg[1280];
	va_list	 ap;
	cJSON	*o, *e;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (code >= 500)
		log_error("api: %s %s: %s", ecode, q->pathbuf, msg);
	else
		log_info("api: %d %s %s: %s", code, ecode, q->pathbuf, msg);
	o = cJSON_CreateObject();
	e = cJSON_AddObjectToObject(o, "error");
	json_add_string(e, "code", ecode);
	json_add_string(e, "message", msg);
	if (code == 401)
		evhttp_add_header(evhttp_request_get_output_headers(q->req),
		    "WWW-Authenticate", "Bearer realm=\"clockworkd\"");
	api_send(q->req, code, o);
}

void
api_ok(struct api_req *q, int code, cJSON *body)
{
	api_send(q->req, code, body);
}

/* body as 200; NULL, a body the store failed to build, as 500 naming the store's error. */
static void
api_ok_built(struct api_req *q, cJSON *body)
{
	if (body == NULL)
		api_error(q, 500, "internal", "%s", store_errmsg(q->d->store));
	else
		api_ok(q, 200, body);
}

/* The body as JSON; answers 400 or 413 itself and returns NULL when it is not. */
cJSON *
api_body(struct api_req *q)
{
	char	*text;
	size_t	 len;
	cJSON	*j;

	if ((text = httpd_body(q->req, DAEMON_MAX_BODY, 0, &len)) == NULL) {
		if (errno == ENODATA)
			api_error(q, 400, "bad_request", "a JSON body is required");
		else if (errno == E2BIG)
			api_error(q, 413, "too_large", "body larger than %d bytes",
			    DAEMON_MAX_BODY);
		else
			api_error(q, 500, "internal", "cannot read the body: %s",
			    strerror(errno));
		return NULL;
	}
	j = json_parse(text, len);
	free(text);
	if (j == NULL || !cJSON_IsObject(j)) {
		cJSON_Delete(j);
		api_error(q, 400, "bad_json", "the body is not a JSON object");
		return NULL;
	}
	return j;
}

/* Absent is allowed here: only browsers send Origin, and they always do on writes. */
static int
api_origin_ok(struct daemon *d, const char *origin)
{
	return origin == NULL || httpd_origin_ok(origin, d->port);
}

const char *
api_param(struct api_req *q, const char *key)
{
	return evhttp_find_header(&q->query, key);
}

static int
api_param_int(struct api_req *q, const char *key, long long lo, long long hi,
    long long def, long long *out)
{
	const char	*s = api_param(q, key);
	char		*end;
	long long	 v;

	*out = def;
	if (s == NULL)
		return 0;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0' || end == s || v < lo || v > hi) {
		api_error(q, 400, "invalid_parameter", "%s must be a whole number from %lld "
		    "to %lld", key, lo, hi);
		return -1;
	}
	*out = v;
	return 0;
}

cJSON *
api_masked_json(const char *text)
{
	char	*m;
	cJSON	*j = NULL;

	if (text == NULL)
		return cJSON_CreateNull();
	if ((m = mask_secrets(text)) != NULL) {
		j = json_parse(m, strlen(m));
		free(m);
	}
	return j != NULL ? j : cJSON_CreateNull();
}

/*
 * A stored record's JSON text as it is: records are masked once, when they enter the
 * daemon (journal_add, runs_store_event, runs_approval_request, runs_report_store).
 */
static cJSON *
api_record_json(const char *text)
{
	cJSON	*j;

	if (text == NULL)
		return cJSON_CreateNull();
	j = json_parse(text, strlen(text));
	return j != NULL ? j : cJSON_CreateNull();
}

/* ?since=ID&limit=N, the paging of a list of records: after since, at most limit. */
static int
api_param_page(struct api_req *q, long long def_limit, long long *since,
    long long *limit)
{
	if (api_param_int(q, "since", 0, INT64_MAX / 2, 0, since) == -1 ||
	    api_param_int(q, "limit", 0, 100000, def_limit, limit) == -1)
		return -1;
	return 0;
}

/*
 * One stored record (a run event, a journal or audit entry) added to the array a: its
 * id and time here, the caller's own fields after them and then its data.
 */
static cJSON *
api_entry_json(cJSON *a, int64_t id, const char *ts)
{
	cJSON	*e = cJSON_CreateObject();

	cJSON_AddNumberToObject(e, "id", (double)id);
	json_add_string(e, "ts", ts);
	cJSON_AddItemToArray(a, e);
	return e;
}

static cJSON	*api_pending_approvals(struct daemon *);

static int
api_count_queued(struct daemon *d)
{
	sqlite3_stmt	*st;
	int		 n = 0;

	if (sqlite3_prepare_v2(store_db(d->store),
	    "SELECT count(*) FROM runs WHERE status = 'queued'", -1, &st, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return n;
}

/* ---- events (events.c) ------------------------------------------------------- */

/* GET /api/events?types=&task=&run=&last_event_id=: the bus, as server-sent events. */
static void
api_events(struct api_req *q)
{
	struct evkeyvalq	*h = evhttp_request_get_input_headers(q->req);
	const char		*last = evhttp_find_header(h, "Last-Event-ID");
	char			 err[256], cookie[80];
	int			 code;

	if (last == NULL)
		last = api_param(q, "last_event_id");
	if (q->inbox && inbox_cookie_of(q->d, q->req, cookie, sizeof cookie) == -1) {
		api_error(q, 401, "unauthorized", "not signed in");
		return;
	}
	code = events_open(q->d, q->req, api_param(q, "types"), api_param(q, "task"),
	    api_param(q, "run"), last, q->inbox ? cookie : NULL, err, sizeof err);
	if (code == 400)
		api_error(q, 400, "bad_request", "%s", err);
	else if (code == 503)
		api_error(q, 503, "unavailable", "%s", err);
	else if (code != 0)
		api_error(q, code, "internal", "%s", err);
}

/* ---- status ------------------------------------------------------------------- */

static void
api_status(struct api_req *q)
{
	struct daemon	*d = q->d;
	cJSON		*o = cJSON_CreateObject(), *r;

	json_add_string(o, "version", CW_VERSION);
	cJSON_AddNumberToObject(o, "pid", getpid());
	cJSON_AddNumberToObject(o, "port", d->port);
	json_add_string(o, "socket", d->sock_path);
	json_add_string(o, "home", d->home);
	json_add_string(o, "config", d->cfg.path);
	json_add_string(o, "runner", d->runner_path);
	cJSON_AddNumberToObject(o, "uptime_seconds", (double)(time(NULL) - d->started));
	cJSON_AddBoolToObject(o, "shutting_down", d->shutting_down);
	cJSON_AddNumberToObject(o, "max_concurrent_runs", d->cfg.max_concurrent_runs);
	cJSON_AddNumberToObject(o, "keep_runs", d->cfg.keep_runs);
	if ((r = cJSON_AddObjectToObject(o, "runs")) != NULL) {
		cJSON_AddNumberToObject(r, "live", (double)d->n_runs);
		cJSON_AddNumberToObject(r, "queued", api_count_queued(d));
	}
	cJSON_AddItemToObject(o, "approvals_pending", api_pending_approvals(d));
	cJSON_AddItemToObject(o, "telegram", telegram_status_json(d));
	json_add_string(o, "desktop_notifications", notify_state(d));
	api_ok(q, 200, o);
}

/* ---- tasks -------------------------------------------------------------------- */

int
api_task_lookup(struct api_req *q, const char *name, struct store_task *t)
{
	int	rc;

	if (!jobspec_name_valid(name)) {
		api_error(q, 404, "not_found", "no task named '%.64s'", name);
		return -1;
	}
	if ((rc = store_task_get_by_name(q->d->store, name, t)) == -1) {
		api_error(q, 500, "internal", "%s", store_errmsg(q->d->store));
		return -1;
	}
	if (rc == 0) {
		api_error(q, 404, "not_found", "no task named '%s'", name);
		return -1;
	}
	return 0;
}

static void
api_tasks_list(struct api_req *q)
{
	struct store_task	*v;
	size_t			 n;
	cJSON			*o, *a;

	if (store_task_list(q->d->store, &v, &n) == -1) {
		api_error(q, 500, "internal", "%s", store_errmsg(q->d->store));
		return;
	}
	o = cJSON_CreateObject();
	a = cJSON_AddArrayToObject(o, "tasks");
	for (size_t i = 0; i < n; i++)
		cJSON_AddItemToArray(a, tasks_to_json(&v[i]));
	store_task_list_free(v, n);
	api_ok(q, 200, o);
}

static cJSON *
api_task_audit_data(const struct store_task *t)
{
	cJSON	*j = cJSON_CreateObject();

	json_add_string(j, "engine", t->engine);
	json_add_string(j, "permission_mode", t->permission_mode);
	json_add_string(j, "repo", t->repo);
	json_add_string(j, "schedule", t->schedule);
	cJSON_AddBoolToObject(j, "enabled", t->enabled);
	return j;
}

static void
api_task_add(struct api_req *q)
{
	struct store_task	 t, got;
	char			 field[64], err[1280], eng[32], key[KEYS_NAME_MAX + 1];
	char			 why[1024] = "";
	const cJSON		*k;
	cJSON			*body, *o;
	int64_t			 id;

	if ((body = api_body(q)) == NULL)
		return;
	/* No engine named: the default, and the sentence that says why, for the reply. */
	if (cJSON_IsObject(body) && !cJSON_HasObjectItem(body, "engine") &&
	    cJSON_IsString(cJSON_GetObjectItemCaseSensitive(body, "prompt"))) {
		k = cJSON_GetObjectItemCaseSensitive(body, "key");
		/* None to be had: tasks_from_json names the first bad field, in order. */
		if (tasks_default_engine(q->d, cJSON_IsString(k) ? k->valuestring : NULL,
		    eng, sizeof eng, key, sizeof key, why, sizeof why) == 0) {
			json_add_string(body, "engine", eng);
			if (key[0] != '\0' && k == NULL)
				json_add_string(body, "key", key);
		} else
			why[0] = '\0';
	}
	if (tasks_from_json(q->d, body, NULL, &t, field, sizeof field, err,
	    sizeof err) == -1) {
		cJSON_Delete(body);
		api_error(q, 400, "invalid_field", "%s: %s", field, err);
		return;
	}
	cJSON_Delete(body);
	if (store_task_get_by_name(q->d->store, t.name, &got) == 1) {
		store_task_free(&got);
		api_error(q, 409, "exists", "a task named '%s' already exists", t.name);
		store_task_free(&t);
		return;
	}
	if (store_task_add(q->d->store, &t, &id) == -1) {
		api_error(q, errno == EINVAL ? 400 : 500, errno == EINVAL ? "invalid_field" :
		    "internal", "%s", store_errmsg(q->d->store));
		store_task_free(&t);
		return;
	}
	journal_audit(q->d, q->actor, "task.add", t.name, api_task_audit_data(&t));
	store_task_free(&t);
	if (store_task_get(q->d->store, id, &got) != 1) {
		api_error(q, 500, "internal", "%s", store_errmsg(q->d->store));
		return;
	}
	o = tasks_to_json(&got);
	if (o != NULL && why[0] != '\0')
		json_add_string(o, "engine_default", why);
	api_ok(q, 201, o);
	store_task_free(&got);
}

static void
api_task_update(struct api_req *q, const char *name)
{
	struct store_task	 base, t;
	char			 field[64], err[512];
	cJSON			*body;

	if ((body = api_body(q)) == NULL)
		return;
	if (api_task_lookup(q, name, &base) == -1) {
		cJSON_Delete(body);
		return;
	}
	if (tasks_from_json(q->d, body, &base, &t, field, sizeof field, err,
	    sizeof err) == -1) {
		cJSON_Delete(body);
		store_task_free(&base);
		api_error(q, 400, "invalid_field", "%s: %s", field, err);
		return;
	}
	cJSON_Delete(body);
	/* An imported task is enabled only by its explicit enable (jobs.c), audited. */
	if (base.needs_review && t.enabled) {
		api_error(q, 409, "needs_review", "task '%s' was imported and is waiting "
		    "for review: read cwctl jobs preview %s, then cwctl jobs enable %s",
		    base.name, base.name, base.name);
		store_task_free(&base);
		store_task_free(&t);
		return;
	}
	if (api_jobs_history_record(q, &base, &t) == -1 || store_task_update(q->d->store,
	    &t) == -1) {
		store_rollback(q->d->store);
		api_error(q, 500, "internal", "%s", store_errmsg(q->d->store));
		store_task_free(&base);
		store_task_free(&t);
		return;
	}
	store_task_free(&base);
	if (store_commit(q->d->store) == -1) {
		api_error(q, 500, "internal", "%s", store_errmsg(q->d->store));
		store_task_free(&t);
		return;
	}
	journal_audit(q->d, q->actor, "task.update", t.name, api_task_audit_data(&t));
	store_task_free(&t);
	if (api_task_lookup(q, name, &t) == -1)
		return;
	api_ok(q, 200, tasks_to_json(&t));
	store_task_free(&t);
}

static void
api_task_remove(struct api_req *q, const char *name)
{
	struct store_task	 t;
	cJSON			*o;

	if (api_task_lookup(q, name, &t) == -1)
		return;
	if (store_task_archive(q->d->store, t.id) == -1) {
		if (errno == EBUSY)
			api_error(q, 409, "busy", "task '%s' has a queued or live run; stop it "
			    "first", t.name);
		else
			api_error(q, 500, "internal", "%s", store_errmsg(q->d->store));
		store_task_free(&t);
		return;
	}
	journal_audit(q->d, q->actor, "task.remove", t.name, NULL);
	o = cJSON_CreateObject();
	json_add_string(o, "removed", t.name);
	cJSON_AddBoolToObject(o, "archived", 1);
	store_task_free(&t);
	api_ok(q, 200, o);
}

/* ---- runs --------------------------------------------------------------------- */

int
api_run_lookup(struct api_req *q, const char *id, struct store_run *r)
{
	int	rc;

	if (strlen(id) >= STORE_ID_LEN) {
		api_error(q, 404, "not_found", "no run '%.48s'", id);
		return -1;
	}
	if ((rc = store_run_get(q->d->store, id, r)) == -1) {
		api_error(q, 500, "internal", "%s", store_errmsg(q->d->store));
		return -1;
	}
	if (rc == 0) {
		api_error(q, 404, "not_found", "no run '%s'", id);
		return -1;
	}
	return 0;
}

static void
api_run_start(struct api_req *q)
{
	struct store_task	 t;
	struct store_run	 r;
	const char		*name;
	char			 id[STORE_ID_LEN], err[512];
	cJSON			*body, *a;

	if ((body = api_body(q)) == NULL)
		return;
	cJSON_ArrayForEach(a, body)
		if (a->string == NULL || strcmp(a->string, "task") != 0) {
			api_error(q, 400, "invalid_field", "%.64s: unknown field",
			    a->string != NULL ? a->string : "?");
			cJSON_Delete(body);
			return;
		}
	if ((name = json_get_string(body, "task")) == NULL) {
		cJSON_Delete(body);
		api_error(q, 400, "invalid_field", "task: the task's name is required");
		return;
	}
	if (api_task_lookup(q, name, &t) == -1) {
		cJSON_Delete(body);
		return;
	}
	cJSON_Delete(body);
	if (q->d->shutting_down) {
		store_task_free(&t);
		api_error(q, 503, "shutting_down", "clockworkd is shutting down");
		return;
	}
	if (!t.enabled) {
		api_error(q, 409, "task_disabled", "task '%s' is disabled; enable it first "
		    "(cwctl task enable %s)", t.name, t.name);
		store_task_free(&t);
		return;
	}
	/*
	 * The run and its audit line in one transaction (issue 24): one sync to disk per
	 * request instead of two, and after a crash both are there or neither. The 201
	 * goes out only after the commit, so an accepted run is on disk, and so does the
	 * bus's "queued": no event tells of a run a failed commit took back.
	 */
	if (store_begin(q->d->store) == -1) {
		store_task_free(&t);
		api_error(q, 500, "internal", "%s", store_errmsg(q->d->store));
		return;
	}
	if (runs_enqueue(q->d, &t, id, sizeof id, err, sizeof err) == -1) {
		store_rollback(q->d->store);
		store_task_free(&t);
		api_error(q, 500, "internal", "%s", err);
		return;
	}
	a = cJSON_CreateObject();
	json_add_string(a, "task", t.name);
	journal_audit(q->d, q->actor, "run.start", id, a);
	if (store_commit(q->d->store) == -1) {
		store_task_free(&t);
		api_error(q, 500, "internal", "%s", store_errmsg(q->d->store));
		store_rollback(q->d->store);
		return;
	}
	runs_status_published(q->d, id, t.name, STORE_RUN_QUEUED, STORE_EXIT_NONE);
	store_task_free(&t);
	if (api_run_lookup(q, id, &r) == -1)
		return;
	api_ok(q, 201, runs_to_json(&r, 0));
	store_run_free(&r);
}

static void
api_runs_list(struct api_req *q)
{
	struct store_task	 t;
	struct store_run	*v;
	size_t			 n;
	long long		 limit;
	int64_t			 task_id = 0;
	int			 status = STORE_RUN_ANY;
	const char		*s;
	cJSON			*o, *a;

	if (api_param_int(q, "limit", 0, 100000, 100, &limit) == -1)
		return;
	if ((s = api_param(q, "status")) != NULL &&
	    (status = store_run_status_parse(s)) == -1) {
		api_error(q, 400, "invalid_parameter", "status: unknown status '%.32s'", s);
		return;
	}
	if ((s = api_param(q, "task")) != NULL) {
		if (api_task_lookup(q, s, &t) == -1)
			return;
		task_id = t.id;
		store_task_free(&t);
	}
	/* review=waiting: ended runs whose work no one has merged, landed or discarded. */
	if ((s = api_param(q, "review")) != NULL && strcmp(s, "waiting") != 0) {
		api_error(q, 400, "invalid_parameter", "review: only 'waiting' is a filter");
		return;
	}
	if ((s != NULL ? store_run_list_waiting(q->d->store, (size_t)limit, &v, &n) :
	    store_run_list(q->d->store, task_id, status, (size_t)limit, &v, &n)) == -1) {
		api_error(q, 500, "internal", "%s", store_errmsg(q->d->store));
		return;
	}
	o = cJSON_CreateObject();
	a = cJSON_AddArrayToObject(o, "runs");
	for (size_t i = 0; i < n; i++)
		if (s == NULL || ((task_id == 0 || v[i].task_id == task_id) &&
		    (status == STORE_RUN_ANY || (int)v[i].status == status)))
			cJSON_AddItemToArray(a, runs_to_json(&v[i], 0));
	store_run_list_free(v, n);
	api_ok(q, 200, o);
}

static void
api_run_show(struct api_req *q, const char *id)
{
	struct store_run	r;

	if (api_run_lookup(q, id, &r) == -1)
		return;
	api_ok(q, 200, runs_to_json(&r, 1));
	store_run_free(&r);
}

static void
api_run_stop(struct api_req *q, const char *id)
{
	struct store_run	 r;
	struct run		*live;
	cJSON			*o;

	if (api_run_lookup(q, id, &r) == -1)
		return;
	if (store_run_status_terminal(r.status)) {
		api_error(q, 409, "run_ended", "run %s has already ended (%s)", r.id,
		    store_run_status_name(r.status));
		store_run_free(&r);
		return;
	}
	if ((live = runs_find(q->d, r.id)) != NULL) {
		runs_stop(live, STORE_EXIT_STOPPED, "stopped on request");
	} else if (r.status == STORE_RUN_QUEUED) {
		store_run_set_status(q->d->store, r.id, STORE_RUN_STOPPED, STORE_EXIT_STOPPED);
		runs_status_published(q->d, r.id, NULL, STORE_RUN_STOPPED, STORE_EXIT_STOPPED);
	}
	journal_audit(q->d, q->actor, "run.stop", r.id, NULL);
	o = cJSON_CreateObject();
	json_add_string(o, "id", r.id);
	cJSON_AddBoolToObject(o, "stopping", live != NULL);
	cJSON_AddBoolToObject(o, "was_queued", live == NULL);
	store_run_free(&r);
	api_ok(q, 200, o);
}

/*
 * The live log is served as it is on disk: it was masked as it was written (runs.c
 * runs_log_output masks each stream of the run whole, a secret split over lines or
 * chunks included), so no byte range of it holds a secret. It is still served in
 * whole lines (the log is written in whole lines):
 *
 *  - A chunk starts at the beginning of the line holding "offset" (the answer's
 *    "offset" says where it really starts) and ends after its last whole line, so a
 *    line is never split between chunks, whatever offset and max are asked for.
 *  - A line longer than max is served whole, up to API_LOG_LINE_MAX.
 *  - The last line of a live run is served once its newline is written; once the run
 *    has ended, what is left is served as it is.
 *  - A line longer than API_LOG_LINE_MAX (the daemon writes none: only a log from an
 *    older version or the runner's own stderr could hold one) is cut at the bound
 *    after masking, and the word that crosses each cut is withheld from both sides
 *    and replaced by API_LOG_CUT.
 */
#define API_LOG_LINE_MAX	(1024 * 1024)
#define API_LOG_CUT		"[cut]"

/* Read [from, to) of fd into a new buffer; *got receives the bytes read. */
static char *
api_log_read(int fd, off_t from, off_t to, size_t *got)
{
	char	*buf;
	ssize_t	 n;
	size_t	 want = (size_t)(to - from), have = 0;

	*got = 0;
	if ((buf = malloc(want + 1)) == NULL)
		return NULL;
	while (have < want) {
		n = pread(fd, buf + have, want - have, from + (off_t)have);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		have += (size_t)n;
	}
	*got = have;
	return buf;
}

/* Where the line holding off starts, looking back at most API_LOG_LINE_MAX; -1: none. */
static off_t
api_log_line_start(int fd, off_t off)
{
	char	*buf;
	size_t	 got, i;
	off_t	 from = off > API_LOG_LINE_MAX ? off - API_LOG_LINE_MAX : 0;

	if (off == 0)
		return 0;
	if ((buf = api_log_read(fd, from, off, &got)) == NULL)
		return -1;
	for (i = got; i > 0; i--)
		if (buf[i - 1] == '\n')
			break;
	free(buf);
	if (i > 0)
		return from + (off_t)i;
	return from == 0 ? 0 : -1;
}

/*
 * How much of buf (got bytes) to serve: whole lines up to lim bytes, or the first
 * whole line when it is longer; 0 when buf holds no line end.
 */
static size_t
api_log_whole(const char *buf, size_t got, size_t lim)
{
	size_t	i;

	if (lim > got)
		lim = got;
	for (i = lim; i > 0 && buf[i - 1] != '\n'; i--)
		;
	if (i > 0)
		return i;
	for (i = lim; i < got && buf[i] != '\n'; i++)
		;
	return i < got ? i + 1 : 0;
}

static int
api_log_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* A chunk of the live log from offset; "done" once the run has ended and all is read. */
static void
api_run_log(struct api_req *q, const char *id)
{
	struct store_run	 r;
	long long		 off, max;
	struct stat		 st;
	char			*buf = NULL, *m = NULL, *z;
	size_t			 mlen = 0, got = 0, serve = 0, i;
	off_t			 start, end, next;
	int			 fd, done, live, cut_head = 0, cut_tail = 0;
	cJSON			*o;

	if (api_param_int(q, "offset", 0, INT64_MAX / 2, 0, &off) == -1 ||
	    api_param_int(q, "max", 1, API_LOG_CHUNK, API_LOG_CHUNK, &max) == -1)
		return;
	if (api_run_lookup(q, id, &r) == -1)
		return;
	done = store_run_status_terminal(r.status);
	live = !done;
	start = next = (off_t)off;
	o = cJSON_CreateObject();
	if (r.log_path != NULL && (fd = open(r.log_path, O_RDONLY | O_CLOEXEC)) != -1) {
		if (fstat(fd, &st) == 0 && st.st_size > (off_t)off) {
			if ((start = api_log_line_start(fd, (off_t)off)) == -1) {
				start = (off_t)off;
				cut_head = 1;
			}
			/*
			 * First the asked range; only when it holds no line end, again
			 * as far as the bound, for the whole first line.
			 */
			for (int pass = 0; pass < 2 && serve == 0; pass++) {
				end = pass == 0 ? (off_t)off + (off_t)max :
				    start + API_LOG_LINE_MAX;
				if (end > st.st_size)
					end = st.st_size;
				if (pass == 1 && end <= start + (off_t)got)
					break;		/* nothing more to read */
				free(buf);
				if ((buf = api_log_read(fd, start, end, &got)) == NULL ||
				    got == 0)
					break;
				serve = api_log_whole(buf, got,
				    (size_t)((off_t)off + (off_t)max - start));
			}
			if (buf != NULL && serve == 0 && got >= API_LOG_LINE_MAX) {
				serve = API_LOG_LINE_MAX;
				cut_tail = 1;
			} else if (buf != NULL && serve == 0 && got > 0 && !live &&
			    start + (off_t)got == st.st_size)
				serve = got;	/* the ended run's last, unfinished line */
			next = start + (off_t)serve;
		}
		if (done && fstat(fd, &st) == 0 && next < st.st_size)
			done = 0;
		close(fd);
	}
	if (serve > 0 && (m = malloc(serve + 1)) != NULL) {
		memcpy(m, buf, serve);
		m[serve] = '\0';
		mlen = serve;
		/* A forced cut: the word across it is withheld from both chunks. */
		if (cut_tail) {
			while (mlen > 0 && !api_log_space(m[mlen - 1]))
				mlen--;
		}
		if (cut_head) {
			for (i = 0; i < mlen && !api_log_space(m[i]); i++)
				;
			memmove(m, m + i, mlen - i);
			mlen -= i;
		}
		if ((z = realloc(m, mlen + 2 * sizeof API_LOG_CUT + 2)) != NULL) {
			m = z;
			if (cut_head) {
				memmove(m + strlen(API_LOG_CUT), m, mlen);
				memcpy(m, API_LOG_CUT, strlen(API_LOG_CUT));
				mlen += strlen(API_LOG_CUT);
			}
			if (cut_tail) {
				memcpy(m + mlen, API_LOG_CUT "\n", strlen(API_LOG_CUT) + 1);
				mlen += strlen(API_LOG_CUT) + 1;
			}
			m[mlen] = '\0';
			json_add_string(o, "data", m);
		} else
			json_add_string(o, "data", "");
		free(m);
	} else
		json_add_string(o, "data", "");
	cJSON_AddNumberToObject(o, "offset", (double)start);
	cJSON_AddNumberToObject(o, "next", (double)next);
	if (cut_head || cut_tail)
		cJSON_AddBoolToObject(o, "cut", 1);
	cJSON_AddBoolToObject(o, "done", done);
	json_add_string(o, "status", store_run_status_name(r.status));
	free(buf);
	store_run_free(&r);
	api_ok(q, 200, o);
}

/*
 * The readable transcript (daemon/transcripts.c) from byte offset on, whole entries
 * only: {"entries":[...], "next":N, "done":bool, "status":...}. done is true once the
 * run has ended and everything up to the end was served. For an engine whose output is
 * not read into a transcript ("command"), {"raw": true}: the log is its transcript.
 */
static void
api_run_transcript(struct api_req *q, const char *id)
{
	struct store_run	 r;
	long long		 off, next;
	char			 path[PATH_MAX];
	struct stat		 st;
	cJSON			*o, *entries = NULL;
	int			 done;

	if (api_param_int(q, "offset", 0, INT64_MAX / 2, 0, &off) == -1)
		return;
	if (api_run_lookup(q, id, &r) == -1)
		return;
	done = store_run_status_terminal(r.status);
	/* A command is not an agent: its output, the raw log, is its transcript. */
	if (!transcripts_readable(q->d, &r)) {
		o = cJSON_CreateObject();
		cJSON_AddBoolToObject(o, "raw", 1);
		cJSON_AddArrayToObject(o, "entries");
		cJSON_AddNumberToObject(o, "next", (double)off);
		cJSON_AddBoolToObject(o, "done", done);
		json_add_string(o, "status", store_run_status_name(r.status));
		store_run_free(&r);
		api_ok(q, 200, o);
		return;
	}
	transcripts_path(q->d->home, r.id, path, sizeof path);
	if (transcripts_read(path, off, TRANSCRIPTS_CHUNK, &entries, &next) == -1) {
		if (errno != ENOENT) {
			store_run_free(&r);
			/* EIO: cw-parse failed on it (parsechild.h); the log has the line. */
			api_error(q, 500, "internal", errno == EIO ? "cannot parse the run's "
			    "transcript: the parser (cw-parse) failed; the daemon's log says why" :
			    "cannot read the run's transcript");
			return;
		}
		next = off;
		entries = cJSON_CreateArray();
	}
	if (done && stat(path, &st) == 0 && next < (long long)st.st_size)
		done = 0;
	o = cJSON_CreateObject();
	cJSON_AddItemToObject(o, "entries", entries);
	cJSON_AddNumberToObject(o, "next", (double)next);
	cJSON_AddBoolToObject(o, "done", done);
	json_add_string(o, "status", store_run_status_name(r.status));
	store_run_free(&r);
	api_ok(q, 200, o);
}

static void
api_run_events(struct api_req *q, const char *id)
{
	struct store_run	 r;
	struct store_run_event	*v;
	size_t			 n;
	long long		 since, limit;
	cJSON			*o, *a, *e;

	if (api_param_page(q, 1000, &since, &limit) == -1)
		return;
	if (api_run_lookup(q, id, &r) == -1)
		return;
	store_run_free(&r);
	if (store_run_event_list(q->d->store, id, since, (size_t)limit, &v, &n) == -1) {
		api_error(q, 500, "internal", "%s", store_errmsg(q->d->store));
		return;
	}
	o = cJSON_CreateObject();
	a = cJSON_AddArrayToObject(o, "events");
	for (size_t i = 0; i < n; i++) {
		e = api_entry_json(a, v[i].id, v[i].ts);
		json_add_string(e, "kind", v[i].kind);
		cJSON_AddItemToObject(e, "data", api_record_json(v[i].data));
	}
	store_run_event_list_free(v, n);
	api_ok(q, 200, o);
}

/* ---- approvals ---------------------------------------------------------------- */

/* The task an approval's run belongs to, for people deciding; NULL if unknown. */
static char *
api_approval_task(struct daemon *d, const char *run_id)
{
	struct store_run	 r;
	char			*name = NULL;

	if (d != NULL && store_run_get(d->store, run_id, &r) == 1) {
		if (r.task_name != NULL)
			name = strdup(r.task_name);
		store_run_free(&r);
	}
	return name;
}

static cJSON *
api_approval_json_d(struct daemon *d, const struct store_approval *a)
{
	cJSON	*o = cJSON_CreateObject();
	char	*task = api_approval_task(d, a->run_id);
	int64_t	 left = tgapi_seconds_left(a->deadline, time(NULL));

	json_add_string(o, "id", a->id);
	json_add_string(o, "run_id", a->run_id);
	json_add_string(o, "task", task);
	free(task);
	if (a->state == STORE_APPROVAL_PENDING && left != INT64_MIN)
		cJSON_AddNumberToObject(o, "seconds_left", (double)(left > 0 ? left : 0));
	json_add_string(o, "tool", a->tool);
	json_add_string(o, "risk", a->risk != NULL ? a->risk : "ordinary");
	json_add_string(o, "risk_rule", a->risk_rule);
	/* What "always for this task" would remember (absent: nothing can be). */
	if (a->family != NULL)
		json_add_string(o, "family", a->family);
	cJSON_AddItemToObject(o, "input", api_record_json(a->input));
	json_add_string(o, "state", store_approval_state_name(a->state));
	json_add_string(o, "message", a->message);
	json_add_string(o, "answered_by", a->answered_by);
	json_add_string(o, "created_at", a->created_at);
	json_add_string(o, "deadline", a->deadline);
	json_add_string(o, "answered_at", a->answered_at);
	return o;
}

static cJSON *
api_approval_json(const struct store_approval *a)
{
	return api_approval_json_d(NULL, a);
}

/* Pending approvals, oldest first, as cwctl status leads with them. */
static cJSON *
api_pending_approvals(struct daemon *d)
{
	struct store_approval	*v;
	size_t			 n;
	cJSON			*a = cJSON_CreateArray();

	if (store_approval_list_pending(d->store, NULL, &v, &n) == -1)
		return a;
	for (size_t i = 0; i < n; i++)
		cJSON_AddItemToArray(a, api_approval_json_d(d, &v[i]));
	store_approval_list_free(v, n);
	return a;
}

static void
api_approvals_list(struct api_req *q)
{
	struct store_approval	*v;
	size_t			 n;
	cJSON			*o, *a;

	if (store_approval_list_pending(q->d->store, api_param(q, "run"), &v, &n) == -1) {
		api_error(q, 500, "internal", "%s", store_errmsg(q->d->store));
		return;
	}
	o = cJSON_CreateObject();
	a = cJSON_AddArrayToObject(o, "approvals");
	for (size_t i = 0; i < n; i++)
		cJSON_AddItemToArray(a, api_approval_json_d(q->d, &v[i]));
	store_approval_list_free(v, n);
	api_ok(q, 200, o);
}

static void
api_approval_answer(struct api_req *q, const char *id)
{
	struct store_approval	 a;
	const char		*dec, *msg, *scope;
	char			 why[512];
	cJSON			*body, *j;
	int			 allow;

	if ((body = api_body(q)) == NULL)
		return;
	dec = json_get_string(body, "decision");
	msg = json_get_string(body, "message");
	scope = json_get_string(body, "scope");
	if (scope != NULL && strcmp(scope, "run") != 0 && strcmp(scope, "task") != 0) {
		cJSON_Delete(body);
		api_error(q, 400, "invalid_field", "scope: must be \"run\" or \"task\"");
		return;
	}
	if (dec == NULL || (strcmp(dec, "allow") != 0 && strcmp(dec, "deny") != 0)) {
		cJSON_Delete(body);
		api_error(q, 400, "invalid_field", "decision: must be \"allow\" or \"deny\"");
		return;
	}
	if (msg != NULL && strlen(msg) > 4096) {
		cJSON_Delete(body);
		api_error(q, 400, "invalid_field", "message: at most 4096 bytes");
		return;
	}
	allow = strcmp(dec, "allow") == 0;
	j = cJSON_CreateObject();
	json_add_string(j, "decision", dec);
	switch (approvals_respond(q->d, id, allow, msg, q->actor, why, sizeof why)) {
	case APPROVALS_OK: {
		char	 rule[NETRULE_HOST_MAX + FLOOR_FAMILY_MAX + 16], rwhy[300];
		int	 kept = -2;

		if (allow && scope != NULL && strcmp(scope, "task") == 0) {
			if ((kept = approvals_for_task(q->d, id, q->actor, rule,
			    sizeof rule, rwhy, sizeof rwhy)) == 0)
				json_add_string(j, "task_rule", rule);
			else {
				json_add_string(j, "task_rule_error", rwhy);
				log_warn("approval %s: not kept for the task: %s", id, rwhy);
			}
		}
		journal_audit(q->d, q->actor, "approval.answer", id, j);
		cJSON_Delete(body);
		if (store_approval_get(q->d->store, id, &a) == 1) {
			cJSON	*o = api_approval_json(&a);

			/* What "always for this task" kept, or why it kept nothing. */
			if (o != NULL && kept == 0)
				json_add_string(o, "task_rule", rule);
			else if (o != NULL && kept == -1)
				json_add_string(o, "task_rule_error", rwhy);
			api_ok(q, 200, o);
			store_approval_free(&a);
		} else
			api_error(q, 500, "internal", "%s", store_errmsg(q->d->store));
		return;
	}
	case APPROVALS_NOT_FOUND:
		api_error(q, 404, "not_found", "%s", why);
		break;
	case APPROVALS_ALREADY:
		api_error(q, 409, "already_answered", "%s", why);
		break;
	case APPROVALS_RUN_ENDED:
		api_error(q, 409, "run_ended", "%s", why);
		break;
	case APPROVALS_REFUSED:
		api_error(q, 409, "refused", "%s", why);
		break;
	default:
		api_error(q, 500, "internal", "%s", why);
		break;
	}
	cJSON_Delete(j);
	cJSON_Delete(body);
}

/* ---- telegram ------------------------------------------------------------------ */

static void
api_telegram_status(struct api_req *q)
{
	api_ok(q, 200, telegram_status_json(q->d));
}

/* The bot token: stored in the secret store, never echoed, never in the audit data. */
static void
api_telegram_token(struct api_req *q)
{
	cJSON		*body, *t, *o;
	char		 err[512];
	int		 rc;

	if ((body = api_body(q)) == NULL)
		return;
	t = cJSON_GetObjectItemCaseSensitive(body, "token");
	rc = telegram_set_token(q->d, cJSON_IsString(t) ? t->valuestring : NULL, err,
	    sizeof err);
	if (cJSON_IsString(t))
		explicit_bzero(t->valuestring, strlen(t->valuestring));
	cJSON_Delete(body);
	if (rc == -1) {
		api_error(q, strncmp(err, "token:", 6) == 0 ? 400 : 500,
		    strncmp(err, "token:", 6) == 0 ? "invalid_field" : "internal", "%s", err);
		return;
	}
	journal_audit(q->d, q->actor, "telegram.set_token", NULL, NULL);
	o = telegram_status_json(q->d);
	api_ok(q, 200, o);
}

static void
api_telegram_token_remove(struct api_req *q)
{
	char	 err[512];
	int	 rc;

	if ((rc = secret_remove(q->d->home, TELEGRAM_TOKEN_SECRET, err,
	    sizeof err)) == -1) {
		api_error(q, 500, "internal", "%s", err);
		return;
	}
	telegram_reload(q->d);
	journal_audit(q->d, q->actor, "telegram.remove_token", NULL, NULL);
	api_ok(q, 200, telegram_status_json(q->d));
}

static void
api_telegram_test(struct api_req *q)
{
	cJSON	*body;
	double	 chat = 0;
	char	 err[256];

	if ((body = api_body(q)) == NULL)
		return;
	if (json_get_number(body, "chat_id", &chat) == -1 || chat == 0 ||
	    chat != (double)(int64_t)chat) {
		cJSON_Delete(body);
		api_error(q, 400, "invalid_field", "chat_id: a non-zero whole number");
		return;
	}
	cJSON_Delete(body);
	if (telegram_test(q->d, (int64_t)chat, err, sizeof err) == -1) {
		api_error(q, 409, "not_configured", "%s", err);
		return;
	}
	api_ok(q, 202, telegram_status_json(q->d));
}

/* ---- journal, audit, gc ------------------------------------------------------- */

static void
api_journal(struct api_req *q)
{
	struct store_journal_entry	*v;
	size_t				 n;
	long long			 since, limit;
	cJSON				*o, *a, *e;

	if (api_param_page(q, 0, &since, &limit) == -1)
		return;
	if (store_journal_list(q->d->store, api_param(q, "run"), since, (size_t)limit, &v,
	    &n) == -1) {
		api_error(q, 500, "internal", "%s", store_errmsg(q->d->store));
		return;
	}
	o = cJSON_CreateObject();
	a = cJSON_AddArrayToObject(o, "entries");
	for (size_t i = 0; i < n; i++) {
		e = api_entry_json(a, v[i].id, v[i].ts);
		json_add_string(e, "run_id", v[i].run_id);
		json_add_string(e, "kind", v[i].kind);
		cJSON_AddItemToObject(e, "data", api_record_json(v[i].data));
	}
	store_journal_list_free(v, n);
	api_ok(q, 200, o);
}

static void
api_audit(struct api_req *q)
{
	struct store_audit_entry	*v;
	size_t				 n;
	long long			 since, limit;
	cJSON				*o, *a, *e;

	if (api_param_page(q, 0, &since, &limit) == -1)
		return;
	if (store_audit_list(q->d->store, since, (size_t)limit, &v, &n) == -1) {
		api_error(q, 500, "internal", "%s", store_errmsg(q->d->store));
		return;
	}
	o = cJSON_CreateObject();
	a = cJSON_AddArrayToObject(o, "entries");
	for (size_t i = 0; i < n; i++) {
		e = api_entry_json(a, v[i].id, v[i].ts);
		json_add_string(e, "actor", v[i].actor);
		json_add_string(e, "action", v[i].action);
		json_add_string(e, "target", v[i].target);
		cJSON_AddItemToObject(e, "data", api_record_json(v[i].data));
	}
	store_audit_list_free(v, n);
	api_ok(q, 200, o);
}

static void
api_gc(struct api_req *q)
{
	struct store_task	 t;
	struct gc_result	 res;
	struct evbuffer		*in = evhttp_request_get_input_buffer(q->req);
	cJSON			*body = NULL, *o, *list;
	const char		*name;
	int64_t			 task_id = 0;
	int			 force = 0;

	if (evbuffer_get_length(in) > 0) {
		if ((body = api_body(q)) == NULL)
			return;
		if (json_get_bool(body, "force", &force) == -1 &&
		    cJSON_GetObjectItemCaseSensitive(body, "force") != NULL) {
			cJSON_Delete(body);
			api_error(q, 400, "invalid_field", "force: must be true or false");
			return;
		}
		if ((name = json_get_string(body, "task")) != NULL) {
			if (api_task_lookup(q, name, &t) == -1) {
				cJSON_Delete(body);
				return;
			}
			task_id = t.id;
			store_task_free(&t);
		}
		cJSON_Delete(body);
	}
	o = cJSON_CreateObject();
	list = cJSON_AddArrayToObject(o, "pruned");
	if (gc_run(q->d, task_id, force, &res, list) == -1) {
		cJSON_Delete(o);
		api_error(q, 500, "internal", "gc failed: %s", store_errmsg(q->d->store));
		return;
	}
	cJSON_AddNumberToObject(o, "kept", (double)res.kept);
	cJSON_AddNumberToObject(o, "caches_removed", (double)res.caches);
	body = cJSON_CreateObject();
	cJSON_AddBoolToObject(body, "force", force);
	cJSON_AddNumberToObject(body, "pruned", (double)res.pruned);
	journal_audit(q->d, q->actor, "gc", NULL, body);
	api_ok(q, 200, o);
}

/* ---- review and land a run's work (review.c) ----------------------------------- */

#define API_DIFF_MAX	(4 * 1024 * 1024)

/* The run, its task, and the repository its branch is in; answers itself when not. */
static int
api_run_repo(struct api_req *q, const char *id, struct store_run *r, struct store_task *t)
{
	if (api_run_lookup(q, id, r) == -1)
		return -1;
	if (r->branch == NULL || r->base_commit == NULL ||
	    store_task_get(q->d->store, r->task_id, t) != 1 || t->repo == NULL) {
		api_error(q, 409, "no_branch", "run %s has no branch in a repository "
		    "(a scratch run, or one that never started)", r->id);
		store_run_free(r);
		return -1;
	}
	return 0;
}

/* GET /api/runs/ID/diff[?patch=0]: the branch's diff from the run's base, masked. */
static void
api_run_diff(struct api_req *q, const char *id)
{
	struct store_run	 r;
	struct store_task	 t;
	struct review_diff	 df;
	const char		*p = api_param(q, "patch");
	char			 err[512], *m;
	cJSON			*o;

	if (api_run_repo(q, id, &r, &t) == -1)
		return;
	if (review_diff(t.repo, r.base_commit, r.branch, p == NULL || strcmp(p, "0") != 0,
	    API_DIFF_MAX, &df, err, sizeof err) == -1) {
		api_error(q, 409, "no_diff", "run %s: %s", r.id, err);
		goto out;
	}
	o = cJSON_CreateObject();
	json_add_string(o, "id", r.id);
	json_add_string(o, "branch", r.branch);
	json_add_string(o, "base_commit", r.base_commit);
	json_add_string(o, "tip", df.tip);
	cJSON_AddItemToObject(o, "files", df.files);
	df.files = NULL;
	m = mask_secrets(df.stat);
	json_add_string(o, "stat", m != NULL ? m : "");
	free(m);
	if (df.patch != NULL) {
		m = mask_secrets(df.patch);
		json_add_string(o, "patch", m != NULL ? m : "");
		free(m);
		cJSON_AddBoolToObject(o, "truncated", df.truncated);
	}
	review_diff_free(&df);
	api_ok(q, 200, o);
out:
	store_task_free(&t);
	store_run_free(&r);
}

/*
 * A run whose work a person has already merged, landed or discarded is refused any
 * second one (issue 27), with what was done and when: 409 already_<state>. push is
 * allowed after a merge (the branch is still there), not after a land or discard.
 * Answers itself and returns -1 when refused.
 */
static int
api_run_reviewed(struct api_req *q, const struct store_run *r, const char *verb,
    int push)
{
	char	 said[512], code[48];
	cJSON	*d;

	if (r->review_state == NULL || (push && strcmp(r->review_state, "merged") == 0))
		return 0;
	runreview_said(r->id, r->review_state, r->review_at, r->review_detail, said,
	    sizeof said);
	snprintf(code, sizeof code, "already_%s", r->review_state);
	d = cJSON_CreateObject();
	json_add_string(d, "refused", said);
	json_add_string(d, "state", r->review_state);
	journal_audit(q->d, q->actor, verb, r->id, d);
	api_error(q, 409, code, "%s", said);
	return -1;
}

/* The run as the store has it now, its "review" object into o (a reply). */
static void
api_run_add_review(struct api_req *q, const char *id, cJSON *o)
{
	struct store_run	r;

	if (store_run_get(q->d->store, id, &r) == 1) {
		cJSON_AddItemToObject(o, "review", runs_review_json(&r));
		store_run_free(&r);
	} else
		cJSON_AddNullToObject(o, "review");
}

/*
 * Record state once and journal it (a, the journal's data, is consumed); 0, or -1
 * when the store refused it.
 */
static int
api_run_set_review(struct api_req *q, const struct store_run *r, const char *state,
    const char *detail, const char *kind, const char *action, cJSON *a)
{
	char	at[STORE_TIME_LEN];
	int	rc;

	rc = store_run_set_review(q->d->store, r->id, state, detail, at, sizeof at);
	if (rc != 1) {
		log_error("run %s: recording it %s: %s", r->id, state, rc == 0 ?
		    "it already has an end state" : store_errmsg(q->d->store));
		cJSON_Delete(a);
		return -1;
	}
	json_add_string(a, "review_state", state);
	json_add_string(a, "detail", detail);
	json_add_string(a, "at", at);
	journal_add(q->d, r->id, kind, cJSON_Duplicate(a, 1));
	json_add_string(a, "actor", q->actor);
	journal_audit(q->d, q->actor, action, r->id, a);
	return 0;
}

/*
 * A continue of this run works on its branch (issue 23): its branch and worktree are
 * not removed under it. Answers itself and returns -1 when held.
 */
static int
api_run_branch_free(struct api_req *q, const struct store_run *r, const char *verb)
{
	char	holder[STORE_ID_LEN];
	int	live = 0;

	if (r->branch != NULL && store_run_branch_holder(q->d->store, r->branch, r->id,
	    holder, sizeof holder, &live) == 1 && live) {
		api_error(q, 409, "branch_held", "branch %s is held by run %s, which "
		    "has not ended: %s once it ends", r->branch, holder, verb);
		return -1;
	}
	return 0;
}

/*
 * POST /api/runs/ID/merge {"into": BRANCH, "mode": "merge"|"ff-only"|"squash",
 * "accept_automation": true|false}. A run that changes automation files is refused
 * (409 automation_files, the files in "automation") unless accept_automation is true.
 * POST /api/runs/ID/land takes the same and then removes the run's branch and
 * worktree, as discard does: the work is in the target branch now.
 */
static void
api_run_merge(struct api_req *q, const char *id, int land)
{
	struct store_run	 r;
	struct store_task	 t;
	struct review_merge	 res;
	struct evbuffer		*in = evhttp_request_get_input_buffer(q->req);
	enum review_mode	 mode = REVIEW_MERGE;
	cJSON			*body = NULL, *a, *o;
	const char		*into = NULL;
	char			 err[1024], detail[512], derr[768];
	int			 rc, accept = 0, gone = 1;

	if (evbuffer_get_length(in) > 0 && (body = api_body(q)) == NULL)
		return;
	cJSON_ArrayForEach(a, body) {
		if (a->string != NULL && strcmp(a->string, "accept_automation") == 0 &&
		    cJSON_IsBool(a)) {
			accept = cJSON_IsTrue(a);
			continue;
		}
		if (a->string == NULL || (strcmp(a->string, "into") != 0 &&
		    strcmp(a->string, "mode") != 0) || !cJSON_IsString(a)) {
			api_error(q, 400, "invalid_field", "%.64s: unknown field or of the "
			    "wrong type", a->string != NULL ? a->string : "?");
			cJSON_Delete(body);
			return;
		}
	}
	into = json_get_string(body, "into");
	if (review_mode_parse(json_get_string(body, "mode"), &mode) == -1) {
		api_error(q, 400, "invalid_field", "mode: one of merge, ff-only, squash");
		cJSON_Delete(body);
		return;
	}
	if (api_run_repo(q, id, &r, &t) == -1) {
		cJSON_Delete(body);
		return;
	}
	if (!store_run_status_terminal(r.status)) {
		api_error(q, 409, "run_live", "run %s is still %s: stop it or wait for it to "
		    "end before %s", r.id, store_run_status_name(r.status),
		    land ? "landing" : "merging");
		goto out;
	}
	if (api_run_reviewed(q, &r, land ? "run.land_refused" : "run.merge_refused",
	    0) == -1)
		goto out;
	if (land && api_run_branch_free(q, &r, "land") == -1)
		goto out;
	rc = review_merge(t.repo, r.id, r.branch, into, mode, accept, &res, err,
	    sizeof err);
	a = cJSON_CreateObject();
	json_add_string(a, "branch", r.branch);
	json_add_string(a, "into", res.into[0] != '\0' ? res.into : into);
	json_add_string(a, "mode", review_mode_name(mode));
	json_add_string(a, "repo", t.repo);
	if (res.automation != NULL && cJSON_GetArraySize(res.automation) > 0) {
		cJSON_AddItemReferenceToObject(a, "automation", res.automation);
		cJSON_AddBoolToObject(a, "accept_automation", accept);
	}
	if (rc != REVIEW_OK) {
		json_add_string(a, "refused", err);
		if (res.conflicts != NULL)
			cJSON_AddItemReferenceToObject(a, "conflicts", res.conflicts);
		if (res.left_alone != NULL && cJSON_GetArraySize(res.left_alone) > 0)
			cJSON_AddItemReferenceToObject(a, "left_alone", res.left_alone);
		journal_audit(q->d, q->actor, land ? "run.land_refused" :
		    "run.merge_refused", r.id, a);
		if (rc == REVIEW_AUTOMATION || rc == REVIEW_IGNORED) {
			cJSON *e = cJSON_CreateObject(), *x;

			json_add_string(e, "code", rc == REVIEW_AUTOMATION ?
			    "automation_files" : "untracked_in_the_way");
			json_add_string(e, "message", err);
			if (rc == REVIEW_AUTOMATION)
				cJSON_AddItemToObject(e, "automation",
				    cJSON_Duplicate(res.automation, 1));
			else
				cJSON_AddItemToObject(e, "left_alone",
				    cJSON_Duplicate(res.left_alone, 1));
			x = cJSON_CreateObject();
			cJSON_AddItemToObject(x, "error", e);
			api_send(q->req, 409, x);
		} else if (rc == REVIEW_CONFLICT) {
			char list[512] = "";
			size_t off = 0;
			cJSON *c;

			cJSON_ArrayForEach(c, res.conflicts)
				if (off < sizeof list)
					off += (size_t)snprintf(list + off, sizeof list - off,
					    "%s%s", off ? ", " : "", c->valuestring);
			api_error(q, 409, "merge_conflict", "%s: %s", err, list);
		} else
			api_error(q, rc == REVIEW_REFUSED ? 409 : 500,
			    rc == REVIEW_REFUSED ? "merge_refused" : "internal", "%s", err);
		review_merge_free(&res);
		goto out;
	}
	json_add_string(a, "result", res.result);
	json_add_string(a, "commit", res.commit);
	/*
	 * Merged: that is recorded first, so that a land whose removal fails afterwards
	 * still shows the work as merged (and refuses a second merge) rather than waiting.
	 */
	snprintf(detail, sizeof detail, "into %s, %s", res.into, res.result);
	if (land) {
		derr[0] = '\0';
		if (review_discard(t.repo, r.worktree, r.id, r.branch, derr,
		    sizeof derr) == -1)
			gone = 0;
		else
			snprintf(detail, sizeof detail, "into %s, %s; branch %s and its "
			    "worktree removed", res.into, res.result, r.branch);
		if (!gone)
			json_add_string(a, "remove_failed", derr);
	}
	if (api_run_set_review(q, &r, land && gone ? "landed" : "merged", detail,
	    land && gone ? "run_landed" : "run_merged", land && gone ? "run.land" :
	    "run.merge", a) == -1) {
		review_merge_free(&res);
		api_error(q, 500, "internal", "run %s was merged into %s but recording it "
		    "failed: %s", r.id, res.into, store_errmsg(q->d->store));
		goto out;
	}
	review_merge_free(&res);
	if (land && !gone) {
		api_error(q, 500, "internal", "run %s was merged into %s (%s), but removing "
		    "its branch and worktree failed: %s", r.id, res.into, res.result, derr);
		goto out;
	}
	o = cJSON_CreateObject();
	json_add_string(o, "id", r.id);
	json_add_string(o, "branch", r.branch);
	json_add_string(o, "into", res.into);
	json_add_string(o, "result", res.result);
	json_add_string(o, "commit", res.commit);
	api_run_add_review(q, r.id, o);
	api_ok(q, 200, o);
out:
	cJSON_Delete(body);
	store_task_free(&t);
	store_run_free(&r);
}

/* POST /api/runs/ID/discard: the run's branch and worktree go. */
static void
api_run_discard(struct api_req *q, const char *id)
{
	struct store_run	 r;
	struct store_task	 t;
	char			 err[768], detail[512];
	cJSON			*a, *o;

	if (api_run_repo(q, id, &r, &t) == -1)
		return;
	if (!store_run_status_terminal(r.status)) {
		api_error(q, 409, "run_live", "run %s is still %s: stop it first", r.id,
		    store_run_status_name(r.status));
		goto out;
	}
	if (api_run_reviewed(q, &r, "run.discard_refused", 0) == -1 ||
	    api_run_branch_free(q, &r, "discard") == -1)
		goto out;
	if (review_discard(t.repo, r.worktree, r.id, r.branch, err, sizeof err) == -1) {
		api_error(q, 500, "internal", "discarding run %s: %s", r.id, err);
		goto out;
	}
	a = cJSON_CreateObject();
	json_add_string(a, "branch", r.branch);
	json_add_string(a, "repo", t.repo);
	snprintf(detail, sizeof detail, "branch %s and its worktree removed", r.branch);
	if (api_run_set_review(q, &r, "discarded", detail, "run_discarded",
	    "run.discard", a) == -1) {
		api_error(q, 500, "internal", "run %s was discarded but recording it "
		    "failed: %s", r.id, store_errmsg(q->d->store));
		goto out;
	}
	o = cJSON_CreateObject();
	json_add_string(o, "id", r.id);
	json_add_string(o, "branch", r.branch);
	cJSON_AddBoolToObject(o, "discarded", 1);
	api_run_add_review(q, r.id, o);
	api_ok(q, 200, o);
out:
	store_task_free(&t);
	store_run_free(&r);
}

/*
 * POST /api/runs/ID/pushed {"remote": R, "branch": B}: cwctl pushed the run's branch.
 * The push itself is not the daemon's: it is the person's own git with their own
 * credentials (ssh-agent, a credential helper, gh's token), which the daemon neither
 * has nor should; cwctl runs it as them (cwctl-push.c) and then records it here. So
 * this records a claim of the local user's (API_AUTH_LOCAL), journaled as such.
 */
static void
api_run_pushed(struct api_req *q, const char *id)
{
	struct store_run	 r;
	cJSON			*body, *a, *o;
	const char		*remote, *branch;
	char			 at[STORE_TIME_LEN], *mremote = NULL;
	int			 rc;

	if ((body = api_body(q)) == NULL)
		return;
	cJSON_ArrayForEach(a, body)
		if (a->string == NULL || (strcmp(a->string, "remote") != 0 &&
		    strcmp(a->string, "branch") != 0) || !cJSON_IsString(a)) {
			api_error(q, 400, "invalid_field", "%.64s: unknown field or of the "
			    "wrong type", a->string != NULL ? a->string : "?");
			cJSON_Delete(body);
			return;
		}
	remote = json_get_string(body, "remote");
	branch = json_get_string(body, "branch");
	if (remote == NULL || *remote == '\0' || strlen(remote) > 255 ||
	    (branch != NULL && strlen(branch) > 255)) {
		api_error(q, 400, "invalid_field", "remote: the remote pushed to is "
		    "required (at most 255 bytes), and branch at most 255");
		cJSON_Delete(body);
		return;
	}
	if (api_run_lookup(q, id, &r) == -1) {
		cJSON_Delete(body);
		return;
	}
	if (r.branch == NULL) {
		api_error(q, 409, "no_branch", "run %s has no branch", r.id);
		goto out;
	}
	if (api_run_reviewed(q, &r, "run.push_refused", 1) == -1)
		goto out;
	if (branch == NULL)
		branch = r.branch;
	/*
	 * A remote may be a URL with a token in it (--remote https://TOKEN@host/...):
	 * masked before it is stored, as every record is as it enters the daemon.
	 */
	if ((mremote = mask_secrets(remote)) == NULL) {
		api_error(q, 500, "internal", "out of memory");
		goto out;
	}
	if ((rc = store_run_set_pushed(q->d->store, r.id, mremote, branch, at,
	    sizeof at)) != 1) {
		api_error(q, 500, "internal", "recording the push of run %s: %s", r.id,
		    rc == 0 ? "it was landed or discarded meanwhile" :
		    store_errmsg(q->d->store));
		goto out;
	}
	a = cJSON_CreateObject();
	json_add_string(a, "remote", mremote);
	json_add_string(a, "branch", branch);
	json_add_string(a, "at", at);
	journal_add(q->d, r.id, "run_pushed", cJSON_Duplicate(a, 1));
	json_add_string(a, "actor", q->actor);
	journal_audit(q->d, q->actor, "run.push", r.id, a);
	o = cJSON_CreateObject();
	json_add_string(o, "id", r.id);
	api_run_add_review(q, r.id, o);
	api_ok(q, 200, o);
out:
	free(mremote);
	cJSON_Delete(body);
	store_run_free(&r);
}

/* ---- the Inbox and exports --------------------------------------------------- */

/* POST /api/inbox/code: a one-time sign-in link for `cwctl inbox` (token only). */
static void
api_inbox_code(struct api_req *q)
{
	char	 code[128], url[256];
	cJSON	*o;

	if (inbox_code_new(q->d, code, sizeof code) == -1) {
		api_error(q, 500, "internal", "cannot make a sign-in code: %s",
		    strerror(errno));
		return;
	}
	snprintf(url, sizeof url, "http://127.0.0.1:%d/inbox/login?code=%s", q->d->port,
	    code);
	journal_audit(q->d, q->actor, "inbox.code", NULL, NULL);
	o = cJSON_CreateObject();
	json_add_string(o, "url", url);
	cJSON_AddNumberToObject(o, "expires_in", INBOX_CODE_TTL);
	api_ok(q, 201, o);
}

/* POST /api/inbox/revoke: end every Inbox session (token only). */
static void
api_inbox_revoke(struct api_req *q)
{
	cJSON	*o = cJSON_CreateObject(), *a = cJSON_CreateObject();
	int	 n = inbox_revoke(q->d);

	cJSON_AddNumberToObject(a, "sessions", n);
	journal_audit(q->d, q->actor, "inbox.revoke", NULL, a);
	cJSON_AddNumberToObject(o, "revoked", n);
	api_ok(q, 200, o);
}

/*
 * The proof-of-work export: as JSON {"html": ...} for cwctl (/api/runs/ID/export), or
 * as the HTML file itself (/workforce/runs/ID/proof-of-work). export_run() writes the
 * audit entry and counts the export.
 */
static void
api_run_export(struct api_req *q, const char *id, int raw)
{
	struct store_run	 r;
	char			*html = NULL, err[512], fname[STORE_ID_LEN + 64];
	const char		*t = api_param(q, "transcript");
	cJSON			*o;

	if (api_run_lookup(q, id, &r) == -1)
		return;
	store_run_free(&r);
	if (export_run(q->d, id, t != NULL && strcmp(t, "1") == 0, q->actor, &html, err,
	    sizeof err) == -1) {
		api_error(q, 500, "internal", "export of %s failed: %s", id, err);
		return;
	}
	if (!raw) {
		o = cJSON_CreateObject();
		json_add_string(o, "html", html);
		free(html);
		api_ok(q, 200, o);
		return;
	}
	inbox_security_headers(q->req);
	evhttp_add_header(evhttp_request_get_output_headers(q->req), "Content-Type",
	    "text/html; charset=utf-8");
	snprintf(fname, sizeof fname, "attachment; filename=\"proof-of-work-%s.html\"",
	    id);
	evhttp_add_header(evhttp_request_get_output_headers(q->req),
	    "Content-Disposition", fname);
	httpd_reply(q->req, 200, NULL, html, strlen(html));
	free(html);
}

/* ---- routing ------------------------------------------------------------------ */

static int
api_split(struct api_req *q, const char *path)
{
	char	*p, *save = NULL, *s;

	if (strlen(path) >= sizeof q->pathbuf)
		return -1;
	snprintf(q->pathbuf, sizeof q->pathbuf, "%s", path);
	snprintf(q->segbuf, sizeof q->segbuf, "%s", path);
	p = q->segbuf;
	for (s = strtok_r(p, "/", &save); s != NULL; s = strtok_r(NULL, "/", &save)) {
		if (q->nseg == API_MAX_SEGS)
			return -1;
		q->seg[q->nseg++] = s;
	}
	return 0;
}

/* Handlers with the path's third segment as their argument, for the table. */
static void
api_task_show(struct api_req *q)
{
	struct store_task	t;

	if (api_task_lookup(q, q->seg[2], &t) == -1)
		return;
	api_ok(q, 200, tasks_to_json(&t));
	store_task_free(&t);
}

/* ---- a task's network policy (SPEC N1) ---------------------------------------- */

static cJSON *
api_task_network_json(struct api_req *q, const struct store_task *t)
{
	struct strlist	 allow = { 0 };
	cJSON		*o, *a;
	int		 ask;

	if (store_task_network_get(q->d->store, t->id, &ask, &allow) == -1)
		return NULL;
	o = cJSON_CreateObject();
	json_add_string(o, "task", t->name);
	cJSON_AddBoolToObject(o, "ask", ask);
	a = cJSON_AddArrayToObject(o, "allow");
	for (size_t i = 0; i < allow.n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(allow.v[i]));
	strlist_free(&allow);
	return o;
}

static void
api_task_network_r(struct api_req *q)
{
	struct store_task	 t;

	if (api_task_lookup(q, q->seg[2], &t) == -1)
		return;
	api_ok_built(q, api_task_network_json(q, &t));
	store_task_free(&t);
}

/* {"ask":bool, "allow":[rules]} replaces what is given; "add":[rules] appends. */
static void
api_task_network_set_r(struct api_req *q)
{
	struct store_task	 t;
	struct strlist		 allow = { 0 };
	struct netrule		 nr;
	const cJSON		*ask, *list, *e;
	const char		*keys[] = { "allow", "add" };
	char			 nerr[400];
	int			 cur_ask;
	cJSON			*body;

	if (api_task_lookup(q, q->seg[2], &t) == -1)
		return;
	if ((body = api_body(q)) == NULL) {
		store_task_free(&t);
		return;
	}
	ask = cJSON_GetObjectItemCaseSensitive(body, "ask");
	if (ask != NULL && !cJSON_IsBool(ask)) {
		api_error(q, 400, "invalid_field", "ask: must be true or false");
		goto out;
	}
	if (store_task_network_get(q->d->store, t.id, &cur_ask, &allow) == -1) {
		api_error(q, 500, "internal", "%s", store_errmsg(q->d->store));
		goto out;
	}
	for (size_t k = 0; k < 2; k++) {
		if ((list = cJSON_GetObjectItemCaseSensitive(body, keys[k])) == NULL)
			continue;
		if (!cJSON_IsArray(list) || cJSON_GetArraySize(list) > 256) {
			api_error(q, 400, "invalid_field", "%s: must be an array of at most "
			    "256 host:port rules", keys[k]);
			goto out;
		}
		if (k == 0)
			strlist_free(&allow);
		cJSON_ArrayForEach(e, list) {
			/* A rule set is kept by its name: its hosts are read at each run. */
			if (cJSON_IsString(e) && netsets_find(e->valuestring) != NULL) {
				strlist_add_unique(&allow, e->valuestring);
				continue;
			}
			if (!cJSON_IsString(e) || netrule_parse(e->valuestring, &nr, nerr,
			    sizeof nerr) == -1) {
				api_error(q, 400, "invalid_field", "%s: %s%s%s", keys[k],
				    cJSON_IsString(e) ? nerr : "rules are strings",
				    cJSON_IsString(e) ? ", nor a rule set: " : "",
				    cJSON_IsString(e) ? netsets_names() : "");
				goto out;
			}
			strlist_add_unique(&allow, nr.text);
		}
	}
	if (ask != NULL)
		cur_ask = cJSON_IsTrue(ask);
	if (store_task_network_set(q->d->store, t.id, cur_ask, &allow) == -1) {
		api_error(q, 500, "internal", "%s", store_errmsg(q->d->store));
		goto out;
	}
	journal_audit(q->d, q->actor, "task.network", t.name, cJSON_Duplicate(body, 1));
	api_ok_built(q, api_task_network_json(q, &t));
out:
	strlist_free(&allow);
	cJSON_Delete(body);
	store_task_free(&t);
}

/* ---- who answers, per task (SPEC A1) ---------------------------------------- */

/* {"task", "ask" (the task's, or null), "ask_effective", "rules": [...]}. */
static cJSON *
api_task_rules_json(struct daemon *d, const struct store_task *t)
{
	struct store_task_rule	*v = NULL;
	size_t			 n = 0;
	char			*ask = NULL, eff[128];
	cJSON			*o, *a, *e;

	if (store_task_ask_get(d->store, t->id, &ask) == -1 ||
	    store_task_rules_list(d->store, t->id, &v, &n) == -1) {
		free(ask);
		return NULL;
	}
	o = cJSON_CreateObject();
	json_add_string(o, "task", t->name);
	if (ask != NULL)
		json_add_string(o, "ask", ask);
	else
		cJSON_AddNullToObject(o, "ask");
	autoallow_ask_format(d->cfg.approvals_ask, eff, sizeof eff);
	json_add_string(o, "ask_effective", ask != NULL ? ask : eff);
	a = cJSON_AddArrayToObject(o, "rules");
	for (size_t i = 0; i < n; i++) {
		e = cJSON_CreateObject();
		json_add_string(e, "family", v[i].family);
		json_add_string(e, "max_risk", v[i].max_risk);
		json_add_string(e, "created_by", v[i].created_by);
		json_add_string(e, "created_at", v[i].created_at);
		json_add_string(e, "kind", v[i].kind);
		if (v[i].approval_id != NULL)
			json_add_string(e, "approval", v[i].approval_id);
		if (v[i].source != NULL)
			json_add_string(e, "source", v[i].source);
		cJSON_AddItemToArray(a, e);
	}
	store_task_rules_free(v, n);
	free(ask);
	return o;
}

static void
api_task_rules_r(struct api_req *q)
{
	struct store_task	 t;

	if (api_task_lookup(q, q->seg[2], &t) == -1)
		return;
	api_ok_built(q, api_task_rules_json(q->d, &t));
	store_task_free(&t);
}

/*
 * {"remove": FAMILY} forgets a remembered answer; {"ask": "all" | "none" | [risks] |
 * null} sets the risks the task asks about (null: config.yaml's). Runs already going
 * keep what they started with; a removal holds from the next run.
 */
static void
api_task_rules_set_r(struct api_req *q)
{
	struct store_task	 t;
	const cJSON		*rm, *ask, *e;
	const char		*words[8];
	size_t			 n = 0;
	unsigned		 mask;
	char			 err[256], text[128];
	cJSON			*body;

	if (api_task_lookup(q, q->seg[2], &t) == -1)
		return;
	if ((body = api_body(q)) == NULL) {
		store_task_free(&t);
		return;
	}
	rm = cJSON_GetObjectItemCaseSensitive(body, "remove");
	ask = cJSON_GetObjectItemCaseSensitive(body, "ask");
	if (rm == NULL && ask == NULL) {
		api_error(q, 400, "invalid_field", "remove or ask is needed");
		goto out;
	}
	if (rm != NULL && !cJSON_IsString(rm)) {
		api_error(q, 400, "invalid_field", "remove: the family, a string");
		goto out;
	}
	if (ask != NULL && !cJSON_IsNull(ask)) {
		if (cJSON_IsString(ask))
			words[n++] = ask->valuestring;
		else if (cJSON_IsArray(ask) && cJSON_GetArraySize(ask) > 0 &&
		    cJSON_GetArraySize(ask) <= 8) {
			cJSON_ArrayForEach(e, ask) {
				if (!cJSON_IsString(e)) {
					api_error(q, 400, "invalid_field", "ask: risks are "
					    "strings");
					goto out;
				}
				words[n++] = e->valuestring;
			}
		} else {
			api_error(q, 400, "invalid_field", "ask: all, none, null or a list "
			    "of risks");
			goto out;
		}
		if (autoallow_ask_parse(words, n, &mask, err, sizeof err) == -1) {
			api_error(q, 400, "invalid_field", "ask: %s", err);
			goto out;
		}
	}
	if (rm != NULL && store_task_rule_remove(q->d->store, t.id, rm->valuestring) ==
	    -1) {
		if (errno == ENOENT)
			api_error(q, 404, "not_found", "task %s has no rule '%s'", t.name,
			    rm->valuestring);
		else
			api_error(q, 500, "internal", "%s", store_errmsg(q->d->store));
		goto out;
	}
	if (ask != NULL) {
		if (!cJSON_IsNull(ask))
			autoallow_ask_format(mask, text, sizeof text);
		if (store_task_ask_set(q->d->store, t.id, cJSON_IsNull(ask) ? NULL :
		    text) == -1) {
			api_error(q, 500, "internal", "%s", store_errmsg(q->d->store));
			goto out;
		}
	}
	journal_audit(q->d, q->actor, rm != NULL ? "task.rule_remove" : "task.ask", t.name,
	    cJSON_Duplicate(body, 1));
	api_ok_built(q, api_task_rules_json(q->d, &t));
out:
	cJSON_Delete(body);
	store_task_free(&t);
}

/*
 * The task repository's own Claude rules (issue 23): GET shows each and what it would
 * become, with the digest of what is shown; POST {"digest": D} imports them only when
 * a fresh read has that digest (else 409 settings_changed, nothing changed). Reading
 * needs the task's repository; a malformed settings file is 422 naming it.
 */
static int
api_task_repo_rules_read(struct api_req *q, const struct store_task *t,
    struct reporules *rr)
{
	char	 err[512];

	if (t->repo == NULL) {
		api_error(q, 400, "invalid_field", "task %s has no repository", t->name);
		return -1;
	}
	if (reporules_read(t->repo, t->base, rr, err, sizeof err) == -1) {
		api_error(q, 422, "invalid_settings", "%s", err);
		return -1;
	}
	return 0;
}

static void
api_task_repo_rules_r(struct api_req *q)
{
	struct store_task	 t;
	struct reporules	 rr;
	cJSON			*o;

	if (api_task_lookup(q, q->seg[2], &t) == -1)
		return;
	if (api_task_repo_rules_read(q, &t, &rr) == 0) {
		o = reporules_json(&rr);
		json_add_string(o, "task", t.name);
		api_ok(q, 200, o);
		reporules_free(&rr);
	}
	store_task_free(&t);
}

static void
api_task_repo_rules_import_r(struct api_req *q)
{
	static const char *const keys[] = { "digest" };
	struct store_task	 t;
	struct reporules	 rr;
	const char		*digest;
	char			 err[512];
	size_t			 changed;
	cJSON			*body, *o;

	if (api_task_lookup(q, q->seg[2], &t) == -1)
		return;
	if ((body = api_body(q)) == NULL) {
		store_task_free(&t);
		return;
	}
	if (api_body_keys(q, body, keys, 1) == -1)
		goto out;
	if ((digest = json_get_string(body, "digest")) == NULL || strlen(digest) != 64 ||
	    strspn(digest, "0123456789abcdef") != 64) {
		api_error(q, 400, "invalid_field", "digest: the 64 hex digits the showing "
		    "printed (cwctl task rules %s --from-repo)", t.name);
		goto out;
	}
	if (api_task_repo_rules_read(q, &t, &rr) == -1)
		goto out;
	if (strcmp(digest, rr.digest) != 0) {
		api_error(q, 409, "settings_changed", "the Claude settings in %s (%s at %.12s) "
		    "are not the ones shown with that digest: nothing was imported; show them "
		    "again with cwctl task rules %s --from-repo", t.repo, rr.ref, rr.commit,
		    t.name);
	} else if (reporules_import(q->d, &t, &rr, q->actor, &changed, err,
	    sizeof err) == -1) {
		api_error(q, errno == ENOSPC ? 409 : 500, errno == ENOSPC ? "too_many_rules" :
		    "internal", "%s: nothing was imported", err);
	} else if ((o = api_task_rules_json(q->d, &t)) == NULL) {
		api_error(q, 500, "internal", "%s", store_errmsg(q->d->store));
	} else {
		cJSON_AddNumberToObject(o, "imported_changed", (double)changed);
		json_add_string(o, "imported_commit", rr.commit);
		api_ok(q, 200, o);
	}
	reporules_free(&rr);
out:
	cJSON_Delete(body);
	store_task_free(&t);
}

static void api_task_update_r(struct api_req *q) { api_task_update(q, q->seg[2]); }
static void api_task_remove_r(struct api_req *q) { api_task_remove(q, q->seg[2]); }
static void api_run_show_r(struct api_req *q) { api_run_show(q, q->seg[2]); }
static void api_run_stop_r(struct api_req *q) { api_run_stop(q, q->seg[2]); }
static void api_run_log_r(struct api_req *q) { api_run_log(q, q->seg[2]); }
static void api_run_events_r(struct api_req *q) { api_run_events(q, q->seg[2]); }
static void api_run_transcript_r(struct api_req *q) { api_run_transcript(q, q->seg[2]); }
static void api_run_export_json(struct api_req *q) { api_run_export(q, q->seg[2], 0); }
static void api_run_export_html(struct api_req *q) { api_run_export(q, q->seg[2], 1); }
static void api_approval_answer_r(struct api_req *q) { api_approval_answer(q, q->seg[2]); }
static void api_run_diff_r(struct api_req *q) { api_run_diff(q, q->seg[2]); }
static void api_run_merge_r(struct api_req *q) { api_run_merge(q, q->seg[2], 0); }
static void api_run_land_r(struct api_req *q) { api_run_merge(q, q->seg[2], 1); }
static void api_run_pushed_r(struct api_req *q) { api_run_pushed(q, q->seg[2]); }
static void api_run_discard_r(struct api_req *q) { api_run_discard(q, q->seg[2]); }

/*
 * Who may use a route, beyond the unix socket and the bearer token (which may use
 * them all): the Inbox's session through its gateway /inbox/api/..., reads of runs,
 * approvals, tasks and the journal and the page's writes (answering an approval;
 * starting, stopping, merging, discarding a run); and the
 * session directly for the proof-of-work download the Inbox links to.
 */
enum api_auth {
	API_AUTH_LOCAL = 0,	/* the socket or the token only */
	API_AUTH_INBOX,		/* also the Inbox gateway */
	API_AUTH_SESSION,	/* also the Inbox session on its own path */
};

/* How this request was authenticated, in api_cb. */
enum api_via {
	API_VIA_LOCAL = 0,
	API_VIA_INBOX,
	API_VIA_SESSION,
};

struct api_route {
	const char		*path;		/* segments; "*" matches one */
	enum evhttp_cmd_type	 method;
	enum api_auth		 auth;
	void			(*fn)(struct api_req *);
};

/* The one route table: every endpoint, its method and its auth rule. */
static const struct api_route api_routes[] = {
	{ "api/status",			EVHTTP_REQ_GET,	   API_AUTH_LOCAL, api_status },
	{ "api/events",			EVHTTP_REQ_GET,	   API_AUTH_INBOX, api_events },
	{ "api/tasks",			EVHTTP_REQ_GET,	   API_AUTH_INBOX, api_tasks_list },
	{ "api/tasks",			EVHTTP_REQ_POST,   API_AUTH_LOCAL, api_task_add },
	{ "api/tasks/*",		EVHTTP_REQ_GET,	   API_AUTH_LOCAL, api_task_show },
	{ "api/tasks/*",		EVHTTP_REQ_PATCH,  API_AUTH_LOCAL, api_task_update_r },
	{ "api/tasks/*",		EVHTTP_REQ_DELETE, API_AUTH_LOCAL, api_task_remove_r },
	{ "api/tasks/*/history",	EVHTTP_REQ_GET,	   API_AUTH_LOCAL, api_jobs_task_history },
	{ "api/tasks/*/template",	EVHTTP_REQ_GET,	   API_AUTH_LOCAL, api_jobs_template_export },
	{ "api/templates",		EVHTTP_REQ_POST,   API_AUTH_LOCAL, api_jobs_template_import },
	{ "api/jobs",			EVHTTP_REQ_GET,	   API_AUTH_INBOX, api_jobs_list },
	{ "api/jobs/discover",		EVHTTP_REQ_POST,   API_AUTH_LOCAL, api_jobs_discover },
	{ "api/jobs/*",			EVHTTP_REQ_GET,	   API_AUTH_INBOX, api_jobs_show },
	{ "api/jobs/*/enable",		EVHTTP_REQ_POST,   API_AUTH_INBOX, api_jobs_enable },
	{ "api/runs/*/retry",		EVHTTP_REQ_POST,   API_AUTH_LOCAL, api_jobs_run_retry },
	{ "api/runs/*/continue",	EVHTTP_REQ_POST,   API_AUTH_LOCAL, api_jobs_run_continue },
	{ "api/tasks/*/network",	EVHTTP_REQ_GET,	   API_AUTH_LOCAL, api_task_network_r },
	{ "api/tasks/*/network",	EVHTTP_REQ_POST,   API_AUTH_LOCAL, api_task_network_set_r },
	{ "api/tasks/*/rules",		EVHTTP_REQ_GET,	   API_AUTH_LOCAL, api_task_rules_r },
	{ "api/tasks/*/rules",		EVHTTP_REQ_POST,   API_AUTH_LOCAL, api_task_rules_set_r },
	{ "api/tasks/*/repo-rules",	EVHTTP_REQ_GET,	   API_AUTH_LOCAL, api_task_repo_rules_r },
	{ "api/tasks/*/repo-rules",	EVHTTP_REQ_POST,   API_AUTH_LOCAL,
	  api_task_repo_rules_import_r },
	{ "api/runs",			EVHTTP_REQ_GET,	   API_AUTH_INBOX, api_runs_list },
	{ "api/runs",			EVHTTP_REQ_POST,   API_AUTH_INBOX, api_run_start },
	{ "api/runs/*",			EVHTTP_REQ_GET,	   API_AUTH_INBOX, api_run_show_r },
	{ "api/runs/*/stop",		EVHTTP_REQ_POST,   API_AUTH_INBOX, api_run_stop_r },
	{ "api/runs/*/diff",		EVHTTP_REQ_GET,	   API_AUTH_INBOX, api_run_diff_r },
	{ "api/runs/*/merge",		EVHTTP_REQ_POST,   API_AUTH_INBOX, api_run_merge_r },
	{ "api/runs/*/discard",		EVHTTP_REQ_POST,   API_AUTH_INBOX, api_run_discard_r },
	{ "api/runs/*/land",		EVHTTP_REQ_POST,   API_AUTH_INBOX, api_run_land_r },
	{ "api/runs/*/pushed",		EVHTTP_REQ_POST,   API_AUTH_LOCAL, api_run_pushed_r },
	{ "api/runs/*/log",		EVHTTP_REQ_GET,	   API_AUTH_INBOX, api_run_log_r },
	{ "api/runs/*/events",		EVHTTP_REQ_GET,	   API_AUTH_INBOX, api_run_events_r },
	{ "api/runs/*/transcript",	EVHTTP_REQ_GET,	   API_AUTH_INBOX, api_run_transcript_r },
	{ "api/runs/*/summary",		EVHTTP_REQ_GET,	   API_AUTH_INBOX, api_summary_run },
	{ "api/runs/*/export",		EVHTTP_REQ_GET,	   API_AUTH_LOCAL, api_run_export_json },
	{ "api/approvals",		EVHTTP_REQ_GET,	   API_AUTH_INBOX, api_approvals_list },
	{ "api/approvals/*",		EVHTTP_REQ_POST,   API_AUTH_INBOX, api_approval_answer_r },
	{ "api/journal",		EVHTTP_REQ_GET,	   API_AUTH_INBOX, api_journal },
	{ "api/audit",			EVHTTP_REQ_GET,	   API_AUTH_LOCAL, api_audit },
	{ "api/gc",			EVHTTP_REQ_POST,   API_AUTH_LOCAL, api_gc },
	{ "api/inbox/code",		EVHTTP_REQ_POST,   API_AUTH_LOCAL, api_inbox_code },
	{ "api/inbox/revoke",		EVHTTP_REQ_POST,   API_AUTH_LOCAL, api_inbox_revoke },
	{ "api/telegram",		EVHTTP_REQ_GET,	   API_AUTH_LOCAL, api_telegram_status },
	{ "api/telegram/token",		EVHTTP_REQ_POST,   API_AUTH_LOCAL, api_telegram_token },
	{ "api/telegram/token",		EVHTTP_REQ_DELETE, API_AUTH_LOCAL,
	    api_telegram_token_remove },
	{ "api/telegram/test",		EVHTTP_REQ_POST,   API_AUTH_LOCAL, api_telegram_test },
	{ "workforce/runs/*/proof-of-work", EVHTTP_REQ_GET, API_AUTH_SESSION,
	    api_run_export_html },
};

/* Does the request's path match pattern, segment by segment? */
static int
api_path_match(const struct api_req *q, const char *pattern)
{
	const char	*p = pattern, *end;
	size_t		 i = 0, n;

	while (*p != '\0') {
		end = strchr(p, '/');
		n = end != NULL ? (size_t)(end - p) : strlen(p);
		if (i >= q->nseg)
			return 0;
		if (!(n == 1 && *p == '*') &&
		    (strlen(q->seg[i]) != n || strncmp(q->seg[i], p, n) != 0))
			return 0;
		i++;
		p += n;
		if (*p == '/')
			p++;
	}
	return i == q->nseg;
}

static int
api_route_allows(const struct api_route *r, enum api_via via)
{
	switch (via) {
	case API_VIA_LOCAL:
		return 1;
	case API_VIA_INBOX:
		return r->auth == API_AUTH_INBOX;
	case API_VIA_SESSION:
		return r->auth == API_AUTH_SESSION;
	}
	return 0;
}

/*
 * Find the request's route: 404 when no route has its path (or none this way of
 * signing in may use), 405 when routes have its path but not its method (404 on the
 * Inbox gateway).
 */
static void
api_route(struct api_req *q, enum api_via via)
{
	const struct api_route	*r;
	int			 path_known = 0;

	for (size_t i = 0; i < sizeof api_routes / sizeof api_routes[0]; i++) {
		r = &api_routes[i];
		if (!api_path_match(q, r->path) || !api_route_allows(r, via))
			continue;
		if (r->method == q->method) {
			r->fn(q);
			return;
		}
		path_known = 1;
	}
	/* The gateway offers (method, path) pairs: anything else is simply not there. */
	if (path_known && via != API_VIA_INBOX)
		api_error(q, 405, "method_not_allowed", "method not allowed on %s",
		    q->pathbuf);
	else if (via == API_VIA_INBOX)
		api_error(q, 404, "not_found", "no such Inbox endpoint: %.200s", q->pathbuf);
	else
		api_error(q, 404, "not_found", "no such endpoint: %.200s", q->pathbuf);
}

static void
api_cb(struct evhttp_request *req, void *arg)
{
	struct api_req		 q;
	struct daemon		*d = arg;
	struct evkeyvalq	*h = evhttp_request_get_input_headers(req);
	const struct evhttp_uri	*uri = evhttp_request_get_evhttp_uri(req);
	const char		*path, *auth, *client, *query;
	struct httpd_peer	 peer;
	enum api_via		 via = API_VIA_LOCAL;

	memset(&q, 0, sizeof q);
	TAILQ_INIT(&q.query);
	q.d = d;
	q.req = req;
	q.method = evhttp_request_get_command(req);
	path = uri != NULL ? evhttp_uri_get_path(uri) : NULL;
	snprintf(q.pathbuf, sizeof q.pathbuf, "%.400s", path != NULL ? path : "?");

	if (httpd_begin(d->httpd, req, &peer) == -1) {
		api_error(&q, 503, "unavailable", "this connection was not admitted");
		return;
	}
	client = evhttp_find_header(h, "X-Clockwork-Client");
	if (client == NULL || strlen(client) == 0 || strlen(client) >= 32 ||
	    strspn(client, "abcdefghijklmnopqrstuvwxyz0123456789-_") != strlen(client))
		client = NULL;
	/*
	 * The unix socket lives in the 0700 Clockwork home and httpd admitted only our
	 * own uid: the kernel's word on the peer is the authentication, and its uid and
	 * pid name the actor. No browser can reach a unix socket, so the Host, token and
	 * Origin rules of the TCP port do not apply; the Inbox is not served here.
	 */
	if (peer.kind == HTTPD_UNIX) {
		snprintf(q.actor, sizeof q.actor, "%s uid=%u pid=%d", client != NULL ?
		    client : "local", (unsigned)peer.uid, (int)peer.pid);
		if (path == NULL || api_split(&q, path) == -1)
			goto nf;
		goto route;
	}
	if (!httpd_host_ok(evhttp_find_header(h, "Host"), d->port)) {
		api_error(&q, 403, "forbidden_host", "the Host header must be 127.0.0.1:%d "
		    "or localhost:%d", d->port, d->port);
		return;
	}
	auth = evhttp_find_header(h, "Authorization");
	/*
	 * The Inbox: its page and sign-in need no token; its gateway (/inbox/api/...) needs
	 * the session instead, and on writes the CSRF token and our own Origin as well.
	 */
	if (path != NULL && strncmp(path, "/inbox/api/", 11) == 0) {
		char	why[256];
		int	code;

		code = inbox_authorize(d, req, q.method != EVHTTP_REQ_GET &&
		    q.method != EVHTTP_REQ_HEAD, evhttp_find_header(h, "Origin") != NULL &&
		    api_origin_ok(d, evhttp_find_header(h, "Origin")), why, sizeof why);
		if (code != 0) {
			api_error(&q, code, code == 401 ? "unauthorized" : "forbidden", "%s",
			    why);
			return;
		}
		snprintf(q.actor, sizeof q.actor, "inbox");
		via = API_VIA_INBOX;
		q.inbox = 1;
		if (api_split(&q, path + 6) == -1) {
			api_error(&q, 404, "not_found", "no such Inbox endpoint: %.200s",
			    q.pathbuf);
			return;
		}
		goto route;
	}
	if (path != NULL && inbox_is_page(path)) {
		inbox_serve(d, req, path);
		return;
	}
	/* The export may be fetched with the token or from the signed-in Inbox. */
	if (path != NULL && strncmp(path, "/workforce/", 11) == 0 &&
	    (q.method == EVHTTP_REQ_GET || q.method == EVHTTP_REQ_HEAD) &&
	    (auth == NULL || strncmp(auth, "Bearer ", 7) != 0) && inbox_signed_in(d, req)) {
		snprintf(q.actor, sizeof q.actor, "inbox");
		via = API_VIA_SESSION;
		if (api_split(&q, path) == -1)
			goto nf;
		goto route;
	}
	if (auth == NULL || strncmp(auth, "Bearer ", 7) != 0 ||
	    !httpd_equal(auth + 7, d->token)) {
		api_error(&q, 401, "unauthorized", "a valid bearer token is required (it is "
		    "in %s/api.token)", d->home);
		return;
	}
	if (q.method != EVHTTP_REQ_GET && q.method != EVHTTP_REQ_HEAD &&
	    !api_origin_ok(d, evhttp_find_header(h, "Origin"))) {
		api_error(&q, 403, "forbidden_origin", "cross-origin requests that change "
		    "state are refused");
		return;
	}
	snprintf(q.actor, sizeof q.actor, "%s", client != NULL ? client : "api");
	if (path == NULL || api_split(&q, path) == -1) {
nf:
		api_error(&q, 404, "not_found", "no such endpoint");
		return;
	}
route:
	if ((query = evhttp_uri_get_query(uri)) != NULL &&
	    evhttp_parse_query_str(query, &q.query) == -1) {
		api_error(&q, 400, "bad_query", "cannot parse the query string");
		return;
	}
	api_route(&q, via);
	evhttp_clear_headers(&q.query);
}

static int
api_write_port(struct daemon *d)
{
	char	path[PATH_MAX], tmp[PATH_MAX];
	FILE	*f;

	if ((size_t)snprintf(path, sizeof path, "%s/clockworkd.port", d->home) >=
	    sizeof path || (size_t)snprintf(tmp, sizeof tmp, "%s.tmp", path) >= sizeof tmp) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if ((f = fopen(tmp, "we")) == NULL)
		return -1;
	fprintf(f, "%d\n", d->port);
	if (fclose(f) != 0)
		return -1;
	return rename(tmp, path);
}

/* Refusals recorded one by one in a minute; past that, counted into the next record. */
#define API_PEER_REFUSALS_PER_MINUTE	20

/*
 * The control socket's admission rule (issue 22): a peer whose pid lives in another
 * PID namespace is refused, whatever path or descriptor brought it here. Every run has
 * a PID namespace of its own, so this holds even where a run's view does show the
 * socket (a daemon restarted during a live run makes a new socket file). Each refused
 * connection is logged and put in the audit log once; a run that loops on connect()
 * gets API_PEER_REFUSALS_PER_MINUTE records a minute and a count of the rest.
 */
static int
api_admit_peer(int fd, const struct httpd_peer *p, void *arg)
{
	struct daemon	*d = arg;
	char		 why[256], actor[64];
	time_t		 now = time(NULL);
	unsigned	 quiet = 0;
	cJSON		*a;

	if (peerns_check(&d->pidns, fd, p->pid, why, sizeof why) == 0)
		return 0;
	if (now - d->peer_refused_since >= 60) {
		if (d->peer_refused_n > API_PEER_REFUSALS_PER_MINUTE)
			quiet = d->peer_refused_n - API_PEER_REFUSALS_PER_MINUTE;
		d->peer_refused_since = now;
		d->peer_refused_n = 0;
	}
	if (d->peer_refused_n++ >= API_PEER_REFUSALS_PER_MINUTE)
		return -1;
	log_warn("api: refused a connection on %s from uid=%u pid=%d: the peer is in "
	    "another PID namespace (%s); a run's processes are never served here",
	    d->sock_path, (unsigned)p->uid, (int)p->pid, why);
	if (quiet > 0)
		log_warn("api: %u more such connections were refused in the minute "
		    "before, not listed one by one", quiet);
	snprintf(actor, sizeof actor, "peer uid=%u pid=%d", (unsigned)p->uid, (int)p->pid);
	if ((a = cJSON_CreateObject()) != NULL) {
		json_add_string(a, "reason", why);
		if (quiet > 0)
			cJSON_AddNumberToObject(a, "unlisted_before", quiet);
	}
	journal_audit(d, actor, "api.peer_refused", NULL, a);
	return -1;
}

/*
 * The listeners and their limits. Descriptors are the budget: DAEMON_FD_RESERVE stay
 * for runs, the store and logs; the unix socket's connections are reserved inside
 * what is left, so connections to the TCP port (which every run can reach) can
 * never take the slots cwctl needs.
 */
int
api_start(struct daemon *d, char *err, size_t errlen)
{
	struct httpd_limits	 ul, tl;
	struct evhttp		*http;
	long			 budget;

	budget = (d->nofile > 0 ? d->nofile : 1024) - DAEMON_FD_RESERVE;
	if (budget < DAEMON_UNIX_MAX_CONNS + 16)
		budget = DAEMON_UNIX_MAX_CONNS + 16;
	memset(&ul, 0, sizeof ul);
	ul.max_conns = DAEMON_UNIX_MAX_CONNS;
	ul.max_per_peer = DAEMON_UNIX_MAX_CONNS;
	ul.deadline_ms = DAEMON_DEADLINE_MS;
	ul.reserve = DAEMON_UNIX_MAX_CONNS;
	ul.admit = api_admit_peer;
	ul.admit_arg = d;
	if (peerns_init(&d->pidns) == -1) {
		snprintf(err, errlen, "/proc/self/ns/pid: %s; the control socket cannot "
		    "tell a run's processes from cwctl without it (is /proc mounted?)",
		    strerror(errno));
		return -1;
	}
	memset(&tl, 0, sizeof tl);
	tl.max_conns = budget - DAEMON_UNIX_MAX_CONNS < DAEMON_TCP_MAX_CONNS ?
	    (int)(budget - DAEMON_UNIX_MAX_CONNS) : DAEMON_TCP_MAX_CONNS;
	tl.max_per_peer = DAEMON_TCP_MAX_PER_PEER;
	tl.deadline_ms = DAEMON_DEADLINE_MS;

	if ((d->httpd = httpd_new(d->base, "api", (int)budget, DAEMON_IDLE_SECONDS, err,
	    errlen)) == NULL)
		return -1;
	http = httpd_evhttp(d->httpd);
	evhttp_set_max_body_size(http, DAEMON_MAX_BODY);
	evhttp_set_max_headers_size(http, 16 * 1024);
	evhttp_set_allowed_methods(http, EVHTTP_REQ_GET | EVHTTP_REQ_POST |
	    EVHTTP_REQ_PATCH | EVHTTP_REQ_DELETE | EVHTTP_REQ_HEAD);
	evhttp_set_gencb(http, api_cb, d);
	if ((size_t)snprintf(d->sock_path, sizeof d->sock_path, "%s/%s", d->home,
	    DAEMON_SOCKET) >= sizeof d->sock_path) {
		snprintf(err, errlen, "%s/%s: longer than a unix socket path may be "
		    "(%zu bytes); use a shorter $CLOCKWORK_HOME", d->home, DAEMON_SOCKET,
		    sizeof d->sock_path - 1);
		return -1;
	}
	if (httpd_listen_unix(d->httpd, d->sock_path, &ul, err, errlen) == -1)
		return -1;
	if (httpd_listen_tcp(d->httpd, d->cfg.api_port, &tl, &d->port, err,
	    errlen) == -1) {
		/* The one fix a person needs: say how to choose another port. */
		if (strstr(err, strerror(EADDRINUSE)) != NULL && strlen(err) + 160 < errlen)
			snprintf(err + strlen(err), errlen - strlen(err), "; another program "
			    "(or another clockworkd) has it: set api_port in %s to a free "
			    "port, or api_port: 0 for any", d->config_path);
		return -1;
	}
	if (api_write_port(d) == -1) {
		snprintf(err, errlen, "%s/clockworkd.port: %s", d->home, strerror(errno));
		return -1;
	}
	log_info("API on %s; Inbox and API on http://127.0.0.1:%d (at most %d "
	    "connections there, %d per address; %ld descriptors)", d->sock_path, d->port,
	    tl.max_conns, tl.max_per_peer, d->nofile);
	return 0;
}

void
api_stop(struct daemon *d)
{
	char	path[PATH_MAX];

	events_free(d);
	inbox_free(d);
	httpd_free(d->httpd);
	d->httpd = NULL;
	if ((size_t)snprintf(path, sizeof path, "%s/clockworkd.port", d->home) <
	    sizeof path)
		unlink(path);
}
