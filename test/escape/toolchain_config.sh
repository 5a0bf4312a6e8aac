#!/usr/bin/env bash
# The escape matrix's toolchain configuration rows (issue 30, SPEC U2/U3). A run of
# task A writes every configuration and plugin path of pip, cargo, go, Maven and npm
# that it can name: the user's (~/.config/pip/pip.conf, ~/.pip/pip.conf,
# ~/.cargo/config.toml, ~/.config/go/env through `go env -w`, ~/.m2/settings.xml,
# ~/.mavenrc, ~/.npmrc through `npm config set`), its own task's
# tool homes ($CARGO_HOME/config.toml, Maven's repository root), and the files the
# tools look for in every directory above the working one (.cargo/config.toml,
# go.work, .mvn/jvm.config) in the worktree's parents, which every task's runs share.
# Then a run of task B and the user's own tools outside any run (HOME is the
# daemon's) use each tool: none may see anything A planted. Real `command` runs
# through clockworkd and the sandboxed cw-runner; a tool that is not installed is a
# SKIP (scripts/setup installs them all). npm's global npmrc (<prefix>/etc/npmrc) is
# not planted: it lies in /usr, read-only to every run, and a control run without the
# sandbox (CW_SANDBOX=off, where every row must fail) would write the machine's own.
set -uo pipefail
. "${CW_SRC:?}/test/integration/daemon_lib.bash" || exit 1
set +e

start_daemon --stop-grace 1
n=0 failed=0 skipped=
row() {
	n=$((n + 1))
	printf '%2d %-66s | %s\n' "$n" "$1" "$2${3:+: $3}"
	case $2 in PASS) ;; SKIP) skipped=1 ;; *) failed=$((failed + 1)) ;; esac
}
run_cmd() {	# run_cmd TASK SCRIPT: a run of a new task; prints its id once it has ended
	local id
	cwctl task add "$1" --engine command --seconds 120 --prompt "$2" >/dev/null || return 1
	id=$(cwctl run start "$1") || return 1
	wait_until 150 "run $id" run_ended "$id"
	echo "$id"
}
log() { cat "$CLOCKWORK_HOME/runs/$1.log" 2>/dev/null; }

PY=/usr/bin/python3 CARGO=/usr/bin/cargo MVN=/usr/bin/mvn NPM=$(command -v npm)
GO=
for g in /usr/local/go/bin/go /usr/lib/go/bin/go /usr/bin/go; do [ -x "$g" ] && { GO=$g; break; }; done
have_pip=; "$PY" -m pip --version >/dev/null 2>&1 && have_pip=1

# Task A: write each path; say which writes the kernel let through.
plant=$(cat <<EOF
w() { mkdir -p "\$(dirname "\$1")" 2>/dev/null; if printf '%b\n' "\$2" > "\$1" 2>/dev/null; then echo "CW-WROTE \$1"; else echo "CW-REFUSED \$1"; fi; }
up1=\$(dirname "\$PWD"); up2=\$(dirname "\$up1")
w "\$HOME/.config/pip/pip.conf" '[global]\nindex-url = http://cw-planted.invalid/simple'
w "\$HOME/.pip/pip.conf" '[global]\nindex-url = http://cw-planted.invalid/simple'
for d in "\$HOME/.cargo" "\$CARGO_HOME" "\$up1/.cargo" "\$up2/.cargo"; do w "\$d/config.toml" '[alias]\ncwplanted = "version"'; done
[ -z "$GO" ] || { $GO env -w GOFLAGS=-tags=cwplanted 2>&1 | sed 's/^/CW-GOENV /'; echo "CW-GOENV-FILE \$($GO env GOENV)"; }
w "\$HOME/.config/go/env" 'GOFLAGS=-tags=cwplanted'
for d in "\$up1" "\$up2"; do w "\$d/go.work" 'go 1.19\nuse ./cwplanted'; done
w "\$HOME/.m2/settings.xml" '<settings><localRepository>/cw-planted</localRepository></settings>'
w "\$HOME/.mavenrc" 'echo CW-PLANTED-MAVENRC >&2'
m2=\$(printf '%s' "\$MAVEN_OPTS" | sed -n 's/.*-Dmaven.repo.local=\([^ ]*\).*/\1/p')
[ -z "\$m2" ] || w "\$(dirname "\$m2")/settings.xml" '<settings><localRepository>/cw-planted</localRepository></settings>'
for d in "\$up1" "\$up2"; do w "\$d/.mvn/jvm.config" '-XX:+CwPlantedNoSuchOption'; done
w "\$HOME/.npmrc" 'init-author-name=CW-PLANTED'
[ -z "$NPM" ] || $NPM config set init-author-name CW-PLANTED 2>&1 | tail -n 1 | sed 's/^/CW-NPMSET /'
echo planted
EOF
)
ida=$(run_cmd tc-plant "$plant")
grep -q '^planted' <<<"$(log "$ida")" || { log "$ida" | tail -n 20 >&2; fail "task A did not run to its end ($(run_status "$ida"))"; }
grep '^CW-' <<<"$(log "$ida")" | sed 's/^/   task A: /'

