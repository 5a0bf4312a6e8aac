/*
 * A run's budget pause (issue 23): when a run reaches its dollar, turn or time budget
 * and its task gives a person time to answer (budget_wait), the run is held still
 * instead of ended, and asked about.
 *
 * Two holds, and the run's record names the one that applied:
 *   "cgroup freezer"  the run's cgroup is frozen (cgroup.h: v1 freezer.state or v2
 *                     cgroup.freeze), every process in it at once; the byok agent,
 *                     which runs outside the run's cgroup, is stopped with SIGSTOP;
 *   "SIGSTOP"         where there is no freezer (a normal user without a delegated
 *                     cgroup): every descendant of the runner is stopped with SIGSTOP,
 *                     looking again until a look finds nothing new (proctree_stop).
 *                     A stopped process cannot run, fork, send a tool call or a model
 *                     request; nothing of the run is left running to send SIGCONT.
 * Either way the run's next tool call and model request wait with it.
 */
#ifndef CW_BUDGETPAUSE_H
#define CW_BUDGETPAUSE_H
#include <sys/types.h>
#include <time.h>

#include "cgroup.h"
#include "proctree.h"

#define BUDGETPAUSE_HOLD_FREEZER	"cgroup freezer"
#define BUDGETPAUSE_HOLD_SIGSTOP	"SIGSTOP"

struct budgetpause {
	int			 active;
	const char		*hold;		/* BUDGETPAUSE_HOLD_*, while active */
	struct timespec		 since;		/* CLOCK_MONOTONIC, while active */
	double			 total;		/* seconds held, ended pauses */
	int			 frozen;	/* the cgroup was frozen */
	pid_t			 companion;	/* stopped with SIGSTOP beside the freeze */
	struct proctree		 stopped;	/* the SIGSTOP hold's processes */
};

/*
 * Hold the run still: the cgroup's freezer where cg has one (and SIGSTOP to
 * companion, > 0, which is outside it), else SIGSTOP to every descendant of the
 * calling process. 0 with p->hold set, or -1 with err (nothing is left held).
 */
int	budgetpause_hold(struct budgetpause *, const struct cgroup_run *cg,
	    pid_t companion, char *err, size_t errlen);
/* Let the run go on (thaw, SIGCONT); the held time is added to p->total. */
void	budgetpause_release(struct budgetpause *, const struct cgroup_run *cg);
/* Seconds held so far, the current pause included. */
double	budgetpause_seconds(const struct budgetpause *);
void	budgetpause_free(struct budgetpause *);

#endif
