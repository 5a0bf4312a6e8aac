#!/usr/bin/env bash
# The Inbox in a real browser with the real Claude Code CLI (issue 6 item 5).
#
# clockworkd runs three repository tasks with engine claude against the scripted model
# server (test/fixtures/model-server.js); each asks, through the permission-prompt
# tool, to run a Bash command that acceptEdits does not allow by itself. Debian's
# Chromium, driven by playwright-core (lib/inbox-browser.js), signs in with a
# `cwctl inbox` link and:
#   - sees no data and gets 401s before signing in; cannot reuse the code;
#   - sees the three pending approvals with their (masked) commands;
#   - cannot answer from a foreign Origin or from a page on another site;
#   - clicks Approve on one (its file appears on disk) and Deny on another (its file
#     does not); the third is left alone until its wall-clock budget ends and the
#     fail-safe deny shows in the journal view;
#   - follows a run view with its log and report, shows the run's diff (as text) and
#     merges it into the repository with the Merge button;
#   - starts a run of a task with its "Start a run" button and stops it with Stop;
#   - records every request the Inbox page makes: all go to the daemon's origin;
#   - opens a proof-of-work export whose prompt, log and diff hold script payloads and
#     secrets: no script runs, no request is made, no secret is visible;
#   - (issue 17) with the rm_root starter rule switched off, a fourth run asks to run
#     `rm -rf /`: its card shows "Destructive" and config.rm_root first, before the
#     tool and the command, ordinary cards say "Ordinary", `cwctl approvals` shows
#     "destructive (config.rm_root)", and it is denied from the page.
# Screenshots go to $CW_INBOX_SHOTS (default: <build>/inbox-shots); docs/inbox-*.png
# are copies of them.
set -euo pipefail
: "${CW_BIN:?}" "${CW_SRC:?}"

. "$CW_SRC/test/e2e/lib/browser.bash"
lib="$CW_SRC/test/e2e/lib"
E2E_NAME=inbox
. "$CW_SRC/test/e2e/lib/harness.bash"

ANT='sk-ant-api03-Xq7vLmZ2pR9sT4uW6yB8nC1dE3fG5hJ7kL9mN0pQ2rS4tU6vW8xY0zA1bC3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5bC7AA'
GHP='ghp_Nq3vLmZ2pR9sT4uW6yB8nC1dE3fG5hJ7kL9m'
PAY='<script>alert(1)</script> "><img src=x onerror=alert(1)> [x](javascript:alert(1))'
export GHP
node "$lib/inbox-scenarios.js" "$T/scenarios.json"

node "$CW_SRC/test/fixtures/model-server.js" "$T/scenarios.json" "$T/mport" "$T/requests.jsonl" \
    2> "$T/model-server.err" &
pids+=($!)
wait_until 15 "model server" test -s "$T/mport" || die "model server did not start"

printf '%s\n' 'api_port: 0' 'approvals:' '  ask: all' 'max_concurrent_runs: 5' 'engines:' '  claude:' \
    "    base_url: http://127.0.0.1:$(cat "$T/mport")" \
    'rules:' '  - id: rm_root' '    enabled: false' > "$CLOCKWORK_HOME/config.yaml"
# The engine finds claude on the daemon's PATH; the model server's address is the
# engine's base_url (which the egress proxy allows), and a dummy key comes from the
# daemon's environment.
PATH="$bindir:$PATH" ANTHROPIC_API_KEY=sk-ant-e2e-dummy "$CW_BIN/clockworkd" --foreground > "$T/daemon.out" 2>&1 &
DPID=$!
wait_until 15 "clockworkd" test -s "$CLOCKWORK_HOME/clockworkd.port" || die "clockworkd did not start"
PORT=$(cat "$CLOCKWORK_HOME/clockworkd.port")
cw() { "$CW_BIN/cwctl" "$@"; }
sql() { sqlite3 -cmd '.timeout 5000' "$CLOCKWORK_HOME/clockwork.db" "$@"; }

repo="$T/repo"
mkdir -p "$repo" && git -C "$repo" init -q && echo base > "$repo/README" &&
    git -C "$repo" add README && git -C "$repo" commit -q -m base
for t in approve deny late stop risky; do
	secs=300 wait=default
	# late: the time budget ends the run (no budget pause) and so expires its ask.
	[ $t = late ] && secs=50 wait=0
	cw task add "$t" --repo "$repo" --engine claude --mode acceptEdits --seconds $secs \
	    --budget-wait $wait \
	    --prompt "SCENARIO:$t Please do the scripted steps. $PAY key $ANT" >/dev/null ||
	    die "task add $t"
