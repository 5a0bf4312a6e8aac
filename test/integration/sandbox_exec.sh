#!/usr/bin/env bash
# cw-runner exec smoke checks through the real binary on this kernel: writes land only
# in the workdir, $HOME and planted keys stay out of reach, the command's status comes
# back, descendants that setsid() away are ended, CW_SANDBOX=off is loud, and a context
# root into ~/.ssh is refused with exit 3 before anything runs. The big escape matrix is
# test/escape/matrix.sh; this file keeps to the basics of `exec` itself.
set -u
fail=0
ok() { echo "ok: $1"; }
bad() { echo "FAIL: $1"; fail=1; }

R="$CW_BIN/cw-runner"
# Not under /tmp: the view's root is staged over /tmp. A path outside the grants is not
# in the run's view at all (ENOENT), a read-only one refuses writes (EROFS), and
# Landlock answers EACCES beneath the grants: each is a kernel refusal.
denied='Permission denied|No such file or directory|Read-only file system'
base=${CW_TEST_TMP:-${CW_BUILD:-$(dirname "$CW_BIN")}}
t=$(mktemp -d "$base/sandbox-exec.XXXXXX")
trap 'rm -rf "$t"' EXIT
mkdir -p "$t/home/.ssh" "$t/work" "$t/ctx"
echo "-----BEGIN OPENSSH PRIVATE KEY----- planted" > "$t/home/.ssh/id_ed25519"
echo "outside" > "$t/outside.txt"
export HOME="$t/home"
unset CLOCKWORK_HOME CW_SANDBOX
run() { "$R" exec --workdir "$t/work" "$@"; }

# 1. Writing in the workdir works.
run -- sh -c 'echo inside > made.txt' 2>/dev/null
[ "$(cat "$t/work/made.txt" 2>/dev/null)" = inside ] && ok "write in workdir" || bad "write in workdir"

# 2. Writing to $HOME is refused by the kernel, and nothing appears.
err=$(run -- sh -c 'echo x > "$HOME/planted"' 2>&1); rc=$?
if [ $rc -ne 0 ] && [ ! -e "$t/home/planted" ] && grep -qE "$denied" <<<"$err"; then
  ok "write to HOME refused ($(printf '%s' "$err" | grep -oE "$denied" | head -n 1))"
else bad "write to HOME: rc=$rc, exists=$([ -e "$t/home/planted" ] && echo yes || echo no), $err"; fi

# 3. The planted ssh key cannot be read, directly or through a link in the workdir.
ln -s "$t/home/.ssh/id_ed25519" "$t/work/key-link"
out=$(run -- sh -c 'cat "$HOME/.ssh/id_ed25519"; cat key-link' 2>&1); rc=$?
if [ $rc -ne 0 ] && ! grep -q 'PRIVATE KEY' <<<"$out" && grep -qE "$denied" <<<"$out"; then
  ok "ssh key unreadable"
else bad "ssh key read: rc=$rc: $out"; fi

# 4. A file outside every grant is unreadable and unwritable.
out=$(run -- sh -c "cat '$t/outside.txt'; echo y > '$t/outside.txt'" 2>&1)
[ "$(cat "$t/outside.txt")" = outside ] && ! grep -qx outside <<<"$out" &&
  ok "outside file untouched" || bad "outside file: $out"

# 5. Exit status passes through; death by signal N is 128+N.
run -- sh -c 'exit 42' 2>/dev/null; rc=$?
[ $rc -eq 42 ] && ok "exit status 42 passed through" || bad "exit status: $rc, want 42"
run -- sh -c 'kill -TERM $$' 2>/dev/null; rc=$?
[ $rc -eq 143 ] && ok "signal death is 128+15" || bad "signal status: $rc, want 143"
run -- /no/such/program 2>/dev/null; rc=$?
[ $rc -eq 127 ] && ok "missing program: 127" || bad "missing program: $rc, want 127"

