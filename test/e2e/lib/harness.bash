# What the daemon-driven end-to-end tests share (sourced; set E2E_NAME first): a scratch
# root $T under /tmp with a private HOME and CLOCKWORK_HOME and a git identity, the
# pids to end at exit ($DPID, the daemon, is sent SIGTERM first), ok/fail counting,
# and waits on conditions with a deadline, never fixed sleeps. CW_E2E_KEEP keeps $T.
T=$(mktemp -d "/tmp/cw-e2e-${E2E_NAME:?}.XXXXXX")
pids=()
DPID=
e2e_cleanup() {
	if [ -n "$DPID" ]; then kill -TERM "$DPID" 2>/dev/null || true; fi
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	if [ -n "${CW_E2E_KEEP:-}" ]; then echo "kept $T"; else rm -rf "$T"; fi
}
trap e2e_cleanup EXIT

fails=0
ok()   { echo "ok   - $*"; }
fail() { echo "FAIL - $*"; fails=$((fails + 1)); }
die()  { echo "FAIL - $*"; [ -f "$T/daemon.out" ] && tail -n 40 "$T/daemon.out"; exit 1; }
# wait_until SECONDS DESCRIPTION COMMAND...: poll a condition until its deadline.
wait_until() {
	local secs=$1 what=$2; shift 2
	local end=$(( $(date +%s) + secs ))
	until "$@" >/dev/null 2>&1; do
		[ "$(date +%s)" -lt $end ] || { echo "timed out after ${secs}s: $what"; return 1; }
		sleep 0.2
	done
}

export HOME="$T/home" CLOCKWORK_HOME="$T/cw"
mkdir -p "$HOME" "$CLOCKWORK_HOME"
chmod 700 "$CLOCKWORK_HOME"
git config --global user.email e2e@example.invalid
git config --global user.name e2e
git config --global init.defaultBranch main
