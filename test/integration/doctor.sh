#!/usr/bin/env bash
# cwctl doctor reports this machine's real facts, each checked here another way:
#  - its Landlock ABI is the kernel's (landlock_create_ruleset(NULL, 0, VERSION));
#  - its namespaces verdict is what unshare(1) gets (user, mount, PID, IPC and network
#    as a normal user; the same without user as root); seccomp filters can be installed;
#  - AppArmor: "not active" exactly when /sys/kernel/security/apparmor is absent;
#  - cgroups: ok exactly when this process's pids (v1) or unified (v2) cgroup is
#    writable by us;
#  - an engine on PATH is found with its --version; a missing one is a warning;
#  - the daemon's socket and port: warn while no clockworkd runs, ok once one does;
#  - exit 0 when nothing fails, 1 when something does (nonetns --user: no user
#    namespaces, for a normal user; nonetns: no network namespaces, for anyone), and
#    --json carries the same as the text.
. "${CW_SRC:?}/test/integration/daemon_lib.bash" || exit 1
mkdir -p "$T/bin"
printf '#!/bin/sh\necho "9.9.9 (Claude Code)"\n' > "$T/bin/claude"
chmod 755 "$T/bin/claude"
export PATH="$T/bin:$PATH"
check() {	# check JSON NAME: "status|found|fix"
	python3 - "$1" "$2" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
c = [c for c in d["checks"] if c["check"] == sys.argv[2]]
print("%s|%s|%s" % (c[0]["status"], c[0]["found"], c[0]["fix"] or "") if c else "missing||")
EOF
}
doctor() { local rc=0; "$CW_BIN/cwctl" doctor --json > "$T/d.json" || rc=$?; echo $rc > "$T/d.rc"; }

doctor
[ "$(cat "$T/d.rc")" = 0 ] || fail "cwctl doctor failed on this machine: $(cat "$T/d.json")"
"$CW_BIN/cwctl" doctor > "$T/d.txt" || fail "the text form exits otherwise"
grep -q '^ok    landlock' "$T/d.txt" && grep -q 'fix:' "$T/d.txt" || fail "the text form: $(cat "$T/d.txt")"
pass "cwctl doctor: exit 0 here, nothing fails; text and --json agree on the exit"

kabi=$(python3 -c 'import ctypes; l = ctypes.CDLL(None, use_errno=True); print(l.syscall(444, None, 0, 1))')
got=$(check "$T/d.json" landlock)
echo "landlock: kernel says ABI $kabi; doctor: $got"
[[ $got == *"Landlock ABI $kabi "* ]] || fail "doctor's Landlock ABI is not the kernel's ($kabi): $got"
pass "Landlock ABI $kabi, as the kernel says"

if [ "$(id -u)" = 0 ]; then u=(unshare --mount --pid --ipc --net --fork true); else u=(unshare --user --mount --pid --ipc --net --fork true); fi
"${u[@]}" 2>/dev/null && want=ok || want=fail
got=$(check "$T/d.json" namespaces)
echo "namespaces: ${u[*]} -> $want; doctor: $got"
[[ $got == "$want|"* ]] || fail "namespaces: doctor says $got, unshare says $want"
[[ $(check "$T/d.json" seccomp) == "ok|"* ]] || fail "seccomp: $(check "$T/d.json" seccomp)"
pass "namespaces $want as unshare(1) finds, seccomp ok"

got=$(check "$T/d.json" apparmor)
if [ -e /sys/kernel/security/apparmor ]; then [[ $got != *"not active"* ]]; else [[ $got == "ok|AppArmor is not active"* ]]; fi ||
    fail "apparmor: $got"
pass "apparmor: $(echo "$got" | cut -d'|' -f2)"

if [ -e /sys/fs/cgroup/cgroup.controllers ]; then
	d=/sys/fs/cgroup$(sed -n 's/^0:://p' /proc/self/cgroup)
else
	d=/sys/fs/cgroup/pids$(sed -n 's/^[0-9]*:[^:]*pids[^:]*://p' /proc/self/cgroup)
fi
[ -w "$d" ] && want=ok || want=warn
got=$(check "$T/d.json" cgroups)
echo "cgroups: $d writable -> $want; doctor: $got"
[[ $got == "$want|"* ]] || fail "cgroups: doctor says $got; $d says $want"
[ "$want" = ok ] || [[ $got == *"|"*"rlimits"* || $(python3 -c 'import json,sys; print([c["means"] for c in json.load(open(sys.argv[1]))["checks"] if c["check"]=="cgroups"][0])' "$T/d.json") == *rlimits* ]] ||
    fail "cgroups warn does not say limits fall back to rlimits"
pass "cgroups: $want, as $d is"

got=$(check "$T/d.json" "engine claude")
[[ $got == "ok|$T/bin/claude: 9.9.9 (Claude Code)|" ]] || fail "engine claude: $got"
[[ $(check "$T/d.json" "engine codex") == "warn|codex (Codex) is not on PATH|"* ]] || command -v codex >/dev/null ||
    fail "engine codex: $(check "$T/d.json" "engine codex")"
pass "engines: claude found on PATH with its version; a missing engine is a warning"

got=$(check "$T/d.json" "daemon socket")
[[ $got == "warn|$CLOCKWORK_HOME/clockworkd.sock is not there|"* ]] || fail "daemon socket before start: $got"
start_daemon
doctor
[[ $(check "$T/d.json" "daemon socket") == "ok|$CLOCKWORK_HOME/clockworkd.sock answers|" ]] ||
    fail "daemon socket: $(check "$T/d.json" "daemon socket")"
[[ $(check "$T/d.json" "inbox port") == "ok|http://127.0.0.1:$PORT answers|" ]] ||
    fail "inbox port: $(check "$T/d.json" "inbox port")"
pass "daemon socket and Inbox port: warn before clockworkd starts, ok once it answers (port $PORT)"

# No user namespaces (a seccomp filter refuses CLONE_NEWUSER): fail for a normal user.
"$CW_BUILD/escape/nonetns" --user "$CW_BIN/cwctl" doctor --json > "$T/d.json" && rc=0 || rc=$?
got=$(check "$T/d.json" namespaces)
echo "under nonetns --user: exit $rc; namespaces: $got"
if [ "$(id -u)" = 0 ]; then
	[ $rc = 0 ] && [[ $got == "ok|"* ]] && [[ $(check "$T/d.json" "user namespaces") == "warn|"* ]] ||
	    fail "as root under nonetns --user: exit $rc, $got"
	pass "no user namespaces, as root: namespaces ok, user namespaces warn, exit 0"
else
	[ $rc = 1 ] && [[ $got == "fail|unshare(CLONE_NEWUSER) failed: Operation not permitted"*"|"*"seccomp filter"* ]] ||
	    fail "as a normal user under nonetns --user: exit $rc, $got"
	pass "no user namespaces, as a normal user: namespaces fail with the fix, exit 1"
fi
# No network namespaces (nonetns without --user): fail for root and user alike, the
# fix naming the opt-out the runner's refusal names too.
"$CW_BUILD/escape/nonetns" "$CW_BIN/cwctl" doctor --json > "$T/d.json" && rc=0 || rc=$?
got=$(check "$T/d.json" namespaces)
echo "under nonetns: exit $rc; namespaces: $got"
[ $rc = 1 ] && [[ $got == "fail|unshare(CLONE_NEWNET) failed: Operation not permitted"*"|"*"network: open"* ]] ||
    fail "no network namespaces: exit $rc, $got"
pass "no network namespaces: namespaces fail, the fix names network: open, exit 1"
echo "doctor: $PASSED passed"
