/* Conversation ids and where conversations are kept (conversation.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "conversation.h"

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
