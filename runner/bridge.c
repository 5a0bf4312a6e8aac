/*
 * The permission bridge: /floor for cw-floor-hook and /mcp for Claude Code's
 * --permission-prompt-tool. See bridge.h for the contract and docs/SECURITY.md for
 * what it does and does not defend against.
 */
#include <sys/queue.h>
#include <sys/random.h>
#include <sys/socket.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "autoallow.h"
#include "bridge.h"
#include "clock.h"
#include "ctlchar.h"
#include "floor.h"
#include "httpd.h"
#include "asklimit.h"
#include "json.h"
#include "mask.h"
#include "record.h"
#include "wire.h"

/* A tools/call held until a decision names its id or the budget ends. */
struct bridge_pending {
	TAILQ_ENTRY(bridge_pending)	 entry;
	struct bridge			*b;
	char				 id[32];
	struct evhttp_request		*req;	/* NULL when handled without HTTP */
	struct event			*watch;	/* notices the client hanging up */
	cJSON				*rpc_id;
	cJSON				*input;
	char				*tool;
	cJSON				*announce;	/* its approval_request */
};


TAILQ_HEAD(bridge_pendq, bridge_pending);

struct bridge {
	struct event_base	*base;
	struct httpd		*httpd;
	int			 port;
	char			*run_id;
	char			*token;
	const struct floor_policy *policy;
	size_t			 max_body;
	int			 max_pending;
	int			 npending;
	struct asklimit		*asks;		/* the run's approval budget, or NULL */
	int64_t			 pending_noted;	/* when max_pending was last reported, ms */
	struct bridge_pendq	 pending;
	struct record_list	 denials;	/* bounded: see record.h */
	struct record_list	 approvals;
	int			(*floor_command)(const cJSON *, const char **);
	int			 hook_asks;	/* bridge.h */
	void			(*emit)(void *, cJSON *);
	void			*arg;
	int			 body_ctl;	/* the /mcp body's control char, or -1 */
	int			 body_nul;	/* ...and whether it decodes to a NUL */
	unsigned		 ask;		/* autoallow.h */
	int			 sandboxed;
	struct autoallow_rule	*rules;
	size_t			 n_rules;
	struct autoallow_rule	*ask_rules;
	size_t			 n_ask_rules;
	size_t			 n_auto;	/* calls that ran without asking */
};

/* The daemon takes tool names up to this long (runs_approval_request). */
#define BRIDGE_TOOL_MAX	256
/* A limit met again within this long after it was reported is the same burst. */
#define BRIDGE_LIMIT_QUIET_MS	60000

static const char *bridge_versions[] = CW_MCP_VERSIONS;
static const char *const bridge_command_fields[] = {
	"command", "command_truncated", "command_bytes", "command_sha256",
};


static cJSON *
bridge_event(struct bridge *b, const char *kind)
{
	cJSON	*ev;

	if ((ev = cJSON_CreateObject()) == NULL)
		return NULL;
	cJSON_AddNumberToObject(ev, "v", CW_WIRE_VERSION);
	cJSON_AddStringToObject(ev, "type", "event");
	cJSON_AddStringToObject(ev, "kind", kind);
	cJSON_AddStringToObject(ev, "run_id", b->run_id);
	return ev;
}

static void
bridge_emit(struct bridge *b, cJSON *msg)
{
	if (msg == NULL)
		return;
	if (b->emit != NULL)
		b->emit(b->arg, msg);
	else
		cJSON_Delete(msg);
}

/*
 * Ask the floor about one shell command. Returns 1 for deny (out filled), 0 for allow.
 * A deny is recorded and emitted; an evaluation error is a deny (fail closed).
 */
static void	bridge_deny_record(struct bridge *, const char *, const char *,
		    const struct floor_result *);

static int
bridge_floor(struct bridge *b, const char *command, const char *source,
    struct floor_result *out)
{
	memset(out, 0, sizeof *out);
	if (floor_evaluate(command, b->policy, out) == -1) {
		out->verdict = FLOOR_DENY;
		snprintf(out->rule, sizeof out->rule, "floor.error");
		snprintf(out->reason, sizeof out->reason,
		    "the deny-list could not evaluate this command: %s", strerror(errno));
	}
	if (out->verdict != FLOOR_DENY)
		return 0;
	bridge_deny_record(b, command, source, out);
	return 1;
}

/*
 * A body whose JSON decodes to a control character that cuts or hides part of the
 * command ("ls\u0000; git push -f origin main" decodes to a C string "ls"): denied
 * before anything reads the command, recorded like a floor deny.
 */
static void
bridge_control_deny(struct bridge *b, int ch, const char *source,
    struct floor_result *out)
{
	memset(out, 0, sizeof *out);
	out->verdict = FLOOR_DENY;
	out->floor = 1;
	snprintf(out->rule, sizeof out->rule, "floor.control_char");
	snprintf(out->reason, sizeof out->reason, "the tool call holds control character "
	    "0x%02x, which would cut or hide part of the command; the Clockwork floor "
	    "refuses it", ch);
	bridge_deny_record(b, "", source, out);
}

/*
 * Record and emit a deny. A floor rule's is a floor_deny event; a configured rule's
 * (a starter rule included) is a rule_deny, so the journal tells them apart by kind
 * and names the rule by its own id.
 */
static void
bridge_deny_record(struct bridge *b, const char *command, const char *source,
    const struct floor_result *out)
{
	cJSON	*rec, *ev, *f;
	/*
	 * The record and the event keep the command masked and cut (record.h): the run
	 * chooses this text and how often it is sent, and neither may grow without end.
	 */
	if ((rec = cJSON_CreateObject()) != NULL) {
		cJSON_AddStringToObject(rec, "rule", out->rule);
		cJSON_AddStringToObject(rec, "reason", out->reason);
		record_add_command(rec, command);
		cJSON_AddStringToObject(rec, "source", source);
	}
	if ((ev = bridge_event(b, out->floor ? "floor_deny" : "rule_deny")) != NULL &&
	    rec != NULL) {
		cJSON_AddStringToObject(ev, "rule", out->rule);
		cJSON_AddStringToObject(ev, "reason", out->reason);
		for (size_t i = 0; i < sizeof bridge_command_fields /
		    sizeof bridge_command_fields[0]; i++)
			if ((f = cJSON_GetObjectItemCaseSensitive(rec,
			    bridge_command_fields[i])) != NULL)
				cJSON_AddItemToObject(ev, bridge_command_fields[i],
				    cJSON_Duplicate(f, 0));
		cJSON_AddStringToObject(ev, "source", source);
		cJSON_AddBoolToObject(ev, "floor", out->floor != 0);
		cJSON_AddNumberToObject(ev, "seq", (double)b->denials.count + 1);
	}
	bridge_emit(b, ev);
	record_list_add(&b->denials, rec);
}

