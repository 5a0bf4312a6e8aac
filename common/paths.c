#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "paths.h"
#include "rmtree.h"

static int
paths_copy(char *out, size_t outlen, const char *s)
{
	if (strlen(s) >= outlen) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(out, s);
	return 0;
}

int
paths_home(char *out, size_t outlen)
{
	const char	*h = getenv("HOME");
	struct passwd	*pw;

	if (h != NULL && h[0] == '/')
		return paths_copy(out, outlen, h);
	if ((pw = getpwuid(getuid())) == NULL || pw->pw_dir == NULL) {
		errno = ENOENT;
		return -1;
	}
	return paths_copy(out, outlen, pw->pw_dir);
}

int
paths_clockwork_home(char *out, size_t outlen)
{
	const char	*c = getenv("CLOCKWORK_HOME");
	char		 home[PATH_MAX];

	if (c != NULL && c[0] != '\0') {
		if (c[0] != '/') {
			errno = EINVAL;
			return -1;
		}
		return paths_copy(out, outlen, c);
	}
	if (paths_home(home, sizeof home) == -1)
		return -1;
	if ((size_t)snprintf(out, outlen, "%s/.clockwork", home) >= outlen) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

int
paths_expand_home(const char *in, const char *home, char *out, size_t outlen)
{
	if (in[0] == '~' && (in[1] == '\0' || in[1] == '/')) {
		if ((size_t)snprintf(out, outlen, "%s%s", home, in + 1) >= outlen) {
			errno = ENAMETOOLONG;
			return -1;
		}
		return 0;
	}
	return paths_copy(out, outlen, in);
}

/* Append the components of rest to out lexically, honouring "." and "..". */
static int
paths_append_lexical(char *out, size_t outlen, const char *rest)
{
	char	 buf[PATH_MAX], *save = NULL, *c;
	size_t	 len;

	if (paths_copy(buf, sizeof buf, rest) == -1)
		return -1;
	for (c = strtok_r(buf, "/", &save); c != NULL; c = strtok_r(NULL, "/", &save)) {
		if (strcmp(c, ".") == 0)
			continue;
		if (strcmp(c, "..") == 0) {
			char *slash = strrchr(out, '/');
			if (slash != NULL && slash != out)
				*slash = '\0';
			else
				strcpy(out, "/");
			continue;
		}
		len = strlen(out);
		if (len + 1 + strlen(c) >= outlen) {
			errno = ENAMETOOLONG;
			return -1;
		}
		if (len > 1 || out[0] != '/')
			out[len++] = '/';
		strcpy(out + len, c);
	}
	return 0;
}

int
paths_canonical(const char *path, char *out, size_t outlen)
{
	char	 prefix[PATH_MAX], resolved[PATH_MAX];
	char	*cut;

	if (path[0] != '/') {
		errno = EINVAL;
		return -1;
	}
	if (realpath(path, resolved) != NULL)
		return paths_copy(out, outlen, resolved);
	if (errno != ENOENT && errno != ENOTDIR)
		return -1;

	/* Walk back to the longest prefix that exists, resolve it, append the rest. */
	if (paths_copy(prefix, sizeof prefix, path) == -1)
		return -1;
	while ((cut = strrchr(prefix, '/')) != NULL) {
		if (cut == prefix) {
			/* Nothing below / exists: append the whole path, not nothing. */
			strcpy(resolved, "/");
			prefix[0] = '\0';
			break;
		}
		*cut = '\0';
		if (realpath(prefix, resolved) != NULL)
			break;
		if (errno != ENOENT && errno != ENOTDIR)
			return -1;
	}
	if (paths_copy(out, outlen, resolved) == -1)
		return -1;
	return paths_append_lexical(out, outlen, path + strlen(prefix));
}

int
paths_within(const char *path, const char *dir)
{
	size_t	 n = strlen(dir);

	if (strcmp(dir, "/") == 0)
		return path[0] == '/';
	if (strncmp(path, dir, n) != 0)
		return 0;
	return path[n] == '\0' || path[n] == '/';
}

int
paths_mkdir_p(const char *path, unsigned mode)
{
	char	 buf[PATH_MAX];
	char	*p;

	if (paths_copy(buf, sizeof buf, path) == -1)
		return -1;
	/*
	 * Usually the directory, or at least its parent, is there already (the spec
	 * builder re-creates its caches at every start): one stat answers (a mkdir that
	 * fails with EEXIST costs several times more), and only a missing parent makes
	 * the walk from the root.
	 */
	{
		struct stat	 st;

		if (stat(buf, &st) == 0 && S_ISDIR(st.st_mode))
			return 0;
	}
	if (mkdir(buf, mode) == 0 || errno == EEXIST)
		return 0;
	if (errno != ENOENT)
		return -1;
	for (p = buf + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, mode) == -1 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(buf, mode) == -1 && errno != EEXIST)
		return -1;
	return 0;
}

/*
 * mkdir -p of rel beneath root, where something untrusted may have shaped what lies
 * beneath (a run writes its tool caches): the walk goes by directory descriptors with
 * O_NOFOLLOW, and a component that is not a directory (a symlink planted to send the
 * walk elsewhere, a file planted to break it) is removed and made a directory. root
 * itself is trusted. 0 or -1 (errno).
 */
int
paths_mkdir_beneath(const char *root, const char *rel, unsigned mode)
{
	char		 buf[PATH_MAX], *comp, *save = NULL;
	struct stat	 st;
	int		 fd, next, save_errno;

	if (paths_copy(buf, sizeof buf, rel) == -1)
		return -1;
	if ((fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return -1;
	for (comp = strtok_r(buf, "/", &save); comp != NULL;
	    comp = strtok_r(NULL, "/", &save)) {
		if (strcmp(comp, ".") == 0 || strcmp(comp, "..") == 0) {
			close(fd);
			errno = EINVAL;
			return -1;
		}
		/* Usually there already: a mkdir that fails with EEXIST costs far more. */
		if (fstatat(fd, comp, &st, AT_SYMLINK_NOFOLLOW) == 0) {
			if (!S_ISDIR(st.st_mode) && (rmtree_at(fd, comp) == -1 ||
			    mkdirat(fd, comp, mode) == -1))
				goto fail;
		} else if (errno != ENOENT ||
		    (mkdirat(fd, comp, mode) == -1 && errno != EEXIST))
			goto fail;
		if ((next = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC)) == -1)
			goto fail;
		close(fd);
		fd = next;
	}
	close(fd);
	return 0;
fail:
	save_errno = errno;
	close(fd);
	errno = save_errno;
	return -1;
}

/*
 * Write text to a kernel control file (a cgroup file, /proc/self/uid_map) in one
 * write, since the kernel parses each write whole. 0, or -1 with errno.
 */
int
paths_write_control(const char *path, const char *text)
{
	ssize_t	 n;
	int	 fd, save;

	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) == -1)
		return -1;
	n = write(fd, text, strlen(text));
	save = errno;
	close(fd);
	errno = save;
	return n == (ssize_t)strlen(text) ? 0 : -1;
}
