#!/usr/bin/env bash
# Namespaces and system read grants (issue 9, items 8-10; SPEC G3). From inside
# `cw-runner exec` a run must not see a host process's argv, nor another concurrent
# sandboxed run's processes, nor attach a System V shared-memory segment made outside,
# nor read a root-owned 0600 file under the /etc read grant; while inside ps, /proc/self,
# the run's own children and signals to them, git and node keep working, the command's
# status comes back, and a SIGKILL to the run's PID 1 from outside ends everything in it.
#
# Same harness as matrix.sh: an attempt passes only when it was refused with the expected
# kind of error AND the outside target is unchanged.
# Env: CW_BIN (cw-runner), CW_BUILD (probes in $CW_BUILD/escape), CW_TEST_TMP.
#      CW_ESCAPE_CONTROL=1 runs every attempt WITHOUT the sandbox: each one must then get
#      through (all FAIL), which proves the attempts are live; the exit status then says
#      whether every row that ran got through (0) or not (1).
#      CW_ESCAPE_VERBOSE=1 prints each attempt's output and the runner's stderr.
# Subjects: root and a normal user (scripts/test-user). Every process, segment and run is
# the invoking user's own, so only the sandbox can refuse; the /etc rows need root-owned
# files only root can plant, and are shown as SKIP with that reason as a normal user.
# Exit: 0 when every attempt was refused and every positive check passed, else 1.
set -u
: "${CW_BIN:?CW_BIN must name the directory holding cw-runner}"
: "${CW_BUILD:?CW_BUILD must name the build directory}"
RUNNER=$CW_BIN/cw-runner
CONTROL=${CW_ESCAPE_CONTROL:-0}
VERBOSE=${CW_ESCAPE_VERBOSE:-0}
started=$(date +%s)

die() { echo "escape namespaces: $*" >&2; exit 1; }
if [ "$(id -u)" = 0 ]; then ROOT=1 SUBJECT=root; else ROOT=0 SUBJECT="normal user $(id -un)"; fi
for tool in sh bash ps git node; do
	command -v "$tool" >/dev/null || die "needs $tool"
done
[ -x "$RUNNER" ] || die "no cw-runner in $CW_BIN"
[ -x "$CW_BUILD/escape/probe_shm" ] || die "probe_shm not built in $CW_BUILD/escape"

T=$(realpath "$(mktemp -d "${CW_TEST_TMP:-$CW_BUILD}/escape-ns.XXXXXX")")
RAND=$(basename "$T" | sed 's/.*\.//')
H=$T/home
CWH=$H/.clockwork
WT=$T/wt
WT2=$T/wt2
ETC_SECRET=/etc/cw-escape-opasswd-$RAND		# root-owned 0600, at the top of /etc
ETC_DIR=/etc/cw-escape-dir-$RAND			# a world-readable dir holding one
ETC_PUBLIC=$ETC_DIR/public			# ... beside a world-readable file
SHM_KEY=$(( 0x43570000 + (RANDOM << 1) ))
# Markers in argv, split so that no command line that searches for one holds it whole.
MARK_HOST=cwnshost-$RAND
MARK_RUN=cwnsrun-$RAND
VICTIM= OTHER= SHM_ID=

cleanup() {
	[ -n "$VICTIM" ] && kill "$VICTIM" 2>/dev/null
	[ -n "$OTHER" ] && kill "$OTHER" 2>/dev/null
	for p in $(marker_pids "$MARK_RUN"); do kill -KILL "$p" 2>/dev/null; done
	[ -n "$SHM_ID" ] && "$CW_BUILD/escape/probe_shm" rm "$SHM_KEY" 2>/dev/null
	rm -rf "$ETC_SECRET" "$ETC_DIR"
	if [ "${CW_ESCAPE_KEEP:-0}" = 1 ]; then echo "kept $T" >&2; else rm -rf "$T"; fi
}
trap cleanup EXIT

# The host pids whose argv holds a marker (read outside, from the host's /proc).
marker_pids() {
	local f c
	for f in /proc/[0-9]*/cmdline; do
		c=$(tr '\0' ' ' 2>/dev/null < "$f") || continue
		case $c in *"$1"*) f=${f#/proc/}; echo "${f%/cmdline}";; esac
	done
}
# Wait for a condition with a deadline (never sleep blindly to synchronise).
wait_for() {	# wait_for SECONDS COMMAND...
	local deadline=$(($(date +%s) + $1))
	shift
	until "$@"; do
		[ "$(date +%s)" -lt "$deadline" ] || return 1
		sleep 0.02
	done
}
has_marker() { [ -n "$(marker_pids "$1")" ]; }
no_marker() { [ -z "$(marker_pids "$1")" ]; }

