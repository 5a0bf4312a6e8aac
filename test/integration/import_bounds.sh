#!/usr/bin/env bash
# Import amplification (issue 26, item 6): a run commits one 4 MiB file under 21 names
# (hard links: git stores the blob once, a checkout writes it 21 times) and a 300 MiB
# sparse file (a small pack, a huge checkout and, read whole, a huge blob in memory).
# The import verifies and lands the branch as always, but makes no kept-worktree
# checkout past its budget (import_checkout_max_mb, here 32) or of a file over 256 MiB:
# the report says so, the worktree path holds nothing, and the work is on the branch.
# Runs as root and as a normal user.
. "${CW_SRC:?}/test/integration/daemon_lib.bash" || exit 1
printf 'api_port: 0\nimport_checkout_max_mb: 32\n' > "$CLOCKWORK_HOME/config.yaml"
start_daemon
new_repo "$T/repo"
checkout_skipped() {	# RUN: the report's git.checkout.skipped
	cwctl run show "$1" --json | python3 -c 'import json,sys; r=json.load(sys.stdin); print(r.get("report", r).get("git", {}).get("checkout", {}).get("skipped", False))'
}

cwctl task add links --engine command --repo "$T/repo" --prompt 'head -c 4194304 /dev/urandom > big && for i in $(seq 1 20); do ln big link$i; done' >/dev/null
cwctl run start links --wait > "$T/l.out" 2>&1 || fail "links run: $(cat "$T/l.out")"
lid=$(sed -n 's/^run: *//p' "$T/l.out" | head -n 1)
git -C "$T/repo" cat-file -e "clockwork/links/$lid:link20" || fail "the links run's work is not on its branch"
[ "$(checkout_skipped "$lid")" = True ] || fail "the 84 MiB checkout of one 4 MiB blob was made: $(du -sm "$CLOCKWORK_HOME/worktrees/links/$lid" 2>/dev/null)"
used=$(du -sm "$CLOCKWORK_HOME/worktrees/links" 2>/dev/null | cut -f1)
[ "${used:-0}" -lt 8 ] || fail "the links run's worktree holds ${used} MiB"
pass "21 names of one 4 MiB blob: imported, no 84 MiB checkout over the 32 MiB budget, the report says so"

cwctl task add sparse --engine command --repo "$T/repo" --prompt 'truncate -s 300M sparse' >/dev/null
cwctl run start sparse --wait > "$T/s.out" 2>&1 || fail "sparse run: $(cat "$T/s.out")"
sid=$(sed -n 's/^run: *//p' "$T/s.out" | head -n 1)
git -C "$T/repo" cat-file -e "clockwork/sparse/$sid:sparse" || fail "the sparse run's work is not on its branch"
[ "$(checkout_skipped "$sid")" = True ] || fail "the 300 MiB sparse file was checked out"
[ ! -e "$CLOCKWORK_HOME/worktrees/sparse/$sid/sparse" ] || fail "the sparse file is in the worktree"
grep -q "not checked out" "$CLOCKWORK_HOME/runs/$sid.log" || fail "the run's log does not say why"
pass "a 300 MiB sparse file: imported, not checked out (over the per-file bound), not read for line counts"

cwctl task add small --engine command --repo "$T/repo" --prompt 'echo small > small.txt' >/dev/null
cwctl run start small --wait > "$T/m.out" 2>&1 || fail "small run"
mid=$(sed -n 's/^run: *//p' "$T/m.out" | head -n 1)
[ "$(cat "$CLOCKWORK_HOME/worktrees/small/$mid/small.txt" 2>/dev/null)" = small ] || fail "an ordinary run's worktree is not checked out"
pass "an ordinary run is checked out as before"
echo "all $PASSED checks passed ($(id -un))"
