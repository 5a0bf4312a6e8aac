/* Path helpers and the credential classifier, including symlinks into ~/.ssh. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "credpaths.h"
#include "paths.h"

static void
test_expand_home(void **state)
{
	char	 out[PATH_MAX];

	(void)state;
	assert_int_equal(paths_expand_home("~", "/h/u", out, sizeof out), 0);
	assert_string_equal(out, "/h/u");
	assert_int_equal(paths_expand_home("~/x/y", "/h/u", out, sizeof out), 0);
	assert_string_equal(out, "/h/u/x/y");
	assert_int_equal(paths_expand_home("~other/x", "/h/u", out, sizeof out), 0);
	assert_string_equal(out, "~other/x");
	assert_int_equal(paths_expand_home("/abs", "/h/u", out, sizeof out), 0);
	assert_string_equal(out, "/abs");
	assert_int_equal(paths_expand_home("~/x", "/h/u", out, 4), -1);
}

static void
test_within(void **state)
{
	(void)state;
	assert_true(paths_within("/a/b", "/a"));
	assert_true(paths_within("/a", "/a"));
	assert_false(paths_within("/ab", "/a"));
	assert_true(paths_within("/anything", "/"));
	assert_false(paths_within("/a", "/a/b"));
}

static void
test_canonical_and_classify(void **state)
{
	char	 cwd[PATH_MAX], root[PATH_MAX + 16], home[PATH_MAX], p[PATH_MAX],
		 out[PATH_MAX], cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cwd, sizeof cwd, "%s", CW_TEST_TMP_DIR);
	snprintf(root, sizeof root, "%s/paths-XXXXXX", cwd);
	assert_non_null(mkdtemp(root));
	assert_int_equal(paths_canonical(root, home, sizeof home), 0);
	strcat(home, "/home");
	assert_int_equal(paths_mkdir_p(home, 0700), 0);
	snprintf(p, sizeof p, "%s/.ssh", home);
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(p, sizeof p, "%s/work", home);
	assert_int_equal(mkdir(p, 0700), 0);

	/* A symlink planted in a worktree that points into ~/.ssh. */
	snprintf(p, sizeof p, "%s/work/keys", home);
	snprintf(out, sizeof out, "%s/.ssh", home);
	assert_int_equal(symlink(out, p), 0);
	snprintf(p, sizeof p, "%s/work/keys/id_ed25519", home);
	assert_int_equal(paths_canonical(p, out, sizeof out), 0);
	snprintf(p, sizeof p, "%s/.ssh/id_ed25519", home);
	assert_string_equal(out, p);	/* missing file, resolved through the link */
	assert_string_equal(credpaths_classify(out, home, NULL), "ssh keys");

	/* Lexical .. after the existing prefix. */
	snprintf(p, sizeof p, "%s/work/new/../other/f", home);
	assert_int_equal(paths_canonical(p, out, sizeof out), 0);
	snprintf(p, sizeof p, "%s/work/other/f", home);
	assert_string_equal(out, p);
	assert_int_equal(paths_canonical("relative/x", out, sizeof out), -1);
	/* Nothing below / exists: the whole path stays, it never collapses to "/". */
	assert_int_equal(paths_canonical("/no-such-top/x/y", out, sizeof out), 0);
	assert_string_equal(out, "/no-such-top/x/y");
	assert_int_equal(paths_canonical("/no-such-top", out, sizeof out), 0);
	assert_string_equal(out, "/no-such-top");

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
}