static void
bridge_send(struct evhttp_request *req, int code, const char *reason,
    const char *body)
{
	if (req != NULL)
		httpd_reply_json(req, code, body);
}

/* ---- /floor -------------------------------------------------------------------- */

/*
 * Would the policy ask a person about this call the floor allowed (autoallow.h, the
 * same evaluation as the approval tool's)? 1 with the person-facing reason in why.
 */
static int
bridge_policy_asks(const struct bridge *b, const struct floor_result *fr, char *why,
    size_t whylen)
{
	struct autoallow_policy	 ap = { b->ask, b->sandboxed, b->rules, b->n_rules,
	    b->ask_rules, b->n_ask_rules };
	struct autoallow_result	 ar;

	autoallow_decide(fr, &ap, &ar);
	if (ar.verdict != AUTOALLOW_ASK)
		return 0;
	snprintf(why, whylen, "Clockwork asks a person about this %s command (%s)",
	    floor_risk_name(fr->risk), ar.rule[0] != '\0' ? ar.rule :
	    fr->risk_rule[0] != '\0' ? fr->risk_rule : "approvals.ask");
	return 1;
}

/*
 * The hook's answer for one body cw-floor-hook forwarded, in the engine's own hook
 * format: the engine says which shell command it carries (b->floor_command), the
 * floor judges that. Returns a new JSON text.
 *
 * A shell command the floor allows gets the policy's verdict too (autoallow.h):
 * "ask" when a person must answer it. Claude Code in acceptEdits runs its common
 * filesystem commands (mkdir, touch, rm, mv, cp, sed...) in the working directory
 * without calling the approval tool, so without this `rm -rf sub` would run unasked
 * whatever approvals.ask says; on "ask" the hook makes Claude Code consult the
 * approval tool, which evaluates the call again and holds it for a person. Nothing
 * is journaled here for an allow or an ask: the approval tool journals what it
 * decides (auto_allow, or the approval), once. Only for an engine whose hook can ask
 * (b->hook_asks): the byok tool host, codex and opencode read allow or deny.
 */
static char *
bridge_floor_answer(struct bridge *b, const char *body, size_t len)
{
	cJSON			*in, *out;
	const char		*cmd = NULL;
	struct floor_result	 fr;
	const char		*decision = "deny", *reason;
	char			*text, why[256];
	int			 ch, shell;

	reason = "malformed hook request";
	memset(&fr, 0, sizeof fr);
	in = json_parse(body, len);
	/* 1: a shell command (cmd), 0: another tool, -1: not a hook body. */
	shell = in != NULL && cJSON_IsObject(in) && b->floor_command != NULL &&
	    b->floor_command(in, &cmd) == 0 ? cmd != NULL : -1;
	/* A NUL always; another control character in a shell command's body. */
	ch = ctlchar_json_has_nul(body, len) ? 0 : shell == 1 ?
	    ctlchar_json_find(body, len) : -1;
	if (ch != -1) {
		bridge_control_deny(b, ch, "hook", &fr);
		reason = fr.reason;
	} else if (shell != -1) {
		if (!shell) {
			/* The floor judges shell commands; other tools are not its business. */
			decision = "allow";
			reason = "not a shell command";
		} else if (bridge_floor(b, cmd, "hook", &fr)) {
			reason = fr.reason;
		} else if (b->hook_asks && bridge_policy_asks(b, &fr, why, sizeof why)) {
			decision = "ask";
			reason = why;
		} else {
			decision = "allow";
			reason = "";
		}
	}
	out = cJSON_CreateObject();
	cJSON_AddStringToObject(out, "decision", decision);
	cJSON_AddStringToObject(out, "reason", reason);
	if (fr.rule[0] != '\0')
		cJSON_AddStringToObject(out, "rule", fr.rule);
	text = json_print(out);
	cJSON_Delete(out);
	cJSON_Delete(in);
	return text;
}

/* ---- /mcp: JSON-RPC ---------------------------------------------------------------- */

static cJSON *
bridge_rpc_error(const cJSON *id, int code, const char *message)
{
	cJSON	*r, *e;

	r = cJSON_CreateObject();
	cJSON_AddStringToObject(r, "jsonrpc", "2.0");
	if (id != NULL)
		cJSON_AddItemToObject(r, "id", cJSON_Duplicate(id, 1));
	else
		cJSON_AddNullToObject(r, "id");
	e = cJSON_AddObjectToObject(r, "error");
	cJSON_AddNumberToObject(e, "code", code);
	cJSON_AddStringToObject(e, "message", message);
	return r;
}

static cJSON *
bridge_rpc_result(const cJSON *id, cJSON *result)
{
	cJSON	*r;

	r = cJSON_CreateObject();
	cJSON_AddStringToObject(r, "jsonrpc", "2.0");
	cJSON_AddItemToObject(r, "id", cJSON_Duplicate(id, 1));
	cJSON_AddItemToObject(r, "result", result);
	return r;
}

