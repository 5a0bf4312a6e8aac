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

/*
 * How much a person approving the command should worry, from the same evaluation:
 * the highest level any simple command of the line reaches. Ordered; a higher value
 * is worse.
 */
enum floor_risk {
	FLOOR_RISK_ORDINARY = 0,
	FLOOR_RISK_OUTSIDE,		/* writes or acts outside the worktree */
	FLOOR_RISK_FETCH_EXEC,		/* runs what it fetches from the network */
	FLOOR_RISK_DESTRUCTIVE,		/* deletes or rewrites what cannot be got back */
};

/*
 * A command family (program plus subcommand: "npm test", "git commit", "make") of each
 * simple command of a line, for remembered answers (common/autoallow.h). A line whose
 * parts cannot all be named that way (a payload behind sh -c, find -exec, xargs, eval,
 * sudo; inline code given to an interpreter; a program the floor cannot see; more
 * than FLOOR_MAX_FAMILIES parts) is opaque: no remembered answer covers it.
 */
#define FLOOR_MAX_FAMILIES	8
#define FLOOR_FAMILY_MAX	96

struct floor_result {
	enum floor_verdict	verdict;
	int			floor;		/* 1 when the rule is an always-on floor rule */
	char			rule[64];	/* e.g. "floor.force_push", "" on allow */
	char			reason[512];	/* one sentence for the engine and the journal */
	enum floor_risk		risk;
	char			risk_rule[64];	/* the rule that raised risk, "" if ordinary */
	char			families[FLOOR_MAX_FAMILIES][FLOOR_FAMILY_MAX];
	size_t			n_families;
	int			family_opaque;	/* 1: see FLOOR_MAX_FAMILIES */
};

struct floor_policy {
	const struct strlist	 *protected_branches;	/* NULL: main, master */
	const char		 *home;			/* for ~ and $HOME */
	const char		 *cwhome;		/* Clockwork home, may be NULL */
	const char		 *worktree;		/* the run's directory, may be NULL */
	const char		 *branch;		/* checked out there; NULL unknown */
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
/* "ordinary", "outside_worktree", "fetch_exec", "destructive". */
const char *floor_risk_name(enum floor_risk);
/* The level for a name from floor_risk_name, or -1. */
int	floor_risk_parse(const char *);

/*
 * The starter rules (shipped in the default configuration, each can be switched
 * off): built-in matchers a configured rule names with builtin instead of a match
 * pattern. floor_starter_find returns the entry for a name, or NULL.
 */
struct floor_starter {
	const char	*id;
	const char	*reason;
	enum floor_risk	 risk;
};
const struct floor_starter *floor_starters(size_t *n);
const struct floor_starter *floor_starter_find(const char *id);

/*
 * floor_explain: the same evaluation, and a human-readable account of it written to
 * out (each simple command as the floor saw it, wrappers stripped, heredocs and
 * sh -c strings parsed; which rule matched, or that none did). Returns as
 * floor_evaluate.
 */
struct floor_trace {
	char	*buf;
	size_t	 len, cap;
	int	 oom;
};
int	floor_explain(const char *command, const struct floor_policy *,
	    struct floor_result *out, struct floor_trace *trace);
void	floor_trace_free(struct floor_trace *);

#endif
