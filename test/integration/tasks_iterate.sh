#!/usr/bin/env bash
# Iterating on tasks, end to end with the real daemon and the real cw-runner (command
# engine, sandboxed): `task edit` changes a task in place and keeps its history; a
# run starts from the repository's default branch (not whatever the user checked
# out), or from the task's --base, and the report records which; `run retry` repeats
# a run; `run continue` follows up on the earlier run's own branch; `task rm`
# archives, so the runs stay readable and the name is free again; `gc` removes the
# worktrees and branches of an archived task's runs past the retention.
. "${CW_SRC:?}/test/integration/daemon_lib.bash" || exit 1
command -v python3 >/dev/null || fail "python3 is needed"

printf 'api_port: 0\nkeep_runs: 10\n' > "$CLOCKWORK_HOME/config.yaml"
start_daemon --stop-grace 1
gitc() { git -C "$1" -c user.name=t -c user.email=t@example.com "${@:2}"; }
# grep that reads all its input: with pipefail, grep -q quitting early could fail the
# writer with SIGPIPE.
grep_all() { grep "$@" >/dev/null; }
jfield() { python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }
run_wait() {	# run_wait ARGS...: a cwctl run verb with --wait; prints the run id
	cwctl run "$@" --wait > "$T/w.out" 2>&1 || fail "run $*: $(cat "$T/w.out")"
	sed -n 's/^run: *//p' "$T/w.out"
}

new_repo "$T/repo"
main_tip=$(git -C "$T/repo" rev-parse main)
gitc "$T/repo" checkout -q -b feature
echo feature > "$T/repo/feature.txt"
gitc "$T/repo" add feature.txt && gitc "$T/repo" commit -q -m feature
feature_tip=$(git -C "$T/repo" rev-parse feature)
# The user is on yet another branch: no run may start from it silently.
gitc "$T/repo" checkout -q -b scratch main
echo scratch > "$T/repo/scratch.txt"
gitc "$T/repo" add scratch.txt && gitc "$T/repo" commit -q -m scratch

# 1. The default base: the repository's default branch, resolved at the run's start.
cwctl task add it --engine command --repo "$T/repo" --mode acceptEdits --prompt 'echo one > out.txt' >/dev/null
id1=$(run_wait start it)
[ "$(run_field "$id1" base_commit)" = "$main_tip" ] || fail "base is not main: $(run_field "$id1" base_commit)"
cwctl run show "$id1" --json > "$T/s1.json"
grep -q '"base_ref":	"refs/heads/main"' "$T/s1.json" || fail "the report does not name the base"
[ "$(git -C "$T/repo" show "clockwork/it/$id1:out.txt")" = one ] || fail "run 1's work"
[ "$(git -C "$T/repo" rev-parse --abbrev-ref HEAD)" = scratch ] || fail "the user's branch moved"
pass "a run starts from the default branch (main), not the checked-out branch; the report names refs/heads/main"

# 2. task edit: prompt and base changed in place, the old definition in the history.
cwctl task edit it --prompt 'echo two > out.txt; ls feature.txt' --base feature --dollars 1.5 >/dev/null ||
    fail "task edit"
row=$(sql "SELECT prompt, base, budget_dollars FROM tasks WHERE name = 'it'")
[ "$row" = "echo two > out.txt; ls feature.txt|feature|1.5" ] || fail "edited: $row"
cwctl task history it --json > "$T/h.json"
[ "$(jfield "$T/h.json" '[h["definition"]["prompt"] for h in j["history"]]')" = "['echo one > out.txt']" ] ||
    fail "history: $(cat "$T/h.json")"
case "$(jfield "$T/h.json" 'j["history"][0]["actor"]')" in "cwctl uid=$(id -u) pid="*) ;; *) fail "history actor" ;; esac
cwctl run show "$id1" > /dev/null || fail "the earlier run is gone after an edit"
id2=$(run_wait start it)
[ "$(run_field "$id2" base_commit)" = "$feature_tip" ] || fail "--base feature not used"
cwctl run show "$id2" --json > "$T/s2.json"
grep -q '"base_ref":	"refs/heads/feature"' "$T/s2.json" || fail "report base_ref feature"
[ "$(git -C "$T/repo" show "clockwork/it/$id2:out.txt")" = two ] || fail "the edited prompt did not run"
if cwctl task edit it --base 'bad..name' >/dev/null 2>&1; then fail "a bad base was accepted"; fi
cwctl task edit it --base default >/dev/null
[ -z "$(sql "SELECT base FROM tasks WHERE name = 'it'")" ] || fail "--base default"
cwctl task edit it --base feature >/dev/null
pass "task edit changes prompt, budget and base in place with history; --base feature is where the run starts"

