#!/usr/bin/env bash
# The rough edges a new user hits with cwctl, each fixed (issue 15): --help of every
# verb on stdout with exit 0; usage errors that name what is wrong, exit 2; task add
# refusing an empty repository and a .git path, --prompt - and --prompt-file; run stop
# --json with booleans; money in cents and fractions of one; "1 turn"; no doubled
# status; the journal's approval lines with their command and configured rules as
# rule_deny; Ctrl-C on run start --wait says the run goes on; shell completion; sandbox
# exec with a relative --workdir; service install|status|uninstall; a stale port file
# from another home.
. "${CW_SRC:?}/test/integration/daemon_lib.bash" || exit 1
# Checks below pipe into grep -q, which may stop reading early: a writer that gets
# SIGPIPE then is not a failure.
set +o pipefail

# 1. --help anywhere among a verb's options: its usage on stdout, exit 0, nothing else.
for v in status task "task add" run "run list" "run merge" approvals approve deny inbox \
    journal gc service "service install" policy "policy check" sandbox "sandbox exec"; do
	# shellcheck disable=SC2086
	out=$(cwctl $v --help 2> "$T/err") || fail "cwctl $v --help: exit $?"
	[ ! -s "$T/err" ] || fail "cwctl $v --help wrote to stderr: $(cat "$T/err")"
	grep -q "^usage: cwctl ${v%% *}" <<< "$out" || fail "cwctl $v --help: $out"
done
! cwctl sandbox exec --help 2>&1 | grep -q cw-runner || fail "sandbox exec --help leaks cw-runner"
pass "--help of every verb prints its usage on stdout and exits 0"

# 2. Usage errors name what is wrong and exit 2 (no daemon needed for these).
usage_err() {	# usage_err WANT-TEXT CWCTL-ARGS...
	local want=$1; shift
	set +e; cwctl "$@" > /dev/null 2> "$T/err"; local rc=$?; set -e
	[ $rc = 2 ] || fail "cwctl $*: exit $rc, want 2 ($(cat "$T/err"))"
	grep -qF -- "$want" "$T/err" || fail "cwctl $*: message does not say '$want': $(cat "$T/err")"
}
usage_err "a prompt is required" task add nop
usage_err "--dollars: 'abc' is not a number" task add x --engine command --prompt p --dollars abc
usage_err "--turns: '3x' is not a number" task add x --engine command --prompt p --turns 3x
usage_err "unknown option '--frobnicate'" task add x --engine command --prompt p --frobnicate 1
usage_err "--limit 'abc' is not a number" run list --limit abc
usage_err "--squash and --ff-only" run merge r1 --squash --ff-only
pass "usage errors name the option and value at fault, exit 2"

# 3. task add with the daemon: empty repository, .git, --prompt -, --prompt-file.
start_daemon --runner "$FAKE_RUNNER" --stop-grace 1
mkdir -p "$T/empty" && git -C "$T/empty" init -q
set +e; cwctl task add e --engine command --repo "$T/empty" --prompt p 2> "$T/err"; rc=$?; set -e
[ $rc = 1 ] && grep -q 'has no commits yet' "$T/err" || fail "empty repo: $rc $(cat "$T/err")"
new_repo "$T/repo"
set +e; cwctl task add g --engine command --repo "$T/repo/.git" --prompt p 2> "$T/err"; rc=$?; set -e
[ $rc = 1 ] && grep -q 'is a .git directory' "$T/err" || fail ".git path: $rc $(cat "$T/err")"
printf 'line one\nline "two" $HOME\n' | cwctl task add fromstdin --engine command --prompt - >/dev/null || fail "--prompt -"
cwctl task show fromstdin --json | grep -qF 'line one\nline \"two\" $HOME' || fail "stdin prompt: $(cwctl task show fromstdin --json)"
printf 'echo from a file #usage=0.0032,1\n' > "$T/prompt.txt"
cwctl task add fromfile --engine command --prompt-file "$T/prompt.txt" >/dev/null || fail "--prompt-file"
cwctl task show fromfile | grep -q 'prompt: *echo from a file' || fail "file prompt"
set +e; cwctl task add nofile --engine command --prompt-file "$T/missing.txt" 2> "$T/err"; rc=$?; set -e
[ $rc = 1 ] && grep -q 'missing.txt: No such file' "$T/err" || fail "missing prompt file: $rc $(cat "$T/err")"
set +e; cwctl task add emptyin --engine command --prompt - < /dev/null 2> "$T/err"; rc=$?; set -e
[ $rc = 1 ] && grep -q 'standard input is empty' "$T/err" || fail "empty stdin: $rc $(cat "$T/err")"
# A task's limits cannot exceed the configuration's (defaults: 4096 processes, 8192 MiB).
set +e; cwctl task add big --engine command --prompt true --memory-mb 9000 2> "$T/err"; rc=$?; set -e
[ $rc = 1 ] && grep -q "limit_memory_mb: 9000 MiB is more than the configuration's limits.memory_mb (8192)" "$T/err" ||
    fail "memory over the maximum: $rc $(cat "$T/err")"
