#!/usr/bin/env bash
# Telegram approvals (issue 13) against a local stand-in for the Bot API that speaks
# its documented JSON (test/fixtures/telegram-bot-api.py), with the protocol stand-in
# runner (daemon_fake_runner.pl; test/e2e/telegram.test.sh does it with the real
# sandboxed runner and Claude Code):
#  1. the bot token: set from stdin, kept in a 0600 file in $CLOCKWORK_HOME/secrets
#     (no session bus here, so not the Secret Service), never in the store, a log, the
#     journal or the audit log; `cwctl telegram test` reaches the chat;
#  2. an approval reaches the task's chat with Approve/Always/Deny buttons, its command
#     masked and made visible, run, task and time left;
#  3. a press from another chat changes nothing and is answered "Not allowed";
#  4. a press from the task's private chat approves through the one respond path:
#     the decision reaches the runner, the store names the Telegram user, the audit
#     log has it, the message is edited to say who answered; a second press gets
#     "already answered";
#  5. a group task: a member not on allowed_user_ids gets "Not allowed", one on it
#     answers; a group with no list is refused when the task is made;
#  6. the Inbox answers first: the later press gets "already answered" and the
#     message shows the Inbox as the one who answered; a run that ends unanswered
#     has its message edited to say so; run start --wait, status and approvals say
#     a run waits on you; desktop notifications, with and without a session bus;
#  7. the daemon killed mid-poll and restarted: it resumes at the stored offset, a
#     press made while it was down is handled once, nothing is handled twice;
#  8. the Bot API's 401 and 409 are reported once (journal, cwctl status) and polling
#     backs off; network errors back off without spinning; a press for an approval
#     the daemon does not know is answered as such.
. "${CW_SRC:?}/test/integration/daemon_lib.bash" || exit 1
command -v python3 >/dev/null || fail "python3 is needed for the Bot API stand-in"
mkdir -p "$T/pids"

TG_TOKEN="7000000001:AAFtestTOKENabcdefghijklmnopqrstuvw"
start_standin() {
	rm -f "$T/tgport"
	python3 "$CW_SRC/test/fixtures/telegram-bot-api.py" "$TG_TOKEN" "$T/tgport" "$T/tg.log" &
	SPID=$!
	echo "$SPID" > "$T/pids/standin"
	wait_until 10 "stand-in" test -s "$T/tgport" || fail "the Bot API stand-in did not start"
	TGB="http://127.0.0.1:$(cat "$T/tgport")"
}
start_standin
export CW_TELEGRAM_API_BASE_FOR_TESTS="$TGB"
tg() { curl -s --noproxy '*' "$TGB$1" "${@:2}"; }
tgstate() { tg /_test/state > "$T/tgstate"; }
# tgq PYTHON-EXPR: evaluate over the stand-in's state (s) and print the result.
tgq() { tgstate; python3 -c "import json,sys; s=json.load(open('$T/tgstate')); print($1)"; }
press() {	# press CHAT TYPE USER DATA [MESSAGE_ID]: prints the callback_query id
	tg /_test/press -H 'Content-Type: application/json' --data-binary \
	    "{\"chat_id\":$1,\"chat_type\":\"$2\",\"user_id\":$3,\"username\":\"u$3\",\"data\":\"$4\",\"message_id\":${5:-1}}" |
	    python3 -c 'import json,sys; print(json.load(sys.stdin)["callback_query_id"])'
}
answered() { [ "$(tgq "len([a for a in s['answers'] if a['callback_query_id']=='$1'])")" -ge 1 ]; }
answer_text() { tgq "[a['text'] for a in s['answers'] if a['callback_query_id']=='$1'][0]"; }
answers_of() { tgq "len([a for a in s['answers'] if a['callback_query_id']=='$1'])"; }
sent_to() { tgq "len([m for m in s['sent'] if m['chat']['id']==$1])"; }

start_daemon --runner "$FAKE_RUNNER" --stop-grace 0.5

