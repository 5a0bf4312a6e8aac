/*
 * proxyreq_parse (common/proxyreq.c), the egress proxy's reading of a run's request
 * head, over arbitrary bytes: it must parse, ask for more, or refuse, never crash; and
 * what it accepts must hold its bounds: a host netrule_host accepts again, a port in
 * range, a head no longer than the input, and for absolute-form an upstream head with
 * no CR or LF outside line ends, ending in our own Host and Connection: close.
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
	proxyreq_free(&r);
	return 0;
}
