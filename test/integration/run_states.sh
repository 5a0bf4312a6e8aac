#!/usr/bin/env bash
# A run's review end states (issue 27) through cwctl, the real cw-runner (command
# engine, sandboxed) and the daemon's store: merge once (a second merge, a land or a
# discard after it refused with exit 3, saying when it was merged); land (merged, then
# its branch and worktree gone); discard then merge refused; run push to a bare local
# remote (the branch appears there, recorded beside the state), --pr through gh when
# installed, else the compare page of a GitHub remote; runs --review lists only what
# waits for a person; every state is journaled and survives a daemon restart.
. "${CW_SRC:?}/test/integration/daemon_lib.bash" || exit 1

start_daemon --stop-grace 1
new_repo "$T/repo"
R=$T/repo

run_task() {	# run_task NAME PROMPT: a finished run's id
	cwctl task add "$1" --engine command --repo "$R" --mode acceptEdits --prompt "$2" >/dev/null
	cwctl run start "$1" --wait > "$T/wait.out" || fail "run $1: $(cat "$T/wait.out")"
	sed -n 's/^run: *//p' "$T/wait.out"
}
refused() {	# refused EXPECTED-PATTERN CWCTL-ARGS...: exit 3 and the message
	local want=$1; shift
	set +e; cwctl "$@" > "$T/r.out" 2> "$T/r.err"; local rc=$?; set -e
	[ $rc = 3 ] || fail "cwctl $*: exit $rc, want 3: $(cat "$T/r.err")"
	grep -Eq "$want" "$T/r.err" || fail "cwctl $*: message: $(cat "$T/r.err")"
}
# The run's "review" object, compact (to its first '}': a push record's own end).
review_of() { cwctl run show "$1" --json | tr -d '\n\t' | sed -n 's/.*"review":\({[^}]*}\|null\).*/\1/p'; }
WHEN='at 20[0-9]{2}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2} UTC'

# 1. Merge once; every second act on it is refused, naming the state and when.
a=$(run_task one 'echo a > a.txt')
[ "$(review_of "$a")" = '{"state":"waiting","at":null,"detail":"","pushed":null}' ] ||
    fail "a finished run's review: $(review_of "$a")"
cwctl run merge "$a" > "$T/m.out" || fail "merge: $(cat "$T/m.out")"
refused "^cwctl: run $a was merged into main $WHEN \(fast-forward\)$" run merge "$a"
refused "run $a was merged into main $WHEN" run land "$a"
refused "run $a was merged into main $WHEN" run discard "$a"
read -r code body < <(api POST "/api/runs/$a/merge" '{}')
[ "$code" = 409 ] && echo "$body" | grep -q '"code":"already_merged"' || fail "API second merge: $code $body"
review_of "$a" | grep -Eq '^\{"state":"merged","at":"20[0-9-]{8}T[0-9:.]{12}Z","detail":"into main, fast-forward","pushed":null}$' ||
    fail "merged review: $(review_of "$a")"
git -C "$R" rev-parse -q --verify "clockwork/one/$a" >/dev/null || fail "merge deleted the branch"
[ "$(sql "SELECT count(*) FROM journal WHERE run_id = '$a' AND kind = 'run_merged'")" = 1 ] ||
    fail "journal: run_merged not once"
[ "$(sql "SELECT count(*) FROM audit WHERE target = '$a' AND action = 'run.merge_refused'")" -ge 2 ] ||
    fail "audit: the refusals are not recorded"
pass "a second merge (and a land or discard after a merge) is refused, exit 3, saying when it was merged; journaled once"

