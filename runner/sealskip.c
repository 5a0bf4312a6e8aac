#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sealskip.h"

/*
 * The built-in list. A rule is here only when what it names is a build output with
 * near certainty wherever it appears; a name that is also real source in some
 * repositories is here only with the file beside it that makes it a build output, or
 * not at all. Leaving a build output in costs a line in a review; leaving a person's
 * file out of the commit (even named in the report, even kept in the worktree) costs
 * more, so the doubtful cases stay in.
 *   Not here: dist/ and out/ (committed sources and release trees in many repositories),
 *   build/ without Gradle beside it (source in CMake and Python projects), *.obj
 *   (Wavefront 3D models as well as MSVC objects), *.a and *.so (vendored libraries
 *   added on purpose), .cache/ outside node_modules (a config dir in some tools),
 *   Go (its build cache is GOCACHE, the task's cache directory, never in the tree).
 */
struct sealskip_rule {
	const char	*name;		/* exact, or "*suffix" */
	int		 dir;		/* 1: names a directory, 0: a file */
	const char	*beside[4];	/* NULL-ended: one of these must be a sibling */
	const char	*why;
};

static const struct sealskip_rule sealskip_rules[] = {
	/* Python: written by any import or test run, never edited by hand. */
	{ "__pycache__", 1, { NULL }, "python bytecode cache" },
	{ "*.pyc", 0, { NULL }, "python bytecode" },
	{ "*.pyo", 0, { NULL }, "python bytecode" },
	{ ".pytest_cache", 1, { NULL }, "pytest cache" },
	{ ".mypy_cache", 1, { NULL }, "mypy cache" },
	{ ".ruff_cache", 1, { NULL }, "ruff cache" },
	{ ".tox", 1, { NULL }, "tox environments" },
	{ "*.egg-info", 1, { NULL }, "setuptools metadata" },
	/* Node: installed packages (package-lock.json is what a repository commits). */
	{ "node_modules", 1, { NULL }, "node packages" },
	{ ".next", 1, { NULL }, "Next.js build" },
	{ ".nuxt", 1, { NULL }, "Nuxt build" },
	/* Rust and Maven: target/ is theirs only beside their manifest. */
	{ "target", 1, { "Cargo.toml", "pom.xml", NULL }, "cargo or maven build" },
	/* Gradle: build/ is a build output beside a Gradle script, often source elsewhere. */
	{ "build", 1, { "build.gradle", "build.gradle.kts", "settings.gradle",
	    "settings.gradle.kts" }, "gradle build" },
	{ ".gradle", 1, { NULL }, "gradle cache" },
	{ "*.class", 0, { NULL }, "java bytecode" },
	/* C and C++: CMake's own files, and objects. */
	{ "CMakeFiles", 1, { NULL }, "cmake build" },
	{ "CMakeCache.txt", 0, { NULL }, "cmake cache" },
	{ "*.o", 0, { NULL }, "object file" },
};

struct sealskip_rec {
	const char	*path;
	int		 tracked;
};

static int
sealskip_name_is(const char *rule, const char *name, size_t len)
{
	size_t	 rl;

	if (rule[0] == '*') {
		rl = strlen(rule + 1);
		/* "*.pyc" needs a name before the suffix: ".pyc" alone is a dotfile. */
		return len > rl && memcmp(name + len - rl, rule + 1, rl) == 0;
	}
	return strlen(rule) == len && memcmp(rule, name, len) == 0;
}

static const struct sealskip_rule *
sealskip_find(const char *name, size_t len, int dir)
{
	for (size_t i = 0; i < sizeof sealskip_rules / sizeof sealskip_rules[0]; i++)
		if (sealskip_rules[i].dir == dir &&
		    sealskip_name_is(sealskip_rules[i].name, name, len))
			return &sealskip_rules[i];
	return NULL;
}

const char *
sealskip_rule(const char *name, int dir)
{
	const struct sealskip_rule	*r = sealskip_find(name, strlen(name), dir);

	return r != NULL ? r->name : NULL;
}

static int
sealskip_cmp_rec(const void *a, const void *b)
{
	return strcmp(((const struct sealskip_rec *)a)->path,
	    ((const struct sealskip_rec *)b)->path);
}

