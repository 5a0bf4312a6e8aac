/*
 * Hermes as an engine. What follows was found by reading the pinned package's source
 * (hermes-agent 0.19.0 from PyPI, in the venv scripts/setup-engines makes) and by
 * running it against test/fixtures/openai-chat-server.js; docs/engines.md has the
 * summary.
 *
 * One-shot. `hermes --oneshot=PROMPT` (hermes_cli/oneshot.py) builds the agent as a
 * chat turn would, runs one conversation with every approval answered yes
 * (HERMES_YOLO_MODE, HERMES_ACCEPT_HOOKS: "a prompt would hang forever"), sends
 * stdout and stderr of the whole call tree to /dev/null by swapping sys.stdout, and
 * prints the final message at the end. --toolsets names the tools offered. The
 * terminal tool runs commands in $TERMINAL_CWD (tools/terminal_tool.py, read at each
 * call; the process's cwd otherwise), the file tools resolve relative paths against
 * it: both are the worktree here, set in the environment and in config.yaml's
 * terminal.cwd.
 *
 * The provider. config.yaml's model section: provider "custom" (an OpenAI-compatible
 * chat completions endpoint) at base_url, the model as default, and api_key
 * "${OPENAI_API_KEY}", which Hermes expands from its environment when it loads the
 * file (hermes_cli/config.py, _expand_env_vars). For a custom endpoint Hermes sends
 * OPENAI_API_KEY only to an openai.com host (hermes_cli/runtime_provider.py), so the
 * reference in the config is what carries it; the key itself is in the engine's
 * environment inside the sandbox, never in a file.
 *
 * The floor. Hermes runs every plugin's pre_tool_call hook before a tool runs
 * (model_tools.py, agent/tool_executor.py through hermes_cli/plugins.py's
 * resolve_pre_tool_block); a hook returning {"action": "block", "message": M} vetoes
 * the call and M is the tool result the model reads. Plugins are found under
 * $HERMES_HOME/plugins/<name>/ (plugin.yaml and __init__.py with register(ctx)) and
 * loaded only when named in config.yaml's plugins.enabled; project plugins
 * (./.hermes/plugins) only with HERMES_ENABLE_PROJECT_PLUGINS, which the sandbox's
 * environment never carries. Ours lives in the run's state directory (read-only to
 * the sandbox) and $HERMES_HOME/plugins/clockwork-floor is a link to it: the agent can
 * replace the link in its home, but the process already running loaded the plugin at
 * start. The plugin runs cw-floor-hook on each terminal call, and refuses a call that
 * types into a running process (the process tool's write and submit: input the floor
 * cannot judge), any tool outside the toolsets we offer, and, in plan mode, the file
 * tools that edit. Hermes ignores a hook that raises (invoke_hook logs and goes on), so
 * the plugin catches everything itself and blocks: a hook that is missing, dies or
 * outlives its timeout refuses the call. Hermes goes on without a plugin that fails
 * to load, so the runner starts it with TERMINAL_ENV naming a backend that does not
 * exist (its terminal tool's check then fails and the tool is not offered: seen) and
 * the plugin's register() sets it to "local".
 *
 * The stream. One-shot leaves the process's fd 1 alone (it swaps sys.stdout), so the
 * plugin writes its events there as JSON lines {"cw_hermes": 1, "type": ...}: "api"
 * after each model response (model, usage, text, the number of tool calls), "tool"
 * and "result" around each call, "denied" for a call it refused, "end" with the
 * conversation. A command the agent runs could write lines there as well (the engine's
 * stdout is reachable by its own uid), so the parser below takes them as untrusted:
 * a forged line can add to the turns and dollars counted, never lower them.
 *
 * Approvals. One-shot has no person to ask and answers Hermes' own approval gate
 * itself (HERMES_YOLO_MODE), so this engine cannot ask: the floor refuses, the
 * sandbox contains the rest.
 */
#define _GNU_SOURCE
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine_hermes.h"
#include "json.h"
#include "prices.h"
#include "transcript.h"
#include "wire.h"

