/*
 * runreview.c: the words for what a person did with a run's work (issue 27), said the
 * same by clockworkd's refusals and by cwctl.
 */
#ifndef CW_RUNREVIEW_H
#define CW_RUNREVIEW_H
#include <stddef.h>

/*
 * "run X was merged into main at 2026-12-02 15:40:01 UTC (fast-forward)" from the run's
 * id, its review state, when (the store's "2026-12-02T15:40:01.123Z") and detail
 * ("into main, fast-forward"); any of them may be NULL.
 */
void	runreview_said(const char *id, const char *state, const char *at,
	    const char *detail, char *buf, size_t len);

#endif
