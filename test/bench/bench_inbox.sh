#!/usr/bin/env bash
# The Inbox's event streams (issue 24): the idle daemon's CPU and wakeups alone and
# with 20 signed-in Inbox streams open, then how soon a run's first event reaches all
# 20 (see bench_inbox.py). Prints figures; asserts nothing about speed.
# Env: CW_BIN; CW_BENCH_STREAMS (20), CW_BENCH_IDLE (seconds, 60), CW_BENCH_ROUNDS (10).
set -euo pipefail
: "${CW_BIN:?}"

T=$(mktemp -d "${TMPDIR:-/tmp}/cwd-bench.XXXXXX")
export HOME="$T/home" CLOCKWORK_HOME="$T/cw"
mkdir -p "$HOME" "$CLOCKWORK_HOME"
chmod 700 "$CLOCKWORK_HOME"
printf 'api_port: 0\nkeep_runs: 5\n' > "$CLOCKWORK_HOME/config.yaml"
DPID=
cleanup() {
	[ -n "$DPID" ] && kill -TERM "$DPID" 2>/dev/null && wait "$DPID" 2>/dev/null || true
	rm -rf "$T"
}
trap cleanup EXIT

"$CW_BIN/clockworkd" --foreground >"$T/daemon.out" 2>&1 &
DPID=$!
for _ in $(seq 200); do [ -s "$CLOCKWORK_HOME/clockworkd.port" ] && break; sleep 0.05; done
PORT=$(cat "$CLOCKWORK_HOME/clockworkd.port")
TOKEN=$(cat "$CLOCKWORK_HOME/api.token")
"$CW_BIN/cwctl" task add bench --engine command --prompt 'true' >/dev/null
# One run first, so that the supervise timer's few seconds after a run are over
# before the idle figures are taken.
"$CW_BIN/cwctl" run start bench --wait >/dev/null 2>&1
sleep 8
echo "daemon: clockworkd $("$CW_BIN/clockworkd" --version | cut -d' ' -f2), $(nproc) cores, $(uname -r), as $(id -un)"
python3 -u "$(dirname "$0")/bench_inbox.py" "$CW_BIN" "$DPID" "$PORT" "$TOKEN" \
    "${CW_BENCH_STREAMS:-20}" "${CW_BENCH_IDLE:-60}" "${CW_BENCH_ROUNDS:-10}"
