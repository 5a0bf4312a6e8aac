/*
 * The pull request page derived from a git remote URL (common/gitremote.c), for
 * cwctl run push --pr without gh or glab: GitHub and GitLab in the https, ssh and scp
 * forms git accepts, a token in the URL never printed, branch names encoded, and no
 * URL at all for another host, a local path or a path with odd bytes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "gitremote.h"

#define GH	"https://github.com/o/r/compare/clockwork/t/20261202-1?expand=1"
#define GL	"https://gitlab.com/g/sub/r/-/merge_requests/new?" \
		"merge_request%5Bsource_branch%5D=clockwork%2Ft%2F20261202-1"

static void
expect(const char *url, const char *want)
{
	char	out[512];

	if (gitremote_compare_url(url, "clockwork/t/20261202-1", out, sizeof out) != 0)
		fail_msg("no URL for %s", url);
	if (strcmp(out, want) != 0)
		fail_msg("%s: got %s, want %s", url, out, want);
}

static void
refused(const char *url)
{
	char	out[512] = "x";

	if (gitremote_compare_url(url, "b", out, sizeof out) != -1)
		fail_msg("a URL for %s: %s", url, out);
	assert_null(strstr(out, "https://"));
}

static void
test_github_forms(void **state)
{
	(void)state;
	expect("https://github.com/o/r.git", GH);
	expect("https://github.com/o/r", GH);
	expect("https://github.com/o/r/", GH);
	expect("https://github.com/o/r.git/", GH);
	expect("http://github.com/o/r.git", GH);
	expect("HTTPS://GitHub.com/o/r.git", GH);
	expect("git@github.com:o/r.git", GH);
	expect("github.com:o/r", GH);
	expect("ssh://git@github.com/o/r.git", GH);
	expect("ssh://git@github.com:22/o/r.git", GH);
	expect("git+ssh://git@github.com/o/r", GH);
	expect("git://github.com/o/r.git", GH);
}

static void
test_github_token_not_printed(void **state)
{
	char	out[512];

	(void)state;
	assert_int_equal(gitremote_compare_url("https://x-access-token:ghp_SECRET@github.com"
	    "/o/r.git", "b", out, sizeof out), 0);
	assert_string_equal(out, "https://github.com/o/r/compare/b?expand=1");
	assert_null(strstr(out, "SECRET"));
	/* An '@' in the secret: userinfo ends at the last '@' before the path. */
	assert_int_equal(gitremote_compare_url("https://u:p@ss@github.com/o/r", "b", out,
	    sizeof out), 0);
	assert_string_equal(out, "https://github.com/o/r/compare/b?expand=1");
}

static void
test_gitlab_forms(void **state)
{
	char	out[512];

	(void)state;
	expect("https://gitlab.com/g/sub/r.git", GL);
	expect("git@gitlab.com:g/sub/r.git", GL);
	expect("ssh://git@gitlab.com/g/sub/r", GL);
	assert_int_equal(gitremote_compare_url("git@gitlab.com:g/r.git", "b", out,
	    sizeof out), 0);
	assert_string_equal(out, "https://gitlab.com/g/r/-/merge_requests/new?"
	    "merge_request%5Bsource_branch%5D=b");
}

static void
test_branch_encoded(void **state)
{
	char	out[512];

	(void)state;
	assert_int_equal(gitremote_compare_url("git@github.com:o/r.git", "a b#c?d&e%",
	    out, sizeof out), 0);
	assert_string_equal(out, "https://github.com/o/r/compare/a%20b%23c%3Fd%26e%25"
	    "?expand=1");
	assert_int_equal(gitremote_compare_url("git@github.com:o/r.git", "", out,
	    sizeof out), -1);
}

static void
test_not_a_forge(void **state)
{
	char	path[64], out[40];

	(void)state;
	refused("/srv/git/r.git");
	refused("file:///srv/git/r.git");
	refused("../r.git");
	refused("https://example.com/o/r.git");
	refused("https://github.com.evil.example/o/r.git");
	refused("https://evil.example/github.com/o/r.git");
	refused("git@evil.example:github.com/o/r.git");
	refused("https://github.com/o");		/* no repository */
	refused("https://github.com/o/r/tree/main");	/* not a repository URL */
	refused("https://github.com/o/../r");
	refused("https://github.com/o/r?x=1");
	refused("https://github.com/o/r#x");
	refused("https://github.com/o/r%2f");
	refused("https://github.com/o/<script>");
	refused("https://github.com");
	refused("github.com");
	refused("ftp://github.com/o/r");
	refused("");
	assert_int_equal(gitremote_parse(NULL, path, sizeof path), GITREMOTE_NONE);
	/* Too small an output: nothing half-written. */
	assert_int_equal(gitremote_compare_url("git@github.com:o/r.git", "branch", out,
	    sizeof out), -1);
	assert_string_equal(out, "");
	assert_int_equal(gitremote_parse("git@gitlab.com:a/b/c.git", path, sizeof path),
	    GITREMOTE_GITLAB);
	assert_string_equal(path, "a/b/c");
	assert_int_equal(gitremote_parse("git@gitlab.com:a/b/c.git", path, 5),
	    GITREMOTE_NONE);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_github_forms),
		cmocka_unit_test(test_github_token_not_printed),
		cmocka_unit_test(test_gitlab_forms),
		cmocka_unit_test(test_branch_encoded),
		cmocka_unit_test(test_not_a_forge),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
