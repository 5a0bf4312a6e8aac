/*
 * worktree.c against real repositories made with git in a temporary directory: a run's
 * worktree and branch are created from HEAD without touching the user's tree; the
 * diffstat counts committed and uncommitted edits; merged means nothing would be lost;
 * pruning removes the directory and git's record of it, and the branch only on request.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "daemon.h"

static char	tmp[256];

/*
 * libgit2's regex matching leaks pcre2 match data inside libpcre2 (not ours, and not
 * freed by git_libgit2_shutdown); LeakSanitizer is told to look away from that library
 * only.
 */
const char	*__lsan_default_suppressions(void);
__attribute__((used)) const char *
__lsan_default_suppressions(void)
{
	return "leak:libpcre2-8.so\n";
}

static void	sh(const char *, ...) __attribute__((format(printf, 1, 2)));
static void	out(char *, size_t, const char *, ...) __attribute__((format(printf, 3, 4)));

static void
sh(const char *fmt, ...)
{
	char	cmd[2048];
	va_list	ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof cmd, fmt, ap);
	va_end(ap);
	assert_int_equal(system(cmd), 0);
}

static void
out(char *buf, size_t len, const char *fmt, ...)
{
	char	 cmd[2048];
	va_list	 ap;
	FILE	*p;
	size_t	 n;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof cmd, fmt, ap);
	va_end(ap);
	assert_non_null(p = popen(cmd, "r"));
	n = fread(buf, 1, len - 1, p);
	buf[n] = '\0';
	pclose(p);
	buf[strcspn(buf, "\n")] = '\0';
}

static int
setup(void **state)
{
	snprintf(tmp, sizeof tmp, "%s/cw-wt.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") :
	    "/tmp");
	assert_non_null(mkdtemp(tmp));
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	setenv("HOME", tmp, 1);
	sh("git init -q -b main %s/repo && cd %s/repo && echo one > a.txt && echo two > b.txt"
	    " && git add . && git -c user.name=t -c user.email=t@e commit -q -m init", tmp, tmp);
	worktree_init();
	return 0;
}

static int
teardown(void **state)
{
	sh("rm -rf %s", tmp);
	worktree_shutdown();
	return 0;
}

