#!/usr/bin/env bash
# Records are masked once, when they enter clockworkd (issue 24): a real command run
# (clockworkd, cw-runner, the sandbox) prints secrets in pieces, with a pause between
# the writes, so they reach the daemon as separate chunks:
#  - a PEM private key whose BEGIN line, body and END line are separate log lines, the
#    body itself written in two writes;
#  - a GitHub token written in two halves (no newline between them);
#  - an Anthropic key as the host of a request the run's proxy refuses (journaled).
# No surface holds any of them: GET /api/runs/ID/log at several chunk sizes (as cwctl run
# logs -f reads it), cwctl run logs (raw and readable), cwctl run show (the report),
# the transcript and events routes, the journal, the export, the Inbox's API, and on
# disk the log file, the transcript file and the store. The masked placeholder is there.
. "${CW_SRC:?}/test/integration/daemon_lib.bash" || exit 1
command -v python3 >/dev/null || fail "python3 is needed"
command -v curl >/dev/null || fail "curl is needed"

start_daemon --stop-grace 1

# The key body is 16 bytes repeated: the prompt (kept as the user wrote it) holds only
# those 16, the run prints 900; any 24 bytes of the printed body are key material.
UNIT='Zq9XkP3mLw7RtY2v'
TOKA='ghp_BkdfQ1y3GQsMp'
TOKB='SscDlkrCaqx9vJupc94tnwl'
# A key as a host name: the proxy refuses it, and the refusal is journaled, logged and
# noted in the transcript with the host.
HOSTA='sk-ant-api03-Zq9Xk'
HOSTB='P3mLw7RtY2vAb8Cd9Ef0Gh1Ij'
cwctl task add split --engine command --prompt "
body=\$(yes $UNIT | head -n 57 | tr -d '\n')
printf 'before\n-----BEGIN RSA PRIVATE KEY-----\n'
printf '%s' \"\$body\" | head -c 500
sleep 0.5
printf '%s' \"\$body\" | tail -c 412
printf '\n-----END RSA PRIVATE KEY-----\nafter the key\n'
printf 'token %s' $TOKA
sleep 0.5
printf '%s done\n' $TOKB
h1=$HOSTA; h2=$HOSTB; curl -s -m 5 -o /dev/null https://\$h1\$h2.example.com/; echo curl=\$?
" >/dev/null
id=$(cwctl run start split)
wait_until 60 "split run ended" run_ended "$id" || fail "split run did not end"
[ "$(run_status "$id")" = completed ] || fail "run $(run_status "$id"): $(cat "$(run_field "$id" log_path)")"
log=$(run_field "$id" log_path)

# The Inbox: sign in as the page does.
J="$T/jar"
url=$(cwctl inbox 2>/dev/null)
curl -s --noproxy '*' -o /dev/null -c "$J" "${url}" || fail "inbox sign-in"

out="$T/surfaces"
mkdir -p "$out"
cwctl run logs --raw "$id" > "$out/cwctl-logs-raw" || fail "cwctl run logs --raw"
cwctl run logs "$id" > "$out/cwctl-logs" || fail "cwctl run logs"
cwctl run show "$id" > "$out/cwctl-show" || fail "cwctl run show"
cwctl run show "$id" --json > "$out/cwctl-show-json" || fail "cwctl run show --json"
cwctl run export "$id" --transcript -o "$out/export.html" >/dev/null || fail "cwctl run export"
cp "$log" "$out/disk-log"
cp "$CLOCKWORK_HOME/runs/$id.transcript" "$out/disk-transcript" 2>/dev/null || : > "$out/disk-transcript"
sql .dump > "$out/store-dump"
for p in "/api/runs/$id" "/api/runs/$id/transcript" "/api/runs/$id/events" \
    "/api/journal?run=$id" "/api/approvals" "/api/runs?task=split"; do
	f=$(echo "$p" | tr -c 'A-Za-z0-9\n' _)
	api GET "$p" > "$out/api$f"
done
for p in "/inbox/api/runs/$id" "/inbox/api/runs/$id/log" "/inbox/api/runs/$id/transcript" \
    "/inbox/api/journal"; do
	f=$(echo "$p" | tr -c 'A-Za-z0-9\n' _)
	curl -s --noproxy '*' -b "$J" -o "$out/inbox$f" "http://127.0.0.1:$PORT$p"
