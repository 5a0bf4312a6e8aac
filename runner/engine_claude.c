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
 *
 * Claude Code's state on Linux (engine "claude", CLI 2.1.332, native binary), found by
 * running it for real with HOME in a temporary directory and CLAUDE_CONFIG_DIR set:
 *   strace -f -e trace=%file,unlink,rename,mkdir claude -p ... --setting-sources ""
 * against the scripted model server (test/fixtures/model-server.js), TMPDIR set.
 * With CLAUDE_CONFIG_DIR=D every file of its own state is under D, .claude.json
 * included (it is not in $HOME any more). What it writes there:
 *   D/.claude.json (written as D/.claude.json.tmp.<pid>.<hex>, then renamed; locked by
 *       mkdir D/.claude.json.lock; a copy in D/backups/.claude.json.backup.<ms>)
 *   D/projects/<cwd-slug>/<session>.jsonl       the transcript
 *   D/projects/<cwd-slug>/memory/               auto memory (MEMORY.md is read back
 *       into every later session in that directory)
 *   D/sessions/<pid>.json, <pid>.<hex>.key (tmp + rename)   session registry
 *   D/telemetry/1p_failed_events.*.json          queued telemetry
 *   D/plugins/store/<plugin>.json (tmp + rename, mkdir .lock)   plugin store
 *   D/.credentials.json                          the OAuth login: read; the CLI's code
 *       writes a refreshed token back here (not exercised: it needs a real account)
 *   $TMPDIR/claude-<uid>/, $TMPDIR/cc-socks/     temporary files and sockets
 * What it reads there: .credentials.json, .claude.json (oauthAccount, userID,
 * onboarding marks, primaryApiKey, per-project trust under "projects"), settings.json
 * (unless --setting-sources leaves "user" out), CLAUDE.md, agents, commands, skills,
 * themes, plugins/<name>.json, state/, cache/. Outside D it still looks for
 * ~/.claude/remote/run, ~/.claude/state/unattended-serving-consent.json and
 * ~/.config/anthropic/ (none of which it needs to run), and reads ~/.gitconfig, its
 * own package directory, /etc (resolv.conf, hosts, nsswitch.conf, ssl certs), /proc.
 *
 * What we grant (SPEC G2): nothing of the user's ~/.claude or ~/.claude.json. Each run
 * gets D = <TMPDIR>/engine-home (engine_claude_home()), made new with the run's
 * TMPDIR and removed with it (spec_remove_tmpdir(): depth first, never following a
 * link), so nothing a run
 * writes there (memory, shell snapshots, settings) is read by a later run or by the
 * user's own sessions (the one exception: the session's transcript, kept for `cwctl
 * run continue` of the same task and put back only in that run's home; see "the
 * conversation" below), and the user's history, transcripts and
 * snapshots are out of reach. Before the sandbox exists the runner copies the login
 * in: .credentials.json whole, and from .claude.json only engine_claude_json_keys. A
 * refreshed OAuth token lands in the run's copy and is discarded with it (see
 * docs/SECURITY.md, "Claude Code's private home").
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* asprintf */
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine.h"
#include "engine_claude.h"
#include "json.h"
#include "prices.h"
#include "seatbelt.h"
#include "transcript.h"
#include "wire.h"

/*
 * The hook runs in exec form (no shell between Claude Code and the hook: nothing to
 * quote, one process less per call) and with onFailure "block": a hook that cannot
 * start or times out then blocks the call as exit 2 does. disableAllHooks is pinned
 * false because flag settings outrank a repository's .claude/settings.json.
 */
char *
engine_claude_settings(const struct engine_run *o, const char *token_file)
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
engine_claude_mcp_config(const struct engine_run *o)
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
engine_claude_setenv(struct strlist *env, const char *name, const char *value)
{
	char	*kv;
	int	 rc;

	if (asprintf(&kv, "%s=%s", name, value) == -1)
		return -1;
	rc = strlist_add(env, kv);
	explicit_bzero(kv, strlen(kv));
	free(kv);
	return rc;
}

