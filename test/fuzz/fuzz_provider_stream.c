/*
 * The streamed answers of both model providers (agent/sse.c, then agent/anthropic.c
 * or agent/openai.c), the way the agent reads them: bytes from the network in pieces
 * of any size. The first byte picks the API (even: Messages, odd: Chat Completions),
 * the second the piece size. Whatever comes in, a turn that ends whole holds only
 * well-formed blocks (a tool call has an id, a name and an object input), and it can
 * be sent back in the next request of either API. The provider is untrusted.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "anthropic.h"
#include "json.h"
#include "openai.h"
#include "sse.h"

struct fuzz_stream {
	struct anthropic_turn	turn;
	int			openai;
};

static int
fuzz_event(void *arg, const char *event, const char *data, size_t len)
{
	struct fuzz_stream	*f = arg;

	/* Terminated at len; NUL bytes inside are the parsers' to refuse. */
	if (data[len] != '\0')
		abort();
	return f->openai ? openai_stream_event(&f->turn, data, len) :
	    anthropic_stream_event(&f->turn, event, data, len);
}

static void
fuzz_check(struct anthropic_turn *t)
{
	const cJSON	*b;
	cJSON		*msgs, *m, *r;
	char		*s;

	if (!cJSON_IsArray(t->content) ||
	    cJSON_GetArraySize(t->content) > ANTHROPIC_MAX_BLOCKS)
		abort();
	if (!t->done)
		return;
	cJSON_ArrayForEach(b, t->content) {
		const char *type = json_get_string(b, "type");

		if (type == NULL)
			abort();
		if (strcmp(type, "tool_use") == 0 && (json_get_string(b, "id") == NULL ||
		    json_get_string(b, "name") == NULL ||
		    !cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(b, "input"))))
			abort();
	}
	msgs = cJSON_CreateArray();
	m = cJSON_CreateObject();
	cJSON_AddStringToObject(m, "role", "assistant");
	cJSON_AddItemToObject(m, "content", cJSON_Duplicate(t->content, 1));
	cJSON_AddItemToArray(msgs, m);
	for (int api = 0; api < 2; api++) {
		r = (api ? openai_request : anthropic_request)("m", 10, "s", NULL, msgs, 1);
		if (r == NULL || (s = cJSON_PrintUnformatted(r)) == NULL)
			abort();
		cJSON_free(s);
		cJSON_Delete(r);
	}
	cJSON_Delete(msgs);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_stream	 f;
	struct sse		*s;
	size_t			 piece, off;

	if (size < 2)
		return 0;
	memset(&f, 0, sizeof f);
	f.openai = data[0] & 1;
	piece = (size_t)data[1] % 64 + 1;
	data += 2;
	size -= 2;
	anthropic_turn_init(&f.turn);
	if ((s = sse_new(64 * 1024, fuzz_event, &f)) == NULL)
		abort();
	for (off = 0; off < size; off += piece)
		if (sse_feed(s, (const char *)data + off, size - off < piece ? size - off :
		    piece) == -1)
			break;
	sse_free(s);
	fuzz_check(&f.turn);
	anthropic_turn_free(&f.turn);
	return 0;
}
