/*
 * What a continued run reads that an earlier run wrote (issue 23): the conversation id
 * an engine printed (conversation_id_valid(), before it goes onto a command line or
 * into a path) and byok's kept conversation (conversation_messages_parse(), before the
 * agent sends it to the provider). The first byte picks the engine for the id. An id
 * that passes must be one argv word that no program takes for an option and one plain
 * file name; a conversation that parses must alternate user and assistant turns.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "conversation.h"
#include "json.h"

static const char *const fuzz_engines[] = { "claude", "codex", "opencode", "byok", "command" };

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const cJSON	*m;
	const char	*role, *prev = NULL;
	cJSON		*msgs = NULL;
	char		*id, err[256];
	size_t		 n;

	if (size < 1)
		return 0;
	if ((id = malloc(size)) == NULL)
		return 0;
	memcpy(id, data + 1, size - 1);
	id[size - 1] = '\0';
	if (conversation_id_valid(fuzz_engines[data[0] % 5], id)) {
		n = strlen(id);
		if (n == 0 || n > CONVERSATION_ID_MAX || id[0] == '-' || strspn(id,
		    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-") != n)
			abort();
	}
	free(id);
	if (conversation_messages_parse((const char *)data, size, &msgs, err, sizeof err) == 0) {
		if (!cJSON_IsArray(msgs) || cJSON_GetArraySize(msgs) == 0)
			abort();
		cJSON_ArrayForEach(m, msgs) {
			role = json_get_string(m, "role");
			if (role == NULL || (prev == NULL && strcmp(role, "user") != 0) ||
			    (prev != NULL && strcmp(prev, role) == 0))
				abort();
			prev = role;
		}
		cJSON_Delete(msgs);
	}
	return 0;
}
