#!/usr/bin/env bash
# The cost of starting a command under the sandbox (issue 3, item 11; issue 22; issue 25):
# /bin/true alone, under cw-sandbox alone (the program that builds every sandbox, given
# the plan `cw-runner spec --plan` prints for the same workdir), under `cw-runner exec`, under `cw-runner exec` with CW_SANDBOX=off (the
# runner's own cost) and with network: open (no network namespace), and under bwrap with
# a comparable policy, without and with --unshare-net. Each figure is the median (and
# p90) over CW_BENCH_RUNS starts (default 300) timed by bench_sandbox.c (fork, exec,
# wait, CLOCK_MONOTONIC), the commands taking turns, one start each per round, so that
# other load on the machine falls on all of them alike.
#
# Two subjects, one table each:
#   root          the runner and bwrap as root: neither makes a user namespace;
#   normal user   (the default subject of the project) the same commands as an
#                 unprivileged user, HOME under /home: cw-runner clones a user namespace
#                 with the others, and bwrap (not setuid on Debian) makes its own.
# Run as root, the script measures root, then the normal user $CW_BENCH_USER (default
# cwtest, created by scripts/test-user) through runuser; run as a normal user, only that
# user. CW_BENCH_SUBJECTS=root or =user picks one.
#
# What each does at the start of /bin/true:
#   cw-runner exec   the spec build (config, the run's TMPDIR), then PID, IPC, mount and
#                    network namespaces (and a user namespace when not root) in one
#                    clone, while the runner judges /etc (its kept outline, or a walk)
#                    and carves its read grant into Landlock rules, on the other core,
#                    and hands the child that ruleset; the view: a fresh
#                    tmpfs root with the grants bound in (/usr, /etc, ... read-only, the
#                    workdir and TMPDIR read-write), a private devpts, a fresh /proc,
#                    pivot_root; loopback up; no_new_privs, Landlock (ABI 7: every grant a
#                    rule, /etc's credential entries carved out), every capability
#                    dropped, a seccomp filter; an init as PID 1 that forks the command.
#   bwrap            mount, PID and IPC namespaces (--unshare-pid --unshare-ipc; and a
#                    user namespace when not root), /usr and /etc bound read-only with the
#                    /bin, /lib, /lib64, /sbin links, the workdir read-write, fresh /proc,
#                    /dev and /tmp, --new-session, --die-with-parent, --cap-drop ALL; its
#                    own init is PID 1. No seccomp program (bwrap loads only one that it is
#                    handed) and no Landlock. "bwrap --unshare-net" adds a network
#                    namespace (bwrap brings its loopback up too): the comparable line for
#                    cw-runner exec, whose run has one; plain bwrap compares with
#                    "cw-runner exec, network: open".
#   cw-sandbox       the same sandbox as cw-runner exec's (the plan holds the spec, its
#                    /etc carve done), without the runner: the plan read from fd 4, the
#                    namespaces, the view, Landlock, capabilities, seccomp, the init.
# The targets (issue 22, issue 25): cw-sandbox at or below 1.0x and cw-runner exec at or
# below 1.3x the wall time of bwrap --unshare-net (the same namespaces), for the normal
# user (and for root). Medians and minimums both: the machine is shared.
#
# Env: CW_BIN (cw-runner), CW_BENCH (bench_sandbox), CW_BENCH_RUNS; CW_BIN_BEFORE, if
# set, a directory with another cw-runner (an earlier build) timed in the same rounds.
. "$(dirname "$0")/bench_lib.bash"
set -euo pipefail
: "${CW_BIN:?}" "${CW_BENCH:?}"
RUNS=${CW_BENCH_RUNS:-300}
TARGET=1.3 TARGET_SANDBOX=1.0
command -v bwrap >/dev/null || { echo "bwrap missing (scripts/setup installs bubblewrap)" >&2; exit 1; }

