#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "strlist.h"

static void
test_strlist_unique(void **state)
{
	struct strlist l = { 0 };

	(void)state;
	assert_int_equal(strlist_add_unique(&l, "a"), 0);
	assert_int_equal(strlist_add_unique(&l, "a"), 0);
	assert_int_equal(strlist_add_unique(&l, "b"), 0);
	assert_int_equal(l.n, 2);
	strlist_free(&l);
}

int
main(void)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(test_strlist_unique) };
	return cmocka_run_group_tests(tests, NULL, NULL);
}
