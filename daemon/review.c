/*
 * Review and land a run's work (cwctl run diff|merge|discard, the Inbox's buttons):
 * everything here reads and writes the user's repository through libgit2, after the
 * import (runimport.c) has brought the run's branch in from objects git verified.
 *
 * A merge is computed in memory first (git_merge_commits): a conflict is reported by
 * file and nothing is written but loose objects nobody points at. Only a merge that
 * is clean is committed, checked out (safely: a file the checkout would overwrite
 * stops it before anything is written) and then the target branch is moved.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <git2.h>

#include "automation.h"
#include "json.h"
#include "review.h"
#include "worktree.h"

static void
review_err(char *err, size_t errlen, const char *what)
{
	const git_error	*e = git_error_last();

	snprintf(err, errlen, "%s: %s", what,
	    e != NULL && e->message != NULL ? e->message : "libgit2 error");
}

static int
review_open(const char *repo_path, git_repository **repo, char *err, size_t errlen)
{
	worktree_init();
	if (git_repository_open_ext(repo, repo_path, GIT_REPOSITORY_OPEN_NO_SEARCH,
	    NULL) != 0) {
		review_err(err, errlen, repo_path);
		return -1;
	}
	return 0;
}

/* The commits of base (hex) and of branch's tip; err says which is missing. */
static int
review_ends(git_repository *repo, const char *base, const char *branch,
    git_commit **bc, git_commit **tc, char *err, size_t errlen)
{
	git_reference	*ref = NULL;
	git_oid		 oid;
	int		 rc = -1;

	*bc = *tc = NULL;
	if (git_branch_lookup(&ref, repo, branch, GIT_BRANCH_LOCAL) != 0) {
		snprintf(err, errlen, "branch %s is not in the repository (discarded?)",
		    branch);
		return -1;
	}
	if (git_reference_peel((git_object **)tc, ref, GIT_OBJECT_COMMIT) != 0) {
		review_err(err, errlen, branch);
		goto out;
	}
	if (base == NULL || git_oid_fromstr(&oid, base) != 0 ||
	    git_commit_lookup(bc, repo, &oid) != 0) {
		snprintf(err, errlen, "the run's base commit %s is not in the repository",
		    base != NULL ? base : "(none)");
		goto out;
	}
	rc = 0;
out:
	git_reference_free(ref);
	return rc;
}

/* A run's branch and its base, opened: the repository, both commits and their trees. */
struct review_sides {
	git_repository	*repo;
	git_commit	*bc, *tc;
	git_tree	*a, *b;
};

/* Opens what s holds; review_sides_close frees it, after a failure too. */
static int
review_sides_open(const char *repo_path, const char *base, const char *branch,
    struct review_sides *s, char *err, size_t errlen)
{
	memset(s, 0, sizeof *s);
	if (review_open(repo_path, &s->repo, err, errlen) == -1)
		return -1;
	if (review_ends(s->repo, base, branch, &s->bc, &s->tc, err, errlen) == -1)
		return -1;
	if (git_commit_tree(&s->a, s->bc) != 0 || git_commit_tree(&s->b, s->tc) != 0) {
		review_err(err, errlen, "cannot diff the run's branch");
		return -1;
	}
	return 0;
}

static void
review_sides_close(struct review_sides *s)
{
	git_tree_free(s->b);
	git_tree_free(s->a);
	git_commit_free(s->tc);
	git_commit_free(s->bc);
	git_repository_free(s->repo);
}

static const char *
review_status_name(git_delta_t s)
{
	switch (s) {
	case GIT_DELTA_ADDED:		return "added";
	case GIT_DELTA_DELETED:		return "deleted";
	case GIT_DELTA_RENAMED:		return "renamed";
	case GIT_DELTA_COPIED:		return "copied";
	case GIT_DELTA_TYPECHANGE:	return "typechange";
	default:			return "modified";
	}
}

static char *
review_buf_dup(const git_buf *b, size_t max)
{
	size_t	 n = b->size < max ? b->size : max;
	char	*s;

	if ((s = malloc(n + 1)) == NULL)
		return NULL;
	memcpy(s, b->ptr, n);
	s[n] = '\0';
	return s;
}

/*
 * The automation files (common/automation.h) that the change from tree a to tree b
 * touches, as [{path, status, what}] (NULL on error). Both sides of a delta are looked
 * at: a rename out of .claude/ changes what Claude Code reads as much as one into it.
 */
