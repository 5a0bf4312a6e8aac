/* The words for a run's review end state (runreview.h). */
#include <stdio.h>
#include <string.h>

#include "runreview.h"

void
runreview_said(const char *id, const char *state, const char *at, const char *detail,
    char *buf, size_t len)
{
	const char	*d = detail != NULL ? detail : "", *rest = d;
	char		 when[32];
	int		 where = 0;

	if (at == NULL)
		at = "";
	/* "2026-12-02T15:40:01.123Z" read as a person says it. */
	snprintf(when, sizeof when, "%.10s %.8s UTC", at, strlen(at) > 11 ? at + 11 : "");
	/*
	 * "into main, fast-forward" reads "merged into main at ... (fast-forward)": the
	 * target (a branch name has no space) after the state, the rest after the time.
	 */
	if (strncmp(d, "into ", 5) == 0) {
		if ((rest = strstr(d, ", ")) != NULL) {
			where = (int)(rest - d);
			rest += 2;
		} else {
			where = (int)strlen(d);
			rest = "";
		}
	}
	snprintf(buf, len, "run %s was %s%s%.*s at %s%s%s%s", id != NULL ? id : "?",
	    state != NULL ? state : "reviewed", where ? " " : "", where, d, when,
	    *rest != '\0' ? " (" : "", rest, *rest != '\0' ? ")" : "");
}
