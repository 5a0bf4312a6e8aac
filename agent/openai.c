/* OpenAI-compatible Chat Completions: see openai.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "openai.h"

static int
openai_fail(struct anthropic_turn *t, const char *why)
{
	snprintf(t->err_msg, sizeof t->err_msg, "%s", why);
	return -1;
}

/* ---- the request ------------------------------------------------------------------ */

static cJSON *
openai_text_of(const cJSON *content)
{
	const cJSON	*b;
	const char	*type, *s;
	size_t		 len = 0;
	char		*buf;
	cJSON		*out;

	if (cJSON_IsString(content))
		return cJSON_CreateString(content->valuestring);
	cJSON_ArrayForEach(b, content)
		if ((type = json_get_string(b, "type")) != NULL && strcmp(type, "text") == 0 &&
		    (s = json_get_string(b, "text")) != NULL)
			len += strlen(s) + 1;
	if ((buf = calloc(1, len + 1)) == NULL)
		return NULL;
	cJSON_ArrayForEach(b, content)
		if ((type = json_get_string(b, "type")) != NULL && strcmp(type, "text") == 0 &&
		    (s = json_get_string(b, "text")) != NULL) {
			if (buf[0] != '\0')
				strcat(buf, "\n");
			strcat(buf, s);
		}
	out = cJSON_CreateString(buf);
	free(buf);
	return out;
}

/* One message of the agent's conversation as Chat Completions messages, into out. */
static void
openai_message(cJSON *out, const cJSON *m)
{
	const char	*role = json_get_string(m, "role"), *type;
	const cJSON	*content = cJSON_GetObjectItemCaseSensitive(m, "content"), *b;
	cJSON		*o, *calls = NULL, *c, *fn;
	char		*args;

	if (role == NULL)
		return;
	if (strcmp(role, "assistant") == 0) {
		o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "role", "assistant");
		cJSON_AddItemToObject(o, "content", openai_text_of(content));
		cJSON_ArrayForEach(b, content) {
			if ((type = json_get_string(b, "type")) == NULL ||
			    strcmp(type, "tool_use") != 0)
				continue;
			if (calls == NULL)
				calls = cJSON_AddArrayToObject(o, "tool_calls");
			c = cJSON_CreateObject();
			cJSON_AddStringToObject(c, "id", json_get_string(b, "id"));
			cJSON_AddStringToObject(c, "type", "function");
			fn = cJSON_AddObjectToObject(c, "function");
			cJSON_AddStringToObject(fn, "name", json_get_string(b, "name"));
			args = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(b,
			    "input"));
			cJSON_AddStringToObject(fn, "arguments", args != NULL ? args : "{}");
			cJSON_free(args);
			cJSON_AddItemToArray(calls, c);
		}
		cJSON_AddItemToArray(out, o);
		return;
	}
	/* A user message: its tool results become "tool" messages, its text a user one. */
	if (cJSON_IsArray(content)) {
		cJSON_ArrayForEach(b, content) {
			if ((type = json_get_string(b, "type")) == NULL ||
			    strcmp(type, "tool_result") != 0)
				continue;
			o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "role", "tool");
			cJSON_AddStringToObject(o, "tool_call_id",
			    json_get_string(b, "tool_use_id"));
			cJSON_AddStringToObject(o, "content",
			    json_get_string(b, "content") != NULL ?
			    json_get_string(b, "content") : "");
			cJSON_AddItemToArray(out, o);
		}
		cJSON_ArrayForEach(b, content)
			if ((type = json_get_string(b, "type")) != NULL &&
			    strcmp(type, "text") == 0)
				break;
		if (b == NULL)
			return;
	}
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "role", "user");
	cJSON_AddItemToObject(o, "content", openai_text_of(content));
	cJSON_AddItemToArray(out, o);
}

