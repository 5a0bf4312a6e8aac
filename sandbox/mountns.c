/*
 * The run's filesystem view (SPEC U1): a fresh tmpfs root holding only what the spec
 * grants, bound in from the host, the way bubblewrap builds a sandbox without
 * privilege. The same code runs for root and for a normal user (in the user namespace
 * the runner's clone made); nothing depends on overlayfs or on what the host keeps
 * where.
 *
 * Why a view and not Landlock alone: Landlock (ABI <= 7) has no right for chmod,
 * chown, utimes or xattrs, and none for connect() to a named unix socket. A path
 * that is not in the view cannot be chmod'ed, touched or connected to at all (ENOENT),
 * and a read-only bind refuses metadata changes to what it shows (EROFS). Landlock
 * stays as the second layer over the same paths (its rules name the same inodes: a
 * bind shows the real ones), seccomp as the third.
 *
 * The view, in the order it is built:
 *   - every grant source is opened (O_PATH) before anything is covered, and checked to
 *     still be the canonical path the spec named; sources are bound from those
 *     descriptors, never looked up again by name;
 *   - a tmpfs is mounted over /tmp (any directory would do; bubblewrap uses /tmp too)
 *     and becomes the new root; each grant is bound at its own path, parents before
 *     children, read-write grants read-write and the rest read-only (recursively, so a
 *     filesystem mounted beneath a read-only grant is read-only too). A read grant in
 *     a system location (/usr, /etc, ...) brings the whole location, read-only: its
 *     credential files are there but Landlock denies them (spec.c carves them out);
 *   - /dev holds only the device files granted, /dev/pts a private devpts instance,
 *     /proc a fresh proc of the run's PID namespace, and the host's top-level links
 *     (/bin -> usr/bin) are copied;
 *   - an exec's TMPDIR, which the host never holds, is a tmpfs of the run's own;
 *   - sockets and directories the spec hides inside grants are covered, read-only
 *     islands inside writable grants pinned;
 *   - pivot_root, the old root detached, and the tmpfs root itself made read-only, so
 *     nothing outside the grants is writable.
 *
 * Every step is mandatory: a failure ends the child before anything of the run runs.
 */
#define _GNU_SOURCE	/* O_PATH, mount_setattr */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
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

/* Where the new root is built: a tmpfs mounted over it, then pivoted into. */
#define MOUNTNS_STAGE		"/tmp"
#define MOUNTNS_ROOT_OPTS	"mode=0755,size=1m"
#define MOUNTNS_COVER_OPTS	"mode=0755,size=4k"
/*
 * An exec's TMPDIR: memory, so bounded (a quarter of RAM, a million inodes); a run with
 * a memory cgroup is charged for what it writes there as well.
 */
#define MOUNTNS_TMPDIR_OPTS	"mode=0700,size=25%,nr_inodes=1m"

/* One bind of the view: a canonical host path, shown at the same path. */
struct mountns_bind {
	char	*path;
	int	 rw;
	int	 fd;		/* O_PATH, opened before the stage is covered */
	int	 isdir;
};

struct mountns_plan {
	struct mountns_bind	*b;
	size_t			 n, cap;
	/*
	 * Symlinks to show as they are on the host: the host root's top-level links, and
	 * every link met on the way to a name the run uses (argv[0], PATH's entries,
	 * HOME, the working directory), e.g. node_modules/.bin/claude into a granted
	 * package. The spec grants canonical paths; these keep the names working.
	 */
	struct strlist		 link_names;
	struct strlist		 link_targets;
};

/* How many links one name may pass through, as the kernel's own limit. */
#define MOUNTNS_MAX_LINKS	40

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
 * from inside. Read-only (Landlock grants /proc for reading only, too). Mounted while
 * the host's /proc is still in view: in a user namespace the kernel allows a new proc
 * only where a full one is already visible.
 */
static int
mountns_proc(const char *target, char *err, size_t errlen)
{
	if (paths_mkdir_p(target, 0555) == -1)
		return mountns_fail(err, errlen, "mount point", target);
	if (mount("proc", target, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY,
	    NULL) == -1)
		return mountns_fail(err, errlen, "mount a fresh proc on", target);
	return 0;
}

/* Create path's missing parents in the new root, and path itself as a dir or a file. */
static int
mountns_mkpoint(const char *path, int isdir)
{
	char		 buf[PATH_MAX], *slash;
	struct stat	 st;
	int		 fd;

	if (lstat(path, &st) == 0)
		return (S_ISDIR(st.st_mode) != 0) == (isdir != 0) ? 0 : (errno = EEXIST, -1);
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
	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)) == -1)
		return -1;
	close(fd);
	return 0;
}

