/* cron.c: 5-field cron expressions (untrusted text: bounds-checked). */
#ifndef CW_CRON_H
#define CW_CRON_H
#include <stddef.h>
#include <stdint.h>
#include <time.h>


struct cron {
	uint64_t	minute;		/* bit n: minute n */
	uint32_t	hour;
	uint32_t	dom;		/* bits 1..31 */
	uint16_t	month;		/* bits 1..12 */
	uint8_t		dow;		/* bits 0..6, Sunday 0 */
	int		dom_star, dow_star;
};
int	cron_parse(const char *expr, struct cron *, char *err, size_t errlen);
int	cron_match(const struct cron *, const struct tm *);
/* The first minute strictly after t that matches (local time), or -1 within 5 years. */
time_t	cron_next(const struct cron *, time_t t);

#endif
