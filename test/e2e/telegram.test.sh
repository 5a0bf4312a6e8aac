#!/usr/bin/env bash
# Telegram approvals with the real runner (issue 13): clockworkd runs two repository
# tasks with the real Claude Code CLI in the real sandbox, against the scripted model
# server (test/fixtures/model-server.js); each asks, through the permission-prompt
# tool, to run a Bash command that acceptEdits does not allow by itself. Telegram is
# the local stand-in for the Bot API (test/fixtures/telegram-bot-api.py):
#   - each approval reaches its task's chat with Approve and Deny buttons;
#   - a press from another chat, and from a group member not on allowed_user_ids,
#     changes nothing and is answered "Not allowed";
#   - Approve from the task's private chat: the command runs (its file is on disk);
#     Deny from a listed group member: the command does not run;
#   - the bot token is in no process's environment (the runners' and engines'
#     included), no log, no store row, no run's files.
set -euo pipefail
: "${CW_BIN:?}" "${CW_SRC:?}"
bindir=$("$CW_SRC/scripts/setup-engines" | tail -n 1)
E2E_NAME=telegram
. "$CW_SRC/test/e2e/lib/harness.bash"

TG_TOKEN="7000000003:AAGe2eTOKENabcdefghijklmnopqrstuvwx"
node -e 'const q = (s) => "\"" + s + "\"";
const cmd = (f) => `sh -c ${q("echo telegram > " + f)}`;
require("fs").writeFileSync(process.argv[1], JSON.stringify({
  tgapprove: [{ tool: "Bash", input: { command: cmd("tg-allowed.txt") } }, { text: "approve done" }],
  tgdeny: [{ tool: "Bash", input: { command: cmd("tg-denied.txt") } }, { text: "deny done" }],
}))' "$T/scenarios.json"
node "$CW_SRC/test/fixtures/model-server.js" "$T/scenarios.json" "$T/mport" "$T/requests.jsonl" \
    2> "$T/model-server.err" &
pids+=($!)
python3 "$CW_SRC/test/fixtures/telegram-bot-api.py" "$TG_TOKEN" "$T/tgport" "$T/tg.log" &
pids+=($!)
wait_until 15 "model server" test -s "$T/mport" || die "model server did not start"
wait_until 15 "Bot API stand-in" test -s "$T/tgport" || die "the Bot API stand-in did not start"
TGB="http://127.0.0.1:$(cat "$T/tgport")"

# The model server is the engine's base_url, which the run's egress proxy allows.
printf '%s\n' 'api_port: 0' 'approvals:' '  ask: all' 'max_concurrent_runs: 2' 'engines:' '  claude:' \
    "    base_url: http://127.0.0.1:$(cat "$T/mport")" > "$CLOCKWORK_HOME/config.yaml"
PATH="$bindir:$PATH" \
    ANTHROPIC_API_KEY=sk-ant-e2e-dummy CW_TELEGRAM_API_BASE_FOR_TESTS="$TGB" \
    "$CW_BIN/clockworkd" --foreground > "$T/daemon.out" 2>&1 &
DPID=$!
wait_until 15 "clockworkd" test -s "$CLOCKWORK_HOME/clockworkd.port" || die "clockworkd did not start"
cw() { "$CW_BIN/cwctl" "$@"; }
sql() { sqlite3 -cmd '.timeout 5000' "$CLOCKWORK_HOME/clockwork.db" "$@"; }
tg() { curl -s --noproxy '*' "$TGB$1" "${@:2}"; }
tgq() { tg /_test/state > "$T/tgstate"; python3 -c "import json; s=json.load(open('$T/tgstate')); print($1)"; }
press() {
	tg /_test/press -H 'Content-Type: application/json' --data-binary \
	    "{\"chat_id\":$1,\"chat_type\":\"$2\",\"user_id\":$3,\"data\":\"$4\",\"message_id\":1}" |
	    python3 -c 'import json,sys; print(json.load(sys.stdin)["callback_query_id"])'
}
answer_text() { tgq "([a['text'] for a in s['answers'] if a['callback_query_id']=='$1'] or [''])[0]"; }
answered() { [ -n "$(answer_text "$1")" ]; }
ended() { [ -n "$(sql "SELECT ended_at FROM runs WHERE id='$1'")" ]; }
wt() { sql "SELECT worktree FROM runs WHERE id='$1'"; }

printf '%s\n' "$TG_TOKEN" | cw telegram set-token >/dev/null || die "set-token"
repo="$T/repo"
mkdir -p "$repo" && git -C "$repo" init -q && echo base > "$repo/README" &&
    git -C "$repo" add README && git -C "$repo" commit -q -m base
cw task add tgapprove --repo "$repo" --engine claude --mode acceptEdits --seconds 300 \
    --prompt "SCENARIO:tgapprove Please do the scripted steps." --telegram-chat 111 >/dev/null || die "task add"
