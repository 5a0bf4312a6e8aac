/*
 * Git for repository runs (SPEC W1, G1), through libgit2. A run works in a repository
 * of its own at $CLOCKWORK_HOME/worktrees/<task>/<run-id> on branch
 * clockwork/<task>/<run-id>, borrowing the user's objects read-only; the user's
 * repository is written only by the daemon, when it imports the run's branch
 * (runimport.c) and then adopts that directory as a linked worktree checked out from
 * the verified branch. Errors fill err with one line naming the repository.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <git2.h>

#include "json.h"
#include "paths.h"
#include "rmtree.h"
#include "worktree.h"

void
worktree_err(char *err, size_t errlen, const char *what, const char *path)
{
	const git_error	*e = git_error_last();

	snprintf(err, errlen, "%s: %s: %s", path, what,
	    e != NULL && e->message != NULL ? e->message : "libgit2 error");
}

int
worktree_tree_blob(git_repository *repo, const git_tree_entry *e, const char *repo_path,
    const char *path, size_t max, git_blob **out, char *err, size_t errlen)
{
	git_odb		*odb = NULL;
	git_object_t	 type;
	size_t		 size;
	int		 rc = -1;

	*out = NULL;
	switch (git_tree_entry_filemode(e)) {
	case GIT_FILEMODE_BLOB:
	case GIT_FILEMODE_BLOB_EXECUTABLE:
		break;
	case GIT_FILEMODE_LINK:
		snprintf(err, errlen, "%s: %s: refused: a symbolic link (it must be a regular "
		    "file in the commit)", repo_path, path);
		return -1;
	default:
		snprintf(err, errlen, "%s: %s: refused: not a regular file", repo_path, path);
		return -1;
	}
	if (git_repository_odb(&odb, repo) != 0 ||
	    git_odb_read_header(&size, &type, odb, git_tree_entry_id(e)) != 0) {
		worktree_err(err, errlen, "cannot read a file's header", repo_path);
		goto out;
	}
	if (type != GIT_OBJECT_BLOB || size > max) {
		snprintf(err, errlen, "%s: %s: refused: %zu bytes, larger than the limit of "
		    "%zu", repo_path, path, size, max);
		goto out;
	}
	if (git_blob_lookup(out, repo, git_tree_entry_id(e)) != 0) {
		worktree_err(err, errlen, "cannot read a file", repo_path);
		goto out;
	}
	rc = 0;
out:
	git_odb_free(odb);
	return rc;
}

int
worktree_tree_dir(git_repository *repo, const git_tree *root, const char *repo_path,
    const char *name, git_tree **dir, char *err, size_t errlen)
{
	const git_tree_entry	*e;
	char			 what[128];

	*dir = NULL;
	if ((e = git_tree_entry_byname(root, name)) == NULL)
		return 0;
	if (git_tree_entry_filemode(e) == GIT_FILEMODE_LINK) {
		snprintf(err, errlen, "%s: %s: refused: a symbolic link", repo_path, name);
		return -1;
	}
	if (git_tree_entry_filemode(e) != GIT_FILEMODE_TREE)
		return 0;
	if (git_tree_lookup(dir, repo, git_tree_entry_id(e)) != 0) {
		snprintf(what, sizeof what, "cannot read %s", name);
		worktree_err(err, errlen, what, repo_path);
		return -1;
	}
	return 1;
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
worktree_open(const char *repo_path, git_repository **repo, char *err, size_t errlen)
{
	worktree_init();
	if (git_repository_open_ext(repo, repo_path, GIT_REPOSITORY_OPEN_NO_SEARCH,
	    NULL) != 0) {
		worktree_err(err, errlen, "not a git repository", repo_path);
		return -1;
	}
	return 0;
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
 * Can runs branch from the repository at path? Its top directory (not its .git, not a
 * bare repository) with at least one commit; why says what is wrong when not.
 */