# 2. Land: merged, then the branch and the worktree are gone.
b=$(run_task two 'echo b > b.txt')
wt=$(run_field "$b" worktree)
[ -d "$wt" ] || fail "no worktree before land"
cwctl run land "$b" > "$T/l.out" || fail "land: $(cat "$T/l.out")"
grep -q "fast-forward into main" "$T/l.out" && grep -q "landed run $b" "$T/l.out" || fail "land output: $(cat "$T/l.out")"
[ -f "$R/b.txt" ] || fail "land did not merge"
! git -C "$R" rev-parse -q --verify "clockwork/two/$b" >/dev/null || fail "land kept the branch"
[ ! -e "$wt" ] || fail "land kept the worktree"
! git -C "$R" worktree list | grep -q "$b" || fail "git still lists the worktree"
refused "run $b was landed into main $WHEN \(fast-forward; branch clockwork/two/$b and its worktree removed\)" run merge "$b"
refused "run $b was landed into main $WHEN" run discard "$b"
refused "run $b was landed into main $WHEN" run push "$b"
[ "$(sql "SELECT count(*) FROM journal WHERE run_id = '$b' AND kind = 'run_landed'")" = 1 ] || fail "journal: no run_landed"
[ "$(sql "SELECT count(*) FROM audit WHERE target = '$b' AND action = 'run.land'")" = 1 ] || fail "audit: no run.land"
pass "land merges, then deletes the run's branch and worktree; nothing after it is accepted"

# 3. Discard, then merge refused.
c=$(run_task three 'echo c > c.txt')
cwctl run discard "$c" >/dev/null || fail "discard"
refused "run $c was discarded $WHEN \(branch clockwork/three/$c and its worktree removed\)" run merge "$c"
refused "run $c was discarded $WHEN" run land "$c"
[ ! -e "$R/c.txt" ] || fail "a refused merge after discard wrote files"
pass "a merge after a discard is refused, exit 3, saying when it was discarded"

# 4. Push to a bare local remote: the default remote (origin), the branch appears there.
d=$(run_task four 'echo d > d.txt')
br=clockwork/four/$d
git init -q --bare "$T/remote.git"
git -C "$R" remote add origin "$T/remote.git"
cwctl run push "$d" > "$T/p.out" 2> "$T/p.err" || fail "push: $(cat "$T/p.out" "$T/p.err")"
grep -q "pushed $br to origin" "$T/p.out" || fail "push output: $(cat "$T/p.out")"
[ "$(git ls-remote "$T/remote.git" "refs/heads/$br" | cut -f1)" = "$(git -C "$R" rev-parse "$br")" ] ||
    fail "the branch is not on the remote: $(git ls-remote "$T/remote.git")"
review_of "$d" | grep -Eq "^\{\"state\":\"waiting\",\"at\":null,\"detail\":\"\",\"pushed\":\{\"remote\":\"origin\",\"branch\":\"$br\",\"at\":\"20[0-9-]{8}T[0-9:.]{12}Z\"}$" ||
    fail "pushed review: $(review_of "$d")"
[ "$(sql "SELECT count(*) FROM journal WHERE run_id = '$d' AND kind = 'run_pushed'")" = 1 ] || fail "journal: no run_pushed"
# A push git refuses is not recorded.
set +e; cwctl run push "$d" --remote nosuch > "$T/p.out" 2> "$T/p.err"; rc=$?; set -e
[ $rc = 1 ] && grep -q 'git push to nosuch failed: nothing recorded' "$T/p.err" || fail "failed push: $rc $(cat "$T/p.err")"
[ "$(run_field "$d" pushed_remote)" = origin ] || fail "a failed push was recorded"
set +e; cwctl run push "$d" --remote --pr 2>/dev/null; rc=$?; set -e
[ $rc = 2 ] || fail "--remote --pr exit $rc"
pass "run push sends the branch to the default remote (there by git ls-remote), recorded beside the state; a failed push is not"

# 5. --pr without gh or glab: the compare page of the remote's (GitHub) URL; pushed to
# the file its push URL names. With a gh on PATH, gh pr create is run for the branch.
git init -q --bare "$T/remote2.git"
git -C "$R" remote add gh https://github.com/o/r.git
git -C "$R" remote set-url --push gh "$T/remote2.git"
mkdir -p "$T/bin"; ln -s "$(command -v git)" "$T/bin/git"
PATH="$T/bin" cwctl run push "$d" --remote gh --pr > "$T/p.out" 2> "$T/p.err" ||
    fail "push --pr: $(cat "$T/p.out" "$T/p.err")"
