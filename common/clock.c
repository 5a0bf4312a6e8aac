/*
 * common/clock.h: the two clocks in one unit. clock_gettime() on these clocks cannot
 * fail on Linux or macOS for a valid struct; the calls are not checked.
 */
#include <stdint.h>
#include <sys/time.h>
#include <time.h>

#include "clock.h"

static int64_t
clock_ns(clockid_t id)
{
	struct timespec	ts;

	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t
clock_mono_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

int64_t
clock_mono_ms(void)
{
	return clock_ns(CLOCK_MONOTONIC) / 1000000;
}

int64_t
clock_wall_ms(void)
{
	return clock_ns(CLOCK_REALTIME) / 1000000;
}

struct timeval
clock_ms_timeval(int64_t ms)
{
	struct timeval	tv;

	if (ms < 0)
		ms = 0;
	tv.tv_sec = (time_t)(ms / 1000);
	tv.tv_usec = (suseconds_t)((ms % 1000) * 1000);
	return tv;
}
