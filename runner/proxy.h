/*
 * The run's egress proxy (SPEC N1). Its listening socket is made inside the run's
 * network namespace (runner/sandbox.c) and served here, in the runner, which is in the
 * host's namespace: the engine's only way out is an HTTP proxy request to it.
 *
 *   CONNECT host:port          a tunnel (TLS), after the policy said yes
 *   GET http://host/path ...   absolute-form plain HTTP, one request per connection
 *
 * One request per connection (issue 26 item 9) because the rule is checked against the
 * first request's URL only: the head goes upstream rebuilt with Connection: close, the
 * body is relayed to its end (common/proxyreq.h: framing that reads one way only), and
 * whatever the client sends after it (a pipelined request, whatever its Host:) is
 * dropped. Parsing every pipelined request through the rules instead would mean one
 * upstream per request and matching responses to them: a full HTTP proxy, for clients
 * that retry on a new connection anyway. A server that ignores Connection: close keeps
 * the tunnel open until the client or the idle limit ends it.
 *
 * An ask for an IP literal no name rule may reach (netrule_private: loopback, private,
 * link-local) carries risk "outside_worktree", risk_rule "network.private_address".
 *
 * The policy is an ordered list of rules (common/netrule.h); a host no rule names is
 * refused at once with 403. The proxy resolves names itself, on the loop (libevent's
 * evdns: no thread, no child, and it honours /etc/hosts), and a name rule never
 * reaches a private, loopback or link-local address: only a rule naming the address.
 *
 * Every connection is recorded: an event for the daemon (kind "net" when it ends,
 * "net_deny" when refused: host, port, address, verdict, rule, bytes up and down),
 * and totals for the report. Connections are capped like the other listeners' (a cap
 * that stops accepting, a deadline for the request head, an idle limit).
 */
#ifndef CW_PROXY_H
#define CW_PROXY_H
#include <stddef.h>

#include <cjson/cJSON.h>

#include "netrule.h"

struct asklimit;
struct event_base;
struct proxy;

#define PROXY_MAX_CONNS		64	/* open client connections */
#define PROXY_HEAD_DEADLINE_MS	30000	/* accept to a whole request head */
#define PROXY_CONNECT_MS	30000	/* resolve and connect upstream */
#define PROXY_BUFFER		(256 * 1024)	/* per direction, then back-pressure */
#define PROXY_MAX_HELD		16	/* connections waiting for an answer */
#define PROXY_MAX_GRANTS	64	/* hosts answered "allow" in a run */
#define PROXY_MAX_GRANTS_TEXT	"64"
#define PROXY_TOOL		"network"	/* the approval's tool name */

struct proxy_config {
	const char		*run_id;
	const struct netrule	*rules;		/* copied */
	size_t			 n_rules;
	int			 idle_seconds;	/* a tunnel with no traffic this long ends */
	/*
	 * network.ask: a host no rule names is held and becomes an approval (an
	 * approval_request with tool "network" through emit) for up to hold_seconds,
	 * instead of being refused at once; proxy_decide() answers it.
	 */
	int			 ask;
	int			 hold_seconds;
	/* The run's approval budget, shared with the bridge; NULL: none. Not owned. */
	struct asklimit		*asks;
	/* A wire message for the daemon; the callee owns msg. */
	void			(*emit)(void *arg, cJSON *msg);
	void			*arg;
};

struct proxy	*proxy_new(struct event_base *, const struct proxy_config *, char *err,
		    size_t errlen);
/* Serve a listening socket (owned from here on, closed on failure too). */
int		 proxy_adopt(struct proxy *, int fd, char *err, size_t errlen);
/*
 * Answer a held connection by its approval id: allow adds the rule host:port for the
 * rest of the run (the daemon keeps a "for this task" answer for the task's next runs).
 * 0, or -1 when no connection with that id is held.
 */
int		 proxy_decide(struct proxy *, const char *id, int allow, const char *message);
/* Emit the approval_request of every held connection again (a daemon re-attached). */
void		 proxy_reannounce(struct proxy *);
/*
 * {"connections":N,"allowed":N,"denied":N,"bytes_up":N,"bytes_down":N,
 *  "denials":{"count":N,"list":[...]}}: a new object, for the report.
 */
cJSON		*proxy_totals(const struct proxy *);
void		 proxy_free(struct proxy *);

#endif
