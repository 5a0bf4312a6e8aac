#!/usr/bin/env bash
# Issue 25: each program links what its job needs and nothing heavier. The program that
# builds every sandbox (cw-sandbox) links the C library alone; the one that supervises
# a run and hosts the proxy and the seal (cw-runner), the floor hook and the parsing
# child carry no TLS stack, no store and no git; TLS (libcurl, dlopened)
# lives only in cw-agent, the byok engine, and in cwctl/clockworkd for what needs it.
# Rows:
#  1. readelf -d: no program's NEEDED list names a library its row forbids; cw-sandbox's
#     names libc alone;
#  2. ldd: the same, for everything those libraries pull in (a TLS stack can come in
#     behind an innocent-looking library);
#  3. cw-floor-hook is static (no NEEDED entry, no interpreter);
#  4. a live `cw-runner exec` has mapped none of them (/proc/PID/maps), and no runner
#     source calls dlopen, so none can be loaded later (the proxy and the seal run in
#     that same program);
#  5. cw-runner has no byok subcommands left (`cw-runner agent` is refused), and
#     cw-agent answers --version.
. "${CW_SRC:?}/test/integration/daemon_lib.bash" || exit 1
command -v readelf >/dev/null || { echo "readelf (binutils) not installed"; exit 77; }
command -v ldd >/dev/null || { echo "ldd not installed"; exit 77; }

TLS="libcurl libssl libcrypto libgnutls libnss3 libgcrypt"
# program: forbidden library stems
declare -A FORBID=(
	[cw-runner]="$TLS libsqlite3 libgit2 libsecret libdbus libglib libseccomp"
	[cw-sandbox]="$TLS libsqlite3 libgit2 libevent libcjson libyaml libseccomp libsecret libdbus libglib"
	[cw-floor-hook]="$TLS libsqlite3 libgit2 libevent libcjson libyaml libseccomp"
	[cw-parse]="$TLS libsqlite3 libgit2 libevent libsecret libdbus libglib"
	[cw-agent]="$TLS libsqlite3 libgit2 libevent libsecret libdbus libglib libyaml"
	[clockworkd]="libcurl libssl libgnutls libsecret libdbus libglib"
)
# The sanitizer runtime is linked statically by clang; gcc's ASan would add libasan,
# which is allowed everywhere.
for prog in "${!FORBID[@]}"; do
	bin="$CW_BIN/$prog"
	[ -x "$bin" ] || fail "$bin is not built"
	needed=$(readelf -d "$bin" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' | tr '\n' ' ')
	closure=$({ ldd "$bin" 2>/dev/null || true; } | awk '{ print $1 }' | tr '\n' ' ')
	for stem in ${FORBID[$prog]}; do
		case " $needed" in *" $stem."* | *" $stem-"*) fail "$prog links $stem (readelf -d): $needed";; esac
		case " $closure" in *" $stem."* | *" $stem-"*) fail "$prog loads $stem through its libraries (ldd): $closure";; esac
	done
	pass "$prog: NEEDED ${needed:-(none)}; none of: ${FORBID[$prog]}"
done

# 1, cw-sandbox: nothing but the C library (a sanitizer build adds its runtime's own
# needs: libasan, libm, libdl, libpthread, librt, libgcc_s).
san='^$'
grep -q '^CW_SANITIZE:BOOL=ON' "${CW_BUILD:-/nonexistent}/CMakeCache.txt" 2>/dev/null &&
    san='^(libasan|libubsan|libm|libdl|libpthread|librt|libgcc_s|libresolv)\.'
sbx_needed=$(readelf -d "$CW_BIN/cw-sandbox" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' |
    grep -Ev "$san" | tr '\n' ' ')
[ "$sbx_needed" = "libc.so.6 " ] || fail "cw-sandbox NEEDED: $sbx_needed (libc alone expected)"
pass "cw-sandbox: NEEDED $sbx_needed only"

# 3. The floor hook runs before every shell call of every engine: static, so that it
# loads nothing and an engine's LD_PRELOAD or LD_LIBRARY_PATH cannot reach it.
hook="$CW_BIN/cw-floor-hook"
[ -z "$(readelf -d "$hook" 2>/dev/null | grep NEEDED)" ] || fail "cw-floor-hook has NEEDED entries"
! readelf -l "$hook" | grep -q 'Requesting program interpreter' || fail "cw-floor-hook has an interpreter"
pass "cw-floor-hook is static: no NEEDED entry, no program interpreter"

# 4. What a live cw-runner has mapped while its sandboxed command runs.
mkdir -p "$T/w"
"$CW_BIN/cw-runner" exec --workdir "$T/w" -- sh -c 'echo started > started; sleep 3' \
    > "$T/exec.out" 2>&1 &
epid=$!
wait_until 10 "the sandboxed command" test -s "$T/w/started" || fail "cw-runner exec did not start: $(cat "$T/exec.out")"
maps=$(grep -o '/[^ ]*\.so[^ ]*' "/proc/$epid/maps" | sort -u | tr '\n' ' ')
[ -n "$maps" ] || fail "no shared object mapped in cw-runner (pid $epid)?"
for stem in ${FORBID[cw-runner]}; do
	case "$maps" in *"/$stem."* | *"/$stem-"*) fail "a live cw-runner exec maps $stem: $maps";; esac
done
wait "$epid" || fail "cw-runner exec failed: $(cat "$T/exec.out")"
calls=$(grep -n 'dlopen' "$CW_SRC"/runner/*.c || true)
[ -z "$calls" ] || fail "runner/ calls dlopen: $calls"
pass "a live cw-runner exec maps only: $maps; runner/ calls no dlopen"

# 5.
out=$("$CW_BIN/cw-runner" agent 2>&1) && fail "cw-runner agent still exists"
grep -q "unknown command" <<<"$out" || fail "cw-runner agent: $out"
"$CW_BIN/cw-agent" --version | grep -q '^cw-agent ' || fail "cw-agent --version"
pass "the byok engine's entry points are cw-agent's (cw-runner agent refused: $out)"
