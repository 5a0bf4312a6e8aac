#!/usr/bin/env bash
# The Inbox groups a run's approvals (issue 26, item 8): a real run in the real sandbox,
# in network ask mode, asks about six hosts at once; Debian's Chromium
# (lib/inbox-group.js) signs in and sees that run's first three cards, one line saying
# "3 more from run ...", and, once that is pressed, all six. Needs /usr/bin/chromium and
# playwright-core (scripts/setup, scripts/setup-engines).
. "${CW_SRC:?}/test/integration/daemon_lib.bash" || exit 1
set +e
[ -x /usr/bin/chromium ] || fail "/usr/bin/chromium is missing (scripts/setup installs it)"
modules=$(dirname "$("$CW_SRC/scripts/setup-engines" | tail -n 1)")
[ -d "$modules/playwright-core" ] || fail "playwright-core is not in $modules"
shots=${CW_INBOX_SHOTS:-${CW_BUILD:-/tmp}/inbox-shots}
mkdir -p "$shots" "$T/pids"
start_daemon
cmd=
for i in 1 2 3 4 5 6; do cmd="$cmd curl -s -p -m 120 -o /dev/null http://host$i.group.example/ &"; done
cwctl task add groupcards --engine command --prompt "$cmd wait" >/dev/null || fail "task add"
cwctl network groupcards --ask >/dev/null || fail "cwctl network --ask"
RID=$(cwctl run start groupcards) || fail "run start"
asks() { [ "$(sql "SELECT count(*) FROM approvals WHERE run_id = '$RID' AND state = 'pending'")" = 6 ]; }
wait_until 60 "six network approvals" asks || fail "the run did not ask six times"
node -e 'require("fs").writeFileSync(process.argv[1], JSON.stringify({ nodeModules: process.argv[2],
  cwctl: process.argv[3], run: process.argv[4], shot: process.argv[5] }))' "$T/browser.json" "$modules" \
    "$CW_BIN/cwctl" "$RID" "$shots/inbox-group.png"
timeout 180 node "$CW_SRC/test/e2e/lib/inbox-group.js" "$T/browser.json" > "$T/browser.out" 2>&1
rc=$?
cat "$T/browser.out"
for id in $(sql "SELECT id FROM approvals WHERE run_id = '$RID' AND state = 'pending'"); do cwctl deny "$id" >/dev/null; done
wait_until 60 "the run ends" run_ended "$RID"
[ $rc = 0 ] || fail "the browser checks failed"
pass "a run's six approvals: three cards, a line for the other three, all six when asked"
