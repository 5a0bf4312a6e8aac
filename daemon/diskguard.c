/*
 * A full disk must not wedge the queue (issue 26, item 5). A run can fill the
 * filesystem that holds the Clockwork home through its worktree, its TMPDIR or its
 * task's caches; then every store and journal write fails, and before this the daemon
 * spun on the queued run it could not mark started, answering nobody.
 *
 * What the daemon does about it, checked once a second (and before a run starts):
 *   - a free-space floor (config disk_free_floor_mb, default 256): below it no queued
 *     run starts; the queue waits, and moves on by itself once there is room again;
 *   - a reserve: DISKGUARD_RESERVE_MB preallocated in <home>/disk-reserve at start,
 *     given back when the floor is crossed, so that the store has room to record the
 *     end of what is running; made again once the floor is cleared;
 *   - the run with the most bytes in its worktree and TMPDIR is stopped with a clear
 *     reason ("disk full: ..."), journaled as disk_full, and its worktree is removed
 *     instead of imported: what it wrote is what filled the disk, and keeping it would
 *     hold every later run back. The report says how much it held.
 * The sizes are measured by a bounded walk (diskguard_du): a run cannot make the
 * measuring itself take the daemon's loop for long.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "daemon.h"
#include "diskguard.h"
#include "journal.h"
#include "log.h"
#include "runs.h"
#include "store.h"

#define DISKGUARD_RESERVE_MB	16
/* A run's walk stops after this many entries: a size that is at least this much. */
#define DISKGUARD_DU_MAX	200000

static long long
diskguard_floor(const struct daemon *d)
{
	return (long long)d->cfg.disk_free_floor_mb << 20;
}

/* Bytes free for us on the filesystem holding the home, or -1. */
static long long
diskguard_free(const struct daemon *d)
{
	struct statvfs	 sv;

	if (statvfs(d->home, &sv) == -1)
		return -1;
	return (long long)sv.f_bavail * (long long)sv.f_frsize;
}

static void
diskguard_reserve_path(const struct daemon *d, char *out, size_t outlen)
{
	snprintf(out, outlen, "%s/disk-reserve", d->home);
}

/* Make the reserve (again). Best effort: without it the floor still holds. */
static void
diskguard_reserve_make(struct daemon *d)
{
	char	 path[PATH_MAX];
	int	 fd, e;

	diskguard_reserve_path(d, path, sizeof path);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600)) == -1) {
		log_warn("disk: cannot make the reserve %s: %s", path, strerror(errno));
		return;
	}
	if ((e = posix_fallocate(fd, 0, (off_t)DISKGUARD_RESERVE_MB << 20)) != 0) {
		log_warn("disk: cannot reserve %d MiB in %s: %s", DISKGUARD_RESERVE_MB, path,
		    strerror(e));
		(void)unlink(path);
	}
	close(fd);
}

/* Bytes in the tree at path (st_blocks, links not followed), walked to a bound. */
static long long
diskguard_du_at(int dfd, const char *name, size_t *budget)
{
	struct stat	 st;
	struct dirent	*de;
	DIR		*dir;
	long long	 sum;
	int		 fd;

	if (*budget == 0 || fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == -1)
		return 0;
	(*budget)--;
	sum = (long long)st.st_blocks * 512;
	if (!S_ISDIR(st.st_mode))
		return sum;
	if ((fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return sum;
	if ((dir = fdopendir(fd)) == NULL) {
		close(fd);
		return sum;
	}
	while ((de = readdir(dir)) != NULL && *budget > 0)
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
			sum += diskguard_du_at(dirfd(dir), de->d_name, budget);
	closedir(dir);
	return sum;
}

long long
diskguard_du(const char *path)
{
	size_t	 budget = DISKGUARD_DU_MAX;

	return diskguard_du_at(AT_FDCWD, path, &budget);
}

/* The bytes a run has written where it may write: its worktree and its TMPDIR. */
static long long
diskguard_run_bytes(const struct run *r)
{
	char	 tmp[PATH_MAX];

	snprintf(tmp, sizeof tmp, "%s/tmp/%s", r->d->home, r->id);
	return diskguard_du(r->workdir) + diskguard_du(tmp);
}

void
diskguard_init(struct daemon *d)
{
	long long	 free_b = diskguard_free(d);

	d->disk_low = 0;
	if (free_b >= 0 && free_b < diskguard_floor(d) + ((long long)DISKGUARD_RESERVE_MB
	    << 20)) {
		log_warn("disk: %lld MiB free where %s is, below the floor of %d MiB: "
		    "queued runs wait until there is room", free_b >> 20, d->home,
		    d->cfg.disk_free_floor_mb);
		d->disk_low = 1;
		return;
	}
	diskguard_reserve_make(d);
}

/* Stop the run that holds the most, once: it is the likeliest to be filling the disk. */
static void
diskguard_stop_biggest(struct daemon *d, long long free_b)
{
	struct run	*r, *big = NULL;
	long long	 bytes, most = -1;
	char		 msg[256];
	cJSON		*j;

	TAILQ_FOREACH(r, &d->runs, entry) {
		if (r->disk_full)
			return;		/* already being stopped for it */
		if (r->stopping || r->reaped)
			continue;
		if ((bytes = diskguard_run_bytes(r)) > most) {
			most = bytes;
			big = r;
		}
	}
	if (big == NULL)
		return;
	big->disk_full = 1;
	big->disk_bytes = most;
	snprintf(msg, sizeof msg, "disk full: %lld MiB free where the Clockwork home is, "
	    "below the floor of %d MiB; this run holds %lld MiB in its worktree and TMPDIR, "
	    "the most of any run; its worktree is removed, not imported", free_b >> 20,
	    d->cfg.disk_free_floor_mb, most >> 20);
	if ((j = cJSON_CreateObject()) != NULL) {
		cJSON_AddNumberToObject(j, "free_bytes", (double)free_b);
		cJSON_AddNumberToObject(j, "floor_bytes", (double)diskguard_floor(d));
		cJSON_AddNumberToObject(j, "run_bytes", (double)most);
		journal_add(d, big->id, "disk_full", j);
	}
	runs_stop(big, STORE_EXIT_STOPPED, msg);
}

void
diskguard_tick(struct daemon *d)
{
	char		 path[PATH_MAX];
	long long	 free_b;

	if ((free_b = diskguard_free(d)) < 0)
		return;
	if (free_b < diskguard_floor(d)) {
		if (!d->disk_low) {
			d->disk_low = 1;
			diskguard_reserve_path(d, path, sizeof path);
			(void)unlink(path);	/* room for the store to record the ends */
			log_warn("disk: %lld MiB free where %s is, below the floor of %d "
			    "MiB: the reserve is given back, queued runs wait, and the run "
			    "holding the most is stopped", free_b >> 20, d->home,
			    d->cfg.disk_free_floor_mb);
		}
		diskguard_stop_biggest(d, free_b);
		return;
	}
	/* Clear of the floor with room for the reserve: the queue moves again. */
	if (d->disk_low && free_b >= diskguard_floor(d) +
	    ((long long)DISKGUARD_RESERVE_MB << 20)) {
		d->disk_low = 0;
		diskguard_reserve_make(d);
		log_info("disk: %lld MiB free again where %s is: queued runs start",
		    free_b >> 20, d->home);
		runs_pump_later(d);
	}
}

int
diskguard_room(struct daemon *d)
{
	diskguard_tick(d);
	return !d->disk_low;
}
