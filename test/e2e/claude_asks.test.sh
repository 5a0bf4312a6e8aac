#!/usr/bin/env bash
# acceptEdits' own shortcut must not bypass the risk policy (issue 23, SPEC A1). Claude
# Code in acceptEdits runs common filesystem commands in its working directory (mkdir,
# touch, rm, rmdir, mv, cp, sed) without calling its --permission-prompt-tool, so on its
# own it would never ask the bridge about them. The floor hook (cw-floor-hook) sees every
# Bash call first; when the policy would ask, it answers Claude Code with
# permissionDecision "ask", and Claude Code asks the approval tool, which asks a person.
#
# The real Claude Code (scripts/setup-engines) run by clockworkd against
# test/fixtures/model-server.js, in acceptEdits:
#   rmsub     default policy, and the ask rule "rm" a person imported from the
#             repository's .claude/settings.json (permissions.deny Bash(rm:*), cwctl task
#             rules --import-repo): rm -rf sub (a directory of the worktree holding a
#             file; risk ordinary, the floor counts only a recursive delete outside the
#             worktree as destructive) is asked (risk_rule task_ask:rm), answered deny,
#             and sub/keep.txt is still there; no auto_allow for it
#   touchall  approvals.ask: all for the task (cwctl task ask T all): touch x.txt is
#             asked (risk ordinary); answered allow, it runs (x.txt exists)
#   mkdir     control, default policy: mkdir build, then cp sub/keep.txt build/, run
#             with zero approvals asked (the unattended promise); build/keep.txt exists
set -euo pipefail
: "${CW_BIN:?}" "${CW_SRC:?}"
bindir=$("$CW_SRC/scripts/setup-engines" | tail -n 1)
export PATH="$bindir:$PATH"
E2E_NAME=claude_asks
. "$CW_SRC/test/e2e/lib/harness.bash"
set +o pipefail
check() { local what=$1; shift; if "$@"; then ok "$what"; else fail "$what"; fi; }

python3 - "$T" <<'PY'
import json, sys
T = sys.argv[1]
b = lambda c: {"tool": "Bash", "input": {"command": c}}
json.dump({"rmsub": [b("rm -rf sub"), {"text": "rmsub done"}],
           "touch": [b("touch x.txt"), {"text": "touch done"}],
           "mkdir": [b("mkdir build"), b("cp sub/keep.txt build/"), {"text": "mkdir done"}]},
          open(T + "/claude.json", "w"))
PY

node "$CW_SRC/test/fixtures/model-server.js" "$T/claude.json" "$T/mport" "$T/mreq.jsonl" \
    2> "$T/model-server.err" &
pids+=($!)
wait_until 15 "model server" test -s "$T/mport" || die "the model server did not start"
# Default settings: config.yaml only says where the scripted model server is.
printf '%s\n' 'api_port: 0' 'engines:' '  claude:' \
    "    base_url: http://127.0.0.1:$(cat "$T/mport")" 'prices:' \
    '  claude-e2e: {input: 10, output: 50, cache_write: 12.5, cache_read: 1}' \
    > "$CLOCKWORK_HOME/config.yaml"
ANTHROPIC_API_KEY=sk-ant-e2e-dummy "$CW_BIN/clockworkd" --foreground > "$T/daemon.out" 2>&1 &
DPID=$!
wait_until 15 "clockworkd" test -s "$CLOCKWORK_HOME/clockworkd.port" || die "clockworkd did not start"
cw() { "$CW_BIN/cwctl" "$@"; }
sql() { sqlite3 -cmd '.timeout 5000' "$CLOCKWORK_HOME/clockwork.db" "$@"; }
ended() { [ -n "$(sql "SELECT ended_at FROM runs WHERE id='$1'")" ]; }
wt() { sql "SELECT worktree FROM runs WHERE id='$1'"; }

