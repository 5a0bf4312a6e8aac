#!/usr/bin/env bash
# Issue 24: a queued run and its audit line are one transaction (one sync to disk per
# POST /api/runs), a run's runner and running status another, and a run's end (report,
# spent, runner, status) a third. What the API answered and what a run recorded is on
# disk, whole:
#  1. 20 POSTs back to back, the daemon killed (SIGKILL) right after the last 201:
#     after a restart every answered run is in the store with its run.start audit line.
#  2. every run that ended has its report, its spent seconds and its end status
#     together; none is left half-recorded.
#  3. queued POSTs cost one fdatasync each (strace attached to the daemon).
# Row 2 stops each run of a restarted daemon as the queue starts it. It also caught a
# daemon that shut down when a stop's SIGTERM reached a runner between fork() and the
# reset of its signal handlers (runs_spawn now blocks signals across the fork): the
# next POST found no daemon (1 to 4 runs in 10 as the normal user beside another
# test).
. "${CW_SRC:?}/test/integration/daemon_lib.bash" || exit 1
command -v strace >/dev/null || fail "strace is needed (scripts/setup installs it)"
mkdir -p "$T/pids"
printf 'api_port: 0\nmax_concurrent_runs: 1\n' > "$CLOCKWORK_HOME/config.yaml"
start_daemon
cwctl task add hold --engine command --prompt 'sleep 30' >/dev/null || fail "task add hold"
cwctl task add quick --engine command --prompt 'true' >/dev/null || fail "task add quick"

ids=()
for i in $(seq 20); do
	out=$(api POST /api/runs '{"task":"hold"}')
	[ "${out%% *}" = 201 ] || fail "POST $i: $out"
	id=$(sed -n 's/.*"id":"\([^"]*\)".*/\1/p' <<<"${out#* }")
	[ -n "$id" ] || fail "POST $i: no id in $out"
	ids+=("$id")
done
kill -KILL "$DPID"
wait "$DPID" 2>/dev/null || true
DPID=
rm -f "$CLOCKWORK_HOME/clockworkd.port"
for id in "${ids[@]}"; do
	[ "$(sql "SELECT count(*) FROM runs WHERE id = '$id'")" = 1 ] || fail "run $id was answered 201 but is not in the store after SIGKILL"
	[ "$(sql "SELECT count(*) FROM audit WHERE action = 'run.start' AND target = '$id'")" = 1 ] ||
	    fail "run $id has no run.start audit line after SIGKILL"
done
pass "20 runs answered 201, daemon SIGKILLed: all 20 in the store, each with its run.start audit line"

start_daemon
for id in "${ids[@]}"; do cwctl run stop "$id" >/dev/null 2>&1 || true; done
for i in $(seq 5); do
	out=$(api POST /api/runs '{"task":"quick"}')
	kill -0 "$DPID" 2>/dev/null || fail "clockworkd is gone after stopping its runs: $(grep -E 'Terminated|shutting down' "$T/daemon.out")"
	[ "${out%% *}" = 201 ] || fail "POST quick $i: $out"
done
all_ended() { [ "$(sql "SELECT count(*) FROM runs WHERE status IN ('queued','starting','running')")" = 0 ]; }
wait_until 60 "every run to end" all_ended || fail "runs still active: $(sql "SELECT id, status FROM runs WHERE status IN ('queued','starting','running')")"
half=$(sql "SELECT count(*) FROM runs WHERE status IN ('completed','failed','stopped','interrupted') AND runner_pid > 0 AND (ended_at IS NULL OR report IS NULL OR spent_seconds IS NULL)")
[ "$half" = 0 ] || fail "$half ended run(s) recorded without their report, ended_at or spent seconds: $(sql "SELECT id, status, ended_at, spent_seconds, report IS NULL FROM runs")"
done_ok=$(sql "SELECT count(*) FROM runs r JOIN tasks t ON t.id = r.task_id WHERE t.name = 'quick' AND r.status = 'completed' AND r.runner_pid > 0")
[ "$done_ok" = 5 ] || fail "quick runs completed with a runner pid: $done_ok of 5: $(sql "SELECT id, status, runner_pid FROM runs")"
pass "every run that had a runner ended with its report, spent seconds and ended_at together ($(sql "SELECT count(*) FROM runs WHERE runner_pid > 0") runs; 5 completed)"

# One run of hold in front (max_concurrent_runs 1), so that the POSTs below only queue.
cwctl task disable quick >/dev/null
first=$(api POST /api/runs '{"task":"hold"}')
[ "${first%% *}" = 201 ] || fail "POST hold: $first"
first=$(sed -n 's/.*"id":"\([^"]*\)".*/\1/p' <<<"${first#* }")
wait_until 20 "run $first to be running" run_is "$first" running || fail "run $first: $(run_status "$first")"
strace -k -e trace=fdatasync,fsync -o "$T/strace" -p "$DPID" 2>"$T/strace.err" &
SP=$!
echo "$SP" > "$T/pids/strace"
wait_until 10 "strace to attach" grep -q 'attached' "$T/strace.err" || fail "strace: $(cat "$T/strace.err")"
for i in 1 2 3 4 5; do
	out=$(api POST /api/runs '{"task":"hold"}')
	[ "${out%% *}" = 201 ] || fail "POST under strace: $out"
done
kill -INT "$SP"; wait "$SP" 2>/dev/null || true
# Each sync's stack (strace -k): those made for a POST pass through api_run_start; the
# held run's own records (its log lines' events) are not counted.
n=$(grep -c 'api_run_start' "$T/strace" || true)
[ "$n" = 5 ] || fail "5 queued POSTs cost $n syncs to disk: $(grep -v '^ > .*\(libc\|libsqlite\|libevent\)' "$T/strace" | head -60)"
pass "5 queued POSTs: $n syncs to disk (strace -k), one each"