# 1. The token.
cwctl telegram status | grep -q 'token:    not set' || fail "status before set-token: $(cwctl telegram status)"
printf '%s\n' "$TG_TOKEN" | cwctl telegram set-token | grep -q 'bot token stored' || fail "set-token"
f="$CLOCKWORK_HOME/secrets/telegram.bot_token"
[ "$(stat -c %a "$f")" = 600 ] && [ "$(stat -c %a "$CLOCKWORK_HOME/secrets")" = 700 ] ||
    fail "secret file modes: $(stat -c '%a %n' "$f" "$CLOCKWORK_HOME/secrets")"
[ "$(cat "$f")" = "$TG_TOKEN" ] || fail "secret file content"
cwctl telegram status --json | grep -q '"secret_backend":	"file"' || fail "backend: $(cwctl telegram status --json)"
wait_until 10 "polling" sh -c "curl -s --noproxy '*' '$TGB/_test/state' | grep -q '\"polls\": \[{'" ||
    fail "the daemon never called getUpdates"
printf 'not-a-token\n' | cwctl telegram set-token 2>"$T/err" && fail "a malformed token was accepted"
grep -q 'not a Telegram bot token' "$T/err" || fail "malformed token message: $(cat "$T/err")"
[ "$(cat "$f")" = "$TG_TOKEN" ] || fail "a refused token replaced the stored one"
cwctl telegram test 4242 | grep -q 'test message sent to chat 4242' || fail "telegram test"
[ "$(sent_to 4242)" = 1 ] || fail "the stand-in got no test message"
pass "set-token from stdin: a 0600 file in a 0700 secrets dir (no session bus here); a bad token is refused; telegram test reaches the chat"

# 2. An approval reaches the chat.
CMD=$'curl -H "Authorization: Bearer ghp_Nq3vLmZ2pR9sT4uW6yB8nC1dE3fG5hJ7kL9m" x \e]52;c;ZWNobw==\a'
cwctl task add ask --engine command --prompt "echo \"decision=\$DECISION\" #approval #approvalcmd $CMD" \
    --telegram-chat 111 >/dev/null || fail "task add with --telegram-chat"
cwctl task show ask | grep -q 'telegram:        chat 111' || fail "task show: $(cwctl task show ask)"
id=$(cwctl run start ask)
wait_until 10 "approval pending" sh -c "[ -n \"\$(sqlite3 '$CLOCKWORK_HOME/clockwork.db' \"SELECT id FROM approvals WHERE run_id='$id' AND state='pending'\")\" ]" ||
    fail "no pending approval"
aid=$(sql "SELECT id FROM approvals WHERE run_id='$id'")
wait_until 10 "message sent" sh -c "curl -s --noproxy '*' '$TGB/_test/state' | grep -q '$aid'" ||
    fail "no message for $aid: $(tgq "s['sent']")"
tgq "[m for m in s['sent'] if '$aid' in m['text']][0]" > "$T/msg"
tgq "json.dumps([m for m in s['sent'] if '$aid' in m['text']][0])" > "$T/msg.json"
python3 - "$T/msg.json" "$aid" "$id" <<'PY' || fail "message: $(cat "$T/msg.json")"
import json, sys
m = json.load(open(sys.argv[1])); aid, rid = sys.argv[2], sys.argv[3]
t = m["text"]
assert m["chat"]["id"] == 111, m
kb = m["reply_markup"]["inline_keyboard"][0]
assert [b["text"] for b in kb] == ["Approve", "Always for this task", "Deny"], kb
assert [b["callback_data"] for b in kb] == ["cw1:a:" + aid, "cw1:t:" + aid, "cw1:d:" + aid], kb
assert t.startswith("Risk: ordinary\nApproval needed: Bash") and "run: " + rid in t and "task: ask" in t, t
assert "time left: " in t and "until the run" not in t, t
assert "ghp_Nq3vLmZ2pR9sT4uW6yB8" not in t and "[MASKED" in t, t
assert "\x1b" not in t and "\x07" not in t and "\\e]52" in t, t
PY
pass "an approval reaches the task's chat: Approve/Deny buttons, command masked and made visible, run, task, time left"

