#!/usr/bin/env bash
# clockworkd refuses a peer on its unix socket whose SO_PEERCRED pid lives in a PID
# namespace other than its own (issue 22, item 3): the second layer behind the run's
# view, which keeps the socket out of reach by path. Tested on its own here:
#  1. cwctl (same PID namespace) is served: the control.
#  2. a process in another PID namespace (`unshare --user --pid --fork` as a normal
#     user, `unshare --pid --fork` as root: same uid, so only the namespace differs)
#     calls GET /api/tasks and POST /api/tasks: no answer, no task added, one
#     refusal logged per connection.
#  3. a peer the daemon cannot see at all (the daemon in a PID namespace of its own,
#     the client outside it: SO_PEERCRED says pid 0): refused.
#  4. the scenario of the issue: a live run (a command task started through cwctl),
#     clockworkd stopped and started again, then from inside the still-running run 31
#     connect() attempts to the daemon's socket path, each sending a request: none is
#     answered by the API.
# The homes are not under /tmp (the run's mount view covers /tmp: a socket there would
# vanish for the run by path luck and prove nothing).
export TMPDIR=${CW_TEST_TMP:-${CW_BUILD:?}}
. "${CW_SRC:?}/test/integration/daemon_lib.bash" || exit 1
SOCK=$CLOCKWORK_HOME/clockworkd.sock
if [ "$(id -u)" = 0 ]; then OTHERNS=(unshare --pid --fork); else OTHERNS=(unshare --user --pid --fork); fi
"${OTHERNS[@]}" true 2>/dev/null || { echo "SKIP: ${OTHERNS[*]} does not work here"; exit 77; }
# A row that fails says so and the script goes on, so one run shows every row.
FAILED=0
bad() { echo "FAIL: $*" >&2; FAILED=$((FAILED + 1)); }
ROWF=0
row_done() { if [ "$FAILED" = "$ROWF" ]; then pass "$1"; else echo "not ok - $1"; fi; ROWF=$FAILED; }
ntasks() { sql "SELECT count(*) FROM tasks"; }
refusals() { grep -c 'in another PID namespace' "$T/daemon.out" || true; }

start_daemon
cwctl task add seen --engine command --prompt 'true' >/dev/null || fail "control: cwctl task add"
[ "$(cwctl task list | grep -c seen)" = 1 ] || fail "control: cwctl task list"
pass "control: cwctl in the daemon's PID namespace lists and adds tasks"