grep -qx "open a pull request: https://github.com/o/r/compare/$br?expand=1" "$T/p.out" ||
    fail "compare URL: $(cat "$T/p.out")"
git ls-remote "$T/remote2.git" | grep -q "refs/heads/$br" || fail "not pushed to the push URL"
[ "$(run_field "$d" pushed_remote)" = gh ] || fail "the second push is not the record"
printf '#!/bin/sh\necho "gh $*" > "%s/gh.args"; pwd >> "%s/gh.args"\n' "$T" "$T" > "$T/bin/gh"; chmod +x "$T/bin/gh"
PATH="$T/bin" cwctl run push "$d" --remote gh --pr > "$T/p.out" 2> "$T/p.err" || fail "push --pr with gh: $(cat "$T/p.err")"
[ "$(head -n 1 "$T/gh.args")" = "gh pr create --head $br --fill" ] && [ "$(sed -n 2p "$T/gh.args")" = "$R" ] ||
    fail "gh was not run for the branch in the repository: $(cat "$T/gh.args")"
! grep -q 'open a pull request' "$T/p.out" || fail "the compare URL printed although gh ran"
pass "--pr: gh pr create when gh is installed, else the compare page derived from a GitHub remote URL"

# 5b. --pr through glab pushes nothing of its own. glab mr create --fill also pushes
# HEAD, the checkout the person is on, to the MR's source branch (gitlab-org/cli
# MR 4070: "--fill always pushes the source branch", its test records "git push origin
# HEAD:<source>"); a person on a branch of their own ahead of the run's would have
# their unreviewed commits sent as the run's. This glab does what glab does with
# --fill or --push; the remote must keep the run's tip.
git init -q --bare "$T/remote3.git"
git -C "$R" remote add gl https://gitlab.com/g/p.git
git -C "$R" remote set-url --push gl "$T/remote3.git"
rm -f "$T/bin/gh"
cat > "$T/bin/glab" <<EOS
#!/bin/sh
echo "glab \$*" > "$T/glab.args"
src=
while [ \$# -gt 0 ]; do
	case \$1 in
	--source-branch) src=\$2; shift ;;
	--fill|-f|--push|--push=true) push=1 ;;
	esac
	shift
done
[ -z "\$push" ] || git push -q gl "HEAD:refs/heads/\$src"
EOS
chmod +x "$T/bin/glab"
git -C "$R" checkout -q -b mine "$br"
echo private > "$R/private.txt"; git -C "$R" add private.txt; git -C "$R" -c user.name=t -c user.email=t@example.com commit -q -m 'the person: not for the remote'
PATH="$T/bin" cwctl run push "$d" --remote gl --pr > "$T/p.out" 2> "$T/p.err" || fail "push --pr with glab: $(cat "$T/p.err")"
[ "$(git ls-remote "$T/remote3.git" "refs/heads/$br" | cut -f1)" = "$(git -C "$R" rev-parse "$br")" ] ||
    fail "glab pushed the person's checkout as the run's branch: $(cat "$T/glab.args")"
grep -q -- "--source-branch $br" "$T/glab.args" && grep -q -- "--title=$(git -C "$R" log -1 --format=%s "$br") " "$T/glab.args" ||
    fail "glab was not asked for the run's branch with its subject: $(cat "$T/glab.args")"
git -C "$R" checkout -q main
rm -f "$T/bin/glab"
pass "--pr: glab mr create for the branch, titled by its commit, pushing nothing (not the person's HEAD)"

