#!/usr/bin/env bash
# The cost of starting a command under the sandbox (issue 3, item 11): /bin/true alone,
# under `cw-runner exec` (PID, IPC and mount namespaces with an init as PID 1, Landlock,
# seccomp, dropped capabilities),
# under `cw-runner exec` with CW_SANDBOX=off (the runner's own cost), and under bwrap
# with a comparable policy. Each figure is the median (and p90) over CW_BENCH_RUNS starts
# (default 300) timed by bench_sandbox.c (fork, exec, wait, CLOCK_MONOTONIC), the four
# commands taking turns, one start each per round, so that other load on the machine
# falls on all of them alike.
#
# The bwrap policy, chosen to do what cw-runner does at start: new mount, PID and IPC
# namespaces (bwrap's own init is then PID 1, as cw-runner's is), system directories
# bound read-only, the workdir bound read-write, fresh /proc, /dev and /tmp, a new
# session, every capability dropped, --die-with-parent. No user namespace (we are root,
# so neither needs one) and no seccomp program (bwrap only loads one that it is handed).
#
# Env: CW_BIN (cw-runner), CW_BENCH (bench_sandbox), CW_BENCH_RUNS; CW_BIN_BEFORE, if
# set, a directory with another cw-runner (an earlier build) timed in the same rounds.
set -euo pipefail
: "${CW_BIN:?}" "${CW_BENCH:?}"
RUNS=${CW_BENCH_RUNS:-300}
B=$CW_BENCH/bench_sandbox
[ -x "$B" ] || { echo "bench_sandbox not built in $CW_BENCH" >&2; exit 1; }
command -v bwrap >/dev/null || { echo "bwrap missing (scripts/setup installs bubblewrap)" >&2; exit 1; }

W=$(mktemp -d /tmp/cw-bench-sandbox.XXXXXX)
trap 'rm -rf "$W"' EXIT
mkdir -p "$W/home" "$W/wd" "$W/open/.clockwork"
# The same start without the run's network namespace (issue 16): config network: open.
printf 'network: open\n' > "$W/open/.clockwork/config.yaml"
export HOME=$W/home CLOCKWORK_HOME=$W/home/.clockwork

if "$CW_BIN/cw-runner" exec --workdir "$W/wd" -- /bin/true 2>&1 | grep -q "not built yet"; then
	echo "cw-runner exec is not built yet" >&2
	exit 1
fi

BWRAP=(bwrap --ro-bind /usr /usr --ro-bind /etc /etc --symlink usr/bin /bin
	--symlink usr/lib /lib --symlink usr/lib64 /lib64 --symlink usr/sbin /sbin
	--proc /proc --dev /dev --tmpfs /tmp --bind "$W/wd" "$W/wd" --chdir "$W/wd"
	--unshare-pid --unshare-ipc --new-session --die-with-parent --cap-drop ALL)

echo "machine: $(uname -r), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); $RUNS runs each"
results=$W/results
before=()
if [ -n "${CW_BIN_BEFORE:-}" ]; then
	before=(:: cw-exec-before -- "$CW_BIN_BEFORE/cw-runner" exec --workdir "$W/wd" -- /bin/true)
fi
# CW_SANDBOX=off is set in the timer's child, so that no extra exec of env(1) is timed.
"$B" "$RUNS" true -- /bin/true \
    :: cw-exec -- "$CW_BIN/cw-runner" exec --workdir "$W/wd" -- /bin/true \
    :: cw-exec-off CW_SANDBOX=off -- "$CW_BIN/cw-runner" exec --workdir "$W/wd" -- /bin/true \
    :: cw-exec-netopen CLOCKWORK_HOME="$W/open/.clockwork" -- "$CW_BIN/cw-runner" exec --workdir "$W/wd" -- /bin/true \
    :: bwrap -- "${BWRAP[@]}" -- /bin/true \
    "${before[@]}" | tee "$results"

awk '
	{ for (i = 2; i <= NF; i++) { split($i, kv, "="); v[$1, kv[1]] = kv[2] } }
	function line(name, k) {
		printf "%-34s %10.3f %10.3f %10.3f %10.2f %10.3f\n", name, v[k, "median_ms"],
		    v[k, "p90_ms"], v[k, "min_ms"], v[k, "median_ms"] / v["true", "median_ms"],
		    v[k, "cpu_median_ms"]
	}
	END {
		t = v["true", "median_ms"]; c = v["cw-exec", "median_ms"]
		o = v["cw-exec-off", "median_ms"]; b = v["bwrap", "median_ms"]
		tc = v["true", "cpu_median_ms"]; cc = v["cw-exec", "cpu_median_ms"]
		oc = v["cw-exec-off", "cpu_median_ms"]; bc = v["bwrap", "cpu_median_ms"]
		printf "\n%-34s %10s %10s %10s %10s %10s\n", "", "median ms", "p90 ms", "min ms",
		    "x true", "cpu ms"
		line("/bin/true", "true")
		line("cw-runner exec -- /bin/true", "cw-exec")
		line("cw-runner exec, CW_SANDBOX=off", "cw-exec-off")
		line("cw-runner exec, network: open", "cw-exec-netopen")
		line("bwrap (comparable policy)", "bwrap")
		if (("cw-exec-before", "median_ms") in v)
			line("cw-runner exec, CW_BIN_BEFORE", "cw-exec-before")
		printf "\nadded by cw-runner exec: %.3f ms wall, %.3f ms cpu (medians, minus /bin/true); target < 2 ms: %s\n",
		    c - t, cc - tc, (c - t < 2) ? "met" : "NOT met"
		printf "added by bwrap:          %.3f ms wall, %.3f ms cpu\n", b - t, bc - tc
		printf "cw-runner exec / bwrap:  %.2fx wall, %.2fx cpu (%s)\n", c / b, cc / bc,
		    (c < b) ? "faster" : "slower"
		printf "the sandbox layers alone (exec minus exec with CW_SANDBOX=off): %.3f ms wall, %.3f ms cpu\n",
		    c - o, cc - oc
		printf "the network namespace (exec minus exec with network: open): %.3f ms wall, %.3f ms cpu\n",
		    c - v["cw-exec-netopen", "median_ms"], cc - v["cw-exec-netopen", "cpu_median_ms"]
	}' "$results"