# 3. A press from another chat.
q=$(press 222 private 5001 "cw1:a:$aid")
wait_until 10 "answered" answered "$q" || fail "the foreign press was not answered"
[ "$(answer_text "$q")" = "Not allowed" ] || fail "foreign press answer: $(answer_text "$q")"
[ "$(sql "SELECT state FROM approvals WHERE id='$aid'")" = pending ] || fail "a foreign press changed the approval"
[ "$(sql "SELECT count(*) FROM journal WHERE kind='telegram_press_refused' AND run_id='$id'")" = 1 ] ||
    fail "the refused press is not journaled"
pass "a press from another chat changes nothing and is answered \"Not allowed\""

# 4. The right chat.
q=$(press 111 private 5001 "cw1:a:$aid")
wait_until 10 "answered" answered "$q" || fail "the press was not answered"
[ "$(answer_text "$q")" = "Approved." ] || fail "press answer: $(answer_text "$q")"
wait_until 10 "run ended" run_ended "$id" || fail "run did not end"
grep -q 'decision=allow' "$(run_field "$id" log_path)" || fail "the runner did not get the decision"
[ "$(sql "SELECT state || '|' || answered_by FROM approvals WHERE id='$aid'")" = "allowed|telegram user 5001 (@u5001)" ] ||
    fail "store: $(sql "SELECT state, answered_by FROM approvals WHERE id='$aid'")"
[ "$(sql "SELECT count(*) FROM audit WHERE action='approval.answer' AND target='$aid' AND actor='telegram user 5001 (@u5001)'")" = 1 ] ||
    fail "audit: $(sql "SELECT actor, action, target FROM audit")"
sql "SELECT data FROM journal WHERE kind='approval_answer' AND run_id='$id'" | grep -q 'telegram user 5001' ||
    fail "journal approval_answer"
wait_until 10 "message edited" sh -c "curl -s --noproxy '*' '$TGB/_test/state' | grep -q 'Approved by telegram user 5001'" ||
    fail "message not edited: $(tgq "s['edits']")"
[ "$(tgq "[e['buttons'] for e in s['edits'] if '$aid' in e['text']][-1]")" = False ] || fail "the edited message kept its buttons"
q2=$(press 111 private 5001 "cw1:d:$aid")
wait_until 10 "answered" answered "$q2" || fail "second press not answered"
[[ "$(answer_text "$q2")" == *"already answered"* ]] || fail "second press: $(answer_text "$q2")"
[ "$(sql "SELECT state FROM approvals WHERE id='$aid'")" = allowed ] || fail "the second press changed it"
pass "a press from the task's private chat approves through api_respond: runner decided, store/audit/journal name the Telegram user, message edited; a second press: already answered"

# 4b. "Always for this task": allowed, and the command family kept for the task, by the
#     same path as cwctl approve --for-task; a call with no family is allowed once.
cwctl task add fam --engine command --prompt "echo \"decision=\$DECISION\" #approval #family=npm+test" \
    --telegram-chat 111 >/dev/null || fail "task add fam"
idf=$(cwctl run start fam)
wait_until 10 "approval pending" sh -c "[ -n \"\$(sqlite3 '$CLOCKWORK_HOME/clockwork.db' \"SELECT id FROM approvals WHERE run_id='$idf' AND state='pending'\")\" ]" ||
    fail "fam: no pending approval"
aidf=$(sql "SELECT id FROM approvals WHERE run_id='$idf'")
wait_until 10 "message sent" sh -c "curl -s --noproxy '*' '$TGB/_test/state' | grep -q '$aidf'" || fail "fam: no message"
q=$(press 111 private 5001 "cw1:t:$aidf")
wait_until 10 "answered" answered "$q" || fail "the always press was not answered"
[[ "$(answer_text "$q")" == "Approved; for this task from now on: npm test (up to ordinary)." ]] ||
    fail "always press answer: $(answer_text "$q")"
wait_until 10 "run ended" run_ended "$idf" || fail "fam run did not end"
grep -q 'decision=allow' "$(run_field "$idf" log_path)" || fail "fam: the runner did not get allow"
cwctl task rules fam | grep -q 'npm test *up to ordinary, by telegram user 5001' ||
    fail "fam rules: $(cwctl task rules fam)"
