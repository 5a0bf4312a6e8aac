#!/usr/bin/env bash
# cwctl's waiting verbs read GET /api/events (issue 24) instead of polling:
#  1. run logs -f (and --raw; a command run's transcript is its log) shows a run's lines as they come and ends
#     when the run ends; between two of the stream's heartbeats (15 s apart) the
#     follower sends the daemon no request at all (strace: no connect), where the old
#     loop asked every 150 ms.
#  2. run start --wait returns when the run ends even when it ends within milliseconds
#     (it subscribes before it reads the run's state): 20 runs of `true` in a row.
#  3. approvals --watch prints an approval already pending, a new request and each
#     answer, one line each; --json prints one event object a line.
#  4. A daemon restart (SIGTERM, then SIGKILL) in the middle of run logs -f: the
#     follower says it lost the stream, reconnects with Last-Event-ID, shows the lines
#     the run wrote after the restart and ends with the run; with no daemon coming
#     back it gives up after its bound (30 s) with exit 4 and says so.
. "${CW_SRC:?}/test/integration/daemon_lib.bash" || exit 1
command -v perl >/dev/null || fail "perl is needed for the fake runner"
command -v strace >/dev/null || fail "strace is needed (scripts/setup installs it)"
mkdir -p "$T/pids"

start_daemon --runner "$FAKE_RUNNER" --stop-grace 0.5

# 1. logs -f, the transcript and the raw log, as the run writes.
cwctl task add slow --engine command --prompt 'echo first; while [ ! -e go ]; do sleep 0.05; done; echo second' >/dev/null
id=$(cwctl run start slow)
wait_until 10 "running" run_is "$id" running || fail "slow run did not start"
# LeakSanitizer cannot run under ptrace: the traced follower goes without it (the
# --raw one beside it keeps it).
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
    strace -f -qq -e trace=connect -e signal=none -o "$T/strace.connect" \
    "$CW_BIN/cwctl" run logs -f "$id" > "$T/follow" 2> "$T/follow.err" &
fpid=$!
"$CW_BIN/cwctl" run logs -f --raw "$id" > "$T/follow.raw" 2>&1 &
rpid=$!
wait_until 10 "first line followed" grep -q first "$T/follow" || fail "logs -f shows nothing: $(cat "$T/follow.err")"
wait_until 10 "first raw line followed" grep -q first "$T/follow.raw" || fail "logs -f --raw shows nothing"
kill -0 $fpid && kill -0 $rpid || fail "logs -f ended early"
# The window: from the first heartbeat the follower reads to the second (the daemon's
# own 15 s period, one timer for all streams). strace -e read would slow the follower;
# the heartbeat is seen by a stream of our own.
curl -sN --unix-socket "$CLOCKWORK_HOME/clockworkd.sock" "http://localhost/api/events?types=task" > "$T/hb" &
echo $! > "$T/pids/hb"
wait_until 40 "a heartbeat" grep -q '^event: heartbeat' "$T/hb" || fail "no heartbeat on the stream"
c1=$(grep -c 'connect(' "$T/strace.connect" || true)
wait_until 40 "a second heartbeat" sh -c "[ \$(grep -c '^event: heartbeat' '$T/hb') -ge 2 ]" ||
    fail "no second heartbeat"
c2=$(grep -c 'connect(' "$T/strace.connect" || true)
kill "$(cat "$T/pids/hb")" 2>/dev/null || true
[ "$c1" = "$c2" ] || fail "logs -f made $((c2 - c1)) connections while the run was idle (it polls): $(tail -n 5 "$T/strace.connect")"
touch "$(run_field "$id" worktree)/go"
wait_until 10 "follower exit" not_alive $fpid || fail "logs -f did not end with the run"
wait $fpid || fail "logs -f exit status: $(cat "$T/follow.err")"
wait_until 10 "raw follower exit" not_alive $rpid || fail "logs -f --raw did not end with the run"
wait $rpid || fail "logs -f --raw exit status"
grep -q second "$T/follow" && grep -q second "$T/follow.raw" || fail "follow output: $(cat "$T/follow")"
grep -q 'run ended: completed' "$T/follow.raw" || fail "raw follow output: $(cat "$T/follow.raw")"
[ ! -s "$T/follow.err" ] || fail "logs -f said: $(cat "$T/follow.err")"
pass "run logs -f (and --raw) shows the lines as they come, ends with the run, and asks nothing between two heartbeats ($c1 connections in all)"

