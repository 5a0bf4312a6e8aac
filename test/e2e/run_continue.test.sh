#!/usr/bin/env bash
# `cwctl run continue RUN --prompt TEXT` resumes the same conversation (issue 23), for
# each engine that keeps one, for real: the pinned Claude Code, Codex and OpenCode CLIs
# (scripts/setup-engines) and Clockwork's own agent (byok), each through the real
# clockworkd and cw-runner in the real sandbox, each against its scripted model server
# on loopback, which logs every request body.
#
#   <engine>    turn 1 (run start): the agent makes one tool call, then answers
#               FIRST-ANSWER-<engine>; its conversation is kept. Turn 2 (run continue):
#               the request the model gets carries turn 1's prompt, the tool call's
#               output and FIRST-ANSWER-<engine>, then the new prompt; the run resumed
#               the conversation the first one reported; it worked on the first run's
#               own branch: both runs list it, its log is turn 1's commit and then
#               turn 2's, both files are there, and run show says "continues RUN on B"
#   retry       run retry of a continue resumes the same conversation again
#   fresh       run continue --fresh: a new conversation, asked for (the request has
#               nothing of turn 1)
#   lost        the kept conversation removed from disk: the continued run is refused
#               before the engine starts, naming the run; no request reaches the model
#   command     a command task has no conversation: run continue is the follow-up on
#               the run's branch (the link row above is an agent's run
#               that kept none, refused with exit 6)
#   tasks       each run's conversation is kept under its own task's id
#   live        a continue of a run that has not ended exits 7; a second continue of the
#               same run while the first holds its branch exits 7, naming it
#   deleted     a continue on a branch that was discarded exits 8; nothing is queued
#   gc          an archived task's kept conversations are removed by cwctl gc, no
#               other task's
#   link        attack: the run replaces its own transcript (codex's rollout) with a
#               symlink to a credential outside the sandbox (~/.ssh/id_ed25519, a
#               canary). The runner, which copies the transcript out unsandboxed, must
#               not follow it: nothing is kept, the canary is nowhere under the kept
#               conversations, and run continue refuses (exit 6) rather than handing
#               the next run the key
set -euo pipefail
: "${CW_BIN:?}" "${CW_SRC:?}"

bindir=$("$CW_SRC/scripts/setup-engines" | tail -n 1)
E2E_NAME=continue
. "$CW_SRC/test/e2e/lib/harness.bash"
check() { local what=$1; shift; if "$@"; then ok "$what"; else fail "$what"; fi; }

KEY='sk-ant-e2eContinueKey3Fq8Wm'
# One script per engine: step 0 a tool call, step 1 the first answer, step 2 (the
# continued turn: two assistant turns already in the conversation) the second.
cat > "$T/claude.json" <<'EOF'
{"conv-claude": [
  {"tool": "Bash", "input": {"command": "echo TOOL-OUTPUT-claude > first.txt"}},
  {"text": "FIRST-ANSWER-claude: wrote first.txt."},
  {"tool": "Bash", "input": {"command": "echo SECOND-FILE-claude > second.txt"}},
  {"text": "SECOND-ANSWER-claude"}],
 "fresh-claude": [{"text": "unused"}]}
EOF
cat > "$T/codex.json" <<'EOF'
{"conv-codex": [
  {"shell": "echo TOOL-OUTPUT-codex > first.txt && cat first.txt"},
  {"text": "FIRST-ANSWER-codex: wrote first.txt."},
  {"shell": "echo SECOND-FILE-codex > second.txt"},
  {"text": "SECOND-ANSWER-codex"}],
 "live-codex": [
  {"shell": "echo LIVE-ONE > live.txt"},
  {"text": "LIVE-FIRST"},
  {"shell": "while [ ! -e go ]; do sleep 0.1; done; rm go; echo LIVE-TWO > live2.txt"},
  {"text": "LIVE-SECOND"}]}
EOF
mkdir -p "$HOME/.ssh" && echo "CANARY-CONTINUE-KEY-7c1e" > "$HOME/.ssh/id_ed25519" &&
    chmod 600 "$HOME/.ssh/id_ed25519"
