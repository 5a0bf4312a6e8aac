/*
 * The plan: everything cw-sandbox needs to build one sandbox, decided by cw-runner
 * (spec.c: the view, the grants, the environment; run.c: the limits) and handed over
 * in a memfd on fd PLAN_FD: `cw-sandbox --plan-fd 4 -- CMD [ARG...]`. cw-sandbox
 * decides nothing; it parses the plan and takes the steps (sandbox/steps.c).
 *
 * The format, built for a parser that must refuse rather than guess:
 *
 *   "CWPLAN1\n", then records: one tag byte, a 4-byte big-endian length, that many
 *   bytes of value; the last record is PLAN_END with length 0, and nothing follows.
 *
 * A string value holds no NUL; a number is decimal text ("0", "-1" refused where a
 * count or a flag is meant). A list is its tag repeated. Every length is bounded
 * (PLAN_MAX_*), every tag is known, every scalar appears at most once.
 *
 * The same header defines the messages cw-sandbox (and the runner's own child before
 * it has exec'd cw-sandbox) sends back on fd PLAN_MSGFD, a SOCK_SEQPACKET socket.
 */
#ifndef CW_PLAN_H
#define CW_PLAN_H
#include <sys/socket.h>
#include <stddef.h>

#include <netinet/in.h>

#include "runlimits.h"
#include "spec.h"

#define PLAN_MSGFD		3
#define PLAN_FD			4

#define PLAN_MAGIC		"CWPLAN1\n"
#define PLAN_MAX		(8 << 20)	/* the whole plan, bytes */
#define PLAN_MAX_VALUE		(256 << 10)	/* one value, bytes */
#define PLAN_MAX_LIST		65536		/* entries in one list */
#define PLAN_MAX_LISTEN		4		/* listeners in a network namespace */

struct plan {
	struct sandbox_spec	 spec;	/* the fields of the view and the rules only */
	int			 abi;	/* the Landlock ABI the runner probed */
	int			 carve;	/* 1: the ruleset comes on PLAN_MSGFD (sandbox.c) */
	int			 new_session;	/* 1: setsid(); else setpgid(0, 0) */
	char			*cwd;	/* NULL: spec.workdir */
	struct runlimits	 lim;	/* 0 where not set */
	struct sockaddr_in	 listen[PLAN_MAX_LISTEN];
	size_t			 n_listen;
};

/*
 * Serialise: the spec (its view and rules; the rest of it, notes and the carve's
 * state, is the runner's), plus the launch. A new buffer in *buf of *len bytes, or -1
 * with err (too long for the parser: PLAN_MAX_*; out of memory).
 */
int	plan_build(const struct plan *, char **buf, size_t *len, char *err,
	    size_t errlen);
/*
 * Parse len bytes of buf into p (zeroed first; plan_free it either way). 0, or -1
 * with err naming the record and what is wrong with it.
 */
int	plan_parse(const char *buf, size_t len, struct plan *p, char *err, size_t errlen);
void	plan_free(struct plan *);

/* Messages on PLAN_MSGFD, child to runner. */
enum sandbox_msgkind {
	SANDBOX_MSG_NOTE = 1,	/* a layer narrowed: text for the report */
	SANDBOX_MSG_FATAL,	/* a step failed: nothing of the command runs */
	SANDBOX_MSG_EXEC,	/* every layer applied, the command's exec failed */
	SANDBOX_MSG_FDS,	/* the listeners (SCM_RIGHTS) */
	SANDBOX_MSG_PID,	/* pid: the run's PID 1, a child of the runner */
	SANDBOX_MSG_CLONE,	/* err: why the namespaces could not be made */
};

struct sandbox_msg {
	int	kind;
	int	err;		/* errno of the failed step */
	int	pid;		/* SANDBOX_MSG_PID */
	char	text[500];	/* "step: detail" */
};

/*
 * A deferred carve's end, runner to sandbox on the same socket: one message "carved"
 * with the Landlock ruleset (SCM_RIGHTS) that the runner made before the start and has
 * added the carve's read grants to. A sandbox that sees the socket end first, or any
 * other message, runs nothing.
 */
#define SANDBOX_CARVED		"carved"

/* Control data of one descriptor, aligned as a cmsghdr (both sides of the socket). */
union plan_cmsg_fd {
	char		 buf[CMSG_SPACE(sizeof(int))];
	struct cmsghdr	 align;
};

/* A message of one buffer, with room for control data, for sendmsg or recvmsg. */
void	plan_msghdr(struct msghdr *mh, struct iovec *iov, void *base, size_t len,
	    void *ctl, size_t ctllen);

#endif
