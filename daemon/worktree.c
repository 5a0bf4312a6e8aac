/*
 * Git worktrees for repository runs (SPEC W1), through libgit2. A run gets a new
 * branch clockwork/<task>/<run-id> from the repository's HEAD and a linked worktree at
 * $CLOCKWORK_HOME/worktrees/<task>/<run-id>; the user's own working tree, index and
 * branches are never written. Errors fill err with one line naming the repository.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <git2.h>

#include "daemon.h"

static void
worktree_err(char *err, size_t errlen, const char *what, const char *path)
{
	const git_error	*e = git_error_last();

	snprintf(err, errlen, "%s: %s: %s", path, what,
	    e != NULL && e->message != NULL ? e->message : "libgit2 error");
}

/* Idempotent: every entry point calls it, so no caller can forget. */
static int	worktree_inited;

void
worktree_init(void)
{
	if (!worktree_inited) {
		git_libgit2_init();
		worktree_inited = 1;
	}
}

/* At exit, so leak checkers see libgit2's per-thread caches freed. */
void
worktree_shutdown(void)
{
	if (worktree_inited)
		git_libgit2_shutdown();
	worktree_inited = 0;
}

int
worktree_is_repo(const char *path)
{
	git_repository	*repo;

	worktree_init();
	if (git_repository_open_ext(&repo, path, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) != 0)
		return 0;
	git_repository_free(repo);
	return 1;
}

/*
 * Create branch from HEAD and a worktree named name at path checking it out. base_out
 * gets HEAD's commit id. A repository without commits, or a bare one, is refused.
 */
int
worktree_create(const char *repo_path, const char *path, const char *branch,
    const char *name, char *base_out, size_t baselen, char *err, size_t errlen)
{
	git_repository			*repo = NULL;
	git_reference			*head = NULL, *ref = NULL;
	git_commit			*commit = NULL;
	git_worktree			*wt = NULL;
	git_worktree_add_options	 opts;
	int				 rc = -1;

	worktree_init();
	if (git_repository_open_ext(&repo, repo_path, GIT_REPOSITORY_OPEN_NO_SEARCH,
	    NULL) != 0) {
		worktree_err(err, errlen, "not a git repository", repo_path);
		return -1;
	}
	if (git_repository_is_bare(repo)) {
		snprintf(err, errlen, "%s: a bare repository has no working tree to branch from",
		    repo_path);
		goto out;
	}
	if (git_repository_head(&head, repo) != 0) {
		worktree_err(err, errlen, "cannot read HEAD (no commits yet?)", repo_path);
		goto out;
	}
	if (git_reference_peel((git_object **)&commit, head, GIT_OBJECT_COMMIT) != 0) {
		worktree_err(err, errlen, "HEAD is not a commit", repo_path);
		goto out;
	}
	git_oid_tostr(base_out, baselen, git_commit_id(commit));
	if (git_branch_create(&ref, repo, branch, commit, 0) != 0) {
		worktree_err(err, errlen, "cannot create branch", repo_path);
		goto out;
	}
	if (git_worktree_add_options_init(&opts, GIT_WORKTREE_ADD_OPTIONS_VERSION) != 0)
		goto out;
	opts.ref = ref;
	opts.checkout_options.checkout_strategy = GIT_CHECKOUT_FORCE;
	if (git_worktree_add(&wt, repo, name, path, &opts) != 0) {
		worktree_err(err, errlen, "cannot add worktree", repo_path);
		git_branch_delete(ref);
		goto out;
	}
	rc = 0;
out:
	git_worktree_free(wt);
	git_reference_free(ref);
	git_commit_free(commit);
	git_reference_free(head);
	git_repository_free(repo);
	return rc;
}

static int
worktree_tree_of(git_repository *repo, const char *rev, git_tree **out)
{
	git_object	*obj;
	int		 rc;

	if (git_revparse_single(&obj, repo, rev) != 0)
		return -1;
	rc = git_object_peel((git_object **)out, obj, GIT_OBJECT_TREE);
	git_object_free(obj);
	return rc;
}

/*
 * The run's facts at its end: the branch's HEAD commit (what the agent committed) and
 * the diffstat from the base commit to the worktree as it stands, so uncommitted
 * edits count too.
 */
int
worktree_finish(const char *path, const char *base, char *final_out, size_t finallen,
    struct worktree_stat *st, char *err, size_t errlen)
{
	git_repository		*repo = NULL;
	git_reference		*head = NULL;
	git_tree		*tree = NULL;
	git_diff		*diff = NULL;
	git_diff_stats		*stats = NULL;
	git_diff_options	 dopts;
	const git_oid		*oid;
	int			 rc = -1;

