#!/usr/bin/env bash
# The network from inside a run (SPEC N1, docs/SECURITY.md "The network"). A real
# clockworkd starts real runs (the command engine, in the real sandbox) whose commands
# try every way out; stand-in services on the host (test/escape/netstand.py) record
# every connection they get. A row passes only when the attempt failed inside AND the
# stand-in recorded nothing; the positive rows show real clients (curl, git, npm)
# getting through the proxy to stand-ins that allow rules name.
#
# Env: CW_BIN, CW_SRC, CW_BUILD (test/escape/nonetns.c is built there); CW_NET_VERBOSE=1
# prints each run's log.
. "${CW_SRC:?}/test/integration/daemon_lib.bash" || exit 1
set +e

pick_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
P1=$(pick_port) P2=$(pick_port) P3=$(pick_port) P4=$(pick_port)
S=$T/stand
mkdir -p "$S/www" "$T/pkg"
fails=0
row() { printf '%-64s %-30s %s\n' "$1" "$2" "$3"; [ "$3" = PASS ] || fails=$((fails + 1)); }

# A dumb-HTTP git repository and a one-package npm registry, served by the stand-in.
git init -q -b main "$T/src"
echo "cloned through the proxy" > "$T/src/README"
git -C "$T/src" add README
git -C "$T/src" -c user.name=t -c user.email=t@example.com commit -qm init
git clone -q --bare "$T/src" "$S/www/repo.git"
git -C "$S/www/repo.git" update-server-info
printf '{"name":"cw-netpkg","version":"1.0.0","main":"index.js"}\n' > "$T/pkg/package.json"
echo 'module.exports = 42;' > "$T/pkg/index.js"
(cd "$T/pkg" && npm pack --silent >/dev/null 2>&1)
mkdir -p "$S/www/cw-netpkg/-"
cp "$T/pkg/cw-netpkg-1.0.0.tgz" "$S/www/cw-netpkg/-/"
sha=$(sha1sum "$T/pkg/cw-netpkg-1.0.0.tgz" | cut -d' ' -f1)
printf '{"name":"cw-netpkg","dist-tags":{"latest":"1.0.0"},"versions":{"1.0.0":{"name":"cw-netpkg","version":"1.0.0","main":"index.js","dist":{"shasum":"%s","tarball":"http://127.0.0.1:@PORT@/cw-netpkg/-/cw-netpkg-1.0.0.tgz"}}}}\n' "$sha" > "$S/www/cw-netpkg/index.json"
mv "$S/www/cw-netpkg/index.json" "$S/www/cw-netpkg/index"

python3 "$CW_SRC/test/escape/netstand.py" "$S" "127.0.0.1:$P1" "127.0.0.2:$P2" "127.0.0.1:$P3" \
    "vhost=127.0.0.1:$P4" &
mkdir -p "$T/pids"; echo $! > "$T/pids/stand"
wait_until 10 "stand-ins" test -s "$S/ready" || fail "stand-ins did not start"

# Rules: the stand-in on P1 by address (the positive rows), a name that resolves to
# loopback (localhost, from /etc/hosts, which the proxy's resolver honours).
cat > "$CLOCKWORK_HOME/config.yaml" <<YAML
api_port: 0
network:
  mode: allowlist
  allow: ["127.0.0.1:$P1", "localhost:$P2", "localhost:$P1"]
YAML
start_daemon

# Controls: from outside, every stand-in answers and is recorded.
for a in "127.0.0.1:$P1" "127.0.0.2:$P2"; do
	out=$(curl -s --noproxy '*' "http://$a/hello")
	[ "$out" = "hello from $a" ] && row "control: $a answers from outside" "$out" PASS ||
	    row "control: $a answers from outside" "$out" FAIL
done
python3 -c "import socket; s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM); s.sendto(b'x',('127.0.0.1',$P1))"
wait_until 5 "udp control" grep -q "^udp " "$S/connections" &&
    row "control: UDP to 127.0.0.1:$P1 from outside" recorded PASS ||
    row "control: UDP to 127.0.0.1:$P1 from outside" "not recorded" FAIL
