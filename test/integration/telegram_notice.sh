#!/usr/bin/env bash
# Telegram notices of a run's work that needs a person's eye (SPEC U3, issue 26), with
# the real sandboxed cw-runner on a repository task and the Bot API stand-in
# (test/fixtures/telegram-bot-api.py): a run that commits automation files gets one
# message in its task's chat listing them (made visible: a path's escape bytes do not
# reach the chat raw); a run refused into quarantine gets one naming the quarantine;
# an ordinary run gets none; a daemon restart sends nothing twice.
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

# 3. An ordinary run: no message. Then a restart: nothing is sent twice.
o=$(run_task plain 503 'echo fine > fine.txt; git add fine.txt; git -c user.name=a -c user.email=a@b commit -qm fine')
stop_daemon
start_daemon --stop-grace 1
cwctl status >/dev/null
# The sweep that would resend has run once the next run's notice (chat 504) is out.
run_task auto2 504 'mkdir -p .idea && echo x > .idea/workspace.xml; git add -A; git -c user.name=a -c user.email=a@b commit -qm idea' >/dev/null
wait_until 20 "the notice in chat 504" count 504 1 || fail "no notice after the restart"
[ "$(tgq "len([m for m in s['sent'] if m['chat']['id']==503])")" = 0 ] || fail "an ordinary run got a notice"
[ "$(tgq "len([m for m in s['sent'] if m['chat']['id'] in (501, 502)])")" = 2 ] || fail "a notice was sent twice"
pass "an ordinary run gets no notice; after a restart nothing is sent twice"
