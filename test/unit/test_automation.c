/*
 * The automation-file table (common/automation.c): the paths that make a person's
 * tools run code on open are matched at any depth and in any letter case, and the
 * look-alikes that do not are not.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "automation.h"

static void
test_automation_matches(void **state)
{
	static const char *const yes[] = {
		".claude/settings.json", ".claude/settings.local.json", "sub/.claude/x",
		".CLAUDE/settings.json", ".mcp.json", "pkg/.mcp.json", ".envrc", "a/b/.envrc",
		".vscode/tasks.json", ".idea/workspace.xml", ".devcontainer/devcontainer.json",
		".devcontainer.json", ".github/workflows/ci.yml", "x/.github/workflows/a.yml",
		".gitmodules", ".gitattributes", ".husky/pre-commit", ".githooks/pre-push",
		".pre-commit-config.yaml", "team.code-workspace", ".gitlab-ci.yml",
		"Jenkinsfile", ".codex/config.toml", "opencode.json",
	};
	static const char *const no[] = {
		"claude/settings.json", "README.md", "src/envrc", ".envrc.example",
		".github/CODEOWNERS", ".github/workflows", "docs/.claude", "x.mcp.json",
		"src/vscode/tasks.json", "", "github/workflows/ci.yml",
	};

	(void)state;
	for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
		if (automation_match(yes[i]) == NULL)
			fail_msg("%s: not matched", yes[i]);
	for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
		if (automation_match(no[i]) != NULL)
			fail_msg("%s: matched (%s)", no[i], automation_match(no[i]));
	assert_null(automation_match(NULL));
}

static void
test_automation_table(void **state)
{
	const char	*what, *p;

	(void)state;
	assert_true(automation_count() > 10);
	for (int i = 0; i < automation_count(); i++) {
		p = automation_pattern(i, &what);
		assert_non_null(p);
		assert_non_null(what);
		assert_true(strlen(what) > 5);
	}
	assert_null(automation_pattern(automation_count(), NULL));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_automation_matches),
		cmocka_unit_test(test_automation_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
