#!/usr/bin/env bash
# The Inbox's network approvals in a real browser (issue 26 item 9). A real clockworkd
# starts a real run (the command engine, in the real sandbox) in ask mode whose curl
# asks for a 159-byte host name (registry.npmjs.org.<a x 60>.<a x 60>.evil-exfil.example)
# and for 127.0.0.1; Debian's Chromium (lib/inbox-network.js) signs in and checks that
# the long name is shown whole and wrapped on a narrow page, and that the loopback ask
# says its risk first. Needs /usr/bin/chromium and playwright-core (scripts/setup,
# scripts/setup-engines). The screenshot goes to $CW_INBOX_SHOTS (default
# <build>/inbox-shots).
. "${CW_SRC:?}/test/integration/daemon_lib.bash" || exit 1
set +e
[ -x /usr/bin/chromium ] || fail "/usr/bin/chromium is missing (scripts/setup installs it)"
modules=$(dirname "$("$CW_SRC/scripts/setup-engines" | tail -n 1)")
[ -d "$modules/playwright-core" ] || fail "playwright-core is not in $modules"
shots=${CW_INBOX_SHOTS:-${CW_BUILD:-/tmp}/inbox-shots}
mkdir -p "$shots" "$T/pids"
start_daemon

A60=$(printf 'a%.0s' $(seq 60))
LONG="registry.npmjs.org.$A60.$A60.evil-exfil.example"
cwctl task add netcards --engine command --prompt "curl -s -m 120 -o /dev/null https://$LONG/ & curl -s -p -m 120 -o /dev/null http://127.0.0.1:9/ & wait" >/dev/null ||
    fail "task add"
cwctl network netcards --ask >/dev/null || fail "cwctl network --ask"
RID=$(cwctl run start netcards) || fail "run start"
asks() { [ "$(sql "SELECT count(*) FROM approvals WHERE run_id = '$RID' AND state = 'pending'")" = 2 ]; }
wait_until 60 "two network approvals" asks || fail "the run did not ask twice"
LONGID=$(sql "SELECT id FROM approvals WHERE run_id = '$RID' AND input LIKE '%evil-exfil%'")
LOOPID=$(sql "SELECT id FROM approvals WHERE run_id = '$RID' AND input LIKE '%127.0.0.1%'")
node -e 'require("fs").writeFileSync(process.argv[1], JSON.stringify({ nodeModules: process.argv[2],
  cwctl: process.argv[3], longHost: process.argv[4], longId: process.argv[5],
  loopId: process.argv[6], shot: process.argv[7] }))' "$T/browser.json" "$modules" \
    "$CW_BIN/cwctl" "$LONG" "$LONGID" "$LOOPID" "$shots/inbox-network.png"
timeout 180 node "$CW_SRC/test/e2e/lib/inbox-network.js" "$T/browser.json" > "$T/browser.out" 2>&1
rc=$?
cat "$T/browser.out"
cwctl deny "$LONGID" >/dev/null
cwctl deny "$LOOPID" >/dev/null
wait_until 60 "the run ends" run_ended "$RID"
[ $rc = 0 ] || fail "the browser checks failed"
pass "network approval cards: the whole host, wrapped; the loopback ask's risk first"