static const char engine_hermes_plugin_py[] =
    "# Clockwork's floor for Hermes, written by cw-runner for this run only (read-only).\n"
    "# Every call of the terminal tool goes to cw-floor-hook before it runs; anything but\n"
    "# exit 0 blocks the call, the hook's stderr being what the model reads. Any failure\n"
    "# here (no hook, a hook that dies or hangs, an exception) blocks: Hermes ignores a\n"
    "# callback that raises, so every path below returns a verdict itself.\n"
    "import json, os, subprocess\n"
    "\n"
    "_DIR = os.path.dirname(os.path.abspath(__file__))\n"
    "try:\n"
    "    with open(os.path.join(_DIR, \"clockwork.json\"), encoding=\"utf-8\") as _f:\n"
    "        _CFG = json.load(_f)\n"
    "except Exception:\n"
    "    _CFG = None\n"
    "# Tools this run offers; any other is refused (a toolset Clockwork did not choose).\n"
    "_ALLOWED = {\"terminal\", \"process\", \"read_file\", \"write_file\", \"patch\", \"search_files\",\n"
    "            \"memory\", \"skills_list\", \"skill_view\", \"skill_manage\", \"todo\"}\n"
    "_TYPED = {\"write\", \"submit\"}\n"
    "# Tools that edit files directly; refused in plan mode.\n"
    "_EDITS = {\"write_file\", \"patch\"}\n"
    "_turns = 0\n"
    "\n"
    "\n"
    "def _turn_gate():\n"
    "    # The turn budget as the runner counts it (model requests): past it, or once the\n"
    "    # runner writes -1 into its turn-budget file (the run is ending), no tool runs.\n"
    "    limit = 0\n"
    "    try:\n"
    "        with open(_CFG[\"turns_file\"], encoding=\"utf-8\") as f:\n"
    "            limit = int(f.read().strip() or \"0\")\n"
    "    except Exception:\n"
    "        pass\n"
    "    if limit < 0:\n"
    "        return \"Clockwork: the run is ending; no further tool call runs\"\n"
    "    if _CFG[\"max_turns\"] > 0 and _turns > _CFG[\"max_turns\"]:\n"
    "        return \"Clockwork: the run's turn budget (%d) is spent\" % _CFG[\"max_turns\"]\n"
    "    return None\n"
    "\n"
    "\n"
    "def _emit(ev):\n"
    "    # The runner reads these lines from the engine's stdout (one JSON object each);\n"
    "    # Hermes' own output there is only its final message.\n"
    "    try:\n"
    "        os.write(1, (json.dumps({\"cw_hermes\": 1, **ev}, default=str) + \"\\n\").encode())\n"
    "    except Exception:\n"
    "        pass\n"
    "\n"
    "\n"
    "def _floor(tool, args, call_id, session_id):\n"
    "    if _CFG is None:\n"
    "        return \"Clockwork floor: the floor plugin has no configuration\"\n"
    "    body = json.dumps({\"tool\": tool, \"callID\": call_id, \"sessionID\": session_id,\n"
    "                       \"args\": args})\n"
    "    try:\n"
    "        p = subprocess.run([_CFG[\"hook\"], \"--port\", str(_CFG[\"port\"]), \"--token-file\",\n"
    "                            _CFG[\"token_file\"]], input=body.encode(), stdout=subprocess.DEVNULL,\n"
    "                           stderr=subprocess.PIPE, timeout=_CFG[\"timeout_s\"])\n"
    "    except subprocess.TimeoutExpired:\n"
    "        return \"Clockwork floor: the floor hook timed out\"\n"
    "    except Exception as e:\n"
    "        return \"Clockwork floor: the floor hook did not start: %s\" % e\n"
    "    if p.returncode == 0:\n"
    "        return None\n"
    "    why = p.stderr.decode(\"utf-8\", \"replace\").strip()[:4096]\n"
    "    return why or \"Clockwork floor: the floor hook refused the call\"\n"
    "\n"
    "\n"
    "def _pre_tool_call(tool_name=None, args=None, tool_call_id=\"\", session_id=\"\", **kw):\n"
    "    try:\n"
    "        args = args if isinstance(args, dict) else {}\n"
    "        _emit({\"type\": \"tool\", \"name\": tool_name, \"id\": tool_call_id, \"args\": args})\n"
    "        why = _turn_gate() if _CFG is not None else None\n"
    "        if why is not None:\n"
    "            pass\n"
    "        elif tool_name not in _ALLOWED:\n"
    "            why = \"Clockwork floor: tool %s is not offered in a Clockwork run\" % tool_name\n"
    "        elif _CFG is not None and _CFG[\"plan\"] and tool_name in _EDITS:\n"
    "            why = \"Clockwork: plan mode; files are not edited\"\n"
    "        elif tool_name == \"process\" and args.get(\"action\") in _TYPED:\n"
    "            why = (\"Clockwork floor: input typed into a running process is not \"\n"
    "                   \"something the floor can judge; run each command with the terminal tool\")\n"
    "        elif tool_name == \"terminal\":\n"
    "            why = _floor(tool_name, args, tool_call_id, session_id)\n"
    "        if why is None:\n"
    "            return None\n"
    "        _emit({\"type\": \"denied\", \"id\": tool_call_id, \"message\": why})\n"
    "        return {\"action\": \"block\", \"message\": why}\n"
    "    except BaseException as e:\n"
    "        return {\"action\": \"block\", \"message\": \"Clockwork floor: %s\" % e}\n"
    "\n"
    "\n"
    "def _post_tool_call(tool_name=None, result=None, tool_call_id=\"\", status=None, **kw):\n"
    "    _emit({\"type\": \"result\", \"name\": tool_name, \"id\": tool_call_id,\n"
    "           \"status\": status, \"result\": str(result)[:8192]})\n"
    "\n"
    "\n"
    "def _post_api_request(model=None, finish_reason=None, usage=None,\n"
    "                      assistant_message=None, assistant_tool_call_count=0,\n"
    "                      session_id=\"\", **kw):\n"
    "    global _turns\n"
    "    _turns += 1\n"
    "    text = getattr(assistant_message, \"content\", None)\n"
    "    _emit({\"type\": \"api\", \"model\": model, \"finish\": finish_reason, \"usage\": usage,\n"
    "           \"session\": session_id, \"text\": text if isinstance(text, str) else None,\n"
    "           \"tool_calls\": assistant_tool_call_count})\n"
    "\n"
    "\n"
    "def _on_session_end(completed=None, interrupted=None, session_id=\"\", **kw):\n"
    "    _emit({\"type\": \"end\", \"completed\": bool(completed), \"interrupted\": bool(interrupted),\n"
    "           \"session\": session_id})\n"
    "\n"
    "\n"
    "def register(ctx):\n"
    "    # The runner starts Hermes with a terminal backend that does not exist, so that\n"
    "    # without this plugin loaded Hermes offers no terminal tool at all.\n"
    "    os.environ[\"TERMINAL_ENV\"] = \"local\"\n"
    "    ctx.register_hook(\"pre_tool_call\", _pre_tool_call)\n"
    "    ctx.register_hook(\"post_tool_call\", _post_tool_call)\n"
    "    ctx.register_hook(\"post_api_request\", _post_api_request)\n"
    "    ctx.register_hook(\"on_session_end\", _on_session_end)\n"
    "    _emit({\"type\": \"hello\"})\n";