# 6. Descendants are ended when the command exits, even one that left with setsid. The
# pids the command sees are its PID namespace's, not the host's: each descendant is
# found on the host by a sleep length no other process has.
s1=$((3000 + RANDOM % 1000)).$$1 s2=$((3000 + RANDOM % 1000)).$$2
run -- sh -c "setsid sleep $s1 & sleep $s2 &" 2>/dev/null
for s in "$s1" "$s2"; do
  if ! pgrep -f "^sleep $s\$" >/dev/null; then ok "descendant sleep $s ended"
  else bad "descendant sleep $s still alive: $(pgrep -f "^sleep $s\$")"; kill $(pgrep -f "^sleep $s\$") 2>/dev/null; fi
done

# 7. The environment is an allowlist: an unlisted variable does not get in.
out=$(SECRET_X=leak run -- sh -c 'echo "[${SECRET_X:-}] [$TMPDIR] [$npm_config_cache]"' 2>/dev/null)
case "$out" in
  "[] [$t/home/.clockwork/tmp/"*"] [$t/home/.clockwork/tmp/"*"/cache/npm]") ok "environment allowlist and redirects" ;;
  *) bad "environment: $out" ;;
esac
# The caches of an exec without --cache-scope are its own (in its TMPDIR); with one,
# they are kept under <cwhome>/caches/scopes/NAME for the next exec naming it.
run --cache-scope sx -- sh -c 'mkdir -p "$npm_config_cache" && echo kept > "$npm_config_cache/cw-kept"' 2>/dev/null
out=$(run --cache-scope sx -- sh -c 'echo "[$npm_config_cache] $(cat "$npm_config_cache/cw-kept")"' 2>/dev/null)
[ "$out" = "[$t/home/.clockwork/caches/scopes/sx/npm] kept" ] && ok "--cache-scope keeps its caches" ||
  bad "--cache-scope: $out"
out=$(run --cache-scope ../x -- true 2>&1); rc=$?
[ $rc -eq 3 ] && grep -q "bad cache scope" <<<"$out" && ok "--cache-scope ../x refused" ||
  bad "--cache-scope ../x: rc $rc: $out"

# 7b. An exec's TMPDIR is a tmpfs of its own, 0700, in the view only: while the command
# runs, nothing of it is on the host's disk, and a concurrent exec does not see it.
mkfifo "$t/work/go"
run -- sh -c 'echo held > "$TMPDIR/m" && printf "%s %s %s\n" "$TMPDIR" "$(stat -f -c %T "$TMPDIR")" "$(stat -c %a "$TMPDIR")" > tmpdir.txt && cat go >/dev/null && cat "$TMPDIR/m"' > "$t/tmpdir.out" 2>&1 &
tpid=$!
for _ in $(seq 1 100); do [ -s "$t/work/tmpdir.txt" ] && break; sleep 0.1; done
read -r tdir tfs tmode < "$t/work/tmpdir.txt" 2>/dev/null
during=$(find "$t/home/.clockwork/tmp" -mindepth 1 2>/dev/null | head -n 3 | tr '\n' ' ')
other=$(run -- sh -c "ls -d '$tdir' 2>&1" 2>&1)
echo > "$t/work/go"
wait $tpid; rc=$?
if [ $rc -eq 0 ] && [ "$tfs" = tmpfs ] && [ "$tmode" = 700 ] && [ -z "$during" ] &&
    [ "$(cat "$t/tmpdir.out")" = held ] && case $tdir in "$t/home/.clockwork/tmp/exec-"*) true ;; *) false ;; esac &&
    grep -q 'No such file' <<<"$other"; then
  ok "exec TMPDIR: $tfs, mode $tmode, nothing on the host, not in another exec's view"
else bad "exec TMPDIR: rc $rc, '$tdir' '$tfs' '$tmode', on the host: [$during], out: $(cat "$t/tmpdir.out"), other exec: $other"; fi
rm -f "$t/work/go" "$t/work/tmpdir.txt"

# 8. Capabilities are gone even for root, and no new ones come through exec.
out=$(run -- sh -c 'grep -E "^Cap(Eff|Prm|Bnd|Amb)" /proc/self/status' 2>/dev/null)
[ "$(printf '%s\n' "$out" | grep -cv '0000000000000000$')" = 0 ] && [ -n "$out" ] &&
  ok "no capabilities inside" || bad "capabilities: $out"

