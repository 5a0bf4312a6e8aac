/*
 * cw-sandbox's plan parser (sandbox/plan.c) over arbitrary bytes: the plan arrives on a
 * descriptor that whoever starts cw-sandbox fills. It parses or is refused with a
 * reason, never crashes; what it accepts holds no string without a terminator, no
 * relative path where a path is meant, and writes back as a plan that parses to the
 * same bytes again (the writer and the reader agree on every record they share).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct plan	 p, q;
	char		 err[512], *a, *b;
	size_t		 alen, blen;

	err[0] = '\0';
	if (plan_parse((const char *)data, size, &p, err, sizeof err) == -1) {
		if (err[0] == '\0')
			abort();
		plan_free(&p);
		return 0;
	}
	if ((p.spec.workdir != NULL && p.spec.workdir[0] != '/') || p.n_listen >
	    PLAN_MAX_LISTEN || (p.spec.enabled && p.abi < 1))
		abort();
	if (plan_build(&p, &a, &alen, err, sizeof err) == -1) {
		plan_free(&p);
		return 0;	/* accepted input a plan_build would refuse: too large */
	}
	if (plan_parse(a, alen, &q, err, sizeof err) == -1)
		abort();
	if (plan_build(&q, &b, &blen, err, sizeof err) == -1 || alen != blen ||
	    memcmp(a, b, alen) != 0)
		abort();
	free(a);
	free(b);
	plan_free(&p);
	plan_free(&q);
	return 0;
}
