#!/usr/bin/env bash
# Budgets pause and ask (issue 23), end to end: the real clockworkd, the real cw-runner
# in the real sandbox, Clockwork's own agent (byok) against the scripted provider
# (test/fixtures/provider-server.js, which reports token usage, priced in config.yaml so
# that cost accrues), the Bot API stand-in (test/fixtures/telegram-bot-api.py) and the
# Inbox in Debian's Chromium (lib/inbox-budget.js).
#
#   pause     --dollars 0.01: the first turn costs $0.015, so the run is held (the cgroup
#             freezer as root, SIGSTOP as a normal user; the record names which) and
#             asked about: the question is in `cwctl approvals`, in the task's Telegram
#             chat and on the Inbox card; "Extend" pressed in the Inbox lets it go on
#             ($0.02 now), and it finishes, completed, its commit on its branch
#   ceiling   --dollars 0.01 --max-dollars 0.015: Telegram's Approve would pass the hard
#             ceiling and is refused (nothing changes); cwctl approve extends only up to
#             the ceiling; past the ceiling the run ends (budget_dollars), unasked, with
#             its work sealed
#   noanswer  --budget-wait 5: nobody answers; the run ends at budget_wait as a budget
#             always ended one (budget_dollars), its commit and its uncommitted file
#             sealed on its branch, the question expired
#   frozen    the command engine, a loop that writes a counter to a file: at its time
#             budget the file stops changing while a control loop outside the run ticks
#             on (judged by the files, no fixed sleep); extend lets it go on, and the
#             time held does not count against the time budget
set -euo pipefail
: "${CW_BIN:?}" "${CW_SRC:?}"
# The pinned engines' node_modules (playwright-core for the Inbox row), found before
# the harness moves HOME: under the test's own HOME they would be installed again.
modules=$(dirname "$("$CW_SRC/scripts/setup-engines" | tail -n 1)")
E2E_NAME=budget
. "$CW_SRC/test/e2e/lib/harness.bash"
set +o pipefail

KEY="sk-ant-e2e-budget-$(head -c 8 /dev/urandom | od -An -tx1 | tr -d ' \n')"
TG_TOKEN="7000000004:AAGe2eBUDGETabcdefghijklmnopqrstuv"
# $10 and $50 per million: a turn of 1000 in, 100 out costs $0.015; a small one
# (10 in, 1 out) $0.00015.
BIG='"usage": {"input_tokens": 1000, "output_tokens": 100}'
MID='"usage": {"input_tokens": 1000, "output_tokens": 10}'
SMALL='"usage": {"input_tokens": 10, "output_tokens": 1}'
W() { printf '{"tool": "write_file", "input": {"path": "%s", "content": "%s"}}' "$1" "$2"; }
B() { printf '{"tool": "bash", "input": {"command": "%s"}}' "$1"; }
cat > "$T/scenarios.json" <<EOF2
{
 "pause": [
  {"tools": [$(W pause.txt 'paused-once\n'), $(B 'git add pause.txt'), $(B 'git commit -q -m pause-work')], $BIG},
  {"tools": [$(W pause.txt 'paused-once\nafter-extend\n')], $SMALL},
  {"text": "pause done", $SMALL}
 ],
 "ceiling": [
  {"tools": [$(W ceiling.txt 'one\n'), $(B 'git add ceiling.txt'), $(B 'git commit -q -m ceiling-work')], $MID},
  {"tools": [$(W ceiling.txt 'one\ntwo\n')], $SMALL},
  {"tools": [$(W ceiling.txt 'one\ntwo\nthree\n')], $MID},
  {"text": "ceiling done", $SMALL}
 ],
 "noanswer": [
  {"tools": [$(W kept.txt 'kept\n'), $(B 'git add kept.txt'), $(B 'git commit -q -m noanswer-work'), $(W loose.txt 'loose\n')], $SMALL},
  {"tools": [$(B 'true')], $BIG},
  {"tools": [$(W never.txt 'never\n')], $SMALL},
  {"text": "noanswer done", $SMALL}
 ]
}
EOF2
printf '%s\n' "$KEY" > "$T/key.pattern"
node "$CW_SRC/test/fixtures/provider-server.js" "$T/scenarios.json" "$T/pport" \
    "$T/requests.jsonl" "$T/key.pattern" 2> "$T/provider.err" &
