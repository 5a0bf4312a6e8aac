#!/usr/bin/env bash
# clockworkd's unix socket is out of every run's reach (SPEC D2). A real clockworkd
# listens at $CLOCKWORK_HOME/clockworkd.sock; from outside, a connection works (the
# control); from inside the real sandbox (`cw-runner exec`), connecting to it must be
# refused by the kernel, because the sandbox does not grant the Clockwork home.
#
# Not under /tmp: the runner's mount namespace covers /tmp, so a socket there would
# vanish for the run and the refusal would prove nothing.
# Env: CW_BIN (clockworkd, cw-runner), CW_BUILD, CW_TEST_TMP.
set -u
: "${CW_BIN:?}" "${CW_BUILD:?}"
T=$(realpath "$(mktemp -d "${CW_TEST_TMP:-$CW_BUILD}/dsock.XXXXXX")")
export HOME=$T/home CLOCKWORK_HOME=$T/home/.clockwork
mkdir -p "$CLOCKWORK_HOME" "$T/wt"
chmod 700 "$CLOCKWORK_HOME"
printf 'api_port: 0\n' > "$CLOCKWORK_HOME/config.yaml"
SOCK=$CLOCKWORK_HOME/clockworkd.sock
DPID=
fails=0
cleanup() {
	[ -n "$DPID" ] && kill -TERM "$DPID" 2>/dev/null && wait "$DPID" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
row() { printf '%-58s %-28s %s\n' "$1" "$2" "$3"; [ "$3" = PASS ] || fails=$((fails + 1)); }

"$CW_BIN/clockworkd" --foreground > "$T/daemon.out" 2>&1 &
DPID=$!
end=$(( $(date +%s) + 15 ))
until [ -S "$SOCK" ] && [ -s "$CLOCKWORK_HOME/clockworkd.port" ]; do
	[ "$(date +%s)" -lt "$end" ] || { cat "$T/daemon.out"; echo "clockworkd did not start"; exit 1; }
	sleep 0.05
done
CONNECT="import socket; s=socket.socket(socket.AF_UNIX); s.connect(\"$SOCK\"); print(\"connected\")"

# Control: the socket is 0600 and answers from outside the sandbox.
[ "$(stat -c %a "$SOCK")" = 600 ] && row "the socket's mode" 600 PASS || row "the socket's mode" "$(stat -c %a "$SOCK")" FAIL
out=$(python3 -c "$CONNECT" 2>&1)
[ "$out" = connected ] && row "control: connect from outside the sandbox" connected PASS ||
    row "control: connect from outside the sandbox" "$out" FAIL

# Where the mount namespace has no overlay view, a named socket is reachable by path:
# the spec must name the daemon's socket to be covered, whichever view is used.
if env -i HOME="$HOME" CLOCKWORK_HOME="$CLOCKWORK_HOME" PATH=/usr/bin:/bin \
    "$CW_BIN/cw-runner" spec --json --workdir "$T/wt" 2>/dev/null | python3 -c '
import json, sys
sys.exit(0 if sys.argv[1] in json.load(sys.stdin).get("hide", []) else 1)' "$(realpath "$SOCK")"; then
	row "the run's spec covers the socket (hide)" listed PASS
else
	row "the run's spec covers the socket (hide)" "not listed" FAIL
fi

# The attempt, as a run would make it.
out=$(env -i HOME="$HOME" CLOCKWORK_HOME="$CLOCKWORK_HOME" PATH=/usr/local/bin:/usr/bin:/bin \
	"$CW_BIN/cw-runner" exec --workdir "$T/wt" -- sh -c "python3 -c '$CONNECT' 2>&1" 2>"$T/runner.err")
rc=$?
kind=$(printf '%s\n' "$out" | grep -oE 'PermissionError|FileNotFoundError|ConnectionRefusedError|Errno [0-9]+' | head -1)
if [ $rc -ne 0 ] && [ "$rc" -ne 3 ] && [[ $out != *connected* ]] && [ -n "$kind" ]; then
	row "connect \$CLOCKWORK_HOME/clockworkd.sock from a run" "refused ($kind)" PASS
else
	row "connect \$CLOCKWORK_HOME/clockworkd.sock from a run" "rc $rc: $out $(cat "$T/runner.err")" FAIL
fi
# And cwctl's own way in (curl --unix-socket) fails the same way.
out=$(env -i HOME="$HOME" CLOCKWORK_HOME="$CLOCKWORK_HOME" PATH=/usr/local/bin:/usr/bin:/bin \
	"$CW_BIN/cw-runner" exec --workdir "$T/wt" -- sh -c "curl -s -o /dev/null -w '%{http_code}' --unix-socket '$SOCK' http://localhost/api/status; echo \" rc=\$?\"" 2>"$T/runner.err")
if [[ $out == "000 rc=7" ]]; then
	row "curl --unix-socket to /api/status from a run" "refused (curl 7)" PASS
else
	row "curl --unix-socket to /api/status from a run" "$out" FAIL
fi
# Another run's control socket (runner/uplink.c) in $CLOCKWORK_HOME/runs: a run that
# reached one while no daemon is attached could attach as that run's daemon. A listener
# stands in for a detached runner and records any connection.
mkdir -p "$CLOCKWORK_HOME/runs"
RSOCK=$CLOCKWORK_HOME/runs/other-run.sock
python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(4)
open(sys.argv[2], "w").close()
while True:
    c, _ = s.accept(); open(sys.argv[2], "a").write("connection\n"); c.close()' "$RSOCK" "$T/rsock.rec" &
LPID=$!
end=$(( $(date +%s) + 10 ))
until [ -S "$RSOCK" ] && [ -e "$T/rsock.rec" ]; do [ "$(date +%s)" -lt "$end" ] || break; sleep 0.05; done
RCONNECT="import socket; s=socket.socket(socket.AF_UNIX); s.connect(\"$RSOCK\"); print(\"connected\")"
out=$(python3 -c "$RCONNECT" 2>&1)
# The listener records the connection after its accept: wait for it, with a deadline.
end=$(( $(date +%s) + 10 ))
until [ -s "$T/rsock.rec" ]; do [ "$(date +%s)" -lt "$end" ] || break; sleep 0.05; done
if [ "$out" = connected ] && [ -s "$T/rsock.rec" ]; then
	: > "$T/rsock.rec"
	out=$(env -i HOME="$HOME" CLOCKWORK_HOME="$CLOCKWORK_HOME" PATH=/usr/local/bin:/usr/bin:/bin \
		"$CW_BIN/cw-runner" exec --workdir "$T/wt" -- sh -c "python3 -c '$RCONNECT' 2>&1" 2>"$T/runner.err")
	if [[ $out != *connected* ]] && [ ! -s "$T/rsock.rec" ]; then
		row "connect another run's control socket from a run" "refused" PASS
	else
		row "connect another run's control socket from a run" "$out" FAIL
	fi
else
	row "control: connect to the stand-in control socket" "$out" FAIL
fi
kill "$LPID" 2>/dev/null; wait "$LPID" 2>/dev/null

# The daemon saw no request from inside: nothing in the audit log, and it still answers.
out=$(curl -s -o /dev/null -w '%{http_code}' --unix-socket "$SOCK" http://localhost/api/status)
[ "$out" = 200 ] && row "the daemon still answers from outside" 200 PASS ||
    row "the daemon still answers from outside" "$out" FAIL
[ $fails -eq 0 ] || { cat "$T/daemon.out"; exit 1; }
