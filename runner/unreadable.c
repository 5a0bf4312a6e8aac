/*
 * unreadable_scan(): a system directory's entries that are not world-readable, by a
 * walk, or by the outline a walk kept, checked entry by entry (unreadable.h says why
 * the check is enough and when an outline is not kept).
 *
 * The outline file, one record per line, in the order the walk met them (a directory
 * before what it holds):
 *
 *	clockwork-unreadable 2 <root>
 *	R <dev> <ino> <mtime s> <mtime ns> <ctime s> <ctime ns>	the root itself
 *	D <dev> <ino> <mtime s> <mtime ns> <ctime s> <ctime ns> <name>
 *							a directory the walk went into
 *	U <name>					a directory it did not (not
 *							world-readable, or too deep)
 *	F <name>					anything else that is not a link
 *
 * <name> is relative to the root. Symbolic links are not entries (the walk judges what
 * they lead to where it is an entry itself); a link appearing or going changes its
 * directory's times, which makes the outline stale.
 *
 * Both times of a directory are kept: its modification time is the user's to set
 * (touch -d; tar -x, rsync -a and cp -a put it back when they restore a tree), its
 * change time is not, and any entry added, removed or renamed in it moves both.
 */
#define _GNU_SOURCE	/* O_PATH */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "paths.h"
#include "unreadable.h"

#define UNREADABLE_MAGIC	"clockwork-unreadable 2 "

struct unreadable_entry {
	char			 kind;		/* 'D', 'U' or 'F' */
	unsigned long long	 dev, ino;	/* 'D' only */
	struct timespec		 mtime, ctime;
	char			*name;
};

struct unreadable_outline {
	unsigned long long	 dev, ino;	/* the root */
	struct timespec		 mtime, ctime;
	struct unreadable_entry	*e;
	size_t			 n, cap;
	int			 keep;		/* may be written back */
	time_t			 settled;	/* directories changed after this: not kept */
};

/* One record of getdents64(2), as the kernel lays it out (glibc declares no type). */
struct unreadable_dirent64 {
	unsigned long long	 d_ino;
	long long		 d_off;
	unsigned short		 d_reclen;
	unsigned char		 d_type;
	char			 d_name[];
};

/* The walk's listing buffer, one per level: /etc's largest directory fits in one call. */
#define UNREADABLE_DENTS_BUF	16384

static void
unreadable_outline_free(struct unreadable_outline *o)
{
	for (size_t i = 0; i < o->n; i++)
		free(o->e[i].name);
	free(o->e);
	memset(o, 0, sizeof *o);
}

static int
unreadable_outline_add(struct unreadable_outline *o, char kind, const struct stat *st,
    const char *name)
{
	struct unreadable_entry	*e;

	if (o->n == o->cap) {
		size_t	 cap = o->cap ? o->cap * 2 : 256;

		if ((e = realloc(o->e, cap * sizeof *e)) == NULL)
			return -1;
		o->e = e;
		o->cap = cap;
	}
	e = &o->e[o->n];
	memset(e, 0, sizeof *e);
	e->kind = kind;
	if (st != NULL) {
		e->dev = (unsigned long long)st->st_dev;
		e->ino = (unsigned long long)st->st_ino;
		e->mtime = st->st_mtim;
		e->ctime = st->st_ctim;
	}
	if ((e->name = strdup(name)) == NULL)
		return -1;
	o->n++;
	return 0;
}

/* A name the outline can hold on one line and the check can stat safely. */
static int
unreadable_name_ok(const char *name, size_t rootlen)
{
	const char	*c = name;
	size_t		 len = strlen(name);

	if (len == 0 || name[0] == '/' || rootlen + 1 + len >= PATH_MAX)
		return 0;
	for (const unsigned char *p = (const unsigned char *)name; *p != '\0'; p++)
		if (*p < 0x20 || *p == 0x7f)
			return 0;
	/* Components: none empty, none "." or "..". */
	while (*c != '\0') {
		const char	*e = strchrnul(c, '/');
		size_t		 n = (size_t)(e - c);

		if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return 0;
		c = *e == '/' ? e + 1 : e;
		if (*e == '/' && *c == '\0')
			return 0;
	}
	return 1;
}