# One subject: the table for whoever runs this. $1 is the subject's name.
bench_subject() {
	local subject=$1 B W results
	B=$CW_BENCH/bench_sandbox
	[ -x "$B" ] || { echo "bench_sandbox not built in $CW_BENCH" >&2; return 1; }
	# A normal user's runs live under its own HOME (under /home, as people run it).
	local base=${CW_BENCH_DIR:-/tmp}
	if [ -z "${CW_BENCH_DIR:-}" ] && [ "$subject" != root ]; then
		case $HOME in /home/?*) base=$HOME ;; *) echo "note: HOME $HOME is not under /home" >&2 ;; esac
	fi
	W=$(mktemp -d "$base/cw-bench-sandbox.XXXXXX")
	# shellcheck disable=SC2064
	trap "rm -rf '$W'" RETURN
	mkdir -p "$W/home" "$W/wd" "$W/open/.clockwork"
	# The same start without the run's network namespace (issue 16): network: open.
	printf 'network: open\n' > "$W/open/.clockwork/config.yaml"
	export HOME=$W/home CLOCKWORK_HOME=$W/home/.clockwork

	if ! "$CW_BIN/cw-runner" exec --workdir "$W/wd" -- /bin/true; then
		echo "cw-runner exec -- /bin/true fails as $subject" >&2
		return 1
	fi
	local BWRAP=(bwrap --ro-bind /usr /usr --ro-bind /etc /etc --symlink usr/bin /bin
		--symlink usr/lib /lib --symlink usr/lib64 /lib64 --symlink usr/sbin /sbin
		--proc /proc --dev /dev --tmpfs /tmp --bind "$W/wd" "$W/wd" --chdir "$W/wd"
		--unshare-pid --unshare-ipc --new-session --die-with-parent --cap-drop ALL)
	"$CW_BIN/cw-runner" spec --plan --workdir "$W/wd" > "$W/plan" ||
		{ echo "cw-runner spec --plan fails as $subject" >&2; return 1; }
	"${BWRAP[@]}" --unshare-net -- /bin/true ||
		{ echo "bwrap --unshare-net fails as $subject" >&2; return 1; }

	echo
	echo "== subject: $subject (uid $(id -u), HOME $HOME)"
	echo "machine: $(uname -r), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); $RUNS runs each"
	results=$W/results
	local before=()
	if [ -n "${CW_BIN_BEFORE:-}" ]; then
		before=(:: cw-exec-before -- "$CW_BIN_BEFORE/cw-runner" exec --workdir "$W/wd" -- /bin/true)
	fi
	# CW_SANDBOX=off is set in the timer's child, so that no extra exec of env(1) is timed.
	"$B" "$RUNS" true -- /bin/true \
	    :: cw-sandbox CW_BENCH_PLAN="$W/plan" -- "$CW_BIN/cw-sandbox" --plan-fd 4 -- /bin/true \
	    :: cw-exec -- "$CW_BIN/cw-runner" exec --workdir "$W/wd" -- /bin/true \
	    :: cw-exec-off CW_SANDBOX=off -- "$CW_BIN/cw-runner" exec --workdir "$W/wd" -- /bin/true \
	    :: cw-exec-netopen CLOCKWORK_HOME="$W/open/.clockwork" -- "$CW_BIN/cw-runner" exec --workdir "$W/wd" -- /bin/true \
	    :: bwrap -- "${BWRAP[@]}" -- /bin/true \
	    :: bwrap-net -- "${BWRAP[@]}" --unshare-net -- /bin/true \
	    "${before[@]}" > "$results"
	sed 's/^/  /' "$results"

	awk -v target="$TARGET" -v tsandbox="$TARGET_SANDBOX" -v subject="$subject" '
		{ for (i = 2; i <= NF; i++) { split($i, kv, "="); v[$1, kv[1]] = kv[2] } }
		function line(name, k) {
			printf "%-40s %10.3f %10.3f %10.3f %10.2f %10.3f\n", name, v[k, "median_ms"],
			    v[k, "p90_ms"], v[k, "min_ms"], v[k, "median_ms"] / v["true", "median_ms"],
			    v[k, "cpu_median_ms"]
		}
		function ratio(what, a, b, tg,    r) {
			if (tg == "")
				tg = target
			r = v[a, "median_ms"] / v[b, "median_ms"]
			printf "%-52s %5.2fx wall (%5.2fx of the minimums), %5.2fx cpu; target <= %.1fx wall: %s\n",
			    what, r, v[a, "min_ms"] / v[b, "min_ms"],
			    v[a, "cpu_median_ms"] / v[b, "cpu_median_ms"], tg,
			    (r <= tg) ? "met" : "NOT met"
		}
		END {
			t = v["true", "median_ms"]; c = v["cw-exec", "median_ms"]
			o = v["cw-exec-off", "median_ms"]
			tc = v["true", "cpu_median_ms"]; cc = v["cw-exec", "cpu_median_ms"]
			oc = v["cw-exec-off", "cpu_median_ms"]
			printf "\n%-40s %10s %10s %10s %10s %10s\n", subject ": start of /bin/true",
			    "median ms", "p90 ms", "min ms", "x true", "cpu ms"
			line("/bin/true alone", "true")
			line("cw-sandbox (the plan given)", "cw-sandbox")
			line("cw-runner exec", "cw-exec")
			line("cw-runner exec, network: open", "cw-exec-netopen")
			line("cw-runner exec, CW_SANDBOX=off", "cw-exec-off")
			line("bwrap --unshare-net", "bwrap-net")
			line("bwrap (no network namespace)", "bwrap")
			if (("cw-exec-before", "median_ms") in v)
				line("cw-runner exec, CW_BIN_BEFORE", "cw-exec-before")
			printf "\n"
			ratio("cw-sandbox / bwrap --unshare-net:", "cw-sandbox", "bwrap-net", tsandbox)
			ratio("cw-runner exec / bwrap --unshare-net:", "cw-exec", "bwrap-net")
			ratio("cw-runner exec, network: open / bwrap:", "cw-exec-netopen", "bwrap")
			if (("cw-exec-before", "median_ms") in v)
				ratio("CW_BIN_BEFORE exec / bwrap --unshare-net:", "cw-exec-before",
				    "bwrap-net")
			printf "added by cw-runner exec: %.3f ms wall, %.3f ms cpu (medians, minus /bin/true)\n",
			    c - t, cc - tc
			printf "added by bwrap --unshare-net: %.3f ms wall, %.3f ms cpu\n",
			    v["bwrap-net", "median_ms"] - t, v["bwrap-net", "cpu_median_ms"] - tc
			printf "the sandbox layers alone (exec minus exec with CW_SANDBOX=off): %.3f ms wall, %.3f ms cpu\n",
			    c - o, cc - oc
			printf "the network namespace (exec minus exec with network: open): %.3f ms wall, %.3f ms cpu\n",
			    c - v["cw-exec-netopen", "median_ms"], cc - v["cw-exec-netopen", "cpu_median_ms"]
		}' "$results"
}