static const char engine_hermes_plugin_yaml[] =
    "name: " ENGINE_HERMES_PLUGIN "\n"
    "version: \"1\"\n"
    "description: Clockwork's floor (cw-floor-hook) on every terminal call\n";

/*
 * cw-runner runs one run per process, and makes the engine's home (spec_build(),
 * home()) before it prepares the engine (prepare()), which alone knows the run's
 * facts: home() keeps the home's path here, and prepare() fills it.
 */
static char	 engine_hermes_home_dir[PATH_MAX];
static char	 engine_hermes_plugin_path[PATH_MAX];

/* A YAML double-quoted scalar for s (a JSON string is one); newly allocated. */
static char *
engine_hermes_quote(const char *s)
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
engine_hermes_config(const struct engine_run *r)
{
	char	*url, *model, *cwd, *out = NULL;

	url = engine_hermes_quote(r->base_url != NULL ? r->base_url : "");
	model = engine_hermes_quote(r->model != NULL ? r->model : "");
	cwd = engine_hermes_quote(r->workdir != NULL ? r->workdir : "");
	if (url != NULL && model != NULL && cwd != NULL &&
	    asprintf(&out,
	    "# Written by cw-runner for this run only; Hermes' home is new per run.\n"
	    "model:\n"
	    "  provider: custom\n"
	    "  base_url: %s\n"
	    "  default: %s\n"
	    "  api_key: \"${" ENGINE_HERMES_KEY_ENV "}\"\n"
	    "plugins:\n"
	    "  enabled: [\"" ENGINE_HERMES_PLUGIN "\"]\n"
	    "terminal:\n"
	    "  backend: local\n"
	    "  cwd: %s\n", url, model, cwd) == -1)
		out = NULL;
	cJSON_free(url);
	cJSON_free(model);
	cJSON_free(cwd);
	return out;
}

