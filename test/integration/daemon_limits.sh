#!/usr/bin/env bash
# Per-run resource limits (SPEC R2, U1; issues 10 and 22) with the real sandboxed
# runner, as root and as a normal user: a fork bomb ends with exit reason limit_pids
# and memory hogs (one process, and several that are each under the limit) with
# limit_memory, while the daemon keeps answering and a second run alongside completes;
# the report names the layer that held each limit ("cgroup v1"/"cgroup v2" where the
# runner can make the run a cgroup: root, a delegated subtree; "rlimit" otherwise:
# RLIMIT_NPROC/RLIMIT_DATA in the run's user namespace, counted by the runner); the
# user's other processes do not count against a run's process limit; afterwards no
# process of a limited run is left and its cgroup is gone. A run no layer can hold is
# refused (exit 3, naming cwctl doctor) unless limits.allow_unenforced: true, which
# lists the unenforced limits on the report. Limits come from the configuration
# (processes) and from the task (memory, cwctl task add --memory-mb).
. "${CW_SRC:?}/test/integration/daemon_lib.bash" || exit 1

# The layer the runner is expected to use here: the run's cgroup where the runner can
# make one (root; a cgroup v1 pids directory of ours, as scripts/test-user's
# CW_TEST_USER_CGROUP=1 delegates; a delegated v2 subtree), else rlimits.
own_v1=$(sed -n 's/^[0-9]*:pids:\(.*\)$/\1/p' /proc/self/cgroup)
if [ "$(id -u)" = 0 ]; then
	BY='cgroup v[12]'
elif [ -n "$own_v1" ] && [ -w "/sys/fs/cgroup/pids$own_v1" ] &&
    [ -w "/sys/fs/cgroup/memory$(sed -n 's/^[0-9]*:memory:\(.*\)$/\1/p' /proc/self/cgroup)" ]; then
	BY='cgroup v1'