[ "$(sql "SELECT count(*) FROM audit WHERE action='task.rule_add' AND actor LIKE 'telegram user 5001%'")" = 1 ] ||
    fail "audit of the kept rule: $(sql "SELECT actor, action, target FROM audit")"
cwctl task add fam2 --engine command --prompt "echo \"decision=\$DECISION\" #approval" --telegram-chat 111 >/dev/null
idg=$(cwctl run start fam2)
wait_until 10 "approval pending" sh -c "[ -n \"\$(sqlite3 '$CLOCKWORK_HOME/clockwork.db' \"SELECT id FROM approvals WHERE run_id='$idg' AND state='pending'\")\" ]" ||
    fail "fam2: no pending approval"
aidg=$(sql "SELECT id FROM approvals WHERE run_id='$idg'")
wait_until 10 "message sent" sh -c "curl -s --noproxy '*' '$TGB/_test/state' | grep -q '$aidg'" || fail "fam2: no message"
q=$(press 111 private 5001 "cw1:t:$aidg")
wait_until 10 "answered" answered "$q" || fail "fam2 press not answered"
[[ "$(answer_text "$q")" == "Approved this once: this call has no command family"* ]] ||
    fail "fam2 press answer: $(answer_text "$q")"
wait_until 10 "run ended" run_ended "$idg" || fail "fam2 run did not end"
cwctl task rules fam2 | grep -q 'rules: *(none' || fail "fam2 kept a rule: $(cwctl task rules fam2)"
pass "Always for this task from Telegram: allowed, npm test kept for the task (audited, by the Telegram user); a call with no family is allowed once and keeps nothing"

# 5. A group.
set +e; out=$(cwctl task add grp0 --engine command --prompt x --telegram-chat -100777 2>&1); rc=$?; set -e
[ $rc -ne 0 ] && grep -q 'allowed_user_ids' <<<"$out" || fail "a group without allowed users was accepted: $rc $out"
cwctl task add grp --engine command --prompt "echo \"decision=\$DECISION\" #approval" --telegram-chat -100777 \
    --telegram-allow 7001 >/dev/null || fail "group task"
gid=$(cwctl run start grp)
wait_until 10 "approval pending" sh -c "[ -n \"\$(sqlite3 '$CLOCKWORK_HOME/clockwork.db' \"SELECT id FROM approvals WHERE run_id='$gid' AND state='pending'\")\" ]" ||
    fail "no group approval"
gaid=$(sql "SELECT id FROM approvals WHERE run_id='$gid'")
wait_until 10 "group message" sh -c "[ \"\$(curl -s --noproxy '*' '$TGB/_test/state' | grep -c '$gaid')\" -ge 1 ]" || fail "no group message"
q=$(press -100777 supergroup 7002 "cw1:a:$gaid")
wait_until 10 "answered" answered "$q" || fail "group press not answered"
[ "$(answer_text "$q")" = "Not allowed" ] || fail "non-listed member: $(answer_text "$q")"
[ "$(sql "SELECT state FROM approvals WHERE id='$gaid'")" = pending ] || fail "a non-listed member changed it"
q=$(press -100777 supergroup 7001 "cw1:d:$gaid")
wait_until 10 "answered" answered "$q" || fail "listed member's press not answered"
[ "$(answer_text "$q")" = "Denied." ] || fail "listed member: $(answer_text "$q")"
wait_until 10 "run ended" run_ended "$gid" || fail "group run did not end"
grep -q 'decision=deny' "$(run_field "$gid" log_path)" || fail "group: the runner did not get the deny"
pass "group: a member not on allowed_user_ids gets \"Not allowed\" and changes nothing; a listed one denies; a group with no list is refused"

# 6. The Inbox answers first.
id3=$(cwctl run start ask)
wait_until 10 "approval pending" sh -c "[ -n \"\$(sqlite3 '$CLOCKWORK_HOME/clockwork.db' \"SELECT id FROM approvals WHERE run_id='$id3' AND state='pending'\")\" ]" ||
    fail "no third approval"
