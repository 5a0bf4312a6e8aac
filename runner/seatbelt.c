#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "credpaths.h"
#include "paths.h"
#include "engine.h"
#include "seatbelt.h"

/*
 * Security notes for this file.
 *
 * Every path reaches the profile inside an SBPL (Scheme) string literal. Only two
 * bytes are special there, backslash and double quote, and both are escaped. A
 * control byte (newline, any other C0 control, DEL) is refused, never escaped: it
 * has no business in a path Clockwork grants, and refusing keeps a path from ever
 * ending a string, a comment or a rule. Bytes >= 0x80 are copied as they are, after
 * checking that they form valid UTF-8 (APFS names are UTF-8).
 *
 * Seatbelt applies the last rule that matches an operation. The rendered order is
 * therefore: base profile (broad reads), read grants, write grants, engine paths,
 * read-only carve-outs, hidden sockets, credential denies, and after them only two
 * narrow exceptions the policy itself defines: ~/.ssh read-only when the ssh-keys
 * feature granted it, and the one ssh-agent socket when the ssh feature did (a
 * single literal socket, which must stay reachable even when it lives inside
 * ~/.gnupg, as gpg-agent's does).
 */

struct seatbelt_buf {
	char	*p;
	size_t	 len;
	size_t	 cap;
	int	 failed;
};

static void seatbelt_errf(char *, size_t, const char *, ...)
    __attribute__((__format__(__printf__, 3, 4)));

