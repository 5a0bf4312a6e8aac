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
#  4. a bad approvals.* value is refused naming the field (clockworkd --check-config);
#  5. a runner that does not count (the protocol stand-in sends 100 at once, with
#     approvals.per_minute 10): the daemon stores 10, denies 90 at once with the
#     reason, journals it once, and the task's Telegram chat gets one message for the
#     run's burst, the next (counting the 8 still waiting) only after it is answered.
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
	# Every call is asked (the flood is of approvals): ordinary ones would run unasked.
	cwctl task ask "$1" all >/dev/null || return 1
	[ "${2:-}" != net ] || cwctl network "$1" --ask >/dev/null || return 1
	id=$(cwctl run start "$1") || return 1
	wait_until 120 "run $id" run_ended "$id"
	echo "$id"
}
stored() { sql "SELECT count(*) FROM approvals WHERE run_id = '$1'"; }
journaled() { sql "SELECT count(*) FROM journal WHERE run_id = '$1' AND kind = '$2'"; }
# Each approval_limit row as who counted (the runner, or clockworkd's second count) and
# which limit it met, one per line.
limits() {
	sql "SELECT coalesce(json_extract(data, '\$.by'), 'runner') || '/' ||
	    coalesce(json_extract(data, '\$.limit'), '?') FROM journal
	    WHERE run_id = '$1' AND kind = 'approval_limit' ORDER BY id" | tr '\n' ' '
}

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
echo "max_per_run 20: $s approvals stored, $lim approval_limit journal rows ($(limits "$id")); $(grep -o 'sent [0-9]*' "$log")"
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
	[ $rc -ne 0 ] && grep -q "approvals\.${bad%%:*}" <<<"$out" ||
		why="$why '$bad': rc $rc: $out;"
done
row "a bad approvals.* value is refused, naming the field" "$([ -z "$why" ] && echo PASS || echo FAIL)" "$why"

# A runner that does not count (the protocol stand-in, #flood=100): the daemon's own
# bound holds (10 stored, the other 90 denied at once with the reason, journaled once),
# and the task's Telegram chat gets one message for the burst, not one per call, the
# next only once that one is answered.
printf 'api_port: 0\napprovals:\n  per_minute: 10\n' > "$CLOCKWORK_HOME/config.yaml"
mkdir -p "$T/pids"
TG_TOKEN="7000000001:AAFtestTOKENabcdefghijklmnopqrstuvw"
rm -f "$T/tgport"
python3 "$CW_SRC/test/fixtures/telegram-bot-api.py" "$TG_TOKEN" "$T/tgport" "$T/tg.log" &
echo $! > "$T/pids/standin"
wait_until 10 "stand-in" test -s "$T/tgport" || fail "the Bot API stand-in did not start"
TGB="http://127.0.0.1:$(cat "$T/tgport")"
export CW_TELEGRAM_API_BASE_FOR_TESTS="$TGB"
sent_to() {	# sent_to CHAT: how many messages the stand-in has sent there
	curl -s --noproxy '*' "$TGB/_test/state" |
	    python3 -c "import json,sys; print(len([m for m in json.load(sys.stdin)['sent'] if m['chat']['id']==$1]))"
}
sent_at_least() { [ "$(sent_to "$1")" -ge "$2" ]; }
start_daemon --runner "$FAKE_RUNNER" --stop-grace 0.5
printf '%s\n' "$TG_TOKEN" | cwctl telegram set-token >/dev/null || fail "set-token"
cwctl task add tg-flood --engine command --seconds 120 --prompt 'sleep 100 #flood=100' --telegram-chat 111 >/dev/null ||
	fail "task add"
id=$(cwctl run start tg-flood)
log=$CLOCKWORK_HOME/runs/$id.log
denied() { [ "$(grep -c '^decision flood-[0-9]* deny: too many approvals per minute' "$log")" -ge "$1" ]; }
why=
wait_until 30 "90 denials" denied 90 || why="the runner got $(grep -c '^decision flood-' "$log") denials (want 90);"
s=$(stored "$id") lim=$(journaled "$id" approval_limit)
[ "$s" = 10 ] || why="$why $s approvals stored (want 10);"
[ "$lim" = 1 ] || why="$why $lim approval_limit journal rows (want 1);"
wait_until 20 "a message in chat 111" sent_at_least 111 1 || why="$why no message in the chat;"
first=$(sql "SELECT a.id FROM approvals a JOIN telegram_messages m ON m.approval_id = a.id WHERE a.run_id = '$id'")
[ "$(echo "$first" | grep -c .)" = 1 ] || why="$why $(echo "$first" | grep -c .) approvals have a message (want 1);"
cwctl approve "$first" >/dev/null || why="$why cwctl approve $first failed;"
wait_until 20 "the next message" sent_at_least 111 2 || why="$why no next message after the answer;"
[ "$(sent_to 111)" = 2 ] || why="$why $(sent_to 111) messages in the chat (want 2: one live per run);"
# The second was sent with the whole burst stored: it counts the other 8 waiting.
curl -s --noproxy '*' "$TGB/_test/state" | grep -q '+8 more from this run waiting' ||
	why="$why the next message does not count the other 8;"
echo "telegram: $s stored, $(grep -c '^decision flood-' "$log") denied at once, $(sent_to 111) messages in the chat"
cwctl run stop "$id" >/dev/null
wait_until 20 "run ended" run_ended "$id"
row "a burst of 100 from a runner that does not count; one Telegram message" "$([ -z "$why" ] && echo PASS || echo FAIL)" "$why"

echo "approval flood rows: $n attempts, $((n - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
