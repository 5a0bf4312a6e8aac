/*
 * Claude Code as an engine. The floor reaches every Bash call through a PreToolUse
 * hook installed by --settings; gated calls come to the bridge's approval tool through
 * --permission-prompt-tool and --mcp-config. Those files, and the run token the hook
 * reads, live in the run's private state directory, never in the worktree, where the
 * agent could rewrite them.
 *
 * --setting-sources "" loads no settings file but ours: not the worktree's
 * .claude/settings.json or settings.local.json, which would otherwise grant themselves
 * permissions.allow (e.g. "Bash") in a trusted directory and skip the approval tool,
 * and not the user settings of the run's private CLAUDE_CONFIG_DIR (spec.c), which the
 * agent can write while it runs.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine_claude.h"
#include "json.h"
#include "wire.h"

int
engine_claude_check_hook(const char *path, char *err, size_t errlen)
{
	struct stat	st;

	if (path == NULL || path[0] != '/') {
		snprintf(err, errlen, "the floor hook path is not absolute: %s",
		    path != NULL ? path : "(none)");
		return -1;
	}
	if (stat(path, &st) == -1) {
		snprintf(err, errlen, "the floor hook %s is missing: %s", path,
		    strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode) || access(path, X_OK) == -1) {
		snprintf(err, errlen, "the floor hook %s is not an executable file", path);
		return -1;
	}
	return 0;
}

/*
 * The hook runs in exec form (no shell between Claude Code and the hook: nothing to
 * quote, one process less per call) and with onFailure "block": a hook that cannot
 * start or times out then blocks the call as exit 2 does. disableAllHooks is pinned
 * false because flag settings outrank a repository's .claude/settings.json.
 */
char *
engine_claude_settings(const struct engine_claude_opts *o, const char *token_file)
{
	cJSON	*root, *hooks, *pre, *m, *list, *h, *args;
	char	 port[16], *text;

	snprintf(port, sizeof port, "%d", o->port);
	root = cJSON_CreateObject();
	cJSON_AddBoolToObject(root, "disableAllHooks", 0);
	hooks = cJSON_AddObjectToObject(root, "hooks");
	pre = cJSON_AddArrayToObject(hooks, "PreToolUse");
	m = cJSON_CreateObject();
	cJSON_AddStringToObject(m, "matcher", "Bash");
	list = cJSON_AddArrayToObject(m, "hooks");
	h = cJSON_CreateObject();
	cJSON_AddStringToObject(h, "type", "command");
	cJSON_AddStringToObject(h, "command", o->hook_path);
	args = cJSON_AddArrayToObject(h, "args");
	cJSON_AddItemToArray(args, cJSON_CreateString("--port"));
	cJSON_AddItemToArray(args, cJSON_CreateString(port));
	/* The token stays off the hook's argv: /proc/<pid>/cmdline is readable by all. */
	cJSON_AddItemToArray(args, cJSON_CreateString("--token-file"));
	cJSON_AddItemToArray(args, cJSON_CreateString(token_file));
	cJSON_AddNumberToObject(h, "timeout", CW_HOOK_SETTINGS_TIMEOUT_S);
	cJSON_AddStringToObject(h, "onFailure", "block");
	cJSON_AddItemToArray(list, h);
	cJSON_AddItemToArray(pre, m);
	text = json_print(root);
	cJSON_Delete(root);
	return text;
}

char *
engine_claude_mcp_config(const struct engine_claude_opts *o)
{
	cJSON	*root, *servers, *s, *hdr;
	char	 url[64], *text;

	snprintf(url, sizeof url, "http://127.0.0.1:%d/mcp", o->port);
	root = cJSON_CreateObject();
	servers = cJSON_AddObjectToObject(root, "mcpServers");
	s = cJSON_AddObjectToObject(servers, ENGINE_CLAUDE_SERVER);
	cJSON_AddStringToObject(s, "type", "http");
	cJSON_AddStringToObject(s, "url", url);
	hdr = cJSON_AddObjectToObject(s, "headers");
	cJSON_AddStringToObject(hdr, CW_HOOK_RUN_HEADER, o->token);
	/* The per-server tool-call limit (ms); the default of about a minute is too short. */
	cJSON_AddNumberToObject(s, "timeout", (double)o->tool_timeout_ms);
	text = json_print(root);
	cJSON_Delete(root);
	return text;
}

static int
engine_claude_write(const char *dir, const char *name, const char *text, mode_t mode,
    struct strlist *files, char *err, size_t errlen)
{
	char	path[4096];
	size_t	len = strlen(text), off = 0;
	ssize_t	n;
	int	fd;

	if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path) {
		snprintf(err, errlen, "state directory path too long");
		return -1;
	}
	(void)unlink(path);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
	    mode)) == -1) {
		snprintf(err, errlen, "cannot create %s: %s", path, strerror(errno));
		return -1;
	}
	while (off < len) {
		if ((n = write(fd, text + off, len - off)) == -1) {
			if (errno == EINTR)
				continue;
			snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
			close(fd);
			return -1;
		}
		off += (size_t)n;
	}
	if (close(fd) == -1 || strlist_add(files, path) == -1) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

