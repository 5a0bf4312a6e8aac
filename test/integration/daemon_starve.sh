#!/usr/bin/env bash
# A run cannot starve the daemon (SPEC D2, issue 10): from inside a real sandboxed run
# (the command engine through the real cw-runner), 2,000 idle TCP connections are opened
# to the daemon's TCP port and held (a command run has no bridge of its own; the
# bridge's limits are tested on the real listener by unit/test_bridge). Meanwhile `cwctl status` answers in under a second and
# `cwctl run stop` ends the run, and the daemon's logs stay small. The daemon starts
# with the soft descriptor limit systemd gives a user service (1,024).
. "${CW_SRC:?}/test/integration/daemon_lib.bash" || exit 1
command -v python3 >/dev/null || fail "python3 is needed inside the run"

ulimit -Sn 1024 || fail "cannot lower the soft descriptor limit"
start_daemon --stop-grace 1
new_repo "$T/repo"
cp "$CW_SRC/test/fixtures/flood.py" "$T/repo/flood.py"
git -C "$T/repo" add flood.py
git -C "$T/repo" -c user.name=t -c user.email=t@example.com commit -q -m flood

cwctl task add flood --engine command --repo "$T/repo" --mode acceptEdits --seconds 600 \
    --prompt "python3 flood.py 2000 $PORT" >/dev/null
id=$(cwctl run start flood)
wait_until 30 "run running" run_is "$id" running || fail "run did not start"
wd=$(run_field "$id" worktree)
wait_until 60 "the flood to be held" test -s "$wd/flood.ready" || fail "the flood did not start"
held=$(cat "$wd/flood.ready")
[ "$held" -ge 2000 ] || fail "the run holds only $held connections"
pass "the run holds $held idle connections to 127.0.0.1:$PORT"
nfd=$(ls "/proc/$DPID/fd" | wc -l)
echo "# clockworkd has $nfd descriptors open"
[ "$nfd" -lt 700 ] || fail "clockworkd holds $nfd descriptors under the flood"

# cwctl status, measured, three times over a few seconds of the flood.
for i in 1 2 3; do
	t0=$(date +%s%N)
	timeout 10 "$CW_BIN/cwctl" status > "$T/status.out" 2>&1 || fail "cwctl status failed: $(cat "$T/status.out")"
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	[ "$ms" -lt 1000 ] || fail "cwctl status took ${ms} ms under the flood"
	echo "# cwctl status answered in ${ms} ms"
done
pass "cwctl status answers in under a second while the run holds its connections"

timeout 10 "$CW_BIN/cwctl" run stop "$id" > "$T/stop.out" 2>&1 || fail "cwctl run stop: $(cat "$T/stop.out")"
wait_until 30 "run ended" run_ended "$id" || fail "the run did not end after stop"
[ "$(run_status "$id")" = stopped ] || fail "status $(run_status "$id")"
pass "cwctl run stop ends the flooding run"

for f in "$CLOCKWORK_HOME/clockworkd.log" "$T/daemon.out"; do
	sz=$(stat -c %s "$f")
	echo "# $(basename "$f"): $sz bytes"
	[ "$sz" -lt 1048576 ] || fail "$f grew to $sz bytes"
done
timeout 10 "$CW_BIN/cwctl" status >/dev/null || fail "the daemon does not answer after the flood"
pass "the daemon's logs stay under 1 MB and it still answers"
# The TCP port is not dead either: once the flood is gone it answers again.
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 --noproxy '*' "http://127.0.0.1:$PORT/")
[ "$code" = 200 ] || fail "the Inbox page after the flood: HTTP $code"
pass "the TCP port serves the Inbox page again after the flood"
