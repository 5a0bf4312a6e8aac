/*
 * libFuzzer target for floor_evaluate and floor_explain: the whole path from text to
 * verdict (parser, normalisation, re-parsed sh -c strings and heredocs, cd tracking,
 * credential-path checks, the starter rules of the default configuration, risk,
 * command families) on any input, and the one evaluation of who answers over its
 * result (autoallow.h): a deny stays a deny, only ordinary runs by default. Both
 * floor calls give the same verdict.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <stdio.h>

#include "autoallow.h"
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
	/* Families (autoallow.h): bounded, printable, and none at all for an opaque line. */
	if (r.n_families > FLOOR_MAX_FAMILIES)
		abort();
	for (size_t i = 0; i < r.n_families; i++)
		if (strnlen(r.families[i], FLOOR_FAMILY_MAX) >= FLOOR_FAMILY_MAX)
			abort();
	{
		char			 fam[FLOOR_FAMILY_MAX];
		struct autoallow_rule	 rule;
		struct autoallow_policy	 ap = { AUTOALLOW_ASK_DEFAULT, 1, &rule, 1, NULL,
		    0 };
		struct autoallow_result	 ar;

		if (autoallow_family(&r, fam, sizeof fam) == 0 &&
		    (r.family_opaque || !autoallow_family_valid(fam)))
			abort();
		/* The floor's deny is never turned into a run, by any rule. */
		memset(&rule, 0, sizeof rule);
		snprintf(rule.family, sizeof rule.family, "%s", r.n_families > 0 ?
		    r.families[0] : "x");
		rule.max_risk = FLOOR_RISK_DESTRUCTIVE;
		ap.ask = AUTOALLOW_ASK_NONE;
		autoallow_decide(&r, &ap, &ar);
		if ((r.verdict == FLOOR_DENY) != (ar.verdict == AUTOALLOW_DENY))
			abort();
		/* Only an ordinary, visible line runs unasked by default, with no rules. */
		ap.ask = AUTOALLOW_ASK_DEFAULT;
		ap.n_rules = 0;
		autoallow_decide(&r, &ap, &ar);
		if (ar.verdict == AUTOALLOW_RUN && r.risk != FLOOR_RISK_ORDINARY)
			abort();
		/*
		 * An ask rule for the line's first family (or any rule, for a line with
		 * none) is never run unasked: not by an allow rule for the same family at
		 * the highest risk, not under approvals.ask none.
		 */
		ap.ask = AUTOALLOW_ASK_NONE;
		ap.n_rules = 1;
		ap.ask_rules = &rule;
		ap.n_ask_rules = 1;
		autoallow_decide(&r, &ap, &ar);
		if (ar.verdict == AUTOALLOW_RUN)
			abort();
	}
	if (floor_explain(s, &pol, &r2, &t) == 0 && (r2.verdict != r.verdict ||
	    strcmp(r2.rule, r.rule) != 0 || r2.risk != r.risk || t.buf == NULL))
		abort();	/* explaining does not change the verdict */
	floor_trace_free(&t);
	free(s);
	return 0;
}
