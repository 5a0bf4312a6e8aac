#!/usr/bin/env bash
# The kept outline of /etc (runner/unreadable.c, <CLOCKWORK_HOME>/unreadable/etc) must
# never change a verdict: a run started with the outline kept must be refused exactly
# what a fresh walk refuses. Rows 1 and 3 were written by the attacker run of issue 22
# and failed on 6aaf04b (row 1: the outline compared a directory's mtime only; row 3:
# a policy could grant the outline's directory to a run).
#
# Each row runs in a private user and mount namespace of the test's own
# (`unshare -Urm`, as root or as a normal user alike), with a copy of /etc bound over
# /etc, so the real /etc is never written. In that namespace the test user is uid 0:
# a 0600 file of the copy is one a run may not read unless the carving forgets it (a
# root run owns every 0600 file of /etc, which is why the carving exists).
#
#  1. a 0600 file added to a kept directory, then the directory's mtime put back to
#     what it was (touch -d; tar -x, rsync -a and cp -a do the same when they restore a
#     tree): the outline still "holds" (same device, inode and mtime; only ctime moved)
#     and the new file is readable in the run; a fresh walk refuses it.
#  2. control: a kept world-readable file chmod'ed 0600 is refused at once.
#  3. a run whose grants reach <CLOCKWORK_HOME>/unreadable (a policy write_dirs entry
#     there is accepted) drops a line from the outline; every later run, with no such
#     grant, reads the file the line named.
set -uo pipefail
BIN=${CW_BIN:?}/cw-runner
[ -x "$BIN" ] || { echo "no $BIN"; exit 1; }

if [ "${CW_UNREADABLE_INNER:-}" != 1 ]; then
	base=${CW_TEST_TMP:-${CW_BUILD:?}}
	mkdir -p "$base"
	T=$(mktemp -d "$base/unreadable-outline.XXXXXX") || exit 1
	chmod 700 "$T"
	trap 'rm -rf "$T"' EXIT
	if ! unshare -Urm --propagation private true 2>/dev/null; then
		echo "SKIP: no unprivileged user and mount namespace for the fake /etc"
		exit 77
	fi
	CW_UNREADABLE_INNER=1 T=$T unshare -Urm --propagation private bash "$0"
	exit $?
fi

# Inside the namespace.
cp -a /etc "$T/etc" 2>/dev/null	# a normal user's copy lacks what it cannot read
mount --bind "$T/etc" /etc || { echo "SKIP: cannot bind over /etc"; exit 77; }
mkdir -p /etc/atk22 "$T/wd" "$T/cwh"
echo PUBLIC > /etc/atk22/pub
chmod 644 /etc/atk22/pub
echo OLDSECRET > /etc/atk22/old.secret
chmod 600 /etc/atk22/old.secret
cat > "$T/wd/cat.sh" <<'EOF'
#!/bin/sh
for f in "$@"; do printf '%s: %s\n' "$f" "$(cat "$f" 2>&1)"; done
EOF
chmod 755 "$T/wd/cat.sh"

CWH=$T/cwh
cwr() { env -i HOME="$T" PATH=/usr/bin:/bin CLOCKWORK_HOME="$CWH" "$BIN" "$@"; }
readable() {	# readable FILE: the exec read it (prints the line it saw)
	cwr exec --workdir "$T/wd" -- "$T/wd/cat.sh" "$1" | grep -F "$1: " | grep -v 'Permission denied'
}
how() { cwr spec --json --workdir "$T/wd" | grep -o '"/etc [a-z]*"'; }
# The outline is kept only of directories whose times (the change time too, which no
# one can set back) are 2 s or more behind the walk: wait until a start keeps one.
wait_kept() {
	for _ in $(seq 1 40); do
		[ "$(how)" = '"/etc kept"' ] && return 0
		sleep 0.25
	done
	return 1
}

n=0 failed=0
row() {
	n=$((n + 1))
	printf '%2d %-66s | %s\n' "$n" "$1" "$2${3:+: $3}"
	[ "$2" = PASS ] || failed=$((failed + 1))
}

# Baseline: the file is refused, and the outline is kept for the next start.
if readable /etc/atk22/old.secret >/dev/null || ! wait_kept; then
	echo "baseline: old.secret readable or no outline kept ($(how)): the test has no teeth"
	exit 1
fi

# 1
m=$(stat -c %.9Y /etc/atk22)
echo NEWSECRET > /etc/atk22/new.secret
chmod 600 /etc/atk22/new.secret
touch -m -d "@$m" /etc/atk22
got=$(readable /etc/atk22/new.secret)
scan=$(how)
mv "$CWH/unreadable/etc" "$CWH/unreadable/etc.kept"
fresh=$(readable /etc/atk22/new.secret)
mv "$CWH/unreadable/etc.kept" "$CWH/unreadable/etc"
if [ -n "$fresh" ]; then
	row "a 0600 file added, the directory's mtime put back" FAIL "a fresh walk grants it too: no teeth"
elif [ -n "$got" ]; then
	row "a 0600 file added, the directory's mtime put back" FAIL "scan $scan; the run read '$got'; a fresh walk refuses it"
else
	row "a 0600 file added, the directory's mtime put back" PASS
fi
rm -f /etc/atk22/new.secret
wait_kept || echo "note: no outline kept again before row 2"

# 2
chmod 600 /etc/atk22/pub
got=$(readable /etc/atk22/pub)
row "a kept world-readable file chmod'ed 0600" "$([ -z "$got" ] && echo PASS || echo FAIL)" "$got"
chmod 644 /etc/atk22/pub

# 3
wait_kept || echo "note: no outline kept before row 3"
printf 'sandbox:\n  write_dirs: [%s/unreadable]\n' "$CWH" > "$CWH/config.yaml"
cwr exec --workdir "$T/wd" -- sh -c "grep -v '^F atk22/old.secret\$' '$CWH/unreadable/etc' > '$CWH/unreadable/x' && mv '$CWH/unreadable/x' '$CWH/unreadable/etc'" 2>&1
rm -f "$CWH/config.yaml"
got=$(readable /etc/atk22/old.secret)
row "a run rewrites the outline; a later run with no grant there" "$([ -z "$got" ] && echo PASS || echo FAIL)" "${got:+the later run read '$got' (scan $(how))}"

echo "$((n - failed))/$n rows pass"
[ "$failed" = 0 ]
