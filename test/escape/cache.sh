#!/usr/bin/env bash
# The escape matrix's shared-cache rows. Every run writes the tool caches under
# $CLOCKWORK_HOME/cache (npm, pip, XDG, go, ...), and the next run's cw-runner, outside
# any sandbox and as the user, makes its cache directories there before it starts: a
# run that swaps one for a symlink must not make that mkdir write elsewhere, and one
# that swaps it for a file must not refuse every later run. Real `command` runs through
# clockworkd and the sandboxed cw-runner; each row checks the outside directory and the
# next run.
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
	cwctl task add "$1" --seconds 60 --prompt "$2" >/dev/null || return 1
	id=$(cwctl run start "$1") || return 1
	wait_until 60 "run $id" run_ended "$id"
	echo "$id"
}

# XDG_CACHE_HOME is <cache>/xdg/cache and GOMODCACHE <cache>/go/pkg/mod: the run climbs
# to <cache> and replaces xdg and go/pkg with links to a directory outside.
id=$(run_cmd plant-links "cd \"\$XDG_CACHE_HOME/../..\" && rm -rf xdg go/pkg && ln -s $OUTSIDE xdg && ln -s $OUTSIDE go/pkg; ls -l")
id2=$(run_cmd after-links 'echo next run')
why=
[ -z "$(ls -A "$OUTSIDE")" ] || why="the next run's cw-runner made $(ls "$OUTSIDE" | tr '\n' ' ')in $OUTSIDE;"
[ "$(run_status "$id2")" = completed ] || why="$why the next run: $(run_status "$id2");"
row "symlinks planted for the next run's cache mkdir" "$([ -z "$why" ] && echo PASS || echo FAIL)" "$why"

id=$(run_cmd plant-file "cd \"\$XDG_CACHE_HOME/../..\" && rm -rf xdg && echo x > xdg; ls -l")
id2=$(run_cmd after-file 'echo next run')
why=
[ "$(run_status "$id2")" = completed ] || why="the next run: $(run_status "$id2") ($(run_field "$id2" report | grep -o '"error":"[^"]*"'));"
row "a file planted where the next run's cache directory goes" "$([ -z "$why" ] && echo PASS || echo FAIL)" "$why"

echo "cache escape rows: $n attempts, $((n - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
