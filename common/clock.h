/*
 * Time, one way: int64_t milliseconds (or nanoseconds) everywhere. The monotonic clock
 * for durations, deadlines and timers (it never jumps with the wall clock); the wall
 * clock only for what is stored or shown (a record's time, an API's "at").
 * libc only, so that cw-floor-hook, the runner and the daemon share it.
 */
#ifndef CW_CLOCK_H
#define CW_CLOCK_H
#include <stdint.h>
#include <sys/time.h>
#include <time.h>

/* CLOCK_MONOTONIC, in ms and ns. */
int64_t	clock_mono_ms(void);
int64_t	clock_mono_ns(void);
/* CLOCK_REALTIME, in ms since the epoch. */
int64_t	clock_wall_ms(void);
/* A non-negative duration in ms as a struct timeval, for libevent's timers. */
struct timeval clock_ms_timeval(int64_t ms);

#endif