/* The approval tool's answer: a text block holding the behaviour JSON Claude expects. */
static cJSON *
bridge_tool_result(const cJSON *id, int allow, const cJSON *input, const char *message)
{
	cJSON	*inner, *res, *content, *block;
	char	*text;

	inner = cJSON_CreateObject();
	if (allow) {
		cJSON_AddStringToObject(inner, "behavior", "allow");
		cJSON_AddItemToObject(inner, "updatedInput", input != NULL ?
		    cJSON_Duplicate(input, 1) : cJSON_CreateObject());
	} else {
		cJSON_AddStringToObject(inner, "behavior", "deny");
		cJSON_AddStringToObject(inner, "message", message != NULL &&
		    *message != '\0' ? message : "denied");
	}
	text = json_print(inner);
	cJSON_Delete(inner);
	res = cJSON_CreateObject();
	content = cJSON_AddArrayToObject(res, "content");
	block = cJSON_CreateObject();
	cJSON_AddStringToObject(block, "type", "text");
	json_add_string(block, "text", text != NULL ? text :
	    "{\"behavior\":\"deny\",\"message\":\"out of memory\"}");
	cJSON_AddItemToArray(content, block);
	cJSON_free(text);
	return bridge_rpc_result(id, res);
}

static void
bridge_record_approval(struct bridge *b, const char *id, const char *tool,
    const char *behavior, const char *by, const char *message)
{
	cJSON	*rec;

	if ((rec = cJSON_CreateObject()) == NULL)
		return;
	json_add_string(rec, "id", id);
	record_add_string(rec, "tool", tool, BRIDGE_TOOL_MAX);
	cJSON_AddStringToObject(rec, "behavior", behavior);
	cJSON_AddStringToObject(rec, "by", by);
	record_add_string(rec, "message", message, CW_RECORD_MAX_TEXT);
	record_list_add(&b->approvals, rec);
}

static void bridge_pending_closed(struct evhttp_connection *, void *);

static void
bridge_pending_free(struct bridge_pending *p)
{
	if (p->watch != NULL)
		event_free(p->watch);
	cJSON_Delete(p->rpc_id);
	cJSON_Delete(p->input);
	cJSON_Delete(p->announce);
	free(p->tool);
	free(p);
}

/* Send the held answer (if the client is still there) and forget the approval. */
static void
bridge_pending_finish(struct bridge *b, struct bridge_pending *p, int allow,
    const char *message)
{
	cJSON	*r;
	char	*text;

	TAILQ_REMOVE(&b->pending, p, entry);
	b->npending--;
	if (p->watch != NULL) {
		event_free(p->watch);
		p->watch = NULL;
	}
	if (p->req != NULL) {
		httpd_set_closecb(b->httpd, p->req, NULL, NULL);
		r = bridge_tool_result(p->rpc_id, allow, p->input, message);
		text = json_print(r);
		cJSON_Delete(r);
		bridge_send(p->req, 200, "OK", text);
		cJSON_free(text);
	}
	bridge_pending_free(p);
}

static void
bridge_pending_closed(struct evhttp_connection *evcon, void *arg)
{
	struct bridge_pending	*p = arg;
	struct bridge		*b = p->b;
	cJSON			*ev;

	/* evhttp frees the request with its connection: never touch it again. */
	p->req = NULL;
	bridge_record_approval(b, p->id, p->tool, "deny", "client_gone", NULL);
	if ((ev = bridge_event(b, "approval_abandoned")) != NULL) {
		cJSON_AddStringToObject(ev, "id", p->id);
		bridge_emit(b, ev);
	}
	bridge_pending_finish(b, p, 0, NULL);
}

/*
 * evhttp does not read from a connection whose request it is waiting for us to answer,
 * so it would not notice the client leaving; this watcher does, and frees the
 * connection, which runs bridge_pending_closed().
 */
static void
bridge_pending_watch(evutil_socket_t fd, short what, void *arg)
{
	struct bridge_pending	*p = arg;
	char			 c;

	if (p->req == NULL)
		return;
	if (recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) == -1 &&
	    (errno == EAGAIN || errno == EINTR))
		return;
	evhttp_connection_free(evhttp_request_get_connection(p->req));
}

static int
bridge_new_id(char *out, size_t outlen)
{
	unsigned char	r[12];
	size_t		i;

	if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r || outlen < 4 + 2 * sizeof r)
		return -1;
	memcpy(out, "ap-", 3);
	for (i = 0; i < sizeof r; i++)
		snprintf(out + 3 + 2 * i, 3, "%02x", r[i]);
	return 0;
}

/*
 * An approval's input travels whole to the daemon (a person must see all of it), in
 * one wire line: one that would not fit, once printed, is refused here instead of
 * ending the run with a protocol error (printing can grow a body: a raw control byte
 * becomes \u00XX).
 */
static int
bridge_too_large(const cJSON *input)
{
	char	*t;
	size_t	 n;

	if ((t = json_print(input)) == NULL)
		return 1;
	n = strlen(t);
	cJSON_free(t);
	return n > CW_RUN_REPORT_MAX;
}

/*
 * The risk of a tool other than Bash. The file tools are ordinary while the file is
 * in the worktree, outside_worktree otherwise; a tool the bridge does not know (the
 * web tools, another MCP server's) is not ordinary, since it cannot tell what the
 * tool reaches. Its family is the tool's name.
 */
static void
bridge_tool_risk(const struct bridge *b, const char *tool, const cJSON *input,
    struct floor_result *fr)
{
	static const char *const files[] = { "Read", "Write", "Edit", "MultiEdit",
	    "NotebookEdit", "NotebookRead", "Glob", "Grep", "LS", "TodoWrite",
	    "TodoRead", "Task", "BashOutput", "KillShell", "KillBash", "ExitPlanMode",
	    NULL };
	const char	*wt = b->policy != NULL ? b->policy->worktree : NULL;
	const char	*path = json_get_string(input, "file_path");
	size_t		 n, k;

