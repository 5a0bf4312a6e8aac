/*
 * Claude Code's own permission rules in a repository's .claude/settings.json (and
 * .claude/settings.local.json), read as data (SPEC A1, issue 23): Clockwork runs
 * Claude with --setting-sources "", so a repository's settings never grant anything
 * by themselves; a person may import what they saw into the task's rules (daemon's
 * reporules.c). The file arrived with someone else's commit: it is untrusted input.
 *
 * Only permissions.allow, permissions.ask and permissions.deny are read, each an
 * array of strings "Tool" or "Tool(specifier)". For Bash (Claude Code's syntax):
 *
 *   Bash, Bash(*), Bash()   every command
 *   Bash(npm test)          exactly that command
 *   Bash(npm test:*)        the legacy prefix form: "npm test" or "npm test <more>"
 *   Bash(npm test *)        the same, with a wildcard after a space (word boundary)
 *   Bash(npm t*), Bash(git * main)   wildcards without a word boundary, or inside
 *
 * What each becomes (clauderules_map):
 *   - an allow rule becomes a task rule (up to ordinary risk) only when its command
 *     is exactly one command family as the floor names it ("npm test", "git commit",
 *     "pytest"): a prefix rule maps as is, an exact one allows the family with any
 *     arguments (said so in the note). A rule for every command, for every
 *     subcommand of a program (Bash(npm:*)), narrower than a family (Bash(git commit
 *     -m:*)), with a wildcard inside, shell syntax, or for another tool (Read, Edit,
 *     WebFetch, mcp__...) is not imported, and the note says why;
 *   - a deny or ask rule becomes an ask rule for the family its command starts with:
 *     that family (and, for a program alone, each of its subcommands) is always
 *     asked, never run unasked. Asking more than the rule said is the safe side.
 *
 * A malformed file (bad JSON, a duplicate key on the way to the lists, a list that is
 * not an array of strings, a bound exceeded) is an error naming the file, the field
 * and the limit; a rule string Claude Code would not understand is listed, not
 * imported.
 */
#ifndef CW_CLAUDERULES_H
#define CW_CLAUDERULES_H
#include <stddef.h>

#include "floor.h"

#define CLAUDERULES_MAX_BYTES	(256 * 1024)	/* one settings file */
#define CLAUDERULES_MAX_RULES	512		/* rules in one file, all lists */
#define CLAUDERULES_MAX_RULE	1024		/* bytes of one rule string */
#define CLAUDERULES_NOTE_MAX	256

enum clauderules_list {
	CLAUDERULES_ALLOW = 0,
	CLAUDERULES_ASK,
	CLAUDERULES_DENY,
};

enum clauderules_effect {
	CLAUDERULES_NONE = 0,		/* not imported: note says why */
	CLAUDERULES_TASK_ALLOW,		/* a task rule: family runs unasked up to ordinary */
	CLAUDERULES_TASK_ASK,		/* an ask rule: family is always asked */
};

struct clauderules_rule {
	enum clauderules_list	 list;
	char			*text;		/* as written (may hold anything) */
	enum clauderules_effect	 effect;
	char			 family[FLOOR_FAMILY_MAX];	/* "" when NONE */
	char			 note[CLAUDERULES_NOTE_MAX];
};

struct clauderules {
	struct clauderules_rule	*rules;
	size_t			 n;
};

/*
 * Parse one settings file's text (len bytes, need not be NUL-terminated; file names
 * it in errors) and map every rule. 0 with out filled (no rules when the file has no
 * permissions), or -1 with err naming the file, the field and the limit, and out
 * empty.
 */
int	clauderules_parse(const char *file, const char *text, size_t len,
	    struct clauderules *out, char *err, size_t errlen);
void	clauderules_free(struct clauderules *);
/* What one rule string of a list becomes: effect, family and note filled. */
void	clauderules_map(enum clauderules_list, const char *text,
	    struct clauderules_rule *out);
/* "allow", "ask", "deny"; and "allow", "ask" or "none" for an effect. */
const char *clauderules_list_name(enum clauderules_list);
const char *clauderules_effect_name(enum clauderules_effect);

#endif
