/*
 * OpenCode as an engine. What follows was found by running the pinned CLI
 * (opencode-ai 1.18.33, a Bun-compiled binary) against test/fixtures/openai-chat-server.js
 * and by reading the source bundled in that binary; docs/engines.md has the summary.
 *
 * Configuration. OpenCode merges, in order: the global config in
 * $XDG_CONFIG_HOME/opencode, $OPENCODE_CONFIG, the project's opencode.json(c) and
 * .opencode/ directories from the cwd up to the worktree root, ~/.opencode,
 * $OPENCODE_CONFIG_DIR, then $OPENCODE_CONFIG_CONTENT, then the system's managed
 * config. Ours is OPENCODE_CONFIG_CONTENT: an environment variable nothing in the run
 * can change for the process already running, merged after every file the agent could
 * write. OPENCODE_DISABLE_PROJECT_CONFIG=1 keeps the worktree's opencode.json and
 * .opencode/ (plugins, custom tools, agents, permissions) out entirely: a repository's
 * plugin is JavaScript inside OpenCode's own process and could undo the floor. But
 * 1.18.33 also has a second configuration loader (its "v2" entries) that walks from the
 * cwd up to the worktree root for .opencode/ and opencode.json(c) whatever that flag
 * says, and imports every .opencode/plugin(s)/ script it finds (seen: a
 * repository's plugin ran with the flag set). So a worktree that carries any of those
 * is refused before OpenCode starts (engine_opencode_project_config()); the agent
 * cannot add one to the running process, which read its configuration at start. The
 * worktree's AGENTS.md, which the flag also drops, is named in "instructions" by
 * absolute path instead. The config homes are new per run (home() below), so nothing
 * is there when OpenCode starts; a config or plugin the agent writes there mid-run is
 * not loaded by the process already running (test/e2e/opencode.test.sh, "floor").
 *
 * The floor. OpenCode runs every plugin's "tool.execute.before" hook with the tool's
 * arguments before the tool runs; a hook that throws fails the call, and the thrown
 * message is the tool result the model reads. Our plugin, written here into the
 * run's state directory (read-only to the sandbox), runs cw-floor-hook on each call of
 * the bash tool (its one tool that runs commands) with the call as its stdin and throws
 * the hook's stderr unless it exits 0; a hook that cannot start, dies or outlives its
 * timeout also throws (fail closed). floor_command() reads that body in the bridge.
 * OpenCode logs a plugin that fails to load and goes on without it, so the config
 * denies bash and only the plugin's own config hook allows it: no plugin, no shell.
 * (Seen: granted alone, the plugin file did not load in the sandbox, Bun opening its
 * directory to resolve the import; the state directory is granted whole.)
 *
 * The turn budget. The runner counts step_start events and stops the engine past the
 * budget, but OpenCode does not heed SIGTERM mid-loop and a fast model gets many steps
 * in before SIGKILL (seen: 18 in the 3 s grace). The plugin counts the main session's
 * model requests (its chat.params hook) the same way and fails every tool call past
 * the budget. Where the budget pauses (budget.wait, issue 23) the runner holds the run
 * at the first step past it and keeps the budget in the state directory's
 * ENGINE_TURNS_FILE; the plugin reads that file before each tool call, and a call past
 * the budget waits there (in case it came before the hold did) until an extension
 * raises it, or fails once the runner writes -1 for a run that is ending. OpenCode's
 * own "steps" limit is no budget: it only asks the model for text, and tool calls
 * made anyway still run (seen: 30 with steps 4).
 *
 * Approvals. `opencode run` answers every permission "ask" itself (auto-reject, or
 * auto-approve under --auto) and has no tool or hook through which a person could
 * answer, so this engine cannot ask. Sandboxed, every permission is "allow" and the
 * sandbox and the floor contain the run; with CW_SANDBOX=off OpenCode keeps its own
 * defaults (an ask is rejected and ends the run).
 */
#define _GNU_SOURCE
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_opencode.h"
#include "json.h"
#include "transcript.h"
#include "wire.h"

