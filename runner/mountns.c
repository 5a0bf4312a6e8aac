#define _GNU_SOURCE	/* O_PATH, pipe2, dup3 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "mountns.h"
#include "paths.h"
#include "strlist.h"

/* Where named sockets live: covered, then only the spec's own paths come back. */
static const char *const mountns_hidden[] = { "/tmp", "/var/tmp", "/run" };
/* Sockets that may sit outside those directories. */
static const char *const mountns_sockets[] = {
	"/var/run/docker.sock", "/run/docker.sock", "/var/run/dbus/system_bus_socket",
};

#define MOUNTNS_TMPFS_OPTS	"mode=0755,size=64k"

static int	mountns_is_granted(const char *, const struct strlist *);

static int
mountns_fail(char *err, size_t errlen, const char *step, const char *path)
{
	int	 save = errno;

	snprintf(err, errlen, "mount namespace: %s %s: %s", step, path, strerror(save));
	errno = save;
	return -1;
}

/*
 * In a user namespace made by the runner's clone: map only the runner's own ids (they
 * cannot be read in here before the map exists, so the caller passes them), so the
 * namespaces are ours to shape and files keep their owners.
 */
int
mountns_idmap(uid_t uid, gid_t gid, char *err, size_t errlen)
{
	char	 map[64];

	if (paths_write_control("/proc/self/setgroups", "deny") == -1 && errno != ENOENT)
		return mountns_fail(err, errlen, "write", "/proc/self/setgroups");
	snprintf(map, sizeof map, "%u %u 1\n", (unsigned)uid, (unsigned)uid);
	if (paths_write_control("/proc/self/uid_map", map) == -1)
		return mountns_fail(err, errlen, "write", "/proc/self/uid_map");
	snprintf(map, sizeof map, "%u %u 1\n", (unsigned)gid, (unsigned)gid);
	if (paths_write_control("/proc/self/gid_map", map) == -1)
		return mountns_fail(err, errlen, "write", "/proc/self/gid_map");
	return 0;
}

/*
 * A fresh proc instance on target, of the PID namespace we are PID 1 of: it lists only
 * the run's processes, so no other process's argv, environ or status can even be named
 * from inside. Read-only, as the bind of the host's /proc was (Landlock grants /proc for
 * reading only, too). Mounted while the host's /proc is still in view: in a user
 * namespace the kernel allows a new proc only where a full one is already visible.
 */
static int
mountns_proc(const char *target, char *err, size_t errlen)
{
	struct stat	 st;

	if (stat(target, &st) == -1 && paths_mkdir_p(target, 0555) == -1)
		return mountns_fail(err, errlen, "mount point", target);
	if (mount("proc", target, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY,
	    NULL) == -1)
		return mountns_fail(err, errlen, "mount a fresh proc on", target);
	return 0;
}

/* Every path the spec grants (the ones that must stay visible through a hidden dir). */
static int
mountns_granted(const struct sandbox_spec *s, const char *cwd, struct strlist *out)
{
	const struct strlist	*lists[] = { &s->read_dirs, &s->write_dirs, &s->read_files,
	    &s->write_files };

	for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++)
		if (strlist_extend(out, lists[i]) == -1)
			return -1;
	if (s->workdir != NULL && strlist_add_unique(out, s->workdir) == -1)
		return -1;
	if (s->tmpdir != NULL && strlist_add_unique(out, s->tmpdir) == -1)
		return -1;
	if (cwd != NULL && strlist_add_unique(out, cwd) == -1)
		return -1;
	if (s->ssh_auth_sock != NULL && strlist_add_unique(out, s->ssh_auth_sock) == -1)
		return -1;
	return 0;
}

