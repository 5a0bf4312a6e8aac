# The toolchain tier's shared driver (sourced by test/toolchain/*.sh, issue 30). Each
# script names an ecosystem; tc_main then, against the real registry, through real
# clockworkd runs of a `command` task in the sandbox with the default egress policy
# plus only that ecosystem's shipped rule set (`cwctl network TASK --allow SET`, never
# `network: open`):
#   1. runs the fixture's build.sh (test/toolchain/fixtures/<set>/) twice in the same
#      task: both must pass; the second must hit the task's cache (no connection to
#      the ecosystem's download host, fewer bytes down) and its time is reported;
#   2. checks that nothing was left in HOME or /tmp (the run's own files live in its
#      worktree, its TMPDIR and its task's cache root, all under CLOCKWORK_HOME);
#   3. runs it in a second task without the set: the registry is refused, and the
#      refusal shows in the run's log and its report.
# Exits 77 when the tool is not installed (scripts/setup installs them).
set -euo pipefail
. "${CW_SRC:?}/test/integration/daemon_lib.bash"

FIX=$CW_SRC/test/toolchain/fixtures
# go leaves its module cache read-only (0555): make the scratch tree removable for the
# normal user before daemon_lib's cleanup removes it (root needs no bit).
trap 'tc_rc=$?; chmod -R u+w "$T" 2>/dev/null; (exit $tc_rc); cleanup' EXIT

# tc_need NAME PATH...: the first of the paths that runs, in TC_TOOL; else skip.
tc_need() {
	local name=$1 p
	shift
	for p in "$@"; do
		if [ -x "$p" ]; then TC_TOOL=$p; return 0; fi
	done
	echo "SKIP: no $name ($*): scripts/setup installs it"
	exit 77
}

# tc_repo SET: a repository holding the fixture, committed.
tc_repo() {
	new_repo "$T/repo-$1"
	cp -r "$FIX/$1"/. "$T/repo-$1/"
	git -C "$T/repo-$1" add -A
	git -C "$T/repo-$1" -c user.name=t -c user.email=t@example.com commit -q -m fixture
}

# tc_run TASK: a run of the task, ended; prints its id.
tc_run() {
	local id
	id=$(cwctl run start "$1") || return 1
	wait_until 900 "run $id" run_ended "$id" || return 1
	echo "$id"
}

# tc_hosts RUN: "host:port verdict bytes_down" of each connection the run's proxy saw.
tc_hosts() {
	sql "SELECT json_extract(data, '\$.host') || ':' || json_extract(data, '\$.port') ||
	    ' ' || json_extract(data, '\$.verdict') || ' ' ||
	    coalesce(json_extract(data, '\$.bytes_down'), 0)
	    FROM run_events WHERE run_id = '$1' AND kind IN ('net', 'net_deny') ORDER BY id"
}
tc_bytes() { tc_hosts "$1" | awk '{ s += $3 } END { print s + 0 }'; }
tc_seconds() { sql "SELECT printf('%.1f', spent_seconds) FROM runs WHERE id = '$1'"; }
tc_log() { cat "$CLOCKWORK_HOME/runs/$1.log" 2>/dev/null; }

# What the user's HOME and /tmp hold (names, owner uid), to compare before and after.
# /tmp is shared with everything else on the machine: only entries owned by this user
# that name a toolchain's own temporary files are compared.
tc_snapshot() {
	(cd "$HOME" && find . -mindepth 1 -printf '%p\n' | sort)
	find /tmp -mindepth 1 -maxdepth 1 -uid "$(id -u)" \( -name 'pip-*' -o -name 'go-*' \
	    -o -name 'cargo*' -o -name 'rust*' -o -name 'npm-*' -o -name '.npm*' \
	    -o -name 'hsperfdata_*' -o -name 'surefire*' -o -name 'maven*' -o -name '*.m2*' \
	    -o -name 'node-compile-cache' -o -name 'v8-compile-cache*' -o -name 'go-build*' \
	    -o -name 'pip*' -o -name 'tmp*.tmp' \) -printf '/tmp/%f\n' | sort
}