static void
seatbelt_errf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list	 ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static void
seatbelt_put(struct seatbelt_buf *b, const char *s, size_t n)
{
	char	*np;
	size_t	 ncap;

	if (b->failed)
		return;
	if (b->len + n + 1 > b->cap) {
		ncap = b->cap ? b->cap : 4096;
		while (b->len + n + 1 > ncap)
			ncap *= 2;
		if ((np = realloc(b->p, ncap)) == NULL) {
			b->failed = 1;
			return;
		}
		b->p = np;
		b->cap = ncap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void
seatbelt_puts(struct seatbelt_buf *b, const char *s)
{
	seatbelt_put(b, s, strlen(s));
}

/* Length of the UTF-8 sequence starting at s, or 0 when it is not valid UTF-8. */
static size_t
seatbelt_utf8_len(const unsigned char *s, unsigned long *cp)
{
	size_t		 n, i;
	unsigned long	 c;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 2;
		c = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		n = 3;
		c = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4;
		c = s[0] & 0x07;
	} else
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3f);
	}
	/* Overlong forms, surrogates and values past U+10FFFF are not UTF-8. */
	if ((n == 3 && c < 0x800) || (n == 4 && c < 0x10000) || c > 0x10ffff ||
	    (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return n;
}

/*
 * A printable, one-line rendering of an untrusted path for error messages, so the
 * message that refuses a path with a newline cannot itself be split by it.
 */
static const char *
seatbelt_vis(const char *s, char *out, size_t outlen)
{
	size_t	 o = 0, len;
	char	 tmp[8];

	for (; *s != '\0'; s++) {
		unsigned char	 c = (unsigned char)*s;

		if (c == '\n')
			snprintf(tmp, sizeof tmp, "\\n");
		else if (c == '\t')
			snprintf(tmp, sizeof tmp, "\\t");
		else if (c < 0x20 || c >= 0x7f || c == '\\')
			snprintf(tmp, sizeof tmp, "\\x%02x", c);
		else {
			tmp[0] = (char)c;
			tmp[1] = '\0';
		}
		len = strlen(tmp);
		/* Keep room for "..." and the NUL whatever happens next. */
		if (o + len + 4 > outlen) {
			memcpy(out + o, "...", 4);
			return out;
		}
		memcpy(out + o, tmp, len);
		o += len;
	}
	out[o] = '\0';
	return out;
}

/* Check that a path can be written into a rule: absolute, no control byte, UTF-8. */
static int
seatbelt_check_path(const char *what, const char *path, char *err, size_t errlen)
{
	const unsigned char	*s;
	unsigned long		 cp;
	size_t			 n;
	char			 vis[512];

	if (path == NULL || path[0] != '/') {
		seatbelt_errf(err, errlen, "seatbelt: %s is not an absolute path: \"%s\"",
		    what, path == NULL ? "(null)" : seatbelt_vis(path, vis, sizeof vis));
		return -1;
	}
	for (s = (const unsigned char *)path; *s != '\0'; s += n) {
		if (*s < 0x20 || *s == 0x7f) {
			seatbelt_errf(err, errlen, "seatbelt: %s holds a control character "
			    "(0x%02x), refused: \"%s\"", what, *s,
			    seatbelt_vis(path, vis, sizeof vis));
			return -1;
		}
		if ((n = seatbelt_utf8_len(s, &cp)) == 0) {
			seatbelt_errf(err, errlen, "seatbelt: %s is not valid UTF-8, "
			    "refused: \"%s\"", what, seatbelt_vis(path, vis, sizeof vis));
			return -1;
		}
	}
	return 0;
}

/* Append s as an SBPL string literal; s has passed seatbelt_check_path() or is ours. */
static void
seatbelt_put_string(struct seatbelt_buf *b, const char *s)
{
	seatbelt_puts(b, "\"");
	for (; *s != '\0'; s++) {
		if (*s == '\\' || *s == '"')
			seatbelt_put(b, "\\", 1);
		seatbelt_put(b, s, 1);
	}
	seatbelt_puts(b, "\"");
}

/* One rule on one line: (<head> (<filter> "<arg>")) with an optional comment. */
static void
seatbelt_rule(struct seatbelt_buf *b, const char *head, const char *filter,
    const char *arg, const char *comment)
{
	seatbelt_puts(b, "(");
	seatbelt_puts(b, head);
	seatbelt_puts(b, " (");
	seatbelt_puts(b, filter);
	seatbelt_puts(b, " ");
	seatbelt_put_string(b, arg);
	seatbelt_puts(b, "))");
	if (comment != NULL) {
		seatbelt_puts(b, "\t; ");
		seatbelt_puts(b, comment);
	}
	seatbelt_puts(b, "\n");
}

/* A checked path rule; the check names what the path is in the spec. */
static int
seatbelt_path_rule(struct seatbelt_buf *b, const char *head, const char *filter,
    const char *what, const char *path, char *err, size_t errlen)
{
	if (seatbelt_check_path(what, path, err, errlen) == -1)
		return -1;
	seatbelt_rule(b, head, filter, path, NULL);
	return 0;
}

static int
seatbelt_list_rules(struct seatbelt_buf *b, const char *head, const char *filter,
    const char *what, const struct strlist *l, char *err, size_t errlen)
{
	for (size_t i = 0; i < l->n; i++) {
		if (seatbelt_path_rule(b, head, filter, what, l->v[i], err, errlen) == -1)
			return -1;
	}
	return 0;
}

int
seatbelt_check_base(const char *text, unsigned *version, char *err, size_t errlen)
{
	const char	*p;
	char		*end;
	unsigned long	 v;

	if (strncmp(text, SEATBELT_BASE_TAG, strlen(SEATBELT_BASE_TAG)) != 0) {
		seatbelt_errf(err, errlen, "seatbelt: base profile does not start with "
		    "\"%s<N>\"", SEATBELT_BASE_TAG);
		return -1;
	}
	p = text + strlen(SEATBELT_BASE_TAG);
	errno = 0;
	v = strtoul(p, &end, 10);
	if (end == p || *p < '0' || *p > '9' || errno != 0 || v == 0 || v > UINT_MAX ||
	    (*end != '\n' && !(*end == '\r' && end[1] == '\n'))) {
		seatbelt_errf(err, errlen, "seatbelt: base profile version line is "
		    "malformed");
		return -1;
	}
	if (strstr(text, "\n(version 1)") == NULL) {
		seatbelt_errf(err, errlen, "seatbelt: base profile lacks (version 1)");
		return -1;
	}
	if (strstr(text, "\n(deny default)") == NULL) {
		seatbelt_errf(err, errlen, "seatbelt: base profile lacks (deny default)");
		return -1;
	}
	/* A base that allows by default would turn every deny-by-omission into an allow. */
	if (strstr(text, "(allow default") != NULL) {
		seatbelt_errf(err, errlen, "seatbelt: base profile allows by default, "
		    "refused");
		return -1;
	}
	if (version != NULL)
		*version = (unsigned)v;
	return 0;
}

int
seatbelt_load_base(const char *path, char **out, char *err, size_t errlen)
{
	struct stat	 st;
	char		*text = NULL;
	size_t		 got = 0;
	ssize_t		 n;
	int		 fd;

	*out = NULL;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1) {
		seatbelt_errf(err, errlen, "seatbelt: open %s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    st.st_size > SEATBELT_BASE_MAX) {
		seatbelt_errf(err, errlen, "seatbelt: %s: not a regular file of at most "
		    "%d bytes", path, SEATBELT_BASE_MAX);
		goto fail;
	}
	if ((text = malloc((size_t)st.st_size + 1)) == NULL) {
		seatbelt_errf(err, errlen, "seatbelt: %s: %s", path, strerror(errno));
		goto fail;
	}
	while (got < (size_t)st.st_size) {
		n = read(fd, text + got, (size_t)st.st_size - got);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0) {
			seatbelt_errf(err, errlen, "seatbelt: read %s: %s", path,
			    n == 0 ? "short read" : strerror(errno));
			goto fail;
		}
		got += (size_t)n;
	}
	text[got] = '\0';
	if (strlen(text) != got) {
		seatbelt_errf(err, errlen, "seatbelt: %s holds a NUL byte", path);
		goto fail;
	}
	if (seatbelt_check_base(text, NULL, err, errlen) == -1) {
		size_t	 l = err != NULL && errlen > 0 ? strlen(err) : 0;

		if (l + 1 < errlen)
			snprintf(err + l, errlen - l, " (%s)", path);
		goto fail;
	}
	close(fd);
	*out = text;
	return 0;
fail:
	free(text);
	close(fd);
	return -1;
}

