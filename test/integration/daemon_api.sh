#!/usr/bin/env bash
# The API's front door: token (401), Host and Origin (403), bounded bodies, JSON errors,
# task validation, the token file's mode, the daemon's flags and cwctl's exit codes.
. "${CW_SRC:?}/test/integration/daemon_lib.bash" || exit 1

# Flags.
"$CW_BIN/clockworkd" --help | grep -q 'usage: clockworkd' || fail "--help"
"$CW_BIN/clockworkd" --version | grep -q '^clockworkd ' || fail "--version"
set +e; "$CW_BIN/clockworkd" --bogus 2>/dev/null; rc=$?; set -e
[ $rc -eq 2 ] || fail "unknown flag exit $rc, want 2"
pass "clockworkd --help, --version, unknown flag exits 2"

# No daemon: exit 4 and one line that says how to start it.
set +e; out=$(cwctl status 2>&1); rc=$?; set -e
[ $rc -eq 4 ] || fail "cwctl status without daemon: exit $rc, want 4"
grep -q "start it with 'clockworkd'" <<<"$out" || fail "no start hint: $out"
[ "$(echo "$out" | wc -l)" -eq 1 ] || fail "more than one line: $out"
pass "cwctl with no daemon exits 4 with one line saying how to start it"

start_daemon
[ "$(stat -c %a "$CLOCKWORK_HOME/api.token")" = 600 ] || fail "token not 0600"
[ "$(wc -c < "$CLOCKWORK_HOME/api.token")" -ge 64 ] || fail "token too short"
[ "$PORT" != 7420 ] || fail "api_port 0 should pick a random port"
grep -q "^$DPID\$" "$CLOCKWORK_HOME/clockworkd.pid" || fail "pid file"
ss -ltnH "sport = :$PORT" | grep -q "127.0.0.1:$PORT" || fail "not bound to 127.0.0.1"
ss -ltnH "sport = :$PORT" | grep -vq "127.0.0.1:$PORT" && fail "bound beyond loopback"
pass "token 0600, random port in clockworkd.port, pid file, loopback only"

# Token.
r=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/api/status")
[ "$r" = 401 ] || fail "missing token: $r"
case "$TOKEN" in *0) wrong="${TOKEN%?}1" ;; *) wrong="${TOKEN%?}0" ;; esac
[ "$wrong" != "$TOKEN" ] || fail "test bug: wrong token equals the token"
r=$(curl -s -w '%{http_code}' -H "Authorization: Bearer $wrong" "http://127.0.0.1:$PORT/api/status")
case "$r" in *'"code":"unauthorized"'*401) ;; *) fail "wrong token: $r";; esac
r=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Basic $TOKEN" "http://127.0.0.1:$PORT/api/status")
[ "$r" = 401 ] || fail "non-bearer auth: $r"
pass "missing, wrong and non-bearer tokens are 401 with a JSON error"

# Host (DNS rebinding).
r=$(api GET /api/status '' -H "Host: evil.example:$PORT")
case "$r" in 403*'"forbidden_host"'*) ;; *) fail "foreign Host: $r";; esac
r=$(api GET /api/status '' -H "Host: 127.0.0.1:1")
case "$r" in 403*) ;; *) fail "Host with another port: $r";; esac
r=$(api GET /api/status '' -H "Host: localhost:$PORT")
case "$r" in 200*) ;; *) fail "localhost Host refused: $r";; esac
pass "a foreign Host is 403; localhost:<port> is accepted"

# Origin on state-changing requests.
body='{"name":"o1","engine":"command","prompt":"true"}'
r=$(api POST /api/tasks "$body" -H 'Origin: http://evil.example')
case "$r" in 403*'"forbidden_origin"'*) ;; *) fail "foreign Origin: $r";; esac
r=$(api POST /api/tasks "$body" -H "Origin: http://127.0.0.1:$((PORT + 1))")
case "$r" in 403*) ;; *) fail "other-port Origin: $r";; esac
[ "$(sql "SELECT count(*) FROM tasks")" = 0 ] || fail "a refused request changed state"
r=$(api POST /api/tasks "$body" -H "Origin: http://127.0.0.1:$PORT")
case "$r" in 201*) ;; *) fail "own Origin refused: $r";; esac
pass "a foreign Origin on POST is 403 and changes nothing; the daemon's own is accepted"

# Bodies and JSON errors.
head -c $((2 * 1024 * 1024)) /dev/zero | tr '\0' 'a' > "$T/big"
r=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H "Authorization: Bearer $TOKEN" \
    --data-binary @"$T/big" "http://127.0.0.1:$PORT/api/tasks")
