#!/usr/bin/env bash
# Stopping runs: a command that ignores SIGTERM and one that escapes its group with
# setsid are both gone after `cwctl run stop` and after the wall-clock budget, and a
# runner that hangs (ignores SIGTERM and the stop line) is still ended by the daemon.
# The runner here is the protocol stand-in, so this tests the daemon's supervision alone.
. "${CW_SRC:?}/test/integration/daemon_lib.bash" || exit 1
command -v perl >/dev/null || fail "perl is needed for the fake runner"

start_daemon --runner "$FAKE_RUNNER" --stop-grace 0.5
mkdir -p "$T/pids"

# The command ignores SIGTERM (sleep inherits the ignored disposition) and starts a
# child in a new session, out of every process group the run had.
STUBBORN='trap "" TERM; setsid sh -c "echo \$\$ > esc.pid; exec sleep 300" & echo $$ > sh.pid; sleep 300'

# procs_gone DIR: the pids the command wrote are dead.
procs_gone() {
	for f in "$1"/sh.pid "$1"/esc.pid; do
		p=$(cat "$f"); not_alive "$p" || return 1
	done
}
started() {
	[ -s "$1/sh.pid" ] && [ -s "$1/esc.pid" ]
}
record_pids() {
	cp "$1/sh.pid" "$T/pids/$2.sh"; cp "$1/esc.pid" "$T/pids/$2.esc"
}

# 1. cwctl run stop.
cwctl task add stubborn --engine command --prompt "$STUBBORN" --seconds 600 >/dev/null
id=$(cwctl run start stubborn)
wait_until 10 "run running" run_is "$id" running || fail "run did not start"
wd=$(run_field "$id" worktree)
wait_until 10 "command started" started "$wd" || fail "command did not start"
record_pids "$wd" stop
t0=$(date +%s%N)
cwctl run stop "$id" >/dev/null
wait_until 10 "run ended" run_ended "$id" || fail "run did not end after stop"
t1=$(date +%s%N)
[ "$(run_status "$id")" = stopped ] || fail "status $(run_status "$id")"
[ "$(run_field "$id" exit_reason)" = stopped ] || fail "exit_reason"
wait_until 5 "processes gone" procs_gone "$wd" || fail "a process survived the stop"
echo "# stop to recorded end: $(( (t1 - t0) / 1000000 )) ms (grace 500 ms)"
pass "run stop ends a SIGTERM-ignoring command and its setsid escapee; status stopped"

set +e; out=$(cwctl run stop "$id" 2>&1); rc=$?; set -e
[ $rc -eq 3 ] && grep -q "already ended" <<<"$out" || fail "stop of an ended run: $rc $out"
pass "stopping an ended run is refused clearly"

# 2. The wall-clock budget, enforced by the daemon (this runner has no budget of its own).
cwctl task add budget --engine command --prompt "$STUBBORN" --seconds 1 --budget-wait 0 >/dev/null
t0=$(date +%s%N)
id=$(cwctl run start budget)
wait_until 10 "run running" run_is "$id" running || fail "budget run did not start"
wd=$(run_field "$id" worktree)
wait_until 10 "command started" started "$wd" || fail "command did not start"
record_pids "$wd" budget
wait_until 15 "budget end" run_ended "$id" || fail "budget not enforced"
t1=$(date +%s%N)
[ "$(run_field "$id" exit_reason)" = budget_seconds ] || fail "exit_reason $(run_field "$id" exit_reason)"
wait_until 5 "processes gone" procs_gone "$wd" || fail "a process survived the budget"
run_field "$id" report | grep -q '"exit_reason":"budget_seconds"' || fail "report reason"
echo "# budget 1 s: run ended after $(( (t1 - t0) / 1000000 )) ms"
pass "budget_seconds ends the run and every process; reason budget_seconds"

# 3. A runner that hangs: ignores SIGTERM and the stop line.
cwctl task add hung --engine command --prompt "$STUBBORN #hang" >/dev/null
id=$(cwctl run start hung)
wait_until 10 "run running" run_is "$id" running || fail "hung run did not start"
wd=$(run_field "$id" worktree)
wait_until 10 "command started" started "$wd" || fail "command did not start"
record_pids "$wd" hung
rpid=$(run_field "$id" runner_pid)
cwctl run stop "$id" >/dev/null
wait_until 10 "hung run ended" run_ended "$id" || fail "hung runner not ended"
not_alive "$rpid" || fail "runner $rpid survived"
wait_until 5 "processes gone" procs_gone "$wd" || fail "a process survived"
[ "$(run_status "$id")" = stopped ] || fail "status $(run_status "$id")"
pass "a hung runner is SIGKILLed after the grace period with all its processes"

