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
	struct sandbox_pre *pre;	/* NULL, or the cw-sandbox sandbox_prestart() started */
};

/*
 * A cw-sandbox started before its plan exists (sandbox_prestart): its exec, its loader
 * and its C library's start run on the other core while the runner builds the spec.
 * It waits on its socket for PLAN_GO and reads the plan only then; closing the socket
 * instead (sandbox_prestart_abort) ends it having done nothing.
 */
struct sandbox_pre {
	pid_t	 outer;		/* the cw-sandbox process; -1: none */
	int	 sock;		/* our end of its message socket (its fd 3) */
	int	 planfd;	/* the memfd it holds as fd 4, empty until apply_sandbox() */
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
/*
 * Start cw-sandbox for l (its argv, stdio and cgroup are all it needs yet): 0, or -1
 * with err. l->pre must then be set to pre for apply_sandbox(), which takes it over
 * (on success and on failure alike), or pre ended with sandbox_prestart_abort().
 */
int	sandbox_prestart(struct sandbox_pre *, const struct sandbox_launch *, char *err,
	    size_t errlen);
void	sandbox_prestart_abort(struct sandbox_pre *);
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
