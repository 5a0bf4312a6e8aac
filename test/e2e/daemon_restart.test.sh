#!/usr/bin/env bash
# Runs outlive clockworkd with the real Claude Code CLI (SPEC R1, issue 10): a claude run
# on a repository asks, through the permission-prompt tool, to run a Bash command; while
# the approval is pending, clockworkd is stopped (SIGTERM; then, in a second run,
# SIGKILL) and started again. The run must still be running, the same approval (same id)
# must be pending and answerable with cwctl approve, the command must then run, and the
# run must end completed with its whole report and its work imported on its branch.
set -euo pipefail
: "${CW_BIN:?}" "${CW_SRC:?}"

bindir=$("$CW_SRC/scripts/setup-engines" | tail -n 1)
E2E_NAME=restart
. "$CW_SRC/test/e2e/lib/harness.bash"

cat > "$T/scenarios.json" <<'EOF'
{
 "term": [
  {"tool": "Bash", "input": {"command": "sh -c 'echo kept-term > kept.txt'"}},
  {"text": "term scenario done"}
 ],
 "kill": [
  {"tool": "Bash", "input": {"command": "sh -c 'echo kept-kill > kept.txt'"}},
  {"text": "kill scenario done"}
 ]
}
EOF
node "$CW_SRC/test/fixtures/model-server.js" "$T/scenarios.json" "$T/mport" "$T/requests.jsonl" \
    2> "$T/model-server.err" &
pids+=($!)
wait_until 15 "model server" test -s "$T/mport" || die "model server did not start"

printf '%s\n' 'api_port: 0' 'approvals:' '  ask: all' 'engines:' '  claude:' \
    "    base_url: http://127.0.0.1:$(cat "$T/mport")" > "$CLOCKWORK_HOME/config.yaml"
start_daemon() {
	rm -f "$CLOCKWORK_HOME/clockworkd.port"
	PATH="$bindir:$PATH" ANTHROPIC_API_KEY=sk-ant-e2e-dummy "$CW_BIN/clockworkd" --foreground >> "$T/daemon.out" 2>&1 &
	DPID=$!
	wait_until 15 "clockworkd" test -s "$CLOCKWORK_HOME/clockworkd.port" || die "clockworkd did not start"
	wait_until 10 "API" "$CW_BIN/cwctl" status || die "clockworkd does not answer"
}
cw() { "$CW_BIN/cwctl" "$@"; }
sql() { sqlite3 -cmd '.timeout 5000' "$CLOCKWORK_HOME/clockwork.db" "$@"; }
pending_of() { sql "SELECT id FROM approvals WHERE run_id='$1' AND state='pending'"; }
has_pending() { [ -n "$(pending_of "$1")" ]; }
ended() { [ -n "$(sql "SELECT ended_at FROM runs WHERE id='$1'")" ]; }

repo="$T/repo"
mkdir -p "$repo" && git -C "$repo" init -q && echo base > "$repo/README" &&
    git -C "$repo" add README && git -C "$repo" commit -q -m base
start_daemon

for how in term kill; do
	cw task add "$how" --repo "$repo" --engine claude --mode acceptEdits --seconds 300 \
	    --prompt "SCENARIO:$how Please do the scripted steps." >/dev/null || die "task add $how"
	id=$(cw run start "$how") || die "run start $how"
	wait_until 120 "$how: approval pending" has_pending "$id" ||
	    die "$how: no approval became pending"
	aid=$(pending_of "$id")
	rpid=$(sql "SELECT runner_pid FROM runs WHERE id='$id'")
	if [ "$how" = term ]; then kill -TERM "$DPID"; else kill -KILL "$DPID"; fi
	wait "$DPID" 2>/dev/null || true
	DPID=
	if kill -0 "$rpid" 2>/dev/null; then ok "$how: the run's runner outlived clockworkd"
	else fail "$how: the runner died with clockworkd"; fi
	start_daemon
	[ "$(sql "SELECT status FROM runs WHERE id='$id'")" = running ] &&
	    ok "$how: after the restart the run is still running" ||
	    fail "$how: run after restart: $(sql "SELECT status FROM runs WHERE id='$id'")"
	if cw approvals | grep -q "$aid"; then ok "$how: the same approval ($aid) is still pending"
	else fail "$how: approval $aid is gone: $(cw approvals 2>&1)"; fi
	if cw approve "$aid" | grep -q "approval $aid allowed"; then ok "$how: approved after the restart"
	else fail "$how: cwctl approve $aid"; fi
	wait_until 120 "$how: run ended" ended "$id" ||
	    fail "$how: the run did not end"
	rep=$(sql "SELECT report FROM runs WHERE id='$id'")
	if grep -q '"exit_reason":"completed"' <<< "$rep" && grep -q '"imported":true' <<< "$rep" &&
	    grep -q '"reattached":true' <<< "$rep"; then
		ok "$how: completed, reported whole (re-attached, imported)"
	else
		fail "$how: report: $rep"
	fi
	if [ "$(git -C "$repo" show "clockwork/$how/$id:kept.txt" 2>/dev/null)" = "kept-$how" ]; then
		ok "$how: the approved command ran and its work reached clockwork/$how/$id"
	else
		fail "$how: kept.txt is not on the run's branch"
	fi
	sql "SELECT answered_by FROM approvals WHERE id='$aid'" | grep -q '^cwctl' &&
	    ok "$how: the approval was answered by cwctl" || fail "$how: approval record"
done

echo "daemon_restart e2e: $fails failure(s)"
[ "$fails" -eq 0 ]
