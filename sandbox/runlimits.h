/*
 * The rlimit layer of a run's limits (SPEC R2, U1): what holds a run's process and
 * memory limits where the runner cannot make the run a cgroup of its own (a normal
 * user without a delegated subtree).
 *
 *   processes  RLIMIT_NPROC, set in the sandbox child (step 1 of apply_sandbox) inside
 *              the run's own user namespace. Since Linux 5.14 the kernel counts it per
 *              user namespace (ucounts): it bounds the tasks (processes and threads)
 *              of the run only; the user's other processes are not counted against it
 *              (test/integration/rlimit_nproc.c shows both). Without a user namespace
 *              of its own (cw-runner as root, CW_SANDBOX=off) or on an older kernel it
 *              would count every process of the user: then it is not used.
 *   memory     RLIMIT_DATA per process (private writable memory: heap, anonymous
 *              mappings), so that no single process of the run can take more than the
 *              run's whole budget; RLIMIT_AS would also count the address space that
 *              V8, Go and the JVM reserve but never touch, and stop them at start. A
 *              run's processes together are bounded by the runner, which reads their
 *              resident memory (runlimits_usage) and ends the run with limit_memory when
 *              the total reaches the limit. Page cache, kernel memory and memory
 *              shared with processes outside the run are not counted; memory that two
 *              processes of the run share after a fork is counted twice.
 *
 * The runner also counts the run's tasks on the same timer and ends the run with
 * limit_pids when it reaches the limit (RLIMIT_NPROC refuses the next fork, which the
 * runner cannot see).
 */
#ifndef CW_RUNLIMITS_H
#define CW_RUNLIMITS_H
#include <sys/types.h>

struct runlimits {
	long		 nproc;		/* RLIMIT_NPROC, 0: not set */
	long long	 data;		/* RLIMIT_DATA in bytes, 0: not set */
};

/*
 * 1 when this kernel counts RLIMIT_NPROC per user namespace (Linux >= 5.14), so that
 * it can bound one run; 0 when not (or the release cannot be read).
 */
int	runlimits_nproc_per_userns(void);
#define RUNLIMITS_NPROC	0x1
#define RUNLIMITS_DATA	0x2

/*
 * In the sandbox child, before anything of the run executes: set each limit of lim
 * named in which (RUNLIMITS_*) that is not 0, soft and hard (the run cannot raise a
 * hard limit again; a stricter one already there stays). The sandbox sets
 * RLIMIT_NPROC at step 1 and RLIMIT_DATA in the command's process just before its
 * exec: the sandbox's own steps allocate, and under AddressSanitizer (whose shadow
 * memory counts as data) no allocation would succeed under any RLIMIT_DATA. 0, or -1
 * with errno and *what naming the limit that could not be set.
 */
int	runlimits_apply(const struct runlimits *lim, int which, const char **what);
/*
 * The run's usage: init (the run's PID 1, a host pid) and every descendant of it,
 * which in the run's PID namespace is every process of the run; their tasks (threads
 * included) and their resident private memory (RssAnon + RssShmem) summed in bytes.
 * 0, or -1 with errno when /proc cannot be read.
 */
int	runlimits_usage(pid_t init, long *tasks, long long *resident);

#endif
