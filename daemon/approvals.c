/*
 * Answering approvals: the one respond path every surface takes (cwctl and the Inbox
 * through the API, Telegram directly), and "always for this task". A subsystem of its
 * own so that a surface answers without reaching into the API layer.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "approvals.h"
#include "daemon.h"
#include "journal.h"
#include "json.h"
#include "log.h"
#include "netrule.h"
#include "recover.h"
#include "runs.h"
#include "store.h"
#include "transcript.h"
#include "transcripts.h"

/*
 * The one respond path. The answer is a compare-and-set in the store, so two
 * answerers racing (cwctl and the Inbox, say) cannot both win; only the winner's
 * decision goes down to the runner, by the runner's own request id.
 */
/*
 * A budget question (runner/run.c) answered "extend": refused where the hard ceiling
 * is reached (only "stop" is left), and from Telegram where the extension would pass
 * the ceiling (the runner would cut it there; raising spending that far is for cwctl
 * or the Inbox, where a person signed in on this machine answers). 0: allowed.
 */
static int
approvals_budget_refused(const struct store_approval *a, int via, char *why, size_t whylen)
{
	cJSON	*in;
	int	 extendable = 1, beyond = 0;
	double	 ceil = 0;

	if (a->input == NULL || (in = cJSON_Parse(a->input)) == NULL)
		return 0;
	(void)json_get_bool(in, "extendable", &extendable);
	(void)json_get_bool(in, "beyond_ceiling", &beyond);
	(void)json_get_number(in, "max_dollars", &ceil);
	cJSON_Delete(in);
	if (!extendable) {
		snprintf(why, whylen, "approval %s: the run's hard ceiling of $%.4g "
		    "(max_dollars) is reached; it cannot be extended, only stopped (deny)",
		    a->id, ceil);
		return -1;
	}
	if (beyond && via == APPROVALS_VIA_TELEGRAM) {
		snprintf(why, whylen, "Not from Telegram: this extension would pass the "
		    "hard ceiling of $%.4g (max_dollars). Answer with cwctl approve %s or "
		    "in the Inbox.", ceil, a->id);
		return -1;
	}
	return 0;
}

enum approvals_result
approvals_respond(struct daemon *d, const char *id, int allow, const char *message,
    const char *actor, char *why, size_t whylen)
{
	return approvals_respond_via(d, id, allow, message, actor, 0, why, whylen);
}

enum approvals_result
approvals_respond_via(struct daemon *d, const char *id, int allow, const char *message,
    const char *actor, int via, char *why, size_t whylen)
{
	struct store_approval	 a;
	struct run		*r;
	struct run_approval	*ra = NULL;
	cJSON			*m, *j;
	int			 rc;

	why[0] = '\0';
	if (strlen(id) >= STORE_ID_LEN || (rc = store_approval_get(d->store, id, &a)) == 0) {
		snprintf(why, whylen, "no approval '%.48s'", id);
		return APPROVALS_NOT_FOUND;
	}
	if (rc == -1) {
		snprintf(why, whylen, "%s", store_errmsg(d->store));
		return APPROVALS_ERROR;
	}
	if (a.state == STORE_APPROVAL_EXPIRED) {
		snprintf(why, whylen, "approval %s expired: its run %s has ended or its "
		    "deadline passed", a.id, a.run_id);
		store_approval_free(&a);
		return APPROVALS_RUN_ENDED;
	}
	if (a.state != STORE_APPROVAL_PENDING) {
		snprintf(why, whylen, "approval %s was already answered (%s by %s)", a.id,
		    store_approval_state_name(a.state),
		    a.answered_by != NULL ? a.answered_by : "?");
		store_approval_free(&a);
		return APPROVALS_ALREADY;
	}
	if ((r = runs_find(d, a.run_id)) != NULL)
		TAILQ_FOREACH(ra, &r->approvals, entry)
			if (strcmp(ra->id, a.id) == 0)
				break;
	if (r == NULL || ra == NULL || r->down == NULL) {
		store_approval_answer(d->store, a.id, STORE_APPROVAL_EXPIRED,
		    "the run is no longer live", "clockworkd");
		if (r != NULL)
			runs_approval_published(r, a.id, "expired", NULL);
		snprintf(why, whylen, "run %s is no longer live; approval %s cannot be "
		    "answered", a.run_id, a.id);
		store_approval_free(&a);
		return APPROVALS_RUN_ENDED;
	}
	if (allow && strcmp(a.tool, APPROVALS_BUDGET_TOOL) == 0 &&
	    approvals_budget_refused(&a, via, why, whylen) == -1) {
		store_approval_free(&a);
		return APPROVALS_REFUSED;
	}
	rc = store_approval_answer(d->store, a.id, allow ? STORE_APPROVAL_ALLOWED :
	    STORE_APPROVAL_DENIED, message, actor);
	if (rc == -1) {
		snprintf(why, whylen, "%s", store_errmsg(d->store));
		store_approval_free(&a);
		return APPROVALS_ERROR;
	}
	if (rc == 0) {
		snprintf(why, whylen, "approval %s was already answered", a.id);
		store_approval_free(&a);
		return APPROVALS_ALREADY;
	}
	if ((m = cJSON_CreateObject()) != NULL) {
		json_add_string(m, "type", "decision");
		json_add_string(m, "id", ra->runner_id);
		json_add_string(m, "behavior", allow ? "allow" : "deny");
		if (message != NULL)
			json_add_string(m, "message", message);
		json_add_string(m, "by", actor);
		if (runs_send(r, m) == -1)
			log_warn("run %s: cannot forward the decision on %s", r->id, a.id);
	}
	transcripts_append(r, transcript_answer(a.id, allow ? "allow" : "deny", actor,
	    message));
	if ((j = cJSON_CreateObject()) != NULL) {
		json_add_string(j, "approval", a.id);
		json_add_string(j, "tool", a.tool);
		json_add_string(j, "decision", allow ? "allow" : "deny");
		json_add_string(j, "by", actor);
		if (message != NULL)
			json_add_string(j, "message", message);
		journal_add(d, a.run_id, "approval_answer", j);
	}
	if ((j = cJSON_CreateObject()) != NULL) {
		json_add_string(j, "by", actor);
		if (message != NULL)
			json_add_string(j, "message", message);
	}
	runs_approval_published(r, a.id, allow ? "allowed" : "denied", j);
	runs_approval_forget(ra);
	store_approval_free(&a);
	return APPROVALS_OK;
}


