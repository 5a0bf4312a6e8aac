#!/usr/bin/env bash
# Per-run resource limits (SPEC R2, issue 10) with the real sandboxed runner: a fork
# bomb ends with exit reason limit_pids and a memory hog with limit_memory, while the
# daemon keeps answering and a second run alongside completes; afterwards no process of
# the limited run is left and its cgroup is gone. Limits come from the configuration
# (processes) and from the task (memory, cwctl task add --memory-mb).
. "${CW_SRC:?}/test/integration/daemon_lib.bash" || exit 1

cg_mounted() {
	grep -qE ' /sys/fs/cgroup(/[a-z]+)? cgroup2? ' /proc/mounts
}
if [ "$(id -u)" != 0 ] && ! cg_mounted; then
	echo "SKIP: no cgroup filesystem to test with"; exit 77
fi

printf 'api_port: 0\nlimits:\n  processes: 64\n' > "$CLOCKWORK_HOME/config.yaml"
start_daemon --stop-grace 1

# No process of run $1 left: nothing carries its marker, and no cgroup dir names it.
run_gone() {
	local id=$1 marker=$2
	! pgrep -f "$marker" >/dev/null || return 1
	[ -z "$(find /sys/fs/cgroup -maxdepth 6 -type d -name "*$id*" 2>/dev/null)" ]
}

# A second run that waits for a file, to show other runs carry on.
cwctl task add gate --prompt 'while [ ! -e go ]; do sleep 0.05; done; echo through' >/dev/null

# 1. The fork bomb: sleepers until fork fails (and at most 400, so that it ends even
# where nothing limits it). The configured processes limit is 64.
cwctl task add bomb --seconds 120 --prompt 'i=0; while [ $i -lt 400 ]; do
  sleep 3171 & i=$((i + 1)); done; echo "forked $i"; wait' >/dev/null
g=$(cwctl run start gate)
wait_until 10 "gate running" run_is "$g" running || fail "gate run did not start"
id=$(cwctl run start bomb)
wait_until 60 "bomb ended" run_ended "$id" || fail "fork bomb run did not end: $(run_status "$id")"
reason=$(run_field "$id" exit_reason)
[ "$reason" = limit_pids ] || fail "fork bomb exit reason: $reason"
cwctl run show "$id" --json > "$T/bomb.json"
grep -q '"exit_reason":	"limit_pids"' "$T/bomb.json" || fail "report: $(cat "$T/bomb.json")"
grep -q '"processes":	64' "$T/bomb.json" || fail "report limits: $(cat "$T/bomb.json")"
sql "SELECT data FROM journal WHERE run_id = '$id'" | grep -q limit_pids ||
    fail "journal: $(sql "SELECT kind, data FROM journal WHERE run_id = '$id'")"
cwctl run logs "$id" | grep -q 'process limit of 64 reached' || fail "log: $(cwctl run logs "$id")"
grep -q '"mechanism":	"cgroup v' "$T/bomb.json" || fail "report mechanism"
pass "a fork bomb ends with exit reason limit_pids (report, runs, journal)"

wait_until 20 "bomb gone" run_gone "$id" 'sleep 3171' ||
    fail "left behind: $(pgrep -af 'sleep 3171' | head -3) $(find /sys/fs/cgroup -maxdepth 6 -name "*$id*")"
pass "no process of the fork bomb is left, its cgroup is gone"

timeout 2 "$CW_BIN/cwctl" status >/dev/null || fail "cwctl status does not answer"
run_is "$g" running || fail "gate run: $(run_status "$g")"

# 2. The memory hog: 512 MiB touched, against the task's 64 MiB.
cwctl task add hog --seconds 120 --memory-mb 64 --prompt 'python3 -c "
import time
b = bytearray(512 << 20)
for i in range(0, len(b), 4096): b[i] = 1
print(\"allocated\"); time.sleep(3172)"' >/dev/null
cwctl task show hog --json | grep -q '"limit_memory_mb":	64' || fail "task: $(cwctl task show hog --json)"
h=$(cwctl run start hog)
wait_until 60 "hog ended" run_ended "$h" || fail "memory hog run did not end: $(run_status "$h")"
reason=$(run_field "$h" exit_reason)
[ "$reason" = limit_memory ] || fail "memory hog exit reason: $reason ($(cwctl run logs "$h" | tail -5))"
cwctl run show "$h" --json | grep -q '"exit_reason":	"limit_memory"' || fail "hog report"
! cwctl run logs "$h" | grep -q allocated || fail "the hog got its memory"
sql "SELECT data FROM journal WHERE run_id = '$h'" | grep -q limit_memory || fail "hog journal"
pass "a memory hog ends with exit reason limit_memory (report, runs, journal)"
wait_until 20 "hog gone" run_gone "$h" 'time.sleep.3172' || fail "hog left behind"
pass "no process of the memory hog is left, its cgroup is gone"

timeout 2 "$CW_BIN/cwctl" status >/dev/null || fail "cwctl status does not answer"
touch "$(run_field "$g" worktree)/go"
wait_until 20 "gate done" run_ended "$g" || fail "gate did not end"
[ "$(run_status "$g")" = completed ] || fail "gate: $(run_status "$g")"
pass "the daemon answered throughout and the concurrent run completed"

# 3. A runner killed hard leaves its run's cgroup to the daemon, which ends it.
cwctl task add orphan --prompt 'sleep 3173 & sleep 3173 & echo ready; wait' >/dev/null
o=$(cwctl run start orphan)
wait_until 10 "orphan running" sh -c "'$CW_BIN/cwctl' run logs '$o' | grep -q ready" ||
    fail "orphan run did not start"
[ -n "$(find /sys/fs/cgroup -maxdepth 6 -type d -name "*$o*")" ] || fail "no cgroup for $o"
kill -KILL "$(run_field "$o" runner_pid)"
wait_until 20 "orphan ended" run_ended "$o" || fail "run did not end: $(run_status "$o")"
wait_until 20 "orphan gone" run_gone "$o" 'sleep 3173' ||
    fail "left behind: $(pgrep -af 'sleep 3173') $(find /sys/fs/cgroup -maxdepth 6 -name "*$o*")"
pass "a runner killed hard: the daemon ends what is left and removes the run's cgroup"

# 4. A bad per-task value is refused by name.
out=$(cwctl task add bad --prompt true --processes 1 2>&1) && fail "processes 1 accepted"
echo "$out" | grep -q limit_processes || fail "error: $out"
pass "a per-task limit out of range is refused, naming the field"