cJSON *
openai_request(const char *model, long max_tokens, const char *system,
    const cJSON *tools, const cJSON *messages, int stream)
{
	cJSON		*r, *msgs, *o, *ts, *t, *fn;
	const cJSON	*m, *tool;

	if ((r = cJSON_CreateObject()) == NULL)
		return NULL;
	cJSON_AddStringToObject(r, "model", model);
	cJSON_AddNumberToObject(r, "max_tokens", (double)max_tokens);
	msgs = cJSON_AddArrayToObject(r, "messages");
	if (system != NULL) {
		o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "role", "system");
		cJSON_AddStringToObject(o, "content", system);
		cJSON_AddItemToArray(msgs, o);
	}
	cJSON_ArrayForEach(m, messages)
		openai_message(msgs, m);
	if (tools != NULL && cJSON_GetArraySize(tools) > 0) {
		ts = cJSON_AddArrayToObject(r, "tools");
		cJSON_ArrayForEach(tool, tools) {
			t = cJSON_CreateObject();
			cJSON_AddStringToObject(t, "type", "function");
			fn = cJSON_AddObjectToObject(t, "function");
			cJSON_AddStringToObject(fn, "name", json_get_string(tool, "name"));
			cJSON_AddStringToObject(fn, "description",
			    json_get_string(tool, "description"));
			cJSON_AddItemToObject(fn, "parameters", cJSON_Duplicate(
			    cJSON_GetObjectItemCaseSensitive(tool, "input_schema"), 1));
			cJSON_AddItemToArray(ts, t);
		}
	}
	if (stream) {
		cJSON_AddTrueToObject(r, "stream");
		cJSON_AddTrueToObject(cJSON_AddObjectToObject(r, "stream_options"),
		    "include_usage");
	}
	return r;
}

/* ---- reading an answer -------------------------------------------------------------- */

static void
openai_usage(struct anthropic_turn *t, const cJSON *u)
{
	double	 prompt = 0, completion = 0, cached = 0;

	if (!cJSON_IsObject(u))
		return;
	if (json_get_number(u, "prompt_tokens", &prompt) == -1 || prompt < 0 || prompt > 1e12)
		prompt = 0;
	if (json_get_number(u, "completion_tokens", &completion) == -1 || completion < 0 ||
	    completion > 1e12)
		completion = 0;
	if (json_get_number(cJSON_GetObjectItemCaseSensitive(u, "prompt_tokens_details"),
	    "cached_tokens", &cached) == -1 || cached < 0 || cached > prompt)
		cached = 0;
	/* prompt_tokens counts the cached ones too: they are priced apart. */
	t->usage.input = (long)(prompt - cached);
	t->usage.cache_read = (long)cached;
	t->usage.output = (long)completion;
}

static void
openai_finish_reason(struct anthropic_turn *t, const char *s)
{
	if (s == NULL)
		return;
	/* In the Messages API's words, which the agent's loop reads. */
	snprintf(t->stop_reason, sizeof t->stop_reason, "%s",
	    strcmp(s, "tool_calls") == 0 || strcmp(s, "function_call") == 0 ? "tool_use" :
	    strcmp(s, "length") == 0 ? "max_tokens" : "end_turn");
}

static int
openai_append(cJSON *block, const char *field, const char *s)
{
	cJSON	*cur = cJSON_GetObjectItemCaseSensitive(block, field);
	size_t	 a = cJSON_IsString(cur) ? strlen(cur->valuestring) : 0, b = strlen(s);
	char	*joined;

	if (a + b > ANTHROPIC_MAX_TEXT || (joined = malloc(a + b + 1)) == NULL)
		return -1;
	if (a > 0)
		memcpy(joined, cur->valuestring, a);
	memcpy(joined + a, s, b + 1);
	cJSON_DeleteItemFromObjectCaseSensitive(block, field);
	cJSON_AddStringToObject(block, field, joined);
	free(joined);
	return 0;
}

static cJSON *
openai_text_block(struct anthropic_turn *t)
{
	cJSON	*b;

	cJSON_ArrayForEach(b, t->content) {
		const char *type = json_get_string(b, "type");

		if (type != NULL && strcmp(type, "text") == 0)
			return b;
	}
	if (cJSON_GetArraySize(t->content) >= ANTHROPIC_MAX_BLOCKS)
		return NULL;
	b = cJSON_CreateObject();
	cJSON_AddStringToObject(b, "type", "text");
	cJSON_AddStringToObject(b, "text", "");
	/* The text goes first, as a model says it before its calls. */
	cJSON_InsertItemInArray(t->content, 0, b);
	return b;
}

