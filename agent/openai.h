/*
 * OpenAI-compatible Chat Completions (OpenAI, OpenRouter, a local vLLM or Ollama), as
 * Clockwork's own agent speaks it. The agent keeps its conversation in the Messages
 * API's shape (anthropic.h: content blocks, tool_use, tool_result); this module turns
 * that into a Chat Completions request (system and user messages, assistant messages
 * with tool_calls, role "tool" results, function tools, stream_options.include_usage)
 * and reads an answer, streamed ("chat.completion.chunk" data events ending in
 * "[DONE]") or whole, back into a struct anthropic_turn. Everything read here came from
 * the network: checked and bounded like anthropic.c.
 */
#ifndef CW_OPENAI_H
#define CW_OPENAI_H
#include <stddef.h>

#include <cjson/cJSON.h>

#include "anthropic.h"

#define OPENAI_MAX_TOOL_CALLS	64

cJSON	*openai_request(const char *model, long max_tokens, const char *system,
	    const cJSON *tools, const cJSON *messages, int stream);
/* One SSE data event. 0, or -1 when malformed (t->err_msg says why). */
int	openai_stream_event(struct anthropic_turn *, const char *data, size_t len);
/* A whole answer. 0, or -1 with t->err_msg. */
int	openai_parse_message(struct anthropic_turn *, const char *body, size_t len);
/* {"error":{"message","type","code"}}: 0 when it is one; type is the code if given. */
int	openai_parse_error(const char *body, size_t len, char *type, size_t typelen,
	    char *msg, size_t msglen);

#endif
