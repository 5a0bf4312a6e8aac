/*
 * The floor: shell.c turns the command line into simple commands, each is normalised
 * (wrappers such as env, sudo, nice, timeout, xargs and absolute program paths
 * stripped; sh -c, eval and shells fed on stdin parsed again), and the result is
 * matched against the always-on floor rules and then the configured ones.
 *
 * Where the parser could not know part of a word offline (a variable, a command
 * substitution), the marker it leaves matches anything. The floor denies when the
 * visible parts could complete a floor pattern ("npm $VERB", "git push -f origin
 * $BRANCH"); a command that is hidden entirely ("$CMD") is judged by what is visible.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "credpaths.h"
#include "floor.h"
#include "paths.h"
#include "shell.h"

struct floor_ctx {
	const struct floor_policy	*pol;
	const char			*home;		/* as given */
	char				 home_canon[PATH_MAX];
	const char			*cwhome;
	struct floor_result		*out;
	int				 done;		/* a floor rule hit: stop */
	int				 cfg_hit;	/* a configured rule hit, kept */
	int				 cfg_risk;	/* its risk; sticky for a pattern */
	struct floor_result		 cfg;
	int				 oom;
	int				 forks;		/* second readings taken */
	char				 cwd[PATH_MAX];	/* after cd, or "" */
	enum floor_risk			 risk;
	char				 risk_rule[64];
	struct floor_trace		*trace;		/* floor_explain only */
	/* Families of the line's parts (floor.h); opaque when one cannot be named. */
	char				 fam[FLOOR_MAX_FAMILIES][FLOOR_FAMILY_MAX];
	size_t				 nfam;
	int				 opaque;
	int				 saw_fetch;	/* curl or wget somewhere */
	int				 saw_interp;	/* a shell or interpreter */
};

static const char	*floor_default_branches[] = { "main", "master" };

static const char	 floor_split_marker[] = { SHELL_UNKNOWN_SPLIT, '\0' };
static const char	 floor_one_marker[] = { SHELL_UNKNOWN, '\0' };

static int	floor_text(struct floor_ctx *, const char *, size_t, int);
static void	floor_starter_check(struct floor_ctx *, const struct shell_list *,
		    size_t, const char **, size_t);
static void	floor_outside_argv(struct floor_ctx *, const char **, size_t);
static void	floor_trace(struct floor_ctx *, int, const char *, ...)
		    __attribute__((format(printf, 3, 4)));
static void	floor_trace_argv(struct floor_ctx *, int, const char *, const char **,
		    size_t);
static void	floor_argv(struct floor_ctx *, const struct shell_list *, size_t,
		    const char **, size_t, int);
static void	floor_raise(struct floor_ctx *, enum floor_risk, const char *);
static int	floor_is_interp(const char *);
static void	floor_assign_check(struct floor_ctx *, const char *, int);
static int	floor_outside_test(struct floor_ctx *, const char *);

static int
floor_has_marker(const char *w)
{
	for (; *w != '\0'; w++)
		if (*w == SHELL_UNKNOWN || *w == SHELL_UNKNOWN_SPLIT)
			return 1;
	return 0;
}

static int
floor_has_split(const char *w)
{
	return strchr(w, SHELL_UNKNOWN_SPLIT) != NULL;
}

/*
 * Could word w be lit? Markers in w match any run of characters, everything else
 * literally. Iterative with one backtrack point: O(|w| * |lit|).
 */
static int
floor_is(const char *w, const char *lit)
{
	const char	*sw = NULL, *sl = NULL;

	while (*lit != '\0') {
		if (*w == SHELL_UNKNOWN || *w == SHELL_UNKNOWN_SPLIT) {
			sw = w++;
			sl = lit;
		} else if (*w == *lit) {
			w++;
			lit++;
		} else if (sw != NULL) {
			w = sw + 1;
			lit = ++sl;
		} else
			return 0;
	}
	while (*w == SHELL_UNKNOWN || *w == SHELL_UNKNOWN_SPLIT)
		w++;
	return *w == '\0';
}

static int
floor_is_any(const char *w, const char *const *lits)
{
	for (; *lits != NULL; lits++)
		if (floor_is(w, *lits))
			return 1;
	return 0;
}

/* Words in reasons: control bytes and markers shown as '?', home as '~', bounded. */
static void
floor_show(const struct floor_ctx *c, const char *w, char *out, size_t outlen)
{
	size_t	 n = 0, hl = c->home ? strlen(c->home) : 0;

	if (hl > 1 && strncmp(w, c->home, hl) == 0 && (w[hl] == '/' || w[hl] == '\0')) {
		out[n++] = '~';
		w += hl;
	}
	for (; *w != '\0' && n + 4 < outlen; w++) {
		if (n >= 160) {
			memcpy(out + n, "...", 3);
			n += 3;
			break;
		}
		out[n++] = ((unsigned char)*w < 0x20 || *w == 0x7f) ? '?' : *w;
	}
	out[n] = '\0';
}

