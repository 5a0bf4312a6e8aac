#!/usr/bin/env bash
# Budgets pause and ask (issue 23) with the engines that are one CLI in the sandbox: the
# pinned Claude Code, Codex and OpenCode (scripts/setup-engines), each through the real
# clockworkd and cw-runner in the real sandbox, against its scripted model server on
# loopback (test/fixtures/model-server.js, responses-server.js, openai-chat-server.js).
#
#   cpause     Claude Code, --dollars 0.01: its first response reports 1000 tokens in
#              and 100 out, $0.015 at config.yaml's prices: (the runner counts it from
#              the stream, Claude Code reports cost only at the end), and asks for a
#              tool: the run is held and asked; `cwctl approvals` shows the question
#              naming the dollars spent; no further model request while held; cwctl
#              approve extends it ($0.02) and it completes, its commit on its branch
#   cnoanswer  the same budget, --budget-wait 5, reached by the second response ($0.002
#              + $0.015); nobody answers: it ends budget_dollars with the first step's
#              commit and uncommitted file sealed on its branch, no later step run, the
#              question expired
#   xpause     Codex, --turns 2: three shell calls; after the second the turn count
#              passes the budget: held and asked (turn budget); extend lets the third
#              call run and the run complete
#   opause     OpenCode, --turns 2: the same; the third call waits at the floor
#              plugin's turn gate while held (its file is not written until extend)
set -euo pipefail
: "${CW_BIN:?}" "${CW_SRC:?}"

bindir=$("$CW_SRC/scripts/setup-engines" | tail -n 1)
E2E_NAME=budget-engines
. "$CW_SRC/test/e2e/lib/harness.bash"
set +o pipefail
check() { local what=$1; shift; if "$@"; then ok "$what"; else fail "$what"; fi; }

BIG='"usage": {"input_tokens": 1000, "output_tokens": 100}'
cat > "$T/claude.json" <<EOF
{"cpause": [
  {"tool": "Bash", "input": {"command": "echo paused-once > pause.txt && git add pause.txt && git commit -q -m cpause-work"}, $BIG},
  {"tool": "Bash", "input": {"command": "echo after-extend >> pause.txt"}},
  {"text": "cpause done"}],
 "cnoanswer": [
  {"tool": "Bash", "input": {"command": "echo kept > kept.txt && git add kept.txt && git commit -q -m cnoanswer-work && echo loose > loose.txt"}},
  {"tool": "Bash", "input": {"command": "echo never > never.txt"}, $BIG},
  {"tool": "Bash", "input": {"command": "echo never2 > never2.txt"}},
  {"text": "cnoanswer done"}]}
EOF
cat > "$T/codex.json" <<'EOF'
{"xpause": [
  {"shell": "echo one > x1.txt"},
  {"shell": "echo two > x2.txt"},
  {"shell": "echo three > x3.txt"},
  {"text": "xpause done"}]}
EOF
cat > "$T/opencode.json" <<'EOF'
{"opause": [
  {"tool": "bash", "input": {"command": "echo one > o1.txt", "description": "one"}},
  {"tool": "bash", "input": {"command": "echo two > o2.txt", "description": "two"}},
  {"tool": "bash", "input": {"command": "echo three > o3.txt", "description": "three"}},
  {"text": "opause done"}]}
EOF
serve() {	# serve NAME SERVER.js
	node "$CW_SRC/test/fixtures/$2" "$T/$1.json" "$T/$1.port" "$T/$1.requests" 2> "$T/$1.err" &
	pids+=($!)
	wait_until 15 "$1 model server" test -s "$T/$1.port" || die "$1 model server did not start"
}
serve claude model-server.js
serve codex responses-server.js
serve opencode openai-chat-server.js

# $10 and $50 per million: 1000 in and 100 out cost $0.015; 100 in, 20 out $0.002.
cat > "$CLOCKWORK_HOME/config.yaml" <<EOF
api_port: 0
max_concurrent_runs: 4
prices:
  claude-e2e: {input: 10, output: 50, cache_write: 12.5, cache_read: 1}
engines:
  claude:
    base_url: http://127.0.0.1:$(cat "$T/claude.port")
    model: claude-e2e
  codex:
    base_url: http://127.0.0.1:$(cat "$T/codex.port")/v1
    model: gpt-e2e
  opencode:
    base_url: http://127.0.0.1:$(cat "$T/opencode.port")/v1
    model: cw-test
EOF
PATH="$bindir:$PATH" ANTHROPIC_API_KEY=sk-ant-e2e-dummy OPENAI_API_KEY=sk-proj-e2eDummy \
    "$CW_BIN/clockworkd" --foreground > "$T/daemon.out" 2>&1 &
