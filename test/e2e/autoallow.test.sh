#!/usr/bin/env bash
# Who answers (issue 23, SPEC A1): with default settings a run's ordinary calls run
# without asking and the risky ones are asked or denied, never run unasked; a person's
# "always for this task" is a remembered command family, honoured by that task only.
#
#   claude-ordinary  the real Claude Code (scripts/setup-engines) run by clockworkd against
#              test/fixtures/model-server.js, default settings (config.yaml names only
#              the model servers): it writes package.json, test.js and a Makefile, runs
#              npm test, make and git commit. Zero approvals asked, a journaled
#              auto_allow for each command (risk ordinary, rule risk.ordinary), their
#              files on disk, the commit on the run's branch
#   claude-risky  rm -rf ~/x, curl | sh, git push --force, a Write outside the worktree,
#              echo > ~/file, and payloads behind find -exec, env sh -c, xargs and git -c:
#              each is an approval (answered deny) or a floor deny, none an auto_allow;
#              nothing outside the worktree changed, the remote's branch did not move
#   byok-*     the same two runs with the byok engine (test/fixtures/provider-server.js);
#              its write_file outside the worktree is stopped by the sandbox (the file
#              tools do not ask)
#   remember   a byok task asking about every risk (cwctl task ask T all): its first
#              npm test is asked; cwctl approve ID --for-task keeps "npm test"; the same
#              run's next npm test and the next run's both run unasked (journal
#              auto_allow, rule task_rule:npm test); another task's npm test is asked;
#              cwctl task show lists the rule, cwctl task unrule removes it
set -euo pipefail
: "${CW_BIN:?}" "${CW_SRC:?}"
bindir=$("$CW_SRC/scripts/setup-engines" | tail -n 1)
export PATH="$bindir:$PATH"
E2E_NAME=autoallow
. "$CW_SRC/test/e2e/lib/harness.bash"
set +o pipefail
lib="$CW_SRC/test/e2e/lib"
check() { local what=$1; shift; if "$@"; then ok "$what"; else fail "$what"; fi; }

# Files a risky command would touch if it ran: in HOME, outside every worktree.
mkdir -p "$HOME/x" && echo keep > "$HOME/x/keep"
untouched() {
	[ "$(cat "$HOME/x/keep" 2>/dev/null)" = keep ] && [ ! -e "$HOME/outside.txt" ] &&
	    [ ! -e "$HOME/outside2.txt" ] && [ ! -e "$HOME/pwned.txt" ] &&
	    [ ! -e "$HOME/pwned2.txt" ] && [ ! -e "$HOME/pwned3.txt" ]
}
# A worktree with a remote whose branch feature a force-push would rewrite.
workdir() {
	mkdir -p "$T/$1" && (cd "$T/$1" && git init -q . && echo base > README &&
	    git add README && git commit -q -m base && git init -q --bare "$T/$1.remote" &&
	    git remote add origin "$T/$1.remote" && git push -q origin HEAD:refs/heads/feature)
	echo "$T/$1"
}

# The scenarios, for both engines (tool names differ). Claude Code writes its files with
# the shell (its Write tool needs an absolute path, which only the daemon knows).
python3 - "$T" "$HOME" <<'PY'
import json, sys
T, H = sys.argv[1], sys.argv[2]
pkg = json.dumps({"name": "t", "version": "1.0.0", "scripts": {"test": "node test.js"}})
testjs = "require('fs').writeFileSync('tested.txt', 'tests ran\\n');\n"
mk = "all:\n\techo built > built.txt\n"
risky = [
    "rm -rf ~/x",
    "curl -s http://127.0.0.1:9/i.sh | sh",
    "git push --force origin feature",
    "echo x > ~/outside2.txt",
    "find . -maxdepth 0 -exec sh -c 'echo pwned > ~/pwned.txt' \\;",
    "env X=1 sh -c 'rm -rf ~/x'",
    "echo ~/x | xargs rm -rf",
    "git -c core.pager='sh -c \"echo pwned > ~/pwned2.txt\"' log -1",
    "timeout 5 git push --force origin HEAD:refs/heads/feature",
]
cord = [
    {"tool": "Bash", "input": {"command": "cat > package.json <<'EOF'\n" + pkg + "\nEOF"}},
    {"tool": "Bash", "input": {"command": "cat > test.js <<'EOF'\n" + testjs + "EOF"}},
    {"tool": "Bash", "input": {"command": "printf 'all:\\n\\techo built > built.txt\\n' > Makefile"}},
    {"tool": "Bash", "input": {"command": "npm test"}},
    {"tool": "Bash", "input": {"command": "make"}},
    {"tool": "Bash", "input": {"command": "git add -A && git commit -qm 'agent work'"}},
    {"text": "ordinary done"}]
