/* A run's approval budget: a count for the run and a sliding 60-second window. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "asklimit.h"

int
asklimit_init(struct asklimit *l, int max_per_run, int per_minute)
{
	memset(l, 0, sizeof *l);
	if (max_per_run < 1 || per_minute < 1) {
		errno = EINVAL;
		return -1;
	}
	if ((l->times = calloc((size_t)per_minute, sizeof *l->times)) == NULL)
		return -1;
	l->max_per_run = max_per_run;
	l->per_minute = per_minute;
	return 0;
}

int
asklimit_note_refused(struct asklimit *l)
{
	int	first = !l->limited;

	l->limited = 1;
	l->refused++;
	return first;
}

int
asklimit_admit(struct asklimit *l, int64_t now_ms, char *reason, size_t reasonlen,
    const char **kind, int *first)
{
	int	oldest;

	/* An uninitialised limiter (no times) admits: the caller chose no limit. */
	if (l->times == NULL)
		return 0;
	if (l->asked >= l->max_per_run) {
		snprintf(reason, reasonlen, "approval limit: %d requests in this run",
		    l->max_per_run);
		*kind = "per_run";
		*first = asklimit_note_refused(l);
		return -1;
	}
	/* The ring holds the last per_minute admissions; its oldest decides. */
	if (l->n == l->per_minute) {
		oldest = l->head;
		if (now_ms - l->times[oldest] < ASKLIMIT_WINDOW_MS) {
			snprintf(reason, reasonlen, "too many approvals per minute (at most "
			    "%d); ask again later", l->per_minute);
			*kind = "per_minute";
			*first = asklimit_note_refused(l);
			return -1;
		}
	}
	l->times[l->head] = now_ms;
	l->head = (l->head + 1) % l->per_minute;
	if (l->n < l->per_minute)
		l->n++;
	l->asked++;
	l->limited = 0;
	return 0;
}

void
asklimit_free(struct asklimit *l)
{
	free(l->times);
	memset(l, 0, sizeof *l);
}