static int
engine_claude_prepare(const struct engine_run *o, struct strlist *argv,
    struct strlist *env, struct strlist *files, char *err, size_t errlen)
{
	char	*settings = NULL, *mcp = NULL, buf[64];
	char	 token_file[PATH_MAX], settings_file[PATH_MAX], mcp_file[PATH_MAX];
	int	 rc = -1;

	if (engine_check_hook(o->hook_path, err, errlen) == -1)
		return -1;
	if (o->mode == NULL || (strcmp(o->mode, "plan") != 0 &&
	    strcmp(o->mode, "acceptEdits") != 0)) {
		snprintf(err, errlen, "permission mode must be plan or acceptEdits");
		return -1;
	}
	/* The hook's token first: settings.json names it. 0400, only the run reads it. */
	if (engine_write_file(o->state_dir, ENGINE_CLAUDE_TOKEN_FILE, o->token, 0400,
	    token_file, sizeof token_file, err, errlen) == -1)
		return -1;
	settings = engine_claude_settings(o, token_file);
	mcp = engine_claude_mcp_config(o);
	if (settings == NULL || mcp == NULL) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (engine_write_file(o->state_dir, "settings.json", settings, 0600, settings_file,
	    sizeof settings_file, err, errlen) == -1 ||
	    engine_write_file(o->state_dir, "mcp.json", mcp, 0600, mcp_file,
	    sizeof mcp_file, err, errlen) == -1)
		goto out;
	if (strlist_add(files, token_file) == -1 ||
	    strlist_add(files, settings_file) == -1 || strlist_add(files, mcp_file) == -1 ||
	    /* Claude Code starts the hook from inside the sandbox: it must run there. */
	    strlist_add(files, o->hook_path) == -1)
		goto nomem;
	if (strlist_add(argv, "claude") == -1 ||
	    strlist_add(argv, "-p") == -1 || strlist_add(argv, o->prompt) == -1 ||
	    strlist_add(argv, "--output-format") == -1 ||
	    strlist_add(argv, "stream-json") == -1 ||
	    strlist_add(argv, "--verbose") == -1 ||
	    /* The usage of each response as it ends: the runner counts the dollars. */
	    strlist_add(argv, "--include-partial-messages") == -1 ||
	    strlist_add(argv, "--permission-mode") == -1 ||
	    strlist_add(argv, o->mode) == -1 ||
	    strlist_add(argv, "--permission-prompt-tool") == -1 ||
	    strlist_add(argv, ENGINE_CLAUDE_TOOL) == -1 ||
	    strlist_add(argv, "--mcp-config") == -1 || strlist_add(argv, mcp_file) == -1 ||
	    strlist_add(argv, "--settings") == -1 ||
	    strlist_add(argv, settings_file) == -1 ||
	    strlist_add(argv, "--setting-sources") == -1 || strlist_add(argv, "") == -1)
		goto nomem;
	if (o->model != NULL &&
	    (strlist_add(argv, "--model") == -1 || strlist_add(argv, o->model) == -1))
		goto nomem;
	/* The earlier run's session, put back in the private home by home(). */
	if (o->resume_id != NULL) {
		if (!conversation_id_valid("claude", o->resume_id)) {
			snprintf(err, errlen, "claude: '%.80s' is not a session id",
			    o->resume_id);
			goto out;
		}
		if (strlist_add(argv, "--resume") == -1 ||
		    strlist_add(argv, o->resume_id) == -1)
			goto nomem;
	}
	if (o->max_turns > 0) {
		snprintf(buf, sizeof buf, "%d", o->max_turns);
		if (strlist_add(argv, "--max-turns") == -1 || strlist_add(argv, buf) == -1)
			goto nomem;
	}
	/*
	 * The runner counts the dollars from the stream and pauses at the budget
	 * (run.c); max_dollars is then only the hard ceiling, which Claude Code's own
	 * count holds too, since that count also sees the requests its stream does not
	 * show.
	 */
	if (o->max_dollars > 0) {
		snprintf(buf, sizeof buf, "%.4f", o->max_dollars);
		if (strlist_add(argv, "--max-budget-usd") == -1 ||
		    strlist_add(argv, buf) == -1)
			goto nomem;
	}
	snprintf(buf, sizeof buf, "MCP_TOOL_TIMEOUT=%ld", o->tool_timeout_ms);
	if (strlist_add(env, buf) == -1)
		goto nomem;
	/* The key the daemon sent on stdin, and the provider configuration names. */
	if (o->key != NULL &&
	    engine_claude_setenv(env, "ANTHROPIC_API_KEY", o->key) == -1)
		goto nomem;
	if (o->base_url != NULL &&
	    engine_claude_setenv(env, "ANTHROPIC_BASE_URL", o->base_url) == -1)
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

/* ---- the private home ------------------------------------------------------------ */

/*
 * The top-level keys of the user's ~/.claude.json a run's private home gets: the
 * account the login belongs to, the anonymous user id, the onboarding marks, and the
 * API key a Console /login keeps there on Linux. Nothing else: never "projects" (trust,
 * allowed tools, per-project history), "mcpServers" or counters.
 */
static const char *const engine_claude_json_keys[] = {
	"oauthAccount", "userID", "hasCompletedOnboarding", "lastOnboardingVersion",
	"primaryApiKey",
};

/* The most of the user's login files the runner copies into a private home. */
#define ENGINE_CLAUDE_JSON_MAX	(64 * 1024 * 1024)
#define ENGINE_CLAUDE_CRED_MAX	(1024 * 1024)

static int
engine_claude_note(const struct engine_home *h, const char *what, const char *path,
    const char *why)
{
	char	 buf[PATH_MAX + 256];

	snprintf(buf, sizeof buf, "Claude Code %s %s not copied: %s", what, path, why);
	return strlist_add_unique(h->notes, buf);
}

/* From .claude.json only engine_claude_json_keys, into dst (new, 0600). */
static int
engine_claude_account(const struct engine_home *h, const char *src, const char *dst,
    char *err, size_t errlen)
{
	char	*text, *out;
	cJSON	*in, *o;
	size_t	 len;
	int	 rc;

	if ((text = engine_read_user_file(src, ENGINE_CLAUDE_JSON_MAX, &len)) == NULL) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 0;
		return engine_claude_note(h, "account", src, strerror(errno));
	}
	in = json_parse(text, len);
	explicit_bzero(text, len);
	free(text);
	if (in == NULL || !cJSON_IsObject(in)) {
		cJSON_Delete(in);
		return engine_claude_note(h, "account", src, "not a JSON object");
	}
	if ((o = cJSON_CreateObject()) == NULL) {
		cJSON_Delete(in);
		goto nomem;
	}
	for (size_t i = 0; i < sizeof engine_claude_json_keys /
	    sizeof engine_claude_json_keys[0]; i++) {
		const cJSON	*v = cJSON_GetObjectItemCaseSensitive(in,
				    engine_claude_json_keys[i]);
		cJSON		*c;

		if (v == NULL)
			continue;
		if ((c = cJSON_Duplicate(v, 1)) == NULL ||
		    !cJSON_AddItemToObject(o, engine_claude_json_keys[i], c)) {
			cJSON_Delete(c);
			cJSON_Delete(o);
			cJSON_Delete(in);
			goto nomem;
		}
	}
	cJSON_Delete(in);
	out = json_print(o);
	cJSON_Delete(o);
	if (out == NULL)
		goto nomem;
	len = strlen(out);
	rc = engine_write_new(dst, out, len, 0600);
	if (rc == -1)
		snprintf(err, errlen, "spec: write %s: %s", dst, strerror(errno));
	explicit_bzero(out, len);
	cJSON_free(out);
	return rc;
nomem:
	snprintf(err, errlen, "spec: out of memory");
	return -1;
}

