/* The Anthropic Messages API: see anthropic.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "anthropic.h"
#include "json.h"

void
anthropic_turn_init(struct anthropic_turn *t)
{
	memset(t, 0, sizeof *t);
	t->content = cJSON_CreateArray();
}

void
anthropic_turn_free(struct anthropic_turn *t)
{
	cJSON_Delete(t->content);
	memset(t, 0, sizeof *t);
}

static int
anthropic_fail(struct anthropic_turn *t, const char *why)
{
	snprintf(t->err_msg, sizeof t->err_msg, "%s", why);
	return -1;
}

static long
anthropic_count(const cJSON *o, const char *name)
{
	const cJSON	*n = cJSON_GetObjectItemCaseSensitive(o, name);

	if (!cJSON_IsNumber(n) || n->valuedouble < 0 || n->valuedouble > 1e12)
		return -1;
	return (long)n->valuedouble;
}

/* Usage counts present in o replace the ones known (message_delta's are cumulative). */
static void
anthropic_usage(struct provider_usage *u, const cJSON *o)
{
	long	 n;

	if (!cJSON_IsObject(o))
		return;
	if ((n = anthropic_count(o, "input_tokens")) >= 0)
		u->input = n;
	if ((n = anthropic_count(o, "output_tokens")) >= 0)
		u->output = n;
	if ((n = anthropic_count(o, "cache_creation_input_tokens")) >= 0)
		u->cache_write = n;
	if ((n = anthropic_count(o, "cache_read_input_tokens")) >= 0)
		u->cache_read = n;
}

/* A block as the API sent it, kept only with the fields a later request repeats. */
static cJSON *
anthropic_block(const cJSON *b)
{
	const char	*type = json_get_string(b, "type");
	const char	*s;
	cJSON		*o;

	if (type == NULL)
		return NULL;
	if ((o = cJSON_CreateObject()) == NULL)
		return NULL;
	cJSON_AddStringToObject(o, "type", type);
	if (strcmp(type, "text") == 0) {
		s = json_get_string(b, "text");
		cJSON_AddStringToObject(o, "text", s != NULL ? s : "");
	} else if (strcmp(type, "tool_use") == 0) {
		const char *id = json_get_string(b, "id"), *name = json_get_string(b, "name");
		const cJSON *in = cJSON_GetObjectItemCaseSensitive(b, "input");

		if (id == NULL || name == NULL || strlen(id) > 256 || strlen(name) > 128) {
			cJSON_Delete(o);
			return NULL;
		}
		cJSON_AddStringToObject(o, "id", id);
		cJSON_AddStringToObject(o, "name", name);
		cJSON_AddItemToObject(o, "input", cJSON_IsObject(in) ?
		    cJSON_Duplicate(in, 1) : cJSON_CreateObject());
	} else if (strcmp(type, "thinking") == 0 || strcmp(type, "redacted_thinking") == 0) {
		/* Repeated as sent; the agent never asks for thinking, a proxy may. */
		cJSON_Delete(o);
		return cJSON_Duplicate(b, 1);
	}
	return o;
}

static int
anthropic_append(cJSON *block, const char *field, const char *s)
{
	cJSON	*cur = cJSON_GetObjectItemCaseSensitive(block, field);
	size_t	 a, b;
	char	*joined;

	a = cJSON_IsString(cur) ? strlen(cur->valuestring) : 0;
	b = strlen(s);
	if (a + b > ANTHROPIC_MAX_TEXT)
		return -1;
	if ((joined = malloc(a + b + 1)) == NULL)
		return -1;
	if (a > 0)
		memcpy(joined, cur->valuestring, a);
	memcpy(joined + a, s, b + 1);
	cJSON_DeleteItemFromObjectCaseSensitive(block, field);
	cJSON_AddStringToObject(block, field, joined);
	free(joined);
	return 0;
}

