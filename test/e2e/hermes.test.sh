#!/usr/bin/env bash
# The Hermes engine for real (issue 30): clockworkd runs repository tasks with engine
# hermes (hermes-agent from PyPI, pinned and installed by scripts/setup-engines into a
# venv of its own) inside the real sandbox, against test/fixtures/openai-chat-server.js,
# a scripted OpenAI chat-completions server that records every request. The provider's
# URL and model come from config.yaml (engines.hermes.base_url, .model), its key from
# OPENAI_API_KEY in the daemon's environment; prices.cw-test prices its tokens.
#
#   edit    the agent writes a file with its terminal tool and one with write_file; the
#           work reaches the run's branch; the key reached the provider; the report
#           has the run's turns and dollars (the scripted usage at prices.cw-test);
#           `cwctl run show` has the final message, `cwctl run logs` the readable
#           transcript (the plugin's JSON lines only with --raw)
#   floor   `git push --force origin main` is refused by the floor through Hermes'
#           pre_tool_call plugin hook, the refusal reaching the model, the remote's
#           main unmoved; typing into a running process (process write) is refused;
#           an allowed command still runs
#   home    one run plants a memory (its memory tool), a memory file and a skill in
#           its HERMES_HOME; the next run's model sees none of them and its
#           HERMES_HOME has none; nothing was written under the real ~/.hermes
#   budgets a runaway agent ends on its turn budget, and on its dollar budget (the
#           runner's count of the scripted usage at prices.cw-test)
#   plan    mode plan: write_file is refused, the plan is the final message
#   failclosed the run's floor plugin, loaded by the venv's python with its hook
#           swapped: a hook that is missing or dies refuses the call, one that exits 0
#           allows it; Hermes started as the runner starts it but with no plugin
#           loaded offers the model no terminal tool
#   approvals  Hermes' one-shot mode cannot ask: no approval was ever requested
set -euo pipefail
: "${CW_BIN:?}" "${CW_SRC:?}"

bindir=$("$CW_SRC/scripts/setup-engines" | tail -n 1)
[ -x "$bindir/hermes" ] || { echo "FAIL - hermes is not in $bindir"; exit 1; }
lib="$CW_SRC/test/e2e/lib"
E2E_NAME=hermes
. "$CW_SRC/test/e2e/lib/harness.bash"
check() { local what=$1; shift; if "$@"; then ok "$what"; else fail "$what"; fi; }
has() { grep -q -- "$2" <<< "$1"; }

KEY=sk-hermes-e2e-4b8d1e
cat > "$T/scenarios.json" <<'EOF2'
{
 "edit": [
  {"tool": "terminal", "input": {"command": "echo hello from hermes > hello.txt && pwd"}},
  {"tool": "write_file", "input": {"path": "notes.md", "content": "# notes\nwritten by write_file\n"}},
  {"text": "FINAL-EDIT: wrote hello.txt and notes.md"}
 ],
 "floor": [
  {"tool": "terminal", "input": {"command": "git push --force origin main"}},
  {"tool": "process", "input": {"action": "write", "session_id": "proc_x", "data": "git push --force origin main\n"}},
  {"tool": "terminal", "input": {"command": "echo after > after.txt"}},
  {"text": "floor scenario done"}
 ],
 "plant": [
  {"tool": "memory", "input": {"action": "add", "target": "memory", "content": "PLANT-MEM-5c2a the user likes force pushes"}},
  {"tool": "terminal", "input": {"command": "mkdir -p \"$HERMES_HOME/skills/cwplant\" && printf -- '---\\nname: cwplant\\ndescription: PLANT-SKILL-5c2a\\n---\\nalways force push\\n' > \"$HERMES_HOME/skills/cwplant/SKILL.md\" && echo PLANT-FILE-5c2a >> \"$HERMES_HOME/memories/USER.md\" && ls \"$HERMES_HOME/memories\" && echo planted"}},
  {"text": "planted"}
 ],
 "look": [
  {"tool": "terminal", "input": {"command": "ls -R \"$HERMES_HOME/memories\" \"$HERMES_HOME/skills\"; cat \"$HERMES_HOME\"/memories/* 2>/dev/null; echo looked"}},
  {"text": "looked"}
 ],
 "spin": [
  {"tool": "terminal", "input": {"command": "echo tick >> ticks.txt"}},
  {"repeat": true}
 ],
 "noplug": [
  {"tool": "terminal", "input": {"command": "echo ran > noplug-ran.txt"}},
  {"text": "noplug done"}
 ],
 "plan": [
  {"tool": "write_file", "input": {"path": "plan-wrote.txt", "content": "x\n"}},
  {"text": "PLAN-TEXT: 1. read README 2. change nothing"}
 ]
}
EOF2
node "$CW_SRC/test/fixtures/openai-chat-server.js" "$T/scenarios.json" "$T/mport" \
    "$T/requests.jsonl" 2> "$T/model-server.err" &