/* Create path's missing components inside a fresh tmpfs; the last one as a dir or file. */
static int
mountns_mkpoint(const char *path, int isdir)
{
	char		 buf[PATH_MAX], *slash;
	struct stat	 st;
	int		 fd;

	if (lstat(path, &st) == 0)
		return 0;
	if (strlen(path) >= sizeof buf) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(buf, path);
	if ((slash = strrchr(buf, '/')) != NULL && slash != buf) {
		*slash = '\0';
		if (paths_mkdir_p(buf, 0755) == -1)
			return -1;
	}
	if (isdir)
		return (mkdir(path, 0755) == -1 && errno != EEXIST) ? -1 : 0;
	if ((fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) == -1)
		return -1;
	close(fd);
	return 0;
}

/*
 * Cover dir with an empty tmpfs and bind the granted paths beneath it back in place.
 * The granted paths are opened before the cover goes on, and bound from their
 * descriptors, since their names are gone once it is on.
 */
static int
mountns_hide_dir(const char *dir, const struct strlist *granted, char *err, size_t errlen)
{
	struct strlist	 keep = { 0 };
	int		*fds = NULL, rc = -1;
	char		 src[64];
	struct stat	 st;

	if ((fds = calloc(granted->n + 1, sizeof *fds)) == NULL)
		return mountns_fail(err, errlen, "hide", dir);
	for (size_t i = 0; i < granted->n; i++) {
		const char	*g = granted->v[i];
		int		 inner = 0;

		if (strcmp(g, dir) == 0 || !paths_within(g, dir))
			continue;
		/* Bind only the outermost: a recursive bind brings the rest along. */
		for (size_t j = 0; j < granted->n; j++)
			if (j != i && strcmp(granted->v[j], g) != 0 &&
			    paths_within(g, granted->v[j]) &&
			    paths_within(granted->v[j], dir) &&
			    strcmp(granted->v[j], dir) != 0)
				inner = 1;
		if (inner || strlist_contains(&keep, g))
			continue;
		if ((fds[keep.n] = open(g, O_PATH | O_CLOEXEC)) == -1) {
			if (errno == ENOENT || errno == ENOTDIR || errno == EACCES)
				continue;
			mountns_fail(err, errlen, "open", g);
			goto out;
		}
		if (strlist_add(&keep, g) == -1) {
			close(fds[keep.n]);
			mountns_fail(err, errlen, "hide", dir);
			goto out;
		}
	}
	if (mount("tmpfs", dir, "tmpfs", MS_NOSUID | MS_NODEV, MOUNTNS_TMPFS_OPTS) == -1) {
		mountns_fail(err, errlen, "cover", dir);
		goto out;
	}
	for (size_t i = 0; i < keep.n; i++) {
		if (fstat(fds[i], &st) == -1 ||
		    mountns_mkpoint(keep.v[i], S_ISDIR(st.st_mode)) == -1) {
			mountns_fail(err, errlen, "mount point", keep.v[i]);
			goto out;
		}
		snprintf(src, sizeof src, "/proc/self/fd/%d", fds[i]);
		if (mount(src, keep.v[i], NULL, MS_BIND | MS_REC, NULL) == -1) {
			mountns_fail(err, errlen, "bind back", keep.v[i]);
			goto out;
		}
	}
	if (mount(NULL, dir, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV,
	    NULL) == -1) {
		mountns_fail(err, errlen, "read-only", dir);
		goto out;
	}
	rc = 0;
out:
	for (size_t i = 0; i < keep.n; i++)
		close(fds[i]);
	free(fds);
	strlist_free(&keep);
	return rc;
}

/* Undo mountinfo's octal escapes (\040 for a space) in place. */
static void
mountns_unescape(char *s)
{
	char	*w = s;

	for (; *s != '\0'; s++, w++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' &&
		    s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*w = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else
			*w = *s;
	}
	*w = '\0';
}