pids+=($!)
python3 "$CW_SRC/test/fixtures/telegram-bot-api.py" "$TG_TOKEN" "$T/tgport" "$T/tg.log" &
pids+=($!)
wait_until 15 "provider stand-in" test -s "$T/pport" || die "the provider stand-in did not start"
wait_until 15 "Bot API stand-in" test -s "$T/tgport" || die "the Bot API stand-in did not start"
BASE="http://127.0.0.1:$(cat "$T/pport")"
TGB="http://127.0.0.1:$(cat "$T/tgport")"

printf '%s\n' 'api_port: 0' 'max_concurrent_runs: 4' 'prices:' \
    '  claude-e2e: {input: 10, output: 50, cache_write: 12.5, cache_read: 1}' \
    > "$CLOCKWORK_HOME/config.yaml"
CW_TELEGRAM_API_BASE_FOR_TESTS="$TGB" "$CW_BIN/clockworkd" --foreground > "$T/daemon.out" 2>&1 &
DPID=$!
wait_until 15 "clockworkd" test -s "$CLOCKWORK_HOME/clockworkd.port" || die "clockworkd did not start"
cw() { "$CW_BIN/cwctl" "$@"; }
sql() { sqlite3 -cmd '.timeout 5000' "$CLOCKWORK_HOME/clockwork.db" "$@"; }
ended() { [ -n "$(sql "SELECT ended_at FROM runs WHERE id='$1'")" ]; }
field() { sql "SELECT $2 FROM runs WHERE id='$1'"; }
report() { sql "SELECT data FROM run_events WHERE run_id='$1' AND kind='report'"; }
ask() { sql "SELECT id FROM approvals WHERE run_id='$1' AND tool='budget' AND state='pending'"; }
asked() { [ -n "$(ask "$1")" ]; }
asks() { [ "$(sql "SELECT count(*) FROM approvals WHERE run_id='$1' AND tool='budget'")" -ge "$2" ]; }
# A run that outlives the daemon (SPEC R1) held at its budget would wait its whole
# budget_wait: a failing check must not leave one behind. Stopped while the daemon is
# still here, then the harness's own cleanup.
live_runs() { sql "SELECT id FROM runs WHERE ended_at IS NULL" 2>/dev/null; }
budget_cleanup() {
	local id
	for id in $(live_runs); do cw run stop "$id" >/dev/null 2>&1 || true; done
	wait_until 60 "runs stopped" test -z "$(live_runs)" || true
	e2e_cleanup
}
trap budget_cleanup EXIT
tg() { curl -s --noproxy '*' "$TGB$1" "${@:2}"; }
tgq() { tg /_test/state > "$T/tgstate"; python3 -c "import json; s=json.load(open('$T/tgstate')); print($1)"; }
press() {	# press CHAT USER DATA: a button press in a private chat; prints its query id
	tg /_test/press -H 'Content-Type: application/json' --data-binary \
	    "{\"chat_id\":$1,\"chat_type\":\"private\",\"user_id\":$2,\"data\":\"$3\",\"message_id\":1}" |
	    python3 -c 'import json,sys; print(json.load(sys.stdin)["callback_query_id"])'
}
answer_text() { tgq "([a['text'] for a in s['answers'] if a['callback_query_id']=='$1'] or [''])[0]"; }
answered() { [ -n "$(answer_text "$1")" ]; }
tg_sent() { [ "$(tgq "len([m for m in s['sent'] if '$1' in m['text'] and m['chat']['id']==$2])")" -ge 1 ]; }
tg_text() { tgq "[m['text'] for m in s['sent'] if '$1' in m['text']][0]"; }
# The run's branch in the user's repository: its commits are sealed there at the end.
branch_has() { git -C "$repo" log --format=%s "$(field "$1" branch)" 2>/dev/null | grep -qx "$2"; }
branch_file() { git -C "$repo" show "$(field "$1" branch):$2" 2>/dev/null; }

printf '%s\n' "$TG_TOKEN" | cw telegram set-token >/dev/null || die "set-token"
printf '%s\n' "$KEY" | cw key add main --provider anthropic --base-url "$BASE" \
    --model claude-e2e > /dev/null || die "key add"
repo="$T/repo"
mkdir -p "$repo" && git -C "$repo" init -q && echo base > "$repo/README" &&
    git -C "$repo" add README && git -C "$repo" commit -q -m base
add() {	# add NAME [OPTIONS...]
	local n=$1; shift
	cw task add "$n" --repo "$repo" --engine byok --key main --mode acceptEdits \
	    --seconds 600 --prompt "SCENARIO:$n Please do the scripted steps." "$@" > /dev/null ||
	    die "task add $n"
}

