#!/usr/bin/env bash
# Clockwork's own agent (the byok engine) end to end (issue 12): the real clockworkd, the
# real cw-runner in the real sandbox, and test/fixtures/provider-server.js, a scripted
# model provider on loopback speaking the documented Messages API (streamed SSE, error
# bodies, retry-after) for both providers the agent speaks. The key is added with
# `cwctl key add` (stdin) and named by the task; the daemon sends it on the runner's
# stdin and the runner hands it to the agent on a pipe.
#
#   multi      read_file, edit_file, bash (grep as the test), git add + commit: the edit
#              is on disk and committed, the run completes, the transcript has each tool
#   floor      git push --force is refused by the floor (journaled), the model is told
#   approval   a command that is not ordinary (git -c may run a program) waits;
#              `cwctl approve` lets it run (test/e2e/autoallow.test.sh: who answers)
#   plan       plan mode: the worktree is unchanged, the run's result is the plan, the
#              write tools are not offered
#   budget     a dollar budget ends the run after the turn whose reported usage crosses
#              it (prices from config.yaml): exactly that many requests reached the server
#   turns      a turn budget of 2 ends the run after the second answer
#   slow       a provider that does not answer: the 3 s wall-clock budget ends the run
#   toolong    400 "prompt is too long": the oldest tool result is cut, the turn asked
#              again, the run completes
#   netdown    nothing listens at the base URL: asked again 5 times, then "network down"
#   noprice    a model that has no price (issue 23): an explicit --dollars is refused at
#              task add; under the default $2 budget the run completes with its cost
#              unknown and the dollar budget refused in its report
#   e401       a wrong key: one request, the run fails naming the refused key
#   e429       429 with retry-after: 1 is retried after at least a second; completes
#   drop       a stream cut off mid-answer is asked again; completes
#   keyhunt    the scripted model hunts for the key (env, /proc/*/environ and cmdline,
#              strings of the parent's memory, grep over every file it can read): no tool
#              result sent back to the model holds it; the agent process's environ and
#              mem are closed even to this test's shell (same uid)
#   oa*        Chat Completions: the multi-turn task, request shape, 429 + dropped
#              stream, 401, insufficient_quota as "no credit"
set -euo pipefail
: "${CW_BIN:?}" "${CW_SRC:?}"
E2E_NAME=byok
. "$CW_SRC/test/e2e/lib/harness.bash"
# The checks below pipe into grep -q, which may close the pipe early: the writer's
# SIGPIPE is not a failure of the check.
set +o pipefail