# 2. --wait on runs that end at once: subscribed before the first read, none is missed.
cwctl task add quick --engine command --prompt 'true' >/dev/null
for i in $(seq 1 20); do
	rc=0
	timeout 60 "$CW_BIN/cwctl" run start quick --wait > "$T/quick.out" 2> "$T/quick.err" || rc=$?
	[ $rc -eq 0 ] || fail "run start --wait #$i: exit $rc: $(cat "$T/quick.out" "$T/quick.err")"
	qid=$(sed -n 's/^run: *//p' "$T/quick.out")
	[ -n "$qid" ] && run_is "$qid" completed || fail "run start --wait #$i printed: $(cat "$T/quick.out")"
	grep -q '^status: *completed' "$T/quick.out" || fail "--wait output #$i: $(cat "$T/quick.out")"
done
rc=0; timeout 60 "$CW_BIN/cwctl" run start quick --wait --json > "$T/quick.json" || rc=$?
[ $rc -eq 0 ] && grep -q '"status":	"completed"' "$T/quick.json" || fail "--wait --json: $rc $(cat "$T/quick.json")"
cwctl task add bad --engine command --prompt 'exit 7' >/dev/null
rc=0; timeout 60 "$CW_BIN/cwctl" run start bad --wait > "$T/bad.out" 2>&1 || rc=$?
[ $rc -eq 1 ] && grep -q '^status: *failed' "$T/bad.out" || fail "--wait on a failing run: exit $rc: $(cat "$T/bad.out")"
pass "run start --wait returns when the run ends, also within milliseconds (20 in a row; --json; a failed run exits 1)"

# 3. approvals --watch: what was pending, a new request, each answer.
cwctl task add ask --engine command --prompt 'echo "decision=$DECISION" #approval' >/dev/null
first=$(cwctl run start ask)
wait_until 10 "approval pending" sh -c "sqlite3 '$CLOCKWORK_HOME/clockwork.db' \"SELECT id FROM approvals WHERE run_id='$first'\" | grep -q ." ||
    fail "no first approval"
a1=$(sql "SELECT id FROM approvals WHERE run_id='$first'")
"$CW_BIN/cwctl" approvals --watch > "$T/watch" 2> "$T/watch.err" &
wpid=$!; echo $wpid > "$T/pids/watch"
"$CW_BIN/cwctl" approvals --watch --json > "$T/watch.json" 2>&1 &
jpid=$!; echo $jpid > "$T/pids/watchjson"
wait_until 10 "the pending approval listed" grep -q "^pending  *$a1  task ask  run $first  \[ordinary\] Bash: rm -rf build" "$T/watch" ||
    fail "watch did not show the pending approval: $(cat "$T/watch" "$T/watch.err")"
wait_until 10 "json watch started" grep -q "\"approval\":\"$a1\"" "$T/watch.json" || fail "json watch: $(cat "$T/watch.json")"
cwctl approve "$a1" >/dev/null || fail "approve $a1"
wait_until 10 "the answer shown" grep -q "^allowed  *$a1  task ask  run $first  by cwctl uid=$(id -u)" "$T/watch" ||
    fail "watch did not show the answer: $(cat "$T/watch")"
second=$(cwctl run start ask)
wait_until 10 "the new request shown" grep -q "^pending .* run $second  \[ordinary\] Bash: rm -rf build" "$T/watch" ||
    fail "watch did not show the new request: $(cat "$T/watch")"
a2=$(sql "SELECT id FROM approvals WHERE run_id='$second'")
cwctl deny "$a2" --message 'not today' >/dev/null || fail "deny $a2"
wait_until 10 "the denial shown" grep -q "^denied  *$a2  task ask  run $second  by cwctl uid=[0-9]* pid=[0-9]*: not today" "$T/watch" ||
    fail "watch did not show the denial: $(cat "$T/watch")"
wait_until 10 "json: the denial" grep -q "\"state\":\"denied\"" "$T/watch.json" || fail "json watch: $(cat "$T/watch.json")"
[ "$(wc -l < "$T/watch")" = 4 ] || fail "watch printed other lines: $(cat "$T/watch")"
[ "$(wc -l < "$T/watch.json")" = 4 ] || fail "json watch lines: $(cat "$T/watch.json")"
python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' "$T/watch.json" ||
    fail "json watch: not one object a line: $(cat "$T/watch.json")"
grep -q "\"type\":\"approval\".*\"run\":\"$second\".*\"state\":\"pending\"" "$T/watch.json" || fail "json watch: no request of $second: $(cat "$T/watch.json")"
kill -0 $wpid || fail "approvals --watch ended: $(cat "$T/watch.err")"
kill $wpid $jpid; wait $wpid $jpid 2>/dev/null || true
set +e; cwctl approvals --watch --task ask --run "$first" >/dev/null 2>&1; rc=$?; set -e
[ $rc -eq 2 ] || fail "--task with --run: exit $rc, want 2"
pass "approvals --watch prints what was pending, each new request and each answer, one line each (--json: one event a line)"