set +e; cwctl task add big --engine command --prompt true --processes 5000 2> "$T/err"; rc=$?; set -e
[ $rc = 1 ] && grep -q "more than the configuration's limits.processes (4096)" "$T/err" ||
    fail "processes over the maximum: $rc $(cat "$T/err")"
cwctl task add small --engine command --prompt true --processes 100 --memory-mb 512 >/dev/null || fail "limits under the maxima"
pass "task add refuses an empty repository, a .git path, limits over the configuration's; reads --prompt - and --prompt-file"

# 4. Money, turns and status as people read them; JSON without float noise.
cwctl run start fromfile --wait > "$T/show" || fail "run: $(cat "$T/show")"
id=$(sed -n 's/^run: *//p' "$T/show")
grep -q '^spent: *\$0\.0032, 1 turn,' "$T/show" || fail "spent line: $(grep spent "$T/show")"
grep -q '^status: *completed$' "$T/show" || fail "status line: $(grep status "$T/show")"
cwctl run show "$id" --json | grep -q '"dollars":	0.0032,' || fail "JSON dollars: $(cwctl run show "$id" --json | grep dollars)"
cwctl run logs "$id" | grep -q 'run ended: completed after ' ||
    fail "run ended note: $(cwctl run logs "$id" | grep 'run ended')"
pass "run show and the transcript: \$0.0032, 1 turn, 'completed' once"

# 4b. The journal: an approval's line carries its command; a configured rule's hit is a
#     rule_deny, a floor rule's a floor_deny.
cwctl task add asks --engine command --prompt 'echo "$DECISION" #approval #ruledeny' >/dev/null
aid_run=$(cwctl run start asks)
pend() { cwctl approvals --json | grep -q '"state":	"pending"'; }
wait_until 10 "approval pending" pend || fail "no approval"
aid=$(cwctl approvals --json | sed -n 's/.*"id":[[:space:]]*"\(ap-[^"]*\)".*/\1/p' | head -n 1)
cwctl approve "$aid" >/dev/null
wait_until 10 "ended" run_ended "$aid_run" || fail "asks run did not end"
cwctl journal --run "$aid_run" --json > "$T/j.json"
grep -A8 '"kind":	"approval_request"' "$T/j.json" | grep -q '"command":	"rm -rf build"' ||
    fail "approval_request without its command: $(cat "$T/j.json")"
grep -A6 '"kind":	"rule_deny"' "$T/j.json" | grep -q '"rule":	"config.no-curl"' ||
    fail "configured rule not journaled as rule_deny: $(cat "$T/j.json")"
grep -A6 '"kind":	"floor_deny"' "$T/j.json" | grep -q '"rule":	"floor.force_push"' ||
    fail "floor rule not journaled as floor_deny"
! grep -A6 '"kind":	"floor_deny"' "$T/j.json" | grep -q 'config.no-curl' || fail "configured rule as floor_deny"

pass "journal: approval_request carries the command; configured rules are rule_deny, floor rules floor_deny"

# 5. run stop --json answers with booleans.
cwctl task add slow --engine command --prompt 'while [ ! -e go ]; do sleep 0.05; done' >/dev/null
sid=$(cwctl run start slow)
wait_until 10 running run_is "$sid" running || fail "slow run did not start"
cwctl run stop "$sid" --json > "$T/stop.json" || fail "run stop"
grep -q '"stopping":	true' "$T/stop.json" && grep -q '"was_queued":	false' "$T/stop.json" ||
    fail "stop --json: $(cat "$T/stop.json")"
wait_until 10 stopped run_ended "$sid" || fail "run did not stop"
pass "run stop --json: booleans"

# 6. Ctrl-C on run start --wait ends the wait, not the run, and says how to follow it.
"$CW_BIN/cwctl" run start slow --wait > /dev/null 2> "$T/wait.err" &
wpid=$!
wait_until 10 "the run to start" sh -c "[ \"\$(sqlite3 '$CLOCKWORK_HOME/clockwork.db' \"SELECT count(*) FROM runs WHERE status='running'\")\" = 1 ]" ||
    fail "waited run did not start"