/* Remount one bind read-only, keeping the flags it has (a user namespace locks them). */
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

/*
 * Make the bind at target, and every mount that came with it, read-only. A recursive
 * bind brings the filesystems mounted beneath the source along, each with its own
 * flags: mount_setattr(AT_RECURSIVE) reaches them all in one call (Linux 5.12); an
 * older kernel gets the top remounted, and Landlock still refuses writes beneath.
 */
static int
mountns_readonly(const char *target)
{
	struct mount_attr	 a;

	memset(&a, 0, sizeof a);
	a.attr_set = MOUNT_ATTR_RDONLY;
	if (syscall(SYS_mount_setattr, AT_FDCWD, target, AT_RECURSIVE, &a, sizeof a) == 0)
		return 0;
	if (errno != ENOSYS)
		return -1;
	return mountns_remount_ro(target);
}

/* The nearest earlier bind that contains path (the plan is sorted), or NULL. */
static const struct mountns_bind *
mountns_enclosing(const struct mountns_plan *p, size_t before, const char *path)
{
	for (size_t i = before; i-- > 0; )
		if (p->b[i].fd >= 0 && paths_within(path, p->b[i].path))
			return &p->b[i];
	return NULL;
}

static int
mountns_plan_link(struct mountns_plan *p, const char *name, const char *target)
{
	if (strlist_contains(&p->link_names, name))
		return 0;
	if (strlist_add(&p->link_names, name) == -1 ||
	    strlist_add(&p->link_targets, target) == -1)
		return -1;
	return 0;
}

/*
 * Add a grant to the plan. A spec names canonical paths, but one made by hand (the
 * byok agent's) may name a link such as /bin: the link is shown as it is and its
 * target is what gets bound.
 */
static int
mountns_plan_add(struct mountns_plan *p, const char *path, int rw)
{
	char		 target[PATH_MAX], canon[PATH_MAX];
	struct stat	 st;
	ssize_t		 n;

	/*
	 * Already planned (every read grant in /etc becomes /etc itself): it was no link
	 * when it was added, so it needs no second look.
	 */
	for (size_t i = 0; i < p->n; i++)
		if (strcmp(p->b[i].path, path) == 0) {
			p->b[i].rw |= rw;	/* granted both ways: it is writable */
			return 0;
		}
	if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
		if ((n = readlink(path, target, sizeof target - 1)) == -1 ||
		    realpath(path, canon) == NULL)
			return 0;	/* a dangling link shows nothing */
		target[n] = '\0';
		if (mountns_plan_link(p, path, target) == -1)
			return -1;
		path = canon;
		for (size_t i = 0; i < p->n; i++)
			if (strcmp(p->b[i].path, path) == 0) {
				p->b[i].rw |= rw;
				return 0;
			}
	}
	if (p->n == p->cap) {
		size_t			 cap = p->cap ? p->cap * 2 : 32;
		struct mountns_bind	*nb = realloc(p->b, cap * sizeof *nb);

		if (nb == NULL)
			return -1;
		p->b = nb;
		p->cap = cap;
	}
	if ((p->b[p->n].path = strdup(path)) == NULL)
		return -1;
	p->b[p->n].rw = rw;
	p->b[p->n].fd = -1;
	p->b[p->n].isdir = 0;
	p->n++;
	return 0;
}

static int
mountns_bind_cmp(const void *a, const void *b)
{
	return strcmp(((const struct mountns_bind *)a)->path,
	    ((const struct mountns_bind *)b)->path);
}

/* Grants the view makes itself rather than binding from the host. */
static int
mountns_special(const char *path)
{
	return paths_within(path, "/proc") || strcmp(path, "/dev/pts") == 0 ||
	    paths_within(path, "/dev/pts/") || strcmp(path, "/dev/ptmx") == 0;
}

/*
 * What to bind: each grant at its canonical path, a read grant in a system location
 * as the whole location; sorted so parents come before children; a grant that an
 * enclosing one already brings with the same access is dropped.
 */