static int
unreadable_depth(const char *name)
{
	int	 d = 0;

	for (; *name != '\0'; name++)
		d += *name == '/';
	return d;
}

static int
unreadable_walkable(const struct stat *st, int depth)
{
	return (st->st_mode & (S_IROTH | S_IXOTH)) == (S_IROTH | S_IXOTH) &&
	    depth < UNREADABLE_DEPTH;
}

/* Last changed after settled, by either time: an outline of it is not kept. */
static int
unreadable_unsettled(const struct stat *st, time_t settled)
{
	return st->st_mtim.tv_sec > settled || st->st_ctim.tv_sec > settled;
}

/*
 * Walk the directory open at dfd (path, of length len, in a PATH_MAX buffer; the root
 * is its first rootlen bytes) into out and o. Closes dfd. The listing is getdents64
 * itself rather than fdopendir/readdir: the same records, without fdopendir's fstat
 * and two fcntls per directory.
 */
static int
unreadable_walk(struct unreadable_outline *o, struct strlist *out, int dfd, char *path,
    size_t len, size_t rootlen, int depth)
{
	char				 buf[UNREADABLE_DENTS_BUF] __attribute__((aligned(8)));
	struct unreadable_dirent64	*de;
	struct stat			 st;
	const char			*name;
	size_t				 nlen;
	long				 n;
	int				 fd, rc = 0;

	while (rc == 0 && (n = syscall(SYS_getdents64, dfd, buf, sizeof buf)) > 0) {
		for (long off = 0; rc == 0 && off < n; off += de->d_reclen) {
			de = (struct unreadable_dirent64 *)(buf + off);
			if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
			    de->d_type == DT_LNK)
				continue;
			nlen = strlen(de->d_name);
			if (len + 1 + nlen >= PATH_MAX) {
				o->keep = 0;
				continue;
			}
			if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == -1) {
				o->keep = 0;	/* gone while we looked: the tree is moving */
				continue;
			}
			if (S_ISLNK(st.st_mode))
				continue;
			path[len] = '/';
			memcpy(path + len + 1, de->d_name, nlen + 1);
			name = path + rootlen + 1;
			if (o->keep && (!unreadable_name_ok(name, rootlen) ||
			    o->n >= UNREADABLE_ENTRIES_MAX))
				o->keep = 0;
			if (!S_ISDIR(st.st_mode)) {
				if ((st.st_mode & S_IROTH) == 0 && strlist_add(out, path) == -1)
					rc = -1;
				else if (o->keep && unreadable_outline_add(o, 'F', NULL,
				    name) == -1)
					rc = -1;
			} else if (!unreadable_walkable(&st, depth)) {
				if (strlist_add(out, path) == -1)
					rc = -1;
				else if (o->keep && unreadable_outline_add(o, 'U', NULL,
				    name) == -1)
					rc = -1;
			} else if ((fd = openat(dfd, de->d_name, O_RDONLY | O_DIRECTORY |
			    O_NOFOLLOW | O_CLOEXEC)) == -1) {
				o->keep = 0;	/* neither walked nor judged, as before */
			} else {
				if (unreadable_unsettled(&st, o->settled))
					o->keep = 0;
				if (o->keep && unreadable_outline_add(o, 'D', &st, name) == -1)
					rc = -1;
				if (rc == 0)
					rc = unreadable_walk(o, out, fd, path, len + 1 + nlen,
					    rootlen, depth + 1);
				else
					close(fd);
			}
			path[len] = '\0';
		}
	}
	if (n < 0)
		o->keep = 0;
	close(dfd);
	return rc;
}

/* One decimal number and the space after it (or, when last, the end of the line). */
static int
unreadable_parse_u64(const char **p, unsigned long long *v, int last)
{
	char	*end;

	if (**p < '0' || **p > '9')
		return -1;
	errno = 0;
	*v = strtoull(*p, &end, 10);
	if (errno != 0 || *end != (last ? '\0' : ' '))
		return -1;
	*p = last ? end : end + 1;
	return 0;
}