KEY="sk-ant-e2e-SECRET-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
cat > "$T/scenarios.json" <<'EOF2'
{
 "multi": [
  {"tool": "read_file", "input": {"path": "README"}},
  {"tool": "edit_file", "input": {"path": "README", "old_string": "base", "new_string": "changed by byok"}},
  {"tool": "bash", "input": {"command": "grep -c 'changed by byok' README"}},
  {"tools": [{"tool": "bash", "input": {"command": "git add README"}},
             {"tool": "list_files", "input": {"path": "."}}]},
  {"tool": "bash", "input": {"command": "git commit -q -m byok-edit"}},
  {"text": "multi done: edited, tested and committed"}
 ],
 "floor": [
  {"tool": "bash", "input": {"command": "git push --force origin main"}},
  {"text": "floor done"}
 ],
 "approval": [
  {"tool": "bash", "input": {"command": "git -c core.pager=cat log -1 > /dev/null; echo yes > approved.txt"}},
  {"text": "approval done"}
 ],
 "plan": [
  {"tool": "list_files", "input": {"path": "."}},
  {"tool": "write_file", "input": {"path": "planted.txt", "content": "should not exist"}},
  {"text": "PLAN: 1. change README. 2. run the tests. 3. commit."}
 ],
 "budget": [
  {"tool": "bash", "input": {"command": "echo one"}, "usage": {"input_tokens": 1000, "output_tokens": 100}},
  {"tool": "bash", "input": {"command": "echo two"}, "usage": {"input_tokens": 1000, "output_tokens": 100}},
  {"tool": "bash", "input": {"command": "echo three"}, "usage": {"input_tokens": 1000, "output_tokens": 100}},
  {"tool": "bash", "input": {"command": "echo four"}, "usage": {"input_tokens": 1000, "output_tokens": 100}},
  {"tool": "bash", "input": {"command": "echo five"}, "usage": {"input_tokens": 1000, "output_tokens": 100}},
  {"text": "budget done"}
 ],
 "e401": [ {"text": "never reached"} ],
 "turns": [
  {"tool": "bash", "input": {"command": "echo t1"}},
  {"tool": "bash", "input": {"command": "echo t2"}},
  {"tool": "bash", "input": {"command": "echo t3"}},
  {"text": "turns done"}
 ],
 "slow": [ {"delay": 30, "text": "too late"} ],
 "toolong": [
  {"tool": "bash", "input": {"command": "echo first-result"}},
  {"tool": "bash", "input": {"command": "echo second-result"}},
  {"fail": [{"status": 400, "message": "prompt is too long: 210000 tokens > 200000 maximum"}],
   "text": "toolong done"}
 ],
 "netdown": [ {"text": "never reached"} ],
 "whole": [
  {"whole": true, "tool": "bash", "input": {"command": "echo whole-one"}},
  {"whole": true, "text": "whole done"}
 ],
 "oawhole": [
  {"whole": true, "tool": "bash", "input": {"command": "echo oawhole-one"}},
  {"whole": true, "text": "oawhole done"}
 ],
 "noprice": [ {"text": "noprice done", "usage": {"input_tokens": 1000, "output_tokens": 100}} ],
 "oamulti": [
  {"tool": "read_file", "input": {"path": "README"}},
  {"tool": "edit_file", "input": {"path": "README", "old_string": "base", "new_string": "changed by byok over chat completions"}},
  {"say": "Testing now.", "tool": "bash", "input": {"command": "grep -c 'chat completions' README"}},
  {"tools": [{"tool": "bash", "input": {"command": "git add README"}},
             {"tool": "bash", "input": {"command": "git commit -q -m byok-openai"}}]},
  {"text": "oamulti done"}
 ],
 "oaerr": [
  {"fail": [{"status": 429, "retry_after": 1}], "tool": "bash", "input": {"command": "echo after-429"}},
  {"fail": [{"drop": true}], "tool": "bash", "input": {"command": "echo after-drop"}},
  {"text": "oaerr done"}
 ],
 "oa401": [ {"text": "never reached"} ],
 "oaquota": [ {"fail": [{"status": 429, "code": "insufficient_quota", "message": "You exceeded your current quota"}], "text": "never reached"} ],
 "e429": [
  {"fail": [{"status": 429, "retry_after": 1}], "tool": "bash", "input": {"command": "echo after-429"}},
  {"text": "e429 done"}
 ],
 "drop": [
  {"tool": "bash", "input": {"command": "echo before-drop"}},
  {"fail": [{"drop": true}], "tool": "bash", "input": {"command": "echo after-drop"}},
  {"text": "drop done"}
 ],
 "keyhunt": [
  {"tool": "bash", "input": {"command": "env"}},
  {"tool": "bash", "input": {"command": "cat /proc/*/environ"}},
  {"tool": "bash", "input": {"command": "cat /proc/*/cmdline"}},
  {"tool": "bash", "input": {"command": "strings /proc/$PPID/mem /proc/1/mem /proc/self/mem 2>&1 | head -c 200000"}},
  {"tool": "bash", "input": {"command": "for p in /proc/[0-9]*; do echo $p; cat $p/environ $p/cmdline; strings $p/mem 2>&1 | head -c 100000; done"}},
  {"tool": "bash", "input": {"command": "grep -rIa -- sk-ant- / 2>/dev/null | head -c 200000; echo grep-done"}},
  {"tool": "bash", "input": {"command": "ls -la /proc/*/fd/ 2>&1 | head -c 100000; cat $CLOCKWORK_HOME/secrets/* ~/.clockwork/secrets/* 2>&1"}},
  {"tool": "read_file", "input": {"path": "/proc/1/environ"}},
  {"tool": "grep", "input": {"pattern": "sk-ant-e2e", "path": "/"}},
  {"text": "keyhunt done"}
 ]
}
EOF2
# The key from a file: on a command line every process could read it.
printf '%s\n' "$KEY" > "$T/key.pattern"
node "$CW_SRC/test/fixtures/provider-server.js" "$T/scenarios.json" "$T/pport" \
    "$T/requests.jsonl" "$T/key.pattern" 2> "$T/provider.err" &