int
seatbelt_glob_regex(const char *glob, char **out, char *err, size_t errlen)
{
	struct seatbelt_buf	 b = { 0 };
	const char		*s, *end;
	char			 vis[512];

	*out = NULL;
	if (glob[0] != '/') {
		seatbelt_errf(err, errlen, "seatbelt: pattern is not absolute: \"%s\"",
		    seatbelt_vis(glob, vis, sizeof vis));
		return -1;
	}
	for (s = glob; *s != '\0'; s++) {
		if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f) {
			seatbelt_errf(err, errlen, "seatbelt: byte 0x%02x cannot be written "
			    "in a Seatbelt regex, refused: \"%s\"", (unsigned char)*s,
			    seatbelt_vis(glob, vis, sizeof vis));
			return -1;
		}
	}
	seatbelt_puts(&b, "^");
	for (s = glob; *s != '\0'; s++) {
		switch (*s) {
		case '*':
			seatbelt_puts(&b, "[^/]*");
			continue;
		case '?':
			seatbelt_puts(&b, "[^/]");
			continue;
		case '[':
			/*
			 * A bracket of plain characters is copied; anything that would need
			 * escaping inside one (a backslash, a nested class, '/') is refused
			 * rather than guessed at, since this regex guards a deny.
			 */
			end = strchr(s + 1, ']');
			if (end != NULL && (end == s + 1 || (s[1] == '!' && end == s + 2)))
				end = strchr(end + 1, ']');
			if (end == NULL || strcspn(s + 1, "\\[/") < (size_t)(end - s - 1)) {
				seatbelt_errf(err, errlen, "seatbelt: unsupported bracket in "
				    "pattern \"%s\"", seatbelt_vis(glob, vis, sizeof vis));
				free(b.p);
				return -1;
			}
			seatbelt_puts(&b, "[");
			s++;
			if (*s == '!') {
				seatbelt_puts(&b, "^");
				s++;
			}
			seatbelt_put(&b, s, (size_t)(end - s));
			seatbelt_puts(&b, "]");
			s = end;
			continue;
		case '\\': case '^': case '.': case ']': case '$': case '(':
		case ')': case '|': case '+': case '{': case '}':
			seatbelt_put(&b, "\\", 1);
			break;
		}
		seatbelt_put(&b, s, 1);
	}
	/* The location itself or anything beneath it, never a longer sibling name. */
	seatbelt_puts(&b, "(/|$)");
	if (b.failed) {
		free(b.p);
		seatbelt_errf(err, errlen, "seatbelt: out of memory");
		return -1;
	}
	*out = b.p;
	return 0;
}