/*
 * "Allow for this task": a network approval's host:port becomes one of the task's own
 * egress rules; a tool call's command family (the runner's, autoallow.h) becomes one
 * of the task's remembered answers, up to the risk the person saw, honoured at once
 * by the task's live runs and by every run after. A call with no family (a payload
 * behind a wrapper, several commands, a program the floor cannot see) keeps nothing:
 * why says so. Returns 0 with rule filled, or -1 with why.
 */
int
approvals_for_task(struct daemon *d, const char *id, const char *actor, char *rule,
    size_t rulelen, char *why, size_t whylen)
{
	struct store_approval	 a;
	struct store_run	 run;
	struct netrule		 nr;
	const cJSON		*h, *p;
	cJSON			*in = NULL, *au;
	char			 text[NETRULE_HOST_MAX + 16], nerr[128];
	int			 rc = -1;

	snprintf(why, whylen, "the approval or its run could not be read");
	if (store_approval_get(d->store, id, &a) != 1)
		return -1;
	if (store_run_get(d->store, a.run_id, &run) != 1) {
		store_approval_free(&a);
		return -1;
	}
	if (strcmp(a.tool, "network") == 0) {
		snprintf(why, whylen, "the network approval names no valid host:port");
		if (a.input != NULL && (in = cJSON_Parse(a.input)) != NULL &&
		    cJSON_IsString(h = cJSON_GetObjectItemCaseSensitive(in, "host")) &&
		    cJSON_IsNumber(p = cJSON_GetObjectItemCaseSensitive(in, "port")) &&
		    (size_t)snprintf(text, sizeof text, strchr(h->valuestring, ':') ?
		    "[%s]:%d" : "%s:%d", h->valuestring, p->valueint) < sizeof text &&
		    netrule_parse(text, &nr, nerr, sizeof nerr) == 0) {
			if ((rc = store_task_network_allow(d->store, run.task_id,
			    nr.text)) == 0)
				snprintf(rule, rulelen, "%s", nr.text);
			else
				snprintf(why, whylen, "%s", store_errmsg(d->store));
		}
	} else if (a.family == NULL) {
		snprintf(why, whylen, "this call has no command family that can be "
		    "remembered (a payload behind a wrapper such as sh -c, find -exec or "
		    "xargs; several commands; or a program Clockwork cannot see): it was "
		    "allowed this once");
	} else if (store_task_rule_add(d->store, run.task_id, a.family, a.risk, a.id,
	    actor) == -1) {
		snprintf(why, whylen, "%s", store_errmsg(d->store));
	} else {
		snprintf(rule, rulelen, "%s (up to %s)", a.family, a.risk);
		runs_task_rule_added(d, run.task_id, a.family, a.risk);
		if ((au = cJSON_CreateObject()) != NULL) {
			json_add_string(au, "family", a.family);
			json_add_string(au, "max_risk", a.risk);
			json_add_string(au, "approval", a.id);
			cJSON_AddNumberToObject(au, "task_id", (double)run.task_id);
		}
		journal_audit(d, actor, "task.rule_add", a.family, au);
		rc = 0;
	}
	store_run_free(&run);
	cJSON_Delete(in);
	store_approval_free(&a);
	return rc;
}
