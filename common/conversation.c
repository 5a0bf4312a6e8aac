/* Conversation ids and where conversations are kept (conversation.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conversation.h"
#include "json.h"

static int
conversation_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static int
conversation_uuid(const char *id)
{
	static const int groups[] = { 8, 4, 4, 4, 12 };
	const char	*p = id;

	for (size_t g = 0; g < sizeof groups / sizeof groups[0]; g++) {
		for (int i = 0; i < groups[g]; i++, p++)
			if (!conversation_hex(*p))
				return 0;
		if (g < 4 && *p++ != '-')
			return 0;
	}
	return *p == '\0';
}

static int
conversation_alnum(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

int
conversation_id_valid(const char *engine, const char *id)
{
	size_t	n;

	if (engine == NULL || id == NULL || (n = strnlen(id, CONVERSATION_ID_MAX + 1)) ==
	    0 || n > CONVERSATION_ID_MAX)
		return 0;
	if (strcmp(engine, "claude") == 0 || strcmp(engine, "codex") == 0)
		return conversation_uuid(id);
	if (strcmp(engine, "opencode") == 0) {
		if (strncmp(id, "ses_", 4) != 0 || n < 4 + 20 || n > 4 + 40)
			return 0;
		for (size_t i = 4; i < n; i++)
			if (!conversation_alnum(id[i]))
				return 0;
		return 1;
	}
	if (strcmp(engine, "byok") == 0) {
		if (n != 32)
			return 0;
		for (size_t i = 0; i < n; i++)
			if (!((id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f')))
				return 0;
		return 1;
	}
	return 0;
}

int
conversation_engine_resumes(const char *engine)
{
	return engine != NULL && (strcmp(engine, "claude") == 0 ||
	    strcmp(engine, "codex") == 0 || strcmp(engine, "opencode") == 0 ||
	    strcmp(engine, "byok") == 0);
}

int
conversation_dir(const char *cwhome, long long task_id, const char *run_id, char *out,
    size_t outlen)
{
	size_t	n;

	if (run_id == NULL || (n = strlen(run_id)) == 0 || run_id[0] == '.' ||
	    run_id[0] == '-' || strspn(run_id, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnop"
	    "qrstuvwxyz0123456789._-") != n || strstr(run_id, "..") != NULL || task_id < 1) {
		errno = EINVAL;
		return -1;
	}
	if ((size_t)snprintf(out, outlen, "%s/conversations/tasks/%lld/%s", cwhome, task_id,
	    run_id) >= outlen) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

int
conversation_messages_parse(const char *text, size_t len, cJSON **out,
    char *err, size_t errlen)
{
	const cJSON	*m, *content, *b;
	const char	*role;
	cJSON		*j, *msgs;
	int		 n = 0, last = 0;	/* 1 user, 2 assistant */

	*out = NULL;
	if ((j = json_parse(text, len)) == NULL || !cJSON_IsObject(j)) {
		cJSON_Delete(j);
		snprintf(err, errlen, "the kept conversation is not a JSON object");
		return -1;
	}
	msgs = cJSON_GetObjectItemCaseSensitive(j, "messages");
	if (!cJSON_IsArray(msgs)) {
		snprintf(err, errlen, "the kept conversation has no messages array");
		goto bad;
	}
	cJSON_ArrayForEach(m, msgs) {
		if (++n > CONVERSATION_MESSAGES_MAX) {
			snprintf(err, errlen, "the kept conversation has more than %d "
			    "messages", CONVERSATION_MESSAGES_MAX);
			goto bad;
		}
		role = json_get_string(m, "role");
		content = cJSON_GetObjectItemCaseSensitive(m, "content");
		if (!cJSON_IsObject(m) || role == NULL || (strcmp(role, "user") != 0 &&
		    strcmp(role, "assistant") != 0) || (!cJSON_IsString(content) &&
		    !cJSON_IsArray(content))) {
			snprintf(err, errlen, "the kept conversation's message %d is not "
			    "{role: user|assistant, content}", n);
			goto bad;
		}
		cJSON_ArrayForEach(b, content)
			if (!cJSON_IsObject(b) || json_get_string(b, "type") == NULL) {
				snprintf(err, errlen, "the kept conversation's message %d has "
				    "a content block without a type", n);
				goto bad;
			}
		/* The providers want turns that alternate, a user's first. */
		if ((last == 0 && strcmp(role, "user") != 0) ||
		    (last == 1 && strcmp(role, "user") == 0) ||
		    (last == 2 && strcmp(role, "assistant") == 0)) {
			snprintf(err, errlen, "the kept conversation's message %d does not "
			    "alternate user and assistant", n);
			goto bad;
		}
		last = strcmp(role, "user") == 0 ? 1 : 2;
	}
	if (n == 0) {
		snprintf(err, errlen, "the kept conversation is empty");
		goto bad;
	}
	*out = cJSON_DetachItemViaPointer(j, msgs);
	cJSON_Delete(j);
	return 0;
bad:
	cJSON_Delete(j);
	return -1;
}
