/*
 * The wire formats between Clockwork's processes, in one place, with a version.
 *
 * The daemon decodes the runner's lines once, into struct wiremsg (common/wiremsg.h),
 * where each field's shape and bounds are checked.
 *
 * daemon <-> cw-runner: JSON lines over the runner's stdin (down) and stdout (up), and
 * after a daemon restart over the runner's control socket <home>/runs/<run_id>.sock,
 * both ways (runner/uplink.c): on attach the runner replays what it queued while no
 * daemon was there, sends {"type":"hello","reattached":true,...} and announces every
 * held approval_request again (the daemon matches them to the ones it stored).
 * Every line is one JSON object with "v" (CW_WIRE_VERSION) and "type". Lines longer
 * than CW_WIRE_MAX_LINE are a protocol error that ends the run.
 *
 *   down  {"v":1,"type":"run", ...run spec...}          first line, exactly once
 *         {"v":1,"type":"decision","id":"<approval id>","behavior":"allow"|"deny","message":"...",
 *          "by":"<who answered>"}
 *         {"v":1,"type":"stop","reason":"..."}
 *   up    {"v":1,"type":"hello","pid":N,"pgid":N}
 *         {"v":1,"type":"event","kind":"...", ...}       floor hits, sandbox notes, ...
 *         {"v":1,"type":"approval_request","id":"...","tool":"...","input":{...},"deadline":N,
 *          "risk":"ordinary"|"outside_worktree"|"fetch_exec"|"destructive","risk_rule":"..."}
 *         (risk: the floor's evaluation of the call, floor.h; absent means ordinary)
 *         {"v":1,"type":"usage","dollars":D,"turns":N}
 *         {"v":1,"type":"log","stream":"stdout"|"stderr","text":"..."}
 *         {"v":1,"type":"report", ...final report...}    last line, exactly once
 *
 * cw-floor-hook -> bridge: one HTTP/1.1 POST of the PreToolUse JSON to
 * http://127.0.0.1:<port>/floor with "X-Clockwork-Run: <run token>". The answer is
 * {"decision":"allow"|"deny","reason":"..."}; anything else is a deny.
 */
#ifndef CW_WIRE_H
#define CW_WIRE_H

#define CW_WIRE_VERSION		1
#define CW_WIRE_MAX_LINE	(8 * 1024 * 1024)

#define CW_HOOK_MAX_INPUT	(1024 * 1024)	/* bytes of stdin the hook accepts */
#define CW_HOOK_TIMEOUT_MS	5000		/* connect + answer, whole round trip */
#define CW_HOOK_SETTINGS_TIMEOUT_S 30		/* the hook timeout written into --settings */
#define CW_HOOK_RUN_HEADER	"X-Clockwork-Run"

#define CW_BRIDGE_MAX_BODY	(4 * 1024 * 1024)
#define CW_BRIDGE_MAX_PENDING	16

