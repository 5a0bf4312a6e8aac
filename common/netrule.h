/*
 * Egress rules (SPEC N1): "host:port" patterns a run's proxy lets through, and the
 * address classes it never reaches unless a rule names the address itself.
 *
 *   api.anthropic.com:443   that host, that port
 *   *.npmjs.org:443         any name under npmjs.org (not npmjs.org itself)
 *   *:443                   any name, port 443 (public addresses only)
 *   127.0.0.1:8080          an address rule: the only way to reach a private,
 *   [::1]:8080              loopback or link-local address
 *   registry.local:*        any port
 *
 * A name rule never reaches a private address, whatever the name resolves to: a
 * public-looking name pointing at 127.0.0.1 is refused (DNS rebinding). Rules are
 * matched in order; the first match decides.
 */
#ifndef CW_NETRULE_H
#define CW_NETRULE_H
#include <stddef.h>

struct sockaddr;

#define NETRULE_HOST_MAX	253	/* a DNS name's longest text form */

struct netrule {
	char	host[NETRULE_HOST_MAX + 1];	/* lower case; IPv6 without brackets */
	int	port;				/* 0: any port */
	int	addr;				/* 1: host is an IP address */
	char	text[NETRULE_HOST_MAX + 16];	/* canonical "host:port", for records */
};

/* Parse "host:port". -1 with err filled ("'x' is not host:port ..."). */
int	netrule_parse(const char *s, struct netrule *, char *err, size_t errlen);
/*
 * Check a host as a client names it (a CONNECT target, a URL's host): a DNS name or an
 * IP literal, lower-cased into out (outlen > NETRULE_HOST_MAX). *is_addr says which.
 */
int	netrule_host(const char *in, char *out, size_t outlen, int *is_addr);
/* Does the rule cover host (as from netrule_host) and port? */
int	netrule_match(const struct netrule *, const char *host, int port);
/* The first rule of n covering host:port, or NULL. */
const struct netrule *netrule_find(const struct netrule *, size_t n, const char *host,
	    int port);
/*
 * Is this address one a name rule may not reach: loopback, RFC 1918 and shared
 * (100.64/10), link-local, unspecified, multicast, reserved, IPv6 ULA, and IPv4-mapped
 * forms of those. NULL or an unknown family counts as private.
 */
int	netrule_private(const struct sockaddr *);
/* May a connection the rule allowed go to this address? */
int	netrule_addr_ok(const struct netrule *, const struct sockaddr *);

#endif