static void
floor_deny(struct floor_ctx *c, const char *rule, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
floor_deny(struct floor_ctx *c, const char *rule, const char *fmt, ...)
{
	va_list	 ap;

	if (c->done)
		return;
	c->done = 1;
	c->out->verdict = FLOOR_DENY;
	c->out->floor = 1;
	snprintf(c->out->rule, sizeof c->out->rule, "%s", rule);
	va_start(ap, fmt);
	vsnprintf(c->out->reason, sizeof c->out->reason, fmt, ap);
	va_end(ap);
	floor_trace(c, 0, "floor rule %s matches", rule);
}

static void
floor_trace_put(struct floor_trace *t, const char *s, size_t n)
{
	char	*nb;
	size_t	 cap;

	if (t->oom)
		return;
	if (t->len + n + 1 > t->cap) {
		cap = t->cap > 0 ? t->cap : 1024;
		while (cap < t->len + n + 1)
			cap *= 2;
		if ((nb = realloc(t->buf, cap)) == NULL) {
			t->oom = 1;
			return;
		}
		t->buf = nb;
		t->cap = cap;
	}
	memcpy(t->buf + t->len, s, n);
	t->len += n;
	t->buf[t->len] = '\0';
}

/* One line of floor_explain's account, indented by nesting depth. */
static void
floor_trace(struct floor_ctx *c, int depth, const char *fmt, ...)
{
	va_list	 ap;
	char	 line[1024];
	int	 n;

	if (c->trace == NULL)
		return;
	for (int d = 0; d < depth && d < 16; d++)
		floor_trace_put(c->trace, "  ", 2);
	va_start(ap, fmt);
	n = vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	floor_trace_put(c->trace, line, (size_t)n < sizeof line ? (size_t)n :
	    sizeof line - 1);
	floor_trace_put(c->trace, "\n", 1);
}

/* Words shown as the shell would take them: quoted when needed, unknowns as ${?}. */
static void
floor_trace_argv(struct floor_ctx *c, int depth, const char *label, const char **av,
    size_t ac)
{
	char	 line[900];
	size_t	 n = 0;

	if (c->trace == NULL)
		return;
	for (size_t i = 0; i < ac && n + 16 < sizeof line; i++) {
		int quote = av[i][0] == '\0' ||
		    strpbrk(av[i], " \t\n'\"$;&|<>()*?") != NULL;
		if (i > 0)
			line[n++] = ' ';
		if (quote)
			line[n++] = '\'';
		for (const char *w = av[i]; *w != '\0' && n + 12 < sizeof line; w++) {
			unsigned char ch = (unsigned char)*w;
			if (ch == SHELL_UNKNOWN || ch == SHELL_UNKNOWN_SPLIT)
				n += (size_t)snprintf(line + n, sizeof line - n, "${?}");
			else if (ch < 0x20 || ch == 0x7f)
				n += (size_t)snprintf(line + n, sizeof line - n,
				    "\\x%02x", ch);
			else if (ch == '\'' && quote)
				n += (size_t)snprintf(line + n, sizeof line - n, "'\\''");
			else
				line[n++] = (char)ch;
		}
		if (quote)
			line[n++] = '\'';
	}
	line[n] = '\0';
	floor_trace(c, depth, "%s: %s", label, line);
}

void
floor_trace_free(struct floor_trace *t)
{
	free(t->buf);
	memset(t, 0, sizeof *t);
}

static const char *
floor_base(const char *prog)
{
	const char	*s = strrchr(prog, '/');

	return s != NULL && s[1] != '\0' ? s + 1 : prog;
}

/* ---- credential paths ---- */

/* Collapse ".", ".." and repeated slashes of an absolute path, without the filesystem. */
static int
floor_lexical(const char *in, char *out, size_t outlen)
{
	size_t	 n = 0, seg;
	const char *p = in;

	if (in[0] != '/' || outlen < 2)
		return -1;
	out[n++] = '/';
	while (*p != '\0') {
		while (*p == '/')
			p++;
		if (*p == '\0')
			break;
		for (seg = 0; p[seg] != '\0' && p[seg] != '/'; seg++)
			;
		if (seg == 1 && p[0] == '.') {
			/* nothing */
		} else if (seg == 2 && p[0] == '.' && p[1] == '.') {
			while (n > 1 && out[n - 1] != '/')
				n--;
			if (n > 1)
				n--;
		} else {
			if (n > 1 && out[n - 1] != '/')
				out[n++] = '/';
			if (n + seg + 1 >= outlen)
				return -1;
			memcpy(out + n, p, seg);
			n += seg;
		}
		p += seg;
	}
	if (n > 1 && out[n - 1] == '/')
		n--;
	out[n] = '\0';
	return 0;
}

static const char *
floor_classify_lex(struct floor_ctx *c, const char *path)
{
	char	 lex[PATH_MAX];

	if (floor_lexical(path, lex, sizeof lex) == -1)
		return NULL;
	return credpaths_classify(lex, c->home, c->cwhome);
}

static const char *
floor_classify_abs(struct floor_ctx *c, const char *path)
{
	char		 lex[PATH_MAX], canon[PATH_MAX];
	const char	*what;

	if (floor_lexical(path, lex, sizeof lex) == -1)
		return NULL;
	if ((what = credpaths_classify(lex, c->home, c->cwhome)) != NULL)
		return what;
	/* A symlink elsewhere may lead into a credential location, or home may be one. */
	if (paths_canonical(lex, canon, sizeof canon) == 0 &&
	    (what = credpaths_classify(canon, c->home_canon, c->cwhome)) != NULL)
		return what;
	return NULL;
}

/*
 * A shell glob (or a word with unknown parts, markers read as '*') that could name a
 * credential location or something inside one. Patterns that only name an ancestor
 * ("ls ~/" followed by a star) do not count: listing a parent does not read the secret.
 */
static const char *
floor_classify_glob(struct floor_ctx *c, const char *pat, int period)
{
	const struct credpath	*t;
	char			 e[PATH_MAX], pre[PATH_MAX];
	size_t			 nt, k, i, j;

	t = credpaths_table(&nt);
	for (i = 0; i < nt; i++) {
		if (credpaths_absolute(&t[i], c->home, c->cwhome, e, sizeof e) == -1)
			continue;
		for (k = 0, j = 0; e[j] != '\0'; j++)
			if (e[j] == '/')
				k++;
		/* The first k components of pat. */
		for (j = 0; pat[j] != '\0' && j + 1 < sizeof pre; j++) {
			if (pat[j] == '/' && j > 0 && k-- == 1)
				break;
			pre[j] = pat[j];
		}
		pre[j] = '\0';
		if (pat[j] != '\0' && pat[j] != '/')
			continue;
		if (k > 1)
			continue;	/* pat is shorter than the entry */
		if (fnmatch(pre, e, FNM_PATHNAME | (period ? FNM_PERIOD : 0)) == 0)
			return t[i].what;
	}
	return NULL;
}

/* Could home/tail be in a credential location? Its first component must fit one. */
static int
floor_rel_candidate(const struct floor_ctx *c, const char *tail)
{
	const struct credpath	*t;
	char			 first[256], ent[256];
	size_t			 n, k, nt, hl;

	for (n = 0; tail[n] != '\0' && tail[n] != '/'; n++)
		;
	if (n >= sizeof first)
		return 0;
	memcpy(first, tail, n);
	first[n] = '\0';
	if (strcmp(first, "..") == 0)
		return 1;
	/* The Clockwork home, when it lies in home, is reached by its first component. */
	hl = strlen(c->home);
	if (c->cwhome != NULL && strncmp(c->cwhome, c->home, hl) == 0 &&
	    c->cwhome[hl] == '/') {
		for (k = 0; c->cwhome[hl + 1 + k] != '\0' && c->cwhome[hl + 1 + k] != '/' &&
		    k < n + 1; k++)
			;
		if (k == n && strncmp(c->cwhome + hl + 1, first, n) == 0)
			return 1;
	}
	t = credpaths_table(&nt);
	for (size_t i = 0; i < nt; i++) {
		if (t[i].base != CRED_HOME)
			continue;
		for (k = 0; t[i].path[k] != '\0' && t[i].path[k] != '/' &&
		    k + 1 < sizeof ent; k++)
			ent[k] = t[i].path[k];
		ent[k] = '\0';
		if (fnmatch(ent, first, FNM_PERIOD) == 0)
			return 1;
	}
	return 0;
}

/*
 * A relative path is resolved against a working directory the floor does not know.
 * It counts when it, or any tail of it after a '/', names a credential location
 * relative to home: "cd ~ && cat .ssh/id_rsa" and "cat ../../home/u/.ssh/x" must not
 * pass, at the price of denying a project's own ".ssh" or ".npmrc". Only tails that
 * start like a credential entry (or with "..") are tried; and the check is lexical,
 * since resolving symlinks against a guessed directory would only be a guess.
 */
static const char *
floor_classify_rel(struct floor_ctx *c, const char *rel)
{
	char		 buf[PATH_MAX];
	const char	*what, *p = rel;

	/* Prose ("see dir/.ssh/x") is not a path; a relative path rarely has blanks. */
	if (strpbrk(rel, " \t\n") != NULL)
		return NULL;
	for (;;) {
		while (*p == '/')
			p++;
		if (*p == '\0')
			return NULL;
		if (floor_rel_candidate(c, p) &&
		    (size_t)snprintf(buf, sizeof buf, "%s/%s", c->home, p) < sizeof buf &&
		    (what = floor_classify_lex(c, buf)) != NULL)
			return what;
		if ((p = strchr(p, '/')) == NULL)
			return NULL;
	}
}

/*
 * A relative path after a cd in the same command line ("cd ~/.config && cat
 * gh/hosts.yml") is resolved against the directory the shell moved to.
 */
static const char *
floor_classify_cwd(struct floor_ctx *c, const char *rel)
{
	char	 buf[PATH_MAX];

	if (c->cwd[0] == '\0' ||
	    (size_t)snprintf(buf, sizeof buf, "%s/%s", c->cwd, rel) >= sizeof buf)
		return NULL;
	if (buf[0] == '/')
		return floor_classify_abs(c, buf);
	return floor_classify_rel(c, buf);
}

static const char *
floor_classify_piece(struct floor_ctx *c, const char *piece)
{
	char		 buf[PATH_MAX], *q;
	const char	*what, *last = NULL, *p;

	if (piece[0] == '\0')
		return NULL;
	if (piece[0] == '~' && (piece[1] == '/' || piece[1] == '\0') && c->home != NULL) {
		if ((size_t)snprintf(buf, sizeof buf, "%s%s", c->home, piece + 1) >=
		    sizeof buf)
			return NULL;
		piece = buf;
	}
	for (p = piece; *p != '\0'; p++)
		if (*p == SHELL_UNKNOWN || *p == SHELL_UNKNOWN_SPLIT)
			last = p;
	if (last != NULL) {
		char	 pat[PATH_MAX];

		/* Unknown parts: what follows the last one, read as relative... */
		if ((what = floor_classify_rel(c, last + 1)) != NULL)
			return what;
		/* ...and the whole word as a pattern, when it starts absolute. */
		if (piece[0] == '/' && strlen(piece) < sizeof pat) {
			strcpy(pat, piece);
			for (q = pat; *q != '\0'; q++)
				if (*q == SHELL_UNKNOWN || *q == SHELL_UNKNOWN_SPLIT)
					*q = '*';
			return floor_classify_glob(c, pat, 0);
		}
		return NULL;
	}
	if (strpbrk(piece, "*?[") != NULL) {
		if (piece[0] == '/')
			return floor_classify_glob(c, piece, 1);
		if (c->home != NULL && (size_t)snprintf(buf, sizeof buf, "%s/%s", c->home,
		    piece) < sizeof buf && (what = floor_classify_glob(c, buf, 1)) != NULL)
			return what;
	}
	if (piece[0] == '/')
		return floor_classify_abs(c, piece);
	if ((what = floor_classify_rel(c, piece)) != NULL)
		return what;
	return floor_classify_cwd(c, piece);
}

/*
 * Does word w name a credential location? The whole word, and its parts around '=',
 * ':' and ',' (--key=~/.ssh/x, -v ~/.aws:/root/.aws, src=...,dst=...) are each read
 * as a path; a '~/' after one of those or after a short flag (-i~/.ssh/x) counts too,
 * since the program may expand it itself.
 */
static const char *
floor_cred_word(struct floor_ctx *c, const char *w)
{
	char		 piece[PATH_MAX];
	const char	*what, *p, *q;
	size_t		 n;

	/* A path as long as PATH_MAX cannot be opened; its pieces still might be. */
	if (strlen(w) < PATH_MAX && (what = floor_classify_piece(c, w)) != NULL)
		return what;
	if (strpbrk(w, "=:,") == NULL && !(w[0] == '-' && w[1] != '\0' && w[2] == '~'))
		return NULL;
	if (w[0] == '-' && w[1] != '-' && w[1] != '\0' && w[2] == '~' &&
	    (what = floor_classify_piece(c, w + 2)) != NULL)
		return what;
	for (p = w; *p != '\0'; p = *q ? q + 1 : q) {
		for (q = p; *q != '\0' && *q != '=' && *q != ':' && *q != ','; q++)
			;
		n = q - p;
		if (n > 0 && n < sizeof piece && !(p == w && *q == '\0')) {
			memcpy(piece, p, n);
			piece[n] = '\0';
			if ((what = floor_classify_piece(c, piece)) != NULL)
				return what;
		}
	}
	return NULL;
}

static void
floor_cred_check(struct floor_ctx *c, const char *w)
{
	const char	*what;
	char		 show[200];

	if (c->done || (what = floor_cred_word(c, w)) == NULL)
		return;
	floor_show(c, w, show, sizeof show);
	floor_deny(c, "floor.credential_path", "'%s' names a credential location (%s); "
	    "access is blocked by the Clockwork floor", show, what);
}

/* ---- git push ---- */

static int
floor_protected(const struct floor_ctx *c, const char *ref, const char **which)
{
	const struct strlist	*pb = c->pol->protected_branches;
	const char		*name = ref;
	size_t			 n, i;

	if (strncmp(name, "refs/heads/", 11) == 0)
		name += 11;
	else if (strncmp(name, "heads/", 6) == 0)
		name += 6;		/* git resolves heads/x to refs/heads/x */
	n = (pb != NULL && pb->n > 0) ? pb->n : 2;
	for (i = 0; i < n; i++) {
		const char *b = (pb != NULL && pb->n > 0) ? pb->v[i] :
		    floor_default_branches[i];
		/* A wildcard refspec (a glob over refs/heads) covers what it matches. */
		if (floor_has_marker(name) ? floor_is(name, b) :
		    (fnmatch(b, name, 0) == 0 || fnmatch(name, b, 0) == 0)) {
			*which = b;
			return 1;
		}
		/* A wider glob ("refs/" then a star) covers refs/heads/<branch> too. */
		if (strpbrk(ref, "*?[") != NULL && strchr(b, '*') == NULL) {
			char	 full[300];

			snprintf(full, sizeof full, "refs/heads/%s", b);
			if (fnmatch(ref, full, 0) == 0) {
				*which = b;
				return 1;
			}
		}
	}
	return 0;
}

static const char *
floor_first_protected(const struct floor_ctx *c)
{
	const struct strlist	*pb = c->pol->protected_branches;

	return (pb != NULL && pb->n > 0) ? pb->v[0] : floor_default_branches[0];
}

/*
 * Is a ("--name" or "--name=value") the long option opt, or a prefix of it at least
 * min characters long?
 */
static int
floor_git_long(const char *a, const char *opt, size_t min)
{
	size_t	 n;

	a += 2;
	n = strcspn(a, "=");
	return n >= min && n <= strlen(opt) && strncmp(a, opt, n) == 0;
}

/*
 * git push --prune deletes every remote ref under a wildcard refspec's destination that
 * no local ref maps to: with --all (or no refspec, where the configured one applies)
 * that is every branch the pusher lacks, and with a refspec from refs/heads/feat/ to
 * refs/heads/ (both wildcards) it is everything outside feat/. A destination pattern
 * that covers a protected branch is enough; an exact refspec does not prune.
 */
static void
floor_git_prune(struct floor_ctx *c, const char **refs, size_t nrefs, int all)
{
	const char	*which, *s, *colon;
	size_t		 i;

	if (all || nrefs == 0) {
		floor_deny(c, "floor.branch_delete", "git push --prune %s deletes every "
		    "remote branch without a local counterpart, which can include "
		    "protected branch '%s'; it is blocked by the Clockwork floor (push "
		    "the branches by name, without --prune)", all ? "--all" :
		    "without a refspec", floor_first_protected(c));
		return;
	}
	for (i = 0; i < nrefs; i++) {
		s = refs[i] + (refs[i][0] == '+');
		if ((colon = strchr(s, ':')) != NULL)
			s = colon + 1;
		if (strpbrk(s, "*?[") == NULL && !floor_has_marker(s))
			continue;
		if (floor_protected(c, s, &which)) {
			floor_deny(c, "floor.branch_delete", "git push --prune with "
			    "destination '%s' can delete protected branch '%s'; it is "
			    "blocked by the Clockwork floor (narrow the refspec so it "
			    "cannot name '%s', or drop --prune)", s, which, which);
			return;
		}
	}
}

static void
floor_git_push(struct floor_ctx *c, const char **av, size_t ac)
{
	const char	*refs[256], *which, *a, *s, *colon;
	size_t		 nrefs = 0, npos = 0, i, k;
	int		 force = 0, del = 0, mirror = 0, all = 0, maybe = 0, dd = 0;
	int		 prune = 0, rewrite;
	char		 dst[512];

	for (i = 0; i < ac; i++) {
		a = av[i];
		if (floor_has_split(a))
			maybe = 1;
		if (!dd && strcmp(a, "--") == 0) {
			dd = 1;
			continue;
		}
		if (!dd && a[0] == '-' && a[1] == '-') {
			/* git takes any unambiguous prefix of a long option (--force-w). */
			if (floor_git_long(a, "force", 2) ||
			    floor_git_long(a, "force-with-lease", 7) ||
			    floor_git_long(a, "force-if-includes", 7))
				force = 1;
			else if (floor_git_long(a, "delete", 3))
				del = 1;
			else if (floor_git_long(a, "mirror", 2))
				mirror = 1;
			else if (floor_git_long(a, "prune", 3))
				prune = 1;
			else if (floor_git_long(a, "all", 2) || floor_git_long(a, "branches", 2))
				all = 1;
			else if (strcmp(a, "--repo") == 0 || strcmp(a, "--push-option") == 0 ||
			    strcmp(a, "--receive-pack") == 0 || strcmp(a, "--exec") == 0)
				i++;
			continue;
		}
		if (!dd && a[0] == '-' && a[1] != '\0') {
			for (k = 1; a[k] != '\0'; k++) {
				if (a[k] == 'f')
					force = 1;
				else if (a[k] == 'd')
					del = 1;
				else if (a[k] == 'o') {
					if (a[k + 1] == '\0')
						i++;
					break;
				}
			}
			continue;
		}
		if (npos++ == 0)
			continue;		/* the repository */
		if (nrefs < sizeof refs / sizeof refs[0])
			refs[nrefs++] = a;
		else
			maybe = 1;
	}
	if (maybe) {
		floor_deny(c, "floor.force_push", "git push with an unquoted variable or "
		    "command substitution may force-push to a protected branch, so the "
		    "Clockwork floor blocks it (quote the expansion)");
		return;
	}
	if (mirror) {
		floor_deny(c, "floor.force_push", "git push --mirror force-updates and "
		    "deletes every branch on the remote, including protected branch '%s'; "
		    "it is blocked by the Clockwork floor", floor_first_protected(c));
		return;
	}
	for (i = 0; i < nrefs; i++) {
		s = refs[i];
		int plus = s[0] == '+';
		s += plus;
		if ((colon = strchr(s, ':')) != NULL) {
			snprintf(dst, sizeof dst, "%s", colon + 1);
			if (colon == s) {
				if (floor_protected(c, dst, &which))
					floor_deny(c, "floor.branch_delete", "deleting protected "
					    "branch '%s' is blocked by the Clockwork floor", which);
				continue;
			}
		} else
			snprintf(dst, sizeof dst, "%s", s);
		if (del) {
			if (floor_protected(c, dst, &which))
				floor_deny(c, "floor.branch_delete", "deleting protected branch "
				    "'%s' is blocked by the Clockwork floor", which);
			continue;
		}
		if (!force && !plus)
			continue;
		if (strcmp(dst, "HEAD") == 0 || strcmp(dst, "@") == 0 || dst[0] == '\0')
			floor_deny(c, "floor.force_push", "force-push of HEAD updates the "
			    "current branch, which may be a protected branch; it is blocked "
			    "by the Clockwork floor");
		else if (floor_protected(c, dst, &which))
			floor_deny(c, "floor.force_push", "force-push to protected branch "
			    "'%s' is blocked by the Clockwork floor", which);
	}
	/*
	 * A push acts outside the worktree (it changes a remote); one that can rewrite
	 * or delete what is there cannot be got back from the run.
	 */
	floor_raise(c, FLOOR_RISK_OUTSIDE, "risk.git_push");
	rewrite = force || del || prune || mirror;
	for (i = 0; i < nrefs; i++)
		if (refs[i][0] == '+' || (refs[i][0] == ':' && refs[i][1] != '\0'))
			rewrite = 1;
	if (rewrite)
		floor_raise(c, FLOOR_RISK_DESTRUCTIVE, "risk.git_push_rewrite");
	if (prune)
		floor_git_prune(c, refs, nrefs, all);
	if (force && all)
		floor_deny(c, "floor.force_push", "git push --all with force updates every "
		    "branch, including protected branch '%s'; it is blocked by the "
		    "Clockwork floor", floor_first_protected(c));
	else if (force && nrefs == 0 && !del)
		floor_deny(c, "floor.force_push", "force-push without a refspec updates the "
		    "current branch, which may be a protected branch; it is blocked by the "
		    "Clockwork floor");
}

/*
 * Configuration keys that only change what git prints or records: a "-c" naming one
 * of these, or any key under these prefixes, runs nothing. Every other key may name a
 * program git runs (core.pager, core.sshCommand, core.fsmonitor, alias.*, diff.*.
 * textconv, filter.*, credential.helper, gpg.program, ...) or point git elsewhere
 * (core.hooksPath, include.path): the risk is not ordinary.
 */
static int
floor_git_key_safe(const char *key)
{
	static const char *const keys[] = { "user.name", "user.email", "core.quotepath",
	    "core.autocrlf", "core.safecrlf", "init.defaultbranch", "commit.gpgsign",
	    "tag.gpgsign", "pull.rebase", "pull.ff", "merge.conflictstyle",
	    "push.default", "log.showsignature", "diff.noprefix", "diff.renames",
	    "core.abbrev", "rebase.autosquash", "rebase.autostash", "status.short",
	    "column.ui", "safe.directory", "maintenance.auto", "gc.auto", NULL };
	static const char *const prefixes[] = { "color.", "advice.", "i18n.", NULL };
	char	 low[128];
	size_t	 n;

	for (n = 0; key[n] != '\0' && key[n] != '=' && n + 1 < sizeof low; n++)
		low[n] = (key[n] >= 'A' && key[n] <= 'Z') ? (char)(key[n] - 'A' + 'a') :
		    key[n];
	low[n] = '\0';
	if (floor_has_marker(low))
		return 0;
	for (size_t k = 0; keys[k] != NULL; k++)
		if (strcmp(low, keys[k]) == 0)
			return 1;
	for (size_t k = 0; prefixes[k] != NULL; k++)
		if (strncmp(low, prefixes[k], strlen(prefixes[k])) == 0)
			return 1;
	return 0;
}

/*
 * One key=value git is told to use (-c KEY=VAL, --config-env, git config KEY VAL). A
 * key that can run a program is not ordinary, and its value is read as the shell
 * text git would run (an alias's leading '!' dropped), so a payload in it is judged
 * like any other command.
 */
static void
floor_git_setting(struct floor_ctx *c, const char *key, const char *val, int depth)
{
	if (floor_git_key_safe(key))
		return;
	c->opaque = 1;
	floor_raise(c, FLOOR_RISK_OUTSIDE, "risk.git_config_exec");
	floor_trace(c, depth, "git setting '%.60s' may run a program (risk "
	    "outside_worktree)", key);
	if (val == NULL || depth >= SHELL_MAX_DEPTH)
		return;
	if (val[0] == '!')
		val++;
	if (floor_text(c, val, strlen(val), depth + 1) == -1)
		c->oom = 1;
}

/* git's global options come before the verb; some take the next word. */
static void
floor_git(struct floor_ctx *c, const char **av, size_t ac, int depth)
{
	static const char *const withval[] = { "-C", "-c", "--git-dir", "--work-tree",
	    "--namespace", "--config-env", "--super-prefix", NULL };
	size_t	 i = 1;

	while (i < ac) {
		const char *a = av[i];
		if (floor_has_split(a))
			break;		/* may be the verb itself */
		if (a[0] != '-' || a[1] == '\0')
			break;
		if (strcmp(a, "-c") == 0 && i + 1 < ac) {
			const char *eq = strchr(av[i + 1], '=');
			floor_git_setting(c, av[i + 1], eq != NULL ? eq + 1 : NULL, depth);
		} else if (strncmp(a, "--config-env", 12) == 0) {
			/* The value comes from the environment: it cannot be read here. */
			floor_git_setting(c, a[12] == '=' ? a + 13 : i + 1 < ac ? av[i + 1] :
			    "", NULL, depth);
		} else if (strcmp(a, "--exec-path") == 0 || strncmp(a, "--exec-path=", 12) == 0 ||
		    strcmp(a, "--git-dir") == 0 || strncmp(a, "--git-dir=", 10) == 0) {
			/* git's own programs, or a repository (its config), from elsewhere. */
			c->opaque = 1;
			floor_raise(c, FLOOR_RISK_OUTSIDE, "risk.git_config_exec");
		}
		i++;
		for (size_t k = 0; withval[k] != NULL; k++)
			if (strcmp(a, withval[k]) == 0)
				i++;
	}
	if (i < ac && strcmp(av[i], "config") == 0) {
		/* git config [--local] KEY VALUE, git config set KEY VALUE. */
		size_t	 k = i + 1, pos = 0;
		const char *kv[2] = { NULL, NULL };

		for (; k < ac; k++) {
			if (av[k][0] == '-' && !floor_has_marker(av[k]))
				continue;
			if (pos == 0 && (strcmp(av[k], "set") == 0 ||
			    strcmp(av[k], "--add") == 0))
				continue;
			if (pos < 2)
				kv[pos] = av[k];
			pos++;
		}
		if (pos >= 2)
			floor_git_setting(c, kv[0], kv[1], depth);
	}
	if (i < ac && floor_is(av[i], "push"))
		floor_git_push(c, av + i + (floor_has_split(av[i]) ? 0 : 1),
		    ac - i - (floor_has_split(av[i]) ? 0 : 1));
}

/* ---- publishing ---- */

/*
 * Index of the verb: the first word that is not an option, skipping the values of
 * the options listed in withval. An unknown long option might take a value, so *alt
 * receives the next candidate in that case (or ac).
 */
static size_t
floor_verb(const char **av, size_t ac, size_t i, const char *const *withval,
    size_t *alt)
{
	int	 unknown = 0;

	*alt = ac;
	for (; i < ac; i++) {
		const char *a = av[i];
		if (strcmp(a, "--") == 0)
			return i + 1 < ac ? i + 1 : ac;
		if (a[0] != '-' || a[1] == '\0' || floor_has_split(a)) {
			if (unknown) {
				for (size_t j = i + 1; j < ac; j++)
					if (av[j][0] != '-') {
						*alt = j;
						break;
					}
			}
			return i;
		}
		unknown = 0;
		if (strchr(a, '=') != NULL)
			continue;
		if (withval != NULL && floor_is_any(a, withval))
			i++;
		else if (a[1] == '-')
			unknown = 1;
	}
	return ac;
}

static int
floor_verb_is(const char **av, size_t ac, size_t v, size_t alt,
    const char *const *verbs)
{
	return (v < ac && floor_is_any(av[v], verbs)) ||
	    (alt < ac && floor_is_any(av[alt], verbs));
}

/*
 * "npm owner ls PKG", "cargo owner --list", "gem owner PKG" only read; adding or
 * removing an owner hands a package to someone (or takes it away).
 */
static int
floor_owner_changes(const char **av, size_t ac, size_t v)
{
	static const char *const change[] = { "add", "rm", "remove", "--add", "-a",
	    "--remove", "-r", NULL };

	for (size_t i = v + 1; i < ac; i++)
		if (floor_is_any(av[i], change) || strncmp(av[i], "--add=", 6) == 0 ||
		    strncmp(av[i], "--remove=", 9) == 0)
			return 1;
	return 0;
}

static const char *
floor_publish(const char **av, size_t ac)
{
	static const char *const npm_pub[] = { "publish", "publis", "publi", "publ",
	    "pub", "pu", NULL };
	static const char *const publish[] = { "publish", NULL };
	static const char *const push[] = { "push", NULL };
	static const char *const upload[] = { "upload", NULL };
	static const char *const unpublish[] = { "unpublish", NULL };
	static const char *const deprecate[] = { "deprecate", "undeprecate", NULL };
	static const char *const owner[] = { "owner", "author", NULL };
	static const char *const yank[] = { "yank", NULL };
	static const char *const npm_val[] = { "-w", "--workspace", "--registry",
	    "--prefix", "--userconfig", "--globalconfig", "--cache", "--otp", "--tag",
	    "--access", "--loglevel", "-C", "--dir", "--filter", "-F", "--cwd",
	    "--scope", NULL };
	static const char *const cargo_val[] = { "-Z", "--config", "-C", "--color",
	    "--manifest-path", "--registry", "--token", "--index", NULL };
	static const char *const dotnet_val[] = { "-d", "--diagnostics", NULL };
	const char	*p = floor_base(av[0]);
	size_t		 v, alt;

	if (floor_is(p, "npm")) {
		v = floor_verb(av, ac, 1, npm_val, &alt);
		if (floor_verb_is(av, ac, v, alt, npm_pub))
			return "npm publish";
		if (floor_verb_is(av, ac, v, alt, unpublish))
			return "npm unpublish";
		if (floor_verb_is(av, ac, v, alt, deprecate))
			return "npm deprecate";
		if (floor_verb_is(av, ac, v, alt, owner) && floor_owner_changes(av, ac, v))
			return "npm owner";
	}
	if (floor_is(p, "pnpm") || floor_is(p, "bun")) {
		v = floor_verb(av, ac, 1, npm_val, &alt);
		if (floor_verb_is(av, ac, v, alt, publish))
			return floor_is(p, "pnpm") ? "pnpm publish" : "bun publish";
		/* Verbs pnpm does not know go to npm. */
		if (floor_verb_is(av, ac, v, alt, unpublish) ||
		    floor_verb_is(av, ac, v, alt, deprecate) ||
		    (floor_verb_is(av, ac, v, alt, owner) && floor_owner_changes(av, ac, v)))
			return floor_is(p, "pnpm") ? "pnpm unpublish/deprecate/owner" :
			    "bun unpublish/deprecate/owner";
	}
	/* Release tools whose publish verb runs npm publish for every package. */
	if (floor_is(p, "changeset") || floor_is(p, "changesets") ||
	    floor_is(p, "lerna") || floor_is(p, "jsr") || floor_is(p, "deno") ||
	    floor_is(p, "maturin") ||
	    (strlen(av[0]) > 14 && strcmp(av[0] + strlen(av[0]) - 14,
	    "changesets/cli") == 0)) {
		static const char *const mat[] = { "publish", "upload", NULL };
		v = floor_verb(av, ac, 1, NULL, &alt);
		if (floor_verb_is(av, ac, v, alt, floor_is(p, "maturin") ? mat : publish))
			return floor_is(p, "lerna") ? "lerna publish" :
			    floor_is(p, "jsr") ? "jsr publish" :
			    floor_is(p, "deno") ? "deno publish" :
			    floor_is(p, "maturin") ? "maturin publish" : "changeset publish";
	}
	if (floor_is(p, "yarn")) {
		static const char *const yval[] = { "--cwd", "--include", "--exclude",
		    "--from", "-j", "--jobs", "--since", NULL };
		size_t i = 1;

		for (int guard = 0; guard < 8 && i < ac; guard++) {
			v = floor_verb(av, ac, i, yval, &alt);
			if (v >= ac)
				break;
			if (floor_verb_is(av, ac, v, alt, publish))
				return "yarn publish";
			if (floor_is(av[v], "workspace"))
				i = v + 2;
			else if (floor_is(av[v], "workspaces") || floor_is(av[v], "foreach") ||
			    floor_is(av[v], "npm"))
				i = v + 1;
			else
				break;
		}
	}
	if (floor_is(p, "cargo")) {
		size_t i = 1;
		while (i < ac && av[i][0] == '+')
			i++;	/* +toolchain */
		v = floor_verb(av, ac, i, cargo_val, &alt);
		if (floor_verb_is(av, ac, v, alt, publish))
			return "cargo publish";
		if (floor_verb_is(av, ac, v, alt, yank))
			return "cargo yank";
		if (floor_verb_is(av, ac, v, alt, owner) && floor_owner_changes(av, ac, v))
			return "cargo owner";
	}
	if (floor_is(p, "twine")) {
		v = floor_verb(av, ac, 1, NULL, &alt);
		if (floor_verb_is(av, ac, v, alt, upload))
			return "twine upload";
	}
	if (floor_is(p, "gem")) {
		/* RubyGems runs any unambiguous prefix of a command: gem pu is gem push. */
		static const char *const gpush[] = { "push", "pus", "pu", NULL };
		v = floor_verb(av, ac, 1, NULL, &alt);
		if (floor_verb_is(av, ac, v, alt, gpush))
			return "gem push";
		if (floor_verb_is(av, ac, v, alt, yank))
			return "gem yank";
		if (floor_verb_is(av, ac, v, alt, owner) && floor_owner_changes(av, ac, v))
			return "gem owner";
	}
	if (floor_is(p, "poetry") || floor_is(p, "uv") || floor_is(p, "hatch") ||
	    floor_is(p, "flit") || floor_is(p, "pdm")) {
		static const char *const pval[] = { "-C", "--directory", "--project",
		    "-P", "--config-file", "--cache-dir", "-e", "--env", NULL };
		v = floor_verb(av, ac, 1, pval, &alt);
		if (floor_verb_is(av, ac, v, alt, publish))
			return floor_is(p, "poetry") ? "poetry publish" : floor_is(p, "uv") ?
			    "uv publish" : floor_is(p, "hatch") ? "hatch publish" :
			    floor_is(p, "flit") ? "flit publish" : "pdm publish";
	}
	if (floor_is(p, "dotnet")) {
		static const char *const nuget[] = { "nuget", NULL };
		v = floor_verb(av, ac, 1, dotnet_val, &alt);
		if (floor_verb_is(av, ac, v, alt, nuget) && v < ac) {
			size_t v2 = floor_verb(av, ac, v + 1, NULL, &alt);
			if (floor_verb_is(av, ac, v2, alt, push))
				return "dotnet nuget push";
		}
	}
	if (floor_is(p, "nuget")) {
		v = floor_verb(av, ac, 1, NULL, &alt);
		if (floor_verb_is(av, ac, v, alt, push))
			return "nuget push";
	}
	return NULL;
}

/* ---- normalisation ---- */

static int
floor_is_shell(const char *p)
{
	static const char *const shells[] = { "sh", "bash", "zsh", "dash", "ksh", "mksh",
	    "ash", "posh", "yash", "busybox-sh", NULL };

	for (size_t i = 0; shells[i] != NULL; i++)
		if (strcmp(p, shells[i]) == 0)
			return 1;
	return 0;
}

static int
floor_is_python(const char *p)
{
	if (strcmp(p, "py") == 0)
		return 1;
	if (strncmp(p, "python", 6) != 0 && strncmp(p, "pypy", 4) != 0)
		return 0;
	p += p[1] == 'y' && p[2] == 'p' ? 4 : 6;
	for (; *p != '\0'; p++)
		if ((*p < '0' || *p > '9') && *p != '.')
			return 0;
	return 1;
}

/* Join words with single spaces into a new string. */
static char *
floor_join(const char **av, size_t ac)
{
	size_t	 n = 1, i;
	char	*s, *q;

	for (i = 0; i < ac; i++)
		n += strlen(av[i]) + 1;
	if ((s = malloc(n)) == NULL)
		return NULL;
	for (q = s, i = 0; i < ac; i++) {
		if (i > 0)
			*q++ = ' ';
		q = stpcpy(q, av[i]);
	}
	*q = '\0';
	return s;
}

static void
floor_text_join(struct floor_ctx *c, const char **av, size_t ac, int depth)
{
	char	*s;

	if (ac == 0)
		return;
	if ((s = floor_join(av, ac)) == NULL) {
		c->oom = 1;
		return;
	}
	if (floor_text(c, s, strlen(s), depth) == -1)
		c->oom = 1;
	free(s);
}

/* Does src feed a shell text the floor reads (echo/printf words, cat of a heredoc)? */
static int
floor_stdin_visible(const struct shell_cmd *src)
{
	const char	*p;

	if (src->argc < 1)
		return 0;
	p = floor_base(src->argv[0]);
	if ((strcmp(p, "echo") == 0 || strcmp(p, "printf") == 0) && src->argc >= 2)
		return 1;
	if (strcmp(p, "cat") == 0 && src->argc == 1)
		for (size_t i = 0; i < src->nredirs; i++)
			if (src->redirs[i].kind == SHELL_REDIR_HEREDOC ||
			    src->redirs[i].kind == SHELL_REDIR_HERESTRING)
				return 1;
	return 0;
}

/*
 * A shell with no -c string and no script reads commands from stdin: a heredoc, a
 * here-string, or "echo CMD | sh". What else feeds it (curl | sh) is not visible.
 */
static void
floor_shell_stdin(struct floor_ctx *c, const struct shell_list *l, size_t idx,
    int depth)
{
	const struct shell_cmd	*cmd = &l->v[idx], *src;
	size_t			 i;

	for (i = 0; i < cmd->nredirs; i++) {
		const struct shell_redir *r = &cmd->redirs[i];
		if (r->kind == SHELL_REDIR_HEREDOC || r->kind == SHELL_REDIR_HERESTRING) {
			floor_trace(c, depth, "%s fed to a shell, parsed as commands",
			    r->kind == SHELL_REDIR_HEREDOC ? "heredoc" : "here-string");
			if (floor_text(c, r->word, strlen(r->word), depth) == -1)
				c->oom = 1;
		}
	}
	if (cmd->pipe_in < 0 || (size_t)cmd->pipe_in >= l->n)
		return;
	src = &l->v[cmd->pipe_in];
	if (!floor_stdin_visible(src)) {
		/* What the shell will read comes from a program's output or a file. */
		floor_raise(c, FLOOR_RISK_OUTSIDE, "risk.hidden_command");
		floor_trace(c, depth, "a shell reads commands the floor cannot see (risk "
		    "outside_worktree)");
	}
	if (src->argc >= 1 && strcmp(floor_base(src->argv[0]), "cat") == 0) {
		/* cat <<EOF | sh: the heredoc (or here-string) is what the shell reads. */
		for (i = 0; i < src->nredirs; i++) {
			const struct shell_redir *r = &src->redirs[i];
			if (r->kind != SHELL_REDIR_HEREDOC &&
			    r->kind != SHELL_REDIR_HERESTRING)
				continue;
			floor_trace(c, depth, "heredoc fed to a shell through cat, parsed "
			    "as commands");
			if (floor_text(c, r->word, strlen(r->word), depth) == -1)
				c->oom = 1;
		}
		return;
	}
	if (src->argc < 2)
		return;
	const char *p = floor_base(src->argv[0]);
	if (strcmp(p, "echo") == 0 || strcmp(p, "printf") == 0) {
		char	*s, *q, *w;

		i = 1;
		while (i < src->argc && strcmp(p, "echo") == 0 && src->argv[i][0] == '-')
			i++;
		if (i >= src->argc)
			return;
		if ((s = floor_join((const char **)src->argv + i, src->argc - i)) == NULL) {
			c->oom = 1;
			return;
		}
		/* printf, and echo in dash, turn \n into a newline: a command separator. */
		for (q = w = s; *q != '\0'; q++) {
			if (q[0] == '\\' && (q[1] == 'n' || q[1] == 't' || q[1] == '\\')) {
				*w++ = q[1] == 'n' ? '\n' : q[1] == 't' ? '\t' : '\\';
				q++;
			} else
				*w++ = *q;
		}
		*w = '\0';
		if (floor_text(c, s, strlen(s), depth) == -1)
			c->oom = 1;
		free(s);
	}
}

/*
 * A shell run with -c STRING: the string is parsed as commands one level deeper. Its
 * options may be clustered (-lc, -ec); -o and -O take a value; the first word that is
 * not an option is the string (with -c) or a script (without).
 */
static void
floor_shell(struct floor_ctx *c, const struct shell_list *l, size_t idx,
    const char **av, size_t ac, int depth)
{
	size_t	 i;
	int	 cflag = 0, sflag = 0;

	for (i = 1; i < ac; i++) {
		const char *a = av[i];
		if (strcmp(a, "--") == 0 || strcmp(a, "-") == 0) {
			i++;
			break;
		}
		if (a[0] != '-' && a[0] != '+')
			break;
		if (a[1] == '-') {
			if (strcmp(a, "--rcfile") == 0 || strcmp(a, "--init-file") == 0)
				i++;
			continue;
		}
		for (size_t k = 1; a[k] != '\0'; k++) {
			if (a[k] == 'c')
				cflag = 1;
			else if (a[k] == 's')
				sflag = 1;	/* commands from stdin, words are $1... */
			else if (a[k] == 'o' || a[k] == 'O') {
				i++;
				break;
			}
		}
	}
	if (cflag) {
		floor_trace(c, depth, "the string given to %s -c, parsed as commands",
		    floor_base(av[0]));
		if (i < ac && floor_text(c, av[i], strlen(av[i]), depth + 1) == -1)
			c->oom = 1;
		return;
	}
	if (i >= ac || sflag)
		floor_shell_stdin(c, l, idx, depth + 1);
}

/*
 * Skip a wrapper's options; withval lists the short options that take a value. A long
 * option without '=' may or may not take the next word, so there are two readings:
 * none of them takes one (returned), or all of them do (*alt, 0 when it is the same;
 * with alt NULL, this second reading is returned). Mixed readings are not tried.
 */
static size_t
floor_skip_opts(const char **av, size_t ac, size_t i, const char *withval,
    size_t *alt)
{
	if (alt != NULL)
		*alt = 0;
	for (; i < ac; i++) {
		const char *a = av[i];
		if (strcmp(a, "--") == 0)
			return i + 1;
		if (a[0] != '-' || a[1] == '\0')
			return i;
		if (a[1] == '-') {
			if (strchr(a, '=') != NULL || i + 1 >= ac)
				continue;
			/* The second reading: every such option takes a value. */
			if (alt == NULL)
				i++;
			else if (*alt == 0)
				*alt = floor_skip_opts(av, ac, i + 2, withval, NULL);
			continue;
		}
		/* -uUSER carries it; -u USER takes the next word. */
		if (a[2] == '\0' && withval != NULL && strchr(withval, a[1]) != NULL)
			i++;
	}
	/* An option that wants a value can be the last word: never point past the end. */
	return i < ac ? i : ac;
}

/* ---- starter rules and risk ---- */

enum {
	FLOOR_ST_RM_ROOT, FLOOR_ST_CURL_PIPE, FLOOR_ST_BRANCH_DELETE, FLOOR_ST_RESET_HARD,
	FLOOR_ST_CHMOD_777, FLOOR_ST_GIT_CONFIG_GLOBAL, FLOOR_ST_SUDO, FLOOR_ST_N
};

static const struct floor_starter floor_starter_table[FLOOR_ST_N] = {
	{ "rm_root", "a recursive delete of /, the home directory or the worktree's "
	    "parent", FLOOR_RISK_DESTRUCTIVE },
	{ "curl_pipe_shell", "running what curl or wget fetched with a shell or an "
	    "interpreter", FLOOR_RISK_FETCH_EXEC },
	{ "git_branch_delete", "deleting a protected branch with git branch -d/-D",
	    FLOOR_RISK_DESTRUCTIVE },
	{ "git_reset_hard", "git reset --hard on a protected branch (or one the floor "
	    "cannot see)", FLOOR_RISK_DESTRUCTIVE },
	{ "chmod_777", "chmod -R 777", FLOOR_RISK_DESTRUCTIVE },
	{ "git_config_global", "changing git's global or system configuration",
	    FLOOR_RISK_OUTSIDE },
	{ "sudo", "running a command as another user with sudo or doas",
	    FLOOR_RISK_OUTSIDE },
};

const struct floor_starter *
floor_starters(size_t *n)
{
	*n = FLOOR_ST_N;
	return floor_starter_table;
}

const struct floor_starter *
floor_starter_find(const char *id)
{
	for (size_t i = 0; i < FLOOR_ST_N; i++)
		if (strcmp(floor_starter_table[i].id, id) == 0)
			return &floor_starter_table[i];
	return NULL;
}

const char *
floor_risk_name(enum floor_risk r)
{
	switch (r) {
	case FLOOR_RISK_OUTSIDE:	return "outside_worktree";
	case FLOOR_RISK_FETCH_EXEC:	return "fetch_exec";
	case FLOOR_RISK_DESTRUCTIVE:	return "destructive";
	default:			return "ordinary";
	}
}

int
floor_risk_parse(const char *s)
{
	for (int r = FLOOR_RISK_ORDINARY; r <= FLOOR_RISK_DESTRUCTIVE; r++)
		if (strcmp(s, floor_risk_name((enum floor_risk)r)) == 0)
			return r;
	return -1;
}

static void
floor_raise(struct floor_ctx *c, enum floor_risk r, const char *rule)
{
	if (r <= c->risk)
		return;
	c->risk = r;
	snprintf(c->risk_rule, sizeof c->risk_rule, "%s", rule);
}

/* The index of git's verb, global options skipped; ac when there is none. */
static size_t
floor_git_verb(const char **av, size_t ac)
{
	static const char *const withval[] = { "-C", "-c", "--git-dir", "--work-tree",
	    "--namespace", "--config-env", "--super-prefix", NULL };
	size_t	 i = 1;

	while (i < ac) {
		const char *a = av[i];
		if (a[0] != '-' || a[1] == '\0' || floor_has_marker(a))
			break;
		i++;
		for (size_t k = 0; withval[k] != NULL; k++)
			if (strcmp(a, withval[k]) == 0)
				i++;
	}
	return i < ac ? i : ac;
}

/*
 * An absolute form of path: as is, or against the directory a cd moved to, or against
 * the worktree (where a run's commands start). 0, or -1 when it cannot be known.
 */
static int
floor_abs(const struct floor_ctx *c, const char *path, char *out, size_t outlen)
{
	char	 buf[PATH_MAX * 2 + 2];
	const char *wt = c->pol->worktree;

	if (floor_has_marker(path))
		return -1;
	if (path[0] == '/')
		snprintf(buf, sizeof buf, "%s", path);
	else if (c->cwd[0] == '/')
		snprintf(buf, sizeof buf, "%s/%s", c->cwd, path);
	else if (wt != NULL && wt[0] == '/')
		snprintf(buf, sizeof buf, "%s/%s%s%s", wt, c->cwd, c->cwd[0] ? "/" : "",
		    path);
	else
		return -1;
	return floor_lexical(buf, out, outlen);
}

/* Is dir an ancestor of, or equal to, path (both lexical absolute paths)? */
static int
floor_covers(const char *dir, const char *path)
{
	size_t	 n = strlen(dir);

	if (strcmp(dir, "/") == 0)
		return 1;
	return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static int
floor_st_rm_root(struct floor_ctx *c, const char **av, size_t ac, char *det,
    size_t detlen)
{
	char	 abs[PATH_MAX], parent[PATH_MAX], *sl;
	int	 rec = 0, dd = 0;
	size_t	 i, n;

	if (strcmp(floor_base(av[0]), "rm") != 0)
		return 0;
	for (i = 1; i < ac; i++) {
		const char *a = av[i];
		if (!dd && strcmp(a, "--") == 0)
			dd = 1;
		else if (!dd && strcmp(a, "--recursive") == 0)
			rec = 1;
		else if (!dd && a[0] == '-' && a[1] != '-' && strpbrk(a, "rR") != NULL)
			rec = 1;
	}
	if (!rec)
		return 0;
	parent[0] = '\0';
	if (c->pol->worktree != NULL && floor_lexical(c->pol->worktree, parent,
	    sizeof parent) == 0 && (sl = strrchr(parent, '/')) != NULL)
		*(sl == parent ? sl + 1 : sl) = '\0';
	for (dd = 0, i = 1; i < ac; i++) {
		const char *a = av[i];
		if (!dd && strcmp(a, "--") == 0) {
			dd = 1;
			continue;
		}
		if (!dd && a[0] == '-' && a[1] != '\0')
			continue;
		if (floor_abs(c, a, abs, sizeof abs) == -1)
			continue;
		/* "/" or "~/" then a star: a directory's contents count as the directory. */
		for (;;) {
			n = strlen(abs);
			if (n >= 2 && strcmp(abs + n - 2, "/*") == 0)
				abs[n - 2] = '\0';
			else if (n >= 3 && strcmp(abs + n - 3, "/.*") == 0)
				abs[n - 3] = '\0';
			else
				break;
			if (abs[0] == '\0')
				strcpy(abs, "/");
		}
		if (strcmp(abs, "/") == 0 || floor_covers(abs, c->home) ||
		    floor_covers(abs, c->home_canon) ||
		    (parent[0] != '\0' && floor_covers(abs, parent))) {
			floor_show(c, abs, det, detlen);
			return 1;
		}
	}
	return 0;
}

static int
floor_is_fetcher(const struct shell_cmd *src)
{
	for (size_t i = 0; i < src->argc && i < 4; i++) {
		const char *p = floor_base(src->argv[i]);
		if (strcmp(p, "curl") == 0 || strcmp(p, "wget") == 0)
			return 1;
		if (strcmp(p, "sudo") != 0 && strcmp(p, "env") != 0 &&
		    src->argv[i][0] != '-')
			return 0;
	}
	return 0;
}

static int
floor_is_interp(const char *p)
{
	static const char *const interp[] = { "perl", "ruby", "node", "php", "bun",
	    "deno", "lua", "source", ".", NULL };

	if (floor_is_shell(p) || floor_is_python(p))
		return 1;
	for (size_t i = 0; interp[i] != NULL; i++)
		if (strcmp(p, interp[i]) == 0)
			return 1;
	return 0;
}

/*
 * curl URL | sh, wget -qO- URL | python3, sh -c "$(curl URL)", bash <(curl URL):
 * a shell or interpreter whose input, or one of whose words, comes from a fetch.
 */
static int
floor_st_curl_pipe(struct floor_ctx *c, const struct shell_list *l, size_t idx,
    const char **av, size_t ac)
{
	const struct shell_cmd	*cmd = &l->v[idx];
	int			 hidden = 0;
	long			 in = cmd->pipe_in;

	(void)c;
	if (!floor_is_interp(floor_base(av[0])))
		return 0;
	/* Anywhere upstream in the pipeline: curl URL | tee x.sh | sh, wget | gunzip | sh. */
	for (int guard = 0; guard < 64 && in >= 0 && (size_t)in < l->n; guard++) {
		if (floor_is_fetcher(&l->v[in]))
			return 1;
		in = l->v[in].pipe_in;
	}
	for (size_t i = 1; i < ac; i++)
		hidden |= floor_has_marker(av[i]);
	if (!hidden)
		return 0;
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].depth > cmd->depth && floor_is_fetcher(&l->v[i]))
			return 1;
	return 0;
}