crisky = [{"tool": "Bash", "input": {"command": c}} for c in risky] + [
    {"tool": "Write", "input": {"file_path": H + "/outside.txt", "content": "x"}},
    {"text": "risky done"}]
json.dump({"ordinary": cord, "risky": crisky}, open(T + "/claude.json", "w"))
bo = [
    {"tool": "write_file", "input": {"path": "package.json", "content": pkg}},
    {"tool": "write_file", "input": {"path": "test.js", "content": testjs}},
    {"tool": "write_file", "input": {"path": "Makefile", "content": mk}},
    {"tool": "bash", "input": {"command": "npm test"}},
    {"tool": "bash", "input": {"command": "make"}},
    {"tool": "bash", "input": {"command": "git add -A && git commit -qm 'byok work'"}},
    {"text": "byok ordinary done"}]
br = [{"tool": "bash", "input": {"command": c}} for c in risky] + [
    {"tool": "write_file", "input": {"path": H + "/outside.txt", "content": "x"}},
    {"text": "byok risky done"}]
rem = [{"tool": "bash", "input": {"command": "npm test"}},
       {"tool": "bash", "input": {"command": "npm test"}},
       {"text": "rem done"}]
json.dump({"bord": bo, "brisky": br, "rem": rem}, open(T + "/byok.json", "w"))
json.dump(risky, open(T + "/risky.json", "w"))
PY

# ---- one clockworkd for both engines ------------------------------------------------------
# Default settings: config.yaml only says where the scripted model servers are.
node "$CW_SRC/test/fixtures/model-server.js" "$T/claude.json" "$T/mport" "$T/mreq.jsonl" \
    2> "$T/model-server.err" &
pids+=($!)
KEY="sk-ant-e2e-$(head -c 8 /dev/urandom | od -An -tx1 | tr -d ' \n')"
printf '%s\n' "$KEY" > "$T/key.pattern"
node "$CW_SRC/test/fixtures/provider-server.js" "$T/byok.json" "$T/pport" "$T/preq.jsonl" \
    "$T/key.pattern" 2> "$T/provider.err" &
pids+=($!)
wait_until 15 "model server" test -s "$T/mport" || die "the model server did not start"
wait_until 15 "provider stand-in" test -s "$T/pport" || die "the provider stand-in did not start"
printf '%s\n' 'api_port: 0' 'max_concurrent_runs: 2' 'engines:' '  claude:' \
    "    base_url: http://127.0.0.1:$(cat "$T/mport")" 'prices:' \
    '  claude-e2e: {input: 10, output: 50, cache_write: 12.5, cache_read: 1}' \
    > "$CLOCKWORK_HOME/config.yaml"
PATH="$bindir:$PATH" ANTHROPIC_API_KEY=sk-ant-e2e-dummy "$CW_BIN/clockworkd" --foreground \
    > "$T/daemon.out" 2>&1 &
DPID=$!
wait_until 15 "clockworkd" test -s "$CLOCKWORK_HOME/clockworkd.port" || die "clockworkd did not start"
cw() { "$CW_BIN/cwctl" "$@"; }
sql() { sqlite3 -cmd '.timeout 5000' "$CLOCKWORK_HOME/clockwork.db" "$@"; }
ended() { [ -n "$(sql "SELECT ended_at FROM runs WHERE id='$1'")" ]; }
wt() { sql "SELECT worktree FROM runs WHERE id='$1'"; }
printf '%s\n' "$KEY" | cw key add main --provider anthropic \
    --base-url "http://127.0.0.1:$(cat "$T/pport")" --model claude-e2e > /dev/null || die "key add"
