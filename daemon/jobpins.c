/*
 * What a job's reviewed prompt points at (issue 26, item 7). A person approves a job
 * whose prompt says "run ./nightly.sh"; the prompt is only a pointer, and the file it
 * points at is what runs. So a job's approval covers the git object of every path in
 * the repository its prompt names: the pins, {"path": "object id"}, taken at the
 * commit the preview was made from (jobs.c) and checked again at every run's base
 * commit (runs.c). A changed, added or removed pin asks for review again.
 *
 * The names are found by splitting the prompt into words (whitespace, quotes, back
 * quotes, brackets, commas and semicolons end one), dropping a leading "./" and
 * trailing punctuation, and keeping each word that is a path inside the repository's
 * tree at that commit: a file pins its blob, a directory its tree (so everything
 * beneath it). Absolute paths, "~", URLs and ".." never name a path in the repository.
 * What a pinned script itself calls is pinned only if the prompt names it too (the
 * limit is in docs/SECURITY.md).
 *
 * Objects are looked up in the committed tree through libgit2, never the working tree.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <git2.h>

#include "jobpins.h"
#include "json.h"
#include "strlist.h"
#include "worktree.h"

/* At most this many words of a prompt are looked up, and this long. */
#define JOBPINS_MAX_WORDS	256
#define JOBPINS_MAX_WORD	512

static int
jobpins_is_path_word(const char *w)
{
	if (w[0] == '\0' || w[0] == '/' || w[0] == '~' || w[0] == '-' ||
	    strstr(w, "://") != NULL)
		return 0;
	/* A ".." component could name something outside the tree. */
	for (const char *p = w; (p = strstr(p, "..")) != NULL; p += 2)
		if ((p == w || p[-1] == '/') && (p[2] == '\0' || p[2] == '/'))
			return 0;
	return 1;
}

int
jobpins_names(const char *prompt, struct strlist *out)
{
	static const char	 sep[] = " \t\r\n\"'`()[]{}<>,;|&";
	const char		*p = prompt;
	char			 w[JOBPINS_MAX_WORD];
	size_t			 n, words = 0;

	while (p != NULL && *p != '\0' && words < JOBPINS_MAX_WORDS) {
		p += strspn(p, sep);
		n = strcspn(p, sep);
		if (n == 0)
			break;
		if (n < sizeof w) {
			memcpy(w, p, n);
			w[n] = '\0';
			/* Sentence punctuation after a name, and a trailing slash. */
			while (n > 0 && strchr(".:!?/", w[n - 1]) != NULL)
				w[--n] = '\0';
			char	*s = w;

			while (strncmp(s, "./", 2) == 0)
				s += 2;
			if (jobpins_is_path_word(s) && strlist_add_unique(out, s) == -1)
				return -1;
			words++;
		}
		p += n;
	}
	return 0;
}

int
jobpins_at(const char *repo_path, const char *commit_hex, const char *prompt,
    cJSON **pins, char *err, size_t errlen)
{
	git_repository	*repo = NULL;
	git_commit	*commit = NULL;
	git_tree	*tree = NULL;
	git_tree_entry	*e;
	git_oid		 oid;
	struct strlist	 names = { 0 };
	char		 hex[GIT_OID_HEXSZ + 1];
	int		 rc = -1;

	*pins = NULL;
	worktree_init();
	if (jobpins_names(prompt != NULL ? prompt : "", &names) == -1) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (worktree_open(repo_path, &repo, err, errlen) == -1)
		goto out;
	if (git_oid_fromstr(&oid, commit_hex) != 0 ||
	    git_commit_lookup(&commit, repo, &oid) != 0 ||
	    git_commit_tree(&tree, commit) != 0) {
		worktree_err(err, errlen, "cannot read the commit's tree", repo_path);
		goto out;
	}
	if ((*pins = cJSON_CreateObject()) == NULL) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < names.n; i++) {
		if (git_tree_entry_bypath(&e, tree, names.v[i]) != 0)
			continue;	/* not a path in the repository */
		git_oid_tostr(hex, sizeof hex, git_tree_entry_id(e));
		git_tree_entry_free(e);
		json_add_string(*pins, names.v[i], hex);
	}
	rc = 0;
out:
	if (rc == -1) {
		cJSON_Delete(*pins);
		*pins = NULL;
	}
	strlist_free(&names);
	git_tree_free(tree);
	git_commit_free(commit);
	git_repository_free(repo);
	return rc;
}

/* The names of pins that differ between was and now, comma-separated; NULL when none. */
char *
jobpins_changed(const cJSON *was, const cJSON *now)
{
	const cJSON	*a, *b;
	char		*out = NULL, *t;

	cJSON_ArrayForEach(a, now) {
		b = cJSON_GetObjectItemCaseSensitive(was, a->string);
		if (b != NULL && cJSON_IsString(b) && cJSON_IsString(a) &&
		    strcmp(a->valuestring, b->valuestring) == 0)
			continue;
		if (asprintf(&t, "%s%s%s", out ? out : "", out ? ", " : "", a->string) == -1)
			t = NULL;
		free(out);
		if ((out = t) == NULL)
			return NULL;
	}
	cJSON_ArrayForEach(b, was) {
		if (cJSON_GetObjectItemCaseSensitive(now, b->string) != NULL)
			continue;
		if (asprintf(&t, "%s%s%s (gone)", out ? out : "", out ? ", " : "",
		    b->string) == -1)
			t = NULL;
		free(out);
		if ((out = t) == NULL)
			return NULL;
	}
	return out;
}