/* The homes OpenCode keeps state under, each <home>/<dir>/opencode. */
static const struct {
	const char	*var;
	const char	*dir;
} engine_opencode_xdg[] = {
	{ "XDG_CONFIG_HOME", "config" },	/* opencode.json, plugins it installs */
	{ "XDG_DATA_HOME", "data" },		/* opencode.db (sessions), log/, snapshot/ */
	{ "XDG_CACHE_HOME", "cache" },		/* models.json, bin/ (downloaded tools) */
	{ "XDG_STATE_HOME", "state" },		/* locks/, kv.json, prompt history */
};

/* Fixed variables: no update checks, no model catalogue fetch, no other sources. */
static const char *const engine_opencode_env[] = {
	"OPENCODE_DISABLE_PROJECT_CONFIG=1",
	"OPENCODE_DISABLE_AUTOUPDATE=1",
	"OPENCODE_DISABLE_MODELS_FETCH=1",
	"OPENCODE_DISABLE_DEFAULT_PLUGINS=1",
	"OPENCODE_DISABLE_LSP_DOWNLOAD=1",
	"OPENCODE_DISABLE_CLAUDE_CODE=1",	/* ~/.claude's CLAUDE.md and skills */
	"OPENCODE_DISABLE_EXTERNAL_SKILLS=1",
	"OPENCODE_DISABLE_SHARE=1",
};

static int
engine_opencode_sandboxed(void)
{
	const char	*sb = getenv("CW_SANDBOX");

	/* The same test run.c makes: only "off" turns the sandbox off. */
	return sb == NULL || strcmp(sb, "off") != 0;
}

/* A JavaScript string literal for s (a JSON string is one); newly allocated. */
static char *
engine_opencode_literal(const char *s)
{
	cJSON	*str;
	char	*out;

	if ((str = cJSON_CreateString(s)) == NULL)
		return NULL;
	out = cJSON_PrintUnformatted(str);
	cJSON_Delete(str);
	return out;
}

