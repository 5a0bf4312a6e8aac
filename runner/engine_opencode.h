/*
 * OpenCode as an engine (opencode-ai 1.18.33, `opencode run --format json`): its whole
 * configuration in OPENCODE_CONFIG_CONTENT (provider, model, permissions, the floor
 * plugin), the floor plugin and the hook's token file in the run's private state
 * directory, its config, data, cache and state homes private per run, and the reading
 * of its JSON event lines into progress and transcript entries.
 */
#ifndef CW_ENGINE_OPENCODE_H
#define CW_ENGINE_OPENCODE_H
#include "engine.h"

#define ENGINE_OPENCODE_VERSION		"1.18.33"	/* the version all this was found with */
#define ENGINE_OPENCODE_PROVIDER	"clockwork"	/* the provider id in its config */
#define ENGINE_OPENCODE_PLUGIN		"clockwork-floor.js"	/* in state_dir, 0400 */
#define ENGINE_OPENCODE_TOKEN_FILE	"hook.token"	/* in state_dir, 0400 */
#define ENGINE_OPENCODE_SHELL_TOOL	"bash"	/* its one tool that runs commands */
/* The variable its config reads the provider key from ({env:...} in the config). */
/*
 * A continued run (engine_opencode.c, "The conversation"): $1 the session, $2 the
 * agent, $3 the prompt. The kept database is in $TMPDIR/engine-home/prev (home()).
 */
#define ENGINE_OPENCODE_CONTINUE \
	"h=\"$TMPDIR/engine-home\" && " \
	"XDG_DATA_HOME=\"$h/prev\" opencode export --pure \"$1\" > \"$h/continued.json\" && " \
	"opencode import --pure \"$h/continued.json\" >&2 && " \
	"rm -rf \"$h/prev\" \"$h/continued.json\" && " \
	"exec opencode run --format json --agent \"$2\" --session \"$1\" -- \"$3\""
#define ENGINE_OPENCODE_KEY_ENV		"OPENAI_API_KEY"

extern const struct engine_ops engine_opencode_ops;

/*
 * The configuration text for OPENCODE_CONFIG_CONTENT, loading the floor plugin from
 * plugin_path; newly allocated. sandboxed: 0 when CW_SANDBOX=off, which leaves
 * OpenCode's own permission defaults in place.
 */
char	*engine_opencode_config(const struct engine_run *, const char *plugin_path,
	    int sandboxed);
/*
 * 0 when neither dir nor a directory above it up to the git top holds .opencode,
 * opencode.json or opencode.jsonc; else -1 with the path and why in err.
 */
int	engine_opencode_project_config(const char *dir, char *err, size_t errlen);
/* The floor plugin's source, which runs hook_path with token_file; newly allocated. */
char	*engine_opencode_plugin(const struct engine_run *, const char *token_file);

#endif