/* ---- the conversation: kept and resumed ------------------------------------------- */

/*
 * Claude Code keeps a session as one transcript, <D>/projects/<cwd-slug>/<id>.jsonl,
 * and `claude --resume <id>` finds it under any project directory of D (seen with CLI
 * 2.1.332: a transcript moved to D/projects/other/ resumed from another cwd, and the
 * new turns were appended to that file). A continued run has a worktree of its own,
 * so the transcript goes back under a directory of our naming. Only the transcript is
 * kept: not the memory, settings or anything else the run wrote in its home.
 */
#define ENGINE_CLAUDE_RESUMED	"projects/clockwork-resumed"

static int
engine_claude_restore(const struct engine_home *h, char *err, size_t errlen)
{
	char	 name[CONVERSATION_ID_MAX + 8], e[512];
	int	 hfd, dfd, rc;

	if (!conversation_id_valid("claude", h->resume_id) || h->resume_fd == -1) {
		snprintf(err, errlen, "claude: no session to resume");
		return -1;
	}
	snprintf(name, sizeof name, "%s.jsonl", h->resume_id);
	if ((hfd = open(h->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1 ||
	    engine_mkdirs_beneath(hfd, ENGINE_CLAUDE_RESUMED) == -1 ||
	    (dfd = engine_open_beneath(hfd, ENGINE_CLAUDE_RESUMED, O_RDONLY |
	    O_DIRECTORY)) == -1) {
		snprintf(err, errlen, "claude: make %s/%s: %s", h->dir, ENGINE_CLAUDE_RESUMED,
		    strerror(errno));
		if (hfd != -1)
			close(hfd);
		return -1;
	}
	rc = engine_copy_beneath(h->resume_fd, name, dfd, name, e, sizeof e);
	close(dfd);
	close(hfd);
	if (rc == -1)
		snprintf(err, errlen, "claude: the earlier run's session %s cannot be put "
		    "back: %s", h->resume_id, e);
	return rc;
}

/* The transcript of k->session, from whichever project directory holds it. */
static int
engine_claude_keep(const struct engine_keep *k, char *err, size_t errlen)
{
	struct dirent	*de;
	DIR		*d;
	char		 name[CONVERSATION_ID_MAX + 8], rel[NAME_MAX + 80], e[512];
	int		 pfd, rc = 0;

	if (k->home_fd == -1 || !conversation_id_valid("claude", k->session))
		return 0;
	snprintf(name, sizeof name, "%s.jsonl", k->session);
	if ((pfd = engine_open_beneath(k->home_fd, "projects", O_RDONLY | O_DIRECTORY)) ==
	    -1)
		return 0;
	if ((d = fdopendir(pfd)) == NULL) {
		close(pfd);
		snprintf(err, errlen, "claude: read projects/: %s", strerror(errno));
		return -1;
	}
	while (rc == 0 && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(rel, sizeof rel, "%s/%s", de->d_name, name);
		if (engine_copy_beneath(dirfd(d), rel, k->keep_fd, name, e, sizeof e) == 0)
			rc = 1;
		else if (errno != ENOENT && errno != ENOTDIR) {
			snprintf(err, errlen, "claude: keep projects/%s: %s", rel, e);
			rc = -1;
		}
	}
	closedir(d);
	return rc;
}

/*
 * A private CLAUDE_CONFIG_DIR in the run's TMPDIR (see docs/engines.md for every file
 * the CLI keeps there). The user's ~/.claude and ~/.claude.json are never granted:
 * before the sandbox exists the login is copied in, .credentials.json whole and from
 * .claude.json only engine_claude_json_keys. A refreshed OAuth token lands in the
 * run's copy and is discarded with it.
 */
static int
engine_claude_home(const struct engine_home *h, char *err, size_t errlen)
{
	char		 src_dir[PATH_MAX], src_json[PATH_MAX], from[PATH_MAX];
	char		 to[PATH_MAX], *text;
	const char	*ccd = getenv("CLAUDE_CONFIG_DIR");
	size_t		 len;
	int		 rc, save;

	/* Where the user's own sessions keep their login (CLAUDE_CONFIG_DIR if set). */
	if (ccd != NULL && ccd[0] == '/') {
		snprintf(src_dir, sizeof src_dir, "%s", ccd);
		snprintf(src_json, sizeof src_json, "%s/.claude.json", ccd);
	} else {
		snprintf(src_dir, sizeof src_dir, "%s/.claude", h->user_home);
		snprintf(src_json, sizeof src_json, "%s/.claude.json", h->user_home);
	}
	if ((size_t)snprintf(from, sizeof from, "%s/.credentials.json", src_dir) >=
	    sizeof from || (size_t)snprintf(to, sizeof to, "%s/.credentials.json",
	    h->dir) >= sizeof to) {
		snprintf(err, errlen, "spec: %s: path too long", src_dir);
		return -1;
	}
	if ((text = engine_read_user_file(from, ENGINE_CLAUDE_CRED_MAX, &len)) != NULL) {
		rc = engine_write_new(to, text, len, 0600);
		save = errno;
		explicit_bzero(text, len);
		free(text);
		if (rc == -1) {
			snprintf(err, errlen, "spec: copy the Claude Code login to %s: %s", to,
			    strerror(save));
			return -1;
		}
	} else if (errno != ENOENT && errno != ENOTDIR &&
	    engine_claude_note(h, "login", from, strerror(errno)) == -1)
		goto nomem;
	if ((size_t)snprintf(to, sizeof to, "%s/.claude.json", h->dir) >= sizeof to) {
		snprintf(err, errlen, "spec: %s: path too long", h->dir);
		return -1;
	}
	if (engine_claude_account(h, src_json, to, err, errlen) == -1)
		return -1;
	if (h->resume_id != NULL && engine_claude_restore(h, err, errlen) == -1)
		return -1;
	if (engine_claude_setenv(h->env, "CLAUDE_CONFIG_DIR", h->dir) == -1)
		goto nomem;
	return 0;
nomem:
	snprintf(err, errlen, "spec: out of memory");
	return -1;
}

/* ---- the output stream ----------------------------------------------------------- */

/*
 * The messages whose cost is being counted: the last few ids, since a subagent's
 * messages may stream beside the main thread's. Each holds the most of each token
 * count seen for it and what was added to the run's dollars for it so far.
 */
#define ENGINE_CLAUDE_MSGS	8

struct engine_claude_msg {
	char	 id[128];
	char	 model[128];
	double	 tokens[PRICES_N_KINDS];
	double	 counted;
};

struct engine_stream {
	char			 last_id[128];	/* the last assistant message id, to
						   count turns */
	const struct config	*cfg;		/* prices: (NULL: the built-in table) */
	struct engine_claude_msg msgs[ENGINE_CLAUDE_MSGS];
	unsigned		 next;		/* the slot a new id takes */
};

static struct engine_stream *
engine_claude_stream_new(void)
{
	return calloc(1, sizeof(struct engine_stream));
}

static void
engine_claude_stream_prices(struct engine_stream *st, const struct config *cfg)
{
	st->cfg = cfg;
}

int
engine_claude_usage(const cJSON *usage, double *tokens)
{
	static const char *const names[PRICES_N_KINDS] = {
		[PRICES_INPUT] = "input_tokens",
		[PRICES_OUTPUT] = "output_tokens",
		[PRICES_CACHE_WRITE] = "cache_creation_input_tokens",
		[PRICES_CACHE_READ] = "cache_read_input_tokens",
	};
	double	d;
	int	changed = 0;

	if (!cJSON_IsObject(usage))
		return 0;
	for (int i = 0; i < PRICES_N_KINDS; i++)
		if (json_get_number(usage, names[i], &d) == 0 && d > tokens[i] &&
		    d < 1e12) {
			tokens[i] = d;
			changed = 1;
		}
	return changed;
}

/* The slot of message id, taking the oldest for a new one; NULL for no id. */
static struct engine_claude_msg *
engine_claude_msg(struct engine_stream *st, const char *id)
{
	struct engine_claude_msg	*m;

	if (id == NULL || id[0] == '\0' || strlen(id) >= sizeof m->id)
		return NULL;
	for (int i = 0; i < ENGINE_CLAUDE_MSGS; i++)
		if (strcmp(st->msgs[i].id, id) == 0)
			return &st->msgs[i];
	m = &st->msgs[st->next++ % ENGINE_CLAUDE_MSGS];
	memset(m, 0, sizeof *m);
	snprintf(m->id, sizeof m->id, "%s", id);
	return m;
}

/*
 * One report of a message's usage (model may be NULL: the one seen before for this
 * id): the run's dollars grow by what the message costs now beyond what was counted
 * for it. 1 when they grew. A model with no price is named in u->unpriced and its
 * messages add nothing: the runner then knows the count cannot hold a budget.
 */
static int
engine_claude_cost(struct engine_stream *st, const char *id, const char *model,
    const cJSON *usage, struct engine_progress *u)
{
	struct engine_claude_msg	*m;
	const double			*price;
	double				 cost;

	if ((m = engine_claude_msg(st, id)) == NULL)
		return 0;
	if (model != NULL && model[0] != '\0' && m->model[0] == '\0')
		snprintf(m->model, sizeof m->model, "%s", model);
	if (!engine_claude_usage(usage, m->tokens) || m->model[0] == '\0')
		return 0;
	if ((price = prices_find(st->cfg, m->model, NULL)) == NULL) {
		if (u->unpriced[0] == '\0')
			snprintf(u->unpriced, sizeof u->unpriced, "%s", m->model);
		return 0;
	}
	cost = prices_cost(price, m->tokens);
	if (cost <= m->counted)
		return 0;
	u->dollars += cost - m->counted;
	m->counted = cost;
	return 1;
}

/*
 * --include-partial-messages: each event of the model's response as it streams. Only
 * message_start (the model, the input and cache counts) and message_delta (the final
 * output count and why the message stopped) are read: the assistant event carries
 * the usage of message_start only (seen with CLI 2.1.332: output_tokens 1 where the
 * response's message_delta said 20), so the output is counted from message_delta,
 * before the tool it asks for has a result.
 */
static int
engine_claude_partial(struct engine_stream *st, const cJSON *j, struct engine_progress *u)
{
	const cJSON	*ev = cJSON_GetObjectItemCaseSensitive(j, "event"), *msg;
	const char	*et = json_get_string(ev, "type"), *stop;
	int		 changed = 0, more;

	if (et == NULL)
		return 0;
	if (strcmp(et, "message_start") == 0) {
		msg = cJSON_GetObjectItemCaseSensitive(ev, "message");
		return engine_claude_cost(st, json_get_string(msg, "id"),
		    json_get_string(msg, "model"), cJSON_GetObjectItemCaseSensitive(msg,
		    "usage"), u);
	}
	if (strcmp(et, "message_delta") != 0)
		return 0;
	changed = engine_claude_cost(st, json_get_string(j, "api_message_id"), NULL,
	    cJSON_GetObjectItemCaseSensitive(ev, "usage"), u);
	/* The main thread's message: whether the agent goes on to another turn. */
	stop = json_get_string(cJSON_GetObjectItemCaseSensitive(ev, "delta"), "stop_reason");
	if (stop != NULL && cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(j,
	    "parent_tool_use_id"))) {
		more = strcmp(stop, "tool_use") == 0;
		if (more != u->more) {
			u->more = more;
			changed = 1;
		}
	}
	return changed;
}

static void
engine_claude_stream_free(struct engine_stream *st)
{
	free(st);
}

/* A tool call as the transcript shows it: the command, the path, or the input. */
static cJSON *
engine_claude_tool(const cJSON *c)
{
	const cJSON	*in = cJSON_GetObjectItemCaseSensitive(c, "input");
	const char	*cmd, *path;
	char		*detail;
	cJSON		*e;

	cmd = json_get_string(in, "command");
	if ((path = json_get_string(in, "file_path")) == NULL &&
	    (path = json_get_string(in, "path")) == NULL)
		path = json_get_string(in, "pattern");
	detail = cmd == NULL && path == NULL && in != NULL ? json_print(in) : NULL;
	e = transcript_tool(json_get_string(c, "name"), json_get_string(c, "id"), cmd,
	    path, detail);
	cJSON_free(detail);
	return e;
}

/* A tool_result's content: a string, or an array of text blocks joined by lines. */
static cJSON *
engine_claude_result(const cJSON *c)
{
	const cJSON	*content = cJSON_GetObjectItemCaseSensitive(c, "content"), *b;
	const char	*t;
	char		*buf = NULL, *nb;
	size_t		 len = 0, n;
	int		 err = 0;
	cJSON		*e;

	(void)json_get_bool(c, "is_error", &err);
	if (cJSON_IsString(content))
		return transcript_result(json_get_string(c, "tool_use_id"),
		    content->valuestring, strlen(content->valuestring), err);
	cJSON_ArrayForEach(b, content) {
		if ((t = json_get_string(b, "text")) == NULL)
			continue;
		/* Only what the transcript keeps is gathered. */
		if (len > TRANSCRIPT_RESULT_MAX)
			break;
		n = strlen(t);
		if ((nb = realloc(buf, len + n + 2)) == NULL)
			break;
		buf = nb;
		if (len > 0)
			buf[len++] = '\n';
		memcpy(buf + len, t, n);
		len += n;
		buf[len] = '\0';
	}
	e = transcript_result(json_get_string(c, "tool_use_id"), buf != NULL ? buf : "",
	    len, err);
	free(buf);
	return e;
}

static void
engine_claude_blocks(const cJSON *msg, engine_say_fn *say, void *arg)
{
	const cJSON	*c;
	const char	*type, *t;

	cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(msg, "content")) {
		if ((type = json_get_string(c, "type")) == NULL)
			continue;
		if (strcmp(type, "text") == 0 && (t = json_get_string(c, "text")) != NULL &&
		    *t != '\0')
			say(arg, transcript_text(t));
		else if (strcmp(type, "tool_use") == 0)
			say(arg, engine_claude_tool(c));
		else if (strcmp(type, "tool_result") == 0)
			say(arg, engine_claude_result(c));
	}
}

