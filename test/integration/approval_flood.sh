#!/usr/bin/env bash
# Issue 26 item 8: one run must not flood the approvals. A fake Claude Code inside a
# real sandboxed run (cw-runner, its bridge) calls the approval tool 2,000 times,
# each on a connection it closes at once, then once more reading the answer:
#  1. with the defaults (approvals.per_minute 30, approvals.max_per_run 200) at most
#     30 approvals are stored, the agent is told "too many approvals per minute", and
#     the limit is journaled once for the burst, not once per call;
#  2. the same through the egress proxy in network.ask mode (2,000 CONNECTs to hosts no
#     rule names, each abandoned): the same bound, the same reason, one journal row;
#  3. with approvals.max_per_run 20 (per_minute high) at most 20 are stored and the
#     agent is told "approval limit: 20 requests in this run";
#  4. a bad approvals.* value is refused naming the field (cwctl config check).
. "${CW_SRC:?}/test/integration/daemon_lib.bash" || exit 1
command -v python3 >/dev/null || fail "python3 is needed"
set +e

: "${CW_TEST_TMP:?CW_TEST_TMP must name a scratch directory outside /tmp}"
FB=$(mktemp -d "$CW_TEST_TMP/flood-bin.XXXXXX")
trap 'rc=$?; rm -rf "$FB"; (exit $rc); cleanup' EXIT
cp "$CW_SRC/test/fixtures/approval-flood.py" "$FB/approval-flood.py"
cat > "$FB/claude" <<'FAKE'
#!/bin/bash
set -u
settings=
prompt=
while [ $# -gt 0 ]; do
	case $1 in --settings) settings=$2; shift;; -p) prompt=$2; shift;; esac
	shift
done
port=$(tr -d ' \n\t' < "$settings" | sed -n 's/.*"--port","\([0-9]*\)".*/\1/p')
tokfile=$(tr -d ' \n\t' < "$settings" | sed -n 's/.*"--token-file","\([^"]*\)".*/\1/p')
if [ "$prompt" = net ]; then
	python3 "$(dirname "$0")/approval-flood.py" net "$HTTPS_PROXY" 2000
else
	python3 "$(dirname "$0")/approval-flood.py" bridge "$port" "$(cat "$tokfile")" 2000
fi
FAKE
chmod 755 "$FB/claude" "$FB/approval-flood.py"
export PATH="$FB:$PATH"

n=0 failed=0
row() {
	n=$((n + 1))
	printf '%2d %-62s | %s\n' "$n" "$1" "$2${3:+: $3}"
	[ "$2" = PASS ] || failed=$((failed + 1))
}
# flood TASK [net]: a claude run of the fake (through the bridge, or with net through
# the egress proxy in network.ask mode); prints the run id once it has ended.
flood() {
	local id
	cwctl task add "$1" --engine claude --seconds 120 --prompt "${2:-flood}" >/dev/null || return 1
	[ "${2:-}" != net ] || cwctl network "$1" --ask >/dev/null || return 1
	id=$(cwctl run start "$1") || return 1
	wait_until 120 "run $id" run_ended "$id"
	echo "$id"
}
stored() { sql "SELECT count(*) FROM approvals WHERE run_id = '$1'"; }
journaled() { sql "SELECT count(*) FROM journal WHERE run_id = '$1' AND kind = '$2'"; }

start_daemon --stop-grace 1
id=$(flood flood-defaults)
log=$(run_field "$id" log_path)
s=$(stored "$id") lim=$(journaled "$id" approval_limit) req=$(journaled "$id" approval_request)
echo "defaults: $(grep -c . "$log" 2>/dev/null) log lines; $s approvals stored, $req approval_request and $lim approval_limit journal rows; $(grep -o 'sent [0-9]*' "$log")"
why=
grep -q '^sent 2000' "$log" || why="the flood did not run ($(run_status "$id"): $(tail -c 300 "$log" | tr '\n' ' '));"
[ "${s:-0}" -le 30 ] || why="$why $s approvals stored (at most 30);"
grep -q 'last answer: .*too many approvals per minute' "$log" ||
	why="$why the agent was not told ($(grep 'last answer' "$log" | cut -c1-200));"
[ "${lim:-0}" -ge 1 ] && [ "${lim:-0}" -le 2 ] || why="$why $lim approval_limit journal rows (once per burst);"
row "2,000 approval calls, defaults: per-minute limit" "$([ -z "$why" ] && echo PASS || echo FAIL)" "$why"

# The same flood through the egress proxy: each CONNECT to a host no rule names is an
# approval, and one the client abandons is expired at once, so nothing holds it back.
id=$(flood flood-net net)
log=$(run_field "$id" log_path)
s=$(stored "$id") lim=$(journaled "$id" approval_limit) req=$(journaled "$id" approval_request)
echo "network ask: $s approvals stored, $req approval_request and $lim approval_limit journal rows; $(grep -o 'sent [0-9]*' "$log")"
why=
grep -q '^sent 2000' "$log" || why="the flood did not run ($(run_status "$id"): $(tail -c 300 "$log" | tr '\n' ' '));"
[ "${s:-0}" -le 30 ] || why="$why $s approvals stored (at most 30);"
grep -q 'last answer: .*too many approvals per minute' "$log" ||
	why="$why the agent was not told ($(grep 'last answer' "$log" | cut -c1-200));"
[ "${lim:-0}" -ge 1 ] && [ "${lim:-0}" -le 2 ] || why="$why $lim approval_limit journal rows (once per burst);"
row "2,000 CONNECTs to unknown hosts in network.ask mode" "$([ -z "$why" ] && echo PASS || echo FAIL)" "$why"
stop_daemon

printf 'api_port: 0\napprovals:\n  max_per_run: 20\n  per_minute: 10000\n' > "$CLOCKWORK_HOME/config.yaml"
start_daemon --stop-grace 1
id=$(flood flood-per-run)
log=$(run_field "$id" log_path)
s=$(stored "$id") lim=$(journaled "$id" approval_limit)
echo "max_per_run 20: $s approvals stored, $lim approval_limit journal rows; $(grep -o 'sent [0-9]*' "$log")"
why=
grep -q '^sent 2000' "$log" || why="the flood did not run ($(run_status "$id"): $(tail -c 300 "$log" | tr '\n' ' '));"
[ "${s:-0}" -le 20 ] || why="$why $s approvals stored (at most 20);"
grep -q 'last answer: .*approval limit: 20 requests in this run' "$log" ||
	why="$why the agent was not told ($(grep 'last answer' "$log" | cut -c1-200));"
[ "${lim:-0}" -ge 1 ] && [ "${lim:-0}" -le 2 ] || why="$why $lim approval_limit journal rows (once per burst);"
row "2,000 approval calls, approvals.max_per_run 20" "$([ -z "$why" ] && echo PASS || echo FAIL)" "$why"
stop_daemon

why=
for bad in 'max_per_run: 0' 'per_minute: -1' 'per_minute: 1000001' 'max_per_run: many' 'burst: 3'; do
	printf 'approvals:\n  %s\n' "$bad" > "$T/bad.yaml"
	out=$("$CW_BIN/clockworkd" --check-config --config "$T/bad.yaml" 2>&1); rc=$?
	[ $rc -ne 0 ] && printf '%s' "$out" | grep -q "approvals\.${bad%%:*}" ||
		why="$why '$bad': rc $rc: $out;"
done
row "a bad approvals.* value is refused, naming the field" "$([ -z "$why" ] && echo PASS || echo FAIL)" "$why"

echo "approval flood rows: $n attempts, $((n - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
