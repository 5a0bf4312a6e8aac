#!/usr/bin/env bash
# The README's run command, end to end.
#
# 1. scripts/run --once with the real pinned Claude Code (scripts/setup-engines) against
#    the scripted model server: the transcript shows the edit, the floor refusing the
#    force-push, the approval waiting with `cwctl approve ID` ready to paste and an Inbox
#    link; this test answers it with that command, as a person would; then the commit,
#    the diff and the report, and the user's main branch has not moved.
# 2. CW_DEMO=command scripts/run --once, the fallback: a sandboxed shell-command run that
#    commits on its own branch and cannot read ~/.ssh or write HOME.
set -u
: "${CW_BIN:?}" "${CW_SRC:?}"
t=$(mktemp -d); trap 'kill $pid 2>/dev/null; rm -rf "$t"' EXIT
pid=
fail=0
# The engines' cache stays outside the test's HOME (it is shared with the other tests,
# and a run's sandbox does not grant the user's home).
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-$HOME/.cache}
"$CW_SRC/scripts/setup-engines" >/dev/null 2>&1 || { echo "FAIL: scripts/setup-engines"; exit 1; }
mkdir -p "$t/home/.ssh" "$t/cw"
echo "PLANTED-PRIVATE-KEY" > "$t/home/.ssh/id_ed25519"
expect() { grep -qE -- "$1" "$t/out" || { echo "FAIL: output lacks: $1"; fail=1; }; }

# 1. The Claude Code demonstration.
HOME="$t/home" CLOCKWORK_HOME="$t/cw" CW_BIN="$CW_BIN" timeout 300 \
    bash "$CW_SRC/scripts/run" --once > "$t/out" 2>&1 &
pid=$!
id=
for _ in $(seq 1 1200); do	# up to 120 s for the approval to be asked
	id=$(grep -o "cwctl approve ap-[0-9a-f]*" "$t/out" 2>/dev/null | head -n 1 | cut -d' ' -f3)
	[ -n "$id" ] && grep -q 'inbox/login?code=' "$t/out" && break
	kill -0 $pid 2>/dev/null || break
	sleep 0.1
done
[ -n "$id" ] || { echo "FAIL: no approval asked"; tail -40 "$t/out"; exit 1; }
# The printed command, pasted as printed.
cmd=$(grep -o "CLOCKWORK_HOME=[^ ]* [^ ]*/cwctl approve $id" "$t/out" | head -n 1)
[ -n "$cmd" ] || { echo "FAIL: the ready-to-paste command is missing"; fail=1; }
HOME="$t/home" env $cmd > "$t/approve.out" 2>&1 || { echo "FAIL: $cmd: $(cat "$t/approve.out")"; fail=1; }
wait $pid; rc=$?; pid=
[ "$rc" = 0 ] || { echo "FAIL: scripts/run exited $rc"; fail=1; }
expect "A scripted model stands in for the provider"
expect "no API key is needed"
expect "^tool +Bash +echo 'hello from a sandboxed Claude Code run' > hello.txt"
expect "^floor +refused git push --force origin main \(floor\.force_push\)"
expect "^WAITING +approval $id: Bash sh -c 'git add hello.txt"
expect "^answer +approval $id allowed by cwctl"
expect "^final +I wrote hello.txt and committed it"
expect "^\+hello from a sandboxed Claude Code run"
expect "^status: +completed$"
expect "^sandboxed: +yes"
expect "^engine: +claude"
expect "cwctl run merge "
repo="$t/cw/demo-repo"
[ "$(git -C "$repo" log --oneline main | wc -l)" = 1 ] || { echo "FAIL: main moved"; fail=1; }
git -C "$repo" log --oneline --all | grep -q "demo: hello" || { echo "FAIL: no commit on the run branch"; fail=1; }
[ "$fail" = 0 ] && echo "ok: the Claude Code demonstration: edit, floor refusal, approval answered with the printed command, diff and report"
[ "$fail" = 0 ] || tail -60 "$t/out"

# 2. The shell-command demonstration (the fallback), in a new home.
mkdir -p "$t/cw2"
# The daemon's default port is 7420; the normal-user tier runs this same test
# beside the root one, so this home asks for any free port as a user with a
# busy 7420 would.
printf 'api_port: 0\n' > "$t/cw2/config.yaml"
out=$(HOME="$t/home" CLOCKWORK_HOME="$t/cw2" CW_BIN="$CW_BIN" CW_DEMO=command timeout 120 \
  bash "$CW_SRC/scripts/run" --once 2>&1); rc=$?
f2=0
expect2() { grep -qF -- "$1" <<< "$out" || { echo "FAIL: output lacks: $1"; f2=1; }; }
[ "$rc" = 0 ] || { echo "FAIL: scripts/run (command) exited $rc"; f2=1; }
expect2 "status:       completed"
expect2 "sandboxed:    yes"
expect2 "committed on branch clockwork/demo/"
expect2 "as expected, ~/.ssh is not readable from inside the sandbox"
expect2 "as expected, HOME is not writable from inside the sandbox"
if grep -q "PLANTED-PRIVATE-KEY\|UNEXPECTED" <<< "$out"; then
  echo "FAIL: the sandbox let the demo read a key or write HOME"; f2=1
fi
[ ! -e "$t/home/outside-the-sandbox" ] || { echo "FAIL: HOME was written"; f2=1; }
[ "$(git -C "$t/cw2/demo-repo" log --oneline main | wc -l)" = 1 ] || { echo "FAIL: main moved"; f2=1; }
[ "$f2" = 0 ] && echo "ok: the shell-command demonstration: a sandboxed run completed with its log and report"
[ "$f2" = 0 ] || printf '%s\n' "$out" | tail -40
[ "$fail" = 0 ] && [ "$f2" = 0 ]
