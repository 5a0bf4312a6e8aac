#!/usr/bin/env bash
# The run's filesystem view, attacked where Landlock has no say (issue 22, items 1-2):
# metadata changes to the user's own files in HOME (chmod, chown, utimes, xattrs) and
# connect() to a named unix socket some other program of the user's listens on under
# HOME. Landlock (ABI <= 7) has no access right for any of them, so only the view can
# stop them: a path outside the grants is not in the run's view (ENOENT), a granted
# read-only file refuses them (EROFS). Each row passes only when the call was refused
# AND the target is unchanged on the host (mode, mtime, ctime, xattr, no connection).
#
# Runs as root and as a normal user alike (every target is the runner's user's own
# file, so file permissions never refuse first). CW_ESCAPE_CONTROL=1 runs every attempt
# with CW_SANDBOX=off instead: each must then get through (every row FAILs), which
# proves the attempts are live.
# Env: CW_BIN, CW_TEST_TMP. Exit 0 when every row passed, else 1.
set -u
: "${CW_BIN:?CW_BIN must name the directory holding cw-runner}"
RUNNER=$CW_BIN/cw-runner
CONTROL=${CW_ESCAPE_CONTROL:-0}
PY=/usr/bin/python3
T=$(realpath "$(mktemp -d "${CW_TEST_TMP:-${TMPDIR:-/tmp}}/homeview.XXXXXX")")
H=$T/home
WT=$T/wt
LPID=
cleanup() { [ -n "$LPID" ] && kill "$LPID" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
pass=0 failed=0 skipped=0
row() {	# row NAME OK(0|1) DETAIL: OK=1 means the attempt was refused, target unchanged
	local want=1
	[ "$CONTROL" = 1 ] && want=0
	if [ "$2" = "$want" ]; then
		pass=$((pass + 1)); printf 'ok    %-44s %s\n' "$1" "$3"
	else
		failed=$((failed + 1)); printf 'FAIL  %-44s %s\n' "$1" "$3"
	fi
}
skip() { skipped=$((skipped + 1)); printf 'skip  %-44s %s\n' "$1" "$2"; }

mkdir -p "$H/.ssh" "$H/.local/share/app" "$WT"
echo "-----BEGIN OPENSSH PRIVATE KEY----- homeview" > "$H/.ssh/id_ed25519"
printf 'export PATH=$HOME/bin:$PATH\n' > "$H/.bashrc"
printf '[user]\n\tname = Homeview\n\temail = hv@example.invalid\n' > "$H/.gitconfig"
# Each row starts from the same planted state, whatever an earlier row got through.
replant() {
	chmod 700 "$H/.ssh"; chmod 600 "$H/.ssh/id_ed25519"
	chmod 644 "$H/.bashrc" "$H/.gitconfig"
	touch -d '2020-02-02 02:02:02' "$H/.bashrc" "$H/.gitconfig"
}
replant
export HOME=$H
unset CLOCKWORK_HOME CW_SANDBOX
run() {
	if [ "$CONTROL" = 1 ]; then CW_SANDBOX=off "$RUNNER" exec --workdir "$WT" "$@"
	else "$RUNNER" exec --workdir "$WT" "$@"; fi
}
meta() { stat -c '%a %.9Y %.9Z %u:%g' "$1"; }	# mode, mtime, ctime, owner

# The view still lets work through: a write in the worktree.
run -- sh -c 'echo inside > made.txt' 2>/dev/null
if [ "$(cat "$WT/made.txt" 2>/dev/null)" = inside ]; then echo "ok    (control) write in the worktree"
else echo "FAIL  (control) write in the worktree"; failed=$((failed + 1)); fi

# chmod, utimes and chown on files the user owns, outside every grant.
attempt() {	# attempt NAME TARGET COMMAND...: refused, and TARGET's metadata unchanged
	local name=$1 target=$2 before after out rc
	shift 2
	replant
	before=$(meta "$target")
	out=$(run -- "$@" 2>&1); rc=$?
	after=$(meta "$target")
	if [ "$rc" -ne 0 ] && [ "$before" = "$after" ]; then row "$name" 1 "refused: $(printf '%s' "$out" | tail -n 1)"
	else row "$name" 0 "rc=$rc, before '$before' after '$after': $(printf '%s' "$out" | tail -n 1)"; fi
}
attempt "chmod 666 ~/.ssh/id_ed25519" "$H/.ssh/id_ed25519" chmod 666 "$H/.ssh/id_ed25519"
attempt "chmod 777 ~/.ssh" "$H/.ssh" chmod 777 "$H/.ssh"
attempt "chmod 000 ~/.bashrc" "$H/.bashrc" chmod 000 "$H/.bashrc"
attempt "touch -d 2001-01-01 ~/.bashrc" "$H/.bashrc" touch -d 2001-01-01 "$H/.bashrc"
attempt "chown self ~/.bashrc (ctime)" "$H/.bashrc" chown "$(id -u):$(id -g)" "$H/.bashrc"
# A granted file (git needs ~/.gitconfig): readable inside, its metadata still fixed.
attempt "chmod 600 ~/.gitconfig (granted, read-only)" "$H/.gitconfig" chmod 600 "$H/.gitconfig"
attempt "touch ~/.gitconfig (granted, read-only)" "$H/.gitconfig" touch -d 2001-01-01 "$H/.gitconfig"

# Extended attributes: a user.* xattr on a file the user owns.
replant
if $PY -c "import os,sys; os.setxattr(sys.argv[1], 'user.cwprobe', b'x'); os.removexattr(sys.argv[1], 'user.cwprobe')" "$H/.bashrc" 2>/dev/null; then
	out=$(run -- $PY -c "import os,sys; os.setxattr(sys.argv[1], 'user.cwprobe', b'planted')" "$H/.bashrc" 2>&1); rc=$?
	if [ "$rc" -ne 0 ] && ! $PY -c "import os,sys; os.getxattr(sys.argv[1], 'user.cwprobe')" "$H/.bashrc" 2>/dev/null; then
		row "setxattr user.* on ~/.bashrc" 1 "refused: $(printf '%s' "$out" | tail -n 1)"
	else row "setxattr user.* on ~/.bashrc" 0 "rc=$rc: $(printf '%s' "$out" | tail -n 1)"; fi
	$PY -c "import os,sys; os.removexattr(sys.argv[1], 'user.cwprobe')" "$H/.bashrc" 2>/dev/null
else
	skip "setxattr user.* on ~/.bashrc" "this filesystem takes no user.* xattrs"
fi

# A named unix socket under HOME, as a language server, a database or an agent leaves
# one: the run must not reach it, and the listener must never see a connection.
SOCK=$H/.local/share/app/server.sock
$PY - "$SOCK" "$T/accepted" "$T/listening" <<'PYEOF' &
import socket, sys
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(8); s.settimeout(20)
open(sys.argv[3], "w").close()
try:
    while True:
        c, _ = s.accept(); open(sys.argv[2], "a").write("accepted\n"); c.close()
except OSError:
    pass
PYEOF
LPID=$!
for _ in $(seq 500); do [ -e "$T/listening" ] && break; sleep 0.01; done
out=$(run -- $PY -c "import socket,sys; socket.socket(socket.AF_UNIX).connect(sys.argv[1])" "$SOCK" 2>&1); rc=$?
if [ "$rc" -ne 0 ] && [ ! -e "$T/accepted" ]; then row "connect() to a socket under HOME" 1 "refused: $(printf '%s' "$out" | tail -n 1)"
else row "connect() to a socket under HOME" 0 "rc=$rc, accepted=$([ -e "$T/accepted" ] && echo yes || echo no)"; fi
# The same socket through a symlink planted in the worktree.
ln -s "$SOCK" "$WT/sock-link"
out=$(run -- $PY -c "import socket; socket.socket(socket.AF_UNIX).connect('sock-link')" 2>&1); rc=$?
if [ "$rc" -ne 0 ] && [ ! -e "$T/accepted" ]; then row "connect() through a link in the worktree" 1 "refused: $(printf '%s' "$out" | tail -n 1)"
else row "connect() through a link in the worktree" 0 "rc=$rc, accepted=$([ -e "$T/accepted" ] && echo yes || echo no)"; fi
# HOME's own listing shows nothing but what is granted.
out=$(run -- sh -c 'ls -a "$HOME" 2>&1; ls "$HOME/.ssh" 2>&1' 2>&1)
if ! grep -qE 'bashrc|id_ed25519' <<<"$out"; then row "HOME lists nothing ungranted" 1 "$(printf '%s' "$out" | tr '\n' ' ' | cut -c1-80)"
else row "HOME lists nothing ungranted" 0 "$(printf '%s' "$out" | tr '\n' ' ' | cut -c1-80)"; fi

echo "homeview ($(id -un), $([ "$CONTROL" = 1 ] && echo control || echo sandboxed)): $pass passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
