#!/usr/bin/env bash
# Issue 23: Claude Code's own permissions.allow/deny in a task's repository are data.
# A real git repository commits .claude/settings.json with allow rules (Bash(npm
# test:*), a bare Bash, Read(...)) and deny/ask rules (Bash(npm run deploy:*), ...).
# A fake Claude Code inside a real sandboxed run (cw-runner, its bridge) asks the
# approval tool about one Bash command per run and prints the answer:
#  1. [attack] before any import, the repository's allow grants nothing: with the task
#     asking about every risk, its npm test is asked, not run unasked;
#  2. --from-repo lists every rule and what it would become, with a digest; a bare
#     Bash, Read and a mid-command wildcard are listed NOT imported with a reason;
#     showing changes no rule; an uncommitted edit of the settings changes nothing
#     shown (the committed tree is read);
#  3. --import-repo DIGEST imports exactly that: the rules show in task rules and
#     task show with where they came from, the audit log names who, the commit and
#     the rules; importing twice changes nothing;
#  4. a run's npm test (asking about every risk) now runs unasked: journal
#     auto_allow naming task_rule:npm test, no approval stored;
#  5. a run's npm run deploy (default approvals.ask, risk ordinary) is asked: the
#     imported deny made the family an ask rule, which the approval names;
#  6. the bare Bash was not imported: a run's ls (asking every risk) is still asked;
#  7. a new commit changing the settings: the old digest is refused (exit 3), nothing
#     changed; a malformed or symbolic-link settings file is refused naming the file.
. "${CW_SRC:?}/test/integration/daemon_lib.bash" || exit 1
command -v python3 >/dev/null || fail "python3 is needed"
command -v git >/dev/null || fail "git is needed"
set +e

: "${CW_TEST_TMP:?CW_TEST_TMP must name a scratch directory outside /tmp}"
FB=$(mktemp -d "$CW_TEST_TMP/repo-rules-bin.XXXXXX")
trap 'rc=$?; rm -rf "$FB"; (exit $rc); cleanup' EXIT
# The fake Claude Code: one call to the bridge's approval tool, the Bash command its
# prompt names; the answer (held until a person answers) goes to its output.
cat > "$FB/call.py" <<'PY'
import json, socket, sys
port, token, cmd = int(sys.argv[1]), sys.argv[2].encode(), sys.argv[3]
body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                   "params": {"name": "approve", "arguments": {
                       "tool_name": "Bash", "input": {"command": cmd}}}}).encode()
req = (b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nX-Clockwork-Run: " % port + token +
       b"\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream"
       b"\r\nContent-Length: %d\r\n\r\n" % len(body)) + body
s = socket.create_connection(("127.0.0.1", port))
s.settimeout(90)
s.sendall(req)
data = b""
while not (b"\r\n\r\n" in data and data.rstrip().endswith(b"}")):
    chunk = s.recv(65536)
    if not chunk:
        break
    data += chunk
print("answer for %s: %s" % (cmd, data.partition(b"\r\n\r\n")[2].decode(errors="replace")))
PY
cat > "$FB/claude" <<'FAKE'
#!/bin/bash
set -u
settings= prompt=
while [ $# -gt 0 ]; do
	case $1 in --settings) settings=$2; shift;; -p) prompt=$2; shift;; esac
	shift
done
port=$(tr -d ' \n\t' < "$settings" | sed -n 's/.*"--port","\([0-9]*\)".*/\1/p')
tokfile=$(tr -d ' \n\t' < "$settings" | sed -n 's/.*"--token-file","\([^"]*\)".*/\1/p')
python3 "$(dirname "$0")/call.py" "$port" "$(cat "$tokfile")" "$prompt"
FAKE
chmod 755 "$FB/claude" "$FB/call.py"
export PATH="$FB:$PATH"

n=0 failed=0
row() {
	n=$((n + 1))
	printf '%2d %-66s | %s\n' "$n" "$1" "$2${3:+: $3}"
	[ "$2" = PASS ] || failed=$((failed + 1))
}
verdict() { [ -z "$why" ] && echo PASS || echo FAIL; }

