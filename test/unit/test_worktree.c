/*
 * worktree.c against real repositories made with git in a temporary directory: a run's
 * own repository is created from HEAD, borrowing objects, without writing anything of
 * the user's repository; after an import the branch, diffstat and an adopted worktree
 * come from the user's repository; merged means nothing would be lost; pruning removes
 * the directory and git's record of it, and the branch only on request.
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

#include "review.h"
#include "worktree.h"

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

/* The names and contents of the user's git directory, hashed: "was anything written?" */
static void
git_dir_digest(const char *repo, char *buf, size_t len)
{
	out(buf, len, "cd %s/.git && find . -path ./logs -prune -o -print0 | sort -z | "
	    "xargs -0 stat -c '%%n %%s %%Y' | sha256sum", repo);
}

static void
test_run_repository(void **state)
{
	char			repo[300], path[300], base[64], objects[512], err[512];
	char			head[64], buf[512], before[128], after[128], tip[64];
	struct worktree_stat	st;

	snprintf(repo, sizeof repo, "%s/repo", tmp);
	snprintf(path, sizeof path, "%s/wt/task1/run1", tmp);
	sh("mkdir -p %s/wt/task1 %s/imports", tmp, tmp);
	out(head, sizeof head, "git -C %s rev-parse HEAD", repo);
	git_dir_digest(repo, before, sizeof before);

	assert_int_equal(worktree_create_run(repo, path, "clockwork/task1/run1", base,
	    sizeof base, objects, sizeof objects, err, sizeof err), 0);
	assert_string_equal(base, head);
	out(buf, sizeof buf, "realpath %s/.git/objects", repo);
	assert_string_equal(objects, buf);
	/* Its own repository: .git is a directory, objects borrowed through alternates. */
	out(buf, sizeof buf, "test -d %s/.git && cat %s/.git/objects/info/alternates", path,
	    path);
	assert_string_equal(buf, objects);
	out(buf, sizeof buf, "git -C %s rev-parse --abbrev-ref HEAD", path);
	assert_string_equal(buf, "clockwork/task1/run1");
	out(buf, sizeof buf, "git -C %s rev-parse HEAD", path);
	assert_string_equal(buf, head);
	out(buf, sizeof buf, "cat %s/a.txt", path);
	assert_string_equal(buf, "one");
	out(buf, sizeof buf, "git -C %s status --porcelain", path);
	assert_string_equal(buf, "");
	/* No remote, nothing of the user's config carried over. */
	out(buf, sizeof buf, "git -C %s remote | wc -l", path);
	assert_string_equal(buf, "0");
	/* The user's repository is not written at all: no branch, no worktree entry. */
	git_dir_digest(repo, after, sizeof after);
	assert_string_equal(before, after);
	out(buf, sizeof buf, "git -C %s branch --list 'clockwork/*' | wc -l", repo);
	assert_string_equal(buf, "0");

	/* Work in the run's repository lands in its own objects only. */
	sh("cd %s && echo more >> a.txt && printf 'x\\ny\\n' > c.txt && git add . && "
	    "git -c user.name=t -c user.email=t@e commit -q -m work && git rm -q b.txt && "
	    "git -c user.name=t -c user.email=t@e commit -q -m rm", path);
	out(tip, sizeof tip, "git -C %s rev-parse HEAD", path);
	out(buf, sizeof buf, "git -C %s cat-file -t %s 2>/dev/null || echo missing", repo, tip);
	assert_string_equal(buf, "missing");

	/* What the import does after git verified the bundle, step by step. */
	sh("git -C %s bundle create -q %s/imports/b clockwork/task1/run1 ^%s && "
	    "git -C %s fetch -q %s/imports/b clockwork/task1/run1:clockwork/task1/run1",
	    path, tmp, base, repo, tmp);
	assert_int_equal(worktree_rev(repo, "clockwork/task1/run1", buf, sizeof buf, err,
	    sizeof err), 0);
	assert_string_equal(buf, tip);
	assert_int_equal(worktree_diffstat(repo, base, tip, &st, err, sizeof err), 0);
	assert_int_equal(st.files, 3);
	assert_int_equal(st.insertions, 3);
	assert_int_equal(st.deletions, 1);
	sh("rm -rf %s", path);
	assert_int_equal(worktree_adopt(repo, path, "run1", "clockwork/task1/run1", NULL, err,
	    sizeof err), 0);
	out(buf, sizeof buf, "git -C %s rev-parse HEAD", path);
	assert_string_equal(buf, tip);
	out(buf, sizeof buf, "test -f %s/.git && git -C %s status --porcelain", path, path);
	assert_string_equal(buf, "");
	/* Adopted, not merged into the user's HEAD: not prunable. */
	assert_int_equal(worktree_merged(repo, path, "clockwork/task1/run1"), 0);

	/* Prune, keeping the branch (its commits are not merged). */
	assert_int_equal(worktree_remove(repo, path, "run1", "clockwork/task1/run1", 0, err,
	    sizeof err), 0);
	assert_int_equal(access(path, F_OK), -1);
	out(buf, sizeof buf, "git -C %s worktree list --porcelain | grep -c run1 || true", repo);
	assert_string_equal(buf, "0");
	out(buf, sizeof buf, "git -C %s rev-parse clockwork/task1/run1", repo);
	assert_string_equal(buf, tip);

	/* Merged, a run that made no commit gets its branch at the base and is prunable. */
	sh("git -C %s -c user.name=t -c user.email=t@e merge -q --ff-only clockwork/task1/run1",
	    repo);
	snprintf(path, sizeof path, "%s/wt/task1/run2", tmp);
	assert_int_equal(worktree_create_run(repo, path, "clockwork/task1/run2", base,
	    sizeof base, objects, sizeof objects, err, sizeof err), 0);
	assert_string_equal(base, tip);
	assert_int_equal(worktree_branch_at(repo, "clockwork/task1/run2", base, err,
	    sizeof err), 0);
	sh("rm -rf %s", path);
	assert_int_equal(worktree_adopt(repo, path, "run2", "clockwork/task1/run2", NULL, err,
	    sizeof err), 0);
	assert_int_equal(worktree_merged(repo, path, "clockwork/task1/run2"), 1);
	assert_int_equal(worktree_remove(repo, path, "run2", "clockwork/task1/run2", 1, err,
	    sizeof err), 0);
	assert_int_equal(access(path, F_OK), -1);
	out(buf, sizeof buf, "git -C %s branch --list 'clockwork/task1/run2'", repo);
	assert_string_equal(buf, "");
}