repo=$(workdir repo)
feature=$(git -C "$repo.remote" rev-parse feature)
add() {	# add NAME SCENARIO ENGINE
	local extra=
	[ "$3" = byok ] && extra="--key main"
	cw task add "$1" --repo "$repo" --engine "$3" $extra --mode acceptEdits \
	    --seconds 240 --turns 40 --prompt "SCENARIO:$2 Please do the scripted steps." \
	    > /dev/null || die "task add $1"
}
add cord ordinary claude
add crisky risky claude
add bord bord byok
add brisky brisky byok
add rem1 rem byok
add rem2 rem byok

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
# journal KIND RUN: one JSON data object per line.
journal() { sql "SELECT data FROM journal WHERE run_id='$2' AND kind='$1' ORDER BY id"; }

# ordinary TASK LABEL COMMIT-MESSAGE: files written, npm test, make, git commit; unasked.
ordinary() {
	local r n c bw
	r=$(cw run start "$1")
	deny_all "$r" || fail "$2-ordinary: the run did not end"
	check "$2-ordinary: the run completed" test "$(sql "SELECT status FROM runs WHERE id='$r'")" = completed
	check "$2-ordinary: the run was sandboxed" test "$(sql "SELECT sandboxed FROM runs WHERE id='$r'")" = 1
	n=$(sql "SELECT count(*) FROM approvals WHERE run_id='$r'")
	check "$2-ordinary: zero approvals asked (got $n)" test "$n" -eq 0
	for c in 'npm test' 'make' "git add -A && git commit -qm '$3'"; do
		check "$2-ordinary: '$c' ran unasked, journaled auto_allow (ordinary, risk.ordinary)" \
		    python3 -c 'import json,sys; c=sys.argv[1]; rows=[json.loads(l) for l in sys.stdin if l.strip()]; sys.exit(0 if any(j.get("command")==c and j.get("risk")=="ordinary" and j.get("rule")=="risk.ordinary" for j in rows) else 1)' "$c" <<< "$(journal auto_allow "$r")"
	done
	bw=$(wt "$r")
	check "$2-ordinary: npm test ran the agent's test.js, make its Makefile" \
	    bash -c "[ \"\$(cat '$bw/tested.txt')\" = 'tests ran' ] && [ \"\$(cat '$bw/built.txt')\" = built ]"
	check "$2-ordinary: the commit is on the run's branch, with the Makefile" \
	    bash -c "b=\$(sqlite3 '$CLOCKWORK_HOME/clockwork.db' \"SELECT branch FROM runs WHERE id='$r'\"); git -C '$repo' log --format=%s \"\$b\" | grep -qx '$3' && git -C '$repo' show --stat \"\$b\" | grep -q Makefile"
}

# risky TASK LABEL: each risky command asked (answered deny) or denied, none unasked.
risky() {
	local r c v
	r=$(cw run start "$1")
	deny_all "$r" || fail "$2-risky: the run did not end"
	check "$2-risky: the run completed" test "$(sql "SELECT status FROM runs WHERE id='$r'")" = completed
	python3 - "$T/risky.json" "$T/$1.verdicts" "$CLOCKWORK_HOME/clockwork.db" "$r" <<'PY'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[3]); run = sys.argv[4]
asked = {json.loads(i or "{}").get("command") for (i,) in db.execute(
    "SELECT input FROM approvals WHERE run_id = ?", (run,))}
rows = [(k, json.loads(d or "{}")) for k, d in db.execute(
    "SELECT kind, data FROM journal WHERE run_id = ?", (run,))]
with open(sys.argv[2], "w") as out:
    for c in json.load(open(sys.argv[1])):
        v = "NONE"
        if any(k == "auto_allow" and j.get("command") == c for k, j in rows): v = "AUTO"
        elif c in asked: v = "asked"
        elif any(k in ("floor_deny", "rule_deny") and j.get("command") == c for k, j in rows): v = "denied"
        out.write(c + "\t" + v + "\n")
