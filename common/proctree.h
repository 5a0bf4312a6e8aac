/*
 * The process tree of a run, shared by clockworkd (daemon/supervise.c) and cw-runner
 * (runner/proc.c): collect it, freeze it, kill it, and check what survived, naming
 * every process by pid and start time (procid.h) so that no signal reaches a process
 * that merely inherited a number.
 *
 * A tree is given by a scope: members of a process group (a process that called
 * setsid() leaves the group but not the tree), descendants of a process, and members
 * of a run's cgroup. Killing first freezes: with a cgroup freezer the whole cgroup at
 * once; otherwise every member is stopped with SIGSTOP, collecting again until a look
 * finds nothing new (a stopped process cannot fork). Only then is SIGKILL sent, so no
 * child escapes between the scan and the kill.
 */
#ifndef CW_PROCTREE_H
#define CW_PROCTREE_H
#include <stddef.h>
#include <sys/types.h>

#include "cgroup.h"

struct proctree_proc {
	pid_t			pid;
	unsigned long long	start;
};

/* Every process seen in the tree; members that died stay (their ids match nothing). */
struct proctree {
	struct proctree_proc	*v;
	size_t			 n, cap;
};

struct proctree_scope {
	pid_t				 pgid;		/* > 1: that group's members */
	pid_t				 parent;	/* > 0: its descendants */
	const struct cgroup_run		*cgroup;	/* non-NULL: its members */
};

/* 1 added, 0 already there, -1 out of memory. */
int	proctree_add(struct proctree *, pid_t, unsigned long long start);
int	proctree_has(const struct proctree *, pid_t, unsigned long long start);
void	proctree_free(struct proctree *);
/* Grow the tree to a fixed point over the scope (and children of members). 0 or -1. */
int	proctree_collect(struct proctree *, const struct proctree_scope *);
/* Add the live children of parent (only them, not their descendants). 0 or -1. */
int	proctree_children(struct proctree *, pid_t parent);
/* Send sig to every member still alive; returns how many were signalled. */
int	proctree_signal(const struct proctree *, int sig);
/* How many members are still alive (not exited, not zombies), by start time. */
size_t	proctree_alive(const struct proctree *);
/*
 * Freeze the scope (cgroup freezer, else SIGSTOP rounds), SIGKILL every member, then
 * thaw a frozen cgroup so the kills land. Returns how many were signalled, or -1.
 */
int	proctree_kill(struct proctree *, const struct proctree_scope *);

/*
 * Stop the scope without a freezer (a run's budget pause): SIGSTOP every member,
 * collecting again until a look finds nothing new. Returns how many are alive (and
 * stopped), or -1. proctree_signal(t, SIGCONT) lets them go on.
 */
int	proctree_stop(struct proctree *, const struct proctree_scope *);

#endif