static int
mountns_plan_grants(const struct sandbox_spec *s, struct mountns_plan *p)
{
	const struct strlist	*ro[] = { &s->read_dirs, &s->read_files };
	const struct strlist	*rw[] = { &s->write_dirs, &s->write_files };
	char			 root[PATH_MAX];
	size_t			 k;

	for (size_t i = 0; i < 2; i++)
		for (size_t j = 0; j < rw[i]->n; j++)
			if (!mountns_special(rw[i]->v[j]) &&
			    mountns_plan_add(p, rw[i]->v[j], 1) == -1)
				return -1;
	if (s->workdir != NULL && mountns_plan_add(p, s->workdir, 1) == -1)
		return -1;
	/* A TMPDIR of the view alone is a tmpfs (mountns_tmpdir), not a bind. */
	if (s->tmpdir != NULL && !s->tmpdir_view && mountns_plan_add(p, s->tmpdir, 1) == -1)
		return -1;
	if (s->ssh_auth_sock != NULL && mountns_plan_add(p, s->ssh_auth_sock, 1) == -1)
		return -1;
	for (size_t i = 0; i < 2; i++)
		for (size_t j = 0; j < ro[i]->n; j++) {
			const char	*g = ro[i]->v[j];

			if (mountns_special(g))
				continue;
			if (spec_system_root(g, root, sizeof root))
				g = root;
			if (mountns_plan_add(p, g, 0) == -1)
				return -1;
		}
	/* A system directory whose carve is still to come is bound whole, as it would be. */
	for (size_t j = 0; j < s->carve_pending.n; j++)
		if (mountns_plan_add(p, s->carve_pending.v[j], 0) == -1)
			return -1;
	qsort(p->b, p->n, sizeof *p->b, mountns_bind_cmp);
	/* Drop what an enclosing bind already shows with the same access. */
	for (size_t i = 0; i < p->n; i++) {
		const struct mountns_bind *e = NULL;

		for (size_t j = i; j-- > 0; )
			if (p->b[j].path != NULL && paths_within(p->b[i].path, p->b[j].path)) {
				e = &p->b[j];
				break;
			}
		if (e != NULL && e->rw == p->b[i].rw) {
			free(p->b[i].path);
			p->b[i].path = NULL;
		}
	}
	for (size_t i = k = 0; i < p->n; i++)
		if (p->b[i].path != NULL)
			p->b[k++] = p->b[i];
	p->n = k;
	return 0;
}

/*
 * Open every source before the stage is covered. The descriptor must show the very
 * path the spec named: a component swapped for a symlink since the spec was built
 * would bind something else, so that refuses the run. A source that has gone is left
 * out (Landlock leaves it out too).
 */
static int
mountns_plan_open(struct mountns_plan *p, char *err, size_t errlen)
{
	char		 proc[64], seen[PATH_MAX];
	struct stat	 st;
	ssize_t		 n;

	for (size_t i = 0; i < p->n; i++) {
		struct mountns_bind	*b = &p->b[i];

		if ((b->fd = open(b->path, O_PATH | O_NOFOLLOW | O_CLOEXEC)) == -1) {
			if (errno == ENOENT || errno == ENOTDIR || errno == EACCES ||
			    errno == ELOOP)
				continue;
			return mountns_fail(err, errlen, "open", b->path);
		}
		snprintf(proc, sizeof proc, "/proc/self/fd/%d", b->fd);
		if ((n = readlink(proc, seen, sizeof seen - 1)) == -1 || fstat(b->fd, &st) == -1)
			return mountns_fail(err, errlen, "inspect", b->path);
		seen[n] = '\0';
		if (strcmp(seen, b->path) != 0) {
			errno = EXDEV;
			snprintf(err, errlen, "mount namespace: grant %s now resolves to %s; "
			    "refusing to bind it", b->path, seen);
			return -1;
		}
		b->isdir = S_ISDIR(st.st_mode);
	}
	return 0;
}

/*
 * Record the symlinks on the way to path on the host, component by component, and
 * follow each one as the kernel would. Only links are recorded: what they lead to is
 * in the view only if a grant brings it. 0, or -1 when out of memory.
 */