static const struct {
	const char	*path;
	const char	*label;		/* NULL: not a credential location */
} cases[] = {
	{ "/home/u/.ssh", "ssh keys" },
	{ "/home/u/.ssh/id_rsa", "ssh keys" },
	{ "/home/u/.sshx", NULL },
	{ "/home/u/.aws/credentials", "AWS credentials" },
	{ "/home/u/.gnupg/private-keys-v1.d/k.key", "GnuPG keyring" },
	{ "/home/u/.config/gcloud/credentials.db", "Google Cloud credentials" },
	{ "/home/u/.config/other", NULL },
	{ "/home/u/.netrc", "netrc passwords" },
	{ "/home/u/.docker/config.json", "docker registry logins" },
	{ "/home/u/.docker/buildx", NULL },
	{ "/home/u/.kube/config", "kubernetes configs" },
	{ "/home/u/.git-credentials", "git credential store" },
	{ "/home/u/.bash_history", "shell history" },
	{ "/home/u/.zsh_history", "shell history" },
	{ "/home/u/.local/share/fish/fish_history", "shell history" },
	{ "/home/u/.config/google-chrome/Default/Cookies", "browser profile" },
	{ "/home/u/.mozilla/firefox/x.default/cookies.sqlite", "browser profile" },
	{ "/home/u/.npmrc", "npm tokens" },
	{ "/home/u/.config/gh/hosts.yml", "GitHub CLI tokens" },
	{ "/home/u/project/.ssh/notes", NULL },
	{ "/home/u/project/src/main.c", NULL },
	{ "/home/u/.clockwork/api.token", "Clockwork API token" },
	{ "/home/u/.clockwork/secrets/telegram", "Clockwork delivery credentials" },
	{ "/home/u/.clockwork/cache/npm", NULL },
	{ "/etc/shadow", "system password hashes" },
	{ "/etc/passwd", NULL },
	{ "/etc/ssh/ssh_host_ed25519_key", "ssh host keys" },
	{ "/etc/ssh/ssh_host_ed25519_key.pub", "ssh host keys" },
	{ "/etc/ssh/ssh_config", NULL },
	{ "/usr/bin/git", NULL },
};

static void
test_classify_table(void **state)
{
	const char	*got;

	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		got = credpaths_classify(cases[i].path, "/home/u", "/home/u/.clockwork");
		if (cases[i].label == NULL && got != NULL)
			fail_msg("%s classified as %s", cases[i].path, got);
		if (cases[i].label != NULL && (got == NULL || strcmp(got, cases[i].label) != 0))
			fail_msg("%s: got %s, want %s", cases[i].path, got ? got : "(none)",
			    cases[i].label);
	}
}

static void
test_inside(void **state)
{
	(void)state;
	assert_true(credpaths_inside("/home/u", "/home/u", NULL));
	assert_true(credpaths_inside("/home/u/.config", "/home/u", NULL));
	assert_false(credpaths_inside("/home/u/.ssh", "/home/u", NULL));	/* is, not inside */
	assert_false(credpaths_inside("/home/u/project", "/home/u", NULL));
	assert_true(credpaths_inside("/etc", "/home/u", NULL));
	assert_true(credpaths_inside("/etc/ssh", "/home/u", NULL));
	assert_false(credpaths_inside("/usr", "/home/u", NULL));
	assert_true(credpaths_inside("/", "/home/u", NULL));
}

static void
test_clockwork_home(void **state)
{
	char	 out[PATH_MAX];

	(void)state;
	setenv("CLOCKWORK_HOME", "/srv/cw", 1);
	assert_int_equal(paths_clockwork_home(out, sizeof out), 0);
	assert_string_equal(out, "/srv/cw");
	setenv("CLOCKWORK_HOME", "relative", 1);
	assert_int_equal(paths_clockwork_home(out, sizeof out), -1);
	unsetenv("CLOCKWORK_HOME");
	setenv("HOME", "/home/x", 1);
	assert_int_equal(paths_clockwork_home(out, sizeof out), 0);
	assert_string_equal(out, "/home/x/.clockwork");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_expand_home),
		cmocka_unit_test(test_within),
		cmocka_unit_test(test_canonical_and_classify),
		cmocka_unit_test(test_classify_table),
		cmocka_unit_test(test_inside),
		cmocka_unit_test(test_clockwork_home),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