aid3=$(sql "SELECT id FROM approvals WHERE run_id='$id3'")
wait_until 10 "message" sh -c "curl -s --noproxy '*' '$TGB/_test/state' | grep -q '$aid3'" || fail "no message for $aid3"
B="http://127.0.0.1:$PORT"
url=$(cwctl inbox 2>/dev/null)
curl -s --noproxy '*' -c "$T/jar" -o /dev/null "$url"
csrf=$(curl -s --noproxy '*' -b "$T/jar" "$B/inbox/session" | sed 's/.*"csrf":"\([0-9a-f]*\)".*/\1/')
code=$(curl -s --noproxy '*' -o "$T/b" -w '%{http_code}' -b "$T/jar" -X POST -H "Origin: $B" \
    -H "X-CSRF-Token: $csrf" -H 'Content-Type: application/json' --data-binary '{"decision":"allow"}' \
    "$B/inbox/api/approvals/$aid3")
[ "$code" = 200 ] || fail "Inbox answer: $code $(cat "$T/b")"
q=$(press 111 private 5001 "cw1:d:$aid3")
wait_until 10 "answered" answered "$q" || fail "late press not answered"
[[ "$(answer_text "$q")" == *"already answered (allowed by inbox)"* ]] || fail "late press: $(answer_text "$q")"
[ "$(sql "SELECT state || '|' || answered_by FROM approvals WHERE id='$aid3'")" = "allowed|inbox" ] || fail "late press changed it"
wait_until 10 "edited" sh -c "curl -s --noproxy '*' '$TGB/_test/state' | grep -q 'Approved by inbox'" ||
    fail "the message does not show the Inbox's answer: $(tgq "s['edits']")"
wait_until 10 "run ended" run_ended "$id3" || fail "run 3 did not end"
pass "after the Inbox answered, a press gets \"already answered\" and the message shows who answered"

# 6a. The run ends with the approval unanswered: the message says so, buttons gone.
id7=$(cwctl run start ask)
wait_until 10 "approval pending" sh -c "[ -n \"\$(sqlite3 '$CLOCKWORK_HOME/clockwork.db' \"SELECT id FROM approvals WHERE run_id='$id7' AND state='pending'\")\" ]" ||
    fail "no approval for the stop"
aid7=$(sql "SELECT id FROM approvals WHERE run_id='$id7'")
wait_until 10 "message" sh -c "curl -s --noproxy '*' '$TGB/_test/state' | grep -q '$aid7'" || fail "no message for $aid7"
cwctl run stop "$id7" >/dev/null
wait_until 10 "run ended" run_ended "$id7" || fail "run 7 did not end"
expired_shown() { [ "$(tgq "len([e for e in s['edits'] if '$aid7' in e['text'] and e['text'].startswith('Expired') and not e['buttons']])")" = 1 ]; }
wait_until 10 "edited as expired" expired_shown || fail "the message of $aid7 was not edited: $(tgq "s['edits']")"
q=$(press 111 private 5001 "cw1:a:$aid7")
wait_until 10 "answered" answered "$q" || fail "press after the run ended not answered"
[[ "$(answer_text "$q")" == *"has ended"* ]] || fail "press after the run ended: $(answer_text "$q")"
pass "a run that ends unanswered: the message is edited to Expired without buttons; a later press is told the run ended"