/*
 * gc's question "would anything be lost?" runs on the daemon's loop: a directory at the
 * worktree path that is a repository of its own (a run's, left behind) is never opened,
 * so a FIFO at its index cannot block the daemon (the alarm fails the test if it does).
 */
static void
test_merged_never_opens_a_run_repository(void **state)
{
	char	path[300], repo[300];

	snprintf(repo, sizeof repo, "%s/repo", tmp);
	snprintf(path, sizeof path, "%s/wt/task1/runfifo", tmp);
	sh("git init -q %s && rm -f %s/.git/index && mkfifo %s/.git/index", path, path, path);
	sh("git -C %s branch -f clockwork/task1/runfifo HEAD", repo);
	alarm(10);
	assert_int_equal(worktree_merged(repo, path, "clockwork/task1/runfifo"), 0);
	alarm(0);
	sh("rm -rf %s && git -C %s branch -D -q clockwork/task1/runfifo", path, repo);
}

static void
test_refusals(void **state)
{
	char	path[300], base[64], objects[512], err[512], dir[300];

	/* Not a repository. */
	snprintf(dir, sizeof dir, "%s/plain", tmp);
	mkdir(dir, 0700);
	snprintf(path, sizeof path, "%s/wt/x", tmp);
	assert_int_equal(worktree_create_run(dir, path, "clockwork/x/1", base, sizeof base,
	    objects, sizeof objects, err, sizeof err), -1);
	assert_non_null(strstr(err, dir));
	assert_int_equal(worktree_is_repo(dir), 0);

	/* A repository without commits has no HEAD to branch from. */
	sh("git init -q %s/empty", tmp);
	snprintf(dir, sizeof dir, "%s/empty", tmp);
	assert_int_equal(worktree_is_repo(dir), 1);
	assert_int_equal(worktree_create_run(dir, path, "clockwork/x/1", base, sizeof base,
	    objects, sizeof objects, err, sizeof err), -1);
	assert_non_null(strstr(err, "HEAD"));
	assert_int_equal(access(path, F_OK), -1);

	/* An existing directory is never reused. */
	snprintf(dir, sizeof dir, "%s/repo", tmp);
	sh("mkdir -p %s && touch %s/left", path, path);
	assert_int_equal(worktree_create_run(dir, path, "clockwork/x/2", base, sizeof base,
	    objects, sizeof objects, err, sizeof err), -1);
	assert_int_equal(access(path, F_OK), 0);
	sh("rm -rf %s", path);
}

