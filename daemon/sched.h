/* sched.c: cron schedules. */
#ifndef CW_SCHED_H
#define CW_SCHED_H
#include <time.h>

struct daemon;

void	sched_start(struct daemon *);
void	sched_tick(struct daemon *, time_t now);

#endif
