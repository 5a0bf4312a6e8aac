#!/usr/bin/env bash
# Issue 23, with the real Claude Code (scripts/setup-engines) against
# test/fixtures/model-server.js: a task repository's committed .claude/settings.json
# that allows everything (Bash, Bash(npm test:*)), sets
# defaultMode bypassPermissions and denies Bash(npm run deploy:*) grants nothing by
# itself, and after an import grants exactly what was shown:
#   before    a task asking every risk: the agent's npm run lint and npm test are each
#             asked (the engine never read the repository's settings: it would have run
#             them without calling the approval tool)
#   import    --from-repo shows the rules and a digest; --import-repo DIGEST imports
#             npm test (allow) and npm run deploy (ask), not the bare Bash
#   after     the next run's npm test runs unasked (auto_allow task_rule:npm test),
#             npm run lint is still asked (the bare Bash was not imported); with the default approvals.ask, npm run deploy
#             (ordinary) is asked: the imported deny
set -euo pipefail
: "${CW_BIN:?}" "${CW_SRC:?}"
bindir=$("$CW_SRC/scripts/setup-engines" | tail -n 1)
export PATH="$bindir:$PATH"
E2E_NAME=repo-rules
. "$CW_SRC/test/e2e/lib/harness.bash"
set +o pipefail
check() { local what=$1; shift; if "$@"; then ok "$what"; else fail "$what"; fi; }

python3 - "$T" <<'PY'
import json, sys
T = sys.argv[1]
two = [{"tool": "Bash", "input": {"command": "npm run lint"}},
       {"tool": "Bash", "input": {"command": "npm test"}},
       {"text": "two done"}]
deploy = [{"tool": "Bash", "input": {"command": "npm run deploy"}}, {"text": "deploy done"}]
json.dump({"two": two, "deploy": deploy}, open(T + "/claude.json", "w"))
PY
repo="$T/repo"
mkdir -p "$repo/.claude"
cat > "$repo/.claude/settings.json" <<'JSON'
{"permissions": {"allow": ["Bash", "Bash(npm test:*)"],
 "deny": ["Bash(npm run deploy:*)"], "defaultMode": "bypassPermissions"}}
JSON
printf '{"name":"t","version":"1.0.0","scripts":{"test":"true","lint":"true","deploy":"true"}}\n' > "$repo/package.json"
(cd "$repo" && git init -q . && git add -A && git commit -q -m base) || die "repo"

node "$CW_SRC/test/fixtures/model-server.js" "$T/claude.json" "$T/mport" "$T/mreq.jsonl" \
    2> "$T/model-server.err" &
pids+=($!)
wait_until 15 "model server" test -s "$T/mport" || die "the model server did not start"
printf '%s\n' 'api_port: 0' 'engines:' '  claude:' \
    "    base_url: http://127.0.0.1:$(cat "$T/mport")" > "$CLOCKWORK_HOME/config.yaml"
ANTHROPIC_API_KEY=sk-ant-e2e-dummy "$CW_BIN/clockworkd" --foreground > "$T/daemon.out" 2>&1 &
DPID=$!
wait_until 15 "clockworkd" test -s "$CLOCKWORK_HOME/clockworkd.port" || die "clockworkd did not start"
cw() { "$CW_BIN/cwctl" "$@"; }
sql() { sqlite3 -cmd '.timeout 5000' "$CLOCKWORK_HOME/clockwork.db" "$@"; }
ended() { [ -n "$(sql "SELECT ended_at FROM runs WHERE id='$1'")" ]; }
asked_cmds() { sql "SELECT json_extract(input, '$.command') FROM approvals WHERE run_id='$1' ORDER BY created_at"; }
# Deny every approval of run $1 as it comes, until the run ends.
deny_all() {
	local end=$(( $(date +%s) + 170 )) a
	while ! ended "$1" && [ "$(date +%s)" -lt $end ]; do
		for a in $(sql "SELECT id FROM approvals WHERE run_id='$1' AND state='pending'"); do
			cw deny "$a" --message "denied by the e2e test" > /dev/null || true
		done
		sleep 0.2
	done
	ended "$1"
}
cw task add t --repo "$repo" --engine claude --mode acceptEdits --seconds 240 --turns 20 \
    --prompt "SCENARIO:two Please do the scripted steps." > /dev/null || die "task add"
cw task ask t all > /dev/null || die "task ask"

r=$(cw run start t)
deny_all "$r" || fail "before: the run did not end"
check "before: npm run lint and npm test were both asked (got: $(asked_cmds "$r" | tr '\n' ','))" \
    test "$(asked_cmds "$r" | tr '\n' ',')" = "npm run lint,npm test,"
check "before: nothing ran unasked" test -z "$(sql "SELECT id FROM journal WHERE run_id='$r' AND kind='auto_allow'")"

cw task rules t --from-repo > "$T/show.out" || fail "--from-repo"
sed 's/^/    /' "$T/show.out"
digest=$(sed -n 's/.*--import-repo \([0-9a-f]\{64\}\)$/\1/p' "$T/show.out")
cw task rules t --import-repo "$digest" > "$T/import.out" || fail "--import-repo"
check "import: npm test allowed, npm run deploy asked, nothing else" \
    test "$(sql "SELECT group_concat(family || ':' || kind, ',') FROM (SELECT family, kind FROM task_rules ORDER BY family)")" = "npm run deploy:ask,npm test:allow"

r=$(cw run start t)
deny_all "$r" || fail "after: the run did not end"
check "after: only npm run lint was asked (got: $(asked_cmds "$r" | tr '\n' ','))" \
    test "$(asked_cmds "$r" | tr '\n' ',')" = "npm run lint,"
check "after: npm test ran unasked, journaled auto_allow task_rule:npm test" \
    bash -c "sqlite3 '$CLOCKWORK_HOME/clockwork.db' \"SELECT data FROM journal WHERE run_id='$r' AND kind='auto_allow'\" | grep -q '\"rule\":\"task_rule:npm test\"'"

cw task edit t --prompt "SCENARIO:deploy Please do the scripted steps." > /dev/null || fail "task edit"
cw task ask t default > /dev/null || fail "task ask default"
r=$(cw run start t)
deny_all "$r" || fail "deploy: the run did not end"
check "deploy: npm run deploy (ordinary) was asked: the imported deny" \
    test "$(sql "SELECT json_extract(input, '$.command') || ' ' || risk FROM approvals WHERE run_id='$r'")" = "npm run deploy ordinary"

[ "$fails" -eq 0 ] || { echo "$fails check(s) failed"; tail -n 20 "$T/daemon.out"; exit 1; }
echo "all repo_rules checks passed"