char *
engine_opencode_plugin(const struct engine_run *r, const char *token_file)
{
	char	*hook, *tok, *turns = NULL, *out = NULL, port[16], path[4096 + 32];
	int	 n;

	snprintf(port, sizeof port, "%d", r->port);
	hook = engine_opencode_literal(r->hook_path);
	tok = engine_opencode_literal(token_file);
	snprintf(path, sizeof path, "%s/%s", r->state_dir != NULL ? r->state_dir : "",
	    ENGINE_TURNS_FILE);
	turns = engine_opencode_literal(path);
	if (hook == NULL || tok == NULL || turns == NULL)
		goto out;
	n = asprintf(&out,
	    "// Clockwork's floor for OpenCode, written by cw-runner for this run only.\n"
	    "// Every call of the bash tool goes to cw-floor-hook first; anything but\n"
	    "// exit 0 fails the call, its stderr being what the model reads.\n"
	    "import { spawn } from \"node:child_process\";\n"
	    "import { readFileSync } from \"node:fs\";\n"
	    "const HOOK = %s;\n"
	    "const ARGS = [\"--port\", \"%s\", \"--token-file\", %s];\n"
	    "const TIMEOUT_MS = %d;\n"
	    "const SHELL_TOOL = \"%s\";\n"
	    "function floor(body) {\n"
	    "  return new Promise((resolve) => {\n"
	    "    let err = \"\", done = false, child, timer;\n"
	    "    const finish = (ok, why) => {\n"
	    "      if (done) return;\n"
	    "      done = true;\n"
	    "      clearTimeout(timer);\n"
	    "      resolve({ ok, why });\n"
	    "    };\n"
	    "    try {\n"
	    "      child = spawn(HOOK, ARGS, { stdio: [\"pipe\", \"ignore\", \"pipe\"] });\n"
	    "    } catch (e) {\n"
	    "      finish(false, \"Clockwork floor: the floor hook did not start: \" + e);\n"
	    "      return;\n"
	    "    }\n"
	    "    timer = setTimeout(() => {\n"
	    "      child.kill(\"SIGKILL\");\n"
	    "      finish(false, \"Clockwork floor: the floor hook timed out\");\n"
	    "    }, TIMEOUT_MS);\n"
	    "    child.stderr.on(\"data\", (d) => { if (err.length < 4096) err += d; });\n"
	    "    child.on(\"error\", (e) => finish(false,\n"
	    "      \"Clockwork floor: the floor hook did not start: \" + e.message));\n"
	    "    child.on(\"close\", (code) => finish(code === 0,\n"
	    "      err.trim() || \"Clockwork floor: the floor hook refused the call\"));\n"
	    "    child.stdin.on(\"error\", () => {});\n"
	    "    child.stdin.end(body);\n"
	    "  });\n"
	    "}\n"
	    "// The turn budget, counted as the runner counts it (the main session's model\n"
	    "// requests), so no tool runs past it whatever the timing of the stop.\n"
	    "// MAX_TURNS > 0: the budget ends the run, and a call past it fails. Else the\n"
	    "// runner pauses at the budget and keeps it in TURNS_FILE (read-only here): a\n"
	    "// call past it waits for a person's extension; -1 there: the run is ending.\n"
	    "const MAX_TURNS = %d;\n"
	    "const TURNS_FILE = %s;\n"
	    "let mainSession = null, turns = 0;\n"
	    "function turnLimit() {\n"
	    "  try {\n"
	    "    const n = parseInt(readFileSync(TURNS_FILE, \"utf8\"), 10);\n"
	    "    if (Number.isInteger(n)) return n;\n"
	    "  } catch (e) {}\n"
	    "  return 0;\n"
	    "}\n"
	    "async function turnGate() {\n"
	    "  for (;;) {\n"
	    "    const limit = turnLimit();\n"
	    "    if (MAX_TURNS > 0 && turns > MAX_TURNS)\n"
	    "      throw new Error(\"Clockwork: the run's turn budget (\" + MAX_TURNS + \") is spent\");\n"
	    "    if (limit < 0)\n"
	    "      throw new Error(\"Clockwork: the run is ending; no further tool call runs\");\n"
	    "    if (MAX_TURNS > 0 || limit === 0 || turns <= limit) return;\n"
	    "    await new Promise((r) => setTimeout(r, 200));\n"
	    "  }\n"
	    "}\n"
	    "export const ClockworkFloor = async () => ({\n"
	    "  // The run's config denies the shell; loaded, the floor allows it.\n"
	    "  config: async (cfg) => {\n"
	    "    cfg.permission = { ...(cfg.permission || {}), [SHELL_TOOL]: \"allow\" };\n"
	    "  },\n"
	    "  \"chat.params\": async (input) => {\n"
	    "    if (input.agent === \"title\" || input.agent === \"summary\" ||\n"
	    "        input.agent === \"compaction\") return;\n"
	    "    if (mainSession === null) mainSession = input.sessionID;\n"
	    "    if (input.sessionID === mainSession) turns++;\n"
	    "  },\n"
	    "  \"tool.execute.before\": async (input, output) => {\n"
	    "    await turnGate();\n"
	    "    if (input.tool !== SHELL_TOOL) return;\n"
	    "    const r = await floor(JSON.stringify({ tool: input.tool,\n"
	    "      sessionID: input.sessionID, callID: input.callID, args: output.args }));\n"
	    "    if (!r.ok) throw new Error(r.why);\n"
	    "  },\n"
	    "});\n",
	    hook, port, tok, CW_HOOK_SETTINGS_TIMEOUT_S * 1000, ENGINE_OPENCODE_SHELL_TOOL,
	    r->max_turns > 0 ? r->max_turns : 0, turns);
	if (n == -1)
		out = NULL;
out:
	cJSON_free(hook);
	cJSON_free(tok);
	cJSON_free(turns);
	return out;
}

