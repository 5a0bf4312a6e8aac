/*
 * A recursive-descent parser over the command text itself (there is no separate token
 * stream): lists, pipelines, simple and compound commands, words with their quoting and
 * expansions, redirections and heredocs. It accepts a superset of what bash accepts
 * where that is cheaper (stray separators, keywords anywhere), because a command bash
 * rejects never runs, so reading too much into it can only make the floor stricter.
 *
 * Every loop consumes input or stops, nesting is bounded by SHELL_MAX_DEPTH and the
 * number of words by SHELL_MAX_WORDS; text is re-read only for backticks, heredoc
 * bodies and ${...} operands, each a nested parse one level deeper, so the total work
 * is at most SHELL_MAX_DEPTH passes over the input.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shell.h"

struct shell_buf {
	char	*p;
	size_t	 n;
	size_t	 cap;
};

struct shell_heredoc {
	size_t	 cmd;
	size_t	 redir;
	char	*delim;
	int	 strip;		/* <<- strips leading tabs */
	int	 quoted;	/* a quoted delimiter turns expansion off */
};

enum shell_end { END_EOF, END_PAREN, END_BRACE, END_CASE };

struct shell_parser {
	const char		*s;
	size_t			 len;
	size_t			 pos;
	const char		*home;
	int			 depth;
	int			 heredoc_mode;	/* text is a heredoc body or operand */
	size_t			 nobrace;	/* no '}' in reach before this offset */
	size_t			*nwords;
	struct shell_list	*out;
	struct shell_heredoc	 hd[SHELL_MAX_HEREDOCS];
	size_t			 nhd;
	char			*err;
	size_t			 errlen;
};

static int	shell_list_parse(struct shell_parser *, enum shell_end);
static long	shell_command(struct shell_parser *, long);
static int	shell_word(struct shell_parser *, struct shell_buf *, int);

static int	shell_error(struct shell_parser *, const char *, ...)
		    __attribute__((format(printf, 2, 3)));

static int
shell_error(struct shell_parser *p, const char *fmt, ...)
{
	va_list	 ap;
	int	 n;

	if (p->err != NULL && p->errlen > 0) {
		n = snprintf(p->err, p->errlen, "offset %zu: ", p->pos);
		if (n < 0 || (size_t)n >= p->errlen)
			n = 0;
		va_start(ap, fmt);
		vsnprintf(p->err + n, p->errlen - n, fmt, ap);
		va_end(ap);
	}
	errno = EINVAL;
	return -1;
}

static int
shell_oom(struct shell_parser *p)
{
	if (p->err != NULL && p->errlen > 0)
		snprintf(p->err, p->errlen, "out of memory");
	errno = ENOMEM;
	return -1;
}

static int
shell_buf_putc(struct shell_buf *b, char c)
{
	char	*np;
	size_t	 ncap;

	if (b->n + 2 > b->cap) {
		ncap = b->cap ? b->cap * 2 : 64;
		if ((np = realloc(b->p, ncap)) == NULL)
			return -1;
		b->p = np;
		b->cap = ncap;
	}
	b->p[b->n++] = c;
	b->p[b->n] = '\0';
	return 0;
}

static int
shell_buf_puts(struct shell_buf *b, const char *s)
{
	for (; *s != '\0'; s++)
		if (shell_buf_putc(b, *s) == -1)
			return -1;
	return 0;
}

/* The finished word as an owned string ("" for an empty word); b is reset. */
static char *
shell_buf_take(struct shell_buf *b)
{
	char	*s;

	if (b->p == NULL)
		return strdup("");
	s = b->p;
	b->p = NULL;
	b->n = b->cap = 0;
	return s;
}

static int
shell_peek(struct shell_parser *p, size_t off)
{
	return p->pos + off < p->len ? (unsigned char)p->s[p->pos + off] : -1;
}

static int
shell_is_meta(int c)
{
	return c == -1 || c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' ||
	    c == '|' || c == '(' || c == ')' || c == '<' || c == '>';
}

/* Does the unquoted word kw start at pos, ending at a metacharacter? */
static int
shell_at_word(struct shell_parser *p, const char *kw)
{
	size_t	 n = strlen(kw);

	if (p->len - p->pos < n || memcmp(p->s + p->pos, kw, n) != 0)
		return 0;
	return shell_is_meta(shell_peek(p, n));
}

/* Blanks, line continuations and comments; not newlines. */
static void
shell_blanks(struct shell_parser *p)
{
	int	 c;

	for (;;) {
		c = shell_peek(p, 0);
		if (c == ' ' || c == '\t' || c == '\r')
			p->pos++;
		else if (c == '\\' && shell_peek(p, 1) == '\n')
			p->pos += 2;
		else if (c == '#') {
			while (p->pos < p->len && p->s[p->pos] != '\n')
				p->pos++;
		} else
			return;
	}
}

static int
shell_count_word(struct shell_parser *p)
{
	if (++*p->nwords > SHELL_MAX_WORDS)
		return shell_error(p, "more than %d words", SHELL_MAX_WORDS);
	return 0;
}