	fr->n_families = 0;
	fr->family_opaque = 1;
	if (strlen(tool) < FLOOR_FAMILY_MAX && autoallow_family_valid(tool)) {
		snprintf(fr->families[0], sizeof fr->families[0], "%s", tool);
		fr->n_families = 1;
		fr->family_opaque = 0;
	}
	for (k = 0; files[k] != NULL; k++)
		if (strcmp(tool, files[k]) == 0)
			break;
	if (files[k] == NULL) {
		fr->risk = FLOOR_RISK_OUTSIDE;
		snprintf(fr->risk_rule, sizeof fr->risk_rule, "risk.unknown_tool");
		return;
	}
	if (path == NULL)
		path = json_get_string(input, "notebook_path");
	if (path == NULL)
		path = json_get_string(input, "path");
	if (path == NULL)
		return;
	if (wt == NULL || path[0] != '/')
		goto outside;
	n = strlen(wt);
	while (n > 1 && wt[n - 1] == '/')
		n--;
	if (strncmp(path, wt, n) == 0 && (path[n] == '/' || path[n] == '\0') &&
	    strstr(path, "/../") == NULL && (strlen(path) < 3 ||
	    strcmp(path + strlen(path) - 3, "/..") != 0))
		return;
outside:
	/* A relative path resolves against a directory the bridge does not know. */
	fr->risk = FLOOR_RISK_OUTSIDE;
	snprintf(fr->risk_rule, sizeof fr->risk_rule, "risk.outside_worktree");
}

/*
 * A call that runs without asking (autoallow.h): answered allow at once, recorded,
 * and told to the daemon for the journal (auto_allow, with its risk and the rule
 * that let it run).
 */
static cJSON *
bridge_auto_allow(struct bridge *b, const cJSON *id, const char *tool,
    const cJSON *input, const struct floor_result *fr, const char *rule)
{
	cJSON	*ev;

	b->n_auto++;
	bridge_record_approval(b, NULL, tool, "allow", "auto", rule);
	if ((ev = bridge_event(b, "auto_allow")) != NULL) {
		record_add_string(ev, "tool", tool, BRIDGE_TOOL_MAX);
		if (json_get_string(input, "command") != NULL)
			record_add_command(ev, json_get_string(input, "command"));
		else if (json_get_string(input, "file_path") != NULL)
			record_add_string(ev, "file_path", json_get_string(input,
			    "file_path"), CW_RECORD_MAX_TEXT);
		cJSON_AddStringToObject(ev, "risk", floor_risk_name(fr->risk));
		if (fr->risk_rule[0] != '\0')
			cJSON_AddStringToObject(ev, "risk_rule", fr->risk_rule);
		cJSON_AddStringToObject(ev, "rule", rule);
		cJSON_AddNumberToObject(ev, "seq", (double)b->n_auto);
		bridge_emit(b, ev);
	}
	return bridge_tool_result(id, 1, input, NULL);
}

/*
 * tools/call of the approval tool. Returns the response now, or NULL when the call is
 * held (then the answer goes out through reqctx later).
 */