else
	rel=$(uname -r); maj=${rel%%.*}; min=${rel#*.}; min=${min%%[!0-9]*}
	if [ "$maj" -lt 5 ] || { [ "$maj" = 5 ] && [ "$min" -lt 14 ]; }; then
		echo "SKIP: no cgroup of ours and Linux $rel has no per-namespace RLIMIT_NPROC"
		exit 77
	fi
	BY=rlimit
fi
echo "# expected layer: $BY"

# report_by RUN WHAT: the "by" of limits.layers.WHAT in the run's report.
report_by() {
	cwctl run show "$1" --json | python3 -c 'import json,sys
r = json.load(sys.stdin)
r = r.get("report", r)
print(r["limits"]["layers"][sys.argv[1]]["by"])' "$2"
}

printf 'api_port: 0\nlimits:\n  processes: 64\n' > "$CLOCKWORK_HOME/config.yaml"
start_daemon --stop-grace 1

# No process of run $1 left: nothing carries its marker, and no cgroup dir names it.
run_gone() {
	local id=$1 marker=$2
	! pgrep -f "$marker" >/dev/null || return 1
	[ -z "$(find /sys/fs/cgroup -maxdepth 6 -type d -name "*$id*" 2>/dev/null)" ]
}

# A second run that waits for a file, to show other runs carry on.
cwctl task add gate --engine command --prompt 'while [ ! -e go ]; do sleep 0.05; done; echo through' >/dev/null

# 0. The user's other processes do not count against a run's process limit: with 100
# processes of ours outside, a run limited to 64 still starts 20.
mkdir -p "$T/pids"
for i in $(seq 100); do sleep 3170 & echo $! > "$T/pids/outside$i"; disown $!; done
cwctl task add few --engine command --prompt 'i=0; p=; while [ $i -lt 20 ]; do sleep 3170 & p="$p $!"; i=$((i + 1))
done; echo "forked $i"; kill $p; wait; exit 0' >/dev/null
f=$(cwctl run start few)
wait_until 60 "few ended" run_ended "$f" || fail "few: $(run_status "$f")"
[ "$(run_status "$f")" = completed ] || fail "few: $(run_status "$f"): $(cwctl run logs "$f" | tail -5)"
cwctl run logs "$f" | grep -q 'forked 20' || fail "few log: $(cwctl run logs "$f" | tail -5)"
by=$(report_by "$f" processes)
[[ $by =~ ^$BY$ ]] || fail "few: processes held by '$by', expected $BY"
for i in $(seq 100); do kill "$(cat "$T/pids/outside$i")"; rm -f "$T/pids/outside$i"; done
pass "100 other processes of the user outside do not count: a run limited to 64 forks 20 and completes (held by $by)"

# 1. The fork bomb: sleepers until fork fails (and at most 400, so that it ends even
# where nothing limits it). The configured processes limit is 64. bash, as the engines'
# shells are: a refused fork is retried (for seconds), as a fork bomb keeps trying.
cwctl task add bomb --engine command --seconds 120 --prompt 'bash -c '"'"'i=0; while [ $i -lt 400 ]; do
  sleep 3171 & i=$((i + 1)); done; echo "forked $i"; wait'"'" >/dev/null
g=$(cwctl run start gate)
wait_until 10 "gate running" run_is "$g" running || fail "gate run did not start"
id=$(cwctl run start bomb)
wait_until 60 "bomb ended" run_ended "$id" || fail "fork bomb run did not end: $(run_status "$id")"
reason=$(run_field "$id" exit_reason)
[ "$reason" = limit_pids ] || fail "fork bomb exit reason: $reason"
cwctl run show "$id" --json > "$T/bomb.json"
grep -q '"exit_reason":	"limit_pids"' "$T/bomb.json" || fail "report: $(cat "$T/bomb.json")"
sql "SELECT data FROM journal WHERE run_id = '$id'" | grep -q limit_pids ||
    fail "journal: $(sql "SELECT kind, data FROM journal WHERE run_id = '$id'")"
cwctl run logs "$id" | grep -q 'process limit of 64 reached' || fail "log: $(cwctl run logs "$id")"
! cwctl run logs "$id" | grep -q 'forked 400' || fail "the bomb forked 400"
by=$(report_by "$id" processes)
[[ $by =~ ^$BY$ ]] || fail "bomb: processes held by '$by', expected $BY"
if [ "$by" = rlimit ]; then
	grep -q '"processes":	0' "$T/bomb.json" || fail "report limits: $(cat "$T/bomb.json")"
else
	grep -q '"processes":	64' "$T/bomb.json" || fail "report limits: $(cat "$T/bomb.json")"
fi
grep -q "\"mechanism\":	\"${by%% *}" "$T/bomb.json" || fail "report mechanism: $(grep mechanism "$T/bomb.json")"
cwctl run show "$id" | grep -q "^limits: .*processes 64 held by $by" || fail "cwctl run show: $(cwctl run show "$id")"
pass "a fork bomb ends with exit reason limit_pids, held by $by (report, run show, runs, journal)"

wait_until 20 "bomb gone" run_gone "$id" 'sleep 3171' ||
    fail "left behind: $(pgrep -af 'sleep 3171' | head -3) $(find /sys/fs/cgroup -maxdepth 6 -name "*$id*")"
pass "no process of the fork bomb is left, its cgroup is gone"

# 1b. The same in dash, which exits at the first refused fork: bounded either way. A
# cgroup records the refusal (limit_pids); the rlimit layer cannot see a refused fork,
# and the run ends as its shell did ("Cannot fork"), with 63 sleepers, not 400.
cwctl task add bomb2 --engine command --seconds 120 --prompt 'i=0; while [ $i -lt 400 ]; do
  sleep 3176 & i=$((i + 1)); done; echo "forked $i"; wait' >/dev/null
b=$(cwctl run start bomb2)
wait_until 60 "bomb2 ended" run_ended "$b" || fail "dash fork bomb run did not end: $(run_status "$b")"
reason=$(run_field "$b" exit_reason)
! cwctl run logs "$b" | grep -q 'forked 400' || fail "the dash bomb forked 400"
case $BY in
rlimit) [ "$reason" = limit_pids ] || { [ "$reason" = failed ] &&
	cwctl run logs "$b" | grep -qi 'cannot fork'; } || fail "dash bomb: $reason: $(cwctl run logs "$b" | tail -3)" ;;
*) [ "$reason" = limit_pids ] || fail "dash bomb exit reason: $reason" ;;
esac
wait_until 20 "bomb2 gone" run_gone "$b" 'sleep 3176' || fail "dash bomb left behind"
pass "a dash fork bomb that gives up at the first refused fork is bounded too ($reason); none left"

