/*
 * The whole (non-streamed) answers and the error bodies of both model providers
 * (agent/anthropic.c, agent/openai.c). The first byte picks the API. A parsed answer
 * holds only well-formed blocks; an error body yields bounded, NUL-terminated strings.
 * The provider is untrusted.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "anthropic.h"
#include "json.h"
#include "openai.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct anthropic_turn	 t;
	const cJSON		*b;
	char			 type[64], msg[512];
	int			 openai, rc;

	if (size < 1)
		return 0;
	openai = data[0] & 1;
	data++;
	size--;
	anthropic_turn_init(&t);
	rc = openai ? openai_parse_message(&t, (const char *)data, size) :
	    anthropic_parse_message(&t, (const char *)data, size);
	if (rc == 0) {
		if (!t.done || cJSON_GetArraySize(t.content) > ANTHROPIC_MAX_BLOCKS ||
		    t.usage.input < 0 || t.usage.output < 0)
			abort();
		cJSON_ArrayForEach(b, t.content) {
			const char *ty = json_get_string(b, "type");

			if (ty == NULL || (strcmp(ty, "tool_use") == 0 &&
			    !cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(b, "input"))))
				abort();
		}
	}
	anthropic_turn_free(&t);
	if ((openai ? openai_parse_error : anthropic_parse_error)((const char *)data, size,
	    type, sizeof type, msg, sizeof msg) == 0 &&
	    (strnlen(type, sizeof type) == sizeof type || strnlen(msg, sizeof msg) ==
	    sizeof msg))
		abort();
	return 0;
}