char *
engine_opencode_config(const struct engine_run *r, const char *plugin_path,
    int sandboxed)
{
	cJSON	*root, *prov, *p, *opt, *models, *m, *perm, *agent, *plan, *arr;
	char	 url[4096 + 8], model[512], agents_md[4096 + 16], *text;

	root = cJSON_CreateObject();
	cJSON_AddStringToObject(root, "$schema", "https://opencode.ai/config.json");
	/* One provider: OpenAI-compatible chat completions at the configured URL. */
	prov = cJSON_AddObjectToObject(root, "provider");
	p = cJSON_AddObjectToObject(prov, ENGINE_OPENCODE_PROVIDER);
	cJSON_AddStringToObject(p, "npm", "@ai-sdk/openai-compatible");
	cJSON_AddStringToObject(p, "name", "Clockwork (configured provider)");
	opt = cJSON_AddObjectToObject(p, "options");
	cJSON_AddStringToObject(opt, "baseURL", r->base_url);
	/* The key stays out of this text: OpenCode substitutes it from the environment. */
	cJSON_AddStringToObject(opt, "apiKey", "{env:" ENGINE_OPENCODE_KEY_ENV "}");
	models = cJSON_AddObjectToObject(p, "models");
	m = cJSON_AddObjectToObject(models, r->model);
	cJSON_AddStringToObject(m, "name", r->model);
	cJSON_AddBoolToObject(m, "tool_call", 1);
	snprintf(model, sizeof model, "%s/%s", ENGINE_OPENCODE_PROVIDER, r->model);
	cJSON_AddStringToObject(root, "model", model);
	cJSON_AddStringToObject(root, "small_model", model);
	cJSON_AddItemToObject(root, "enabled_providers",
	    cJSON_CreateStringArray((const char *[]){ ENGINE_OPENCODE_PROVIDER }, 1));

	snprintf(url, sizeof url, "file://%s", plugin_path);
	arr = cJSON_AddArrayToObject(root, "plugin");
	cJSON_AddItemToArray(arr, cJSON_CreateString(url));
	snprintf(agents_md, sizeof agents_md, "%s/AGENTS.md", r->workdir);
	arr = cJSON_AddArrayToObject(root, "instructions");
	cJSON_AddItemToArray(arr, cJSON_CreateString(agents_md));

	cJSON_AddBoolToObject(root, "autoupdate", 0);
	cJSON_AddStringToObject(root, "share", "disabled");
	/* Its snapshots are a second git store of the worktree in its data home. */
	cJSON_AddBoolToObject(root, "snapshot", 0);
	/* Formatters and language servers are programs it starts behind the floor's back. */
	cJSON_AddBoolToObject(root, "formatter", 0);
	cJSON_AddBoolToObject(root, "lsp", 0);
	cJSON_AddItemToObject(root, "mcp", cJSON_CreateObject());

	/*
	 * No prompt can be answered in `opencode run`: while the sandbox is on, it and the
	 * floor contain the run instead. bash is denied here and allowed only by the floor
	 * plugin's config hook, so a plugin that fails to load (OpenCode logs that and goes
	 * on) leaves the agent without a shell rather than without a floor.
	 */
	perm = cJSON_AddObjectToObject(root, "permission");
	if (sandboxed)
		cJSON_AddStringToObject(perm, "*", "allow");
	cJSON_AddStringToObject(perm, ENGINE_OPENCODE_SHELL_TOOL, "deny");
	/* plan: OpenCode's plan agent, whose tools cannot edit; edits denied again here. */
	agent = cJSON_AddObjectToObject(root, "agent");
	plan = cJSON_AddObjectToObject(agent, "plan");
	perm = cJSON_AddObjectToObject(plan, "permission");
	cJSON_AddStringToObject(perm, "edit", "deny");

	text = json_print(root);
	cJSON_Delete(root);
	return text;
}

/*
 * The OpenCode configuration a worktree may carry, from dir up to the git top (the
 * first directory holding .git), which its loaders read: 0 when there is none, -1 with
 * the first one found in err. Any kind of entry counts: a link is refused as well.
 */
int
engine_opencode_project_config(const char *dir, char *err, size_t errlen)
{
	static const char *const names[] = { ".opencode", "opencode.json", "opencode.jsonc" };
	struct stat	 st;
	char		 cur[4096], path[4096 + 32], *slash;

	if ((size_t)snprintf(cur, sizeof cur, "%s", dir) >= sizeof cur) {
		snprintf(err, errlen, "opencode: worktree path too long");
		return -1;
	}
	for (int depth = 0; depth < 64; depth++) {
		for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
			snprintf(path, sizeof path, "%s/%s", cur, names[i]);
			if (lstat(path, &st) == 0) {
				snprintf(err, errlen, "opencode: %s is OpenCode configuration, "
				    "which OpenCode %s loads whatever Clockwork sets (its "
				    "plugins run inside the engine, where they could undo the "
				    "floor): remove it from the repository or use another engine",
				    path, ENGINE_OPENCODE_VERSION);
				return -1;
			}
		}
		snprintf(path, sizeof path, "%s/.git", cur);
		if (lstat(path, &st) == 0 || (slash = strrchr(cur, '/')) == NULL ||
		    slash == cur)
			return 0;
		*slash = '\0';
	}
	return 0;
}

