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
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "daemon.h"
#include "gc.h"
#include "log.h"
#include "paths.h"
#include "rmtree.h"
#include "store.h"
#include "worktree.h"

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

/*
 * May gc delete run r's branch? Not while another run holds it, and not for an older
 * run of a branch a later run continued on (issue 23): the newest run of a branch
 * decides for it, so a merged first run never takes the second run's work away.
 */
static int
gc_branch_ours(struct daemon *d, const struct store_run *r)
{
	struct store_run	other;
	char			id[STORE_ID_LEN];
	int			live = 0, rc, newer;

	if (r->branch == NULL || (rc = store_run_branch_holder(d->store, r->branch, r->id,
	    id, sizeof id, &live)) == -1)
		return 0;
	if (rc == 0)
		return 1;
	if (live)
		return 0;
	if (store_run_get(d->store, id, &other) != 1)
		return 0;
	newer = other.created_at != NULL && r->created_at != NULL &&
	    strcmp(other.created_at, r->created_at) > 0;
	store_run_free(&other);
	return !newer;
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
			if (worktree_remove(t->repo, v[i].worktree, v[i].id, v[i].branch,
			    merged && gc_branch_ours(d, &v[i]), err, sizeof err) == -1) {
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

/* Milliseconds since the epoch of a store timestamp, or -1. */
static long long
gc_time_ms(const char *ts)
{
	struct tm	tm;
	int		ms = 0;
	char		*end;

	if (ts == NULL)
		return -1;
	memset(&tm, 0, sizeof tm);
	if ((end = strptime(ts, "%Y-%m-%dT%H:%M:%S", &tm)) == NULL)
		return -1;
	if (*end == '.')
		ms = atoi(end + 1);
	return (long long)timegm(&tm) * 1000 + ms;
}

/*
 * An archived task's tool caches (<home>/caches/tasks/<id>, SPEC U2) serve no later
 * run: they go once none of its runs is still going. The tree was written by runs, so
 * rmtree_path walks it without following a link; <home>/caches/tasks is the daemon's.
 */
static void
gc_task_caches(struct daemon *d, const struct store_task *t, int busy,
    struct gc_result *res)
{
	char	path[PATH_MAX];

	if (busy || (size_t)snprintf(path, sizeof path, "%s/caches/tasks/%lld", d->home,
	    (long long)t->id) >= sizeof path || access(path, F_OK) != 0)
		return;
	if (rmtree_path(path) == -1) {
		log_warn("gc: archived task %s: cannot remove its caches %s: %s", t->name,
		    path, strerror(errno));
		return;
	}
	log_info("gc: archived task %s: its tool caches removed", t->name);
	res->caches++;
}

/* An archived task's kept conversations: no run of it can be continued any more. */
static void
gc_task_conversations(struct daemon *d, const struct store_task *t, int busy)
{
	char	path[PATH_MAX];

	if (busy || (size_t)snprintf(path, sizeof path, "%s/conversations/tasks/%lld",
	    d->home, (long long)t->id) >= sizeof path || access(path, F_OK) != 0)
		return;
	if (rmtree_path(path) == -1) {
		log_warn("gc: archived task %s: cannot remove its kept conversations %s: %s",
		    t->name, path, strerror(errno));
		return;
	}
	log_info("gc: archived task %s: its kept conversations removed", t->name);
}

/*
 * An archived task (`task rm`) runs no more, so its worktrees and branches are only
 * clutter once nothing would be lost: a run's worktree and branch go when the branch
 * is merged, or when the run ended more than archive_retention_days ago (then an
 * unmerged branch goes too: the person removed the task that long ago). --force
 * removes the worktrees of the rest but keeps their branches.
 */
static int
gc_archived(struct daemon *d, const struct store_task *t, int force,
    struct gc_result *res, cJSON *list)
{
	struct store_run	*v;
	size_t			 n;
	char			 err[512];
	long long		 ended, now;
	long long		 keep = (long long)d->cfg.archive_retention_days * 86400000LL;
	int			 merged, expired, has_wt, busy = 0;

	now = clock_wall_ms();
	if (store_run_list(d->store, t->id, STORE_RUN_ANY, 0, &v, &n) == -1)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (!store_run_status_terminal(v[i].status)) {
			busy = 1;
			continue;
		}
		has_wt = v[i].worktree != NULL && access(v[i].worktree, F_OK) == 0;
		if (t->repo == NULL || v[i].branch == NULL) {
			if (has_wt && gc_remove_dir(d, v[i].worktree) == 0) {
				res->pruned++;
				if (list != NULL)
					cJSON_AddItemToArray(list, cJSON_CreateString(v[i].id));
			}
			continue;
		}
		merged = worktree_merged(t->repo, has_wt ? v[i].worktree : "/nonexistent",
		    v[i].branch);
		ended = gc_time_ms(v[i].ended_at);
		expired = ended >= 0 && now - ended >= keep;
		if (!merged && !expired && !force) {
			if (has_wt)
				res->kept++;
			continue;
		}
		if (!has_wt && !merged && !expired)
			continue;
		if (worktree_remove(t->repo, v[i].worktree != NULL ? v[i].worktree :
		    "/nonexistent", v[i].id, v[i].branch, (merged || expired) &&
		    gc_branch_ours(d, &v[i]), err, sizeof err) == -1) {
			log_warn("gc: run %s of archived task %s: %s", v[i].id, t->name, err);
			res->kept++;
			continue;
		}
		log_info("gc: archived task %s: run %s's worktree%s removed (%s)", t->name,
		    v[i].id, merged || expired ? " and branch" : "", merged ? "merged" :
		    expired ? "past the retention" : "forced");
		res->pruned++;
		if (list != NULL)
			cJSON_AddItemToArray(list, cJSON_CreateString(v[i].id));
	}
	store_run_list_free(v, n);
	gc_task_caches(d, t, busy, res);
	gc_task_conversations(d, t, busy);
	return 0;
}

/* task_id 0: every task, archived ones included. */
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
	if (store_task_list_archived(d->store, &tv, &n) == -1)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (gc_archived(d, &tv[i], force, res, list) == -1)
			rc = -1;
	store_task_list_free(tv, n);
	return rc;
}
