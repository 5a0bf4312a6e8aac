/*
 * What the seal leaves out of a run's commit (runner/sealskip.c): the built-in rules by
 * name, their contexts (target/ beside Cargo.toml or pom.xml, build/ beside a Gradle
 * script), nothing under a directory that holds a tracked file, the outermost match
 * only, counts, and a malformed listing refused whole.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sealskip.h"

/* A listing from "T path" lines given as one string with '\n' for git's NULs. */
static size_t
listing(const char *lines, char *buf, size_t buflen)
{
	size_t	 n = strlen(lines);

	assert_true(n < buflen);
	memcpy(buf, lines, n);
	for (size_t i = 0; i < n; i++)
		if (buf[i] == '\n')
			buf[i] = '\0';
	return n;
}

/* The plan as "path:files," for one comparison. */
static void
plan_str(const char *lines, char *out, size_t outlen, size_t *files)
{
	struct sealskip	 s;
	char		 buf[8192], err[128];
	size_t		 len = listing(lines, buf, sizeof buf), o = 0;

	assert_int_equal(sealskip_plan(buf, len, &s, err, sizeof err), 0);
	out[0] = '\0';
	for (size_t i = 0; i < s.n; i++)
		o += (size_t)snprintf(out + o, outlen - o, "%s:%zu,", s.v[i].path,
		    s.v[i].files);
	*files = s.files;
	sealskip_free(&s);
}

static void
test_rules_by_name(void **state)
{
	(void)state;
	assert_string_equal(sealskip_rule("__pycache__", 1), "__pycache__");
	assert_string_equal(sealskip_rule("mod.cpython-311.pyc", 0), "*.pyc");
	assert_string_equal(sealskip_rule("x.egg-info", 1), "*.egg-info");
	assert_string_equal(sealskip_rule("node_modules", 1), "node_modules");
	assert_string_equal(sealskip_rule("Main.class", 0), "*.class");
	assert_string_equal(sealskip_rule("main.o", 0), "*.o");
	assert_string_equal(sealskip_rule("CMakeCache.txt", 0), "CMakeCache.txt");
	/* A file is not a directory rule's, nor a directory a file rule's. */
	assert_null(sealskip_rule("__pycache__", 0));
	assert_null(sealskip_rule("a.pyc", 1));
	/* A suffix needs a name before it; the doubtful names are not here at all. */
	assert_null(sealskip_rule(".pyc", 0));
	assert_null(sealskip_rule(".o", 0));
	assert_null(sealskip_rule("model.obj", 0));
	assert_null(sealskip_rule("libx.a", 0));
	assert_null(sealskip_rule("dist", 1));
	assert_null(sealskip_rule("out", 1));
	assert_null(sealskip_rule("node_modules2", 1));
	assert_null(sealskip_rule("my__pycache__", 1));
}

static void
test_plan_outermost_and_counts(void **state)
{
	char	 out[2048];
	size_t	 files;

	(void)state;
	plan_str("H src/mod.py\n? src/__pycache__/mod.cpython-311.pyc\n"
	    "? src/__pycache__/b.cpython-311.pyc\n? web/node_modules/a/i.js\n"
	    "? web/node_modules/a/__pycache__/x.pyc\n? web/node_modules.txt\n"
	    "? stray.pyc\n? src/new.py\n", out, sizeof out, &files);
	assert_string_equal(out, "src/__pycache__/:2,stray.pyc:1,web/node_modules/:2,");
	assert_int_equal(files, 5);
}

static void
test_plan_context(void **state)
{
	char	 out[2048];
	size_t	 files;

	(void)state;
	/* target/ beside Cargo.toml (tracked or new) or pom.xml; elsewhere it is source. */
	plan_str("H rs/Cargo.toml\n? rs/target/debug/app\n? new/Cargo.toml\n"
	    "? new/target/x\n? mvn/pom.xml\n? mvn/target/a.jar\n? docs/target/page.md\n"
	    "? docs/Cargo.toml.bak\n? g/build.gradle.kts\n? g/build/libs/a.jar\n"
	    "? py/build/lib/m.py\n? py/setup.py\n", out, sizeof out, &files);
	assert_string_equal(out, "g/build/:1,mvn/target/:1,new/target/:1,rs/target/:1,");
	assert_int_equal(files, 4);
}

static void
test_plan_tracked_is_kept(void **state)
{
	char	 out[2048];
	size_t	 files;

	(void)state;
	/*
	 * A repository that commits its node_modules/ or target/ keeps new files there;
	 * a tracked .pyc is the repository's (git never lists it as untracked anyway).
	 */
	plan_str("H node_modules/vendored/i.js\n? node_modules/vendored/new.js\n"
	    "H Cargo.toml\nH target/release/x\n? target/release/y\n"
	    "H keep.pyc\n? lib/sub/node_modules/a.js\nH lib/sub/x.c\n", out, sizeof out,
	    &files);
	assert_string_equal(out, "lib/sub/node_modules/:1,");
	assert_int_equal(files, 1);
	/* Nothing untracked, or nothing at all. */
	plan_str("H a\nH b/c\n", out, sizeof out, &files);
	assert_string_equal(out, "");
	assert_int_equal(files, 0);
}

static void
test_plan_nested_repository(void **state)
{
	char	 out[2048];
	size_t	 files;

	(void)state;
	/*
	 * git lists a repository inside the tree whole, with a '/' (cargo new makes one):
	 * accepted, committed as git would (a gitlink), left out only under a rule's dir.
	 */
	plan_str("H a\n? newcrate/\n? web/node_modules/dep/\n? p/__pycache__/x.pyc\n", out,
	    sizeof out, &files);
	assert_string_equal(out, "p/__pycache__/:1,web/node_modules/:1,");
	assert_int_equal(files, 2);
}

static void
test_plan_refuses_malformed(void **state)
{
	static const char *const bad[] = {
		"? /abs.pyc\n", "? a/../b.pyc\n", "? ./a.pyc\n", "? a//b.pyc\n",
		"H a/\n", "? a//\n", "? /\n", "? ../\n", "?a.pyc\n", "X a.pyc\n", "? \n",
		"H\n", "? a/b.pyc/\n/\n",
	};
	struct sealskip	 s;
	char		 buf[256], err[128];
	size_t		 len;

	(void)state;
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		len = listing(bad[i], buf, sizeof buf);
		assert_int_equal(sealskip_plan(buf, len, &s, err, sizeof err), -1);
		assert_int_equal(s.n, 0);
		assert_int_equal(s.files, 0);
		sealskip_free(&s);
	}
	/* Not NUL-terminated: refused, never read past. */
	memcpy(buf, "? a.pyc", 7);
	assert_int_equal(sealskip_plan(buf, 7, &s, err, sizeof err), -1);
	sealskip_free(&s);
	assert_int_equal(sealskip_plan(buf, 0, &s, err, sizeof err), 0);
	assert_int_equal(s.n, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rules_by_name),
		cmocka_unit_test(test_plan_outermost_and_counts),
		cmocka_unit_test(test_plan_context),
		cmocka_unit_test(test_plan_tracked_is_kept),
		cmocka_unit_test(test_plan_refuses_malformed),
		cmocka_unit_test(test_plan_nested_repository),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