static void
test_create_finish_remove(void **state)
{
	char			repo[300], path[300], base[64], final[64], err[512], head[64];
	char			buf[512];
	struct worktree_stat	st;

	snprintf(repo, sizeof repo, "%s/repo", tmp);
	snprintf(path, sizeof path, "%s/wt/task1/run1", tmp);
	sh("mkdir -p %s/wt/task1", tmp);
	out(head, sizeof head, "git -C %s rev-parse HEAD", repo);

	assert_int_equal(worktree_create(repo, path, "clockwork/task1/run1", "run1", base,
	    sizeof base, err, sizeof err), 0);
	assert_string_equal(base, head);
	out(buf, sizeof buf, "git -C %s rev-parse --abbrev-ref HEAD", path);
	assert_string_equal(buf, "clockwork/task1/run1");
	out(buf, sizeof buf, "cat %s/a.txt", path);
	assert_string_equal(buf, "one");
	/* The user's checkout is where it was. */
	out(buf, sizeof buf, "git -C %s rev-parse --abbrev-ref HEAD", repo);
	assert_string_equal(buf, "main");
	out(buf, sizeof buf, "git -C %s status --porcelain", repo);
	assert_string_equal(buf, "");

	/* Clean and at HEAD: merged (nothing to lose). */
	assert_int_equal(worktree_merged(repo, path, "clockwork/task1/run1"), 1);

	/* Uncommitted edits: one changed file, one new file. */
	sh("cd %s && echo more >> a.txt && printf 'x\\ny\\n' > c.txt", path);
	assert_int_equal(worktree_finish(path, base, final, sizeof final, &st, err,
	    sizeof err), 0);
	assert_string_equal(final, base);
	assert_int_equal(st.files, 2);
	assert_int_equal(st.insertions, 3);
	assert_int_equal(st.deletions, 0);
	assert_int_equal(worktree_merged(repo, path, "clockwork/task1/run1"), 0);

	/* Committed on the run branch: final moves, diffstat still from the base. */
	sh("cd %s && git add . && git -c user.name=t -c user.email=t@e commit -q -m work && "
	    "git rm -q b.txt && git -c user.name=t -c user.email=t@e commit -q -m rm", path);
	assert_int_equal(worktree_finish(path, base, final, sizeof final, &st, err,
	    sizeof err), 0);
	assert_string_not_equal(final, base);
	out(buf, sizeof buf, "git -C %s rev-parse HEAD", path);
	assert_string_equal(final, buf);
	assert_int_equal(st.files, 3);
	assert_int_equal(st.deletions, 1);
	/* Committed but not merged into the user's HEAD: not prunable. */
	assert_int_equal(worktree_merged(repo, path, "clockwork/task1/run1"), 0);

	/* Prune, keeping the branch (its commits are not merged). */
	assert_int_equal(worktree_remove(repo, path, "run1", "clockwork/task1/run1", 0, err,
	    sizeof err), 0);
	assert_int_equal(access(path, F_OK), -1);
	out(buf, sizeof buf, "git -C %s worktree list --porcelain | grep -c run1 || true", repo);
	assert_string_equal(buf, "0");
	out(buf, sizeof buf, "git -C %s rev-parse clockwork/task1/run1", repo);
	assert_string_equal(buf, final);

	/* Merge it; a second worktree of the merged state is prunable with its branch. */
	sh("git -C %s -c user.name=t -c user.email=t@e merge -q --ff-only clockwork/task1/run1",
	    repo);
	snprintf(path, sizeof path, "%s/wt/task1/run2", tmp);
	assert_int_equal(worktree_create(repo, path, "clockwork/task1/run2", "run2", base,
	    sizeof base, err, sizeof err), 0);
	assert_string_equal(base, final);
	assert_int_equal(worktree_merged(repo, path, "clockwork/task1/run2"), 1);
	assert_int_equal(worktree_remove(repo, path, "run2", "clockwork/task1/run2", 1, err,
	    sizeof err), 0);
	assert_int_equal(access(path, F_OK), -1);
	out(buf, sizeof buf, "git -C %s branch --list 'clockwork/task1/run2'", repo);
	assert_string_equal(buf, "");
}

static void
test_refusals(void **state)
{
	char	path[300], base[64], err[512], dir[300];

	/* Not a repository. */
	snprintf(dir, sizeof dir, "%s/plain", tmp);
	mkdir(dir, 0700);
	snprintf(path, sizeof path, "%s/wt/x", tmp);
	assert_int_equal(worktree_create(dir, path, "clockwork/x/1", "x1", base, sizeof base,
	    err, sizeof err), -1);
	assert_non_null(strstr(err, dir));
	assert_int_equal(worktree_is_repo(dir), 0);

	/* A repository without commits has no HEAD to branch from. */
	sh("git init -q %s/empty", tmp);
	snprintf(dir, sizeof dir, "%s/empty", tmp);
	assert_int_equal(worktree_is_repo(dir), 1);
	assert_int_equal(worktree_create(dir, path, "clockwork/x/1", "x1", base, sizeof base,
	    err, sizeof err), -1);
	assert_non_null(strstr(err, "HEAD"));
	assert_int_equal(access(path, F_OK), -1);

	/* A branch name that already exists is refused, not reused. */
	snprintf(dir, sizeof dir, "%s/repo", tmp);
	sh("git -C %s branch clockwork/x/taken", dir);
	assert_int_equal(worktree_create(dir, path, "clockwork/x/taken", "x2", base,
	    sizeof base, err, sizeof err), -1);
	assert_int_equal(access(path, F_OK), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_finish_remove),
		cmocka_unit_test(test_refusals),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