# 9. CW_SANDBOX=off runs unconfined and says so loudly.
err=$(CW_SANDBOX=off run -- sh -c 'echo x > "$HOME/off-proof"' 2>&1 >/dev/null); rc=$?
if [ $rc -eq 0 ] && [ -e "$t/home/off-proof" ] && grep -q 'SANDBOX DISABLED (CW_SANDBOX=off)' <<<"$err"; then
  ok "CW_SANDBOX=off is loud"
else bad "CW_SANDBOX=off: rc=$rc: $err"; fi

# 10. A context root into ~/.ssh is refused, exit 3, and nothing ran.
err=$(run --context '~/.ssh:ro' -- sh -c 'touch ran' 2>&1); rc=$?
if [ $rc -eq 3 ] && [ ! -e "$t/work/ran" ] && grep -q 'credential' <<<"$err"; then
  ok "context root into ~/.ssh refused (exit 3)"
else bad "context refusal: rc=$rc: $err"; fi

# 11. A context root is readable and not writable.
echo ctx > "$t/ctx/file"
out=$(run --context "$t/ctx:ro" -- sh -c "cat '$t/ctx/file'; echo w >> '$t/ctx/file'" 2>&1)
[ "$(cat "$t/ctx/file")" = ctx ] && grep -qx ctx <<<"$out" &&
  ok "context root read-only" || bad "context root: $out"

# 12. cwctl sandbox exec is the same command.
"$CW_BIN/cwctl" sandbox exec --workdir "$t/work" -- sh -c 'exit 5' 2>/dev/null; rc=$?
[ $rc -eq 5 ] && ok "cwctl sandbox exec passes status" || bad "cwctl sandbox exec: $rc"

# 13. cw-runner spec --json prints the spec, and the workdir is in it.
"$R" spec --json --workdir "$t/work" | grep -q "\"$t/work\"" && ok "spec --json" || bad "spec --json"

# 14. A named unix socket outside the grants cannot be reached: it is not in the view
#     (FileNotFoundError), and the listener outside never sees a connection.
PY=/usr/bin/python3
$PY - "$t/outside.sock" "$t/accepted" "$t/listening" "cw-sandbox-exec-$$" <<'PYEOF' &
import socket, sys
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(1); s.settimeout(15)
a = socket.socket(socket.AF_UNIX); a.bind("\0" + sys.argv[4]); a.listen(1)
open(sys.argv[3], "w").close()
try:
    s.accept(); open(sys.argv[2], "w").write("accepted")
except OSError:
    pass
PYEOF
lpid=$!
for _ in $(seq 500); do [ -e "$t/listening" ] && break; sleep 0.01; done
out=$(run -- $PY -c "import socket; socket.socket(socket.AF_UNIX).connect('$t/outside.sock')" 2>&1)
if [ ! -e "$t/accepted" ] && grep -qE 'FileNotFoundError|ConnectionRefusedError' <<<"$out"; then
  ok "outside named socket unreachable"
else bad "outside named socket: accepted=$([ -e "$t/accepted" ] && echo yes || echo no): $out"; fi

# 15. The same outside process's abstract socket is out of reach: abstract names belong
# to a network namespace, and the run has its own (SPEC N1), where none exists; with
# network: open (the host's namespace), Landlock's scoping refuses it (EPERM).
out=$(run -- $PY -c "import socket; socket.socket(socket.AF_UNIX).connect('\0cw-sandbox-exec-$$')" 2>&1)
grep -q 'ConnectionRefusedError' <<<"$out" && ok "abstract socket not in the run's network namespace (ECONNREFUSED)" ||
  bad "abstract socket: $out"
mkdir -p "$HOME/.clockwork" && printf 'network: open\n' > "$HOME/.clockwork/config.yaml"
out=$(run -- $PY -c "import socket; socket.socket(socket.AF_UNIX).connect('\0cw-sandbox-exec-$$')" 2>&1)
grep -q 'PermissionError' <<<"$out" && ok "abstract socket scoped with network: open (EPERM)" ||
  bad "abstract socket, network: open: $out"
