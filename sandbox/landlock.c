#define _GNU_SOURCE	/* O_PATH, pipe2, dup3 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "landlock.h"
#include "landlock_abi.h"

/* Rights that make sense on a single file; Landlock rejects directory rights on one. */
#define LANDLOCK_FILE_RIGHTS (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | \
	LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE | LANDLOCK_ACCESS_FS_IOCTL_DEV)
#define LANDLOCK_READ_RIGHTS (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | \
	LANDLOCK_ACCESS_FS_READ_DIR)

static int
landlock_create_ruleset(const struct cw_landlock_ruleset_attr *attr, size_t size,
    __u32 flags)
{
	return (int)syscall(SYS_landlock_create_ruleset, attr, size, flags);
}

static int
landlock_add_rule(int fd, int type, const void *attr)
{
	return (int)syscall(SYS_landlock_add_rule, fd, type, attr, 0);
}

static int
landlock_restrict_self(int fd, __u32 flags)
{
	return (int)syscall(SYS_landlock_restrict_self, fd, flags);
}

int
landlock_abi(void)
{
	int	 abi;

	abi = landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	if (abi < 0)
		return 0;
	return abi > LANDLOCK_ABI_MAX ? LANDLOCK_ABI_MAX : abi;
}

/* Every filesystem right the ABI knows: all of them are handled, so all default to deny. */
static __u64
landlock_fs_handled(int abi)
{
	__u64	 r = (LANDLOCK_ACCESS_FS_MAKE_BLOCK << 1) - 1;	/* ABI 1: bits 0..12 */

	if (abi >= 2)
		r |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		r |= LANDLOCK_ACCESS_FS_TRUNCATE;
	if (abi >= 5)
		r |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
	return r;
}

int
landlock_limits(int abi, struct strlist *ne)
{
	if (abi < 1)
		return strlist_add(ne, "landlock: not available in this kernel");
	if (abi < 2 && strlist_add(ne, "landlock: ABI 1 cannot allow renames or links between "
	    "directories, so they are all denied") == -1)
		return -1;
	if (abi < 3 && strlist_add(ne, "landlock: truncate(2) is not restricted (ABI < 3)") == -1)
		return -1;
	if (abi < 5 && strlist_add(ne, "landlock: ioctl on device files is not restricted "
	    "(ABI < 5)") == -1)
		return -1;
	if (abi < 6 && strlist_add(ne, "landlock: signals to and abstract unix sockets of "
	    "processes outside the sandbox are not scoped (ABI < 6)") == -1)
		return -1;
	return 0;
}

/*
 * Add one path-beneath rule; a path that does not exist is skipped. A directory gets the
 * rights asked for, anything else only their file rights. dir says what the spec listed
 * the path as: a directory is opened with O_DIRECTORY, whose success says what its type
 * is without an fstat (81 of a start's system calls); anything else, and a listed
 * directory that is no longer one, is asked with fstat as before.
 */
static int
landlock_add_path(int rfd, const char *path, int dir, __u64 rights, __u64 handled,
    char *err, size_t errlen)
{
	struct cw_landlock_path_beneath_attr	 pb;
	struct stat				 st;
	int					 fd = -1, save, isdir = 0;

	if (dir && (fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC)) != -1)
		isdir = 1;
	else if ((fd = open(path, O_PATH | O_CLOEXEC)) == -1) {
		if (errno == ENOENT || errno == ENOTDIR || errno == EACCES)
			return 0;
		snprintf(err, errlen, "landlock: open %s: %s", path, strerror(errno));
		return -1;
	} else if (fstat(fd, &st) == -1) {
		save = errno;
		close(fd);
		errno = save;
		snprintf(err, errlen, "landlock: stat %s: %s", path, strerror(errno));
		return -1;
	} else
		isdir = S_ISDIR(st.st_mode);
	rights &= handled;
	if (!isdir)
		rights &= LANDLOCK_FILE_RIGHTS;
	memset(&pb, 0, sizeof pb);
	pb.allowed_access = rights;
	pb.parent_fd = fd;
	if (landlock_add_rule(rfd, LANDLOCK_RULE_PATH_BENEATH, &pb) == -1) {
		save = errno;
		close(fd);
		errno = save;
		snprintf(err, errlen, "landlock: rule for %s: %s", path, strerror(errno));
		return -1;
	}
	close(fd);
	return 0;
}

static int
landlock_add_list(int rfd, const struct strlist *l, int dir, __u64 rights, __u64 handled,
    char *err, size_t errlen)
{
	for (size_t i = 0; i < l->n; i++)
		if (landlock_add_path(rfd, l->v[i], dir, rights, handled, err, errlen) == -1)
			return -1;
	return 0;
}