# The daemon is fine and nothing of ours is left.
cwctl status >/dev/null || fail "daemon not answering"
left=$(ps -eo pid=,ppid= | awk -v d="$DPID" '$2 == d' | wc -l)
[ "$left" -eq 0 ] || fail "$left child process(es) of clockworkd left"
pass "no child of clockworkd is left"

# SIGTERM to the daemon (SPEC R1): it exits 0 at once and ends no run; the run is not
# recorded stopped. This stand-in runner has no control socket to be found on, so at
# the next start the run is interrupted and everything it had is ended (the real
# runner's re-attach is integration/daemon_restart).
cwctl task add term --engine command --prompt "$STUBBORN" >/dev/null
id=$(cwctl run start term)
wait_until 10 "run running" run_is "$id" running || fail "run did not start"
wd=$(run_field "$id" worktree)
wait_until 10 "command started" started "$wd" || fail "command did not start"
record_pids "$wd" term
kill -TERM "$DPID"
rc=0; wait "$DPID" || rc=$?
DPID=
[ $rc -eq 0 ] || fail "clockworkd exit $rc after SIGTERM"
[ "$(run_status "$id")" = running ] || fail "run after SIGTERM: $(run_status "$id")"
p=$(cat "$wd/esc.pid"); kill -0 "$p" || fail "SIGTERM to clockworkd ended a run's process"
rm -f "$CLOCKWORK_HOME/clockworkd.port"
start_daemon --runner "$FAKE_RUNNER" --stop-grace 0.5
[ "$(run_status "$id")" = interrupted ] || fail "run after restart: $(run_status "$id")"
wait_until 5 "processes gone" procs_gone "$wd" ||
    fail "a process outlived recovery: $(ps -o pid,ppid,pgid,sid,stat,cmd -p "$(cat "$wd/sh.pid")","$(cat "$wd/esc.pid")")"
pass "SIGTERM to clockworkd ends no run and exits 0; a runner that cannot be re-attached is interrupted at the next start"
stop_daemon

# 4. The same through the real, sandboxed cw-runner: a stop and a budget, side by side.
start_daemon --stop-grace 1
cwctl task add real-stop --engine command --prompt "$STUBBORN" >/dev/null
cwctl task add real-budget --engine command --prompt "$STUBBORN" --seconds 1 --budget-wait 0 >/dev/null
s1=$(cwctl run start real-stop); s2=$(cwctl run start real-budget)
for id in "$s1" "$s2"; do
	wait_until 10 "run running" run_is "$id" running || fail "real run $id did not start"
	wd=$(run_field "$id" worktree)
	wait_until 10 "command started" started "$wd" || fail "command did not start in the sandbox"
	# The pids the command wrote are its PID namespace's: record the host's.
	r=$(run_field "$id" runner_pid)
	mkdir -p "$T/pids/real-$id"
	# (The 1 s budget may have ended the run already: then there is nothing to find.)
	{ host_pid "$r" "$(cat "$wd/sh.pid")" > "$T/pids/real-$id/sh.pid" &&
	    host_pid "$r" "$(cat "$wd/esc.pid")" > "$T/pids/real-$id/esc.pid"; } ||
	    run_ended "$id" || fail "real run $id: the command's host pids not found under runner $r"
done
cwctl run stop "$s1" >/dev/null
for id in "$s1" "$s2"; do
	wait_until 15 "run ended" run_ended "$id" || fail "real run $id did not end"
	wait_until 5 "processes gone" procs_gone "$T/pids/real-$id" ||
	    fail "a process of real run $id survived"
done
[ "$(run_field "$s1" exit_reason)" = stopped ] || fail "real stop: $(run_field "$s1" exit_reason)"
[ "$(run_field "$s2" exit_reason)" = budget_seconds ] || fail "real budget: $(run_field "$s2" exit_reason)"
run_field "$s2" report | grep -q '"sandboxed":true' || fail "real run not sandboxed"
pass "through the real cw-runner: stop and budget_seconds end every process, setsid escapee included"

echo "daemon_stop: $PASSED passed"
