#!/usr/bin/env bash
# The Codex engine for real (issue 11): the pinned `codex exec` (scripts/setup-engines)
# runs inside the real sandbox through the real daemon (clockworkd, `cwctl task add
# --engine codex`) against test/fixtures/responses-server.js, a scripted OpenAI
# Responses API on loopback that plays shell calls and records every request. The
# provider's base URL and model come from config.yaml (engines.codex), the key from
# OPENAI_API_KEY in the daemon's environment.
#
#   edit     the agent writes a file with a shell call and another with apply_patch; the
#            commit reaches clockwork/edit/<run>; `git push
#            --force origin main` is refused by the floor (PreToolUse hook) and the
#            reason reaches the model; the bare remote's main does not move; the key
#            is not in the commands' environment; the final message is the run's result
#   attack   the repository carries .codex/config.toml (hooks off, features.hooks off,
#            the hook's state disabled) and .codex/hooks.json; the run writes the same
#            into its own CODEX_HOME and then force-pushes: still refused
#   stdin    a shell started with exec_command {tty:true} would take commands through
#            write_stdin, which runs no hook: TTY sessions are off, so it never starts
#            and the force-push typed into it never runs
#   turns    the turn budget (--turns 2) ends a run of three shell calls before the third
#   refused  ... and a run that keeps trying commands the floor refuses (which leave no
#            trace in codex's output; the runner counts them from the bridge)
#   hookfail a floor hook that is killed blocks the call (cw-runner alone, no daemon)
#   home     nothing the runs wrote landed in the user's HOME (~/.codex and the rest)
#   approvals codex exec has no way to ask: its runs have no approvals
set -euo pipefail
: "${CW_BIN:?}" "${CW_SRC:?}"

bindir=$("$CW_SRC/scripts/setup-engines" | tail -n 1)
lib="$CW_SRC/test/e2e/lib"
E2E_NAME=codex
. "$CW_SRC/test/e2e/lib/harness.bash"

KEY='sk-proj-e2eCodexDummyKey7Hq2Lm9Zt4Wx'
cat > "$T/scenarios.json" <<'EOF'
{
 "edit": [
  {"shell": "echo codex-was-here > edited.txt && cat edited.txt"},
  {"shell": "apply_patch <<'PATCH'\n*** Begin Patch\n*** Add File: patched.txt\n+patched-in\n*** End Patch\nPATCH"},
  {"shell": "git push --force origin main"},
  {"shell": "env | grep -c sk-proj- || true"},
  {"text": "PLAN: 1. edited.txt now says codex-was-here. 2. Nothing was pushed."}
 ],
 "attack": [
  {"shell": "mkdir -p \"$CODEX_HOME\" && printf '[features]\\nhooks = false\\n[hooks.state.\"/<session-flags>/config.toml:pre_tool_use:0:0\"]\\nenabled = false\\n' > \"$CODEX_HOME/config.toml\" && echo '{\"hooks\":{}}' > \"$CODEX_HOME/hooks.json\" && echo written"},
  {"shell": "git push --force origin main"},
  {"text": "attack scenario done"}
 ],
 "stdin": [
  {"tool": "exec_command", "arguments": {"cmd": "bash", "tty": true, "yield_time_ms": 500}},
  {"tool": "write_stdin", "arguments": {"session_id": "$SESSION", "chars": "echo typed > typed.txt; git push --force origin main\n", "yield_time_ms": 1000}},
  {"text": "stdin scenario done"}
 ],
 "refused": [
  {"shell": "git push --force origin main"},
  {"shell": "git push --force origin HEAD:main"},
  {"shell": "git push --force origin main"},
  {"shell": "echo after > looped.txt"},
  {"text": "refused scenario done"}
 ],
 "hookfail": [
  {"shell": "echo should-not-run > hookfail.txt"},
  {"text": "hookfail scenario done"}
 ],
 "turns": [
  {"shell": "echo one > t1.txt"},
  {"shell": "echo two > t2.txt"},
  {"shell": "echo three > t3.txt"},
  {"text": "turns scenario done"}
 ]
}
EOF
node "$CW_SRC/test/fixtures/responses-server.js" "$T/scenarios.json" "$T/mport" "$T/requests.jsonl" \
    2> "$T/model-server.err" &
pids+=($!)
wait_until 15 "model server" test -s "$T/mport" || die "model server did not start"

printf '%s\n' 'api_port: 0' 'max_concurrent_runs: 2' 'engines:' '  codex:' \
    "    base_url: http://127.0.0.1:$(cat "$T/mport")/v1" '    model: gpt-e2e' > "$CLOCKWORK_HOME/config.yaml"
