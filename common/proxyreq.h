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
 *
 * One request per connection (issue 26 item 9): the proxy relays the first request's
 * body and nothing after it, so a pipelined second request (whose Host: no rule
 * checked) never reaches the allowed server. That needs a body whose end the proxy
 * and every server agree on, so framing that can be read two ways is refused (400):
 * Content-Length and Transfer-Encoding both, more than one of either, a Content-Length
 * that is not digits, a transfer coding other than "chunked", Transfer-Encoding in an
 * HTTP/1.0 request. A chunked body is read by proxyreq_body_take as strictly: hex
 * size, CRLF after the size line and after the data, checked extensions and trailers.
 */
#ifndef CW_PROXYREQ_H
#define CW_PROXYREQ_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

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
	int	 chunked;			/* absolute-form: the body is chunked */
	uint64_t content_length;		/* otherwise, its length (0: none) */
};

/* Where a request's body is, as its bytes arrive (proxyreq_body_take). */
struct proxyreq_body {
	int		 state;
	int		 done;		/* the body has ended: what follows is not its */
	int		 digits;	/* of the chunk size read so far */
	uint64_t	 left;		/* bytes of data still to come (chunk or body) */
	size_t		 line;		/* bytes of the current chunk extension */
	size_t		 trailers;	/* bytes of trailers so far */
};

/*
 * Parse the head at the start of buf (len bytes, not NUL-terminated). 1: complete,
 * r filled (free with proxyreq_free); 0: not complete yet (need more bytes, and len is
 * under the limit); -1: refused, err says why (answer 400).
 */
int	proxyreq_parse(const char *buf, size_t len, struct proxyreq *r, char *err,
	    size_t errlen);
void	proxyreq_free(struct proxyreq *);

/* Start reading the body of the request r (a complete absolute-form head). */
void	proxyreq_body_init(struct proxyreq_body *, const struct proxyreq *r);
/*
 * How many of the len bytes at buf belong to the body: all of them while it goes on,
 * fewer where it ends (b->done is set then, and the rest is not the body's). -1: a
 * malformed chunk, err says why; the connection cannot be read on.
 */
ssize_t	proxyreq_body_take(struct proxyreq_body *, const char *buf, size_t len,
	    char *err, size_t errlen);

#endif
