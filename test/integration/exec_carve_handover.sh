#!/usr/bin/env bash
# An exec's /etc grant is carved by the runner while the child makes its namespaces
# (runner/sandbox.c, spec_carve_finish): the runner hands the child the Landlock
# ruleset holding the carve's rules, and the child waits for it before Landlock, with
# nothing of the command started. The handover can fail; the run must then be refused
# and nothing of it left, never hang and never run without the carve's rules.
#
#  1. the runner's sendmsg of the ruleset fails (strace injects ENOBUFS into the
#     runner's own calls only, not the child's): the exec ends with an error naming
#     the handover, the command never ran, no process of it is left. On fdc807d the
#     send's failure was ignored and both sides waited for each other for ever.
#  2. control: the same exec under strace without the fault runs the command, and the
#     carve holds (a world-readable /etc file is read; /etc/shadow, root's 0640 file,
#     is not).
set -uo pipefail
BIN=${CW_BIN:?}/cw-runner
command -v strace >/dev/null || { echo "SKIP: no strace (scripts/setup installs it)"; exit 77; }
base=${CW_TEST_TMP:-${CW_BUILD:?}}
mkdir -p "$base"
T=$(mktemp -d "$base/exec-carve.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/home" "$T/wd"
if ! strace -o /dev/null true 2>/dev/null; then
	echo "SKIP: strace cannot trace here (ptrace refused)"
	exit 77
fi
# LeakSanitizer cannot work under ptrace: an ASan build's leak check is off here.
cwr() { env -i HOME="$T/home" PATH=/usr/bin:/bin CLOCKWORK_HOME="$T/home/.clockwork" \
    ASAN_OPTIONS=detect_leaks=0 "$@"; }

n=0 failed=0
row() {
	n=$((n + 1))
	printf '%2d %-64s | %s\n' "$n" "$1" "$2${3:+: $3}"
	[ "$2" = PASS ] || failed=$((failed + 1))
}

# 1
out=$(cwr timeout -s KILL 30 strace -o "$T/strace.1" -e trace=sendmsg \
    -e inject=sendmsg:error=ENOBUFS "$BIN" exec --workdir "$T/wd" -- \
    sh -c "echo ran > '$T/wd/ran'; sleep 30" 2>&1)
rc=$?
left=$(pgrep -f "$T/wd/ran" || true)
if [ $rc = 137 ]; then
	row "the ruleset's handover fails: refused, nothing ran" FAIL "hung (killed after 30 s): $out"
elif [ $rc = 0 ] || [ -e "$T/wd/ran" ] || [ -n "$left" ] ||
    ! grep -q 'handing the carved ruleset to the run' <<<"$out"; then
	row "the ruleset's handover fails: refused, nothing ran" FAIL \
	    "exit $rc, ran: $([ -e "$T/wd/ran" ] && echo yes || echo no), left: ${left:-none}: $out"
else
	row "the ruleset's handover fails: refused, nothing ran" PASS
fi
[ -z "$left" ] || kill -KILL $left 2>/dev/null

# 2
out=$(cwr timeout -s KILL 30 strace -o "$T/strace.2" -e trace=sendmsg "$BIN" exec \
    --workdir "$T/wd" -- sh -c 'head -c 4 /etc/passwd; cat /etc/shadow >/dev/null 2>&1 &&
    echo " shadow read" || echo " shadow refused"' 2>&1)
rc=$?
if [ $rc = 0 ] && [ "$out" = "root shadow refused" ] && grep -q 'SCM_RIGHTS' "$T/strace.2"; then
	row "control: handed over, the command runs, the carve holds" PASS
else
	row "control: handed over, the command runs, the carve holds" FAIL "exit $rc: $out"
fi

echo "$n rows, $failed failed"
[ "$failed" = 0 ]