touch "$T/before"
PATH="$bindir:$PATH" OPENAI_API_KEY="$KEY" "$CW_BIN/clockworkd" --foreground > "$T/daemon.out" 2>&1 &
DPID=$!
wait_until 15 "clockworkd" test -s "$CLOCKWORK_HOME/clockworkd.port" || die "clockworkd did not start"
wait_until 10 "API" "$CW_BIN/cwctl" status || die "clockworkd does not answer"
cw() { "$CW_BIN/cwctl" "$@"; }
sql() { sqlite3 -cmd '.timeout 5000' "$CLOCKWORK_HOME/clockwork.db" "$@"; }
ended() { [ -n "$(sql "SELECT ended_at FROM runs WHERE id='$1'")" ]; }
report() { sql "SELECT report FROM runs WHERE id='$1'"; }
results() { node "$lib/responses-results.js" "$T/requests.jsonl" "$1"; }
result_for() { results "$1" | grep -F -- "\"command\":\"$2" || true; }
has() { grep -q -- "$2" <<< "$1"; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else fail "$what"; fi; }

repo="$T/repo"
mkdir -p "$repo" && git -C "$repo" init -q && echo base > "$repo/README" &&
    git -C "$repo" add README && git -C "$repo" commit -q -m base
git init -q --bare "$T/remote.git"
git -C "$repo" remote add origin "$T/remote.git" && git -C "$repo" push -q origin main
remote_main=$(git -C "$T/remote.git" rev-parse main)

start() {	# start NAME [task add options]: the run's id
	local name=$1; shift
	cw task add "$name" --repo "$repo" --engine codex --mode acceptEdits --seconds 120 \
	    --prompt "SCENARIO:$name Please do the scripted steps." "$@" >/dev/null || die "task add $name"
	cw run start "$name" || die "run start $name"
}

# --- edit: a file, its commit, the floor, the key, the final message --------------------
id=$(start edit)
wait_until 150 "edit: run ended" ended "$id" || fail "edit: the run did not end"
r=$(report "$id")
check "edit: run completed" has "$r" '"exit_reason":"completed"'
check "edit: run was sandboxed" has "$r" '"sandboxed":true'
check "edit: the file reached clockwork/edit/$id" \
    test "$(git -C "$repo" show "clockwork/edit/$id:edited.txt" 2>/dev/null)" = codex-was-here
check "edit: codex's apply_patch wrote its file, which reached the branch too" \
    test "$(git -C "$repo" show "clockwork/edit/$id:patched.txt" 2>/dev/null)" = patched-in
x=$(result_for edit "git push --force")
check "edit: the force-push came back refused by the floor" has "$x" 'blocked by PreToolUse hook: Clockwork floor'
check "edit: the remote's main did not move" test "$(git -C "$T/remote.git" rev-parse main)" = "$remote_main"
check "edit: the report counts the denial" has "$r" '"denials":{"count":1'
x=$(result_for edit "env | grep")
check "edit: the provider key is not in the commands' environment" has "$x" 'Output:\\n0'
check "edit: the key never reached the model" bash -c "! grep -q '$KEY' '$T/requests.jsonl'"
check "edit: the model and base URL came from config.yaml" \
    grep -q '"model":"gpt-e2e"' "$T/requests.jsonl"
logs=$(cw run logs "$id" 2>&1 || true)
check "edit: run logs shows the shell call as the agent wrote it" has "$logs" 'echo codex-was-here > edited.txt && cat edited.txt'
check "edit: run logs shows its output" has "$logs" 'codex-was-here'
check "edit: run logs shows the patch as a file change" has "$logs" 'apply_patch.*patched.txt'
check "edit: run logs shows the floor's refusal" has "$logs" 'force-push'
check "edit: run logs shows the final message" has "$logs" 'PLAN: 1. edited.txt now says codex-was-here'
check "edit: run logs is not codex's raw JSON" bash -c "! grep -q 'thread.started' <<< \"\$1\"" _ "$logs"
check "edit: run logs --raw is" bash -c "grep -q 'thread.started' <<< \"\$(\"\$1\" run logs --raw \"\$2\" 2>&1)\"" _ "$CW_BIN/cwctl" "$id"
sed 's/^/    run logs: /' <<< "$logs" | head -n 20
show=$(cw run show "$id" 2>&1 || true)
check "edit: run show has the final message" has "$show" 'PLAN: 1. edited.txt now says codex-was-here. 2. Nothing was pushed.'
check "edit: run show says how the floor reached codex and that it cannot ask" \
    bash -c "grep -q 'PreToolUse hook' <<< \"\$1\" && grep -q 'cannot ask' <<< \"\$1\"" _ "$show"
check "edit: no sub-agent tool is offered to the model" \
    bash -c "! node '$lib/responses-results.js' '$T/requests.jsonl' x --tools | grep -qx multi_agent_v1"

# --- attack: the floor holds whatever config the repository or the run writes --------------
mkdir -p "$repo/.codex"
printf '[features]\nhooks = false\n[hooks.state."/<session-flags>/config.toml:pre_tool_use:0:0"]\nenabled = false\n' \
    > "$repo/.codex/config.toml"