static cJSON *
bridge_tools_call(struct bridge *b, const cJSON *id, const cJSON *params, void *reqctx)
{
	const cJSON		*args, *input;
	const char		*name, *tool, *cmd, *use_id;
	struct floor_result	 fr;
	struct bridge_pending	*p;
	cJSON			*msg;
	int64_t			 now;

	name = json_get_string(params, "name");
	if (name == NULL || strcmp(name, BRIDGE_TOOL_NAME) != 0)
		return bridge_rpc_error(id, -32602, "unknown tool");
	args = cJSON_GetObjectItemCaseSensitive(params, "arguments");
	tool = json_get_string(args, "tool_name");
	input = cJSON_GetObjectItemCaseSensitive(args, "input");
	use_id = json_get_string(args, "tool_use_id");
	memset(&fr, 0, sizeof fr);
	/*
	 * A NUL in any approval's body; another control character only in a shell
	 * command's (a file's content may hold a carriage return).
	 */
	if (b->body_nul || (b->body_ctl != -1 && tool != NULL &&
	    strcmp(tool, "Bash") == 0)) {
		bridge_control_deny(b, b->body_nul ? 0 : b->body_ctl, "approval", &fr);
		bridge_record_approval(b, NULL, tool, "deny", "floor", fr.reason);
		return bridge_tool_result(id, 0, NULL, fr.reason);
	}
	if (tool == NULL || strlen(tool) > BRIDGE_TOOL_MAX || !cJSON_IsObject(input)) {
		bridge_record_approval(b, NULL, tool, "deny", "malformed", NULL);
		return bridge_tool_result(id, 0, NULL,
		    "malformed approval request: tool_name and input are required");
	}
	/*
	 * "budget" is the runner's own question (a budget pause, run.c): the daemon and
	 * every surface treat it as one (an answer raises the run's budget). An engine's
	 * call by that name would pass off a tool call as that question.
	 */
	if (strcmp(tool, BRIDGE_RESERVED_TOOL) == 0) {
		bridge_record_approval(b, NULL, tool, "deny", "floor", NULL);
		return bridge_tool_result(id, 0, NULL, "the tool name \"" BRIDGE_RESERVED_TOOL
		    "\" is Clockwork's own: a call by that name is never asked");
	}
	if (strcmp(tool, "Bash") == 0) {
		if ((cmd = json_get_string(input, "command")) == NULL) {
			bridge_record_approval(b, NULL, tool, "deny", "malformed", NULL);
			return bridge_tool_result(id, 0, NULL,
			    "malformed approval request: Bash without a command");
		}
		if (bridge_floor(b, cmd, "approval", &fr)) {
			bridge_record_approval(b, NULL, tool, "deny", "floor", fr.reason);
			return bridge_tool_result(id, 0, NULL, fr.reason);
		}
	} else
		bridge_tool_risk(b, tool, input, &fr);
	/* Who answers: the one evaluation (autoallow.h), before any approval is held. */
	{
		struct autoallow_policy	 ap = { b->ask, b->sandboxed, b->rules,
		    b->n_rules, b->ask_rules, b->n_ask_rules };
		struct autoallow_result	 ar;

		autoallow_decide(&fr, &ap, &ar);
		if (ar.verdict == AUTOALLOW_RUN)
			return bridge_auto_allow(b, id, tool, input, &fr, ar.rule);
		/* An ordinary call asked by an ask rule: the person sees which rule. */
		if (ar.verdict == AUTOALLOW_ASK && strncmp(ar.rule, "task_ask:", 9) == 0 &&
		    fr.risk_rule[0] == '\0' && strlen(ar.rule) < sizeof fr.risk_rule)
			snprintf(fr.risk_rule, sizeof fr.risk_rule, "%s", ar.rule);
	}
	/*
	 * Every refusal below is answered at once and recorded (bounded), but the
	 * daemon hears of a limit once per burst: an agent calling in a loop must not
	 * turn each call into a journal row and a notification.
	 */
	if (b->npending >= b->max_pending) {
		bridge_record_approval(b, NULL, tool, "deny", "limit", NULL);
		/*
		 * Once a minute at most: in a flood the waiting count dips below the limit
		 * as abandoned calls are dropped and fills again at once, which is still
		 * one burst.
		 */
		now = clock_mono_ms();
		if ((b->pending_noted == 0 || now - b->pending_noted >= BRIDGE_LIMIT_QUIET_MS) &&
		    (msg = bridge_event(b, "approval_limit")) != NULL) {
			cJSON_AddStringToObject(msg, "tool", tool);
			cJSON_AddStringToObject(msg, "limit", "pending");
			cJSON_AddStringToObject(msg, "reason", "too many approval requests are "
			    "already waiting for an answer");
			bridge_emit(b, msg);
			b->pending_noted = now;
		}
		return bridge_tool_result(id, 0, NULL,
		    "too many approval requests are already waiting for an answer");
	}
	if (bridge_too_large(input)) {
		bridge_record_approval(b, NULL, tool, "deny", "limit", "input too large");
		if ((msg = bridge_event(b, "approval_too_large")) != NULL) {
			record_add_string(msg, "tool", tool, BRIDGE_TOOL_MAX);
			bridge_emit(b, msg);
		}
		return bridge_tool_result(id, 0, NULL,
		    "the approval request is too large to be shown to a person");
	}
	if (b->asks != NULL) {
		char		 why[160];
		const char	*kind;
		int		 first;

		if (asklimit_admit(b->asks, clock_mono_ms(), why, sizeof why, &kind,
		    &first) == -1) {
			bridge_record_approval(b, NULL, tool, "deny", "limit", why);
			if (first && (msg = bridge_event(b, "approval_limit")) != NULL) {
				record_add_string(msg, "tool", tool, BRIDGE_TOOL_MAX);
				cJSON_AddStringToObject(msg, "limit", kind);
				cJSON_AddStringToObject(msg, "reason", why);
				bridge_emit(b, msg);
			}
			return bridge_tool_result(id, 0, NULL, why);
		}
	}
	if ((p = calloc(1, sizeof *p)) == NULL || bridge_new_id(p->id, sizeof p->id) == -1 ||
	    (p->tool = strdup(tool)) == NULL ||
	    (p->rpc_id = cJSON_Duplicate(id, 1)) == NULL ||
	    (p->input = cJSON_Duplicate(input, 1)) == NULL) {
		if (p != NULL)
			bridge_pending_free(p);
		return bridge_tool_result(id, 0, NULL, "the approval could not be recorded");
	}
	p->b = b;
	p->req = reqctx;
	TAILQ_INSERT_TAIL(&b->pending, p, entry);
	b->npending++;
	if (p->req != NULL) {
		struct evhttp_connection	*evcon;

		evcon = evhttp_request_get_connection(p->req);
		httpd_set_closecb(b->httpd, p->req, bridge_pending_closed, p);
		p->watch = event_new(b->base, bufferevent_getfd(
		    evhttp_connection_get_bufferevent(evcon)), EV_CLOSED | EV_PERSIST,
		    bridge_pending_watch, p);
		if (p->watch != NULL)
			event_add(p->watch, NULL);
	}
	if ((msg = cJSON_CreateObject()) != NULL) {
		cJSON_AddNumberToObject(msg, "v", CW_WIRE_VERSION);
		cJSON_AddStringToObject(msg, "type", "approval_request");
		cJSON_AddStringToObject(msg, "run_id", b->run_id);
		cJSON_AddStringToObject(msg, "id", p->id);
		cJSON_AddStringToObject(msg, "tool", tool);
		cJSON_AddItemToObject(msg, "input", cJSON_Duplicate(input, 1));
		if (use_id != NULL)
			cJSON_AddStringToObject(msg, "tool_use_id", use_id);
		/* What kind of call this is, for the person: from the floor's evaluation. */
		char	 fam[FLOOR_FAMILY_MAX];

		cJSON_AddStringToObject(msg, "risk", floor_risk_name(fr.risk));
		if (fr.risk_rule[0] != '\0')
			cJSON_AddStringToObject(msg, "risk_rule", fr.risk_rule);
		/* What "always for this task" would remember; none for a hidden payload. */
		if (autoallow_family(&fr, fam, sizeof fam) == 0)
			cJSON_AddStringToObject(msg, "family", fam);
		p->announce = cJSON_Duplicate(msg, 1);
		bridge_emit(b, msg);
	}
	return NULL;
}

static cJSON *
bridge_initialize(const cJSON *id, const cJSON *params)
{
	const char	*want, *ver = bridge_versions[0];
	cJSON		*res, *caps, *info;
	size_t		 i;

	if ((want = json_get_string(params, "protocolVersion")) != NULL)
		for (i = 0; i < sizeof bridge_versions / sizeof bridge_versions[0]; i++)
			if (strcmp(want, bridge_versions[i]) == 0)
				ver = bridge_versions[i];
	res = cJSON_CreateObject();
	cJSON_AddStringToObject(res, "protocolVersion", ver);
	caps = cJSON_AddObjectToObject(res, "capabilities");
	cJSON_AddBoolToObject(cJSON_AddObjectToObject(caps, "tools"), "listChanged", 0);
	info = cJSON_AddObjectToObject(res, "serverInfo");
	cJSON_AddStringToObject(info, "name", "clockwork");
	cJSON_AddStringToObject(info, "version", CW_VERSION);
	return bridge_rpc_result(id, res);
}

