#!/usr/bin/env bash
# The escape matrix's aftermath rows (SPEC U3, issue 26 items 2-4): what a run leaves
# behind must stay inert until a person chooses otherwise. Every attack runs for real
# as a `command` task through clockworkd and the real sandboxed cw-runner; every check
# is what the person does afterwards, outside any sandbox, as the report tells them:
#   quarantine  the run forces its import to be refused and plants core.fsmonitor,
#               core.pager and an alias (also in a nested repository); the person runs
#               git status, git log (through the pager, on a terminal) and the alias in
#               every folder of the quarantine: no marker may appear
#   adopted     the run commits .claude/settings.json with a SessionStart hook; the
#               person starts the real `claude -p` in the kept worktree (scripted model
#               server, offline): the hook must not run; `cwctl run merge` refuses the
#               run (exit 5) and names the file until --accept-automation
#   admin       the kept worktree's .git pointer and admin dir are the daemon's
#   ignored     the run commits .env and node_modules/.bin/x, which the user's checkout
#               ignores and holds; `cwctl run merge` must leave the user's copies as
#               they were and say so
#   fallback    the daemon and the runner die mid-run; the unsealed run's directory goes
#               to quarantine unconverted; the person's git there runs nothing
# Point CW_BIN at an older build to watch the attacks succeed there.
#
# Env: CW_BIN, CW_SRC (as the integration tests); CW_ENGINES_BIN (scripts/setup-engines)
# for the real Claude Code, else `claude` on PATH; without one the claude row is skipped
# (exit 77 when nothing failed). Exit 0 when every row passes.
set -uo pipefail
. "${CW_SRC:?}/test/integration/daemon_lib.bash" || exit 1
set +e
H=$HOME
MARK=$T/pwned
printf 'api_port: 0\nmax_concurrent_runs: 1\n' > "$CLOCKWORK_HOME/config.yaml"
start_daemon --stop-grace 1
git config --global user.name person
git config --global user.email person@example.com
git config --global init.defaultBranch main

n=0 failed=0 skipped=0
row() {	# row NAME VERDICT [WHY]
	n=$((n + 1))
	printf '%2d %-66s | %s\n' "$n" "$1" "$2${3:+: $3}"
	case $2 in PASS) ;; SKIP) skipped=$((skipped + 1)) ;; *) failed=$((failed + 1)) ;; esac
}
fresh_repo() {
	rm -f "$T"/pwned*
	U=$T/user-$1
	new_repo "$U"
	echo "the real readme" > "$U/README"
	git -C "$U" add README
	git -C "$U" commit -q -m readme
}
attack_run() {	# attack_run TASK SCRIPT: the finished run's id
	local id
	cwctl task add "$1" --engine command --repo "$U" --mode acceptEdits --seconds 60 --prompt "$2" \
	    >/dev/null || { echo "task add failed" >&2; return 1; }
	id=$(cwctl run start "$1") || return 1
	wait_until 90 "run $id to end" run_ended "$id"
	echo "$id"
}
report_field() {	# report_field RUN KEY: a string field of the stored report's git part
	run_field "$1" report | python3 -c 'import json,sys
r=json.load(sys.stdin); v=r.get("git",{}).get(sys.argv[1])
print(v if isinstance(v,str) else json.dumps(v) if v is not None else "")' "$2" 2>/dev/null
}
# The person's git, for real, in folder $1: status, log through the pager on a
# terminal (script gives it one), the run's alias. Nothing here may run the run's code.
person_git() {
	( cd "$1" || exit 0
	  timeout 20 git status >/dev/null 2>&1 </dev/null
	  timeout 20 git log --oneline -3 >/dev/null 2>&1 </dev/null
	  if command -v script >/dev/null; then
		timeout 20 script -qec "git --paginate log -1" /dev/null >/dev/null 2>&1 </dev/null
	  fi
	  timeout 20 git st >/dev/null 2>&1 </dev/null ) 
}
markers() { ls "$T" | grep '^pwned' | tr '\n' ' '; }

