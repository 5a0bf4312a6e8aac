#!/usr/bin/env bash
# Agent-first defaults and unknown prices (issue 23), through the real clockworkd:
#
# 1. With the real pinned Claude Code on the daemon's PATH (scripts/setup-engines),
#    `cwctl task add t --repo . --prompt P` makes a claude task in acceptEdits, and
#    cwctl says it was the default and why (found on the daemon's PATH).
# 2. With no agent CLI on the daemon's PATH and no key, it is refused (exit 1) saying
#    what was looked for and what to do; --command LINE and an old script's
#    --engine command still make command tasks; --command with --prompt or another
#    engine is refused as ambiguous (exit 2); a job imported from a repository gets
#    no engine either and its discovery fails naming the job.
# 3. With a byok key stored and still no CLI, the default is byok with that key.
# 4. engines.default in config.yaml wins over what is installed, and is named; an
#    imported job gets it too, in acceptEdits.
# 5. An imported job (no engine in the file, or an engine the file tries to set) gets
#    the CLI found on PATH.
# 6. A byok run whose model has no price (test/fixtures/provider-server.js on loopback
#    stands in for the provider) runs and completes under the configuration's default
#    $2 budget: `cwctl run show` says the cost is unknown and that the dollar budget
#    was refused, naming the model and prices.MODEL; an explicit --dollars on such a
#    task is refused naming budget_dollars; a model the built-in table prices (a dated
#    id) is charged from the table.
# Exits 77 (skipped) when the real Claude Code or node is not to be had, after the
# rows that need neither.
REAL_HOME=$HOME	# the engines' cache is the user's, outside the test's HOME
. "${CW_SRC:?}/test/integration/daemon_lib.bash" || exit 1
mkdir -p "$T/pids"
command -v python3 >/dev/null || fail "python3 is needed"

SYS=/usr/bin:/bin
for e in claude codex opencode; do
	if PATH=$SYS command -v "$e" >/dev/null; then
		echo "skip: $e is installed in $SYS, so 'no engine on PATH' cannot be shown here"
		exit 77
	fi
done
gitc() { git -C "$1" -c user.name=t -c user.email=t@example.com "${@:2}"; }
restart() {	# restart PATH: the daemon again, with that PATH
	[ -n "$DPID" ] && stop_daemon
	local keep=$PATH
	export PATH=$1
	start_daemon
	export PATH=$keep
}
new_repo "$T/r"
cd "$T/r"

# 2. Nothing to default to.
restart "$SYS"
set +e
out=$(cwctl task add t --repo . --prompt P 2>&1); rc=$?
set -e
[ "$rc" = 1 ] || fail "task add with no engine anywhere: exit $rc: $out"
for want in "engine: no engine to default to" "none of claude, codex, opencode, hermes is on the daemon's PATH ($SYS)" \
    "engines.default is not set in $CLOCKWORK_HOME/config.yaml" "no provider key is stored" "--command LINE"; do
	grep -qF -- "$want" <<<"$out" || fail "the refusal does not say '$want': $out"
done
[ "$(sql "SELECT count(*) FROM tasks")" = 0 ] || fail "a task was stored"
pass "no agent CLI on the daemon's PATH, no key: task add is refused (exit 1) saying what was looked for and what to do"

cwctl task add sh1 --repo . --command 'echo hi > hi.txt' > "$T/o" || fail "--command: $(cat "$T/o")"
cwctl task add sh2 --repo . --engine command --prompt 'echo hi' > "$T/o" || fail "--engine command: $(cat "$T/o")"
[ "$(sql "SELECT group_concat(name || ':' || engine || ':' || prompt, ' ') FROM tasks ORDER BY name")" = \
    "sh1:command:echo hi > hi.txt sh2:command:echo hi" ] || fail "command tasks: $(sql "SELECT name, engine, prompt FROM tasks")"