/* A record's six numbers: device, inode, modification and change times. */
static void
unreadable_parse_ids(const unsigned long long v[6], unsigned long long *dev,
    unsigned long long *ino, struct timespec *mtime, struct timespec *ctime)
{
	*dev = v[0];
	*ino = v[1];
	mtime->tv_sec = (time_t)v[2];
	mtime->tv_nsec = (long)v[3];
	ctime->tv_sec = (time_t)v[4];
	ctime->tv_nsec = (long)v[5];
}

/* Is st the directory a record names: the same device, inode and both times? */
static int
unreadable_same_dir(const struct stat *st, unsigned long long dev, unsigned long long ino,
    const struct timespec *mtime, const struct timespec *ctime)
{
	return (unsigned long long)st->st_dev == dev && (unsigned long long)st->st_ino == ino &&
	    st->st_mtim.tv_sec == mtime->tv_sec && st->st_mtim.tv_nsec == mtime->tv_nsec &&
	    st->st_ctim.tv_sec == ctime->tv_sec && st->st_ctim.tv_nsec == ctime->tv_nsec;
}

/* Parse text (NUL-terminated at len) as an outline of root into o: 0, or -1. */
static int
unreadable_parse(char *text, size_t len, const char *root, struct unreadable_outline *o)
{
	size_t			 rootlen = strlen(root), mlen = strlen(UNREADABLE_MAGIC);
	unsigned long long	 v[6];
	char			*line = text, *nl, *name, *slash;
	const char		*p;
	size_t			*stack = NULL, depth = 0, stackcap = 0, plen;
	int			 first = 1, seen_root = 0;

	memset(o, 0, sizeof *o);
	if (len == 0 || text[len - 1] != '\n' || memchr(text, '\0', len) != NULL)
		return -1;
	for (; line < text + len; line = nl + 1) {
		nl = memchr(line, '\n', (size_t)(text + len - line));
		*nl = '\0';
		if (first) {
			if (strncmp(line, UNREADABLE_MAGIC, mlen) != 0 ||
			    strcmp(line + mlen, root) != 0)
				goto bad;
			first = 0;
			continue;
		}
		p = line + 2;
		if (line[0] == '\0' || line[1] != ' ')
			goto bad;
		if (line[0] == 'R' || line[0] == 'D') {
			/* Six numbers; the root's record ends after its sixth. */
			for (int i = 0; i < 6; i++)
				if (unreadable_parse_u64(&p, &v[i], line[0] == 'R' && i == 5) == -1)
					goto bad;
			if (v[2] > (unsigned long long)LLONG_MAX || v[3] >= 1000000000ull ||
			    v[4] > (unsigned long long)LLONG_MAX || v[5] >= 1000000000ull)
				goto bad;
		}
		if (line[0] == 'R') {
			if (seen_root || o->n > 0)
				goto bad;
			unreadable_parse_ids(v, &o->dev, &o->ino, &o->mtime, &o->ctime);
			seen_root = 1;
			continue;
		}
		if (!seen_root || (line[0] != 'D' && line[0] != 'U' && line[0] != 'F'))
			goto bad;
		name = (char *)p;
		if (!unreadable_name_ok(name, rootlen) || o->n >= UNREADABLE_ENTRIES_MAX)
			goto bad;
		/*
		 * In the walk's order a directory's entries follow it: the name's parent
		 * is the innermost open 'D' once those it is not inside are closed.
		 */
		slash = strrchr(name, '/');
		plen = slash != NULL ? (size_t)(slash - name) : 0;
		while (depth > 0 && (strlen(o->e[stack[depth - 1]].name) > plen ||
		    strncmp(o->e[stack[depth - 1]].name, name,
		    strlen(o->e[stack[depth - 1]].name)) != 0 ||
		    (name[strlen(o->e[stack[depth - 1]].name)] != '/')))
			depth--;
		if (slash != NULL && (depth == 0 ||
		    strlen(o->e[stack[depth - 1]].name) != plen))
			goto bad;
		if (unreadable_outline_add(o, line[0], NULL, name) == -1)
			goto bad;
		if (line[0] == 'D') {
			if (depth == stackcap) {
				size_t	 cap = stackcap ? stackcap * 2 : 16, *ns;

				if ((ns = realloc(stack, cap * sizeof *ns)) == NULL)
					goto bad;
				stack = ns;
				stackcap = cap;
			}
			stack[depth++] = o->n - 1;
			unreadable_parse_ids(v, &o->e[o->n - 1].dev, &o->e[o->n - 1].ino,
			    &o->e[o->n - 1].mtime, &o->e[o->n - 1].ctime);
		}
	}
	if (first || !seen_root)
		goto bad;
	free(stack);
	return 0;
bad:
	free(stack);
	unreadable_outline_free(o);
	return -1;
}