static cJSON *
review_automation_of(git_repository *repo, git_tree *a, git_tree *b)
{
	git_diff	*diff = NULL;
	cJSON		*out, *f;
	const char	*what, *path;
	size_t		 n;

	if (git_diff_tree_to_tree(&diff, repo, a, b, NULL) != 0)
		return NULL;
	if ((out = cJSON_CreateArray()) == NULL) {
		git_diff_free(diff);
		return NULL;
	}
	n = git_diff_num_deltas(diff);
	for (size_t i = 0; i < n; i++) {
		const git_diff_delta *d = git_diff_get_delta(diff, i);

		path = d->new_file.path != NULL ? d->new_file.path : d->old_file.path;
		if ((what = automation_match(path)) == NULL &&
		    (what = automation_match(d->old_file.path)) != NULL)
			path = d->old_file.path;
		if (what == NULL)
			continue;
		f = cJSON_CreateObject();
		json_add_string(f, "path", path);
		json_add_string(f, "status", review_status_name(d->status));
		json_add_string(f, "what", what);
		cJSON_AddItemToArray(out, f);
	}
	git_diff_free(diff);
	return out;
}

int
review_automation(const char *repo_path, const char *base, const char *branch,
    cJSON **out, char *err, size_t errlen)
{
	struct review_sides	 s;
	int			 rc = -1;

	*out = NULL;
	if (review_sides_open(repo_path, base, branch, &s, err, errlen) == -1)
		goto out;
	if ((*out = review_automation_of(s.repo, s.a, s.b)) == NULL) {
		review_err(err, errlen, "cannot diff the run's branch");
		goto out;
	}
	rc = 0;
out:
	review_sides_close(&s);
	return rc;
}

/*
 * The diff of branch from the run's base: the exact content of the branch, never a
 * worktree's files. Fills tip_out (hex), stat (git's --stat text), patch (NULL when
 * not wanted) and files [{path, status, insertions, deletions}].
 */
int
review_diff(const char *repo_path, const char *base, const char *branch, int want_patch,
    size_t max, struct review_diff *out, char *err, size_t errlen)
{
	struct review_sides s;
	git_diff	*diff = NULL;
	git_diff_stats	*stats = NULL;
	git_patch	*p = NULL;
	git_buf		 buf = { 0 };
	size_t		 n, ctx, adds, dels;
	cJSON		*f;
	int		 rc = -1;

	memset(out, 0, sizeof *out);
	if (review_sides_open(repo_path, base, branch, &s, err, errlen) == -1)
		goto out;
	git_oid_tostr(out->tip, sizeof out->tip, git_commit_id(s.tc));
	if (git_diff_tree_to_tree(&diff, s.repo, s.a, s.b, NULL) != 0 ||
	    git_diff_find_similar(diff, NULL) != 0 ||
	    git_diff_get_stats(&stats, diff) != 0) {
		review_err(err, errlen, "cannot diff the run's branch");
		goto out;
	}
	out->files = cJSON_CreateArray();
	n = git_diff_num_deltas(diff);
	for (size_t i = 0; i < n; i++) {
		const git_diff_delta *d = git_diff_get_delta(diff, i);

		adds = dels = 0;
		if (git_patch_from_diff(&p, diff, i) == 0 && p != NULL)
			git_patch_line_stats(&ctx, &adds, &dels, p);
		git_patch_free(p);
		p = NULL;
		f = cJSON_CreateObject();
		json_add_string(f, "path", d->new_file.path != NULL ? d->new_file.path :
		    d->old_file.path);
		if (d->status == GIT_DELTA_RENAMED)
			json_add_string(f, "from", d->old_file.path);
		json_add_string(f, "status", review_status_name(d->status));
		cJSON_AddNumberToObject(f, "insertions", (double)adds);
		cJSON_AddNumberToObject(f, "deletions", (double)dels);
		cJSON_AddItemToArray(out->files, f);
	}
	if (git_diff_stats_to_buf(&buf, stats, GIT_DIFF_STATS_FULL, 80) == 0) {
		out->stat = review_buf_dup(&buf, max);
		git_buf_dispose(&buf);
	}
	if (want_patch && git_diff_to_buf(&buf, diff, GIT_DIFF_FORMAT_PATCH) == 0) {
		out->truncated = buf.size > max;
		out->patch = review_buf_dup(&buf, max);
		git_buf_dispose(&buf);
	}
	if (out->stat == NULL || (want_patch && out->patch == NULL)) {
		snprintf(err, errlen, "out of memory");
		review_diff_free(out);
		goto out;
	}
	rc = 0;
out:
	git_diff_stats_free(stats);
	git_diff_free(diff);
	review_sides_close(&s);
	return rc;
}

