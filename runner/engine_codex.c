/*
 * Codex as an engine (`codex exec`, CLI 0.171.0, pinned in test/e2e/package.json). What
 * follows was found by running the pinned binary against test/fixtures/responses-server.js
 * and reading its source (codex-rs/hooks, codex-rs/exec, codex-rs/codex-api):
 *
 * The floor. Codex runs PreToolUse command hooks before a shell call with Claude Code's
 * protocol: the hook gets {"tool_name":"Bash","tool_input":{"command":...},...} on stdin
 * and blocks the call by exiting 2 with the reason on stderr, which reaches the model as
 * the call's output ("Command blocked by PreToolUse hook: <reason>"). Any other ending
 * of the hook lets the call through: cw-floor-hook exits 2 on every error of its own,
 * and a /bin/sh guard turns a hook that cannot start or is killed into a 2 as well
 * (CODEX_HOOK_GUARD). Only codex's own timeout (30 s; the hook gives up after 5) is
 * left failing open. The hook is declared with -c on
 * the command line, a "session flags" layer that outranks the user's config.toml (not
 * loaded at all: --ignore-user-config) and the worktree's .codex/config.toml (loaded
 * only for a trusted project, and never allowed to set hook state); features.hooks and
 * the hook's enabled state are pinned there too, and --dangerously-bypass-hook-trust
 * runs it without the trust record an interactive user would give.
 *
 * What the floor does not see: write_stdin, the tool that types into a process started
 * by exec_command, runs no hook. A shell started with tty=true would take any command
 * that way, so TTY sessions are switched off (--disable unified_exec_tty); without a TTY
 * a session's stdin is closed and write_stdin can only poll. apply_patch edits files
 * without a shell; Landlock bounds where.
 *
 * Its own sandbox and approvals: off (--dangerously-bypass-approvals-and-sandbox) while
 * ours is on; its Linux sandbox needs bubblewrap, which cannot run inside our user
 * namespace (every command fails). Whenever ours is not applied (CW_SANDBOX=off, or
 * sandbox.enabled false: engine_run.sandboxed), its workspace-write sandbox is used
 * instead, approvals "never". exec mode has no one to ask: no approval path.
 *
 * The provider: a model_providers entry of ours (Responses API, base URL from
 * configuration, key read from ENGINE_CODEX_KEY_ENV, which codex's shell environment
 * policy keeps from the commands it runs: names containing KEY are excluded).
 *
 * --strict-config makes codex refuse a -c key it does not know, so a pin that a later
 * version renames fails the run instead of silently not applying; analytics and
 * feedback uploads are off.
 *
 * Its state: everything under CODEX_HOME (config, sessions/, *.sqlite, skills/.system/,
 * .tmp/, installation_id); with HOME pointed at an empty directory nothing else was
 * written. The session's rollout (sessions/.../rollout-*.jsonl) is written there too,
 * for `cwctl run continue` (codex_keep()).
 *
 * Its output (--json): one JSON object a line: thread.started, turn.started,
 * item.started / item.updated / item.completed {item: {id, type: agent_message |
 * reasoning | command_execution | file_change | mcp_tool_call | web_search | todo_list |
 * error, ...}}, turn.completed {usage: tokens}, turn.failed {error: {message}}, error.
 * It reports tokens, not dollars: no dollar budget holds. It has no turn limit of its
 * own: turns are counted here (one when the turn starts, one more after each tool call
 * completes, since the model is then asked again, and one for each call the floor
 * refused, which shows in no item: floor_denied()) and when the count passes the
 * budget run.c holds the run and asks (the budget pause) or, with no pause, stops the
 * engine, before the next call's command can start.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine_codex.h"
#include "json.h"
#include "transcript.h"
#include "wire.h"

struct engine_stream {
	char	*last_text;	/* the last agent message: the final one, once the turn ends */
};

int
engine_codex_toml_string(const char *s, char *out, size_t outlen)
{
	size_t	o = 0;
	int	n;

	if (outlen < 3)
		return -1;
	out[o++] = '"';
	for (; *s != '\0'; s++) {
		unsigned char	c = (unsigned char)*s;

		if (outlen - o < 8)
			goto toolong;
		if (c == '"' || c == '\\') {
			out[o++] = '\\';
			out[o++] = (char)c;
		} else if (c < 0x20 || c == 0x7f) {
			n = snprintf(out + o, outlen - o, "\\u%04x", c);
			o += (size_t)n;
		} else
			out[o++] = (char)c;
	}
	if (outlen - o < 2)
		goto toolong;
	out[o++] = '"';
	out[o] = '\0';
	return 0;
toolong:
	errno = ENAMETOOLONG;
	return -1;
}