# ---- validation -------------------------------------------------------------------
for bad in "--budget-wait 2" "--budget-wait 86401" "--max-dollars -1"; do
	# shellcheck disable=SC2086
	if cw task add badwait --repo "$repo" --engine command --prompt x $bad 2> "$T/bad.err" >/dev/null; then
		fail "task add $bad was accepted"
	elif grep -q 'budget_wait\|max_dollars' "$T/bad.err"; then
		ok "task add $bad is refused naming the field: $(cat "$T/bad.err")"
	else
		fail "task add $bad: $(cat "$T/bad.err")"
	fi
done
if cw task add badceil --repo "$repo" --engine command --prompt x --dollars 3 --max-dollars 2 2> "$T/bad.err" >/dev/null; then
	fail "a dollar budget above its hard ceiling was accepted"
else
	grep -q 'max_dollars' "$T/bad.err" && ok "a dollar budget above max_dollars is refused: $(cat "$T/bad.err")" ||
	    fail "badceil: $(cat "$T/bad.err")"
fi
cp "$CLOCKWORK_HOME/config.yaml" "$T/config.good"
printf '%s\n' 'budgets:' '  wait: 3' >> "$CLOCKWORK_HOME/config.yaml"
if "$CW_BIN/clockworkd" --check-config > "$T/conf.out" 2>&1; then
	fail "config.yaml budgets.wait: 3 was accepted"
else
	grep -q 'budgets.wait' "$T/conf.out" && ok "config.yaml budgets.wait: 3 is refused naming the key: $(grep -m1 'budgets.wait' "$T/conf.out")" ||
	    fail "budgets.wait 3 in config.yaml: $(cat "$T/conf.out")"
fi
cp "$T/config.good" "$CLOCKWORK_HOME/config.yaml"

# ---- pause: asked on every surface, extended from the Inbox, finishes ----------------
add pause --dollars 0.01 --telegram-chat 111
r=$(cw run start pause)
wait_until 120 "pause asked" asked "$r" || die "the pause run never asked: $(cw run logs "$r" | tail -5)"
a=$(ask "$r")
hold=$(sql "SELECT json_extract(data, '\$.hold') FROM run_events WHERE run_id='$r' AND kind='budget_paused'")
if [ "$(id -u)" = 0 ] && [ -d /sys/fs/cgroup/freezer ]; then want="cgroup freezer"; else want=""; fi
if [ -n "$hold" ] && { [ -z "$want" ] || [ "$hold" = "$want" ]; }; then
	ok "the run is held at its dollar budget (hold: $hold) and asked (approval $a)"
else
	fail "pause: hold '$hold' (wanted '${want:-any}'), $(cw run logs "$r" | tail -5)"
fi
if [ "$(python3 -c "import json; print(sum(1 for l in open('$T/requests.jsonl') if json.loads(l)['scenario']=='pause'))")" = 1 ]; then
	ok "while held, no second model request was made"
else
	fail "the held run went on asking the model"
fi
cw approvals > "$T/approvals.out"
if grep -q "$a" "$T/approvals.out" && grep -q 'budget' "$T/approvals.out" &&
    cw approvals show "$a" | grep -q 'The dollar budget is reached: \$0.015 spent of \$0.01'; then
	ok "cwctl approvals shows the question: $(cw approvals show "$a" | grep -m1 'budget is reached' | cut -c1-160)"
else
	fail "cwctl approvals: $(cat "$T/approvals.out"; cw approvals show "$a")"
fi
wait_until 30 "telegram message" tg_sent "$a" 111 || true
if tg_sent "$a" 111 && tg_text "$a" | grep -q 'extend by \$0.01'; then
	ok "the question reached the task's Telegram chat: $(tg_text "$a" | grep -m1 'budget is reached' | cut -c1-120)"
else
	fail "telegram: $(tgq "s['sent']")"
fi
if [ -x /usr/bin/chromium ] && [ -d "$modules/playwright-core" ]; then
	node -e 'require("fs").writeFileSync(process.argv[1], JSON.stringify({ nodeModules: process.argv[2],
	  cwctl: process.argv[3], id: process.argv[4] }))' "$T/browser.json" "$modules" "$CW_BIN/cwctl" "$a"
	if timeout 200 node "$CW_SRC/test/e2e/lib/inbox-budget.js" "$T/browser.json" > "$T/browser.out" 2>&1; then
		sed 's/^/    /' "$T/browser.out"
		ok "the Inbox card shows the question with Extend and Stop; Extend was pressed there"
	else
		fail "the Inbox: $(cat "$T/browser.out")"
		cw approve "$a" > /dev/null || true
	fi
else
	fail "no Chromium or playwright-core (scripts/setup, scripts/setup-engines): the Inbox was not checked"
	cw approve "$a" > /dev/null || true
