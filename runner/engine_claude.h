/*
 * The Claude Code engine (SPEC E1) behind the engine seam (runner/engine.h): the
 * per-run settings (the floor hook, with disableAllHooks pinned false), MCP config (the
 * bridge) and the hook's token file in the runner's state directory, the command line
 * (no other setting source), the private CLAUDE_CONFIG_DIR, and the reading of its
 * stream-json output.
 */
#ifndef CW_ENGINE_CLAUDE_H
#define CW_ENGINE_CLAUDE_H
#include "engine.h"
#include "prices.h"

#define ENGINE_CLAUDE_SERVER	"clockwork"
#define ENGINE_CLAUDE_TOOL	"mcp__clockwork__approve"
#define ENGINE_CLAUDE_TOKEN_FILE "hook.token"	/* in state_dir, 0400 */

extern const struct engine_ops engine_claude_ops;

/*
 * The settings text, whose hook reads the run token from token_file, and the MCP
 * config text (newly allocated; free them).
 */
char	*engine_claude_settings(const struct engine_run *, const char *token_file);
char	*engine_claude_mcp_config(const struct engine_run *);
/*
 * Merge one stream-json usage object (input_tokens, output_tokens,
 * cache_creation_input_tokens, cache_read_input_tokens) into tokens (PRICES_N_KINDS,
 * prices.h): a count replaces the one held when it is higher (the counts of one
 * message only grow as it streams). 1 when one grew.
 */
int	engine_claude_usage(const cJSON *usage, double *tokens);

#endif
