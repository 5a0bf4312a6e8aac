/*
 * Codex (@openai/codex, `codex exec`) as an engine: its command line (the floor hook,
 * the provider and the features that matter pinned by -c session flags, which outrank
 * every config file the run could write), a private CODEX_HOME, and the reading of its
 * --json event stream into progress and transcript entries.
 */
#ifndef CW_ENGINE_CODEX_H
#define CW_ENGINE_CODEX_H
#include <stddef.h>

#include "engine.h"

#define ENGINE_CODEX_TOKEN_FILE	"hook.token"	/* in state_dir, 0400 */
#define ENGINE_CODEX_KEY_ENV	"CLOCKWORK_CODEX_KEY"	/* the provider's env_key */
#define ENGINE_CODEX_PROVIDER	"clockwork"	/* the model_providers entry we define */

extern const struct engine_ops engine_codex_ops;

/*
 * s as a TOML basic string ("..." with \", \\ and control characters escaped) into
 * out. -1 when it does not fit.
 */
int	engine_codex_toml_string(const char *s, char *out, size_t outlen);
/* s single-quoted for sh (' as '\''). -1 when it does not fit. */
int	engine_codex_sh_quote(const char *s, char *out, size_t outlen);
/*
 * The command codex's exec_command item shows ("/bin/bash -lc 'cmd'"), as the command
 * the agent asked for, into out (the item's text unchanged when it is not that shape).
 */
void	engine_codex_command_text(const char *shown, char *out, size_t outlen);

#endif