void
review_diff_free(struct review_diff *d)
{
	free(d->stat);
	free(d->patch);
	cJSON_Delete(d->files);
	d->stat = d->patch = NULL;
	d->files = NULL;
}

/*
 * The checkout that has ref checked out: the repository itself or one of its linked
 * worktrees (a run's adopted worktree has its own branch, so it is never a target
 * unless asked for). *out NULL: none has.
 */
static int
review_checkout_of(git_repository *repo, const char *refname, git_repository **out)
{
	git_strarray	 names = { 0 };
	git_worktree	*wt;
	git_repository	*w;
	git_reference	*head;
	int		 found;

	*out = NULL;
	if (!git_repository_is_bare(repo) && git_repository_head(&head, repo) == 0) {
		found = strcmp(git_reference_name(head), refname) == 0;
		git_reference_free(head);
		if (found) {
			git_repository_open(out, git_repository_path(repo));
			return *out != NULL ? 0 : -1;
		}
	}
	if (git_worktree_list(&names, repo) != 0)
		return 0;
	for (size_t i = 0; i < names.count && *out == NULL; i++) {
		if (git_worktree_lookup(&wt, repo, names.strings[i]) != 0)
			continue;
		if (git_worktree_validate(wt) == 0 &&
		    git_repository_open_from_worktree(&w, wt) == 0) {
			if (git_repository_head(&head, w) == 0) {
				if (strcmp(git_reference_name(head), refname) == 0)
					*out = w;
				git_reference_free(head);
			}
			if (*out != w)
				git_repository_free(w);
		}
		git_worktree_free(wt);
	}
	git_strarray_dispose(&names);
	return 0;
}

/* The checkout's changes to tracked files (untracked ones are left alone). */
static int
review_dirty(git_repository *w, char *files, size_t fileslen)
{
	git_status_options	 so;
	git_status_list		*st = NULL;
	const git_status_entry	*e;
	size_t			 n, off = 0;
	const char		*p;

	git_status_options_init(&so, GIT_STATUS_OPTIONS_VERSION);
	so.flags = GIT_STATUS_OPT_EXCLUDE_SUBMODULES;
	if (git_status_list_new(&st, w, &so) != 0)
		return -1;
	n = git_status_list_entrycount(st);
	files[0] = '\0';
	for (size_t i = 0; i < n && i < 8; i++) {
		e = git_status_byindex(st, i);
		p = e->head_to_index != NULL ? e->head_to_index->new_file.path :
		    e->index_to_workdir != NULL ? e->index_to_workdir->new_file.path : "?";
		if (off < fileslen)
			off += (size_t)snprintf(files + off, fileslen - off, "%s%s",
			    i ? ", " : "", p);
	}
	if (n > 8 && off < fileslen)
		snprintf(files + off, fileslen - off, ", ...");
	git_status_list_free(st);
	return n > 0;
}

/* Conflicting paths of a merged index, into res->conflicts. */
static void
review_conflicts(git_index *idx, struct review_merge *res)
{
	git_index_conflict_iterator	*it;
	const git_index_entry		*anc, *ours, *theirs;

	res->conflicts = cJSON_CreateArray();
	if (git_index_conflict_iterator_new(&it, idx) != 0)
		return;
	while (git_index_conflict_next(&anc, &ours, &theirs, it) == 0) {
		const char *p = ours != NULL ? ours->path : theirs != NULL ? theirs->path :
		    anc != NULL ? anc->path : "?";

		cJSON_AddItemToArray(res->conflicts, cJSON_CreateString(p));
	}
	git_index_conflict_iterator_free(it);
}

static int
review_signature(git_repository *repo, git_signature **sig)
{
	if (git_signature_default(sig, repo) == 0)
		return 0;
	return git_signature_now(sig, "Clockwork", "clockwork@localhost");
}

const char *
review_mode_name(enum review_mode m)
{
	switch (m) {
	case REVIEW_FF_ONLY:	return "ff-only";
	case REVIEW_SQUASH:	return "squash";
	default:		return "merge";
	}
}