static cJSON *
bridge_tools_list(const cJSON *id)
{
	static const char schema[] = "{\"type\":\"object\",\"properties\":{"
	    "\"tool_name\":{\"type\":\"string\"},\"input\":{\"type\":\"object\"},"
	    "\"tool_use_id\":{\"type\":\"string\"}},\"required\":[\"tool_name\",\"input\"]}";
	cJSON	*res, *tools, *t;

	res = cJSON_CreateObject();
	tools = cJSON_AddArrayToObject(res, "tools");
	t = cJSON_CreateObject();
	cJSON_AddStringToObject(t, "name", BRIDGE_TOOL_NAME);
	cJSON_AddStringToObject(t, "description",
	    "Clockwork's permission prompt: asks the run's owner about one tool call.");
	cJSON_AddItemToObject(t, "inputSchema", cJSON_Parse(schema));
	cJSON_AddItemToArray(tools, t);
	return bridge_rpc_result(id, res);
}

/*
 * One JSON-RPC message. Returns the response, NULL for none (a notification, a client
 * response, or a held tools/call: *held is set then).
 */
static cJSON *
bridge_rpc_one(struct bridge *b, const cJSON *m, int batched, void *reqctx, int *held)
{
	const cJSON	*id, *params, *method, *ver;

	*held = 0;
	if (!cJSON_IsObject(m))
		return bridge_rpc_error(NULL, -32600, "invalid request");
	ver = cJSON_GetObjectItemCaseSensitive(m, "jsonrpc");
	id = cJSON_GetObjectItemCaseSensitive(m, "id");
	method = cJSON_GetObjectItemCaseSensitive(m, "method");
	if (id != NULL && !cJSON_IsString(id) && !cJSON_IsNumber(id))
		return bridge_rpc_error(NULL, -32600, "invalid request id");
	if (!cJSON_IsString(ver) || strcmp(ver->valuestring, "2.0") != 0)
		return bridge_rpc_error(id, -32600, "jsonrpc must be \"2.0\"");
	if (method == NULL) {
		/* A response to a request of ours: we send none, so there is nothing to do. */
		if (id != NULL && (cJSON_HasObjectItem(m, "result") ||
		    cJSON_HasObjectItem(m, "error")))
			return NULL;
		return bridge_rpc_error(id, -32600, "invalid request");
	}
	if (!cJSON_IsString(method))
		return bridge_rpc_error(id, -32600, "method must be a string");
	params = cJSON_GetObjectItemCaseSensitive(m, "params");
	if (params != NULL && !cJSON_IsObject(params) && !cJSON_IsArray(params))
		return bridge_rpc_error(id, -32600, "params must be structured");
	if (id == NULL)
		return NULL;	/* notifications, initialized included, need no answer */
	if (strcmp(method->valuestring, "initialize") == 0)
		return bridge_initialize(id, params);
	if (strcmp(method->valuestring, "ping") == 0)
		return bridge_rpc_result(id, cJSON_CreateObject());
	if (strcmp(method->valuestring, "tools/list") == 0)
		return bridge_tools_list(id);
	if (strcmp(method->valuestring, "tools/call") == 0) {
		cJSON	*r;

		if (batched)
			return bridge_rpc_error(id, -32600,
			    "tools/call must be sent on its own, not in a batch");
		if (!cJSON_IsObject(params))
			return bridge_rpc_error(id, -32602, "tools/call needs params");
		if ((r = bridge_tools_call(b, id, params, reqctx)) == NULL)
			*held = 1;
		return r;
	}
	return bridge_rpc_error(id, -32601, "method not found");
}

#define BRIDGE_MAX_BATCH	64

int
bridge_mcp_handle(struct bridge *b, const char *body, size_t len, void *reqctx,
    char **reply)
{
	cJSON	*in, *out = NULL, *r, *m;
	int	 held, status = 200, n = 0;

	*reply = NULL;
	b->body_ctl = ctlchar_json_find(body, len);
	b->body_nul = ctlchar_json_has_nul(body, len);
	if ((in = json_parse(body, len)) == NULL) {
		out = bridge_rpc_error(NULL, -32700, "parse error");
		status = 400;
	} else if (cJSON_IsArray(in)) {
		/*
		 * Batches (JSON-RPC 2.0, MCP 2025-03-26) are answered element by element;
		 * a tools/call must come alone because its answer may be held for hours.
		 */
		if (cJSON_GetArraySize(in) == 0 || cJSON_GetArraySize(in) > BRIDGE_MAX_BATCH) {
			out = bridge_rpc_error(NULL, -32600, "invalid batch");
			status = 400;
		} else {
			out = cJSON_CreateArray();
			cJSON_ArrayForEach(m, in) {
				if ((r = bridge_rpc_one(b, m, 1, NULL, &held)) != NULL) {
					cJSON_AddItemToArray(out, r);
					n++;
				}
			}
			if (n == 0) {
				cJSON_Delete(out);
				out = NULL;
				status = 202;
			}
		}
	} else {
		out = bridge_rpc_one(b, in, 0, reqctx, &held);
		if (out == NULL)
			status = held ? 0 : 202;
		else if (cJSON_HasObjectItem(out, "error") && cJSON_IsNull(
		    cJSON_GetObjectItemCaseSensitive(out, "id")))
			status = 400;
	}
	if (out != NULL) {
		*reply = json_print(out);
		cJSON_Delete(out);
	}
	cJSON_Delete(in);
	return status;
}

/* ---- HTTP -------------------------------------------------------------------------- */

/*
 * Checks common to both routes. A browser cannot reach us: it would send an Origin, or
 * a foreign Host after DNS rebinding, and it cannot add the run header without a CORS
 * preflight that we never answer. Returns 0 when the request may proceed.
 */
static int
bridge_gate(struct bridge *b, struct evhttp_request *req)
{
	struct evkeyvalq	*h = evhttp_request_get_input_headers(req);

	httpd_begin(b->httpd, req, NULL);
	if (evhttp_request_get_command(req) != EVHTTP_REQ_POST) {
		evhttp_add_header(evhttp_request_get_output_headers(req), "Allow", "POST");
		bridge_send(req, 405, "Method Not Allowed", NULL);
		return -1;
	}
	if (evhttp_find_header(h, "Origin") != NULL ||
	    !httpd_host_ok(evhttp_find_header(h, "Host"), b->port)) {
		bridge_send(req, 403, "Forbidden", NULL);
		return -1;
	}
	/* Constant time, so the token cannot be found by timing. */
	if (!httpd_equal(evhttp_find_header(h, CW_HOOK_RUN_HEADER), b->token)) {
		bridge_send(req, 401, "Unauthorized", NULL);
		return -1;
	}
	return 0;
}

