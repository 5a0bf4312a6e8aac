/* recover.c: clockworkd starting over. */
#ifndef CW_RECOVER_H
#define CW_RECOVER_H
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "store.h"

struct daemon;
struct run_approval;
struct run;

int	recover_runs(struct daemon *);
/* Move a run's directory to <home>/quarantine/<run>; out gets where ("" if none). */
int	recover_quarantine(struct daemon *, const char *id, const char *workdir,
	    char *out, size_t outlen);
cJSON	*runs_to_json(const struct store_run *, int with_report);
/*
 * What a person did with the run's work (issue 27), the object the Inbox reads:
 * {"state": "waiting"|"merged"|"landed"|"discarded", "at", "detail", "pushed"}; a
 * JSON null for a run that has not ended or has no branch to review.
 */
cJSON	*runs_review_json(const struct store_run *);

int	runs_send(struct run *, cJSON *msg);
/*
 * "Always for this task" on an answered approval (cwctl, the Inbox, Telegram): its
 * host:port or its command family kept for the task (approvals.c). 0 with rule, -1 with
 * why.
 */
int	approvals_for_task(struct daemon *, const char *id, const char *actor,
	    char *rule, size_t rulelen, char *why, size_t whylen);
/*
 * A task rule was added: tell every live run of the task (SPEC A1). max_risk NULL:
 * an ask rule (the family is always asked).
 */
void	runs_task_rule_added(struct daemon *, int64_t task_id, const char *family,
	    const char *max_risk);
void	runs_approval_forget(struct run_approval *);
/* An approval as just stored, to the bus: its state and (taken) extra fields. */
void	runs_approval_published(struct run *, const char *approval_id, const char *state,
	    cJSON *extra);

#endif