grep -q "the default" "$T/o" && fail "an explicit engine was reported as a default: $(cat "$T/o")"
id=$(timeout 90 "$CW_BIN/cwctl" run start sh1 --wait | sed -n 's/^run: *//p')
git -C "$T/r" show "clockwork/sh1/$id:hi.txt" | grep -qx hi || fail "the --command task did not run its line"
for bad in "--command x --prompt y" "--prompt y --command x" "--command x --engine claude" "--command x --command y"; do
	set +e
	# shellcheck disable=SC2086
	out=$(cwctl task add amb $bad 2>&1); rc=$?
	set -e
	[ "$rc" = 2 ] && grep -q -- "--command LINE is a shell line" <<<"$out" ||
		fail "ambiguous '$bad': exit $rc: $out"
done
[ "$(sql "SELECT count(*) FROM tasks WHERE name = 'amb'")" = 0 ] || fail "an ambiguous task was stored"
pass "--command LINE and --engine command make command tasks that run their line; --command with --prompt, another engine or twice is refused (exit 2)"

mkdir -p "$T/rj/.clockwork"; new_repo "$T/rj"
printf 'jobs:\n  - name: lint\n    prompt: "Fix the lint warnings"\n    engine: command\n' > "$T/rj/.clockwork/jobs.yaml"
gitc "$T/rj" add .clockwork && gitc "$T/rj" commit -q -m jobs
set +e
out=$(cwctl jobs discover "$T/rj" 2>&1); rc=$?
set -e
[ "$rc" != 0 ] && grep -qF "job lint: no engine to default to" <<<"$out" || fail "discovery with no engine: exit $rc: $out"
[ "$(sql "SELECT count(*) FROM tasks WHERE name = 'lint'")" = 0 ] || fail "a job was imported with no engine"
r=$(api_unix POST /api/jobs/discover "{\"repo\":\"$T/rj\"}")
[ "${r%% *}" = 409 ] && grep -q '"no_engine"' <<<"$r" || fail "discovery with no engine over the API: $r"
pass "a job file's engine: command is not read; with nothing to default to, discovery fails (409 no_engine) naming the job"

# 3. A stored key and no CLI: byok with that key.
printf '%s\n' sk-ant-test-not-real | cwctl key add work --provider anthropic \
    --base-url http://127.0.0.1:9 --model claude-sonnet-4-5 > /dev/null || fail "key add"
cwctl task add b1 --repo . --prompt P > "$T/o" || fail "byok default: $(cat "$T/o")"
[ "$(sql "SELECT engine || ' ' || key_name || ' ' || permission_mode FROM tasks WHERE name = 'b1'")" = "byok work acceptEdits" ] ||
	fail "byok default: $(sql "SELECT engine, key_name, permission_mode FROM tasks WHERE name = 'b1'")"
grep -q "^engine byok, mode acceptEdits, the default: none of claude, codex, opencode, hermes is on the daemon's PATH" "$T/o" &&
    grep -q "a provider key is stored, so Clockwork's own agent runs with it (work)" "$T/o" || fail "byok default said: $(cat "$T/o")"
printf '%s\n' sk-ant-test-not-real | cwctl key add other --provider anthropic --model claude-sonnet-4-5 > /dev/null
set +e
out=$(cwctl task add b2 --repo . --prompt P 2>&1); rc=$?
set -e
[ "$rc" = 1 ] && grep -q "several provider keys are stored (work, other): name one with --key NAME" <<<"$out" ||
	fail "two keys: exit $rc: $out"
cwctl task add b3 --repo . --key other --prompt P > "$T/o" || fail "--key alone: $(cat "$T/o")"
[ "$(sql "SELECT engine || ' ' || key_name FROM tasks WHERE name = 'b3'")" = "byok other" ] || fail "--key alone is not byok"
pass "no CLI but a stored key: the default is byok with it (said so); two keys: name one; --key alone means byok"

# 4. engines.default wins, and is named.
printf 'api_port: 0\nengines:\n  default: codex\n' > "$CLOCKWORK_HOME/config.yaml"
restart "$SYS"
cwctl task add c1 --repo . --prompt P > "$T/o" || fail "engines.default: $(cat "$T/o")"
[ "$(sql "SELECT engine || ' ' || permission_mode FROM tasks WHERE name = 'c1'")" = "codex acceptEdits" ] ||
	fail "engines.default codex: $(sql "SELECT engine, permission_mode FROM tasks WHERE name = 'c1'")"
