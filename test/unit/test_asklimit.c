/* asklimit.c: a run's approval budget, per run and per sliding minute, bursts. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "asklimit.h"

static int
admit(struct asklimit *l, int64_t now, const char **kind, int *first, char *why,
    size_t whylen)
{
	return asklimit_admit(l, now, why, whylen, kind, first);
}

static void
test_per_minute_slides(void **state)
{
	struct asklimit	 l;
	const char	*kind = NULL;
	int		 first = 0;
	char		 why[160];

	(void)state;
	assert_int_equal(asklimit_init(&l, 1000, 3), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(admit(&l, 1000 + i, &kind, &first, why, sizeof why), 0);
	/* The fourth within the minute: refused, a burst begins. */
	assert_int_equal(admit(&l, 2000, &kind, &first, why, sizeof why), -1);
	assert_string_equal(kind, "per_minute");
	assert_int_equal(first, 1);
	assert_non_null(strstr(why, "too many approvals per minute"));
	/* More of the same burst: refused, not a new burst. */
	assert_int_equal(admit(&l, 3000, &kind, &first, why, sizeof why), -1);
	assert_int_equal(first, 0);
	/* 60 s after the first admission one slot is free again, and only one. */
	assert_int_equal(admit(&l, 1000 + ASKLIMIT_WINDOW_MS, &kind, &first, why,
	    sizeof why), 0);
	assert_int_equal(admit(&l, 1000 + ASKLIMIT_WINDOW_MS, &kind, &first, why,
	    sizeof why), -1);
	assert_int_equal(first, 1);	/* a call was admitted in between: a new burst */
	assert_int_equal(l.asked, 4);
	asklimit_free(&l);
}

static void
test_per_run_cap(void **state)
{
	struct asklimit	 l;
	const char	*kind = NULL;
	int		 first = 0;
	char		 why[160];

	(void)state;
	assert_int_equal(asklimit_init(&l, 5, 100), 0);
	for (int i = 0; i < 5; i++)
		assert_int_equal(admit(&l, i * 100000LL, &kind, &first, why, sizeof why), 0);
	/* However long after: the run has had its five. */
	assert_int_equal(admit(&l, 10000000, &kind, &first, why, sizeof why), -1);
	assert_string_equal(kind, "per_run");
	assert_string_equal(why, "approval limit: 5 requests in this run");
	assert_int_equal(first, 1);
	assert_int_equal(admit(&l, 20000000, &kind, &first, why, sizeof why), -1);
	assert_int_equal(first, 0);
	assert_int_equal(l.refused, 2);
	asklimit_free(&l);
}

static void
test_bad_bounds(void **state)
{
	struct asklimit	 l;

	(void)state;
	assert_int_equal(asklimit_init(&l, 0, 3), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(asklimit_init(&l, 3, 0), -1);
	assert_int_equal(errno, EINVAL);
	asklimit_free(&l);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_per_minute_slides),
		cmocka_unit_test(test_per_run_cap),
		cmocka_unit_test(test_bad_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