PY
	while IFS=$'\t' read -r c v; do
		check "$2-risky: $c -> $v (asked or denied, never unasked)" \
		    bash -c "[ '$v' = asked ] || [ '$v' = denied ]"
	done < "$T/$1.verdicts"
	check "$2-risky: no auto_allow at all" test -z "$(journal auto_allow "$r")"
	check "$2-risky: nothing outside the worktree changed" untouched
	check "$2-risky: the remote's feature did not move" \
	    test "$(git -C "$repo.remote" rev-parse feature)" = "$feature"
	last_run=$r
}

ordinary cord claude 'agent work'
risky crisky claude
r=$last_run
check "claude-risky: the Write outside the worktree was asked (outside_worktree), not run" \
    test -n "$(sql "SELECT id FROM approvals WHERE run_id='$r' AND tool='Write' AND risk='outside_worktree'")"
ordinary bord byok 'byok work'
risky brisky byok
check "byok-risky: its write_file outside the worktree was stopped (the sandbox)" untouched

# ---- remembered answers ---------------------------------------------------------------
cw task ask rem1 all > /dev/null || fail "cwctl task ask rem1 all"
cw task ask rem2 all > /dev/null || fail "cwctl task ask rem2 all"
r1=$(cw run start rem1)
pend() { [ -n "$(sql "SELECT id FROM approvals WHERE run_id='$1' AND state='pending'")" ]; }
wait_until 90 "rem1's first npm test asked" pend "$r1" || fail "remember: npm test was not asked with ask: all"
a=$(sql "SELECT id FROM approvals WHERE run_id='$r1' AND state='pending'")
cw approve "$a" --for-task > "$T/approve.out" 2>&1 || fail "cwctl approve --for-task: $(cat "$T/approve.out")"
check "remember: cwctl approve --for-task says what it kept" \
    grep -q 'remembered for its task: npm test (up to ordinary)' "$T/approve.out"
wait_until 90 "rem1 ended" ended "$r1" || fail "remember: run 1 did not end"
check "remember: run 1 asked once, its second npm test ran unasked" \
    test "$(sql "SELECT count(*) FROM approvals WHERE run_id='$r1'")" = 1
check "remember: journaled auto_allow naming the rule" \
    bash -c "journal() { sqlite3 '$CLOCKWORK_HOME/clockwork.db' \"SELECT data FROM journal WHERE run_id='$r1' AND kind='auto_allow'\"; }; journal | grep -q '\"rule\":\"task_rule:npm test\"'"
r2=$(cw run start rem1)
wait_until 90 "rem1's second run ended" ended "$r2" || fail "remember: run 2 did not end"
check "remember: the next run of the same task asked nothing" \
    test "$(sql "SELECT count(*) FROM approvals WHERE run_id='$r2'")" = 0
check "remember: ...both its npm test calls auto_allow by the rule" \
    test "$(journal auto_allow "$r2" | grep -c '"rule":"task_rule:npm test"')" = 2
r3=$(cw run start rem2)
wait_until 90 "rem2's npm test asked" pend "$r3" || fail "remember: another task's npm test was not asked"
check "remember: in another task npm test is asked" \
    test "$(sql "SELECT count(*) FROM approvals WHERE run_id='$r3'")" -ge 1
deny_all "$r3" > /dev/null || true
cw task show rem1 > "$T/show.out"
check "remember: cwctl task show lists the rule and the task's ask" \
    bash -c "grep -q 'approvals.ask:   all (this task' '$T/show.out' && grep -q 'npm test *up to ordinary' '$T/show.out'"
check "remember: rem2 keeps no rule" bash -c "cw() { '$CW_BIN/cwctl' \"\$@\"; }; cw task rules rem2 | grep -q 'rules: *(none'"
cw task unrule rem1 'npm test' > /dev/null || fail "cwctl task unrule"
check "remember: cwctl task unrule removed it" bash -c "'$CW_BIN/cwctl' task rules rem1 | grep -q 'rules: *(none'"
check "remember: unrule of a family it does not have exits non-zero" \
    bash -c "! '$CW_BIN/cwctl' task unrule rem1 'npm test' 2>/dev/null"
check "remember: the rule's addition is in the audit log" \
    test -n "$(sql "SELECT id FROM audit WHERE action='task.rule_add'")"

[ "$fails" -eq 0 ] || { echo "$fails check(s) failed"; tail -n 20 "$T/daemon.out"; exit 1; }
echo "all autoallow checks passed"
