#!/usr/bin/env bash
# `cwctl run continue RUN` works on RUN's own branch (issue 23), with the real daemon and
# the real cw-runner (command engine, sandboxed: a command task has no conversation, so
# every branch rule is tested here without an engine; test/e2e/run_continue.test.sh does
# the same with the agents).
#
#   same branch  the continued run records RUN's branch and that it continues RUN; the
#                branch's log holds RUN's commit and then its own; RUN's kept worktree
#                is detached (files as they were), the new one is on the branch;
#                `run show` says "continues RUN on BRANCH"
#   dirty        RUN's kept worktree has an uncommitted file: refused, exit 8, nothing
#                changed (no run queued, the worktree still on the branch, the file there)
#   outside      the branch is checked out in the user's own checkout: refused, exit 8
#   live         continuing a run that has not ended: exit 7; a second continue of RUN
#                while the first holds its branch: exit 7, naming the holder; run retry
#                of the live one, and run discard of RUN meanwhile: exit 7
#   moved        a person commits on the branch after the run: the next continue starts
#                from the branch's tip, and its report says it moved and from where
#   merged       the branch already merged into main: the continue is accepted and says
#                so; merging again lands only the new commit
#   under        the branch moves while a continued run works: its import refuses to drop
#                the person's commit (the branch stays, the run's work is quarantined)
#   checkout     a person checks the branch out while a continued run works: its import
#                does not move the branch under their files (work quarantined)
#   gone         the branch discarded: refused, exit 8, saying how to recreate it
. "${CW_SRC:?}/test/integration/daemon_lib.bash" || exit 1
command -v python3 >/dev/null || fail "python3 is needed"

