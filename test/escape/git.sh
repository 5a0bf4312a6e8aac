#!/usr/bin/env bash
# The escape matrix's git rows (SPEC G1): attacks on the user's repository, on the
# daemon that reads a run's git state after the run, and on the person who later runs
# git in the repository or in the run's worktree. Every attack runs for real as a
# `command` task through clockworkd and the real sandboxed cw-runner; every check is
# what a person or the daemon does afterwards, outside any sandbox: git status, log,
# show, fsck, restore ., commit --amend in the user's repository and in the run's
# worktree, cwctl status while the run ends. A row passes only when the attack left no
# trace there. The attacks find the user's repository the way an attacker would (the
# common dir, the alternates file), so the same script shows them succeeding on a build
# from before the redesign (point CW_BIN at it) and failing on this one.
#
# Env: CW_BIN, CW_SRC (as the integration tests). Exit 0 when every row passes.
set -uo pipefail
. "${CW_SRC:?}/test/integration/daemon_lib.bash" || exit 1
set +e
command -v python3 >/dev/null || fail "needs python3"

H=$HOME
MARK=$T/pwned			# any file made here means code ran outside the sandbox
SECRET=CWSECRET-gitcfg-$RANDOM$RANDOM
printf 'export PATH=$HOME/bin:$PATH\n' > "$H/.bashrc"
printf '# profile\n' > "$H/.profile"
mkdir -p "$T/pids"
# Each row attacks a repository of its own, so that one row's damage cannot hide
# another's: fresh_repo makes it, with what a real one holds, and snapshots it.
fresh_repo() {
	rm -f "$T"/pwned*	# one row's marker is not the next row's verdict
	U=$T/user-$1
	new_repo "$U"
	echo "the real readme" > "$U/README"
	git -C "$U" add README
	git -C "$U" -c user.name=t -c user.email=t@example.com commit -q -m readme
	# Credentials as CI checkouts and clones leave them in a repository's config.
	git -C "$U" config remote.origin.url "https://x-access-token:$SECRET@example.invalid/o/r.git"
	git -C "$U" config http.https://example.invalid/.extraheader "AUTHORIZATION: basic $SECRET"
	git -C "$U" config user.name t
	git -C "$U" config user.email t@example.com
	README_BLOB=$(git -C "$U" rev-parse main:README)
	HOME_SNAP=$(home_digest)
}
printf 'api_port: 0\nmax_concurrent_runs: 1\n' > "$CLOCKWORK_HOME/config.yaml"
start_daemon --stop-grace 1

n=0 failed=0 ROWS=()
row() {	# row NAME VERDICT [WHY]
	n=$((n + 1))
	ROWS+=("$(printf '%2d %-64s | %s' "$n" "$1" "$2${3:+: $3}")")
	printf '%s\n' "${ROWS[-1]}"
	if [ "${CW_ESCAPE_VERBOSE:-0}" = 1 ] && [ -s "$T/last-run" ]; then
		cwctl run show "$(cat "$T/last-run")" --json 2>&1 | grep -E '"(status|error|quarantine|imported|final_commit)"' | sed 's/^/    /'
		cwctl run logs "$(cat "$T/last-run")" 2>&1 | tail -n 5 | sed 's/^/    log: /'
		: > "$T/last-run"
	fi
	[ "$2" = PASS ] || failed=$((failed + 1))
}
digest() { find "$@" -printf '%P %m %y %l\n' -type f -exec sha256sum {} + 2>&1 | sha256sum; }
home_digest() { digest "$H/.bashrc" "$H/.profile" "$U/.git/hooks" "$U/.git/config"; }

# The daemon must keep answering whatever a run left behind; when it does not (the
# attack worked), it is restarted so that the next rows still run.
daemon_ok() { timeout 5 "$CW_BIN/cwctl" status >/dev/null 2>&1; }
revive_daemon() {
	kill -KILL "$DPID" 2>/dev/null; wait "$DPID" 2>/dev/null; DPID=
	rm -f "$CLOCKWORK_HOME/clockworkd.port"
	start_daemon --stop-grace 1
}

# attack_run TASK SCRIPT: run SCRIPT as a command task on the user's repository and
# wait (bounded) for the run to end. Prints the run id.
attack_run() {
	local task=$1 script=$2 id
	cwctl task add "$task" --engine command --repo "$U" --mode acceptEdits --seconds 60 \
	    --prompt "$script" >/dev/null || { echo "task add failed" >&2; return 1; }
	id=$(cwctl run start "$task") || return 1
	echo "$id" > "$T/last-run"
	wait_until 90 "run $id to end" run_ended "$id"
	echo "$id"
}

