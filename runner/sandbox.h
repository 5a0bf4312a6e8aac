/*
 * apply_sandbox(): the one way cw-runner starts anything (SPEC S1). It writes the plan
 * (sandbox/plan.h) and starts cw-sandbox, which makes new PID, IPC and mount (and
 * network, and user) namespaces and applies every layer in a fixed order
 * (sandbox/steps.c; each step mandatory: a failure ends it and is reported to the
 * runner, which starts nothing), then stays as the namespace's PID 1 while a child of
 * its own execs argv. The parent gets the pid (a host pid) of that PID 1 once the exec has
 * happened, or the reason it did not. Waiting on that pid gives the command's status:
 * an exit code as it is, a death by signal N as exit code 128 + N.
 */
#ifndef CW_SANDBOX_H
#define CW_SANDBOX_H
#include <stddef.h>
#include <sys/types.h>

#include <netinet/in.h>

#include "cgroup.h"
#include "runlimits.h"
#include "spec.h"

struct sandbox_launch {
	char *const	*argv;		/* argv[0] resolved through the spec's PATH */
	const char	*cwd;		/* NULL: the spec's workdir */
	int		 fd_in, fd_out, fd_err;	/* -1: /dev/null */
	int		 new_session;	/* 1: setsid() (own process group and session) */
	const struct cgroup_run *cgroup; /* NULL, or the run's cgroup to join first */
	const struct runlimits *rlimits; /* NULL, or the run's rlimits (step 1) */
	/*
	 * With a network namespace (the spec's net_open is 0): TCP sockets the child makes
	 * there, bound to these loopback addresses and listening, before any layer narrows
	 * it; their descriptors are handed back into listen_fds (n_listen of them, -1
	 * where none), so that the runner serves them from its own loop (the permission
	 * bridge, the egress proxy) while the run can reach nothing else.
	 */
	const struct sockaddr_in *listen;
	size_t		 n_listen;
	int		*listen_fds;
};

/* What the running kernel enforced for this run, for the run's report. */
struct sandbox_report {
	int		landlock_abi;		/* 0 when Landlock was not applied */
	int		sandboxed;		/* 0 only for CW_SANDBOX=off */
	int		namespaces;		/* 1: own PID, IPC and mount namespaces */
	int		netns;			/* 1: own network namespace, loopback only */
	int		seccomp;		/* 1 when the seccomp filter applied */
	struct strlist	not_enforced;		/* one sentence per missing layer */
	int		exec_errno;		/* exec itself failed (nothing ran): its errno */
};

/*
 * Call from a single-threaded process: the child allocates between clone and exec.
 * Returns the child's pid, or -1 with err filled ("landlock: ruleset rejected: ...",
 * "namespaces: clone(...): ...") and *refused set to 1 when the sandbox could not be
 * enforced (nothing was started). A spec with a deferred carve (spec_carve_pending)
 * is finished here, in the parent, while the child makes its namespaces: the grants it
 * adds reach the child before Landlock, and the spec holds them on return.
 */
pid_t	apply_sandbox(struct sandbox_spec *, const struct sandbox_launch *,
	    struct sandbox_report *, int *refused, char *err, size_t errlen);
void	sandbox_report_free(struct sandbox_report *);
/*
 * The plan apply_sandbox() hands cw-sandbox for this spec and launch (l may be NULL:
 * no limits, no listeners), with Landlock ABI abi: a new buffer of *len bytes, or -1
 * with err. `cw-runner spec --plan` prints it.
 */
int	sandbox_plan(const struct sandbox_spec *, const struct sandbox_launch *, int abi,
	    char **buf, size_t *len, char *err, size_t errlen);

#endif
