#!/usr/bin/env bash
# An exec's TMPDIR in the run's view only (e6be0de, mountns_tmpdir) against grants that
# enclose <CLOCKWORK_HOME>/tmp. Rows 1 and 2 were written by the attacker run of issue
# 22 and failed on 6aaf04b (exit 3 at the mount namespace); such a TMPDIR is now made
# on the host, as before the view had its own, and the spec's notes say why.
#
# At 9606c9c `cw-runner exec --context DIR:ro` with DIR enclosing a CLOCKWORK_HOME of
# its own (CLOCKWORK_HOME=/srv/cw, --context /srv:ro; the default ~/.clockwork is carved
# out of a home grant, so ~ itself is not enough) and a policy `write_dirs: [~]` ran, with a
# private TMPDIR the command could write (a host directory, bound). Rows 1 and 2 expect
# that still.
# Rows 3 and 4 are controls that hold: CW_SANDBOX=off gets a real host TMPDIR, removed
# after; a sandboxed exec's TMPDIR is a tmpfs with nothing on the host.
set -uo pipefail
BIN=${CW_BIN:?}/cw-runner
# Not under /tmp: a read-only context root there cannot be enforced and is refused.
base=${CW_TEST_TMP:-${CW_BUILD:?}}
mkdir -p "$base"
T=$(mktemp -d "$base/exec-tmpdir-grant.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
H=$T/home
# <cwhome>/tmp exists once the daemon has run anything (its runs' TMPDIRs live there).
mkdir -p "$H/.clockwork" "$T/wd" "$T/srv/cw/tmp"
cwr() { env -i HOME="$H" PATH=/usr/bin:/bin "$@"; }

n=0 failed=0
row() {
	n=$((n + 1))
	printf '%2d %-56s | %s\n' "$n" "$1" "$2${3:+: $3}"
	[ "$2" = PASS ] || failed=$((failed + 1))
}
writes_tmp='t=$(mktemp) && echo ok > "$t" && cat "$t"'

# 1
out=$(cwr CLOCKWORK_HOME="$T/srv/cw" "$BIN" exec --workdir "$T/wd" --context "$T/srv:ro" -- sh -c "$writes_tmp" 2>&1)
rc=$?
row "exec --context /srv:ro, CLOCKWORK_HOME=/srv/cw" "$([ $rc = 0 ] && [ "$out" = ok ] && echo PASS || echo FAIL)" "$([ $rc = 0 ] || echo "exit $rc: $out")"

# 2
printf 'sandbox:\n  write_dirs: ["~"]\n' > "$H/.clockwork/config.yaml"
out=$(cwr "$BIN" exec --workdir "$T/wd" -- sh -c "$writes_tmp" 2>&1)
rc=$?
rm -f "$H/.clockwork/config.yaml"
row "exec with policy write_dirs: [~]" "$([ $rc = 0 ] && [ "$out" = ok ] && echo PASS || echo FAIL)" "$([ $rc = 0 ] || echo "exit $rc: $out")"

# 3
out=$(cwr CW_SANDBOX=off "$BIN" exec --workdir "$T/wd" -- sh -c 'stat -f -c %T "$TMPDIR"; echo "$TMPDIR"' 2>/dev/null)
dir=$(printf '%s\n' "$out" | tail -n 1)
why=
case "$dir" in "$H/.clockwork/tmp/exec-"*) ;; *) why="TMPDIR '$dir';" ;; esac
printf '%s\n' "$out" | head -n 1 | grep -q tmpfs && why="$why a tmpfs, not the host's disk;"
[ -e "$dir" ] && why="$why $dir left behind;"
row "CW_SANDBOX=off: a host TMPDIR, removed after" "$([ -z "$why" ] && echo PASS || echo FAIL)" "$why"

# 4
out=$(cwr "$BIN" exec --workdir "$T/wd" -- sh -c 'stat -f -c %T "$TMPDIR"' 2>&1)
host=$(ls -A "$H/.clockwork/tmp" 2>/dev/null | wc -l)
row "sandboxed exec: TMPDIR a tmpfs, nothing on the host" "$([ "$(printf '%s\n' "$out" | head -n 1)" = tmpfs ] && [ "$host" = 0 ] && echo PASS || echo FAIL)" "$out; $host entries on the host"

echo "$((n - failed))/$n rows pass"
[ "$failed" = 0 ]
