/*
 * The wire formats between Clockwork's processes, in one place, with a version.
 *
 * daemon <-> cw-runner: JSON lines over the runner's stdin (down) and stdout (up).
 * Every line is one JSON object with "v" (CW_WIRE_VERSION) and "type". Lines longer
 * than CW_WIRE_MAX_LINE are a protocol error that ends the run.
 *
 *   down  {"v":1,"type":"run", ...run spec...}          first line, exactly once
 *         {"v":1,"type":"decision","id":"<approval id>","behavior":"allow"|"deny","message":"..."}
 *         {"v":1,"type":"stop","reason":"..."}
 *   up    {"v":1,"type":"hello","pid":N,"pgid":N}
 *         {"v":1,"type":"event","kind":"...", ...}       floor hits, sandbox notes, ...
 *         {"v":1,"type":"approval_request","id":"...","tool":"...","input":{...},"deadline":N}
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

#endif
