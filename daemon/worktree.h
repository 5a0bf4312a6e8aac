/* worktree.c: a run's own repository, and the user's repository after import (libgit2). */
#ifndef CW_WORKTREE_H
#define CW_WORKTREE_H
#include <limits.h>
#include <stddef.h>

#include <cjson/cJSON.h>

struct worktree_stat {
	size_t		files, insertions, deletions;
	long long	added_bytes;	/* every added or changed file's size, path by path */
	long long	largest;	/* the largest of them */
	int		no_lines;	/* a file over WORKTREE_BLOB_MAX: lines not counted */
};
/* A file larger than this is not read for the diffstat's line counts. */
#define WORKTREE_BLOB_MAX	(256LL * 1024 * 1024)
void	worktree_init(void);
void	worktree_shutdown(void);
/* err = "PATH: WHAT: <libgit2's last error>", for every caller of libgit2 in daemon/. */
void	worktree_err(char *err, size_t errlen, const char *what, const char *path);
/*
 * The blob of tree entry e, named path in repo_path, for a file read from a commit (a
 * jobs file, Claude's settings): a regular file only, never a link, and at most max
 * bytes, its size read from the object's header before the object itself. *out is
 * freed with git_blob_free. 0, or -1 with err naming repo_path, path and why.
 */
struct git_repository;
struct git_tree_entry;
struct git_blob;
/* Open the repository at repo_path exactly (no search upwards); err names it if not. */
int	worktree_open(const char *repo_path, struct git_repository **repo, char *err,
	    size_t errlen);
int	worktree_tree_blob(struct git_repository *repo, const struct git_tree_entry *e,
	    const char *repo_path, const char *path, size_t max, struct git_blob **out,
	    char *err, size_t errlen);
/*
 * The directory name at the top of a commit's tree root (.clockwork, .claude): 1 with
 * *dir (freed with git_tree_free), 0 when there is none (no entry, or a file of that
 * name), -1 with err naming repo_path and why (a symbolic link is refused).
 */
struct git_tree;
int	worktree_tree_dir(struct git_repository *repo, const struct git_tree *root,
	    const char *repo_path, const char *name, struct git_tree **dir, char *err,
	    size_t errlen);
int	worktree_create_run(const char *repo, const char *path, const char *branch,
	    char *base_out, size_t baselen, char *objects_out, size_t objlen, char *err,
	    size_t errlen);
int	worktree_create_run_at(const char *repo, const char *base_ref, const char *path,
	    const char *branch, char *base_out, size_t baselen, char *objects_out,
	    size_t objlen, char *err, size_t errlen);
/*
 * hold: [{path, status}] (review_automation) to keep out of the checkout: removed from
 * its files and marked skip-worktree in its index, so git shows the tree clean and no
 * tool opened there reads them. NULL: none.
 */
int	worktree_adopt(const char *repo, const char *path, const char *name,
	    const char *branch, const cJSON *hold, char *err, size_t errlen);
int	worktree_branch_at(const char *repo, const char *branch, const char *commit,
	    char *err, size_t errlen);
int	worktree_contains(const char *repo, const char *base, const char *tip);
/* The commit a branch of repo points at, hex, in out. */
int	worktree_rev(const char *repo, const char *branch, char *out, size_t outlen,
	    char *err, size_t errlen);
int	worktree_diffstat(const char *repo, const char *base, const char *tip,
	    struct worktree_stat *, char *err, size_t errlen);
/* 1 when nothing would be lost by pruning: branch merged into repo HEAD, tree clean. */
int	worktree_merged(const char *repo, const char *path, const char *branch);
int	worktree_remove(const char *repo, const char *path, const char *name,
	    const char *branch, int delete_branch, char *err, size_t errlen);
/*
 * Who has branch checked out in repo (a continued run's branch must be free, issue 23).
 * WORKTREE_FREE: nobody but kept worktrees of runs under root (the daemon's
 * worktrees/), each clean; with act they are then detached (HEAD at the same commit,
 * files untouched) so the branch is free, and a record whose directory is gone is
 * pruned; h->path names the last one. WORKTREE_OUTSIDE: checked out at h->path
 * outside root (the repository's own checkout, or a person's worktree).
 * WORKTREE_DIRTY: a kept worktree at h->path has uncommitted changes (h->changes
 * lists some). -1: err says what failed. Nothing is changed unless all are free.
 */
#define WORKTREE_FREE		0
#define WORKTREE_OUTSIDE	1
#define WORKTREE_DIRTY		2
struct worktree_hold {
	char	path[PATH_MAX];
	char	changes[256];
	int	detached;	/* kept worktrees detached (act) */
};
int	worktree_branch_free(const char *repo, const char *branch, const char *root,
	    int act, struct worktree_hold *h, char *err, size_t errlen);
/*
 * The import's move of branch to tip (hex): created when missing; when it exists it
 * moves only forward (tip contains its commit) and only when no checkout has it, so
 * a continued run never drops the commits of the run it continues, or moves a branch
 * under a person's checkout. err says why not.
 */
int	worktree_branch_advance(const char *repo, const char *branch, const char *tip,
	    char *err, size_t errlen);
/* 1 when branch's tip is in the history of the branch repo's HEAD is on (into). */
int	worktree_landed(const char *repo, const char *branch, char *into, size_t intolen);
int	worktree_is_repo(const char *path);
int	worktree_check_repo(const char *path, char *why, size_t whylen);

#endif