static cJSON *
openai_call_block(struct anthropic_turn *t, int index)
{
	cJSON	*b;
	int	 n;

	cJSON_ArrayForEach(b, t->content)
		if (json_get_int(b, "_oi", &n) == 0 && n == index)
			return b;
	if (index < 0 || index >= OPENAI_MAX_TOOL_CALLS ||
	    cJSON_GetArraySize(t->content) >= ANTHROPIC_MAX_BLOCKS)
		return NULL;
	b = cJSON_CreateObject();
	cJSON_AddStringToObject(b, "type", "tool_use");
	cJSON_AddNumberToObject(b, "_oi", index);
	cJSON_AddItemToArray(t->content, b);
	return b;
}

/* The calls' streamed arguments become their input objects; no call without a name. */
static int
openai_close_calls(struct anthropic_turn *t)
{
	cJSON	*b, *args, *input;
	char	 id[32];
	int	 n;

	cJSON_ArrayForEach(b, t->content) {
		if (json_get_int(b, "_oi", &n) == -1)
			continue;
		if (json_get_string(b, "name") == NULL)
			return openai_fail(t, "a tool call without a function name");
		if (json_get_string(b, "id") == NULL) {
			/* Some local servers send none: one is made up for the round trip. */
			snprintf(id, sizeof id, "call_%d", n);
			cJSON_AddStringToObject(b, "id", id);
		}
		args = cJSON_GetObjectItemCaseSensitive(b, "_args");
		input = cJSON_IsString(args) && args->valuestring[0] != '\0' ?
		    cJSON_Parse(args->valuestring) : cJSON_CreateObject();
		if (!cJSON_IsObject(input)) {
			cJSON_Delete(input);
			return openai_fail(t, "a tool call's arguments are not a JSON object");
		}
		cJSON_DeleteItemFromObjectCaseSensitive(b, "_args");
		cJSON_DeleteItemFromObjectCaseSensitive(b, "_oi");
		cJSON_AddItemToObject(b, "input", input);
	}
	return 0;
}

static int
openai_delta_calls(struct anthropic_turn *t, const cJSON *calls)
{
	const cJSON	*c, *fn;
	const char	*s;
	cJSON		*b;
	int		 index;

	cJSON_ArrayForEach(c, calls) {
		if (json_get_int(c, "index", &index) == -1 ||
		    (b = openai_call_block(t, index)) == NULL)
			return openai_fail(t, "a tool call delta without a usable index");
		if ((s = json_get_string(c, "id")) != NULL && strlen(s) <= 256 &&
		    json_get_string(b, "id") == NULL)
			cJSON_AddStringToObject(b, "id", s);
		fn = cJSON_GetObjectItemCaseSensitive(c, "function");
		if ((s = json_get_string(fn, "name")) != NULL && strlen(s) <= 128 &&
		    json_get_string(b, "name") == NULL)
			cJSON_AddStringToObject(b, "name", s);
		if ((s = json_get_string(fn, "arguments")) != NULL &&
		    openai_append(b, "_args", s) == -1)
			return openai_fail(t, "a tool call's arguments are too long");
	}
	return 0;
}