# 3. retry repeats the run; continue follows up on the earlier run's own branch.
id3=$(run_wait retry "$id2")
[ "$id3" != "$id2" ] || fail "retry reused the id"
[ "$(run_field "$id3" parent_run)" = "$id2" ] || fail "retry's parent"
[ "$(run_field "$id3" base_commit)" = "$feature_tip" ] && [ "$(run_field "$id3" status)" = completed ] || fail "retry"
final2=$(run_field "$id2" final_commit)
id4=$(run_wait continue "$id2" --prompt 'cat out.txt > seen.txt; echo three >> out.txt')
[ "$(run_field "$id4" parent_run)" = "$id2" ] || fail "continue's parent"
[ "$(run_field "$id4" base_commit)" = "$final2" ] || fail "continue did not start from run 2's branch"
[ "$(run_field "$id4" prompt)" = 'cat out.txt > seen.txt; echo three >> out.txt' ] || fail "continue's prompt"
[ "$(run_field "$id4" branch)" = "clockwork/it/$id2" ] || fail "continue is not on run 2's branch"
[ "$(git -C "$T/repo" show "clockwork/it/$id2:seen.txt")" = two ] || fail "the follow-up did not see run 2's work"
[ "$(sql "SELECT prompt FROM tasks WHERE name = 'it'")" = "echo two > out.txt; ls feature.txt" ] || fail "continue changed the task"
if cwctl run continue "$id4" >/dev/null 2>&1; then fail "continue without a prompt"; fi
[ "$(sql "SELECT count(*) FROM audit WHERE action IN ('run.retry', 'run.continue')")" = 2 ] || fail "audit"
pass "run retry repeats a run; run continue works on the earlier run's branch with the follow-up prompt"

# 4. task rm archives: the runs stay readable, the name is free, no more runs.
cwctl task rm it >/dev/null || fail "task rm"
cwctl run show "$id1" --json > "$T/s1b.json" || fail "a run of a removed task is unreachable"
grep -q '"task":	"it (archived' "$T/s1b.json" || fail "archived name: $(grep '"task"' "$T/s1b.json")"
if cwctl task list | grep_all '^it '; then fail "an archived task is listed"; fi
if cwctl run retry "$id1" >/dev/null 2>&1; then fail "an archived task ran again"; fi
cwctl task add it --engine command --prompt 'echo new' >/dev/null || fail "the name is not free again"
pass "task rm archives: its runs stay readable, it is not listed and runs no more, its name is free"

# 5. gc and an archived task's runs: a merged branch goes with its worktree; the rest
#    wait for the retention (30 days by default); --force removes their worktrees but
#    keeps the branches; past the retention the branches go too.
has_wt() { [ -d "$CLOCKWORK_HOME/worktrees/it/$1" ]; }
# Run 4 continued run 2 on run 2's branch (issue 23): its branch is run 2's.
branch_of() { sql "SELECT branch FROM runs WHERE id = '$1'"; }
has_branch() { git -C "$T/repo" rev-parse -q --verify "refs/heads/$(branch_of "$1")" >/dev/null; }
for r in "$id1" "$id2" "$id3" "$id4"; do
	has_wt "$r" && has_branch "$r" || fail "worktree or branch of $r missing before gc"
done
gitc "$T/repo" merge -q --no-edit "clockwork/it/$id1" || fail "merge"
cwctl gc >/dev/null || fail "gc"
! has_wt "$id1" && ! has_branch "$id1" || fail "the merged run's worktree or branch was kept"
for r in "$id2" "$id3" "$id4"; do
	has_wt "$r" && has_branch "$r" || fail "gc removed unmerged $r inside the retention"
done
cwctl gc --force >/dev/null || fail "gc --force"
for r in "$id2" "$id3" "$id4"; do
	! has_wt "$r" && has_branch "$r" || fail "--force: worktree kept or branch deleted for $r"
done
printf 'api_port: 0\nkeep_runs: 10\narchive_retention_days: 0\n' > "$CLOCKWORK_HOME/config.yaml"
kill -HUP "$DPID"
wait_until 5 "reload" grep -q 'reload: ' "$T/daemon.out" || fail "SIGHUP did not reload"
wait_until 10 "gc past the retention" sh -c "\"$CW_BIN/cwctl\" gc >/dev/null &&
    ! git -C '$T/repo' rev-parse -q --verify 'refs/heads/$(branch_of "$id4")' >/dev/null" ||
    fail "past the retention the branches were kept"
for r in "$id2" "$id3" "$id4"; do
	! has_branch "$r" || fail "branch of $r kept past the retention"
done
[ "$(git -C "$T/repo" rev-parse feature)" = "$feature_tip" ] || fail "gc touched the user's branches"
[ "$(git -C "$T/repo" rev-parse main)" = "$main_tip" ] || fail "gc touched main"
cwctl run show "$id1" > /dev/null || fail "gc made a run unreachable"
pass "gc: an archived task's merged run goes at once, the rest after the retention (--force: worktrees only); runs stay readable"
echo "all $PASSED checks passed"