int
unreadable_parse_check(const char *text, size_t len, const char *root, size_t *n_out)
{
	struct unreadable_outline	 o;
	char				*copy;
	int				 rc;

	if ((copy = malloc(len + 1)) == NULL)
		return -1;
	memcpy(copy, text, len);
	copy[len] = '\0';
	rc = unreadable_parse(copy, len, root, &o);
	if (rc == 0 && n_out != NULL)
		*n_out = o.n;
	unreadable_outline_free(&o);
	free(copy);
	return rc;
}

/* The outline file read and parsed: 0, or -1 when there is none or it is not valid. */
static int
unreadable_load(const char *file, const char *root, struct unreadable_outline *o)
{
	struct stat	 st;
	char		*text;
	ssize_t		 n;
	size_t		 got = 0;
	int		 fd, rc;

	if ((fd = open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return -1;
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    (unsigned long long)st.st_size > UNREADABLE_FILE_MAX ||
	    (text = malloc((size_t)st.st_size + 1)) == NULL) {
		close(fd);
		return -1;
	}
	while (got < (size_t)st.st_size &&
	    (n = read(fd, text + got, (size_t)st.st_size - got)) > 0)
		got += (size_t)n;
	close(fd);
	text[got] = '\0';
	rc = got == (size_t)st.st_size ? unreadable_parse(text, got, root, o) : -1;
	free(text);
	return rc;
}

/*
 * Check the outline against the tree at this moment: 1 when it still holds (out then
 * has every entry that is not world-readable now), 0 when it is stale (out untouched),
 * -1 when out of memory.
 */
static int
unreadable_check(const char *root, const struct unreadable_outline *o,
    struct strlist *out)
{
	struct strlist	 found = { 0 };
	struct stat	 st;
	char		 path[PATH_MAX];
	const char	*skip = NULL;
	size_t		 skiplen = 0;
	int		 rfd, held = 0;

	if ((rfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1)
		return 0;
	if (fstat(rfd, &st) == -1 ||
	    !unreadable_same_dir(&st, o->dev, o->ino, &o->mtime, &o->ctime))
		goto out;
	for (size_t i = 0; i < o->n; i++) {
		const struct unreadable_entry	*e = &o->e[i];
		int				 add;

		/* Below a directory that stopped being walkable: the walk would not look. */
		if (skip != NULL && strncmp(e->name, skip, skiplen) == 0 &&
		    e->name[skiplen] == '/')
			continue;
		skip = NULL;
		if (fstatat(rfd, e->name, &st, AT_SYMLINK_NOFOLLOW) == -1 ||
		    S_ISLNK(st.st_mode) || (S_ISDIR(st.st_mode) != 0) != (e->kind != 'F'))
			goto out;
		if (e->kind == 'F')
			add = (st.st_mode & S_IROTH) == 0;
		else if (unreadable_walkable(&st, unreadable_depth(e->name))) {
			if (e->kind == 'U' ||
			    !unreadable_same_dir(&st, e->dev, e->ino, &e->mtime, &e->ctime))
				goto out;
			add = 0;
		} else {
			add = 1;
			if (e->kind == 'D') {
				skip = e->name;
				skiplen = strlen(e->name);
			}
		}
		if (add) {
			snprintf(path, sizeof path, "%s/%s", root, e->name);
			if (strlist_add(&found, path) == -1) {
				held = -1;
				goto out;
			}
		}
	}
	held = 1;
	for (size_t i = 0; i < found.n; i++)
		if (strlist_add(out, found.v[i]) == -1) {
			held = -1;
			break;
		}
out:
	close(rfd);
	strlist_free(&found);
	return held;
}

/* Write the outline next to file and rename it into place; a failure only costs time. */
static void
unreadable_store(const char *file, const char *root, const struct unreadable_outline *o)
{
	char	 dir[PATH_MAX], tmp[PATH_MAX + 16], *slash;
	FILE	*f;
	int	 fd, ok;

	if (strlen(file) >= sizeof dir)
		return;
	strcpy(dir, file);
	if ((slash = strrchr(dir, '/')) == NULL || slash == dir)
		return;
	*slash = '\0';
	if (paths_mkdir_p(dir, 0700) == -1)
		return;
	snprintf(tmp, sizeof tmp, "%s.XXXXXX", file);
	if ((fd = mkstemp(tmp)) == -1)
		return;
	if ((f = fdopen(fd, "w")) == NULL) {
		close(fd);
		unlink(tmp);
		return;
	}
	fprintf(f, "%s%s\nR %llu %llu %lld %ld %lld %ld\n", UNREADABLE_MAGIC, root, o->dev,
	    o->ino, (long long)o->mtime.tv_sec, o->mtime.tv_nsec, (long long)o->ctime.tv_sec,
	    o->ctime.tv_nsec);
	for (size_t i = 0; i < o->n; i++) {
		const struct unreadable_entry	*e = &o->e[i];

		if (e->kind == 'D')
			fprintf(f, "D %llu %llu %lld %ld %lld %ld %s\n", e->dev, e->ino,
			    (long long)e->mtime.tv_sec, e->mtime.tv_nsec,
			    (long long)e->ctime.tv_sec, e->ctime.tv_nsec, e->name);
		else
			fprintf(f, "%c %s\n", e->kind, e->name);
	}
	ok = fflush(f) == 0 && !ferror(f);
	if (fclose(f) != 0)
		ok = 0;
	if (!ok || rename(tmp, file) == -1)
		unlink(tmp);
}

int
unreadable_scan(const char *root, const char *outline, struct strlist *out,
    enum unreadable_how *how)
{
	return unreadable_scan_at(root, outline, out, how, time(NULL));
}

int
unreadable_scan_at(const char *root, const char *outline, struct strlist *out,
    enum unreadable_how *how, time_t now)
{
	struct unreadable_outline	 o;
	struct stat			 st;
	char				 path[PATH_MAX];
	size_t				 rootlen = strlen(root);
	int				 fd, rc;

	*how = UNREADABLE_WALKED;
	if (rootlen >= sizeof path) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (outline != NULL && unreadable_load(outline, root, &o) == 0) {
		rc = unreadable_check(root, &o, out);
		unreadable_outline_free(&o);
		if (rc != 0) {
			if (rc == 1)
				*how = UNREADABLE_KEPT;
			else
				errno = ENOMEM;
			return rc == 1 ? 0 : -1;
		}
	}
	if ((fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return -1;
	memset(&o, 0, sizeof o);
	o.keep = outline != NULL;
	o.settled = now - UNREADABLE_SETTLE_S;
	if (fstat(fd, &st) == -1) {
		close(fd);
		return -1;
	}
	o.dev = (unsigned long long)st.st_dev;
	o.ino = (unsigned long long)st.st_ino;
	o.mtime = st.st_mtim;
	o.ctime = st.st_ctim;
	if (unreadable_unsettled(&st, o.settled))
		o.keep = 0;
	memcpy(path, root, rootlen + 1);
	rc = unreadable_walk(&o, out, fd, path, rootlen, rootlen, 0);
	if (rc == -1)
		errno = ENOMEM;
	else if (o.keep)
		unreadable_store(outline, root, &o);
	unreadable_outline_free(&o);
	return rc;
}
