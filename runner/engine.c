/*
 * The engine seam (runner/engine.h): the table of the runtime side of each runnable
 * engine, and the few helpers their prepare() and home() share.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine.h"
#include "engine_byok.h"
#include "engine_claude.h"
#include "engine_codex.h"
#include "engine_hermes.h"
#include "engine_opencode.h"

static const struct engine_ops *const engine_table[] = {
	&engine_claude_ops,
	&engine_codex_ops,
	&engine_opencode_ops,
	&engine_hermes_ops,
	&engine_byok_ops,
};

const struct engine_ops *
engine_find(const char *name)
{
	if (name == NULL)
		return NULL;
	for (size_t i = 0; i < sizeof engine_table / sizeof engine_table[0]; i++)
		if (strcmp(engine_table[i]->name, name) == 0 &&
		    engines_runnable(name) != NULL)
			return engine_table[i];
	return NULL;
}

const struct engine_info *
engine_info(const struct engine_ops *ops)
{
	return engines_find(ops->name);
}

void
engine_progress_free(struct engine_progress *p)
{
	free(p->result);
	p->result = NULL;
}

int
engine_sbrules_add(struct engine_sbrules *r, const char *op, const char *filter,
    const char *arg)
{
	struct engine_sbrule	*nv;

	if ((nv = realloc(r->v, (r->n + 1) * sizeof *nv)) == NULL)
		return -1;
	r->v = nv;
	nv = &r->v[r->n];
	nv->op = strdup(op);
	nv->filter = strdup(filter);
	nv->arg = strdup(arg);
	if (nv->op == NULL || nv->filter == NULL || nv->arg == NULL) {
		free(nv->op);
		free(nv->filter);
		free(nv->arg);
		return -1;
	}
	r->n++;
	return 0;
}

void
engine_sbrules_free(struct engine_sbrules *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->v[i].op);
		free(r->v[i].filter);
		free(r->v[i].arg);
	}
	free(r->v);
	free(r->comment);
	memset(r, 0, sizeof *r);
}

int
engine_check_openai_run(const struct engine_run *r, const char *name, char *err,
    size_t errlen)
{
	if (engine_check_hook(r->hook_path, err, errlen) == -1)
		return -1;
	if (r->port <= 0) {
		snprintf(err, errlen, "%s: no bridge for the floor", name);
		return -1;
	}
	if (r->mode == NULL || (strcmp(r->mode, "plan") != 0 &&
	    strcmp(r->mode, "acceptEdits") != 0)) {
		snprintf(err, errlen, "permission mode must be plan or acceptEdits");
		return -1;
	}
	if (r->base_url == NULL || r->base_url[0] == '\0' ||
	    (strncmp(r->base_url, "http://", 7) != 0 &&
	    strncmp(r->base_url, "https://", 8) != 0) || strlen(r->base_url) > 4096) {
		snprintf(err, errlen, "engines.%s.base_url must be set to the "
		    "provider's http(s) URL (OpenAI-compatible chat completions)", name);
		return -1;
	}
	if (r->model == NULL || r->model[0] == '\0' || strlen(r->model) > 256) {
		snprintf(err, errlen, "engines.%s.model must be set (1 to 256 "
		    "characters)", name);
		return -1;
	}
	return 0;
}

int
engine_check_hook(const char *path, char *err, size_t errlen)
{
	struct stat	st;

	if (path == NULL || path[0] != '/') {
		snprintf(err, errlen, "the floor hook path is not absolute: %s",
		    path != NULL ? path : "(none)");
		return -1;
	}
	if (stat(path, &st) == -1) {
		snprintf(err, errlen, "the floor hook %s is missing: %s", path,
		    strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode) || access(path, X_OK) == -1) {
		snprintf(err, errlen, "the floor hook %s is not an executable file", path);
		return -1;
	}
	return 0;
}

int
engine_write_new(const char *path, const char *text, size_t len, mode_t mode)
{
	size_t	 off = 0;
	ssize_t	 n;
	int	 fd, save;

	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	    mode)) == -1)
		return -1;
	while (off < len) {
		if ((n = write(fd, text + off, len - off)) == -1) {
			if (errno == EINTR)
				continue;
			save = errno;
			close(fd);
			errno = save;
			return -1;
		}
		off += (size_t)n;
	}
	return close(fd);
}

int
engine_write_file(const char *dir, const char *name, const char *text, mode_t mode,
    char *out, size_t outlen, char *err, size_t errlen)
{
	if ((size_t)snprintf(out, outlen, "%s/%s", dir, name) >= outlen) {
		snprintf(err, errlen, "state directory path too long");
		return -1;
	}
	/* The state directory is the runner's: a file left there by an earlier try goes. */
	(void)unlink(out);
	if (engine_write_new(out, text, strlen(text), mode) == -1) {
		snprintf(err, errlen, "cannot write %s: %s", out, strerror(errno));
		return -1;
	}
	return 0;
}

char *
engine_read_user_file(const char *path, size_t max, size_t *lenp)
{
	struct stat	 st;
	char		*buf = NULL;
	size_t		 got = 0;
	ssize_t		 n;
	int		 fd, save;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)) == -1)
		return NULL;
	if (fstat(fd, &st) == -1)
		save = errno;
	else if (!S_ISREG(st.st_mode))
		save = EINVAL;
	else if ((size_t)st.st_size > max)
		save = EFBIG;
	else if ((buf = malloc((size_t)st.st_size + 1)) == NULL)
		save = ENOMEM;
	else
		save = 0;
	if (save != 0) {
		close(fd);
		errno = save;
		return NULL;
	}
	while (got < (size_t)st.st_size) {
		if ((n = read(fd, buf + got, (size_t)st.st_size - got)) == -1 &&
		    errno == EINTR)
			continue;
		if (n <= 0) {
			save = n == 0 ? EIO : errno;	/* shrank while read, or failed */
			break;
		}
		got += (size_t)n;
	}
	close(fd);
	if (save != 0) {
		explicit_bzero(buf, got);
		free(buf);
		errno = save;
		return NULL;
	}
	buf[got] = '\0';
	*lenp = got;
	return buf;
}