static int
mountns_plan_chain(struct mountns_plan *p, const char *path, int *budget)
{
	char		 cur[PATH_MAX], next[PATH_MAX], target[PATH_MAX];
	const char	*c = path, *e;
	struct stat	 st;
	size_t		 len = 0;
	ssize_t		 n;

	if (path[0] != '/')
		return 0;
	cur[0] = '\0';
	while (*c != '\0') {
		while (*c == '/')
			c++;
		if (*c == '\0')
			break;
		e = strchrnul(c, '/');
		if (len + 1 + (size_t)(e - c) >= sizeof cur)
			return 0;
		cur[len++] = '/';
		memcpy(cur + len, c, (size_t)(e - c));
		len += (size_t)(e - c);
		cur[len] = '\0';
		c = e;
		if (lstat(cur, &st) == -1)
			return 0;
		if (!S_ISLNK(st.st_mode))
			continue;
		if (--*budget < 0 || (n = readlink(cur, target, sizeof target - 1)) == -1)
			return 0;
		target[n] = '\0';
		if (mountns_plan_link(p, cur, target) == -1)
			return -1;
		/* Go on from where the link leads, with the rest of the path. */
		if (target[0] == '/')
			n = snprintf(next, sizeof next, "%s%s", target, c);
		else {
			char	*slash = strrchr(cur, '/');

			*slash = '\0';
			n = snprintf(next, sizeof next, "%s/%s%s", cur, target, c);
		}
		if (n < 0 || (size_t)n >= sizeof next)
			return 0;
		return mountns_plan_chain(p, next, budget);
	}
	return 0;
}

/* The links to copy: the host root's own, and those on the way to every used name. */
static int
mountns_plan_links(struct mountns_plan *p, const struct sandbox_spec *s,
    const char *const *names)
{
	DIR		*d;
	struct dirent	*de;
	char		 path[PATH_MAX], *copy, *save, *tok;
	const char	*env;
	int		 rc = 0, budget;

	if ((d = opendir("/")) == NULL)
		return -1;
	while (rc == 0 && (de = readdir(d)) != NULL) {
		if (de->d_type != DT_LNK)
			continue;
		snprintf(path, sizeof path, "/%s", de->d_name);
		budget = MOUNTNS_MAX_LINKS;
		rc = mountns_plan_chain(p, path, &budget);
	}
	closedir(d);
	for (size_t i = 0; rc == 0 && names != NULL && names[i] != NULL; i++) {
		budget = MOUNTNS_MAX_LINKS;
		rc = mountns_plan_chain(p, names[i], &budget);
	}
	if (rc == 0 && (env = spec_getenv(s, "HOME")) != NULL) {
		budget = MOUNTNS_MAX_LINKS;
		rc = mountns_plan_chain(p, env, &budget);
	}
	if (rc == 0 && (env = spec_getenv(s, "PATH")) != NULL) {
		if ((copy = strdup(env)) == NULL)
			return -1;
		for (tok = strtok_r(copy, ":", &save); rc == 0 && tok != NULL;
		    tok = strtok_r(NULL, ":", &save)) {
			budget = MOUNTNS_MAX_LINKS;
			rc = mountns_plan_chain(p, tok, &budget);
		}
		free(copy);
	}
	return rc;
}

static void
mountns_plan_free(struct mountns_plan *p)
{
	for (size_t i = 0; i < p->n; i++) {
		if (p->b[i].fd >= 0)
			close(p->b[i].fd);
		free(p->b[i].path);
	}
	free(p->b);
	strlist_free(&p->link_names);
	strlist_free(&p->link_targets);
	memset(p, 0, sizeof *p);
}

