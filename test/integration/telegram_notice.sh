#!/usr/bin/env bash
# Telegram notices of a run's work that needs a person's eye (SPEC U3, issue 26), with
# the real sandboxed cw-runner on a repository task and the Bot API stand-in
# (test/fixtures/telegram-bot-api.py): a run that commits automation files gets one
# message in its task's chat listing them (made visible: a path's escape bytes do not
# reach the chat raw); a run refused into quarantine gets one naming the quarantine;
# an ordinary run gets one announcing its end (issue 27), a task with --no-notify-end
# none; a daemon restart sends nothing twice.
. "${CW_SRC:?}/test/integration/daemon_lib.bash" || exit 1
command -v python3 >/dev/null || fail "python3 is needed for the Bot API stand-in"
mkdir -p "$T/pids"
TG_TOKEN="7000000001:AAFtestTOKENabcdefghijklmnopqrstuvw"
python3 "$CW_SRC/test/fixtures/telegram-bot-api.py" "$TG_TOKEN" "$T/tgport" "$T/tg.log" &
echo $! > "$T/pids/standin"
wait_until 10 "stand-in" test -s "$T/tgport" || fail "the Bot API stand-in did not start"
export CW_TELEGRAM_API_BASE_FOR_TESTS="http://127.0.0.1:$(cat "$T/tgport")"
tgq() { curl -s --noproxy '*' "$CW_TELEGRAM_API_BASE_FOR_TESTS/_test/state" > "$T/tgstate"
	python3 -c "import json,sys; s=json.load(open('$T/tgstate')); print($1)"; }
texts() { tgq "'\\n=====\\n'.join(m['text'] for m in s['sent'] if m['chat']['id']==$1)"; }
count() { [ "$(tgq "len([m for m in s['sent'] if m['chat']['id']==$1])")" -ge "$2" ]; }

start_daemon --stop-grace 1
printf '%s\n' "$TG_TOKEN" | cwctl telegram set-token >/dev/null || fail "set-token"
new_repo "$T/repo"
R=$T/repo
run_task() {	# run_task NAME CHAT PROMPT: the finished run's id
	cwctl task add "$1" --engine command --repo "$R" --mode acceptEdits --telegram-chat "$2" --prompt "$3" >/dev/null ||
	    fail "task add $1"
	id=$(cwctl run start "$1") || fail "run start $1"
	wait_until 90 "run $id" run_ended "$id" || fail "run $id did not end"
	echo "$id"
}

# 1. Automation files: one message naming them.
a=$(run_task auto 501 'mkdir -p .claude .vscode && echo "{}" > .claude/settings.json && echo "{}" > .vscode/tasks.json;
printf x > "$(printf ".envrc")"; git add -A; git -c user.name=a -c user.email=a@b commit -qm auto')
wait_until 20 "the notice of run $a" count 501 1 || fail "no notice for automation files: $(cat "$T/tg.log" | tail -5)"
t=$(texts 501)
grep -q '\.claude/settings.json' <<< "$t" && grep -q '\.vscode/tasks.json' <<< "$t" &&
    grep -q '\.envrc' <<< "$t" && grep -q -- '--accept-automation' <<< "$t" && grep -q "$a" <<< "$t" ||
    fail "the notice does not list the files: $t"
pass "a run with automation files: one Telegram message lists them and says how to accept"

# 2. Refused into quarantine: one message naming it.
q=$(run_task quar 502 'B=$(echo x | git hash-object -w --stdin);
T1=$(printf "100644 blob %s\tconfig\n" "$B" | git mktree);
T2=$(printf "040000 tree %s\t.git\n" "$T1" | git mktree);
E=$(git -c user.name=a -c user.email=a@b commit-tree "$T2" -p HEAD -m evil);
git update-ref "$(git symbolic-ref HEAD)" "$E"; true')
wait_until 20 "the notice of run $q" count 502 1 || fail "no notice for quarantine"
t=$(texts 502)
grep -q "quarantine/$q" <<< "$t" && grep -q 'not imported' <<< "$t" || fail "the quarantine notice: $t"
pass "a run refused into quarantine: one Telegram message names where its work is kept"

# 3. An ordinary run: one message, its end (issue 27: the task announces its runs'
# ends, notify_end, on by default): how it ended, what it changed, what to type and the
# Inbox's page. A task with --no-notify-end: none. Then a restart: nothing is sent twice.
o=$(run_task plain 503 'echo fine > fine.txt; git add fine.txt; git -c user.name=a -c user.email=a@b commit -qm fine')
wait_until 20 "the end notice of run $o" count 503 1 || fail "no end notice for an ordinary run"
t=$(texts 503)
grep -q "Run $o of task plain finished: completed, 1 file changed (+1 -0)" <<< "$t" &&
    grep -q "cwctl run diff $o" <<< "$t" && grep -q "http://127.0.0.1:[0-9]*/#run/$o" <<< "$t" ||
    fail "the end notice: $t"
pass "an ordinary run: one Telegram message, its end line, the review command and the Inbox page"
cwctl task add quiet --engine command --repo "$R" --mode acceptEdits --telegram-chat 505 \
    --no-notify-end --prompt 'echo q > q.txt; git add q.txt; git -c user.name=a -c user.email=a@b commit -qm q' >/dev/null ||
    fail "task add --no-notify-end"
cwctl task show quiet | grep -q '^run ends: *not announced' || fail "task show: $(cwctl task show quiet)"
qid=$(cwctl run start quiet) || fail "run start quiet"
wait_until 90 "run $qid" run_ended "$qid" || fail "run $qid did not end"
stop_daemon
start_daemon --stop-grace 1
cwctl status >/dev/null
# The sweep that would resend has run once the next run's notice (chat 504) is out.
run_task auto2 504 'mkdir -p .idea && echo x > .idea/workspace.xml; git add -A; git -c user.name=a -c user.email=a@b commit -qm idea' >/dev/null
wait_until 20 "the notice in chat 504" count 504 1 || fail "no notice after the restart"
[ "$(tgq "len([m for m in s['sent'] if m['chat']['id']==505])")" = 0 ] || fail "a --no-notify-end task's run was announced"
[ "$(tgq "len([m for m in s['sent'] if m['chat']['id'] in (501, 502, 503)])")" = 3 ] || fail "a notice was sent twice"
pass "a task with --no-notify-end gets no end message; after a restart nothing is sent twice"