# ---------------------------------------------------------------------------------------
# The planted world.
mkdir -p "$CWH" "$WT" "$WT2"
printf 'sandbox:\n  enabled: true\n' > "$CWH/config.yaml"
git init -q -b main "$WT"
cp "$CW_BUILD/escape/probe_shm" "$RUNNER" "$CW_BIN/cw-sandbox" "$WT/"
# Root-owned files under the /etc read grant: only root can plant them.
if [ "$ROOT" = 1 ]; then
	printf 'CWSECRET-etc-%s\n' "$RAND" > "$ETC_SECRET" && chmod 0600 "$ETC_SECRET"
	mkdir -p "$ETC_DIR" && chmod 0755 "$ETC_DIR"
	printf 'CWSECRET-etcdir-%s\n' "$RAND" > "$ETC_DIR/opasswd" && chmod 0600 "$ETC_DIR/opasswd"
	echo "public-$RAND" > "$ETC_PUBLIC" && chmod 0644 "$ETC_PUBLIC"
else
	ETC_SECRET= ETC_DIR=
fi
SHM_ID=$("$CW_BUILD/escape/probe_shm" plant "$SHM_KEY" "CWSECRET-shm-$RAND") ||
	die "could not plant a System V segment"

# The outside process: a marker in its argv (as a floor hook's --run token would be).
(exec -a "$MARK_HOST" sleep 300) &
VICTIM=$!
wait_for 10 has_marker "$MARK_HOST" || die "the outside process did not start"

SBX_ENV=(HOME="$H" CLOCKWORK_HOME="$CWH" LANG=C.UTF-8 TERM=dumb PATH=/usr/local/bin:/usr/bin:/bin)
sbx_in() {	# sbx_in WORKDIR CMD...: one command in the sandbox (or bare, in control mode)
	local wd=$1
	shift
	if [ "$CONTROL" = 1 ]; then
		(cd "$wd" && env -i "${SBX_ENV[@]}" TMPDIR="$T" "$@")
	else
		env -i "${SBX_ENV[@]}" "$RUNNER" exec --workdir "$wd" -- "$@"
	fi
}
sbx() { sbx_in "$WT" "$@"; }

# A concurrent sandboxed run, in its own worktree, with a marker in its argv.
sbx_in "$WT2" bash -c "m=${MARK_RUN%%-*}; exec -a \$m-$RAND sleep 300" >/dev/null 2>&1 &
OTHER=$!
wait_for 20 has_marker "$MARK_RUN" || die "the other sandboxed run did not start"
OTHER_PID=$(marker_pids "$MARK_RUN" | head -n1)

KINDS="EACCES:permission_denied EPERM:operation_not_permitted ENOENT:no_such_file
	ESRCH:no_such_process EINVAL:invalid_argument not-found:not-found
	refused-exit-3:refused-exit-3"
declare -A KMSG
for k in $KINDS; do KMSG[${k%%:*}]=${k#*:}; KMSG[${k%%:*}]=${KMSG[${k%%:*}]//_/ }; done
KORDER=$(for k in $KINDS; do printf '%s ' "${k%%:*}"; done)
errkind() {	# errkind TEXT EXPECTED: the first errno kind named in TEXT
	local k lc=${1,,}
	for k in ${2//|/ } $KORDER; do
		[ -n "${KMSG[$k]:-}" ] || continue
		if [[ $lc == *"${k,,}"* || $lc == *"${KMSG[$k]}"* ]]; then echo "$k"; return; fi
	done
}

n=0 refused=0 failed=0 skipped=0 worked=0 workfail=0 live=0
ROWS=() WROWS=() DEAD=()
row() {	# row NAME EXPECTED GOT VERDICT [LIVE]: LIVE=1 when the attempt got through
	n=$((n + 1))
	ROWS+=("$(printf '%3d %-56s | %-20s | %-20s | %s' "$n" "$1" "$2" "$3" "$4")")
	printf '%s\n' "${ROWS[-1]}"
	case $4 in
	PASS) refused=$((refused + 1));;
	SKIP*) skipped=$((skipped + 1)); return;;
	*) failed=$((failed + 1));;
	esac
	# In control mode every row that ran must have got through.
	if [ "${5:-0}" = 1 ]; then live=$((live + 1)); else DEAD+=("$n $1"); fi
}
# asroot REASON FUNCTION NAME ...: a row only root can make honest; SKIP otherwise.
asroot() {
	local reason=$1
	shift
	if [ "$ROOT" = 1 ]; then "$@"; else row "$2" - skipped "SKIP: as a normal user: $reason"; fi
}
alive() { kill -0 "$VICTIM" 2>/dev/null || echo "outside process died"; }
other_alive() { has_marker "$MARK_RUN" || echo "the other run's process died"; }
shm_same() {
	[ "$("$CW_BUILD/escape/probe_shm" show "$SHM_KEY")" = "CWSECRET-shm-$RAND" ] ||
		echo "segment changed"
}

