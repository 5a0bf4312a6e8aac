/*
 * The safety journal and the audit log, as the daemon writes them: each entry is also
 * one line in clockworkd.log, and a store failure is logged loudly (it is never a
 * reason to drop the action that caused it, nor to crash).
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "bus.h"
#include "daemon.h"
#include "journal.h"
#include "json.h"
#include "log.h"
#include "runs.h"
#include "sha256.h"
#include "store.h"
#include "wire.h"

/*
 * The live run an entry is about, from the daemon's list: the journal is a leaf that
 * calls nothing of the subsystems that journal (runs.c would be a cycle through them).
 */
static struct run *
journal_live_run(struct daemon *d, const char *run_id)
{
	struct run	*r;

	if (run_id == NULL)
		return NULL;
	TAILQ_FOREACH(r, &d->runs, entry)
		if (strcmp(r->id, run_id) == 0)
			return r;
	return NULL;
}

/* Entries the daemon itself decides on: few per run, never dropped by the cap. */
static const char *const journal_uncapped[] = {
	"approval_answer", "run_refused", "import_refused", "run_interrupted",
};

/*
 * A run decides how many journal entries its events make (every floor hit is one), so
 * each live run gets CW_JOURNAL_MAX_PER_RUN: the last is a "journal_capped" entry, and
 * what follows is only counted (on the report, records.journal_dropped). Returns 1 when
 * this entry may be written.
 */
static int
journal_run_allows(struct daemon *d, const char *run_id, const char *kind)
{
	struct run	*r;
	cJSON		*j;
	char		*t;
	uint64_t	 eid;

	if ((r = journal_live_run(d, run_id)) == NULL)
		return 1;
	for (size_t i = 0; i < sizeof journal_uncapped / sizeof journal_uncapped[0]; i++)
		if (strcmp(kind, journal_uncapped[i]) == 0)
			return 1;
	if (r->n_journal + 1 < CW_JOURNAL_MAX_PER_RUN) {
		r->n_journal++;
		return 1;
	}
	if (r->n_journal++ + 1 == CW_JOURNAL_MAX_PER_RUN &&
	    (j = cJSON_CreateObject()) != NULL) {
		cJSON_AddNumberToObject(j, "max", CW_JOURNAL_MAX_PER_RUN);
		json_add_string(j, "first_dropped", kind);
		t = json_print(j);
		cJSON_Delete(j);
		eid = d->bus != NULL ? bus_next_id(d->bus) : 0;
		if (store_journal_append_event(d->store, run_id, "journal_capped", t,
		    (int64_t)eid) == -1)
			log_error("journal: cannot record journal_capped for run %s: %s",
			    run_id, store_errmsg(d->store));
		else if (eid != 0)
			(void)bus_publish(d->bus, BUS_JOURNAL, r->task_name, run_id,
			    journal_event_data("journal_capped", t));
		log_warn("journal: run %s reached %d entries; the rest are counted only",
		    run_id, CW_JOURNAL_MAX_PER_RUN);
		cJSON_free(t);
	}
	r->journal_dropped++;
	return 0;
}

/* An entry's data past CW_JOURNAL_MAX_DATA is kept as its size and hash. */
static char *
journal_bounded(char *text)
{
	char	 hex[SHA256_HEX], *t;
	size_t	 len;
	cJSON	*o;

	if (text == NULL || (len = strlen(text)) <= CW_JOURNAL_MAX_DATA)
		return text;
	sha256_hex(text, len, hex);
	cJSON_free(text);
	if ((o = cJSON_CreateObject()) == NULL)
		return NULL;
	cJSON_AddBoolToObject(o, "truncated", 1);
	cJSON_AddNumberToObject(o, "bytes", (double)len);
	json_add_string(o, "sha256", hex);
	t = json_print(o);
	cJSON_Delete(o);
	return t;
}

/*
 * A bounded entry's text, secret-masked (json_mask_text): journal and audit data quote
 * runs and requests (a denied command, a task's prompt). NULL stays NULL.
 */
