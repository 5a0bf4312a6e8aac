/* journal.c: the safety journal and audit log, with one log line each. */
#ifndef CW_JOURNAL_H
#define CW_JOURNAL_H

#include <cjson/cJSON.h>

struct daemon;

void	journal_add(struct daemon *, const char *run_id, const char *kind, cJSON *data);
/* A journal event's data as the bus carries it, from the entry as stored. */
cJSON	*journal_event_data(const char *kind, const char *data_json);
const char *journal_task(struct daemon *, const char *run_id);
void	journal_audit(struct daemon *, const char *actor, const char *action,
	    const char *target, cJSON *data);

#endif
