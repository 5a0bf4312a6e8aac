#!/usr/bin/env bash
# clockworkd under load: API requests per second and latency percentiles under wrk, 100
# short sandboxed runs through the queue, and the daemon's resident memory idle, under
# API load and under run load. Prints figures; asserts nothing about speed.
set -euo pipefail
: "${CW_BIN:?}"
command -v wrk >/dev/null || { echo "bench_daemon: wrk is not installed (scripts/setup installs it)"; exit 1; }

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
URL="http://127.0.0.1:$PORT"
rss() { awk '/^VmRSS/ { print $2 }' "/proc/$DPID/status"; }
hwm() { awk '/^VmHWM/ { print $2 }' "/proc/$DPID/status"; }

# Peak RSS while a command runs, sampled every 50 ms.
sample_rss() {
	local peak=0 r
	while kill -0 "$1" 2>/dev/null; do
		r=$(rss); [ "$r" -gt "$peak" ] && peak=$r
		sleep 0.05
	done
	echo "$peak"
}

"$CW_BIN/cwctl" task add bench --engine command --prompt 'true' >/dev/null
for i in $(seq 20); do "$CW_BIN/cwctl" task add "t$i" --engine command --prompt "echo $i" >/dev/null; done
echo "daemon: clockworkd $("$CW_BIN/clockworkd" --version | cut -d' ' -f2), $(nproc) cores, $(uname -r)"
echo "rss_idle_kib: $(rss)"

for path in /api/status "/api/tasks" "/api/runs?limit=20"; do
	wrk -t2 -c32 -d8s --latency -H "Authorization: Bearer $TOKEN" "$URL$path" > "$T/wrk.out" &
	w=$!
	peak=$(sample_rss "$w")
	wait "$w"
	rps=$(awk '/^Requests\/sec/ { print $2 }' "$T/wrk.out")
	p50=$(awk '$1 == "50%" { print $2 }' "$T/wrk.out")
	p99=$(awk '$1 == "99%" { print $2 }' "$T/wrk.out")
	errs=$(awk '/Non-2xx/ { print $NF }' "$T/wrk.out")
	echo "api GET $path (wrk 2 threads, 32 connections, 8 s): ${rps} req/s, p50 ${p50}, p99 ${p99}, non-2xx ${errs:-0}, peak rss ${peak} KiB"
done
echo "rss_after_api_load_kib: $(rss)"

# 100 short runs through the queue (max_concurrent_runs 2), each a real sandboxed runner.
t0=$(date +%s%N)
for i in $(seq 100); do
	curl -s -o /dev/null --noproxy '*' -X POST -H "Authorization: Bearer $TOKEN" \
	    --data '{"task":"bench"}' "$URL/api/runs"
done
t1=$(date +%s%N)
done_count() {
	sqlite3 -cmd '.timeout 5000' "$CLOCKWORK_HOME/clockwork.db" \
	    "SELECT count(*) FROM runs WHERE status IN ('completed','failed','stopped','refused')"
}
peak=0
while [ "$(done_count)" -lt 100 ]; do
	r=$(rss); [ "$r" -gt "$peak" ] && peak=$r
	sleep 0.1
done
t2=$(date +%s%N)
ok=$(sqlite3 "$CLOCKWORK_HOME/clockwork.db" "SELECT count(*) FROM runs WHERE status='completed'")
med=$(sqlite3 "$CLOCKWORK_HOME/clockwork.db" "SELECT spent_seconds FROM runs WHERE status='completed' ORDER BY spent_seconds LIMIT 1 OFFSET 49")
echo "runs: 100 queued in $(( (t1 - t0) / 1000000 )) ms; all ended after $(( (t2 - t0) / 1000000 )) ms ($ok completed); $(awk -v ms=$(( (t2 - t0) / 1000000 )) 'BEGIN { printf "%.1f", 100000 / ms }') runs/s at 2 concurrent; median run wall time ${med} s; peak rss ${peak} KiB"
echo "rss_after_runs_kib: $(rss); rss_high_water_kib: $(hwm)"
worktrees=$(find "$CLOCKWORK_HOME/worktrees/bench" -mindepth 1 -maxdepth 1 | wc -l)
echo "retention: ${worktrees} scratch dirs left for the task (keep_runs 5)"
