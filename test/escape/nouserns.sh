#!/usr/bin/env bash
# The emulated "no user namespaces" tier (issue 22): test/escape/nonetns.c --user makes
# clone(2)/unshare(2) with CLONE_NEWUSER fail with EPERM (clone3: ENOSYS, so callers
# fall back to clone), as a kernel with user.max_user_namespaces=0 or Debian's
# kernel.unprivileged_userns_clone=0 does.
# As a normal user, whose sandbox is built inside a user namespace:
#  - cw-runner exec is refused, exit 3, naming the missing user namespace and pointing
#    at `cwctl doctor`; the command never runs;
#  - a run through clockworkd (started under the same filter) is refused with the
#    runner's exit 3 and the same message in its report;
#  - cwctl doctor under the same filter reports namespaces: fail, with the fix.
# As root, runs make no user namespace: the same exec runs, sandboxed, and cwctl
# doctor reports only a warning for a normal user's runs.
export TMPDIR=${CW_TEST_TMP:-${CW_BUILD:?}}
. "${CW_SRC:?}/test/integration/daemon_lib.bash" || exit 1
NU=${CW_BUILD:?}/escape/nonetns
[ -x "$NU" ] || fail "$NU not built"
"$NU" --user sh -c 'unshare -U true' 2>/dev/null && fail "the wrapper does not refuse user namespaces: the test has no teeth"
mkdir -p "$T/wd"
ROOT=0; [ "$(id -u)" = 0 ] && ROOT=1
doctor_ns() {	# the namespaces check of cwctl doctor --json under the wrapper: "status fix"
	local rc=0
	"$NU" --user "$CW_BIN/cwctl" doctor --json > "$T/doctor.json" || rc=$?
	echo $rc > "$T/doctor.rc"
	python3 - "$T/doctor.json" "$1" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
c = [c for c in d["checks"] if c["check"] == sys.argv[2]][0]
print(c["status"], c["fix"] or "")
EOF
}

out=$(env -i HOME="$HOME" CLOCKWORK_HOME="$CLOCKWORK_HOME" PATH=/usr/bin:/bin \
    "$NU" --user "$CW_BIN/cw-runner" exec --workdir "$T/wd" -- /bin/echo RAN 2>&1) && rc=0 || rc=$?
echo "cw-runner exec under nonetns --user: rc $rc: $out"
if [ $ROOT = 0 ]; then
	[ $rc = 3 ] && [[ $out != *RAN* ]] && [[ $out == *"user namespace"* ]] && [[ $out == *"cwctl doctor"* ]] ||
	    fail "exec was not refused as it should be (rc $rc)"
	pass "no user namespaces, normal user: cw-runner exec refused, exit 3, names the user namespace and cwctl doctor"
	# The reason must come back every time, not only when cw-sandbox's failure loses
	# the race with the runner's carve: a sandbox that ends with the carve's message
	# unread leaves ECONNRESET on the runner's socket ahead of its reason (it was
	# reported as "cw-sandbox ended without starting the run" one time in two).
	for i in 1 2 3 4 5 6 7 8; do
		out=$(env -i HOME="$HOME" CLOCKWORK_HOME="$CLOCKWORK_HOME" PATH=/usr/bin:/bin \
		    "$NU" --user "$CW_BIN/cw-runner" exec --workdir "$T/wd" -- /bin/echo RAN 2>&1) && rc=0 || rc=$?
		[ $rc = 3 ] && [[ $out == *"user namespace"* ]] || fail "exec refusal $i of 8 lost its reason (rc $rc): $out"
	done
	pass "no user namespaces, normal user: 8 more refusals, each with its reason"
else
	[ $rc = 0 ] && [[ $out == *RAN* ]] || fail "as root (no user namespace needed) the exec did not run: rc $rc"
	pass "no user namespaces, root: cw-runner exec runs (root's runs make no user namespace)"
fi

# Through the daemon, the daemon itself started under the filter (it passes to runners).
"$NU" --user "$CW_BIN/clockworkd" --foreground >>"$T/daemon.out" 2>&1 &
DPID=$!
wait_until 15 "clockworkd to listen" test -s "$CLOCKWORK_HOME/clockworkd.port" || fail "clockworkd did not start"
wait_until 10 "API answers" "$CW_BIN/cwctl" status || fail "API does not answer"
cwctl task add nu --engine command --prompt 'echo RAN > ran.txt' >/dev/null || fail "task add"
R=$(cwctl run start nu) || fail "run start"
wait_until 60 "run ended" run_ended "$R" || fail "the run did not end: $(run_status "$R")"
st=$(run_status "$R"); rep=$(run_field "$R" report)
echo "run through clockworkd under nonetns --user: $st; $(printf '%s' "$rep" | python3 -c 'import json,sys; r=json.load(sys.stdin); print("runner exit", r.get("runner", {}).get("exit_status"), "-", r.get("error"))' 2>&1)"
if [ $ROOT = 0 ]; then
	[ "$st" = refused ] && [[ $rep == *'"runner":{"pid":'*',"exit_status":3}'* ]] && [[ $rep == *"cwctl doctor"* ]] &&
	    [ ! -e "$(run_field "$R" worktree)/ran.txt" ] || fail "the run was not refused as it should be: $st $rep"
	pass "no user namespaces, normal user: a run through clockworkd is refused, exit 3, its report points at cwctl doctor"
else
	[ "$st" = completed ] || fail "as root the run did not complete: $st $rep"
	pass "no user namespaces, root: a run through clockworkd completes"
fi

res=$(doctor_ns namespaces); drc=$(cat "$T/doctor.rc")
echo "cwctl doctor under nonetns --user: exit $drc; namespaces: $res"
if [ $ROOT = 0 ]; then
	[ "$drc" = 1 ] && [[ $res == "fail "*"seccomp filter"* ]] || fail "doctor did not report the failure with its fix: exit $drc, $res"
	pass "cwctl doctor under the same filter: namespaces fail (exit 1), the fix names the seccomp filter"
else
	res2=$(doctor_ns "user namespaces")
	echo "  user namespaces: $res2"
	[ "$drc" = 0 ] && [[ $res == "ok "* ]] && [[ $res2 == "warn "* ]] || fail "doctor as root: exit $drc, $res / $res2"
	pass "cwctl doctor as root under the same filter: namespaces ok, user namespaces warn (exit 0)"
fi
echo "nouserns: $PASSED passed"