/* A fresh devpts in the new root: the run sees only the terminals it opens itself. */
static int
mountns_devpts(const char *newroot, const struct sandbox_spec *s)
{
	char	 pts[PATH_MAX], ptmx[PATH_MAX], src[PATH_MAX + 8];

	snprintf(pts, sizeof pts, "%s/dev/pts", newroot);
	if (mountns_mkpoint(pts, 1) == -1 || mount("devpts", pts, "devpts",
	    MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620") == -1)
		return 0;
	if (!strlist_contains(&s->write_files, "/dev/ptmx"))
		return 1;
	snprintf(ptmx, sizeof ptmx, "%s/dev/ptmx", newroot);
	snprintf(src, sizeof src, "%s/ptmx", pts);
	if (mountns_mkpoint(ptmx, 0) == -1 || mount(src, ptmx, NULL, MS_BIND, NULL) == -1) {
		umount2(pts, MNT_DETACH);
		return 0;
	}
	return 1;
}

/*
 * Bind the plan into the new root, parents first: every entry, or (within non-NULL)
 * only those strictly inside within, after a cover was put over it.
 */
static int
mountns_bind_all(const struct mountns_plan *p, const char *newroot, const char *within,
    char *err, size_t errlen)
{
	char		 target[2 * PATH_MAX], src[64];
	struct stat	 st;

	for (size_t i = 0; i < p->n; i++) {
		const struct mountns_bind *b = &p->b[i], *e;

		if (b->fd < 0 || (within != NULL && (!paths_within(b->path, within) ||
		    strcmp(b->path, within) == 0)))
			continue;
		snprintf(target, sizeof target, "%s%s", newroot, b->path);
		e = mountns_enclosing(p, i, b->path);
		if (e != NULL && (within == NULL || paths_within(e->path, within))) {
			/*
			 * Inside an earlier bind the mount point is the real file: it must
			 * be there already, since making it would write to the host.
			 */
			if (lstat(target, &st) == -1 ||
			    (S_ISDIR(st.st_mode) != 0) != (b->isdir != 0))
				continue;
		} else if (mountns_mkpoint(target, b->isdir) == -1)
			return mountns_fail(err, errlen, "mount point", b->path);
		snprintf(src, sizeof src, "/proc/self/fd/%d", b->fd);
		if (mount(src, target, NULL, MS_BIND | MS_REC, NULL) == -1)
			return mountns_fail(err, errlen, "bind", b->path);
		if (!b->rw && mountns_readonly(target) == -1)
			return mountns_fail(err, errlen, "read-only", b->path);
	}
	return 0;
}

/*
 * An exec's TMPDIR (spec.c's spec_tmpdir_view): a tmpfs of its own at the path the spec
 * named, mode 0700, owned by the run's uid, gone with the namespace. Its path must be
 * in no bind, where making its mount point would write to the host.
 */
static int
mountns_tmpdir(const struct mountns_plan *p, const struct sandbox_spec *s,
    const char *newroot, char *err, size_t errlen)
{
	char	 target[2 * PATH_MAX];

	if (s->tmpdir == NULL || !s->tmpdir_view)
		return 0;
	if (mountns_enclosing(p, p->n, s->tmpdir) != NULL) {
		/* spec.c makes such a TMPDIR on the host instead: this is a spec from elsewhere. */
		snprintf(err, errlen, "mount namespace: the run's TMPDIR %s lies inside a "
		    "grant, where its mount point would be made on the host: refused",
		    s->tmpdir);
		errno = EEXIST;
		return -1;
	}
	snprintf(target, sizeof target, "%s%s", newroot, s->tmpdir);
	if (mountns_mkpoint(target, 1) == -1)
		return mountns_fail(err, errlen, "mount point", s->tmpdir);
	if (mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, MOUNTNS_TMPDIR_OPTS) == -1)
		return mountns_fail(err, errlen, "TMPDIR tmpfs on", s->tmpdir);
	return 0;
}

/* The pieces of the new root that are not binds: links, /dev's names, /tmp, /proc. */
static int
mountns_furnish(const struct mountns_plan *p, const struct sandbox_spec *s,
    const char *newroot, struct mountns_result *r, char *err, size_t errlen)
{
	static const char *const devlinks[][2] = {
		{ "fd", "/proc/self/fd" }, { "stdin", "/proc/self/fd/0" },
		{ "stdout", "/proc/self/fd/1" }, { "stderr", "/proc/self/fd/2" },
	};
	char		 path[2 * PATH_MAX];
	struct stat	 st;

	for (size_t i = 0; i < p->link_names.n; i++) {
		const char	*name = p->link_names.v[i];

		/* Inside a bind the link is the host's own, or cannot be made. */
		if (mountns_enclosing(p, p->n, name) != NULL)
			continue;
		snprintf(path, sizeof path, "%s%s", newroot, name);
		if (lstat(path, &st) == 0)
			continue;	/* a grant or an earlier link is there */
		*strrchr(path, '/') = '\0';
		if (paths_mkdir_p(path, 0755) == -1)
			return mountns_fail(err, errlen, "mount point", path);
		snprintf(path, sizeof path, "%s%s", newroot, name);
		if (symlink(p->link_targets.v[i], path) == -1)
			return mountns_fail(err, errlen, "link", name);
	}
	snprintf(path, sizeof path, "%s/dev", newroot);
	if (paths_mkdir_p(path, 0755) == -1)
		return mountns_fail(err, errlen, "mount point", path);
	for (size_t i = 0; i < sizeof devlinks / sizeof devlinks[0]; i++) {
		snprintf(path, sizeof path, "%s/dev/%s", newroot, devlinks[i][0]);
		if (lstat(path, &st) == -1 && symlink(devlinks[i][1], path) == -1)
			return mountns_fail(err, errlen, "link", path);
	}
	if (strlist_contains(&s->write_dirs, "/dev/pts"))
		r->ptys = mountns_devpts(newroot, s);
	/* An empty /tmp, read-only with the root: the run's TMPDIR is its own. */
	snprintf(path, sizeof path, "%s/tmp", newroot);
	if (paths_mkdir_p(path, 0755) == -1)
		return mountns_fail(err, errlen, "mount point", path);
	snprintf(path, sizeof path, "%s/proc", newroot);
	return mountns_proc(path, err, errlen);
}

/*
 * The read-only islands inside writable grants are pinned (a file bind mount cannot be
 * written, renamed over or unlinked). Then what the spec hides, where a grant would
 * show it (a socket in a granted directory, a directory of sockets inside a granted
 * home): a socket gets /dev/null bound over it, a directory an empty tmpfs with the
 * grants beneath it bound back, read-only. All of it in the new root, before the
 * pivot, while the host's /dev/null and the grants' descriptors can still be bound.
 */
static int
mountns_cover(const struct mountns_plan *p, const struct sandbox_spec *s,
    const char *newroot, char *err, size_t errlen)
{
	char		 target[2 * PATH_MAX];
	struct stat	 st;

	/*
	 * The islands first, recursively: a bind of a directory made after a cover
	 * beneath it would show what the cover hides.
	 */
	for (size_t i = 0; i < s->ro_binds.n; i++) {
		const char	*ro = s->ro_binds.v[i];

		snprintf(target, sizeof target, "%s%s", newroot, ro);
		if (lstat(target, &st) == -1 || S_ISLNK(st.st_mode))
			continue;
		if (mount(target, target, NULL, MS_BIND | MS_REC, NULL) == -1 ||
		    mountns_readonly(target) == -1)
			return mountns_fail(err, errlen, "read-only bind", ro);
	}
	for (size_t i = 0; i < s->hide.n; i++) {
		const char	*h = s->hide.v[i];

		/* Outside every bind it is not in the view at all. */
		if (mountns_enclosing(p, p->n, h) == NULL)
			continue;
		snprintf(target, sizeof target, "%s%s", newroot, h);
		if (lstat(target, &st) == -1)
			continue;
		if (S_ISSOCK(st.st_mode)) {
			if (mount("/dev/null", target, NULL, MS_BIND, NULL) == -1)
				return mountns_fail(err, errlen, "cover socket", h);
		} else if (S_ISDIR(st.st_mode)) {
			if (mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV,
			    MOUNTNS_COVER_OPTS) == -1)
				return mountns_fail(err, errlen, "cover", h);
			if (mountns_bind_all(p, newroot, h, err, errlen) == -1)
				return -1;
			if (mount(NULL, target, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY |
			    MS_NOSUID | MS_NODEV, NULL) == -1)
				return mountns_fail(err, errlen, "read-only cover", h);
		}
	}
	return 0;
}

