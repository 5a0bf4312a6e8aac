#!/usr/bin/env bash
# Recovery (SPEC D4): clockworkd is killed with SIGKILL in the middle of several runs and
# started again. Runs it finds unfinished become interrupted with a journal entry, every
# process they had is ended (even one whose runner and parent are gone, found by the
# pids the daemon recorded and checked by start time), worktrees are kept, queued runs
# still run, and the store is consistent.
. "${CW_SRC:?}/test/integration/daemon_lib.bash" || exit 1
command -v perl >/dev/null || fail "perl is needed for the fake runner"

start_daemon --runner "$FAKE_RUNNER" --stop-grace 0.5
mkdir -p "$T/pids"

STUBBORN='trap "" TERM; setsid sh -c "echo \$\$ > esc.pid; exec sleep 300" & echo $$ > sh.pid; sleep 300'
cwctl task add plain --engine command --prompt 'echo $$ > sh.pid; echo started; sleep 300' >/dev/null
cwctl task add stubborn --engine command --prompt "$STUBBORN" >/dev/null
cwctl task add later --engine command --prompt 'echo later ran' >/dev/null
a=$(cwctl run start plain)
b=$(cwctl run start stubborn)
c=$(cwctl run start later)
wait_until 10 "two runs running" sh -c "[ \"\$(sqlite3 '$CLOCKWORK_HOME/clockwork.db' \"SELECT count(*) FROM runs WHERE status='running'\")\" = 2 ]" ||
    fail "runs did not start"
[ "$(run_status "$c")" = queued ] || fail "third run should wait (limit 2): $(run_status "$c")"
wa=$(run_field "$a" worktree); wb=$(run_field "$b" worktree)
wait_until 10 "commands started" sh -c "[ -s '$wa/sh.pid' ] && [ -s '$wb/sh.pid' ] && [ -s '$wb/esc.pid' ]" ||
    fail "commands did not start"
pa=$(cat "$wa/sh.pid"); pb=$(cat "$wb/sh.pid"); pe=$(cat "$wb/esc.pid")
echo "$pa" > "$T/pids/a"; echo "$pb" > "$T/pids/b"; echo "$pe" > "$T/pids/e"
ra=$(run_field "$a" runner_pid); rb=$(run_field "$b" runner_pid)
echo "$ra" > "$T/pids/ra"; echo "$rb" > "$T/pids/rb"
# The daemon samples each run's processes once a second into runs/<id>.pids.
wait_until 10 "escapee recorded" grep -q "^$pe " "$CLOCKWORK_HOME/runs/$b.pids" ||
    fail "escapee $pe never recorded"
pass "two runs live, one queued, the setsid escapee recorded"

kill -KILL "$DPID"; wait "$DPID" 2>/dev/null || true; DPID=
# Make the escapee a true orphan: its runner and its parent shell are gone too.
kill -KILL "$rb" "$pb"
wait_until 5 "runner b gone" not_alive "$rb" || fail "could not kill runner b"
for p in "$pa" "$pe" "$ra"; do kill -0 "$p" || fail "process $p died with the daemon"; done
[ "$(ps -o ppid= -p "$pe" | tr -d ' ')" != "$rb" ] || fail "escapee still has its runner"
pass "after SIGKILL the runs' processes outlive the daemon (the test has teeth)"

rm -f "$CLOCKWORK_HOME/clockworkd.port"
start_daemon --runner "$FAKE_RUNNER" --stop-grace 0.5
for p in "$pa" "$pe" "$ra" "$pb" "$rb"; do
	wait_until 5 "process $p ended" not_alive "$p" || fail "process $p survived recovery"
done
pass "after restart no process of the interrupted runs survives (escapee included)"

for id in "$a" "$b"; do
	[ "$(run_status "$id")" = interrupted ] || fail "run $id: $(run_status "$id")"
	[ "$(run_field "$id" exit_reason)" = interrupted ] || fail "run $id reason"
	[ -n "$(run_field "$id" ended_at)" ] || fail "run $id has no end time"
	[ "$(sql "SELECT count(*) FROM journal WHERE run_id='$id' AND kind='run_interrupted'")" = 1 ] ||
	    fail "run $id: no run_interrupted journal entry"
	[ -d "$(run_field "$id" worktree)" ] || fail "run $id: worktree not kept"
	run_field "$id" report | grep -q '"exit_reason":"interrupted"' || fail "run $id report"
done
cwctl journal --run "$b" | grep -q run_interrupted || fail "cwctl journal --run"
pass "both runs interrupted, journaled, reported, worktrees kept"

wait_until 15 "queued run ran" run_is "$c" completed || fail "queued run: $(run_status "$c")"
grep -q 'later ran' "$(run_field "$c" log_path)" || fail "queued run log"
pass "the queued run survived the crash and ran after the restart"

[ "$(sql 'PRAGMA integrity_check')" = ok ] || fail "integrity_check"
[ "$(sql "SELECT count(*) FROM runs WHERE status IN ('starting','running')")" = 0 ] ||
    fail "live rows left"
[ "$(sql "SELECT count(*) FROM approvals WHERE state='pending'")" = 0 ] || fail "pending approvals"
n=$(sql "SELECT count(*) FROM audit WHERE action='run.start'")
[ "$n" = 3 ] || fail "audit has $n run.start entries, want 3"
pass "store consistent: integrity ok, no live rows, audit intact"

echo "daemon_recovery: $PASSED passed"
