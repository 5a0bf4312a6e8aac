/*
 * rmtree: removing a tree that holds read-only directories of our own, as go leaves
 * its module cache (0555 directories, 0444 files), which every task's cache root may
 * hold (issue 30). Root needs no permission bit, so this fails only for a normal user
 * without the fchmod (the normal-user tier runs it too: toolchain/go's gc step).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "rmtree.h"

static void
test_readonly_dirs(void **state)
{
	char		 dir[] = "/tmp/cwrmtreeXXXXXX", p[600];
	struct stat	 st;
	FILE		*f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(p, sizeof p, "%s/mod", dir);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof p, "%s/mod/uuid@v1.6.0", dir);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof p, "%s/mod/uuid@v1.6.0/uuid.go", dir);
	assert_non_null(f = fopen(p, "w"));
	fclose(f);
	assert_int_equal(chmod(p, 0444), 0);
	snprintf(p, sizeof p, "%s/mod/uuid@v1.6.0", dir);
	assert_int_equal(chmod(p, 0555), 0);
	snprintf(p, sizeof p, "%s/mod", dir);
	assert_int_equal(chmod(p, 0555), 0);
	assert_int_equal(rmtree_path(dir), 0);
	assert_int_equal(stat(dir, &st), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_readonly_dirs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
