/*
 * libFuzzer target for floor_evaluate: the whole path from text to verdict (parser,
 * normalisation, re-parsed sh -c strings, credential-path checks) on any input.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "floor.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct floor_policy	 pol;
	struct floor_result	 r;
	struct config_rule	 rule = { "fuzz", "rm -rf *", "no", 1 };
	char			*s;

	if (size > 64 * 1024)
		return 0;
	if ((s = malloc(size + 1)) == NULL)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	memset(&pol, 0, sizeof pol);
	pol.home = "/home/fuzz";
	pol.cwhome = "/home/fuzz/.clockwork";
	pol.rules = &rule;
	pol.n_rules = 1;
	if (floor_evaluate(s, &pol, &r) == 0 && r.verdict == FLOOR_DENY &&
	    (r.rule[0] == '\0' || r.reason[0] == '\0'))
		abort();	/* a deny always names its rule and reason */
	free(s);
	return 0;
}