static int
floor_st_branch_delete(struct floor_ctx *c, const char **av, size_t ac, char *det,
    size_t detlen)
{
	const char	*which;
	size_t		 v, i;
	int		 del = 0, remote = 0;

	if (!floor_is(floor_base(av[0]), "git") || (v = floor_git_verb(av, ac)) >= ac ||
	    strcmp(av[v], "branch") != 0)
		return 0;
	for (i = v + 1; i < ac; i++) {
		const char *a = av[i];
		if (strcmp(a, "--delete") == 0)
			del = 1;
		else if (strcmp(a, "--remotes") == 0)
			remote = 1;
		else if (a[0] == '-' && a[1] != '-') {
			del |= strpbrk(a, "dD") != NULL;
			remote |= strchr(a, 'r') != NULL;
		}
	}
	if (!del || remote)
		return 0;
	for (i = v + 1; i < ac; i++)
		if (av[i][0] != '-' && floor_protected(c, av[i], &which)) {
			snprintf(det, detlen, "%s", which);
			return 1;
		}
	return 0;
}

/*
 * Up to outlen-1 bytes of a regular file, never following a last symlink, never
 * blocking on a FIFO (the worktree is the run's to shape). 0, or -1.
 */
static int
floor_read_small(const char *path, char *out, size_t outlen)
{
	struct stat	 st;
	ssize_t		 n;
	int		 fd;

	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)) == -1)
		return -1;
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    (n = read(fd, out, outlen - 1)) < 0) {
		close(fd);
		return -1;
	}
	close(fd);
	out[n] = '\0';
	return 0;
}