done
declare -A run
for t in approve deny late risky; do run[$t]=$(cw run start "$t") || die "run start $t"; done
ok "four claude runs started: ${run[approve]} ${run[deny]} ${run[late]} ${run[risky]}"

node -e 'require("fs").writeFileSync(process.argv[1], JSON.stringify({
  nodeModules: process.argv[2], cwctl: process.argv[3], origin: process.argv[4],
  db: process.argv[5], shots: process.argv[6], approveCmd: "allowed.txt",
  denyCmd: "denied.txt", lateCmd: "unanswered.txt", approveTask: "approve",
  riskyCmd: "rm -rf /",
  approveRun: process.argv[7], exportFile: process.argv[8], lateRun: process.argv[9],
  repo: process.argv[10], stopTask: "stop",
  secrets: ["Nq3vLmZ2pR9sT4uW6yB8", "Xq7vLmZ2pR9sT4uW6yB8"] }))' \
    "$T/browser.json" "$modules" "$CW_BIN/cwctl" "http://127.0.0.1:$PORT" \
    "$CLOCKWORK_HOME/clockwork.db" "$shots" "${run[approve]}" "$T/export.html" "${run[late]}" \
    "$repo"

# The export is made once the approved run has ended; the browser opens it from disk
# near its end and waits for it (with a deadline) until then.
ended() { [ -n "$(sql "SELECT ended_at FROM runs WHERE id='$1'")" ]; }
(
	wait_until 240 "approve run ended" ended "${run[approve]}" &&
	    "$CW_BIN/cwctl" run export "${run[approve]}" --transcript -o "$T/export.tmp" 2>/dev/null &&
	    mv "$T/export.tmp" "$T/export.html"
) &
pids+=($!)
if timeout 400 node "$lib/inbox-browser.js" "$T/browser.json" > "$T/browser.out" 2>&1; then
	ok "browser: $(tail -n 1 "$T/browser.out")"
else
	fail "browser"
	# Nothing more will answer: end the runs now rather than wait out their budgets.
	for t in approve deny late risky; do cw run stop "${run[$t]}" >/dev/null 2>&1 || true; done
fi
sed 's/^/    /' "$T/browser.out"

wt() { sql "SELECT worktree FROM runs WHERE id='$1'"; }
# Merge and Stop from the page go through the same API as cwctl: journal and audit.
if [ "$(git -C "$repo" rev-parse HEAD)" = "$(git -C "$repo" rev-parse "clockwork/approve/${run[approve]}")" ] &&
    [ -f "$repo/allowed.txt" ] && [ -z "$(git -C "$repo" status --porcelain)" ] &&
    [ "$(sql "SELECT count(*) FROM audit WHERE action='run.merge' AND actor='inbox' AND target='${run[approve]}'")" = 1 ] &&
    [ "$(sql "SELECT count(*) FROM journal WHERE kind='run_merged' AND run_id='${run[approve]}'")" = 1 ]; then
	ok "Merge in the browser: the repository's branch moved to the run's work, audited (actor inbox)"
else
	fail "merge from the Inbox: HEAD $(git -C "$repo" log --oneline -1) status $(git -C "$repo" status --porcelain)"
fi
srun=$(sql "SELECT r.id FROM runs r JOIN tasks t ON t.id = r.task_id WHERE t.name='stop'")
if [ -n "$srun" ] && [ "$(sql "SELECT count(*) FROM audit WHERE action='run.start' AND actor='inbox'")" = 1 ] &&
    [ "$(sql "SELECT status FROM runs WHERE id='$srun'")" = stopped ] &&
    [ "$(sql "SELECT count(*) FROM audit WHERE action='run.stop' AND actor='inbox' AND target='$srun'")" = 1 ]; then
	ok "Start a run and Stop in the browser: the run started and was stopped, audited (actor inbox)"
else
	fail "start/stop from the Inbox: run '$srun' $(sql "SELECT status FROM runs WHERE id='$srun'")"
fi
for t in approve deny late risky; do wait_until 90 "run $t ended" ended "${run[$t]}" || fail "run $t did not end"; done
if [ "$(sql "SELECT state || ' ' || risk || ' ' || risk_rule FROM approvals WHERE run_id='${run[risky]}'")" = "denied destructive config.rm_root" ]; then
	ok "rm -rf / was stored as a destructive approval raised by config.rm_root, and denied"
else
	fail "risky approval: $(sql "SELECT state, risk, risk_rule FROM approvals WHERE run_id='${run[risky]}'")"
fi
if [ "$(sql "SELECT risk FROM approvals WHERE run_id='${run[approve]}'")" = ordinary ]; then
	ok "an ordinary command's approval is stored as ordinary"