char *
engine_hermes_plugin_config(const struct engine_run *r, const char *token_file)
{
	cJSON	*o = cJSON_CreateObject();
	char	 turns[PATH_MAX + 32], *text;

	snprintf(turns, sizeof turns, "%s/%s", r->state_dir != NULL ? r->state_dir : "",
	    ENGINE_TURNS_FILE);
	cJSON_AddStringToObject(o, "hook", r->hook_path != NULL ? r->hook_path : "");
	cJSON_AddNumberToObject(o, "port", r->port);
	cJSON_AddStringToObject(o, "token_file", token_file);
	cJSON_AddNumberToObject(o, "timeout_s", CW_HOOK_SETTINGS_TIMEOUT_S);
	cJSON_AddNumberToObject(o, "max_turns", r->max_turns > 0 ? r->max_turns : 0);
	cJSON_AddStringToObject(o, "turns_file", turns);
	cJSON_AddBoolToObject(o, "plan", r->mode != NULL && strcmp(r->mode, "plan") == 0);
	text = json_print(o);
	cJSON_Delete(o);
	return text;
}

/* The plugin's directory in the state directory, with its three files (0400). */
static int
engine_hermes_write_plugin(const struct engine_run *r, const char *token_path,
    char *err, size_t errlen)
{
	char	 base[PATH_MAX], path[PATH_MAX], *conf;
	int	 rc;

	if ((size_t)snprintf(base, sizeof base, "%s/%s", r->state_dir,
	    ENGINE_HERMES_PLUGIN_DIR) >= sizeof base ||
	    (size_t)snprintf(engine_hermes_plugin_path, sizeof engine_hermes_plugin_path,
	    "%s/%s", base, ENGINE_HERMES_PLUGIN) >= sizeof engine_hermes_plugin_path) {
		snprintf(err, errlen, "hermes: state directory path too long");
		return -1;
	}
	if (mkdir(base, 0700) == -1 || mkdir(engine_hermes_plugin_path, 0700) == -1) {
		snprintf(err, errlen, "hermes: create %s: %s", engine_hermes_plugin_path,
		    strerror(errno));
		return -1;
	}
	if ((conf = engine_hermes_plugin_config(r, token_path)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	rc = engine_write_file(engine_hermes_plugin_path, "clockwork.json", conf, 0400,
	    path, sizeof path, err, errlen);
	cJSON_free(conf);
	if (rc == -1 || engine_write_file(engine_hermes_plugin_path, "plugin.yaml",
	    engine_hermes_plugin_yaml, 0400, path, sizeof path, err, errlen) == -1 ||
	    engine_write_file(engine_hermes_plugin_path, "__init__.py",
	    engine_hermes_plugin_py, 0400, path, sizeof path, err, errlen) == -1)
		return -1;
	/*
	 * The directories stay 0700: the sandbox grants the state directory read-only,
	 * and the runner's own clean-up (and clockworkd's gc) must be able to remove them.
	 */
	return 0;
}

static int	engine_hermes_fill_home(const struct engine_run *, char *, size_t);

static int
engine_hermes_prepare(const struct engine_run *r, struct strlist *argv,
    struct strlist *env, struct strlist *files, char *err, size_t errlen)
{
	char	 token_path[PATH_MAX], *kv = NULL;
	int	 rc = -1;

	if (engine_check_openai_run(r, "hermes", err, errlen) == -1)
		return -1;
	if (r->resume_id != NULL) {
		snprintf(err, errlen, "hermes: a run cannot be continued with this engine");
		return -1;
	}
	if (engine_write_file(r->state_dir, ENGINE_HERMES_TOKEN_FILE, r->token, 0400,
	    token_path, sizeof token_path, err, errlen) == -1)
		return -1;
	if (engine_hermes_write_plugin(r, token_path, err, errlen) == -1)
		return -1;
	if (engine_hermes_fill_home(r, err, errlen) == -1)
		return -1;
	/* The plugin (through the home's link), its token and the hook it runs. */
	if (strlist_add(files, r->state_dir) == -1 ||
	    strlist_add(files, r->hook_path) == -1)
		goto nomem;
	/* --oneshot=: a prompt that begins with '-' is still the prompt. */
	if (asprintf(&kv, "--oneshot=%s", r->prompt != NULL ? r->prompt : "") == -1) {
		kv = NULL;
		goto nomem;
	}
	if (strlist_add(argv, "hermes") == -1 || strlist_add(argv, kv) == -1 ||
	    strlist_add(argv, "--toolsets") == -1 ||
	    strlist_add(argv, ENGINE_HERMES_TOOLSETS) == -1)
		goto nomem;
	free(kv);
	/*
	 * A terminal backend that does not exist: Hermes then offers no terminal tool
	 * (its check fails), and only the floor plugin, once loaded, sets "local". A
	 * plugin that fails to load leaves the agent without a shell, not without a floor.
	 */
	if (strlist_add(env, "TERMINAL_ENV=" ENGINE_HERMES_NO_FLOOR) == -1)
		goto nomem;
	if (asprintf(&kv, "TERMINAL_CWD=%s", r->workdir) == -1) {
		kv = NULL;
		goto nomem;
	}
	if (strlist_add(env, kv) == -1)
		goto nomem;
	free(kv);
	kv = NULL;
	if (r->key != NULL) {
		if (asprintf(&kv, ENGINE_HERMES_KEY_ENV "=%s", r->key) == -1) {
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
	return rc;
}

/*
 * HERMES_HOME, new in the run's TMPDIR (home() below): prepare() writes config.yaml
 * into it (Hermes may rewrite it, so a copy, not a link) and plugins/clockwork-floor,
 * a link to the plugin in the state directory. Memories, skills, sessions and logs
 * land there and go with the TMPDIR.
 */
static int
engine_hermes_fill_home(const struct engine_run *r, char *err, size_t errlen)
{
	char	 path[PATH_MAX], *text;
	int	 rc;

	if (engine_hermes_home_dir[0] == '\0') {
		snprintf(err, errlen, "hermes: no private home for the engine");
		return -1;
	}
	if ((text = engine_hermes_config(r)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if ((size_t)snprintf(path, sizeof path, "%s/config.yaml", engine_hermes_home_dir) >=
	    sizeof path)
		rc = -1, errno = ENAMETOOLONG;
	else
		rc = engine_write_new(path, text, strlen(text), 0600);
	free(text);
	if (rc == -1) {
		snprintf(err, errlen, "hermes: write %s: %s", path, strerror(errno));
		return -1;
	}
	if ((size_t)snprintf(path, sizeof path, "%s/plugins", engine_hermes_home_dir) >=
	    sizeof path || mkdir(path, 0700) == -1) {
		snprintf(err, errlen, "hermes: create %s: %s", path, strerror(errno));
		return -1;
	}
	if ((size_t)snprintf(path, sizeof path, "%s/plugins/" ENGINE_HERMES_PLUGIN,
	    engine_hermes_home_dir) >= sizeof path ||
	    symlink(engine_hermes_plugin_path, path) == -1) {
		snprintf(err, errlen, "hermes: link %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

static int
engine_hermes_home(const struct engine_home *h, char *err, size_t errlen)
{
	char	 kv[PATH_MAX + 16];

	if ((size_t)snprintf(engine_hermes_home_dir, sizeof engine_hermes_home_dir, "%s",
	    h->dir) >= sizeof engine_hermes_home_dir) {
		engine_hermes_home_dir[0] = '\0';
		snprintf(err, errlen, "hermes: home path too long");
		return -1;
	}
	snprintf(kv, sizeof kv, "HERMES_HOME=%s", h->dir);
	if (strlist_add(h->env, kv) == -1 || (h->notes != NULL && strlist_add(h->notes,
	    "hermes: HERMES_HOME new in the run's TMPDIR, removed with it; its floor "
	    "plugin linked from the runner's read-only state directory") == -1)) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

/* ---- its output: the plugin's JSON event lines, and Hermes' final message --------- */

struct engine_stream {
	const struct config	*cfg;		/* prices: (NULL: the built-in table) */
	char			*last_text;	/* the last model text, for the final */
};

static struct engine_stream *
engine_hermes_stream_new(void)
{
	return calloc(1, sizeof(struct engine_stream));
}

static void
engine_hermes_stream_free(struct engine_stream *s)
{
	if (s == NULL)
		return;
	free(s->last_text);
	free(s);
}

static void
engine_hermes_stream_prices(struct engine_stream *s, const struct config *cfg)
{
	s->cfg = cfg;
}

static void
engine_hermes_say(engine_say_fn *say, void *arg, cJSON *entry)
{
	if (entry != NULL && say != NULL)
		say(arg, entry);
	else
		cJSON_Delete(entry);
}

/* One model response's usage at the model's price; 1 when the dollars grew. */
static int
engine_hermes_cost(struct engine_stream *s, const char *model, const cJSON *usage,
    struct engine_progress *pr)
{
	static const char *const names[PRICES_N_KINDS] = {
		[PRICES_INPUT] = "input_tokens",
		[PRICES_OUTPUT] = "output_tokens",
		[PRICES_CACHE_WRITE] = "cache_write_tokens",
		[PRICES_CACHE_READ] = "cache_read_tokens",
	};
	const double	*price;
	double		 tokens[PRICES_N_KINDS] = { 0 }, d, cost;
	int		 any = 0;

	if (!cJSON_IsObject(usage) || model == NULL || model[0] == '\0' ||
	    strlen(model) > 256)
		return 0;
	for (int i = 0; i < PRICES_N_KINDS; i++)
		if (json_get_number(usage, names[i], &d) == 0 && isfinite(d) && d > 0 &&
		    d < 1e12) {
			tokens[i] = d;
			any = 1;
		}
	if (!any)
		return 0;
	if ((price = prices_find(s->cfg, model, NULL)) == NULL) {
		if (pr->unpriced[0] == '\0')
			snprintf(pr->unpriced, sizeof pr->unpriced, "%s", model);
		return 0;
	}
	if (!((cost = prices_cost(price, tokens)) > 0) || !isfinite(cost))
		return 0;
	pr->dollars += cost;
	return 1;
}

static void
engine_hermes_tool(const cJSON *j, engine_say_fn *say, void *arg)
{
	const cJSON	*args = cJSON_GetObjectItemCaseSensitive(j, "args");
	const char	*name = json_get_string(j, "name"), *id = json_get_string(j, "id");
	const char	*command = NULL, *path = NULL, *detail = NULL;

	if (name == NULL)
		return;
	if (strcmp(name, ENGINE_HERMES_SHELL_TOOL) == 0)
		command = json_get_string(args, "command");
	else if ((path = json_get_string(args, "path")) == NULL &&
	    (detail = json_get_string(args, "pattern")) == NULL &&
	    (detail = json_get_string(args, "action")) == NULL)
		detail = json_get_string(args, "name");
	engine_hermes_say(say, arg, transcript_tool(name, id, command, path, detail));
}

static int
engine_hermes_stream_line(struct engine_stream *s, const char *line, size_t len,
    struct engine_progress *pr, engine_say_fn *say, void *arg)
{
	const char	*type, *text, *status, *finish;
	cJSON		*j;
	double		 v, calls = 0;
	int		 changed = 0;

	if ((j = json_parse(line, len)) == NULL || !cJSON_IsObject(j) ||
	    json_get_number(j, "cw_hermes", &v) == -1 || v != 1 ||
	    (type = json_get_string(j, "type")) == NULL) {
		/* Hermes' own final message, or a line the plugin did not write. */
		cJSON_Delete(j);
		return -1;
	}
	if (strcmp(type, "api") == 0) {
		/* One model turn: one request to the model and what it called. */
		pr->turns++;
		engine_hermes_cost(s, json_get_string(j, "model"),
		    cJSON_GetObjectItemCaseSensitive(j, "usage"), pr);
		if ((text = json_get_string(j, "text")) != NULL && text[0] != '\0') {
			engine_hermes_say(say, arg, transcript_text(text));
			free(s->last_text);
			s->last_text = strndup(text, TRANSCRIPT_TEXT_MAX);
		}
		finish = json_get_string(j, "finish");
		(void)json_get_number(j, "tool_calls", &calls);
		pr->more = calls > 0 || (finish != NULL && strcmp(finish, "tool_calls") == 0);
		engine_hermes_say(say, arg, transcript_usage(pr->dollars, pr->turns));
		changed = 1;
	} else if (strcmp(type, "tool") == 0) {
		engine_hermes_tool(j, say, arg);
	} else if (strcmp(type, "result") == 0) {
		status = json_get_string(j, "status");
		if ((text = json_get_string(j, "result")) != NULL)
			engine_hermes_say(say, arg, transcript_result(json_get_string(j,
			    "id"), text, strlen(text), status == NULL ||
			    strcmp(status, "ok") != 0));
	} else if (strcmp(type, "denied") == 0) {
		if ((text = json_get_string(j, "message")) != NULL)
			engine_hermes_say(say, arg, transcript_note(text));
	} else if (strcmp(type, "end") == 0) {
		cJSON	*c = cJSON_GetObjectItemCaseSensitive(j, "completed");

		pr->have_result = 1;
		pr->is_error = !cJSON_IsTrue(c);
		snprintf(pr->subtype, sizeof pr->subtype, "%s", pr->is_error ?
		    "error" : "success");
		free(pr->result);
		pr->result = strdup(s->last_text != NULL ? s->last_text : "");
		engine_hermes_say(say, arg, transcript_final(pr->result != NULL ?
		    pr->result : "", pr->is_error));
		changed = 1;
	}
	cJSON_Delete(j);
	return changed;
}

/*
 * The plugin's body: {"tool", "callID", "sessionID", "args": {"command", ...}}. A
 * terminal call without a string command is not one the floor can judge: -1, and the
 * bridge refuses it.
 */
static int
engine_hermes_floor_command(const cJSON *body, const char **command)
{
	const char	*tool;

	*command = NULL;
	if (!cJSON_IsObject(body) || (tool = json_get_string(body, "tool")) == NULL)
		return -1;
	if (strcmp(tool, ENGINE_HERMES_SHELL_TOOL) != 0)
		return 0;
	if ((*command = json_get_string(cJSON_GetObjectItemCaseSensitive(body, "args"),
	    "command")) == NULL)
		return -1;
	return 0;
}

const struct engine_ops engine_hermes_ops = {
	.name = "hermes",
	.prepare = engine_hermes_prepare,
	.home = engine_hermes_home,
	.stream_new = engine_hermes_stream_new,
	.stream_line = engine_hermes_stream_line,
	.stream_free = engine_hermes_stream_free,
	.stream_prices = engine_hermes_stream_prices,
	.floor_command = engine_hermes_floor_command,
};