/* Every mount point of this namespace, from /proc/self/mountinfo (field 5). */
static int
mountns_mountpoints(struct strlist *out)
{
	FILE	*f;
	char	*line = NULL, *save, *tok;
	size_t	 cap = 0;
	int	 rc = 0;

	if ((f = fopen("/proc/self/mountinfo", "re")) == NULL)
		return -1;
	while (rc == 0 && getline(&line, &cap, f) > 0) {
		int	 field = 0;

		save = NULL;
		for (tok = strtok_r(line, " ", &save); tok != NULL;
		    tok = strtok_r(NULL, " ", &save))
			if (++field == 5)
				break;
		if (tok == NULL || tok[0] != '/')
			continue;
		mountns_unescape(tok);
		if (strlist_add_unique(out, tok) == -1)
			rc = -1;
	}
	free(line);
	fclose(f);
	return rc;
}

static int
mountns_depth(const char *p)
{
	int	 d = 0;

	if (strcmp(p, "/") == 0)
		return 0;
	for (; *p != '\0'; p++)
		if (*p == '/')
			d++;
	return d;
}

/* An overlay of the directory open at lowerfd, with its own upper and work dirs in stage. */
static int
mountns_overlay(const char *target, int lowerfd, const char *stage, int k)
{
	char	 up[PATH_MAX], wk[PATH_MAX], opts[3 * PATH_MAX];

	snprintf(up, sizeof up, "%s/u%d", stage, k);
	snprintf(wk, sizeof wk, "%s/w%d", stage, k);
	if ((mkdir(up, 0755) == -1 && errno != EEXIST) ||
	    (mkdir(wk, 0755) == -1 && errno != EEXIST))
		return -1;
	snprintf(opts, sizeof opts, "lowerdir=/proc/self/fd/%d,upperdir=%s,workdir=%s",
	    lowerfd, up, wk);
	if (mount("overlay", target, "overlay", MS_NOSUID | MS_NODEV, opts) == 0)
		return 0;
	/* Inside a user namespace overlayfs keeps its metadata in user.* xattrs. */
	if (strlen(opts) + sizeof ",userxattr" > sizeof opts)
		return -1;
	strcat(opts, ",userxattr");
	return mount("overlay", target, "overlay", MS_NOSUID | MS_NODEV, opts);
}

/* Remount a bind read-only, keeping the flags it has (a user namespace locks them). */
static int
mountns_remount_ro(const char *target)
{
	struct statvfs	 sv;
	unsigned long	 fl = MS_REMOUNT | MS_BIND | MS_RDONLY;

	if (statvfs(target, &sv) == -1)
		return -1;
	if (sv.f_flag & ST_NOSUID)
		fl |= MS_NOSUID;
	if (sv.f_flag & ST_NODEV)
		fl |= MS_NODEV;
	if (sv.f_flag & ST_NOEXEC)
		fl |= MS_NOEXEC;
	if (sv.f_flag & ST_NOATIME)
		fl |= MS_NOATIME;
	if (sv.f_flag & ST_NODIRATIME)
		fl |= MS_NODIRATIME;
	if (sv.f_flag & ST_RELATIME)
		fl |= MS_RELATIME;
	return mount(NULL, target, NULL, fl, NULL);
}

/* A system location that nothing writable lies inside: mounted read-only. */
static int
mountns_ro_target(const struct sandbox_spec *s, const char *path)
{
	const struct strlist	*w[] = { &s->write_dirs, &s->write_files };
	char			 root[PATH_MAX];

	if (!spec_system_root(path, root, sizeof root) || strcmp(root, path) != 0)
		return 0;
	for (size_t i = 0; i < 2; i++)
		for (size_t j = 0; j < w[i]->n; j++)
			if (paths_within(w[i]->v[j], path))
				return 0;
	return 1;
}