# 2. The attack from another PID namespace, same uid.
before=$(ntasks); r0=$(refusals)
out=$("${OTHERNS[@]}" curl -s -w ' http=%{http_code}' --unix-socket "$SOCK" http://localhost/api/tasks 2>&1 || true)
echo "GET /api/tasks from ${OTHERNS[*]}: $out"
[[ $out == *http=000* && $out != *seen* ]] || bad "a peer in another PID namespace read the tasks: $out"
out=$("${OTHERNS[@]}" curl -s -w ' http=%{http_code}' --unix-socket "$SOCK" -X POST \
    -H 'Content-Type: application/json' --data-binary '{"name":"planted","prompt":"id"}' \
    http://localhost/api/tasks 2>&1 || true)
echo "POST /api/tasks from ${OTHERNS[*]}: $out"
[[ $out == *http=000* ]] || bad "a peer in another PID namespace was answered: $out"
[ "$(ntasks)" = "$before" ] && ! cwctl task list | grep -q planted ||
    bad "a peer in another PID namespace added a task"
wait_until 10 "two refusals logged" sh -c "[ \$(grep -c 'in another PID namespace' '$T/daemon.out') -ge $((r0 + 2)) ]" ||
    bad "the refusals were not logged"
[ "$(refusals)" = $((r0 + 2)) ] || bad "not one refusal line per connection: $(refusals) - $r0"
[ "$(sql "SELECT count(*) FROM audit WHERE action='api.peer_refused'")" -ge 2 ] 2>/dev/null ||
    bad "the refusals were not journaled in the audit log"
grep 'in another PID namespace' "$T/daemon.out" | tail -n 2
cwctl task list | grep -q seen || fail "cwctl no longer served after the refusals"
row_done "a peer in another PID namespace (${OTHERNS[*]}): not answered, nothing added, each refusal logged and audited"

# 3. A peer the daemon cannot see: the daemon in a PID namespace of its own.
stop_daemon
if [ "$(id -u)" = 0 ]; then INNER=(unshare --pid --fork --mount --mount-proc); else
	INNER=(unshare --user --map-current-user --pid --fork --mount --mount-proc); fi
"${INNER[@]}" "$CW_BIN/clockworkd" --foreground >>"$T/daemon.out" 2>&1 &
DPID=$!
wait_until 15 "clockworkd (own PID namespace) to listen" test -s "$CLOCKWORK_HOME/clockworkd.port" ||
    fail "clockworkd in its own PID namespace did not start"
r0=$(refusals)
out=$(curl -s -w ' http=%{http_code}' --unix-socket "$SOCK" http://localhost/api/tasks 2>&1 || true)
echo "GET /api/tasks from outside the daemon's PID namespace: $out"
[[ $out == *http=000* && $out != *seen* ]] || bad "an invisible peer (pid 0) was answered: $out"
wait_until 10 "refusal logged" sh -c "[ \$(grep -c 'in another PID namespace' '$T/daemon.out') -gt $r0 ]" ||
    bad "the refusal of pid 0 was not logged"
grep 'in another PID namespace' "$T/daemon.out" | tail -n 1 | grep -q 'pid 0' ||
    bad "the refusal does not name pid 0: $(tail -n 3 "$T/daemon.out")"
# unshare does not pass signals on: TERM the daemon itself, its child.
IPID=$(ps -o pid= --ppid "$DPID" | tr -d ' ')
[ -n "$IPID" ] && kill -TERM "$IPID"
wait_until 20 "daemon exit" not_alive "$DPID" || { kill -KILL "$IPID" "$DPID"; fail "clockworkd in its own PID namespace did not stop"; }
wait "$DPID" 2>/dev/null || true; DPID=
rm -f "$CLOCKWORK_HOME/clockworkd.port"
row_done "a peer the daemon cannot see (SO_PEERCRED pid 0): refused"

# 4. A live run, the daemon restarted, then 31 tries from inside the run.
start_daemon
PROBE="import socket
ok = answered = 0
for i in range(31):
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect('$SOCK'); ok += 1
        s.sendall(b'GET /api/tasks HTTP/1.1\\r\\nHost: localhost\\r\\nConnection: close\\r\\n\\r\\n')
        s.settimeout(10)
        if s.recv(64).startswith(b'HTTP/'): answered += 1
    except OSError:
        pass
    s.close()
print('tries 31 connected %d answered %d' % (ok, answered))"
printf '%s\n' "$PROBE" > "$T/probe.py"
chmod 644 "$T/probe.py"
# The command waits for 'go' in its worktree, tries, records, and stays alive.
cwctl task add live --engine command --prompt "echo \$\$ > sh.pid; while [ ! -e go ]; do sleep 0.05; done; python3 -c \"\$(cat probe.src)\" > tries.out 2>&1; sleep 300" \
    --seconds 600 >/dev/null || fail "task add live"
R=$(cwctl run start live) || fail "run start"
wait_until 20 "run running" run_is "$R" running || fail "the run did not start: $(run_status "$R")"
W=$(run_field "$R" worktree)
cp "$T/probe.py" "$W/probe.src"
wait_until 20 "command started" test -s "$W/sh.pid" || fail "the command did not start"
stop_daemon
start_daemon
[ "$(run_status "$R")" = running ] || fail "the run did not survive the restart: $(run_status "$R")"
r0=$(refusals)
touch "$W/go"
wait_until 120 "the run's tries" grep -q '^tries 31' "$W/tries.out" || fail "no result from the run: $(cat "$W/tries.out" 2>&1)"
res=$(cat "$W/tries.out")
echo "from inside the run after the restart: $res (refusals logged: $(( $(refusals) - r0 )))"
grep 'in another PID namespace' "$T/daemon.out" | tail -n 1
[[ $res == *"answered 0"* ]] || bad "the run reached the API after a restart: $res"
cwctl run stop "$R" >/dev/null || fail "run stop after the restart"
wait_until 30 "run ended" run_ended "$R" || fail "the run did not end"
row_done "a live run across a daemon restart: 31 tries, 0 answered by the API ($res)"
[ "$FAILED" = 0 ] || fail "$FAILED row(s) failed"
echo "daemon_peer: $PASSED passed"
