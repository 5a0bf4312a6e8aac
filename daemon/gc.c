/*
 * Retention of finished runs' worktrees (SPEC W1): per task, the newest keep_runs
 * finished runs keep their worktree; an older one is pruned only when nothing would be
 * lost — its branch is merged into the repository's HEAD and its tree is clean, or it
 * was exported. "cwctl gc --force" prunes older worktrees regardless (their branches,
 * and so their commits, stay). Scratch directories have nothing to merge and go once
 * they are older than the newest keep_runs. Reports and logs stay in any case.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "json.h"
#include "log.h"
#include "paths.h"
#include "rmtree.h"

/*
 * rm -rf of the path the store holds (never one an admin file names), from the
 * directory down without following a link or opening a FIFO, only under
 * $CLOCKWORK_HOME/worktrees.
 */
static int
gc_remove_dir(struct daemon *d, const char *path)
{
	char	root[PATH_MAX];

	if ((size_t)snprintf(root, sizeof root, "%s/worktrees", d->home) >= sizeof root) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (!paths_within(path, root) || strcmp(path, root) == 0) {
		errno = EPERM;
		return -1;
	}
	return rmtree_path(path);
}

static int
gc_task(struct daemon *d, const struct store_task *t, int force, struct gc_result *res,
    cJSON *list)
{
	struct store_run	*v;
	size_t			 n, finished = 0;
	char			 err[512];
	int			 merged, prune;

	if (store_run_list(d->store, t->id, STORE_RUN_ANY, 0, &v, &n) == -1)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (!store_run_status_terminal(v[i].status))
			continue;
		if (finished++ < (size_t)(d->cfg.keep_runs > 0 ? d->cfg.keep_runs : 0) ||
		    v[i].worktree == NULL || access(v[i].worktree, F_OK) != 0) {
			if (v[i].worktree != NULL && access(v[i].worktree, F_OK) == 0)
				res->kept++;
			continue;
		}
		merged = 0;
		if (v[i].branch != NULL && t->repo != NULL) {
			merged = worktree_merged(t->repo, v[i].worktree, v[i].branch);
			prune = force || merged || v[i].exported > 0;
		} else
			prune = 1;
		if (!prune) {
			res->kept++;
			continue;
		}
		if (v[i].branch != NULL && t->repo != NULL) {
			if (worktree_remove(t->repo, v[i].worktree, v[i].id, v[i].branch, merged,
			    err, sizeof err) == -1) {
				log_warn("gc: run %s: %s", v[i].id, err);
				res->kept++;
				continue;
			}
			if (access(v[i].worktree, F_OK) == 0)
				gc_remove_dir(d, v[i].worktree);
		} else if (gc_remove_dir(d, v[i].worktree) == -1) {
			log_warn("gc: run %s: cannot remove %s: %s", v[i].id, v[i].worktree,
			    strerror(errno));
			res->kept++;
			continue;
		}
		log_info("gc: pruned the worktree of run %s (%s)", v[i].id,
		    merged ? "merged" : v[i].exported ? "exported" : force ? "forced" :
		    "scratch");
		res->pruned++;
		if (list != NULL)
			cJSON_AddItemToArray(list, cJSON_CreateString(v[i].id));
	}
	store_run_list_free(v, n);
	return 0;
}

/* task_id 0: every task. */
int
gc_run(struct daemon *d, int64_t task_id, int force, struct gc_result *res,
    cJSON *list)
{
	struct store_task	*tv, t;
	size_t			 n;
	int			 rc = 0;

	memset(res, 0, sizeof *res);
	if (task_id != 0) {
		if (store_task_get(d->store, task_id, &t) != 1)
			return -1;
		rc = gc_task(d, &t, force, res, list);
		store_task_free(&t);
		return rc;
	}
	if (store_task_list(d->store, &tv, &n) == -1)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (gc_task(d, &tv[i], force, res, list) == -1)
			rc = -1;
	store_task_list_free(tv, n);
	return rc;
}
