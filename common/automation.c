/*
 * The table of automation files (SPEC U3), the one place that says which repository
 * paths make a person's tools run code when the person opens a checkout. A pattern is
 * either a directory name ("name/": anything beneath a path component of that name) or
 * a file name (the last component), matched at any depth: direnv loads a nested
 * .envrc when the person cd's into that folder, an editor opened on a subfolder reads
 * its .vscode/, and Claude Code started in a subdirectory reads .claude/ there. A
 * two-component pattern (".github/workflows/") matches those components in a row.
 * Names compare case-insensitively. Being listed here does not make a file dangerous;
 * it makes its arrival something a person must see and accept (docs/SECURITY.md).
 */
#include <stddef.h>
#include <string.h>
#include <strings.h>

#include "automation.h"

static const struct automation_entry {
	const char	*pattern;
	const char	*what;
} automation_table[] = {
	/* Agents: project settings carry hooks, MCP servers and permission rules. */
	{ ".claude/",		"Claude Code project settings (hooks, MCP, permissions)" },
	{ ".mcp.json",		"MCP servers started by Claude Code" },
	{ ".codex/",		"Codex project configuration" },
	{ ".opencode/",		"OpenCode project configuration (plugins)" },
	{ "opencode.json",	"OpenCode project configuration (MCP, plugins)" },
	{ ".cursor/",		"Cursor project rules and MCP servers" },
	{ ".gemini/",		"Gemini CLI project settings" },
	/* Shells and environments. */
	{ ".envrc",		"direnv runs it on cd" },
	{ ".devcontainer/",	"dev container definition (build and lifecycle commands)" },
	{ ".devcontainer.json",	"dev container definition (lifecycle commands)" },
	/* Editors. */
	{ ".vscode/",		"VS Code workspace (tasks that run on folder open, settings)" },
	{ ".idea/",		"JetBrains project (run configurations, startup tasks)" },
	{ ".code-workspace",	"VS Code workspace file" },
	/* Git: hook managers, submodules, attributes that pick filter drivers. */
	{ ".gitmodules",	"git submodules (URLs and paths git fetches)" },
	{ ".gitattributes",	"git attributes (filter, diff and merge drivers)" },
	{ ".githooks/",		"git hooks (when core.hooksPath names it)" },
	{ ".husky/",		"husky git hooks" },
	{ ".pre-commit-config.yaml", "pre-commit hooks" },
	{ "lefthook.yml",	"lefthook git hooks" },
	{ ".lefthook.yml",	"lefthook git hooks" },
	/* CI: runs with the repository's secrets once pushed. */
	{ ".github/workflows/",	"GitHub Actions workflows" },
	{ ".github/actions/",	"GitHub Actions local actions" },
	{ ".gitlab-ci.yml",	"GitLab CI pipeline" },
	{ ".circleci/",		"CircleCI pipeline" },
	{ ".buildkite/",	"Buildkite pipeline" },
	{ "Jenkinsfile",	"Jenkins pipeline" },
};

#define AUTOMATION_N	(int)(sizeof automation_table / sizeof automation_table[0])

int
automation_count(void)
{
	return AUTOMATION_N;
}

const char *
automation_pattern(int i, const char **what)
{
	if (i < 0 || i >= AUTOMATION_N)
		return NULL;
	if (what != NULL)
		*what = automation_table[i].what;
	return automation_table[i].pattern;
}

/* Does the n-byte component at s equal name (case-insensitively)? */
static int
automation_component_is(const char *s, size_t n, const char *name, size_t namelen)
{
	return n == namelen && strncasecmp(s, name, n) == 0;
}

/*
 * Does pattern p match path? A directory pattern ("a/" or "a/b/") must match
 * components followed by at least one more; a file pattern matches the last one.
 * A file pattern that starts with '.' and names an extension (".code-workspace")
 * also matches a last component ending in it.
 */
static int
automation_pattern_match(const char *p, const char *path)
{
	size_t		 plen = strlen(p);
	int		 dir = plen > 0 && p[plen - 1] == '/';
	const char	*c = path, *slash;

	if (!dir) {
		const char	*last = strrchr(path, '/');
		size_t		 n;

		last = last != NULL ? last + 1 : path;
		n = strlen(last);
		if (strcasecmp(last, p) == 0)
			return 1;
		/* ".code-workspace" is an extension: "team.code-workspace". */
		return strcmp(p, ".code-workspace") == 0 && n > plen &&
		    strcasecmp(last + n - plen, p) == 0;
	}
	/* Directory patterns: each start of a component is a candidate. */
	for (;;) {
		const char	*q = c, *pp = p;
		int		 ok = 1;

		while (*pp != '\0') {
			const char	*pe = strchr(pp, '/');
			size_t		 pn = (size_t)(pe - pp);

			slash = strchr(q, '/');
			if (slash == NULL ||
			    !automation_component_is(q, (size_t)(slash - q), pp, pn)) {
				ok = 0;
				break;
			}
			q = slash + 1;
			pp = pe + 1;
		}
		if (ok && *q != '\0')
			return 1;
		if ((slash = strchr(c, '/')) == NULL)
			return 0;
		c = slash + 1;
	}
}

const char *
automation_match(const char *path)
{
	if (path == NULL)
		return NULL;
	for (int i = 0; i < AUTOMATION_N; i++)
		if (automation_pattern_match(automation_table[i].pattern, path))
			return automation_table[i].what;
	return NULL;
}