[ "$r" = 413 ] || fail "2 MiB body: $r"
r=$(api POST /api/tasks '{not json')
case "$r" in 400*'"bad_json"'*) ;; *) fail "bad JSON: $r";; esac
r=$(api GET /api/nope)
case "$r" in 404*'"error":{"code":"not_found"'*) ;; *) fail "unknown path: $r";; esac
r=$(api DELETE /api/status)
case "$r" in 405*) ;; *) fail "wrong method: $r";; esac
r=$(api GET /api/runs/does-not-exist)
case "$r" in 404*) ;; *) fail "unknown run: $r";; esac
kill -0 "$DPID" || fail "daemon died on bad input"
pass "oversized body 413, bad JSON 400, unknown path 404, wrong method 405, daemon alive"

# Task validation: each refusal names its field.
check_invalid() {
	local body=$1 field=$2 r
	r=$(api POST /api/tasks "$body")
	case "$r" in 400*"\"message\":\"$field:"*) ;; *) fail "$body: $r (want field $field)";; esac
}
check_invalid '{"name":"t","engine":"command","prompt":"x","permission_mode":"bypassPermissions"}' permission_mode
check_invalid '{"name":"t","engine":"command","prompt":"x","permission_mode":"default"}' permission_mode
check_invalid '{"name":"t","engine":"command","prompt":"x","permision_mode":"plan"}' permision_mode
check_invalid '{"name":"../x","engine":"command","prompt":"x"}' name
check_invalid '{"name":"t","engine":"command","prompt":""}' prompt
check_invalid '{"name":"t"}' prompt
check_invalid '{"name":"t","prompt":"x","engine":"gpt"}' engine
check_invalid '{"name":"t","engine":"command","prompt":"x","budget_seconds":-1}' budget_seconds
check_invalid '{"name":"t","engine":"command","prompt":"x","budget_turns":1.5}' budget_turns
check_invalid '{"name":"t","engine":"command","prompt":"x","budget_dollars":"2"}' budget_dollars
check_invalid '{"name":"t","engine":"command","prompt":"x","schedule":"61 * * * *"}' schedule
check_invalid '{"name":"t","engine":"command","prompt":"x","schedule":"every day"}' schedule
check_invalid "{\"name\":\"t\",\"prompt\":\"x\",\"repo\":\"$T\"}" repo
check_invalid '{"name":"t","engine":"command","prompt":"x","repo":"relative"}' repo
check_invalid '{"name":"t","engine":"command","prompt":"x","enabled":"yes"}' enabled
[ "$(sql "SELECT count(*) FROM tasks")" = 1 ] || fail "an invalid task was stored"
set +e; out=$(cwctl task add t --engine command --prompt x --mode bypassPermissions 2>&1); rc=$?; set -e
[ $rc -eq 1 ] && grep -q 'permission_mode: must be "plan" or "acceptEdits"' <<<"$out" ||
    fail "cwctl bypass mode: rc=$rc $out"
r=$(api POST /api/tasks '{"name":"o1","engine":"command","prompt":"again"}')
case "$r" in 409*) ;; *) fail "duplicate name: $r";; esac
pass "task validation: 15 bad documents refused naming the field; duplicates 409"

# Task verbs through cwctl.
new_repo "$T/repo"
cwctl task add demo --engine command --prompt 'echo hi' --repo "$T/repo" --mode acceptEdits --seconds 60 \
    --schedule '*/5 * * * *' >/dev/null
cwctl task show demo | grep -q 'permission_mode: acceptEdits' || fail "task show"
cwctl task list --json | grep -q '"name":	"demo"' || fail "task list --json"
cwctl task disable demo >/dev/null
[ "$(sql "SELECT enabled FROM tasks WHERE name='demo'")" = 0 ] || fail "disable"
set +e; out=$(cwctl run start demo 2>&1); rc=$?; set -e
[ $rc -eq 1 ] && grep -q 'disabled' <<<"$out" || fail "run of a disabled task: $rc $out"
cwctl task enable demo >/dev/null
cwctl task rm demo >/dev/null
set +e; cwctl task show demo 2>/dev/null; rc=$?; set -e
[ $rc -eq 1 ] || fail "show removed task: $rc"
set +e; cwctl task frobnicate 2>/dev/null; rc=$?; set -e
[ $rc -eq 2 ] || fail "usage error exit $rc"
pass "cwctl task add/show/list/disable/enable/rm; usage errors exit 2"

# The audit log saw every state change, with the client named.
n=$(sql "SELECT count(*) FROM audit WHERE actor LIKE 'cwctl uid=$(id -u) pid=%' AND action IN ('task.add','task.update','task.remove')")
[ "$n" -ge 4 ] || fail "audit entries: $n"
cwctl journal --audit | grep -q 'task.remove' || fail "cwctl journal --audit"
pass "audit log records state-changing calls"