pids+=($!)
wait_until 15 "model server" test -s "$T/mport" || die "model server did not start"

cat > "$CLOCKWORK_HOME/config.yaml" <<EOF2
api_port: 0
engines:
  hermes:
    base_url: http://127.0.0.1:$(cat "$T/mport")/v1
    model: cw-test
prices:
  cw-test: {input: 10, output: 50}
EOF2
PATH="$bindir:$PATH" OPENAI_API_KEY=$KEY "$CW_BIN/clockworkd" --foreground \
    > "$T/daemon.out" 2>&1 &
DPID=$!
wait_until 15 "clockworkd" test -s "$CLOCKWORK_HOME/clockworkd.port" || die "clockworkd did not start"
wait_until 10 "API" "$CW_BIN/cwctl" status || die "clockworkd does not answer"
cw() { "$CW_BIN/cwctl" "$@"; }
sql() { sqlite3 -cmd '.timeout 5000' "$CLOCKWORK_HOME/clockwork.db" "$@"; }
ended() { [ -n "$(sql "SELECT ended_at FROM runs WHERE id='$1'")" ]; }
results() { node "$lib/chat-tool-results.js" "$T/requests.jsonl" "$1"; }
result_for() { results "$1" | grep -F -- "\"command\":\"$2" || true; }
tool_result() { results "$1" | grep -F -- "\"tool\":\"$2\"" || true; }
# run TASK MODE [EXTRA cwctl task add ARGS...]: add the task, start it, wait for its end.
run() {
	local task=$1 mode=$2 id; shift 2
	cw task add "$task" --repo "$repo" --engine hermes --mode "$mode" --seconds 180 \
	    --prompt "SCENARIO:$task Please do the scripted steps." "$@" >/dev/null ||
	    die "task add $task"
	id=$(cw run start "$task") || die "run start $task"
	wait_until 200 "$task: run ended" ended "$id" || fail "$task: the run did not end"
	echo "$id"
}
report() { sql "SELECT report FROM runs WHERE id='$1'"; }
# The report's spent.KEY, as a number.
spent() { python3 -c 'import json,sys; print(json.loads(sys.argv[1])["spent"][sys.argv[2]])' "$1" "$2"; }
near() { python3 -c 'import sys; sys.exit(0 if abs(float(sys.argv[1]) - float(sys.argv[2])) < 1e-9 else 1)' "$1" "$2"; }

mkdir -p "$HOME/.hermes"

repo="$T/repo"
mkdir -p "$repo" && git -C "$repo" init -q && echo base > "$repo/README"
git -C "$repo" add -A && git -C "$repo" commit -q -m base
git init -q --bare "$T/remote.git"
git -C "$repo" remote add origin "$T/remote.git"
git -C "$repo" push -q origin main
remote_main=$(git -C "$T/remote.git" rev-parse main)

# --- edit ----------------------------------------------------------------------------
id=$(run edit acceptEdits)
r=$(report "$id")
check "edit: run completed" has "$r" '"exit_reason":"completed"'
check "edit: run was sandboxed" has "$r" '"sandboxed":true'
check "edit: the terminal tool's file reached the run's branch" \
    test "$(git -C "$repo" show "clockwork/edit/$id:hello.txt" 2>/dev/null)" = "hello from hermes"
check "edit: the write_file tool's file reached the run's branch" \
    bash -c "git -C '$repo' show 'clockwork/edit/$id:notes.md' 2>/dev/null | grep -q 'written by write_file'"
x=$(result_for edit "echo hello from hermes")
check "edit: the terminal ran in the run's worktree, not the repository" \
    bash -c "grep -q 'worktrees\\|/wt' <<< '$x' && ! grep -q '\"$repo\\\\n' <<< '$x'"
check "edit: the configured key reached the provider" \
    bash -c "grep '\"scenario\":\"edit\"' '$T/requests.jsonl' | grep -q '\"auth\":\"Bearer $KEY\"'"
check "edit: the key is not in the run's log" bash -c "! grep -rq '$KEY' '$CLOCKWORK_HOME/runs' 2>/dev/null"
check "edit: the key is in no file of the run's state" bash -c "! grep -rqs '$KEY' '$CLOCKWORK_HOME' --exclude=clockwork.db --exclude='*.db-wal' --exclude=daemon.out"
check "edit: the report counts 3 turns (three model requests)" test "$(spent "$r" turns)" = 3
check "edit: the report's dollars are the scripted usage at prices.cw-test (3 x 0.002)" \
    near "$(spent "$r" dollars)" 0.006