/*
 * SPEC U3: the automation files a run's branch adds are held back in the worktree a
 * person opens (absent from its files, skip-worktree in its index): git shows it clean,
 * the file is still on the branch, and gc's "nothing would be lost" is not fooled by
 * libgit2 reporting the held-back file as deleted.
 */
static void
test_hold_back(void **state)
{
	char	 repo[512], path[512], base[64], buf[512], err[512];
	cJSON	*autom = NULL;

	(void)state;
	snprintf(repo, sizeof repo, "%s/hrepo", tmp);
	snprintf(path, sizeof path, "%s/hwt", tmp);
	sh("git init -q -b main %s && cd %s && echo one > a.txt && git add . && "
	    "git -c user.name=t -c user.email=t@e commit -q -m init && "
	    "git checkout -q -b clockwork/h/1 && mkdir .claude && echo '{}' > "
	    ".claude/settings.json && echo 'touch x' > .envrc && echo ok > ok.txt && "
	    "git add -A && git -c user.name=t -c user.email=t@e commit -q -m work && "
	    "git checkout -q main", repo, repo);
	out(base, sizeof base, "git -C %s rev-parse main", repo);
	assert_int_equal(review_automation(repo, base, "clockwork/h/1", &autom, err,
	    sizeof err), 0);
	assert_int_equal(cJSON_GetArraySize(autom), 2);
	assert_int_equal(worktree_adopt(repo, path, "h1", "clockwork/h/1", autom, err,
	    sizeof err), 0);
	cJSON_Delete(autom);
	out(buf, sizeof buf, "cd %s && ls -A | tr '\n' ' '", path);
	assert_string_equal(buf, ".claude .git a.txt ok.txt ");
	out(buf, sizeof buf, "ls -A %s/.claude | wc -l", path);
	assert_string_equal(buf, "0");
	out(buf, sizeof buf, "git -C %s status --porcelain", path);
	assert_string_equal(buf, "");
	out(buf, sizeof buf, "git -C %s ls-files -v .envrc .claude/settings.json | "
	    "cut -c1 | tr -d '\n'", path);
	assert_string_equal(buf, "SS");
	assert_int_equal(worktree_merged(repo, path, "clockwork/h/1"), 0);
	sh("git -C %s merge -q --ff-only clockwork/h/1", repo);
	assert_int_equal(worktree_merged(repo, path, "clockwork/h/1"), 1);
}

/*
 * Issue 23: a continued run's branch. Who holds it (the repository's own checkout, a
 * kept worktree, clean or not, a record whose directory is gone), freeing it by
 * detaching the kept worktree, and the import's forward-only move.
 */
