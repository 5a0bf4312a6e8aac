#!/usr/bin/env bash
# The README's first example ("## Using it"), run as printed: every command of its
# block, in order, read from README.md itself (so an edit to the README is what this
# tests), with only build/bin/ pointing at this build and RUN_ID at the run it
# started. The real pinned Claude Code (scripts/setup-engines) is on the daemon's PATH
# and talks to the scripted model server (test/fixtures/model-server.js) on loopback,
# whose "_default" scenario answers the README's own prompt: it fixes the typo in
# docs/guide.md. With no engines.default, `task add fix-typos ... --prompt ...` must
# make a claude task in acceptEdits and the run must complete without asking; the
# commands that say "exit 3: denied" and "refused by the kernel" must fail as they
# say; `run merge` lands the fix on the repository's main branch. Lines that need an
# approval's ID (approve, deny) are shown as skipped, there being none to answer;
# `approvals --watch` must still be watching after 3 s, and is then ended.
# Exits 77 when Claude Code or node cannot be had.
REAL_HOME=$HOME
. "${CW_SRC:?}/test/integration/daemon_lib.bash" || exit 1
mkdir -p "$T/pids"
command -v node >/dev/null || { echo "skip: node is not installed"; exit 77; }
if [ -z "${CW_ENGINES_BIN:-}" ]; then
	CW_ENGINES_BIN=$(XDG_CACHE_HOME=${XDG_CACHE_HOME:-$REAL_HOME/.cache} \
	    "$CW_SRC/scripts/setup-engines" 2>/dev/null | tail -n 1) || CW_ENGINES_BIN=
fi
[ -n "$CW_ENGINES_BIN" ] && [ -x "$CW_ENGINES_BIN/claude" ] ||
	{ echo "skip: the pinned Claude Code is not installed (scripts/setup-engines)"; exit 77; }

# The README's block, joined where a line ends in a backslash.
awk '/^## Using it/ { u = 1 } u && /^```sh/ { b = 1; next } b && /^```/ { exit } b' \
    "$CW_SRC/README.md" | sed -e ':a' -e '/\\$/N; s/\\\n//; ta' > "$T/block"
grep -q 'task add fix-typos' "$T/block" || fail "the README's first block has no task add: $(cat "$T/block")"
grep -q -- '--engine' "$T/block" && fail "the README's first example names an engine; it should show the default"

# The repository the example names, with the typo the prompt asks to fix.
proj="$HOME/src/project"
mkdir -p "$proj/docs"
git -C "$proj" init -q -b main
echo "Teh quick brown fox." > "$proj/docs/guide.md"
git -C "$proj" add docs && git -C "$proj" -c user.name=t -c user.email=t@example.com commit -q -m docs
mkdir -p "$HOME/.ssh" && echo PLANTED-PRIVATE-KEY > "$HOME/.ssh/id_ed25519"

cat > "$T/scen.json" <<'EOF'
{
 "_default": [
  {"tool": "Bash", "input": {"command": "printf 'The quick brown fox.\\n' > docs/guide.md", "description": "Fix the typo in docs/guide.md"}},
  {"text": "I fixed the typo in docs/guide.md (Teh -> The)."}
 ]
}
EOF
node "$CW_SRC/test/fixtures/model-server.js" "$T/scen.json" "$T/mport" "$T/requests.jsonl" \
    2> "$T/model.err" &
echo $! > "$T/pids/model"
wait_until 15 "model server" test -s "$T/mport" || fail "model-server.js did not start: $(cat "$T/model.err")"
# The provider's address and a stand-in key; no engines.default: the daemon finds claude.
printf 'api_port: 0\nengines:\n  claude:\n    base_url: http://127.0.0.1:%s\n    key_env: CW_README_KEY\n' \
    "$(cat "$T/mport")" > "$CLOCKWORK_HOME/config.yaml"
export CW_README_KEY=sk-ant-readme-not-a-real-key
keep=$PATH
export PATH="$CW_ENGINES_BIN:$PATH"
start_daemon
export PATH=$keep

cd "$proj"
run=
n=0
while IFS= read -r line; do
	[ -n "$line" ] || continue
	n=$((n + 1))
	cmd=${line//build\/bin\/cwctl/\"\$CW_BIN\/cwctl\"}
	want=0
	case $line in
	*" approve ID"*|*" deny ID"*) echo "skipped (no approval to answer): $line"; continue ;;
	*"exit 3: denied"*) want=3 ;;
	*"policy explain"*"npm publish"*) want=3 ;;	# it explains a denial, exit 3
	*"refused by the kernel"*) want=nonzero ;;
	*"run discard RUN_ID"*) want=any ;;	# after the merge: "or throw it away"
	*" -f RUN_ID"*) cmd=${cmd/ -f / } ;;	# the run has ended; -f would only wait
	*"approvals --watch"*) want=watching ;;	# it watches until interrupted
	esac
	if [[ $cmd == *RUN_ID* ]]; then
		[ -n "$run" ] || fail "line $n needs a run, and none was started: $line"
		cmd=${cmd//RUN_ID/$run}
	fi
	limit=240
	[ "$want" = watching ] && limit=3
	set +e
	out=$(eval "timeout $limit $cmd" 2>&1); rc=$?
	set -e
	printf '$ %s\n%s\n(exit %d)\n' "$line" "$out" "$rc" >> "$T/transcript"
	case $want in
	0) [ "$rc" = 0 ] || fail "README line $n exited $rc: $line: $out" ;;
	3) [ "$rc" = 3 ] || fail "README line $n should exit 3, exited $rc: $line: $out" ;;
	nonzero) [ "$rc" != 0 ] || fail "README line $n should fail, it did not: $line: $out" ;;
	watching) [ "$rc" = 124 ] || fail "README line $n should still be watching after 3 s, exited $rc: $line: $out" ;;
	esac
	case $line in
	*"task add fix-typos"*)
		grep -q "^engine claude, mode acceptEdits, the default: found $CW_ENGINES_BIN/claude on the daemon's PATH" <<<"$out" ||
			fail "task add did not say it chose claude: $out" ;;
	*"run start fix-typos --wait"*)
		run=$(sed -n 's/^run: *//p' <<<"$out" | head -n 1)
		[ -n "$run" ] && [ "$(run_status "$run")" = completed ] ||
			fail "the README's run did not complete: $(run_status "$run"): $out" ;;
	*"run diff RUN_ID"*)
		grep -q '^+The quick brown fox.$' <<<"$out" || fail "run diff does not show the fix: $out" ;;
	esac
done < "$T/block"
[ -n "$run" ] || fail "the README's example started no run"
[ "$(sql "SELECT engine || ' ' || permission_mode FROM tasks WHERE name = 'fix-typos'")" = "claude acceptEdits" ] ||
	fail "fix-typos: $(sql "SELECT engine, permission_mode FROM tasks WHERE name = 'fix-typos'")"
[ "$(sql "SELECT count(*) FROM approvals WHERE run_id = '$run'")" = 0 ] || fail "the README's run asked for approval"
[ "$(git -C "$proj" show main:docs/guide.md)" = "The quick brown fox." ] ||
	fail "run merge did not land the fix on main: $(git -C "$proj" show main:docs/guide.md)"
grep -q PLANTED-PRIVATE-KEY "$T/transcript" && fail "the sandbox let the README's sandbox exec read a key"
cat "$T/transcript"
pass "the README's first example, $n commands as printed: a claude task by default in acceptEdits, the run fixed docs/guide.md without asking, policy check exit 3, sandbox exec refused, run merge landed it"