grep -qF "engine codex, mode acceptEdits, the default: engines.default in $CLOCKWORK_HOME/config.yaml" "$T/o" ||
	fail "engines.default said: $(cat "$T/o")"
cwctl jobs discover "$T/rj" > "$T/o" 2>&1 || fail "discover with engines.default: $(cat "$T/o")"
[ "$(sql "SELECT engine || ' ' || permission_mode || ' ' || enabled FROM tasks WHERE name = 'lint'")" = "codex acceptEdits 0" ] ||
	fail "imported job: $(sql "SELECT engine, permission_mode, enabled FROM tasks WHERE name = 'lint'")"
printf 'api_port: 0\n' > "$CLOCKWORK_HOME/config.yaml"
pass "engines.default in config.yaml wins and is named; an imported job gets it, in acceptEdits, disabled"

# 1 and 5. The real Claude Code on the daemon's PATH.
if [ -z "${CW_ENGINES_BIN:-}" ]; then
	CW_ENGINES_BIN=$(XDG_CACHE_HOME=${XDG_CACHE_HOME:-$REAL_HOME/.cache} "$CW_SRC/scripts/setup-engines" 2>/dev/null | tail -n 1) || CW_ENGINES_BIN=
fi
have_claude=0
[ -n "$CW_ENGINES_BIN" ] && [ -x "$CW_ENGINES_BIN/claude" ] && command -v node >/dev/null &&
    "$CW_ENGINES_BIN/claude" --version >/dev/null 2>&1 && have_claude=1
if [ "$have_claude" = 1 ]; then
	restart "$CW_ENGINES_BIN:$SYS"
	cwctl task add t --repo . --prompt P > "$T/o" || fail "task add with Claude Code: $(cat "$T/o")"
	[ "$(sql "SELECT engine || ' ' || permission_mode FROM tasks WHERE name = 't'")" = "claude acceptEdits" ] ||
		fail "with Claude Code installed: $(sql "SELECT engine, permission_mode FROM tasks WHERE name = 't'")"
	grep -qF "engine claude, mode acceptEdits, the default: found $CW_ENGINES_BIN/claude on the daemon's PATH" "$T/o" ||
		fail "the default was not explained: $(cat "$T/o")"
	cwctl task show t | grep -q "^engine: *claude$" || fail "task show: $(cwctl task show t)"
	pass "Claude Code on the daemon's PATH: task add t --repo . --prompt P makes a claude task in acceptEdits, and says why"
	sql "DELETE FROM tasks WHERE name = 'lint'"
	cwctl jobs discover "$T/rj" > "$T/o" 2>&1 || fail "discover with Claude Code: $(cat "$T/o")"
	[ "$(sql "SELECT engine || ' ' || permission_mode FROM tasks WHERE name = 'lint'")" = "claude acceptEdits" ] ||
		fail "imported job with Claude Code: $(sql "SELECT engine, permission_mode FROM tasks WHERE name = 'lint'")"
	pass "an imported job (its file's engine: command ignored) gets the CLI found on PATH"
fi