int
engine_codex_sh_quote(const char *s, char *out, size_t outlen)
{
	size_t	o = 0;

	if (outlen < 3)
		return -1;
	out[o++] = '\'';
	for (; *s != '\0'; s++) {
		if (outlen - o < 6)
			goto toolong;
		if (*s == '\'') {
			memcpy(out + o, "'\\''", 4);
			o += 4;
		} else
			out[o++] = *s;
	}
	if (outlen - o < 2)
		goto toolong;
	out[o++] = '\'';
	out[o] = '\0';
	return 0;
toolong:
	errno = ENAMETOOLONG;
	return -1;
}

void
engine_codex_command_text(const char *shown, char *out, size_t outlen)
{
	static const char *const prefixes[] = { "/bin/bash -lc ", "/bin/bash -c ",
	    "bash -lc ", "/bin/sh -c ", "/usr/bin/bash -lc " };
	const char	*s = shown;
	size_t		 len;

	for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
		if (strncmp(shown, prefixes[i], strlen(prefixes[i])) == 0) {
			s = shown + strlen(prefixes[i]);
			break;
		}
	}
	len = strlen(s);
	/* 'text' with no quote inside is the command as the model wrote it. */
	if (s != shown && len >= 2 && s[0] == '\'' && s[len - 1] == '\'' &&
	    memchr(s + 1, '\'', len - 2) == NULL) {
		snprintf(out, outlen, "%.*s", (int)(len - 2), s + 1);
		return;
	}
	snprintf(out, outlen, "%s", s != shown ? s : shown);
}

/* ---- prepare: the command line ----------------------------------------------------- */

static int
codex_arg2(struct strlist *argv, const char *a, const char *b)
{
	return strlist_add(argv, a) == -1 || strlist_add(argv, b) == -1 ? -1 : 0;
}

/* -c NAME=VALUE, VALUE printed with fmt. */
static int
codex_config(struct strlist *argv, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int
codex_config(struct strlist *argv, const char *fmt, ...)
{
	char	 buf[8192];
	va_list	 ap;
	int	 n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof buf) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return codex_arg2(argv, "-c", buf);
}

/*
 * Codex blocks a call only when the hook exits 2 with a reason on stderr; a hook that
 * cannot start, is killed or exits otherwise lets the call through (codex-rs/hooks,
 * pre_tool_use.rs). It runs the hook's command through a shell, so the hook is wrapped
 * in /bin/sh (one quoted word whatever that shell is) to turn every other ending into
 * a 2 with a reason.
 */
#define CODEX_HOOK_GUARD "\"$0\" \"$@\"; s=$?; if [ $s -eq 0 ] || [ $s -eq 2 ]; then " \
	"exit $s; fi; echo \"Clockwork floor: the floor hook failed (status $s); the " \
	"call is blocked\" >&2; exit 2"

/*
 * The floor: a PreToolUse hook on Bash (codex's name for its shell calls, exec_command
 * included), in the session-flags layer, enabled whatever a user layer says. The token
 * stays off the hook's command line (/proc/<pid>/cmdline is readable by every process
 * of the run).
 */
static int
codex_floor_args(const struct engine_run *r, const char *token_file,
    struct strlist *argv)
{
	char	hook[PATH_MAX + 8], tok[PATH_MAX + 8], guard[256];
	char	cmd[3 * PATH_MAX], tcmd[6 * PATH_MAX];

