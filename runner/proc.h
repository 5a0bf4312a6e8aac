/*
 * Process supervision (issue 3 item 6): the runner is a child subreaper, and when a run
 * ends every descendant is ended, including those that called setsid() or double-forked.
 * A signal is only ever sent through a pidfd whose process was checked against the start
 * time recorded when it was found, never to a bare pid that may have been reused. The
 * collecting, freezing and killing are the shared process-tree module's (proctree.h),
 * which clockworkd uses too.
 */
#ifndef CW_PROC_H
#define CW_PROC_H
#include <stddef.h>
#include <sys/types.h>

#include "cgroup.h"

/* Make the calling process the subreaper of its descendants. 0 or -1 (errno). */
int	proc_subreaper(void);

/*
 * End every descendant of the calling process and every member of cg (NULL: none):
 * SIGTERM, then after grace_ms rounds of freeze (cg's freezer, else SIGSTOP) and
 * SIGKILL until none remain (new children of dying processes included), and reap
 * them (common/proctree.c). If main (> 0) is reaped here, its wait status goes in
 * *main_status and *main_reaped is set. Returns the number of processes signalled, or
 * -1 with err filled when some could not be ended; then *survivors (if not NULL) says
 * how many are still alive (at least 1 when the tree could not even be listed).
 */
int	proc_kill_tree(int grace_ms, pid_t main, int *main_status, int *main_reaped,
	    const struct cgroup_run *cg, size_t *survivors, char *err, size_t errlen);

#endif
