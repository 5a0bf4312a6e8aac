/*
 * Automation files (SPEC U3): paths in a repository that a person's tools read and act
 * on when the person opens the checkout, with the person's rights, outside any sandbox
 * (Claude Code's project hooks, MCP servers, direnv, editor tasks, dev containers, CI,
 * git hooks). A run that adds or changes one is flagged, and its work lands only when
 * the person accepts it explicitly. The one table is in automation.c.
 */
#ifndef CW_AUTOMATION_H
#define CW_AUTOMATION_H

/*
 * The table entry path matches, or NULL: its "what" is a short phrase saying what the
 * file makes run ("Claude Code project settings (hooks)"). path is a repository path
 * with '/' separators, as git stores it; names match case-insensitively (a checkout on
 * a case-insensitive file system honours ".Claude/" as ".claude/").
 */
const char	*automation_match(const char *path);

/* The number of table entries and entry i's pattern and reason, for docs and tests. */
int		 automation_count(void);
const char	*automation_pattern(int i, const char **what);

#endif
