/*
 * libFuzzer target for floor_evaluate and floor_explain: the whole path from text to
 * verdict (parser, normalisation, re-parsed sh -c strings and heredocs, cd tracking,
 * credential-path checks, the starter rules of the default configuration, risk) on
 * any input. Both give the same verdict.
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
	struct floor_result	 r, r2;
	struct floor_trace	 t = { 0 };
	static struct config	 cfg;
	static int		 have_cfg;
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
	pol.worktree = "/home/fuzz/.clockwork/worktrees/t/r";
	if (!have_cfg) {
		/* The starter rules, and one pattern rule of the user's. */
		struct config_rule *nr;

		if (config_defaults(&cfg) == -1 || (nr = realloc(cfg.rules,
		    (cfg.n_rules + 1) * sizeof *nr)) == NULL)
			abort();
		cfg.rules = nr;
		memset(&nr[cfg.n_rules], 0, sizeof *nr);
		nr[cfg.n_rules].id = strdup("fuzz");
		nr[cfg.n_rules].match = strdup("rm -rf *");
		nr[cfg.n_rules].reason = strdup("no");
		nr[cfg.n_rules].enabled = 1;
		cfg.n_rules++;
		have_cfg = 1;
	}
	pol.rules = cfg.rules;
	pol.n_rules = cfg.n_rules;
	if (floor_evaluate(s, &pol, &r) == 0 && r.verdict == FLOOR_DENY &&
	    (r.rule[0] == '\0' || r.reason[0] == '\0'))
		abort();	/* a deny always names its rule and reason */
	if (r.risk < FLOOR_RISK_ORDINARY || r.risk > FLOOR_RISK_DESTRUCTIVE ||
	    (r.risk != FLOOR_RISK_ORDINARY && r.risk_rule[0] == '\0'))
		abort();	/* a raised risk names its rule */
	if (floor_explain(s, &pol, &r2, &t) == 0 && (r2.verdict != r.verdict ||
	    strcmp(r2.rule, r.rule) != 0 || r2.risk != r.risk || t.buf == NULL))
		abort();	/* explaining does not change the verdict */
	floor_trace_free(&t);
	free(s);
	return 0;
}