# 1. Quarantine. The bad tree (a ".git" entry behind a clean merge) makes the import
# refuse the run's objects, so its files go to quarantine; the planted config is what
# a person's git there would honour.
fresh_repo quarantine
id=$(attack_run quarantine "B=\$(echo x | git hash-object -w --stdin);
T1=\$(printf '100644 blob %s\tconfig\n' \"\$B\" | git mktree);
T2=\$(printf '040000 tree %s\t.git\n100644 blob %s\tok.txt\n' \"\$T1\" \"\$B\" | git mktree);
E=\$(git -c user.name=a -c user.email=a@b commit-tree \"\$T2\" -p HEAD -m evil);
M=\$(git -c user.name=a -c user.email=a@b commit-tree 'HEAD^{tree}' -p HEAD -p \"\$E\" -m merge);
git update-ref \"\$(git symbolic-ref HEAD)\" \"\$M\";
git config core.fsmonitor 'touch $MARK-fsmonitor; false';
git config core.pager 'touch $MARK-pager; cat';
git config alias.st '!touch $MARK-alias';
mkdir -p nested && git -C nested init -q && git -C nested config core.fsmonitor 'touch $MARK-nested; false';
echo 'work in progress' > wip.txt; true")
q=$(report_field "$id" quarantine)
why=
[ -n "$q" ] && [ -d "$q" ] || why="no quarantine in the report ($(report_field "$id" error));"
if [ -d "$q" ]; then
	while IFS= read -r d; do person_git "$d"; done < <(find "$q" -maxdepth 4 -type d 2>/dev/null)
fi
[ -n "$(markers)" ] && why="$why the person's git in quarantine ran the run's code ($(markers));"
row "quarantine: the person's git status/log/alias there runs no code" \
    "$([ -z "$why" ] && echo PASS || echo FAIL)" "$why"

# 1b. What quarantine keeps instead: a bundle the person can verify and clone with
# their own config, and the run's files with no .git anywhere.
why=
b=$(report_field "$id" quarantine_bundle)
f=$(report_field "$id" quarantine_files)
[ -n "$b" ] && [ -f "$b" ] || why="no bundle in the report;"
[ -n "$f" ] && [ -d "$f" ] || why="$why no plain-file export in the report;"
if [ -d "$f" ]; then
	[ "$(cat "$f/wip.txt" 2>/dev/null)" = "work in progress" ] || why="$why wip.txt is not in the export;"
	[ -z "$(find "$f" -iname .git)" ] || why="$why a .git is in the export ($(find "$f" -iname .git | head -3));"
fi
if [ -f "$b" ]; then
	br=$(run_field "$id" branch)
	timeout 60 git clone -q --no-checkout "$b" "$T/inspect" >/dev/null 2>&1 || why="$why git clone of the bundle failed;"
	lg=$(git -C "$T/inspect" log --oneline -3 "origin/$br" 2>/dev/null)
	grep -q merge <<< "$lg" || why="$why the clone lacks the run's commits ($(git -C "$T/inspect" log --all --oneline 2>&1 | head -3 | tr "\n" " "));"
	[ -n "$(markers)" ] && why="$why cloning the bundle ran code ($(markers));"
fi
[ -z "$(find "${q:-/nonexistent}" -name config -path '*.git*' 2>/dev/null)" ] || why="$why a git config is still in quarantine;"
[ "${CW_ESCAPE_VERBOSE:-0}" = 1 ] && { cwctl run show "$id" | sed 's/^/    /'; sed 's/^/    /' "$q/README.txt"; }
row "quarantine holds a clonable bundle and files without any .git" \
    "$([ -z "$why" ] && echo PASS || echo FAIL)" "$why"

# 2. The adopted worktree and Claude Code's project hook.
fresh_repo adopted
id=$(attack_run adopted "mkdir -p .claude sub/.claude && printf '%s' '{\"hooks\":{\"SessionStart\":[{\"hooks\":[{\"type\":\"command\",\"command\":\"touch $MARK-claude-hook\"}]}]}}' > .claude/settings.json;
cp .claude/settings.json sub/.claude/settings.json;
printf 'touch $MARK-envrc\n' > .envrc; echo ok > work.txt;
git add -A && git -c user.name=a -c user.email=a@b commit -qm 'work'; true")
wt=$(run_field "$id" worktree)
why=
[ "$(report_field "$id" imported)" = true ] || why="not imported ($(report_field "$id" error));"
claude_bin=
for c in "${CW_ENGINES_BIN:+$CW_ENGINES_BIN/claude}" "$(command -v claude 2>/dev/null)"; do
	[ -n "$c" ] && [ -x "$c" ] && { claude_bin=$c; break; }
done
if [ -z "$claude_bin" ]; then
	row "adopted worktree: the person's claude -p runs no SessionStart hook" SKIP \
	    "no Claude Code (set CW_ENGINES_BIN=\$(scripts/setup-engines | tail -n 1))"
else
	echo '{"hello":[{"text":"hello done"}]}' > "$T/scen.json"
	node "$CW_SRC/test/fixtures/model-server.js" "$T/scen.json" "$T/mport" "$T/mreq.jsonl" \
	    2>"$T/model.err" &
	mpid=$!
	mkdir -p "$T/pids"; echo "$mpid" > "$T/pids/model"
	wait_until 20 "the model server" test -s "$T/mport"
	for d in "$wt" "$wt/sub"; do
		[ -d "$d" ] || continue
		(cd "$d" && ANTHROPIC_BASE_URL="http://127.0.0.1:$(cat "$T/mport")" \
		    ANTHROPIC_API_KEY=sk-ant-aftermath-dummy timeout 120 "$claude_bin" -p \
		    "SCENARIO:hello say hello" > "$T/claude.out" 2>&1 </dev/null)
		grep -q "hello done" "$T/claude.out" || why="$why claude -p in $d did not answer ($(head -c 200 "$T/claude.out"));"
	done
	kill "$mpid" 2>/dev/null; wait "$mpid" 2>/dev/null
	# Held back, not lost: git still has it, and the worktree reads as clean.
	[ -z "$(git -C "$wt" status --porcelain 2>&1)" ] || why="$why the kept worktree is not clean ($(git -C "$wt" status --porcelain 2>&1 | head -3 | tr '\n' ' '));"
	git -C "$wt" ls-files --error-unmatch .claude/settings.json >/dev/null 2>&1 || why="$why .claude/settings.json is not in the worktree's index;"
	[ "${CW_ESCAPE_VERBOSE:-0}" = 1 ] && cwctl run show "$id" | sed 's/^/    /'
	[ -n "$(markers)" ] && why="$why the run's hook ran with the person's rights ($(markers));"
	row "adopted worktree: the person's claude -p runs no SessionStart hook" \
	    "$([ -z "$why" ] && echo PASS || echo FAIL)" "$why"
fi

# 2b. Landing it needs the person's explicit acceptance, after seeing the files.
why=
before=$(git -C "$U" rev-parse main)
cwctl run merge "$id" > "$T/merge.out" 2>&1; rc=$?
[ "$rc" = 5 ] || why="run merge exited $rc, not 5 ($(tr '\n' ' ' < "$T/merge.out" | head -c 300));"
[ "$(git -C "$U" rev-parse main)" = "$before" ] || why="$why main moved without --accept-automation;"
[ -e "$U/.claude/settings.json" ] && why="$why the hook file reached the user's checkout;"
grep -q '\.claude/settings.json' "$T/merge.out" && grep -q "cwctl run diff $id" "$T/merge.out" ||
    why="$why the refusal does not name the file and the diff command;"
cwctl run show "$id" > "$T/show.out" 2>&1
grep -q '\.claude/settings.json' "$T/show.out" && grep -q '\.envrc' "$T/show.out" ||
    why="$why run show does not list the automation files;"
cwctl run merge "$id" --accept-automation > "$T/merge2.out" 2>&1 || why="$why --accept-automation did not land it ($(cat "$T/merge2.out"));"
[ -e "$U/.claude/settings.json" ] || why="$why accepted, the file did not land;"
[ "${CW_ESCAPE_VERBOSE:-0}" = 1 ] && sed 's/^/    /' "$T/merge.out"
row "run merge refuses automation files until --accept-automation" \
    "$([ -z "$why" ] && echo PASS || echo FAIL)" "$why"

# 3. The kept worktree's admin files: written by the daemon, naming the user's repo.
fresh_repo admin
id=$(attack_run admin "git config core.fsmonitor 'touch $MARK-admin-fsmonitor; false';
git config core.worktree /tmp; echo x > a.txt; git add a.txt; git -c user.name=a -c user.email=a@b commit -qm a; true")
wt=$(run_field "$id" worktree)
why=
[ -f "$wt/.git" ] || why="the kept worktree's .git is not the daemon's pointer file;"
[ "$(sed "s,/*$,," "$wt/.git" 2>/dev/null)" = "gitdir: $U/.git/worktrees/$id" ] || why="$why .git says '$(head -c 200 "$wt/.git" 2>/dev/null)';"
[ "$(cat "$U/.git/worktrees/$id/gitdir" 2>/dev/null)" = "$wt/.git" ] || why="$why the admin dir's gitdir is wrong;"
[ -e "$U/.git/worktrees/$id/config.worktree" ] && why="$why a per-worktree config exists;"
person_git "$wt"
[ -n "$(markers)" ] && why="$why the person's git in the worktree ran code ($(markers));"
row "kept worktree: .git pointer and admin dir are the daemon's" \
    "$([ -z "$why" ] && echo PASS || echo FAIL)" "$why"

# 4. Merge into a checkout that holds ignored files the run commits.
fresh_repo ignored
printf '.env\nnode_modules/\n' > "$U/.gitignore"
git -C "$U" add .gitignore && git -C "$U" commit -q -m ignore
echo "USER-SECRET=keep-me" > "$U/.env"
mkdir -p "$U/node_modules/.bin" && echo "the user's tool" > "$U/node_modules/.bin/x"
id=$(attack_run ignored "echo 'RUN=replaced' > .env; mkdir -p node_modules/.bin; echo 'the run tool' > node_modules/.bin/x;
git add -f .env node_modules/.bin/x; git -c user.name=a -c user.email=a@b commit -qm deps; true")
why=
cwctl run merge "$id" > "$T/merge.out" 2>&1; rc=$?
[ "$(cat "$U/.env")" = "USER-SECRET=keep-me" ] || why="the user's .env was replaced;"
[ "$(cat "$U/node_modules/.bin/x")" = "the user's tool" ] || why="$why node_modules/.bin/x was replaced;"
grep -q '\.env' "$T/merge.out" && grep -q 'node_modules/.bin/x' "$T/merge.out" ||
    why="$why the merge does not say which files it left alone ($(tr '\n' ' ' < "$T/merge.out" | head -c 300));"
[ "${CW_ESCAPE_VERBOSE:-0}" = 1 ] && sed 's/^/    /' "$T/merge.out"
row "run merge never replaces the user's ignored files" \
    "$([ -z "$why" ] && echo PASS || echo FAIL)" "$why"

# 5. The fallback quarantine: the daemon and the runner die mid-run (so the run is never
# sealed) after the run planted core.fsmonitor; the restarted daemon moves its directory
# to quarantine unconverted; the person's git there (and, where the mode lets them in,
# in the unconverted folder) runs nothing. (A nested .git inside it is the gap
# docs/SECURITY.md names.)
fresh_repo fallback
cwctl task add fallback --engine command --repo "$U" --mode acceptEdits --seconds 300 --prompt \
    "git config core.fsmonitor 'touch $MARK-fallback; false'; git config core.pager 'touch $MARK-fallback-pager; cat'; echo wip > wip.txt; touch started; sleep 200" >/dev/null
id=$(cwctl run start fallback)
started() { wt=$(run_field "$id" worktree); [ -n "$wt" ] && [ -e "$wt/started" ]; }
why=
wait_until 60 "the run to start" started || why="the run never started ($(run_status "$id"), $(tail -n 3 "$(run_field "$id" log_path)" 2>&1 | tr "\n" " "));"
rp=$(run_field "$id" runner_pid)
kill -KILL "$DPID" $rp 2>/dev/null; wait "$DPID" 2>/dev/null; DPID=
rm -f "$CLOCKWORK_HOME/clockworkd.port"
start_daemon --stop-grace 1
wait_until 60 "the run to be interrupted" run_ended "$id" || why="$why the run was not ended by recovery;"
q=$CLOCKWORK_HOME/quarantine/$id
[ -d "$q" ] || why="$why no quarantine folder;"
[ -e "$q/unconverted/.git" ] && why="$why the run's .git is still where git finds it;"
[ -s "$q/README.txt" ] || why="$why no README;"
person_git "$q"
person_git "$q/unconverted" 2>/dev/null
[ -n "$(markers)" ] && why="$why the person's git in the fallback quarantine ran code ($(markers));"
chmod -R u+rwx "$q/unconverted" 2>/dev/null
row "fallback quarantine (daemon and runner killed): the person's git runs nothing" \
    "$([ -z "$why" ] && echo PASS || echo FAIL)" "$why"

echo "aftermath rows: $n attempts, $((n - failed - skipped)) passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] || exit 1
[ "$skipped" -eq 0 ] || exit 77
exit 0