	if (engine_codex_sh_quote(CODEX_HOOK_GUARD, guard, sizeof guard) == -1 ||
	    engine_codex_sh_quote(r->hook_path, hook, sizeof hook) == -1 ||
	    engine_codex_sh_quote(token_file, tok, sizeof tok) == -1)
		return -1;
	snprintf(cmd, sizeof cmd, "/bin/sh -c %s %s --port %d --token-file %s", guard,
	    hook, r->port, tok);
	if (engine_codex_toml_string(cmd, tcmd, sizeof tcmd) == -1)
		return -1;
	if (codex_config(argv, "features.hooks=true") == -1 ||
	    codex_config(argv, "hooks.PreToolUse=[{matcher=\"Bash\", hooks=[{type="
	    "\"command\", command=%s, timeout_sec=%d}]}]", tcmd,
	    CW_HOOK_SETTINGS_TIMEOUT_S) == -1 ||
	    /* The key codex gives the first hook of the session-flags layer. */
	    codex_config(argv, "hooks.state={\"/<session-flags>/config.toml:pre_tool_use:"
	    "0:0\"={enabled=true}}") == -1 ||
	    strlist_add(argv, "--dangerously-bypass-hook-trust") == -1 ||
	    codex_arg2(argv, "--disable", "unified_exec_tty") == -1 ||
	    /* Sub-agents would be more sessions to reason about; one is enough. */
	    codex_arg2(argv, "--disable", "multi_agent") == -1)
		return -1;
	return 0;
}

static int
codex_provider_args(const struct engine_run *r, struct strlist *argv)
{
	char	url[4096], model[1024];

	if (engine_codex_toml_string(r->base_url != NULL ? r->base_url :
	    "https://api.openai.com/v1", url, sizeof url) == -1)
		return -1;
	/* No key (a local provider): no env_key, which codex would insist on. */
	if (codex_config(argv, "model_provider=\"%s\"", ENGINE_CODEX_PROVIDER) == -1 ||
	    codex_config(argv, "model_providers.%s={name=\"Clockwork\", base_url=%s, "
	    "%s%s%swire_api=\"responses\", supports_websockets=false, "
	    "request_max_retries=1, stream_max_retries=1}", ENGINE_CODEX_PROVIDER, url,
	    r->key != NULL ? "env_key=\"" : "", r->key != NULL ? ENGINE_CODEX_KEY_ENV : "",
	    r->key != NULL ? "\", " : "") == -1 ||
	    /* Keep the key (a name with KEY in it) out of the commands' environment. */
	    codex_config(argv, "shell_environment_policy.ignore_default_excludes=false") ==
	    -1)
		return -1;
	if (r->model != NULL) {
		if (engine_codex_toml_string(r->model, model, sizeof model) == -1 ||
		    codex_config(argv, "model=%s", model) == -1)
			return -1;
	}
	return 0;
}

static int
codex_prepare(const struct engine_run *r, struct strlist *argv, struct strlist *env,
    struct strlist *files, char *err, size_t errlen)
{
	int		 ours = r->sandboxed;
	char		 token_file[PATH_MAX], kv[8192];