# 6. A byok model with no price runs; only its dollar budget is refused.
if command -v node >/dev/null; then
	cat > "$T/scen.json" <<'EOF'
{
 "noprice": [
  {"tool": "write_file", "input": {"path": "note.txt", "content": "priced-not\n"}, "usage": {"input_tokens": 1000, "output_tokens": 100}},
  {"text": "noprice done", "usage": {"input_tokens": 1000, "output_tokens": 100}}
 ],
 "tableprice": [
  {"text": "tableprice done", "usage": {"input_tokens": 1000000, "output_tokens": 100000}}
 ]
}
EOF
	printf '%s\n' sk-ant-provider-test > "$T/key.pattern"
	node "$CW_SRC/test/fixtures/provider-server.js" "$T/scen.json" "$T/pport" \
	    "$T/requests.jsonl" "$T/key.pattern" 2> "$T/provider.err" &
	echo $! > "$T/pids/provider"
	wait_until 15 "provider stand-in" test -s "$T/pport" || fail "provider-server.js did not start: $(cat "$T/provider.err")"
	base="http://127.0.0.1:$(cat "$T/pport")"
	restart "$SYS"
	printf '%s\n' sk-ant-provider-test | cwctl key add unpriced --provider anthropic \
	    --base-url "$base" --model claude-unpriced > /dev/null || fail "key add unpriced"
	printf '%s\n' sk-ant-provider-test | cwctl key add tabled --provider anthropic \
	    --base-url "$base" --model claude-sonnet-4-5-20250929 > /dev/null || fail "key add tabled"
	set +e
	out=$(cwctl task add np0 --repo . --key unpriced --dollars 1 --prompt "SCENARIO:noprice go" 2>&1); rc=$?
	set -e
	[ "$rc" = 1 ] && grep -qF "budget_dollars: model 'claude-unpriced' (key unpriced) has no price" <<<"$out" &&
	    grep -qF "add prices.claude-unpriced" <<<"$out" || fail "explicit --dollars on an unpriced model: exit $rc: $out"
	pass "an explicit --dollars on a byok model with no price is refused, naming the model and prices.claude-unpriced"

	cwctl task add np --repo . --key unpriced --prompt "SCENARIO:noprice go" > /dev/null || fail "task add np"
	[ "$(sql "SELECT budget_dollars FROM tasks WHERE name = 'np'")" = 2.0 ] || fail "np has not the default budget"
	set +e
	id=$(timeout 90 "$CW_BIN/cwctl" run start np --wait | sed -n 's/^run: *//p')
	set -e
	[ "$(run_status "$id")" = completed ] || fail "the unpriced run: $(run_status "$id"): $(cwctl run show "$id")"
	git -C "$T/r" show "clockwork/np/$id:note.txt" | grep -qx priced-not || fail "the unpriced run's work is not on its branch"
	cwctl run show "$id" > "$T/show"
	grep -q "^spent: *cost unknown (the model has no price), 2 turns" "$T/show" || fail "spent: $(cat "$T/show")"
	grep -qF "cost:         unknown: model 'claude-unpriced' has no price" "$T/show" || fail "cost line: $(cat "$T/show")"
	grep -qF "not enforced: budget: the dollar budget (\$2.00) is refused: model 'claude-unpriced' has no price" "$T/show" &&
	    grep -qF "add prices.claude-unpriced" "$T/show" || fail "the refused budget is not said: $(cat "$T/show")"
	cwctl run show "$id" --json > "$T/show.json"
	python3 - "$T/show.json" <<'PY' || fail "run JSON: $(cat "$T/show.json")"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["spent"]["dollars_known"] is False and r["spent"]["dollars"] == 0, r["spent"]
assert r["report"]["spent"]["dollars_known"] is False, r["report"]["spent"]
assert "claude-unpriced" in r["report"]["cost_unknown"]
PY
	[ "$(run_field "$id" spent_dollars)" = -1.0 ] || fail "stored spend: $(run_field "$id" spent_dollars)"
	cwctl run logs "$id" | grep -q "^usage *1 turn (no cost reported)" || fail "transcript usage: $(cwctl run logs "$id" | grep usage)"
	pass "a byok model with no price runs to completion under the default \$2 budget: cost unknown in run show, JSON and transcript; the dollar budget refused, naming the model and prices.claude-unpriced"

	cwctl task add tp --repo . --key tabled --dollars 10 --prompt "SCENARIO:tableprice go" > /dev/null || fail "task add tp"
	id=$(timeout 90 "$CW_BIN/cwctl" run start tp --wait | sed -n 's/^run: *//p')
	[ "$(run_status "$id")" = completed ] || fail "the table-priced run: $(run_status "$id")"
	# 1M input at $3 and 100k output at $15 per million: $4.50, under its $10.
	cwctl run show "$id" | grep -q '^spent: *\$4\.50, 1 turn' || fail "table price: $(cwctl run show "$id" | grep spent)"
	pass "a dated Claude id (claude-sonnet-4-5-20250929) is charged from the built-in table: \$4.50 for 1M in, 100k out"
else
	echo "skip: node is not installed (the byok rows need test/fixtures/provider-server.js)"
fi
[ "$have_claude" = 1 ] || { echo "skip: the real Claude Code is not installed (scripts/setup-engines failed)"; exit 77; }
echo "all $PASSED passed"
