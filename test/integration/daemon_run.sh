#!/usr/bin/env bash
# Runs end to end through cwctl and the real cw-runner (command engine, sandboxed): a
# repository run in its own worktree and branch with log and report (base, final commit,
# diffstat) while the user's tree is untouched; following the live log; the concurrency
# limit with its FIFO queue; retention and cwctl gc; CW_SANDBOX=off made loud.
. "${CW_SRC:?}/test/integration/daemon_lib.bash" || exit 1

printf 'api_port: 0\nkeep_runs: 1\n' > "$CLOCKWORK_HOME/config.yaml"
start_daemon --stop-grace 1
new_repo "$T/repo"
head_before=$(git -C "$T/repo" rev-parse HEAD)

# 1. A repository run.
cwctl task add edit --engine command --repo "$T/repo" --mode acceptEdits \
    --prompt 'echo changed >> file.txt; echo new > new.txt; echo "edited in $(pwd)"' >/dev/null
cwctl run start edit --wait > "$T/wait.out" || fail "run failed: $(cat "$T/wait.out")"
id=$(sed -n 's/^run: *//p' "$T/wait.out")
eid=$id
wt=$(run_field "$id" worktree)
[ "$wt" = "$CLOCKWORK_HOME/worktrees/edit/$id" ] || fail "worktree path $wt"
[ "$(run_field "$id" branch)" = "clockwork/edit/$id" ] || fail "branch"
[ "$(git -C "$wt" rev-parse --abbrev-ref HEAD)" = "clockwork/edit/$id" ] || fail "worktree branch"
[ "$(run_field "$id" base_commit)" = "$head_before" ] || fail "base commit"
final=$(run_field "$id" final_commit)
# The run left its edits uncommitted: the seal committed them, and the import brought
# exactly that commit into the user's repository on the run's branch.
[ -n "$final" ] && [ "$final" != "$head_before" ] || fail "final commit $final"
[ "$(git -C "$T/repo" rev-parse "clockwork/edit/$id")" = "$final" ] || fail "branch not imported"
[ "$(git -C "$T/repo" rev-parse "$final^")" = "$head_before" ] || fail "final's parent"
[ "$(git -C "$T/repo" log -1 --format=%an "$final")" = Clockwork ] || fail "seal author"
grep -q changed "$wt/file.txt" && [ -f "$wt/new.txt" ] || fail "the edits are not in the worktree"
# The worktree a person opens is the daemon's: a linked worktree of the user's repo.
[ -f "$wt/.git" ] || fail "the worktree's .git is not the daemon's pointer file"
[ "$(git -C "$wt" rev-parse --abbrev-ref HEAD)" = "clockwork/edit/$id" ] || fail "adopted HEAD"
[ -z "$(git -C "$wt" status --porcelain)" ] || fail "adopted worktree not clean"
pass "repo run: worktree $CLOCKWORK_HOME/worktrees/<task>/<run> on clockwork/<task>/<run>, sealed and imported"

[ "$(git -C "$T/repo" rev-parse HEAD)" = "$head_before" ] || fail "user HEAD moved"
[ "$(git -C "$T/repo" rev-parse --abbrev-ref HEAD)" = main ] || fail "user branch changed"
[ -z "$(git -C "$T/repo" status --porcelain)" ] || fail "user tree touched: $(git -C "$T/repo" status --porcelain)"
[ ! -e "$T/repo/new.txt" ] || fail "edit leaked into the user's tree"
pass "the user's working tree, index and branch are untouched"

