/* runend.c: a run's end in one line, for its notices. */
#ifndef CW_RUNEND_H
#define CW_RUNEND_H
#include <cjson/cJSON.h>

/*
 * "finished: completed, 3 files changed (+10 -2)" from a run's stored report (NULL:
 * "finished: ended, no change to review"). Newly allocated, or NULL.
 */
char	*runend_line(const cJSON *report);

#endif
