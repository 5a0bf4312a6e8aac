/*
 * Who answers a tool call (SPEC A1, issue 23): the one evaluation every engine that
 * can ask goes through (the permission bridge's approval tool, for Claude Code and
 * for the byok tool host alike). From the floor's result for the call:
 *
 *   - the floor's deny denies;
 *   - a call with a part in a family the task always asks about (an ask rule: a
 *     repository's deny or ask rule a person imported, reporules.c) is asked, at any
 *     risk and whatever approvals.ask says; so is a call whose parts cannot all be
 *     named (opaque), when the task has any ask rule;
 *   - a risk the policy does not ask about runs without asking (approvals.ask; the
 *     default asks about outside_worktree, fetch_exec and destructive, so an ordinary
 *     call runs), journaled as auto_allow with its risk and rule;
 *   - a call whose every part is in a command family a person answered "always for
 *     this task" for, at no higher risk than the one they saw, runs (auto_allow
 *     naming the rule);
 *   - anything else is asked.
 *
 * An ordinary call runs unasked only inside the sandbox's promises: for a run
 * without the sandbox every risk but none is asked (the policy "none" still runs
 * everything: that is the loud opt-out).
 */
#ifndef CW_AUTOALLOW_H
#define CW_AUTOALLOW_H
#include <stddef.h>

#include "floor.h"

#define AUTOALLOW_BIT(r)	(1u << (unsigned)(r))
#define AUTOALLOW_ASK_ALL	(AUTOALLOW_BIT(FLOOR_RISK_ORDINARY) | \
				 AUTOALLOW_BIT(FLOOR_RISK_OUTSIDE) | \
				 AUTOALLOW_BIT(FLOOR_RISK_FETCH_EXEC) | \
				 AUTOALLOW_BIT(FLOOR_RISK_DESTRUCTIVE))
#define AUTOALLOW_ASK_DEFAULT	(AUTOALLOW_BIT(FLOOR_RISK_OUTSIDE) | \
				 AUTOALLOW_BIT(FLOOR_RISK_FETCH_EXEC) | \
				 AUTOALLOW_BIT(FLOOR_RISK_DESTRUCTIVE))
#define AUTOALLOW_ASK_NONE	0u
#define AUTOALLOW_RULES_MAX	256	/* remembered families per task */

/* A remembered answer: a command family, up to the risk the person saw. */
struct autoallow_rule {
	char		 family[FLOOR_FAMILY_MAX];
	enum floor_risk	 max_risk;
};

struct autoallow_policy {
	unsigned			 ask;		/* AUTOALLOW_BIT of each risk */
	int				 sandboxed;	/* 0: the run has no sandbox */
	const struct autoallow_rule	*rules;
	size_t				 n_rules;
	/* Families always asked (max_risk unused): "npm publish", or "npm" for each. */
	const struct autoallow_rule	*ask_rules;
	size_t				 n_ask_rules;
};

enum autoallow_verdict {
	AUTOALLOW_DENY = 0,
	AUTOALLOW_RUN,
	AUTOALLOW_ASK,
};

struct autoallow_result {
	enum autoallow_verdict	 verdict;
	/*
	 * Why it runs: "risk.ordinary", "approvals.ask" or "task_rule:npm test"; why it
	 * is asked when an ask rule decided: "task_ask:npm publish".
	 */
	char			 rule[FLOOR_FAMILY_MAX + 16];
};

void	autoallow_decide(const struct floor_result *, const struct autoallow_policy *,
	    struct autoallow_result *out);
/*
 * The family a person's "always for this task" on this call would remember: a line
 * of exactly one family that is not opaque (floor.h). 0 with it in out, or -1: then
 * nothing can be remembered for it (a payload behind a wrapper is never covered).
 */
int	autoallow_family(const struct floor_result *, char *out, size_t outlen);
/*
 * approvals.ask from words: each a risk name (floor_risk_name), or one word "all" or
 * "none". 0 with the mask, or -1 with err naming the bad word.
 */
int	autoallow_ask_parse(const char *const *words, size_t n, unsigned *mask,
	    char *err, size_t errlen);
/* The mask as words for people and the wire: "all", "none", or "a,b". */
void	autoallow_ask_format(unsigned mask, char *out, size_t outlen);
/*
 * Does an ask rule's family cover a call's family: the same, or the program alone
 * ("npm") for each of its subcommands ("npm publish")?
 */
int	autoallow_ask_covers(const char *rule_family, const char *call_family);
/* A family as a person or a store gives it: printable, at most FLOOR_FAMILY_MAX-1. */
int	autoallow_family_valid(const char *);

#endif