/*
 * The branch checked out in the repository holding dir (dir or its nearest parent
 * with a .git directory or gitdir file): 0 with its name, 1 for a detached HEAD, -1
 * when it cannot be told. Read only when a git reset --hard is being judged.
 */
static int
floor_head_branch(const char *dir, char *out, size_t outlen)
{
	char	 d[PATH_MAX], p[PATH_MAX + 16], buf[512], *nl, *sl;
	size_t	 n;

	if (dir == NULL || dir[0] != '/' || floor_lexical(dir, d, sizeof d) == -1)
		return -1;
	for (int guard = 0; guard < 64; guard++) {
		snprintf(p, sizeof p, "%s/.git/HEAD", strcmp(d, "/") == 0 ? "" : d);
		if (floor_read_small(p, buf, sizeof buf) == 0)
			break;
		/* A worktree's .git is a file: "gitdir: PATH". */
		snprintf(p, sizeof p, "%s/.git", strcmp(d, "/") == 0 ? "" : d);
		if (floor_read_small(p, buf, sizeof buf) == 0 &&
		    strncmp(buf, "gitdir: ", 8) == 0) {
			if ((nl = strchr(buf, '\n')) != NULL)
				*nl = '\0';
			if ((buf[8] == '/' ? snprintf(p, sizeof p, "%s/HEAD", buf + 8) :
			    snprintf(p, sizeof p, "%s/%s/HEAD", d, buf + 8)) >=
			    (int)sizeof p || floor_read_small(p, buf, sizeof buf) == -1)
				return -1;
			break;
		}
		if (strcmp(d, "/") == 0)
			return -1;
		if ((sl = strrchr(d, '/')) == d)
			d[1] = '\0';
		else
			*sl = '\0';
	}
	if (strncmp(buf, "ref: refs/heads/", 16) != 0)
		return strncmp(buf, "ref:", 4) == 0 ? -1 : 1;
	n = strcspn(buf + 16, "\r\n");
	if (n == 0 || n >= outlen)
		return -1;
	memcpy(out, buf + 16, n);
	out[n] = '\0';
	return 0;
}

