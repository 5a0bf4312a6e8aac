/* runbranch.c: the branch a continued run works on (issue 23; the file says the rules). */
#ifndef CW_RUNBRANCH_H
#define CW_RUNBRANCH_H
#include <stddef.h>

#include "store.h"
#include "worktree.h"

struct daemon;

struct runbranch {
	const char		*code;		/* the API's error code when refused */
	char			 branch[320];
	char			 tip[64];	/* the branch's tip when checked */
	char			 landed_into[256]; /* "": not merged into HEAD's branch */
	struct worktree_hold	 hold;
};
/* 0: r's branch can be continued on; -1: refused (b->code) or failed, err says why. */
int	runbranch_check(struct daemon *, const struct store_task *,
	    const struct store_run *r, struct runbranch *b, char *err, size_t errlen);
/* Free the branch checked by runbranch_check: its kept worktrees are detached. */
int	runbranch_take(struct daemon *, const struct store_task *, struct runbranch *b,
	    char *err, size_t errlen);

#endif