pids+=($!)
wait_until 15 "provider stand-in" test -s "$T/pport" || die "the provider stand-in did not start"
BASE="http://127.0.0.1:$(cat "$T/pport")"

# $10 and $50 per million: a budget turn (1000 in, 100 out) costs $0.015.
printf '%s\n' 'api_port: 0' 'max_concurrent_runs: 4' 'prices:' \
    '  claude-e2e: {input: 10, output: 50, cache_write: 12.5, cache_read: 1}' \
    '  gpt-e2e: {input: 2, output: 8, cache_read: 0.5}' \
    > "$CLOCKWORK_HOME/config.yaml"
"$CW_BIN/clockworkd" --foreground > "$T/daemon.out" 2>&1 &
DPID=$!
wait_until 15 "clockworkd" test -s "$CLOCKWORK_HOME/clockworkd.port" || die "clockworkd did not start"
cw() { "$CW_BIN/cwctl" "$@"; }
sql() { sqlite3 -cmd '.timeout 5000' "$CLOCKWORK_HOME/clockwork.db" "$@"; }
ended() { [ -n "$(sql "SELECT ended_at FROM runs WHERE id='$1'")" ]; }
field() { sql "SELECT $2 FROM runs WHERE id='$1'"; }
wt() { field "$1" worktree; }
reqs() { python3 -c "import json,sys; print(sum(1 for l in open('$T/requests.jsonl') if json.loads(l)['scenario']=='$1'))"; }

printf '%s\n' "$KEY" | cw key add main --provider anthropic --base-url "$BASE" \
    --model claude-e2e > "$T/keyadd.out" || die "key add: $(cat "$T/keyadd.out")"
printf '%s\n' "sk-ant-wrong-key" | cw key add wrong --provider anthropic --base-url "$BASE" \
    --model claude-e2e > /dev/null || die "key add wrong"
printf '%s\n' "$KEY" | cw key add down --provider anthropic --base-url http://127.0.0.1:1 \
    --model claude-e2e > /dev/null || die "key add down"
printf '%s\n' "$KEY" | cw key add unpriced --provider anthropic --base-url "$BASE" \
    --model claude-unpriced > /dev/null || die "key add unpriced"
printf '%s\n' "$KEY" | cw key add oa --provider openai --base-url "$BASE/v1" \
    --model gpt-e2e > /dev/null || die "key add oa"
printf '%s\n' "sk-wrong" | cw key add oawrong --provider openai --base-url "$BASE/v1" \
    --model gpt-e2e > /dev/null || die "key add oawrong"
if cw key list | grep -q '^main  *anthropic  *claude-e2e' && ! cw key list --json | grep -qF "$KEY" &&
    ! ps -eo args | grep -F -- "$KEY" | grep -vq grep; then
	ok "cwctl key add read the key from stdin; key list shows it without the key"
else
	fail "key list: $(cw key list)"
fi
if cw key add bad --provider anthropic "$KEY" < /dev/null 2>/dev/null; then
	fail "cwctl key add accepted the key on argv"
else
	ok "cwctl key add refuses a key on argv (exit $?)"
fi

repo="$T/repo"
mkdir -p "$repo" && git -C "$repo" init -q && echo base > "$repo/README" &&
    git -C "$repo" add README && git -C "$repo" commit -q -m base