static int
engine_opencode_prepare(const struct engine_run *r, struct strlist *argv,
    struct strlist *env, struct strlist *files, char *err, size_t errlen)
{
	char	 token_path[4096], plugin_path[4096], *plugin = NULL, *config = NULL;
	char	*kv = NULL;
	int	 rc = -1;

	if (engine_check_openai_run(r, "opencode", err, errlen) == -1)
		return -1;
	if (engine_opencode_project_config(r->workdir, err, errlen) == -1)
		return -1;
	if (engine_write_file(r->state_dir, ENGINE_OPENCODE_TOKEN_FILE, r->token, 0400,
	    token_path, sizeof token_path, err, errlen) == -1)
		return -1;
	if ((plugin = engine_opencode_plugin(r, token_path)) == NULL)
		goto nomem;
	if (engine_write_file(r->state_dir, ENGINE_OPENCODE_PLUGIN, plugin, 0400,
	    plugin_path, sizeof plugin_path, err, errlen) == -1)
		goto out;
	if ((config = engine_opencode_config(r, plugin_path,
	    engine_opencode_sandboxed())) == NULL)
		goto nomem;
	/*
	 * The engine reads the plugin and the hook runs with the token; the hook must be
	 * executable inside. Bun opens the plugin's directory to resolve the import (a
	 * plugin granted alone fails to load, silently, and the floor with it), so the
	 * state directory, which holds nothing but these two, is granted whole.
	 */
	if (strlist_add(files, token_path) == -1 || strlist_add(files, plugin_path) == -1 ||
	    strlist_add(files, r->state_dir) == -1 ||
	    strlist_add(files, r->hook_path) == -1)
		goto nomem;

	if (r->resume_id != NULL) {
		if (!conversation_id_valid("opencode", r->resume_id)) {
			snprintf(err, errlen, "opencode: '%.80s' is not a session id",
			    r->resume_id);
			goto out;
		}
		if (strlist_add(argv, "/bin/sh") == -1 || strlist_add(argv, "-c") == -1 ||
		    strlist_add(argv, ENGINE_OPENCODE_CONTINUE) == -1 ||
		    strlist_add(argv, "opencode-continue") == -1 ||
		    strlist_add(argv, r->resume_id) == -1 ||
		    strlist_add(argv, strcmp(r->mode, "plan") == 0 ? "plan" : "build") ==
		    -1 || strlist_add(argv, r->prompt) == -1)
			goto nomem;
	} else if (strlist_add(argv, "opencode") == -1)
		goto nomem;
	/* The script runs opencode itself. */
	if (r->resume_id == NULL && (strlist_add(argv, "run") == -1 ||
	    strlist_add(argv, "--format") == -1 ||
	    strlist_add(argv, "json") == -1 || strlist_add(argv, "--agent") == -1 ||
	    strlist_add(argv, strcmp(r->mode, "plan") == 0 ? "plan" : "build") == -1 ||
	    strlist_add(argv, "--") == -1 || strlist_add(argv, r->prompt) == -1))
		goto nomem;

	for (size_t i = 0; i < sizeof engine_opencode_env /
	    sizeof engine_opencode_env[0]; i++)
		if (strlist_add(env, engine_opencode_env[i]) == -1)
			goto nomem;
	if (asprintf(&kv, "OPENCODE_CONFIG_CONTENT=%s", config) == -1) {
		kv = NULL;
		goto nomem;
	}
	if (strlist_add(env, kv) == -1)
		goto nomem;
	free(kv);
	kv = NULL;
	if (r->key != NULL) {
		if (asprintf(&kv, ENGINE_OPENCODE_KEY_ENV "=%s", r->key) == -1) {
			kv = NULL;
			goto nomem;
		}
		if (strlist_add(env, kv) == -1)
			goto nomem;
	}
	rc = 0;
	goto out;
nomem:
	snprintf(err, errlen, "out of memory");
out:
	if (kv != NULL) {
		explicit_bzero(kv, strlen(kv));
		free(kv);
	}
	free(plugin);
	cJSON_free(config);
	return rc;
}

