/*
 * The branch a continued run works on (issue 23): `cwctl run continue RUN` runs on
 * RUN's own branch, so that its commits land on top of RUN's and whoever lands,
 * reviews or checks out that branch afterwards sees both runs' work. One run at a
 * time may hold a branch: the store records the holder (runs.branch, with a unique
 * index over runs that have not ended), and git's own rule (a branch is checked out in
 * one worktree at most) is met by detaching the earlier run's kept worktree, which
 * stays for inspection with its files untouched.
 *
 * What is refused, each with a code (cwctl's exit status in parentheses) and nothing
 * changed:
 *   run_active (7)          RUN has not ended
 *   branch_held (7)         another run that has not ended holds the branch
 *   branch_gone (8)         the branch is not in the repository (discarded or deleted:
 *                           a person's choice that is not undone behind their back;
 *                           the message says how to recreate it), or RUN's work was
 *                           never imported
 *   branch_checked_out (8)  the branch is checked out outside Clockwork (the
 *                           repository's own checkout, or a person's worktree)
 *   worktree_dirty (8)      a kept worktree of the branch has uncommitted changes: the
 *                           person commits them on the branch (the continued run then
 *                           starts from them) or discards them
 * What is allowed and said: a branch already merged (the continued run's commits go
 * on top of it; landing it again brings only them), and a branch that moved since RUN
 * ended (the run starts from its current tip, and its report records both commits).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "daemon.h"
#include "runbranch.h"
#include "store.h"
#include "worktree.h"

int
runbranch_check(struct daemon *d, const struct store_task *t, const struct store_run *r,
    struct runbranch *b, char *err, size_t errlen)
{
	char	holder[STORE_ID_LEN], root[PATH_MAX], e[512];
	int	live = 0, rc;

	memset(b, 0, sizeof *b);
	b->code = "internal";
	if (!store_run_status_terminal(r->status)) {
		b->code = "run_active";
		snprintf(err, errlen, "run %s has not ended yet (%s): continue it once it "
		    "ends", r->id, store_run_status_name(r->status));
		return -1;
	}
	if (t->repo == NULL || r->branch == NULL) {
		b->code = "branch_gone";
		snprintf(err, errlen, "run %s has no branch in a repository to continue on",
		    r->id);
		return -1;
	}
	snprintf(b->branch, sizeof b->branch, "%s", r->branch);
	if ((rc = store_run_branch_holder(d->store, r->branch, r->id, holder,
	    sizeof holder, &live)) == -1) {
		snprintf(err, errlen, "%s", store_errmsg(d->store));
		return -1;
	}
	if (rc == 1 && live) {
		b->code = "branch_held";
		snprintf(err, errlen, "branch %s is held by run %s, which has not ended: one "
		    "run at a time works on a branch; continue once it ends", r->branch,
		    holder);
		return -1;
	}
	if (worktree_rev(t->repo, r->branch, b->tip, sizeof b->tip, e, sizeof e) == -1) {
		b->code = "branch_gone";
		if (r->final_commit == NULL)
			snprintf(err, errlen, "run %s's work was never imported into %s (its "
			    "report says why): there is no branch %s to continue on", r->id,
			    t->repo, r->branch);
		else
			snprintf(err, errlen, "branch %s is no longer in %s (discarded or "
			    "deleted): nothing to continue on; to continue anyway, recreate "
			    "it first: git -C %s branch %s %s", r->branch, t->repo, t->repo,
			    r->branch, r->final_commit);
		return -1;
	}
	snprintf(root, sizeof root, "%s/worktrees", d->home);
	switch (worktree_branch_free(t->repo, r->branch, root, 0, &b->hold, e, sizeof e)) {
	case WORKTREE_FREE:
		break;
	case WORKTREE_OUTSIDE:
		b->code = "branch_checked_out";
		snprintf(err, errlen, "branch %s is checked out at %s: check out another "
		    "branch there (or remove that worktree) first; a continued run must be "
		    "the only one to move it", r->branch, b->hold.path);
		return -1;
	case WORKTREE_DIRTY:
		b->code = "worktree_dirty";
		snprintf(err, errlen, "the kept worktree %s of branch %s has uncommitted "
		    "changes (%s): commit them on the branch (the continued run then starts "
		    "from them) or discard them (git -C %s stash -u), then continue again; "
		    "nothing was changed", b->hold.path, r->branch, b->hold.changes,
		    b->hold.path);
		return -1;
	default:
		snprintf(err, errlen, "%s", e);
		return -1;
	}
	(void)worktree_landed(t->repo, r->branch, b->landed_into, sizeof b->landed_into);
	b->code = NULL;
	return 0;
}

int
runbranch_take(struct daemon *d, const struct store_task *t, struct runbranch *b,
    char *err, size_t errlen)
{
	char	root[PATH_MAX];

	err[0] = '\0';
	snprintf(root, sizeof root, "%s/worktrees", d->home);
	if (worktree_branch_free(t->repo, b->branch, root, 1, &b->hold, err,
	    errlen) != WORKTREE_FREE) {
		if (err[0] == '\0')
			snprintf(err, errlen, "branch %s is no longer free (checked out at %s)",
			    b->branch, b->hold.path);
		return -1;
	}
	return 0;
}