# --budget-wait 0: these rows are about budgets that end a run; the budget pause that
# asks first is test/e2e/budget.test.sh's.
add() {	# add NAME MODE KEY [DOLLARS [TURNS [SECONDS]]]
	cw task add "$1" --repo "$repo" --engine byok --key "$3" --mode "$2" --budget-wait 0 \
	    --seconds "${6:-120}" --turns "${5:-50}" --dollars "${4:-0}" \
	    --prompt "SCENARIO:$1 Please do the scripted steps." > /dev/null || die "task add $1"
}
add multi acceptEdits main
add floor acceptEdits main
add approval acceptEdits main
add plan plan main
add budget acceptEdits main 0.04
add e401 acceptEdits wrong
add turns acceptEdits main 0 2
add slow acceptEdits main 0 50 3
add toolong acceptEdits main
add netdown acceptEdits down
add whole acceptEdits main
add oawhole acceptEdits oa
if cw task add noprice --repo "$repo" --key unpriced --dollars 1 --prompt x 2> "$T/np.err" ||
    ! grep -q "budget_dollars: model 'claude-unpriced' (key unpriced) has no price" "$T/np.err"; then
	fail "an explicit --dollars for a model with no price was not refused: $(cat "$T/np.err")"
else
	ok "an explicit --dollars for a model with no price is refused at task add, naming the model"
fi
# No --dollars: the configuration's default ($2), which the run cannot hold.
cw task add noprice --repo "$repo" --key unpriced --seconds 120 \
    --prompt "SCENARIO:noprice Please do the scripted steps." > /dev/null || die "task add noprice"
add e429 acceptEdits main
add drop acceptEdits main
add keyhunt acceptEdits main
# Its first call must wait for an answer (the agent is inspected while it is blocked):
# every call is asked, not only the risky ones.
cw task ask keyhunt all > /dev/null || die "cwctl task ask keyhunt all"
add oamulti acceptEdits oa
add oaerr acceptEdits oa
add oa401 acceptEdits oawrong
add oaquota acceptEdits oa
if cw task add nosuch --repo "$repo" --engine byok --key nosuch --prompt x 2> "$T/nosuch.err"; then
	fail "a byok task naming an unknown key was accepted"
else
	grep -q 'no key named nosuch' "$T/nosuch.err" && ok "a task naming an unknown key is refused: $(cat "$T/nosuch.err")" ||
	    fail "nosuch: $(cat "$T/nosuch.err")"
fi
if cw task add nokey --repo "$repo" --engine byok --prompt x 2> "$T/nokey.err"; then
	fail "a byok task without a key was accepted"
else
	grep -q 'key' "$T/nokey.err" && ok "a byok task without --key is refused: $(cat "$T/nokey.err")" ||
	    fail "nokey: $(cat "$T/nokey.err")"
fi

# ---- multi ------------------------------------------------------------------------
r=$(cw run start multi)
wait_until 120 "multi ended" ended "$r" || fail "multi did not end"
w=$(wt "$r")
if [ "$(field "$r" status)" = completed ] && grep -q 'changed by byok' "$w/README" &&
    [ "$(git -C "$w" log -1 --format=%s)" = byok-edit ] && [ -z "$(git -C "$w" status --porcelain)" ]; then
	ok "multi-turn: read, edit, test with bash and commit; the run completed"
else
	fail "multi: status $(field "$r" status), README '$(cat "$w/README" 2>/dev/null)', log $(git -C "$w" log --oneline | head -3)"
fi
cw run logs "$r" > "$T/multi.logs"
if grep -q '^tool *read_file' "$T/multi.logs" && grep -q '^tool *edit_file' "$T/multi.logs" &&
    grep -q '^tool *bash *git commit' "$T/multi.logs" && grep -q '^final *multi done' "$T/multi.logs" &&
    grep -q '^usage' "$T/multi.logs"; then
	ok "the transcript has the tool, result, usage and final entries of the other engines"
else
	fail "transcript: $(cat "$T/multi.logs")"
fi
tool_result() {	# tool_result SCENARIO STEP: the tool results the model got at that step
	python3 - "$T/requests.jsonl" "$1" "$2" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r['scenario'] != sys.argv[2] or r['step'] != int(sys.argv[3]):
        continue
    m = r['body']['messages'][-1]
    if isinstance(m.get('content'), list):
        for b in m['content']:
            if b.get('type') == 'tool_result':
                print(b.get('content'))
            elif 'tool_call_id' in m:
                pass
    if m.get('role') == 'tool':
        print(m.get('content'))
PY
}
if tool_result multi 1 | grep -qx base && tool_result multi 3 | grep -qx 1; then
	ok "the model got the file's text and the test's output back"