int
review_mode_parse(const char *s, enum review_mode *m)
{
	if (s == NULL || strcmp(s, "merge") == 0)
		*m = REVIEW_MERGE;
	else if (strcmp(s, "ff-only") == 0)
		*m = REVIEW_FF_ONLY;
	else if (strcmp(s, "squash") == 0)
		*m = REVIEW_SQUASH;
	else
		return -1;
	return 0;
}

/*
 * Checkout notifications: every path the checkout would have to overwrite or remove
 * in the user's working tree although the file there is not the tracked content
 * (an ignored .env, an untracked node_modules/.bin/x), collected so that the refusal
 * can name them.
 */
static int
review_notify(git_checkout_notify_t why, const char *path, const git_diff_file *baseline,
    const git_diff_file *target, const git_diff_file *workdir, void *arg)
{
	cJSON	*list = arg;

	(void)baseline;
	(void)target;
	(void)workdir;
	if (why == GIT_CHECKOUT_NOTIFY_CONFLICT && path != NULL &&
	    cJSON_GetArraySize(list) < 256)
		cJSON_AddItemToArray(list, cJSON_CreateString(path));
	return 0;
}

/* "a, b, c (N more)" of a string array, for one-line messages. */
static void
review_list_line(const cJSON *a, char *out, size_t outlen)
{
	const cJSON	*c;
	size_t		 off = 0;
	int		 i = 0, n = cJSON_GetArraySize(a);

	out[0] = '\0';
	cJSON_ArrayForEach(c, a) {
		const char *s = cJSON_IsString(c) ? c->valuestring :
		    json_get_string(c, "path");

		if (i == 8) {
			snprintf(out + off, outlen - off, " (%d more)", n - i);
			break;
		}
		if (off < outlen)
			off += (size_t)snprintf(out + off, outlen - off, "%s%s", i ? ", " :
			    "", s != NULL ? s : "?");
		if (off >= outlen)
			break;
		i++;
	}
}

void
review_merge_free(struct review_merge *res)
{
	cJSON_Delete(res->conflicts);
	cJSON_Delete(res->automation);
	cJSON_Delete(res->left_alone);
	res->conflicts = res->automation = res->left_alone = NULL;
}

/*
 * Merge branch into into (NULL: the branch the repository's HEAD is on). The result
 * says what was done; a refusal returns REVIEW_REFUSED with err saying why (and
 * res->conflicts listing the files of a conflict); nothing is written then.
 * A run whose work adds, changes or removes automation files (SPEC U3) is refused
 * with REVIEW_AUTOMATION (res->automation lists them) unless accept_automation; one
 * whose checkout would replace a file in the user's working tree that git does not
 * track there (ignored or untracked) is refused with REVIEW_IGNORED, naming the files
 * in res->left_alone: the user's copy is theirs, and nothing is written.
 */
int
review_merge(const char *repo_path, const char *run_id, const char *branch,
    const char *into, enum review_mode mode, int accept_automation,
    struct review_merge *res, char *err, size_t errlen)
{
	git_repository		*repo = NULL, *w = NULL;
	git_reference		*target = NULL, *head = NULL, *src = NULL, *moved = NULL;
	git_commit		*tc = NULL, *sc = NULL, *nc = NULL;
	git_index		*idx = NULL;
	git_tree		*tree = NULL;
	git_signature		*sig = NULL;
	git_merge_options	 mo;
	git_checkout_options	 co;
	git_oid			 tree_oid, new_oid;
	const git_commit	*parents[2];
	git_oid			 mb;
	git_commit		*mbc = NULL;
	git_tree		*mbt = NULL, *st = NULL;
	char			 msg[512], dirty[512], reflog[256], list[600];
	int			 rc = REVIEW_ERROR, ff, d;

