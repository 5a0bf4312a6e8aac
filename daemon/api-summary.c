/*
 * GET /api/runs/ID/summary: what the Inbox's review page says about a finished run
 * beyond its record and report (issue 27): what was asked (the run's own follow-up
 * prompt, else its task's, masked) and the network hosts the run reached or was
 * refused, counted from the proxy's "net" and "net_deny" events. Read-only; listed
 * in api.c's one route table, on the Inbox's gateway.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "api-impl.h"
#include "daemon.h"
#include "json.h"
#include "mask.h"
#include "store.h"

/*
 * The events read for hosts, at most: the read is on the daemon's loop, so a run
 * with a very long event history is counted in part and says so ("hosts_incomplete").
 */
#define API_SUMMARY_EVENTS_MAX	50000
#define API_SUMMARY_PAGE	1000
/* Distinct host:port pairs listed, at most; the rest are counted in hosts_omitted. */
#define API_SUMMARY_HOSTS_MAX	200

/* The entry for host:port in hosts (an array of {host, port, allowed, denied}). */
static cJSON *
api_summary_host(cJSON *hosts, const char *host, double port, size_t *omitted)
{
	cJSON	*h;
	double	 p;

	cJSON_ArrayForEach(h, hosts) {
		if (json_get_number(h, "port", &p) == 0 && p == port &&
		    strcmp(json_get_string(h, "host"), host) == 0)
			return h;
	}
	if (cJSON_GetArraySize(hosts) >= API_SUMMARY_HOSTS_MAX) {
		(*omitted)++;
		return NULL;
	}
	if ((h = cJSON_CreateObject()) == NULL)
		return NULL;
	cJSON_AddStringToObject(h, "host", host);
	cJSON_AddNumberToObject(h, "port", port);
	cJSON_AddNumberToObject(h, "allowed", 0);
	cJSON_AddNumberToObject(h, "denied", 0);
	cJSON_AddItemToArray(hosts, h);
	return h;
}

/* Count one "net" or "net_deny" event's host; 0, or -1 if its record has no host. */
static int
api_summary_count(cJSON *hosts, const struct store_run_event *v, size_t *omitted)
{
	cJSON		*rec, *h, *n;
	const char	*host, *field;
	double		 port = 0;

	if (v->data == NULL || (rec = json_parse(v->data, strlen(v->data))) == NULL)
		return -1;
	if ((host = json_get_string(rec, "host")) == NULL) {
		cJSON_Delete(rec);
		return -1;
	}
	(void)json_get_number(rec, "port", &port);
	field = strcmp(v->kind, "net_deny") == 0 ? "denied" : "allowed";
	if ((h = api_summary_host(hosts, host, port, omitted)) != NULL &&
	    (n = cJSON_GetObjectItemCaseSensitive(h, field)) != NULL)
		cJSON_SetNumberValue(n, n->valuedouble + 1);
	cJSON_Delete(rec);
	return 0;
}

/* The run's hosts into o: "hosts", "hosts_omitted", "hosts_incomplete". */
static int
api_summary_hosts(struct store *st, const char *id, cJSON *o)
{
	struct store_run_event	*v;
	size_t			 n, seen = 0, omitted = 0;
	int64_t			 since = 0;
	cJSON			*hosts;

	if ((hosts = cJSON_AddArrayToObject(o, "hosts")) == NULL)
		return -1;
	for (;;) {
		if (store_run_event_list(st, id, since, API_SUMMARY_PAGE, &v, &n) == -1)
			return -1;
		for (size_t i = 0; i < n; i++) {
			if (strcmp(v[i].kind, "net") == 0 || strcmp(v[i].kind, "net_deny") == 0)
				(void)api_summary_count(hosts, &v[i], &omitted);
			since = v[i].id;
		}
		store_run_event_list_free(v, n);
		seen += n;
		if (n < API_SUMMARY_PAGE)
			break;
		if (seen >= API_SUMMARY_EVENTS_MAX) {
			cJSON_AddBoolToObject(o, "hosts_incomplete", 1);
			break;
		}
	}
	cJSON_AddNumberToObject(o, "hosts_omitted", (double)omitted);
	return 0;
}

void
api_summary_run(struct api_req *q)
{
	struct daemon		*d = q->d;
	struct store_run	 r;
	struct store_task	 t;
	const char		*prompt, *from;
	char			*masked;
	cJSON			*o;

	if (api_run_lookup(q, q->seg[2], &r) == -1)
		return;
	memset(&t, 0, sizeof t);
	/* A continue carries its own prompt; any other run asked its task's. */
	prompt = r.prompt;
	from = "run";
	if (prompt == NULL && store_task_get(d->store, r.task_id, &t) == 1) {
		prompt = t.prompt;
		from = "task";
	}
	o = cJSON_CreateObject();
	json_add_string(o, "id", r.id);
	if (prompt != NULL && (masked = mask_secrets(prompt)) != NULL) {
		json_add_string(o, "asked", masked);
		json_add_string(o, "asked_from", from);
		free(masked);
	} else
		cJSON_AddNullToObject(o, "asked");
	if (api_summary_hosts(d->store, r.id, o) == -1) {
		cJSON_Delete(o);
		api_error(q, 500, "internal", "run %s: its events cannot be read: %s", r.id,
		    store_errmsg(d->store));
	} else
		api_ok(q, 200, o);
	store_task_free(&t);
	store_run_free(&r);
}