static char *
journal_masked(char *text)
{
	char	*m;

	if (text == NULL)
		return NULL;
	m = json_mask_text(text);
	cJSON_free(text);
	return m;
}

/*
 * The one place a journal entry becomes a record: bounded, masked, then stored; every
 * reader (the API, the Inbox, cwctl journal) gets the stored, masked text.
 */
void
journal_add(struct daemon *d, const char *run_id, const char *kind, cJSON *data)
{
	char		*text;
	uint64_t	 eid;

	if (!journal_run_allows(d, run_id, kind)) {
		cJSON_Delete(data);
		return;
	}
	text = data != NULL ? journal_masked(journal_bounded(json_print(data))) : NULL;
	if (data != NULL && text == NULL)
		log_error("journal: %s for run %s is kept without its data: out of memory",
		    kind, run_id != NULL ? run_id : "-");
	eid = d->bus != NULL ? bus_next_id(d->bus) : 0;
	if (store_journal_append_event(d->store, run_id, kind, text, (int64_t)eid) == -1) {
		log_error("journal: cannot record %s for run %s: %s", kind,
		    run_id != NULL ? run_id : "-", store_errmsg(d->store));
	} else {
		log_info("journal: %s run=%s %s", kind, run_id != NULL ? run_id : "-",
		    text != NULL ? text : "");
		/* Published as stored, under the id the entry keeps (events.c resumes so). */
		if (eid != 0)
			(void)bus_publish(d->bus, BUS_JOURNAL, journal_task(d, run_id), run_id,
			    journal_event_data(kind, text));
	}
	free(text);
	cJSON_Delete(data);
}

/* The live run's task: a stream filtered by task sees its runs' entries. */
const char *
journal_task(struct daemon *d, const char *run_id)
{
	struct run	*r;

	if ((r = journal_live_run(d, run_id)) == NULL)
		return NULL;
	return r->task_name;
}

/* A journal event's data, from the entry as stored: {"kind", "data"}. */
cJSON *
journal_event_data(const char *kind, const char *text)
{
	cJSON	*o, *v;

	if ((o = cJSON_CreateObject()) == NULL)
		return NULL;
	json_add_string(o, "kind", kind);
	if (text != NULL && (v = json_parse(text, strlen(text))) != NULL)
		cJSON_AddItemToObject(o, "data", v);
	return o;
}

/*
 * What a person (or the scheduler) changed, to the bus: a task's definition, rules or
 * review ("task" events), and a run's review ("run" events with the action).
 */
static void
journal_audit_published(struct daemon *d, const char *actor, const char *action,
    const char *target)
{
	enum bus_type	 type;
	const char	*task = NULL, *run = NULL;
	cJSON		*o;

	if (strncmp(action, "task.", 5) == 0 || strcmp(action, "jobs.enable") == 0 ||
	    strcmp(action, "template.import") == 0) {
		type = BUS_TASK;
		task = target;
	} else if (strcmp(action, "jobs.discover") == 0) {
		type = BUS_TASK;
	} else if (strcmp(action, "run.merge") == 0 || strcmp(action, "run.discard") == 0) {
		type = BUS_RUN;
		run = target;
	} else {
		return;
	}
	if ((o = cJSON_CreateObject()) != NULL) {
		json_add_string(o, "action", action);
		json_add_string(o, "by", actor);
		if (type == BUS_TASK && task == NULL)
			json_add_string(o, "repo", target);
	}
	(void)bus_publish(d->bus, type, task, run, o);
}

void
journal_audit(struct daemon *d, const char *actor, const char *action,
    const char *target, cJSON *data)
{
	char	*text = data != NULL ? journal_masked(json_print(data)) : NULL;

	if (store_audit_append(d->store, actor, action, target, text) == -1) {
		log_error("audit: cannot record %s %s: %s", action,
		    target != NULL ? target : "-", store_errmsg(d->store));
	} else {
		log_debug("audit: %s %s %s", actor, action, target != NULL ? target : "-");
		journal_audit_published(d, actor, action, target);
	}
	free(text);
	cJSON_Delete(data);
}