else
	fail "tool results: $(tool_result multi 1) / $(tool_result multi 3)"
fi
python3 - "$T/requests.jsonl" > "$T/req.check" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r['scenario'] != 'multi': continue
    b = r['body']
    print(r['version'], b.get('stream'), b['tools'][-1].get('cache_control', {}).get('type'),
          b['system'][0].get('cache_control', {}).get('type'), ' '.join(t['name'] for t in b['tools']))
    break
PY
if grep -qx '2023-06-01 True ephemeral ephemeral read_file list_files grep write_file edit_file bash' "$T/req.check"; then
	ok "requests: anthropic-version, stream, cache_control on system and the last tool, six tools"
else
	fail "request shape: $(cat "$T/req.check")"
fi

# ---- floor ------------------------------------------------------------------------
r=$(cw run start floor)
wait_until 120 "floor ended" ended "$r" || fail "floor did not end"
if tool_result floor 1 | grep -q "floor refused" &&
    sql "SELECT kind FROM journal WHERE run_id='$r'" | grep -q floor &&
    cw run logs "$r" | grep -q '^floor'; then
	ok "git push --force refused by the floor, journaled, the model told why"
else
	fail "floor: $(tool_result floor 1) / $(sql "SELECT * FROM journal WHERE run_id='$r'") / $(cw run logs "$r" | tail -5)"
fi

# ---- approval ---------------------------------------------------------------------
r=$(cw run start approval)
pending() { [ -n "$(sql "SELECT id FROM approvals WHERE run_id='$1' AND state='pending'")" ]; }
wait_until 60 "approval pending" pending "$r" || fail "no approval came"
a=$(sql "SELECT id FROM approvals WHERE run_id='$r' AND state='pending'")
[ -e "$(wt "$r")/approved.txt" ] && fail "the command ran before the answer"
cw approve "$a" > /dev/null || fail "cwctl approve $a"
wait_until 60 "approval ended" ended "$r" || fail "approval did not end"
if [ "$(cat "$(wt "$r")/approved.txt" 2>/dev/null)" = yes ] && [ "$(field "$r" status)" = completed ]; then
	ok "a command that is not ordinary waited for cwctl approve, then ran"
else
	fail "approval: $(field "$r" status) $(ls "$(wt "$r")")"
fi

# ---- plan -------------------------------------------------------------------------
r=$(cw run start plan)
wait_until 60 "plan ended" ended "$r" || fail "plan did not end"
w=$(wt "$r")
plan_tools=$(python3 -c "import json; print(' '.join(t['name'] for t in [json.loads(l) for l in open('$T/requests.jsonl') if json.loads(l)['scenario']=='plan'][0]['body']['tools']))")
if [ -z "$(git -C "$w" status --porcelain)" ] && [ ! -e "$w/planted.txt" ] &&
    [ "$(field "$r" final_commit)" = "$(field "$r" base_commit)" -o -z "$(field "$r" final_commit)" ] &&
    cw run show "$r" | grep -q 'PLAN: 1. change README' && [ "$plan_tools" = "read_file list_files grep" ] &&
    tool_result plan 2 | grep -q 'plan mode'; then
	ok "plan: read-only tools only, nothing changed, the plan is the run's result"
else
	fail "plan: tools '$plan_tools', status $(git -C "$w" status --porcelain), $(cw run show "$r" | grep -i plan)"
fi

# ---- budget -----------------------------------------------------------------------
r=$(cw run start budget)
wait_until 60 "budget ended" ended "$r" || fail "budget did not end"
# $0.015 a turn: 0.015, 0.030, 0.045 >= 0.04 -> the third turn ends it.
if [ "$(field "$r" exit_reason)" = budget_dollars ] && [ "$(reqs budget)" = 3 ] &&
    cw run show "$r" | grep -q 'spent: *\$0.04'; then
	ok "the dollar budget ended the run after the third turn (\$0.045 >= \$0.04), from the reported usage"
else
	fail "budget: reason $(field "$r" exit_reason), $(reqs budget) requests, $(cw run show "$r" | grep spent)"
fi

