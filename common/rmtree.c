#define _GNU_SOURCE	/* O_PATH, fdopendir */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rmtree.h"

#define RMTREE_DEPTH	256

static int
rmtree_walk(int parentfd, const char *name, dev_t dev, int depth)
{
	struct stat	 st;
	DIR		*d;
	struct dirent	*de;
	int		 fd, first = 0, save;

	if (fstatat(parentfd, name, &st, AT_SYMLINK_NOFOLLOW) == -1)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(parentfd, name, 0) == -1 && errno != ENOENT ? -1 : 0;
	if (st.st_dev != dev) {
		errno = EXDEV;
		return -1;
	}
	if (depth >= RMTREE_DEPTH) {
		errno = ELOOP;
		return -1;
	}
	/* O_NOFOLLOW|O_DIRECTORY: a directory swapped for a link or a FIFO is refused. */
	if ((fd = openat(parentfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC |
	    O_NONBLOCK)) == -1)
		return errno == ENOENT ? 0 : -1;
	if (fstat(fd, &st) == -1 || st.st_dev != dev) {
		save = st.st_dev != dev ? EXDEV : errno;
		close(fd);
		errno = save;
		return -1;
	}
	/*
	 * A directory of our own without write permission (go makes its module cache
	 * read-only: 0555) cannot be emptied until it is writable again. Root needs no
	 * bit; anyone else would fail here on every file in it.
	 */
	if ((st.st_mode & S_IRWXU) != S_IRWXU && st.st_uid == geteuid() &&
	    fchmod(fd, (st.st_mode & 07777) | S_IRWXU) == -1) {
		save = errno;
		close(fd);
		errno = save;
		return -1;
	}
	if ((d = fdopendir(fd)) == NULL) {
		save = errno;
		close(fd);
		errno = save;
		return -1;
	}
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (rmtree_walk(dirfd(d), de->d_name, dev, depth + 1) == -1 && first == 0)
			first = errno;
	}
	closedir(d);
	if (unlinkat(parentfd, name, AT_REMOVEDIR) == -1 && errno != ENOENT && first == 0)
		first = errno;
	if (first != 0) {
		errno = first;
		return -1;
	}
	return 0;
}

int
rmtree_at(int parentfd, const char *name)
{
	struct stat	 st;

	if (name[0] == '\0' || strchr(name, '/') != NULL || strcmp(name, ".") == 0 ||
	    strcmp(name, "..") == 0) {
		errno = EINVAL;
		return -1;
	}
	if (fstat(parentfd, &st) == -1)
		return -1;
	return rmtree_walk(parentfd, name, st.st_dev, 0);
}

int
rmtree_path(const char *path)
{
	char		 parent[PATH_MAX];
	const char	*slash;
	int		 fd, rc, save;

	if (path[0] != '/' || (slash = strrchr(path, '/')) == NULL || slash[1] == '\0' ||
	    (size_t)(slash - path) >= sizeof parent) {
		errno = EINVAL;
		return -1;
	}
	if (slash == path)
		snprintf(parent, sizeof parent, "/");
	else
		snprintf(parent, sizeof parent, "%.*s", (int)(slash - path), path);
	if ((fd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return errno == ENOENT ? 0 : -1;
	rc = rmtree_at(fd, slash + 1);
	save = errno;
	close(fd);
	errno = save;
	return rc;
}
