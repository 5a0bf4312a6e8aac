/* Policy merge and resolve against a real temporary home (kept outside /tmp). */
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

#include "paths.h"
#include "policy.h"

static char	 root[PATH_MAX], home[PATH_MAX], cwhome[PATH_MAX];

static void
mkfile(const char *rel)
{
	char	 p[PATH_MAX];
	FILE	*f;

	snprintf(p, sizeof p, "%s/%s", home, rel);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs("x\n", f);
	fclose(f);
}

static void
mkd(const char *rel)
{
	char	 p[PATH_MAX];

	snprintf(p, sizeof p, "%s/%s", home, rel);
	assert_int_equal(paths_mkdir_p(p, 0700), 0);
}

static int
setup(void **state)
{
	char	 cwd[PATH_MAX], tmpl[PATH_MAX + 32], canon[PATH_MAX];

	(void)state;
	/* Not under /tmp: read-only grants there are refused by design. */
	snprintf(cwd, sizeof cwd, "%s", CW_TEST_TMP_DIR);
	snprintf(tmpl, sizeof tmpl, "%s/policy-XXXXXX", cwd);
	assert_non_null(mkdtemp(tmpl));
	assert_int_equal(paths_canonical(tmpl, canon, sizeof canon), 0);
	snprintf(root, sizeof root, "%s", canon);
	snprintf(home, sizeof home, "%s/home", root);
	snprintf(cwhome, sizeof cwhome, "%s/.clockwork", home);
	mkd("");
	mkd(".ssh");
	mkfile(".ssh/id_ed25519");
	mkd(".aws");
	mkfile(".aws/credentials");
	mkd("src/shared");
	mkd("src/other");
	mkd("projects/a");
	mkd("projects/b");
	mkfile(".gitconfig");
	mkd(".clockwork");
	assert_int_equal(symlink(".ssh", strcat(strcpy(tmpl, home), "/innocent")), 0);
	assert_int_equal(symlink(".aws/credentials", strcat(strcpy(tmpl, home), "/notes.txt")), 0);
	return 0;
}

