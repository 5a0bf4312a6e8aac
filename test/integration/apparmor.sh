#!/usr/bin/env bash
# The AppArmor profile for cw-sandbox, the one program that makes user namespaces
# (Ubuntu 23.10+, issue 22 item 5, issue 25):
#  - packaging/apparmor/clockwork-cw-sandbox is what `cwctl service apparmor --print`
#    renders for /usr/local/bin (the two never drift);
#  - apparmor_parser -Q (parse and compile, load nothing) accepts it. The userns,
#    mqueue and io_uring rules and abi/4.0 are AppArmor 4.0's (Ubuntu 24.04); an older
#    parser (Debian 12 has 3.0.8) knows none of them, so there the profile is compiled
#    with exactly those lines taken out (abi 3.0), and their presence is checked as text;
#  - the parser is shown to refuse what it should (a control: conflicting exec rules),
#    so its acceptance means something;
#  - the profile names cw-sandbox, and cw-sandbox is what makes the user namespace: in
#    a real `cw-runner exec` the run's PID 1 is cw-sandbox, in a user namespace of its
#    own for a normal user (the program AppArmor would have to let make it);
#  - a path an attachment cannot carry (a space, a glob) is refused, exit 1;
#  - without an active AppArmor, `cwctl service apparmor` writes nothing and exits 0.
# Skipped (exit 77) where no apparmor_parser is installed (scripts/setup installs it).
. "${CW_SRC:?}/test/integration/daemon_lib.bash" || exit 1
AP=
for p in /sbin/apparmor_parser /usr/sbin/apparmor_parser; do [ -x "$p" ] && AP=$p && break; done
[ -n "$AP" ] || { echo "SKIP: no apparmor_parser (Debian package apparmor)"; exit 77; }
PKG=$CW_SRC/packaging/apparmor/clockwork-cw-sandbox

"$CW_BIN/cwctl" service apparmor --print --bindir /usr/local/bin > "$T/rendered" || fail "render"
diff -u "$PKG" "$T/rendered" || fail "packaging/apparmor/clockwork-cw-sandbox differs from what cwctl renders"
pass "packaging/apparmor/clockwork-cw-sandbox is cwctl's rendering for /usr/local/bin"

ver=$("$AP" --version | sed -n 's/^AppArmor parser version \([0-9]*\).*/\1/p')
parse() { "$AP" -Q -K -S "$1" > "$T/out.bin" 2> "$T/parse.err"; }
"$CW_BIN/cwctl" service apparmor --print > "$T/build-prof" || fail "render for the build's cw-sandbox"
grep -q "^profile cw-sandbox $CW_BIN/cw-sandbox " "$T/build-prof" || fail "the build's profile does not name $CW_BIN/cw-sandbox"
for f in "$PKG" "$T/build-prof"; do
	if [ "${ver:-0}" -ge 4 ]; then
		parse "$f" || fail "apparmor_parser $ver refuses $f: $(cat "$T/parse.err")"
		how="as is"
	else
		sed -e 's|^abi <abi/4.0>,$|abi <abi/3.0>,|' -e '/# abi 4.0$/d' "$f" > "$T/p3"
		[ "$(grep -c '# abi 4.0$' "$f")" = 6 ] && grep -q '^abi <abi/4.0>,$' "$f" &&
		    [ "$(grep -c '^  allow userns, ' "$f")" = 2 ] || fail "$f: the 4.0 rules are not all there"
		parse "$T/p3" || fail "apparmor_parser $ver refuses $f without its 4.0 rules: $(cat "$T/parse.err")"
		how="without its 6 AppArmor-4.0 lines (parser $ver predates them)"
	fi
	[ -s "$T/out.bin" ] || fail "no compiled policy for $f"
done
pass "apparmor_parser -Q compiles the profile (packaging and the build's), $how"
grep -q '^profile cw-sandbox /usr/local/bin/cw-sandbox ' "$PKG" &&
    grep -q '^  allow px /\*\* -> cw-sandbox//&cw-sandbox-payload,$' "$PKG" &&
    [ "$(sed -n '/^profile cw-sandbox-payload/,/^}/p' "$PKG" | grep -c '^  audit deny capability,$')" = 1 ] &&
    ! sed -n '/^profile cw-sandbox-payload/,/^}/p' "$PKG" | grep -q '^  allow capability' &&
    ! grep -q 'cw-runner /' "$PKG" ||
    fail "the profile's shape: attachment to cw-sandbox, payload stacking, payload without capabilities"
pass "cw-sandbox keeps its capabilities only for itself; what a run executes is stacked with a profile that denies them"

# The profile must name the program that makes the user namespace: a run's PID 1 is
# made by cw-sandbox (its parent is cw-runner, by CLONE_PARENT, but its user namespace
# is cw-sandbox's, made before the clone); the namespace's owner is therefore not
# cw-runner. Shown by the command's own view: its PID 1 is cw-sandbox, and its user
# namespace differs from the runner's (as a normal user; root makes none).
mkdir -p "$T/wd"
out=$("$CW_BIN/cw-runner" exec --workdir "$T/wd" -- sh -c 'tr "\0" " " < /proc/1/cmdline; echo; readlink /proc/self/ns/user' 2>&1) ||
    fail "cw-runner exec: $out"
[[ $(printf '%s\n' "$out" | head -n1) == "cw-sandbox --plan-fd 4 -- sh "* ]] || fail "the run's PID 1 is not cw-sandbox: $out"
if [ "$(id -u)" != 0 ]; then
	[ "$(printf '%s\n' "$out" | tail -n1)" != "$(readlink /proc/self/ns/user)" ] || fail "no user namespace of its own: $out"
fi
pass "the run's PID 1 is cw-sandbox ($(printf '%s' "$out" | head -n1 | cut -c1-40)...), the program the profile names"

# The control: a parser that accepts anything would prove nothing.
printf 'abi <abi/3.0>,\ninclude <tunables/global>\nprofile t /usr/bin/t {\n  /** ix,\n  /** px,\n}\n' > "$T/bad"
if parse "$T/bad"; then fail "the parser accepted conflicting exec rules: the check has no teeth"; fi
grep -q 'ERROR merging rules' "$T/parse.err" || fail "the control failed for another reason: $(cat "$T/parse.err")"
pass "control: apparmor_parser refuses conflicting exec rules ($(tail -n 1 "$T/parse.err"))"

out=$("$CW_BIN/cwctl" service apparmor --print --bindir '/opt/my tools' 2>&1) && rc=0 || rc=$?
[ $rc = 1 ] && [[ $out == *"only an absolute path of letters"* ]] || fail "a path with a space: rc $rc $out"
out=$("$CW_BIN/cwctl" service apparmor --print --bindir '/opt/*' 2>&1) && rc=0 || rc=$?
[ $rc = 1 ] || fail "a glob in the path: rc $rc $out"
pass "a --bindir with a space or a glob is refused (exit 1)"

mkdir -p "$T/aadir"
out=$("$CW_BIN/cwctl" service apparmor --dir "$T/aadir" 2>&1) && rc=0 || rc=$?
if [ -e /sys/kernel/security/apparmor ]; then
	echo "AppArmor is active here: install path not exercised by this test ($out)"
	pass "AppArmor active: cwctl service apparmor answered rc $rc"
else
	[ $rc = 0 ] && [[ $out == *"not active"* ]] && [ -z "$(ls -A "$T/aadir")" ] || fail "rc $rc: $out"
	pass "no AppArmor on this kernel: cwctl service apparmor writes nothing, exit 0 ($out)"
fi
echo "apparmor: $PASSED passed"