# ---- turns and seconds ------------------------------------------------------------
r=$(cw run start turns)
wait_until 60 "turns ended" ended "$r" || fail "turns did not end"
if [ "$(field "$r" exit_reason)" = budget_turns ] && [ "$(reqs turns)" = 2 ] &&
    [ -z "$(tool_result turns 2)" ]; then
	ok "the turn budget (2) ended the run after the second answer; its tool call did not run"
else
	fail "turns: reason $(field "$r" exit_reason), $(reqs turns) requests"
fi
r=$(cw run start slow)
wait_until 60 "slow ended" ended "$r" || fail "slow did not end"
if [ "$(field "$r" exit_reason)" = budget_seconds ]; then
	ok "the wall-clock budget (3 s) ended a run whose provider did not answer"
else
	fail "slow: reason $(field "$r" exit_reason)"
fi

# ---- errors -----------------------------------------------------------------------
r=$(cw run start toolong)
wait_until 60 "toolong ended" ended "$r" || fail "toolong did not end"
cut=$(python3 - "$T/requests.jsonl" <<'PY'
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1]) if json.loads(l)['scenario'] == 'toolong' and json.loads(l)['step'] == 2]
res = [[b['content'] for m in r['body']['messages'] if isinstance(m['content'], list)
        for b in m['content'] if b.get('type') == 'tool_result'] for r in rs]
print(len(rs), 'removed' in res[1][0] if len(rs) == 2 else '-', 'second-result' in res[1][1] if len(rs) == 2 else '-')
PY
)
if [ "$(field "$r" status)" = completed ] && [ "$cut" = "2 True True" ] &&
    cw run logs "$r" | grep -q 'too long for the model'; then
	ok "context too long: the oldest tool result was cut, the newer kept, the turn asked again, the run completed"
else
	fail "toolong: $(field "$r" status) '$cut' $(cw run logs "$r" | tail -4)"
fi
r=$(cw run start netdown)
wait_until 90 "netdown ended" ended "$r" || fail "netdown did not end"
if [ "$(field "$r" status)" = failed ] && cw run show "$r" | grep -q 'network down: cannot reach http://127.0.0.1:1' &&
    [ "$(cw run logs "$r" | grep -c 'asking again')" = 5 ]; then
	ok "network down: asked again 5 times, then the run failed naming it"
else
	fail "netdown: $(field "$r" status) $(cw run show "$r" | grep -i error) $(cw run logs "$r" | tail -3)"
fi
for s in whole oawhole; do
	r=$(cw run start "$s")
	wait_until 60 "$s ended" ended "$r" || fail "$s did not end"
	if [ "$(field "$r" status)" = completed ] && tool_result "$s" 1 | grep -q "$s-one" &&
	    cw run logs "$r" | grep -q "^final *$s done"; then
		ok "$s: a server that answers whole messages though asked to stream is read as well"
	else
		fail "$s: $(field "$r" status) $(cw run logs "$r" | tail -4)"
	fi
done
r=$(cw run start noprice)
wait_until 60 "noprice ended" ended "$r" || fail "noprice did not end"
if [ "$(field "$r" status)" = completed ] && [ "$(reqs noprice)" = 1 ] &&
    cw run show "$r" | grep -q "^spent: *cost unknown" &&
    cw run show "$r" | grep -qF "the dollar budget (\$2.00) is refused: model 'claude-unpriced' has no price"; then
	ok "a model that has no price runs: its cost is unknown, only its dollar budget is refused"
else
	fail "noprice: $(field "$r" status) $(reqs noprice) $(cw run show "$r" | grep -i error)"
fi

r=$(cw run start e401)
wait_until 60 "e401 ended" ended "$r" || fail "e401 did not end"
if [ "$(field "$r" status)" = failed ] && [ "$(reqs e401)" = 1 ] &&
    cw run show "$r" | grep -q 'refused the key (HTTP 401'; then
	ok "401: one request, the run failed naming the refused key"
else
	fail "e401: $(field "$r" status) $(reqs e401) $(cw run show "$r" | tail -3)"