int
seatbelt_claude_slug(const char *workdir, char **out)
{
	struct seatbelt_buf	 b = { 0 };
	const unsigned char	*s;
	unsigned long		 cp;
	size_t			 n;

	*out = NULL;
	for (s = (const unsigned char *)workdir; *s != '\0'; s += n) {
		if ((n = seatbelt_utf8_len(s, &cp)) == 0) {
			free(b.p);
			errno = EINVAL;
			return -1;
		}
		if ((cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') ||
		    (cp >= '0' && cp <= '9'))
			seatbelt_put(&b, (const char *)s, 1);
		else
			seatbelt_puts(&b, cp > 0xffff ? "--" : "-");
	}
	if (b.failed || b.p == NULL) {
		free(b.p);
		errno = b.failed ? ENOMEM : EINVAL;
		return -1;
	}
	*out = b.p;
	return 0;
}

/* The value of NAME in a "NAME=value" list, or NULL. */
static const char *
seatbelt_env(const struct strlist *env, const char *name)
{
	size_t	 len = strlen(name);

	for (size_t i = 0; i < env->n; i++) {
		if (strncmp(env->v[i], name, len) == 0 && env->v[i][len] == '=')
			return env->v[i] + len + 1;
	}
	return NULL;
}

/*
 * What the run's engine needs beyond the spec's grants (runner/engine.h, seatbelt()):
 * rendered like the grants, each path checked by seatbelt_rule's escaping.
 */
static int
seatbelt_engine_rules(struct seatbelt_buf *b, const struct sandbox_spec *spec,
    const struct seatbelt_options *o, char *err, size_t errlen)
{
	const struct engine_ops	*ops = engine_find(spec->engine);
	struct engine_sbrules	 r = { 0 };

	if (ops == NULL || ops->seatbelt == NULL)
		return 0;
	if (ops->seatbelt(spec->workdir, o->uid, &r, err, errlen) == -1) {
		engine_sbrules_free(&r);
		return -1;
	}
	if (r.comment != NULL) {
		seatbelt_puts(b, "\n;; ");
		seatbelt_puts(b, r.comment);
		seatbelt_puts(b, "\n");
	}
	for (size_t i = 0; i < r.n; i++)
		seatbelt_rule(b, r.v[i].op, r.v[i].filter, r.v[i].arg, NULL);
	engine_sbrules_free(&r);
	return 0;
}

/*
 * One deny per credential location. On macOS /etc, /tmp and /var are symlinks into
 * /private and Seatbelt matches the resolved path, so absolute entries there are
 * denied under both names.
 */
static int
seatbelt_cred_rule(struct seatbelt_buf *b, const char *abs, const char *what,
    char *err, size_t errlen)
{
	char	*re;

	if (seatbelt_check_path("credential location", abs, err, errlen) == -1)
		return -1;
	if (strpbrk(abs, "*?[") == NULL) {
		seatbelt_rule(b, "deny file-read* file-write*", "subpath", abs, what);
		return 0;
	}
	if (seatbelt_glob_regex(abs, &re, err, errlen) == -1)
		return -1;
	seatbelt_rule(b, "deny file-read* file-write*", "regex", re, what);
	free(re);
	return 0;
}

static int
seatbelt_cred_rules(struct seatbelt_buf *b, const struct sandbox_spec *spec,
    const struct seatbelt_options *o, char *err, size_t errlen)
{
	static const char	*const aliased[] = { "/etc/", "/tmp/", "/var/" };
	const struct credpath	*t;
	size_t			 count, i, j;
	char			 abs[PATH_MAX], priv[PATH_MAX + 16];

	t = credpaths_table(&count);
	seatbelt_puts(b, "\n;; Credential locations (common/credpaths.c): never readable or "
	    "writable,\n;; whatever the rules above allow. Last, so they win.\n");
	for (i = 0; i < count; i++) {
		if (credpaths_absolute(&t[i], spec->home, o->cwhome, abs, sizeof abs) == -1) {
			seatbelt_errf(err, errlen, "seatbelt: credential location %s/%s "
			    "cannot be named", t[i].base == CRED_CWHOME ? "<cwhome>" :
			    "<home>", t[i].path);
			return -1;
		}
		if (seatbelt_cred_rule(b, abs, t[i].what, err, errlen) == -1)
			return -1;
		if (t[i].base != CRED_ABS)
			continue;
		for (j = 0; j < sizeof aliased / sizeof aliased[0]; j++) {
			if (strncmp(abs, aliased[j], strlen(aliased[j])) != 0)
				continue;
			snprintf(priv, sizeof priv, "/private%s", abs);
			if (seatbelt_cred_rule(b, priv, t[i].what, err, errlen) == -1)
				return -1;
		}
	}
	return 0;
}

/*
 * Read grants inside a credential location. The spec builder refuses all of them
 * but one: the ssh-keys feature opens ~/.ssh, read-only. Those are allowed again
 * after the credential denies (reads only: the write deny stays); any other is
 * refused here too, so a builder bug cannot reopen a credential through this file.
 */
static int
seatbelt_cred_grants(struct seatbelt_buf *b, const struct sandbox_spec *spec,
    const struct seatbelt_options *o, char *err, size_t errlen)
{
	const struct strlist	*lists[2] = { &spec->read_dirs, &spec->read_files };
	const char		*filter[2] = { "subpath", "literal" };
	const char		*what;
	char			 ssh[PATH_MAX], vis[512];
	int			 header = 0;

	if ((size_t)snprintf(ssh, sizeof ssh, "%s/.ssh", spec->home) >= sizeof ssh) {
		seatbelt_errf(err, errlen, "seatbelt: home is too long");
		return -1;
	}
	for (size_t l = 0; l < 2; l++) {
		for (size_t i = 0; i < lists[l]->n; i++) {
			const char	*p = lists[l]->v[i];

			if ((what = credpaths_classify(p, spec->home, o->cwhome)) == NULL)
				continue;
			if (!paths_within(p, ssh)) {
				seatbelt_errf(err, errlen, "seatbelt: read grant \"%s\" lies in a "
				    "credential location (%s), refused",
				    seatbelt_vis(p, vis, sizeof vis), what);
				return -1;
			}
			if (!header) {
				seatbelt_puts(b, "\n;; Feature ssh-keys: ~/.ssh readable, never "
				    "writable, after the denies.\n");
				header = 1;
			}
			seatbelt_rule(b, "allow file-read*", filter[l], p, NULL);
		}
	}
	return 0;
}

static int
seatbelt_render_body(struct seatbelt_buf *b, const struct sandbox_spec *spec,
    const struct seatbelt_options *o, unsigned version, char *err, size_t errlen)
{
	const char	*rw = "allow file-read* file-write*";
	char		 line[128];

	snprintf(line, sizeof line, ";; base: %s%u\n", &SEATBELT_BASE_TAG[3], version);
	seatbelt_puts(b, "\n;; ---- per-run rules, rendered by cw-runner from the run's "
	    "sandbox spec ----\n");
	seatbelt_puts(b, line);
	seatbelt_puts(b, ";; engine: ");
	seatbelt_puts(b, spec->engine);
	seatbelt_puts(b, "\n");

	seatbelt_puts(b, "\n;; Reads the spec grants. The base already reads broadly; these "
	    "state the\n;; policy's intent and keep the profile correct if reads narrow.\n");
	if (seatbelt_list_rules(b, "allow file-read*", "subpath", "read_dirs entry",
	    &spec->read_dirs, err, errlen) == -1 ||
	    seatbelt_list_rules(b, "allow file-read*", "literal", "read_files entry",
	    &spec->read_files, err, errlen) == -1)
		return -1;

	seatbelt_puts(b, "\n;; Writes: the run's worktree or scratch dir, its private TMPDIR, "
	    "the tool\n;; caches and engine state the spec grants, and single files.\n");
	if (seatbelt_path_rule(b, rw, "subpath", "workdir", spec->workdir,
	    err, errlen) == -1)
		return -1;
	if (spec->tmpdir != NULL && seatbelt_path_rule(b, rw, "subpath", "tmpdir",
	    spec->tmpdir, err, errlen) == -1)
		return -1;
	if (seatbelt_list_rules(b, rw, "subpath", "write_dirs entry", &spec->write_dirs,
	    err, errlen) == -1 ||
	    seatbelt_list_rules(b, rw, "literal", "write_files entry", &spec->write_files,
	    err, errlen) == -1)
		return -1;

	if (spec->engine != NULL && seatbelt_engine_rules(b, spec, o, err, errlen) == -1)
		return -1;

	/*
	 * Paths the Linux backend re-binds read-only inside a writable grant (a
	 * worktree's .git pointer): Seatbelt says it directly, a write deny placed after
	 * the grants it narrows.
	 */
	if (spec->ro_binds.n > 0) {
		seatbelt_puts(b, "\n;; Read-only inside the writable grants above.\n");
		if (seatbelt_list_rules(b, "deny file-write*", "subpath", "ro_binds entry",
		    &spec->ro_binds, err, errlen) == -1)
			return -1;
	}

	if (spec->hide.n > 0) {
		seatbelt_puts(b, "\n;; Sockets and paths the run must not reach (the Linux "
		    "backend hides them\n;; with a mount namespace); connect() is "
		    "network-outbound to the socket path.\n");
		if (seatbelt_list_rules(b, "deny network-outbound", "literal", "hide entry",
		    &spec->hide, err, errlen) == -1 ||
		    seatbelt_list_rules(b, "deny file-read* file-write*", "subpath",
		    "hide entry", &spec->hide, err, errlen) == -1)
			return -1;
	}

	if (seatbelt_cred_rules(b, spec, o, err, errlen) == -1 ||
	    seatbelt_cred_grants(b, spec, o, err, errlen) == -1)
		return -1;

	if (spec->ssh_auth_sock != NULL) {
		seatbelt_puts(b, "\n;; Feature ssh: the agent socket alone, after the credential "
		    "denies because\n;; gpg-agent keeps it in ~/.gnupg. Keys stay unreadable.\n");
		if (seatbelt_path_rule(b, "allow network-outbound", "literal",
		    "ssh_auth_sock", spec->ssh_auth_sock, err, errlen) == -1)
			return -1;
		seatbelt_rule(b, rw, "literal", spec->ssh_auth_sock, NULL);
	}
	return 0;
}

int
seatbelt_render_opts(const struct sandbox_spec *spec, const struct seatbelt_options *o,
    const char *base, char **out, char *err, size_t errlen)
{
	struct seatbelt_buf	 b = { 0 };
	unsigned		 version;

	*out = NULL;
	if (!spec->enabled) {
		seatbelt_errf(err, errlen, "seatbelt: the sandbox is disabled for this run "
		    "(CW_SANDBOX=off): no profile to render");
		return -1;
	}
	if (seatbelt_check_base(base, &version, err, errlen) == -1)
		return -1;
	/* The engine name lands in a comment: one word, nothing that could end it. */
	if (spec->engine == NULL || spec->engine[0] == '\0' ||
	    strspn(spec->engine, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789._-") != strlen(spec->engine)) {
		seatbelt_errf(err, errlen, "seatbelt: the spec's engine name is missing "
		    "or malformed");
		return -1;
	}
	if (seatbelt_check_path("home", spec->home, err, errlen) == -1 ||
	    (o->cwhome != NULL &&
	    seatbelt_check_path("Clockwork home", o->cwhome, err, errlen) == -1))
		return -1;

	seatbelt_puts(&b, base);
	if (b.len > 0 && b.p != NULL && b.p[b.len - 1] != '\n')
		seatbelt_puts(&b, "\n");
	if (seatbelt_render_body(&b, spec, o, version, err, errlen) == -1) {
		free(b.p);
		return -1;
	}
	if (b.failed) {
		free(b.p);
		seatbelt_errf(err, errlen, "seatbelt: out of memory");
		return -1;
	}
	*out = b.p;
	return 0;
}

int
seatbelt_render(const struct sandbox_spec *spec, const char *base, char **out,
    char *err, size_t errlen)
{
	struct seatbelt_options	 o;
	const char		*cw;
	char			*def = NULL;
	size_t			 len;
	int			 rc;

	*out = NULL;
	if (spec->home == NULL) {
		seatbelt_errf(err, errlen, "seatbelt: the spec has no home");
		return -1;
	}
	o.uid = (unsigned long)getuid();
	cw = seatbelt_env(&spec->env, "CLOCKWORK_HOME");
	if (cw == NULL || cw[0] != '/') {
		len = strlen(spec->home) + sizeof "/.clockwork";
		if ((def = malloc(len)) == NULL) {
			seatbelt_errf(err, errlen, "seatbelt: out of memory");
			return -1;
		}
		snprintf(def, len, "%s/.clockwork", spec->home);
		cw = def;
	}
	o.cwhome = cw;
	rc = seatbelt_render_opts(spec, &o, base, out, err, errlen);
	free(def);
	return rc;
}