int
engine_claude_prepare(const struct engine_claude_opts *o, struct strlist *argv,
    struct strlist *env, struct strlist *files, char *err, size_t errlen)
{
	char	*settings, *mcp, buf[64];
	int	 rc = -1;

	if (engine_claude_check_hook(o->hook_path, err, errlen) == -1)
		return -1;
	if (o->permission_mode == NULL || (strcmp(o->permission_mode, "plan") != 0 &&
	    strcmp(o->permission_mode, "acceptEdits") != 0)) {
		snprintf(err, errlen, "permission mode must be plan or acceptEdits");
		return -1;
	}
	/* The hook's token first: settings.json names it. 0400, only the run reads it. */
	if (engine_claude_write(o->state_dir, ENGINE_CLAUDE_TOKEN_FILE, o->token, 0400,
	    files, err, errlen) == -1)
		return -1;
	settings = engine_claude_settings(o, files->v[files->n - 1]);
	mcp = engine_claude_mcp_config(o);
	if (settings == NULL || mcp == NULL) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (engine_claude_write(o->state_dir, "settings.json", settings, 0600, files, err,
	    errlen) == -1 ||
	    engine_claude_write(o->state_dir, "mcp.json", mcp, 0600, files, err,
	    errlen) == -1)
		goto out;
	if (strlist_add(argv, o->engine_path) == -1 ||
	    strlist_add(argv, "-p") == -1 || strlist_add(argv, o->prompt) == -1 ||
	    strlist_add(argv, "--output-format") == -1 ||
	    strlist_add(argv, "stream-json") == -1 ||
	    strlist_add(argv, "--verbose") == -1 ||
	    strlist_add(argv, "--permission-mode") == -1 ||
	    strlist_add(argv, o->permission_mode) == -1 ||
	    strlist_add(argv, "--permission-prompt-tool") == -1 ||
	    strlist_add(argv, ENGINE_CLAUDE_TOOL) == -1 ||
	    strlist_add(argv, "--mcp-config") == -1 ||
	    strlist_add(argv, files->v[files->n - 1]) == -1 ||
	    strlist_add(argv, "--settings") == -1 ||
	    strlist_add(argv, files->v[files->n - 2]) == -1 ||
	    strlist_add(argv, "--setting-sources") == -1 || strlist_add(argv, "") == -1)
		goto nomem;
	if (o->max_turns > 0) {
		snprintf(buf, sizeof buf, "%d", o->max_turns);
		if (strlist_add(argv, "--max-turns") == -1 || strlist_add(argv, buf) == -1)
			goto nomem;
	}
	if (o->max_dollars > 0) {
		snprintf(buf, sizeof buf, "%.4f", o->max_dollars);
		if (strlist_add(argv, "--max-budget-usd") == -1 ||
		    strlist_add(argv, buf) == -1)
			goto nomem;
	}
	snprintf(buf, sizeof buf, "MCP_TOOL_TIMEOUT=%ld", o->tool_timeout_ms);
	if (strlist_add(env, buf) == -1)
		goto nomem;
	rc = 0;
	goto out;
nomem:
	snprintf(err, errlen, "out of memory");
out:
	cJSON_free(settings);
	cJSON_free(mcp);
	return rc;
}

int
engine_claude_line(const char *line, size_t len, struct engine_claude_usage *u)
{
	const cJSON	*msg;
	const char	*type, *id, *sub;
	cJSON		*j;
	double		 d;
	int		 n, changed = 0;

	if ((j = json_parse(line, len)) == NULL || !cJSON_IsObject(j)) {
		cJSON_Delete(j);
		return -1;
	}
	type = json_get_string(j, "type");
	if (type != NULL && strcmp(type, "assistant") == 0) {
		/* One API response can arrive as several events: count message ids. */
		msg = cJSON_GetObjectItemCaseSensitive(j, "message");
		id = json_get_string(msg, "id");
		if (id == NULL || strcmp(id, u->last_id) != 0) {
			u->turns++;
			snprintf(u->last_id, sizeof u->last_id, "%s", id != NULL ? id : "");
			changed = 1;
		}
	} else if (type != NULL && strcmp(type, "result") == 0) {
		u->have_result = 1;
		if (json_get_number(j, "total_cost_usd", &d) == 0 && d >= 0)
			u->dollars = d;
		if (json_get_int(j, "num_turns", &n) == 0 && n >= 0)
			u->turns = n;
		if ((sub = json_get_string(j, "subtype")) != NULL)
			snprintf(u->subtype, sizeof u->subtype, "%s", sub);
		if (json_get_bool(j, "is_error", &n) == 0)
			u->is_error = n;
		changed = 1;
	}
	cJSON_Delete(j);
	return changed;
}