else
	fail "approve run's risk: $(sql "SELECT risk FROM approvals WHERE run_id='${run[approve]}'")"
fi
if grep -q 'window.__pwned=1' "$(wt "${run[approve]}")/allowed.txt" 2>/dev/null; then
	ok "Approve in the browser: the command ran (allowed.txt is on disk)"
else
	fail "approved command's file is missing"
fi
if [ ! -e "$(wt "${run[deny]}")/denied.txt" ]; then ok "Deny in the browser: denied.txt was not written"
else fail "denied command ran"; fi
if [ ! -e "$(wt "${run[late]}")/unanswered.txt" ]; then ok "unanswered: unanswered.txt was not written"
else fail "unanswered command ran"; fi
if [ "$(sql "SELECT count(*) FROM journal WHERE run_id='${run[late]}' AND kind IN ('approval_timeout', 'approval_expired')")" -ge 1 ] &&
    [ "$(sql "SELECT state FROM approvals WHERE run_id='${run[late]}'")" = expired ]; then
	ok "the fail-safe deny is in the safety journal"
else
	fail "no fail-safe deny recorded for the late run"
fi
if [ "$(sql "SELECT answered_by FROM approvals WHERE run_id='${run[approve]}'")" = inbox ]; then
	ok "the approval was answered by the Inbox"
else
	fail "answered_by: $(sql "SELECT answered_by FROM approvals WHERE run_id='${run[approve]}'")"
fi
aid=$(sql "SELECT id FROM approvals WHERE run_id='${run[approve]}'")
set +e; out=$(cw approve "$aid" 2>&1); rc=$?; set -e
if [ $rc -eq 3 ] && grep -q 'already answered' <<< "$out"; then
	ok "cwctl approve after the Inbox answered: already answered (exit 3)"
else
	fail "second answer: $rc $out"
fi
# The readable transcript (issue 11): what the real Claude Code did, in the shared
# vocabulary, through the daemon; the same approval id in the request, the answer,
# the journal and the runner's report.
cw run logs "${run[approve]}" > "$T/transcript.txt" 2>&1 || true
if grep -q "^tool     Bash  " "$T/transcript.txt" && grep -q "^WAITING  approval $aid" "$T/transcript.txt" &&
    grep -q "^answer   approval $aid allowed by inbox" "$T/transcript.txt" &&
    grep -q "^final    " "$T/transcript.txt" && grep -q '^usage    \$' "$T/transcript.txt"; then
	ok "cwctl run logs: the readable transcript (tool call, wait, answer, final message, usage)"
else
	fail "readable transcript: $(head -c 3000 "$T/transcript.txt")"
fi
if [ "$(sql "SELECT count(*) FROM journal WHERE run_id='${run[approve]}' AND data LIKE '%$aid%'")" -ge 2 ] &&
    [ "$(sql "SELECT count(*) FROM run_events WHERE run_id='${run[approve]}' AND kind='report' AND data LIKE '%\"id\":\"$aid\"%'")" -eq 1 ]; then
	ok "one approval id in the request, the answer, the journal and the report"
else
	fail "approval ids differ between the journal, the answer and the report ($aid)"
fi
cw run logs --raw "${run[approve]}" > "$T/raw.txt" 2>&1 || true
if grep -q '"type":"assistant"' "$T/raw.txt"; then ok "cwctl run logs --raw: the engine's own lines"
else fail "run logs --raw: $(head -c 500 "$T/raw.txt")"; fi
cw run show "${run[approve]}" > "$T/show.txt" 2>&1 || true
if grep -q '^result:' "$T/show.txt" && grep -q '^engine:       claude' "$T/show.txt" &&
    grep -q '^floor:        PreToolUse hook' "$T/show.txt"; then
	ok "cwctl run show: the engine, its floor and the final message"
else
	fail "run show: $(head -c 2000 "$T/show.txt")"
fi
if [ -s "$T/export.html" ] && ! grep -q 'sk-ant-e2e-dummy\|Xq7vLmZ2pR9sT4uW6yB8\|Nq3vLmZ2pR9sT4uW6yB8' "$T/export.html"; then
	ok "the export file holds no secret"
else
	fail "export missing or holds a secret"
fi
if [ "$(sql "SELECT count(*) FROM audit WHERE action='run.export' AND target='${run[approve]}'")" -ge 1 ]; then
	ok "the export is in the audit log"
else
	fail "export not audited"
fi

[ $fails -eq 0 ] || { tail -n 30 "$T/daemon.out"; exit 1; }
echo "inbox: all passed; screenshots in $shots"