cwctl run show "$id" --json > "$T/show.json"
grep -q '"sandboxed":	true' "$T/show.json" || fail "not sandboxed"
grep -q '"files_changed":	2' "$T/show.json" || fail "diffstat files: $(cat "$T/show.json")"
grep -q '"insertions":	2' "$T/show.json" || fail "diffstat insertions"
grep -q "\"base_commit\":	\"$head_before\"" "$T/show.json" || fail "report base"
grep -q '"exit_reason":	"completed"' "$T/show.json" || fail "report reason"
grep -q '"not_enforced":' "$T/show.json" || fail "report not_enforced"
grep -q '"spent":' "$T/show.json" || fail "report spent"
cwctl run logs "$id" > "$T/log"
grep -q "edited in $wt" "$T/log" || fail "log: $(cat "$T/log")"
[ "$(stat -c %a "$(run_field "$id" log_path)")" = 600 ] || fail "log file mode"
pass "report: sandboxed, exit reason, spent, not_enforced, base/final commit, diffstat 2 files +2; log"

# 2. run logs -f follows a live run to its end.
cwctl task add slow --engine command --prompt 'echo first; while [ ! -e go ]; do sleep 0.05; done; echo second' >/dev/null
id=$(cwctl run start slow)
wait_until 10 "running" run_is "$id" running || fail "slow run did not start"
cwctl run logs -f "$id" > "$T/follow" &
fpid=$!
wait_until 10 "first line followed" grep -q first "$T/follow" || fail "logs -f shows nothing"
kill -0 $fpid || fail "logs -f ended early"
touch "$(run_field "$id" worktree)/go"
wait_until 10 "follower exit" not_alive $fpid || fail "logs -f did not end with the run"
wait $fpid || fail "logs -f exit status"
grep -q second "$T/follow" && grep -q 'run ended: completed' "$T/follow" || fail "follow output"
pass "run logs -f follows the live log until the run ends"

# 3. Concurrency: at most 2 at once, the rest in order.
cwctl task add gate --engine command --prompt 'while [ ! -e go ]; do sleep 0.05; done; echo through' >/dev/null
r1=$(cwctl run start gate); r2=$(cwctl run start gate); r3=$(cwctl run start gate)
running() { [ "$(sql "SELECT count(*) FROM runs WHERE status='running'")" = "$1" ]; }
wait_until 10 "two running" running 2 || fail "two runs should be running"
[ "$(run_status "$r3")" = queued ] || fail "third run: $(run_status "$r3")"
cwctl status | grep -q '2 live, 1 queued' || fail "status: $(cwctl status)"
touch "$(run_field "$r1" worktree)/go"
wait_until 10 "third started" sh -c "[ -n \"\$(sqlite3 '$CLOCKWORK_HOME/clockwork.db' \"SELECT worktree FROM runs WHERE id='$r3'\")\" ]" ||
    fail "third run did not start"
wait_until 10 "third running" run_is "$r3" running || fail "third run not running"
[ "$(run_status "$r1")" = completed ] || fail "first run: $(run_status "$r1")"
[ "$(run_status "$r2")" = running ] || fail "second run: $(run_status "$r2")"
running 2 || fail "more than 2 running"
touch "$(run_field "$r2" worktree)/go" "$(run_field "$r3" worktree)/go"
wait_until 10 "all done" sh -c "[ \"\$(sqlite3 '$CLOCKWORK_HOME/clockwork.db' \"SELECT count(*) FROM runs WHERE status='completed' AND task_id=(SELECT id FROM tasks WHERE name='gate')\")\" = 3 ]" ||
    fail "gate runs did not complete"
order=$(sql "SELECT id FROM runs WHERE task_id=(SELECT id FROM tasks WHERE name='gate') ORDER BY started_at")
[ "$order" = "$(printf '%s\n%s\n%s' "$r1" "$r2" "$r3")" ] || fail "not FIFO: $order"
pass "max_concurrent_runs 2: the third run waits, then starts in order"