static int
floor_st_reset_hard(struct floor_ctx *c, const char **av, size_t ac, char *det,
    size_t detlen)
{
	char		 head[256];
	const char	*branch = c->pol->branch;
	int		 hb;
	const char	*which;
	size_t		 v, i;
	int		 hard = 0;

	if (!floor_is(floor_base(av[0]), "git") || (v = floor_git_verb(av, ac)) >= ac ||
	    strcmp(av[v], "reset") != 0)
		return 0;
	for (i = v + 1; i < ac; i++)
		if (strncmp(av[i], "--", 2) == 0 && av[i][2] != '\0' &&
		    floor_git_long(av[i], "hard", 3))
			hard = 1;
	if (!hard)
		return 0;
	if (branch == NULL) {
		/* Where the shell is: after a cd, or the worktree. */
		hb = floor_head_branch(c->cwd[0] == '/' ? c->cwd : c->pol->worktree, head,
		    sizeof head);
		if (hb == 1)
			return 0;	/* detached: no branch moves */
		if (hb == 0)
			branch = head;
	}
	if (branch == NULL) {
		snprintf(det, detlen, "the current branch, which the floor cannot see");
		return 1;
	}
	if (floor_protected(c, branch, &which)) {
		snprintf(det, detlen, "protected branch '%s'", which);
		return 1;
	}
	return 0;
}

static int
floor_st_chmod_777(const char **av, size_t ac)
{
	static const char *const modes[] = { "777", "0777", "a+rwx", "ugo+rwx", "a=rwx",
	    "ugo=rwx", "+rwx", "o+w", "o+rwx", "a+w", NULL };
	int	 rec = 0, wide = 0;

	if (strcmp(floor_base(av[0]), "chmod") != 0)
		return 0;
	for (size_t i = 1; i < ac; i++) {
		const char *a = av[i];
		if (strcmp(a, "--recursive") == 0)
			rec = 1;
		else if (a[0] == '-' && a[1] != '-' && strchr(a, 'R') != NULL &&
		    strspn(a + 1, "RvcfH") == strlen(a + 1))
			rec = 1;
		else
			for (size_t k = 0; modes[k] != NULL; k++)
				if (strcmp(a, modes[k]) == 0)
					wide = 1;
	}
	return rec && wide;
}