python3 - "$T/codex.json" "$HOME/.ssh/id_ed25519" <<'PY'
import base64, json, sys
path, target = sys.argv[1], sys.argv[2]
s = json.load(open(path))
# The target in base64: the floor would refuse a command that names ~/.ssh, and this
# row is about what the runner does when a run gets past the floor.
b64 = base64.b64encode(target.encode()).decode()
s["link-codex"] = [
    {"shell": 'f=$(ls "$CODEX_HOME"/sessions/*/*/*/rollout-*.jsonl) && rm "$f" && '
              f'ln -s "$(echo {b64} | base64 -d)" "$f" && echo linked'},
    {"text": "link done"}]
json.dump(s, open(path, "w"))
PY
cat > "$T/opencode.json" <<'EOF'
{"conv-opencode": [
  {"tool": "bash", "input": {"command": "echo TOOL-OUTPUT-opencode > first.txt && cat first.txt", "description": "write"}},
  {"text": "FIRST-ANSWER-opencode: wrote first.txt."},
  {"tool": "bash", "input": {"command": "echo SECOND-FILE-opencode > second.txt", "description": "write"}},
  {"text": "SECOND-ANSWER-opencode"}]}
EOF
cat > "$T/byok.json" <<'EOF'
{"conv-byok": [
  {"tool": "write_file", "input": {"path": "first.txt", "content": "TOOL-OUTPUT-byok\n"}},
  {"text": "FIRST-ANSWER-byok: wrote first.txt."},
  {"tool": "write_file", "input": {"path": "second.txt", "content": "SECOND-FILE-byok\n"}},
  {"text": "SECOND-ANSWER-byok"}],
 "lost-byok": [
  {"text": "FIRST-ANSWER-lost"},
  {"text": "SECOND-ANSWER-lost"}]}
EOF
printf '%s\n' "$KEY" > "$T/key.pattern"
serve() {	# serve NAME SERVER.js [KEYFILE]
	node "$CW_SRC/test/fixtures/$2" "$T/$1.json" "$T/$1.port" "$T/$1.requests" ${3:+"$3"} \
	    2> "$T/$1.err" &
	pids+=($!)
	wait_until 15 "$1 model server" test -s "$T/$1.port" || die "$1 model server did not start"
}
serve claude model-server.js
serve codex responses-server.js
serve opencode openai-chat-server.js
serve byok provider-server.js "$T/key.pattern"

cat > "$CLOCKWORK_HOME/config.yaml" <<EOF
api_port: 0
max_concurrent_runs: 4
prices:
  claude-e2e: {input: 10, output: 50}