cw task add tgdeny --repo "$repo" --engine claude --mode acceptEdits --seconds 300 \
    --prompt "SCENARIO:tgdeny Please do the scripted steps." --telegram-chat -100500 \
    --telegram-allow 7001 >/dev/null || die "task add"
ra=$(cw run start tgapprove); rd=$(cw run start tgdeny)
ok "two claude runs started: $ra $rd"

aid() { sql "SELECT id FROM approvals WHERE run_id='$1'"; }
wait_until 240 "both approvals pending" sh -c "[ \"\$(sqlite3 '$CLOCKWORK_HOME/clockwork.db' \"SELECT count(*) FROM approvals WHERE state='pending'\")\" = 2 ]" ||
    die "the approvals never came: $(cw run show "$ra" 2>&1 | tail -5)"
aa=$(aid "$ra"); ad=$(aid "$rd")
sent() { tgq "len([m for m in s['sent'] if '$1' in m['text'] and m['chat']['id']==$2 and 'inline_keyboard' in m.get('reply_markup', {})])"; }
both_sent() { [ "$(sent "$aa" 111)" = 1 ] && [ "$(sent "$ad" -100500)" = 1 ]; }
wait_until 20 "both messages" both_sent || true
if both_sent && [[ "$(tgq "[m['text'] for m in s['sent'] if '$aa' in m['text']][0]")" == *tg-allowed.txt* ]]; then
	ok "each approval reached its task's chat with its command and Approve/Deny buttons"
else
	fail "messages: $(tgq "s['sent']")"
fi

# The token is in no other process's environment: runners and engines are live now.
leaks=$(grep -lF "${TG_TOKEN#*:}" /proc/[0-9]*/environ 2>/dev/null || true)
runner=$(sql "SELECT runner_pid FROM runs WHERE id='$ra'")
if [ -z "$leaks" ] && [ -r "/proc/$runner/environ" ]; then
	ok "the bot token is in no process's environment (runner $runner and its engine live)"
else
	fail "the token is in: $leaks"
fi

q=$(press 222 private 5001 "cw1:a:$aa")
wait_until 20 "answered" answered "$q" || true
q2=$(press -100500 supergroup 7002 "cw1:a:$ad")
wait_until 20 "answered" answered "$q2" || true
if [ "$(answer_text "$q")" = "Not allowed" ] && [ "$(answer_text "$q2")" = "Not allowed" ] &&
    [ "$(sql "SELECT count(*) FROM approvals WHERE state='pending'")" = 2 ]; then
	ok "a press from another chat and from a group member not on the list: \"Not allowed\", nothing changed"
else
	fail "refused presses: '$(answer_text "$q")' '$(answer_text "$q2")' $(sql "SELECT id, state FROM approvals")"
fi

q=$(press 111 private 5001 "cw1:a:$aa")
q2=$(press -100500 supergroup 7001 "cw1:d:$ad")
wait_until 20 "answered" answered "$q" || true
wait_until 20 "answered" answered "$q2" || true
[ "$(answer_text "$q")" = "Approved." ] && [ "$(answer_text "$q2")" = "Denied." ] ||
    fail "presses: '$(answer_text "$q")' '$(answer_text "$q2")'"
for r in "$ra" "$rd"; do wait_until 240 "run $r ended" ended "$r" || fail "run $r did not end"; done
if grep -q telegram "$(wt "$ra")/tg-allowed.txt" 2>/dev/null; then
	ok "Approve from the task's chat: the real runner ran the command (tg-allowed.txt is on disk)"
else
	fail "approved command's file is missing in $(wt "$ra")"
fi
if [ ! -e "$(wt "$rd")/tg-denied.txt" ] &&
    [ "$(sql "SELECT state || '|' || answered_by FROM approvals WHERE id='$ad'")" = "denied|telegram user 7001" ]; then
	ok "Deny from a listed group member: tg-denied.txt was not written"
else
	fail "the denied command ran"
fi
[ "$(sql "SELECT answered_by FROM approvals WHERE id='$aa'")" = "telegram user 5001" ] ||
    fail "answered_by: $(sql "SELECT answered_by FROM approvals WHERE id='$aa'")"

t=${TG_TOKEN#*:}
if ! grep -rqF "$t" "$T/daemon.out" "$CLOCKWORK_HOME/runs" "$(wt "$ra")" "$(wt "$rd")" 2>/dev/null &&
    sqlite3 "$CLOCKWORK_HOME/clockwork.db" .dump > "$T/dump.sql" && ! grep -qF "$t" "$T/dump.sql"; then
	ok "the token is in no log, run file or store row"
else
	fail "the token leaked: $(grep -rlF "$t" "$T/daemon.out" "$CLOCKWORK_HOME" "$(wt "$ra")" 2>/dev/null | grep -v secrets | head)"
fi

[ $fails -eq 0 ] || { tail -n 30 "$T/daemon.out"; exit 1; }
echo "telegram: all passed"