timeout 2 "$CW_BIN/cwctl" status >/dev/null || fail "cwctl status does not answer"
run_is "$g" running || fail "gate run: $(run_status "$g")"

# 2. The memory hog: 512 MiB touched, against the task's 64 MiB. A cgroup ends it
# (the kernel's OOM kill, limit_memory); RLIMIT_DATA refuses the allocation itself
# (MemoryError), so the run ends as the engine does, and the hog never had it.
cwctl task add hog --engine command --seconds 120 --memory-mb 64 --prompt 'python3 -c "
import time
b = bytearray(512 << 20)
for i in range(0, len(b), 4096): b[i] = 1
print(\"allocated\"); time.sleep(3172)"' >/dev/null
cwctl task show hog --json | grep -q '"limit_memory_mb":	64' || fail "task: $(cwctl task show hog --json)"
h=$(cwctl run start hog)
wait_until 60 "hog ended" run_ended "$h" || fail "memory hog run did not end: $(run_status "$h")"
reason=$(run_field "$h" exit_reason)
by=$(report_by "$h" memory)
[[ $by =~ ^$BY$ ]] || fail "hog: memory held by '$by', expected $BY"
! cwctl run logs "$h" | grep -q allocated || fail "the hog got its memory"
if [ "$by" = rlimit ]; then
	cwctl run logs "$h" | grep -q MemoryError || fail "hog log: $(cwctl run logs "$h" | tail -5)"
	pass "a one-process memory hog is refused its memory by RLIMIT_DATA (MemoryError; exit reason $reason)"
else
	[ "$reason" = limit_memory ] || fail "memory hog exit reason: $reason ($(cwctl run logs "$h" | tail -5))"
	cwctl run show "$h" --json | grep -q '"exit_reason":	"limit_memory"' || fail "hog report"
	sql "SELECT data FROM journal WHERE run_id = '$h'" | grep -q limit_memory || fail "hog journal"
	pass "a memory hog ends with exit reason limit_memory, held by $by (report, runs, journal)"
fi
wait_until 20 "hog gone" run_gone "$h" 'time.sleep.3172' || fail "hog left behind"
pass "no process of the memory hog is left, its cgroup is gone"

# 3. Three processes of 40 MiB each: every one under the run's 64 MiB, together over
# it. Both layers end the run with limit_memory (the cgroup by an OOM kill, the rlimit
# layer by the runner's count of the run's resident memory).
cwctl task add hogs --engine command --seconds 120 --memory-mb 64 --prompt 'for i in 1 2 3; do python3 -c "
import time
b = bytearray(40 << 20)
for i in range(0, len(b), 4096): b[i] = 1
print(\"holding\", flush=True); time.sleep(3174)" & done; wait' >/dev/null
h=$(cwctl run start hogs)
wait_until 60 "hogs ended" run_ended "$h" || fail "memory hogs run did not end: $(run_status "$h")"
reason=$(run_field "$h" exit_reason)
[ "$reason" = limit_memory ] || fail "memory hogs exit reason: $reason ($(cwctl run logs "$h" | tail -5))"
by=$(report_by "$h" memory)
[[ $by =~ ^$BY$ ]] || fail "hogs: memory held by '$by', expected $BY"
sql "SELECT data FROM journal WHERE run_id = '$h'" | grep -q limit_memory || fail "hogs journal"
cwctl run logs "$h" | grep -q 'memory limit of 64 MiB reached' || fail "hogs log: $(cwctl run logs "$h" | tail -5)"
wait_until 20 "hogs gone" run_gone "$h" 'time.sleep.3174' || fail "hogs left behind"
pass "three processes under the limit each, over it together: limit_memory, held by $by; none left"

timeout 2 "$CW_BIN/cwctl" status >/dev/null || fail "cwctl status does not answer"
touch "$(run_field "$g" worktree)/go"
wait_until 20 "gate done" run_ended "$g" || fail "gate did not end"
[ "$(run_status "$g")" = completed ] || fail "gate: $(run_status "$g")"
pass "the daemon answered throughout and the concurrent run completed"

# 4. A runner killed hard leaves its run (and its cgroup, if any) to the daemon, which
# ends it.
cwctl task add orphan --engine command --prompt 'sleep 3173 & sleep 3173 & echo ready; wait' >/dev/null
o=$(cwctl run start orphan)
wait_until 10 "orphan running" sh -c "'$CW_BIN/cwctl' run logs '$o' | grep -q ready" ||
    fail "orphan run did not start"
[ "$BY" = rlimit ] || [ -n "$(find /sys/fs/cgroup -maxdepth 6 -type d -name "*$o*")" ] ||
    fail "no cgroup for $o"
kill -KILL "$(run_field "$o" runner_pid)"
wait_until 20 "orphan ended" run_ended "$o" || fail "run did not end: $(run_status "$o")"
wait_until 20 "orphan gone" run_gone "$o" 'sleep 3173' ||
    fail "left behind: $(pgrep -af 'sleep 3173') $(find /sys/fs/cgroup -maxdepth 6 -name "*$o*")"
pass "a runner killed hard: the daemon ends what is left and removes the run's cgroup"

# 5. A bad per-task value is refused by name.
out=$(cwctl task add bad --engine command --prompt true --processes 1 2>&1) && fail "processes 1 accepted"
grep -q limit_processes <<<"$out" || fail "error: $out"
pass "a per-task limit out of range is refused, naming the field"

# 6. No layer can hold the limits (emulated: CW_TEST_LIMITS_NO_LAYER=1, which only the
# tests set, makes the runner find neither a cgroup nor the rlimit layer; the kernel
# here offers both): the run is refused, exit 3, and the message names what is missing
# and cwctl doctor. Nothing of it ran.
stop_daemon
CW_TEST_LIMITS_NO_LAYER=1 start_daemon --stop-grace 1
cwctl task add nolayer --engine command --prompt 'touch ran; echo ran' >/dev/null
rc=0; out=$(cwctl run start nolayer --wait 2>&1) || rc=$?
[ $rc -eq 3 ] || fail "no layer: exit $rc: $out"
n=$(sql "SELECT id FROM runs WHERE task_id = (SELECT id FROM tasks WHERE name = 'nolayer')")
[ "$(run_status "$n")" = refused ] || fail "no layer: status $(run_status "$n")"
cwctl run show "$n" --json | grep -q 'no layer can hold this run.s processes and memory limit' ||
    fail "no layer report: $(cwctl run show "$n" --json)"
cwctl run show "$n" --json | grep -q 'cwctl doctor' || fail "no layer: no pointer to cwctl doctor"
! cwctl run logs "$n" | grep -qx ran || fail "the refused run ran"
pass "no layer for the limits: refused, exit 3, naming what is missing and cwctl doctor; nothing ran"

# 7. The loud opt-in: with limits.allow_unenforced: true the same run runs, and its
# report lists each limit not enforced.
printf 'api_port: 0\nlimits:\n  processes: 64\n  allow_unenforced: true\n' > "$CLOCKWORK_HOME/config.yaml"
stop_daemon
CW_TEST_LIMITS_NO_LAYER=1 start_daemon --stop-grace 1
rc=0; out=$(cwctl run start nolayer --wait 2>&1) || rc=$?
[ $rc -eq 0 ] || fail "allow_unenforced: exit $rc: $out"
n=$(sql "SELECT id FROM runs WHERE task_id = (SELECT id FROM tasks WHERE name = 'nolayer') AND status = 'completed'")
cwctl run show "$n" --json > "$T/unenf.json"
grep -q 'limits: processes (64) not enforced' "$T/unenf.json" || fail "unenforced report: $(cat "$T/unenf.json")"
grep -q 'limits: memory (8192 MiB) not enforced' "$T/unenf.json" || fail "unenforced memory: $(cat "$T/unenf.json")"
[ "$(report_by "$n" processes)" = none ] || fail "unenforced by: $(report_by "$n" processes)"
cwctl run show "$n" | grep -q '^limits: .*processes 64 NOT ENFORCED' || fail "run show: $(cwctl run show "$n")"
cwctl run show "$n" | grep -q '^not enforced: limits: processes (64) not enforced' || fail "run show ne"
pass "limits.allow_unenforced: true runs it, and the report lists each limit not enforced"