done
grep -q "$id" "$out/inbox_inbox_api_runs_${id//[^A-Za-z0-9]/_}" || fail "the Inbox did not serve the run: $(cat "$out"/inbox_inbox_api_runs_*)"
# The log route in chunks of many sizes, as cwctl run logs -f reads it, put together.
python3 - "$PORT" "$TOKEN" "$id" "$out" <<'PY' || fail "log route"
import json, sys, urllib.request
port, token, rid, out = sys.argv[1:5]
op = urllib.request.build_opener(urllib.request.ProxyHandler({}))
for mx in (1, 16, 40, 64, 100, 1000, 65536):
    off, seen = 0, []
    for _ in range(2000):
        q = urllib.request.Request("http://127.0.0.1:%s/api/runs/%s/log?offset=%d&max=%d"
                                   % (port, rid, off, mx), headers={"Authorization": "Bearer " + token})
        c = json.load(op.open(q))
        seen.append(c["data"])
        if c["next"] <= off:
            break
        off = c["next"]
    open("%s/api-log-max%d" % (out, mx), "w").write("\n----chunk----\n".join(seen))
PY

# Any 24 bytes of the printed key body, or the token's body, is a leak.
python3 - "$out" "$UNIT" "$TOKA$TOKB" "$HOSTA$HOSTB" <<'PY' || fail "a secret reached a surface"
import os, sys
out, unit, tok, host = sys.argv[1:5]
body = unit * 57
pieces = {body[i:i + 24] for i in range(len(unit))}
pieces.add(tok[4:])
pieces.add(host[13:])
pieces.add(host[13:].lower())
bad = []
for f in sorted(os.listdir(out)):
    data = open(os.path.join(out, f), "rb").read().decode("utf-8", "replace")
    # JSON escapes and the chunk separators must not hide a leak.
    flat = data.replace("\\n", "\n").replace("\n----chunk----\n", "")
    for p in pieces:
        if p in data or p in flat:
            bad.append("%s holds %s" % (f, p[:12] + "..."))
            break
if bad:
    print("\n".join(bad))
    sys.exit(1)
PY
grep -q net_deny "$out/api_api_journal_run_${id//[^A-Za-z0-9]/_}" ||
    fail "the refused host was not journaled: $(cat "$out"/api_api_journal_*)"
pass "a key split over three log lines and two writes, a token in two writes and a key as a refused host reach no surface and not the disk"

grep -q '\[MASKED:private-key\]' "$out/disk-log" || fail "the log on disk lacks the key's placeholder: $(cat "$out/disk-log")"
grep -q 'ghp_\[MASKED\] done' "$out/disk-log" || fail "the log on disk lacks the token's placeholder: $(cat "$out/disk-log")"
grep -q '^before$' "$out/disk-log" && grep -q '^after the key$' "$out/disk-log" ||
    fail "the text around the key was lost: $(cat "$out/disk-log")"
grep -q 'MASKED:private-key' "$out/api-log-max64" && grep -q 'ghp_\[MASKED\]' "$out/cwctl-logs-raw" ||
    fail "the placeholders are not served: $(cat "$out/api-log-max64")"
pass "the log on disk and the log route hold the placeholders and the text around them"

# A log an older daemon wrote raw (it masked on the way out) is masked once, at the
# next start, since the log route now serves the file as it is.
stop_daemon
rm -f "$CLOCKWORK_HOME/runs/.logs-masked"
printf 'old line token=%s%s\n' "$TOKA" "$TOKB" >> "$log"
grep -q "$TOKA$TOKB" "$log" || fail "could not plant the old raw line"
start_daemon --stop-grace 1
grep -q "$TOKA$TOKB" "$log" && fail "the old log on disk still holds the token"
grep -q '^old line token=\[MASKED\]$' "$log" || fail "old log: $(tail -n 3 "$log")"
api GET "/api/runs/$id/log" | grep -q "${TOKB}" && fail "the log route served the old token"
[ -e "$CLOCKWORK_HOME/runs/.logs-masked" ] || fail "the logs are not marked masked"
pass "an ended run's log written raw by an older daemon is masked at the next start"