fi
r=$(cw run start e429)
wait_until 60 "e429 ended" ended "$r" || fail "e429 did not end"
gap=$(python3 -c "import json; t=[json.loads(l)['at'] for l in open('$T/requests.jsonl') if json.loads(l)['scenario']=='e429' and json.loads(l)['step']==0]; print(len(t), 1 if len(t)==2 and t[1]-t[0] >= 0.95 else 0)")
if [ "$(field "$r" status)" = completed ] && [ "$gap" = "2 1" ] && cw run logs "$r" | grep -q 'rate limited'; then
	ok "429 with retry-after: 1 was asked again after a second, and the run completed"
else
	fail "e429: $(field "$r" status) gap '$gap' $(cw run logs "$r" | tail -4)"
fi
r=$(cw run start drop)
wait_until 60 "drop ended" ended "$r" || fail "drop did not end"
steps=$(python3 -c "import json; print(sum(1 for l in open('$T/requests.jsonl') if json.loads(l)['scenario']=='drop' and json.loads(l)['step']==1))")
if [ "$(field "$r" status)" = completed ] && [ "$steps" = 2 ] && cw run logs "$r" | grep -q 'broke off'; then
	ok "a stream cut off mid-answer was asked again, and the run completed"
else
	fail "drop: $(field "$r" status) $steps $(cw run logs "$r" | tail -4)"
fi

# ---- Chat Completions (OpenAI-compatible) ------------------------------------------
r=$(cw run start oamulti)
wait_until 120 "oamulti ended" ended "$r" || fail "oamulti did not end"
w=$(wt "$r")
if [ "$(field "$r" status)" = completed ] && grep -q 'chat completions' "$w/README" &&
    [ "$(git -C "$w" log -1 --format=%s)" = byok-openai ] && tool_result oamulti 1 | grep -qx base &&
    cw run logs "$r" | grep -q '^agent *Testing now' && cw run logs "$r" | grep -q '^final *oamulti done'; then
	ok "chat completions: the same multi-turn task (read, edit, test, two calls in one turn, commit)"
else
	fail "oamulti: $(field "$r" status) $(cat "$w/README") $(cw run logs "$r" | tail -8)"
fi
python3 - "$T/requests.jsonl" > "$T/oa.check" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r['scenario'] != 'oamulti' or r['step'] != 4: continue
    b = r['body']
    roles = [m['role'] for m in b['messages']]
    print(r['key_ok'], b.get('stream'), b['stream_options']['include_usage'], roles[0],
          ' '.join(t['function']['name'] for t in b['tools']),
          len(b['messages'][-3].get('tool_calls', [])), roles[-2:])
PY
if grep -qx "True True True system read_file list_files grep write_file edit_file bash 2 \['tool', 'tool'\]" "$T/oa.check"; then
	ok "chat completions requests: bearer key, stream with usage, system first, function tools, tool_calls answered by tool messages"
else
	fail "chat completions request shape: $(cat "$T/oa.check")"
fi
r=$(cw run start oaerr)
wait_until 60 "oaerr ended" ended "$r" || fail "oaerr did not end"
if [ "$(field "$r" status)" = completed ] && cw run logs "$r" | grep -q 'rate limited' &&
    cw run logs "$r" | grep -q 'broke off'; then
	ok "chat completions: 429 and a dropped stream are asked again; the run completed"
else
	fail "oaerr: $(field "$r" status) $(cw run logs "$r" | tail -6)"
fi
r=$(cw run start oa401)
wait_until 60 "oa401 ended" ended "$r" || fail "oa401 did not end"
[ "$(field "$r" status)" = failed ] && [ "$(reqs oa401)" = 1 ] && cw run show "$r" | grep -q 'refused the key (HTTP 401' &&
    ok "chat completions: 401 fails at once naming the key" || fail "oa401: $(field "$r" status) $(reqs oa401)"
r=$(cw run start oaquota)
wait_until 60 "oaquota ended" ended "$r" || fail "oaquota did not end"
[ "$(field "$r" status)" = failed ] && [ "$(reqs oaquota)" = 1 ] && cw run show "$r" | grep -q 'no credit left' &&
    ok "chat completions: insufficient_quota (429) is no credit: not retried, named" ||
    fail "oaquota: $(field "$r" status) $(reqs oaquota) $(cw run show "$r" | grep -i error)"

