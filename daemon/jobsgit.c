/*
 * A repository's jobs file as committed on its default branch (SPEC W2), through
 * libgit2: never the working tree, whose files anyone's checkout, build or editor may
 * have changed, and which may hold links out of the repository.
 *
 * The default branch is, in this order:
 *  1. the branch refs/remotes/origin/HEAD names (what the remote calls its default),
 *     as the local branch of that name when there is one, else the remote's;
 *  2. init.defaultBranch from git's configuration, when that branch exists;
 *  3. main, when it exists; 4. master, when it exists.
 * Otherwise there is none, and that is an error.
 *
 * Reading is by tree lookup: .clockwork must be a directory entry and each jobs file
 * a regular blob entry (a symbolic link is refused, whatever it points at: git stores
 * a link as a blob holding its target, and following it could leave the repository);
 * a blob's size is read from the object header before the blob itself, and one
 * larger than JOBSPEC_MAX_BYTES is refused unread.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <git2.h>

#include "jobsgit.h"
#include "jobspec.h"
#include "worktree.h"

static const char *const jobsgit_names[] = { "jobs.json", "jobs.yaml" };

static int
jobsgit_ref_exists(git_repository *repo, const char *name)
{
	git_reference	*ref;

	if (git_reference_lookup(&ref, repo, name) != 0)
		return 0;
	git_reference_free(ref);
	return 1;
}

/* The full name of the default branch's ref in refname, its short name in branch. */
static int
jobsgit_default_ref(git_repository *repo, char *refname, size_t reflen, char *branch,
    size_t blen)
{
	git_reference	*ref = NULL;
	git_config	*cfg = NULL, *snap = NULL;
	const char	*t, *name = NULL;
	char		 local[512];
	static const char *const fallbacks[] = { "main", "master" };

	if (git_reference_lookup(&ref, repo, "refs/remotes/origin/HEAD") == 0 &&
	    git_reference_type(ref) == GIT_REFERENCE_SYMBOLIC &&
	    (t = git_reference_symbolic_target(ref)) != NULL &&
	    strncmp(t, "refs/remotes/origin/", 20) == 0 && t[20] != '\0') {
		snprintf(branch, blen, "%s", t + 20);
		snprintf(local, sizeof local, "refs/heads/%s", t + 20);
		snprintf(refname, reflen, "%s", jobsgit_ref_exists(repo, local) ? local : t);
		git_reference_free(ref);
		return 0;
	}
	git_reference_free(ref);
	if (git_repository_config(&cfg, repo) == 0 &&
	    git_config_snapshot(&snap, cfg) == 0 &&
	    git_config_get_string(&name, snap, "init.defaultBranch") == 0 && name != NULL &&
	    (size_t)snprintf(local, sizeof local, "refs/heads/%s", name) < sizeof local &&
	    jobsgit_ref_exists(repo, local)) {
		snprintf(branch, blen, "%s", name);
		snprintf(refname, reflen, "%s", local);
		git_config_free(snap);
		git_config_free(cfg);
		return 0;
	}
	git_config_free(snap);
	git_config_free(cfg);
	for (size_t i = 0; i < sizeof fallbacks / sizeof fallbacks[0]; i++) {
		snprintf(local, sizeof local, "refs/heads/%s", fallbacks[i]);
		if (jobsgit_ref_exists(repo, local)) {
			snprintf(branch, blen, "%s", fallbacks[i]);
			snprintf(refname, reflen, "%s", local);
			return 0;
		}
	}
	return -1;
}

int
jobsgit_default_branch(const char *repo_path, char *refname, size_t reflen,
    char *branch, size_t blen, char *err, size_t errlen)
{
	git_repository	*repo;
	int		 rc;

	if (worktree_open(repo_path, &repo, err, errlen) == -1)
		return -1;
	if ((rc = jobsgit_default_ref(repo, refname, reflen, branch, blen)) == -1)
		snprintf(err, errlen, "%s: no default branch (no origin/HEAD, and neither "
		    "init.defaultBranch, main nor master exists)", repo_path);
	git_repository_free(repo);
	return rc;
}

/* One jobs file's blob (worktree_tree_blob: a regular file, its size checked first). */
static int
jobsgit_blob(git_repository *repo, const git_tree_entry *e, const char *repo_path,
    const char *path, struct jobsgit_file *f, char *err, size_t errlen)
{
	git_blob	*blob = NULL;
	size_t		 size;
	int		 rc = -1;

	if (worktree_tree_blob(repo, e, repo_path, path, JOBSPEC_MAX_BYTES, &blob, err,
	    errlen) == -1)
		return -1;
	size = (size_t)git_blob_rawsize(blob);
	if (size > JOBSPEC_MAX_BYTES || (f->text = malloc(size + 1)) == NULL) {
		snprintf(err, errlen, "%s: %s: cannot read %zu bytes", repo_path, path, size);
		goto out;
	}
	memcpy(f->text, git_blob_rawcontent(blob), size);
	f->text[size] = '\0';
	f->len = size;
	snprintf(f->path, sizeof f->path, "%s", path);
	git_oid_tostr(f->blob, sizeof f->blob, git_tree_entry_id(e));
	rc = 0;
out:
	git_blob_free(blob);
	return rc;
}

int
jobsgit_read(const char *repo_path, struct jobsgit_result *out, char *err,
    size_t errlen)
{
	git_repository		*repo = NULL;
	git_reference		*ref = NULL;
	git_commit		*commit = NULL;
	git_tree		*root = NULL, *dir = NULL;
	const git_tree_entry	*e;
	char			 path[64];
	int			 rc = -1;

	memset(out, 0, sizeof *out);
	if (worktree_open(repo_path, &repo, err, errlen) == -1)
		return -1;
	if (jobsgit_default_ref(repo, out->ref, sizeof out->ref, out->branch,
	    sizeof out->branch) == -1) {
		snprintf(err, errlen, "%s: no default branch (no origin/HEAD, and neither "
		    "init.defaultBranch, main nor master exists)", repo_path);
		goto out;
	}
	if (git_reference_lookup(&ref, repo, out->ref) != 0 ||
	    git_reference_peel((git_object **)&commit, ref, GIT_OBJECT_COMMIT) != 0 ||
	    git_commit_tree(&root, commit) != 0) {
		worktree_err(err, errlen, "cannot read the default branch's commit", repo_path);
		goto out;
	}
	git_oid_tostr(out->commit, sizeof out->commit, git_commit_id(commit));
	/* 0: no .clockwork, or a file of that name: no jobs, nothing to import. */
	if ((rc = worktree_tree_dir(repo, root, repo_path, ".clockwork", &dir, err,
	    errlen)) != 1)
		goto out;
	rc = -1;
	for (size_t i = 0; i < sizeof jobsgit_names / sizeof jobsgit_names[0]; i++) {
		if ((e = git_tree_entry_byname(dir, jobsgit_names[i])) == NULL)
			continue;
		snprintf(path, sizeof path, ".clockwork/%s", jobsgit_names[i]);
		if (jobsgit_blob(repo, e, repo_path, path, &out->files[out->n_files], err,
		    errlen) == -1)
			goto out;
		out->n_files++;
	}
	rc = 0;
out:
	if (rc == -1)
		jobsgit_result_free(out);
	git_tree_free(dir);
	git_tree_free(root);
	git_commit_free(commit);
	git_reference_free(ref);
	git_repository_free(repo);
	return rc;
}

void
jobsgit_result_free(struct jobsgit_result *r)
{
	for (size_t i = 0; i < r->n_files; i++)
		free(r->files[i].text);
	r->n_files = 0;
}
