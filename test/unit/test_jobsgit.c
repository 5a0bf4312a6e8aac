/*
 * jobsgit.c against real repositories made with git: the default-branch rule
 * (origin/HEAD, then init.defaultBranch, main, master; none is an error), and the
 * jobs file read from that branch's commit by tree lookup: both files, a symlinked
 * jobs file or .clockwork refused, a blob over the limit refused, a file named
 * .clockwork holding no jobs, the working tree never read.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jobsgit.h"
#include "jobspec.h"
#include "worktree.h"

static char	tmp[256];

/* As in test_worktree.c: libpcre2's own leak inside libgit2 is not ours. */
const char	*__lsan_default_suppressions(void);
__attribute__((used)) const char *
__lsan_default_suppressions(void)
{
	return "leak:libpcre2-8.so\n";
}

static void	sh(const char *, ...) __attribute__((format(printf, 1, 2)));

static void
sh(const char *fmt, ...)
{
	char	cmd[4096];
	va_list	ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof cmd, fmt, ap);
	va_end(ap);
	assert_int_equal(system(cmd), 0);
}

#define GIT	"git -c user.name=t -c user.email=t@e"

static int
setup(void **state)
{
	(void)state;
	snprintf(tmp, sizeof tmp, "%s/cw-jg.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") :
	    "/tmp");
	assert_non_null(mkdtemp(tmp));
	/* git's and libgit2's global configuration: ours, empty. */
	setenv("HOME", tmp, 1);
	setenv("XDG_CONFIG_HOME", tmp, 1);
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	worktree_shutdown();
	worktree_init();
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	sh("rm -rf %s", tmp);
	worktree_shutdown();
	return 0;
}

/* A repository at tmp/name whose only branch is branch, with one commit. */
static void
repo(const char *name, const char *branch)
{
	sh("git init -q -b %s %s/%s && cd %s/%s && echo x > f && git add f && " GIT
	    " commit -q -m init", branch, tmp, name, tmp, name);
}

static void
expect_default(const char *name, const char *want_ref, const char *want_branch)
{
	char	path[512], ref[512], branch[256], err[512];

	snprintf(path, sizeof path, "%s/%s", tmp, name);
	if (jobsgit_default_branch(path, ref, sizeof ref, branch, sizeof branch, err,
	    sizeof err) != 0)
		fail_msg("%s: %s", name, err);
	assert_string_equal(ref, want_ref);
	assert_string_equal(branch, want_branch);
}

static void
test_default_branch_rule(void **state)
{
	char	path[512], ref[512], branch[256], err[512];

	(void)state;
	repo("m", "master");
	expect_default("m", "refs/heads/master", "master");
	sh("cd %s/m && git branch main", tmp);
	expect_default("m", "refs/heads/main", "main");
	/* init.defaultBranch wins over main when that branch exists. */
	sh("cd %s/m && git branch trunk && git config init.defaultBranch trunk", tmp);
	expect_default("m", "refs/heads/trunk", "trunk");
	/* origin/HEAD wins over everything; the local branch of its name when there is one. */
	sh("cd %s/m && git update-ref refs/remotes/origin/dev HEAD && "
	    "git symbolic-ref refs/remotes/origin/HEAD refs/remotes/origin/dev", tmp);
	expect_default("m", "refs/remotes/origin/dev", "dev");
	sh("cd %s/m && git branch dev", tmp);
	expect_default("m", "refs/heads/dev", "dev");
	/* Neither: an error that says so; the checked-out branch is never the answer. */
	repo("n", "feature");
	snprintf(path, sizeof path, "%s/n", tmp);
	assert_int_equal(jobsgit_default_branch(path, ref, sizeof ref, branch,
	    sizeof branch, err, sizeof err), -1);
	assert_non_null(strstr(err, "no default branch"));
}

static void
test_read_committed(void **state)
{
	struct jobsgit_result	 g;
	char			 path[512], err[512];

	(void)state;
	repo("r", "main");
	snprintf(path, sizeof path, "%s/r", tmp);
	/* No .clockwork: no files, no error. */
	assert_int_equal(jobsgit_read(path, &g, err, sizeof err), 0);
	assert_int_equal(g.n_files, 0);
	/* Both files, as committed on main, while the working tree and HEAD differ. */
	sh("cd %s && mkdir .clockwork && echo '{\"jobs\":[]}' > .clockwork/jobs.json && "
	    "echo 'jobs: []' > .clockwork/jobs.yaml && git add . && " GIT " commit -q -m j && "
	    "git checkout -q -b other && echo 'jobs: [x]' > .clockwork/jobs.yaml && "
	    GIT " commit -q -am other && echo 'WORKTREE' > .clockwork/jobs.yaml", path);
	assert_int_equal(jobsgit_read(path, &g, err, sizeof err), 0);
	assert_int_equal(g.n_files, 2);
	assert_string_equal(g.files[0].path, ".clockwork/jobs.json");
	assert_string_equal(g.files[1].path, ".clockwork/jobs.yaml");
	assert_string_equal(g.files[1].text, "jobs: []\n");
	assert_string_equal(g.branch, "main");
	assert_int_equal(strlen(g.commit), 40);
	jobsgit_result_free(&g);
}

static void
test_read_refusals(void **state)
{
	struct jobsgit_result	 g;
	char			 path[512], err[512];

	(void)state;
	/* A symlinked jobs file. */
	repo("l", "main");
	snprintf(path, sizeof path, "%s/l", tmp);
	sh("cd %s && mkdir .clockwork && ln -s /etc/passwd .clockwork/jobs.yaml && "
	    "git add . && " GIT " commit -q -m l", path);
	assert_int_equal(jobsgit_read(path, &g, err, sizeof err), -1);
	assert_non_null(strstr(err, "jobs.yaml: refused: a symbolic link"));
	/* A symlinked .clockwork. */
	repo("d", "main");
	snprintf(path, sizeof path, "%s/d", tmp);
	sh("mkdir -p %s/out && echo 'jobs: []' > %s/out/jobs.yaml && cd %s && "
	    "ln -s %s/out .clockwork && git add . && " GIT " commit -q -m l", tmp, tmp, path,
	    tmp);
	assert_int_equal(jobsgit_read(path, &g, err, sizeof err), -1);
	assert_non_null(strstr(err, ".clockwork: refused: a symbolic link"));
	/* Over the limit: refused by its header's size. */
	repo("b", "main");
	snprintf(path, sizeof path, "%s/b", tmp);
	sh("cd %s && mkdir .clockwork && head -c %d /dev/zero | tr '\\0' a > "
	    ".clockwork/jobs.json && git add . && " GIT " commit -q -m b", path,
	    JOBSPEC_MAX_BYTES + 1);
	assert_int_equal(jobsgit_read(path, &g, err, sizeof err), -1);
	assert_non_null(strstr(err, "larger than the limit"));
	/* A file named .clockwork holds no jobs. */
	repo("f", "main");
	snprintf(path, sizeof path, "%s/f", tmp);
	sh("cd %s && echo x > .clockwork && git add . && " GIT " commit -q -m f", path);
	assert_int_equal(jobsgit_read(path, &g, err, sizeof err), 0);
	assert_int_equal(g.n_files, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_default_branch_rule, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_committed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_refusals, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
