/*
 * A run's egress setup (SPEC N1), between the configuration and the proxy: which rules
 * the run gets, and how the engine is told to use the proxy.
 */
#ifndef CW_EGRESS_H
#define CW_EGRESS_H
#include <stddef.h>

#include "netrule.h"
#include "strlist.h"

struct config;

/* Inside a run's network namespace, where the runner's listeners are (127.0.0.1). */
#define EGRESS_BRIDGE_PORT	7422
#define EGRESS_PROXY_PORT	3128

/*
 * The run's rules, in the order they are matched: the task's (task_allow, from the
 * run message), the global network.allow, engines.<name>.network.allow, the engine's
 * provider hosts (common/engines.c), and the host:port of the configured base URL
 * (engines.<name>.base_url, sent as base_url), an explicit rule for that engine's
 * runs. -1 with err naming the bad rule.
 */
int	egress_rules(const struct config *, const char *engine, const char *base_url,
	    const struct strlist *task_allow, struct netrule **out, size_t *n,
	    char *err, size_t errlen);
/* The rule "host:port" for an http(s) URL's authority, into out; -1 if none. */
int	egress_url_rule(const char *url, char *out, size_t outlen);
/*
 * Point every client at the proxy: HTTP(S)_PROXY in both cases (curl, and so git,
 * reads only the lower-case http_proxy), npm's and pip's spellings, and NO_PROXY
 * naming only the bridge's port, so that the hook and the MCP client reach it directly.
 */
int	egress_env(struct strlist *env);

#endif