# 4. Retention: keep_runs 1 keeps the newest worktree of a task, prunes older merged ones,
# keeps unmerged ones until cwctl gc --force (which keeps their branches).
cwctl task add noop --engine command --repo "$T/repo" --prompt 'true' >/dev/null
n1=$(cwctl run start noop --wait | sed -n 's/^run: *//p')
n2=$(cwctl run start noop --wait | sed -n 's/^run: *//p')
[ ! -e "$(run_field "$n1" worktree)" ] || fail "older merged worktree not pruned"
git -C "$T/repo" show-ref --verify -q "refs/heads/clockwork/noop/$n1" && fail "merged branch kept"
[ -d "$(run_field "$n2" worktree)" ] || fail "newest worktree pruned"
e2=$(cwctl run start edit --wait | sed -n 's/^run: *//p')
[ -d "$wt" ] || fail "unmerged worktree pruned by retention"
cwctl gc | grep -q '0 worktree(s) pruned' || fail "gc pruned an unmerged worktree"
cwctl gc --force --task edit | grep -q "pruned $eid" || fail "gc --force"
[ ! -e "$wt" ] || fail "worktree still there after gc --force"
git -C "$T/repo" show-ref --verify -q "refs/heads/clockwork/edit/$eid" || fail "unmerged branch deleted"
[ -d "$(run_field "$e2" worktree)" ] || fail "newest edit worktree pruned"
[ -z "$(git -C "$T/repo" worktree list --porcelain | grep -F "$wt")" ] || fail "git still lists the worktree"
pass "retention prunes merged worktrees past keep_runs; gc --force prunes unmerged, branches kept"

# 5. Run output is masked as it enters the daemon: the log on disk, logs, events and
# the report (SPEC I4, P1; integration/mask_ingest for secrets split over chunks).
KEY="sk-ant-api03-$(printf 'A%.0s' $(seq 90))"
cwctl task add leaky --engine command --prompt "echo the key is $KEY" >/dev/null
mid=$(cwctl run start leaky --wait | sed -n 's/^run: *//p')
grep -q "$KEY" "$(run_field "$mid" log_path)" && fail "the log on disk holds the key"
grep -q 'the key is sk-ant-\[MASKED\]' "$(run_field "$mid" log_path)" ||
    fail "the log on disk lacks the masked line: $(cat "$(run_field "$mid" log_path)")"
cwctl run logs "$mid" > "$T/masked"
grep -q 'sk-ant-\[MASKED\]' "$T/masked" || fail "log not masked: $(cat "$T/masked")"
grep -q "$KEY" "$T/masked" && fail "the key left the daemon through run logs"
api GET "/api/runs/$mid/events" | grep -q "$KEY" && fail "the key left through events"
api GET "/api/runs/$mid" | grep -q "$KEY" && fail "the key left through the report"
pass "run output is secret-masked as it enters (log on disk, logs, events, report)"

cwctl task add peek --engine command --prompt "cat '$CLOCKWORK_HOME/api.token'; cat '$CLOCKWORK_HOME/clockwork.db' | head -c 16" >/dev/null
pid_=$(cwctl run start peek --wait | sed -n 's/^run: *//p') || true
grep -q "$TOKEN" "$(run_field "$pid_" log_path)" && fail "a sandboxed run read the API token"
grep -q 'SQLite format' "$(run_field "$pid_" log_path)" && fail "a sandboxed run read the store"
pass "a sandboxed run cannot read the API token or the store"

# 6. CW_SANDBOX=off is loud: live log, journal, report.
stop_daemon
CW_SANDBOX=off start_daemon --stop-grace 1
cwctl task add loud --engine command --prompt 'echo unsandboxed' >/dev/null
cwctl run start loud --wait > "$T/loud.out" || fail "loud run failed"
lid=$(sed -n 's/^run: *//p' "$T/loud.out")
grep -q 'sandboxed:    NO' "$T/loud.out" || fail "report does not say sandboxed: false"
cwctl journal --run "$lid" | grep -q sandbox_disabled || fail "no sandbox_disabled journal entry"
cwctl run logs "$lid" | grep -qi 'sandbox' || fail "live log does not say so"
pass "CW_SANDBOX=off: sandboxed false on the report, sandbox_disabled journaled, live log line"

echo "daemon_run: $PASSED passed"