# attempt NAME EXPECTED CHECKS COMMAND: COMMAND runs under sh inside the sandbox.
attempt() {
	local name=$1 expect=$2 checks=$3 cmd=$4 out rc got why
	out=$(sbx sh -c "exec 2>&1; $cmd" 2>"$T/runner.err")
	rc=$?
	why=$(eval "$checks" 2>&1)
	[[ $out == *CWSECRET* ]] && why="$why secret in output"
	got=$(errkind "$out" "$expect")
	if [ "$rc" -eq 0 ]; then got="succeeded${got:+ ($got)}"
	elif [ -z "$got" ]; then got="rc $rc, no errno"; fi
	if [ "$rc" -ne 0 ] && [[ "|$expect|" == *"|$got|"* ]] && [ -z "$why" ]; then
		row "$name" "$expect" "$got" PASS
	else
		row "$name" "$expect" "$got" "FAIL${why:+:$why}" \
			"$({ [ "$rc" -eq 0 ] || [ -n "$why" ]; } && echo 1)"
	fi
	[ "$VERBOSE" = 1 ] && { printf '    out: %s\n' "$out"; sed 's/^/    runner: /' "$T/runner.err"; }
	if ! kill -0 "$VICTIM" 2>/dev/null; then	# control mode may kill it: respawn
		(exec -a "$MARK_HOST" sleep 300) &
		VICTIM=$!
	fi
}