static int
floor_st_git_config_global(const char **av, size_t ac)
{
	static const char *const reads[] = { "--get", "--get-all", "--get-regexp",
	    "--get-urlmatch", "--list", "-l", "--get-color", "--get-colorbool", "get",
	    "list", NULL };
	static const char *const writes[] = { "--unset", "--unset-all", "--add",
	    "--replace-all", "--edit", "-e", "--rename-section", "--remove-section",
	    "set", "unset", "edit", "rename-section", "remove-section", NULL };
	size_t	 v, i, pos = 0;
	int	 scope = 0, write = 0, read = 0;

	if (!floor_is(floor_base(av[0]), "git") || (v = floor_git_verb(av, ac)) >= ac ||
	    strcmp(av[v], "config") != 0)
		return 0;
	for (i = v + 1; i < ac; i++) {
		const char *a = av[i];
		if (strcmp(a, "--global") == 0 || strcmp(a, "--system") == 0)
			scope = 1;
		else if (floor_is_any(a, writes) && !floor_has_marker(a))
			write = 1;
		else if (floor_is_any(a, reads) && !floor_has_marker(a))
			read = 1;
		else if (a[0] != '-')
			pos++;
	}
	return scope && (write || (!read && pos >= 2));
}

/*
 * Every starter matcher on one reading of a simple command: each match raises the
 * risk; a match of an enabled configured rule naming that matcher is a configured
 * hit (the worst one is kept, a pattern rule's hit is never replaced).
 */
static void
floor_starter_check(struct floor_ctx *c, const struct shell_list *l, size_t idx,
    const char **av, size_t ac)
{
	const struct floor_starter	*st;
	char				 det[200], rule[64];
	int				 hit;
	size_t				 k, i;

	if (ac == 0)
		return;
	floor_outside_argv(c, av, ac);
	for (k = 0; k < FLOOR_ST_N; k++) {
		st = &floor_starter_table[k];
		det[0] = '\0';
		switch (k) {
		case FLOOR_ST_RM_ROOT:
			hit = floor_st_rm_root(c, av, ac, det, sizeof det);
			break;
		case FLOOR_ST_CURL_PIPE:
			hit = floor_st_curl_pipe(c, l, idx, av, ac);
			break;
		case FLOOR_ST_BRANCH_DELETE:
			hit = floor_st_branch_delete(c, av, ac, det, sizeof det);
			break;
		case FLOOR_ST_RESET_HARD:
			hit = floor_st_reset_hard(c, av, ac, det, sizeof det);
			break;
		case FLOOR_ST_CHMOD_777:
			hit = floor_st_chmod_777(av, ac);
			break;
		case FLOOR_ST_GIT_CONFIG_GLOBAL:
			hit = floor_st_git_config_global(av, ac);
			break;
		default:
			hit = strcmp(floor_base(av[0]), "sudo") == 0 ||
			    strcmp(floor_base(av[0]), "doas") == 0;
			break;
		}
		if (!hit)
			continue;
		snprintf(rule, sizeof rule, "config.%s", st->id);
		floor_raise(c, st->risk, rule);
		floor_trace(c, l->v[idx].depth, "starter matcher %s matches (risk %s)%s%s",
		    st->id, floor_risk_name(st->risk), det[0] ? ": " : "", det);
		if (c->done || (c->cfg_hit && c->cfg_risk >= (int)st->risk))
			continue;
		for (i = 0; i < c->pol->n_rules; i++) {
			const struct config_rule *r = &c->pol->rules[i];
			if (!r->enabled || r->builtin == NULL || r->id == NULL ||
			    strcmp(r->builtin, st->id) != 0)
				continue;
			c->cfg_hit = 1;
			c->cfg_risk = (int)st->risk;
			c->cfg.verdict = FLOOR_DENY;
			c->cfg.floor = 0;
			snprintf(c->cfg.rule, sizeof c->cfg.rule, "config.%s", r->id);
			if (r->reason != NULL && r->from_file)
				snprintf(c->cfg.reason, sizeof c->cfg.reason, "%s", r->reason);
			else
				snprintf(c->cfg.reason, sizeof c->cfg.reason, "%s%s%s is "
				    "blocked by rule '%s' of the Clockwork configuration (a "
				    "starter rule; it can be switched off in config.yaml)",
				    st->reason, det[0] ? ": " : "", det, r->id);
			break;
		}
	}
}

/* Is w (resolved as floor_abs does) outside the worktree and the scratch places? */
static int
floor_outside_test(struct floor_ctx *c, const char *w)
{
	static const char *const fine[] = { "/tmp", "/var/tmp", "/dev" };
	char	 abs[PATH_MAX], wt[PATH_MAX];

	if (c->pol->worktree == NULL || floor_lexical(c->pol->worktree, wt,
	    sizeof wt) == -1 || floor_abs(c, w, abs, sizeof abs) == -1)
		return 0;
	if (floor_covers(wt, abs))
		return 0;
	/* Scratch places count as scratch only when no home lies in them. */
	if (floor_covers(c->home, abs) || floor_covers(c->home_canon, abs) ||
	    (c->cwhome != NULL && c->cwhome[0] == '/' && floor_covers(c->cwhome, abs)))
		return 1;
	for (size_t i = 0; i < sizeof fine / sizeof fine[0]; i++)
		if (floor_covers(fine[i], abs))
			return 0;
	return 1;
}

/* Paths a command writes, or acts on, outside the worktree raise the risk. */
static void
floor_outside_path(struct floor_ctx *c, const char *w)
{
	char	 abs[PATH_MAX];

	if (!floor_outside_test(c, w) || floor_abs(c, w, abs, sizeof abs) == -1)
		return;
	floor_raise(c, FLOOR_RISK_OUTSIDE, "risk.outside_worktree");
	floor_trace(c, 0, "'%s' is outside the worktree (risk outside_worktree)", abs);
}

static void
floor_outside_argv(struct floor_ctx *c, const char **av, size_t ac)
{
	static const char *const writers[] = { "rm", "rmdir", "mv", "cp", "ln", "mkdir",
	    "touch", "chmod", "chown", "chgrp", "tee", "truncate", "install", "rsync",
	    "shred", "unlink", "dd", "cd", "pushd", "tar", "unzip", "sed", NULL };
	const char	*p = floor_base(av[0]);
	size_t		 k;

	for (k = 0; writers[k] != NULL; k++)
		if (strcmp(p, writers[k]) == 0)
			break;
	if (writers[k] == NULL)
		return;
	for (size_t i = 1; i < ac; i++) {
		const char *a = av[i];
		if (strcmp(p, "dd") == 0 && strncmp(a, "of=", 3) == 0)
			a += 3;
		if (a[0] == '-' || (strcmp(p, "sed") == 0 && a[0] != '/'))
			continue;
		if (a[0] == '/' || strncmp(a, "..", 2) == 0 || c->cwd[0] == '/')
			floor_outside_path(c, a);
	}
}

/*
 * Configured rules see a simple command with the program by its name (/bin/rm is rm),
 * once as written and once normalised, so a rule can name sudo itself or what it runs.
 */
static void
floor_config(struct floor_ctx *c, const char **av, size_t ac)
{
	const char	*saved;
	char		*norm;
	size_t		 i;

	/* A pattern rule the user wrote wins over a starter rule's hit. */
	if (c->done || (c->cfg_hit && c->cfg_risk > FLOOR_RISK_DESTRUCTIVE) ||
	    c->pol->n_rules == 0 || ac == 0)
		return;
	saved = av[0];
	av[0] = floor_base(av[0]);
	norm = floor_join(av, ac);
	av[0] = saved;
	if (norm == NULL) {
		c->oom = 1;
		return;
	}
	for (i = 0; i < c->pol->n_rules; i++) {
		const struct config_rule *r = &c->pol->rules[i];
		if (!r->enabled || r->match == NULL || r->id == NULL)
			continue;
		if (fnmatch(r->match, norm, 0) != 0)
			continue;
		c->cfg_hit = 1;
		c->cfg_risk = FLOOR_RISK_DESTRUCTIVE + 1;
		c->cfg.verdict = FLOOR_DENY;
		c->cfg.floor = 0;
		snprintf(c->cfg.rule, sizeof c->cfg.rule, "config.%s", r->id);
		floor_trace(c, 0, "configured rule '%s' (match '%s') matches", r->id,
		    r->match);
		if (r->reason != NULL && r->reason[0] != '\0')
			snprintf(c->cfg.reason, sizeof c->cfg.reason, "%s", r->reason);
		else
			snprintf(c->cfg.reason, sizeof c->cfg.reason, "the command matches "
			    "configured rule '%s'", r->id);
		break;
	}
	free(norm);
}

/*
 * An environment assignment (NAME=value before a command, or given to env) whose
 * variable makes a program run something else: a preload, a shell's startup file, a
 * search path, git's or an interpreter's hooks. Not ordinary; a value git or a pager
 * runs as shell text is judged as a command too.
 */
static void
floor_assign_check(struct floor_ctx *c, const char *a, int depth)
{
	static const char *const names[] = { "LD_PRELOAD", "LD_LIBRARY_PATH",
	    "LD_AUDIT", "BASH_ENV", "ENV", "PROMPT_COMMAND", "SHELLOPTS", "BASHOPTS",
	    "PATH", "IFS", "PAGER", "EDITOR", "VISUAL", "MANPAGER", "LESSOPEN",
	    "LESSCLOSE", "PYTHONSTARTUP", "PYTHONPATH", "PYTHONHOME", "NODE_OPTIONS",
	    "NODE_PATH", "PERL5OPT", "PERL5LIB", "RUBYOPT", "RUBYLIB", "SSH_ASKPASS",
	    "SUDO_ASKPASS", "CARGO_HOME", "RUSTC_WRAPPER", "RUSTC", "CC", "CXX",
	    "MAKEFLAGS", "npm_config_script_shell", "NPM_CONFIG_SCRIPT_SHELL", NULL };
	const char	*eq = strchr(a, '=');
	char		 name[128];
	size_t		 n;
	int		 hit = 0, text = 0;

	if (eq == NULL || (n = (size_t)(eq - a)) == 0 || n >= sizeof name)
		return;
	memcpy(name, a, n);
	name[n] = '\0';
	if (floor_has_marker(name))
		hit = 1;
	for (size_t k = 0; !hit && names[k] != NULL; k++)
		hit = strcmp(name, names[k]) == 0;
	if (!hit && strncmp(name, "DYLD_", 5) == 0)
		hit = 1;
	/* GIT_AUTHOR_* and GIT_COMMITTER_* only name who wrote a commit. */
	if (!hit && strncmp(name, "GIT_", 4) == 0 &&
	    strncmp(name, "GIT_AUTHOR_", 11) != 0 &&
	    strncmp(name, "GIT_COMMITTER_", 14) != 0 &&
	    strcmp(name, "GIT_TERMINAL_PROMPT") != 0)
		hit = 1;
	if (!hit)
		return;
	c->opaque = 1;
	floor_raise(c, FLOOR_RISK_OUTSIDE, "risk.env_exec");
	floor_trace(c, depth, "environment variable %s changes what runs (risk "
	    "outside_worktree)", name);
	text = strcmp(name, "PAGER") == 0 || strcmp(name, "EDITOR") == 0 ||
	    strcmp(name, "VISUAL") == 0 || strcmp(name, "GIT_PAGER") == 0 ||
	    strcmp(name, "GIT_EDITOR") == 0 || strcmp(name, "GIT_SSH_COMMAND") == 0 ||
	    strcmp(name, "GIT_SEQUENCE_EDITOR") == 0 || strcmp(name, "MANPAGER") == 0;
	if (text && depth < SHELL_MAX_DEPTH &&
	    floor_text(c, eq + 1, strlen(eq + 1), depth + 1) == -1)
		c->oom = 1;
}

/*
 * The family of one simple command as finally checked (wrappers stripped): the
 * program, and its subcommand for the programs that have them. A program given by a
 * path outside the system's directories keeps the path, so a family for ./run.sh
 * never covers /tmp/x/run.sh.
 */