# The repository, its settings committed on main.
R="$T/repo"
mkdir -p "$R/.claude"
git -C "$R" init -q -b main && git -C "$R" config user.email t@example.com &&
    git -C "$R" config user.name t || fail "git init"
cat > "$R/.claude/settings.json" <<'JSON'
{
  "permissions": {
    "allow": ["Bash(npm test:*)", "Bash", "Read(./src/**)", "Bash(git * main)"],
    "deny": ["Bash(npm run deploy:*)", "WebFetch(domain:example.com)"],
    "ask": ["Bash(git push:*)"]
  }
}
JSON
echo hi > "$R/README"
git -C "$R" add -A && git -C "$R" commit -qm "settings" || fail "git commit"

# run TASK: start a run of the task (its prompt is the command); prints the run id.
start_run() { cwctl run start "$1"; }
pending_of() { sql "SELECT id FROM approvals WHERE run_id = '$1' AND state = 'pending' LIMIT 1"; }
has_pending() { [ -n "$(pending_of "$1")" ]; }
autoallowed() { sql "SELECT count(*) FROM journal WHERE run_id = '$1' AND kind = 'auto_allow'"; }
# asked RUN: the run's one call is held as an approval; it is denied so the run ends.
asked() {
	local ap
	wait_until 60 "an approval in run $1" has_pending "$1" || return 1
	ap=$(pending_of "$1")
	cwctl deny "$ap" >/dev/null || return 1
	wait_until 60 "run $1 to end" run_ended "$1"
}
# settle: a call held that should not have been is answered, so no run is left behind.
settle() {
	local ap
	for ap in $(sql "SELECT id FROM approvals WHERE state = 'pending'"); do
		cwctl deny "$ap" >/dev/null 2>&1
	done
	for r in $(sql "SELECT id FROM runs"); do
		wait_until 60 "run $r to end" run_ended "$r"
	done
}
mktask() {	# mktask NAME COMMAND [ASK]
	cwctl task add "$1" --repo "$R" --engine claude --mode acceptEdits --seconds 120 \
	    --prompt "$2" >/dev/null || return 1
	[ -z "${3:-}" ] || cwctl task ask "$1" "$3" >/dev/null
}

start_daemon --stop-grace 1

# 1. [attack] The repository allows npm test; nothing imported: it is asked.
why=
mktask t-test "npm test" all || why="task add;"
id=$(start_run t-test) || why="$why run start;"
asked "$id" || why="$why npm test was not asked ($(run_status "$id"): $(tail -c 300 "$(run_field "$id" log_path)" 2>/dev/null | tr '\n' ' '));"
[ "$(autoallowed "$id")" = 0 ] || why="$why an auto_allow was journaled;"
row "[attack] a repo's allow grants nothing by itself (npm test asked)" "$(verdict)" "$why"

# 2. Shown: each rule and what it becomes; nothing changes by showing.
why=
out=$(cwctl task rules t-test --from-repo 2>&1); rc=$?
printf '%s\n' "$out" | sed 's/^/    /'
[ $rc = 0 ] || why="exit $rc;"
# No pipe into grep -q: under pipefail, the writer it leaves behind can die of SIGPIPE.
expect() { [[ "$(grep -A1 -F -- "$1" <<< "$out")" == *"$2"* ]] || why="$why '$1' not shown as '$2';"; }
expect "allow Bash(npm test:*)" "-> task rule 'npm test'"
expect "allow Bash" "NOT imported: allows every command"
expect "allow Read(./src/**)" "NOT imported: a file rule"
expect "allow Bash(git * main)" "NOT imported: a wildcard inside"
expect "deny  Bash(npm run deploy:*)" "-> always asked: 'npm run deploy'"
expect "deny  WebFetch(domain:example.com)" "NOT imported: a network rule"
expect "ask   Bash(git push:*)" "-> always asked: 'git push'"
digest=$(printf '%s\n' "$out" | sed -n 's/.*--import-repo \([0-9a-f]\{64\}\)$/\1/p')
[ -n "$digest" ] || why="$why no digest printed;"
[ "$(sql "SELECT count(*) FROM task_rules")" = 0 ] || why="$why showing stored a rule;"
# An edit not committed is not what runs start from: it changes nothing shown.
printf '{"permissions":{"allow":["Bash(rm:*)"]}}\n' > "$R/.claude/settings.json"
d2=$(cwctl task rules t-test --from-repo --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["digest"])')
[ "$d2" = "$digest" ] || why="$why an uncommitted edit changed the digest;"
git -C "$R" checkout -q -- .claude/settings.json
row "--from-repo lists each rule, what it becomes, a digest; changes nothing" "$(verdict)" "$why"

