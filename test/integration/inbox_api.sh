#!/usr/bin/env bash
# The Inbox over plain HTTP (curl): the page and its security headers; no session means
# no data (401); a `cwctl inbox` code signs in once and sets a HttpOnly, SameSite=Strict
# cookie; answering needs the CSRF token and our own Origin and Host; an answer from the
# Inbox goes through the one respond path, so a later cwctl answer is refused as already
# answered (exit 3); revoking ends sessions; the proof-of-work export is audited.
. "${CW_SRC:?}/test/integration/daemon_lib.bash" || exit 1
command -v perl >/dev/null || fail "perl is needed for the fake runner"

start_daemon --runner "$FAKE_RUNNER" --stop-grace 0.5
B="http://127.0.0.1:$PORT"
J="$T/jar"

# get PATH [CURL-ARGS...]: prints the status; headers in $T/h, body in $T/b.
get() { local p=$1; shift; curl -s --noproxy '*' -D "$T/h" -o "$T/b" -w '%{http_code}' "$@" "$B$p"; }
hdr() { grep -i "^$1:" "$T/h" | head -1 | cut -d: -f2- | tr -d '\r' | sed 's/^ //'; }

[ "$(get /)" = 200 ] || fail "GET / $(cat "$T/b")"
csp=$(hdr Content-Security-Policy)
case "$csp" in *"default-src 'self'"*"frame-ancestors 'none'"*) ;; *) fail "CSP: $csp" ;; esac
case "$csp" in *unsafe-inline*|*unsafe-eval*|*http:*|*https:*) fail "CSP too wide: $csp" ;; esac
[ "$(hdr X-Content-Type-Options)" = nosniff ] || fail "nosniff"
[ "$(hdr Referrer-Policy)" = no-referrer ] || fail "Referrer-Policy"
grep -q '<script src="/app.js"' "$T/b" || fail "page does not load /app.js"
if grep -Eq '<script>|https?://|//[a-z]' "$T/b"; then fail "page has inline script or a foreign URL"; fi
[ "$(get /app.js)" = 200 ] && hdr Content-Type | grep -q javascript || fail "app.js"
if grep -Eq 'innerHTML|https?://|eval\(' "$T/b"; then fail "app.js uses innerHTML, eval or a foreign URL"; fi
[ "$(get /app.css)" = 200 ] && hdr Content-Type | grep -q text/css || fail "app.css"
pass "the page and its assets come from the binary with CSP, nosniff and no-referrer"

cwctl task add ask --engine command --prompt 'echo "key sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA decision=$DECISION" #approval' >/dev/null
id=$(cwctl run start ask)
wait_until 10 "approval pending" sh -c "sqlite3 '$CLOCKWORK_HOME/clockwork.db' \"SELECT id FROM approvals WHERE run_id='$id' AND state='pending'\" | grep -q ." ||
    fail "no pending approval"
aid=$(sql "SELECT id FROM approvals WHERE run_id='$id'")

for p in /inbox/api/approvals /inbox/api/runs /inbox/api/journal "/inbox/api/runs/$id/log" \
    "/inbox/api/runs/$id/summary" /inbox/session /inbox/api/events; do
	code=$(get "$p")
	[ "$code" = 401 ] || fail "$p without a session: $code"
	if grep -q -e "$aid" -e "$id" -e 'rm -rf' "$T/b"; then fail "$p leaks data without a session"; fi
done
code=$(get /inbox/api/approvals -H "Cookie: cw_inbox=$(printf '%064d' 0)")
[ "$code" = 401 ] || fail "forged cookie: $code"
code=$(get /inbox/api/approvals -H "Authorization: Bearer $TOKEN")
[ "$code" = 401 ] || fail "the gateway takes the session, not the token: $code"
pass "without a session every data route answers 401 and shows no data"

url=$(cwctl inbox 2>/dev/null)
case "$url" in "http://127.0.0.1:$PORT/inbox/login?code="*) ;; *) fail "cwctl inbox printed '$url'" ;; esac
[ "$(get "${url#"$B"}" -c "$J")" = 303 ] || fail "sign-in: $(cat "$T/b")"
[ "$(hdr Location)" = / ] || fail "redirect to $(hdr Location)"
ck=$(hdr Set-Cookie)
for flag in HttpOnly SameSite=Strict 'Path=/' Max-Age=; do
	case "$ck" in *"$flag"*) ;; *) fail "cookie lacks $flag: $ck" ;; esac