wid=$(sql "SELECT id FROM runs WHERE status='running'")
kill -INT $wpid
set +e; wait $wpid; rc=$?; set -e
[ $rc = 130 ] || fail "Ctrl-C exit $rc"
grep -q "stopped waiting; run $wid goes on" "$T/wait.err" && grep -q "cwctl run logs -f $wid" "$T/wait.err" ||
    fail "Ctrl-C message: $(cat "$T/wait.err")"
run_is "$wid" running || fail "Ctrl-C stopped the run: $(run_status "$wid")"
cwctl run stop "$wid" >/dev/null
pass "Ctrl-C on run start --wait: the run goes on, and cwctl says how to follow or stop it"

# 7. Shell completion: verbs, sub-verbs and options from the script; task and run names
#    from the daemon. zsh loads the same function through bashcompinit.
cwctl completion bash > "$T/comp.bash" || fail "completion bash"
bash -n "$T/comp.bash" || fail "the bash completion script does not parse"
comp() {	# comp WORD...: what completes the last word
	PATH="$CW_BIN:$PATH" bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _cwctl; echo "${COMPREPLY[*]}"' \
	    _ "$T/comp.bash" "$@"
}
[ "$(comp cwctl ru)" = "run runs" ] || fail "verb: $(comp cwctl ru)"
[ "$(comp cwctl run la)" = land ] && [ "$(comp cwctl run push --p)" = --pr ] &&
    [ "$(comp cwctl runs --rev)" = --review ] || fail "land, push, runs: $(comp cwctl run push --p)"
[ "$(comp cwctl run di)" = "diff discard" ] || fail "run sub-verb: $(comp cwctl run di)"
[ "$(comp cwctl run merge --ff)" = --ff-only ] || fail "merge option: $(comp cwctl run merge --ff)"
[ "$(comp cwctl run start fromf)" = fromfile ] || fail "task name from the daemon: $(comp cwctl run start fromf)"
[ "$(comp cwctl run diff "${id%??}")" = "$id" ] || fail "run id from the daemon: $(comp cwctl run diff "${id%??}")"
cwctl completion zsh | grep -q bashcompinit || fail "completion zsh"
if command -v zsh >/dev/null; then
	zsh -c "$(cwctl completion zsh)" || fail "zsh cannot load its completion"
fi
set +e; cwctl completion fish 2>/dev/null; rc=$?; set -e
[ $rc = 2 ] || fail "completion fish: exit $rc"
pass "cwctl completion bash|zsh: verbs, options, task and run names"

# 8. The README's sandbox example: a relative --workdir is resolved; the kernel refuses
#    the key (the command's own error), and the directory is the one asked for.
mkdir -p "$HOME/.ssh" "$T/sbx"
echo PLANTED-KEY > "$HOME/.ssh/id_ed25519"
set +e
out=$(cd "$T/sbx" && "$CW_BIN/cwctl" sandbox exec --workdir . -- sh -c 'pwd; cat ~/.ssh/id_ed25519' 2>&1); rc=$?
set -e
[ $rc = 1 ] || fail "sandbox exec: exit $rc: $out"
grep -q "^$T/sbx\$" <<< "$out" || fail "sandbox exec workdir: $out"
# (cat's own "Permission denied" is not checked: under load its last stderr line has
# been seen missing from cw-runner exec's output; the exit status and the absent key are.)
! grep -q PLANTED-KEY <<< "$out" || fail "sandbox exec: the key was read: $out"
pass "sandbox exec --workdir . resolves the directory; the kernel refuses ~/.ssh"

# 9. cwctl service install|status|uninstall: the unit carries CLOCKWORK_HOME, a PATH
#    that finds the engines as install found them, the providers' environment file and
#    Delegate=yes; a different unit is replaced only with --force.
mkdir -p "$T/engines"
printf '#!/bin/sh\n' > "$T/engines/claude"; chmod +x "$T/engines/claude"
unit="$HOME/.config/systemd/user/clockworkd.service"
svc() { PATH="$T/engines:$PATH" "$CW_BIN/cwctl" service "$@"; }
svc status --systemd | grep -q '^not installed' || fail "status before install: $(svc status --systemd)"
svc install --systemd > "$T/svc.out" || fail "service install: $(cat "$T/svc.out")"
grep -q "^Environment=\"CLOCKWORK_HOME=$CLOCKWORK_HOME\"$" "$unit" || fail "unit CLOCKWORK_HOME: $(cat "$unit")"
upath=$(sed -n 's/^Environment="PATH=\(.*\)"$/\1/p' "$unit")
[ "$(PATH=$upath command -v claude)" = "$T/engines/claude" ] || fail "the unit's PATH does not find the engine: $upath"
[ "${upath%%:*}" = "$CW_BIN" ] || fail "the unit's PATH does not start with cwctl's directory: $upath"
grep -q "^EnvironmentFile=-$CLOCKWORK_HOME/environment$" "$unit" || fail "unit EnvironmentFile"
grep -q '^Delegate=yes$' "$unit" && grep -q "^ExecStart=$CW_BIN/clockworkd --foreground$" "$unit" ||
    fail "unit Delegate/ExecStart"
