#!/usr/bin/env bash
# The Inbox's Merge of a run that changes automation files (SPEC U3, issue 26 item 3),
# in a real browser (lib/inbox-automation.js): a `command` task run by the real
# sandboxed cw-runner commits .claude/settings.json and .envrc; the run view lists
# them; Merge asks for a confirmation naming both; dismissed, nothing moves; accepted,
# the run lands, audited with accept_automation.
set -euo pipefail
: "${CW_BIN:?}" "${CW_SRC:?}"
[ -x /usr/bin/chromium ] || { echo "FAIL - /usr/bin/chromium is missing (scripts/setup installs it)"; exit 1; }
bindir=$("$CW_SRC/scripts/setup-engines" | tail -n 1)
modules=$(dirname "$bindir")
[ -d "$modules/playwright-core" ] || { echo "FAIL - playwright-core is not in $modules"; exit 1; }
E2E_NAME=inbox-automation
. "$CW_SRC/test/e2e/lib/harness.bash"

printf 'api_port: 0\n' > "$CLOCKWORK_HOME/config.yaml"
"$CW_BIN/clockworkd" --foreground > "$T/daemon.out" 2>&1 &
DPID=$!
wait_until 15 "clockworkd" test -s "$CLOCKWORK_HOME/clockworkd.port" || die "clockworkd did not start"
cw() { "$CW_BIN/cwctl" "$@"; }
sql() { sqlite3 -cmd '.timeout 5000' "$CLOCKWORK_HOME/clockwork.db" "$@"; }
repo=$T/repo
mkdir -p "$repo" && git -C "$repo" init -q && echo base > "$repo/README" &&
    git -C "$repo" add README && git -C "$repo" commit -q -m base
cw task add auto --engine command --repo "$repo" --mode acceptEdits --prompt 'mkdir -p .claude &&
echo "{\"hooks\":{}}" > .claude/settings.json && echo "echo hi" > .envrc && git add -A &&
git -c user.name=a -c user.email=a@b commit -qm auto' >/dev/null || die "task add"
run=$(cw run start auto --wait | sed -n 's/^run: *//p')
[ -n "$run" ] || die "the run did not finish"
node -e 'require("fs").writeFileSync(process.argv[1], JSON.stringify({nodeModules: process.argv[2],
  cwctl: process.argv[3], origin: "", run: process.argv[4], repo: process.argv[5],
  files: [".claude/settings.json", ".envrc"]}))' "$T/cfg.json" "$modules" "$CW_BIN/cwctl" "$run" "$repo"
if timeout 200 node "$CW_SRC/test/e2e/lib/inbox-automation.js" "$T/cfg.json" > "$T/browser.out" 2>&1; then
	ok "browser: $(tail -n 1 "$T/browser.out")"
else
	fail "browser"
fi
sed 's/^/    /' "$T/browser.out"
if [ "$(sql "SELECT count(*) FROM audit WHERE action='run.merge' AND actor='inbox' AND target='$run' AND data LIKE '%\"accept_automation\":true%'")" = 1 ]; then
	ok "the accepted merge is audited with accept_automation and the files"
else
	fail "audit: $(sql "SELECT action, data FROM audit WHERE target='$run'")"
fi
[ "$fails" -eq 0 ]
