#!/usr/bin/env bash
# The escape matrix's cache rows. Every run's tool caches (npm, pip, XDG, cargo, go, ...)
# live in its task's own root, $CLOCKWORK_HOME/caches/tasks/<task id> (SPEC U2), and the
# task's next run's cw-runner, outside any sandbox and as the user, names its cache
# directories there before it starts (each tool makes its own, inside the sandbox): a
# run that swaps one for a symlink must not make the next cw-runner write elsewhere,
# and one that swaps it for a file must not refuse its task's later runs. Nothing one task writes there reaches another task: not a cargo
# configuration that runs code, not a file in any tool home. Real `command` runs
# through clockworkd and the sandboxed cw-runner; each row checks the outside
# directory and the next run.
set -uo pipefail
. "${CW_SRC:?}/test/integration/daemon_lib.bash" || exit 1
set +e

OUTSIDE=$T/outside
mkdir -p "$OUTSIDE"
start_daemon --stop-grace 1
n=0 failed=0
row() {
	n=$((n + 1))
	printf '%2d %-62s | %s\n' "$n" "$1" "$2${3:+: $3}"
	[ "$2" = PASS ] || failed=$((failed + 1))
}
run_cmd() {	# run_cmd TASK SCRIPT: a scratch run; prints its id once it has ended
	local id
	cwctl task add "$1" --engine command --seconds 60 --prompt "$2" >/dev/null || return 1
	id=$(cwctl run start "$1") || return 1
	wait_until 60 "run $id" run_ended "$id"
	echo "$id"
}

run_again() {	# run_again TASK: another run of it; prints its id once it has ended
	local id
	id=$(cwctl run start "$1") || return 1
	wait_until 60 "run $id" run_ended "$id"
	echo "$id"
}

# XDG_CACHE_HOME is <root>/xdg/cache and GOMODCACHE <root>/go/pkg/mod: the run climbs
# to its root and replaces xdg and go/pkg with links to a directory outside; the same
# task's next run's cw-runner must make nothing there (nor anywhere the links lead).
ROOT='r=$(dirname "$(dirname "$XDG_CACHE_HOME")");'
id=$(run_cmd plant-links "$ROOT if [ -e \"\$r/planted\" ]; then echo next run; else cd \"\$r\" && rm -rf xdg go/pkg && mkdir -p go && ln -s $OUTSIDE xdg && ln -s $OUTSIDE go/pkg && touch planted; ls -l; fi")
id2=$(run_again plant-links)
why=
[ -z "$(ls -A "$OUTSIDE")" ] || why="the next run's cw-runner made $(ls "$OUTSIDE" | tr '\n' ' ')in $OUTSIDE;"
[ "$(run_status "$id2")" = completed ] || why="$why the next run: $(run_status "$id2");"
grep -q '^next run' "$CLOCKWORK_HOME/runs/$id2.log" || why="$why the next run did not see its task's root;"
row "symlinks planted for the next run's cache mkdir" "$([ -z "$why" ] && echo PASS || echo FAIL)" "$why"

