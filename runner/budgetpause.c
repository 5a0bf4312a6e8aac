/*
 * The hold of a run's budget pause (budgetpause.h).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "budgetpause.h"

static double
budgetpause_since(const struct budgetpause *p)
{
	struct timespec	now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - p->since.tv_sec) +
	    (double)(now.tv_nsec - p->since.tv_nsec) / 1e9;
}

int
budgetpause_hold(struct budgetpause *p, const struct cgroup_run *cg, pid_t companion,
    char *err, size_t errlen)
{
	struct proctree_scope	sc = { 0, getpid(), NULL };

	if (p->active)
		return 0;
	p->frozen = 0;
	p->companion = 0;
	proctree_free(&p->stopped);
	if (cg != NULL && cg->version > 0 && cg->freezer && cgroup_run_freeze(cg, 1) == 0) {
		p->frozen = 1;
		p->hold = BUDGETPAUSE_HOLD_FREEZER;
		/* The byok agent runs outside the run's cgroup: it is stopped by signal. */
		if (companion > 0 && kill(companion, SIGSTOP) == 0)
			p->companion = companion;
	} else {
		if (proctree_stop(&p->stopped, &sc) == -1) {
			snprintf(err, errlen, "stop the run's processes: %s", strerror(errno));
			proctree_signal(&p->stopped, SIGCONT);
			proctree_free(&p->stopped);
			return -1;
		}
		p->hold = BUDGETPAUSE_HOLD_SIGSTOP;
	}
	clock_gettime(CLOCK_MONOTONIC, &p->since);
	p->active = 1;
	return 0;
}

void
budgetpause_release(struct budgetpause *p, const struct cgroup_run *cg)
{
	struct proctree_scope	sc = { 0, getpid(), NULL };

	if (!p->active)
		return;
	if (p->frozen)
		(void)cgroup_run_freeze(cg, 0);
	if (p->companion > 0)
		(void)kill(p->companion, SIGCONT);
	if (!p->frozen) {
		/* What was stopped, and anything a look now finds (it was stopped too). */
		(void)proctree_collect(&p->stopped, &sc);
		proctree_signal(&p->stopped, SIGCONT);
	}
	proctree_free(&p->stopped);
	p->total += budgetpause_since(p);
	p->active = 0;
	p->frozen = 0;
	p->companion = 0;
}

double
budgetpause_seconds(const struct budgetpause *p)
{
	return p->total + (p->active ? budgetpause_since(p) : 0);
}

void
budgetpause_free(struct budgetpause *p)
{
	proctree_free(&p->stopped);
}