# tc_main SET TOOL-ENV DOWNLOAD-HOST [FETCHED]: the whole scenario (above). TOOL-ENV is
# an assignment the build script reads (CW_TC_CARGO=/usr/bin/cargo ...); DOWNLOAD-HOST
# the host that serves the ecosystem's package files, which a cached run must not
# reach ("" where this machine's registry answers leave the tool nothing to keep, see
# docs/performance.md); FETCHED, a pattern of the tool's own output that the first run
# prints and a cached run must not (a download, a build the cache saves).
tc_main() {
	local set=$1 toolenv=$2 dl=$3 fetched=${4:-} id1 id2 id3 t1 t2 why
	tc_repo "$set"
	start_daemon --stop-grace 1
	tc_snapshot > "$T/before"
	cwctl task add "tc-$set" --repo "$T/repo-$set" --seconds 900 \
	    --command "$toolenv sh ./build.sh" >/dev/null || fail "task add"
	cwctl network "tc-$set" --allow "$set" >/dev/null || fail "cwctl network --allow $set"
	# A misspelt set is refused, naming it and the sets there are.
	if out=$(cwctl network "tc-$set" --allow "${set}x" 2>&1); then
		fail "cwctl network --allow ${set}x was accepted"
	fi
	grep -q "'${set}x'.*rule set: python, rust, go, java, node" <<<"$out" ||
	    fail "cwctl network --allow ${set}x: $out"

	id1=$(tc_run "tc-$set") || fail "first run did not end"
	t1=$(tc_seconds "$id1")
	why=
	[ "$(run_status "$id1")" = completed ] || why="status $(run_status "$id1");"
	grep -q 'CW-TC-RESULT' <<<"$(tc_log "$id1")" || why="$why no result line;"
	[ -z "$why" ] || { tc_log "$id1" | tail -n 40 >&2; tc_hosts "$id1" >&2; fail "first run: $why"; }
	tc_hosts "$id1" | sed 's/^/   first run: /'
	[ -z "$dl" ] || grep -q "^$dl:443 allowed" <<<"$(tc_hosts "$id1")" ||
	    fail "the first run did not download from $dl (hosts: $(tc_hosts "$id1" | tr '\n' ' '))"
	[ -z "$fetched" ] || grep -qE "$fetched" <<<"$(tc_log "$id1")" ||
	    { tc_log "$id1" >&2; fail "the first run did not print '$fetched'"; }
	! grep -q ' denied ' <<<"$(tc_hosts "$id1")" || fail "the first run was refused a host the '$set' set should hold: $(tc_hosts "$id1" | grep denied | tr '\n' ' ')"
	pass "$set: the first run builds against the real registry through the '$set' set (${t1} s, $(tc_bytes "$id1") bytes down)"

	id2=$(tc_run "tc-$set") || fail "second run did not end"
	t2=$(tc_seconds "$id2")
	why=
	[ "$(run_status "$id2")" = completed ] || why="status $(run_status "$id2");"
	grep -q 'CW-TC-RESULT' <<<"$(tc_log "$id2")" || why="$why no result line;"
	[ -z "$why" ] || { tc_log "$id2" | tail -n 40 >&2; fail "second run: $why"; }
	tc_hosts "$id2" | sed 's/^/   second run: /'
	[ -z "$dl" ] || ! grep -q "^$dl:" <<<"$(tc_hosts "$id2")" ||
	    fail "the second run downloaded from $dl again: the task's cache was not used"
	[ -z "$fetched" ] || ! grep -E "$fetched" <<<"$(tc_log "$id2")" >&2 ||
	    fail "the second run printed '$fetched' again (above): the task's cache was not used"
	[ "$(tc_bytes "$id2")" -le "$(tc_bytes "$id1")" ] || fail "the second run read more than the first"
	pass "$set: the second run hits the task's cache (${t2} s against ${t1} s; $(tc_bytes "$id2") bytes down against $(tc_bytes "$id1"))"
	echo "CW-TC-FIGURE $set first=${t1}s cached=${t2}s user=$(id -un)"

	tc_snapshot > "$T/after"
	# Only what appeared counts: an entry gone since (a concurrent pip of another test
	# that ended meanwhile) is nothing these runs left.
	comm -13 "$T/before" "$T/after" > "$T/added"
	[ ! -s "$T/added" ] || { cat "$T/added" >&2; fail "the runs left files outside the worktree and the task's caches (above)"; }
	pass "$set: nothing left in HOME or /tmp"

	cwctl task add "tc-$set-none" --repo "$T/repo-$set" --seconds 300 \
	    --command "$toolenv sh ./build.sh" >/dev/null || fail "task add"
	id3=$(tc_run "tc-$set-none") || fail "the run without the set did not end"
	grep -q 'CW-TC-RESULT' <<<"$(tc_log "$id3")" && fail "without the '$set' set the build passed"
	grep -q ' denied ' <<<"$(tc_hosts "$id3")" || fail "without the set no refusal was recorded ($(tc_hosts "$id3" | tr '\n' ' '))"
	grep -q 'network: refused' <<<"$(tc_log "$id3")" || fail "the run's log does not show the refusal"
	grep -q '"denied":	[1-9]' <<<"$(cwctl run show "$id3" --json)" || fail "the report counts no refusal"
	pass "$set: without the set the registry is refused, in the log and the report ($(tc_hosts "$id3" | awk '$2 == "denied" { print $1 }' | sort -u | tr '\n' ' '))"

	# The task's caches go with the task: gc removes them, read-only trees included.
	local tid
	tid=$(sql "SELECT id FROM tasks WHERE name = 'tc-$set'")
	[ -d "$CLOCKWORK_HOME/caches/tasks/$tid" ] || fail "no cache root for the task"
	cwctl task rm "tc-$set" >/dev/null || fail "cwctl task rm"
	out=$(cwctl gc 2>&1) || fail "cwctl gc: $out"
	[ ! -e "$CLOCKWORK_HOME/caches/tasks/$tid" ] ||
	    fail "cwctl gc left the task's caches: $(find "$CLOCKWORK_HOME/caches/tasks/$tid" -maxdepth 3 | head -n 5 | tr '\n' ' ') ($out)"
	pass "$set: cwctl gc removes the removed task's caches"
	stop_daemon
}