DPID=$!
wait_until 15 "clockworkd" test -s "$CLOCKWORK_HOME/clockworkd.port" || die "clockworkd did not start"
wait_until 10 "API" "$CW_BIN/cwctl" status || die "clockworkd does not answer"
cw() { "$CW_BIN/cwctl" "$@"; }
sql() { sqlite3 -cmd '.timeout 5000' "$CLOCKWORK_HOME/clockwork.db" "$@"; }
ended() { [ -n "$(sql "SELECT ended_at FROM runs WHERE id='$1'")" ]; }
field() { sql "SELECT $2 FROM runs WHERE id='$1'"; }
report() { sql "SELECT data FROM run_events WHERE run_id='$1' AND kind='report'"; }
ask() { sql "SELECT id FROM approvals WHERE run_id='$1' AND tool='budget' AND state='pending'"; }
asked() { [ -n "$(ask "$1")" ]; }
requests() { grep -c "\"scenario\":\"$2\"" "$T/$1.requests" || true; }
branch_has() { git -C "$repo" log --format=%s "$(field "$1" branch)" 2>/dev/null | grep -qx "$2"; }
branch_file() { git -C "$repo" show "$(field "$1" branch):$2" 2>/dev/null; }
jcheck() { python3 -c "import json,sys; r=json.loads(sys.argv[1]); $1" "$2"; }
live_runs() { sql "SELECT id FROM runs WHERE ended_at IS NULL" 2>/dev/null; }
none_live() { [ -z "$(live_runs)" ]; }
# A held run would wait its whole budget_wait: a failing check must not leave one.
budget_cleanup() {
	local id
	for id in $(live_runs); do cw run stop "$id" >/dev/null 2>&1 || true; done
	wait_until 60 "runs stopped" none_live || true
	e2e_cleanup
}
trap budget_cleanup EXIT

repo="$T/repo"
mkdir -p "$repo" && git -C "$repo" init -q && echo base > "$repo/README" &&
    git -C "$repo" add README && git -C "$repo" commit -q -m base
add() {	# add NAME ENGINE [OPTIONS...]
	local n=$1 e=$2; shift 2
	cw task add "$n" --repo "$repo" --engine "$e" --mode acceptEdits --seconds 300 \
	    --prompt "SCENARIO:$n Please do the scripted steps." "$@" > /dev/null ||
	    die "task add $n"
}
held() {	# held RUN: the hold the pause used, or ""
	sql "SELECT json_extract(data, '\$.hold') FROM run_events WHERE run_id='$1' AND kind='budget_paused'"
}
if [ "$(id -u)" = 0 ] && [ -d /sys/fs/cgroup/freezer ]; then want="cgroup freezer"; else want=""; fi
hold_ok() { local h; h=$(held "$1"); [ -n "$h" ] && { [ -z "$want" ] || [ "$h" = "$want" ]; }; }

# ---- cpause: Claude Code's dollar budget pauses, extend, it completes -----------------
add cpause claude --dollars 0.01 --budget-wait 300
r=$(cw run start cpause) || die "run start cpause"
wait_until 150 "cpause asked" asked "$r" || die "the cpause run never asked: $(cw run logs "$r" 2>&1 | tail -5)"
a=$(ask "$r")
check "cpause: Claude Code's run is held at its dollar budget (hold: $(held "$r"))" hold_ok "$r"
n=$(requests claude cpause)
cw approvals > "$T/approvals.out" 2>&1
cw approvals show "$a" > "$T/ashow.out" 2>&1
if grep -q "$a" "$T/approvals.out" && grep -q 'budget' "$T/approvals.out" &&
    grep -q 'The dollar budget is reached: \$0.015 spent of \$0.01' "$T/ashow.out"; then
	ok "cpause: cwctl approvals shows the question: $(grep -m1 'budget is reached' "$T/ashow.out" | cut -c1-150)"
else
	fail "cpause: cwctl approvals: $(cat "$T/approvals.out" "$T/ashow.out")"
fi
check "cpause: the question names its dollars spent (input.spent.dollars 0.015)" jcheck \
    'assert abs(r["input"]["spent"]["dollars"] - 0.015) < 1e-9 and r["input"]["budget"] == "dollars", r' \
    "$(sql "SELECT json_object('input', json(input)) FROM approvals WHERE id='$a'")"
# Held: the second step's request is not made while nobody has answered. The first
# response's tool may have run before the hold landed; the model is asked no more.
check "cpause: while held, Claude Code asked the model nothing more ($n request)" test "$n" = 1
check "cpause: ... and the step after the pause has not run" \
    bash -c "! grep -q after-extend '$(field "$r" worktree)/pause.txt' 2>/dev/null"
