/* cron.c: the 5-field parser (untrusted text), matching and the next-fire search. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include <event2/event.h>

#include "cron.h"
#include "daemon.h"
#include "schedule.h"
#include "store.h"

static struct tm
tm_of(int year, int mon, int mday, int hour, int min)
{
	struct tm	tm;
	time_t		t;

	memset(&tm, 0, sizeof tm);
	tm.tm_year = year - 1900;
	tm.tm_mon = mon - 1;
	tm.tm_mday = mday;
	tm.tm_hour = hour;
	tm.tm_min = min;
	tm.tm_isdst = -1;
	t = mktime(&tm);	/* fills tm_wday */
	localtime_r(&t, &tm);
	return tm;
}

static void
test_valid(void **state)
{
	const char	*ok[] = {
		"* * * * *", "*/5 * * * *", "0 9 * * 1-5", "0,30 8-18/2 1,15 1-12 0", "59 23 31 12 7",
		"@hourly", "@daily", "@weekly", "@monthly", "@yearly", "  0  0  *  *  *  ",
		"0-59/59 0-23/23 1-31/30 1-12/11 0-7/7",
	};
	struct cron	c;
	char		err[160];

	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
		assert_int_equal(cron_parse(ok[i], &c, err, sizeof err), 0);
}

static void
test_invalid(void **state)
{
	const char	*bad[] = {
		"", "*", "* * * *", "* * * * * *", "60 * * * *", "* 24 * * *", "* * 0 * *",
		"* * 32 * *", "* * * 13 *", "* * * * 8", "*/0 * * * *", "5-1 * * * *", "1- * * * *",
		"-1 * * * *", ", * * * *", "1, * * * *", "1,,2 * * * *", "a * * * *", "@never",
		"1/2/3 * * * *", "1000 * * * *", "*/ * * * *", "** * * * *", "1-2-3 * * * *",
	};
	struct cron	c;
	char		err[160];
	char		longer[600];

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		err[0] = '\0';
		assert_int_equal(cron_parse(bad[i], &c, err, sizeof err), -1);
		assert_true(strlen(err) > 0);
	}
	memset(longer, '1', sizeof longer - 1);
	longer[sizeof longer - 1] = '\0';
	assert_int_equal(cron_parse(longer, &c, err, sizeof err), -1);
	assert_non_null(strstr(err, "longer"));
	assert_int_equal(cron_parse("61 * * * *", &c, err, sizeof err), -1);
	assert_non_null(strstr(err, "minute"));
}

static void
test_match(void **state)
{
	struct cron	c;
	struct tm	tm;
	char		err[160];

	assert_int_equal(cron_parse("30 9 * * 1-5", &c, err, sizeof err), 0);
	tm = tm_of(2026, 11, 30, 9, 30);	/* a Monday */
	assert_int_equal(tm.tm_wday, 1);
	assert_true(cron_match(&c, &tm));
	tm = tm_of(2026, 11, 29, 9, 30);	/* Sunday */
	assert_false(cron_match(&c, &tm));
	tm = tm_of(2026, 11, 30, 9, 31);
	assert_false(cron_match(&c, &tm));

	/* 7 is Sunday too. */
	assert_int_equal(cron_parse("0 0 * * 7", &c, err, sizeof err), 0);
	tm = tm_of(2026, 11, 29, 0, 0);
	assert_true(cron_match(&c, &tm));

	/* Both day fields restricted: either matches (Vixie cron). */
	assert_int_equal(cron_parse("0 0 1 * 1", &c, err, sizeof err), 0);
	tm = tm_of(2026, 11, 30, 0, 0);		/* Monday the 30th */
	assert_true(cron_match(&c, &tm));
	tm = tm_of(2026, 12, 1, 0, 0);		/* Tuesday the 1st */
	assert_true(cron_match(&c, &tm));
	tm = tm_of(2026, 12, 2, 0, 0);		/* Wednesday the 2nd */
	assert_false(cron_match(&c, &tm));

	/* Steps. */
	assert_int_equal(cron_parse("*/15 * * * *", &c, err, sizeof err), 0);
	tm = tm_of(2026, 11, 30, 3, 45);
	assert_true(cron_match(&c, &tm));
	tm = tm_of(2026, 11, 30, 3, 46);
	assert_false(cron_match(&c, &tm));
}

