#!/usr/bin/env bash
# A full disk (issue 26, item 5): a run that fills the filesystem holding the Clockwork
# home, through its worktree, must not wedge the daemon or the queue. The home is a
# small tmpfs of its own (a private mount namespace: as root `unshare --mount`, as a
# normal user a user namespace that mounts it and a second one that maps the user back,
# so clockworkd and every runner run as that user, uid unchanged). The filler writes
# without end; the next task's run is queued behind it. It must: stop the filler with a
# disk-full reason (journaled, in its report), remove what it wrote, keep answering the
# API meanwhile, and then start and finish the next run.
set -u
: "${CW_BIN:?}" "${CW_SRC:?}"
stage=${CW_DISKFULL_STAGE:-0}
case "$stage" in
0)
	dir=$(mktemp -d "${TMPDIR:-/tmp}/cw-diskfull.XXXXXX")
	trap 'rm -rf "$dir"' EXIT
	if [ "$(id -u)" = 0 ]; then
		CW_DISKFULL_STAGE=2 CW_DISKFULL_DIR=$dir unshare --mount --propagation private \
		    bash -c 'mount -t tmpfs -o size=160m,mode=0700 tmpfs "$CW_DISKFULL_DIR" && exec bash "$0"' "$0"
	else
		CW_DISKFULL_STAGE=1 CW_DISKFULL_DIR=$dir CW_DISKFULL_UID=$(id -u) CW_DISKFULL_GID=$(id -g) \
		    unshare --user --map-root-user --mount --propagation private bash "$0"
	fi
	exit $?
	;;
1)	# root of a user namespace of our own: mount, then be the user again
	mount -t tmpfs -o size=160m,mode=0700 tmpfs "$CW_DISKFULL_DIR" || { echo "FAIL: mount tmpfs"; exit 1; }
	CW_DISKFULL_STAGE=2 exec unshare --user --map-user="$CW_DISKFULL_UID" \
	    --map-group="$CW_DISKFULL_GID" bash "$0"
	;;
esac

. "$CW_SRC/test/integration/daemon_lib.bash" || exit 1
export CLOCKWORK_HOME=$CW_DISKFULL_DIR/cw
mkdir -m 700 "$CLOCKWORK_HOME"
printf 'api_port: 0\nmax_concurrent_runs: 1\ndisk_free_floor_mb: 48\n' > "$CLOCKWORK_HOME/config.yaml"
start_daemon --stop-grace 1
new_repo "$T/repo"
# The filler keeps writing 4 MiB files whatever fails; a real runaway does not stop.
cwctl task add filler --engine command --repo "$T/repo" --prompt 'i=0; while :; do dd if=/dev/zero of=fill$i bs=1M count=4 2>/dev/null; i=$((i+1)); done' >/dev/null
cwctl task add next --engine command --repo "$T/repo" --prompt 'echo next-ran > next.txt' >/dev/null
fid=$(cwctl run start filler)
wait_until 20 "filler running" run_is "$fid" running || fail "the filler did not start"
nid=$(cwctl run start next)
run_is "$nid" queued || fail "next is not queued behind the filler: $(run_status "$nid")"
wait_until 90 "the filler ended" run_ended "$fid" || fail "the filler was never stopped: $(run_status "$fid")"
# The daemon answered all along, and still does.
cwctl status >/dev/null || fail "the daemon does not answer after the disk filled"
pass "a run filling the home's filesystem is stopped; the daemon keeps answering"

cwctl run show "$fid" --json > "$T/filler.json" || fail "run show filler"
grep -q '"full":	true' "$T/filler.json" || fail "the filler's report has no disk entry: $(head -c 2000 "$T/filler.json")"
grep -q 'disk full' "$T/filler.json" || grep -q 'disk full' "$CLOCKWORK_HOME/runs/$fid.log" ||
	fail "no disk-full reason in the filler's report or log"
[ "$(sql "SELECT count(*) FROM journal WHERE run_id = '$fid' AND kind = 'disk_full'")" = 1 ] ||
	fail "the disk-full stop is not journaled once"
[ ! -e "$CLOCKWORK_HOME/worktrees/filler/$fid" ] || fail "the filler's worktree is still there"
pass "the stop says disk full (report, journal) and what the filler wrote is removed"

wait_until 90 "next ended" run_ended "$nid" || fail "the queued run never ran: $(run_status "$nid")"
[ "$(run_status "$nid")" = completed ] || fail "next: $(run_status "$nid")"
git -C "$T/repo" show "clockwork/next/$nid:next.txt" | grep -q next-ran || fail "next's work is not on its branch"
pass "the next task's run starts and finishes once the filler's bytes are gone"
echo "all $PASSED checks passed ($(id -un))"