rm -f "$HOME/.clockwork/config.yaml"
kill $lpid 2>/dev/null; wait $lpid 2>/dev/null

# 16. A system file's mode cannot be changed (read-only mount: Landlock does not check
#     chmod). Only root can plant a file in /etc; as a normal user the file's owner is
#     root, so permissions would refuse it first: the row is skipped, and the HOME rows
#     of test/escape/homeview.sh carry the same attack on files the user owns.
if [ "$(id -u)" = 0 ]; then
  probe=/etc/cw-sandbox-exec-$$
  echo probe > "$probe" && chmod 644 "$probe"
  out=$(run -- chmod 666 "$probe" 2>&1)
  [ "$(stat -c %a "$probe")" = 644 ] && grep -q 'Read-only file system' <<<"$out" &&
    ok "chmod of a system file refused (EROFS)" || bad "chmod of system file: $(stat -c %a "$probe"): $out"
  rm -f "$probe"
else
  echo "skip: chmod of a system file (root only: a normal user cannot plant one in /etc)"
fi

# 17. Git works with the user's global config, read-only (git refuses to run when it
#     exists and cannot be read), and commits under the identity it gives.
printf '[user]\n\tname = Sandbox Test\n\temail = sbx@example.invalid\n' > "$t/home/.gitconfig"
mkdir -p "$t/work/repo"
out=$(run -- sh -c 'cd repo && git init -q . && git commit -q --allow-empty -m x && git log -1 --format=%an; git config --global user.name Evil' 2>&1)
if grep -qx 'Sandbox Test' <<<"$out" && grep -q 'Sandbox Test' "$t/home/.gitconfig" &&
   ! grep -q Evil "$t/home/.gitconfig"; then ok "git reads ~/.gitconfig, cannot change it"
else bad "git with ~/.gitconfig: $out"; fi

# 18. cw-sandbox, which builds every sandbox, links the C library only (issue 25); run by
#     hand (no runner's socket on fd 3) it refuses, exit 127, and runs nothing; a plan
#     that is not one is refused with the reason, and nothing runs.
needed=$(readelf -d "$CW_BIN/cw-sandbox" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
case " $needed" in
*libcurl*|*libssl*|*libcrypto*|*libsqlite*|*libevent*|*libseccomp*|*libcjson*|*libgit2*|*libyaml*)
	bad "cw-sandbox links more than libc: $needed" ;;
*) [[ $needed == *libc.so* ]] && ok "cw-sandbox links only: $needed" || bad "cw-sandbox NEEDED: '$needed'" ;;
esac
out=$("$CW_BIN/cw-sandbox" --plan-fd 4 -- sh -c 'echo ran' 2>&1 3>&- 4</dev/null); rc=$?
[ $rc = 127 ] && [[ $out == *"only cw-runner starts"* ]] && [[ $out != *ran* ]] &&
    ok "cw-sandbox by hand refuses (rc 127)" || bad "cw-sandbox by hand: rc $rc $out"
printf 'CWPLAN1\nE\0\0\0\0011\0\0\0\001x' > "$t/bad.plan"
out=$(python3 -c '
import os, socket, subprocess, sys
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
plan = os.open(sys.argv[2], os.O_RDONLY)
hi = [os.dup(b.fileno()), os.dup(plan)]	# above 4, so the dup2s clobber nothing
def fds():
	os.dup2(hi[0], 3)
	os.dup2(hi[1], 4)
p = subprocess.run([sys.argv[1], "--plan-fd", "4", "--", "sh", "-c", "echo ran"],
    pass_fds=(3, 4), stdin=subprocess.DEVNULL, capture_output=True, text=True,
    preexec_fn=fds)
print(p.returncode, p.stdout.strip(), p.stderr.strip())
' "$CW_BIN/cw-sandbox" "$t/bad.plan" 2>&1)
[[ $out == "127  cw-sandbox: plan: "* ]] && [[ $out != *ran* ]] &&
    ok "cw-sandbox refuses a malformed plan: ${out#127  }" || bad "cw-sandbox with a malformed plan: $out"

exit $fail
