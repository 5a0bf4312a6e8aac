/*
 * Per-run cgroups (SPEC R2): a process limit and a memory limit for everything a run
 * starts, and a way to freeze and end all of it at once.
 *
 * cw-runner makes one cgroup per run, named clockwork-run-<run id>, and the run's PID 1
 * joins it in the child before anything of the run executes (cgroup_run_join, step 1
 * of apply_sandbox), so every process of the run is born inside. Two mechanisms:
 *
 *   cgroup v2   a child of the delegated subtree the service was given (the systemd
 *               unit has Delegate=yes; clockworkd moves itself into a "daemon" leaf
 *               with cgroup_delegate() so that its cgroup may enable controllers for
 *               siblings): pids.max, memory.max (memory.swap.max 0, memory.oom.group 1),
 *               cgroup.freeze, cgroup.kill.
 *   cgroup v1   where the pids and memory hierarchies are mounted separately (as on
 *               the machine this was built on): a child of the runner's own cgroup in
 *               each of pids, memory and freezer.
 *
 * Where neither can be made, sandbox/runlimits.h is the fallback layer; a limit no
 * layer holds refuses the run unless the user opted in (limits.allow_unenforced). The
 * sentences this module adds to notes say why no cgroup could be made or set.
 */
#ifndef CW_CGROUP_H
#define CW_CGROUP_H
#include <limits.h>
#include <stddef.h>
#include <sys/types.h>

#include "strlist.h"

enum cgroup_ctl { CGROUP_PIDS = 0, CGROUP_MEMORY, CGROUP_FREEZER, CGROUP_NCTL };

/* Which limit a run hit (cgroup_run_hit). */
enum cgroup_hit { CGROUP_HIT_NONE = 0, CGROUP_HIT_MEMORY, CGROUP_HIT_PIDS };

struct cgroup_run {
	int		 version;		/* 0 none made, 1 or 2 */
	char		 dir[CGROUP_NCTL][PATH_MAX]; /* v2: all in dir[0]; "" absent */
	int		 procs[CGROUP_NCTL];	/* cgroup.procs open for joining, or -1 */
	long		 pids_max;		/* enforced process limit, 0 none */
	long long	 mem_max;		/* enforced memory limit in bytes, 0 none */
	int		 freezer;		/* 1: the whole cgroup can be frozen */
};

/* An empty cgroup_run (nothing made, no descriptor open). */
void	cgroup_run_init(struct cgroup_run *);
/*
 * Make the run's cgroup and set its limits (pids_max, mem_max: 0 for none). Best
 * effort: each limit that could not be set adds a sentence to notes. 0 when a cgroup
 * was made (cg->version > 0), -1 when none could be (also noted); ENOMEM only is an
 * error the caller should treat as one.
 */
int	cgroup_run_create(struct cgroup_run *, const char *name, long pids_max,
	    long long mem_max, struct strlist *notes);
/*
 * The run's cgroup as cgroup_run_create made it, if it is still there (limits are
 * not known: 0). For clockworkd, which ends what a runner killed hard left. 0 or -1.
 */
int	cgroup_run_find(struct cgroup_run *, const char *name);
/* In the child, before exec: move the calling process into the cgroup. 0 or -1. */
int	cgroup_run_join(const struct cgroup_run *);
/* In the parent, after the child has started: the join descriptors are not needed. */
void	cgroup_run_close_join(struct cgroup_run *);
/* Which limit has been hit so far (oom kills, refused forks). */
enum cgroup_hit cgroup_run_hit(const struct cgroup_run *);
/* The pids in the cgroup (in our PID namespace). 0, or -1 with errno. */
int	cgroup_run_pids(const struct cgroup_run *, pid_t **out, size_t *n);
/* Freeze (1) or thaw (0) the whole cgroup, waiting for a freeze to finish. */
int	cgroup_run_freeze(const struct cgroup_run *, int frozen);
/*
 * Remove the cgroup directories (version and limits stay, for the report), waiting
 * up to wait_ms for killed members to leave. -1 with errno EBUSY while a process is
 * still in it (the directories are left; err says so), 0 when they are gone. Calling
 * it again is harmless.
 */
int	cgroup_run_remove(struct cgroup_run *, int wait_ms, char *err, size_t errlen);

/*
 * clockworkd, at start: where it runs in a cgroup v2 subtree it owns (Delegate=yes on
 * its user unit, <name>.service, or on a scope made with systemd-run --user --scope
 * -p Delegate=yes, <name>.scope), move itself into a "daemon" leaf and enable the pids and memory controllers for
 * the runs' cgroups beside it. 0 when done or not applicable, -1 with err filled.
 */
int	cgroup_delegate(char *err, size_t errlen);

#endif