/*
 * The conversation. OpenCode keeps its sessions in one SQLite database,
 * $XDG_DATA_HOME/opencode/opencode.db (with its -wal while it has not been folded in),
 * and a session there is tied to the directory it ran in: resumed from another
 * worktree with --session (and --dir), 1.18.33 ran the loop in the old directory and
 * never ended (seen). `opencode export <id>` and `opencode import FILE` move one
 * session, and import rebinds it to the directory it runs in. So the runner keeps the
 * database's bytes (never opening it: it is the run's), and a continued run, in its
 * own sandbox, exports the session from the kept copy (put back in <home>/prev),
 * imports it into its fresh data home, removes the copy and resumes: nothing of the
 * earlier database but the session (not its permission table, accounts or
 * credentials) reaches the OpenCode that runs the agent. $1 the session id, $2 the
 * agent, $3 the prompt; TMPDIR is the run's and holds the home (spec.c).
 */
#define ENGINE_OPENCODE_KEPT_DIR	"data/opencode"
#define ENGINE_OPENCODE_PREV_DIR	"prev/opencode"

static const char *const engine_opencode_db_files[] = {
	"opencode.db", "opencode.db-wal",
};

static int
engine_opencode_keep_conversation(const struct engine_keep *k, char *err,
    size_t errlen)
{
	char	 rel[64], e[512];
	int	 rc = 0;

	if (k->home_fd == -1 || !conversation_id_valid("opencode", k->session))
		return 0;
	for (size_t i = 0; i < sizeof engine_opencode_db_files /
	    sizeof engine_opencode_db_files[0]; i++) {
		snprintf(rel, sizeof rel, "%s/%s", ENGINE_OPENCODE_KEPT_DIR,
		    engine_opencode_db_files[i]);
		if (engine_copy_beneath(k->home_fd, rel, k->keep_fd,
		    engine_opencode_db_files[i], e, sizeof e) == 0) {
			rc = 1;
			continue;
		}
		/* The database must be there; its WAL may have been folded in. */
		if (errno == ENOENT && i > 0)
			continue;
		if (errno == ENOENT)
			return 0;
		snprintf(err, errlen, "opencode: keep %s: %s", rel, e);
		return -1;
	}
	return rc;
}