/* Parse text as a nested command list one level deeper, adding to the same output. */
static int
shell_nested(struct shell_parser *p, const char *text, size_t len, int heredoc_mode)
{
	struct shell_parser	 q;
	struct shell_buf	 b = { 0 };
	int			 rc;

	if (p->depth + 1 > SHELL_MAX_DEPTH)
		return shell_error(p, "nesting deeper than %d", SHELL_MAX_DEPTH);
	memset(&q, 0, sizeof q);
	q.s = text;
	q.len = len;
	q.home = p->home;
	q.depth = p->depth + 1;
	q.heredoc_mode = heredoc_mode;
	q.nwords = p->nwords;
	q.out = p->out;
	q.err = p->err;
	q.errlen = p->errlen;
	if (heredoc_mode) {
		/* Only the expansions matter: quotes are literal, the result is data. */
		rc = shell_word(&q, &b, 0);
		free(b.p);
	} else
		rc = shell_list_parse(&q, END_EOF);
	for (size_t i = 0; i < q.nhd; i++)
		free(q.hd[i].delim);
	return rc;
}

static int
shell_marker(struct shell_buf *b, int quoted)
{
	return shell_buf_putc(b, quoted ? SHELL_UNKNOWN : SHELL_UNKNOWN_SPLIT);
}

/* `...`: unescape the body the way the shell does, then parse it as commands. */
static int
shell_backtick(struct shell_parser *p, struct shell_buf *b, int quoted)
{
	struct shell_buf	 body = { 0 };
	int			 c, rc;

	p->pos++;
	for (;;) {
		if ((c = shell_peek(p, 0)) == -1) {
			free(body.p);
			return shell_error(p, "unterminated backquote");
		}
		p->pos++;
		if (c == '`')
			break;
		if (c == '\\') {
			int n = shell_peek(p, 0);
			if (n == '`' || n == '\\' || n == '$' || (quoted && n == '"')) {
				c = n;
				p->pos++;
			}
		}
		if (shell_buf_putc(&body, (char)c) == -1) {
			free(body.p);
			return shell_oom(p);
		}
	}
	rc = shell_nested(p, body.p ? body.p : "", body.n, 0);
	free(body.p);
	if (rc == -1)
		return -1;
	return shell_marker(b, quoted) == -1 ? shell_oom(p) : 0;
}

/*
 * The end of a ${...} or $((...)) that starts at pos (just after the opener): the
 * offset of its closing '}' or "))", or -1. Quotes and backslashes are skipped so a
 * brace inside them does not close it.
 */
static long
shell_scan_close(struct shell_parser *p, int arith)
{
	size_t	 i = p->pos;
	int	 level = 0;
	char	 c;

	for (; i < p->len; i++) {
		c = p->s[i];
		if (c == '\\') {
			i++;
			continue;
		}
		if (c == '\'' && !p->heredoc_mode) {
			while (++i < p->len && p->s[i] != '\'')
				;
			continue;
		}
		if (arith) {
			if (c == '(')
				level++;
			else if (c == ')') {
				if (level == 0 && i + 1 < p->len && p->s[i + 1] == ')')
					return (long)i;
				level--;
			}
		} else {
			if (c == '{' && i > 0 && p->s[i - 1] == '$')
				level++;
			else if (c == '}') {
				if (level == 0)
					return (long)i;
				level--;
			}
		}
	}
	return -1;
}