if command -v systemd-analyze >/dev/null; then
	systemd-analyze verify --user "$unit" 2>&1 | grep -v 'Failed to|Unit .* not found' | grep -qi error &&
	    fail "systemd-analyze: $(systemd-analyze verify --user "$unit" 2>&1)"
fi
svc status --systemd | grep -q '^installed: .*as this cwctl writes it' || fail "status after install"
svc install --systemd | grep -q '^already installed' || fail "second install"
echo '# edited by hand' >> "$unit"
set +e; svc install --systemd 2> "$T/err"; rc=$?; set -e
[ $rc = 1 ] && grep -q 'differs from what this cwctl would write' "$T/err" || fail "overwrite: $rc $(cat "$T/err")"
grep -q 'edited by hand' "$unit" || fail "a different unit was overwritten without --force"
svc status --systemd | grep -q 'but it differs' || fail "status of a different unit"
svc install --systemd --force >/dev/null && ! grep -q 'edited by hand' "$unit" || fail "--force"
svc uninstall --systemd | grep -q "^removed $unit" && [ ! -e "$unit" ] || fail "uninstall"
svc install --launchd --print | grep -q "<string>$CLOCKWORK_HOME</string>" || fail "launchd CLOCKWORK_HOME"
pass "service install|status|uninstall: CLOCKWORK_HOME, PATH to the engines, EnvironmentFile, Delegate; --force to replace"

# 9b. The first config.yaml (issue 23): install writes one when there is none, with
#     engines.default the first agent CLI on the service's PATH; a file already there
#     is the person's and stays as it is.
fresh="$T/cw-fresh"
CLOCKWORK_HOME=$fresh svc install --systemd --force > "$T/svc2.out" || fail "install, fresh home: $(cat "$T/svc2.out")"
grep -qF "wrote $fresh/config.yaml: engines.default: claude (found $T/engines/claude)" "$T/svc2.out" ||
	fail "install did not say it wrote the first config: $(cat "$T/svc2.out")"
grep -qx '  default: claude' "$fresh/config.yaml" || fail "first config: $(cat "$fresh/config.yaml")"
[ "$(stat -c %a "$fresh/config.yaml")" = 600 ] || fail "first config mode $(stat -c %a "$fresh/config.yaml")"
CLOCKWORK_HOME=$fresh "$CW_BIN/cwctl" policy check -- ls >/dev/null || fail "the first config does not load"
echo '# mine' >> "$fresh/config.yaml"
CLOCKWORK_HOME=$fresh svc install --systemd --force > "$T/svc3.out" || fail "install again"
grep -qF "$fresh/config.yaml exists" "$T/svc3.out" && grep -qx '# mine' "$fresh/config.yaml" ||
	fail "an existing config was touched: $(cat "$T/svc3.out")"
CLOCKWORK_HOME=$fresh svc uninstall --systemd > /dev/null || fail "uninstall, fresh home"
pass "service install writes the first config.yaml with engines.default (the first agent CLI on the service's PATH), 0600, and leaves an existing one alone"

# 10. Another home with a stale port file (pointing at this daemon's port) and a stale
#     socket file: cwctl says clockworkd is not running for that home, exit 4.
mkdir -p "$T/other" && chmod 700 "$T/other"
cp "$CLOCKWORK_HOME/clockworkd.port" "$T/other/clockworkd.port"
python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' "$T/other/clockworkd.sock"
set +e; CLOCKWORK_HOME="$T/other" "$CW_BIN/cwctl" status > /dev/null 2> "$T/err"; rc=$?; set -e
[ $rc = 4 ] && grep -q "not running for $T/other" "$T/err" && ! grep -q token "$T/err" ||
    fail "stale port file: $rc $(cat "$T/err")"
pass "a stale port file and socket from another home: exit 4, naming that home"