# work NAME CHECKS COMMAND: positive checks that must succeed inside the same sandbox.
work() {
	local name=$1 checks=$2 cmd=$3 out rc why
	out=$(sbx sh -c "exec 2>&1; $cmd" 2>"$T/runner.err")
	rc=$?
	why=$(eval "$checks" 2>&1)
	if [ "$rc" -eq 0 ] && [ -z "$why" ]; then
		worked=$((worked + 1))
		WROWS+=("$(printf '    %-56s | %s' "$name" ok)")
	else
		workfail=$((workfail + 1))
		WROWS+=("$(printf '    %-56s | FAIL: rc %s %s | %s' "$name" "$rc" "$why" \
			"$(printf '%s' "$out" | tail -n3 | tr '\n' ' ' | cut -c1-200)")")
	fi
	printf '%s\n' "${WROWS[-1]}"
	[ "$VERBOSE" = 1 ] && { printf '    out: %s\n' "$out"; sed 's/^/    runner: /' "$T/runner.err"; }
}
# A process-table search done inside: the marker is rebuilt from halves, and matched by
# the shell itself, so that no process of the search carries it on its own argv.
scan() {	# scan MARKER: exits 0 (found) or 1, printing not-found
	local a=${1%%-*} b=${1#*-}
	printf 'm=%s; m=$m-%s; for f in /proc/[0-9]*/cmdline; do c=$(tr "\\0" " " 2>/dev/null < $f); case $c in *"$m"*) echo "found $f: $c"; exit 0;; esac; done; ps -eo pid,args > ps.out || exit 2; while read -r l; do case $l in *"$m"*) echo "found in ps: $l"; exit 0;; esac; done < ps.out; echo not-found; exit 1' "$a" "$b"
}

echo "escape namespaces: kernel $(uname -r), as $SUBJECT, root $T$([ "$CONTROL" = 1 ] && echo ', CONTROL MODE (no sandbox)')"
printf '%3s %-56s | %-20s | %-20s | %s\n' "#" "attempt" "expected" "got" "verdict"

# --- PID namespace (item 8) ------------------------------------------------------------
attempt "read a host process's /proc/<pid>/cmdline" "ENOENT|EACCES" alive \
	"tr '\\0' ' ' < /proc/$VICTIM/cmdline"
attempt "find a host process's argv marker (/proc scan, ps)" not-found alive "$(scan "$MARK_HOST")"
attempt "read another run's /proc/<pid>/cmdline" "ENOENT|EACCES" other_alive \
	"tr '\\0' ' ' < /proc/$OTHER_PID/cmdline"
attempt "find another sandboxed run's argv marker (/proc, ps)" not-found other_alive \
	"$(scan "$MARK_RUN")"
attempt "kill -TERM another sandboxed run's process" "ESRCH|EPERM" other_alive \
	"kill -TERM $OTHER_PID"
# The command's parent is the run's PID 1 (cw-sandbox's init), which holds the plan: the
# run's environment and every grant.
attempt "read the parent's (PID 1's) /proc/\$PPID/environ" "EACCES|EPERM" "" \
	"echo ppid=\$PPID; tr '\\0' '\\n' < /proc/\$PPID/environ | grep -c ."
attempt "read the parent's (PID 1's) /proc/\$PPID/maps" "EACCES|EPERM" "" \
	"echo ppid=\$PPID; head -c 64 /proc/\$PPID/maps"

# cw-sandbox built the sandbox as root inside the run's user namespace (or as root): the
# command it exec'd, and its PID 1, must hold no capability in any set, the bounding
# set included (a file capability or setuid root could not raise one back).
attempt "hold a capability after cw-sandbox's exec (Cap* of self, PID 1)" EPERM "" \
	"for f in /proc/self/status /proc/\$PPID/status; do grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb):' \$f | grep -v ':.0000000000000000\$' && exit 0; done; echo 'operation not permitted: no capability held'; exit 1"

# --- IPC namespace (item 9) -------------------------------------------------------------
out=$(sbx sh -c "exec 2>&1; ./probe_shm attack $SHM_KEY $SHM_ID" 2>"$T/runner.err")
why=$(shm_same)
[[ $out == *CWSECRET* ]] && why="$why secret in output"
for spec in "shmget_by_key:ENOENT" "shmat_by_id:EINVAL|EACCES|EPERM"; do
	op=${spec%%:*} expect=${spec#*:}
	line=$(printf '%s\n' "$out" | grep -m1 "^$op " || true)
	got=${line#"$op "}
	[ -n "$line" ] || got="no result ($(printf '%s' "$out" | tail -n1 | cut -c1-30))"
	if [ -n "$line" ] && [ "$got" != ok ] && [[ "|$expect|" == *"|$got|"* ]] && [ -z "$why" ]; then
		row "System V shm made outside: $op" "$expect" "$got" PASS
	else
		row "System V shm made outside: $op" "$expect" "$got" "FAIL${why:+:$why}" \
			"$({ [ "$got" = ok ] || [ -n "$why" ]; } && echo 1)"
	fi
done
[ "$VERBOSE" = 1 ] && printf '    out: %s\n' "$out"
# Put it back for the control run's later rows (the control overwrites it).
if [ -n "$(shm_same)" ]; then
	"$CW_BUILD/escape/probe_shm" rm "$SHM_KEY" 2>/dev/null
	SHM_ID=$("$CW_BUILD/escape/probe_shm" plant "$SHM_KEY" "CWSECRET-shm-$RAND")
fi

# --- fail closed ---------------------------------------------------------------------------
# A cw-runner inside the sandbox cannot make namespaces (seccomp refuses clone with
# namespace flags): it must refuse the run (exit 3), not run it without them. (LeakSanitizer
# cannot run under the sandbox's ptrace ban: a sanitizer build's exit status needs it off.)
attempt "run where namespaces cannot be made (nested cw-runner)" refused-exit-3 "" \
	"mkdir -p nest-h nest-w; HOME=\$PWD/nest-h CLOCKWORK_HOME=\$PWD/nest-h/.cw ASAN_OPTIONS=detect_leaks=0 ./cw-runner exec --workdir \$PWD/nest-w -- echo inner-ran; rc=\$?; [ \$rc = 3 ] && echo refused-exit-3 && exit 1; exit 0"

# --- system read grants: world-readable files only (item 10) -----------------------------
NOROOT="a root-owned 0600 file refuses a normal user by its mode without the sandbox"
asroot "$NOROOT" attempt "read a root-owned 0600 file in /etc" EACCES "" "cat $ETC_SECRET"
asroot "$NOROOT" attempt "read a root-owned 0600 file in an /etc subdirectory" EACCES "" \
	"cat $ETC_DIR/opasswd"
if [ -f /etc/security/opasswd ] && [ "$(stat -c %a /etc/security/opasswd)" = 600 ]; then
	asroot "$NOROOT" attempt "open /etc/security/opasswd" EACCES "" "cat /etc/security/opasswd"
fi

# --- what must keep working -------------------------------------------------------------
echo "inside the same sandbox:"
work "ps lists the run's own processes" "" \
	"sleep 30 & p=\$!; ps -eo pid,args > ps.txt; kill \$p; grep -q 'sleep 30' ps.txt && grep -q 'ps -eo' ps.txt"
work "/proc/self, /proc/self/status" "" \
	"[ -n \"\$(readlink /proc/self)\" ] && grep -q '^Pid:' /proc/self/status"
work "the run's own child is visible in /proc" "" \
	"sleep 30 & p=\$!; [ -r /proc/\$p/cmdline ]; r=\$?; kill \$p; exit \$r"
work "signal the run's own child (kill, wait: 143)" "" \
	"sleep 30 & p=\$!; kill -TERM \$p; wait \$p; [ \$? = 143 ]"
if [ "$ROOT" = 1 ]; then
	work "read world-readable /etc files (/etc/passwd, planted public)" "" \
		"grep -q '^root:' /etc/passwd && grep -qx public-$RAND $ETC_PUBLIC"
else
	work "read world-readable /etc files (/etc/passwd)" "" "grep -q '^root:' /etc/passwd"
fi
work "git init/commit in TMPDIR" "" \
	"cd \$TMPDIR && git init -q g && cd g && echo x > f && git add f && git -c user.name=cw -c user.email=cw@example.invalid commit -qm x"
work "node runs and spawns a child" "" \
	"node -e 'const r=require(\"child_process\").spawnSync(\"sh\",[\"-c\",\"exit 3\"]); process.exit(r.status===3?0:1)'"

# The command's status comes back through the run's PID 1.
sbx sh -c 'exit 7' >/dev/null 2>&1; rc=$?
if [ "$rc" = 7 ]; then worked=$((worked + 1)); WROWS+=("$(printf '    %-56s | ok' "exit status 7 passed back")")
else workfail=$((workfail + 1)); WROWS+=("$(printf '    %-56s | FAIL: rc %s' "exit status 7 passed back" "$rc")"); fi
printf '%s\n' "${WROWS[-1]}"
sbx sh -c 'kill -TERM $$' >/dev/null 2>&1; rc=$?
if [ "$rc" = 143 ]; then worked=$((worked + 1)); WROWS+=("$(printf '    %-56s | ok' "death by SIGTERM passed back as 143")")
else workfail=$((workfail + 1)); WROWS+=("$(printf '    %-56s | FAIL: rc %s' "death by SIGTERM passed back as 143" "$rc")"); fi
printf '%s\n' "${WROWS[-1]}"

# SIGKILL to the run's top process from outside ends every process of the run (the
# other run started above: its runner's child is the run's PID 1, or the command itself).
if [ "$CONTROL" != 1 ]; then
	# Up from the marker process to the child of the other run's cw-runner.
	top=$OTHER_PID
	while pp=$(awk '{print $4}' "/proc/$top/stat" 2>/dev/null) && [ -n "$pp" ] &&
	    [ "$(cat "/proc/$pp/comm" 2>/dev/null)" != cw-runner ] && [ "$pp" -gt 1 ]; do
		top=$pp
	done
	if [ -n "$top" ] && kill -KILL "$top" && wait_for 10 no_marker "$MARK_RUN"; then
		worked=$((worked + 1)); WROWS+=("$(printf '    %-56s | ok' "SIGKILL to the run's top process ends the run")")
	else
		workfail=$((workfail + 1)); WROWS+=("$(printf '    %-56s | FAIL: %s' "SIGKILL to the run's top process ends the run" "top=$top, left: $(marker_pids "$MARK_RUN")")")
	fi
	printf '%s\n' "${WROWS[-1]}"
	# Only once nothing of it is left: a run that survived would keep wait waiting.
	no_marker "$MARK_RUN" && wait "$OTHER" 2>/dev/null && OTHER=
fi

echo
echo "=== escape namespaces ($(uname -r), as $SUBJECT, $(($(date +%s) - started)) s) ==="
printf '%s\n' "${ROWS[@]}"
printf '%s\n' "${WROWS[@]}"
if [ "$CONTROL" = 1 ]; then
	[ "${#DEAD[@]}" -gt 0 ] && printf 'not live (refused without the sandbox): %s\n' "${DEAD[@]}"
	echo "escape namespaces CONTROL ($SUBJECT): $live of $((n - skipped)) attempts got through without the sandbox, $skipped skipped, $worked positive checks passed"
	[ "${#DEAD[@]}" -eq 0 ] && [ "$workfail" -eq 0 ]
	exit
fi
echo "escape namespaces ($SUBJECT): $refused refused as expected, $skipped skipped, $worked positive checks passed, $failed escapes$([ "$workfail" -gt 0 ] && echo ", $workfail positive failures")"
[ "$failed" -eq 0 ] && [ "$workfail" -eq 0 ]
