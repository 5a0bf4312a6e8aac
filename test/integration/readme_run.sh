#!/usr/bin/env bash
# The README's run command, end to end: scripts/run --once starts clockworkd, makes the
# demonstration task and run, follows its log and prints its report. Checks that the run
# completed sandboxed, committed on its own branch, could not read ~/.ssh or write HOME,
# and that the user's own repository branch did not move.
set -u
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
mkdir -p "$t/home/.ssh" "$t/cw"
echo "PLANTED-PRIVATE-KEY" > "$t/home/.ssh/id_ed25519"
printf 'api_port: 0\n' > "$t/cw/config.yaml"
out=$(HOME="$t/home" CLOCKWORK_HOME="$t/cw" CW_BIN="$CW_BIN" timeout 120 \
  bash "$CW_SRC/scripts/run" --once 2>&1); rc=$?
fail=0
expect() { printf '%s\n' "$out" | grep -qF -- "$1" || { echo "FAIL: output lacks: $1"; fail=1; }; }
[ "$rc" = 0 ] || { echo "FAIL: scripts/run exited $rc"; fail=1; }
expect "status:       completed (completed)"
expect "sandboxed:    yes"
expect "committed on branch clockwork/demo/"
expect "as expected, ~/.ssh is not readable from inside the sandbox"
expect "as expected, HOME is not writable from inside the sandbox"
if printf '%s\n' "$out" | grep -q "PLANTED-PRIVATE-KEY\|UNEXPECTED"; then
  echo "FAIL: the sandbox let the demo read a key or write HOME"; fail=1
fi
[ ! -e "$t/home/outside-the-sandbox" ] || { echo "FAIL: HOME was written"; fail=1; }
# The demo repository's own main branch is untouched; the run's branch has the commit.
[ "$(git -C "$t/cw/demo-repo" log --oneline main | wc -l)" = 1 ] || { echo "FAIL: main moved"; fail=1; }
git -C "$t/cw/demo-repo" log --oneline --all | grep -q "demo: hello" || { echo "FAIL: no commit on the run branch"; fail=1; }
[ "$fail" = 0 ] && echo "ok: README run command: a sandboxed demonstration run completed with its log and report"
[ "$fail" = 0 ] || printf '%s\n' "$out" | tail -40
exit $fail