/* Is path one of the pseudo-terminal grants that need a private devpts? */
static int
landlock_is_pty(const char *path)
{
	return strcmp(path, "/dev/pts") == 0 || strcmp(path, "/dev/ptmx") == 0;
}

int
landlock_ruleset(int abi, char *err, size_t errlen)
{
	struct cw_landlock_ruleset_attr	 attr;
	size_t				 size;
	int				 rfd, save;

	if (abi < 1) {
		errno = ENOSYS;
		snprintf(err, errlen, "landlock: not available in this kernel");
		return -1;
	}
	memset(&attr, 0, sizeof attr);
	attr.handled_access_fs = landlock_fs_handled(abi);
	size = sizeof attr.handled_access_fs;
	if (abi >= 4) {
		/* TCP is handled by leaving it out: network is open by design. */
		size = offsetof(struct cw_landlock_ruleset_attr, scoped);
	}
	if (abi >= 6) {
		attr.scoped = LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL;
		size = sizeof attr;
	}
	if ((rfd = landlock_create_ruleset(&attr, size, 0)) == -1) {
		save = errno;
		snprintf(err, errlen, "landlock: create ruleset: %s", strerror(errno));
		errno = save;
		return -1;
	}
	return rfd;
}

int
landlock_add_reads(int rfd, int abi, const struct strlist *dirs, size_t dirs_from,
    const struct strlist *files, size_t files_from, char *err, size_t errlen)
{
	__u64	 handled = landlock_fs_handled(abi);

	for (size_t i = dirs_from; i < dirs->n; i++)
		if (landlock_add_path(rfd, dirs->v[i], 1, LANDLOCK_READ_RIGHTS, handled, err,
		    errlen) == -1)
			return -1;
	for (size_t i = files_from; i < files->n; i++)
		if (landlock_add_path(rfd, files->v[i], 0, LANDLOCK_READ_RIGHTS, handled, err,
		    errlen) == -1)
			return -1;
	return 0;
}

int
landlock_apply(int abi, const struct sandbox_spec *s, const struct landlock_extra *x,
    char *err, size_t errlen)
{
	struct strlist			 wdirs = { 0 }, wfiles = { 0 };
	__u64				 handled, rw;
	int				 rfd, rc = -1, save;

	if (x->has_ruleset)
		rfd = x->ruleset;
	else if ((rfd = landlock_ruleset(abi, err, errlen)) == -1)
		return -1;
	handled = landlock_fs_handled(abi);

	/* Writers may do everything but create device nodes. */
	rw = handled & ~(LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_BLOCK);

	/*
	 * /dev/pts and /dev/ptmx are granted only over a private devpts instance: the host's
	 * /dev/pts holds the user's own terminals, whose input a writer could read.
	 */
	for (size_t i = 0; i < s->write_dirs.n; i++)
		if ((x->ptys || !landlock_is_pty(s->write_dirs.v[i])) &&
		    strlist_add(&wdirs, s->write_dirs.v[i]) == -1)
			goto nomem;
	for (size_t i = 0; i < s->write_files.n; i++)
		if ((x->ptys || !landlock_is_pty(s->write_files.v[i])) &&
		    strlist_add(&wfiles, s->write_files.v[i]) == -1)
			goto nomem;
	for (size_t i = 0; i < sizeof x->write_dirs / sizeof x->write_dirs[0]; i++)
		if (x->write_dirs[i] != NULL && strlist_add(&wdirs, x->write_dirs[i]) == -1)
			goto nomem;

	if (landlock_add_list(rfd, &s->read_dirs, 1, LANDLOCK_READ_RIGHTS, handled, err,
	    errlen) == -1 ||
	    landlock_add_list(rfd, &s->read_files, 0, LANDLOCK_READ_RIGHTS, handled, err,
	    errlen) == -1 ||
	    landlock_add_list(rfd, &wdirs, 1, rw, handled, err, errlen) == -1 ||
	    landlock_add_list(rfd, &wfiles, 0, rw, handled, err, errlen) == -1)
		goto out;
	if (s->workdir != NULL &&
	    landlock_add_path(rfd, s->workdir, 1, rw, handled, err, errlen) == -1)
		goto out;
	if (s->tmpdir != NULL &&
	    landlock_add_path(rfd, s->tmpdir, 1, rw, handled, err, errlen) == -1)
		goto out;
	if (landlock_restrict_self(rfd, 0) == -1) {
		snprintf(err, errlen, "landlock: restrict self: %s", strerror(errno));
		goto out;
	}
	rc = 0;
	goto out;
nomem:
	snprintf(err, errlen, "landlock: %s", strerror(errno));
out:
	save = errno;
	close(rfd);
	strlist_free(&wdirs);
	strlist_free(&wfiles);
	errno = save;
	return rc;
}
