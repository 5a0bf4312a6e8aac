/*
 * The entries of a system directory that are not world-readable (runner/unreadable.c),
 * found by a walk or by its kept outline: the outline's answer is always the walk's
 * answer for the tree as it is now. A chmod on a file (which changes no directory's
 * time) is seen; a new entry, a directory made walkable, a directory replaced, a link
 * where a directory was, make the outline stale; an outline that is damaged, of another
 * root or written while the tree was moving is not used.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "paths.h"
#include "rmtree.h"
#include "strlist.h"
#include "unreadable.h"

static char	 base[PATH_MAX], root[PATH_MAX], outline[PATH_MAX];

static void
mk(const char *rel, int dir, mode_t mode)
{
	char	 p[PATH_MAX];
	int	 fd;

	snprintf(p, sizeof p, "%s/%s", root, rel);
	if (dir)
		assert_int_equal(mkdir(p, 0755), 0);
	else {
		assert_true((fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0644)) >= 0);
		close(fd);
	}
	assert_int_equal(chmod(p, mode), 0);
}

static int
mkdir_p_for(const char *file)
{
	char	 d[PATH_MAX];

	snprintf(d, sizeof d, "%s", file);
	*strrchr(d, '/') = '\0';
	return paths_mkdir_p(d, 0700);
}

/* Give rel the very times st holds (another inode with the old one's times). */
static void
times_of(const char *rel, const struct stat *st)
{
	struct timespec	 ts[2];
	char		 p[PATH_MAX];

	ts[0] = st->st_atim;
	ts[1] = st->st_mtim;
	snprintf(p, sizeof p, "%s%s%s", root, rel[0] ? "/" : "", rel);
	assert_int_equal(utimensat(AT_FDCWD, p, ts, AT_SYMLINK_NOFOLLOW), 0);
}

static void
mode(const char *rel, mode_t m)
{
	char	 p[PATH_MAX];

	snprintf(p, sizeof p, "%s/%s", root, rel);
	assert_int_equal(chmod(p, m), 0);
}

/* Every directory's times an hour back: the tree has settled. */
static void
settle(const char *rel)
{
	struct timeval	 tv[2];
	char		 p[PATH_MAX];

	gettimeofday(&tv[0], NULL);
	tv[0].tv_sec -= 3600;
	tv[1] = tv[0];
	snprintf(p, sizeof p, "%s%s%s", root, rel[0] ? "/" : "", rel);
	assert_int_equal(utimes(p, tv), 0);
}

static void
settle_all(void)
{
	static const char *const dirs[] = {
		"", "a", "a/b", "closed", "deep", "deep/1", "deep/1/2", "deep/1/2/3",
		"deep/1/2/3/4", "deep/1/2/3/4/5", "deep/1/2/3/4/5/6", "deep/1/2/3/4/5/6/7",
		"deep/1/2/3/4/5/6/7/8", "deep/1/2/3/4/5/6/7/8/9", "deep/1/2/3/4/5/6/7/8/9/10",
		"deep/1/2/3/4/5/6/7/8/9/10/11", "deep/1/2/3/4/5/6/7/8/9/10/11/12",
	};
	char	 p[PATH_MAX];

	for (size_t i = sizeof dirs / sizeof dirs[0]; i-- > 0; ) {
		snprintf(p, sizeof p, "%s%s%s", root, dirs[i][0] ? "/" : "", dirs[i]);
		if (access(p, F_OK) == 0)
			settle(dirs[i]);
	}
}

