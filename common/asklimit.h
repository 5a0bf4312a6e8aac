/*
 * How many approvals one run may ask for (issue 26 item 8): at most max_per_run in
 * the whole run and at most per_minute in any 60 seconds. The runner counts every
 * approval_request it would send (bridge and egress proxy share one counter) and the
 * daemon counts again before it stores one, so neither a flooding agent nor a runner
 * that forgot to count fills the store, the Inbox or a chat. A refused request is
 * denied at once with a reason the agent sees; "first" says when a refusal starts a
 * burst (the previous request was admitted), so the refusal is journaled once per
 * burst, not once per call.
 */
#ifndef CW_ASKLIMIT_H
#define CW_ASKLIMIT_H
#include <stddef.h>
#include <stdint.h>

#define ASKLIMIT_WINDOW_MS	60000

struct asklimit {
	int		 max_per_run;
	int		 per_minute;
	int		 asked;		/* admitted so far in the run */
	int64_t		*times;		/* the last per_minute admissions, a ring (ms) */
	int		 head, n;
	int		 limited;	/* the last request was refused */
	unsigned long	 refused;	/* refusals so far */
};

/* 0, or -1 (ENOMEM; EINVAL for a bound below 1). */
int	asklimit_init(struct asklimit *, int max_per_run, int per_minute);
/*
 * Count one request at now_ms (clock_mono_ms(), common/clock.h). 0: admitted. -1: refused; reason
 * holds the sentence for the agent ("approval limit: N requests in this run" or "too
 * many approvals per minute (N)"), kind "per_run" or "per_minute", and *first is 1
 * when this refusal starts a burst.
 */
int	asklimit_admit(struct asklimit *, int64_t now_ms, char *reason, size_t reasonlen,
	    const char **kind, int *first);
/* Note a request refused for another reason (too many pending): *first as above. */
int	asklimit_note_refused(struct asklimit *);
void	asklimit_free(struct asklimit *);

#endif