static void
test_next(void **state)
{
	struct cron	c;
	struct tm	tm, got;
	char		err[160];
	time_t		t, n;

	assert_int_equal(cron_parse("0 12 * * *", &c, err, sizeof err), 0);
	tm = tm_of(2026, 11, 30, 12, 0);
	t = mktime(&tm);
	n = cron_next(&c, t);			/* strictly after: tomorrow */
	localtime_r(&n, &got);
	assert_int_equal(got.tm_mday, 1);
	assert_int_equal(got.tm_mon, 11);
	assert_int_equal(got.tm_hour, 12);
	assert_int_equal(got.tm_min, 0);

	assert_int_equal(cron_parse("0 0 29 2 *", &c, err, sizeof err), 0);
	n = cron_next(&c, t);			/* the next 29 February: 2028 */
	localtime_r(&n, &got);
	assert_int_equal(got.tm_year + 1900, 2028);
	assert_int_equal(got.tm_mon, 1);
	assert_int_equal(got.tm_mday, 29);

	/* A day that never comes: none within the window, and a bounded search. */
	assert_int_equal(cron_parse("0 0 31 2 *", &c, err, sizeof err), 0);
	assert_int_equal(cron_next(&c, t), (time_t)-1);
}

/* schedule_tick against a real store: matching, enabled, not already running. */
static void
test_sched_tick(void **state)
{
	struct daemon		 d;
	struct store_task	 t;
	struct store_run	*v;
	char			 dir[] = "/tmp/cw-sched.XXXXXX", path[256], err[256];
	struct tm		 tm;
	size_t			 n;
	int64_t			 id;

	assert_non_null(mkdtemp(dir));
	memset(&d, 0, sizeof d);
	TAILQ_INIT(&d.runs);
	assert_non_null(d.base = event_base_new());
	snprintf(path, sizeof path, "%s/clockwork.db", dir);
	assert_int_equal(store_open(path, &d.store, err, sizeof err), 0);
	memset(&t, 0, sizeof t);
	t.prompt = "true";
	t.engine = "command";
	t.permission_mode = "plan";
	t.budget_dollars = 1;
	t.budget_turns = 1;
	t.budget_seconds = 60;
	t.name = "every5";
	t.schedule = "*/5 * * * *";
	t.enabled = 1;
	assert_int_equal(store_task_add(d.store, &t, &id), 0);
	t.name = "off";
	t.enabled = 0;
	assert_int_equal(store_task_add(d.store, &t, &id), 0);
	t.name = "manual";
	t.schedule = "queued";
	t.enabled = 1;
	assert_int_equal(store_task_add(d.store, &t, &id), 0);

	tm = tm_of(2026, 11, 30, 10, 7);	/* not a multiple of 5 */
	schedule_tick(&d, mktime(&tm));
	assert_int_equal(store_run_list(d.store, 0, STORE_RUN_ANY, 0, &v, &n), 0);
	assert_int_equal(n, 0);
	store_run_list_free(v, n);

	tm = tm_of(2026, 11, 30, 10, 10);
	schedule_tick(&d, mktime(&tm));
	assert_int_equal(store_run_list(d.store, 0, STORE_RUN_ANY, 0, &v, &n), 0);
	assert_int_equal(n, 1);			/* every5 only: off is disabled, manual is queued */
	assert_string_equal(v[0].task_name, "every5");
	assert_int_equal(v[0].status, STORE_RUN_QUEUED);
	store_run_list_free(v, n);

	/* Still queued at the next match: no pile-up. */
	tm = tm_of(2026, 11, 30, 10, 15);
	schedule_tick(&d, mktime(&tm));
	assert_int_equal(store_run_list(d.store, 0, STORE_RUN_ANY, 0, &v, &n), 0);
	assert_int_equal(n, 1);
	store_run_list_free(v, n);

	store_close(d.store);
	if (d.ev_pump != NULL)
		event_free(d.ev_pump);
	event_base_free(d.base);
	snprintf(path, sizeof path, "rm -rf %s", dir);
	assert_int_equal(system(path), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid),
		cmocka_unit_test(test_invalid),
		cmocka_unit_test(test_match),
		cmocka_unit_test(test_next),
		cmocka_unit_test(test_sched_tick),
	};

	setenv("TZ", "UTC", 1);
	tzset();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