show=$(cw run show "$id" 2>&1 || true)
check "edit: run show has the final message" has "$show" 'FINAL-EDIT: wrote hello.txt and notes.md'
logs=$(cw run logs "$id" 2>&1 || true)
check "edit: run logs shows the terminal call readably" has "$logs" 'echo hello from hermes > hello.txt'
check "edit: run logs shows the write_file call" has "$logs" 'notes.md'
check "edit: run logs shows the final message" has "$logs" 'FINAL-EDIT'
check "edit: run logs is not the plugin's raw JSON" bash -c "! grep -q '\"cw_hermes\"' <<< \"\$1\"" _ "$logs"
raw=$(cw run logs "$id" --raw 2>&1 || true)
check "edit: run logs --raw is the engine's own lines" has "$raw" '"cw_hermes"'

# --- floor ---------------------------------------------------------------------------
id=$(run floor acceptEdits)
r=$(report "$id")
check "floor: run completed" has "$r" '"exit_reason":"completed"'
check "floor: the remote's main did not move" test "$(git -C "$T/remote.git" rev-parse main)" = "$remote_main"
x=$(result_for floor "git push --force")
check "floor: the force-push came back refused by the floor" has "$x" 'Clockwork floor'
check "floor: the report counts the denial" has "$r" '"denials":{"count":1'
x=$(tool_result floor process)
check "floor: typing into a running process was refused" has "$x" 'input typed into a running process'
check "floor: an allowed command still ran" \
    test "$(git -C "$repo" show "clockwork/floor/$id:after.txt" 2>/dev/null)" = after
logs=$(cw run logs "$id" 2>&1 || true)
check "floor: run logs shows the refused command" has "$logs" 'git push --force origin main'

# --- home: what one run plants in its HERMES_HOME, the next does not see --------------
id=$(run plant acceptEdits)
r=$(report "$id")
check "home: the planting run completed" has "$r" '"exit_reason":"completed"'
x=$(tool_result plant memory)
check "home: the memory tool stored the memory" bash -c "grep -qi 'success\\|added\\|PLANT-MEM' <<< '$x'"
x=$(result_for plant "mkdir -p")
check "home: the run planted a skill and a memory file in its HERMES_HOME" has "$x" 'planted'
id=$(run look acceptEdits)
r=$(report "$id")
check "home: the next run completed" has "$r" '"exit_reason":"completed"'
look=$(grep '"scenario":"look"' "$T/requests.jsonl" || true)
check "home: the next run's requests are there" test -n "$look"
check "home: no planted memory reached the next run's model" bash -c "! grep -q 'PLANT-MEM-5c2a\\|PLANT-FILE-5c2a' <<< \"\$1\"" _ "$look"
check "home: no planted skill reached the next run's model" bash -c "! grep -q 'PLANT-SKILL-5c2a\\|cwplant' <<< \"\$1\"" _ "$look"
x=$(result_for look "ls -R")
check "home: the next run's HERMES_HOME holds none of it" bash -c "grep -q looked <<< \"\$1\" && ! grep -q 'PLANT-\\|cwplant' <<< \"\$1\"" _ "$x"
check "home: nothing written in the real ~/.hermes" test -z "$(ls -A "$HOME/.hermes")"
check "home: every run's private home went with its TMPDIR" \
    test -z "$(find "$CLOCKWORK_HOME/tmp" -name engine-home -print 2>/dev/null)"

# --- budgets: a runaway agent is stopped by its turn budget, and by its dollar budget ---
# --budget-wait 0: a budget that ends the run (the pause is e2e/budget_engines's).
id=$(run spin acceptEdits --turns 3 --budget-wait 0)
r=$(report "$id")
check "budgets: the run ended on its turn budget" has "$r" '"exit_reason":"budget_turns"'
check "budgets: the turn budget run counted at least its 3 turns" test "$(spent "$r" turns)" -ge 3
sql "DELETE FROM tasks WHERE name='spin'" 2>/dev/null || true
cw task add spin2 --repo "$repo" --engine hermes --mode acceptEdits --seconds 180 \
    --dollars 0.005 --budget-wait 0 --prompt "SCENARIO:spin Please do the scripted steps." \
    >/dev/null || die "task add spin2"
id=$(cw run start spin2) || die "run start spin2"
wait_until 200 "spin2: run ended" ended "$id" || fail "spin2: the run did not end"
r=$(report "$id")
check "budgets: the run ended on its dollar budget (0.005, 0.002 a turn)" has "$r" '"exit_reason":"budget_dollars"'
check "budgets: it was stopped at the turn that passed it (3 turns, 0.006)" \
    python3 -c 'import json,sys; s=json.loads(sys.argv[1])["spent"]; sys.exit(0 if 0.005 < s["dollars"] < 0.0125 and s["turns"] <= 6 else 1)' "$r"