int
mountns_apply(const struct sandbox_spec *s, const char *const *names,
    struct mountns_result *r, char *err, size_t errlen)
{
	struct mountns_plan	 p;
	const char		*newroot = MOUNTNS_STAGE;
	int			 rc = -1;

	memset(r, 0, sizeof *r);
	memset(&p, 0, sizeof p);
	/* Nothing done in here may propagate back to the host, nor the host's in here. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == -1)
		return mountns_fail(err, errlen, "make private", "/");
	r->applied = 1;
	if (mountns_plan_grants(s, &p) == -1 || mountns_plan_links(&p, s, names) == -1) {
		mountns_fail(err, errlen, "plan", "the view");
		goto out;
	}
	if (mountns_plan_open(&p, err, errlen) == -1)
		goto out;
	if (mount("tmpfs", newroot, "tmpfs", MS_NOSUID | MS_NODEV, MOUNTNS_ROOT_OPTS) == -1) {
		mountns_fail(err, errlen, "new root on", newroot);
		goto out;
	}
	if (mountns_bind_all(&p, newroot, NULL, err, errlen) == -1 ||
	    mountns_tmpdir(&p, s, newroot, err, errlen) == -1 ||
	    mountns_cover(&p, s, newroot, err, errlen) == -1 ||
	    mountns_furnish(&p, s, newroot, r, err, errlen) == -1)
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
	if (mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV,
	    NULL) == -1) {
		mountns_fail(err, errlen, "read-only", "the new root");
		goto out;
	}
	rc = 0;
out:
	mountns_plan_free(&p);
	return rc;
}
