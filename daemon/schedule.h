/* schedule.c: cron schedules. */
#ifndef CW_SCHEDULE_H
#define CW_SCHEDULE_H
#include <time.h>

struct daemon;

void	schedule_start(struct daemon *);
void	schedule_tick(struct daemon *, time_t now);

#endif
