#!/usr/bin/env bash
# Recovery racing a run's end (issue 26, item 11): clockworkd comes back while a run's
# runner is ending. The runner has written its report file (runs/<id>.report.json, as
# a runner that finished with no daemon attached does) and is still alive when the
# daemon looks, but no longer answers on its control socket. Its run must be finished
# with that report, not interrupted with its report thrown away; and the runner must
# not outlive the recovery. Emulated with the fake runner (it has no control socket),
# killed daemon, and the report file a real runner writes.
. "${CW_SRC:?}/test/integration/daemon_lib.bash" || exit 1
command -v perl >/dev/null || fail "perl is needed for the fake runner"

start_daemon --runner "$FAKE_RUNNER" --stop-grace 0.5
mkdir -p "$T/pids"
cwctl task add ending --engine command --prompt 'sleep 300' >/dev/null
id=$(cwctl run start ending)
wait_until 10 "running" run_is "$id" running || fail "the run did not start"
rp=$(run_field "$id" runner_pid); echo "$rp" > "$T/pids/runner"
kill -KILL "$DPID"; wait "$DPID" 2>/dev/null || true; DPID=
kill -0 "$rp" || fail "the runner died with the daemon"
printf '{"type":"report","v":1,"run_id":"%s","status":"succeeded","exit_reason":"completed","message":"finished while clockworkd was away"}\n' \
	"$id" > "$CLOCKWORK_HOME/runs/$id.report.json"
pass "a runner alive, its report written, its control socket gone (the test has teeth)"

rm -f "$CLOCKWORK_HOME/clockworkd.port"
# A child the killed daemon forked without exec (an import) holds a copy of its lock
# until it ends: the new daemon would say "already running". Wait for the lock.
wait_until 15 "the killed daemon's lock released" flock -n "$CLOCKWORK_HOME/clockworkd.pid" true ||
	fail "the killed daemon's lock is still held: $(fuser "$CLOCKWORK_HOME/clockworkd.pid" 2>&1)"
start_daemon --runner "$FAKE_RUNNER" --stop-grace 0.5
wait_until 20 "the run ended" run_ended "$id" || fail "the run never ended: $(run_status "$id")"
[ "$(run_status "$id")" = completed ] || fail "the run's report was thrown away: $(run_status "$id"), $(run_field "$id" report | head -c 300)"
[ "$(sql "SELECT count(*) FROM journal WHERE run_id = '$id' AND kind = 'run_interrupted'")" = 0 ] ||
	fail "the run was journaled as interrupted"
wait_until 10 "runner gone" not_alive "$rp" || fail "the runner outlived the recovery"
pass "recovery finishes the run with the report its ending runner left, and ends that runner"
echo "all $PASSED checks passed"
