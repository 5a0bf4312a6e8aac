/*
 * The floor (SPEC F1): a deny-list evaluated on every shell command an engine wants to
 * run. Floor rules (force-push to or deletion of a protected branch, package
 * publishing, credential-path access) are always on; configured rules come from the
 * config and can be switched off. The evaluation understands shell syntax (shell.h).
 * It shapes an agent's behaviour; the sandbox is what bounds the damage.
 */
#ifndef CW_FLOOR_H
#define CW_FLOOR_H
#include <stddef.h>

#include "config.h"
#include "strlist.h"

enum floor_verdict { FLOOR_ALLOW = 0, FLOOR_DENY = 1 };

struct floor_result {
	enum floor_verdict	verdict;
	int			floor;		/* 1 when the rule is an always-on floor rule */
	char			rule[64];	/* e.g. "floor.force_push", "" on allow */
	char			reason[512];	/* one sentence for the engine and the journal */
};

struct floor_policy {
	const struct strlist	 *protected_branches;	/* NULL: main, master */
	const char		 *home;			/* for ~ and $HOME */
	const char		 *cwhome;		/* Clockwork home, may be NULL */
	const struct config_rule *rules;		/* configured, non-floor rules */
	size_t			  n_rules;
};

/*
 * Evaluate one shell command line. Always fills out and returns 0, except on ENOMEM
 * (-1). A command that cannot be parsed (unterminated quote, nesting too deep,
 * longer than FLOOR_MAX_COMMAND) is denied: the floor fails closed.
 */
#define FLOOR_MAX_COMMAND	(256 * 1024)
int	floor_evaluate(const char *command, const struct floor_policy *,
	    struct floor_result *out);

#endif