static void
floor_family(struct floor_ctx *c, const char **av, size_t ac)
{
	static const char *const verbs[] = { "npm", "pnpm", "yarn", "bun", "cargo", "go",
	    "pip", "pip3", "uv", "poetry", "docker", "podman", "kubectl", "make",
	    "gmake", "dotnet", "mvn", "gradle", "gradlew", "deno", "rustup", "gh", "gem",
	    "bundle", "rake", "composer", "mix", "swift", "zig", "just", "task", "nox",
	    "tox", "hatch", "pdm", "pipenv", "apt", "apt-get", "brew", "cmake", "ctest",
	    "meson", "ninja", "stack", "cabal", "conda", "helm", "terraform", NULL };
	char		 fam[FLOOR_FAMILY_MAX], run[FLOOR_FAMILY_MAX];
	const char	*p = av[0], *v = NULL;
	size_t		 i;

	if (c->opaque)
		return;
	if (c->nfam >= FLOOR_MAX_FAMILIES) {
		c->opaque = 1;
		return;
	}
	if (strchr(p, '/') == NULL || strncmp(p, "/usr/", 5) == 0 ||
	    strncmp(p, "/bin/", 5) == 0 || strncmp(p, "/sbin/", 6) == 0)
		p = floor_base(p);
	if (floor_is(floor_base(av[0]), "git") && !floor_has_marker(av[0])) {
		if ((i = floor_git_verb(av, ac)) < ac)
			v = av[i];
	} else {
		for (i = 0; verbs[i] != NULL; i++)
			if (strcmp(floor_base(p), verbs[i]) == 0)
				break;
		if (verbs[i] != NULL) {
			/* The first word that is not an option, if it is a plain name. */
			for (i = 1; i < ac && av[i][0] == '-'; i++)
				if (strchr(av[i], '=') == NULL && av[i][1] != '-' &&
				    av[i][2] == '\0' && strchr("CfjI", av[i][1]) != NULL)
					i++;	/* -C DIR, -f FILE, -j N */
			if (i < ac)
				v = av[i];
			/* npm run NAME, yarn run NAME: the script is the subcommand. */
			if (v != NULL && (strcmp(v, "run") == 0 || strcmp(v, "run-script") == 0) &&
			    i + 1 < ac && av[i + 1][0] != '-' &&
			    (size_t)snprintf(run, sizeof run, "%s %s", v, av[i + 1]) < sizeof run)
				v = run;
		}
	}
	if (v != NULL && (v[0] == '\0' || strspn(v, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789:._- ") != strlen(v) || v[0] == '.'))
		v = NULL;
	if (floor_has_marker(p) || (size_t)snprintf(fam, sizeof fam, "%s%s%s", p,
	    v != NULL ? " " : "", v != NULL ? v : "") >= sizeof fam) {
		c->opaque = 1;
		return;
	}
	for (i = 0; i < c->nfam; i++)
		if (strcmp(c->fam[i], fam) == 0)
			return;
	memcpy(c->fam[c->nfam++], fam, sizeof fam);
}

/*
 * What the floor cannot see it cannot call ordinary: a program named by a variable
 * or a command substitution; inline code given to an interpreter (which no remembered
 * answer may cover); a delete or write whose paths come from elsewhere (xargs, $VAR).
 * find's own {} is not counted here: its start paths are judged instead.
 */
static void
floor_checked(struct floor_ctx *c, const char **av, size_t ac, int depth)
{
	static const char *const writers[] = { "rm", "mv", "cp", "ln", "chmod", "chown",
	    "chgrp", "tee", "truncate", "install", "rsync", "shred", "unlink", "dd",
	    "rmdir", NULL };
	const char	*p = floor_base(av[0]);
	int		 rec = 0, hidden = 0, outside = 0;
	size_t		 k;

	if (floor_has_marker(av[0])) {
		c->opaque = 1;
		floor_raise(c, FLOOR_RISK_OUTSIDE, "risk.hidden_command");
		floor_trace(c, depth, "the program is not known before the line runs (risk "
		    "outside_worktree)");
		return;
	}
	if (strcmp(p, "curl") == 0 || strcmp(p, "wget") == 0)
		c->saw_fetch = 1;
	if (floor_is_interp(p)) {
		c->saw_interp = 1;
		for (k = 1; k < ac; k++)
			if (strcmp(av[k], "-c") == 0 || strcmp(av[k], "-e") == 0 ||
			    strcmp(av[k], "-E") == 0 || strcmp(av[k], "--eval") == 0 ||
			    strcmp(av[k], "-p") == 0 || strcmp(av[k], "-r") == 0 ||
			    strcmp(av[k], "-") == 0)
				c->opaque = 1;
		if (ac == 1)
			c->opaque = 1;	/* reads its program from stdin */
	}
	for (k = 0; writers[k] != NULL; k++)
		if (strcmp(p, writers[k]) == 0)
			break;
	if (writers[k] != NULL) {
		for (size_t i = 1; i < ac; i++) {
			if (av[i] == floor_one_marker)
				continue;
			if (av[i][0] == '-' && !floor_has_marker(av[i])) {
				if (strcmp(av[i], "--recursive") == 0 ||
				    (av[i][1] != '-' && strpbrk(av[i], "rR") != NULL))
					rec = 1;
				continue;
			}
			if (floor_has_marker(av[i]))
				hidden = 1;
			else if (strcmp(p, "rm") == 0 && floor_outside_test(c, av[i]))
				outside = 1;
		}
		if (outside && rec) {
			floor_raise(c, FLOOR_RISK_DESTRUCTIVE, "risk.delete_outside");
			floor_trace(c, depth, "a recursive delete outside the worktree (risk "
			    "destructive)");
		}
		if (hidden && strcmp(p, "rm") == 0 && rec) {
			floor_raise(c, FLOOR_RISK_DESTRUCTIVE, "risk.delete_unknown");
			floor_trace(c, depth, "a recursive delete of paths not known before "
			    "the line runs (risk destructive)");
		} else if (hidden) {
			floor_raise(c, FLOOR_RISK_OUTSIDE, "risk.unknown_path");
			floor_trace(c, depth, "'%s' acts on paths not known before the line "
			    "runs (risk outside_worktree)", p);
		}
	}
	floor_family(c, av, ac);
}

/*
 * find's start paths (the words before its first test or action): find acting on
 * them (-delete, -exec) outside the worktree is not ordinary, and deleting there is
 * destructive.
 */
static void
floor_find(struct floor_ctx *c, const char **av, size_t ac)
{
	int	 del = 0, act = 0, outside = 0, rm = 0;
	size_t	 i;

	for (i = 1; i < ac; i++) {
		if (strcmp(av[i], "-delete") == 0)
			del = 1;
		else if (strncmp(av[i], "-exec", 5) == 0 || strncmp(av[i], "-ok", 3) == 0) {
			act = 1;
			if (i + 1 < ac && (strcmp(floor_base(av[i + 1]), "rm") == 0 ||
			    strcmp(floor_base(av[i + 1]), "shred") == 0))
				rm = 1;
		} else if (strcmp(av[i], "-fprint") == 0 || strcmp(av[i], "-fprintf") == 0 ||
		    strcmp(av[i], "-fls") == 0 || strcmp(av[i], "-fprint0") == 0)
			act = 1;
	}
	for (i = 1; i < ac; i++) {
		const char *a = av[i];
		if (a[0] == '-' || a[0] == '(' || a[0] == '!' || a[0] == ')')
			break;
		if (floor_has_marker(a) || floor_outside_test(c, a))
			outside = 1;
	}
	if (!del && !act)
		return;
	if (outside && (del || rm))
		floor_raise(c, FLOOR_RISK_DESTRUCTIVE, "risk.delete_outside");
	else if (outside)
		floor_raise(c, FLOOR_RISK_OUTSIDE, "risk.outside_worktree");
}

/*
 * Strip the wrappers that run their arguments as a command, then check what is left.
 * Returns through the checks below; wrappers whose argument is itself shell text
 * (sh -c, eval, su -c, watch) are parsed again.
 */
static void
floor_argv(struct floor_ctx *c, const struct shell_list *l, size_t idx,
    const char **av, size_t ac, int depth)
{
	const char	*p, *what;
	size_t		 i, guard, alt;

	for (guard = 0; ac > 0 && guard < 64 && !c->done; guard++) {
		floor_starter_check(c, l, idx, av, ac);
		p = floor_base(av[0]);
		i = 0;
		alt = 0;
		if (strcmp(p, "sudo") == 0 || strcmp(p, "doas") == 0) {
			c->opaque = 1;
			i = floor_skip_opts(av, ac, 1, "ugCDhprtUTa", &alt);
			while (i < ac && strchr(av[i], '=') != NULL && av[i][0] != '=')
				i++;
		} else if (strcmp(p, "env") == 0) {
			for (i = 1; i < ac; i++) {
				const char *a = av[i];
				if (strcmp(a, "--") == 0) {
					i++;
					break;
				}
				if (strcmp(a, "-S") == 0 || strcmp(a, "--split-string") == 0) {
					/* env -S "cmd args": the string is split into words. */
					c->opaque = 1;
					if (i + 1 < ac)
						floor_text_join(c, av + i + 1, ac - i - 1, depth + 1);
					return;
				}
				if (a[0] == '-' && a[1] != '\0') {
					if ((a[2] == '\0' && (a[1] == 'u' || a[1] == 'C')) ||
					    strcmp(a, "--unset") == 0 || strcmp(a, "--chdir") == 0)
						i++;
					continue;
				}
				if (strchr(a, '=') == NULL)
					break;
				floor_assign_check(c, a, depth);
			}
		} else if (strcmp(p, "command") == 0 || strcmp(p, "builtin") == 0) {
			for (i = 1; i < ac && av[i][0] == '-'; i++)
				if (strchr(av[i], 'v') || strchr(av[i], 'V'))
					return;		/* only looks the name up */
		} else if (strcmp(p, "exec") == 0) {
			i = floor_skip_opts(av, ac, 1, "a", &alt);
		} else if (strcmp(p, "nohup") == 0 || strcmp(p, "setsid") == 0 ||
		    strcmp(p, "chronic") == 0 || strcmp(p, "unbuffer") == 0 ||
		    strcmp(p, "busybox") == 0 || strcmp(p, "corepack") == 0) {
			i = floor_skip_opts(av, ac, 1, NULL, &alt);
		} else if (strcmp(p, "time") == 0) {
			i = floor_skip_opts(av, ac, 1, "fo", &alt);
		} else if (strcmp(p, "npx") == 0 || strcmp(p, "bunx") == 0 ||
		    strcmp(p, "pnpx") == 0 || strcmp(p, "uvx") == 0) {
			/* These run a package's binary: npx npm publish is npm publish. */
			i = floor_skip_opts(av, ac, 1, "p", &alt);
		} else if ((strcmp(p, "npm") == 0 || strcmp(p, "pnpm") == 0 ||
		    strcmp(p, "yarn") == 0 || strcmp(p, "bun") == 0) && ac > 1 &&
		    (strcmp(av[1], "exec") == 0 || strcmp(av[1], "x") == 0 ||
		    strcmp(av[1], "dlx") == 0)) {
			/* npm exec / pnpm dlx / yarn dlx / bun x run a package's binary. */
			for (i = 2; i < ac; i++) {
				if (strcmp(av[i], "-c") == 0 || strcmp(av[i], "--call") == 0) {
					c->opaque = 1;
					if (i + 1 < ac)
						floor_text_join(c, av + i + 1, 1, depth + 1);
					return;
				}
				if (strcmp(av[i], "--") == 0) {
					i++;
					break;
				}
				if (av[i][0] != '-')
					break;
				if (strcmp(av[i], "-p") == 0 || strcmp(av[i], "--package") == 0)
					i++;
			}
		} else if (strcmp(p, "bundle") == 0 && ac > 1 &&
		    (strcmp(av[1], "exec") == 0 || strcmp(av[1], "ex") == 0)) {
			i = floor_skip_opts(av, ac, 2, NULL, &alt);
		} else if (strcmp(p, "rustup") == 0 && ac > 1 && strcmp(av[1], "run") == 0) {
			/* rustup run [--install] TOOLCHAIN CMD... */
			i = floor_skip_opts(av, ac, 2, NULL, &alt);
			i += i < ac;
			alt += alt != 0 && alt < ac;
		} else if (strcmp(p, "nice") == 0) {
			i = floor_skip_opts(av, ac, 1, "n", &alt);
		} else if (strcmp(p, "ionice") == 0 || strcmp(p, "stdbuf") == 0) {
			i = floor_skip_opts(av, ac, 1, "cnioe", &alt);
		} else if (strcmp(p, "timeout") == 0) {
			i = floor_skip_opts(av, ac, 1, "sk", &alt);
			i += i < ac;					/* DURATION */
			alt += alt != 0 && alt < ac;
		} else if (strcmp(p, "xargs") == 0) {
			/* -i, -l and -e take their value attached, if at all. */
			i = floor_skip_opts(av, ac, 1, "InPLdEsa", &alt);
			if (i >= ac)
				return;
			/* xargs appends words from stdin that the floor cannot see. */
			c->opaque = 1;
			const char **nv = calloc(ac - i + 1, sizeof *nv);
			if (nv == NULL) {
				c->oom = 1;
				return;
			}
			memcpy(nv, av + i, (ac - i) * sizeof *nv);
			nv[ac - i] = floor_split_marker;
			floor_argv(c, l, idx, nv, ac - i + 1, depth);
			free(nv);
			return;
		} else if (strcmp(p, "find") == 0) {
			floor_find(c, av, ac);
			for (i = 1; i < ac; i++) {
				if (strcmp(av[i], "-exec") != 0 && strcmp(av[i], "-execdir") != 0 &&
				    strcmp(av[i], "-ok") != 0 && strcmp(av[i], "-okdir") != 0)
					continue;
				size_t s = i + 1, e = s;
				c->opaque = 1;
				while (e < ac && strcmp(av[e], ";") != 0 && strcmp(av[e], "+") != 0)
					e++;
				const char **nv = calloc(e - s + 1, sizeof *nv);
				if (nv == NULL) {
					c->oom = 1;
					return;
				}
				for (size_t k = s; k < e; k++)
					nv[k - s] = strcmp(av[k], "{}") == 0 ? floor_one_marker :
					    av[k];
				floor_argv(c, l, idx, nv, e - s, depth);
				free(nv);
				i = e;
			}
			break;
		} else if ((strcmp(p, "uv") == 0 || strcmp(p, "poetry") == 0 ||
		    strcmp(p, "pdm") == 0 || strcmp(p, "hatch") == 0 ||
		    strcmp(p, "pipx") == 0 || strcmp(p, "pipenv") == 0) &&
		    ac > 1 && strcmp(av[1], "run") == 0) {
			i = floor_skip_opts(av, ac, 2, "pe", &alt);
		} else if (strcmp(p, "uv") == 0 && ac > 2 && strcmp(av[1], "tool") == 0 &&
		    strcmp(av[2], "run") == 0) {
			i = floor_skip_opts(av, ac, 3, NULL, &alt);
		} else if (floor_is_python(p)) {
			int	 mod = 0;

			for (i = 1; i < ac && !mod; i++) {
				const char *a = av[i];
				if (a[0] != '-' || strcmp(a, "-c") == 0 || strcmp(a, "-") == 0)
					break;
				if (strncmp(a, "-m", 2) == 0) {
					/* python -m MOD args: check as the program MOD. */
					mod = 1;
					if (a[2] != '\0') {
						av[i] = a + 2;
						i--;
					}
				} else if ((a[1] == 'W' || a[1] == 'X') && a[2] == '\0')
					i++;
			}
			if (!mod)
				break;
		} else if (floor_is_shell(p)) {
			c->opaque = 1;
			c->saw_interp = 1;
			floor_shell(c, l, idx, av, ac, depth);
			return;
		} else if (strcmp(p, "eval") == 0) {
			c->opaque = 1;
			floor_text_join(c, av + 1, ac - 1, depth + 1);
			return;
		} else if (strcmp(p, "su") == 0) {
			c->opaque = 1;
			for (i = 1; i + 1 < ac; i++)
				if (strcmp(av[i], "-c") == 0 || strcmp(av[i], "--command") == 0)
					floor_text_join(c, av + i + 1, 1, depth + 1);
			return;
		} else if (strcmp(p, "watch") == 0) {
			c->opaque = 1;
			i = floor_skip_opts(av, ac, 1, "nqd", &alt);
			floor_text_join(c, av + i, ac - i, depth + 1);
			return;
		}
		if (i == 0)
			break;
		if (alt != 0 && alt < ac && alt != i && c->forks < 32) {
			/* The other reading of an ambiguous long option. */
			c->forks++;
			floor_argv(c, l, idx, av + alt, ac - alt, depth);
		}
		if (i >= ac)
			return;
		floor_trace(c, depth, "wrapper '%s' stripped", p);
		av += i;
		ac -= i;
	}
	if (ac == 0 || c->done)
		return;
	floor_trace_argv(c, depth, "checked", av, ac);
	floor_checked(c, av, ac, depth);

	p = floor_base(av[0]);
	if (floor_is(p, "git") || floor_is(p, "hub"))
		floor_git(c, av, ac, depth);
	if (!c->done && (what = floor_publish(av, ac)) != NULL)
		floor_deny(c, "floor.publish", "package publishing (%s) is blocked by the "
		    "Clockwork floor: publishing, withdrawing or handing over a package is "
		    "left to a person (build, test and pack instead)", what);
	floor_config(c, av, ac);
}

/*
 * Track cd and pushd, so that later relative paths in the same command line resolve
 * against where the shell went. A directory the floor cannot know ("cd -", "cd
 * $DIR") forgets it. Subshells are not told apart: a cd in one is taken to hold after
 * it, which can only make the floor see more paths as credential ones, never fewer.
 */
static void
floor_cd(struct floor_ctx *c, const struct shell_cmd *cmd)
{
	char		 buf[PATH_MAX * 2 + 2];
	const char	*p = floor_base(cmd->argv[0]), *d = NULL;
	size_t		 i;

	if (strcmp(p, "cd") != 0 && strcmp(p, "pushd") != 0)
		return;
	for (i = 1; i < cmd->argc; i++) {
		if (strcmp(cmd->argv[i], "--") == 0) {
			i++;
			break;
		}
		if (cmd->argv[i][0] != '-' || cmd->argv[i][1] == '\0')
			break;
	}
	d = i < cmd->argc ? cmd->argv[i] : c->home;
	if (strcmp(d, "-") == 0 || floor_has_marker(d)) {
		c->cwd[0] = '\0';
		return;
	}
	if (d[0] == '/')
		snprintf(buf, sizeof buf, "%s", d);
	else if (c->cwd[0] != '\0')
		snprintf(buf, sizeof buf, "%s/%s", c->cwd, d);
	else
		snprintf(buf, sizeof buf, "%s", d);
	if (buf[0] == '/') {
		if (floor_lexical(buf, c->cwd, sizeof c->cwd) == -1)
			c->cwd[0] = '\0';
	} else if (strlen(buf) < sizeof c->cwd)
		strcpy(c->cwd, buf);
	else
		c->cwd[0] = '\0';
	floor_trace(c, cmd->depth, "the shell's directory is now %s", c->cwd[0] ?
	    c->cwd : "unknown");
}

static void
floor_cmd(struct floor_ctx *c, const struct shell_list *l, size_t idx)
{
	const struct shell_cmd	*cmd = &l->v[idx];
	const char		**av;
	size_t			 i;

	floor_trace_argv(c, cmd->depth, cmd->pipe_in >= 0 ? "simple command (piped "
	    "into)" : "simple command", (const char **)cmd->argv, cmd->argc);
	for (i = 0; i < cmd->argc && !c->done; i++)
		floor_cred_check(c, cmd->argv[i]);
	for (i = 0; i < cmd->nassigns && !c->done; i++) {
		floor_cred_check(c, cmd->assigns[i]);
		floor_assign_check(c, cmd->assigns[i], cmd->depth);
	}
	for (i = 0; i < cmd->nredirs && !c->done; i++) {
		if (cmd->redirs[i].kind == SHELL_REDIR_IN ||
		    cmd->redirs[i].kind == SHELL_REDIR_OUT)
			floor_cred_check(c, cmd->redirs[i].word);
		if (cmd->redirs[i].kind == SHELL_REDIR_OUT)
			floor_outside_path(c, cmd->redirs[i].word);
	}
	if (c->done || cmd->argc == 0)
		return;
	/* A private copy: normalisation rewrites entries (python -mMOD). */
	if ((av = calloc(cmd->argc + 1, sizeof *av)) == NULL) {
		c->oom = 1;
		return;
	}
	memcpy(av, cmd->argv, cmd->argc * sizeof *av);
	floor_config(c, av, cmd->argc);
	floor_argv(c, l, idx, av, cmd->argc, cmd->depth);
	free(av);
	floor_cd(c, cmd);
}

static int
floor_text(struct floor_ctx *c, const char *text, size_t len, int depth)
{
	struct shell_list	 l = { 0 };
	char			 err[160];

	if (c->done)
		return 0;
	if (shell_parse(text, len, c->home, depth, &l, err, sizeof err) == -1) {
		int e = errno;
		shell_list_free(&l);
		if (e == ENOMEM)
			return -1;
		floor_deny(c, "floor.parse", "the command could not be parsed (%s); the "
		    "Clockwork floor fails closed", err);
		return 0;
	}
	for (size_t i = 0; i < l.n && !c->done && !c->oom; i++)
		floor_cmd(c, &l, i);
	shell_list_free(&l);
	return c->oom ? -1 : 0;
}

/*
 * A control character other than tab and newline: the shell, a terminal showing the
 * command to a person, and the floor can each read the line differently (a NUL ends it
 * for C, not for JSON; a carriage return hides what came before it on screen).
 */
static int
floor_controls(const char *command, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)command[i];
		if (ch < 0x20 && ch != '\t' && ch != '\n')
			return ch;
	}
	return -1;
}

static int
floor_run(const char *command, const struct floor_policy *pol,
    struct floor_result *out, struct floor_trace *trace)
{
	struct floor_ctx	 c;
	char			 home_buf[PATH_MAX];
	size_t			 len;
	int			 ch;

	memset(out, 0, sizeof *out);
	out->verdict = FLOOR_ALLOW;
	memset(&c, 0, sizeof c);
	c.trace = trace;
	c.pol = pol;
	c.home = pol->home;
	c.cwhome = pol->cwhome;
	if (c.home == NULL || c.home[0] != '/') {
		/* Credential entries are relative to a home; take the process's. */
		if (paths_home(c.home_canon, sizeof c.home_canon) == -1)
			snprintf(c.home_canon, sizeof c.home_canon, "/nonexistent");
		c.home = home_buf;
		snprintf(home_buf, sizeof home_buf, "%s", c.home_canon);
	}
	c.out = out;
	if (paths_canonical(c.home, c.home_canon, sizeof c.home_canon) == -1)
		snprintf(c.home_canon, sizeof c.home_canon, "%s", c.home);
	len = strnlen(command, FLOOR_MAX_COMMAND + 1);
	if (len > FLOOR_MAX_COMMAND) {
		floor_deny(&c, "floor.parse", "the command is longer than %d bytes; the "
		    "Clockwork floor fails closed", FLOOR_MAX_COMMAND);
		return 0;
	}
	if ((ch = floor_controls(command, len)) != -1) {
		floor_deny(&c, "floor.control_char", "the command holds control character "
		    "0x%02x, which the shell, the floor and a person reading it could each "
		    "take differently; the Clockwork floor refuses it (write it as an "
		    "escape such as $'\\x%02x')", ch, ch);
		floor_trace(&c, 0, "refused before parsing: control character 0x%02x", ch);
		return 0;
	}
	if (floor_text(&c, command, len, 0) == -1 || c.oom) {
		/* A caller that ignores the -1 still sees a deny. */
		c.done = 0;
		floor_deny(&c, "floor.parse", "the command could not be evaluated (out "
		    "of memory); the Clockwork floor fails closed");
		errno = ENOMEM;
		return -1;
	}
	if (!c.done && c.cfg_hit)
		*out = c.cfg;
	/* Fetched in one part of the line, run by a shell or interpreter in another. */
	if (c.saw_fetch && c.saw_interp)
		floor_raise(&c, FLOOR_RISK_FETCH_EXEC, "risk.fetch_then_run");
	memcpy(out->families, c.fam, sizeof out->families);
	out->n_families = c.nfam;
	out->family_opaque = c.opaque || c.nfam == 0;
	out->risk = c.risk;
	snprintf(out->risk_rule, sizeof out->risk_rule, "%s", c.risk_rule);
	if (trace != NULL) {
		if (out->verdict == FLOOR_DENY)
			floor_trace(&c, 0, "verdict: deny, rule %s (%s): %s", out->rule,
			    out->floor ? "floor rule, always on" : "configured rule",
			    out->reason);
		else
			floor_trace(&c, 0, "verdict: allow: no floor rule matched and none "
			    "of the %zu configured rules did", pol->n_rules);
		floor_trace(&c, 0, "risk: %s%s%s%s", floor_risk_name(out->risk),
		    out->risk_rule[0] ? " (raised by " : "", out->risk_rule,
		    out->risk_rule[0] ? ")" : "");
	}
	return 0;
}

int
floor_evaluate(const char *command, const struct floor_policy *pol,
    struct floor_result *out)
{
	return floor_run(command, pol, out, NULL);
}

int
floor_explain(const char *command, const struct floor_policy *pol,
    struct floor_result *out, struct floor_trace *trace)
{
	return floor_run(command, pol, out, trace);
}