int
openai_stream_event(struct anthropic_turn *t, const char *data, size_t len)
{
	cJSON		*ev, *b;
	const cJSON	*choice, *delta, *e;
	const char	*s;
	int		 rc = 0;

	if (t->done)
		return 0;
	if (len == 6 && memcmp(data, "[DONE]", 6) == 0) {
		if (openai_close_calls(t) == -1)
			return -1;
		t->done = 1;
		return 0;
	}
	if ((ev = json_parse(data, len)) == NULL || !cJSON_IsObject(ev)) {
		cJSON_Delete(ev);
		return openai_fail(t, "a streamed chunk is not a JSON object");
	}
	if (cJSON_IsObject(e = cJSON_GetObjectItemCaseSensitive(ev, "error"))) {
		snprintf(t->err_type, sizeof t->err_type, "%s",
		    (s = json_get_string(e, "type")) != NULL ? s : "error");
		snprintf(t->err_msg, sizeof t->err_msg, "%s",
		    (s = json_get_string(e, "message")) != NULL ? s : "");
		cJSON_Delete(ev);
		return -1;
	}
	t->started = 1;
	openai_usage(t, cJSON_GetObjectItemCaseSensitive(ev, "usage"));
	choice = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(ev, "choices"), 0);
	if (cJSON_IsObject(choice)) {
		delta = cJSON_GetObjectItemCaseSensitive(choice, "delta");
		if ((s = json_get_string(delta, "content")) != NULL && s[0] != '\0' &&
		    ((b = openai_text_block(t)) == NULL || openai_append(b, "text", s) == -1))
			rc = openai_fail(t, "the streamed text is too long");
		if (rc == 0 && cJSON_IsArray(e = cJSON_GetObjectItemCaseSensitive(delta,
		    "tool_calls")))
			rc = openai_delta_calls(t, e);
		openai_finish_reason(t, json_get_string(choice, "finish_reason"));
	}
	cJSON_Delete(ev);
	return rc;
}

int
openai_parse_message(struct anthropic_turn *t, const char *body, size_t len)
{
	cJSON		*m, *b;
	const cJSON	*choice, *msg, *calls, *c, *fn;
	const char	*s;
	int		 rc = 0, i = 0;

	if ((m = json_parse(body, len)) == NULL || !cJSON_IsObject(m)) {
		cJSON_Delete(m);
		return openai_fail(t, "the answer is not a JSON object");
	}
	choice = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(m, "choices"), 0);
	msg = cJSON_GetObjectItemCaseSensitive(choice, "message");
	if (!cJSON_IsObject(msg)) {
		rc = openai_fail(t, "the answer has no choices[0].message");
		goto out;
	}
	if ((s = json_get_string(msg, "content")) != NULL && s[0] != '\0') {
		if (strlen(s) > ANTHROPIC_MAX_TEXT || (b = openai_text_block(t)) == NULL ||
		    openai_append(b, "text", s) == -1) {
			rc = openai_fail(t, "the answer's text is too long");
			goto out;
		}
	}
	calls = cJSON_GetObjectItemCaseSensitive(msg, "tool_calls");
	cJSON_ArrayForEach(c, calls) {
		if ((b = openai_call_block(t, i++)) == NULL) {
			rc = openai_fail(t, "too many tool calls");
			goto out;
		}
		fn = cJSON_GetObjectItemCaseSensitive(c, "function");
		if ((s = json_get_string(c, "id")) != NULL && strlen(s) <= 256)
			cJSON_AddStringToObject(b, "id", s);
		if ((s = json_get_string(fn, "name")) != NULL && strlen(s) <= 128)
			cJSON_AddStringToObject(b, "name", s);
		if ((s = json_get_string(fn, "arguments")) != NULL &&
		    openai_append(b, "_args", s) == -1) {
			rc = openai_fail(t, "a tool call's arguments are too long");
			goto out;
		}
	}
	if ((rc = openai_close_calls(t)) == -1)
		goto out;
	openai_finish_reason(t, json_get_string(choice, "finish_reason"));
	openai_usage(t, cJSON_GetObjectItemCaseSensitive(m, "usage"));
	t->started = t->done = 1;
out:
	cJSON_Delete(m);
	return rc;
}

int
openai_parse_error(const char *body, size_t len, char *type, size_t typelen, char *msg,
    size_t msglen)
{
	cJSON		*m;
	const cJSON	*e;
	const char	*s;
	int		 rc = -1;

	if ((m = json_parse(body, len)) == NULL)
		return -1;
	e = cJSON_GetObjectItemCaseSensitive(m, "error");
	if (cJSON_IsObject(e)) {
		s = json_get_string(e, "code");
		if (s == NULL)
			s = json_get_string(e, "type");
		snprintf(type, typelen, "%s", s != NULL ? s : "error");
		s = json_get_string(e, "message");
		snprintf(msg, msglen, "%s", s != NULL ? s : "");
		rc = 0;
	}
	cJSON_Delete(m);
	return rc;
}