	worktree_init();
	memset(st, 0, sizeof *st);
	final_out[0] = '\0';
	if (git_repository_open_ext(&repo, path, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) != 0) {
		worktree_err(err, errlen, "cannot open worktree", path);
		return -1;
	}
	if (git_repository_head(&head, repo) == 0 &&
	    (oid = git_reference_target(head)) != NULL)
		git_oid_tostr(final_out, finallen, oid);
	if (worktree_tree_of(repo, base, &tree) != 0) {
		worktree_err(err, errlen, "cannot read base commit", path);
		goto out;
	}
	git_diff_options_init(&dopts, GIT_DIFF_OPTIONS_VERSION);
	dopts.flags = GIT_DIFF_INCLUDE_UNTRACKED | GIT_DIFF_RECURSE_UNTRACKED_DIRS |
	    GIT_DIFF_SHOW_UNTRACKED_CONTENT;
	if (git_diff_tree_to_workdir_with_index(&diff, repo, tree, &dopts) != 0 ||
	    git_diff_get_stats(&stats, diff) != 0) {
		worktree_err(err, errlen, "cannot diff", path);
		goto out;
	}
	st->files = git_diff_stats_files_changed(stats);
	st->insertions = git_diff_stats_insertions(stats);
	st->deletions = git_diff_stats_deletions(stats);
	rc = 0;
out:
	git_diff_stats_free(stats);
	git_diff_free(diff);
	git_tree_free(tree);
	git_reference_free(head);
	git_repository_free(repo);
	return rc;
}

/* Nothing would be lost: the branch tip is reachable from HEAD and the tree is clean. */
int
worktree_merged(const char *repo_path, const char *path, const char *branch)
{
	git_repository		*repo = NULL, *wrepo = NULL;
	git_reference		*ref = NULL, *head = NULL;
	git_status_list		*status = NULL;
	git_status_options	 sopts;
	const git_oid		*tip, *htip;
	int			 merged = 0;

	worktree_init();
	if (git_repository_open_ext(&repo, repo_path, GIT_REPOSITORY_OPEN_NO_SEARCH,
	    NULL) != 0)
		return 0;
	if (git_branch_lookup(&ref, repo, branch, GIT_BRANCH_LOCAL) != 0 ||
	    git_repository_head(&head, repo) != 0)
		goto out;
	tip = git_reference_target(ref);
	htip = git_reference_target(head);
	if (tip == NULL || htip == NULL)
		goto out;
	if (!git_oid_equal(tip, htip) && git_graph_descendant_of(repo, htip, tip) != 1)
		goto out;
	if (access(path, F_OK) == 0) {
		if (git_repository_open_ext(&wrepo, path, GIT_REPOSITORY_OPEN_NO_SEARCH,
		    NULL) != 0)
			goto out;
		git_status_options_init(&sopts, GIT_STATUS_OPTIONS_VERSION);
		sopts.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED;
		if (git_status_list_new(&status, wrepo, &sopts) != 0 ||
		    git_status_list_entrycount(status) != 0)
			goto out;
	}
	merged = 1;
out:
	git_status_list_free(status);
	git_reference_free(head);
	git_reference_free(ref);
	git_repository_free(wrepo);
	git_repository_free(repo);
	return merged;
}

/*
 * Remove the worktree's directory and its administrative entry; delete its branch
 * only when asked (the caller asks when the branch is merged, so no commit is lost).
 */
int
worktree_remove(const char *repo_path, const char *path, const char *name,
    const char *branch, int delete_branch, char *err, size_t errlen)
{
	git_repository			*repo = NULL;
	git_worktree			*wt = NULL;
	git_reference			*ref = NULL;
	git_worktree_prune_options	 popts = GIT_WORKTREE_PRUNE_OPTIONS_INIT;
	int				 rc = -1;

	worktree_init();
	if (git_repository_open_ext(&repo, repo_path, GIT_REPOSITORY_OPEN_NO_SEARCH,
	    NULL) != 0) {
		worktree_err(err, errlen, "not a git repository", repo_path);
		return -1;
	}
	if (git_worktree_lookup(&wt, repo, name) == 0) {
		popts.flags = GIT_WORKTREE_PRUNE_VALID | GIT_WORKTREE_PRUNE_LOCKED |
		    GIT_WORKTREE_PRUNE_WORKING_TREE;
		if (git_worktree_prune(wt, &popts) != 0) {
			worktree_err(err, errlen, "cannot prune worktree", repo_path);
			goto out;
		}
	} else if (access(path, F_OK) == 0) {
		snprintf(err, errlen, "%s: %s is not a worktree of this repository",
		    repo_path, path);
		goto out;
	}
	if (delete_branch && branch != NULL &&
	    git_branch_lookup(&ref, repo, branch, GIT_BRANCH_LOCAL) == 0 &&
	    git_branch_delete(ref) != 0) {
		worktree_err(err, errlen, "cannot delete branch", repo_path);
		goto out;
	}
	rc = 0;
out:
	git_reference_free(ref);
	git_worktree_free(wt);
	git_repository_free(repo);
	return rc;
}