repo="$T/repo"
mkdir -p "$repo/sub" "$repo/.claude" && echo keep > "$repo/sub/keep.txt" &&
    echo '{"permissions": {"deny": ["Bash(rm:*)"]}}' > "$repo/.claude/settings.json" &&
    (cd "$repo" && git init -q . && git add -A && git commit -q -m base) || die "the repository"
for t in rmsub:rmsub touchall:touch mkdir:mkdir; do
	cw task add "${t%%:*}" --repo "$repo" --engine claude --mode acceptEdits \
	    --seconds 180 --turns 10 --prompt "SCENARIO:${t#*:} Please do the scripted step." \
	    > /dev/null || die "task add ${t%%:*}"
done
cw task ask touchall all > /dev/null || die "cwctl task ask touchall all"
digest=$(cw task rules rmsub --from-repo | sed -n 's/.*--import-repo \([0-9a-f]\{64\}\)$/\1/p')
cw task rules rmsub --import-repo "$digest" > /dev/null || die "cwctl task rules --import-repo"
[ "$(sql "SELECT group_concat(family || ':' || kind) FROM task_rules")" = rm:ask ] ||
    die "the imported rules are not just rm:ask"

# answer_all RUN approve|deny: answer each approval of the run as it comes, until it ends.
answer_all() {
	local end=$(( $(date +%s) + 170 )) a
	while ! ended "$1" && [ "$(date +%s)" -lt $end ]; do
		for a in $(sql "SELECT id FROM approvals WHERE run_id='$1' AND state='pending'"); do
			cw "$2" "$a" > /dev/null 2>&1 || true
		done
		sleep 0.2
	done
	ended "$1"
}
asked() {	# asked RUN COMMAND RISK [RISK_RULE]: an approval of the run for that command
	python3 - "$CLOCKWORK_HOME/clockwork.db" "$@" <<'PY'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("SELECT input, risk, risk_rule FROM approvals WHERE run_id = ? AND "
                  "tool = 'Bash'", (sys.argv[2],)).fetchall()
sys.exit(0 if any(json.loads(i or "{}").get("command") == sys.argv[3] and r == sys.argv[4]
                  and (len(sys.argv) < 6 or rr == sys.argv[5]) for i, r, rr in rows) else 1)
PY
}
status() { sql "SELECT status FROM runs WHERE id='$1'"; }
napprovals() { sql "SELECT count(*) FROM approvals WHERE run_id='$1'"; }

r=$(cw run start rmsub)
answer_all "$r" deny || fail "rmsub: the run did not end"
check "rmsub: the run completed" test "$(status "$r")" = completed
check "rmsub: rm -rf sub was asked (risk ordinary, task_ask:rm)" \
    asked "$r" "rm -rf sub" ordinary task_ask:rm
check "rmsub: answered deny, sub/keep.txt is still in the worktree" test -f "$(wt "$r")/sub/keep.txt"
check "rmsub: no auto_allow" test -z "$(sql "SELECT id FROM journal WHERE run_id='$r' AND kind='auto_allow'")"

r=$(cw run start touchall)
answer_all "$r" approve || fail "touchall: the run did not end"
check "touchall: the run completed" test "$(status "$r")" = completed
check "touchall: touch x.txt was asked under approvals.ask: all (risk ordinary)" \
    asked "$r" "touch x.txt" ordinary
check "touchall: answered allow, it ran (x.txt exists)" test -f "$(wt "$r")/x.txt"

r=$(cw run start mkdir)
answer_all "$r" deny || fail "mkdir: the run did not end"
check "mkdir: the run completed" test "$(status "$r")" = completed
n=$(napprovals "$r")
check "mkdir: zero approvals asked (got $n)" test "$n" -eq 0
check "mkdir: mkdir build and cp ran (build/keep.txt exists)" test -f "$(wt "$r")/build/keep.txt"

[ "$fails" -eq 0 ] || { echo "$fails check(s) failed"; tail -n 20 "$T/daemon.out"; exit 1; }
echo "all claude_asks checks passed"