/* The first record >= key of the sorted v[0..n). */
static size_t
sealskip_lower(const struct sealskip_rec *v, size_t n, const char *key, size_t klen)
{
	size_t	 lo = 0, hi = n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (strncmp(v[mid].path, key, klen) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* 1 when a path of v (sorted) starts with prefix[0..plen) (and is it exactly, if whole). */
static int
sealskip_has(const struct sealskip_rec *v, size_t n, const char *prefix, size_t plen,
    int whole)
{
	size_t	 i = sealskip_lower(v, n, prefix, plen);

	if (i >= n || strncmp(v[i].path, prefix, plen) != 0)
		return 0;
	return !whole || v[i].path[plen] == '\0';
}

/*
 * A git path as ls-files prints it: relative, no empty, "." or ".." component; an
 * untracked one may end with '/' (a repository of its own inside the tree, which git
 * lists whole: `cargo new` makes one).
 */
static int
sealskip_path_ok(const char *p, int untracked)
{
	size_t	 n = strlen(p), len;

	if (untracked && n > 1 && p[n - 1] == '/')
		n--;
	if (n == 0 || p[0] == '/')
		return 0;
	for (size_t i = 0; i < n; i += len + 1) {
		len = 0;
		while (i + len < n && p[i + len] != '/')
			len++;
		if (len == 0 || (len == 1 && p[i] == '.') ||
		    (len == 2 && p[i] == '.' && p[i + 1] == '.'))
			return 0;
		if (i + len == n)
			return 1;
	}
	return 0;
}

/*
 * The rule that leaves out p or a directory above it: the outermost directory a rule
 * names (in its context, with nothing tracked beneath), else the file itself. The
 * length of what is left out (a directory's with its '/'), or 0 for nothing.
 */
static size_t
sealskip_match(const char *p, const struct sealskip_rec *all, size_t nall,
    const struct sealskip_rec *tracked, size_t ntracked)
{
	const struct sealskip_rule	*r;
	const char			*c = p, *s;
	char				 sib[4096];
	size_t				 plen;
	int				 ok;

	while ((s = strchr(c, '/')) != NULL) {
		plen = (size_t)(s - p) + 1;
		if ((r = sealskip_find(c, (size_t)(s - c), 1)) != NULL &&
		    !sealskip_has(tracked, ntracked, p, plen, 0)) {
			ok = r->beside[0] == NULL;
			for (size_t i = 0; !ok && i < 4 && r->beside[i] != NULL; i++) {
				if ((size_t)(c - p) + strlen(r->beside[i]) >= sizeof sib)
					continue;
				memcpy(sib, p, (size_t)(c - p));
				strcpy(sib + (c - p), r->beside[i]);
				ok = sealskip_has(all, nall, sib, strlen(sib), 1);
			}
			if (ok)
				return plen;
		}
		c = s + 1;
	}
	return sealskip_find(c, strlen(c), 0) != NULL ? strlen(p) : 0;
}

static int
sealskip_cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct sealskip_entry *)a)->path,
	    ((const struct sealskip_entry *)b)->path);
}

int
sealskip_plan(const char *listing, size_t len, struct sealskip *out, char *err,
    size_t errlen)
{
	struct sealskip_rec	*all = NULL, *tracked = NULL;
	struct sealskip_entry	*ev = NULL;
	size_t			 nall = 0, ntracked = 0, nrec = 0, ne = 0, cap = 0, k, m;
	const char		*r, *end = listing + len, *z;
	int			 rc = -1;

	memset(out, 0, sizeof *out);
	if (len == 0)
		return 0;
	if (listing[len - 1] != '\0') {
		snprintf(err, errlen, "the listing does not end with a NUL");
		return -1;
	}
	for (r = listing; r < end; r += strlen(r) + 1)
		nrec++;
	if ((all = calloc(nrec, sizeof *all)) == NULL ||
	    (tracked = calloc(nrec, sizeof *tracked)) == NULL)
		goto nomem;
	for (r = listing; r < end; r = z + 1) {
		z = r + strlen(r);
		/* "T path": T one of git's ls-files -t tags, '?' untracked. */
		if (z - r < 3 || r[1] != ' ' || strchr("HSMRCK?", r[0]) == NULL ||
		    !sealskip_path_ok(r + 2, r[0] == '?')) {
			snprintf(err, errlen, "malformed entry %zu in the listing", nall + 1);
			goto out;
		}
		all[nall].path = r + 2;
		all[nall].tracked = r[0] != '?';
		if (all[nall].tracked)
			tracked[ntracked++] = all[nall];
		nall++;
	}
	qsort(all, nall, sizeof *all, sealskip_cmp_rec);
	qsort(tracked, ntracked, sizeof *tracked, sealskip_cmp_rec);
	for (size_t i = 0; i < nall; i++) {
		if (all[i].tracked || (i > 0 && strcmp(all[i].path, all[i - 1].path) == 0))
			continue;
		if ((k = sealskip_match(all[i].path, all, nall, tracked, ntracked)) == 0)
			continue;
		/* Sorted: the paths under one directory are one run of records. */
		if (ne > 0 && strlen(ev[ne - 1].path) == k &&
		    strncmp(ev[ne - 1].path, all[i].path, k) == 0) {
			ev[ne - 1].files++;
			out->files++;
			continue;
		}
		if (ne == cap) {
			struct sealskip_entry	*nv;

			if ((nv = reallocarray(ev, cap * 2 + 16, sizeof *ev)) == NULL)
				goto nomem;
			ev = nv;
			cap = cap * 2 + 16;
		}
		if ((ev[ne].path = strndup(all[i].path, k)) == NULL)
			goto nomem;
		ev[ne++].files = 1;
		out->files++;
	}
	/* The entries in order, each once (a cheap guard of the contract above). */
	if (ne > 1)
		qsort(ev, ne, sizeof *ev, sealskip_cmp_entry);
	for (k = 0, m = 0; k < ne; k++) {
		if (m > 0 && strcmp(ev[m - 1].path, ev[k].path) == 0) {
			ev[m - 1].files += ev[k].files;
			free(ev[k].path);
			continue;
		}
		ev[m++] = ev[k];
	}
	out->v = ev;
	out->n = m;
	ev = NULL;
	rc = 0;
	goto out;
nomem:
	snprintf(err, errlen, "out of memory");
out:
	if (ev != NULL) {
		for (k = 0; k < ne; k++)
			free(ev[k].path);
		free(ev);
	}
	if (rc == -1)
		out->files = 0;
	free(all);
	free(tracked);
	return rc;
}

void
sealskip_free(struct sealskip *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i].path);
	free(s->v);
	memset(s, 0, sizeof *s);
}
