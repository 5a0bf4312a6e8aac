#!/usr/bin/env bash
# The seal leaves build outputs out of a run's commit (issue 27), with the real
# cw-runner in the real sandbox (command engine): __pycache__ that a python import
# made, node_modules, a Cargo target/ and objects are not in the run's commit, are named
# in the run's report with their count, and are not carried into the reviewed checkout
# the daemon makes from the verified objects (SPEC G1, U3: a planted .pyc would run in
# place of the reviewed source); the
# repository's .gitignore is honoured as before; a build directory the repository
# tracks keeps its new files; names that are only sometimes build outputs (target/
# without a manifest, dist/, *.obj) are committed.
. "${CW_SRC:?}/test/integration/daemon_lib.bash" || exit 1
command -v python3 >/dev/null || { echo "skip: no python3"; exit 77; }

start_daemon --stop-grace 1
new_repo "$T/repo"
R=$T/repo
gitu() { git -C "$R" -c user.name=u -c user.email=u@example.com "$@"; }
# The base: a repository that commits its own target/ (a Rust crate's vendored
# output, say) and ignores *.log.
mkdir -p "$R/crate/target/release"
echo '[package]' > "$R/crate/Cargo.toml"
echo old > "$R/crate/target/release/tracked.bin"
echo '*.log' > "$R/.gitignore"
gitu add -A && gitu commit -qm "base with a tracked target/"

run_task() {	# run_task NAME PROMPT: a finished run's id
	cwctl task add "$1" --engine command --repo "$R" --mode acceptEdits --prompt "$2" >/dev/null
	cwctl run start "$1" --wait > "$T/wait.out" || fail "run $1: $(cat "$T/wait.out")"
	sed -n 's/^run: *//p' "$T/wait.out"
}

id=$(run_task build '
mkdir -p pkg && echo "x = 1" > pkg/mod.py
python3 -c "import sys; sys.path.insert(0, \"pkg\"); import mod"
mkdir -p web/node_modules/left/.cache && echo a > web/node_modules/left/i.js && echo b > web/node_modules/left/.cache/c
echo "{}" > web/package.json
mkdir -p app/target/debug && echo "[package]" > app/Cargo.toml && echo bin > app/target/debug/app
mkdir -p docs/target && echo "a page" > docs/target/index.md
mkdir -p dist && echo "shipped" > dist/app.js
echo obj > main.o; echo "v 0 0 0" > model.obj
echo new > crate/target/release/new.bin
echo noise > run.log')
br=clockwork/build/$id
git -C "$R" ls-tree -r --name-only "$br" > "$T/tree"
for p in pkg/mod.py web/package.json app/Cargo.toml docs/target/index.md dist/app.js \
    model.obj crate/target/release/tracked.bin crate/target/release/new.bin; do
	grep -qx "$p" "$T/tree" || fail "$p is not in the run's commit: $(cat "$T/tree")"
done
for p in '__pycache__' 'node_modules' 'app/target' 'main.o' 'run.log'; do
	! grep -q "$p" "$T/tree" || fail "$p is in the run's commit: $(grep "$p" "$T/tree")"
done
pass "build outputs are not in the run's commit; source, the tracked target/ and its new file are"

rep=$(run_field "$id" report)
lo=$(printf '%s' "$rep" | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["seal"]["left_out"], sort_keys=True))')
[ "$lo" = '{"entries": 4, "files": 5, "paths": ["app/target/", "main.o", "pkg/__pycache__/", "web/node_modules/"]}' ] ||
    fail "report's seal.left_out: $lo"
cwctl run log "$id" | grep -q 'left out of the commit: 5 build output file(s) in 4 place(s)' ||
    fail "the run's log does not say what was left out: $(cwctl run log "$id" | tail -5)"
pass "the report names what was left out (paths, entries, files); the log says so"

wt=$(run_field "$id" worktree)
[ -f "$wt/pkg/mod.py" ] || fail "the reviewed checkout lacks the run's source"
[ ! -e "$wt/pkg/__pycache__" ] && [ ! -e "$wt/web/node_modules" ] && [ ! -e "$wt/main.o" ] &&
    [ ! -e "$wt/app/target" ] || fail "a build output the run left reached the reviewed checkout"
pass "what was left out does not reach the reviewed checkout (only verified objects do)"

# Nothing to leave out: the report says so with zeros.
id=$(run_task plain 'echo more >> file.txt')
lo=$(run_field "$id" report | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["seal"]["left_out"], sort_keys=True))')
[ "$lo" = '{"entries": 0, "files": 0, "paths": []}' ] || fail "plain run's left_out: $lo"
git -C "$R" show "clockwork/plain/$id:file.txt" | grep -q more || fail "plain run not committed"
pass "a run with no build outputs commits everything and reports nothing left out"

# The opt-in: a task that keeps its build outputs commits them (and says so).
cwctl task add keep --engine command --repo "$R" --mode acceptEdits --keep-build-outputs \
    --prompt 'mkdir -p k && echo "x = 1" > k/m.py && python3 -c "import sys; sys.path.insert(0, \"k\"); import m"' >/dev/null
cwctl task show keep | grep -q '^build outputs: *committed' || fail "task show: $(cwctl task show keep)"
cwctl task show keep --json | grep -q '"keep_build_outputs":	true' || fail "task json: $(cwctl task show keep --json)"
cwctl run start keep --wait > "$T/wait.out" || fail "run keep: $(cat "$T/wait.out")"
id=$(sed -n 's/^run: *//p' "$T/wait.out")
git -C "$R" ls-tree -r --name-only "clockwork/keep/$id" | grep -q '^k/__pycache__/m\..*\.pyc$' ||
    fail "keep_build_outputs: __pycache__ not committed: $(git -C "$R" ls-tree -r --name-only "clockwork/keep/$id")"
kb=$(run_field "$id" report | python3 -c 'import json,sys; s=json.load(sys.stdin)["seal"]; print(s.get("kept_build_outputs"), "left_out" in s)')
[ "$kb" = "True False" ] || fail "keep run's report seal: $kb"
# And back off: the next run leaves them out again.
cwctl task edit keep --no-keep-build-outputs >/dev/null || fail "task edit --no-keep-build-outputs"
cwctl task show keep --json | grep -q '"keep_build_outputs":	false' || fail "edit did not turn it off"
set +e; cwctl task add bad --engine command --prompt x --keep-build-outputs=yes >/dev/null 2>&1; rc=$?; set -e
[ "$rc" = 2 ] || fail "--keep-build-outputs=yes is not a usage error (exit $rc)"
pass "a task opts in with --keep-build-outputs (its runs commit them, the report says kept), and out with --no-keep-build-outputs"