	if (engine_check_hook(r->hook_path, err, errlen) == -1)
		return -1;
	if (r->port <= 0) {
		snprintf(err, errlen, "codex: no bridge port for the floor hook");
		return -1;
	}
	if (r->prompt == NULL || r->prompt[0] == '\0') {
		snprintf(err, errlen, "codex: a run needs a prompt");
		return -1;
	}
	if (r->mode == NULL || (strcmp(r->mode, "plan") != 0 &&
	    strcmp(r->mode, "acceptEdits") != 0)) {
		snprintf(err, errlen, "permission mode must be plan or acceptEdits");
		return -1;
	}
	/*
	 * Codex keeps a run from editing only with its own read-only sandbox, which cannot
	 * run inside ours (bubblewrap in a user namespace): a plan run would be one whose
	 * every command fails, or one that may edit. Neither is a plan.
	 */
	if (strcmp(r->mode, "plan") == 0 && ours) {
		snprintf(err, errlen, "codex: permission mode plan is not available inside "
		    "Clockwork's sandbox (codex's read-only sandbox cannot nest in it); use "
		    "acceptEdits");
		return -1;
	}
	if (engine_write_file(r->state_dir, ENGINE_CODEX_TOKEN_FILE, r->token, 0400,
	    token_file, sizeof token_file, err, errlen) == -1)
		return -1;
	/* The engine reads the token file and runs the hook: both read-only to the run. */
	if (strlist_add(files, token_file) == -1 || strlist_add(files, r->hook_path) == -1)
		goto nomem;
	if (strlist_add(argv, "codex") == -1 || strlist_add(argv, "exec") == -1 ||
	    strlist_add(argv, "--json") == -1 ||
	    strlist_add(argv, "--skip-git-repo-check") == -1 ||
	    strlist_add(argv, "--ignore-user-config") == -1 ||
	    strlist_add(argv, "--ignore-rules") == -1 ||
	    /* Our -c keys are checked: a renamed pin in a later codex is an error. */
	    strlist_add(argv, "--strict-config") == -1 ||
	    codex_config(argv, "analytics.enabled=false") == -1 ||
	    codex_config(argv, "feedback.enabled=false") == -1 ||
	    codex_floor_args(r, token_file, argv) == -1 ||
	    codex_provider_args(r, argv) == -1)
		goto nomem;
	if (ours) {
		if (strlist_add(argv, "--dangerously-bypass-approvals-and-sandbox") == -1)
			goto nomem;
	} else if (codex_arg2(argv, "--sandbox", strcmp(r->mode, "plan") == 0 ?
	    "read-only" : "workspace-write") == -1 ||
	    codex_config(argv, "approval_policy=\"never\"") == -1)
		goto nomem;
	/*
	 * `codex exec [options] resume <id> -- <prompt>`: the options above stay exec's
	 * (seen with 0.171.0: the -c provider and hook pins apply to the resumed session),
	 * and the rollout home() put back is found by its id in any sessions/ day.
	 */
	if (r->resume_id != NULL) {
		if (!conversation_id_valid("codex", r->resume_id)) {
			snprintf(err, errlen, "codex: '%.80s' is not a session id",
			    r->resume_id);
			return -1;
		}
		if (codex_arg2(argv, "resume", r->resume_id) == -1)
			goto nomem;
	}
	if (codex_arg2(argv, "--", r->prompt) == -1)
		goto nomem;
	if (r->key != NULL) {
		if ((size_t)snprintf(kv, sizeof kv, "%s=%s", ENGINE_CODEX_KEY_ENV, r->key) >=
		    sizeof kv) {
			explicit_bzero(kv, sizeof kv);
			snprintf(err, errlen, "codex: the provider key is too long");
			return -1;
		}
		if (strlist_add(env, kv) == -1) {
			explicit_bzero(kv, sizeof kv);
			goto nomem;
		}
		explicit_bzero(kv, sizeof kv);
	}
	return 0;
nomem:
	snprintf(err, errlen, "codex: cannot build the command line: %s", strerror(errno));
	return -1;
}

/* ---- home: CODEX_HOME --------------------------------------------------------------- */

/*
 * The conversation. Codex writes a session as one rollout file,
 * CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl (so no --ephemeral:
 * the file is in the private home, removed with the TMPDIR once kept), and `codex exec
 * resume <id>` finds it by its id under any day (seen with 0.171.0, a fresh CODEX_HOME
 * holding only that file under sessions/2020/01/01, another cwd; the new turns were
 * appended to it). Only that file is kept: not config.toml, hooks.json, the *.sqlite
 * state or anything else the run wrote in its home.
 */
#define CODEX_RESUMED_DAY	"sessions/2000/01/01"

/* A rollout's file name for thread id: rollout-<[0-9T-]>-<id>.jsonl. */
static int
codex_rollout_name(const char *name, const char *id)
{
	size_t	n = strlen(name), idn = strlen(id);

	if (strncmp(name, "rollout-", 8) != 0 || n > NAME_MAX || n < 8 + idn + 7 ||
	    strcmp(name + n - 6, ".jsonl") != 0 || name[n - 6 - idn - 1] != '-' ||
	    strncmp(name + n - 6 - idn, id, idn) != 0)
		return 0;
	return strspn(name + 8, "0123456789T-") >= n - 8 - idn - 6;
}

/* The one file in dirfd named as id's rollout, in out; 0 when there is none. */
static int
codex_find_rollout(int dirfd, const char *id, char *out, size_t outlen)
{
	struct dirent	*de;
	DIR		*d;
	int		 fd, found = 0;

	if ((fd = dup(dirfd)) == -1 || (d = fdopendir(fd)) == NULL) {
		if (fd != -1)
			close(fd);
		return -1;
	}
	rewinddir(d);
	while ((de = readdir(d)) != NULL)
		if (codex_rollout_name(de->d_name, id)) {
			snprintf(out, outlen, "%s", de->d_name);
			found = 1;
			break;
		}
	closedir(d);
	return found;
}