# ---- keyhunt ----------------------------------------------------------------------
r=$(cw run start keyhunt)
# The first call (env) waits for an answer: the agent is alive, blocked on its tool.
wait_until 60 "the first approval" pending "$r" || fail "keyhunt: no approval came"
approver() {
	while ! ended "$r"; do
		for a in $(sql "SELECT id FROM approvals WHERE run_id='$r' AND state='pending'"); do
			cw approve "$a" > /dev/null 2>&1 || true
		done
		sleep 0.3
	done
}
agent_pid() { pgrep -u "$(id -u)" -f 'cw-agent loop$' | head -1; }
wait_until 60 "the agent runs" agent_pid || true
ap=$(agent_pid || true)
# The same uid without capabilities (as root, CAP_SYS_PTRACE would open everything).
nocap() { if [ "$(id -u)" = 0 ]; then setpriv --bounding-set=-all --inh-caps=-all -- "$@"; else "$@"; fi; }
if [ -n "$ap" ] && nocap cat "/proc/$ap/cmdline" > /dev/null 2>&1 &&
    ! nocap cat "/proc/$ap/environ" > /dev/null 2>&1 &&
    ! nocap head -c 1 "/proc/$ap/mem" > /dev/null 2>&1 &&
    ! nocap readlink "/proc/$ap/fd/1" > /dev/null 2>&1 && grep -q '^NoNewPrivs:[[:space:]]*1' "/proc/$ap/status" &&
    grep -q '^Seccomp:[[:space:]]*2' "/proc/$ap/status"; then
	ok "the agent ($ap): environ, mem and its descriptors closed to a same-uid process; no_new_privs; seccomp filter"
else
	fail "agent process ${ap:-none}: $(grep -E 'NoNewPrivs|Seccomp' "/proc/$ap/status" 2>&1)
	    $(nocap cat "/proc/$ap/environ" 2>&1 | head -c 100 | tr '\0' ' ') | $(nocap readlink "/proc/$ap/fd/1" 2>&1)"
fi
# The key from the file: on grep's own command line it would find itself.
leaks=$(grep -lFf "$T/key.pattern" /proc/[0-9]*/environ /proc/[0-9]*/cmdline 2>/dev/null || true)
[ -z "$leaks" ] && ok "the key is in no readable environ or cmdline on the host" ||
    fail "key in: $leaks: $(for f in $leaks; do tr '\0' ' ' < "$f"; echo; done)"
approver &
pids+=($!)
wait_until 240 "keyhunt ended" ended "$r" || fail "keyhunt did not end"
hunted=$(python3 - "$T/requests.jsonl" "$KEY" <<'PY'
import json, sys
n = found = 0
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r['scenario'] != 'keyhunt': continue
    for m in r['body']['messages']:
        if isinstance(m.get('content'), list):
            for b in m['content']:
                if b.get('type') == 'tool_result':
                    n += 1
                    found += sys.argv[2] in json.dumps(b)
print(n, found)
PY
)
if [ "$(field "$r" status)" = completed ] && [ "${hunted#* }" = 0 ] && [ "${hunted% *}" -ge 9 ] &&
    tool_result keyhunt 6 | grep -q grep-done; then
	ok "key hunt: $hunted (tool results seen, holding the key): the key reached no tool result"
else
	fail "key hunt: status $(field "$r" status), results/leaks $hunted"
fi
sqlite3 "$CLOCKWORK_HOME/clockwork.db" .dump > "$T/dump.sql"
if ! grep -rqF "$KEY" "$T/daemon.out" "$CLOCKWORK_HOME/runs" "$CLOCKWORK_HOME/worktrees" 2>/dev/null &&
    ! grep -qF "$KEY" "$T/dump.sql"; then
	ok "the key is in no log, run file, worktree or store row"
else
	fail "the key leaked: $(grep -rlF "$KEY" "$T/daemon.out" "$CLOCKWORK_HOME/runs" "$CLOCKWORK_HOME/worktrees" "$T/dump.sql" 2>/dev/null | head)"
fi

[ $fails -eq 0 ] || { tail -n 30 "$T/daemon.out"; exit 1; }
echo "byok: all passed"
