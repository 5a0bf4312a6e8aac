#!/usr/bin/env bash
# The kernel fact the rlimit layer of a run's limits stands on (sandbox/runlimits.h,
# docs/SECURITY.md "Per-run limits"): RLIMIT_NPROC set inside a user namespace of its
# own bounds the processes made there, and the user's other processes are not counted
# against it (Linux >= 5.14, ucounts per user namespace). The control row shows the
# same limit without a user namespace counting every process of the user, so the
# probe can tell the two apart. As root the probe becomes uid 65534 first.
set -euo pipefail
: "${CW_BUILD:?}"
P="$CW_BUILD/escape/probe_nproc"
[ -x "$P" ] || { echo "FAIL: $P not built" >&2; exit 1; }
rel=$(uname -r)
maj=${rel%%.*}; min=${rel#*.}; min=${min%%[!0-9]*}
if [ "$maj" -lt 5 ] || { [ "$maj" = 5 ] && [ "$min" -lt 14 ]; }; then
	echo "SKIP: Linux $rel counts RLIMIT_NPROC per user, not per user namespace"; exit 77
fi
n=0
row() { n=$((n + 1)); echo "ok $n - $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

# 1. 40 other processes of the user, a limit of 16 in the run's user namespace: the run
# still makes 15 (itself the 16th), and the 16th fork is refused with EAGAIN.
out=$("$P" 40 16 userns) || fail "probe: $out"
grep -qx 'forked 15 errno EAGAIN' <<<"$out" || fail "userns: $out"
row "RLIMIT_NPROC 16 in a user namespace of its own: 15 forks, then EAGAIN, with 40 other processes of the user outside ($(echo "$out" | tail -n 1))"

# 2. Many more outside than the limit, to show they are not counted at all.
out=$("$P" 200 8 userns) || fail "probe: $out"
grep -qx 'forked 7 errno EAGAIN' <<<"$out" || fail "userns 200/8: $out"
row "RLIMIT_NPROC 8 in a user namespace: 7 forks with 200 other processes of the user outside"

# 3. Control: the same limit without a user namespace counts the user's processes, and
# the first fork is refused (this is why the runner uses it only inside the run's own).
out=$("$P" 40 16 plain) || fail "probe: $out"
grep -qx 'forked 0 errno EAGAIN' <<<"$out" || fail "plain: $out"
row "control: RLIMIT_NPROC 16 without a user namespace counts the user's 40 other processes: no fork at all"