static int
anthropic_delta(struct anthropic_turn *t, const cJSON *ev)
{
	const cJSON	*index = cJSON_GetObjectItemCaseSensitive(ev, "index");
	const cJSON	*delta = cJSON_GetObjectItemCaseSensitive(ev, "delta");
	const char	*type = json_get_string(delta, "type"), *s;
	cJSON		*block;

	if (!cJSON_IsNumber(index) || index->valuedouble < 0 ||
	    index->valuedouble >= cJSON_GetArraySize(t->content) || type == NULL)
		return anthropic_fail(t, "content_block_delta without a known block");
	block = cJSON_GetArrayItem(t->content, (int)index->valuedouble);
	if (strcmp(type, "text_delta") == 0) {
		if ((s = json_get_string(delta, "text")) == NULL ||
		    anthropic_append(block, "text", s) == -1)
			return anthropic_fail(t, "bad text_delta");
	} else if (strcmp(type, "input_json_delta") == 0) {
		if ((s = json_get_string(delta, "partial_json")) == NULL ||
		    anthropic_append(block, "_partial", s) == -1)
			return anthropic_fail(t, "bad input_json_delta");
	} else if (strcmp(type, "thinking_delta") == 0) {
		if ((s = json_get_string(delta, "thinking")) == NULL ||
		    anthropic_append(block, "thinking", s) == -1)
			return anthropic_fail(t, "bad thinking_delta");
	} else if (strcmp(type, "signature_delta") == 0) {
		if ((s = json_get_string(delta, "signature")) == NULL ||
		    anthropic_append(block, "signature", s) == -1)
			return anthropic_fail(t, "bad signature_delta");
	}
	/* Other delta types (citations) are not used by the agent's requests. */
	return 0;
}

/* content_block_stop: a tool_use's streamed input becomes its input object. */
static int
anthropic_block_stop(struct anthropic_turn *t, const cJSON *ev)
{
	const cJSON	*index = cJSON_GetObjectItemCaseSensitive(ev, "index");
	cJSON		*block, *partial, *input;

	if (!cJSON_IsNumber(index) || index->valuedouble < 0 ||
	    index->valuedouble >= cJSON_GetArraySize(t->content))
		return anthropic_fail(t, "content_block_stop without a known block");
	block = cJSON_GetArrayItem(t->content, (int)index->valuedouble);
	partial = cJSON_GetObjectItemCaseSensitive(block, "_partial");
	if (partial == NULL)
		return 0;
	input = cJSON_IsString(partial) && partial->valuestring[0] != '\0' ?
	    cJSON_Parse(partial->valuestring) : cJSON_CreateObject();
	cJSON_DeleteItemFromObjectCaseSensitive(block, "_partial");
	if (!cJSON_IsObject(input)) {
		cJSON_Delete(input);
		return anthropic_fail(t, "a tool call's streamed input is not a JSON object");
	}
	cJSON_DeleteItemFromObjectCaseSensitive(block, "input");
	cJSON_AddItemToObject(block, "input", input);
	return 0;
}

int
anthropic_stream_event(struct anthropic_turn *t, const char *event, const char *data,
    size_t len)
{
	cJSON		*ev, *block;
	const cJSON	*o;
	const char	*type, *s;
	int		 rc = 0;

	(void)event;	/* the data's own "type" is authoritative */
	if (t->done)
		return 0;
	if ((ev = json_parse(data, len)) == NULL || !cJSON_IsObject(ev) ||
	    (type = json_get_string(ev, "type")) == NULL) {
		cJSON_Delete(ev);
		return anthropic_fail(t, "a streamed event is not a JSON object with a type");
	}
	if (strcmp(type, "message_start") == 0) {
		o = cJSON_GetObjectItemCaseSensitive(ev, "message");
		anthropic_usage(&t->usage, cJSON_GetObjectItemCaseSensitive(o, "usage"));
		t->started = 1;
	} else if (!t->started && strcmp(type, "error") != 0 && strcmp(type, "ping") != 0) {
		rc = anthropic_fail(t, "a streamed event before message_start");
	} else if (strcmp(type, "content_block_start") == 0) {
		o = cJSON_GetObjectItemCaseSensitive(ev, "index");
		if (!cJSON_IsNumber(o) ||
		    o->valuedouble != cJSON_GetArraySize(t->content) ||
		    cJSON_GetArraySize(t->content) >= ANTHROPIC_MAX_BLOCKS ||
		    (block = anthropic_block(cJSON_GetObjectItemCaseSensitive(ev,
		    "content_block"))) == NULL)
			rc = anthropic_fail(t, "bad content_block_start");
		else
			cJSON_AddItemToArray(t->content, block);
	} else if (strcmp(type, "content_block_delta") == 0) {
		rc = anthropic_delta(t, ev);
	} else if (strcmp(type, "content_block_stop") == 0) {
		rc = anthropic_block_stop(t, ev);
	} else if (strcmp(type, "message_delta") == 0) {
		o = cJSON_GetObjectItemCaseSensitive(ev, "delta");
		if ((s = json_get_string(o, "stop_reason")) != NULL)
			snprintf(t->stop_reason, sizeof t->stop_reason, "%s", s);
		anthropic_usage(&t->usage, cJSON_GetObjectItemCaseSensitive(ev, "usage"));
	} else if (strcmp(type, "message_stop") == 0) {
		t->done = 1;
	} else if (strcmp(type, "error") == 0) {
		o = cJSON_GetObjectItemCaseSensitive(ev, "error");
		snprintf(t->err_type, sizeof t->err_type, "%s",
		    (s = json_get_string(o, "type")) != NULL ? s : "error");
		snprintf(t->err_msg, sizeof t->err_msg, "%s",
		    (s = json_get_string(o, "message")) != NULL ? s : "");
		rc = -1;
	}
	/* ping, and event types added later, are ignored as the API asks. */
	cJSON_Delete(ev);
	return rc;
}

