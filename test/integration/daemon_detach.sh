#!/usr/bin/env bash
# clockworkd without --foreground detaches cleanly (issue 27): started with its stderr
# (and stdout) a pipe, the pipe reaches end-of-file once it has said it started, while
# the daemon goes on running, answering and logging to its file; its standard
# descriptors are /dev/null. A start-up error still reaches the pipe, with exit 2.
. "${CW_SRC:?}/test/integration/daemon_lib.bash" || exit 1

# 1. A bad configuration: the message on the caller's stderr, exit 2, nothing left.
printf 'budgets:\n  turns: many\n' > "$CLOCKWORK_HOME/config.yaml"
set +e; err=$(timeout 20 "$CW_BIN/clockworkd" 2>&1 >/dev/null); rc=$?; set -e
[ $rc = 2 ] || fail "background start with a bad config: exit $rc, want 2: $err"
grep -q 'config.yaml:2: budgets.turns' <<< "$err" || fail "the start-up error did not reach stderr: $err"
grep -q 'did not start' <<< "$err" || fail "no 'did not start' line: $err"
pass "a start-up error reaches the caller's stderr, exit 2"

# 2. A good start, stdout and stderr both one pipe: the reader sees EOF (timeout would
# say 124 if the daemon kept the pipe), the daemon lives on.
printf 'api_port: 0\n' > "$CLOCKWORK_HOME/config.yaml"
set +e
timeout 30 bash -c '"$1/clockworkd" --runner "$2" 2>&1 | cat' _ "$CW_BIN" "$FAKE_RUNNER" > "$T/start.out"
rc=$?
set -e
DPID=$(cat "$CLOCKWORK_HOME/clockworkd.pid" 2>/dev/null || true)
[ $rc = 0 ] || fail "the start pipe did not reach EOF (exit $rc): $(cat "$T/start.out")"
grep -q '^clockworkd started: pid [0-9]*, Inbox on 127.0.0.1:[0-9]*' "$T/start.out" ||
    fail "start: $(cat "$T/start.out")"
[ -n "$DPID" ] && kill -0 "$DPID" || fail "the daemon is not running after the pipe closed"
grep -q "pid $DPID" "$T/start.out" || fail "start names another pid than clockworkd.pid ($DPID)"
pass "started in the background, its stdout and stderr pipe reaches EOF; pid $DPID runs on"

# 3. Its descriptors 0, 1, 2 are /dev/null; it is in its own session.
for fd in 0 1 2; do
	[ "$(readlink "/proc/$DPID/fd/$fd")" = /dev/null ] ||
	    fail "fd $fd of clockworkd is $(readlink "/proc/$DPID/fd/$fd"), not /dev/null"
done
[ "$(ps -o sid= -p "$DPID" | tr -d ' ')" = "$DPID" ] || fail "clockworkd is not a session leader"
pass "stdin, stdout and stderr are /dev/null, in a session of its own"

# 4. It answers and logs to its file.
cwctl status > /dev/null || fail "cwctl status: exit $?"
grep -q "clockworkd .* started: pid $DPID" "$CLOCKWORK_HOME/clockworkd.log" ||
    fail "no start line in clockworkd.log: $(tail -5 "$CLOCKWORK_HOME/clockworkd.log")"
cwctl task add t --engine command --prompt 'echo hi' > /dev/null || fail "task add"
id=$(cwctl run start t) || fail "run start"
wait_until 30 "the run to end" run_ended "$id" || fail "run $id did not end"
grep -q "$id" "$CLOCKWORK_HOME/clockworkd.log" || fail "the run is not in clockworkd.log"
kill -TERM "$DPID"
wait_until 20 "clockworkd to exit" not_alive "$DPID" || fail "clockworkd did not stop on SIGTERM"
grep -q 'clockworkd stopped' "$CLOCKWORK_HOME/clockworkd.log" || fail "no stop line in the log"
DPID=
pass "detached, it answers, runs, and logs its run and its stop to clockworkd.log"
