/*
 * The Claude Code engine (SPEC E1): the per-run settings (the floor hook, with
 * disableAllHooks pinned false), MCP config (the bridge) and the hook's token file in
 * the run's private state directory, the command line (no other setting source), and
 * the reading of its stream-json output.
 */
#ifndef CW_ENGINE_CLAUDE_H
#define CW_ENGINE_CLAUDE_H
#include <stddef.h>

#include "strlist.h"

#define ENGINE_CLAUDE_SERVER	"clockwork"
#define ENGINE_CLAUDE_TOOL	"mcp__clockwork__approve"
#define ENGINE_CLAUDE_TOKEN_FILE "hook.token"	/* in state_dir, 0400 */

struct engine_claude_opts {
	const char	*engine_path;	/* the claude binary */
	const char	*hook_path;	/* cw-floor-hook, absolute */
	const char	*state_dir;	/* private, outside the worktree; must exist */
	const char	*prompt;
	const char	*permission_mode;	/* "plan" | "acceptEdits" */
	const char	*token;		/* the run token for both routes */
	int		 port;		/* the bridge */
	int		 max_turns;
	double		 max_dollars;
	long		 tool_timeout_ms;	/* how long an approval may be held */
};

/* 0 when path is an absolute, regular, executable file; else -1 with err. */
int	engine_claude_check_hook(const char *path, char *err, size_t errlen);
/*
 * The settings text, whose hook reads the run token from token_file, and the MCP
 * config text (newly allocated; free them).
 */
char	*engine_claude_settings(const struct engine_claude_opts *, const char *token_file);
char	*engine_claude_mcp_config(const struct engine_claude_opts *);
/*
 * Write hook.token (0400), settings.json and mcp.json (0600) into state_dir and fill
 * argv (the command line), env ("NAME=value" the engine needs on top of the sandbox's)
 * and files (the paths written, which the sandbox must let the engine read). -1 with
 * err on failure.
 */
int	engine_claude_prepare(const struct engine_claude_opts *, struct strlist *argv,
	    struct strlist *env, struct strlist *files, char *err, size_t errlen);

/* What the stream-json output has said so far about the run's spending. */
struct engine_claude_usage {
	double	dollars;	/* total_cost_usd of the result event */
	int	turns;		/* assistant messages seen, then num_turns of the result */
	int	have_result;	/* the result event arrived */
	int	is_error;
	char	subtype[64];	/* the result's subtype, e.g. "success", "error_max_turns" */
	char	last_id[128];	/* the last assistant message id, to count turns */
};

/*
 * Read one line of stream-json output. Returns 1 when the usage changed, 0 when not,
 * -1 when the line is not a JSON object (logged by the caller, never fatal).
 */
int	engine_claude_line(const char *line, size_t len, struct engine_claude_usage *);

#endif
