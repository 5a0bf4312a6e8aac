/* Clockwork's own agent as an engine (byok): see engine_byok.c. */
#ifndef CW_ENGINE_BYOK_H
#define CW_ENGINE_BYOK_H

#include "engine.h"

#define ENGINE_BYOK_TOKEN_FILE		"bridge-token"
#define ENGINE_BYOK_DEFAULT_URL		"https://api.anthropic.com"
#define ENGINE_BYOK_OPENAI_URL		"https://api.openai.com/v1"

extern const struct engine_ops engine_byok_ops;

#endif