static int
engine_opencode_restore(const struct engine_home *h, char *err, size_t errlen)
{
	char	 e[512];
	int	 hfd, dfd = -1, rc = 0;

	if (!conversation_id_valid("opencode", h->resume_id) || h->resume_fd == -1) {
		snprintf(err, errlen, "opencode: no session to resume");
		return -1;
	}
	if ((hfd = open(h->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1 ||
	    engine_mkdirs_beneath(hfd, ENGINE_OPENCODE_PREV_DIR) == -1 ||
	    (dfd = engine_open_beneath(hfd, ENGINE_OPENCODE_PREV_DIR, O_RDONLY |
	    O_DIRECTORY)) == -1) {
		snprintf(err, errlen, "opencode: make %s/%s: %s", h->dir,
		    ENGINE_OPENCODE_PREV_DIR, strerror(errno));
		rc = -1;
	}
	for (size_t i = 0; rc == 0 && i < sizeof engine_opencode_db_files /
	    sizeof engine_opencode_db_files[0]; i++)
		if (engine_copy_beneath(h->resume_fd, engine_opencode_db_files[i], dfd,
		    engine_opencode_db_files[i], e, sizeof e) == -1 &&
		    !(errno == ENOENT && i > 0)) {
			snprintf(err, errlen, "opencode: the earlier run's sessions cannot "
			    "be put back: %s", e);
			rc = -1;
		}
	if (dfd != -1)
		close(dfd);
	if (hfd != -1)
		close(hfd);
	return rc;
}

static int
engine_opencode_home(const struct engine_home *h, char *err, size_t errlen)
{
	char	 dir[4096], kv[4096 + 32];

	for (size_t i = 0; i < sizeof engine_opencode_xdg / sizeof engine_opencode_xdg[0];
	    i++) {
		if ((size_t)snprintf(dir, sizeof dir, "%s/%s", h->dir,
		    engine_opencode_xdg[i].dir) >= sizeof dir) {
			snprintf(err, errlen, "opencode: home path too long");
			return -1;
		}
		if (mkdir(dir, 0700) == -1) {
			snprintf(err, errlen, "opencode: create %s: %s", dir, strerror(errno));
			return -1;
		}
		snprintf(kv, sizeof kv, "%s=%s", engine_opencode_xdg[i].var, dir);
		if (strlist_add(h->env, kv) == -1) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
	}
	if (h->resume_id != NULL && engine_opencode_restore(h, err, errlen) == -1)
		return -1;
	if (h->notes != NULL && strlist_add(h->notes, "opencode: config, data, cache and "
	    "state homes (XDG_*_HOME) new in the run's TMPDIR, removed with it") == -1) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

/* ---- its output: one JSON event per line ---------------------------------------- */

struct engine_stream {
	char	*step_text;	/* the current step's text, for the final message */
	size_t	 step_len;
};

static struct engine_stream *
engine_opencode_stream_new(void)
{
	return calloc(1, sizeof(struct engine_stream));
}

static void
engine_opencode_stream_free(struct engine_stream *s)
{
	if (s == NULL)
		return;
	free(s->step_text);
	free(s);
}

static void
engine_opencode_say(engine_say_fn *say, void *arg, cJSON *entry)
{
	if (entry != NULL && say != NULL)
		say(arg, entry);
	else
		cJSON_Delete(entry);
}

/* Append text to the current step's text, bounded by the transcript's limit. */
static void
engine_opencode_keep_text(struct engine_stream *s, const char *text)
{
	size_t	 len = strlen(text), sep = s->step_len > 0 ? 1 : 0;
	char	*p;

	if (s->step_len + sep + len > TRANSCRIPT_TEXT_MAX)
		len = s->step_len + sep >= TRANSCRIPT_TEXT_MAX ? 0 :
		    TRANSCRIPT_TEXT_MAX - s->step_len - sep;
	if (len == 0 || (p = realloc(s->step_text, s->step_len + sep + len + 1)) == NULL)
		return;
	s->step_text = p;
	if (sep)
		p[s->step_len++] = '\n';
	memcpy(p + s->step_len, text, len);
	s->step_len += len;
	p[s->step_len] = '\0';
}

static void
engine_opencode_tool(const cJSON *part, engine_say_fn *say, void *arg)
{
	const cJSON	*state, *input;
	const char	*tool, *id, *status, *out, *command = NULL, *path = NULL;
	const char	*detail = NULL;
	int		 error;

	tool = json_get_string(part, "tool");
	id = json_get_string(part, "callID");
	state = cJSON_GetObjectItemCaseSensitive(part, "state");
	input = cJSON_GetObjectItemCaseSensitive(state, "input");
	if (tool == NULL)
		return;
	if (strcmp(tool, ENGINE_OPENCODE_SHELL_TOOL) == 0)
		command = json_get_string(input, "command");
	else if ((path = json_get_string(input, "filePath")) == NULL &&
	    (path = json_get_string(input, "path")) == NULL) {
		if ((detail = json_get_string(input, "pattern")) == NULL &&
		    (detail = json_get_string(input, "url")) == NULL)
			detail = json_get_string(input, "description");
	}
	engine_opencode_say(say, arg, transcript_tool(tool, id, command, path, detail));
	status = json_get_string(state, "status");
	error = status != NULL && strcmp(status, "error") == 0;
	out = json_get_string(state, error ? "error" : "output");
	if (out != NULL)
		engine_opencode_say(say, arg, transcript_result(id, out, strlen(out), error));
}

/* An error event: {"type":"error","error":{"name":..,"data":{"message":..}}}. */
static const char *
engine_opencode_error_text(const cJSON *j)
{
	const cJSON	*e = cJSON_GetObjectItemCaseSensitive(j, "error");
	const char	*msg;

	if ((msg = json_get_string(cJSON_GetObjectItemCaseSensitive(e, "data"),
	    "message")) != NULL)
		return msg;
	if ((msg = json_get_string(e, "name")) != NULL)
		return msg;
	return "the engine reported an error";
}

static int
engine_opencode_stream_line(struct engine_stream *s, const char *line, size_t len,
    struct engine_progress *pr, engine_say_fn *say, void *arg)
{
	const cJSON	*part;
	const char	*type, *text, *reason;
	cJSON		*j;
	double		 cost;
	int		 changed = 0;

	if ((j = json_parse(line, len)) == NULL || !cJSON_IsObject(j) ||
	    (type = json_get_string(j, "type")) == NULL) {
		cJSON_Delete(j);
		return -1;
	}
	part = cJSON_GetObjectItemCaseSensitive(j, "part");
	/* The first session named is the run's own: `opencode run` shows only that one. */
	if (pr->session[0] == '\0' &&
	    conversation_id_valid("opencode", json_get_string(j, "sessionID")))
		snprintf(pr->session, sizeof pr->session, "%s", json_get_string(j,
		    "sessionID"));
	if (strcmp(type, "step_start") == 0) {
		/* One model turn: a step is one request to the model and what it called. */
		pr->turns++;
		s->step_len = 0;
		if (s->step_text != NULL)
			s->step_text[0] = '\0';
		changed = 1;
	} else if (strcmp(type, "text") == 0) {
		if ((text = json_get_string(part, "text")) != NULL && text[0] != '\0') {
			engine_opencode_keep_text(s, text);
			engine_opencode_say(say, arg, transcript_text(text));
		}
	} else if (strcmp(type, "tool_use") == 0) {
		engine_opencode_tool(part, say, arg);
	} else if (strcmp(type, "step_finish") == 0) {
		if (json_get_number(part, "cost", &cost) == 0 && cost > 0)
			pr->dollars += cost;
		reason = json_get_string(part, "reason");
		/* A step that ends other than in tool calls ends the agent's loop. */
		if (reason != NULL && strcmp(reason, "tool-calls") != 0) {
			pr->have_result = 1;
			pr->is_error = 0;
			snprintf(pr->subtype, sizeof pr->subtype, "%s",
			    strcmp(reason, "stop") == 0 ? "success" : reason);
			free(pr->result);
			pr->result = strdup(s->step_text != NULL ? s->step_text : "");
			engine_opencode_say(say, arg, transcript_final(pr->result != NULL ?
			    pr->result : "", 0));
		}
		engine_opencode_say(say, arg, transcript_usage(pr->dollars, pr->turns));
		changed = 1;
	} else if (strcmp(type, "error") == 0) {
		text = engine_opencode_error_text(j);
		pr->have_result = 1;
		pr->is_error = 1;
		snprintf(pr->subtype, sizeof pr->subtype, "error");
		free(pr->result);
		pr->result = strdup(text);
		engine_opencode_say(say, arg, transcript_final(text, 1));
		changed = 1;
	}
	cJSON_Delete(j);
	return changed;
}

/*
 * The plugin's body: {"tool", "sessionID", "callID", "args": {"command", ...}}. A bash
 * call without a string command is not one the floor can judge: -1, and the bridge
 * refuses it.
 */
static int
engine_opencode_floor_command(const cJSON *body, const char **command)
{
	const cJSON	*args;
	const char	*tool;

	*command = NULL;
	if (!cJSON_IsObject(body) || (tool = json_get_string(body, "tool")) == NULL)
		return -1;
	if (strcmp(tool, ENGINE_OPENCODE_SHELL_TOOL) != 0)
		return 0;
	args = cJSON_GetObjectItemCaseSensitive(body, "args");
	if ((*command = json_get_string(args, "command")) == NULL)
		return -1;
	return 0;
}

const struct engine_ops engine_opencode_ops = {
	.name = "opencode",
	.prepare = engine_opencode_prepare,
	.home = engine_opencode_home,
	.keep = engine_opencode_keep_conversation,
	.stream_new = engine_opencode_stream_new,
	.stream_line = engine_opencode_stream_line,
	.stream_free = engine_opencode_stream_free,
	.floor_command = engine_opencode_floor_command,
};