# 6b. Waiting on you, away from Telegram: run start --wait, status, approvals.
"$CW_BIN/cwctl" run start ask --wait > "$T/wait.out" 2> "$T/wait.err" &
WPID=$!
echo "$WPID" > "$T/pids/wait"
wait_until 15 "--wait announces" grep -q 'is waiting on you' "$T/wait.err" || fail "run start --wait said nothing: $(cat "$T/wait.err")"
aid5=$(sed -n 's/^  \(ap-[0-9a-f]*\)  task ask .*/\1/p' "$T/wait.err" | head -1)
[ -n "$aid5" ] || fail "no approval id in: $(cat "$T/wait.err")"
grep -q "answer: cwctl approve $aid5 | cwctl deny $aid5" "$T/wait.err" || fail "--wait gives no command: $(cat "$T/wait.err")"
[ "$(grep -c 'is waiting on you' "$T/wait.err")" = 1 ] || fail "announced more than once"
cwctl status > "$T/status"
head -1 "$T/status" | grep -q '^WAITING ON YOU: 1 approval pending' || fail "status does not lead with it: $(cat "$T/status")"
grep -q "cwctl approve $aid5" "$T/status" && grep -q '^telegram: on' "$T/status" || fail "status: $(cat "$T/status")"
cwctl approvals > "$T/list"
head -1 "$T/list" | grep -q 'ID *RISK *TASK *RUN *TOOL *LEFT *INPUT' || fail "approvals header: $(head -1 "$T/list")"
grep -qE "^$aid5 +ordinary +ask +[0-9a-f-]+ +Bash +[0-9]+[hm] [0-9]+[ms] " "$T/list" || fail "approvals row for $aid5: $(cat "$T/list")"
cwctl approvals --json | grep -q '"deadline":	"20' || fail "deadline is null: $(cwctl approvals --json)"
cwctl approve "$aid5" >/dev/null || fail "approve $aid5"
wait "$WPID" || fail "run start --wait: exit $?"
pass "run start --wait announces the approval once with the command that answers it; status leads with it; approvals shows task, run, tool, time left and a deadline"

# 6c. Desktop notifications: off by default; on without a session bus, said so.
cwctl status | grep -q '^desktop notifications: off' || fail "notifications not off by default: $(cwctl status)"
printf 'api_port: 0\ndesktop_notifications: true\n' > "$CLOCKWORK_HOME/config.yaml"
kill -HUP "$DPID"
nobus() { cwctl status | grep -q '^desktop notifications: unavailable: no session bus'; }
wait_until 10 "no bus said" nobus || fail "no session bus not reported: $(cwctl status)"
pass "desktop notifications: off by default; turned on without a session bus, status says they are unavailable"

# 7. Killed mid-poll, restarted.
polling() { cwctl telegram status --json | grep -q '"polling":	true'; }
wait_until 10 "a poll in flight" polling || fail "not polling: $(cwctl telegram status --json)"
off_before=$(sql "SELECT value FROM telegram_state WHERE key='offset'")
npolls=$(tgq "len(s['polls'])")
kill -KILL "$DPID"; wait "$DPID" 2>/dev/null || true; DPID=
rm -f "$CLOCKWORK_HOME/clockworkd.port"

# A press made while no daemon runs, on an approval that is gone (still answered once).
qd=$(press 111 private 5001 "cw1:a:ap-000000000000")
start_daemon --runner "$FAKE_RUNNER" --stop-grace 0.5
wait_until 10 "answered" answered "$qd" || fail "the press made while the daemon was down was lost"
[[ "$(answer_text "$qd")" == *"no longer knows this approval"* ]] || fail "unknown approval: $(answer_text "$qd")"
first=$(tgq "s['polls'][$npolls]['offset']")
[ "$first" = "$off_before" ] || fail "after the restart the first getUpdates asked from $first, stored offset $off_before"
tgq "json.dumps(s['presses'])" > "$T/presses"
for qq in $(python3 -c "import json; print(' '.join(p['callback_query_id'] for p in json.load(open('$T/presses'))))"); do
	[ "$(answers_of "$qq")" = 1 ] || fail "press $qq answered $(answers_of "$qq") times"
done
pass "killed mid-poll and restarted: resumes at the stored offset ($off_before); a press made while down is handled once; no press answered twice"