static int
codex_keep(const struct engine_keep *k, char *err, size_t errlen)
{
	struct dirent	*y, *m, *dd;
	DIR		*dy, *dm, *dday;
	char		 rel[64], name[NAME_MAX + 1], e[512];
	int		 sfd, fd, rc = 0;

	if (k->home_fd == -1 || !conversation_id_valid("codex", k->session))
		return 0;
	if ((sfd = engine_open_beneath(k->home_fd, "sessions", O_RDONLY | O_DIRECTORY)) ==
	    -1 || (dy = fdopendir(sfd)) == NULL) {
		if (sfd != -1)
			close(sfd);
		return 0;
	}
	/* sessions/YYYY/MM/DD: three levels of plain names, never through a link. */
	while (rc == 0 && (y = readdir(dy)) != NULL) {
		if (y->d_name[0] == '.' || strlen(y->d_name) > 8 ||
		    (fd = engine_open_beneath(dirfd(dy), y->d_name, O_RDONLY |
		    O_DIRECTORY)) == -1 || (dm = fdopendir(fd)) == NULL)
			continue;
		while (rc == 0 && (m = readdir(dm)) != NULL) {
			if (m->d_name[0] == '.' || strlen(m->d_name) > 8 ||
			    (fd = engine_open_beneath(dirfd(dm), m->d_name, O_RDONLY |
			    O_DIRECTORY)) == -1 || (dday = fdopendir(fd)) == NULL)
				continue;
			while (rc == 0 && (dd = readdir(dday)) != NULL) {
				if (dd->d_name[0] == '.' || strlen(dd->d_name) > 8 ||
				    (fd = engine_open_beneath(dirfd(dday), dd->d_name,
				    O_RDONLY | O_DIRECTORY)) == -1)
					continue;
				if (codex_find_rollout(fd, k->session, name,
				    sizeof name) == 1) {
					if (engine_copy_beneath(fd, name, k->keep_fd, name, e,
					    sizeof e) == 0)
						rc = 1;
					else {
						snprintf(rel, sizeof rel, "sessions/%.8s/%.8s/"
						    "%.8s", y->d_name, m->d_name, dd->d_name);
						snprintf(err, errlen, "codex: keep %s/%s: %s",
						    rel, name, e);
						rc = -1;
					}
				}
				close(fd);
			}
			closedir(dday);
		}
		closedir(dm);
	}
	closedir(dy);
	return rc;
}

