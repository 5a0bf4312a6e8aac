/*
 * The words for a run's review end state (common/runreview.c), which clockworkd's 409
 * and cwctl's own refusal both say: the target after the state, the time as a person
 * reads it, the rest of the detail after it; missing parts leave no stray words.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "runreview.h"

static void
test_said(void **state)
{
	char	b[256], small[24];

	(void)state;
	runreview_said("r1", "merged", "2026-12-02T15:40:01.123Z", "into main, fast-forward",
	    b, sizeof b);
	assert_string_equal(b, "run r1 was merged into main at 2026-12-02 15:40:01 UTC "
	    "(fast-forward)");
	runreview_said("r1", "landed", "2026-12-02T15:40:01.123Z", "into dev, squashed; "
	    "branch clockwork/t/r1 and its worktree removed", b, sizeof b);
	assert_string_equal(b, "run r1 was landed into dev at 2026-12-02 15:40:01 UTC "
	    "(squashed; branch clockwork/t/r1 and its worktree removed)");
	runreview_said("r1", "discarded", "2026-12-02T15:40:01.123Z",
	    "branch clockwork/t/r1 and its worktree removed", b, sizeof b);
	assert_string_equal(b, "run r1 was discarded at 2026-12-02 15:40:01 UTC "
	    "(branch clockwork/t/r1 and its worktree removed)");
	runreview_said("r1", "merged", "2026-12-02T15:40:01.123Z", "into main", b, sizeof b);
	assert_string_equal(b, "run r1 was merged into main at 2026-12-02 15:40:01 UTC");
	runreview_said("r1", "merged", "2026-12-02T15:40:01.123Z", "", b, sizeof b);
	assert_string_equal(b, "run r1 was merged at 2026-12-02 15:40:01 UTC");
	runreview_said(NULL, NULL, NULL, NULL, b, sizeof b);
	assert_string_equal(b, "run ? was reviewed at   UTC");
	runreview_said("r1", "merged", "2026-12-02T15:40:01.123Z", "into main, merged",
	    small, sizeof small);
	assert_int_equal(strlen(small), sizeof small - 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_said),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