static int
teardown(void **state)
{
	char	 cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

static void
test_merge(void **state)
{
	struct policy	 g, e, m;

	(void)state;
	policy_init(&g);
	policy_init(&e);
	strlist_add(&g.read_dirs, "~/a");
	strlist_add(&g.env, "LANG_X");
	g.enabled = 1;
	g.ssh = 0;
	strlist_add(&e.read_dirs, "~/a");
	strlist_add(&e.read_dirs, "~/b");
	strlist_add(&e.write_files, "~/.claude.json");
	strlist_add(&e.env, "ANTHROPIC_API_KEY");
	e.ssh_keys = 1;
	assert_int_equal(policy_merge(&g, &e, &m), 0);
	assert_int_equal(m.read_dirs.n, 2);	/* union, no duplicate */
	assert_string_equal(m.read_dirs.v[0], "~/a");
	assert_string_equal(m.read_dirs.v[1], "~/b");
	assert_int_equal(m.write_files.n, 1);
	assert_int_equal(m.env.n, 2);
	assert_int_equal(m.enabled, 1);
	assert_int_equal(m.ssh_keys, 1);
	assert_int_equal(m.ssh, 1);		/* ssh-keys implies ssh */
	policy_free(&m);

	/* The engine's scalar wins where set; unset stays unset and reads as enabled. */
	e.enabled = 0;
	assert_int_equal(policy_merge(&g, &e, &m), 0);
	assert_int_equal(m.enabled, 0);
	assert_false(policy_enabled(&m));
	policy_free(&m);
	g.enabled = POLICY_UNSET;
	assert_int_equal(policy_merge(&g, NULL, &m), 0);
	assert_true(policy_enabled(&m));
	policy_free(&m);
	policy_free(&g);
	policy_free(&e);
}

static int
resolve(const char *kind, const char *entry, struct policy_resolved *r, char *err,
    size_t errlen)
{
	struct policy	 p;
	int		 rc;

	policy_init(&p);
	if (strcmp(kind, "read_dirs") == 0)
		strlist_add(&p.read_dirs, entry);
	else if (strcmp(kind, "write_dirs") == 0)
		strlist_add(&p.write_dirs, entry);
	else if (strcmp(kind, "read_files") == 0)
		strlist_add(&p.read_files, entry);
	else
		strlist_add(&p.write_files, entry);
	rc = policy_resolve(&p, home, cwhome, r, err, errlen);
	policy_free(&p);
	return rc;
}

static void
test_resolve_expands_and_drops(void **state)
{
	struct policy		 p;
	struct policy_resolved	 r;
	char			 err[1024], want[PATH_MAX];

	(void)state;
	policy_init(&p);
	strlist_add(&p.read_dirs, "~/src/shared");
	strlist_add(&p.read_dirs, "~/does/not/exist");	/* dropped */
	strlist_add(&p.read_dirs, "~/projects/*");		/* glob */
	strlist_add(&p.read_dirs, "~/nomatch-*");		/* glob, no match: nothing */
	strlist_add(&p.read_files, "~/.gitconfig");
	strlist_add(&p.write_files, "~/.claude.json.lock");	/* missing file: kept */
	strlist_add(&p.env, "FOO");
	assert_int_equal(policy_resolve(&p, home, cwhome, &r, err, sizeof err), 0);
	assert_int_equal(r.read_dirs.n, 3);
	snprintf(want, sizeof want, "%s/src/shared", home);
	assert_string_equal(r.read_dirs.v[0], want);
	snprintf(want, sizeof want, "%s/projects/a", home);
	assert_true(strlist_contains(&r.read_dirs, want));
	snprintf(want, sizeof want, "%s/.gitconfig", home);
	assert_string_equal(r.read_files.v[0], want);
	snprintf(want, sizeof want, "%s/.claude.json.lock", home);
	assert_string_equal(r.write_files.v[0], want);
	assert_string_equal(r.env.v[0], "FOO");
	assert_true(r.enabled);
	policy_resolved_free(&r);
	policy_free(&p);
}

static void
test_resolve_refuses_credentials(void **state)
{
	struct policy_resolved	 r;
	char			 err[1024];

	(void)state;
	assert_int_equal(resolve("read_dirs", "~/.ssh", &r, err, sizeof err), -1);
	assert_non_null(strstr(err, "'~/.ssh'"));
	assert_non_null(strstr(err, "ssh keys"));
	/* Through a symlink: ~/innocent -> .ssh. */
	assert_int_equal(resolve("read_dirs", "~/innocent", &r, err, sizeof err), -1);
	assert_non_null(strstr(err, "credential location"));
	assert_non_null(strstr(err, "/.ssh"));
	/* A file symlink into ~/.aws. */
	assert_int_equal(resolve("read_files", "~/notes.txt", &r, err, sizeof err), -1);
	assert_non_null(strstr(err, "AWS credentials"));
	assert_int_equal(resolve("write_dirs", "~/.aws", &r, err, sizeof err), -1);
	assert_int_equal(resolve("read_files", "~/.bash_history", &r, err, sizeof err), -1);
	assert_int_equal(resolve("read_dirs", "~/.clockwork/secrets", &r, err, sizeof err), -1);
	assert_int_equal(resolve("read_files", "/etc/shadow", &r, err, sizeof err), -1);
}

static void
test_resolve_ssh_keys_feature(void **state)
{
	struct policy		 p;
	struct policy_resolved	 r;
	char			 err[1024], want[PATH_MAX];

	(void)state;
	policy_init(&p);
	p.ssh_keys = 1;
	p.ssh = 1;
	assert_int_equal(policy_resolve(&p, home, cwhome, &r, err, sizeof err), 0);
	snprintf(want, sizeof want, "%s/.ssh", home);
	assert_true(strlist_contains(&r.read_dirs, want));
	assert_true(r.ssh && r.ssh_keys);
	policy_resolved_free(&r);
	/* ssh-keys opens ~/.ssh for reading only, never writing. */
	strlist_add(&p.write_dirs, "~/.ssh");
	assert_int_equal(policy_resolve(&p, home, cwhome, &r, err, sizeof err), -1);
	policy_free(&p);
}

static void
test_resolve_refuses_ro_under_tmp(void **state)
{
	struct policy_resolved	 r;
	char			 err[1024];

	(void)state;
	assert_int_equal(resolve("read_dirs", "/tmp", &r, err, sizeof err), -1);
	assert_non_null(strstr(err, "must leave writable"));
	assert_int_equal(resolve("read_files", "/tmp/some.lock", &r, err, sizeof err), -1);
	/* Writable grants there are fine. */
	assert_int_equal(resolve("write_dirs", "/tmp", &r, err, sizeof err), 0);
	policy_resolved_free(&r);
}

static void
test_resolve_kind_mismatch(void **state)
{
	struct policy_resolved	 r;
	char			 err[1024];

	(void)state;
	assert_int_equal(resolve("read_dirs", "~/.gitconfig", &r, err, sizeof err), -1);
	assert_non_null(strstr(err, "not a directory"));
	assert_int_equal(resolve("read_files", "~/src", &r, err, sizeof err), -1);
	assert_non_null(strstr(err, "is a directory"));
	assert_int_equal(resolve("read_dirs", "relative", &r, err, sizeof err), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_resolve_expands_and_drops),
		cmocka_unit_test(test_resolve_refuses_credentials),
		cmocka_unit_test(test_resolve_ssh_keys_feature),
		cmocka_unit_test(test_resolve_refuses_ro_under_tmp),
		cmocka_unit_test(test_resolve_kind_mismatch),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