id=$(run_cmd plant-file "$ROOT if [ -e \"\$r/planted\" ]; then echo next run; else cd \"\$r\" && rm -rf xdg && echo x > xdg && touch planted; ls -l; fi")
id2=$(run_again plant-file)
why=
[ "$(run_status "$id2")" = completed ] || why="the next run: $(run_status "$id2") ($(run_field "$id2" report | grep -o '"error":"[^"]*"'));"
grep -q '^next run' "$CLOCKWORK_HOME/runs/$id2.log" || why="$why the next run did not see its task's root;"
row "a file planted where the next run's cache directory goes" "$([ -z "$why" ] && echo PASS || echo FAIL)" "$why"

# U2: no writable state is shared between tasks. Task A's run plants a cargo
# configuration in its CARGO_HOME: a build.rustc-wrapper that announces itself and then
# runs the real rustc. Task B's run builds and runs a crate (no dependencies, offline)
# with the real cargo; the wrapper must not run there. Skipped when cargo is missing.
CARGO=$(command -v /usr/bin/cargo || true)
if [ -n "$CARGO" ]; then
	plant='mkdir -p "$CARGO_HOME/bin" && printf "%s\n" "#!/bin/sh" "echo CW-PLANTED-WRAPPER-RAN >&2" "exec \"\$@\"" > "$CARGO_HOME/bin/wrap" && chmod 755 "$CARGO_HOME/bin/wrap" && printf "[build]\nrustc-wrapper = \"%s/bin/wrap\"\n" "$CARGO_HOME" > "$CARGO_HOME/config.toml" && cat "$CARGO_HOME/config.toml"'
	id=$(run_cmd cargo-plant "$plant")
	build='cd "$TMPDIR" && mkdir -p hello/src && printf "[package]\nname = \"hello\"\nversion = \"0.1.0\"\nedition = \"2021\"\n" > hello/Cargo.toml && printf "fn main() { println!(\"CW-HELLO-FROM-B\"); }\n" > hello/src/main.rs && cd hello && RUSTC=/usr/bin/rustc '"$CARGO"' run --offline -q'
	id2=$(run_cmd cargo-victim "$build")
	why=
	[ "$(run_status "$id")" = completed ] || why="the planting run: $(run_status "$id");"
	grep -q CW-HELLO-FROM-B "$CLOCKWORK_HOME/runs/$id2.log" 2>/dev/null ||
		why="$why task B's cargo run did not build and run the crate ($(run_status "$id2"): $(tail -c 300 "$CLOCKWORK_HOME/runs/$id2.log" 2>/dev/null | tr '\n' ' '));"
	! grep -q CW-PLANTED-WRAPPER-RAN "$CLOCKWORK_HOME/runs/$id2.log" 2>/dev/null ||
		why="$why task B's cargo ran task A's rustc-wrapper;"
	row "task A's CARGO_HOME/config.toml runs in task B's cargo build" "$([ -z "$why" ] && echo PASS || echo FAIL)" "$why"
else
	echo "SKIP: no /usr/bin/cargo (scripts/setup installs Debian's cargo)"
	skipped=1
fi

# Every redirected tool home at once: task A drops a canary in each, task B looks in
# each of its own and must find none (XDG data/state, GOPATH, GEM_HOME, BUNDLE_*, ...).
VARS="npm_config_cache PNPM_HOME npm_config_store_dir YARN_CACHE_FOLDER PIP_CACHE_DIR XDG_CACHE_HOME XDG_DATA_HOME XDG_STATE_HOME CARGO_HOME GOPATH GOMODCACHE GOCACHE GEM_HOME BUNDLE_PATH BUNDLE_USER_HOME UV_CACHE_DIR POETRY_CACHE_DIR GRADLE_USER_HOME COMPOSER_HOME NUGET_PACKAGES"
id=$(run_cmd canary-plant "for v in $VARS; do eval d=\\\$\$v; [ -n \"\$d\" ] && mkdir -p \"\$d\" && echo planted > \"\$d/cw-canary-\$v\" && echo \"planted \$v\"; done")
id2=$(run_cmd canary-look "for v in $VARS; do eval d=\\\$\$v; [ -n \"\$d\" ] || echo \"CW-UNSET \$v\"; ls \"\$d\"/cw-canary-* 2>/dev/null | sed 's/^/CW-FOUND /'; done; echo looked")
why=
n_planted=$(grep -c '^planted ' "$CLOCKWORK_HOME/runs/$id.log" 2>/dev/null)
[ "$n_planted" = "$(echo $VARS | wc -w)" ] || why="task A planted in ${n_planted:-0} homes;"
grep -q '^looked' "$CLOCKWORK_HOME/runs/$id2.log" 2>/dev/null || why="$why task B did not look ($(run_status "$id2"));"
found=$(grep -o 'cw-canary-[A-Za-z_]*' "$CLOCKWORK_HOME/runs/$id2.log" 2>/dev/null | sed 's/cw-canary-//' | sort -u | tr '\n' ' ')
[ -z "$found" ] || why="$why task B saw task A's files in: $found;"
! grep -q '^CW-UNSET' "$CLOCKWORK_HOME/runs/$id2.log" || why="$why not redirected in B: $(grep '^CW-UNSET' "$CLOCKWORK_HOME/runs/$id2.log" | tr '\n' ' ');"
row "task A's files in any tool home reach task B" "$([ -z "$why" ] && echo PASS || echo FAIL)" "$why"

# Nor can task B reach task A's root by its path: not to read it, not to write it.
tid=$(sql "SELECT id FROM tasks WHERE name = 'canary-plant'")
id2=$(run_cmd canary-reach "ls $CLOCKWORK_HOME/caches/tasks/$tid/cargo 2>&1 | sed 's/^/CW-LS /'; echo x > $CLOCKWORK_HOME/caches/tasks/$tid/cargo/cw-from-b 2>&1 | sed 's/^/CW-WRITE /'; ls $CLOCKWORK_HOME/caches/tasks 2>&1 | sed 's/^/CW-LIST /'; echo reached")
why=
grep -q '^reached' "$CLOCKWORK_HOME/runs/$id2.log" || why="task B did not run ($(run_status "$id2"));"
! grep -q '^CW-LS cw-canary' "$CLOCKWORK_HOME/runs/$id2.log" || why="$why task B listed task A's cargo home;"
[ ! -e "$CLOCKWORK_HOME/caches/tasks/$tid/cargo/cw-from-b" ] || why="$why task B wrote into task A's cargo home;"
! grep -q "^CW-LIST $tid\$" "$CLOCKWORK_HOME/runs/$id2.log" || why="$why task B listed the tasks' roots;"
grep '^CW-' "$CLOCKWORK_HOME/runs/$id2.log" | sed 's/^/   task B: /'
row "task B reaches task A's cache root by its path" "$([ -z "$why" ] && echo PASS || echo FAIL)" "$why"

# An archived task's caches serve no later run: gc removes its root, and only its.
tid=$(sql "SELECT id FROM tasks WHERE name = 'canary-plant'")
tid2=$(sql "SELECT id FROM tasks WHERE name = 'canary-look'")
why=
[ -d "$CLOCKWORK_HOME/caches/tasks/$tid/cargo" ] || why="task canary-plant had no cache root ($CLOCKWORK_HOME/caches/tasks/$tid);"
cwctl task rm canary-plant >/dev/null 2>&1 || why="$why cwctl task rm failed;"
out=$(cwctl gc 2>&1) || why="$why cwctl gc: $out;"
[ ! -e "$CLOCKWORK_HOME/caches/tasks/$tid" ] || why="$why gc left $CLOCKWORK_HOME/caches/tasks/$tid;"
[ -d "$CLOCKWORK_HOME/caches/tasks/$tid2" ] || why="$why gc removed the live task's caches;"
grep -q "tool caches removed" <<<"$out" || why="$why gc did not say so ($out);"
row "gc removes an archived task's caches, and only its" "$([ -z "$why" ] && echo PASS || echo FAIL)" "$why"

echo "cache escape rows: $n attempts, $((n - failed)) passed, $failed failed"
[ "$failed" -eq 0 ] || exit 1
[ -z "${skipped:-}" ] || exit 77