/*
 * The run message (daemon -> runner, first line), field by field. Unknown fields are
 * ignored; a missing or ill-shaped required field refuses the run with a report.
 *   run_id           string, [A-Za-z0-9._-], 1..CW_RUN_ID_MAX bytes       required
 *   task             string                                               optional
 *   engine           "command" | "claude"                                 required
 *   prompt           string (command: exported to the engine as CW_PROMPT) claude: required
 *   argv             array of strings (engine "command" only)             command: required
 *   workdir          absolute path: the worktree or scratch directory     required
 *   context          array of absolute paths, read-only context roots     optional
 *   git              {"branch":"clockwork/<task>/<run>","base":"<commit id>",
 *                    "objects":"<the user's object store>"}: a repository run; the
 *                    workdir is the run's own repository borrowing objects read-only;
 *                    at the end the runner seals it (runner/seal.c)         optional
 *   permission_mode  "plan" | "acceptEdits" (nothing else exists)         claude: required
 *   budget           {"dollars":D,"turns":N,"seconds":N,"wait":N,"max_dollars":D}
 *                    seconds required; wait (0..604800, default 0): a budget
 *                    reached holds the run and asks (an approval_request with tool
 *                    "budget", id "budget-N", input {question, budget, hold, spent,
 *                    limits, extend, max_dollars, beyond_ceiling, extendable,
 *                    wait_seconds}); allow extends, deny or no answer in wait s ends
 *                    it; max_dollars: the hard ceiling (0 none), >= dollars
 *   limits           {"processes":N,"memory_bytes":N}: held by the run's cgroup, else by
 *                    rlimits in its user namespace (0 or absent: none); a run that hits
 *                    one ends with limit_pids/limit_memory; one no layer can hold
 *                    refuses the run unless config.yaml's limits.allow_unenforced
 *                                                                         optional
 *   key              string: the provider key for engines that need one; it travels
 *                    only here, never through the runner's environment or argv
 *   env              {"NAME":"value",...} extra engine variables (e.g. ANTHROPIC_BASE_URL);
 *                    names matching CW_RUN_ENV_DENY are refused
 *   state_dir        absolute path of the run's private state (settings, MCP config);
 *                    default $CLOCKWORK_HOME/runs/<run_id>; never inside workdir
 *   hook_path        absolute path of cw-floor-hook (default: beside cw-runner)
 *   log_max_bytes    the run's log cap: the runner keeps to it when it writes the log
 *                    itself, while no daemon is attached                  optional
 *   base_url         the engine's provider URL (engines.<name>.base_url); its host:port
 *                    is an egress rule for the run                         optional
 *   network          {"allow":["host:port",...],"ask":bool}: the task's own egress
 *                    rules and whether an unknown host becomes an approval (tool
 *                    "network"); the global and engine rules come from config.yaml
 *                                                                         optional
 *   (engine binaries are found through the runner's PATH, where spec_build() finds
 *   them to grant their install)
 *
 * decision: "id" names an approval_request; anything else (unknown id, already answered)
 * changes nothing and is reported as an event of kind "decision_unknown_id".
 *
 * The report (runner -> daemon, last line):
 *   run_id, status ("succeeded"|"failed"|"stopped"|"refused"), exit_reason
 *   ("completed"|"failed"|"budget_seconds"|"budget_turns"|"budget_dollars"|"stopped"|
 *   "limit_memory"|"limit_pids"),
 *   exit_code / signal of the engine (absent when it never started), error (one line,
 *   on refused/failed), sandboxed, not_enforced [..] (limits not enforced among them),
 *   landlock_abi, limits {"mechanism":"cgroup v2"|"cgroup v1"|"rlimit"|"none",
 *   "processes","memory_bytes" (what a cgroup enforced, 0 for none),"layers":
 *   {"processes":{"max":N,"by":"cgroup v2"|"cgroup v1"|"rlimit"|"none","bounds":
 *   "<what that layer holds>"},"memory":{...}} (each limit asked for)}, tmpdir_left (why the run's
 *   TMPDIR was kept: a process of the run survived),
 *   spent {"dollars","turns","seconds"}, seal {"tip","bundle","committed"} or
 *   {"error"} (repository runs that started: the bundle is <workdir>/.git/
 *   clockwork-run.bundle, untrusted input to the daemon's import), denials {"count","list":[{rule,reason,command[,command_truncated,
 *   command_bytes,command_sha256]}],"omitted"}, approvals {"count","list":[{id,tool,
 *   behavior,by,message}],"omitted"} ("omitted": records counted but not listed,
 *   common/record.h; "report_trimmed": true when the lists were left out to fit) where by is
 *   "human" | "timeout" | "floor" | "limit" | "stopped" | "malformed" | "client_gone".
 *   cw-runner run exits 0 when the run completed, 1 when it failed, was stopped or hit
 *   network "allowlist"|"open", and with the egress proxy network_egress
 *   {"connections","allowed","denied","bytes_up","bytes_down","denials":{"count","list":
 *   [{host,port,method,addr,verdict,rule,reason,bytes_up,bytes_down,ms}],"omitted"}}.
 *   Events of the egress proxy: kind "net" (a connection ended: host, port, method, addr,
 *   verdict "allowed", rule, reason when it failed, bytes_up, bytes_down, ms),
 *   "net_deny" (refused: the same with verdict "denied" and the reason), and
 *   "network_policy" (the run's rules, at the start), "network_open" (network: open).
 *   a budget, 2 when the run message was unusable, 3 when the sandbox or the floor
 *   hook could not be put in place (nothing ran).
 *
 * Budget pauses: events budget_paused {budget, hold ("cgroup freezer"|"SIGSTOP"), id,
 * state}, budget_resumed {budget, hold, answer ("extend"|"stop"|"timeout"|"stopped"),
 * by, id, state} and, after a re-attach, budget_state {state}, where state is
 * {paused, dollars, turns, seconds (the budgets now), max_dollars, paused_seconds,
 * backstop_seconds (how long from now the run may still take)}; the report's budget
 * {dollars, turns, seconds, wait, max_dollars, paused_seconds, pauses [{budget, hold,
 * dollars, turns, answer, by, new_*}]} when wait > 0.
 *
 * Event kinds the runner emits: sandbox_disabled, engine_started, floor_deny (a floor.*
 * rule), rule_deny (a configured or starter rule, config.<id>),
 * approval_answered, approval_timeout, approval_limit, approval_too_large, message_dropped, approval_abandoned (the engine
 * hung up on a held approval), decision_unknown_id, malformed_line, budget_exceeded,
 * limit_exceeded {"limit":"processes"|"memory","reason","max"},
 * stop_requested, daemon_gone ({"run_goes_on":bool}: with a control socket the run
 * goes on). Every event carries run_id. A log line's "stream" is
 * "stdout" or "stderr" for the engine's output and "runner" for the runner's own
 * notes (the CW_SANDBOX=off warning among them).
 */