engines:
  claude:
    base_url: http://127.0.0.1:$(cat "$T/claude.port")
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
report() { sql "SELECT report FROM runs WHERE id='$1'"; }
jget() { python3 -c 'import json,sys; v=json.loads(sys.argv[1])
for k in sys.argv[2].split("."): v = v.get(k) if isinstance(v, dict) else None
print("" if v is None else (json.dumps(v) if isinstance(v, bool) else v))' "$1" "$2"; }
printf '%s\n' "$KEY" | cw key add main --provider anthropic \
    --base-url "http://127.0.0.1:$(cat "$T/byok.port")" --model claude-e2e > /dev/null ||
    die "key add"

repo="$T/repo"
mkdir -p "$repo" && git -C "$repo" init -q && echo base > "$repo/README" &&
    git -C "$repo" add README && git -C "$repo" commit -q -m base

# The requests of a log whose body holds every one of the strings (as JSON text).
carries() {	# carries LOG STRING...: 0 when one request's body has them all
	python3 - "$@" <<'PY'
import json, sys
log, want = sys.argv[1], sys.argv[2:]
for line in open(log):
    body = json.dumps(json.loads(line).get("body", {}))
    if all(w in body for w in want):
        sys.exit(0)
sys.exit(1)
PY
}

turn1() {	# turn1 ENGINE: the first run's id
	local e=$1 extra=()
	[ "$e" = byok ] && extra=(--key main)
	cw task add "t-$e" --repo "$repo" --engine "$e" --mode acceptEdits --seconds 150 \
	    --prompt "SCENARIO:conv-$e FIRST-PROMPT-$e: look at the repository." \
	    "${extra[@]}" > /dev/null || die "task add t-$e"
	cw run start "t-$e" || die "run start t-$e"
}

declare -A first second
for e in claude codex opencode byok; do first[$e]=$(turn1 "$e"); done
for e in claude codex opencode byok; do
	wait_until 180 "$e: turn 1 ended" ended "${first[$e]}" || fail "$e: turn 1 did not end"
done
for e in claude codex opencode byok; do
	id=${first[$e]} r=$(report "${first[$e]}")
	check "$e: turn 1 completed" test "$(jget "$r" exit_reason)" = completed
	check "$e: turn 1 kept its conversation ($(jget "$r" conversation.error))" \
	    test "$(jget "$r" conversation.kept)" = true
	tid=$(sql "SELECT task_id FROM runs WHERE id='$id'")
	check "$e: kept under its own task's id (conversations/tasks/$tid/$id)" \
	    test -d "$CLOCKWORK_HOME/conversations/tasks/$tid/$id"
	check "$e: turn 1's model answered FIRST-ANSWER-$e" \
	    carries "$T/$e.requests" "FIRST-PROMPT-$e"
	second[$e]=$(cw run continue "$id" --prompt "SECOND-PROMPT-$e: what did you find?") ||
	    fail "$e: run continue exited $?"
done
for e in claude codex opencode byok; do
	[ -n "${second[$e]}" ] || continue
	wait_until 180 "$e: turn 2 ended" ended "${second[$e]}" || fail "$e: turn 2 did not end"
done
for e in claude codex opencode byok; do
	[ -n "${second[$e]}" ] || continue
	r=$(report "${second[$e]}") r1=$(report "${first[$e]}")
	check "$e: turn 2 completed ($(jget "$r" error))" test "$(jget "$r" exit_reason)" = completed
	check "$e: turn 2's request carries turn 1's prompt, the tool call and FIRST-ANSWER-$e, and the new prompt" \
	    carries "$T/$e.requests" "FIRST-PROMPT-$e" "FIRST-ANSWER-$e" "SECOND-PROMPT-$e"
	if [ "$e" != claude ]; then
		check "$e: ... and the tool call's output" \
		    carries "$T/$e.requests" "TOOL-OUTPUT-$e" "SECOND-PROMPT-$e"
	fi
	check "$e: turn 2 resumed turn 1's conversation ($(jget "$r1" conversation.id))" \
	    test "$(jget "$r" conversation.resumed_run)" = "${first[$e]}" -a \
	    "$(jget "$r" conversation.resumed_id)" = "$(jget "$r1" conversation.id)"
	check "$e: turn 2's result is the model's second answer" \
	    test "$(jget "$r" result)" = "SECOND-ANSWER-$e"
	check "$e: turn 2 started from turn 1's branch" test "$(jget "$r" git.base_ref)" = \
	    "refs/heads/clockwork/t-$e/${first[$e]}"
	b="clockwork/t-$e/${first[$e]}"
	check "$e: turn 2 worked on turn 1's branch $b" test "$(sql "SELECT branch FROM runs \
	    WHERE id='${second[$e]}'")" = "$b" -a "$(sql "SELECT branch FROM runs WHERE \
	    id='${first[$e]}'")" = "$b" -a "$(sql "SELECT continues FROM runs WHERE \
	    id='${second[$e]}'")" = "${first[$e]}"
	check "$e: no branch of turn 2's own" test -z "$(git -C "$repo" branch --list \
	    "clockwork/t-$e/${second[$e]}")"
	f1=$(sql "SELECT final_commit FROM runs WHERE id='${first[$e]}'")
	f2=$(sql "SELECT final_commit FROM runs WHERE id='${second[$e]}'")
	check "$e: the branch's log is turn 1's commit, then turn 2's ($(git -C "$repo" log \
	    --format=%s -n 2 "$b" 2>&1 | paste -sd '|'))" test "$(git -C "$repo" log --format=%H \
	    -n 2 "$b" 2>/dev/null | paste -sd ,)" = "$f2,$f1" -a "$(git -C "$repo" log --format=%s \
	    -n 2 "$b" | paste -sd '|')" = "clockwork: work left uncommitted at the end of run \
${second[$e]}|clockwork: work left uncommitted at the end of run ${first[$e]}"
	check "$e: both turns' files are on the branch" test "$(git -C "$repo" show "$b:first.txt" \
	    2>/dev/null)" = "TOOL-OUTPUT-$e" -a "$(git -C "$repo" show "$b:second.txt" \
	    2>/dev/null)" = "SECOND-FILE-$e"
	check "$e: run show says it continues turn 1 on $b" bash -c 'grep -q "^continues: *$1 on $2$" <<< "$3"' \
	    _ "${first[$e]}" "$b" "$(cw run show "${second[$e]}" 2>&1)"
	check "$e: turn 2 kept the conversation again, for a third turn" \
	    test "$(jget "$r" conversation.kept)" = true
	check "$e: run show says what it resumed" bash -c 'grep -q "^conversation: kept.*resumed run $1" <<< "$2"' \
	    _ "${first[$e]}" "$(cw run show "${second[$e]}" 2>&1)"
done

# --- retry: a retry of a continue repeats it in the same conversation -------------------
if [ -n "${second[claude]}" ]; then
	: > "$T/claude.requests"
	id=$(cw run retry "${second[claude]}") || fail "retry: run retry exited $?"
	wait_until 120 "retry ended" ended "$id" || fail "retry: the run did not end"
	r=$(report "$id")
	check "retry: it resumed turn 1's conversation again" \
	    test "$(jget "$r" conversation.resumed_run)" = "${first[claude]}"
	check "retry: its request carries turn 1 and the follow-up" \
	    carries "$T/claude.requests" "FIRST-ANSWER-claude" "SECOND-PROMPT-claude"
fi

# --- fresh: a new conversation only when asked for ---------------------------------------
: > "$T/claude.requests"
id=$(cw run continue "${first[claude]}" --fresh --prompt "FRESH-PROMPT: start over") ||
    die "run continue --fresh exited $?"
wait_until 120 "fresh ended" ended "$id" || fail "fresh: the run did not end"
check "fresh: the run has no resumed conversation" \
    test -z "$(jget "$(report "$id")" conversation.resumed_run)"
check "fresh: its requests carry the new prompt" carries "$T/claude.requests" FRESH-PROMPT
check "fresh: ... and nothing of turn 1" bash -c '! grep -q "FIRST-ANSWER-claude" "$1"' _ \
    "$T/claude.requests"

# --- lost: the kept conversation is gone from disk ---------------------------------------
cw task add lost --repo "$repo" --engine byok --key main --mode acceptEdits --seconds 60 \
    --prompt "SCENARIO:lost-byok LOST-PROMPT" > /dev/null || die "task add lost"
id=$(cw run start lost)
wait_until 120 "lost: turn 1 ended" ended "$id" || fail "lost: turn 1 did not end"
tid=$(sql "SELECT task_id FROM runs WHERE id='$id'")
rm -rf "$CLOCKWORK_HOME/conversations/tasks/$tid/$id"
before=$(wc -l < "$T/byok.requests")
id2=$(cw run continue "$id" --prompt "LOST-SECOND") || fail "lost: run continue exited $?"
wait_until 60 "lost: turn 2 ended" ended "$id2" || fail "lost: turn 2 did not end"
r=$(report "$id2")
check "lost: the continued run was refused" test "$(sql "SELECT status FROM runs WHERE id='$id2'")" = refused
check "lost: ... saying the conversation of $id was not kept ($(jget "$r" error))" \
    bash -c 'grep -q "conversation of run $1 was not kept" <<< "$2"' _ "$id" "$(jget "$r" error)"
check "lost: ... and no request reached the model" test "$(wc -l < "$T/byok.requests")" = "$before"

# --- link: the run points its transcript at a credential -------------------------------
cw task add link --repo "$repo" --engine codex --mode acceptEdits --seconds 120 \
    --prompt "SCENARIO:link-codex LINK-PROMPT" > /dev/null || die "task add link"
id=$(cw run start link)
wait_until 150 "link: the run ended" ended "$id" || fail "link: the run did not end"
r=$(report "$id")
check "link: the run's shell made the link" grep -qF 'Output:\nlinked' "$T/codex.requests"
check "link: the conversation was not kept ($(jget "$r" conversation.error))" \
    test "$(jget "$r" conversation.kept)" = false
check "link: the canary is nowhere under the kept conversations" \
    bash -c '! grep -rq CANARY-CONTINUE-KEY "$1/conversations"' _ "$CLOCKWORK_HOME"
set +e
out=$(cw run continue "$id" --prompt "more" 2>&1)
rc=$?
set -e
check "link: run continue refuses, exit 6 (got $rc: $out)" test "$rc" = 6

# --- command: no conversation to resume, a follow-up as before --------------------------
cw task add cmd --repo "$repo" --engine command --prompt "echo one > one.txt" > /dev/null ||
    die "task add cmd"
id=$(cw run start cmd)
wait_until 60 "command: the run ended" ended "$id" || fail "command: the run did not end"
id2=$(cw run continue "$id" --prompt "cat one.txt > two.txt") || fail "command: run continue exited $?"
wait_until 60 "command: the follow-up ended" ended "$id2" || fail "command: the follow-up did not end"
check "command: the follow-up ran on the run's branch" test "$(git -C "$repo" show \
    "clockwork/cmd/$id:two.txt" 2>/dev/null)" = one
check "command: ... with no conversation" test -z "$(jget "$(report "$id2")" conversation)"

# --- live, held, deleted: one run at a time on a branch, and only while it is there --------
cw task add live --repo "$repo" --engine codex --mode acceptEdits --seconds 150 \
    --prompt "SCENARIO:live-codex LIVE-PROMPT" > /dev/null || die "task add live"
l1=$(cw run start live)
wait_until 150 "live: turn 1 ended" ended "$l1" || fail "live: turn 1 did not end"
l2=$(cw run continue "$l1" --prompt "LIVE-PROMPT-2") || fail "live: run continue exited $?"
lwt="$CLOCKWORK_HOME/worktrees/live/$l2"
running() { [ "$(sql "SELECT status FROM runs WHERE id='$1'")" = running ] &&
    grep -q '"scenario":"live-codex","step":2' "$T/codex.requests"; }
wait_until 150 "live: turn 2 is at its waiting tool call" running "$l2" ||
    fail "live: turn 2 did not reach its tool call"
set +e
out=$(cw run continue "$l2" --prompt more 2>&1); rc=$?
check "live: continuing a run that has not ended exits 7 (got $rc: $out)" test "$rc" = 7
out=$(cw run continue "$l1" --prompt more 2>&1); rc=$?
check "live: a second continue of the same run exits 7, naming the holder (got $rc: $out)" \
    bash -c '[ "$1" = 7 ] && grep -q "held by run $3" <<< "$2"' _ "$rc" "$out" "$l2"
set -e
check "live: ... and queued nothing" test "$(sql "SELECT count(*) FROM runs WHERE continues='$l1'")" = 1
touch "$lwt/go"
wait_until 150 "live: turn 2 ended" ended "$l2" || fail "live: turn 2 did not end"
r=$(report "$l2")
check "live: turn 2 completed on turn 1's branch ($(jget "$r" error))" test "$(jget "$r" exit_reason)" = \
    completed -a "$(git -C "$repo" show "clockwork/live/$l1:live2.txt" 2>/dev/null)" = LIVE-TWO
cw run discard "$l2" > /dev/null || fail "live: run discard"
set +e
out=$(cw run continue "$l1" --prompt more 2>&1); rc=$?
set -e
check "deleted: continuing on a discarded branch exits 8 (got $rc: $out)" \
    bash -c '[ "$1" = 8 ] && grep -q "is no longer in" <<< "$2"' _ "$rc" "$out"
check "deleted: ... and queued nothing" test "$(sql "SELECT count(*) FROM runs WHERE continues='$l1'")" = 1

# --- gc: an archived task's conversations go with it ------------------------------------
tid=$(sql "SELECT id FROM tasks WHERE name='t-codex'")
cw task rm t-codex > /dev/null || fail "task rm t-codex"
cw gc > /dev/null || fail "gc exited $?"
check "gc: the archived task's kept conversations are removed" \
    test ! -e "$CLOCKWORK_HOME/conversations/tasks/$tid"
check "gc: ... and no other task's" test -d "$CLOCKWORK_HOME/conversations/tasks/$(sql \
    "SELECT id FROM tasks WHERE name='t-byok'")"

if [ "$fails" -gt 0 ]; then
	tail -n 30 "$T/daemon.out"
	exit 1
fi
echo "all run continue checks passed"
