#!/usr/bin/env bash
# Review and land a run's work through cwctl and the real cw-runner (command engine,
# sandboxed): run diff against the recorded base (and the export's Diff section the
# same, never a file that is not on the branch); run merge fast-forward, refused on a
# dirty target checkout, a conflict reported by file with nothing half-merged, a merge
# commit, --ff-only refused, --squash, --into; run discard; journal and audit entries.
. "${CW_SRC:?}/test/integration/daemon_lib.bash" || exit 1

start_daemon --stop-grace 1
new_repo "$T/repo"
R=$T/repo
gitu() { git -C "$R" -c user.name=u -c user.email=u@example.com "$@"; }
base=$(git -C "$R" rev-parse HEAD)

run_task() {	# run_task NAME PROMPT: a finished run's id
	cwctl task add "$1" --engine command --repo "$R" --mode acceptEdits --prompt "$2" >/dev/null
	cwctl run start "$1" --wait > "$T/wait.out" || fail "run $1: $(cat "$T/wait.out")"
	sed -n 's/^run: *//p' "$T/wait.out"
}

# 1. diff: exactly the branch against the base, in git's own format.
id=$(run_task edit 'echo changed >> file.txt; echo new > new.txt; git add new.txt; git -c user.name=a -c user.email=a@b commit -qm "add new"')
br=clockwork/edit/$id
cwctl run diff "$id" > "$T/diff" || fail "run diff"
git -C "$R" diff "$base" "$br" > "$T/gitdiff"
diff -u "$T/gitdiff" "$T/diff" >&2 || fail "run diff is not git diff base..branch"
grep -q '^+changed' "$T/diff" && grep -q '^+++ b/new.txt' "$T/diff" || fail "diff content"
cwctl run diff "$id" --stat > "$T/stat" || fail "run diff --stat"
grep -q 'file.txt | 1 +' "$T/stat" && grep -q '2 files changed, 2 insertions' "$T/stat" ||
    fail "stat: $(cat "$T/stat")"
cwctl run diff "$id" --json > "$T/diff.json"
grep -q '"path":	"new.txt"' "$T/diff.json" && grep -q '"status":	"added"' "$T/diff.json" ||
    fail "diff --json files: $(cat "$T/diff.json")"
# Not a terminal: no colour, no pager. On one: through $PAGER, coloured unless NO_COLOR.
! grep -q $'\033' "$T/diff" || fail "colour when not on a terminal"
if command -v script >/dev/null; then
	printf '#!/bin/sh\necho PAGED; cat\n' > "$T/pager"; chmod +x "$T/pager"
	PAGER="$T/pager" script -qec "$CW_BIN/cwctl run diff $id" /dev/null > "$T/tty" 2>&1 ||
	    fail "run diff on a terminal: $(cat "$T/tty")"
	grep -q PAGED "$T/tty" && grep -q $'\033\[32m+changed' "$T/tty" || fail "pager/colour: $(cat -v "$T/tty" | head)"
	NO_COLOR=1 PAGER="$T/pager" script -qec "$CW_BIN/cwctl run diff $id" /dev/null > "$T/tty" 2>&1
	! grep -q $'\033\[32m' "$T/tty" || fail "NO_COLOR ignored"
fi
pass "run diff (patch, --stat, --json) is the branch against the run's base, as git shows it; paged and coloured on a terminal"

# The export's Diff section is the branch's diff: a file someone leaves uncommitted
# in the run's worktree is not on the branch and not in the export.
wt=$(run_field "$id" worktree)
echo stray > "$wt/stray-uncommitted.txt"
cwctl run export "$id" -o "$T/pow.html" 2>/dev/null || fail "export"
grep -q 'new.txt' "$T/pow.html" || fail "export lacks the branch's file"
! grep -q 'stray-uncommitted' "$T/pow.html" || fail "export shows a file that is not on the branch"
rm -f "$wt/stray-uncommitted.txt"
pass "the export's Diff section is the branch's diff from its base"

# 2. A dirty target checkout is refused, nothing changed.
echo local-edit >> "$R/file.txt"
set +e; cwctl run merge "$id" > "$T/m.out" 2> "$T/m.err"; rc=$?; set -e
[ $rc = 1 ] || fail "dirty merge exit $rc"
grep -q 'uncommitted changes (file.txt)' "$T/m.err" || fail "dirty message: $(cat "$T/m.err")"
[ "$(git -C "$R" rev-parse HEAD)" = "$base" ] || fail "HEAD moved on a refused merge"
[ ! -e "$R/new.txt" ] || fail "a refused merge wrote files"
git -C "$R" checkout -q -- file.txt
pass "merge into a dirty checkout is refused, naming the file; nothing is written"

# 3. A clean fast-forward.
cwctl run merge "$id" > "$T/m.out" || fail "merge: $(cat "$T/m.out")"
grep -q "$br fast-forward into main" "$T/m.out" || fail "merge output: $(cat "$T/m.out")"
[ "$(git -C "$R" rev-parse HEAD)" = "$(git -C "$R" rev-parse "$br")" ] || fail "HEAD not at the branch"
[ -f "$R/new.txt" ] && grep -q changed "$R/file.txt" || fail "working tree not updated"
[ -z "$(git -C "$R" status --porcelain)" ] || fail "tree not clean: $(git -C "$R" status --porcelain)"
set +e; cwctl run merge "$id" > "$T/m2.out" 2> "$T/m2.err"; rc=$?; set -e
[ $rc = 3 ] && grep -q "run $id was merged into main at .* UTC (fast-forward)" "$T/m2.err" ||
    fail "second merge: exit $rc $(cat "$T/m2.err")"