#define CW_RUN_ID_MAX		64

/*
 * Bounds on what a run can make others keep (SPEC R2, docs/SECURITY.md). A run can
 * trigger any number of denials and approval records, and each may carry up to
 * CW_BRIDGE_MAX_BODY of its own text, so records keep a cut command with a hash of the
 * whole (common/record.h), lists keep the first CW_RECORD_MAX_LIST records or
 * CW_RECORD_MAX_BYTES of them with a count of the rest, and the final report is built
 * to stay under CW_RUN_REPORT_MAX, well inside CW_WIRE_MAX_LINE: it is never dropped.
 */
#define CW_RECORD_MAX_COMMAND	4096		/* bytes of a command kept in a record */
#define CW_RECORD_MAX_TEXT	1024		/* other strings in a record (messages) */
#define CW_RECORD_MAX_LIST	256		/* records kept per list per run */
#define CW_RECORD_MAX_BYTES	(1024 * 1024)	/* printed bytes kept per list per run */
#define CW_RUN_REPORT_MAX	(CW_WIRE_MAX_LINE / 2)
#define CW_JOURNAL_MAX_PER_RUN	1000		/* journal entries per run, then one "journal_capped" */
#define CW_JOURNAL_MAX_DATA	(16 * 1024)	/* an entry's data; larger is kept as a summary */
#define CW_RUN_EVENTS_MAX	5000		/* run_events rows per run, then one "events_capped" */
#define CW_RUN_EVENT_MAX_DATA	(64 * 1024)	/* a run_events row; larger is kept as a summary */
#define CW_RUN_LOG_MAX_LINE	(16 * 1024)	/* engine output per log line; longer is cut */
#define CW_RUN_ENV_DENY		"LD_*, HOME, PATH, TMPDIR, CW_*, MCP_TOOL_TIMEOUT"
#define CW_RUN_KILL_GRACE_MS	3000		/* SIGTERM to SIGKILL for the engine's group */

/* MCP protocol versions the bridge speaks, newest first. */
#define CW_MCP_VERSIONS		{ "2025-06-18", "2025-03-26", "2024-11-05" }

#endif