# 3. Imported with the digest: shown with its source, audited, idempotent.
why=
bad=$(cwctl task rules t-test --import-repo "${digest:0:12}" 2>&1); rc=$?
[ $rc = 1 ] && grep -q "digest: the 64 hex digits" <<< "$bad" &&
    [ "$(sql "SELECT count(*) FROM task_rules")" = 0 ] || why="a short digest: exit $rc, $bad;"
out=$(cwctl task rules t-test --import-repo "$digest" 2>&1); rc=$?
printf '%s\n' "$out" | sed 's/^/    /'
[ $rc = 0 ] || why="$why exit $rc;"
grep -q "3 rules added or changed" <<< "$out" || why="$why not 3 rules added;"
show=$(cwctl task show t-test 2>&1)
grep -q "npm test .*up to ordinary" <<< "$show" || why="$why task show lacks npm test;"
grep -q "npm run deploy .*always asked" <<< "$show" || why="$why task show lacks the ask rule;"
grep -q "from .claude/settings.json@[0-9a-f]\{12\}: Bash(npm test:\*)" <<< "$show" ||
	why="$why task show does not say where npm test came from;"
commit=$(git -C "$R" rev-parse HEAD)
aud=$(sql "SELECT json_extract(data, '$.commit') || ' ' || json_array_length(data, '$.rules') || ' ' || target FROM audit WHERE action = 'task.rules_import' AND actor LIKE 'cwctl uid=%'")
[ "$aud" = "$commit 3 t-test" ] || why="$why audit row '$aud' (wanted '$commit 3 t-test' by cwctl);"
before=$(sql "SELECT family, kind, max_risk, source FROM task_rules ORDER BY id")
out=$(cwctl task rules t-test --import-repo "$digest" 2>&1) || why="$why the second import failed;"
grep -q "0 rules added or changed" <<< "$out" || why="$why the second import changed rules;"
[ "$(sql "SELECT family, kind, max_risk, source FROM task_rules ORDER BY id")" = "$before" ] ||
	why="$why the rules changed on the second import;"
[ "$(sql "SELECT count(*) FROM task_rules WHERE family IN ('Bash', '*', '') OR family LIKE 'git %main%'")" = 0 ] ||
	why="$why a rule for every command was stored;"
row "--import-repo DIGEST imports as shown, with source and audit; twice: same" "$(verdict)" "$why"

# 4. The imported allow: npm test (every risk asked) runs unasked, naming the rule.
why=
id=$(start_run t-test) || why="run start;"
wait_until 60 "run $id to end" run_ended "$id" || why="$why the run did not end (held: $(pending_of "$id"));"
settle
log=$(run_field "$id" log_path)
grep -q 'answer for npm test: .*allow' "$log" || why="$why the agent was not allowed ($(tail -c 300 "$log" | tr '\n' ' '));"
[ "$(sql "SELECT count(*) FROM journal WHERE run_id = '$id' AND kind = 'auto_allow' AND data LIKE '%task_rule:npm test%'")" = 1 ] ||
	why="$why no auto_allow naming task_rule:npm test ($(sql "SELECT data FROM journal WHERE run_id = '$id' AND kind = 'auto_allow'"));"