cwctl journal --run "$id" --json | grep -q '"kind":	"run_merged"' || fail "journal: no run_merged"
cwctl journal --audit --json | grep -q '"action":	"run.merge"' || fail "audit: no run.merge"
pass "merge fast-forwards the checked-out branch and its files; journal and audit record it; a second merge is refused (exit 3)"

# 4. A conflict is reported by file; nothing is half-merged.
id2=$(run_task clash 'echo from-run > file.txt')
echo from-user > "$R/file.txt"; gitu commit -qam "user edit"
head=$(git -C "$R" rev-parse HEAD)
set +e; cwctl run merge "$id2" 2> "$T/m.err"; rc=$?; set -e
[ $rc = 1 ] || fail "conflict exit $rc"
grep -q 'conflicts in 1 file(s); nothing was changed: file.txt' "$T/m.err" || fail "conflict message: $(cat "$T/m.err")"
[ "$(git -C "$R" rev-parse HEAD)" = "$head" ] || fail "HEAD moved on a conflict"
[ "$(cat "$R/file.txt")" = from-user ] || fail "file.txt half-merged: $(cat "$R/file.txt")"
[ -z "$(git -C "$R" status --porcelain)" ] || fail "conflict left changes: $(git -C "$R" status --porcelain)"
[ ! -e "$R/.git/MERGE_HEAD" ] || fail "MERGE_HEAD left behind"
cwctl journal --audit --json | grep -q '"action":	"run.merge_refused"' || fail "audit: no refusal"
pass "a conflicting merge names the file and leaves HEAD, index and files as they were"

# 5. Diverged but clean: --ff-only refuses, a merge commit lands it.
id3=$(run_task other 'echo other > other.txt')
echo more >> "$R/new.txt"; gitu commit -qam "user moves on"
head=$(git -C "$R" rev-parse HEAD)
set +e; cwctl run merge "$id3" --ff-only 2> "$T/m.err"; rc=$?; set -e
[ $rc = 1 ] && grep -q 'cannot be fast-forwarded' "$T/m.err" || fail "ff-only: $rc $(cat "$T/m.err")"
[ "$(git -C "$R" rev-parse HEAD)" = "$head" ] || fail "ff-only moved HEAD"
cwctl run merge "$id3" > "$T/m.out" || fail "merge commit"
grep -q ' merged into main' "$T/m.out" || fail "merge output: $(cat "$T/m.out")"
[ "$(git -C "$R" rev-list --parents -1 HEAD | wc -w)" = 3 ] || fail "not a merge commit"
[ "$(git -C "$R" rev-parse HEAD^1)" = "$head" ] || fail "first parent"
[ -f "$R/other.txt" ] && [ -z "$(git -C "$R" status --porcelain)" ] || fail "merged tree"
pass "--ff-only refuses a diverged branch; a plain merge makes a merge commit"

# 6. --squash into another branch (not checked out: only its ref moves).
gitu branch side "$base"
id4=$(run_task sq 'echo a > sq1.txt; echo b > sq2.txt')
cwctl run merge "$id4" --squash --into side > "$T/m.out" || fail "squash"
grep -q 'squashed into side' "$T/m.out" || fail "squash output: $(cat "$T/m.out")"
[ "$(git -C "$R" rev-list --parents -1 side | wc -w)" = 2 ] || fail "squash has one parent"
git -C "$R" show side:sq2.txt | grep -q b || fail "squash content"
[ ! -e "$R/sq1.txt" ] || fail "--into side touched the checkout"
pass "--squash --into BRANCH: one commit on a branch that is not checked out"

# 7. discard: branch and worktree go; diff then says so.
wt=$(run_field "$id2" worktree)
[ -d "$wt" ] || fail "no worktree to discard"
cwctl run discard "$id2" > "$T/d.out" || fail "discard"
! git -C "$R" rev-parse -q --verify "clockwork/clash/$id2" >/dev/null || fail "branch kept"
[ ! -e "$wt" ] || fail "worktree kept"
set +e; cwctl run diff "$id2" 2> "$T/d.err"; rc=$?; set -e
[ $rc = 1 ] && grep -q 'discarded' "$T/d.err" || fail "diff after discard: $rc $(cat "$T/d.err")"
cwctl journal --audit --json | grep -q '"action":	"run.discard"' || fail "audit: no discard"
pass "discard removes the branch and the worktree, audited"

# 8. Usage: a live run cannot be merged; bad options exit 2; --help exits 0.
cwctl task add live --engine command --repo "$R" --prompt 'while [ ! -e go ]; do sleep 0.05; done' >/dev/null
lid=$(cwctl run start live)
wait_until 15 running run_is "$lid" running || fail "live run did not start"
set +e; cwctl run merge "$lid" 2> "$T/l.err"; rc=$?; set -e
[ $rc = 1 ] && grep -q 'still running' "$T/l.err" || fail "live merge: $rc $(cat "$T/l.err")"
touch "$(run_field "$lid" worktree)/go"
wait_until 15 ended run_ended "$lid" || fail "live run did not end"
set +e; cwctl run merge "$id" --squash --ff-only 2>/dev/null; rc=$?; set -e
[ $rc = 2 ] || fail "--squash --ff-only exit $rc"
set +e; cwctl run diff 2>/dev/null; rc=$?; set -e
[ $rc = 2 ] || fail "diff without a run exit $rc"
cwctl run merge --help | grep -q 'merge RUN \[--into BRANCH\]' || fail "merge --help"
pass "a live run is not merged; usage errors exit 2; --help prints to stdout"
