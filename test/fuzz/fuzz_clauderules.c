/*
 * libFuzzer target: a repository's Claude settings (common/clauderules.c) on arbitrary
 * bytes must fail cleanly (with a message) or succeed within its bounds, and no rule
 * may ever become an allow unless it came from the allow list and names one valid
 * family; a deny or ask rule never becomes an allow.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "autoallow.h"
#include "clauderules.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct clauderules	 c;
	char			 err[512];

	err[0] = '\0';
	if (clauderules_parse("fuzz", (const char *)data, size, &c, err, sizeof err) == -1) {
		if (err[0] == '\0' || c.rules != NULL || c.n != 0)
			abort();
		return 0;
	}
	if (c.n > CLAUDERULES_MAX_RULES)
		abort();
	for (size_t i = 0; i < c.n; i++) {
		const struct clauderules_rule *r = &c.rules[i];
		if (r->effect == CLAUDERULES_NONE && (r->family[0] != '\0' || r->note[0] == '\0'))
			abort();
		if (r->effect != CLAUDERULES_NONE && !autoallow_family_valid(r->family))
			abort();
		/* An allow comes from the allow list, as Bash(...), a star only at its end. */
		if (r->effect == CLAUDERULES_TASK_ALLOW && (r->list != CLAUDERULES_ALLOW ||
		    strncmp(r->text, "Bash(", 5) != 0 || (strchr(r->text, '*') != NULL &&
		    strstr(r->text, ":*)") == NULL && strstr(r->text, " *)") == NULL)))
			abort();
		if (r->effect == CLAUDERULES_TASK_ASK && r->list == CLAUDERULES_ALLOW)
			abort();
	}
	clauderules_free(&c);
	return 0;
}