# 6. The default remote is the upstream remote of the branch the repository is on.
e=$(run_task five 'echo e > e.txt')
git init -q --bare "$T/up.git"
git -C "$R" remote add up "$T/up.git"
git -C "$R" config branch.main.remote up
cwctl run push "$e" > "$T/p.out" 2>/dev/null || fail "push to the upstream remote"
grep -q "pushed clockwork/five/$e to up" "$T/p.out" || fail "default remote: $(cat "$T/p.out")"
git ls-remote "$T/up.git" | grep -q "refs/heads/clockwork/five/$e" || fail "not on the upstream remote"
! git ls-remote "$T/remote.git" | grep -q "clockwork/five/" || fail "pushed to origin as well"
git -C "$R" config --unset branch.main.remote
pass "run push's default remote is the checked-out branch's upstream remote"

# 7. The lists: runs --review only what waits for a person; the state column.
cwctl runs --review > "$T/rv.out" || fail "runs --review"
grep -q "^$d " "$T/rv.out" && grep -q "^$e " "$T/rv.out" || fail "runs --review lacks waiting runs: $(cat "$T/rv.out")"
! grep -Eq "^($a|$b|$c) " "$T/rv.out" || fail "runs --review shows acted-on runs: $(cat "$T/rv.out")"
cwctl runs > "$T/all.out"
grep -q '^RUN .* REVIEW ' "$T/all.out" || fail "no REVIEW column: $(head -n 1 "$T/all.out")"
for x in "$a merged" "$b landed" "$c discarded" "$d waiting+pushed" "$e waiting+pushed"; do
	set -- $x
	grep "^$1 " "$T/all.out" | grep -qF " $2 " || fail "runs: $1 not $2: $(grep "^$1" "$T/all.out")"
done
[ "$(cwctl run list --review --json | grep -c '"state":')" = 2 ] || fail "run list --review --json"
cwctl run show "$a" | grep -Eq '^review: +merged at 20.*Z \(into main, fast-forward\)$' ||
    fail "run show: $(cwctl run show "$a" | grep review)"
cwctl run show "$e" | grep -q "^review: *waiting (cwctl run diff|merge|land|push|discard $e)" &&
    cwctl run show "$e" | grep -q "^pushed: *clockwork/five/$e to up at 20" || fail "run show: $(cwctl run show "$e")"
read -r code body < <(api GET "/api/runs?review=maybe")
[ "$code" = 400 ] || fail "review=maybe: $code"
pass "runs --review lists only ended runs no one merged, landed or discarded; runs shows each state"

# 8. The states survive a restart.
stop_daemon
start_daemon --stop-grace 1
refused "run $a was merged into main $WHEN" run merge "$a"
refused "run $c was discarded $WHEN" run merge "$c"
cwctl runs --review > "$T/rv2.out"
diff <(cut -d' ' -f1 "$T/rv.out") <(cut -d' ' -f1 "$T/rv2.out") >&2 || fail "runs --review changed over a restart"
review_of "$d" | grep -q '"pushed":{"remote":"gl"' || fail "the push record did not survive"
pass "states and the push record survive a daemon restart"

# 9. A remote named by a URL with a password in it is stored and journaled masked.
read -r code body < <(api POST "/api/runs/$d/pushed" '{"remote":"https://bob:hunter2pass@example.com/o/r.git"}')
[ "$code" = 200 ] && echo "$body" | grep -q '"remote":"https://bob:\[MASKED\]@example.com/o/r.git"' ||
    fail "pushed with a URL: $code $body"
[ "$(sql "SELECT (SELECT count(*) FROM runs WHERE pushed_remote LIKE '%hunter2%') +
    (SELECT count(*) FROM journal WHERE data LIKE '%hunter2%') +
    (SELECT count(*) FROM audit WHERE data LIKE '%hunter2%')")" = 0 ] || fail "the password was stored"
read -r code body < <(api POST "/api/runs/$b/pushed" '{"remote":"origin"}')
[ "$code" = 409 ] && echo "$body" | grep -q '"code":"already_landed"' || fail "pushed after land: $code $body"
pass "a push record's remote URL is masked; a landed run's push is refused by the API too"