# What a tool shows (in task B's run, then outside): one line per toolchain.
look=$(cat <<EOF
[ -z "$have_pip" ] || echo "CW-LOOK pip \$($PY -m pip config list 2>&1 | tr '\n' ' ')"
[ ! -x "$CARGO" ] || echo "CW-LOOK cargo \$($CARGO cwplanted 2>&1 | head -n 1)"
[ -z "$GO" ] || echo "CW-LOOK go GOFLAGS=\$($GO env GOFLAGS) GOWORK=\$($GO env GOWORK 2>&1)"
[ ! -x "$MVN" ] || echo "CW-LOOK mvn \$($MVN -v 2>&1 | grep -v '^Picked up' | head -n 2 | tr '\n' ' ')"
[ -z "$NPM" ] || echo "CW-LOOK npm \$($NPM config get init-author-name 2>&1 | tail -n 1)"
echo looked
EOF
)
idb=$(run_cmd tc-look "$look")
grep -q '^looked' <<<"$(log "$idb")" || { log "$idb" | tail -n 20 >&2; fail "task B did not run to its end ($(run_status "$idb"))"; }
# The user's HOME holds none of the paths A aimed at (looked at before the user's own
# tools run below: go makes ~/.config/go/telemetry for itself).
left=$(cd "$HOME" && ls -d .config/pip .pip .cargo .config/go .m2 .mavenrc .npmrc 2>/dev/null | tr '\n' ' ')
# The user's own tools, outside any run, in the worktree parents A aimed at.
outside=$(cd "$(dirname "$(sql "SELECT worktree FROM runs WHERE id = '$ida'")")" 2>/dev/null && bash -c "$look" 2>&1)
grep '^CW-LOOK' <<<"$(log "$idb")" | sed 's/^/   task B: /'
grep '^CW-LOOK' <<<"$outside" | sed 's/^/   outside: /'

# check TOOL PATTERN: neither B nor the user's tool shows the plant (PATTERN), and
# nothing A wrote lies outside its run's worktree, TMPDIR and its task's cache root.
check() {
	local tool=$1 pat=$2 why= b o
	b=$(grep "^CW-LOOK $tool " <<<"$(log "$idb")")
	o=$(grep "^CW-LOOK $tool " <<<"$outside")
	[ -n "$b" ] || why="task B's $tool said nothing;"
	[ -n "$o" ] || why="$why the user's $tool said nothing;"
	! grep -qE "$pat" <<<"$b" || why="$why task B's $tool saw it ($b);"
	! grep -qE "$pat" <<<"$o" || why="$why the user's $tool saw it ($o);"
	echo "$why"
}
escaped() {	# the paths task A wrote that are not its own run's or task's
	local tid p
	tid=$(sql "SELECT id FROM tasks WHERE name = 'tc-plant'")
	sed -n 's/^CW-WROTE //p' <<<"$(log "$ida")" | while read -r p; do
		case $p in
		"$CLOCKWORK_HOME/caches/tasks/$tid/"*) ;;
		# The run's own HOME, in its TMPDIR: gone with the run (issue 27).
		"$CLOCKWORK_HOME/tmp/$ida/home/"*) ;;
		*) echo "$p" ;;
		esac
	done | grep -E "$1" | tr '\n' ' '
}

r() {	# r NAME TOOL-PRESENT PATTERN PATHS
	local why
	if [ -z "$2" ]; then row "$1" SKIP "not installed"; return; fi
	why=$(check "$3" "$4")
	e=$(escaped "$5")
	[ -z "$e" ] || why="$why task A wrote $e;"
	row "$1" "$([ -z "$why" ] && echo PASS || echo FAIL)" "$why"
}
r "pip.conf (~/.config/pip, ~/.pip) from task A reaches B or the user" "$have_pip" pip 'cw-planted' 'pip'
r "cargo config.toml (~/.cargo, CARGO_HOME, worktree parents) reaches B/user" "$([ -x "$CARGO" ] && echo 1)" cargo 'cargo [0-9]' 'cargo'
r "GOENV (go env -w GOFLAGS), go.work in worktree parents reach B/user" "$GO" go 'cwplanted' '/go/env|go.work'
r "~/.m2/settings.xml, ~/.mavenrc, .mvn/jvm.config reach B/user" "$([ -x "$MVN" ] && echo 1)" mvn 'CW-PLANTED|CwPlanted|Unrecognized|Error' '\.m2|mavenrc|\.mvn|settings.xml'
r ".npmrc (~/.npmrc, npm config set) reaches B or the user" "$NPM" npm 'CW-PLANTED' 'npmrc'

row "task A's toolchain files in the user's HOME" "$([ -z "$left" ] && echo PASS || echo FAIL)" "${left:+found $left}"

echo "toolchain config escape rows: $n attempts, $((n - failed)) passed, $failed failed"
[ "$failed" -eq 0 ] || exit 1
[ -z "$skipped" ] || exit 77