# 7b. With a session bus (a private dbus-daemon): a new approval is announced through
# org.freedesktop.Notifications.Notify, seen by dbus-monitor on that bus, and so is
# the run's end.
if command -v dbus-daemon >/dev/null && command -v dbus-monitor >/dev/null; then
	bus=$(dbus-daemon --session --fork --print-address=1 --print-pid=1) || fail "dbus-daemon"
	echo "$bus" | sed -n 2p > "$T/pids/bus"
	export DBUS_SESSION_BUS_ADDRESS=$(echo "$bus" | head -1)
	dbus-monitor "interface='org.freedesktop.Notifications'" > "$T/mon.out" 2>&1 &
	echo $! > "$T/pids/mon"
	wait_until 10 "monitor" grep -q NameLost "$T/mon.out" || fail "dbus-monitor did not start"
	kill -TERM "$DPID"; wait "$DPID" 2>/dev/null || true; DPID=
	rm -f "$CLOCKWORK_HOME/clockworkd.port"
	start_daemon --runner "$FAKE_RUNNER" --stop-grace 0.5
	unset DBUS_SESSION_BUS_ADDRESS
	cwctl status | grep -q '^desktop notifications: on' || fail "with a bus: $(cwctl status)"
	id6=$(cwctl run start ask)
	wait_until 10 "approval pending" sh -c "[ -n \"\$(sqlite3 '$CLOCKWORK_HOME/clockwork.db' \"SELECT id FROM approvals WHERE run_id='$id6' AND state='pending'\")\" ]" ||
	    fail "no approval for the notification"
	aid6=$(sql "SELECT id FROM approvals WHERE run_id='$id6'")
	wait_until 10 "Notify on the bus" grep -q 'member=Notify' "$T/mon.out" || fail "no Notify call: $(cat "$T/mon.out")"
	grep -q 'string "Clockwork: approval needed (Bash)"' "$T/mon.out" && grep -q "cwctl approvals show $aid6" "$T/mon.out" ||
	    fail "Notify arguments: $(cat "$T/mon.out")"
	[ "$(grep -c 'member=Notify' "$T/mon.out")" = 1 ] || fail "notified more than once"
	cwctl approve "$aid6" >/dev/null || fail "approve $aid6"
	wait_until 10 "run ended" run_ended "$id6" || fail "run 6 did not end"
	pass "with a session bus: one org.freedesktop.Notifications.Notify per new approval, naming it"
	# The run's end (issue 27): its task announces its runs' ends by default.
	wait_until 10 "the end's Notify" grep -q 'string "Clockwork: run finished"' "$T/mon.out" ||
	    fail "no Notify for the run's end: $(cat "$T/mon.out")"
	grep -q "ask finished: " "$T/mon.out" && grep -q "cwctl run diff $id6" "$T/mon.out" ||
	    fail "the end's Notify arguments: $(cat "$T/mon.out")"
	[ "$(grep -c 'member=Notify' "$T/mon.out")" = 2 ] || fail "the end notified more than once"
	pass "with a session bus: the run's end is one more Notify, its end line and the review command"
else
	echo "skip - no dbus-daemon: desktop notifications through a bus not tested"
fi

# Measured: the daemon's CPU while it long-polls an idle bot (one poll in flight).
cpu() { awk '{print $14 + $15}' "/proc/$DPID/stat"; }
c1=$(cpu); sleep 5; c2=$(cpu)
idle=$((c2 - c1))
echo "idle long-poll: $idle CPU ticks in 5 s"
# Measured: press to answerCallbackQuery, over every press (the one made while the
# daemon was down included: it waited for the restart).
lat=$(tgq "sorted(round((a['t'] - p['t']) * 1000) for p in s['presses'] for a in s['answers'] if a['callback_query_id'] == p['callback_query_id'])")
echo "press -> answerCallbackQuery, ms: $lat"

# 8. Errors from the Bot API, and the network.
mode() { tg /_test/mode -H 'Content-Type: application/json' --data-binary "{\"getUpdates\":\"$1\"}" >/dev/null; }
reported() { cwctl status | grep -q "telegram: getUpdates: $1"; }
for e in "401 Unauthorized" "409 Conflict"; do
	mode "${e%% *}"
	wait_until 15 "${e%% *} reported" reported "$e" || fail "${e%% *} not in cwctl status: $(cwctl status)"
	n1=$(tgq "len(s['polls'])"); sleep 4; n2=$(tgq "len(s['polls'])")
	[ $((n2 - n1)) -le 3 ] || fail "after a ${e%% *}: $((n2 - n1)) getUpdates in 4 s"
	[ "$(sql "SELECT count(*) FROM journal WHERE kind='telegram_error' AND data LIKE '%${e%% *}%'")" = 1 ] ||
	    fail "${e%% *} journaled $(sql "SELECT count(*) FROM journal WHERE kind='telegram_error' AND data LIKE '%${e%% *}%'") times"
