#!/usr/bin/env bash
# Recovery with the real, sandboxed cw-runner (daemon_recovery.sh covers the same with
# a protocol stand-in that can be told to hang). Two crashes:
#  1. clockworkd alone is killed with SIGKILL: each run goes on (SPEC R1), its runner
#     waiting on its control socket; the restarted daemon re-attaches to both (journaled)
#     and can stop them, and their reports arrive.
#  2. clockworkd and every runner are killed with SIGKILL at once (an OOM kill of the
#     service): the runs' processes are orphaned; the restarted daemon finds them by the
#     pids it recorded, verified by start time, and ends them.
. "${CW_SRC:?}/test/integration/daemon_lib.bash" || exit 1
mkdir -p "$T/pids"
STUBBORN='trap "" TERM; setsid sh -c "echo \$\$ > esc.pid; exec sleep 300" & echo $$ > sh.pid; sleep 300'

# start_two: two stubborn runs, their command pids recorded; sets A B WA WB RA RB PA PB EA EB.
start_two() {
	A=$(cwctl run start "$1"); B=$(cwctl run start "$1")
	wait_until 20 "two runs running" sh -c "[ \"\$(sqlite3 '$CLOCKWORK_HOME/clockwork.db' \"SELECT count(*) FROM runs WHERE status='running'\")\" = 2 ]" ||
	    fail "runs did not start"
	WA=$(run_field "$A" worktree); WB=$(run_field "$B" worktree)
	wait_until 20 "commands started" sh -c "[ -s '$WA/sh.pid' ] && [ -s '$WA/esc.pid' ] && [ -s '$WB/sh.pid' ] && [ -s '$WB/esc.pid' ]" ||
	    fail "commands did not start"
	RA=$(run_field "$A" runner_pid); RB=$(run_field "$B" runner_pid)
	PA=$(host_pid "$RA" "$(cat "$WA/sh.pid")") && EA=$(host_pid "$RA" "$(cat "$WA/esc.pid")") &&
	    PB=$(host_pid "$RB" "$(cat "$WB/sh.pid")") && EB=$(host_pid "$RB" "$(cat "$WB/esc.pid")") ||
	    fail "the commands' host pids not found under their runners"
	for v in PA EA PB EB RA RB; do echo "${!v}" > "$T/pids/$1-$v"; done
	wait_until 10 "escapees recorded" sh -c "grep -q '^$EA ' '$CLOCKWORK_HOME/runs/$A.pids' && grep -q '^$EB ' '$CLOCKWORK_HOME/runs/$B.pids'" ||
	    fail "escapees never recorded"
}
check_interrupted() {
	for id in "$@"; do
		[ "$(run_status "$id")" = interrupted ] || fail "run $id: $(run_status "$id")"
		[ "$(sql "SELECT count(*) FROM journal WHERE run_id='$id' AND kind='run_interrupted'")" = 1 ] ||
		    fail "run $id: no run_interrupted journal entry"
		[ -d "$(run_field "$id" worktree)" ] || fail "run $id: worktree not kept"
	done
}

start_daemon --stop-grace 0.5
cwctl task add crash1 --engine command --prompt "$STUBBORN" --seconds 600 >/dev/null
start_two crash1
kill -KILL "$DPID"; wait "$DPID" 2>/dev/null || true; DPID=
# SPEC R1: the runs go on without a daemon; their runners wait on their control sockets.
for p in "$PA" "$EA" "$PB" "$EB" "$RA" "$RB"; do kill -0 "$p" || fail "process $p died with clockworkd"; done
for id in "$A" "$B"; do
	wait_until 10 "control socket of $id" test -S "$CLOCKWORK_HOME/runs/$id.sock" || fail "run $id: no control socket"
done
pass "daemon SIGKILL: both runs go on (runners, commands and setsid escapees alive)"
rm -f "$CLOCKWORK_HOME/clockworkd.port"
start_daemon --stop-grace 0.5
for id in "$A" "$B"; do
	[ "$(run_status "$id")" = running ] || fail "run $id after restart: $(run_status "$id")"
	[ "$(sql "SELECT count(*) FROM journal WHERE run_id='$id' AND kind='run_reattached'")" = 1 ] ||
	    fail "run $id: no run_reattached journal entry"
done
cwctl status | grep -q "$A" || true
cwctl run stop "$A" >/dev/null || fail "run stop after re-attach"
cwctl run stop "$B" >/dev/null || fail "run stop after re-attach"
for id in "$A" "$B"; do wait_until 20 "run $id ended" run_ended "$id" || fail "run $id did not end"; done
for p in "$PA" "$EA" "$PB" "$EB" "$RA" "$RB"; do
	wait_until 15 "process $p ended" not_alive "$p" || fail "process $p outlived the stop"
done
for id in "$A" "$B"; do
	[ "$(run_status "$id")" = stopped ] || fail "run $id: $(run_status "$id")"
	run_field "$id" report | grep -q '"reattached":true' || fail "run $id: report does not say it was re-attached"
	[ ! -e "$CLOCKWORK_HOME/runs/$id.report.json" ] || fail "run $id: its report file was left"
done
pass "after restart both runs are re-attached (journaled), stopped through cwctl, reported, every process gone"

cwctl task add crash2 --engine command --prompt "$STUBBORN" --seconds 600 >/dev/null
start_two crash2
kill -KILL "$DPID" "$RA" "$RB"; wait "$DPID" 2>/dev/null || true; DPID=
wait_until 5 "runners gone" sh -c "! kill -0 $RA 2>/dev/null && ! kill -0 $RB 2>/dev/null" || fail "runners survived SIGKILL"
for p in "$PA" "$EA" "$PB" "$EB"; do kill -0 "$p" || fail "process $p died with its runner: the test has no teeth"; done
pass "daemon and runners SIGKILLed together: the runs' processes are orphaned and alive"
rm -f "$CLOCKWORK_HOME/clockworkd.port"
start_daemon --stop-grace 0.5
for p in "$PA" "$EA" "$PB" "$EB"; do
	wait_until 10 "orphan $p ended" not_alive "$p" || fail "orphan $p survived recovery"
done
check_interrupted "$A" "$B"
[ "$(sql 'PRAGMA integrity_check')" = ok ] || fail "integrity_check"
[ "$(sql "SELECT count(*) FROM runs WHERE status IN ('starting','running')")" = 0 ] || fail "live rows left"
pass "the restarted daemon ended every orphan (verified by start time); store consistent"
echo "daemon_recovery_real: $PASSED passed"
