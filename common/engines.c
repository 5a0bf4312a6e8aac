/*
 * The table of engines (common/engines.h). A row says only what a test has shown: an
 * engine gets ENGINE_CAN_FLOOR when an e2e test has its real CLI refused a force-push
 * by cw-floor-hook, ENGINE_CAN_ASK when an approval was answered through the bridge.
 */
#include <stdio.h>
#include <string.h>

#include "engines.h"

static const struct engine_info engines_table[] = {
	{
		.name = "command",
		.binary = NULL,
		.label = "a command",
		.caps = ENGINE_RUNNABLE,
		.key_env = NULL,
		.floor = "none: the command is not an agent; the sandbox bounds it",
		.ask = "none: a command does not ask",
	},
	{
		.name = "claude",
		.binary = "claude",
		.label = "Claude Code",
		.caps = ENGINE_RUNNABLE | ENGINE_TAKES_PROMPT | ENGINE_CAN_FLOOR |
		    ENGINE_CAN_ASK | ENGINE_CAN_DOLLARS | ENGINE_CAN_TURNS |
		    ENGINE_TRANSCRIPT,
		.key_env = "ANTHROPIC_API_KEY",
		.floor = "PreToolUse hook (cw-floor-hook) on every Bash call, from "
		    "--settings in the runner's read-only state directory",
		.ask = "the bridge's MCP tool through --permission-prompt-tool",
		.net_allow = "api.anthropic.com:443 statsig.anthropic.com:443",
	},
	{
		.name = "codex",
		.binary = "codex",
		.label = "Codex",
		.caps = ENGINE_RUNNABLE | ENGINE_TAKES_PROMPT | ENGINE_CAN_FLOOR |
		    ENGINE_CAN_TURNS | ENGINE_TRANSCRIPT,
		.key_env = "OPENAI_API_KEY",
		.floor = "PreToolUse hook (cw-floor-hook) on every exec_command call, from "
		    "-c flags that outrank every config file; TTY sessions off, so nothing "
		    "is typed into a shell past it",
		.ask = "not available for this engine: codex exec cannot ask; the sandbox "
		    "and the floor contain it",
		.net_allow = "api.openai.com:443",
	},
	{
		.name = "opencode",
		.binary = "opencode",
		.label = "OpenCode",
		/* No dollars: it prices only models in its catalogue, not a configured one. */
		.caps = ENGINE_RUNNABLE | ENGINE_TAKES_PROMPT | ENGINE_CAN_FLOOR |
		    ENGINE_CAN_TURNS | ENGINE_TRANSCRIPT,
		.key_env = "OPENAI_API_KEY",
		.floor = "plugin (tool.execute.before) running cw-floor-hook on every bash "
		    "call, subagents' too, from the runner's read-only state directory; a "
		    "worktree carrying OpenCode configuration is refused",
		.ask = "not available for this engine: `opencode run` answers its own "
		    "permission prompts; contained by the sandbox and the floor",
		.net_allow = "api.openai.com:443",
	},
	{
		/* hermes-agent from PyPI, in a venv of its own (scripts/setup-engines). */
		.name = "hermes",
		.binary = "hermes",
		.label = "Hermes",
		.caps = ENGINE_RUNNABLE | ENGINE_TAKES_PROMPT | ENGINE_CAN_FLOOR |
		    ENGINE_CAN_DOLLARS | ENGINE_CAN_TURNS | ENGINE_TRANSCRIPT,
		.key_env = "OPENAI_API_KEY",
		.floor = "plugin (pre_tool_call) running cw-floor-hook on every terminal "
		    "call, from the runner's read-only state directory, linked into the "
		    "run's private HERMES_HOME; typing into a running process is refused",
		.ask = "not available for this engine: `hermes --oneshot` answers its own "
		    "approvals; contained by the sandbox and the floor",
		.net_allow = "api.openai.com:443",
	},
	{
		/*
		 * Clockwork's own agent with the user's provider key (cw-agent,
		 * agent/agent.c): the loop that holds the key runs outside the sandbox,
		 * its tools inside (agent/toolhost.c). The key comes from the key store (cwctl key), never
		 * from an environment variable.
		 */
		.name = "byok",
		.binary = NULL,
		.label = "Clockwork's own agent",
		.caps = ENGINE_CAN_FLOOR | ENGINE_CAN_ASK | ENGINE_CAN_DOLLARS |
		    ENGINE_CAN_TURNS | ENGINE_TAKES_PROMPT | ENGINE_RUNNABLE |
		    ENGINE_TRANSCRIPT,
		.key_env = NULL,
		.floor = "every bash call goes to the bridge's /floor from the tool host "
		    "before it runs",
		.ask = "bash calls outside the allowed set go to the bridge's approval tool "
		    "in acceptEdits mode",
	},
};

#define ENGINES_N	(sizeof engines_table / sizeof engines_table[0])

const struct engine_info *
engines_find(const char *name)
{
	if (name == NULL)
		return NULL;
	for (size_t i = 0; i < ENGINES_N; i++)
		if (strcmp(engines_table[i].name, name) == 0)
			return &engines_table[i];
	return NULL;
}

const struct engine_info *
engines_runnable(const char *name)
{
	const struct engine_info	*e = engines_find(name);

	return e != NULL && (e->caps & ENGINE_RUNNABLE) ? e : NULL;
}

const struct engine_info *
engines_at(size_t i)
{
	return i < ENGINES_N ? &engines_table[i] : NULL;
}

size_t
engines_count(void)
{
	return ENGINES_N;
}

const char *
engines_names(int runnable_only)
{
	static char	all[256], runnable[256];
	char		*out = runnable_only ? runnable : all;
	size_t		 len = 0;

	if (out[0] != '\0')
		return out;
	for (size_t i = 0; i < ENGINES_N; i++) {
		if (runnable_only && !(engines_table[i].caps & ENGINE_RUNNABLE))
			continue;
		len += (size_t)snprintf(out + len, sizeof all - len, "%s%s",
		    len > 0 ? ", " : "", engines_table[i].name);
	}
	return out;
}
