#!/usr/bin/env bash
# The run's shell under a real engine has a private HOME with empty startup files
# (issue 27): the real Claude Code (scripts/setup-engines) run by clockworkd against
# test/fixtures/model-server.js, on a layout like a person's machine (CLOCKWORK_HOME
# at ~/.clockwork, so the user's HOME is in the run's view as a directory it cannot
# list; the user's ~/.bashrc, ~/.profile and ~/.bash_profile print a marker). Its Bash
# tool runs every command through a snapshot of the user's shell: the transcript (the
# tool's result, as the model saw it) has no "Permission denied" and no marker, a
# login and an interactive bash run clean, and HOME is the run's own (listable, its
# .bashrc empty), with ~/.gitconfig still found through it.
set -euo pipefail
: "${CW_BIN:?}" "${CW_SRC:?}"
bindir=$("$CW_SRC/scripts/setup-engines" | tail -n 1)
export PATH="$bindir:$PATH"
E2E_NAME=claude_shell_rc
. "$CW_SRC/test/e2e/lib/harness.bash"
set +o pipefail
check() { local what=$1; shift; if "$@"; then ok "$what"; else fail "$what"; fi; }

export CLOCKWORK_HOME="$HOME/.clockwork"
mkdir -p -m 700 "$CLOCKWORK_HOME"
for f in .bashrc .profile .bash_profile; do echo "echo USER-RC-SOURCED-$f" > "$HOME/$f"; done

python3 - "$T" <<'PY'
import json, sys
T = sys.argv[1]
b = lambda c: {"tool": "Bash", "input": {"command": c}}
json.dump({"rc": [b("echo probe-start; echo home=$HOME; ls -a \"$HOME\" >/dev/null && echo home-listable; "
                    "[ -f ~/.bashrc ] && [ ! -s ~/.bashrc ] && echo rc-is-empty; "
                    "bash -lc 'echo login-ran'; bash -ic 'echo interactive-ran' </dev/null; "
                    "echo git-name=$(git config user.name)"),
                  b("echo second-command"), {"text": "rc done"}]},
          open(T + "/claude.json", "w"))
PY
node "$CW_SRC/test/fixtures/model-server.js" "$T/claude.json" "$T/mport" "$T/mreq.jsonl" \
    2> "$T/model-server.err" &
pids+=($!)
wait_until 15 "model server" test -s "$T/mport" || die "the model server did not start"
printf '%s\n' 'api_port: 0' 'engines:' '  claude:' \
    "    base_url: http://127.0.0.1:$(cat "$T/mport")" 'prices:' \
    '  claude-e2e: {input: 10, output: 50, cache_write: 12.5, cache_read: 1}' \
    > "$CLOCKWORK_HOME/config.yaml"
ANTHROPIC_API_KEY=sk-ant-e2e-dummy "$CW_BIN/clockworkd" --foreground > "$T/daemon.out" 2>&1 &
DPID=$!
wait_until 15 "clockworkd" test -s "$CLOCKWORK_HOME/clockworkd.port" || die "clockworkd did not start"
cw() { "$CW_BIN/cwctl" "$@"; }
sql() { sqlite3 -cmd '.timeout 5000' "$CLOCKWORK_HOME/clockwork.db" "$@"; }

repo="$T/repo"
mkdir -p "$repo" && echo a > "$repo/a" &&
    (cd "$repo" && git init -q . && git add -A && git commit -q -m base) || die "the repository"
cw task add rc --repo "$repo" --engine claude --mode acceptEdits --seconds 120 --turns 6 \
    --prompt "SCENARIO:rc Please run the scripted commands." > /dev/null || die "task add"
cw run start rc --wait > "$T/wait.out" 2>&1 || true
r=$(sed -n 's/^run: *//p' "$T/wait.out")
[ -n "$r" ] || die "no run: $(cat "$T/wait.out")"
check "the run completed" test "$(sql "SELECT status FROM runs WHERE id='$r'")" = completed
cw run log "$r" > "$T/log" 2>&1
# What the model was sent back: the tool results of both commands.
python3 - "$T/mreq.jsonl" > "$T/results" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    try:
        req = json.loads(line)
    except ValueError:
        continue
    for m in req.get("body", req).get("messages", []):
        if isinstance(m.get("content"), list):
            for c in m["content"]:
                if c.get("type") == "tool_result":
                    x = c.get("content")
                    print(x if isinstance(x, str) else json.dumps(x))
PY
for want in probe-start home-listable rc-is-empty login-ran interactive-ran "git-name=e2e" \
    second-command; do
	check "the transcript has $want" grep -qF "$want" "$T/log"
	check "the model was sent $want" grep -qF "$want" "$T/results"
done
# (The runner's own note about the cgroup a normal user could not make is not the shell.)
check "no Permission denied in the transcript" bash -c "! grep 'Permission denied' '$T/log' | grep -vq 'limits: no cgroup'"
check "no Permission denied sent to the model" bash -c "! grep -q 'Permission denied' '$T/results'"
check "no startup file of the user's was sourced" bash -c "! grep -q USER-RC-SOURCED '$T/log' '$T/results'"
home=$(sed -n "s/^.*home=\(\/[^ ]*\).*$/\1/p" "$T/log" | head -n 1)
check "HOME is the run's own ($home)" test "$home" = "$CLOCKWORK_HOME/tmp/$r/home"

[ "$fails" -eq 0 ] || { echo "$fails check(s) failed"; cat "$T/log"; tail -n 20 "$T/daemon.out"; exit 1; }
echo "all claude_shell_rc checks passed"