subjects=${CW_BENCH_SUBJECTS:-}
if [ -z "$subjects" ]; then
	if [ "$(id -u)" = 0 ]; then subjects="root user"; else subjects=user; fi
fi
for s in $subjects; do
	case $s in
	root)
		[ "$(id -u)" = 0 ] || { echo "the root subject needs root" >&2; exit 1; }
		bench_subject root
		;;
	user)
		if [ "$(id -u)" != 0 ]; then
			bench_subject "normal user"
			continue
		fi
		user=${CW_BENCH_USER:-cwtest}
		home=$(bench_user_home) || exit 1
		# The binaries where the user can read them: a copy in its home, unless the
		# build is readable (and its directories searchable) by it already.
		stage=$(mktemp -d "$home/cw-bench.XXXXXX")
		trap 'rm -rf "$stage"' EXIT
		mkdir -p "$stage/bin" "$stage/bench" "$stage/before"
		cp "$CW_BIN/cw-runner" "$CW_BIN/cw-sandbox" "$stage/bin/"
		cp "$CW_BENCH/bench_sandbox" "$stage/bench/"
		cp "$0" "$stage/bench_sandbox.sh"
		cp "$(dirname "$0")/bench_lib.bash" "$stage/"
		[ -z "${CW_BIN_BEFORE:-}" ] || cp "$CW_BIN_BEFORE/cw-runner" "$CW_BIN_BEFORE/cw-sandbox" "$stage/before/" 2>/dev/null ||
		    cp "$CW_BIN_BEFORE/cw-runner" "$stage/before/"
		chown -R "$user:" "$stage"
		runuser -u "$user" -- env -i PATH="$PATH" HOME="$home" CW_BENCH_RUNS="$RUNS" \
		    CW_BIN="$stage/bin" CW_BENCH="$stage/bench" CW_BENCH_DIR="$stage" \
		    ${CW_BIN_BEFORE:+CW_BIN_BEFORE="$stage/before"} CW_BENCH_SUBJECTS=user \
		    bash "$stage/bench_sandbox.sh"
		;;
	*) echo "unknown subject $s (root, user)" >&2; exit 1 ;;
	esac
done