/* The kept rollout back under a day of our naming in the new CODEX_HOME. */
static int
codex_restore(const struct engine_home *h, char *err, size_t errlen)
{
	char	 name[NAME_MAX + 1], e[512];
	int	 hfd, dfd = -1, rc = -1;

	if (!conversation_id_valid("codex", h->resume_id) || h->resume_fd == -1 ||
	    codex_find_rollout(h->resume_fd, h->resume_id, name, sizeof name) != 1) {
		snprintf(err, errlen, "codex: the earlier run kept no rollout of session "
		    "%.80s", h->resume_id != NULL ? h->resume_id : "-");
		return -1;
	}
	if ((hfd = open(h->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1 ||
	    engine_mkdirs_beneath(hfd, CODEX_RESUMED_DAY) == -1 ||
	    (dfd = engine_open_beneath(hfd, CODEX_RESUMED_DAY, O_RDONLY | O_DIRECTORY)) ==
	    -1)
		snprintf(err, errlen, "codex: make %s/%s: %s", h->dir, CODEX_RESUMED_DAY,
		    strerror(errno));
	else if (engine_copy_beneath(h->resume_fd, name, dfd, name, e, sizeof e) == -1)
		snprintf(err, errlen, "codex: the earlier run's session %s cannot be put "
		    "back: %s", h->resume_id, e);
	else
		rc = 0;
	if (dfd != -1)
		close(dfd);
	if (hfd != -1)
		close(hfd);
	return rc;
}

static int
codex_home(const struct engine_home *h, char *err, size_t errlen)
{
	char	kv[PATH_MAX + 16];

	if (h->resume_id != NULL && codex_restore(h, err, errlen) == -1)
		return -1;

	if ((size_t)snprintf(kv, sizeof kv, "CODEX_HOME=%s", h->dir) >= sizeof kv) {
		snprintf(err, errlen, "codex: home path too long");
		return -1;
	}
	if (strlist_add(h->env, kv) == -1 ||
	    strlist_add(h->notes, "codex: CODEX_HOME is private to the run (made in its "
	    "TMPDIR, removed with it); the user's ~/.codex is neither read nor granted") ==
	    -1) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

/* ---- the --json stream --------------------------------------------------------------- */

static struct engine_stream *
codex_stream_new(void)
{
	return calloc(1, sizeof(struct engine_stream));
}

static void
codex_stream_free(struct engine_stream *s)
{
	if (s == NULL)
		return;
	free(s->last_text);
	free(s);
}

static void
codex_say(engine_say_fn *say, void *arg, cJSON *entry)
{
	if (entry != NULL && say != NULL)
		say(arg, entry);
	else
		cJSON_Delete(entry);
}

/* file_change: its one path, or "update a.txt, add b.txt". */
static void
codex_file_change(const cJSON *item, const char *id, engine_say_fn *say, void *arg)
{
	const cJSON	*c, *changes = cJSON_GetObjectItemCaseSensitive(item, "changes");
	const char	*first = NULL, *p, *kind;
	char		 detail[TRANSCRIPT_FIELD_MAX];
	size_t		 o = 0;
	int		 n;

	detail[0] = '\0';
	cJSON_ArrayForEach(c, changes) {
		if ((p = json_get_string(c, "path")) == NULL)
			continue;
		if (first == NULL)
			first = p;
		kind = json_get_string(c, "kind");
		if (o < sizeof detail)
			o += (size_t)snprintf(detail + o, sizeof detail - o, "%s%s %s",
			    o > 0 ? ", " : "", kind != NULL ? kind : "change", p);
	}
	/* An entry carries a path or a detail: one file is its path, several the list. */
	n = cJSON_GetArraySize(changes);
	codex_say(say, arg, transcript_tool("apply_patch", id, NULL, n == 1 ? first : NULL,
	    detail[0] != '\0' ? detail : NULL));
}

static int
codex_item(struct engine_stream *s, const cJSON *item, int done,
    struct engine_progress *pr, engine_say_fn *say, void *arg)
{
	const char	*type = json_get_string(item, "type"), *id = json_get_string(item, "id");
	const char	*text, *status, *server, *tool;
	char		 cmd[TRANSCRIPT_FIELD_MAX], name[256], *args;
	int		 code, failed;

	if (type == NULL)
		return 0;
	status = json_get_string(item, "status");
	failed = status != NULL && strcmp(status, "failed") == 0;
	if (strcmp(type, "command_execution") == 0) {
		if (!done) {
			engine_codex_command_text(json_get_string(item, "command") != NULL ?
			    json_get_string(item, "command") : "", cmd, sizeof cmd);
			codex_say(say, arg, transcript_tool("shell", id, cmd, NULL, NULL));
			return 0;
		}
		text = json_get_string(item, "aggregated_output");
		if (json_get_int(item, "exit_code", &code) == 0 && code != 0)
			failed = 1;
		codex_say(say, arg, transcript_result(id, text != NULL ? text : "",
		    text != NULL ? strlen(text) : 0, failed));
		pr->turns++;
		return 1;
	}
	if (strcmp(type, "mcp_tool_call") == 0 || strcmp(type, "web_search") == 0) {
		server = json_get_string(item, "server");
		tool = json_get_string(item, "tool");
		if (!done) {
			if (server != NULL && tool != NULL)
				snprintf(name, sizeof name, "%s.%s", server, tool);
			else
				snprintf(name, sizeof name, "%s", type);
			args = json_print(cJSON_GetObjectItemCaseSensitive(item, "arguments"));
			codex_say(say, arg, transcript_tool(name, id, NULL, NULL,
			    args != NULL ? args : json_get_string(item, "query")));
			cJSON_free(args);
			return 0;
		}
		args = json_print(cJSON_GetObjectItemCaseSensitive(item, "result"));
		text = args != NULL ? args : json_get_string(item, "error");
		codex_say(say, arg, transcript_result(id, text != NULL ? text : "",
		    text != NULL ? strlen(text) : 0, failed));
		cJSON_free(args);
		pr->turns++;
		return 1;
	}
	if (!done)
		return 0;
	if (strcmp(type, "file_change") == 0) {
		codex_file_change(item, id, say, arg);
		if (failed)
			codex_say(say, arg, transcript_result(id, "patch failed", 12, 1));
		pr->turns++;
		return 1;
	}
	if (strcmp(type, "agent_message") == 0 &&
	    (text = json_get_string(item, "text")) != NULL) {
		codex_say(say, arg, transcript_text(text));
		free(s->last_text);
		s->last_text = strdup(text);
		return 0;
	}
	/* reasoning, todo_list and non-fatal error items stay in the raw log. */
	return 0;
}

static void
codex_finish(struct engine_progress *pr, const char *text, int is_error,
    const char *subtype, engine_say_fn *say, void *arg)
{
	pr->have_result = 1;
	pr->is_error = is_error;
	snprintf(pr->subtype, sizeof pr->subtype, "%s", subtype);
	free(pr->result);
	pr->result = text != NULL ? strdup(text) : NULL;
	codex_say(say, arg, transcript_final(text != NULL ? text : "", is_error));
	/* Codex reports tokens, never dollars: the entry says so (-1). */
	codex_say(say, arg, transcript_usage(-1, pr->turns));
}

static int
codex_stream_line(struct engine_stream *s, const char *line, size_t len,
    struct engine_progress *pr, engine_say_fn *say, void *arg)
{
	const cJSON	*item, *e;
	const char	*type, *msg;
	cJSON		*j;
	int		 changed = 0;

	if ((j = json_parse(line, len)) == NULL || !cJSON_IsObject(j) ||
	    (type = json_get_string(j, "type")) == NULL) {
		cJSON_Delete(j);
		return -1;
	}
	item = cJSON_GetObjectItemCaseSensitive(j, "item");
	if (strcmp(type, "thread.started") == 0) {
		/* The thread id names the session `codex exec resume` takes. */
		if (pr->session[0] == '\0' &&
		    conversation_id_valid("codex", json_get_string(j, "thread_id")))
			snprintf(pr->session, sizeof pr->session, "%s", json_get_string(j,
			    "thread_id"));
	} else if (strcmp(type, "turn.started") == 0) {
		if (pr->turns == 0) {
			pr->turns = 1;
			changed = 1;
		}
	} else if (strcmp(type, "item.started") == 0 && cJSON_IsObject(item))
		changed = codex_item(s, item, 0, pr, say, arg);
	else if (strcmp(type, "item.completed") == 0 && cJSON_IsObject(item))
		changed = codex_item(s, item, 1, pr, say, arg);
	else if (strcmp(type, "turn.completed") == 0) {
		codex_finish(pr, s->last_text, 0, "success", say, arg);
		changed = 1;
	} else if (strcmp(type, "turn.failed") == 0) {
		e = cJSON_GetObjectItemCaseSensitive(j, "error");
		msg = json_get_string(e, "message");
		codex_finish(pr, msg != NULL ? msg : "the turn failed", 1, "error", say,
		    arg);
		changed = 1;
	}
	cJSON_Delete(j);
	return changed;
}

/* A refused call leaves no item in codex's output: its model turn is counted here. */
static int
codex_floor_denied(struct engine_stream *s, struct engine_progress *pr)
{
	(void)s;
	pr->turns++;
	return 1;
}

/* Codex's hook body is Claude Code's: tool_name "Bash", tool_input.command. */
static int
codex_floor_command(const cJSON *body, const char **command)
{
	const char	*tool;

	*command = NULL;
	if (!cJSON_IsObject(body) || (tool = json_get_string(body, "tool_name")) == NULL)
		return -1;
	if (strcmp(tool, "Bash") != 0)
		return 0;
	*command = json_get_string(cJSON_GetObjectItemCaseSensitive(body, "tool_input"),
	    "command");
	return *command != NULL ? 0 : -1;
}

const struct engine_ops engine_codex_ops = {
	.name = "codex",
	.prepare = codex_prepare,
	.home = codex_home,
	.stream_new = codex_stream_new,
	.stream_line = codex_stream_line,
	.stream_free = codex_stream_free,
	.floor_command = codex_floor_command,
	.floor_denied = codex_floor_denied,
	.seatbelt = NULL,	/* its state is all in CODEX_HOME and TMPDIR, in the run's TMPDIR */
	.keep = codex_keep,
};