/*
 * stream-json: "assistant" events carry a message (one API response may arrive as
 * several events with the same message id: turns count ids, and its cost is counted
 * once), "user" events carry tool results, "stream_event" events the response as it
 * streams (engine_claude_partial()), and one "result" event ends the run with the
 * final message, Claude Code's own total cost and the turn count.
 */
static int
engine_claude_stream_line(struct engine_stream *st, const char *line, size_t len,
    struct engine_progress *u, engine_say_fn *say, void *arg)
{
	const cJSON	*msg;
	const char	*type, *id, *sub, *res;
	cJSON		*j;
	double		 d;
	int		 n, changed = 0;

	if ((j = json_parse(line, len)) == NULL || !cJSON_IsObject(j)) {
		cJSON_Delete(j);
		return -1;
	}
	type = json_get_string(j, "type");
	msg = cJSON_GetObjectItemCaseSensitive(j, "message");
	/* The session id: in the init event, and again in the result. */
	if (u->session[0] == '\0' && type != NULL && (strcmp(type, "system") == 0 ||
	    strcmp(type, "result") == 0) &&
	    conversation_id_valid("claude", json_get_string(j, "session_id")))
		snprintf(u->session, sizeof u->session, "%s", json_get_string(j,
		    "session_id"));
	if (type != NULL && strcmp(type, "stream_event") == 0) {
		changed = engine_claude_partial(st, j, u);
	} else if (type != NULL && strcmp(type, "assistant") == 0) {
		id = json_get_string(msg, "id");
		if (id == NULL || strcmp(id, st->last_id) != 0) {
			u->turns++;
			snprintf(st->last_id, sizeof st->last_id, "%s", id != NULL ? id : "");
			changed = 1;
		}
		if (engine_claude_cost(st, id, json_get_string(msg, "model"),
		    cJSON_GetObjectItemCaseSensitive(msg, "usage"), u) == 1)
			changed = 1;
		engine_claude_blocks(msg, say, arg);
	} else if (type != NULL && strcmp(type, "user") == 0) {
		engine_claude_blocks(msg, say, arg);
	} else if (type != NULL && strcmp(type, "result") == 0) {
		u->have_result = 1;
		u->more = 0;
		/*
		 * Claude Code's own total also counts requests its stream does not show
		 * (titles, classifiers); ours may price higher (prices: in config.yaml).
		 * The higher of the two is the run's spend.
		 */
		if (json_get_number(j, "total_cost_usd", &d) == 0 && d >= 0 && d < 1e9 &&
		    d > u->dollars)
			u->dollars = d;
		if (json_get_int(j, "num_turns", &n) == 0 && n >= 0)
			u->turns = n;
		if ((sub = json_get_string(j, "subtype")) != NULL)
			snprintf(u->subtype, sizeof u->subtype, "%s", sub);
		if (json_get_bool(j, "is_error", &n) == 0)
			u->is_error = n;
		if ((res = json_get_string(j, "result")) != NULL) {
			free(u->result);
			u->result = strndup(res, TRANSCRIPT_TEXT_MAX);
		}
		say(arg, transcript_final(res != NULL ? res : u->subtype, u->is_error));
		say(arg, transcript_usage(u->dollars, u->turns));
		changed = 1;
	}
	cJSON_Delete(j);
	return changed;
}

