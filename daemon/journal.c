/*
 * The safety journal and the audit log, as the daemon writes them: each entry is also
 * one line in clockworkd.log, and a store failure is logged loudly (it is never a
 * reason to drop the action that caused it, nor to crash).
 */
#define _GNU_SOURCE
#include <stdlib.h>

#include "daemon.h"
#include "json.h"
#include "log.h"

void
journal_add(struct daemon *d, const char *run_id, const char *kind, cJSON *data)
{
	char	*text = data != NULL ? json_print(data) : NULL;

	if (store_journal_append(d->store, run_id, kind, text) == -1)
		log_error("journal: cannot record %s for run %s: %s", kind,
		    run_id != NULL ? run_id : "-", store_errmsg(d->store));
	else
		log_info("journal: %s run=%s %s", kind, run_id != NULL ? run_id : "-",
		    text != NULL ? text : "");
	cJSON_free(text);
	cJSON_Delete(data);
}

void
journal_audit(struct daemon *d, const char *actor, const char *action,
    const char *target, cJSON *data)
{
	char	*text = data != NULL ? json_print(data) : NULL;

	if (store_audit_append(d->store, actor, action, target, text) == -1)
		log_error("audit: cannot record %s %s: %s", action,
		    target != NULL ? target : "-", store_errmsg(d->store));
	else
		log_debug("audit: %s %s %s", actor, action, target != NULL ? target : "-");
	cJSON_free(text);
	cJSON_Delete(data);
}
