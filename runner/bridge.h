/*
 * The permission bridge (SPEC B1-B3): one loopback HTTP server per run, on libevent's
 * evhttp, serving two routes.
 *
 *   POST /floor  cw-floor-hook's request: the PreToolUse JSON. Bash commands go through
 *                floor_evaluate(); the answer is {"decision":"allow"|"deny","reason":..}.
 *   POST /mcp    an MCP server over Streamable HTTP (JSON-RPC 2.0) with one tool, the
 *                approval tool named by --permission-prompt-tool. A call is checked
 *                against the floor, then held until bridge_decide() answers it by id or
 *                bridge_expire() ends every pending call.
 *
 * It binds 127.0.0.1 only, refuses bodies past CW_BRIDGE_MAX_BODY without reading them,
 * holds at most CW_BRIDGE_MAX_PENDING approvals, and requires the run token header on
 * every request (which stops stray local clients, not the agent: see docs/SECURITY.md).
 * Everything it wants the daemon to know leaves through the emit callback as a
 * complete wire message (event or approval_request).
 */
#ifndef CW_BRIDGE_H
#define CW_BRIDGE_H
#include <stddef.h>

#include <cjson/cJSON.h>

struct asklimit;
struct autoallow_rule;
struct event_base;
struct floor_policy;
struct bridge;

#define BRIDGE_TOOL_NAME	"approve"
#define BRIDGE_RESERVED_TOOL	"budget"	/* the runner's budget question (run.c) */
#define BRIDGE_TIMEOUT_MESSAGE	"no answer before the run's time budget ended"
#define BRIDGE_MAX_CONNS	64	/* open connections; 16 held approvals among them */
#define BRIDGE_DEADLINE_MS	30000	/* accept to a whole request */

struct bridge_config {
	const char			*run_id;
	const char			*token;		/* value of CW_HOOK_RUN_HEADER */
	const struct floor_policy	*policy;
	int				 port;		/* 0: any free port */
	int				 defer_listen;	/* 1: no socket now; port is
							   where bridge_adopt's will be */
	size_t				 max_body;	/* 0: CW_BRIDGE_MAX_BODY */
	int				 max_pending;	/* 0: CW_BRIDGE_MAX_PENDING */
	int				 hold_seconds;	/* HTTP idle limit; >= the run's budget */
	/*
	 * The run's approval budget (common/asklimit.h), shared with the egress proxy;
	 * NULL: none beyond max_pending. Not owned.
	 */
	struct asklimit			*asks;
	/*
	 * Who answers (common/autoallow.h): the risks a person is asked about
	 * (AUTOALLOW_BIT mask; approvals.ask, the task's over the global one), and the
	 * task's remembered families. An ordinary call runs without asking only once
	 * bridge_set_sandboxed() said the run is sandboxed. ask_set 0: every call is
	 * asked, as a bridge that was told nothing must.
	 */
	int				 ask_set;
	unsigned			 ask;
	const struct autoallow_rule	*rules;
	size_t				 n_rules;
	/* Families the task always asks about (its ask rules; max_risk unused). */
	const struct autoallow_rule	*ask_rules;
	size_t				 n_ask_rules;
	/*
	 * The engine's reading of its hook body (runner/engine.h, floor_command): the
	 * shell command, or none. NULL: /floor refuses every body (no hook engine).
	 */
	int				(*floor_command)(const cJSON *body,
					    const char **command);
	/* 1: /floor answers "ask" when the policy would ask (engine.h, hook_asks). */
	int				 hook_asks;
	/* A wire message for the daemon; the callee owns msg. */
	void				(*emit)(void *arg, cJSON *msg);
	void				*arg;
};

/* Start serving. NULL on failure with err filled (bind, ENOMEM). */
struct bridge	*bridge_new(struct event_base *, const struct bridge_config *,
		    char *err, size_t errlen);
int		 bridge_port(const struct bridge *);
/* Serve a listening socket made in the run's network namespace (owns fd). */
int		 bridge_adopt(struct bridge *, int fd, char *err, size_t errlen);
/*
 * Answer the pending approval id: allow (1) or deny (0), message for a deny. Returns 0,
 * or -1 when no approval with that id is pending (unknown, forged or already answered):
 * nothing changes then.
 */
int		 bridge_decide(struct bridge *, const char *id, int allow,
		    const char *message);
/* The run has its sandbox (1) or runs without it (0, the default until told). */
void		 bridge_set_sandboxed(struct bridge *, int);
/*
 * Remember a family for the rest of the run, as the daemon stored it for the task
 * (a person's "always for this task"). 0, or -1 (invalid, or the list is full).
 */
int		 bridge_add_rule(struct bridge *, const char *family, int max_risk);
/* Always ask about family for the rest of the run (an imported ask rule). 0 or -1. */
int		 bridge_add_ask_rule(struct bridge *, const char *family);
/* Deny every pending approval with message; by goes into the record ("timeout"). */
void		 bridge_expire(struct bridge *, const char *message, const char *by);
int		 bridge_pending(const struct bridge *);
/* Emit the approval_request of every held approval again (a daemon re-attached). */
void		 bridge_reannounce(struct bridge *);
/* The run's records so far, for the report: {"count":N,"list":[...]}, new objects. */
cJSON		*bridge_denials(const struct bridge *);
cJSON		*bridge_approvals(const struct bridge *);
void		 bridge_free(struct bridge *);

/*
 * The JSON-RPC core of /mcp without HTTP, for tests and the fuzz target: handle one
 * request body. Returns the HTTP status; *reply is the body to send (NULL for none,
 * e.g. 202). A tools/call that must wait returns 0 and *reply NULL: the answer comes
 * later through the HTTP request that is being held (reqctx).
 */
int		 bridge_mcp_handle(struct bridge *, const char *body, size_t len,
		    void *reqctx, char **reply);

#endif