# What a person does afterwards, for real, with a deadline: in the user's repository,
# and in the run's worktree if there is one. Prints what went wrong.
person_checks() {
	local wt=$1 why=
	timeout 20 git -C "$U" status --porcelain >/dev/null 2>&1 || why="$why git status failed;"
	timeout 20 git -C "$U" log --oneline -1 main >/dev/null 2>&1 || why="$why git log failed;"
	[ "$(timeout 20 git -C "$U" show main:README 2>/dev/null)" = "the real readme" ] ||
	    why="$why main:README is not what it was;"
	timeout 60 git -C "$U" fsck --no-progress >/dev/null 2>&1 || why="$why git fsck failed;"
	if [ -n "$wt" ] && [ -d "$wt" ]; then
		timeout 20 git -C "$wt" status >/dev/null 2>&1
		timeout 20 git -C "$wt" restore . >/dev/null 2>&1
		timeout 20 git -C "$wt" commit -q --amend --no-edit >/dev/null 2>&1
	fi
	[ "$(home_digest)" = "$HOME_SNAP" ] || why="$why ~/.bashrc, ~/.profile or the repo's hooks/config changed;"
	ls "$T" | grep -q '^pwned' && why="$why code ran outside the sandbox ($(ls "$T" | grep pwned | tr '\n' ' '));"
	echo "$why"
}

# The common dir, and every object store it borrows: where the attacks aim.
FIND_STORES='C=$(git rev-parse --path-format=absolute --git-common-dir); S="$C/objects $(cat "$C/objects/info/alternates" 2>/dev/null)"'

# 1. Delete the user's objects (unpushed history gone).
fresh_repo del
id=$(attack_run del-objects "$FIND_STORES; for s in \$S; do rm -rf \"\$s\"/?? \"\$s\"/pack/*; done; true")
why=$(person_checks "$(run_field "$id" worktree)")
row "delete the user's objects (rm -rf objects/??)" "$([ -z "$why" ] && echo PASS || echo FAIL)" "$why"