[ "$(sql "SELECT count(*) FROM approvals WHERE run_id = '$id'")" = 0 ] || why="$why an approval was stored;"
row "an imported allow: npm test runs unasked (auto_allow task_rule:npm test)" "$(verdict)" "$why"

# 5. The imported deny: npm run deploy is ordinary, and asked all the same.
why=
cwctl task edit t-test --prompt "npm run deploy" >/dev/null || why="task edit;"
cwctl task ask t-test default >/dev/null || why="$why task ask default;"
id=$(start_run t-test) || why="$why run start;"
asked "$id" || why="$why npm run deploy was not asked;"
[ "$(sql "SELECT risk || ' ' || risk_rule FROM approvals WHERE run_id = '$id'")" = "ordinary task_ask:npm run deploy" ] ||
	why="$why its risk is '$(sql "SELECT risk || ' ' || risk_rule FROM approvals WHERE run_id = '$id'")', not ordinary asked by task_ask:npm run deploy;"
[ "$(autoallowed "$id")" = 0 ] || why="$why an auto_allow was journaled;"
row "an imported deny: npm run deploy (ordinary) is asked" "$(verdict)" "$why"

# 6. The bare Bash was never imported: ls, every risk asked, is asked.
why=
cwctl task edit t-test --prompt "ls -la" >/dev/null || why="task edit;"
cwctl task ask t-test all >/dev/null || why="$why task ask all;"
id=$(start_run t-test) || why="$why run start;"
asked "$id" || why="$why ls was not asked;"
[ "$(autoallowed "$id")" = 0 ] || why="$why an auto_allow was journaled;"
row "a bare Bash allow is never imported: ls is still asked" "$(verdict)" "$why"

# 7. The settings change in a new commit: the old digest is refused, nothing changes.
why=
before=$(sql "SELECT family, kind, max_risk, source FROM task_rules ORDER BY id")
cat > "$R/.claude/settings.json" <<'JSON'
{"permissions": {"allow": ["Bash(npm test:*)", "Bash(make:*)", "Bash(rm:*)"]}}
JSON
git -C "$R" commit -qam "more rules" || why="git commit;"
out=$(cwctl task rules t-test --import-repo "$digest" 2>&1); rc=$?
echo "    $out"
[ $rc = 3 ] || why="$why exit $rc (3 wanted);"
grep -q "not the ones shown with that digest: nothing was imported" <<< "$out" ||
	why="$why the message does not say so;"
[ "$(sql "SELECT family, kind, max_risk, source FROM task_rules ORDER BY id")" = "$before" ] ||
	why="$why the rules changed;"
new=$(cwctl task rules t-test --from-repo --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["digest"])')
[ -n "$new" ] && [ "$new" != "$digest" ] || why="$why the new settings have the old digest;"
row "a changed committed settings file: the old digest is refused (exit 3)" "$(verdict)" "$why"

# 8. Bad settings: refused naming the file, nothing imported.
why=
printf '{"permissions": {"allow": "Bash"}}\n' > "$R/.claude/settings.json"
git -C "$R" commit -qam "bad" || why="git commit;"
out=$(cwctl task rules t-test --from-repo 2>&1); rc=$?
echo "    $out"
[ $rc = 1 ] || why="$why exit $rc (1 wanted);"
grep -q "\.claude/settings.json: permissions.allow: not an array" <<< "$out" ||
	why="$why the message does not name the file and field;"
rm "$R/.claude/settings.json" && ln -s /etc/passwd "$R/.claude/settings.json" &&
    git -C "$R" add -A && git -C "$R" commit -qm "link" || why="$why git commit link;"
out=$(cwctl task rules t-test --from-repo 2>&1); rc=$?
echo "    $out"
[ $rc = 1 ] && grep -q "\.claude/settings.json: refused: a symbolic link" <<< "$out" ||
	why="$why a symbolic link was not refused (exit $rc);"
row "malformed or linked settings: refused, naming the file and field" "$(verdict)" "$why"

settle
stop_daemon
echo "$((n - failed)) of $n rows passed"
[ "$failed" = 0 ] || fail "$failed rows failed"
pass "repository rules are data until imported as shown"