done
pass "a 401 and a 409 from the Bot API are each reported once (journal, cwctl status) and polling backs off"

# The network: the stand-in gone, connections refused. Back-off from 1 s, doubling.
mode ok
wait_until 40 "healthy again" sh -c "! '$CW_BIN/cwctl' status | grep -q 'telegram: getUpdates'" ||
    fail "not healthy after the errors ended: $(cwctl status)"
kill -KILL "$SPID"; wait "$SPID" 2>/dev/null || true
c1=$(cpu); l1=$(grep -c 'telegram: getUpdates: ' "$T/daemon.out" || true)
sleep 8
c2=$(cpu); l2=$(grep -c 'telegram: getUpdates: ' "$T/daemon.out" || true)
[ $((l2 - l1)) -ge 2 ] && [ $((l2 - l1)) -le 5 ] || fail "$((l2 - l1)) getUpdates attempts in 8 s without a network (want 2-5: 1, 2, 4 s apart)"
# Spinning on a refused connection costs hundreds of ticks in 8 s; the daemon's own
# second-by-second timers cost what the idle measure above found (more under ASan and
# beside a loaded CI), so the bound is twice that rate over 8 s plus ten, and never
# under 20.
lim=$((idle * 8 * 2 / 5 + 10)); [ $lim -ge 20 ] || lim=20
[ $((c2 - c1)) -le $lim ] || fail "the daemon used $((c2 - c1)) ticks of CPU in 8 s while the network was down (idle: $idle in 5 s; bound $lim)"
pass "network errors back off (1, 2, 4 s ...; $((l2 - l1)) attempts in 8 s) without spinning ($((c2 - c1)) CPU ticks)"
if grep -rqF "$TG_TOKEN" "$T/daemon.out" "$CLOCKWORK_HOME"/*.log "$CLOCKWORK_HOME/runs" 2>/dev/null; then
	fail "the token is in a log: $(grep -rlF "$TG_TOKEN" "$T/daemon.out" "$CLOCKWORK_HOME" | head)"
fi
sqlite3 "$CLOCKWORK_HOME/clockwork.db" .dump > "$T/dump.sql" || fail "store dump"
grep -qF "${TG_TOKEN#*:}" "$T/dump.sql" && fail "the token is in the store"
grep -q 'telegram_messages' "$T/dump.sql" || fail "test bug: the dump lacks the Telegram tables"
for r in $(sql "SELECT id FROM runs"); do
	grep -qF "${TG_TOKEN#*:}" "$(run_field "$r" log_path)" 2>/dev/null && fail "the token is in run $r's log"
	sql "SELECT report FROM runs WHERE id='$r'" | grep -qF "${TG_TOKEN#*:}" && fail "the token is in run $r's report"
done
pass "the token appears in no log, store row, run log or report"

# Update ids are per bot: a token of another bot starts from offset 0.
[ "$(sql "SELECT value FROM telegram_state WHERE key='bot_id'")" = 7000000001 ] || fail "bot id not stored"
[ "$(sql "SELECT value FROM telegram_state WHERE key='offset'")" -gt 1000 ] || fail "offset not stored"
printf '%s\n' "7000000009:AAFanotherBOTabcdefghijklmnopqrstuv" | cwctl telegram set-token >/dev/null || fail "set-token 2"
[ "$(sql "SELECT value FROM telegram_state WHERE key='bot_id'") $(sql "SELECT value FROM telegram_state WHERE key='offset'")" = "7000000009 0" ] ||
    fail "another bot kept the old offset: $(sql "SELECT * FROM telegram_state")"
pass "a token of another bot starts from update offset 0"

echo "telegram: $PASSED passed"
