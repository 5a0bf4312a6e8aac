#!/usr/bin/env bash
# clockworkd under load, a fresh daemon with an empty home each time: GET /api/status,
# /api/tasks (50 tasks) and /api/runs?limit=20 under wrk; 100 POST /api/runs back to
# back, each timed by bench_daemon (a small C client: one connection per request, as
# the daemon closes each); the 100 short sandboxed runs through the queue; resident
# memory right after start, idle with the tasks, under API load, and after the runs.
# Prints figures; asserts nothing about speed.
#
# Run as root, the script measures root, then the normal user $CW_BENCH_USER (default
# cwtest, created by scripts/test-user) through runuser, from a copy of the binaries in
# that user's home; run as a normal user, only that user. CW_BENCH_SUBJECTS=root or
# =user picks one. CW_BENCH_SECONDS (default 8) is each wrk run's length.
. "$(dirname "$0")/bench_lib.bash"
set -euo pipefail
: "${CW_BIN:?}" "${CW_BENCH:?}"
command -v wrk >/dev/null || { echo "bench_daemon: wrk is not installed (scripts/setup installs it)"; exit 1; }
SECS=${CW_BENCH_SECONDS:-8}
POSTS=${CW_BENCH_POSTS:-100}

bench_subject() {
	local PORT TOKEN URL
	DPID= T=
	T=$(mktemp -d "${CW_BENCH_DIR:-${TMPDIR:-/tmp}}/cwd-bench.XXXXXX")
	export HOME="$T/home" CLOCKWORK_HOME="$T/cw"
	mkdir -p "$HOME" "$CLOCKWORK_HOME"
	chmod 700 "$CLOCKWORK_HOME"
	printf 'api_port: 0\nkeep_runs: 5\n' > "$CLOCKWORK_HOME/config.yaml"
	trap '[ -n "$DPID" ] && kill -TERM "$DPID" 2>/dev/null && wait "$DPID" 2>/dev/null; rm -rf "$T"' EXIT

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

	echo "== subject: $1 (uid $(id -u), home $T)"
	echo "daemon: clockworkd $("$CW_BIN/clockworkd" --version | cut -d' ' -f2), $(nproc) cores, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
	# The daemon has answered (its port file is written after the listeners are up);
	# one status call makes sure the first request's work is behind it.
	"$CW_BIN/cwctl" status >/dev/null
	echo "rss_after_start_kib: $(rss)"

	"$CW_BIN/cwctl" task add bench --engine command --prompt 'true' >/dev/null
	for i in $(seq 49); do "$CW_BIN/cwctl" task add "t$i" --engine command --prompt "echo $i" >/dev/null; done
	sleep 1
	echo "rss_idle_50_tasks_kib: $(rss)"

	for path in /api/status "/api/tasks" "/api/runs?limit=20"; do
		wrk -t2 -c32 -d"${SECS}s" --latency -H "Authorization: Bearer $TOKEN" "$URL$path" > "$T/wrk.out" &
		w=$!
		peak=$(sample_rss "$w")
		wait "$w"
		rps=$(awk '/^Requests\/sec/ { print $2 }' "$T/wrk.out")
		p50=$(awk '$1 == "50%" { print $2 }' "$T/wrk.out")
		p99=$(awk '$1 == "99%" { print $2 }' "$T/wrk.out")
		errs=$(awk '/Non-2xx/ { print $NF }' "$T/wrk.out")
		echo "api GET $path (wrk 2 threads, 32 connections, ${SECS} s): ${rps} req/s, p50 ${p50}, p99 ${p99}, non-2xx ${errs:-0}, peak rss ${peak} KiB"
	done
	echo "rss_after_api_load_kib: $(rss)"

	# POSTS (100) short runs through the queue (max_concurrent_runs 2), each a real
	# sandboxed runner; the POSTs go back to back from one client, each on its own
	# connection.
	t0=$(date +%s%N)
	post=$("$CW_BENCH/bench_daemon" "$PORT" "$TOKEN" POST /api/runs '{"task":"bench"}' "$POSTS")
	t1=$(date +%s%N)
	echo "POST /api/runs x$POSTS (bench_daemon, one connection each): $post"
	done_count() {
		sqlite3 -cmd '.timeout 5000' "$CLOCKWORK_HOME/clockwork.db" \
		    "SELECT count(*) FROM runs WHERE status IN ('completed','failed','stopped','refused')"
	}
	peak=0
	while [ "$(done_count)" -lt "$POSTS" ]; do
		r=$(rss); [ "$r" -gt "$peak" ] && peak=$r
		sleep 0.1
	done
	t2=$(date +%s%N)
	ok=$(sqlite3 "$CLOCKWORK_HOME/clockwork.db" "SELECT count(*) FROM runs WHERE status='completed'")
	med=$(sqlite3 "$CLOCKWORK_HOME/clockwork.db" "SELECT spent_seconds FROM runs WHERE status='completed' ORDER BY spent_seconds LIMIT 1 OFFSET $((POSTS / 2 - 1 < 0 ? 0 : POSTS / 2 - 1))")
	echo "runs: $POSTS queued in $(( (t1 - t0) / 1000000 )) ms; all ended after $(( (t2 - t0) / 1000000 )) ms ($ok completed); median run wall time ${med} s; peak rss ${peak} KiB"
	sleep 1
	echo "rss_after_runs_kib: $(rss); rss_high_water_kib: $(hwm)"
	worktrees=$(find "$CLOCKWORK_HOME/worktrees/bench" -mindepth 1 -maxdepth 1 | wc -l)
	echo "retention: ${worktrees} scratch dirs left for the task (keep_runs 5)"
}

subjects=${CW_BENCH_SUBJECTS:-}
if [ -z "$subjects" ]; then
	if [ "$(id -u)" = 0 ]; then subjects="root user"; else subjects=user; fi
fi
for s in $subjects; do
	case $s in
	root)
		[ "$(id -u)" = 0 ] || { echo "the root subject needs root" >&2; exit 1; }
		(bench_subject root)
		;;
	user)
		if [ "$(id -u)" != 0 ]; then
			(bench_subject "normal user")
			continue
		fi
		user=${CW_BENCH_USER:-cwtest}
		home=$(bench_user_home) || exit 1
		stage=$(mktemp -d "$home/cw-bench.XXXXXX")
		trap 'rm -rf "$stage"' EXIT
		mkdir -p "$stage/bin" "$stage/bench"
		cp "$CW_BIN"/* "$stage/bin/"
		cp "$CW_BENCH/bench_daemon" "$stage/bench/"
		cp "$0" "$stage/bench_daemon.sh"
		chown -R "$user:" "$stage"
		runuser -u "$user" -- env -i PATH="$PATH" HOME="$home" CW_BENCH_SECONDS="$SECS" CW_BENCH_POSTS="$POSTS" \
		    CW_BIN="$stage/bin" CW_BENCH="$stage/bench" CW_BENCH_DIR="$stage" \
		    CW_BENCH_SUBJECTS=user bash "$stage/bench_daemon.sh"
		;;
	*) echo "unknown subject $s (root, user)" >&2; exit 1 ;;
	esac
done
