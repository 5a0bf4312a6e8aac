/*
 * proxyreq_parse (common/proxyreq.c), the egress proxy's reading of a run's request
 * head, over arbitrary bytes: it must parse, ask for more, or refuse, never crash; and
 * what it accepts must hold its bounds: a host netrule_host accepts again, a port in
 * range, a head no longer than the input, and for absolute-form an upstream head with
 * no CR or LF outside line ends, ending in our own Host and Connection: close. The
 * bytes after an accepted absolute-form head are read as its body (proxyreq_body_take,
 * one byte at a time and all at once, which must agree): it takes no more than it is
 * given, and once it has ended it takes nothing more (a pipelined request after it is
 * never the body's). Smuggling shapes (CL+TE, duplicate CL, obs-fold, bad chunks,
 * pipelined requests) are in the corpus.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "netrule.h"
#include "proxyreq.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct proxyreq	 r;
	char		 err[256], host[NETRULE_HOST_MAX + 1];
	int		 rc, is_addr;
	struct netrule	 rule;

	rc = proxyreq_parse((const char *)data, size, &r, err, sizeof err);
	if (rc == 0 && size >= PROXYREQ_MAX_HEAD)
		abort();
	/* The rule parser sees config text: the same bytes must not crash it either. */
	if (size < 600) {
		char	 s[600];

		memcpy(s, data, size);
		s[size] = '\0';
		(void)netrule_parse(s, &rule, err, sizeof err);
	}
	if (rc != 1)
		return 0;
	if (r.head_len == 0 || r.head_len > size || r.head_len > PROXYREQ_MAX_HEAD)
		abort();
	if (r.port < 1 || r.port > 65535)
		abort();
	if (netrule_host(r.host, host, sizeof host, &is_addr) == -1 || strcmp(host, r.host) != 0 ||
	    is_addr != r.is_addr)
		abort();
	if (!r.connect) {
		const char	*end = "Connection: close\r\n\r\n";
		size_t		 el = strlen(end);

		if (r.upstream == NULL || r.upstream_len < el ||
		    memcmp(r.upstream + r.upstream_len - el, end, el) != 0 ||
		    strlen(r.upstream) != r.upstream_len)
			abort();
		for (size_t i = 0; i + el < r.upstream_len; i++)
			if ((r.upstream[i] == '\n' && (i == 0 || r.upstream[i - 1] != '\r')) ||
			    (r.upstream[i] == '\r' && r.upstream[i + 1] != '\n'))
				abort();
	}
	if (!r.connect) {
		struct proxyreq_body	 a, b;
		const char		*rest = (const char *)data + r.head_len;
		size_t			 rl = size - r.head_len, ta = 0;
		ssize_t			 n, tb;
		int			 fa = 0;

		proxyreq_body_init(&a, &r);
		proxyreq_body_init(&b, &r);
		/* One byte at a time. */
		while (ta < rl && !a.done) {
			if ((n = proxyreq_body_take(&a, rest + ta, 1, err, sizeof err)) == -1) {
				fa = 1;
				break;
			}
			if (n != 1)
				abort();
			ta++;
		}
		/* All at once: the same answer. */
		tb = proxyreq_body_take(&b, rest, rl, err, sizeof err);
		if (fa != (tb == -1) || (!fa && ((size_t)tb != ta || a.done != b.done)))
			abort();
		if (tb > (ssize_t)rl)
			abort();
		/* Ended: nothing more is the body's. */
		if (b.done && rl > 0 && proxyreq_body_take(&b, rest, rl, err, sizeof err) != 0)
			abort();
	}
	proxyreq_free(&r);
	return 0;
}
