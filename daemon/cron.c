/*
 * Five-field cron expressions: minute hour day-of-month month day-of-week, each a
 * comma list of '*', N, N-M, with an optional /STEP; day-of-week 0-7 (0 and 7 are
 * Sunday); the aliases @hourly, @daily, @weekly, @monthly, @yearly. As in Vixie cron,
 * when both day fields are restricted a day matches if either does.
 *
 * The text comes from API clients and repository job files: the parser reads at most
 * CRON_MAX_LEN bytes, never indexes outside its bit fields and reports the field.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cron.h"

#define CRON_MAX_LEN	256

static const struct cron_field {
	const char	*name;
	int		 lo, hi;
} cron_fields[5] = {
	{ "minute", 0, 59 },
	{ "hour", 0, 23 },
	{ "day of month", 1, 31 },
	{ "month", 1, 12 },
	{ "day of week", 0, 7 },
};

static int
cron_number(const char **p, int *out)
{
	long	v = 0;
	int	digits = 0;

	while (isdigit((unsigned char)**p)) {
		if (++digits > 3)
			return -1;
		v = v * 10 + (**p - '0');
		(*p)++;
	}
	if (digits == 0)
		return -1;
	*out = (int)v;
	return 0;
}

/* One field of text [s, e) into bits; *star says it was a bare '*'. */
static int
cron_field_parse(const char *s, const char *e, const struct cron_field *f,
    uint64_t *bits, int *star, char *err, size_t errlen)
{
	const char	*p = s;
	int		 lo, hi, step;

	*bits = 0;
	*star = (e - s == 1 && *s == '*');
	while (p < e) {
		step = 1;
		if (*p == '*') {
			lo = f->lo;
			hi = f->hi;
			p++;
		} else {
			if (cron_number(&p, &lo) == -1)
				goto bad;
			hi = lo;
			if (p < e && *p == '-') {
				p++;
				if (cron_number(&p, &hi) == -1)
					goto bad;
			}
		}
		if (p < e && *p == '/') {
			p++;
			if (cron_number(&p, &step) == -1 || step < 1)
				goto bad;
		}
		if (p < e && *p != ',')
			goto bad;
		if (lo < f->lo || hi > f->hi || lo > hi) {
			snprintf(err, errlen, "%s: value out of range %d-%d", f->name, f->lo,
			    f->hi);
			return -1;
		}
		for (int v = lo; v <= hi; v += step)
			*bits |= (uint64_t)1 << v;
		if (p < e) {
			p++;	/* the comma */
			if (p == e)
				goto bad;
		}
	}
	if (*bits == 0)
		goto bad;
	return 0;
bad:
	snprintf(err, errlen, "%s: cannot parse '%.*s'", f->name, (int)(e - s > 32 ? 32 :
	    e - s), s);
	return -1;
}

int
cron_parse(const char *expr, struct cron *c, char *err, size_t errlen)
{
	static const struct {
		const char	*alias, *expr;
	} aliases[] = {
		{ "@hourly", "0 * * * *" }, { "@daily", "0 0 * * *" },
		{ "@midnight", "0 0 * * *" }, { "@weekly", "0 0 * * 0" },
		{ "@monthly", "0 0 1 * *" }, { "@yearly", "0 0 1 1 *" },
		{ "@annually", "0 0 1 1 *" },
	};
	const char	*p, *s;
	uint64_t	 bits[5];
	int		 star[5], i;
	size_t		 len;

	memset(c, 0, sizeof *c);
	len = strnlen(expr, CRON_MAX_LEN + 1);
	if (len > CRON_MAX_LEN) {
		snprintf(err, errlen, "cron expression longer than %d bytes", CRON_MAX_LEN);
		return -1;
	}
	for (size_t a = 0; a < sizeof aliases / sizeof aliases[0]; a++)
		if (strcmp(expr, aliases[a].alias) == 0)
			return cron_parse(aliases[a].expr, c, err, errlen);
	p = expr;
	for (i = 0; i < 5; i++) {
		while (*p == ' ' || *p == '\t')
			p++;
		s = p;
		while (*p != '\0' && *p != ' ' && *p != '\t')
			p++;
		if (p == s) {
			snprintf(err, errlen, "cron expression needs 5 fields (minute hour "
			    "day-of-month month day-of-week), got %d", i);
			return -1;
		}
		if (cron_field_parse(s, p, &cron_fields[i], &bits[i], &star[i], err,
		    errlen) == -1)
			return -1;
	}
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p != '\0') {
		snprintf(err, errlen, "cron expression has more than 5 fields");
		return -1;
	}
	c->minute = bits[0];
	c->hour = (uint32_t)bits[1];
	c->dom = (uint32_t)bits[2];
	c->month = (uint16_t)bits[3];
	/* 7 is another name for Sunday. */
	c->dow = (uint8_t)((bits[4] & 0x7f) | ((bits[4] >> 7) & 1));
	c->dom_star = star[2];
	c->dow_star = star[4];
	return 0;
}

static int
cron_match_day(const struct cron *c, const struct tm *tm)
{
	int	dom_ok, dow_ok;

	dom_ok = (c->dom & ((uint32_t)1 << tm->tm_mday)) != 0;
	dow_ok = (c->dow & (1u << tm->tm_wday)) != 0;
	if (c->dom_star || c->dow_star)
		return dom_ok && dow_ok;
	return dom_ok || dow_ok;
}

int
cron_match(const struct cron *c, const struct tm *tm)
{

	if (tm->tm_min < 0 || tm->tm_min > 59 || tm->tm_hour < 0 || tm->tm_hour > 23 ||
	    tm->tm_mday < 1 || tm->tm_mday > 31 || tm->tm_mon < 0 || tm->tm_mon > 11 ||
	    tm->tm_wday < 0 || tm->tm_wday > 6)
		return 0;
	if (!(c->minute & ((uint64_t)1 << tm->tm_min)) ||
	    !(c->hour & ((uint32_t)1 << tm->tm_hour)) ||
	    !(c->month & (1u << (tm->tm_mon + 1))))
		return 0;
	return cron_match_day(c, tm);
}

time_t
cron_next(const struct cron *c, time_t t)
{
	struct tm	 tm;
	time_t		 next, limit = t + (time_t)5 * 366 * 24 * 3600;

	t = t - t % 60 + 60;
	while (t <= limit) {
		if (localtime_r(&t, &tm) == NULL)
			return -1;
		if (!(c->month & (1u << (tm.tm_mon + 1)))) {
			/* Skip to the first day of the next month. */
			tm.tm_mday = 1;
			tm.tm_hour = 0;
			tm.tm_min = 0;
			tm.tm_sec = 0;
			tm.tm_mon++;
			tm.tm_isdst = -1;
			next = mktime(&tm);
			if (next == (time_t)-1 || next <= t)
				return -1;
			t = next;
			continue;
		}
		if (cron_match(c, &tm))
			return t;
		if (!(c->hour & ((uint32_t)1 << tm.tm_hour)) || !cron_match_day(c, &tm)) {
			t += 3600 - tm.tm_min * 60;
			continue;
		}
		t += 60;
	}
	return -1;
}