# SIGHUP reloads the configuration; a bad file keeps the old one.
printf 'api_port: 0\nmax_concurrent_runs: 3\n' > "$CLOCKWORK_HOME/config.yaml"
kill -HUP "$DPID"
wait_until 5 "reload" sh -c "\"$CW_BIN/cwctl\" status --json | grep -q '\"max_concurrent_runs\":	3'" ||
    fail "SIGHUP did not reload"
printf 'api_port: 0\nmax_concurrent_runs: lots\n' > "$CLOCKWORK_HOME/config.yaml"
kill -HUP "$DPID"
wait_until 5 "reload error logged" grep -q 'keeping the running configuration' "$T/daemon.out" ||
    fail "bad config not reported"
cwctl status --json | grep -q '"max_concurrent_runs":	3' || fail "bad reload changed config"
pass "SIGHUP reloads; a bad file is reported and ignored"

# A second daemon on the same home is refused.
set +e; "$CW_BIN/clockworkd" --foreground >"$T/second.out" 2>&1; rc=$?; set -e
[ $rc -eq 1 ] && grep -q 'already running' "$T/second.out" || fail "second daemon: $rc"
pass "a second clockworkd for the same home is refused"

# The unix socket: 0600 in the 0700 home, no token needed, the peer named by the kernel.
[ -S "$CLOCKWORK_HOME/clockworkd.sock" ] || fail "no socket"
[ "$(stat -c %a "$CLOCKWORK_HOME/clockworkd.sock")" = 600 ] || fail "socket mode"
[ "$(stat -c %a "$CLOCKWORK_HOME")" = 700 ] || fail "home mode"
r=$(api_unix GET /api/status)
[ "${r%% *}" = 200 ] || fail "status over the socket: $r"
r=$(api_unix POST /api/tasks '{"name":"viasock","engine":"command","prompt":"true"}' -H 'X-Clockwork-Client: script')
[ "${r%% *}" = 201 ] || fail "task add over the socket: $r"
[ "$(sql "SELECT actor FROM audit WHERE action='task.add' AND target='viasock'")" = \
    "script uid=$(id -u) pid=$(sql "SELECT substr(actor, instr(actor, 'pid=') + 4) FROM audit WHERE target='viasock'")" ] ||
    fail "actor: $(sql "SELECT actor FROM audit WHERE target='viasock'")"
r=$(api_unix GET /inbox/ )
[ "${r%% *}" = 404 ] || fail "the Inbox over the socket: $r"
pass "the unix socket: 0600 in a 0700 home, no token, the actor named by uid and pid"

# A daemon killed outright leaves its socket behind: the next one replaces it.
kill -KILL "$DPID"; wait "$DPID" 2>/dev/null || true; DPID=
[ -S "$CLOCKWORK_HOME/clockworkd.sock" ] || fail "the killed daemon's socket is gone"
set +e; cwctl status >/dev/null 2>&1; rc=$?; set -e
[ $rc -eq 4 ] || fail "cwctl against a stale socket: exit $rc, want 4"
rm -f "$CLOCKWORK_HOME/clockworkd.port"
printf 'api_port: 0\n' > "$CLOCKWORK_HOME/config.yaml"
chmod 755 "$CLOCKWORK_HOME"
start_daemon
[ "$(stat -c %a "$CLOCKWORK_HOME")" = 700 ] || fail "the home was left open"
grep -q 'was open to group or others' "$CLOCKWORK_HOME/clockworkd.log" || fail "no warning about the home"
cwctl status >/dev/null || fail "no answer after replacing the stale socket"
pass "a stale socket is replaced; a home open to others is closed to 0700, loudly"

# SIGTERM: clean exit, port and pid files gone.
printf 'api_port: 0\n' > "$CLOCKWORK_HOME/config.yaml"
kill -TERM "$DPID"; wait "$DPID"; rc=$?; DPID=
[ $rc -eq 0 ] || fail "SIGTERM exit $rc"
[ ! -e "$CLOCKWORK_HOME/clockworkd.port" ] || fail "port file left behind"
[ ! -e "$CLOCKWORK_HOME/clockworkd.sock" ] || fail "socket left behind"
pass "SIGTERM exits 0 and removes clockworkd.port and clockworkd.sock"

# A token file readable by others: refused, naming the file.
chmod 644 "$CLOCKWORK_HOME/api.token"
set +e; "$CW_BIN/clockworkd" --foreground >"$T/perm.out" 2>&1; rc=$?; set -e
[ $rc -eq 1 ] || fail "group-readable token: exit $rc"
grep -q "$CLOCKWORK_HOME/api.token is accessible by group or others" "$T/perm.out" ||
    fail "message does not name the file: $(cat "$T/perm.out")"
[ "$(stat -c %a "$CLOCKWORK_HOME/api.token")" = 644 ] || fail "token mode was changed silently"
pass "a token file readable by others refuses the start and names the file"

echo "daemon_api: $PASSED passed"
