#!/usr/bin/env bash
# Runs outlive clockworkd (SPEC R1), with the real sandboxed cw-runner on a repository:
#  1. SIGTERM to the daemon mid-run: the run goes on; the run ends while no daemon is
#     there; the restarted daemon re-attaches, takes the report the runner kept, imports
#     the run's branch, and the report is whole (completed, imported, diffstat).
#  2. SIGKILL to the daemon mid-run: the restarted daemon re-attaches while the run is
#     still working; it then ends normally, reported and imported.
#  3. The runner is gone too by the time the daemon comes back: the daemon finishes the
#     run from the report file the runner left, and imports its work.
. "${CW_SRC:?}/test/integration/daemon_lib.bash" || exit 1
mkdir -p "$T/pids"
new_repo "$T/repo"
base=$(git -C "$T/repo" rev-parse HEAD)
# The command waits for a go file the test puts in the run's own .git (visible to both,
# and not part of the work), then edits file.txt and commits nothing: the seal does.
printf 'api_port: 0\n' > "$CLOCKWORK_HOME/config.yaml"

runner_alive() { kill -0 "$(run_field "$1" runner_pid)" 2>/dev/null; }
check_done() {	# check_done RUN: completed, reported whole, imported into the repository
	local id=$1 final
	[ "$(run_status "$id")" = completed ] || fail "run $id: $(run_status "$id")"
	final=$(run_field "$id" final_commit)
	[ -n "$final" ] && [ "$final" != "$base" ] || fail "run $id: final commit '$final'"
	[ "$(git -C "$T/repo" rev-parse "clockwork/edit/$id")" = "$final" ] || fail "run $id: branch not imported"
	git -C "$T/repo" show "$final:file.txt" | grep -q "edited by $id" || fail "run $id: the edit is not in the commit"
	run_field "$id" report > "$T/report.json"
	grep -q '"exit_reason":"completed"' "$T/report.json" || fail "run $id: report exit reason"
	grep -q '"imported":true' "$T/report.json" || fail "run $id: report says not imported"
	grep -q '"files_changed":1' "$T/report.json" || fail "run $id: report diffstat"
	[ ! -e "$CLOCKWORK_HOME/runs/$id.report.json" ] || fail "run $id: report file left behind"
	[ ! -e "$CLOCKWORK_HOME/runs/$id.sock" ] || fail "run $id: control socket left behind"
	grep -q "edited by $id" "$(run_field "$id" log_path)" || fail "run $id: log lost the run's output"
}

start_daemon --stop-grace 1
cwctl task add edit --engine command --repo "$T/repo" --mode acceptEdits --seconds 120 --prompt \
    'while [ ! -e .git/go ]; do sleep 0.05; done; echo "edited by $CW_RUN_ID" >> file.txt; echo "edited by $CW_RUN_ID"' >/dev/null
go() { touch "$(run_field "$1" worktree)/.git/go"; }

# 1. SIGTERM; the run ends while the daemon is away.
id=$(cwctl run start edit)
wait_until 20 "run running" run_is "$id" running || fail "run did not start"
echo "$(run_field "$id" runner_pid)" > "$T/pids/r1"
kill -TERM "$DPID"; rc=0; wait "$DPID" || rc=$?; DPID=
[ $rc -eq 0 ] || fail "clockworkd exit $rc after SIGTERM"
runner_alive "$id" || fail "the runner died with clockworkd"
go "$id"
wait_until 30 "the report file" test -s "$CLOCKWORK_HOME/runs/$id.report.json" ||
    fail "the runner kept no report while the daemon was away"
runner_alive "$id" || fail "the runner did not wait for a daemon to take its report"
rm -f "$CLOCKWORK_HOME/clockworkd.port"
start_daemon --stop-grace 1
wait_until 30 "run $id ended" run_ended "$id" || fail "run $id did not end after re-attach"
check_done "$id"
wait_until 10 "runner exit" sh -c "! kill -0 $(cat "$T/pids/r1") 2>/dev/null" || fail "runner lingered"
[ "$(sql "SELECT count(*) FROM journal WHERE run_id='$id' AND kind='run_reattached'")" = 1 ] ||
    fail "no run_reattached in the journal"
pass "SIGTERM: the run went on, ended while the daemon was away; re-attached, reported whole, imported"

# 2. SIGKILL; the run is still working when the daemon comes back.
id=$(cwctl run start edit)
wait_until 20 "run running" run_is "$id" running || fail "run did not start"
echo "$(run_field "$id" runner_pid)" > "$T/pids/r2"
kill -KILL "$DPID"; wait "$DPID" 2>/dev/null || true; DPID=
runner_alive "$id" || fail "the runner died with clockworkd"
rm -f "$CLOCKWORK_HOME/clockworkd.port"
start_daemon --stop-grace 1
[ "$(run_status "$id")" = running ] || fail "run after restart: $(run_status "$id")"
go "$id"
wait_until 30 "run $id ended" run_ended "$id" || fail "run $id did not end"
check_done "$id"
pass "SIGKILL: the restarted daemon re-attached to the working run; it ended reported whole and imported"

# 3. Daemon and then the runner gone: the report file is all that is left.
id=$(cwctl run start edit)
wait_until 20 "run running" run_is "$id" running || fail "run did not start"
rpid=$(run_field "$id" runner_pid); echo "$rpid" > "$T/pids/r3"
kill -KILL "$DPID"; wait "$DPID" 2>/dev/null || true; DPID=
go "$id"
wait_until 30 "the report file" test -s "$CLOCKWORK_HOME/runs/$id.report.json" || fail "no report file"
kill -KILL "$rpid"
wait_until 10 "runner gone" sh -c "! kill -0 $rpid 2>/dev/null" || fail "runner survived SIGKILL"
rm -f "$CLOCKWORK_HOME/clockworkd.port"
start_daemon --stop-grace 1
wait_until 30 "run $id ended" run_ended "$id" || fail "run $id was not finished from its report file"
check_done "$id"
pass "runner gone too: the run was finished from the report it left, and its work imported"
# 4. The log's cap holds while the runner writes the log itself (no daemon attached).
stop_daemon
printf 'api_port: 0\nrun_log_max_bytes: 65536\n' > "$CLOCKWORK_HOME/config.yaml"
start_daemon --stop-grace 1
cwctl task add loud --engine command --seconds 120 --prompt \
    'while [ ! -e go ]; do sleep 0.05; done; yes "output line of a loud run" | head -n 100000; echo done-loud' >/dev/null
id=$(cwctl run start loud)
wait_until 20 "run running" run_is "$id" running || fail "run did not start"
echo "$(run_field "$id" runner_pid)" > "$T/pids/r4"
kill -KILL "$DPID"; wait "$DPID" 2>/dev/null || true; DPID=
touch "$(run_field "$id" worktree)/go"
wait_until 30 "the report file" test -s "$CLOCKWORK_HOME/runs/$id.report.json" || fail "no report file"
rm -f "$CLOCKWORK_HOME/clockworkd.port"
start_daemon --stop-grace 1
wait_until 30 "run $id ended" run_ended "$id" || fail "run $id did not end"
log=$(run_field "$id" log_path)
size=$(stat -c %s "$log")
[ "$size" -le $((65536 + 4096)) ] || fail "log of $size bytes past its cap of 65536"
grep -q "reached its cap of 65536 bytes" "$log" || fail "the log does not say it was capped"
pass "the log's cap (64 KiB) held while the runner wrote it with no daemon attached ($size bytes)"
echo "daemon_restart: $PASSED passed"