: > "$S/connections"

# run NAME SCRIPT: a run of the command engine; its log is in $T/NAME.log, its id in RID.
run() {
	cwctl task add "$1" --engine command --prompt "$2" >/dev/null || fail "task add $1"
	cwctl run start "$1" --wait > "$T/$1.wait" 2>&1
	RID=$(sed -n 's/^run: *//p' "$T/$1.wait")
	[ -n "$RID" ] || RID=$(sql "SELECT id FROM runs WHERE task = '$1' ORDER BY rowid DESC LIMIT 1")
	cwctl run logs "$RID" --raw > "$T/$1.log" 2>&1
	[ "${CW_NET_VERBOSE:-0}" = 1 ] && { echo "--- $1 ($RID)"; cat "$T/$1.log"; }
}
nothing() { [ ! -s "$S/connections" ]; }
PYC='import socket,sys
try:
    s=socket.create_connection((sys.argv[1],int(sys.argv[2])),timeout=3); print("CONNECTED")
except OSError as e: print("refused errno=%d" % e.errno)'
APIPORT=$PORT

# --- unreachable ---------------------------------------------------------------------
run raw "python3 -c '$PYC' 127.0.0.1 $APIPORT; python3 -c '$PYC' 127.0.0.1 $P1; python3 -c '$PYC' 127.0.0.2 $P2; python3 -c '$PYC' 1.1.1.1 443; python3 -c 'import socket; s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)
try:
    s.sendto(b\"x\",(\"127.0.0.1\",$P1)); s.sendto(b\"x\",(\"8.8.8.8\",53)); print(\"udp sent\")
except OSError as e: print(\"udp refused errno=%d\" % e.errno)'; curl -s -m 3 --noproxy '*' http://127.0.0.1:$APIPORT/api/status; echo curl-api=\$?"
n=$(grep -c "^refused errno=" "$T/raw.log")
grep -q CONNECTED "$T/raw.log" && n=0
[ "$n" = 4 ] && nothing && row "raw TCP: daemon API, 127.0.0.1, 127.0.0.2, 1.1.1.1:443" "refused x4, none recorded" PASS ||
    row "raw TCP: daemon API, 127.0.0.1, 127.0.0.2, 1.1.1.1:443" "$(grep -E 'refused|CONNECTED' "$T/raw.log" | tr '\n' ' ')" FAIL
grep -q "curl-api=7" "$T/raw.log" && row "curl the daemon's API port from a run" "refused (curl 7)" PASS ||
    row "curl the daemon's API port from a run" "$(grep curl-api "$T/raw.log")" FAIL
sleep 0.3
grep -q "udp refused errno=101" "$T/raw.log" && ! grep -q "^udp" "$S/connections" &&
    row "raw UDP to 127.0.0.1 and 8.8.8.8:53" "ENETUNREACH, none recorded" PASS ||
    row "raw UDP to 127.0.0.1 and 8.8.8.8:53" "$(grep udp "$T/raw.log") $(cat "$S/connections")" FAIL

# --- through the proxy, refused --------------------------------------------------------
run deny "curl -s -m 5 -o /dev/null -w 'offlist=%{http_code}\n' https://example.com/; curl -s -m 5 -w '\nprivate=%{http_code}\n' http://127.0.0.2:$P2/hello; curl -s -m 5 -w '\nrebind=%{http_code}\n' http://localhost:$P2/hello; curl -s -m 5 -w '\napi=%{http_code}\n' http://127.0.0.1:$APIPORT/api/status"
# curl gets the 403 to its CONNECT as a failed tunnel: no response code (000).
grep -q "offlist=000" "$T/deny.log"
offlist=$?
if [ $offlist = 0 ] && cwctl journal --run "$RID" 2>/dev/null | grep "net_deny" | grep -q "example.com"; then
	row "CONNECT example.com:443 (off the list)" "refused, journaled" PASS
else
	row "CONNECT example.com:443 (off the list)" "$(grep offlist "$T/deny.log")" FAIL
fi
grep -q "private=403" "$T/deny.log" && grep -q "no rule allows 127.0.0.2:$P2" "$T/deny.log" &&
    row "proxy to 127.0.0.2:$P2 (no rule names it)" "403" PASS ||
    row "proxy to 127.0.0.2:$P2 (no rule names it)" "$(grep private "$T/deny.log")" FAIL
grep -q "rebind=403" "$T/deny.log" && grep -q "localhost resolves to 127.0.0.1" "$T/deny.log" &&
    row "a name rule (localhost:$P2) resolving to loopback" "403" PASS ||
    row "a name rule (localhost:$P2) resolving to loopback" "$(grep -B1 rebind "$T/deny.log")" FAIL
grep -q "api=403" "$T/deny.log" && row "proxy to the daemon's API port" "403" PASS ||
    row "proxy to the daemon's API port" "$(grep api= "$T/deny.log")" FAIL
nothing && row "the stand-ins recorded no connection from the refused rows" none PASS ||
    row "the stand-ins recorded no connection from the refused rows" "$(cat "$S/connections")" FAIL
cwctl run logs "$RID" 2>/dev/null | grep -q "network: refused example.com:443" &&
    row "the readable transcript shows the refusal" "network: refused ..." PASS ||
    row "the readable transcript shows the refusal" "missing" FAIL

# --- through the proxy, allowed ----------------------------------------------------------
cat > "$CLOCKWORK_HOME/config.yaml" <<YAML
api_port: 0
network:
  allow: ["127.0.0.1:$P1", "127.0.0.1:$P3"]
YAML
run allow "curl -s -m 5 http://127.0.0.1:$P1/hello; git clone -q http://127.0.0.1:$P3/repo.git cl && cat cl/README; mkdir app && cd app && echo '{}' > package.json && npm install --no-audit --no-fund --no-update-notifier --registry http://127.0.0.1:$P3/ cw-netpkg 2>&1 | tail -5; node -e 'console.log(\"npm:\" + require(\"cw-netpkg\"))'"
grep -q "hello from 127.0.0.1:$P1" "$T/allow.log" && row "curl through the proxy to an allowed address" "200" PASS ||
    row "curl through the proxy to an allowed address" "$(head -3 "$T/allow.log")" FAIL
grep -q "cloned through the proxy" "$T/allow.log" && row "git clone (dumb HTTP stand-in) through the proxy" cloned PASS ||
    row "git clone (dumb HTTP stand-in) through the proxy" "$(grep -i -m2 'fatal\|error' "$T/allow.log")" FAIL
grep -q "npm:42" "$T/allow.log" && row "npm install (registry stand-in) through the proxy" installed PASS ||
    row "npm install (registry stand-in) through the proxy" "$(grep -m2 -i 'npm\|error' "$T/allow.log")" FAIL
cwctl run show "$RID" --json > "$T/allow.json"
python3 - "$T/allow.json" <<'PY' && row "report: network allowlist, connections and bytes" counted PASS || row "report: network allowlist, connections and bytes" "$(grep -A8 network_egress "$T/allow.json" | tr -d '\n\t')" FAIL
import json, sys
d = json.load(open(sys.argv[1]))
rep = d.get("report", d)
n = rep.get("network_egress") or {}
sys.exit(0 if rep.get("network") == "allowlist" and n.get("allowed", 0) >= 3 and n.get("bytes_down", 0) > 0 and n.get("denied") == 0 else 1)
PY
cwctl run show "$RID" | grep -qE '^network: +allowlist \([0-9]+ connections, 0 refused\)' &&
    row "cwctl run show: the network line" "allowlist (N connections)" PASS ||
    row "cwctl run show: the network line" "$(cwctl run show "$RID" | grep network)" FAIL
c=$(sql "SELECT count(*) FROM run_events WHERE run_id = '$RID' AND kind = 'net'")
[ "${c:-0}" -ge 3 ] && row "every connection is a run event (kind net)" "$c events" PASS ||
    row "every connection is a run event (kind net)" "${c:-0}" FAIL

# --- one request per connection, framing that cannot be read two ways (issue 26 item 9) --
# The vhost stand-in on P4 is allowed by address; it answers every request a connection
# carries, whatever its Host:, as a lax virtual-hosting front would. Each case sends an
# allowed request with a second one behind it for evil-exfil.example; the second must
# never reach the stand-in, and ambiguous framing is refused (400) before anything does.
cat > "$CLOCKWORK_HOME/config.yaml" <<YAML
api_port: 0
network:
  allow: ["127.0.0.1:$P4"]
YAML
SMUG=$(base64 -w0 "$CW_SRC/test/escape/smuggle.py")
cases="pipelined cl-te dup-cl te-gzip obs-fold bad-chunk te-http10"
run smuggle "echo $SMUG | base64 -d | python3 - 127.0.0.1:$P4 $cases"
# The run is over and its proxy gone: every connection the stand-in had is closed.
vhost_done() { [ "$(grep -c '^open' "$S/requests")" = "$(grep -c '^end' "$S/requests")" ]; }
touch "$S/requests"
wait_until 20 "the vhost stand-in's connections to close" vhost_done || true
[ "${CW_NET_VERBOSE:-0}" = 1 ] && { echo "--- vhost requests"; cat "$S/requests"; }
# (The client shuts its write side, so the proxy ends the connection once it relayed
# the request: the row looks at what the server got, not at the answer.)
grep -q "^pipelined: " "$T/smuggle.log" && grep -q "^GET /first " "$S/requests" &&
    ! grep -q "/second" "$S/requests" &&
    row "pipelined: 2nd request (Host: evil-exfil) after an allowed GET" "1st relayed, 2nd not" PASS ||
    row "pipelined: 2nd request (Host: evil-exfil) after an allowed GET" "$(grep pipelined "$T/smuggle.log"); vhost saw: $(grep '/first\|/second' "$S/requests" | tr '\n' ' ')" FAIL
for c in cl-te:clte dup-cl:dupcl te-gzip:tegzip obs-fold:fold te-http10:http10; do
	name=${c%%:*} tag=${c#*:}
	grep -q "^$name: HTTP/1.1 400" "$T/smuggle.log" && ! grep -q "/$name \|smuggled-$tag" "$S/requests" &&
	    row "framing $name: refused 400, nothing reached the server" "400" PASS ||
	    row "framing $name: refused 400, nothing reached the server" "$(grep "^$name:" "$T/smuggle.log"); vhost saw: $(grep "/$name \|smuggled-$tag" "$S/requests" | tr '\n' ' ')" FAIL
done
# A malformed chunk is found after the head went upstream: the connection ends there.
grep -q "^bad-chunk: " "$T/smuggle.log" && ! grep -q "smuggled-chunk" "$S/requests" &&
    row "framing bad-chunk: the connection ends at the bad chunk" "smuggled request not relayed" PASS ||
    row "framing bad-chunk: the connection ends at the bad chunk" "$(grep "^bad-chunk:" "$T/smuggle.log"); vhost saw: $(grep smuggled-chunk "$S/requests")" FAIL
grep -q "evil-exfil" "$S/requests" &&
    row "no request for evil-exfil.example reached the allowed server" "$(grep -c evil-exfil "$S/requests") did" FAIL ||
    row "no request for evil-exfil.example reached the allowed server" none PASS

# --- ask mode: a host no rule names is held until a person answers ------------------------
cat > "$CLOCKWORK_HOME/config.yaml" <<YAML
api_port: 0
YAML
cwctl task add asker --engine command --prompt "curl -s -p -m 60 http://127.0.0.1:$P1/hello" >/dev/null || fail "task add asker"
cwctl network asker --ask >/dev/null || fail "cwctl network --ask"
: > "$S/connections"
RID=$(cwctl run start asker)
pending() { cwctl approvals --run "$RID" --json 2>/dev/null | grep -q '"tool":	"network"'; }
if wait_until 20 "a network approval" pending; then
	AID=$(cwctl approvals --run "$RID" --json | sed -n 's/.*"id":	"\([^"]*\)".*/\1/p' | head -1)
	nothing && run_is "$RID" running && row "ask: CONNECT held as an approval, nothing connected" "held ($AID)" PASS ||
	    row "ask: CONNECT held as an approval, nothing connected" "$(run_status "$RID") $(cat "$S/connections")" FAIL
	# A loopback address reaches this machine's own services: not an ordinary ask.
	risk=$(cwctl approvals show "$AID" | sed -n 's/^risk: *//p')
	[[ $risk == "outside_worktree (network.private_address)" ]] &&
	    row "ask: CONNECT 127.0.0.1 is labelled by its risk" "$risk" PASS ||
	    row "ask: CONNECT 127.0.0.1 is labelled by its risk" "${risk:-none}" FAIL
	cwctl approve "$AID" --for-task >/dev/null || row "cwctl approve --for-task" "refused" FAIL
	wait_until 30 "asker ends" run_ended "$RID"
	cwctl run logs "$RID" --raw > "$T/asker.log" 2>&1
	grep -q "hello from 127.0.0.1:$P1" "$T/asker.log" && run_is "$RID" completed &&
	    row "ask: approved from cwctl, the run completes" "200" PASS ||
	    row "ask: approved from cwctl, the run completes" "$(run_status "$RID"): $(head -3 "$T/asker.log")" FAIL
	cwctl network asker --json | grep -q "\"127.0.0.1:$P1\"" &&
	    row "ask: \"for this task\" added a task rule" "127.0.0.1:$P1" PASS ||
	    row "ask: \"for this task\" added a task rule" "$(cwctl network asker)" FAIL
	: > "$S/connections"
	cwctl run start asker --wait > "$T/asker2.wait" 2>&1
	RID=$(sed -n 's/^run: *//p' "$T/asker2.wait")
	[ -n "$RID" ] && [ "$(sql "SELECT count(*) FROM approvals WHERE run_id = '$RID'")" = 0 ] &&
	    run_is "$RID" completed && [ -s "$S/connections" ] &&
	    row "ask: the next run of the task goes through without asking" "task rule" PASS ||
	    row "ask: the next run of the task goes through without asking" "$(cat "$T/asker2.wait")" FAIL
else
	row "ask: CONNECT held as an approval" "no approval appeared" FAIL
fi

# --- a long host name is shown whole wherever the approval is (issue 26 item 9) -----------
A60=$(printf 'a%.0s' $(seq 60))
LONG="registry.npmjs.org.$A60.$A60.evil-exfil.example"
cwctl task add longname --engine command --prompt "curl -s -m 60 -o /dev/null https://$LONG/" >/dev/null || fail "task add longname"
cwctl network longname --ask >/dev/null || fail "cwctl network --ask"
cwctl run start longname --wait > "$T/longname.wait" 2>&1 &
echo $! > "$T/pids/longname"
wait_until 20 "the run of longname" grep -q '^run .* queued' "$T/longname.wait"
RID=$(sed -n 's/^run \([^ ]*\) queued.*/\1/p' "$T/longname.wait")
if [ -n "$RID" ] && wait_until 20 "a network approval" pending; then
	AID=$(cwctl approvals --run "$RID" --json | sed -n 's/.*"id":	"\([^"]*\)".*/\1/p' | head -1)
	cwctl approvals > "$T/longname.list"
	grep -qF "$LONG:443" "$T/longname.list" &&
	    row "cwctl approvals: the whole host name ($((${#LONG})) bytes)" whole PASS ||
	    row "cwctl approvals: the whole host name ($((${#LONG})) bytes)" "$(grep -o 'registry[^ ]*' "$T/longname.list")" FAIL
	wait_until 10 "the announcement" grep -q "$AID" "$T/longname.wait"
	grep -qF "$LONG:443" "$T/longname.wait" &&
	    row "cwctl run start --wait announcement: the whole host name" whole PASS ||
	    row "cwctl run start --wait announcement: the whole host name" "$(grep -o 'registry[^ ]*' "$T/longname.wait")" FAIL
	cwctl deny "$AID" >/dev/null
	wait_until 30 "longname ends" run_ended "$RID"
else
	row "cwctl approvals: the whole host name" "no approval appeared: $(head -c 300 "$T/longname.wait")" FAIL
fi

# --- network: open is loud ----------------------------------------------------------------
printf 'api_port: 0\nnetwork: open\n' > "$CLOCKWORK_HOME/config.yaml"
run open "python3 -c '$PYC' 127.0.0.1 $P1"
if grep -q CONNECTED "$T/open.log" && grep -q "WARNING: network: open" "$T/open.log" &&
    cwctl journal --run "$RID" 2>/dev/null | grep -q network_open &&
    cwctl run show "$RID" --json | grep -q '"network":	"open"' &&
    cwctl run show "$RID" | grep -q '^network: *OPEN'; then
	row "network: open reaches the host, loudly (log, journal, report)" "as documented" PASS
else
	row "network: open reaches the host, loudly (log, journal, report)" "$(head -3 "$T/open.log")" FAIL
fi

# --- no network namespace to be had: allowlist refuses the run (exit 3), naming the opt-out
NN=$CW_BUILD/escape/nonetns
if [ -x "$NN" ]; then
	mkdir -p "$T/nn/home/.clockwork" "$T/nn/wd"
	out=$(env -i HOME="$T/nn/home" CLOCKWORK_HOME="$T/nn/home/.clockwork" PATH=/usr/bin:/bin \
	    "$NN" "$CW_BIN/cw-runner" exec --workdir "$T/nn/wd" -- /bin/echo RAN 2>&1); rc=$?
	[ $rc = 3 ] && [[ $out != *RAN* ]] && [[ $out == *"network: open"* ]] &&
	    row "no network namespace possible: exec refused, exit 3" "refused, names network: open" PASS ||
	    row "no network namespace possible: exec refused, exit 3" "rc $rc: $out" FAIL
	msg='{"v":1,"type":"run","run_id":"nn1","task":"nn","engine":"command","argv":["/bin/echo","RAN"],"workdir":"'"$T/nn/wd"'","budget":{"seconds":30}}'
	out=$( { echo "$msg"; sleep 3; } | env -i HOME="$T/nn/home" CLOCKWORK_HOME="$T/nn/home/.clockwork" \
	    PATH=/usr/bin:/bin "$NN" "$CW_BIN/cw-runner" run 2>/dev/null); rc=$?
	[ $rc = 3 ] && [[ $out == *'"status":"refused"'* ]] && [[ $out == *"network: open"* ]] &&
	    row "no network namespace possible: run refused, exit 3" "refused, names network: open" PASS ||
	    row "no network namespace possible: run refused, exit 3" "rc $rc: $(printf '%s' "$out" | tail -c 300)" FAIL
	printf 'network: open\n' > "$T/nn/home/.clockwork/config.yaml"
	out=$(env -i HOME="$T/nn/home" CLOCKWORK_HOME="$T/nn/home/.clockwork" PATH=/usr/bin:/bin \
	    "$NN" "$CW_BIN/cw-runner" exec --workdir "$T/nn/wd" -- /bin/echo RAN 2>&1); rc=$?
	[ $rc = 0 ] && [[ $out == *RAN* ]] && [[ $out == *"not enforced: network: open"* ]] &&
	    row "the same with network: open runs, loudly" "ran, not_enforced" PASS ||
	    row "the same with network: open runs, loudly" "rc $rc: $out" FAIL
else
	row "no network namespace possible" "nonetns not built" FAIL
fi

echo "network escape rows: $fails failed"
[ $fails -eq 0 ]