static int
setup(void **state)
{
	char	 d[PATH_MAX];

	(void)state;
	snprintf(base, sizeof base, "%s/unreadable.XXXXXX", CW_TEST_TMP_DIR);
	assert_non_null(mkdtemp(base));
	snprintf(root, sizeof root, "%s/etc", base);
	snprintf(outline, sizeof outline, "%s/cw/unreadable/etc", base);
	assert_int_equal(mkdir(root, 0755), 0);
	mk("open.conf", 0, 0644);
	mk("shadow", 0, 0640);
	mk("a", 1, 0755);
	mk("a/b", 1, 0755);
	mk("a/b/key", 0, 0600);
	mk("a/b/cert", 0, 0644);
	mk("closed", 1, 0750);
	mk("closed/inside", 0, 0644);
	snprintf(d, sizeof d, "%s/link", root);
	assert_int_equal(symlink("open.conf", d), 0);
	mk("deep", 1, 0755);
	snprintf(d, sizeof d, "deep");
	for (int i = 1; i <= 12; i++) {
		char	 n[PATH_MAX];

		snprintf(n, sizeof n, "%s/%d", d, i);
		mk(n, 1, 0755);
		snprintf(d, sizeof d, "%s", n);
	}
	settle_all();
	return 0;
}

static int
teardown(void **state)
{
	char	 p[PATH_MAX];

	(void)state;
	snprintf(p, sizeof p, "chmod -R u+rwx '%s' && rm -rf '%s'", base, base);
	return system(p) == 0 ? 0 : -1;
}

/* The scan's answer as one line (outline NULL: a fresh walk), and how it came. */
static char *
scan_with(const char *file, enum unreadable_how *how)
{
	struct strlist	 l = { 0 };
	static char	 line[2][8192];
	static int	 which;
	char		*out = line[which ^= 1];

	/*
	 * As if the scan ran an hour on: settle() moves a directory's change time to now
	 * (it cannot be set back), and an outline is kept only of settled directories.
	 */
	assert_int_equal(unreadable_scan_at(root, file, &l, how, time(NULL) + 3600), 0);
	out[0] = '\0';
	for (size_t i = 0; i < l.n; i++) {
		assert_true(strncmp(l.v[i], root, strlen(root)) == 0);
		strcat(out, l.v[i] + strlen(root) + 1);
		strcat(out, " ");
	}
	strlist_free(&l);
	return out;
}

static char *
scan(enum unreadable_how *how)
{
	return scan_with(outline, how);
}

/* What a walk says now, with no outline. */
static const char *
walked(void)
{
	enum unreadable_how	 how;
	const char		*line = scan_with(NULL, &how);

	assert_int_equal(how, UNREADABLE_WALKED);
	return line;
}

static void
test_kept_outline_answers_as_the_walk(void **state)
{
	enum unreadable_how	 how;
	char			 first[8192];

	(void)state;
	snprintf(first, sizeof first, "%s", scan(&how));
	assert_int_equal(how, UNREADABLE_WALKED);
	/* The 0640 file, the 0600 one, the closed directory, the 13th level of deep. */
	assert_non_null(strstr(first, "shadow "));
	assert_non_null(strstr(first, "a/b/key "));
	assert_non_null(strstr(first, "closed "));
	assert_null(strstr(first, "closed/inside"));
	assert_non_null(strstr(first, "deep/1/2/3/4/5/6/7/8/9/10/11/12 "));
	assert_null(strstr(first, "open.conf"));
	assert_null(strstr(first, "link"));
	assert_int_equal(access(outline, F_OK), 0);
	assert_string_equal(scan(&how), first);
	assert_int_equal(how, UNREADABLE_KEPT);
}

static void
test_chmod_is_seen_through_the_outline(void **state)
{
	enum unreadable_how	 how;
	char			*got;

	(void)state;
	(void)scan(&how);
	/* A chmod changes the file alone: no directory's time moves. */
	mode("open.conf", 0600);
	mode("a/b/cert", 0640);
	mode("shadow", 0644);
	got = scan(&how);
	assert_int_equal(how, UNREADABLE_KEPT);
	assert_string_equal(got, walked());
	assert_non_null(strstr(got, "open.conf "));
	assert_non_null(strstr(got, "a/b/cert "));
	assert_null(strstr(got, "shadow "));
	/* A walked directory closed: it is not world-readable now, nor looked into. */
	mode("a", 0700);
	got = scan(&how);
	assert_int_equal(how, UNREADABLE_KEPT);
	assert_string_equal(got, walked());
	assert_non_null(strstr(got, "a "));
	assert_null(strstr(got, "a/b"));
}