fi
wait_until 120 "pause ended" ended "$r" || fail "the extended run did not end"
rep=$(report "$r")
if [ "$(sql "SELECT answered_by FROM approvals WHERE id='$a'")" = inbox ]; then
	ok "the answer was the Inbox's (answered_by inbox)"
else
	fail "the question was answered by '$(sql "SELECT answered_by FROM approvals WHERE id='$a'")', not the Inbox"
fi
if [ "$(field "$r" status)" = completed ] && branch_has "$r" pause-work &&
    [ "$(branch_file "$r" pause.txt | tail -n 1)" = after-extend ] &&
    [ "$(sql "SELECT state || ' ' || answered_by FROM approvals WHERE id='$a'" | cut -d' ' -f1)" = allowed ] &&
    echo "$rep" | python3 -c 'import json,sys; b=json.load(sys.stdin)["budget"]; p=b["pauses"][0]; assert b["dollars"] >= 0.02 - 1e-9 and p["answer"]=="extend" and p["hold"], b'; then
	ok "extended (\$0.01 -> \$$(echo "$rep" | python3 -c 'import json,sys; print(json.load(sys.stdin)["budget"]["dollars"])')), the run went on and completed; its work is on its branch"
else
	fail "after extend: status $(field "$r" status), $(echo "$rep" | head -c 600)"
fi

# ---- ceiling: Telegram may not pass it; cwctl extends up to it; at it the run ends --
# The first turn costs $0.0105 (>= $0.01: held); "extend" would add $0.01, past the
# $0.015 ceiling. The third turn takes the spend to $0.02115, past the ceiling: the
# engine ends itself there, and no question is asked (no answer could let it go on).
add ceiling --dollars 0.01 --max-dollars 0.015 --telegram-chat 111
r=$(cw run start ceiling)
wait_until 120 "ceiling asked" asked "$r" || die "the ceiling run never asked"
a=$(ask "$r")
wait_until 30 "telegram message" tg_sent "$a" 111 || true
q=$(press 111 5001 "cw1:a:$a")
wait_until 20 "press answered" answered "$q" || true
if answer_text "$q" | grep -q 'Not from Telegram.*hard ceiling of \$0.015' && [ -n "$(ask "$r")" ] &&
    sql "SELECT kind FROM journal WHERE run_id='$r'" | grep -q telegram_press_refused; then
	ok "Telegram's Approve past the hard ceiling is refused (\"$(answer_text "$q" | cut -c1-90)...\"); the question still waits"
else
	fail "telegram extend beyond max_dollars: '$(answer_text "$q")', pending '$(ask "$r")'"
fi
if tg_text "$a" | grep -q 'only cwctl or the Inbox can give it'; then
	ok "the Telegram message says the extension stops at the ceiling and only cwctl or the Inbox gives it"
else
	fail "telegram text: $(tg_text "$a")"
fi
cw approve "$a" > "$T/ceil1.out" 2>&1 || fail "cwctl approve (up to the ceiling): $(cat "$T/ceil1.out")"
wait_until 120 "ceiling ended" ended "$r" || fail "the ceiling run did not end"
rep=$(report "$r")
if [ "$(field "$r" exit_reason)" = budget_dollars ] && branch_has "$r" ceiling-work &&
    [ "$(branch_file "$r" ceiling.txt | tail -n 1)" = two ] &&
    [ "$(sql "SELECT count(*) FROM approvals WHERE run_id='$r' AND tool='budget'")" = 1 ] &&
    echo "$rep" | python3 -c 'import json,sys; b=json.load(sys.stdin)["budget"]; assert abs(b["dollars"] - 0.015) < 1e-9 and b["max_dollars"] == 0.015, b'; then
	ok "cwctl approve extended only to the ceiling (\$0.015); past it the run ended (budget_dollars) unasked, its work sealed on its branch"
else
	fail "ceiling end: $(field "$r" status) $(field "$r" exit_reason) '$(branch_file "$r" ceiling.txt)' $(echo "$rep" | head -c 400)"
fi