# 4. A daemon restart under logs -f (the real cw-runner: runs outlive the daemon).
stop_daemon
start_daemon --stop-grace 1
new_repo "$T/repo"
cwctl task add edit --engine command --repo "$T/repo" --mode acceptEdits --seconds 120 --prompt \
    'echo before; while [ ! -e .git/go1 ]; do sleep 0.05; done; echo middle; while [ ! -e .git/go2 ]; do sleep 0.05; done; echo after' >/dev/null
id=$(cwctl run start edit)
wait_until 20 "run running" run_is "$id" running || fail "run did not start"
echo "$(run_field "$id" runner_pid)" > "$T/pids/r1"
wt=$(run_field "$id" worktree)
"$CW_BIN/cwctl" run logs -f --raw "$id" > "$T/r.out" 2> "$T/r.err" &
fpid=$!; echo $fpid > "$T/pids/f"
wait_until 20 "before followed" grep -q before "$T/r.out" || fail "no first line: $(cat "$T/r.err")"
kill -TERM "$DPID"; wait "$DPID" || true; DPID=
wait_until 10 "the follower noticed" grep -q 'lost the event stream from clockworkd' "$T/r.err" ||
    fail "the follower said nothing: $(cat "$T/r.err")"
kill -0 $fpid || fail "logs -f ended with the daemon: $(cat "$T/r.err")"
touch "$wt/.git/go1"		# written while no daemon is there
rm -f "$CLOCKWORK_HOME/clockworkd.port"
start_daemon --stop-grace 1
wait_until 30 "reconnected" grep -q 'reconnected to clockworkd' "$T/r.err" || fail "no reconnect: $(cat "$T/r.err")"
wait_until 20 "middle followed" grep -q middle "$T/r.out" || fail "the line written while away is missing: $(cat "$T/r.out")"
# The same under SIGKILL (no orderly end of the stream).
kill -KILL "$DPID"; wait "$DPID" 2>/dev/null || true; DPID=
rm -f "$CLOCKWORK_HOME/clockworkd.port"
wait_until 10 "the follower noticed the kill" sh -c "[ \$(grep -c 'lost the event stream' '$T/r.err') -ge 2 ]" ||
    fail "the follower did not notice the kill: $(cat "$T/r.err")"
start_daemon --stop-grace 1
wait_until 30 "reconnected again" sh -c "[ \$(grep -c 'reconnected to clockworkd' '$T/r.err') -ge 2 ]" || fail "no second reconnect: $(cat "$T/r.err")"
touch "$wt/.git/go2"
wait_until 30 "follower exit" not_alive $fpid || fail "logs -f did not end with the run: $(cat "$T/r.err")"
wait $fpid || fail "logs -f exit status after restarts: $(cat "$T/r.err")"
[ "$(grep -c '^before$' "$T/r.out")" = 1 ] && grep -q '^middle$' "$T/r.out" && grep -q '^after$' "$T/r.out" ||
    fail "output across restarts: $(cat "$T/r.out")"
pass "run logs -f across a SIGTERM and a SIGKILL restart: reconnected, said so, no line lost or doubled, ended with the run"

# 4b. No daemon comes back: a clear end after the bound, exit 4.
"$CW_BIN/cwctl" run start edit --wait > /dev/null 2> "$T/gone.err" &
gpid=$!; echo $gpid > "$T/pids/g"
wait_until 10 "waiting" grep -q 'waiting for it to end' "$T/gone.err" || fail "--wait: $(cat "$T/gone.err")"
id=$(sed -n 's/^run \([^ ]*\) queued.*/\1/p' "$T/gone.err")
wait_until 20 "run running" run_is "$id" running || fail "run did not start"
echo "$(run_field "$id" runner_pid)" > "$T/pids/r2"
stop_daemon
rc=0; wait $gpid || rc=$?
[ $rc -eq 4 ] || fail "--wait with the daemon gone: exit $rc: $(cat "$T/gone.err")"
grep -q 'did not come back within 30 s' "$T/gone.err" && grep -q 'clockworkd is not running' "$T/gone.err" ||
    fail "--wait with the daemon gone said: $(cat "$T/gone.err")"
pass "run start --wait with the daemon gone for good: gives up after 30 s, exit 4, and says how to start it"

# The run goes on without a daemon (SPEC R1): bring one back and let the run end.
start_daemon --stop-grace 1
wt=$(run_field "$id" worktree)
touch "$wt/.git/go1" "$wt/.git/go2"
wait_until 30 "the last run ended" run_ended "$id" || fail "the last run did not end"