static void
test_changes_make_it_stale(void **state)
{
	enum unreadable_how	 how;
	char			 p[PATH_MAX], q[PATH_MAX];
	struct stat		 rootst, ast;

	(void)state;
	(void)scan(&how);
	/* A new 0600 file: its directory's time moves, the tree is walked again. */
	mk("a/b/new-key", 0, 0600);
	assert_non_null(strstr(scan(&how), "a/b/new-key "));
	assert_int_equal(how, UNREADABLE_WALKED);
	/* The walk kept an outline of it (as if an hour on); at the clock's own time, */
	(void)scan(&how);
	assert_int_equal(how, UNREADABLE_KEPT);
	/* a change within the settling time is walked, and no outline is kept of it. */
	mk("a/b/newer-key", 0, 0600);
	{
		struct strlist	 l = { 0 };

		assert_int_equal(unreadable_scan(root, outline, &l, &how), 0);
		assert_int_equal(how, UNREADABLE_WALKED);
		strlist_free(&l);
		assert_int_equal(unreadable_scan(root, outline, &l, &how), 0);
		assert_int_equal(how, UNREADABLE_WALKED);
		strlist_free(&l);
	}
	(void)scan(&how);
	assert_int_equal(how, UNREADABLE_WALKED);
	(void)scan(&how);
	assert_int_equal(how, UNREADABLE_KEPT);

	/*
	 * A 0600 file added and the directory's modification time put back to the very
	 * nanosecond (touch -d; tar -x, rsync -a, cp -a restore it): its change time,
	 * which no one can set, still moved (found by the attacker run of issue 22).
	 */
	{
		struct stat	 bst;

		snprintf(p, sizeof p, "%s/a/b", root);
		assert_int_equal(stat(p, &bst), 0);
		mk("a/b/restored-key", 0, 0600);
		times_of("a/b", &bst);
		assert_non_null(strstr(scan(&how), "a/b/restored-key "));
		assert_int_equal(how, UNREADABLE_WALKED);
		settle("a/b");
		(void)scan(&how);
	}

	/* A closed directory opened: what it holds was never looked at. */
	mode("closed", 0755);
	mode("closed/inside", 0600);
	assert_non_null(strstr(scan(&how), "closed/inside "));
	assert_int_equal(how, UNREADABLE_WALKED);

	/*
	 * A directory replaced by another of the same name, given the old one's times,
	 * and the root's times put back: only the inode tells them apart.
	 */
	settle("closed");
	(void)scan(&how);
	(void)scan(&how);
	assert_int_equal(how, UNREADABLE_KEPT);
	snprintf(p, sizeof p, "%s/a", root);
	snprintf(q, sizeof q, "%s/a-old", root);
	assert_int_equal(stat(root, &rootst), 0);
	assert_int_equal(stat(p, &ast), 0);
	/* The new one holds the old one's b, moved, and a 0600 file of its own. */
	mk("a-new", 1, 0755);
	{
		char	 from[PATH_MAX], to[PATH_MAX];

		snprintf(from, sizeof from, "%s/a/b", root);
		snprintf(to, sizeof to, "%s/a-new/b", root);
		assert_int_equal(rename(from, to), 0);
	}
	mk("a-new/secret", 0, 0600);
	assert_int_equal(rename(p, q), 0);
	snprintf(q, sizeof q, "%s/a-new", root);
	assert_int_equal(rename(q, p), 0);
	times_of("a", &ast);
	times_of("", &rootst);
	{
		char	*got = scan(&how);

		assert_int_equal(how, UNREADABLE_WALKED);
		assert_string_equal(got, walked());
		assert_non_null(strstr(got, "a/secret "));
	}
	assert_int_equal(rename(p, q), 0);	/* a -> a-new, out of the way */
	snprintf(q, sizeof q, "%s/a-old", root);
	assert_int_equal(rename(q, p), 0);	/* a-old (empty) -> a */
	/* A link where a walked directory was (the root's times put back again). */
	settle("");
	settle("a");
	settle("a-new");
	settle("a-new/b");
	(void)scan(&how);
	(void)scan(&how);
	assert_int_equal(how, UNREADABLE_KEPT);
	assert_int_equal(stat(root, &rootst), 0);
	assert_int_equal(rmdir(p), 0);
	assert_int_equal(symlink("a-new", p), 0);
	times_of("", &rootst);
	{
		char	*got = scan(&how);

		assert_int_equal(how, UNREADABLE_WALKED);
		assert_string_equal(got, walked());
		assert_non_null(strstr(got, "a-new/b/key "));
		assert_non_null(strstr(got, "a-new/secret "));
	}
}