# ---- noanswer: budget_wait passes, the run ends as before, its work sealed -----------
add noanswer --dollars 0.01 --budget-wait 5
r=$(cw run start noanswer)
wait_until 120 "noanswer asked" asked "$r" || die "the noanswer run never asked"
a=$(ask "$r")
wait_until 120 "noanswer ended" ended "$r" || fail "the unanswered run did not end"
if [ "$(field "$r" exit_reason)" = budget_dollars ] && [ "$(field "$r" status)" != running ] &&
    branch_has "$r" noanswer-work && [ "$(branch_file "$r" loose.txt)" = loose ] &&
    [ "$(branch_file "$r" kept.txt)" = kept ] &&
    [ "$(sql "SELECT state FROM approvals WHERE id='$a'")" = expired ] &&
    report "$r" | python3 -c 'import json,sys; p=json.load(sys.stdin)["budget"]["pauses"][0]; assert p["answer"]=="timeout", p'; then
	ok "no answer within budget_wait (5 s): ended budget_dollars; its commit and its loose file sealed on its branch; the question expired"
else
	fail "noanswer: $(field "$r" status) $(field "$r" exit_reason) approval $(sql "SELECT state FROM approvals WHERE id='$a'") branch $(git -C "$repo" log --oneline "$(field "$r" branch)" 2>&1 | head -3)"
fi

# ---- frozen: the run's processes do not run while held --------------------------------
# The counter file is written by the run (whole, by rename: a hold between a truncate
# and a write would leave it empty); the control file by a loop outside it. While
# held, the control loop must go on ticking (20 more writes) and the counter must not
# change at all.
cw task add frozen --repo "$repo" --engine command --seconds 3 --budget-wait 300 --prompt \
    'i=0; while :; do i=$((i+1)); echo $i > tick.new; mv tick.new tick.txt; sleep 0.05; done' > /dev/null ||
    die "task add frozen"
r=$(cw run start frozen)
wait_until 60 "frozen asked" asked "$r" || die "the frozen run never asked at its time budget"
a=$(ask "$r")
w=$(field "$r" worktree)
( j=0; while :; do j=$((j+1)); echo $j > "$T/control.txt"; sleep 0.05; done ) &
ctl=$!
pids+=($ctl)
c0=$(cat "$w/tick.txt"); m0=$(stat -c %.9Y "$w/tick.txt")
wait_until 10 "control ticks" test -s "$T/control.txt"
k0=$(cat "$T/control.txt")
wait_until 30 "20 control ticks" sh -c "[ \$(cat '$T/control.txt') -ge $((k0 + 20)) ]" || fail "the control loop did not tick"
c1=$(cat "$w/tick.txt"); m1=$(stat -c %.9Y "$w/tick.txt")
hold=$(sql "SELECT json_extract(data, '\$.hold') FROM run_events WHERE run_id='$r' AND kind='budget_paused'")
if [ -n "$c0" ] && [ "$c0" = "$c1" ] && [ "$m0" = "$m1" ]; then
	ok "held ($hold): the run's counter stayed at $c0 (mtime unchanged) while the control loop wrote 20 times"
else
	fail "the held run ran on: counter $c0 -> $c1, mtime $m0 -> $m1 (hold $hold)"
fi
cw approve "$a" > /dev/null || fail "cwctl approve $a"
wait_until 30 "counter moves" sh -c "[ \"\$(cat '$w/tick.txt')\" -gt $c1 ]" ||
    fail "the counter did not move after extend"
ok "extend thawed it: the counter moves again ($(cat "$w/tick.txt"))"
wait_until 60 "second time pause" asks "$r" 2 || fail "no second pause at the extended time budget"
kill "$ctl" 2>/dev/null || true
cw deny "$(ask "$r")" > /dev/null || fail "deny the second pause"
wait_until 60 "frozen ended" ended "$r" || fail "the frozen run did not end"
rep=$(report "$r")
if [ "$(field "$r" exit_reason)" = budget_seconds ] &&
    echo "$rep" | python3 -c '
import json, sys
r = json.load(sys.stdin); b = r["budget"]
# 3 s, extended by 3 s: the run ran 6 s of its own; the time it was held came on top.
assert b["seconds"] == 6 and b["paused_seconds"] >= 1, b
assert r["spent"]["seconds"] - b["paused_seconds"] >= 5, (r["spent"], b)
assert [p["answer"] for p in b["pauses"]] == ["extend", "stop"], b'; then
	ok "the time budget counts only unheld time: 6 s of running beside $(echo "$rep" | python3 -c 'import json,sys; print(json.load(sys.stdin)["budget"]["paused_seconds"])') s held; stop ended it (budget_seconds)"
else
	fail "frozen end: $(field "$r" exit_reason) $(echo "$rep" | python3 -c 'import json,sys; r=json.load(sys.stdin); print(r.get("budget"), r.get("spent"))')"
fi

[ "$fails" = 0 ] || { echo "$fails check(s) failed"; tail -n 30 "$T/daemon.out"; exit 1; }
echo "all budget checks passed"