int
worktree_check_repo(const char *path, char *why, size_t whylen)
{
	git_repository	*repo;
	const char	*base = strrchr(path, '/');
	int		 rc = -1;

	worktree_init();
	if (base != NULL && strcmp(base, "/.git") == 0) {
		snprintf(why, whylen, "%s is a .git directory: name the working tree above it",
		    path);
		return -1;
	}
	if (git_repository_open_ext(&repo, path, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) != 0) {
		snprintf(why, whylen, "%s is not a git repository (its top directory)", path);
		return -1;
	}
	if (git_repository_is_bare(repo))
		snprintf(why, whylen, "%s is a bare repository: runs need a working tree",
		    path);
	else if (git_repository_head_unborn(repo) == 1)
		snprintf(why, whylen, "%s has no commits yet: commit something first (runs "
		    "branch from HEAD)", path);
	else
		rc = 0;
	git_repository_free(repo);
	return rc;
}

/* The common git directory's object store of repo, canonical, in out. */
static int
worktree_objects_dir(git_repository *repo, char *out, size_t outlen)
{
	char	 p[PATH_MAX + 16];

	if ((size_t)snprintf(p, sizeof p, "%sobjects", git_repository_commondir(repo)) >=
	    sizeof p || realpath(p, out) == NULL || strlen(out) >= outlen) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

/*
 * A run's own repository (SPEC G1) at path, which must not exist: a new repository
 * whose object store borrows repo's read-only through objects/info/alternates, with
 * HEAD on branch at repo's HEAD commit, checked out. Nothing of repo's configuration
 * (remotes, credentials, hooks) is carried over, and repo itself is not written: the
 * branch appears there only when the run's work is imported (runimport.c). base_out
 * gets the commit id, objects_out the store the run may read.
 */
int
worktree_create_run(const char *repo_path, const char *path, const char *branch,
    char *base_out, size_t baselen, char *objects_out, size_t objlen, char *err,
    size_t errlen)
{
	return worktree_create_run_at(repo_path, NULL, path, branch, base_out, baselen,
	    objects_out, objlen, err, errlen);
}

/*
 * As worktree_create_run, from base_ref (a full ref name, "refs/heads/main") instead
 * of HEAD: the run starts from that ref's commit whatever the user has checked out.
 */
int
worktree_create_run_at(const char *repo_path, const char *base_ref, const char *path,
    const char *branch, char *base_out, size_t baselen, char *objects_out, size_t objlen,
    char *err, size_t errlen)
{
	git_repository			*repo = NULL, *run = NULL;
	git_reference			*head = NULL, *ref = NULL;
	git_commit			*commit = NULL;
	git_repository_init_options	 io;
	git_checkout_options		 co;
	char				 alt[PATH_MAX + 64], refname[512];
	int				 rc = -1, fd = -1, created = 0;

	if (worktree_open(repo_path, &repo, err, errlen) == -1)
		return -1;
	if (git_repository_is_bare(repo)) {
		snprintf(err, errlen, "%s: a bare repository has no working tree to branch from",
		    repo_path);
		goto out;
	}
	if (base_ref != NULL) {
		if (git_reference_lookup(&head, repo, base_ref) != 0) {
			snprintf(err, errlen, "%s: base %s: no such branch", repo_path,
			    base_ref);
			goto out;
		}
	} else if (git_repository_head(&head, repo) != 0) {
		worktree_err(err, errlen, "cannot read HEAD (no commits yet?)", repo_path);
		goto out;
	}
	if (git_reference_peel((git_object **)&commit, head, GIT_OBJECT_COMMIT) != 0) {
		worktree_err(err, errlen, base_ref != NULL ? "the base is not a commit" :
		    "HEAD is not a commit", repo_path);
		goto out;
	}
	git_oid_tostr(base_out, baselen, git_commit_id(commit));
	if (worktree_objects_dir(repo, objects_out, objlen) == -1) {
		snprintf(err, errlen, "%s: cannot resolve its object store: %s", repo_path,
		    strerror(errno));
		goto out;
	}
	if ((size_t)snprintf(refname, sizeof refname, "refs/heads/%s", branch) >=
	    sizeof refname) {
		snprintf(err, errlen, "%s: branch name too long", branch);
		goto out;
	}
	if (mkdir(path, 0700) == -1) {
		snprintf(err, errlen, "%s: cannot create: %s", path, strerror(errno));
		goto out;
	}
	created = 1;
	if (git_repository_init_options_init(&io, GIT_REPOSITORY_INIT_OPTIONS_VERSION) != 0)
		goto out;
	io.flags = GIT_REPOSITORY_INIT_NO_REINIT;
	io.mode = GIT_REPOSITORY_INIT_SHARED_UMASK;
	io.initial_head = branch;
	if (git_repository_init_ext(&run, path, &io) != 0) {
		worktree_err(err, errlen, "cannot create the run's repository", path);
		goto out;
	}
	git_repository_free(run);
	run = NULL;
	/* The user's objects, read through alternates: the run's writes stay its own. */
	snprintf(alt, sizeof alt, "%s/.git/objects/info/alternates", path);
	if ((fd = open(alt, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
	    0644)) == -1 || dprintf(fd, "%s\n", objects_out) < 0 || close(fd) == -1) {
		fd = -1;
		snprintf(err, errlen, "%s: cannot write: %s", alt, strerror(errno));
		goto out;
	}
	fd = -1;
	if (git_repository_open_ext(&run, path, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) != 0 ||
	    git_reference_create(&ref, run, refname, git_commit_id(commit), 0,
	    "clockwork: run starts here") != 0) {
		worktree_err(err, errlen, "cannot create the run's branch", path);
		goto out;
	}
	if (git_checkout_options_init(&co, GIT_CHECKOUT_OPTIONS_VERSION) != 0)
		goto out;
	co.checkout_strategy = GIT_CHECKOUT_FORCE;
	if (git_checkout_head(run, &co) != 0) {
		worktree_err(err, errlen, "cannot check out the run's branch", path);
		goto out;
	}
	rc = 0;
out:
	if (fd != -1)
		close(fd);
	git_reference_free(ref);
	git_repository_free(run);
	git_commit_free(commit);
	git_reference_free(head);
	git_repository_free(repo);
	/* Nothing of the run exists yet: what was made is the daemon's own to remove. */
	if (rc == -1 && created)
		(void)rmtree_path(path);
	return rc;
}

/*
 * Remove the file at repository path rel beneath the folder root without following a
 * link on the way (each parent opened O_NOFOLLOW); a missing one is not an error.
 */
static int
worktree_unlink_beneath(const char *root, const char *rel)
{
	char	 buf[PATH_MAX], *p, *slash;
	int	 fd, next, rc;

	if (strlen(rel) >= sizeof buf)
		return -1;
	snprintf(buf, sizeof buf, "%s", rel);
	if ((fd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return -1;
	for (p = buf; (slash = strchr(p, '/')) != NULL; p = slash + 1) {
		*slash = '\0';
		next = openat(fd, p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		if (next == -1)
			return errno == ENOENT ? 0 : -1;
		fd = next;
	}
	rc = unlinkat(fd, p, 0);
	close(fd);
	return rc == -1 && errno != ENOENT ? -1 : 0;
}

/* Keep hold's paths out of the worktree wrepo at path (see worktree_adopt). */
static int
worktree_hold_back(git_repository *wrepo, const char *path, const cJSON *hold)
{
	git_index		*idx = NULL;
	const git_index_entry	*e;
	git_index_entry		 copy;
	const cJSON		*h;
	const char		*p;
	int			 rc = -1;

	if (git_repository_index(&idx, wrepo) != 0)
		return -1;
	cJSON_ArrayForEach(h, hold) {
		if ((p = json_get_string(h, "path")) == NULL ||
		    (e = git_index_get_bypath(idx, p, 0)) == NULL)
			continue;	/* deleted by the run: nothing to hold back */
		copy = *e;
		copy.flags |= GIT_INDEX_ENTRY_EXTENDED;
		copy.flags_extended |= GIT_INDEX_ENTRY_SKIP_WORKTREE;
		if (git_index_add(idx, &copy) != 0 || worktree_unlink_beneath(path, p) == -1)
			goto out;
	}
	rc = git_index_write(idx) == 0 ? 0 : -1;
out:
	git_index_free(idx);
	return rc;
}

/*
 * After an import: a linked worktree of repo at path (which must not exist) named
 * name, on branch, checked out by libgit2 from objects git has verified. This is the
 * worktree a person opens: its admin state is written here, not by the run (its .git
 * pointer file, and gitdir, commondir, HEAD and index in the repository's
 * worktrees/<name>: libgit2 writes them all; no per-worktree config is made). The
 * automation files in hold are kept out of its files (SPEC U3).
 */
int
worktree_adopt(const char *repo_path, const char *path, const char *name,
    const char *branch, const cJSON *hold, char *err, size_t errlen)
{
	git_repository			*repo = NULL, *wrepo = NULL;
	git_reference			*ref = NULL;
	git_worktree			*wt = NULL;
	git_worktree_add_options	 opts;
	int				 rc = -1;

	if (worktree_open(repo_path, &repo, err, errlen) == -1)
		return -1;
	if (git_branch_lookup(&ref, repo, branch, GIT_BRANCH_LOCAL) != 0) {
		worktree_err(err, errlen, "no such branch", branch);
		goto out;
	}
	if (git_worktree_add_options_init(&opts, GIT_WORKTREE_ADD_OPTIONS_VERSION) != 0)
		goto out;
	opts.ref = ref;
	opts.checkout_options.checkout_strategy = GIT_CHECKOUT_FORCE;
	/*
	 * Two imports into one repository run at once (each in its own child): libgit2
	 * makes <commondir>/worktrees with "exclusive" and fails when the other import
	 * made it a moment before ("directory exists"). It is made here first, where
	 * its being there already is no error.
	 */
	{
		char	 wdir[PATH_MAX];

		if ((size_t)snprintf(wdir, sizeof wdir, "%s/worktrees",
		    git_repository_commondir(repo)) < sizeof wdir &&
		    mkdir(wdir, 0755) == -1 && errno != EEXIST) {
			snprintf(err, errlen, "%s: %s", wdir, strerror(errno));
			goto out;
		}
	}
	if (git_worktree_add(&wt, repo, name, path, &opts) != 0) {
		worktree_err(err, errlen, "cannot add worktree", repo_path);
		goto out;
	}
	if (cJSON_GetArraySize(hold) > 0 &&
	    (git_repository_open_from_worktree(&wrepo, wt) != 0 ||
	    worktree_hold_back(wrepo, path, hold) == -1)) {
		worktree_err(err, errlen, "cannot hold the run's automation files back", path);
		goto out;
	}
	rc = 0;
out:
	git_repository_free(wrepo);
	git_worktree_free(wt);
	git_reference_free(ref);
	git_repository_free(repo);
	return rc;
}

int
worktree_rev(const char *repo_path, const char *branch, char *out, size_t outlen,
    char *err, size_t errlen)
{
	git_repository	*repo = NULL;
	git_reference	*ref = NULL;
	git_object	*obj = NULL;
	int		 rc = -1;

	if (worktree_open(repo_path, &repo, err, errlen) == -1)
		return -1;
	if (git_branch_lookup(&ref, repo, branch, GIT_BRANCH_LOCAL) != 0 ||
	    git_reference_peel(&obj, ref, GIT_OBJECT_COMMIT) != 0) {
		worktree_err(err, errlen, "cannot read the imported branch", branch);
		goto out;
	}
	git_oid_tostr(out, outlen, git_object_id(obj));
	rc = 0;
out:
	git_object_free(obj);
	git_reference_free(ref);
	git_repository_free(repo);
	return rc;
}

/* 1 when commit tip (hex) is base or in base's history, 0 when not, -1 on error. */
int
worktree_contains(const char *repo_path, const char *base, const char *tip)
{
	git_repository	*repo = NULL;
	git_oid		 b, t;
	int		 rc = -1;

	worktree_init();
	if (git_repository_open_ext(&repo, repo_path, GIT_REPOSITORY_OPEN_NO_SEARCH,
	    NULL) != 0)
		return -1;
	if (git_oid_fromstr(&b, base) == 0 && git_oid_fromstr(&t, tip) == 0)
		rc = git_oid_equal(&b, &t) ? 1 : git_graph_descendant_of(repo, &b, &t);
	git_repository_free(repo);
	return rc < 0 ? -1 : rc;
}

/* Point branch at commit (hex) in repo, creating it; used when a run made no commit. */
int
worktree_branch_at(const char *repo_path, const char *branch, const char *commit,
    char *err, size_t errlen)
{
	git_repository	*repo = NULL;
	git_reference	*ref = NULL;
	git_commit	*c = NULL;
	git_oid		 oid;
	int		 rc = -1;

	if (worktree_open(repo_path, &repo, err, errlen) == -1)
		return -1;
	if (git_oid_fromstr(&oid, commit) != 0 || git_commit_lookup(&c, repo, &oid) != 0) {
		worktree_err(err, errlen, "no such commit", commit);
		goto out;
	}
	if (git_branch_create(&ref, repo, branch, c, 1) != 0) {
		worktree_err(err, errlen, "cannot create branch", repo_path);
		goto out;
	}
	rc = 0;
out:
	git_reference_free(ref);
	git_commit_free(c);
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
 * The diffstat from base to tip, both commits of repo (after an import every object is
 * the user's own, verified: nothing the run controls is read here).
 */
int
worktree_diffstat(const char *repo_path, const char *base, const char *tip,
    struct worktree_stat *st, char *err, size_t errlen)
{
	git_repository		*repo = NULL;
	git_tree		*a = NULL, *b = NULL;
	git_diff		*diff = NULL;
	git_diff_stats		*stats = NULL;
	git_odb			*odb = NULL;
	int			 rc = -1;

	memset(st, 0, sizeof *st);
	if (worktree_open(repo_path, &repo, err, errlen) == -1)
		return -1;
	if (worktree_tree_of(repo, base, &a) != 0 || worktree_tree_of(repo, tip, &b) != 0) {
		worktree_err(err, errlen, "cannot read the run's commits", repo_path);
		goto out;
	}
	if (git_diff_tree_to_tree(&diff, repo, a, b, NULL) != 0) {
		worktree_err(err, errlen, "cannot diff", repo_path);
		goto out;
	}
	/*
	 * What a checkout of the tip writes beyond the base, each path counted (a blob
	 * committed under N names is written N times), from the object headers alone:
	 * a run's 2 GiB file of zeros is a small pack and a huge checkout.
	 */
	if (git_repository_odb(&odb, repo) != 0) {
		worktree_err(err, errlen, "cannot open the object database", repo_path);
		goto out;
	}
	for (size_t i = 0; i < git_diff_num_deltas(diff); i++) {
		const git_diff_delta	*dd = git_diff_get_delta(diff, i);
		git_object_t		 type;
		size_t			 size;

		if (dd->status == GIT_DELTA_DELETED || git_oid_is_zero(&dd->new_file.id) ||
		    dd->new_file.mode == GIT_FILEMODE_COMMIT ||
		    git_odb_read_header(&size, &type, odb, &dd->new_file.id) != 0)
			continue;
		st->added_bytes += (long long)size;
		if ((long long)size > st->largest)
			st->largest = (long long)size;
	}
	st->files = git_diff_num_deltas(diff);
	/* Line counts read every blob whole: not for one too big to hold. */
	if (st->largest > WORKTREE_BLOB_MAX) {
		st->no_lines = 1;
		rc = 0;
		goto out;
	}
	if (git_diff_get_stats(&stats, diff) != 0) {
		worktree_err(err, errlen, "cannot diff", repo_path);
		goto out;
	}
	st->files = git_diff_stats_files_changed(stats);
	st->insertions = git_diff_stats_insertions(stats);
	st->deletions = git_diff_stats_deletions(stats);
	rc = 0;
out:
	git_diff_stats_free(stats);
	git_diff_free(diff);
	git_odb_free(odb);
	git_tree_free(b);
	git_tree_free(a);
	git_repository_free(repo);
	return rc;
}

/*
 * Is path a worktree the daemon adopted: its .git a regular file (a pointer), and the
 * admin dir it names one the user's repository holds? (lstat only: nothing is opened.)
 */
static int
worktree_is_adopted(const char *path)
{
	char		 p[PATH_MAX + 8];
	struct stat	 st;

	snprintf(p, sizeof p, "%s/.git", path);
	return lstat(p, &st) == 0 && S_ISREG(st.st_mode) && st.st_size < 4096;
}

/*
 * The entries of status that are changes, or -1: a file held back by worktree_adopt
 * (skip-worktree, absent on purpose; libgit2 reports it deleted, git does not) is not.
 */
static int
worktree_changes(git_repository *wrepo, git_status_list *status)
{
	const git_status_entry	*e;
	const git_index_entry	*ie;
	git_index		*idx = NULL;
	size_t			 n = git_status_list_entrycount(status);
	int			 changes = 0;

	if (n > 0 && git_repository_index(&idx, wrepo) != 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		e = git_status_byindex(status, i);
		if (e->status == GIT_STATUS_WT_DELETED && e->index_to_workdir != NULL &&
		    (ie = git_index_get_bypath(idx, e->index_to_workdir->old_file.path,
		    0)) != NULL && (ie->flags_extended & GIT_INDEX_ENTRY_SKIP_WORKTREE))
			continue;
		changes++;
	}
	git_index_free(idx);
	return changes;
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
		/*
		 * Only a worktree the daemon adopted (its .git a pointer file the daemon
		 * wrote) is opened: never a repository a run shaped, whose index could be
		 * a FIFO (this runs on the daemon's loop).
		 */
		if (!worktree_is_adopted(path))
			goto out;
		if (git_repository_open_ext(&wrepo, path, GIT_REPOSITORY_OPEN_NO_SEARCH,
		    NULL) != 0)
			goto out;
		git_status_options_init(&sopts, GIT_STATUS_OPTIONS_VERSION);
		sopts.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED;
		if (git_status_list_new(&status, wrepo, &sopts) != 0 ||
		    worktree_changes(wrepo, status) != 0)
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

/* Up to a few changed paths of status, into out ("a.txt, b/c.txt, ..."). */
static void
worktree_change_list(git_repository *wrepo, git_status_list *status, char *out,
    size_t outlen)
{
	const git_status_entry	*e;
	const git_diff_delta	*dd;
	size_t			 off = 0, shown = 0;

	(void)wrepo;
	out[0] = '\0';
	for (size_t i = 0; i < git_status_list_entrycount(status) && off < outlen; i++) {
		e = git_status_byindex(status, i);
		dd = e->index_to_workdir != NULL ? e->index_to_workdir :
		    e->head_to_index;
		if (dd == NULL || dd->old_file.path == NULL)
			continue;
		if (shown++ == 4) {
			snprintf(out + off, outlen - off, ", ...");
			break;
		}
		off += (size_t)snprintf(out + off, outlen - off, "%s%s", off ? ", " : "",
		    dd->new_file.path != NULL ? dd->new_file.path : dd->old_file.path);
	}
}

/*
 * Does the kept worktree wt (of repo, at path) have uncommitted changes? 1 yes (list
 * in changes), 0 no, -1 error. Only a worktree the daemon adopted is opened.
 */
static int
worktree_kept_dirty(git_worktree *wt, const char *path, char *changes, size_t len,
    char *err, size_t errlen)
{
	git_repository		*wrepo = NULL;
	git_status_list		*status = NULL;
	git_status_options	 sopts;
	int			 n, rc = -1;

	if (!worktree_is_adopted(path)) {
		snprintf(err, errlen, "%s: not a worktree Clockwork kept (its .git is not "
		    "the pointer file the daemon wrote)", path);
		return -1;
	}
	if (git_repository_open_from_worktree(&wrepo, wt) != 0) {
		worktree_err(err, errlen, "cannot open the kept worktree", path);
		return -1;
	}
	git_status_options_init(&sopts, GIT_STATUS_OPTIONS_VERSION);
	sopts.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED | GIT_STATUS_OPT_RECURSE_UNTRACKED_DIRS;
	if (git_status_list_new(&status, wrepo, &sopts) != 0 ||
	    (n = worktree_changes(wrepo, status)) == -1) {
		worktree_err(err, errlen, "cannot read the kept worktree's status", path);
		goto out;
	}
	if (n > 0)
		worktree_change_list(wrepo, status, changes, len);
	rc = n > 0;
out:
	git_status_list_free(status);
	git_repository_free(wrepo);
	return rc;
}

/* Detach the kept worktree wt at the commit its HEAD names: its files stay as they are. */
static int
worktree_detach(git_worktree *wt, const char *path, char *err, size_t errlen)
{
	git_repository	*wrepo = NULL;
	git_reference	*head = NULL;
	git_object	*c = NULL;
	int		 rc = -1;

	if (git_repository_open_from_worktree(&wrepo, wt) != 0 ||
	    git_repository_head(&head, wrepo) != 0 ||
	    git_reference_peel(&c, head, GIT_OBJECT_COMMIT) != 0 ||
	    git_repository_set_head_detached(wrepo, git_object_id(c)) != 0)
		worktree_err(err, errlen, "cannot detach the kept worktree", path);
	else
		rc = 0;
	git_object_free(c);
	git_reference_free(head);
	git_repository_free(wrepo);
	return rc;
}

/*
 * Does the record <commondir>/worktrees/<name>/HEAD of a worktree whose directory is
 * gone name refname? (libgit2 cannot read such a worktree's HEAD; git still counts it
 * as holding the branch.) Read without following a link or blocking on a FIFO.
 */
static int
worktree_admin_head_is(git_repository *repo, const char *name, const char *refname)
{
	char	 p[PATH_MAX], buf[600];
	ssize_t	 n;
	int	 fd;

	if ((size_t)snprintf(p, sizeof p, "%sworktrees/%s/HEAD",
	    git_repository_commondir(repo), name) >= sizeof p ||
	    (fd = open(p, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)) == -1)
		return 0;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return strncmp(buf, "ref: ", 5) == 0 && strcmp(buf + 5, refname) == 0;
}

int
worktree_branch_free(const char *repo_path, const char *branch, const char *root,
    int act, struct worktree_hold *h, char *err, size_t errlen)
{
	git_repository	*repo = NULL;
	git_reference	*head = NULL;
	git_strarray	 names = { NULL, 0 };
	git_worktree	*wt = NULL;
	char		 refname[512];
	const char	*p;
	int		 rc = -1, pass, d;

	memset(h, 0, sizeof *h);
	if ((size_t)snprintf(refname, sizeof refname, "refs/heads/%s", branch) >=
	    sizeof refname) {
		snprintf(err, errlen, "%s: branch name too long", branch);
		return -1;
	}
	if (worktree_open(repo_path, &repo, err, errlen) == -1)
		return -1;
	/* The repository's own checkout is the person's: never touched. */
	if (!git_repository_is_bare(repo) && git_repository_head_detached(repo) != 1 &&
	    git_repository_head(&head, repo) == 0 &&
	    strcmp(git_reference_name(head), refname) == 0) {
		snprintf(h->path, sizeof h->path, "%s", git_repository_workdir(repo) != NULL ?
		    git_repository_workdir(repo) : repo_path);
		rc = WORKTREE_OUTSIDE;
		goto out;
	}
	if (git_worktree_list(&names, repo) != 0) {
		worktree_err(err, errlen, "cannot list its worktrees", repo_path);
		goto out;
	}
	/* Pass 0 looks at every holder; pass 1 (act) frees them, only if all can be. */
	for (pass = 0; pass < (act ? 2 : 1); pass++) {
		for (size_t i = 0; i < names.count; i++) {
			git_reference_free(head);
			head = NULL;
			git_worktree_free(wt);
			wt = NULL;
			if (git_worktree_lookup(&wt, repo, names.strings[i]) != 0)
				continue;
			p = git_worktree_path(wt);
			if (git_worktree_validate(wt) != 0) {
				if (!worktree_admin_head_is(repo, names.strings[i], refname))
					continue;
				/* Its directory is gone: only git's record holds the branch. */
				if (pass == 1) {
					git_worktree_prune_options po =
					    GIT_WORKTREE_PRUNE_OPTIONS_INIT;

					po.flags = GIT_WORKTREE_PRUNE_LOCKED;
					if (git_worktree_prune(wt, &po) != 0) {
						worktree_err(err, errlen, "cannot prune the "
						    "record of a removed worktree", repo_path);
						goto out;
					}
				}
				continue;
			}
			if (git_repository_head_for_worktree(&head, repo,
			    names.strings[i]) != 0 ||
			    strcmp(git_reference_name(head), refname) != 0)
				continue;
			snprintf(h->path, sizeof h->path, "%s", p);
			if (!paths_within(p, root)) {
				rc = WORKTREE_OUTSIDE;
				goto out;
			}
			if (pass == 0) {
				d = worktree_kept_dirty(wt, p, h->changes, sizeof h->changes,
				    err, errlen);
				if (d == -1)
					goto out;
				if (d == 1) {
					rc = WORKTREE_DIRTY;
					goto out;
				}
			} else {
				if (worktree_detach(wt, p, err, errlen) == -1)
					goto out;
				h->detached++;
			}
		}
	}
	rc = WORKTREE_FREE;
out:
	git_worktree_free(wt);
	git_strarray_dispose(&names);
	git_reference_free(head);
	git_repository_free(repo);
	return rc;
}

int
worktree_branch_advance(const char *repo_path, const char *branch, const char *tip,
    char *err, size_t errlen)
{
	git_repository	*repo = NULL;
	git_reference	*ref = NULL;
	const git_oid	*cur;
	git_oid		 t;
	char		 hex[GIT_OID_HEXSZ + 1];
	int		 rc = -1, co;

	if (git_oid_fromstr(&t, tip) != 0) {
		snprintf(err, errlen, "%.64s: not a commit id", tip);
		return -1;
	}
	if (worktree_open(repo_path, &repo, err, errlen) == -1)
		return -1;
	if (git_branch_lookup(&ref, repo, branch, GIT_BRANCH_LOCAL) == 0) {
		if ((co = git_branch_is_checked_out(ref)) != 0) {
			if (co < 0)
				worktree_err(err, errlen, "cannot tell where it is checked "
				    "out", branch);
			else
				snprintf(err, errlen, "branch %s is checked out (in %s or one "
				    "of its worktrees) since the run started: it was not moved",
				    branch, repo_path);
			goto out;
		}
		if ((cur = git_reference_target(ref)) == NULL) {
			snprintf(err, errlen, "branch %s is not a plain branch", branch);
			goto out;
		}
		if (!git_oid_equal(cur, &t) && git_graph_descendant_of(repo, &t, cur) != 1) {
			git_oid_tostr(hex, sizeof hex, cur);
			snprintf(err, errlen, "branch %s is at %s, which the run's tip %.40s "
			    "does not contain (it moved while the run worked, or the run "
			    "rewrote its history): it was not moved", branch, hex, tip);
			goto out;
		}
	}
	git_reference_free(ref);
	ref = NULL;
	git_repository_free(repo);
	repo = NULL;
	return worktree_branch_at(repo_path, branch, tip, err, errlen);
out:
	git_reference_free(ref);
	git_repository_free(repo);
	return rc;
}

int
worktree_landed(const char *repo_path, const char *branch, char *into, size_t intolen)
{
	git_repository	*repo = NULL;
	git_reference	*ref = NULL, *head = NULL;
	const git_oid	*tip, *htip;
	int		 landed = 0;

	worktree_init();
	into[0] = '\0';
	if (git_repository_open_ext(&repo, repo_path, GIT_REPOSITORY_OPEN_NO_SEARCH,
	    NULL) != 0)
		return 0;
	if (git_branch_lookup(&ref, repo, branch, GIT_BRANCH_LOCAL) == 0 &&
	    git_repository_head_detached(repo) != 1 &&
	    git_repository_head(&head, repo) == 0 && git_reference_is_branch(head) &&
	    strcmp(git_reference_name(head), git_reference_name(ref)) != 0 &&
	    (tip = git_reference_target(ref)) != NULL &&
	    (htip = git_reference_target(head)) != NULL &&
	    (git_oid_equal(tip, htip) || git_graph_descendant_of(repo, htip, tip) == 1)) {
		snprintf(into, intolen, "%s", git_reference_shorthand(head));
		landed = 1;
	}
	git_reference_free(head);
	git_reference_free(ref);
	git_repository_free(repo);
	return landed;
}

/*
 * Remove the worktree's administrative entry and then its directory at path (the one
 * the caller holds, removed without following links); delete its branch only when
 * asked (the caller asks when the branch is merged, so no commit is lost).
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

	if (worktree_open(repo_path, &repo, err, errlen) == -1)
		return -1;
	if (git_worktree_lookup(&wt, repo, name) == 0) {
		/*
		 * Only git's record: the directory goes by the path the store holds
		 * (gc.c), never by the one an admin file names.
		 */
		popts.flags = GIT_WORKTREE_PRUNE_VALID | GIT_WORKTREE_PRUNE_LOCKED;
		if (git_worktree_prune(wt, &popts) != 0) {
			worktree_err(err, errlen, "cannot prune worktree", repo_path);
			goto out;
		}
	} else if (access(path, F_OK) == 0) {
		snprintf(err, errlen, "%s: %s is not a worktree of this repository",
		    repo_path, path);
		goto out;
	}
	if (rmtree_path(path) == -1) {
		snprintf(err, errlen, "%s: cannot remove: %s", path, strerror(errno));
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