	memset(res, 0, sizeof *res);
	if (review_open(repo_path, &repo, err, errlen) == -1)
		return REVIEW_ERROR;
	if (git_branch_lookup(&src, repo, branch, GIT_BRANCH_LOCAL) != 0 ||
	    git_reference_peel((git_object **)&sc, src, GIT_OBJECT_COMMIT) != 0) {
		snprintf(err, errlen, "branch %s is not in %s (discarded?)", branch,
		    repo_path);
		rc = REVIEW_REFUSED;
		goto out;
	}
	if (into == NULL) {
		if (git_repository_head_detached(repo) == 1 ||
		    git_repository_head(&head, repo) != 0 || !git_reference_is_branch(head)) {
			snprintf(err, errlen, "%s: HEAD is not on a branch; name one with "
			    "--into BRANCH", repo_path);
			rc = REVIEW_REFUSED;
			goto out;
		}
		into = git_reference_shorthand(head);
	}
	snprintf(res->into, sizeof res->into, "%s", into);
	if (strcmp(into, branch) == 0 ||
	    git_branch_lookup(&target, repo, into, GIT_BRANCH_LOCAL) != 0 ||
	    git_reference_peel((git_object **)&tc, target, GIT_OBJECT_COMMIT) != 0) {
		snprintf(err, errlen, "%s: no branch '%s' to merge into", repo_path, into);
		rc = REVIEW_REFUSED;
		goto out;
	}
	if (review_checkout_of(repo, git_reference_name(target), &w) == -1) {
		review_err(err, errlen, repo_path);
		goto out;
	}
	if (w != NULL && (d = review_dirty(w, dirty, sizeof dirty)) != 0) {
		if (d == -1)
			review_err(err, errlen, "cannot read the target checkout's status");
		else {
			snprintf(err, errlen, "%s has uncommitted changes (%s); commit or "
			    "stash them first: nothing was merged", git_repository_workdir(w),
			    dirty);
			rc = REVIEW_REFUSED;
		}
		goto out;
	}
	if (git_oid_equal(git_commit_id(tc), git_commit_id(sc)) ||
	    git_graph_descendant_of(repo, git_commit_id(tc), git_commit_id(sc)) == 1) {
		res->result = "up-to-date";
		git_oid_tostr(res->commit, sizeof res->commit, git_commit_id(tc));
		rc = REVIEW_OK;
		goto out;
	}
	/*
	 * What would land is the branch's change since it left the target: the
	 * automation files in it need the person's explicit acceptance (SPEC U3).
	 */
	if (git_merge_base(&mb, repo, git_commit_id(tc), git_commit_id(sc)) != 0 ||
	    git_commit_lookup(&mbc, repo, &mb) != 0 || git_commit_tree(&mbt, mbc) != 0 ||
	    git_commit_tree(&st, sc) != 0 ||
	    (res->automation = review_automation_of(repo, mbt, st)) == NULL) {
		review_err(err, errlen, "cannot list the run's automation files");
		goto out;
	}
	if (cJSON_GetArraySize(res->automation) > 0 && !accept_automation) {
		review_list_line(res->automation, list, sizeof list);
		snprintf(err, errlen, "run %s changes automation files, which make tools "
		    "run code when a checkout is opened: %s; review them (cwctl run diff "
		    "%s) and merge with --accept-automation to land them: nothing was "
		    "merged", run_id, list, run_id);
		rc = REVIEW_AUTOMATION;
		goto out;
	}
	ff = git_graph_descendant_of(repo, git_commit_id(sc), git_commit_id(tc)) == 1;
	if (mode == REVIEW_FF_ONLY && !ff) {
		snprintf(err, errlen, "%s has moved on since the run began: it cannot be "
		    "fast-forwarded to %s (merge without --ff-only, or --squash)", into,
		    branch);
		rc = REVIEW_REFUSED;
		goto out;
	}
	if (ff && mode != REVIEW_SQUASH) {
		git_oid_cpy(&new_oid, git_commit_id(sc));
		res->result = "fast-forward";
	} else {
		git_merge_options_init(&mo, GIT_MERGE_OPTIONS_VERSION);
		if (git_merge_commits(&idx, repo, tc, sc, &mo) != 0) {
			review_err(err, errlen, "cannot merge");
			goto out;
		}
		if (git_index_has_conflicts(idx)) {
			review_conflicts(idx, res);
			snprintf(err, errlen, "merging %s into %s conflicts in %d file(s); "
			    "nothing was changed", branch, into,
			    cJSON_GetArraySize(res->conflicts));
			rc = REVIEW_CONFLICT;
			goto out;
		}
		if (git_index_write_tree_to(&tree_oid, idx, repo) != 0 ||
		    git_tree_lookup(&tree, repo, &tree_oid) != 0 ||
		    review_signature(repo, &sig) != 0) {
			review_err(err, errlen, "cannot write the merged tree");
			goto out;
		}
		parents[0] = tc;
		parents[1] = sc;
		if (mode == REVIEW_SQUASH)
			snprintf(msg, sizeof msg, "Clockwork run %s, squashed\n\nThe work of "
			    "branch %s in one commit.\n", run_id, branch);
		else
			snprintf(msg, sizeof msg, "Merge Clockwork run %s (branch %s) into "
			    "%s\n", run_id, branch, into);
		if (git_commit_create(&new_oid, repo, NULL, sig, sig, NULL, msg, tree,
		    mode == REVIEW_SQUASH ? 1 : 2, parents) != 0) {
			review_err(err, errlen, "cannot commit the merge");
			goto out;
		}
		res->result = mode == REVIEW_SQUASH ? "squashed" : "merged";
	}
	/* The commit as the checkout's repository sees it (the same object store). */
	if (w != NULL && git_commit_lookup(&nc, w, &new_oid) != 0) {
		review_err(err, errlen, "cannot read the new commit");
		goto out;
	}
	if (w != NULL) {
		/*
		 * Safe: stops, having written nothing, where a file would be overwritten.
		 * libgit2's safe checkout still replaces ignored files (as git does), so
		 * DONT_OVERWRITE_IGNORED: the user's ignored .env or node_modules/.bin/x
		 * is theirs. Refusing (rather than landing the commit and leaving their
		 * copy) keeps the checkout equal to its commit, so that a later commit -a
		 * cannot put the user's secret .env in place of the run's file.
		 */
		if ((res->left_alone = cJSON_CreateArray()) == NULL)
			goto out;
		git_checkout_options_init(&co, GIT_CHECKOUT_OPTIONS_VERSION);
		co.checkout_strategy = GIT_CHECKOUT_SAFE | GIT_CHECKOUT_DONT_OVERWRITE_IGNORED;
		co.notify_flags = GIT_CHECKOUT_NOTIFY_CONFLICT;
		co.notify_cb = review_notify;
		co.notify_payload = res->left_alone;
		if (git_checkout_tree(w, (const git_object *)nc, &co) != 0) {
			if (cJSON_GetArraySize(res->left_alone) > 0) {
				review_list_line(res->left_alone, list, sizeof list);
				snprintf(err, errlen, "the run's work would replace files in "
				    "%s that git does not track there (ignored or untracked): "
				    "%s; they were left alone and nothing was merged (move "
				    "them aside and merge again to take the run's versions)",
				    git_repository_workdir(w), list);
				rc = REVIEW_IGNORED;
			} else {
				review_err(err, errlen, "the checkout refused the merge "
				    "(nothing was changed)");
				rc = REVIEW_REFUSED;
			}
			goto out;
		}
	}
	snprintf(reflog, sizeof reflog, "clockwork: %s run %s", res->result, run_id);
	if (git_reference_set_target(&moved, target, &new_oid, reflog) != 0) {
		review_err(err, errlen, "cannot move the branch");
		goto out;
	}
	git_oid_tostr(res->commit, sizeof res->commit, &new_oid);
	rc = REVIEW_OK;
out:
	git_tree_free(st);
	git_tree_free(mbt);
	git_commit_free(mbc);
	git_reference_free(moved);
	git_signature_free(sig);
	git_tree_free(tree);
	git_index_free(idx);
	git_commit_free(nc);
	git_commit_free(sc);
	git_commit_free(tc);
	git_reference_free(src);
	git_reference_free(target);
	git_reference_free(head);
	git_repository_free(w);
	git_repository_free(repo);
	return rc;
}

/*
 * Throw a run's work away: its adopted worktree (when still there, from the path the
 * store holds) and its branch. The commits stay in the object store until git gc.
 */
int
review_discard(const char *repo_path, const char *worktree, const char *run_id,
    const char *branch, char *err, size_t errlen)
{
	git_repository	*repo = NULL;
	git_reference	*ref = NULL;
	int		 rc = -1;

	if (worktree != NULL && (access(worktree, F_OK) == 0 || errno != ENOENT) &&
	    worktree_remove(repo_path, worktree, run_id, branch, 1, err, errlen) == -1)
		return -1;
	if (review_open(repo_path, &repo, err, errlen) == -1)
		return -1;
	if (git_branch_lookup(&ref, repo, branch, GIT_BRANCH_LOCAL) == 0 &&
	    git_branch_delete(ref) != 0) {
		review_err(err, errlen, "cannot delete the run's branch");
		goto out;
	}
	rc = 0;
out:
	git_reference_free(ref);
	git_repository_free(repo);
	return rc;
}
