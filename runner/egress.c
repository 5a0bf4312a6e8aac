/*
 * A run's egress rules and proxy environment: see egress.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "egress.h"
#include "engines.h"
#include "netsets.h"

int
egress_url_rule(const char *url, char *out, size_t outlen)
{
	const char	*a, *end, *rb;
	int		 dflt;
	size_t		 len;

	if (strncmp(url, "http://", 7) == 0) {
		a = url + 7;
		dflt = 80;
	} else if (strncmp(url, "https://", 8) == 0) {
		a = url + 8;
		dflt = 443;
	} else
		return -1;
	len = strcspn(a, "/?#");
	end = a + len;
	if (len == 0 || memchr(a, '@', len) != NULL)
		return -1;
	if (a[0] == '[') {
		if ((rb = memchr(a, ']', len)) == NULL)
			return -1;
		if (rb + 1 == end)
			return snprintf(out, outlen, "%.*s:%d", (int)len, a, dflt) <
			    (int)outlen ? 0 : -1;
	} else if (memchr(a, ':', len) == NULL)
		return snprintf(out, outlen, "%.*s:%d", (int)len, a, dflt) < (int)outlen ?
		    0 : -1;
	return snprintf(out, outlen, "%.*s", (int)len, a) < (int)outlen ? 0 : -1;
}

static int
egress_add(struct netrule **v, size_t *n, const char *s, const char *where, char *err,
    size_t errlen)
{
	const char *const	*set;
	struct netrule		 r, *nv;
	char			 e[400];

	/* A rule set's name stands for its rules, in their order. */
	if ((set = netsets_find(s)) != NULL) {
		for (; *set != NULL; set++)
			if (egress_add(v, n, *set, where, err, errlen) == -1)
				return -1;
		return 0;
	}
	if (netrule_parse(s, &r, e, sizeof e) == -1) {
		snprintf(err, errlen, "%s: %s", where, e);
		return -1;
	}
	if ((nv = realloc(*v, (*n + 1) * sizeof *nv)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	nv[(*n)++] = r;
	*v = nv;
	return 0;
}

int
egress_rules(const struct config *cfg, const char *engine, const char *base_url,
    const struct strlist *task_allow, struct netrule **out, size_t *n, char *err,
    size_t errlen)
{
	const struct config_engine	*ce = config_engine(cfg, engine);
	const struct engine_info	*ei = engines_find(engine);
	struct netrule			*v = NULL;
	size_t				 nv = 0, i;
	char				 buf[NETRULE_HOST_MAX + 16], where[64];
	const char			*p;

	for (i = 0; task_allow != NULL && i < task_allow->n; i++)
		if (egress_add(&v, &nv, task_allow->v[i], "the task's network.allow", err,
		    errlen) == -1)
			goto fail;
	for (i = 0; i < cfg->network_allow.n; i++)
		if (egress_add(&v, &nv, cfg->network_allow.v[i], "network.allow", err,
		    errlen) == -1)
			goto fail;
	snprintf(where, sizeof where, "engines.%s.network.allow", engine);
	for (i = 0; ce != NULL && i < ce->network_allow.n; i++)
		if (egress_add(&v, &nv, ce->network_allow.v[i], where, err, errlen) == -1)
			goto fail;
	for (p = ei != NULL ? ei->net_allow : NULL; p != NULL && *p != '\0'; ) {
		size_t	 len = strcspn(p, " ");

		if (len > 0 && len < sizeof buf) {
			memcpy(buf, p, len);
			buf[len] = '\0';
			if (egress_add(&v, &nv, buf, "the engine table", err, errlen) == -1)
				goto fail;
		}
		p += len;
		p += strspn(p, " ");
	}
	if (base_url != NULL) {
		snprintf(where, sizeof where, "engines.%s.base_url", engine);
		if (egress_url_rule(base_url, buf, sizeof buf) == -1) {
			snprintf(err, errlen, "%s: no host in the URL", where);
			goto fail;
		}
		if (egress_add(&v, &nv, buf, where, err, errlen) == -1)
			goto fail;
	}
	*out = v;
	*n = nv;
	return 0;
fail:
	free(v);
	return -1;
}

int
egress_env(struct strlist *env)
{
	static const char *const names[] = { "HTTP_PROXY", "HTTPS_PROXY", "http_proxy",
	    "https_proxy", "npm_config_proxy", "npm_config_https_proxy", "PIP_PROXY",
	    "ALL_PROXY", "all_proxy" };
	char	 kv[256];

	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		snprintf(kv, sizeof kv, "%s=http://127.0.0.1:%d", names[i], EGRESS_PROXY_PORT);
		if (strlist_add(env, kv) == -1)
			return -1;
	}
	snprintf(kv, sizeof kv, "NO_PROXY=127.0.0.1:%d,localhost:%d", EGRESS_BRIDGE_PORT,
	    EGRESS_BRIDGE_PORT);
	if (strlist_add(env, kv) == -1)
		return -1;
	snprintf(kv, sizeof kv, "no_proxy=127.0.0.1:%d,localhost:%d", EGRESS_BRIDGE_PORT,
	    EGRESS_BRIDGE_PORT);
	if (strlist_add(env, kv) == -1)
		return -1;
	/* npm reads noproxy from its own config key too. */
	snprintf(kv, sizeof kv, "npm_config_noproxy=127.0.0.1:%d", EGRESS_BRIDGE_PORT);
	if (strlist_add(env, kv) == -1)
		return -1;
	/*
	 * The JVM reads no *_PROXY variable: Maven, Gradle and every java program get
	 * the proxy as system properties, which each JVM picks up from this variable
	 * (SPEC N2). Loopback stays direct, as NO_PROXY says for the rest.
	 */
	snprintf(kv, sizeof kv, "JAVA_TOOL_OPTIONS=-Dhttp.proxyHost=127.0.0.1 "
	    "-Dhttp.proxyPort=%d -Dhttps.proxyHost=127.0.0.1 -Dhttps.proxyPort=%d "
	    "-Dhttp.nonProxyHosts=localhost|127.0.0.1|[::1]", EGRESS_PROXY_PORT,
	    EGRESS_PROXY_PORT);
	return strlist_add(env, kv);
}
