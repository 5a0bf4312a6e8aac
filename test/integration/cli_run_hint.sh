#!/usr/bin/env bash
# cwctl run start (retry, continue) prints the run's id and, when standard output is a
# terminal (a pty from script(1)), the commands to follow and review it, each a real
# command that works on that run (issue 27). Captured by a script, only the id. With
# --wait, the bell at the end on a terminal.
. "${CW_SRC:?}/test/integration/daemon_lib.bash" || exit 1
command -v script > /dev/null || { echo "SKIP: no script(1)"; exit 77; }

start_daemon --stop-grace 1
new_repo "$T/repo"
cwctl task add t --engine command --repo "$T/repo" --mode acceptEdits \
    --prompt 'echo two >> file.txt; git -c user.name=a -c user.email=a@b commit -qam two' > /dev/null

# 1. A script: one line, the id.
out=$(cwctl run start t) || fail "run start: exit $?"
[ "$(printf '%s\n' "$out" | wc -l)" = 1 ] || fail "run start into a pipe printed more than the id: $out"
first=$out
grep -qE '^[0-9A-Za-z-]+$' <<< "$first" || fail "not an id: $first"
wait_until 60 "run $first to end" run_ended "$first" || fail "run $first did not end"
pass "run start into a pipe prints the id alone ($first)"

# 2. A terminal: the id, then the commands, each naming this run.
script -qec "$CW_BIN/cwctl run start t" /dev/null < /dev/null | tr -d '\r' > "$T/tty.out" ||
    fail "run start on a pty: $(cat "$T/tty.out")"
id=$(head -n 1 "$T/tty.out")
run_is "$id" queued || run_is "$id" starting || run_is "$id" running || run_ended "$id" ||
    fail "the first line on a terminal is not a run id: $(cat "$T/tty.out")"
for c in "cwctl run logs -f $id" "cwctl run diff $id" "cwctl run land $id" "cwctl run merge $id" "cwctl run discard $id"; do
	grep -qF -- "$c" "$T/tty.out" || fail "run start on a terminal does not say '$c': $(cat "$T/tty.out")"
done
pass "run start on a terminal prints the id and how to follow, review and land it"

# 3. The commands it names work on that run.
timeout 60 "$CW_BIN/cwctl" run logs -f "$id" > "$T/logs" || fail "cwctl run logs -f $id: exit $?"
run_ended "$id" || fail "run logs -f returned before the run ended"
cwctl run show "$id" > /dev/null || fail "cwctl run show $id"
cwctl run diff "$id" > "$T/diff" || fail "cwctl run diff $id: exit $?"
grep -q '^+two' "$T/diff" || fail "run diff $id: $(cat "$T/diff")"
cwctl run discard "$id" > /dev/null || fail "cwctl run discard $id: exit $?"
pass "the commands it named follow, show, diff and discard run $id"

# 4. retry goes through the same path: on a terminal, the same lines.
script -qec "$CW_BIN/cwctl run retry $first" /dev/null < /dev/null | tr -d '\r' > "$T/retry.out" ||
    fail "run retry on a pty: $(cat "$T/retry.out")"
rid=$(head -n 1 "$T/retry.out")
grep -qF "cwctl run logs -f $rid" "$T/retry.out" || fail "run retry on a terminal: $(cat "$T/retry.out")"
wait_until 60 "run $rid to end" run_ended "$rid" || fail "run $rid did not end"
pass "run retry on a terminal says the same"

# 5. run start --wait rings the terminal's bell when the run ends (issue 27: a person
#    who looked away hears it); with stderr not a terminal, no bell.
script -qec "$CW_BIN/cwctl run start t --wait" /dev/null < /dev/null > "$T/wait.tty" ||
    fail "run start --wait on a pty: $(cat "$T/wait.tty")"
grep -q $'\a' "$T/wait.tty" || fail "no bell at the end of --wait on a terminal: $(od -c "$T/wait.tty" | tail -3)"
cwctl run start t --wait > "$T/wait.pipe" 2>&1 || fail "run start --wait into a pipe: $(cat "$T/wait.pipe")"
! grep -q $'\a' "$T/wait.pipe" || fail "a bell into a pipe"
pass "run start --wait rings the bell at the end on a terminal, not into a pipe"