done
case "$ck" in cw_inbox=[0-9a-f]*) ;; *) fail "cookie: $ck" ;; esac
[ "$(echo "$ck" | sed 's/^cw_inbox=\([0-9a-f]*\).*/\1/' | wc -c)" = 65 ] || fail "cookie is not 32 random bytes"
[ "$(get "${url#"$B"}")" = 403 ] || fail "the code worked twice"
[ -z "$(hdr Set-Cookie)" ] || fail "a spent code set a cookie"
[ "$(get "/inbox/login?code=$(printf '%064d' 1)")" = 403 ] || fail "a made-up code worked"
[ "$(get /inbox/login)" = 403 ] || fail "no code"
url2=$(cwctl inbox 2>/dev/null)
[ "$(get "${url2#"$B"}" -I)" = 405 ] || fail "HEAD on the sign-in link"
[ "$(get "${url2#"$B"}")" = 303 ] || fail "a HEAD spent the code"
[ "$(sql "SELECT count(*) FROM audit WHERE action='inbox.signin'")" = 2 ] || fail "sign-ins not audited"
pass "a cwctl inbox code signs in once: 303 to /, HttpOnly SameSite=Strict cookie; reuse 403"

[ "$(get /inbox/session -b "$J")" = 200 ] || fail "session"
csrf=$(sed 's/.*"csrf":"\([0-9a-f]*\)".*/\1/' "$T/b")
[ ${#csrf} = 64 ] || fail "csrf token: $(cat "$T/b")"
[ "$(get /inbox/api/approvals -b "$J")" = 200 ] || fail "approvals with a session"
grep -q "$aid" "$T/b" && grep -q 'rm -rf build' "$T/b" || fail "approval not listed: $(cat "$T/b")"
wait_until 10 "log written" sh -c "grep -q . '$(run_field "$id" log_path)'" || true
for p in /inbox/api/runs "/inbox/api/runs/$id" /inbox/api/journal /inbox/api/tasks; do
	[ "$(get "$p" -b "$J")" = 200 ] || fail "$p with a session: $(cat "$T/b")"
done
# The review page's summary (issue 27): what was asked, masked like every record.
[ "$(get "/inbox/api/runs/$id/summary" -b "$J")" = 200 ] || fail "summary with a session: $(cat "$T/b")"
grep -q '"asked":"echo \\"key sk-ant-\[MASKED\]' "$T/b" && ! grep -q 'AAAAAAAAAAAAAAAA' "$T/b" &&
    grep -q '"asked_from":"task"' "$T/b" && grep -q '"hosts":\[\]' "$T/b" ||
    fail "summary: $(cat "$T/b")"
[ "$(get "/inbox/api/runs/no-such-run/summary" -b "$J")" = 404 ] || fail "summary of no run: $(cat "$T/b")"
for p in /inbox/api/status /inbox/api/audit /inbox/api/inbox/code; do
	[ "$(get "$p" -b "$J")" = 404 ] || fail "$p should not be on the gateway"
done
[ "$(get /inbox/api/tasks -b "$J" -X POST -H "X-CSRF-Token: $csrf" -H "Origin: $B" \
    --data-binary '{"name":"x","prompt":"y"}')" = 404 ] || fail "task add through the gateway"
[ "$(get /inbox/api/inbox/revoke -b "$J" -X POST -H "X-CSRF-Token: $csrf" -H "Origin: $B")" = 404 ] ||
    fail "revoke through the gateway"
# The run actions the page has (start, stop, merge, land, discard) need the CSRF token
# too; recording a push is cwctl's (the person's own git), not on the gateway.
for p in "/inbox/api/runs/$id/stop" "/inbox/api/runs/$id/merge" "/inbox/api/runs/$id/land" \
    "/inbox/api/runs/$id/discard"; do
	[ "$(get "$p" -b "$J" -X POST -H "Origin: $B")" = 403 ] || fail "$p without the CSRF token"
done
[ "$(get "/inbox/api/runs/$id/pushed" -b "$J" -X POST -H "X-CSRF-Token: $csrf" -H "Origin: $B" \
    -H 'Content-Type: application/json' --data-binary '{"remote":"origin"}')" = 404 ] ||
    fail "recording a push through the gateway"
[ "$(get /inbox/api/runs -b "$J" -X POST -H "Origin: $B" -H 'Content-Type: application/json' \
    --data-binary '{"task":"x"}')" = 403 ] || fail "run start without the CSRF token"
run_is "$id" running || run_is "$id" starting || fail "a refused stop changed the run: $(run_status "$id")"
pass "with the session the page's reads work; token-only and write routes are not on the gateway"

ans() { get "/inbox/api/approvals/$aid" -b "$J" -X POST -H 'Content-Type: application/json' "$@"; }
[ "$(ans -H "Origin: $B" --data-binary '{"decision":"allow"}')" = 403 ] || fail "no CSRF token"
# A token that differs in its last digit (never the same digit: that would be the token).
case $csrf in *0) bad=${csrf%?}1 ;; *) bad=${csrf%?}0 ;; esac
[ "$bad" != "$csrf" ] || fail "test bug: the wrong token equals the right one"
[ "$(ans -H "Origin: $B" -H "X-CSRF-Token: $bad" --data-binary '{"decision":"allow"}')" = 403 ] ||
    fail "wrong CSRF token"
[ "$(ans -H "Origin: http://evil.example" -H "X-CSRF-Token: $csrf" --data-binary '{"decision":"allow"}')" = 403 ] ||
    fail "foreign Origin"
[ "$(ans -H "X-CSRF-Token: $csrf" --data-binary '{"decision":"allow"}')" = 403 ] || fail "no Origin"
[ "$(ans -H "Host: rebind.example:$PORT" -H "Origin: http://rebind.example:$PORT" -H "X-CSRF-Token: $csrf" \
    --data-binary '{"decision":"allow"}')" = 403 ] || fail "foreign Host"
[ "$(sql "SELECT state FROM approvals WHERE id='$aid'")" = pending ] || fail "a refused request changed the approval"
pass "answering without the CSRF token, from a foreign Origin or Host is refused (403), nothing changes"

[ "$(ans -H "Origin: $B" -H "X-CSRF-Token: $csrf" --data-binary '{"decision":"allow"}')" = 200 ] ||
    fail "answer from the Inbox: $(cat "$T/b")"
[ "$(sql "SELECT state || ' ' || answered_by FROM approvals WHERE id='$aid'")" = "allowed inbox" ] ||
    fail "store: $(sql "SELECT state, answered_by FROM approvals WHERE id='$aid'")"
wait_until 10 "run ended" run_ended "$id" || fail "run did not end"
grep -q 'decision=allow' "$(run_field "$id" log_path)" || fail "the runner did not get the decision"
[ "$(sql "SELECT count(*) FROM audit WHERE action='approval.answer' AND actor='inbox' AND target='$aid'")" = 1 ] ||
    fail "audit"
set +e; out=$(cwctl deny "$aid" 2>&1); rc=$?; set -e
[ $rc -eq 3 ] && grep -q 'already answered' <<<"$out" || fail "cwctl after the Inbox: $rc $out"
[ "$(ans -H "Origin: $B" -H "X-CSRF-Token: $csrf" --data-binary '{"decision":"deny"}')" = 409 ] ||
    fail "second Inbox answer"
[ "$(sql "SELECT state FROM approvals WHERE id='$aid'")" = allowed ] || fail "a second answer changed it"
pass "an Inbox answer takes effect once: runner gets it, audited; cwctl deny then exits 3"

[ "$(get "/inbox/api/runs/$id/log" -b "$J")" = 200 ] || fail "log"
grep -q 'decision=allow' "$T/b" || fail "log through the gateway: $(cat "$T/b")"
if grep -q 'AAAAAAAAAAAAAAAAAAAA' "$T/b"; then fail "log secret not masked"; fi
pass "the run's log reaches the page masked"

# Server-sent events: the page's stream is the bus's, through the gateway (events.c).
curl -s --noproxy '*' -N --max-time 2 -b "$J" -D "$T/sseh" "$B/inbox/api/events" > "$T/sse" || true
grep -q '^retry: ' "$T/sse" || fail "event stream: $(cat "$T/sse")"
grep -qi '^content-type: text/event-stream' "$T/sseh" || fail "event stream type: $(cat "$T/sseh")"
# The old fingerprint stream is gone, and says where its successor is.
[ "$(get /inbox/events -b "$J")" = 410 ] || fail "/inbox/events: $(cat "$T/b")"
grep -q '/inbox/api/events' "$T/b" || fail "the 410 names no successor: $(cat "$T/b")"
pass "the live event stream answers a signed-in page; the old /inbox/events is 410 Gone"

# Export: token or session; audited and counted; no markup from the run survives.
[ "$(get "/workforce/runs/$id/proof-of-work")" = 401 ] || fail "export without auth"
[ "$(get "/workforce/runs/$id/proof-of-work" -H "Authorization: Bearer $TOKEN")" = 200 ] ||
    fail "export with the token: $(head -c 300 "$T/b")"
hdr Content-Type | grep -q text/html || fail "export type"
grep -q "default-src 'none'" "$T/b" || fail "export lacks its CSP meta"
if grep -Eqi '<script|<link|<img|src=|AAAAAAAAAAAAAAAAAAAA' "$T/b"; then fail "export has a script, link, image or secret"; fi
grep -q 'Not included in this export' "$T/b" || fail "the transcript was included unasked"
[ "$(get "/workforce/runs/$id/proof-of-work?transcript=1" -b "$J")" = 200 ] || fail "export with the session"
grep -q 'decision=allow' "$T/b" || fail "transcript missing when asked for"
cwctl run export "$id" -o "$T/pow.html" 2>/dev/null || fail "cwctl run export"
grep -q 'Proof of work: ask' "$T/pow.html" || fail "cwctl export content"
[ "$(stat -c %a "$T/pow.html")" = 600 ] || fail "export file mode"
[ "$(sql "SELECT count(*) FROM audit WHERE action='run.export' AND target='$id'")" = 3 ] || fail "exports not audited"
[ "$(sql "SELECT count(*) FROM audit WHERE action='run.export' AND actor='inbox'")" = 1 ] || fail "inbox export actor"
[ "$(run_field "$id" exported)" = 3 ] || fail "exports not counted: $(run_field "$id" exported)"
pass "proof-of-work export: token or session, no scripts/links/images/secrets, audited and counted"

# An open event stream is told when its session is revoked, and ends.
curl -s --noproxy '*' -N --max-time 20 -b "$J" "$B/inbox/api/events" > "$T/sse2" &
sse=$!
wait_until 10 "stream open" grep -q '^retry:' "$T/sse2" || fail "second event stream"
cwctl inbox --revoke | grep -q 'revoked 2 Inbox session' || fail "revoke"
wait_until 10 "signed out event" grep -q '^event: signedout' "$T/sse2" || fail "no signedout event: $(cat "$T/sse2")"
wait_until 10 "stream ended" not_alive "$sse" || fail "the stream stayed open after revoke"
wait "$sse" 2>/dev/null || true
[ "$(get /inbox/api/approvals -b "$J")" = 401 ] || fail "a revoked session still works"
[ "$(get /inbox/session -b "$J")" = 401 ] || fail "a revoked session still has a CSRF token"
[ "$(sql "SELECT count(*) FROM audit WHERE action='inbox.revoke'")" = 1 ] || fail "revoke not audited"
pass "cwctl inbox --revoke ends the session and tells an open page"

# Malformed input is that client's error: the daemon keeps serving.
get /inbox/api/approvals -H "Cookie: ;;;=;cw_inbox;cw_inbox=$(head -c 3000 /dev/zero | tr '\0' a)" >/dev/null
get "/inbox/login?code=%zz&code=" >/dev/null
printf 'GET /inbox/api/events HTTP/1.1\r\nHost: 127.0.0.1:%s\r\n\r\n' "$PORT" | timeout 2 nc -q1 127.0.0.1 "$PORT" >/dev/null 2>&1 || true
cwctl status >/dev/null || fail "daemon stopped serving after malformed requests"
pass "malformed cookies and codes are answered; the daemon keeps serving"

echo "inbox_api: $PASSED passed"
