/*
 * Hermes as an engine (hermes-agent 0.19.0, `hermes --oneshot`): a private HERMES_HOME
 * per run holding its config.yaml (the provider, the floor plugin enabled) and the
 * floor plugin, linked from the runner's read-only state directory; the reading of
 * the plugin's event lines into progress and transcript entries.
 */
#ifndef CW_ENGINE_HERMES_H
#define CW_ENGINE_HERMES_H
#include "engine.h"

#define ENGINE_HERMES_VERSION		"0.19.0"	/* the version all this was found with */
#define ENGINE_HERMES_PLUGIN		"clockwork-floor"	/* its name in plugins.enabled */
#define ENGINE_HERMES_PLUGIN_DIR	"hermes-plugin"	/* in state_dir, read-only */
#define ENGINE_HERMES_TOKEN_FILE	"hook.token"	/* in state_dir, 0400 */
#define ENGINE_HERMES_SHELL_TOOL	"terminal"	/* its one tool that runs commands */
/* TERMINAL_ENV until the floor plugin loads: no such backend, so no terminal tool. */
#define ENGINE_HERMES_NO_FLOOR		"clockwork-floor-not-loaded"
#define ENGINE_HERMES_TOOLSETS		"terminal,file,memory,skills,todo"
/* The variable config.yaml names for the key (${...}, expanded by Hermes at load). */
#define ENGINE_HERMES_KEY_ENV		"OPENAI_API_KEY"

extern const struct engine_ops engine_hermes_ops;

/* config.yaml for the run's HERMES_HOME; newly allocated. */
char	*engine_hermes_config(const struct engine_run *);
/* The plugin's clockwork.json (hook, port, token file, budgets); newly allocated. */
char	*engine_hermes_plugin_config(const struct engine_run *, const char *token_file);

#endif