/*
 * The overlay view. A named unix socket is found by connect() through its inode, and an
 * overlay shows every file under an inode of its own: so through an overlay of the
 * host's filesystems, every socket outside the grants refuses connections
 * (ECONNREFUSED), while every other file still looks as it does on the host, and
 * Landlock still answers EACCES for it (its rules name the real inodes, none of which
 * the overlay shows). The grants are bound back on top from the real filesystems, so
 * inside them everything, sockets included, is the real thing. Writes that Landlock
 * does not check (chmod, utimes, xattrs) land in the overlay's private upper layer and
 * never reach the host, except inside grants.
 *
 * Built in a staging tmpfs over /tmp (every path is reached through a descriptor opened
 * before), then made the root with pivot_root. Returns 0, 1 when overlayfs is not
 * available (nothing changed: the caller falls back to covering the usual socket
 * directories), or -1 once the view is half built.
 */
static int
mountns_overlay_view(const struct sandbox_spec *s, const struct strlist *granted,
    char *err, size_t errlen)
{
	static const char	 stage[] = "/tmp";
	struct strlist		 mnts = { 0 }, binds = { 0 }, all = { 0 };
	int			*mfd = NULL, *bfd = NULL, rootfd = -1, rc = 1, k = 0;
	char			 newroot[64], target[2 * PATH_MAX], src[64];
	struct stat		 st;

	if (stat(stage, &st) == -1 || !S_ISDIR(st.st_mode) ||
	    mountns_mountpoints(&mnts) == -1)
		goto out;
	/*
	 * What to bind: each grant, except that a grant in a system location brings the
	 * whole location (its credential files are real but Landlock still denies them,
	 * and one bind is cheaper than one per carved entry); then only the outermost,
	 * since a recursive bind brings what lies beneath.
	 */
	for (size_t i = 0; i < granted->n; i++) {
		char	 root[PATH_MAX];

		/* /proc is a fresh instance of the run's own (mountns_proc), never a bind. */
		if (paths_within(granted->v[i], "/proc"))
			continue;
		if (!spec_system_root(granted->v[i], root, sizeof root) ||
		    strlist_contains(&s->write_dirs, granted->v[i]) ||
		    strlist_contains(&s->write_files, granted->v[i]))
			snprintf(root, sizeof root, "%s", granted->v[i]);
		if (strlist_add_unique(&all, root) == -1)
			goto out;
	}
	for (size_t i = 0; i < all.n; i++) {
		int	 inner = 0;

		for (size_t j = 0; j < all.n; j++)
			if (strcmp(all.v[i], all.v[j]) != 0 && paths_within(all.v[i], all.v[j]))
				inner = 1;
		if (!inner && strlist_add_unique(&binds, all.v[i]) == -1)
			goto out;
	}
	if ((mfd = calloc(mnts.n + 1, sizeof *mfd)) == NULL ||
	    (bfd = calloc(binds.n + 1, sizeof *bfd)) == NULL)
		goto out;
	if ((rootfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1)
		goto out;
	for (size_t i = 0; i < mnts.n; i++) {
		mfd[i] = -1;
		/* A mount inside a grant comes with the grant's recursive bind. */
		if (strcmp(mnts.v[i], "/") == 0 || mountns_is_granted(mnts.v[i], granted) ||
		    paths_within(mnts.v[i], "/proc"))
			continue;
		mfd[i] = open(mnts.v[i], O_PATH | O_DIRECTORY | O_CLOEXEC);
	}
	for (size_t i = 0; i < binds.n; i++)
		bfd[i] = open(binds.v[i], O_PATH | O_CLOEXEC);

	if (mount("tmpfs", stage, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0700") == -1)
		goto out;
	snprintf(newroot, sizeof newroot, "%s/root", stage);
	if (mkdir(newroot, 0755) == -1 || mountns_overlay(newroot, rootfd, stage, k++) == -1) {
		umount2(stage, MNT_DETACH);
		goto out;	/* no overlayfs: fall back */
	}
	rc = -1;
	/* Every other filesystem, parents before children. */
	for (int depth = 1; depth < 256; depth++) {
		int	 more = 0;

		for (size_t i = 0; i < mnts.n; i++) {
			if (mountns_depth(mnts.v[i]) > depth)
				more = 1;
			if (mfd[i] < 0 || mountns_depth(mnts.v[i]) != depth)
				continue;
			snprintf(target, sizeof target, "%s%s", newroot, mnts.v[i]);
			if (stat(target, &st) == -1 && paths_mkdir_p(target, 0755) == -1) {
				mountns_fail(err, errlen, "mount point", target);
				goto out;
			}
			/* A filesystem overlayfs cannot stack on is covered, empty, instead. */
			if (mountns_overlay(target, mfd[i], stage, k++) == -1 &&
			    mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV,
			    MOUNTNS_TMPFS_OPTS) == -1) {
				mountns_fail(err, errlen, "overlay", mnts.v[i]);
				goto out;
			}
		}
		if (!more)
			break;
	}
	/* The grants, real, on top; system read grants read-only. */
	for (size_t i = 0; i < binds.n; i++) {
		if (bfd[i] < 0 || fstat(bfd[i], &st) == -1)
			continue;
		snprintf(target, sizeof target, "%s%s", newroot, binds.v[i]);
		if (mountns_mkpoint(target, S_ISDIR(st.st_mode)) == -1) {
			mountns_fail(err, errlen, "mount point", target);
			goto out;
		}
		snprintf(src, sizeof src, "/proc/self/fd/%d", bfd[i]);
		if (mount(src, target, NULL, MS_BIND | MS_REC, NULL) == -1) {
			mountns_fail(err, errlen, "bind", binds.v[i]);
			goto out;
		}
		if (mountns_ro_target(s, binds.v[i]) &&
		    mountns_remount_ro(target) == -1) {
			mountns_fail(err, errlen, "read-only", binds.v[i]);
			goto out;
		}
	}
	snprintf(target, sizeof target, "%s/proc", newroot);
	if (mountns_proc(target, err, errlen) == -1)
		goto out;
	if (chdir(newroot) == -1 || syscall(SYS_pivot_root, ".", ".") == -1) {
		mountns_fail(err, errlen, "pivot_root", newroot);
		goto out;
	}
	/* The old root now sits on top of the new one: detach it. */
	if (umount2(".", MNT_DETACH) == -1 || chdir("/") == -1) {
		mountns_fail(err, errlen, "detach old root", "/");
		goto out;
	}
	rc = 0;
out:
	for (size_t i = 0; mfd != NULL && i < mnts.n; i++)
		if (mfd[i] >= 0)
			close(mfd[i]);
	for (size_t i = 0; bfd != NULL && i < binds.n; i++)
		if (bfd[i] >= 0)
			close(bfd[i]);
	if (rootfd >= 0)
		close(rootfd);
	free(mfd);
	free(bfd);
	strlist_free(&mnts);
	strlist_free(&binds);
	strlist_free(&all);
	return rc;
}

/* Is path under (or equal to) a granted path? Then hiding it would take a grant away. */
static int
mountns_is_granted(const char *path, const struct strlist *granted)
{
	for (size_t i = 0; i < granted->n; i++)
		if (paths_within(path, granted->v[i]))
			return 1;
	return 0;
}

/* A fresh devpts: the sandbox sees only the terminals it opens itself. */
static int
mountns_devpts(void)
{
	struct stat	 st;

	if (stat("/dev/pts", &st) == -1 || !S_ISDIR(st.st_mode))
		return 0;
	if (mount("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC,
	    "newinstance,ptmxmode=0666,mode=0620") == -1)
		return 0;
	if (mount("/dev/pts/ptmx", "/dev/ptmx", NULL, MS_BIND, NULL) == -1) {
		umount2("/dev/pts", MNT_DETACH);
		return 0;
	}
	return 1;
}

int
mountns_apply(const struct sandbox_spec *s, const char *cwd, struct mountns_result *r,
    char *err, size_t errlen)
{
	struct strlist	 granted = { 0 }, hidden = { 0 };
	char		 canon[PATH_MAX];
	struct stat	 st;
	int		 rc;

	memset(r, 0, sizeof *r);
	/* Nothing done in here may propagate back to the host. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == -1)
		return mountns_fail(err, errlen, "make private", "/");
	r->applied = 1;

	rc = -1;
	if (mountns_granted(s, cwd, &granted) == -1) {
		mountns_fail(err, errlen, "list", "grants");
		goto out;
	}
	if ((rc = mountns_overlay_view(s, &granted, err, errlen)) == -1)
		goto out;
	r->overlay = rc == 0;
	rc = -1;
	if (!r->overlay && mountns_proc("/proc", err, errlen) == -1)
		goto out;
	/*
	 * Without the overlay view, cover the directories where sockets usually live.
	 * With it, only sockets the spec names inside grants still need covering.
	 */
	for (size_t i = r->overlay ? sizeof mountns_hidden / sizeof mountns_hidden[0] : 0;
	    i < sizeof mountns_hidden / sizeof mountns_hidden[0] + s->hide.n; i++) {
		const char	*h = i < sizeof mountns_hidden / sizeof mountns_hidden[0] ?
		    mountns_hidden[i] : s->hide.v[i - sizeof mountns_hidden /
		    sizeof mountns_hidden[0]];

		if (realpath(h, canon) == NULL || stat(canon, &st) == -1 ||
		    mountns_is_granted(canon, &granted))
			continue;
		if (r->overlay && !S_ISSOCK(st.st_mode))
			continue;
		if (S_ISDIR(st.st_mode)) {
			if (strlist_add_unique(&hidden, canon) == -1) {
				mountns_fail(err, errlen, "list", canon);
				goto out;
			}
		} else if (S_ISSOCK(st.st_mode) && strlist_add_unique(&hidden,
		    canon) == -1) {
			mountns_fail(err, errlen, "list", canon);
			goto out;
		}
	}
	for (size_t i = 0; i < hidden.n; i++) {
		int	 nested = 0;

		for (size_t j = 0; j < hidden.n; j++)
			if (j != i && paths_within(hidden.v[i], hidden.v[j]))
				nested = 1;
		if (nested)
			continue;
		if (stat(hidden.v[i], &st) == -1)
			continue;
		if (S_ISSOCK(st.st_mode)) {
			if (mount("/dev/null", hidden.v[i], NULL, MS_BIND, NULL) == -1) {
				mountns_fail(err, errlen, "cover socket", hidden.v[i]);
				goto out;
			}
		} else if (mountns_hide_dir(hidden.v[i], &granted, err, errlen) == -1)
			goto out;
	}
	/* Well-known sockets outside the covered directories: /dev/null over each. */
	for (size_t i = 0; !r->overlay &&
	    i < sizeof mountns_sockets / sizeof mountns_sockets[0]; i++) {
		if (realpath(mountns_sockets[i], canon) == NULL ||
		    stat(canon, &st) == -1 || !S_ISSOCK(st.st_mode) ||
		    mountns_is_granted(canon, &granted))
			continue;
		if (mount("/dev/null", canon, NULL, MS_BIND, NULL) == -1) {
			mountns_fail(err, errlen, "cover socket", canon);
			goto out;
		}
	}
	/*
	 * Read-only islands inside writable grants: a file bind mount cannot be written
	 * (EROFS), renamed over or unlinked (EBUSY).
	 */
	for (size_t i = 0; i < s->ro_binds.n; i++) {
		const char	*p = s->ro_binds.v[i];

		if (lstat(p, &st) == -1 || S_ISLNK(st.st_mode))
			continue;
		if (mount(p, p, NULL, MS_BIND, NULL) == -1 ||
		    mount(NULL, p, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID |
		    MS_NODEV, NULL) == -1) {
			mountns_fail(err, errlen, "read-only bind", p);
			goto out;
		}
	}
	if (strlist_contains(&s->write_dirs, "/dev/pts"))
		r->ptys = mountns_devpts();
	rc = 0;
out:
	strlist_free(&granted);
	strlist_free(&hidden);
	return rc;
}
