#!/usr/bin/env bash
# The Inbox's review page of a finished run (issue 27), in Debian's Chromium through
# playwright-core (lib/inbox-review.js). A `command` task run by the real sandboxed
# cw-runner reaches one allowed loopback host, asks for another (a network approval,
# denied from cwctl while the page shows the "waiting" line), then changes five files:
# one whose lines hold `<img src=x onerror=...>`, one whose path is HTML, one with a
# 600-character line, one whose name holds U+202E (right-to-left override), one more.
# The page, at 1280 px and at 390 px:
#   - the waiting line and the review state line pass WCAG AA (contrast from the
#     computed colours, >= 4.5);
#   - the summary says what was asked, what it did, cost, time, approvals, the hosts
#     (one allowed, one refused) and the automation files (none);
#   - the diff is coloured (an added line's computed style differs from context), one
#     block per file with a file list; each folds and unfolds; j/k/o move and fold, and
#     never fire inside a text field; ? opens the help;
#   - the HTML in a diff line and in a path is text (no <img> element, nothing ran);
#   - a bidi control in a path is shown as \u202e, as cwctl shows it (vis.c), never
#     raw: "notes<RLO>txt.sh" would read "noteshs.txt";
#   - the timeline is sentences with times, not JSON;
#   - no horizontal overflow (the long line scrolls inside its own block);
#   - Push and Continue show the exact cwctl command to copy;
#   - m asks first (dismissed: nothing merged); the Merge button merges: git has the
#     branch in main, and the page then says "Merged into main".
# Screenshots: $CW_INBOX_SHOTS (default <build>/inbox-shots)/review-1280.png and
# review-390.png; docs/img/review-*.png are copies of them.
set -euo pipefail
: "${CW_BIN:?}" "${CW_SRC:?}"
. "$CW_SRC/test/e2e/lib/browser.bash"
E2E_NAME=inbox-review
. "$CW_SRC/test/e2e/lib/harness.bash"

# The allowed host: a small HTTP server on loopback, named by a task rule.
node -e 'const s = require("http").createServer((q, r) => r.end("hello\n"));
  s.listen(0, "127.0.0.1", () => require("fs").writeFileSync(process.argv[1], String(s.address().port)));' \
    "$T/hport" &
pids+=($!)
wait_until 15 "http server" test -s "$T/hport" || die "the http server did not start"
HPORT=$(cat "$T/hport")

printf 'api_port: 0\n' > "$CLOCKWORK_HOME/config.yaml"
"$CW_BIN/clockworkd" --foreground > "$T/daemon.out" 2>&1 &
DPID=$!
wait_until 15 "clockworkd" test -s "$CLOCKWORK_HOME/clockworkd.port" || die "clockworkd did not start"
cw() { "$CW_BIN/cwctl" "$@"; }
sql() { sqlite3 -cmd '.timeout 5000' "$CLOCKWORK_HOME/clockwork.db" "$@"; }

repo=$T/repo
mkdir -p "$repo/src" && git -C "$repo" init -q &&
    printf 'base\nline two\nline three\n' > "$repo/README" &&
    printf 'int main(void)\n{\n\treturn 0;\n}\n' > "$repo/src/main.c" &&
    git -C "$repo" add -A && git -C "$repo" commit -q -m base

LONG=$(printf 'x%.0s' $(seq 600))
cw task add review --engine command --repo "$repo" --mode acceptEdits --prompt "curl -s -m 30 -o /dev/null http://127.0.0.1:$HPORT/ ;
curl -s -m 120 -o /dev/null http://127.0.0.1:9/ ;
printf 'base\nchanged <img src=x onerror=window.__pwned=1>\nline three\n' > README &&
echo '<b>bold</b>' > '<img src=x onerror=window.__pwned=2>.txt' &&
echo 'long $LONG end' > long.txt &&
echo rtl > \"\$(printf 'notes\\342\\200\\256txt.sh')\" &&
printf 'int main(void)\n{\n\treturn 1;\n}\n' > src/main.c" >/dev/null || die "task add"
cw network review --ask --allow "127.0.0.1:$HPORT" >/dev/null || die "cwctl network"
run=$(cw run start review) || die "run start"
asked() { [ -n "$(sql "SELECT id FROM approvals WHERE run_id='$run' AND state='pending'")" ]; }
wait_until 60 "the network approval" asked || die "the run did not ask for 127.0.0.1:9"
aid=$(sql "SELECT id FROM approvals WHERE run_id='$run' AND state='pending'")
ok "run $run asks for 127.0.0.1:9 (approval $aid)"

node -e 'require("fs").writeFileSync(process.argv[1], JSON.stringify({nodeModules: process.argv[2],
  cwctl: process.argv[3], run: process.argv[4], repo: process.argv[5], approval: process.argv[6],
  hport: process.argv[7], shots: process.argv[8],
  htmlPath: "<img src=x onerror=window.__pwned=2>.txt"}))' \
    "$T/cfg.json" "$modules" "$CW_BIN/cwctl" "$run" "$repo" "$aid" "$HPORT" "$shots"
if timeout 300 node "$CW_SRC/test/e2e/lib/inbox-review.js" "$T/cfg.json" > "$T/browser.out" 2>&1; then
	ok "browser: $(tail -n 1 "$T/browser.out")"
else
	fail "browser"
	cw deny "$aid" >/dev/null 2>&1 || true
fi
sed 's/^/    /' "$T/browser.out"

branch="clockwork/review/$run"
if git -C "$repo" merge-base --is-ancestor "$branch" HEAD 2>/dev/null &&
    [ "$(git -C "$repo" rev-parse --abbrev-ref HEAD)" = main ] &&
    grep -q 'onerror=window.__pwned=1' "$repo/README" && [ -f "$repo/long.txt" ] &&
    [ "$(sql "SELECT count(*) FROM audit WHERE action='run.merge' AND actor='inbox' AND target='$run'")" = 1 ]; then
	ok "git: main has the run's branch, merged from the page (audited, actor inbox)"
else
	fail "merge: HEAD $(git -C "$repo" log --oneline -1) $(sql "SELECT action, actor FROM audit WHERE target='$run'")"
fi
[ "$fails" -eq 0 ] || { tail -n 30 "$T/daemon.out"; exit 1; }
echo "inbox_review: all passed; screenshots in $shots"
