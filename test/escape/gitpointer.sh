#!/usr/bin/env bash
# A planted git pointer (found by an attack on the new view, issue 22): `cw-runner exec`
# grants the git directory of the repository the workdir is in, for reading, and a
# `.git` *file* names that directory by text. One run plants `.git` saying
# "gitdir: ~/private" (or the directory of a tmux socket, or the Clockwork home's run
# TMPDIRs, where engine logins live); the next exec in the same workdir granted it.
# Now a pointer is followed only where the directory points back at the checkout (a
# linked worktree's gitdir file, a submodule's core.worktree), and a git directory the
# run could write is never asked for its commondir. Real linked worktrees and
# submodules still work.
# Runs as root and as a normal user (every target is the runner's user's own).
# Env: CW_BIN, CW_TEST_TMP. Exit 0 when every row passed.
set -u
: "${CW_BIN:?}"
R=$CW_BIN/cw-runner
PY=/usr/bin/python3
T=$(realpath "$(mktemp -d "${CW_TEST_TMP:-${TMPDIR:-/tmp}}/gitpointer.XXXXXX")")
LPID=
trap '[ -n "$LPID" ] && kill $LPID 2>/dev/null; rm -rf "$T"' EXIT
fail=0
ok() { echo "ok    $1"; }
bad() { echo "FAIL  $1"; fail=1; }
export HOME=$T/home GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.invalid
export GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.invalid
unset CLOCKWORK_HOME CW_SANDBOX
mkdir -p "$HOME/private" "$T/work" "$T/sockdir"
echo "CW-PRIVATE-NOTES" > "$HOME/private/notes.txt"
run() { "$R" exec --workdir "$T/work" -- "$@"; }

# 1. A pointer to a private directory: the next exec must not read it.
printf 'gitdir: %s\n' "$HOME/private" > "$T/work/.git"
out=$(run cat "$HOME/private/notes.txt" 2>&1); rc=$?
if ! grep -q CW-PRIVATE <<<"$out" && [ "$rc" -ne 0 ]; then ok "planted .git pointer to ~/private: not granted (rc $rc)"
else bad "planted .git pointer to ~/private: rc=$rc: $out"; fi

# 2. A pointer to the directory of a socket some program listens on (tmux, an agent).
$PY - "$T/sockdir/server" "$T/accepted" "$T/listening" <<'PYEOF' &
import socket, sys
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(4); s.settimeout(20)
open(sys.argv[3], "w").close()
try:
    while True:
        c, _ = s.accept(); open(sys.argv[2], "a").write("x"); c.close()
except OSError:
    pass
PYEOF
LPID=$!
for _ in $(seq 500); do [ -e "$T/listening" ] && break; sleep 0.01; done
printf 'gitdir: %s\n' "$T/sockdir" > "$T/work/.git"
out=$(run $PY -c "import socket,sys; socket.socket(socket.AF_UNIX).connect(sys.argv[1])" "$T/sockdir/server" 2>&1); rc=$?
if [ "$rc" -ne 0 ] && [ ! -e "$T/accepted" ]; then ok "planted .git pointer to a socket's directory: no connection"
else bad "planted .git pointer to a socket's directory: rc=$rc accepted=$([ -e "$T/accepted" ] && echo yes || echo no)"; fi
rm -f "$T/work/.git"

# 3. A .git directory planted in the workdir whose commondir names the private one.
mkdir -p "$T/work/.git/objects" "$T/work/.git/refs"
echo "ref: refs/heads/main" > "$T/work/.git/HEAD"
echo "$HOME/private" > "$T/work/.git/commondir"
out=$(run cat "$HOME/private/notes.txt" 2>&1); rc=$?
if ! grep -q CW-PRIVATE <<<"$out"; then ok "planted .git/commondir to ~/private: not followed"
else bad "planted .git/commondir to ~/private: $out"; fi
rm -rf "$T/work/.git"

# 4. The real thing still works: a linked worktree, and a submodule's checkout.
git init -q -b main "$T/main" && echo a > "$T/main/a" && git -C "$T/main" add a &&
	git -C "$T/main" commit -qm a && git -C "$T/main" worktree add -q "$T/linked" -b side
out=$("$R" exec --workdir "$T/linked" -- git status --porcelain --branch 2>&1); rc=$?
if [ "$rc" -eq 0 ] && grep -q '## side' <<<"$out"; then ok "a real linked worktree: git status works"
else bad "a real linked worktree: rc=$rc: $out"; fi
git init -q -b main "$T/super" && git -C "$T/super" -c protocol.file.allow=always \
	submodule --quiet add "$T/main" sub >/dev/null 2>&1 && git -C "$T/super" commit -qm sub
out=$("$R" exec --workdir "$T/super/sub" -- git log -1 --format=%s 2>&1); rc=$?
if [ "$rc" -eq 0 ] && grep -qx a <<<"$out"; then ok "a real submodule checkout: git log works"
else bad "a real submodule checkout: rc=$rc: $out"; fi
exit $fail