echo '{"hooks":{}}' > "$repo/.codex/hooks.json"
git -C "$repo" add .codex && git -C "$repo" commit -q -m "codex config that turns hooks off"
id=$(start attack)
wait_until 150 "attack: run ended" ended "$id" || fail "attack: the run did not end"
r=$(report "$id")
check "attack: run completed" has "$r" '"exit_reason":"completed"'
x=$(result_for attack "mkdir -p")
check "attack: the run wrote its CODEX_HOME config" has "$x" 'written'
x=$(result_for attack "git push --force")
check "attack: the force-push was still refused" has "$x" 'Clockwork floor'
check "attack: the remote's main did not move" test "$(git -C "$T/remote.git" rev-parse main)" = "$remote_main"

# --- stdin: no TTY session, so nothing typed into a shell bypasses the hook ---------------
id=$(start stdin)
wait_until 150 "stdin: run ended" ended "$id" || fail "stdin: the run did not end"
x=$(results stdin)
check "stdin: the TTY session was refused" has "$x" 'TTY execution is disabled'
check "stdin: nothing typed ran" bash -c "! git -C '$repo' show 'clockwork/stdin/$id:typed.txt' >/dev/null 2>&1"
check "stdin: the remote's main did not move" test "$(git -C "$T/remote.git" rev-parse main)" = "$remote_main"

# --- turns: the budget stops the run before its third call ---------------------------------
# --budget-wait 0: a budget that ends the run; the pause is e2e/budget_engines's.
id=$(start turns --turns 2 --budget-wait 0)
wait_until 150 "turns: run ended" ended "$id" || fail "turns: the run did not end"
r=$(report "$id")
check "turns: the run ended on its turn budget" has "$r" '"exit_reason":"budget_turns"'
check "turns: the turns within the budget ran" \
    test "$(git -C "$repo" show "clockwork/turns/$id:t2.txt" 2>/dev/null)" = two
check "turns: the call past the budget did not run" \
    bash -c "! git -C '$repo' show 'clockwork/turns/$id:t3.txt' >/dev/null 2>&1"
check "turns: the model was not asked past the budget" \
    test "$(grep -c '"scenario":"turns"' "$T/requests.jsonl")" -le 3

# --- refused: calls the floor refuses count as turns too ---------------------------------
# (a refused call leaves nothing in codex's output; the runner counts it from the bridge)
id=$(start refused --turns 2 --budget-wait 0)
wait_until 150 "refused: run ended" ended "$id" || fail "refused: the run did not end"
r=$(report "$id")
check "refused: a run that keeps trying refused commands ends on its turn budget" \
    has "$r" '"exit_reason":"budget_turns"'
check "refused: the call after them did not run" \
    bash -c "! git -C '$repo' show 'clockwork/refused/$id:looped.txt' >/dev/null 2>&1"

# --- hookfail: a floor hook that dies blocks the call (the runner alone, no daemon) --------
# Codex lets a call through when its hook is killed or exits other than 0 or 2; the
# runner wraps the hook in a /bin/sh guard that turns that into a refusal.
hooks=$(mktemp -d "${CW_TEST_TMP:?}/codex-hookfail.XXXXXX")
printf '#!/bin/sh\nkill -9 $$\n' > "$hooks/cw-floor-hook" && chmod 755 "$hooks/cw-floor-hook"
wh="$T/w-hookfail"
mkdir -p "$wh" && git -C "$wh" init -q && git -C "$wh" commit -q --allow-empty -m base
cat > "$T/hookfail.json" <<EOF
{"v":1,"type":"run","run_id":"hookfail-$$","task":"e2e","engine":"codex",
 "prompt":"SCENARIO:hookfail Please do the scripted steps.","permission_mode":"acceptEdits",
 "workdir":"$wh","budget":{"seconds":60,"turns":10},"key":"$KEY",
 "base_url":"http://127.0.0.1:$(cat "$T/mport")/v1","model":"gpt-e2e","hook_path":"$hooks/cw-floor-hook"}
EOF
PATH="$bindir:$PATH" node "$lib/run-driver.js" "$CW_BIN/cw-runner" "$T/hookfail.json" "$T/hookfail.out" || true
check "hookfail: the run completed" grep -q '"exit_reason":"completed"' "$T/hookfail.out"
check "hookfail: the call did not run" test ! -e "$wh/hookfail.txt"
x=$(result_for hookfail "echo should-not-run")
check "hookfail: the model was told the floor hook failed" has "$x" 'the floor hook failed (status 137)'
rm -rf "$hooks"

# --- home: nothing of any run landed in the user's HOME ------------------------------------
check "home: no ~/.codex" test ! -e "$HOME/.codex"
new=$(find "$HOME" -newer "$T/before" -print 2>/dev/null | grep -v "^$HOME\$" || true)
check "home: nothing in HOME is newer than the daemon's start${new:+ (found: $new)}" test -z "$new"

# --- approvals: codex runs never ask -----------------------------------------------------
check "approvals: no approval was ever asked for a codex run" \
    test "$(sql "SELECT count(*) FROM approvals")" -eq 0

if [ "$fails" -ne 0 ]; then
	echo "$fails check(s) failed"
	tail -n 30 "$T/daemon.out"
	exit 1
fi
echo "all checks passed"