cw approve "$a" > "$T/approve.out" 2>&1 || fail "cpause: cwctl approve: $(cat "$T/approve.out")"
wait_until 150 "cpause ended" ended "$r" || fail "cpause: the extended run did not end"
rep=$(report "$r")
if [ "$(field "$r" status)" = completed ] && branch_has "$r" cpause-work &&
    [ "$(branch_file "$r" pause.txt | tail -n 1)" = after-extend ] &&
    jcheck 'b=r["budget"]; p=b["pauses"][0]; assert abs(b["dollars"] - 0.02) < 1e-9 and p["answer"]=="extend" and p["budget"]=="dollars" and abs(p["dollars"] - 0.015) < 1e-9, b' "$rep"; then
	ok "cpause: extended (\$0.01 -> \$0.02), the run went on and completed; its work is on its branch (spent \$$(jcheck 'print(r["spent"]["dollars"])' "$rep"))"
else
	fail "cpause: after extend: status $(field "$r" status) $(field "$r" exit_reason), $(echo "$rep" | head -c 700)"
fi
check "cpause: the log keeps no streamed fragments (content_block_delta)" \
    bash -c "! grep -q content_block_delta '$CLOCKWORK_HOME/runs/$r.log' && grep -q message_delta '$CLOCKWORK_HOME/runs/$r.log'"

# ---- cnoanswer: nobody answers; it ends at budget_wait, its work sealed -------------
add cnoanswer claude --dollars 0.01 --budget-wait 5
r=$(cw run start cnoanswer) || die "run start cnoanswer"
wait_until 150 "cnoanswer asked" asked "$r" || die "the cnoanswer run never asked"
a=$(ask "$r")
wait_until 150 "cnoanswer ended" ended "$r" || fail "cnoanswer: the unanswered run did not end"
if [ "$(field "$r" exit_reason)" = budget_dollars ] && branch_has "$r" cnoanswer-work &&
    [ "$(branch_file "$r" kept.txt)" = kept ] && [ "$(branch_file "$r" loose.txt)" = loose ] &&
    [ -z "$(branch_file "$r" never2.txt)" ] &&
    [ "$(sql "SELECT state FROM approvals WHERE id='$a'")" = expired ] &&
    jcheck 'p=r["budget"]["pauses"][0]; assert p["answer"]=="timeout" and p["budget"]=="dollars", p' "$(report "$r")"; then
	ok "cnoanswer: no answer within budget_wait (5 s): ended budget_dollars; its commit and its loose file sealed on its branch; no step after the held one ran; the question expired"
else
	fail "cnoanswer: $(field "$r" status) $(field "$r" exit_reason) approval $(sql "SELECT state FROM approvals WHERE id='$a'") branch $(git -C "$repo" log --oneline "$(field "$r" branch)" 2>&1 | head -3) $(report "$r" | head -c 400)"
fi

# ---- xpause / opause: Codex's and OpenCode's turn budgets pause ---------------------
turnpause() {	# turnpause NAME ENGINE PREFIX GATED
	local n=$1 e=$2 p=$3 gated=$4 r a w rep
	add "$n" "$e" --turns 2 --budget-wait 300
	r=$(cw run start "$n") || die "run start $n"
	wait_until 150 "$n asked" asked "$r" || die "the $n run never asked: $(cw run logs "$r" 2>&1 | tail -5)"
	a=$(ask "$r")
	w=$(field "$r" worktree)
	check "$n: $e is held at its turn budget (hold: $(held "$r"))" hold_ok "$r"
	cw approvals show "$a" > "$T/$n.show" 2>&1
	check "$n: cwctl approvals shows the turn question: $(grep -m1 'budget is reached' "$T/$n.show" | cut -c1-120)" \
	    grep -q 'The turn budget is reached: no cost reported, 3 turns' "$T/$n.show"
	check "$n: the calls within the budget ran" test -s "$w/${p}2.txt"
	if [ "$gated" = 1 ]; then
		check "$n: the call past the budget has not run while held" test ! -e "$w/${p}3.txt"
	fi
	cw approve "$a" > "$T/$n.approve" 2>&1 || fail "$n: cwctl approve: $(cat "$T/$n.approve")"
	wait_until 150 "$n ended" ended "$r" || fail "$n: the extended run did not end"
	rep=$(report "$r")
	if [ "$(field "$r" status)" = completed ] && [ "$(branch_file "$r" "${p}3.txt")" = three ] &&
	    jcheck 'b=r["budget"]; p=b["pauses"]; assert len(p)==1 and p[0]["answer"]=="extend" and p[0]["budget"]=="turns" and b["turns"]==4, b' "$rep"; then
		ok "$n: extended (2 -> 4 turns), the third call ran and the run completed ($(jcheck 'print(r["spent"]["turns"])' "$rep") turns)"
	else
		fail "$n: after extend: status $(field "$r" status) $(field "$r" exit_reason) $(echo "$rep" | head -c 700)"
	fi
}
turnpause xpause codex x 0
turnpause opause opencode o 1

[ "$fails" = 0 ] || { echo "$fails check(s) failed"; tail -n 30 "$T/daemon.out"; exit 1; }
echo "all budget_engines checks passed"