fresh_repo swap
# 1b. Replace the loose object behind main:README with another blob's: same ref, new content.
id=$(attack_run swap-object "$FIND_STORES; B=\$(echo evil | git hash-object -w --stdin);
b1=\$(echo \$B | cut -c1-2); b2=\$(echo \$B | cut -c3-);
for s in \$S; do f=\$s/${README_BLOB:0:2}/${README_BLOB:2}; [ -f \"\$f\" ] || continue;
for t in \$S; do g=\$t/\$b1/\$b2; [ -f \"\$g\" ] && { chmod u+w \"\$f\"; cp \"\$g\" \"\$f\"; }; done; done; true")
why=$(person_checks "$(run_field "$id" worktree)")
row "replace the object behind main:README (no ref moves)" "$([ -z "$why" ] && echo PASS || echo FAIL)" "$why"

fresh_repo fifo1
# 2. A FIFO where the user's git reads: objects/info/alternates of the user's store.
id=$(attack_run fifo-alternates "$FIND_STORES; for s in \$S; do [ \"\$s\" = \"\$C/objects\" ] && [ -n \"\$(cat \$C/objects/info/alternates 2>/dev/null)\" ] && continue; rm -f \"\$s/info/alternates\"; mkfifo \"\$s/info/alternates\"; done; true")
why=$(person_checks "$(run_field "$id" worktree)")
[ -p "$U/.git/objects/info/alternates" ] && { rm -f "$U/.git/objects/info/alternates"; why="$why a FIFO sits in the user's store;"; }
row "plant a FIFO at the user's objects/info/alternates" "$([ -z "$why" ] && echo PASS || echo FAIL)" "$why"

fresh_repo fifo2
# 2b. A FIFO at the run's index: the daemon reads the run's git state when the run ends.
cwctl task add fifo-index --engine command --repo "$U" --mode acceptEdits --seconds 60 --prompt \
    'G=$(git rev-parse --absolute-git-dir); echo x > new.txt; rm -f "$G/index"; mkfifo "$G/index"' >/dev/null
id=$(cwctl run start fifo-index)
echo "$id" > "$T/last-run"
why=
wait_until 30 "run $id to end" run_ended "$id" || why="the run never ended (daemon stuck);"
daemon_ok || why="$why clockworkd does not answer;"
[ -n "$why" ] && revive_daemon
why="$why$(person_checks "$(run_field "$id" worktree)")"
row "plant a FIFO at the run's index (freezes the daemon's reader)" "$([ -z "$why" ] && echo PASS || echo FAIL)" "$why"

fresh_repo craft
# 3. A crafted index and planted symlinks in the run's git directory: the person's own
# git, later, in the run's worktree, writes outside (~/.bashrc, a hook in the user's repo).
CRAFT=$(cat <<'PY'
import hashlib, os, struct, subprocess, sys
def blob(data):
    return subprocess.run(["git", "hash-object", "-w", "--stdin"], input=data,
                          capture_output=True, check=True).stdout.decode().strip()
entries = [(sys.argv[2], blob(b"touch " + sys.argv[4].encode() + b"\n"), 0o100755),
           (sys.argv[3], blob(b"echo pwned\n"), 0o100644)]
entries.sort()
out = b"DIRC" + struct.pack(">II", 2, len(entries))
for path, sha, mode in entries:
    p = path.encode()
    e = struct.pack(">IIIIIIIIII", 0, 0, 0, 0, 0, 0, mode, 0, 0, 0) + bytes.fromhex(sha)
    e += struct.pack(">H", min(len(p), 0xfff)) + p
    e += b"\0" * (8 - (len(e) % 8))
    out += e
out += hashlib.sha1(out).digest()
open(sys.argv[1], "wb").write(out)
PY
)
# The worktree is <CLOCKWORK_HOME>/worktrees/<task>/<run>: climb to / and name the targets.
UP=$(python3 -c "import sys; print('../' * (len('$CLOCKWORK_HOME/worktrees/craft/x'.strip('/').split('/'))))")
id=$(attack_run craft "G=\$(git rev-parse --absolute-git-dir);
python3 -c \"\$(cat <<'EOF'
$CRAFT
EOF
)\" \"\$G/index\" \"$UP${U#/}/.git/hooks/post-checkout\" \"$UP${H#/}/.bashrc\" \"$T/pwned-hook\";
ln -sf $H/.bashrc \"\$G/COMMIT_EDITMSG\"; mkdir -p \"\$G/logs\"; rm -f \"\$G/logs/HEAD\"; ln -sf $H/.profile \"\$G/logs/HEAD\";
B=\$(git symbolic-ref -q HEAD); mkdir -p \"\$G/logs/\$(dirname \$B)\"; rm -f \"\$G/logs/\$B\"; ln -sf $H/.profile \"\$G/logs/\$B\"; true")
why=$(person_checks "$(run_field "$id" worktree)")
[ -e "$U/.git/hooks/post-checkout" ] && why="$why a hook was dropped into the user's repository;"
row "crafted index + symlinked COMMIT_EDITMSG/reflogs vs the person's git" "$([ -z "$why" ] && echo PASS || echo FAIL)" "$why"

fresh_repo badtree
# 3b. A tree git itself refuses (a ".git" entry), reachable from the run's branch through a
# merge whose own tree is clean: the import must refuse the objects, not just the checkout.
id=$(attack_run bad-tree 'B=$(echo x | git hash-object -w --stdin);
T1=$(printf "100644 blob %s\tconfig\n" "$B" | git mktree);
T2=$(printf "040000 tree %s\t.git\n100644 blob %s\tok.txt\n" "$T1" "$B" | git mktree);
E=$(git -c user.name=a -c user.email=a@b commit-tree "$T2" -p HEAD -m evil);
M=$(git -c user.name=a -c user.email=a@b commit-tree "HEAD^{tree}" -p HEAD -p "$E" -m merge);
git update-ref "$(git symbolic-ref HEAD)" "$M"; true')
branch=$(run_field "$id" branch)
why=$(person_checks "")
if git -C "$U" rev-parse -q --verify "refs/heads/$branch" >/dev/null; then
	git -C "$U" rev-list --objects "$branch" | grep -q ' \.git$' &&
	    why="$why a tree with a .git entry reached the user's repository;"
fi
[ "$(sql "SELECT count(*) FROM journal WHERE run_id='$id' AND kind='import_refused'")" = 1 ] ||
    why="$why no import_refused in the journal;"
row "commit a tree with a .git entry behind a clean merge" "$([ -z "$why" ] && echo PASS || echo FAIL)" "$why"

fresh_repo two
# 4. One run moves another run's branch of the same task.
cwctl task add two --engine command --repo "$U" --mode acceptEdits --seconds 60 \
    --prompt 'echo "$CW_RUN_ID" > mine.txt; git add mine.txt; git -c user.name=a -c user.email=a@b commit -qm mine;
for r in $(git for-each-ref --format="%(refname)" refs/heads/clockwork/two/); do
  [ "$r" = "$(git symbolic-ref HEAD)" ] && continue
  git update-ref "$r" "$(git -c user.name=a -c user.email=a@b commit-tree HEAD^{tree} -m rewritten)"; done; true' >/dev/null
a=$(cwctl run start two); wait_until 60 "run a" run_ended "$a"
a_tip=$(git -C "$U" rev-parse -q --verify "refs/heads/clockwork/two/$a")
b=$(cwctl run start two); wait_until 60 "run b" run_ended "$b"
why=
[ -n "$a_tip" ] || why="run a's branch never reached the user's repository;"
[ "$(git -C "$U" rev-parse -q --verify "refs/heads/clockwork/two/$a")" = "$a_tip" ] ||
    why="$why run b moved run a's branch;"
git -C "$U" log -1 --format=%s "refs/heads/clockwork/two/$a" 2>/dev/null | grep -q rewritten &&
    why="$why run a's branch holds run b's commit;"
row "a run moves another run's branch of the same task" "$([ -z "$why" ] && echo PASS || echo FAIL)" "$why"

fresh_repo cfg
# 6. Credentials in the user's repository config.
# What the run reads goes out hex-encoded: the daemon masks run output as it enters,
# so a token the run did read would show in its log only as a placeholder.
id=$(attack_run read-config "{ $FIND_STORES; cat \"\$C/config\"; for s in \$S; do cat \"\$s/../config\"; done; git config --get remote.origin.url; } 2>&1 | od -An -tx1 -v; true")
why=
hexlog=$(grep -E '^( [0-9a-f]{2})+$' "$(run_field "$id" log_path)" | tr -d ' \n')
hexsec=$(printf %s "$SECRET" | od -An -tx1 -v | tr -d ' \n')
[ -n "$hexlog" ] || why="the run's output did not reach its log;"
case "$hexlog" in *"$hexsec"*) why="the token in the repo's config reached the run's output;" ;; esac
grep -rqs "$SECRET" "$CLOCKWORK_HOME/worktrees" && why="$why the token was copied into the run's repository;"
row "read credentials in the user's .git/config" "$([ -z "$why" ] && echo PASS || echo FAIL)" "$why"

# 5. cw-runner exec (cwctl sandbox exec) in an ordinary repository.
R=$T/plain-repo
new_repo "$R"
R_SNAP=$(digest "$R/.git/hooks" "$R/.git/config")
timeout 60 "$CW_BIN/cw-runner" exec --workdir "$R" -- sh -c "
printf '#!/bin/sh\ntouch $T/pwned-exec-hook\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit;
git config core.fsmonitor 'touch $T/pwned-exec-fsmonitor; false'; true" >/dev/null 2>&1
why=
timeout 20 git -C "$R" status >/dev/null 2>&1
echo more >> "$R/file.txt"
timeout 20 git -C "$R" -c user.name=t -c user.email=t@e commit -qam more >/dev/null 2>&1
ls "$T" | grep -q '^pwned-exec' && why="code ran at the person's git status/commit ($(ls "$T" | grep pwned-exec | tr '\n' ' '));"
rm -f "$T"/pwned-exec*
git -C "$R" config --unset core.fsmonitor 2>/dev/null; rm -f "$R/.git/hooks/pre-commit"
[ "$(digest "$R/.git/hooks" "$R/.git/config")" = "$R_SNAP" ] || why="$why the repository's hooks or config changed;"
row "sandbox exec in a repository plants a hook and core.fsmonitor" "$([ -z "$why" ] && echo PASS || echo FAIL)" "$why"

fresh_repo slow
# 7. An import that takes longer than a second (100 MB the run never committed): the
# daemon's once-a-second sweep of stray processes must not take the import child for
# one and kill it, leaving the run's own repository (and its core.fsmonitor) where the
# report says the worktree is.
id=$(attack_run slow "git config core.fsmonitor 'touch $T/pwned-slow-fsmonitor; false';
head -c 100000000 /dev/urandom > big.bin; true")
wt=$(run_field "$id" worktree)
why=
run_field "$id" report | grep -q '"imported":true' || why="not imported: $(run_field "$id" report | tr -d '\n\t' | grep -o '"error":"[^"]*"' | head -1);"
[ -d "$wt/.git" ] && why="$why the run's own repository is at the worktree path;"
why="$why$(person_checks "$wt")"
row "an import slower than the daemon's sweep (100 MB) is not cut short" "$([ -z "$why" ] && echo PASS || echo FAIL)" "$why"

fresh_repo forge
# 8. The seal's output forged from inside (a clean filter writes "<commit> 0 0" to every
# stdout it can reach) to point the run's branch at a commit the user had dropped.
DROPPED=$(git -C "$U" commit-tree "$(git -C "$U" rev-parse main^{tree})" -m "DROPPED secret commit")
id=$(attack_run forge "printf '* filter=x\\n' > .gitattributes;
git config filter.x.clean \"sh -c 'for f in /proc/[0-9]*/fd/1; do echo $DROPPED 0 0 > \\\$f; done 2>/dev/null; cat'\";
echo change >> file.txt; true")
branch=$(run_field "$id" branch)
why=$(person_checks "")
[ "$(git -C "$U" rev-parse -q --verify "refs/heads/$branch" 2>/dev/null)" = "$DROPPED" ] &&
    why="$why the run's branch points at the dropped commit;"
row "forge the seal's result to point the branch at a dropped commit" "$([ -z "$why" ] && echo PASS || echo FAIL)" "$why"

echo "git escape rows: $n attempts, $((n - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