/* t with its "%s" (at most one) replaced by the root. */
static void
subst_root(char *out, size_t outlen, const char *t)
{
	const char	*at = strstr(t, "%s");

	if (at == NULL)
		snprintf(out, outlen, "%s", t);
	else
		snprintf(out, outlen, "%.*s%s%s", (int)(at - t), t, root, at + 2);
}

static void
test_bad_outlines_are_not_used(void **state)
{
	static const char *const bad[] = {
		"",
		"clockwork-unreadable 2 /other\nR 1 2 3 4 5 6\n",
		"clockwork-unreadable 1 %s\nR 1 2 3 4\n",		/* the old format */
		"clockwork-unreadable 2 %s\nR 1 2 3 4 5 6\nF ../x\n",
		"clockwork-unreadable 2 %s\nR 1 2 3 4 5 6\nF /abs\n",
		"clockwork-unreadable 2 %s\nR 1 2 3 4 5 6\nF a//b\n",
		"clockwork-unreadable 2 %s\nR 1 2 3 4 5 6\nF a/./b\n",
		"clockwork-unreadable 2 %s\nR 1 2 3 4 5 6\nF x/y\n",	/* no parent */
		"clockwork-unreadable 2 %s\nR 1 2 3 4 5 6\nD 1 2 3 4 5 6 a\nF b\nF a/c\n",
		"clockwork-unreadable 2 %s\nR 1 2 3 4 5 6\nR 1 2 3 4 5 6\n",
		"clockwork-unreadable 2 %s\nR 1 2 3 1000000000 5 6\n",
		"clockwork-unreadable 2 %s\nR 1 2 3 4 5 1000000000\n",
		"clockwork-unreadable 2 %s\nR 1 2 3 4\n",		/* no change time */
		"clockwork-unreadable 2 %s\nR 1 2 3 4 5 6\nX a\n",
		"clockwork-unreadable 2 %s\nR 1 2 3 4 5 6\nD 1 2 3 4 5 a\n",
		"clockwork-unreadable 2 %s\nR 1 2 3 4 5 6\nF a",	/* no last newline */
		"clockwork-unreadable 2 %s\nF a\n",			/* no root record */
	};
	char		 text[1024];
	size_t		 n;
	enum unreadable_how how;
	char		 want[8192];
	FILE		*f;

	(void)state;
	snprintf(text, sizeof text, "clockwork-unreadable 2 %s\nR 1 2 3 4 5 6\n"
	    "D 1 2 3 4 5 6 a\nD 5 6 7 8 9 10 a/b\nF a/b/c\nU a/d\nF e\n", root);
	assert_int_equal(unreadable_parse_check(text, strlen(text), root, &n), 0);
	assert_int_equal(n, 5);
	snprintf(want, sizeof want, "%s", walked());
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		subst_root(text, sizeof text, bad[i]);
		if (unreadable_parse_check(text, strlen(text), root, NULL) != -1)
			fail_msg("accepted: %s", text);
		assert_int_equal(mkdir_p_for(outline), 0);
		assert_non_null(f = fopen(outline, "w"));
		fputs(text, f);
		fclose(f);
		assert_string_equal(scan(&how), want);
		assert_int_equal(how, UNREADABLE_WALKED);
		unlink(outline);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_kept_outline_answers_as_the_walk, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_chmod_is_seen_through_the_outline, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_changes_make_it_stale, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_outlines_are_not_used, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