printf 'api_port: 0\nkeep_runs: 20\n' > "$CLOCKWORK_HOME/config.yaml"
start_daemon --stop-grace 1
new_repo "$T/repo"
R=$T/repo
gitu() { git -C "$1" -c user.name=u -c user.email=u@example.com "${@:2}"; }
commit_cmd() { echo "echo $1 > $1.txt && git add $1.txt && git -c user.name=a -c user.email=a@b commit -qm $1"; }
jget() { python3 -c 'import json,sys; v=json.loads(sys.argv[1])
for k in sys.argv[2].split("."): v = v.get(k) if isinstance(v, dict) else None
print("" if v is None else (json.dumps(v) if isinstance(v, bool) else v))' "$1" "$2"; }
report() { sql "SELECT report FROM runs WHERE id='$1'"; }
nruns() { sql "SELECT count(*) FROM runs"; }
refused() {	# refused CODE WHAT ARGS...: cwctl ARGS exits CODE, the message matching WHAT
	local want=$1 what=$2 rc=0
	shift 2
	"$CW_BIN/cwctl" "$@" > "$T/ref.out" 2>&1 || rc=$?
	[ "$rc" = "$want" ] || fail "cwctl $* exited $rc, not $want: $(cat "$T/ref.out")"
	grep -q -- "$what" "$T/ref.out" || fail "cwctl $*: no '$what' in: $(cat "$T/ref.out")"
}
run_wait() {	# run_wait ARGS...: a cwctl run verb with --wait; prints the run id
	cwctl run "$@" --wait > "$T/w.out" 2> "$T/w.err" || fail "run $*: $(cat "$T/w.out" "$T/w.err")"
	sed -n 's/^run: *//p' "$T/w.out"
}

cwctl task add cb --engine command --repo "$R" --mode acceptEdits --prompt "$(commit_cmd one)" >/dev/null ||
    fail "task add"
id1=$(run_wait start cb)
B=clockwork/cb/$id1
wt1=$CLOCKWORK_HOME/worktrees/cb/$id1
one=$(git -C "$R" rev-parse "$B")
[ "$(git -C "$wt1" symbolic-ref HEAD)" = "refs/heads/$B" ] || fail "run 1's kept worktree is not on $B"

# dirty: an uncommitted file in the kept worktree.
echo mine > "$wt1/mine.txt"
n=$(nruns)
refused 8 "uncommitted changes (mine.txt)" run continue "$id1" --prompt true
[ "$(nruns)" = "$n" ] || fail "dirty: a run was queued"
[ "$(git -C "$wt1" symbolic-ref HEAD)" = "refs/heads/$B" ] && [ -f "$wt1/mine.txt" ] ||
    fail "dirty: the kept worktree was changed"
rm "$wt1/mine.txt"
pass "dirty: a kept worktree with uncommitted changes is refused (exit 8), nothing changed"

# outside: the user's own checkout is on the branch.
git -C "$R" checkout -q --ignore-other-worktrees "$B"
refused 8 "is checked out at $R" run continue "$id1" --prompt true
[ "$(nruns)" = "$n" ] || fail "outside: a run was queued"
git -C "$R" checkout -q main
pass "outside: a branch checked out in the user's checkout is refused (exit 8)"

# live: run 2 continues run 1 and waits for a file the test makes.
id2=$(cwctl run continue "$id1" --prompt \
    "while [ ! -e go ]; do sleep 0.1; done; rm go; $(commit_cmd two)" 2> "$T/c2.err") ||
    fail "continue: $(cat "$T/c2.err")"
grep -q "the kept worktree $wt1 was detached from $B" "$T/c2.err" || fail "no detach note: $(cat "$T/c2.err")"
wt2=$CLOCKWORK_HOME/worktrees/cb/$id2
running_in() { run_is "$1" running && [ -d "$2/.git" ]; }
wait_until 30 "run 2 running" running_in "$id2" "$wt2" || fail "run 2 did not start"
refused 7 "run $id2 has not ended yet" run continue "$id2" --prompt true
refused 7 "branch $B is held by run $id2" run continue "$id1" --prompt true
refused 7 "retry" run retry "$id2"
refused 7 "held by run $id2" run discard "$id1"
[ "$(sql "SELECT count(*) FROM runs WHERE continues = '$id1'")" = 1 ] || fail "live: a second holder was queued"
touch "$wt2/go"
wait_until 60 "run 2 ended" run_ended "$id2" || fail "run 2 did not end"
pass "live: a live run (exit 7), a second continue of the same run (exit 7) and a discard under it are refused"

# same branch: both runs list it; its log is run 1's commit, then run 2's.
[ "$(run_status "$id2")" = completed ] || fail "run 2: $(run_status "$id2"): $(report "$id2")"
[ "$(run_field "$id2" branch)" = "$B" ] && [ "$(run_field "$id1" branch)" = "$B" ] ||
    fail "the runs' branches: $(run_field "$id1" branch) $(run_field "$id2" branch)"
[ "$(run_field "$id2" continues)" = "$id1" ] || fail "continues is not recorded"
[ "$(run_field "$id2" base_commit)" = "$one" ] || fail "run 2 did not start from run 1's tip"
[ "$(git -C "$R" log --format=%s -n 2 "$B" | paste -sd,)" = "two,one" ] ||
    fail "the branch's log: $(git -C "$R" log --format=%s "$B")"
[ "$(git -C "$R" rev-parse "$B~1")" = "$one" ] || fail "run 2's commit is not on top of run 1's"
[ -z "$(git -C "$R" branch --list "clockwork/cb/$id2")" ] || fail "run 2 made a branch of its own"
[ "$(git -C "$wt1" rev-parse HEAD)" = "$one" ] && ! git -C "$wt1" symbolic-ref -q HEAD >/dev/null &&
    [ "$(cat "$wt1/one.txt")" = one ] || fail "run 1's kept worktree is not detached at its commit"
[ "$(git -C "$wt2" symbolic-ref HEAD)" = "refs/heads/$B" ] && [ "$(cat "$wt2/two.txt")" = two ] ||
    fail "run 2's kept worktree is not on $B"
cwctl run show "$id2" > "$T/show2" || fail "run show"
grep -q "^continues: *$id1 on $B\$" "$T/show2" || fail "run show: $(cat "$T/show2")"
r=$(report "$id2")
[ "$(jget "$r" git.continues.run)" = "$id1" ] && [ "$(jget "$r" git.continues.moved)" = false ] ||
    fail "report git.continues: $(jget "$r" git)"
grep -q '"worktree_detached"' <<< "$(sql "SELECT kind FROM journal WHERE run_id = '$id1'" | sed 's/.*/"&"/')" ||
    fail "run 1's journal does not say its worktree was detached"
pass "same branch: run 2 continues run 1 on $B, its commit on top of run 1's; run 1's worktree detached, run show says so"

# moved: a person commits on the branch in run 2's kept worktree.
echo person > "$wt2/person.txt"
gitu "$wt2" add person.txt && gitu "$wt2" commit -qm person
ptip=$(git -C "$R" rev-parse "$B")
id3=$(run_wait continue "$id2" --prompt "test -f person.txt && $(commit_cmd three)")
[ "$(run_status "$id3")" = completed ] || fail "run 3: $(report "$id3")"
r=$(report "$id3")
[ "$(run_field "$id3" base_commit)" = "$ptip" ] && [ "$(jget "$r" git.continues.moved)" = true ] &&
    [ "$(jget "$r" git.continues.from_commit)" = "$(run_field "$id2" final_commit)" ] ||
    fail "moved: base $(run_field "$id3" base_commit), report $(jget "$r" git.continues)"
grep -q "the branch moved since that run ended" "$(run_field "$id3" log_path)" || fail "moved: not in the log"
[ "$(git -C "$R" log --format=%s -n 4 "$B" | paste -sd,)" = "three,person,two,one" ] || fail "moved: log"
pass "moved: the continue starts from the branch's current tip (the person's commit), recorded as moved"

# merged: the branch lands in main; a continue goes on top, and lands only its own.
cwctl run merge "$id3" --into main > /dev/null || fail "merge run 3"
id4=$(run_wait continue "$id3" --prompt "$(commit_cmd four)")
grep -q "$B is already merged into main" "$T/w.err" || fail "merged: no note: $(cat "$T/w.err")"
cwctl run merge "$id4" --into main --json > "$T/m4" 2>&1 || fail "merge run 4: $(cat "$T/m4")"
[ "$(git -C "$R" rev-parse main)" = "$(git -C "$R" rev-parse "$B")" ] &&
    [ "$(git -C "$R" log --format=%s -n 1 main)" = four ] || fail "merged: main is not at four"
pass "merged: continuing a merged branch is accepted and said; merging again lands only the new commit"

# under: the branch moves while a continued run works; the import does not drop it.
id5=$(cwctl run continue "$id4" --prompt "while [ ! -e go ]; do sleep 0.1; done; rm go; $(commit_cmd five)") ||
    fail "continue run 4"
wt5=$CLOCKWORK_HOME/worktrees/cb/$id5
wait_until 30 "run 5 running" running_in "$id5" "$wt5" || fail "run 5 did not start"
tree=$(git -C "$R" rev-parse "$B^{tree}")
sneak=$(gitu "$R" commit-tree -p "$B" -m sneak "$tree")
git -C "$R" update-ref "refs/heads/$B" "$sneak"
touch "$wt5/go"
wait_until 60 "run 5 ended" run_ended "$id5" || fail "run 5 did not end"
r=$(report "$id5")
[ "$(git -C "$R" rev-parse "$B")" = "$sneak" ] || fail "under: the person's commit was dropped from $B"
[ "$(jget "$r" git.imported)" = false ] && grep -q "does not contain" <<< "$(jget "$r" git.error)" &&
    [ -n "$(jget "$r" git.quarantine)" ] || fail "under: report git: $(jget "$r" git)"
pass "under: a branch moved during a continued run is not rewound by its import (work quarantined)"

# checkout: a person checks the branch out (a worktree of their own) while a continued
# run works; its import
# must not move the branch under their files (their next commit would undo the run).
id6=$(cwctl run continue "$id4" --prompt "while [ ! -e go ]; do sleep 0.1; done; rm go; $(commit_cmd six)") ||
    fail "continue run 4 again"
wt6=$CLOCKWORK_HOME/worktrees/cb/$id6
wait_until 30 "run 6 running" running_in "$id6" "$wt6" || fail "run 6 did not start"
git -C "$R" worktree add -q "$T/mine" "$B"
held=$(git -C "$R" rev-parse "$B")
touch "$wt6/go"
wait_until 60 "run 6 ended" run_ended "$id6" || fail "run 6 did not end"
r=$(report "$id6")
[ "$(git -C "$R" rev-parse "$B")" = "$held" ] && [ -z "$(git -C "$T/mine" status --porcelain)" ] ||
    fail "checkout: the branch moved under the person's worktree ($(git -C "$T/mine" status --porcelain | paste -sd ' '))"
[ "$(jget "$r" git.imported)" = false ] && grep -q "is checked out" <<< "$(jget "$r" git.error)" ||
    fail "checkout: report git: $(jget "$r" git)"
git -C "$R" worktree remove "$T/mine"
pass "checkout: a branch a person checked out during a continued run is not moved by its import"

# gone: the branch discarded; continue refuses and says how to bring it back. Run 4
# was merged, and a merged run is not discarded as well (issue 27: its end state is
# final): run 6, which worked on the same branch and was not merged, is.
cwctl run discard "$id6" > /dev/null || fail "discard"
n=$(nruns)
refused 8 "git -C $R branch $B" run continue "$id4" --prompt true
[ "$(nruns)" = "$n" ] || fail "gone: a run was queued"
pass "gone: a discarded branch is refused (exit 8), saying how to recreate it"
echo "all $PASSED checks passed"