/*
 * A text or tool-input fragment of a streaming response: each is in the assistant
 * event that follows, so the log does not keep them too. Only the form Claude Code
 * prints is matched; anything else is logged as ever.
 */
static int
engine_claude_log_skip(const char *line, size_t len)
{
	static const char	frag[] = "{\"type\":\"stream_event\",\"event\":{\"type\":"
				    "\"content_block_delta\"";

	return len > sizeof frag - 1 && memcmp(line, frag, sizeof frag - 1) == 0;
}

/* Claude's PreToolUse body: the floor judges Bash's command; other tools pass. */
static int
engine_claude_floor_command(const cJSON *body, const char **command)
{
	const char	*tool = json_get_string(body, "tool_name");

	*command = NULL;
	if (tool == NULL)
		return -1;
	if (strcmp(tool, "Bash") != 0)
		return 0;
	if ((*command = json_get_string(cJSON_GetObjectItemCaseSensitive(body,
	    "tool_input"), "command")) == NULL)
		return -1;
	return 0;
}

/*
 * macOS: the Claude CLI keeps per-run state in /tmp/claude-<uid>/<cwd-slug> and tracks
 * its shell's cwd in /tmp/claude-<hex>-cwd; without both its Bash tool cannot start a
 * shell. /tmp is /private/tmp there and Seatbelt matches the resolved path.
 */