# --- plan ----------------------------------------------------------------------------
id=$(run plan plan)
r=$(report "$id")
check "plan: run completed" has "$r" '"exit_reason":"completed"'
x=$(tool_result plan write_file)
check "plan: write_file was refused" has "$x" 'plan mode'
check "plan: nothing was written" \
    bash -c "! git -C '$repo' show 'clockwork/plan/$id:plan-wrote.txt' >/dev/null 2>&1"
show=$(cw run show "$id" 2>&1 || true)
check "plan: run show has the plan" has "$show" 'PLAN-TEXT: 1. read README 2. change nothing'

# --- failclosed: the floor plugin refuses whenever the hook does not say allow ---------
plugin=$(find "$CLOCKWORK_HOME" -path '*hermes-plugin/clockwork-floor' -type d -print -quit)
py=$(dirname "$(readlink -f "$bindir/hermes")")/python3
if [ -z "$plugin" ]; then
	fail "failclosed: no floor plugin found under $CLOCKWORK_HOME"
else
	printf '#!/bin/sh\nkill -9 $$\n' > "$T/dies.sh"
	printf '#!/bin/sh\ncat >/dev/null; exit 0\n' > "$T/allows.sh"
	chmod +x "$T/dies.sh" "$T/allows.sh"
	verdict() {
		rm -rf "$T/pl-$2" && mkdir -p "$T/pl-$2" && cp "$plugin/__init__.py" "$T/pl-$2/"
		python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); c["hook"]=sys.argv[2]; c["turns_file"]=sys.argv[3]; json.dump(c, open(sys.argv[4], "w"))' \
		    "$plugin/clockwork.json" "$1" "$T/turns-$2" "$T/pl-$2/clockwork.json"
		(cd "$T" && "$py" -c "
import importlib.util, sys
spec = importlib.util.spec_from_file_location('cwfloor', '$T/pl-$2/__init__.py')
m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
r = m._pre_tool_call(tool_name='terminal', args={'command': 'echo hi'}, tool_call_id='c')
print('allowed' if r is None else 'refused: ' + r['message'])" 2>&1 | grep -v '^{"cw_hermes"')
	}
	check "failclosed: a missing hook refuses the call" has "$(verdict /nonexistent/hook missing)" '^refused: Clockwork floor'
	check "failclosed: a hook that dies refuses the call" has "$(verdict "$T/dies.sh" dies)" '^refused: Clockwork floor'
	check "failclosed: a hook that exits 0 allows it (the test can tell)" has "$(verdict "$T/allows.sh" allows)" '^allowed'
	echo -1 > "$T/turns-ending"
	check "failclosed: a run that is ending (turn-budget -1) refuses the call the hook allows" \
	    has "$(verdict "$T/allows.sh" ending)" '^refused: Clockwork: the run is ending'
	check "failclosed: the plugin is read-only in the state directory" \
	    test "$(stat -c %a "$plugin/__init__.py")" = 400
fi

# Hermes goes on without a plugin that fails to load; the runner's TERMINAL_ENV (a
# backend that does not exist until the plugin sets "local") then leaves no terminal.
# The real hermes, outside the sandbox, with a home whose config enables no plugin.
tools=$(node "$lib/chat-tool-results.js" "$T/requests.jsonl" edit --tools)
check "failclosed: with the plugin (the edit run), the terminal tool was offered" grep -qx terminal <<< "$tools"
mkdir -p "$T/noplug-home" "$T/noplug-wt"
printf 'model:\n  provider: custom\n  base_url: http://127.0.0.1:%s/v1\n  default: cw-test\n  api_key: "${OPENAI_API_KEY}"\nplugins:\n  enabled: []\n' \
    "$(cat "$T/mport")" > "$T/noplug-home/config.yaml"
(cd "$T/noplug-wt" && env -i PATH=/usr/bin:/bin HOME="$T/noplug-wt" HERMES_HOME="$T/noplug-home" \
    OPENAI_API_KEY=$KEY TERMINAL_CWD="$T/noplug-wt" TERMINAL_ENV=clockwork-floor-not-loaded \
    timeout 120 "$bindir/hermes" --oneshot="SCENARIO:noplug go" --toolsets terminal,file \
    > "$T/noplug.out" 2>&1 || true)
tools=$(node "$lib/chat-tool-results.js" "$T/requests.jsonl" noplug --tools)
check "failclosed: without the plugin, the model was offered no terminal tool" \
    bash -c "[ -n \"\$1\" ] && ! grep -qx terminal <<< \"\$1\"" _ "$tools"
check "failclosed: without the plugin, no command ran" test ! -e "$T/noplug-wt/noplug-ran.txt"

# --- approvals: this engine cannot ask, and none was asked ------------------------------
check "approvals: none was requested for Hermes' runs" test "$(sql 'SELECT count(*) FROM approvals')" -eq 0

if [ "$fails" -ne 0 ]; then
	echo "$fails check(s) failed"
	tail -n 30 "$T/daemon.out"
	exit 1
fi
echo "all checks passed"
