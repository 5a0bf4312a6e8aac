/*
 * The head of a request to a run's egress proxy (runner/proxy.c), from the engine: the
 * one piece of proxy input a run controls before any policy is applied, so it is parsed
 * strictly, in one place, and fuzzed (test/fuzz/fuzz_proxyreq.c).
 *
 *   CONNECT host:port HTTP/1.1        a tunnel (TLS); host a name or an IP literal
 *   GET http://host[:port]/path HTTP/1.1   absolute-form plain HTTP, any method
 *
 * Anything else is refused: origin-form (we are not a web server), https:// in absolute
 * form (use CONNECT), userinfo in the authority, obs-folded or malformed header lines,
 * bare CR or NUL, a head past PROXYREQ_MAX_HEAD bytes. For absolute-form, the head to
 * send upstream is rebuilt: the origin-form request line, the client's headers without
 * the hop-by-hop and proxy ones and without Host, then our own Host (the URL's, so the
 * allowed authority is the one the server sees) and Connection: close.
 */
#ifndef CW_PROXYREQ_H
#define CW_PROXYREQ_H
#include <stddef.h>

#include "netrule.h"

#define PROXYREQ_MAX_HEAD	16384	/* request line and headers, bytes */

struct proxyreq {
	int	 connect;			/* 1: CONNECT; 0: absolute-form */
	char	 method[24];
	char	 host[NETRULE_HOST_MAX + 1];	/* checked by netrule_host */
	int	 is_addr;			/* host is an IP literal */
	int	 port;
	size_t	 head_len;			/* bytes of input the head took */
	char	*upstream;			/* absolute-form: the head to send (malloc) */
	size_t	 upstream_len;
};

/*
 * Parse the head at the start of buf (len bytes, not NUL-terminated). 1: complete,
 * r filled (free with proxyreq_free); 0: not complete yet (need more bytes, and len is
 * under the limit); -1: refused, err says why (answer 400).
 */
int	proxyreq_parse(const char *buf, size_t len, struct proxyreq *r, char *err,
	    size_t errlen);
void	proxyreq_free(struct proxyreq *);

#endif