/* The body as one contiguous, NUL-terminated block (evhttp already capped its size). */
static char *
bridge_body(struct bridge *b, struct evhttp_request *req, size_t *len)
{
	return httpd_body(req, b->max_body, 1, len);
}

static void
bridge_http_floor(struct evhttp_request *req, void *arg)
{
	struct bridge	*b = arg;
	char		*body, *answer;
	size_t		 len;

	if (bridge_gate(b, req) == -1)
		return;
	if ((body = bridge_body(b, req, &len)) == NULL) {
		bridge_send(req, 500, "Internal Server Error", NULL);
		return;
	}
	answer = bridge_floor_answer(b, body, len);
	free(body);
	bridge_send(req, answer != NULL ? 200 : 500, answer != NULL ? "OK" :
	    "Internal Server Error", answer);
	cJSON_free(answer);
}

static void
bridge_http_mcp(struct evhttp_request *req, void *arg)
{
	struct bridge	*b = arg;
	const char	*pv;
	char		*body, *reply;
	size_t		 len;
	int		 status;
	size_t		 i, ok = 0;

	if (bridge_gate(b, req) == -1)
		return;
	pv = evhttp_find_header(evhttp_request_get_input_headers(req),
	    "MCP-Protocol-Version");
	if (pv != NULL) {
		for (i = 0; i < sizeof bridge_versions / sizeof bridge_versions[0]; i++)
			ok |= strcmp(pv, bridge_versions[i]) == 0;
		if (!ok) {
			bridge_send(req, 400, "Bad Request", NULL);
			return;
		}
	}
	if ((body = bridge_body(b, req, &len)) == NULL) {
		bridge_send(req, 500, "Internal Server Error", NULL);
		return;
	}
	status = bridge_mcp_handle(b, body, len, req, &reply);
	free(body);
	if (status == 0)
		return;		/* held: bridge_pending_finish() answers */
	bridge_send(req, status, status == 200 ? "OK" : status == 202 ? "Accepted" :
	    "Bad Request", reply);
	cJSON_free(reply);
}

static void
bridge_http_other(struct evhttp_request *req, void *arg)
{
	struct bridge	*b = arg;

	httpd_begin(b->httpd, req, NULL);
	bridge_send(req, 404, "Not Found", NULL);
}

static void
bridge_limits(struct httpd_limits *lim)
{
	memset(lim, 0, sizeof *lim);
	lim->max_conns = BRIDGE_MAX_CONNS;
	lim->max_per_peer = BRIDGE_MAX_CONNS;
	lim->deadline_ms = BRIDGE_DEADLINE_MS;
	/* The hook and the approval tool speak at once; a run's idle flood does not. */
	lim->evict_idle = 1;
}

struct bridge *
bridge_new(struct event_base *base, const struct bridge_config *cfg, char *err,
    size_t errlen)
{
	struct bridge			*b = NULL;
	int				 hold;

	struct httpd_limits		 lim;
	struct evhttp			*http;

	/* A held approval is not idle to evhttp (it stops reading once a request is in). */
	hold = cfg->hold_seconds > 0 ? cfg->hold_seconds + 60 : 3600 + 60;
	if ((b = calloc(1, sizeof *b)) == NULL ||
	    (b->run_id = strdup(cfg->run_id)) == NULL ||
	    (b->token = strdup(cfg->token)) == NULL ||
	    record_list_init(&b->denials, CW_RECORD_MAX_LIST, CW_RECORD_MAX_BYTES) == -1 ||
	    record_list_init(&b->approvals, CW_RECORD_MAX_LIST, CW_RECORD_MAX_BYTES) == -1) {
		snprintf(err, errlen, "bridge: out of memory");
		bridge_free(b);
		return NULL;
	}
	/* The runner serves connections now: 1,024 descriptors is not its budget. */
	httpd_raise_nofile();
	httpd_quiet_libevent();
	if ((b->httpd = httpd_new(base, "bridge", BRIDGE_MAX_CONNS, hold, err,
	    errlen)) == NULL) {
		bridge_free(b);
		return NULL;
	}
	http = httpd_evhttp(b->httpd);
	TAILQ_INIT(&b->pending);
	b->base = base;
	b->policy = cfg->policy;
	b->max_body = cfg->max_body ? cfg->max_body : CW_BRIDGE_MAX_BODY;
	b->max_pending = cfg->max_pending ? cfg->max_pending : CW_BRIDGE_MAX_PENDING;
	b->asks = cfg->asks;
	b->ask = cfg->ask_set ? cfg->ask : AUTOALLOW_ASK_ALL;
	for (size_t i = 0; i < cfg->n_rules; i++)
		if (bridge_add_rule(b, cfg->rules[i].family, (int)cfg->rules[i].max_risk) ==
		    -1) {
			snprintf(err, errlen, "bridge: task rule %zu is not valid", i);
			bridge_free(b);
			return NULL;
		}
	for (size_t i = 0; i < cfg->n_ask_rules; i++)
		if (bridge_add_ask_rule(b, cfg->ask_rules[i].family) == -1) {
			snprintf(err, errlen, "bridge: task ask rule %zu is not valid", i);
			bridge_free(b);
			return NULL;
		}
	b->floor_command = cfg->floor_command;
	b->hook_asks = cfg->hook_asks != 0;
	b->emit = cfg->emit;
	b->arg = cfg->arg;
	/*
	 * evhttp answers 413 and closes as soon as a Content-Length (or the chunks read so
	 * far) exceeds the limit, without reading the rest of the body.
	 */
	evhttp_set_max_body_size(http, b->max_body);
	evhttp_set_max_headers_size(http, 64 * 1024);
	evhttp_set_allowed_methods(http, EVHTTP_REQ_POST | EVHTTP_REQ_GET |
	    EVHTTP_REQ_DELETE | EVHTTP_REQ_PUT | EVHTTP_REQ_HEAD | EVHTTP_REQ_OPTIONS);
	evhttp_set_cb(http, "/floor", bridge_http_floor, b);
	evhttp_set_cb(http, "/mcp", bridge_http_mcp, b);
	evhttp_set_gencb(http, bridge_http_other, b);
	/*
	 * Every client is the run itself, all from 127.0.0.1: the caps keep a run that
	 * floods its own bridge from taking the runner's descriptors, and the deadline
	 * closes what never sends a whole request.
	 */
	if (cfg->defer_listen) {
		/* The socket is made in the run's network namespace: bridge_adopt(). */
		b->port = cfg->port;
		return b;
	}
	bridge_limits(&lim);
	if (httpd_listen_tcp(b->httpd, cfg->port, &lim, &b->port, err, errlen) == -1) {
		bridge_free(b);
		return NULL;
	}
	return b;
}