static int
shell_is_name_start(int c)
{
	return c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

static int
shell_is_name(int c)
{
	return shell_is_name_start(c) || (c >= '0' && c <= '9');
}

static int
shell_var(struct shell_parser *p, struct shell_buf *b, const char *name, size_t n,
    int quoted)
{
	int	 rc;

	/* PWD and the rest are unknown offline; HOME is the policy's. */
	if (n == 4 && memcmp(name, "HOME", 4) == 0 && p->home != NULL)
		rc = shell_buf_puts(b, p->home);
	else
		rc = shell_marker(b, quoted);
	return rc == -1 ? shell_oom(p) : 0;
}

/* $'...': the ANSI-C escapes an agent might use to spell a word indirectly. */
static int
shell_ansi_c(struct shell_parser *p, struct shell_buf *b)
{
	int	 c, v, k;

	p->pos++;
	for (;;) {
		if ((c = shell_peek(p, 0)) == -1)
			return shell_error(p, "unterminated $'");
		p->pos++;
		if (c == '\'')
			return 0;
		if (c == '\\' && (c = shell_peek(p, 0)) != -1) {
			p->pos++;
			switch (c) {
			case 'n': c = '\n'; break;
			case 't': c = '\t'; break;
			case 'r': c = '\r'; break;
			case 'a': c = '\a'; break;
			case 'b': c = '\b'; break;
			case 'f': c = '\f'; break;
			case 'v': c = '\v'; break;
			case 'e': case 'E': c = 033; break;
			case 'x':
				for (v = 0, k = 0; k < 2 && isxdigit(shell_peek(p, 0));
				    k++) {
					c = shell_peek(p, 0);
					v = v * 16 + (isdigit(c) ? c - '0' :
					    tolower(c) - 'a' + 10);
					p->pos++;
				}
				c = v;
				break;
			case 'u': case 'U': case 'c':
				/* Rare spellings: the result is unknown, not guessed. */
				if (shell_buf_putc(b, SHELL_UNKNOWN) == -1)
					return shell_oom(p);
				continue;
			default:
				if (c >= '0' && c <= '7') {
					for (v = c - '0', k = 1; k < 3 && shell_peek(p, 0) >= '0' &&
					    shell_peek(p, 0) <= '7'; k++)
						v = v * 8 + (p->s[p->pos++] - '0');
					c = v & 0xff;
				}
				break;
			}
		}
		if (c == 0)
			continue;
		if (shell_buf_putc(b, (char)c) == -1)
			return shell_oom(p);
	}
}

static int	shell_dquote(struct shell_parser *, struct shell_buf *);

/* A $ expansion at pos; quoted says whether it sits inside double quotes. */
static int
shell_dollar(struct shell_parser *p, struct shell_buf *b, int quoted)
{
	int	 c = shell_peek(p, 1);
	size_t	 start;
	long	 end;

	if (c == '{') {
		p->pos += 2;
		start = p->pos;
		if ((end = shell_scan_close(p, 0)) == -1)
			return shell_error(p, "unterminated ${");
		while (p->pos < (size_t)end && shell_is_name(p->s[p->pos]))
			p->pos++;
		if (p->pos == (size_t)end && end > (long)start &&
		    shell_is_name_start(p->s[start])) {
			p->pos = end + 1;
			return shell_var(p, b, p->s + start, end - start, quoted);
		}
		/* ${X:-word} and friends: the operand may hold $(...) that would run. */
		if (shell_nested(p, p->s + start, end - start, 1) == -1)
			return -1;
		p->pos = end + 1;
		return shell_marker(b, quoted) == -1 ? shell_oom(p) : 0;
	}
	if (c == '(' && shell_peek(p, 2) == '(') {
		p->pos += 3;
		start = p->pos;
		if ((end = shell_scan_close(p, 1)) == -1)
			return shell_error(p, "unterminated $((");
		if (shell_nested(p, p->s + start, end - start, 1) == -1)
			return -1;
		p->pos = end + 2;
		return shell_marker(b, quoted) == -1 ? shell_oom(p) : 0;
	}
	if (c == '(') {
		int	 mode = p->heredoc_mode;

		p->pos += 2;
		if (p->depth + 1 > SHELL_MAX_DEPTH)
			return shell_error(p, "nesting deeper than %d", SHELL_MAX_DEPTH);
		p->depth++;
		p->heredoc_mode = 0;	/* the inside of $(...) is ordinary shell */
		if (shell_list_parse(p, END_PAREN) == -1)
			return -1;
		p->heredoc_mode = mode;
		p->depth--;
		return shell_marker(b, quoted) == -1 ? shell_oom(p) : 0;
	}
	if (c == '\'' && !quoted && !p->heredoc_mode) {
		p->pos++;
		return shell_ansi_c(p, b);
	}
	if (c == '"' && !quoted && !p->heredoc_mode) {
		p->pos++;
		return shell_dquote(p, b);
	}
	if (c != -1 && shell_is_name_start(c)) {
		p->pos++;
		start = p->pos;
		while (p->pos < p->len && shell_is_name(p->s[p->pos]))
			p->pos++;
		return shell_var(p, b, p->s + start, p->pos - start, quoted);
	}
	if (c != -1 && strchr("0123456789@*#?$!-", c) != NULL) {
		p->pos += 2;
		return shell_marker(b, quoted) == -1 ? shell_oom(p) : 0;
	}
	p->pos++;
	return shell_buf_putc(b, '$') == -1 ? shell_oom(p) : 0;
}

/* "...": backslash escapes only $ ` " \ and newline; expansions happen. */
static int
shell_dquote(struct shell_parser *p, struct shell_buf *b)
{
	int	 c, n;

	p->pos++;
	for (;;) {
		if ((c = shell_peek(p, 0)) == -1)
			return shell_error(p, "unterminated double quote");
		if (c == '"') {
			p->pos++;
			return 0;
		}
		if (c == '$') {
			if (shell_dollar(p, b, 1) == -1)
				return -1;
			continue;
		}
		if (c == '`') {
			if (shell_backtick(p, b, 1) == -1)
				return -1;
			continue;
		}
		p->pos++;
		if (c == '\\') {
			n = shell_peek(p, 0);
			if (n == '\n') {
				p->pos++;
				continue;
			}
			if (n == '$' || n == '`' || n == '"' || n == '\\') {
				c = n;
				p->pos++;
			}
		}
		if (shell_buf_putc(b, (char)c) == -1)
			return shell_oom(p);
	}
}

/*
 * An unquoted {a,b} or {1..3}: brace expansion makes several words the parser does not
 * enumerate (it can grow exponentially), so the whole brace becomes "unknown, may
 * split". The look-ahead is bounded (128 bytes, longer than any real brace list)
 * to keep adversarial input linear.
 */
static int
shell_brace(struct shell_parser *p)
{
	size_t	 i, lim = p->pos + 128;
	int	 level = 0, list = 0, closer = 0;
	char	 c;
	const char *close;

	if (p->pos < p->nobrace)
		return 0;
	if (lim > p->len)
		lim = p->len;
	/* No '}' within reach at all: answered without a scan. */
	if ((close = memchr(p->s + p->pos, '}', p->len - p->pos)) == NULL) {
		p->nobrace = p->len;
		return 0;
	}
	if ((size_t)(close - p->s) >= lim) {
		p->nobrace = (size_t)(close - p->s) - 128;
		return 0;
	}
	for (i = p->pos + 1; i < lim; i++) {
		c = p->s[i];
		if (shell_is_meta((unsigned char)c) || c == '\'' || c == '"' || c == '\\' ||
		    c == '$' || c == '`') {
			/* "{{{{..." with no '}' before i: none of those braces can close. */
			if (!closer)
				p->nobrace = i;
			return 0;
		}
		if (c == '}')
			closer = 1;
		if (c == '{')
			level++;
		else if (c == '}') {
			if (level-- == 0) {
				if (!list)
					return 0;
				p->pos = i + 1;
				return 1;
			}
		} else if (level == 0 && (c == ',' ||
		    (c == '.' && i + 1 < lim && p->s[i + 1] == '.')))
			list = 1;
	}
	if (!closer && lim == p->len)
		p->nobrace = lim;
	return 0;
}

/*
 * One word at pos into b. tilde: 1 when ~ at the start expands (every word does; an
 * assignment's value also after = and :). In heredoc mode the whole text is one word
 * with only $ and ` special.
 */
static int
shell_word(struct shell_parser *p, struct shell_buf *b, int tilde)
{
	size_t	 start = p->pos;
	int	 c, n, assign = 0;

	if (tilde && shell_is_name_start(shell_peek(p, 0))) {
		size_t	 i = p->pos;
		while (i < p->len && shell_is_name(p->s[i]))
			i++;
		assign = i < p->len && p->s[i] == '=';
	}
	for (;;) {
		c = shell_peek(p, 0);
		if (c == -1)
			break;
		if (p->heredoc_mode) {
			if (c == '$') {
				if (shell_dollar(p, b, 1) == -1)
					return -1;
			} else if (c == '`') {
				if (shell_backtick(p, b, 1) == -1)
					return -1;
			} else if (c == '\\' && strchr("$`\\", shell_peek(p, 1) == -1 ? 'x' :
			    shell_peek(p, 1)) != NULL) {
				p->pos += 2;
				if (shell_buf_putc(b, p->s[p->pos - 1]) == -1)
					return shell_oom(p);
			} else {
				p->pos++;
				if (shell_buf_putc(b, (char)c) == -1)
					return shell_oom(p);
			}
			continue;
		}
		if ((c == '<' || c == '>') && p->pos == start && shell_peek(p, 1) == '(') {
			/* Process substitution: the command runs, the word is a /dev/fd path. */
			p->pos += 2;
			if (p->depth + 1 > SHELL_MAX_DEPTH)
				return shell_error(p, "nesting deeper than %d", SHELL_MAX_DEPTH);
			p->depth++;
			if (shell_list_parse(p, END_PAREN) == -1)
				return -1;
			p->depth--;
			if (shell_marker(b, 0) == -1)
				return shell_oom(p);
			continue;
		}
		if (shell_is_meta(c))
			break;
		if (c == '~' && tilde && (p->pos == start || (assign &&
		    (p->s[p->pos - 1] == '=' || p->s[p->pos - 1] == ':')))) {
			n = shell_peek(p, 1);
			if (n == '/' || shell_is_meta(n) || (assign && n == ':')) {
				p->pos++;
				if ((p->home != NULL ? shell_buf_puts(b, p->home) :
				    shell_marker(b, 0)) == -1)
					return shell_oom(p);
				continue;
			}
		}
		switch (c) {
		case '\\':
			n = shell_peek(p, 1);
			if (n == '\n') {
				p->pos += 2;
				continue;
			}
			p->pos += n == -1 ? 1 : 2;
			if (shell_buf_putc(b, n == -1 ? '\\' : (char)n) == -1)
				return shell_oom(p);
			continue;
		case '\'':
			p->pos++;
			while ((n = shell_peek(p, 0)) != '\'') {
				if (n == -1)
					return shell_error(p, "unterminated single quote");
				p->pos++;
				if (shell_buf_putc(b, (char)n) == -1)
					return shell_oom(p);
			}
			p->pos++;
			continue;
		case '"':
			if (shell_dquote(p, b) == -1)
				return -1;
			continue;
		case '$':
			if (shell_dollar(p, b, 0) == -1)
				return -1;
			continue;
		case '`':
			if (shell_backtick(p, b, 0) == -1)
				return -1;
			continue;
		case '{':
			if (shell_brace(p)) {
				if (shell_marker(b, 0) == -1)
					return shell_oom(p);
				continue;
			}
			break;
		}
		p->pos++;
		if (shell_buf_putc(b, (char)c) == -1)
			return shell_oom(p);
	}
	return 0;
}

/* Reserve the next simple-command slot; callers reach it by index, never by pointer. */
static long
shell_slot(struct shell_parser *p, long pipe_in)
{
	struct shell_list	*l = p->out;
	struct shell_cmd	*nv;
	size_t			 ncap;

	if (l->n == l->cap) {
		ncap = l->cap ? l->cap * 2 : 8;
		if ((nv = reallocarray(l->v, ncap, sizeof *nv)) == NULL)
			return -1;
		l->v = nv;
		l->cap = ncap;
	}
	memset(&l->v[l->n], 0, sizeof l->v[l->n]);
	l->v[l->n].depth = p->depth;
	l->v[l->n].pipe_in = pipe_in;
	return (long)l->n++;
}

/* Arrays grow to the next power of two, so n appends cost O(n) copies in all. */
static int
shell_grow(void **v, size_t n, size_t size)
{
	void	*nv;

	if (n >= 4 && (n & (n - 1)) != 0)
		return 0;
	if ((nv = reallocarray(*v, n < 4 ? 4 : n * 2, size)) == NULL)
		return -1;
	*v = nv;
	return 0;
}

static int
shell_push(char ***v, size_t *n, char *s)
{
	if (shell_grow((void **)v, *n, sizeof **v) == -1)
		return -1;
	(*v)[(*n)++] = s;
	return 0;
}

/* Read the bodies of pending heredocs; pos is just after a newline. */
static int
shell_heredoc_bodies(struct shell_parser *p)
{
	struct shell_heredoc	*h;
	struct shell_buf	 body = { 0 };
	struct shell_redir	*r;
	size_t			 eol, ls, dlen;
	int			 found;

	for (size_t i = 0; i < p->nhd; i++) {
		h = &p->hd[i];
		dlen = strlen(h->delim);
		found = 0;
		while (p->pos < p->len && !found) {
			for (eol = p->pos; eol < p->len && p->s[eol] != '\n'; eol++)
				;
			ls = p->pos;
			if (h->strip)
				while (ls < eol && p->s[ls] == '\t')
					ls++;
			if (eol - ls == dlen && memcmp(p->s + ls, h->delim, dlen) == 0)
				found = 1;
			else {
				for (size_t k = ls; k < eol; k++)
					if (shell_buf_putc(&body, p->s[k]) == -1)
						goto oom;
				if (shell_buf_putc(&body, '\n') == -1)
					goto oom;
			}
			p->pos = eol < p->len ? eol + 1 : eol;
		}
		/* Unquoted: $(...) and `...` in the body run when the shell reads it. */
		if (!h->quoted && body.n > 0 &&
		    shell_nested(p, body.p, body.n, 1) == -1) {
			free(body.p);
			return -1;
		}
		r = &p->out->v[h->cmd].redirs[h->redir];
		free(r->word);
		if ((r->word = shell_buf_take(&body)) == NULL)
			goto oom;
		free(h->delim);
		h->delim = NULL;
	}
	p->nhd = 0;
	return 0;
oom:
	free(body.p);
	return shell_oom(p);
}

static int
shell_newline(struct shell_parser *p)
{
	p->pos++;
	return p->nhd > 0 ? shell_heredoc_bodies(p) : 0;
}

/* Blanks and line ends up to the next word: a line may end after "|", "case w", "f()". */
static int
shell_skip_newlines(struct shell_parser *p)
{
	for (;;) {
		shell_blanks(p);
		if (shell_peek(p, 0) != '\n')
			return 0;
		if (shell_newline(p) == -1)
			return -1;
	}
}

/*
 * A function's body, after "name()" or "function name": one command, which may start
 * on a later line. It is parsed (and checked) now, though it runs only when called.
 */
static int
shell_function_body(struct shell_parser *p)
{
	if (shell_skip_newlines(p) == -1)
		return -1;
	if (p->depth + 1 > SHELL_MAX_DEPTH)
		return shell_error(p, "nesting deeper than %d", SHELL_MAX_DEPTH);
	p->depth++;
	if (shell_command(p, -1) == -2)
		return -1;
	p->depth--;
	return 0;
}

/* A redirection operator at pos (after any descriptor digits), then its word. */
static int
shell_redirect(struct shell_parser *p, long cmd)
{
	struct shell_buf	 b = { 0 };
	struct shell_cmd	*c;
	struct shell_redir	*nr;
	enum shell_redir_kind	 kind;
	size_t			 wstart, k;
	int			 heredoc = 0, strip = 0, dup = 0, quoted = 0;
	char			*w;

	if (p->len - p->pos >= 3 && memcmp(p->s + p->pos, "<<<", 3) == 0) {
		kind = SHELL_REDIR_HERESTRING;
		p->pos += 3;
	} else if (p->len - p->pos >= 3 && memcmp(p->s + p->pos, "<<-", 3) == 0) {
		kind = SHELL_REDIR_HEREDOC;
		heredoc = strip = 1;
		p->pos += 3;
	} else if (shell_peek(p, 0) == '<' && shell_peek(p, 1) == '<') {
		kind = SHELL_REDIR_HEREDOC;
		heredoc = 1;
		p->pos += 2;
	} else if (shell_peek(p, 0) == '<') {
		kind = SHELL_REDIR_IN;
		p->pos++;
		if (shell_peek(p, 0) == '&') {
			dup = 1;
			p->pos++;
		} else if (shell_peek(p, 0) == '>')
			p->pos++;
	} else {
		int amp = 0;

		kind = SHELL_REDIR_OUT;
		if (shell_peek(p, 0) == '&') {
			amp = 1;
			p->pos++;		/* &> */
		}
		p->pos++;			/* > */
		if (shell_peek(p, 0) == '>' || shell_peek(p, 0) == '|')
			p->pos++;
		else if (shell_peek(p, 0) == '&' && !amp) {
			dup = 1;
			p->pos++;
		}
	}
	shell_blanks(p);
	if (shell_is_meta(shell_peek(p, 0)) &&
	    !((shell_peek(p, 0) == '<' || shell_peek(p, 0) == '>') && shell_peek(p, 1) == '('))
		return shell_error(p, "redirection without a target");
	wstart = p->pos;
	if (shell_count_word(p) == -1 || shell_word(p, &b, 1) == -1) {
		free(b.p);
		return -1;
	}
	for (k = wstart; k < p->pos; k++)
		if (p->s[k] == '\'' || p->s[k] == '"' || p->s[k] == '\\')
			quoted = 1;
	if ((w = shell_buf_take(&b)) == NULL)
		return shell_oom(p);
	if (dup) {
		kind = SHELL_REDIR_DUP;
		for (k = 0; w[k] != '\0'; k++)
			if (!isdigit((unsigned char)w[k]) && w[k] != '-')
				kind = SHELL_REDIR_OUT;	/* >&file is &>file */
	}
	c = &p->out->v[cmd];
	nr = c->redirs;
	if (shell_grow((void **)&nr, c->nredirs, sizeof *nr) == -1) {
		free(w);
		return shell_oom(p);
	}
	c->redirs = nr;
	nr[c->nredirs].kind = kind;
	nr[c->nredirs].word = w;
	if (heredoc) {
		struct shell_heredoc	*h;

		if (p->nhd == SHELL_MAX_HEREDOCS) {
			c->nredirs++;
			return shell_error(p, "more than %d pending heredocs",
			    SHELL_MAX_HEREDOCS);
		}
		h = &p->hd[p->nhd];
		if ((h->delim = strdup(w)) == NULL) {
			c->nredirs++;
			return shell_oom(p);
		}
		/* Until the body is read, the word holds nothing: it is data, not a path. */
		w[0] = '\0';
		h->cmd = cmd;
		h->redir = c->nredirs;
		h->strip = strip;
		h->quoted = quoted;
		p->nhd++;
	}
	c->nredirs++;
	return 0;
}

static int
shell_at_redirect(struct shell_parser *p)
{
	size_t	 i = p->pos;
	int	 c = shell_peek(p, 0);

	if (c == '&' && shell_peek(p, 1) == '>')
		return 1;
	if ((c == '<' || c == '>') && shell_peek(p, 1) == '(')
		return 0;
	if (c == '<' || c == '>')
		return 1;
	while (i < p->len && isdigit((unsigned char)p->s[i]))
		i++;
	if (i > p->pos && i < p->len && (p->s[i] == '<' || p->s[i] == '>')) {
		p->pos = i;		/* the descriptor number itself does not matter */
		return 1;
	}
	return 0;
}

/*
 * Read the next word and append it to command idx's assignments or argv. The command
 * is looked up after the read: parsing the word (a substitution inside it) may add
 * commands and move the array. The word stays owned by the list; *wp may borrow it.
 * 0, or -1 with the error recorded in p.
 */
static int
shell_word_push(struct shell_parser *p, size_t idx, int assign, const char **wp)
{
	struct shell_buf	 b = { 0 };
	struct shell_cmd	*c;
	char			*w;
	int			 rc;

	if (shell_count_word(p) == -1 || shell_word(p, &b, 1) == -1) {
		free(b.p);
		return -1;
	}
	if ((w = shell_buf_take(&b)) == NULL)
		return shell_oom(p), -1;
	c = &p->out->v[idx];
	rc = assign ? shell_push(&c->assigns, &c->nassigns, w) :
	    shell_push(&c->argv, &c->argc, w);
	if (rc == -1) {
		free(w);
		return shell_oom(p), -1;
	}
	if (wp != NULL)
		*wp = w;
	return 0;
}

/* Words and redirections up to an operator, into a fresh slot. */
static long
shell_simple(struct shell_parser *p, long pipe_in)
{
	struct shell_cmd	*c;
	long			 idx;
	int			 ch, assigning = 1, is_assign;
	size_t			 i;

	if ((idx = shell_slot(p, pipe_in)) == -1)
		return shell_oom(p), -2;
	for (;;) {
		shell_blanks(p);
		ch = shell_peek(p, 0);
		if (ch == -1 || ch == ';' || ch == '|' || ch == '\n' || ch == ')' ||
		    (ch == '&' && shell_peek(p, 1) != '>'))
			break;
		if (shell_at_redirect(p)) {
			if (shell_redirect(p, idx) == -1)
				return -2;
			continue;
		}
		c = &p->out->v[idx];
		if (ch == '(' && c->argc == 0 && c->nassigns > 0 &&
		    p->pos > 0 && p->s[p->pos - 1] == '=') {
			/* NAME=(a b c): the elements are kept as assignment values. */
			p->pos++;
			for (;;) {
				shell_blanks(p);
				ch = shell_peek(p, 0);
				if (ch == ')') {
					p->pos++;
					break;
				}
				if (ch == '\n') {
					if (shell_newline(p) == -1)
						return -2;
					continue;
				}
				if (shell_is_meta(ch))
					return shell_error(p, "bad array assignment"), -2;
				if (shell_word_push(p, idx, 1, NULL) == -1)
					return -2;
			}
			continue;
		}
		if (ch == '(') {
			/* name() body: a function definition; its body is parsed. */
			if (c->argc == 1 && shell_peek(p, 1) == ')') {
				p->pos += 2;
				if (shell_function_body(p) == -1)
					return -2;
				return idx;
			}
			return shell_error(p, "unexpected '('"), -2;
		}
		is_assign = 0;
		if (assigning && shell_is_name_start(ch)) {
			for (i = p->pos; i < p->len && shell_is_name(p->s[i]); i++)
				;
			is_assign = i < p->len && (p->s[i] == '=' ||
			    (p->s[i] == '+' && i + 1 < p->len && p->s[i + 1] == '='));
		}
		if (!is_assign)
			assigning = 0;
		if (shell_word_push(p, idx, is_assign, NULL) == -1)
			return -2;
	}
	return idx;
}

/* case WORD in PATTERN) LIST ;; ... esac */
static int
shell_case(struct shell_parser *p)
{
	struct shell_buf	 b = { 0 };
	int			 c;

	p->pos += 4;
	shell_blanks(p);
	if (shell_count_word(p) == -1 || shell_word(p, &b, 1) == -1)
		goto fail;
	if (shell_skip_newlines(p) == -1)
		goto fail;
	if (!shell_at_word(p, "in")) {
		free(b.p);
		return shell_error(p, "case without 'in'");
	}
	p->pos += 2;
	for (;;) {
		shell_blanks(p);
		c = shell_peek(p, 0);
		if (c == '\n') {
			if (shell_newline(p) == -1)
				goto fail;
			continue;
		}
		if (c == -1) {
			free(b.p);
			return shell_error(p, "case without 'esac'");
		}
		if (shell_at_word(p, "esac")) {
			p->pos += 4;
			break;
		}
		if (c == '(')
			p->pos++;
		for (;;) {
			shell_blanks(p);
			b.n = 0;
			if (shell_is_meta(shell_peek(p, 0)) && shell_peek(p, 0) != '|' &&
			    shell_peek(p, 0) != ')') {
				free(b.p);
				return shell_error(p, "bad case pattern");
			}
			if (shell_count_word(p) == -1 || shell_word(p, &b, 1) == -1)
				goto fail;
			shell_blanks(p);
			if ((c = shell_peek(p, 0)) == -1) {
				free(b.p);
				return shell_error(p, "case without 'esac'");
			}
			p->pos++;
			if (c == ')')
				break;
			if (c != '|') {
				free(b.p);
				return shell_error(p, "bad case pattern");
			}
		}
		if (shell_list_parse(p, END_CASE) == -1)
			goto fail;
		if (shell_peek(p, 0) == ';') {
			p->pos += 2;
			if (shell_peek(p, 0) == '&')
				p->pos++;
		}
	}
	free(b.p);
	return 0;
fail:
	free(b.p);
	return -1;
}

static int
shell_trailing_redirects(struct shell_parser *p)
{
	long	 idx = -1;

	for (;;) {
		shell_blanks(p);
		if (!shell_at_redirect(p))
			return 0;
		/* A compound command's redirections get an empty command of their own. */
		if (idx == -1 && (idx = shell_slot(p, -1)) == -1)
			return shell_oom(p);
		if (shell_redirect(p, idx) == -1)
			return -1;
	}
}

/*
 * [[ ... ]]: inside, && || ( ) < > ! are operands of the test, not shell operators
 * (a regex like ^(a|b)$ is common). The words are kept as a command named "[[" so
 * a path in them is still seen.
 */
static long
shell_dbracket(struct shell_parser *p, long pipe_in)
{
	const char		*word;
	long			 idx;
	int			 ch;

	if ((idx = shell_slot(p, pipe_in)) == -1)
		return shell_oom(p), -2;
	for (;;) {
		shell_blanks(p);
		ch = shell_peek(p, 0);
		if (ch == -1)
			return shell_error(p, "missing ']]'"), -2;
		if (ch == '\n') {
			if (shell_newline(p) == -1)
				return -2;
			continue;
		}
		if (strchr("()<>&|!;", ch) != NULL) {
			/* An operand of the test; a second & or | belongs to it. */
			p->pos++;
			if ((ch == '&' || ch == '|') && shell_peek(p, 0) == ch)
				p->pos++;
			if (ch == ';')
				return shell_error(p, "';' inside [[ ]]"), -2;
			if ((ch == '<' || ch == '>') && shell_peek(p, 0) == '(')
				p->pos--;	/* not an operator: a process substitution */
			else
				continue;
		}
		if (shell_word_push(p, idx, 0, &word) == -1)
			return -2;
		if (strcmp(word, "]]") == 0)
			break;
	}
	return shell_trailing_redirects(p) == -1 ? -2 : idx;
}

static const char *shell_keywords[] = {
	"if", "then", "else", "elif", "fi", "do", "done", "while", "until", "!",
	"time", "select", "coproc"
};

/*
 * One command: compound or simple. Returns the slot of a simple command, -1 for a
 * compound one or none, -2 on error.
 */
static long
shell_command(struct shell_parser *p, long pipe_in)
{
	int	 c, kw;

	for (;;) {
		shell_blanks(p);
		kw = 0;
		for (size_t i = 0; i < sizeof shell_keywords / sizeof shell_keywords[0]; i++)
			if (shell_at_word(p, shell_keywords[i])) {
				p->pos += strlen(shell_keywords[i]);
				kw = 1;
				break;
			}
		/* The time keyword takes -p; it is not the command. */
		if (kw && p->pos >= 4 && memcmp(p->s + p->pos - 4, "time", 4) == 0) {
			shell_blanks(p);
			if (shell_at_word(p, "-p"))
				p->pos += 2;
		}
		if (!kw)
			break;
	}
	if (shell_at_word(p, "function")) {
		struct shell_buf	 b = { 0 };

		/* function NAME [()] BODY: only the body runs, later, when called. */
		p->pos += 8;
		shell_blanks(p);
		if (shell_word(p, &b, 0) == -1) {
			free(b.p);
			return -2;
		}
		free(b.p);
		shell_blanks(p);
		if (shell_peek(p, 0) == '(' && shell_peek(p, 1) == ')')
			p->pos += 2;
		if (shell_function_body(p) == -1)
			return -2;
		return -1;
	}
	if (shell_at_word(p, "for")) {
		p->pos += 3;
		shell_blanks(p);
		if (shell_peek(p, 0) != '(')
			return shell_simple(p, pipe_in);
	}
	if (shell_at_word(p, "case"))
		return shell_case(p) == -1 ? -2 : -1;
	if (shell_at_word(p, "[["))
		return shell_dbracket(p, pipe_in);
	c = shell_peek(p, 0);
	if (c == '(' || (c == '{' && shell_is_meta(shell_peek(p, 1)))) {
		p->pos++;
		if (p->depth + 1 > SHELL_MAX_DEPTH)
			return shell_error(p, "nesting deeper than %d", SHELL_MAX_DEPTH), -2;
		p->depth++;
		if (shell_list_parse(p, c == '(' ? END_PAREN : END_BRACE) == -1)
			return -2;
		p->depth--;
		return shell_trailing_redirects(p) == -1 ? -2 : -1;
	}
	if (c == -1 || c == ';' || c == '|' || c == '&' || c == '\n' || c == ')')
		return -1;
	return shell_simple(p, pipe_in);
}

static int
shell_pipeline(struct shell_parser *p)
{
	long	 prev = -1;

	for (;;) {
		if ((prev = shell_command(p, prev)) == -2)
			return -1;
		shell_blanks(p);
		if (shell_peek(p, 0) == '|' && shell_peek(p, 1) != '|') {
			p->pos++;
			if (shell_peek(p, 0) == '&')
				p->pos++;
			if (shell_skip_newlines(p) == -1)
				return -1;
			continue;
		}
		return 0;
	}
}

static int
shell_list_parse(struct shell_parser *p, enum shell_end end)
{
	size_t	 before;
	int	 c;

	for (;;) {
		shell_blanks(p);
		c = shell_peek(p, 0);
		if (c == -1) {
			if (end == END_EOF)
				return 0;
			return shell_error(p, end == END_PAREN ? "missing ')'" :
			    end == END_BRACE ? "missing '}'" : "missing 'esac'");
		}
		if (c == '\n') {
			if (shell_newline(p) == -1)
				return -1;
			continue;
		}
		if (end == END_CASE && (shell_at_word(p, "esac") ||
		    (c == ';' && (shell_peek(p, 1) == ';' || shell_peek(p, 1) == '&'))))
			return 0;
		if (c == ';' || c == '&' || c == '|') {
			p->pos++;
			continue;
		}
		if (c == ')') {
			if (end != END_PAREN)
				return shell_error(p, "unexpected ')'");
			p->pos++;
			return 0;
		}
		if (end == END_BRACE && shell_at_word(p, "}")) {
			p->pos++;
			return 0;
		}
		before = p->pos;
		if (shell_pipeline(p) == -1)
			return -1;
		if (p->pos == before)
			return shell_error(p, "unexpected '%c'", c);
	}
}

int
shell_parse(const char *src, size_t len, const char *home, int depth,
    struct shell_list *out, char *err, size_t errlen)
{
	struct shell_parser	 p;
	size_t			 nwords = 0;
	int			 rc;

	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if (depth > SHELL_MAX_DEPTH) {
		if (err != NULL && errlen > 0)
			snprintf(err, errlen, "nesting deeper than %d", SHELL_MAX_DEPTH);
		errno = EINVAL;
		return -1;
	}
	memset(&p, 0, sizeof p);
	p.s = src;
	p.len = len;
	p.home = home;
	p.depth = depth;
	p.nwords = &nwords;
	p.out = out;
	p.err = err;
	p.errlen = errlen;
	rc = shell_list_parse(&p, END_EOF);
	/* A heredoc cut off by the end of input: bash reads it to the end; so do we. */
	if (rc == 0 && p.nhd > 0)
		rc = shell_heredoc_bodies(&p);
	for (size_t i = 0; i < p.nhd; i++)
		free(p.hd[i].delim);
	return rc;
}

void
shell_list_free(struct shell_list *l)
{
	struct shell_cmd	*c;

	for (size_t i = 0; i < l->n; i++) {
		c = &l->v[i];
		for (size_t k = 0; k < c->argc; k++)
			free(c->argv[k]);
		for (size_t k = 0; k < c->nassigns; k++)
			free(c->assigns[k]);
		for (size_t k = 0; k < c->nredirs; k++)
			free(c->redirs[k].word);
		free(c->argv);
		free(c->assigns);
		free(c->redirs);
	}
	free(l->v);
	l->v = NULL;
	l->n = l->cap = 0;
}