int
anthropic_parse_message(struct anthropic_turn *t, const char *body, size_t len)
{
	cJSON		*m, *block;
	const cJSON	*c, *b;
	const char	*s;
	int		 rc = 0;

	if ((m = json_parse(body, len)) == NULL || !cJSON_IsObject(m)) {
		cJSON_Delete(m);
		return anthropic_fail(t, "the answer is not a JSON object");
	}
	if ((s = json_get_string(m, "type")) == NULL || strcmp(s, "message") != 0 ||
	    !cJSON_IsArray(c = cJSON_GetObjectItemCaseSensitive(m, "content")) ||
	    cJSON_GetArraySize(c) > ANTHROPIC_MAX_BLOCKS) {
		rc = anthropic_fail(t, "the answer is not a message with content");
		goto out;
	}
	cJSON_ArrayForEach(b, c) {
		if ((block = anthropic_block(b)) == NULL) {
			rc = anthropic_fail(t, "a content block is malformed");
			goto out;
		}
		cJSON_AddItemToArray(t->content, block);
	}
	if ((s = json_get_string(m, "stop_reason")) != NULL)
		snprintf(t->stop_reason, sizeof t->stop_reason, "%s", s);
	anthropic_usage(&t->usage, cJSON_GetObjectItemCaseSensitive(m, "usage"));
	t->started = t->done = 1;
out:
	cJSON_Delete(m);
	return rc;
}

int
anthropic_parse_error(const char *body, size_t len, char *type, size_t typelen,
    char *msg, size_t msglen)
{
	cJSON		*m;
	const cJSON	*e;
	const char	*s;
	int		 rc = -1;

	if ((m = json_parse(body, len)) == NULL)
		return -1;
	e = cJSON_GetObjectItemCaseSensitive(m, "error");
	if (cJSON_IsObject(e) && (s = json_get_string(e, "type")) != NULL) {
		snprintf(type, typelen, "%s", s);
		s = json_get_string(e, "message");
		snprintf(msg, msglen, "%s", s != NULL ? s : "");
		rc = 0;
	}
	cJSON_Delete(m);
	return rc;
}

cJSON *
anthropic_request(const char *model, long max_tokens, const char *system,
    const cJSON *tools, const cJSON *messages, int stream)
{
	cJSON	*r, *sys, *blk, *t, *last;

	if ((r = cJSON_CreateObject()) == NULL)
		return NULL;
	cJSON_AddStringToObject(r, "model", model);
	cJSON_AddNumberToObject(r, "max_tokens", (double)max_tokens);
	/*
	 * Prompt caching: a breakpoint after the system prompt and one after the last
	 * tool, so the unchanging prefix of every turn is read from the cache.
	 */
	if (system != NULL && (sys = cJSON_AddArrayToObject(r, "system")) != NULL) {
		blk = cJSON_CreateObject();
		cJSON_AddStringToObject(blk, "type", "text");
		cJSON_AddStringToObject(blk, "text", system);
		cJSON_AddItemToObject(cJSON_AddObjectToObject(blk, "cache_control"), "type",
		    cJSON_CreateString("ephemeral"));
		cJSON_AddItemToArray(sys, blk);
	}
	if (tools != NULL && cJSON_GetArraySize(tools) > 0) {
		t = cJSON_Duplicate(tools, 1);
		last = cJSON_GetArrayItem(t, cJSON_GetArraySize(t) - 1);
		cJSON_AddItemToObject(cJSON_AddObjectToObject(last, "cache_control"), "type",
		    cJSON_CreateString("ephemeral"));
		cJSON_AddItemToObject(r, "tools", t);
	}
	cJSON_AddItemToObject(r, "messages", cJSON_Duplicate(messages, 1));
	if (stream)
		cJSON_AddTrueToObject(r, "stream");
	return r;
}