int
bridge_adopt(struct bridge *b, int fd, char *err, size_t errlen)
{
	struct httpd_limits	 lim;

	bridge_limits(&lim);
	return httpd_listen_fd(b->httpd, fd, &lim, NULL, err, errlen);
}

int
bridge_port(const struct bridge *b)
{
	return b->port;
}

/*
 * A restarted clockworkd attached: every approval still held is announced again, the
 * same message as before, since the last one may have died in the old daemon's pipe.
 */
void
bridge_reannounce(struct bridge *b)
{
	struct bridge_pending	*p;

	if (b == NULL)
		return;
	TAILQ_FOREACH(p, &b->pending, entry)
		if (p->announce != NULL)
			bridge_emit(b, cJSON_Duplicate(p->announce, 1));
}

void
bridge_set_sandboxed(struct bridge *b, int sandboxed)
{
	b->sandboxed = sandboxed != 0;
}

int
bridge_add_rule(struct bridge *b, const char *family, int max_risk)
{
	struct autoallow_rule	*nr;

	if (family == NULL || !autoallow_family_valid(family) ||
	    max_risk < FLOOR_RISK_ORDINARY || max_risk > FLOOR_RISK_DESTRUCTIVE)
		return -1;
	for (size_t i = 0; i < b->n_rules; i++)
		if (strcmp(b->rules[i].family, family) == 0) {
			if (max_risk > (int)b->rules[i].max_risk)
				b->rules[i].max_risk = (enum floor_risk)max_risk;
			return 0;
		}
	if (b->n_rules >= AUTOALLOW_RULES_MAX ||
	    (nr = realloc(b->rules, (b->n_rules + 1) * sizeof *nr)) == NULL)
		return -1;
	b->rules = nr;
	memset(&nr[b->n_rules], 0, sizeof nr[b->n_rules]);
	snprintf(nr[b->n_rules].family, sizeof nr[b->n_rules].family, "%s", family);
	nr[b->n_rules].max_risk = (enum floor_risk)max_risk;
	b->n_rules++;
	return 0;
}

int
bridge_add_ask_rule(struct bridge *b, const char *family)
{
	struct autoallow_rule	*nr;

	if (family == NULL || !autoallow_family_valid(family))
		return -1;
	for (size_t i = 0; i < b->n_ask_rules; i++)
		if (strcmp(b->ask_rules[i].family, family) == 0)
			return 0;
	if (b->n_ask_rules >= AUTOALLOW_RULES_MAX ||
	    (nr = realloc(b->ask_rules, (b->n_ask_rules + 1) * sizeof *nr)) == NULL)
		return -1;
	b->ask_rules = nr;
	memset(&nr[b->n_ask_rules], 0, sizeof nr[b->n_ask_rules]);
	snprintf(nr[b->n_ask_rules].family, sizeof nr[b->n_ask_rules].family, "%s", family);
	b->n_ask_rules++;
	return 0;
}

int
bridge_pending(const struct bridge *b)
{
	return b->npending;
}

int
bridge_decide(struct bridge *b, const char *id, int allow, const char *message)
{
	struct bridge_pending	*p;
	cJSON			*ev;

	if (id == NULL)
		return -1;
	TAILQ_FOREACH(p, &b->pending, entry)
		if (strcmp(p->id, id) == 0)
			break;
	if (p == NULL)
		return -1;
	bridge_record_approval(b, p->id, p->tool, allow ? "allow" : "deny", "human",
	    allow ? NULL : message);
	if ((ev = bridge_event(b, "approval_answered")) != NULL) {
		cJSON_AddStringToObject(ev, "id", p->id);
		cJSON_AddStringToObject(ev, "behavior", allow ? "allow" : "deny");
		bridge_emit(b, ev);
	}
	bridge_pending_finish(b, p, allow, message != NULL && *message != '\0' ?
	    message : "denied by the run's owner");
	return 0;
}

void
bridge_expire(struct bridge *b, const char *message, const char *by)
{
	struct bridge_pending	*p;
	cJSON			*ev;

	while ((p = TAILQ_FIRST(&b->pending)) != NULL) {
		bridge_record_approval(b, p->id, p->tool, "deny", by, message);
		if ((ev = bridge_event(b, "approval_timeout")) != NULL) {
			cJSON_AddStringToObject(ev, "id", p->id);
			cJSON_AddStringToObject(ev, "by", by);
			bridge_emit(b, ev);
		}
		bridge_pending_finish(b, p, 0, message);
	}
}

cJSON *
bridge_denials(const struct bridge *b)
{
	return record_list_json(&b->denials);
}

cJSON *
bridge_approvals(const struct bridge *b)
{
	return record_list_json(&b->approvals);
}

void
bridge_free(struct bridge *b)
{
	struct bridge_pending	*p;

	if (b == NULL)
		return;
	while ((p = TAILQ_FIRST(&b->pending)) != NULL) {
		TAILQ_REMOVE(&b->pending, p, entry);
		if (p->req != NULL)
			httpd_set_closecb(b->httpd, p->req, NULL, NULL);
		bridge_pending_free(p);
	}
	httpd_free(b->httpd);
	record_list_free(&b->denials);
	record_list_free(&b->approvals);
	free(b->rules);
	free(b->ask_rules);
	free(b->run_id);
	free(b->token);
	free(b);
}