/* ---- the conversation's files (keep and resume) ------------------------------------ */

/* One plain name: no "", ".", "..", no slash. */
static int
engine_plain_name(const char *s, size_t n)
{
	return n > 0 && !(n == 1 && s[0] == '.') && !(n == 2 && s[0] == '.' &&
	    s[1] == '.') && memchr(s, '/', n) == NULL && n < NAME_MAX;
}

int
engine_open_beneath(int dirfd, const char *rel, int flags)
{
	char		 name[NAME_MAX + 1];
	const char	*p = rel, *slash;
	int		 fd = dirfd, next, save;

	if (rel == NULL || rel[0] == '/' || rel[0] == '\0') {
		errno = EINVAL;
		return -1;
	}
	for (;;) {
		size_t	n;

		slash = strchr(p, '/');
		n = slash != NULL ? (size_t)(slash - p) : strlen(p);
		if (!engine_plain_name(p, n)) {
			if (fd != dirfd)
				close(fd);
			errno = EINVAL;
			return -1;
		}
		memcpy(name, p, n);
		name[n] = '\0';
		if (slash == NULL) {
			next = openat(fd, name, flags | O_NOFOLLOW | O_CLOEXEC, 0600);
			save = errno;
			if (fd != dirfd)
				close(fd);
			errno = save;
			return next;
		}
		next = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		save = errno;
		if (fd != dirfd)
			close(fd);
		if (next == -1) {
			errno = save;
			return -1;
		}
		fd = next;
		p = slash + 1;
	}
}

int
engine_mkdirs_beneath(int dirfd, const char *rel)
{
	char	 path[PATH_MAX];
	size_t	 n = strlen(rel);
	int	 fd;

	if (n == 0 || n >= sizeof path) {
		errno = EINVAL;
		return -1;
	}
	memcpy(path, rel, n + 1);
	for (size_t i = 0; i <= n; i++) {
		char	 c = path[i];
		char	*last;
		int	 parent;

		if (c != '/' && c != '\0')
			continue;
		path[i] = '\0';
		/* The parent opened without links, then the last name made in it. */
		last = strrchr(path, '/');
		if (last == NULL)
			parent = dirfd;
		else {
			*last = '\0';
			parent = engine_open_beneath(dirfd, path, O_RDONLY | O_DIRECTORY);
			*last = '/';
			if (parent == -1)
				return -1;
		}
		if (mkdirat(parent, last != NULL ? last + 1 : path, 0700) == -1 &&
		    errno != EEXIST) {
			if (parent != dirfd)
				close(parent);
			return -1;
		}
		if (parent != dirfd)
			close(parent);
		/* What exists must be a directory, not a link to one. */
		if ((fd = engine_open_beneath(dirfd, path, O_RDONLY | O_DIRECTORY)) == -1)
			return -1;
		close(fd);
		path[i] = c;
	}
	return 0;
}

int
engine_copy_beneath(int from_fd, const char *rel, int to_fd, const char *name,
    char *err, size_t errlen)
{
	struct stat	 st;
	char		 buf[65536];
	off_t		 total = 0;
	ssize_t		 n, w;
	int		 in, out = -1, save = 0;

	if ((in = engine_open_beneath(from_fd, rel, O_RDONLY | O_NONBLOCK | O_NOCTTY)) ==
	    -1) {
		save = errno;
		snprintf(err, errlen, "open %s: %s", rel, strerror(save));
		errno = save;
		return -1;
	}
	if (fstat(in, &st) == -1)
		save = errno;
	else if (!S_ISREG(st.st_mode))
		save = EINVAL;
	else if (st.st_size > CONVERSATION_FILE_MAX)
		save = EFBIG;
	if (save != 0) {
		snprintf(err, errlen, "%s: %s", rel, save == EINVAL ? "not a regular file" :
		    save == EFBIG ? "larger than the most a kept file may hold" :
		    strerror(save));
		goto fail;
	}
	if ((out = engine_open_beneath(to_fd, name, O_WRONLY | O_CREAT | O_EXCL)) == -1) {
		save = errno;
		snprintf(err, errlen, "create %s: %s", name, strerror(save));
		goto fail;
	}
	for (;;) {
		if ((n = read(in, buf, sizeof buf)) == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			save = errno;
			snprintf(err, errlen, "read %s: %s", rel, strerror(save));
			goto fail;
		}
		if (n == 0)
			break;
		if ((total += n) > CONVERSATION_FILE_MAX) {
			save = EFBIG;
			snprintf(err, errlen, "%s: grew past the most a kept file may hold",
			    rel);
			goto fail;
		}
		for (ssize_t off = 0; off < n; off += w)
			if ((w = write(out, buf + off, (size_t)(n - off))) == -1) {
				if (errno == EINTR) {
					w = 0;
					continue;
				}
				save = errno;
				snprintf(err, errlen, "write %s: %s", name, strerror(save));
				goto fail;
			}
	}
	close(in);
	if (close(out) == -1) {
		save = errno;
		snprintf(err, errlen, "write %s: %s", name, strerror(save));
		(void)unlinkat(to_fd, name, 0);
		errno = save;
		return -1;
	}
	return 0;
fail:
	close(in);
	if (out != -1) {
		close(out);
		(void)unlinkat(to_fd, name, 0);
	}
	errno = save;
	return -1;
}