static void
test_branch_continue(void **state)
{
	struct worktree_hold	 h;
	char			 repo[512], root[512], wt[512], wt2[512], buf[512];
	char			 one[64], two[64], other[64], into[64], err[512];
	const char		*b = "clockwork/c/1";

	(void)state;
	snprintf(repo, sizeof repo, "%s/crepo", tmp);
	snprintf(root, sizeof root, "%s/worktrees", tmp);
	snprintf(wt, sizeof wt, "%s/c/1", root);
	snprintf(wt2, sizeof wt2, "%s/c/2", root);
	sh("mkdir -p %s/c && git init -q -b main %s && cd %s && echo one > a.txt && "
	    "git add . && git -c user.name=t -c user.email=t@e commit -q -m init && "
	    "git branch %s && git checkout -q %s && echo two > b.txt && git add b.txt && "
	    "git -c user.name=t -c user.email=t@e commit -q -m two && git checkout -q main",
	    root, repo, repo, b, b);
	out(one, sizeof one, "git -C %s rev-parse main", repo);
	out(two, sizeof two, "git -C %s rev-parse %s", repo, b);
	assert_int_equal(worktree_adopt(repo, wt, "1", b, NULL, err, sizeof err), 0);

	/* Clean kept worktree: free (looking changes nothing). */
	assert_int_equal(worktree_branch_free(repo, b, root, 0, &h, err, sizeof err),
	    WORKTREE_FREE);
	assert_int_equal(h.detached, 0);
	out(buf, sizeof buf, "git -C %s symbolic-ref HEAD", wt);
	assert_string_equal(buf, "refs/heads/clockwork/c/1");
	/* An untracked file: dirty, named, and nothing detached even with act. */
	sh("echo mine > %s/mine.txt", wt);
	assert_int_equal(worktree_branch_free(repo, b, root, 1, &h, err, sizeof err),
	    WORKTREE_DIRTY);
	assert_string_equal(h.path, wt);
	assert_string_equal(h.changes, "mine.txt");
	out(buf, sizeof buf, "git -C %s symbolic-ref HEAD", wt);
	assert_string_equal(buf, "refs/heads/clockwork/c/1");
	sh("rm %s/mine.txt", wt);
	/* The repository's own checkout on the branch: outside, never touched. */
	sh("git -C %s checkout -q --ignore-other-worktrees %s", repo, b);
	assert_int_equal(worktree_branch_free(repo, b, root, 1, &h, err, sizeof err),
	    WORKTREE_OUTSIDE);
	sh("git -C %s checkout -q main", repo);
	/* Freed: the kept worktree detached at its commit, its files as they were. */
	assert_int_equal(worktree_branch_free(repo, b, root, 1, &h, err, sizeof err),
	    WORKTREE_FREE);
	assert_int_equal(h.detached, 1);
	out(buf, sizeof buf, "git -C %s symbolic-ref -q HEAD || git -C %s rev-parse HEAD",
	    wt, wt);
	assert_string_equal(buf, two);
	out(buf, sizeof buf, "cat %s/b.txt", wt);
	assert_string_equal(buf, "two");
	/* A kept worktree removed by hand: git's record alone is pruned. */
	assert_int_equal(worktree_adopt(repo, wt2, "2", b, NULL, err, sizeof err), 0);
	sh("rm -rf %s", wt2);
	assert_int_equal(worktree_branch_free(repo, b, root, 1, &h, err, sizeof err),
	    WORKTREE_FREE);
	out(buf, sizeof buf, "git -C %s worktree list | grep -c c/2 || true", repo);
	assert_string_equal(buf, "0");

	/* The import's move: forward only, and not under a checkout. */
	out(other, sizeof other, "cd %s && git -c user.name=t -c user.email=t@e "
	    "commit-tree -p %s -m other $(git rev-parse %s^{tree})", repo, one, one);
	assert_int_equal(worktree_branch_advance(repo, b, other, err, sizeof err), -1);
	if (strstr(err, "does not contain") == NULL)
		fail_msg("%s", err);
	out(buf, sizeof buf, "git -C %s rev-parse %s", repo, b);
	assert_string_equal(buf, two);
	out(other, sizeof other, "cd %s && git -c user.name=t -c user.email=t@e "
	    "commit-tree -p %s -m three $(git rev-parse %s^{tree})", repo, two, two);
	assert_int_equal(worktree_branch_advance(repo, b, other, err, sizeof err), 0);
	out(buf, sizeof buf, "git -C %s rev-parse %s", repo, b);
	assert_string_equal(buf, other);
	assert_int_equal(worktree_branch_advance(repo, "clockwork/c/new", one, err,
	    sizeof err), 0);
	sh("git -C %s switch -q %s", wt, b);
	assert_int_equal(worktree_branch_advance(repo, b, other, err, sizeof err), -1);
	assert_non_null(strstr(err, "is checked out"));

	/* Merged into HEAD's branch, or not. */
	assert_int_equal(worktree_landed(repo, b, into, sizeof into), 0);
	sh("git -C %s merge -q --ff-only %s", repo, b);
	assert_int_equal(worktree_landed(repo, b, into, sizeof into), 1);
	assert_string_equal(into, "main");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_run_repository),
		cmocka_unit_test(test_merged_never_opens_a_run_repository),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_hold_back),
		cmocka_unit_test(test_branch_continue),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
