# Shared helpers for the daemon scenario tests (sourced by daemon_*.sh). Every test
# gets its own HOME and CLOCKWORK_HOME under a temporary directory, a daemon on a random
# loopback port, and waits on conditions with deadlines, never on fixed sleeps.
set -euo pipefail

: "${CW_BIN:?CW_BIN must name the directory with clockworkd, cwctl and cw-runner}"
: "${CW_SRC:?CW_SRC must name the source tree}"
T=$(mktemp -d "${TMPDIR:-/tmp}/cwd-test.XXXXXX")
export HOME="$T/home" CLOCKWORK_HOME="$T/cw"
mkdir -p "$HOME" "$CLOCKWORK_HOME"
chmod 700 "$CLOCKWORK_HOME"
printf 'api_port: 0\n' > "$CLOCKWORK_HOME/config.yaml"
FAKE_RUNNER="$CW_SRC/test/integration/daemon_fake_runner.pl"
DPID=
PASSED=0

fail() { echo "FAIL: $*" >&2; [ -f "$T/daemon.out" ] && tail -n 30 "$T/daemon.out" >&2; exit 1; }
pass() { PASSED=$((PASSED + 1)); echo "ok $PASSED - $*"; }

cleanup() {
	local rc=$?
	if [ -n "$DPID" ] && kill -0 "$DPID" 2>/dev/null; then
		kill -TERM "$DPID" 2>/dev/null || true
		wait_until 20 "daemon exit" not_alive "$DPID" || kill -KILL "$DPID" 2>/dev/null || true
	fi
	# Under the sanitizers, a report from the daemon fails the test.
	if [ -f "$T/daemon.out" ] && grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$T/daemon.out"; then
		grep -E -A20 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$T/daemon.out" | head -40 >&2
		echo "FAIL: sanitizer report from clockworkd" >&2
		rc=1
	fi
	# Anything a test left behind, by the pids it recorded.
	for f in "$T"/pids/*; do
		[ -f "$f" ] || continue
		p=$(cat "$f"); [ -n "$p" ] && kill -KILL "$p" 2>/dev/null || true
	done
	rm -rf "$T"
	exit $rc
}
trap cleanup EXIT

not_alive() { ! kill -0 "$1" 2>/dev/null || [ "$(ps -o stat= -p "$1" 2>/dev/null | cut -c1)" = Z ]; }

# wait_until SECONDS DESCRIPTION COMMAND...: poll the condition until the deadline.
wait_until() {
	local secs=$1 what=$2; shift 2
	local end=$(( $(date +%s%N) / 1000000 + secs * 1000 ))
	while ! "$@" >/dev/null 2>&1; do
		if [ $(( $(date +%s%N) / 1000000 )) -ge $end ]; then
			echo "timed out after ${secs}s waiting for: $what" >&2
			return 1
		fi
		sleep 0.05
	done
}

start_daemon() {
	"$CW_BIN/clockworkd" --foreground "$@" >>"$T/daemon.out" 2>&1 &
	DPID=$!
	wait_until 15 "clockworkd to listen" test -s "$CLOCKWORK_HOME/clockworkd.port" ||
	    fail "clockworkd did not start"
	PORT=$(cat "$CLOCKWORK_HOME/clockworkd.port")
	TOKEN=$(cat "$CLOCKWORK_HOME/api.token")
	wait_until 10 "API answers" "$CW_BIN/cwctl" status || fail "API does not answer"
}

stop_daemon() {
	kill -TERM "$DPID"
	wait "$DPID" || true
	DPID=
	rm -f "$CLOCKWORK_HOME/clockworkd.port"
}

# api METHOD PATH [BODY] [CURL-ARGS...]: prints "STATUS BODY".
api() {
	local m=$1 p=$2 body=${3:-}; shift 3 2>/dev/null || shift $#
	local args=(-s -o "$T/api.body" -w '%{http_code}' -X "$m" --noproxy '*'
	    -H "Authorization: Bearer $TOKEN")
	[ -n "$body" ] && args+=(-H 'Content-Type: application/json' --data-binary "$body")
	local code
	code=$(curl "${args[@]}" "$@" "http://127.0.0.1:$PORT$p")
	echo "$code $(cat "$T/api.body")"
}

# api_unix METHOD PATH [BODY] [CURL-ARGS...]: the same over the daemon's unix socket,
# with no token (the daemon takes the kernel's word on who we are).
api_unix() {
	local m=$1 p=$2 body=${3:-}; shift 3 2>/dev/null || shift $#
	local args=(-s -o "$T/api.body" -w '%{http_code}' -X "$m"
	    --unix-socket "$CLOCKWORK_HOME/clockworkd.sock")
	[ -n "$body" ] && args+=(-H 'Content-Type: application/json' --data-binary "$body")
	local code
	code=$(curl "${args[@]}" "$@" "http://localhost$p")
	echo "$code $(cat "$T/api.body")"
}

cwctl() { "$CW_BIN/cwctl" "$@"; }

# jget JSON EXPR: a jq-free field read via python-less sed is fragile; use the store.
sql() { sqlite3 -cmd '.timeout 5000' "$CLOCKWORK_HOME/clockwork.db" "$@"; }
run_status() { sql "SELECT status FROM runs WHERE id = '$1'"; }
run_field() { sql "SELECT $2 FROM runs WHERE id = '$1'"; }
run_is() { [ "$(run_status "$1")" = "$2" ]; }
run_ended() { case "$(run_status "$1")" in completed|failed|stopped|interrupted|refused) return 0;; esac; return 1; }

new_repo() {
	local dir=$1
	mkdir -p "$dir"
	git -C "$dir" init -q -b main
	git -C "$dir" -c user.name=t -c user.email=t@example.com commit -q --allow-empty -m init
	echo one > "$dir/file.txt"
	git -C "$dir" add file.txt
	git -C "$dir" -c user.name=t -c user.email=t@example.com commit -q -m file
}

# host_pid RUNNER INNER: the host pid of the process that the run's PID namespace (under
# runner pid RUNNER) calls INNER. A command writes the pids of its own namespace; the
# daemon records, and the checks below signal, host pids.
host_pid() {
	local s k host inner a
	for s in /proc/[0-9]*/status; do
		host= inner=
		while read -r k host inner _; do
			[ "$k" = NSpid: ] && break
		done 2>/dev/null < "$s"
		[ "$k" = NSpid: ] && [ "$inner" = "$2" ] || continue
		a=$host
		while [ -n "$a" ] && [ "$a" -gt 1 ]; do
			[ "$a" = "$1" ] && { echo "$host"; return 0; }
			a=$(sed -n 's/^PPid:[[:space:]]*//p' "/proc/$a/status" 2>/dev/null)
		done
	done
	return 1
}