static int
engine_claude_seatbelt(const char *workdir, unsigned long uid, struct engine_sbrules *r,
    char *err, size_t errlen)
{
	char	 dir[64], *slug, *sub = NULL;
	int	 rc = -1;

	if (seatbelt_claude_slug(workdir, &slug) == -1) {
		snprintf(err, errlen, "seatbelt: cannot name the Claude CLI's work dir for "
		    "the workdir: %s", strerror(errno));
		return -1;
	}
	snprintf(dir, sizeof dir, "/private/tmp/claude-%lu", uid);
	if (asprintf(&sub, "%s/%s", dir, slug) == -1)
		sub = NULL;
	if (sub != NULL &&
	    (r->comment = strdup("The Claude CLI's per-run work dir (its parent may only "
	    "be created) and its\n;; cwd-tracking file, matched by exact name.")) != NULL &&
	    engine_sbrules_add(r, "allow file-write-create", "literal", dir) == 0 &&
	    engine_sbrules_add(r, "allow file-read* file-write*", "subpath", sub) == 0 &&
	    engine_sbrules_add(r, "allow file-read* file-write*", "regex",
	    "^/private/tmp/claude-[0-9a-f]+-cwd$") == 0)
		rc = 0;
	else
		snprintf(err, errlen, "seatbelt: out of memory");
	free(sub);
	free(slug);
	return rc;
}

const struct engine_ops engine_claude_ops = {
	.name = "claude",
	.prepare = engine_claude_prepare,
	.home = engine_claude_home,
	.stream_new = engine_claude_stream_new,
	.stream_line = engine_claude_stream_line,
	.stream_free = engine_claude_stream_free,
	.stream_prices = engine_claude_stream_prices,
	.log_skip = engine_claude_log_skip,
	.floor_command = engine_claude_floor_command,
	.hook_asks = 1,
	.seatbelt = engine_claude_seatbelt,
	.keep = engine_claude_keep,
};
