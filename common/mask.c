/*
 * Secret masking: one left-to-right pass over the text with hand-written detectors.
 *
 * Linear time. A detector that masks consumes everything it scanned. One that fails
 * has looked ahead a bounded distance, or over a stretch that no other start of the same
 * detector can scan again: token bodies that must hold a digit or an uppercase letter
 * go through a per-class run cache, and an assignment leaves its value in place only
 * when the value is short (at most 256 bytes) or a single identifier or dotted path.
 *
 * Idempotence. Word boundaries are judged on the last byte already written to the
 * output, not on the input, so the second pass over masked text sees the same context as
 * the first. Every marker starts with '[' right after the kept prefix, '[' is in no token
 * body class, and a marker met anywhere is copied as one unit; a value that is already a
 * marker is left alone.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mask.h"

#define MASK_MARK	"[MASKED]"
#define MASK_NAME_MAX	128	/* longer names are not treated as assignments */
#define MASK_SPACE_MAX	16	/* blanks allowed around an assignment's separator */
#define MASK_USER_MAX	128	/* look-back over a URL's user name */
#define MASK_LABEL_MAX	40	/* "RSA PRIVATE KEY" and friends */

/* Character classes, one bit each. */
#define C_DIGIT		0x0001
#define C_UPPER		0x0002
#define C_LOWER		0x0004
#define C_IDENT		0x0008	/* [A-Za-z0-9_.-]: assignment names */
#define C_URLB64	0x0010	/* [A-Za-z0-9_-]: sk-ant-, sk-proj-, telegram, glpat- */
#define C_SLACK		0x0020	/* [A-Za-z0-9-] */
#define C_WORD		0x0040	/* [A-Za-z0-9_]: github_pat_ */
#define C_BEARER	0x0080	/* [A-Za-z0-9._~+/=-]: RFC 6750 b64token */
#define C_STOP		0x0100	/* ends an unquoted value */
#define C_AWS		0x0200	/* [A-Za-z0-9/+=]: AWS secret access keys */
#define C_ALNUM		(C_DIGIT | C_UPPER | C_LOWER)

static uint16_t		mask_cls[256];
static pthread_once_t	mask_cls_once = PTHREAD_ONCE_INIT;

static void
mask_cls_init(void)
{
	unsigned int	 c;
	uint16_t	 f;
	const char	*p;

	for (c = 0; c < 256; c++) {
		f = 0;
		if (c >= '0' && c <= '9')
			f |= C_DIGIT;
		else if (c >= 'A' && c <= 'Z')
			f |= C_UPPER;
		else if (c >= 'a' && c <= 'z')
			f |= C_LOWER;
		if (f != 0)
			f |= C_IDENT | C_URLB64 | C_SLACK | C_WORD | C_BEARER | C_AWS;
		mask_cls[c] = f;
	}
	mask_cls['_'] |= C_IDENT | C_URLB64 | C_WORD | C_BEARER;
	mask_cls['-'] |= C_IDENT | C_URLB64 | C_SLACK | C_BEARER;
	mask_cls['.'] |= C_IDENT | C_BEARER;
	for (p = "~+/="; *p != '\0'; p++)
		mask_cls[(unsigned char)*p] |= C_BEARER;
	for (p = "+/="; *p != '\0'; p++)
		mask_cls[(unsigned char)*p] |= C_AWS;
	for (p = " \t\r\n\v\f\"'`,;&|<>(){}"; *p != '\0'; p++)
		mask_cls[(unsigned char)*p] |= C_STOP;
	mask_cls[0] |= C_STOP;
}

#define CLS(c, f)	((mask_cls[(unsigned char)(c)] & (f)) != 0)

/* A maximal run of one class, cached so that prefixes inside it do not rescan it. */
struct mask_run {
	uint16_t	 cls;
	size_t		 start;
	size_t		 end;
	size_t		 last_du;	/* last digit or uppercase, or SIZE_MAX */
};

#define MASK_NRUNS	4

struct mask_ctx {
	const unsigned char	*in;
	size_t			 len;
	char			*out;
	size_t			 olen;
	size_t			 osize;
	int			 oom;
	int			 pem_open;	/* a key block ran to the end */
	struct mask_run		 runs[MASK_NRUNS];
};

static void
mask_reserve(struct mask_ctx *m, size_t n)
{
	size_t	 nsize;
	char	*p;

	if (m->oom || m->olen + n + 1 <= m->osize)
		return;
	nsize = m->osize;
	while (nsize < m->olen + n + 1) {
		if (nsize > SIZE_MAX / 2) {
			m->oom = 1;
			return;
		}
		nsize *= 2;
	}
	if ((p = realloc(m->out, nsize)) == NULL) {
		m->oom = 1;
		return;
	}
	m->out = p;
	m->osize = nsize;
}

static void
mask_put(struct mask_ctx *m, const void *p, size_t n)
{
	if (n == 0)
		return;
	mask_reserve(m, n);
	if (m->oom)
		return;
	memcpy(m->out + m->olen, p, n);
	m->olen += n;
}

static void
mask_puts(struct mask_ctx *m, const char *s)
{
	mask_put(m, s, strlen(s));
}

/* The last byte written, or -1 at the start of the text (a boundary). */
static int
mask_prev(const struct mask_ctx *m)
{
	if (m->olen == 0)
		return -1;
	return (unsigned char)m->out[m->olen - 1];
}

static int
mask_prev_alnum(const struct mask_ctx *m)
{
	int	c = mask_prev(m);

	return c != -1 && CLS(c, C_ALNUM);
}

static int
mask_has(const struct mask_ctx *m, size_t i, const char *s)
{
	size_t	n = strlen(s);

	return i <= m->len && m->len - i >= n && memcmp(m->in + i, s, n) == 0;
}

static int
mask_lower(int c)
{
	return (c >= 'A' && c <= 'Z') ? c + 32 : c;
}

static int
mask_has_ci(const unsigned char *p, size_t n, const char *s)
{
	size_t	i, sn = strlen(s);

	if (n < sn)
		return 0;
	for (i = 0; i < sn; i++)
		if (mask_lower(p[i]) != s[i])
			return 0;
	return 1;
}

/* Length of a complete marker ("[MASKED]" or "[MASKED:type]") at p, or 0. */
static size_t
mask_marker_len(const unsigned char *p, size_t n)
{
	size_t	i;

	if (n < 8 || memcmp(p, "[MASKED", 7) != 0)
		return 0;
	if (p[7] == ']')
		return 8;
	if (p[7] != ':')
		return 0;
	for (i = 8; i < n && i < 8 + 24; i++) {
		if (p[i] == ']')
			return i > 8 ? i + 1 : 0;
		if (!((p[i] >= 'a' && p[i] <= 'z') || p[i] == '-'))
			return 0;
	}
	return 0;
}

/* End of the run of class cls starting at pos; *du gets its last digit/uppercase. */
static size_t
mask_run(struct mask_ctx *m, int slot, uint16_t cls, size_t pos, size_t *du)
{
	struct mask_run	*r = &m->runs[slot];
	size_t		 i;

	if (r->cls != cls || pos < r->start || pos >= r->end) {
		r->cls = cls;
		r->start = pos;
		r->last_du = SIZE_MAX;
		for (i = pos; i < m->len && CLS(m->in[i], cls); i++)
			if (CLS(m->in[i], C_DIGIT | C_UPPER))
				r->last_du = i;
		r->end = i;
	}
	*du = r->last_du;
	return r->end;
}

/*
 * Tokens recognised by their public prefix. The prefix is kept in the marker; the body
 * is the maximal run of its class and must be at least min bytes long and hold a digit
 * or an uppercase letter (real keys are random; kebab-case prose is not).
 */
struct mask_token {
	const char	*prefix;
	uint16_t	 cls;
	int		 slot;
	size_t		 min;
};

static const struct mask_token mask_tokens[] = {
	{ "sk-ant-",	 C_URLB64, 0, 24 },
	{ "sk-proj-",	 C_URLB64, 0, 20 },
	{ "sk-svcacct-", C_URLB64, 0, 20 },
	{ "sk-admin-",	 C_URLB64, 0, 20 },
	{ "sk-None-",	 C_URLB64, 0, 20 },
	{ "sk-",	 C_ALNUM,  1, 40 },	/* legacy OpenAI: alphanumerics only */
	{ "ghp_",	 C_ALNUM,  1, 36 },
	{ "gho_",	 C_ALNUM,  1, 36 },
	{ "ghu_",	 C_ALNUM,  1, 36 },
	{ "ghs_",	 C_ALNUM,  1, 36 },
	{ "ghr_",	 C_ALNUM,  1, 36 },
	{ "github_pat_", C_WORD,   2, 22 },
	{ "glpat-",	 C_URLB64, 0, 20 },
	{ "npm_",	 C_ALNUM,  1, 36 },
	{ "xoxb-",	 C_SLACK,  3, 10 },
	{ "xoxp-",	 C_SLACK,  3, 10 },
	{ "xoxa-",	 C_SLACK,  3, 10 },
	{ "xoxr-",	 C_SLACK,  3, 10 },
	{ "xoxs-",	 C_SLACK,  3, 10 },
	{ "xoxe-",	 C_SLACK,  3, 10 },
	{ "xapp-",	 C_SLACK,  3, 10 },
};

static size_t
mask_token(struct mask_ctx *m, size_t i)
{
	const struct mask_token	*t;
	size_t			 k, b, end, du;

	for (k = 0; k < sizeof mask_tokens / sizeof mask_tokens[0]; k++) {
		t = &mask_tokens[k];
		if (m->in[i] != (unsigned char)t->prefix[0] || !mask_has(m, i, t->prefix))
			continue;
		b = i + strlen(t->prefix);
		end = mask_run(m, t->slot, t->cls, b, &du);
		if (end - b < t->min || du == SIZE_MAX || du < b)
			continue;
		mask_puts(m, t->prefix);
		mask_puts(m, MASK_MARK);
		return end - i;
	}
	return 0;
}

/* AWS access key ids: a four-letter type prefix and 16 uppercase alphanumerics. */
static size_t
mask_aws_id(struct mask_ctx *m, size_t i)
{
	static const char *const pfx[] = { "AKIA", "ASIA", "AGPA", "AIDA", "AROA",
	    "AIPA", "ANPA", "ANVA", "APKA", "ABIA", "ACCA" };
	size_t	k, j;

	if (m->len - i < 20)
		return 0;
	for (k = 0; k < sizeof pfx / sizeof pfx[0]; k++)
		if (memcmp(m->in + i, pfx[k], 4) == 0)
			break;
	if (k == sizeof pfx / sizeof pfx[0])
		return 0;
	for (j = i + 4; j < i + 20; j++)
		if (!CLS(m->in[j], C_DIGIT | C_UPPER))
			return 0;
	if (j < m->len && (CLS(m->in[j], C_ALNUM) ||
	    mask_marker_len(m->in + j, m->len - j) != 0))
		return 0;
	mask_put(m, m->in + i, 4);
	mask_puts(m, MASK_MARK);
	return 20;
}

/* Telegram bot tokens: <8-10 digits>:<35 of [A-Za-z0-9_-]>, also after "bot" in URLs. */
static size_t
mask_telegram(struct mask_ctx *m, size_t i)
{
	int	 c = mask_prev(m);
	size_t	 j, k;

	if (c != -1 && CLS(c, C_DIGIT))
		return 0;
	if (c != -1 && CLS(c, C_UPPER | C_LOWER)) {
		if (m->olen < 3 || memcmp(m->out + m->olen - 3, "bot", 3) != 0)
			return 0;
		if (m->olen > 3 && CLS(m->out[m->olen - 4], C_ALNUM))
			return 0;
	}
	for (j = i; j < m->len && j - i <= 10 && CLS(m->in[j], C_DIGIT); j++)
		;
	if (j - i < 8 || j - i > 10 || j >= m->len || m->in[j] != ':')
		return 0;
	j++;
	for (k = j; k < m->len && k - j <= 35 && CLS(m->in[k], C_URLB64); k++)
		;
	if (k - j != 35)
		return 0;
	if (k < m->len && mask_marker_len(m->in + k, m->len - k) != 0)
		return 0;
	mask_puts(m, "[MASKED:telegram-token]");
	return k - i;
}

/* Slack incoming webhooks: the path after hooks.slack.com/<kind>/ is the secret. */
static size_t
mask_slack_hook(struct mask_ctx *m, size_t i)
{
	static const char *const kinds[] = { "services/", "workflows/", "triggers/" };
	size_t	 k, b, j;

	if (!mask_has(m, i, "hooks.slack.com/"))
		return 0;
	for (k = 0; k < 3; k++)
		if (mask_has(m, i + 16, kinds[k]))
			break;
	if (k == 3)
		return 0;
	b = i + 16 + strlen(kinds[k]);
	for (j = b; j < m->len && (CLS(m->in[j], C_URLB64) || m->in[j] == '/'); j++)
		;
	if (j - b < 8)
		return 0;
	mask_put(m, m->in + i, b - i);
	mask_puts(m, MASK_MARK);
	return j - i;
}

/* A bare "Bearer <token>"; the word alone, or followed by prose, stays. */
static size_t
mask_bearer(struct mask_ctx *m, size_t i)
{
	size_t	 j, digits = 0, letters = 0;

	if (!mask_has(m, i, "Bearer ") && !mask_has(m, i, "bearer ") &&
	    !mask_has(m, i, "BEARER "))
		return 0;
	for (j = i + 7; j < m->len && CLS(m->in[j], C_BEARER); j++) {
		if (CLS(m->in[j], C_DIGIT))
			digits++;
		else if (CLS(m->in[j], C_UPPER | C_LOWER))
			letters++;
	}
	if (j - (i + 7) < 16 || digits == 0 || letters == 0)
		return 0;
	mask_put(m, m->in + i, 7);
	mask_puts(m, MASK_MARK);
	return j - i;
}

/* First occurrence of s in p[0..n), or NULL (memmem is not in C11). */
static const unsigned char *
mask_find(const unsigned char *p, size_t n, const char *s)
{
	const unsigned char	*q, *end = p + n;
	size_t			 sn = strlen(s);

	while ((q = memchr(p, s[0], (size_t)(end - p))) != NULL) {
		if ((size_t)(end - q) < sn)
			return NULL;
		if (memcmp(q, s, sn) == 0)
			return q;
		p = q + 1;
	}
	return NULL;
}

/*
 * PEM private keys, from the BEGIN line through the END line, or to the end of the
 * text when the block was cut off (a truncated key is still key material).
 */
static size_t
mask_pem(struct mask_ctx *m, size_t i)
{
	const unsigned char	*e;
	size_t			 j, l, end;

	if (mask_prev(m) == '-' || !mask_has(m, i, "-----BEGIN "))
		return 0;
	l = i + 11;
	for (j = l; j < m->len && j - l <= MASK_LABEL_MAX &&
	    (CLS(m->in[j], C_UPPER | C_DIGIT) || m->in[j] == ' '); j++)
		;
	if (!mask_has(m, j, "-----"))
		return 0;
	if (!((j - l >= 11 && memcmp(m->in + j - 11, "PRIVATE KEY", 11) == 0) ||
	    (j - l >= 17 && memcmp(m->in + j - 17, "PRIVATE KEY BLOCK", 17) == 0)))
		return 0;
	j += 5;
	e = mask_find(m->in + j, m->len - j, "-----END ");
	if (e == NULL) {
		end = m->len;
		m->pem_open = 1;
	} else {
		end = (size_t)(e - m->in) + 9;
		for (l = end; end < m->len && end - l <= MASK_LABEL_MAX &&
		    (CLS(m->in[end], C_UPPER | C_DIGIT) || m->in[end] == ' '); end++)
			;
		if (mask_has(m, end, "-----"))
			end += 5;
	}
	mask_puts(m, "[MASKED:private-key]");
	return end - i;
}

static int	mask_value_plain(const unsigned char *, size_t);

/*
 * The password of a URL's user information (scheme://user:password@host), judged at
 * the colon: the scheme and user name are looked up in what was already written.
 */
static size_t
mask_url_password(struct mask_ctx *m, size_t i)
{
	size_t	 k, j, n;
	int	 c;

	for (k = m->olen; k > 0 && m->olen - k <= MASK_USER_MAX; k--) {
		c = (unsigned char)m->out[k - 1];
		if (c == '/' || c == '@' || c == ':' || CLS(c, C_STOP))
			break;
	}
	if (k == m->olen || k < 4 || m->olen - k > MASK_USER_MAX)
		return 0;
	if (memcmp(m->out + k - 3, "://", 3) != 0 || !CLS(m->out[k - 4], C_ALNUM))
		return 0;
	j = i + 1;
	if ((n = mask_marker_len(m->in + j, m->len - j)) != 0) {
		mask_put(m, m->in + i, 1 + n);
		return 1 + n;
	}
	for (; j < m->len; j++) {
		c = m->in[j];
		if (c == '@' || c == '/' || c == '?' || c == '#' || c == '[' ||
		    CLS(c, C_STOP))
			break;
	}
	if (j == i + 1 || j >= m->len || m->in[j] != '@')
		return 0;
	if (mask_value_plain(m->in + i + 1, j - i - 1))
		return 0;
	mask_puts(m, ":" MASK_MARK "@");
	return j + 1 - i;
}

enum mask_kind {
	MASK_NONE,
	MASK_SECRET,
	MASK_AUTH,
	MASK_AWS_SECRET,
};

/*
 * Whether a name holds one of the keywords as a word part: "API_KEY", "apiKey",
 * "db.password" do; "input_tokens", "keyboard", "MONKEYS" do not. An all-uppercase
 * match must not run into another letter; otherwise into another lowercase letter
 * (camelCase).
 */
static int
mask_keyword_at(const unsigned char *p, size_t n, size_t at, size_t kl)
{
	size_t	 i;
	int	 upper = 1;

	for (i = at; i < at + kl; i++)
		if (!CLS(p[i], C_UPPER))
			upper = 0;
	if (at + kl == n)
		return 1;
	if (upper)
		return !CLS(p[at + kl], C_UPPER | C_LOWER);
	return !CLS(p[at + kl], C_LOWER);
}

static enum mask_kind
mask_name_kind(const unsigned char *p, size_t n, int at_end)
{
	static const char *const kw[] = { "password", "passwd", "secret", "token",
	    "key", "pwd" };
	char	 squash[MASK_NAME_MAX + 2];
	size_t	 i, k, kl, sn = 0;

	if ((n == 3 && mask_has_ci(p, n, "pwd")) || (n == 6 && mask_has_ci(p, n, "oldpwd")))
		return MASK_NONE;	/* the shell's working directory, not a password */
	for (i = 0; i < n; i++)
		if (p[i] != '_' && p[i] != '-' && p[i] != '.')
			squash[sn++] = (char)mask_lower(p[i]);
	if (sn >= 15 && memcmp(squash + sn - 15, "secretaccesskey", 15) == 0)
		return MASK_AWS_SECRET;
	for (i = 0; !at_end && i + 13 <= n; i++)
		if (mask_has_ci(p + i, n - i, "authorization"))
			return MASK_AUTH;
	for (k = 0; k < sizeof kw / sizeof kw[0]; k++) {
		kl = strlen(kw[k]);
		for (i = at_end ? (n >= kl ? n - kl : n) : 0; i + kl <= n; i++)
			if (mask_has_ci(p + i, n - i, kw[k]) &&
			    mask_keyword_at(p, n, i, kl))
				return MASK_SECRET;
	}
	return MASK_NONE;
}

/* Values that are plainly not secrets: booleans, nulls, type names, scheme words. */
static int
mask_value_plain(const unsigned char *p, size_t n)
{
	static const char *const words[] = { "true", "false", "null", "none", "nil",
	    "undefined", "yes", "no", "on", "off", "str", "string", "int", "integer",
	    "number", "bool", "boolean", "bytes", "any", "object", "bearer", "basic" };
	size_t	 k, i;

	if (n > 256)
		return 0;	/* bounds the rescan of a value left in place */
	for (k = 0; k < sizeof words / sizeof words[0]; k++)
		if (strlen(words[k]) == n && mask_has_ci(p, n, words[k]))
			return 1;
	/* References to other variables: $NAME, ${...}, $(...), ${{ ... }}. */
	if (n >= 1 && p[0] == '$') {
		if (n == 1 || p[1] == '{' || p[1] == '(')
			return 1;
		for (i = 1; i < n; i++)
			if (!CLS(p[i], C_UPPER | C_DIGIT) && p[i] != '_')
				return 0;
		return 1;
	}
	return 0;
}

static int
mask_scheme_word(const unsigned char *p, size_t n)
{
	static const char *const words[] = { "bearer", "basic", "token", "digest",
	    "negotiate", "ntlm", "apikey", "key", "bot" };
	size_t	k;

	for (k = 0; k < sizeof words / sizeof words[0]; k++)
		if (strlen(words[k]) == n && mask_has_ci(p, n, words[k]))
			return 1;
	return 0;
}

/*
 * Where an assignment's value starts (after its opening quote, if any); returns the
 * quote: '"', '\'', '`', '\\' for an escaped \" inside a JSON string, or 0.
 */
static int
mask_value_open(const struct mask_ctx *m, size_t v, size_t *vs)
{
	if (v < m->len && (m->in[v] == '"' || m->in[v] == '\'' || m->in[v] == '`')) {
		*vs = v + 1;
		return m->in[v];
	}
	if (v + 1 < m->len && m->in[v] == '\\' && m->in[v + 1] == '"') {
		*vs = v + 2;
		return '\\';
	}
	/* Python string prefixes: f"...", r'...', b"...". */
	if (v + 1 < m->len && strchr("fFrRbBuU", m->in[v]) != NULL && m->in[v] != '\0' &&
	    (m->in[v + 1] == '"' || m->in[v + 1] == '\'')) {
		*vs = v + 2;
		return m->in[v + 1];
	}
	*vs = v;
	return 0;
}

/*
 * Where the value starting at vs ends: at its closing quote (or the end of the line)
 * if quoted, else at the first stop byte.
 */
static size_t
mask_value_end(const struct mask_ctx *m, size_t vs, int q)
{
	size_t	 j;
	int	 c;

	for (j = vs; j < m->len; j++) {
		c = m->in[j];
		if (c == '\n' || c == '\r' || c == '\0')
			break;
		/*
		 * mask_pem takes a key block whole; the value ends where it begins, and
		 * so where its marker begins on a second pass.
		 */
		if (c == '-' && mask_has(m, j, "-----BEGIN "))
			break;
		if (c == '[' && j > vs && mask_marker_len(m->in + j, m->len - j) != 0)
			break;
		if (q == '"' && c == '\\' && j + 1 < m->len && m->in[j + 1] != '\n') {
			j++;
			continue;
		}
		if (q == '\\' && (c == '"' || (c == '\\' && j + 1 < m->len &&
		    m->in[j + 1] == '"')))
			break;
		if (q != 0 && q != '\\') {
			if (c == q)
				break;
			continue;
		}
		if (q != 0)
			continue;
		if (c == '\\' && j + 1 < m->len && strchr("\"'nrt\\", m->in[j + 1]) != NULL)
			break;
		if (CLS(c, C_STOP))
			break;
	}
	return j;
}

/*
 * Whether an unquoted value is code rather than a literal: the name's own identifier,
 * same case (f(api_key=api_key), self.password = password; not PASSWORD=password) or, in a spaced "name = value", a
 * dotted path (secret = process.env.JWT_SECRET). A shell or YAML "a.b" stays a value.
 */
static int
mask_value_code(const struct mask_ctx *m, size_t i, size_t j, size_t vs, size_t ve,
    int spaced)
{
	size_t	 seg, k;
	int	 dots = 0;

	for (seg = j; seg > i && m->in[seg - 1] != '.'; seg--)
		;
	if (ve - vs == j - seg) {
		for (k = 0; k < ve - vs; k++)
			if (!CLS(m->in[vs + k], C_WORD) || m->in[vs + k] != m->in[seg + k])
				break;
		if (k == ve - vs)
			return 1;
	}
	if (!spaced)
		return 0;
	for (k = vs;;) {
		if (k >= ve || !(CLS(m->in[k], C_UPPER | C_LOWER) || m->in[k] == '_'))
			return 0;
		while (k < ve && CLS(m->in[k], C_WORD))
			k++;
		if (k == ve)
			return dots > 0;
		if (m->in[k] != '.')
			return 0;
		dots++;
		k++;
	}
}

/*
 * Copy an assignment's name, masked on its own: a token can hide inside a name
 * ("x-ghp_...-TOKEN=v", "-xapp-Authorization:"), and a second pass, where the masked
 * value no longer makes this an assignment, walks the name with every detector.
 */
static void
mask_name(struct mask_ctx *m, size_t i, size_t j)
{
	char	*sub;
	size_t	 n;

	if ((sub = mask_secrets_buf((const char *)m->in + i, j - i, &n)) == NULL) {
		m->oom = 1;
		return;
	}
	mask_put(m, sub, n);
	free(sub);
}

/* The assignment from its name up to (not including) to, the name masked on its own. */
static void
mask_head(struct mask_ctx *m, size_t i, size_t j, size_t to)
{
	mask_name(m, i, j);
	mask_put(m, m->in + j, to - j);
}

/*
 * Assignments whose name holds a secret keyword: NAME=value, NAME: value, JSON
 * "name": "value", --name=value and --name value. The name is kept; the value is
 * replaced. Called only where an identifier starts.
 */
static size_t
mask_assign(struct mask_ctx *m, size_t i)
{
	enum mask_kind	 kind;
	size_t		 j, k, n, vs, ve, sp, c0;
	int		 flag = 0, spaced = 0, quoted;

	for (j = i; j < m->len && CLS(m->in[j], C_IDENT); j++)
		if (j - i > MASK_NAME_MAX)
			return 0;
	k = j;
	if (k < m->len && (m->in[k] == '"' || m->in[k] == '\''))
		k++;
	else if (k + 1 < m->len && m->in[k] == '\\' && (m->in[k + 1] == '"' ||
	    m->in[k + 1] == '\''))
		k += 2;
	for (n = 0; k < m->len && n <= MASK_SPACE_MAX &&
	    (m->in[k] == ' ' || m->in[k] == '\t'); k++, n++)
		;
	if (k >= m->len)
		return 0;
	if (m->in[k] == '=') {
		if (k + 1 < m->len && m->in[k + 1] == '=')
			return 0;
		spaced = n > 0 || (k + 1 < m->len && m->in[k + 1] == ' ');
		k += (k + 1 < m->len && m->in[k + 1] == '>') ? 2 : 1;
	} else if (m->in[k] == ':') {
		if (k + 1 < m->len && m->in[k + 1] == ':')
			return 0;
		k += (k + 1 < m->len && m->in[k + 1] == '=') ? 2 : 1;
	} else if (k == j + 1 && m->in[j] == ' ' && j - i > 2 &&
	    m->in[i] == '-' && m->in[i + 1] == '-') {
		flag = 1;	/* --password VALUE */
		if (m->in[k] == '-')
			return 0;
	} else
		return 0;
	if ((kind = mask_name_kind(m->in + i, j - i, flag)) == MASK_NONE)
		return 0;
	/* scheme://token:x@host is a URL's user name, not an assignment. */
	if (m->olen >= 2 && memcmp(m->out + m->olen - 2, "//", 2) == 0)
		return 0;
	if (!flag)
		for (n = 0; k < m->len && n <= MASK_SPACE_MAX &&
		    (m->in[k] == ' ' || m->in[k] == '\t'); k++, n++)
			;
	/*
	 * A value that stays is not consumed here: the main loop walks it, so a second
	 * pass, where this name may no longer parse, sees the same detectors run on it.
	 */
	quoted = mask_value_open(m, k, &vs);
	if (vs >= m->len || mask_marker_len(m->in + vs, m->len - vs) != 0 ||
	    mask_has(m, vs, "-----BEGIN "))
		return 0;	/* empty, already masked, or a PEM block for mask_pem */
	if (!quoted && !CLS(m->in[vs], C_DIGIT)) {
		/* A call or an index is code, not a literal: token = get_token(). */
		for (n = vs; n < m->len && CLS(m->in[n], C_IDENT); n++)
			;
		if (n > vs && n < m->len && (m->in[n] == '(' || m->in[n] == '['))
			return 0;
	}
	/* Only now scan to the end: the scans above are bounded or cover one word. */
	if ((ve = mask_value_end(m, vs, quoted)) == vs)
		return 0;
	if (!quoted && mask_value_code(m, i, j, vs, ve, spaced))
		return 0;
	if (kind == MASK_AUTH) {
		/* Keep the scheme: "Authorization: Bearer [MASKED]". */
		for (sp = vs; sp < ve && CLS(m->in[sp], C_UPPER | C_LOWER); sp++)
			;
		for (c0 = sp; c0 < ve || (!quoted && c0 < m->len); c0++)
			if (m->in[c0] != ' ')
				break;
		if (sp > vs && c0 > sp && (quoted || (sp == ve && c0 < m->len &&
		    !CLS(m->in[c0], C_STOP)))) {
			if (mask_marker_len(m->in + c0, m->len - c0) != 0)
				return 0;
			if (!quoted)
				ve = mask_value_end(m, c0, 0);
			if (c0 == ve)
				return 0;
			for (n = c0; n < ve && m->in[n] != ' '; n++)
				;
			mask_head(m, i, j, c0);
			mask_puts(m, MASK_MARK);
			return n - i;
		}
		if (sp == ve && mask_scheme_word(m->in + vs, ve - vs))
			return 0;
	}
	if (mask_value_plain(m->in + vs, ve - vs))
		return 0;
	mask_name(m, i, j);
	mask_put(m, m->in + j, vs - j);
	if (kind == MASK_AWS_SECRET && ve - vs == 40) {
		for (n = vs; n < ve && CLS(m->in[n], C_AWS); n++)
			;
		mask_puts(m, n == ve ? "[MASKED:aws-secret]" : MASK_MARK);
	} else
		mask_puts(m, MASK_MARK);
	return ve - i;
}

/* Try every detector that may start at i; 0 if none did. */
static size_t
mask_at(struct mask_ctx *m, size_t i)
{
	unsigned char	 c = m->in[i];
	size_t		 n;
	int		 p;

	switch (c) {
	case '[':
		if ((n = mask_marker_len(m->in + i, m->len - i)) != 0)
			mask_put(m, m->in + i, n);
		return n;
	case '-':
		if ((n = mask_pem(m, i)) != 0)
			return n;
		break;
	case ':':
		if (mask_has(m, i, "://"))
			return 0;
		return mask_url_password(m, i);
	}
	if (!CLS(c, C_IDENT))
		return 0;
	if (CLS(c, C_DIGIT))
		return mask_telegram(m, i);
	if (mask_prev_alnum(m))
		return 0;
	switch (c) {
	case 's':
	case 'g':
	case 'n':
	case 'x':
		if ((n = mask_token(m, i)) != 0)
			return n;
		break;
	case 'A':
		if ((n = mask_aws_id(m, i)) != 0)
			return n;
		break;
	case 'B':
	case 'b':
		if ((n = mask_bearer(m, i)) != 0)
			return n;
		break;
	case 'h':
		if ((n = mask_slack_hook(m, i)) != 0)
			return n;
		break;
	}
	p = mask_prev(m);
	if (p != -1 && CLS(p, C_IDENT))
		return 0;
	return mask_assign(m, i);
}

/*
 * Whether any detector could start at i, given the byte before it: a cheap filter so
 * that the inside of words and plain punctuation are copied in bulk.
 */
static int
mask_maybe(const struct mask_ctx *m, size_t i, int prev)
{
	unsigned char	c = m->in[i];

	switch (c) {
	case '[':
		return i + 1 < m->len && m->in[i + 1] == 'M';
	case '-':
		return prev == -1 || !CLS(prev, C_IDENT) ||
		    (i + 1 < m->len && m->in[i + 1] == '-');
	case ':':
		return 1;
	}
	if (CLS(c, C_DIGIT))
		return prev == -1 || !CLS(prev, C_ALNUM) || prev == 't';
	if (CLS(c, C_UPPER | C_LOWER))
		return prev == -1 || !CLS(prev, C_ALNUM);
	if (CLS(c, C_IDENT))
		return prev == -1 || !CLS(prev, C_IDENT);
	return 0;
}

static char *
mask_pass(const char *text, size_t len, size_t *outlen, int *pem_open)
{
	struct mask_ctx	 m;
	size_t		 i, n, from = 0;
	int		 prev = -1;

	pthread_once(&mask_cls_once, mask_cls_init);
	if (len > SIZE_MAX / 4) {
		errno = ENOMEM;	/* the output may be up to three times the input */
		return NULL;
	}
	memset(&m, 0, sizeof m);
	m.in = (const unsigned char *)text;
	m.len = len;
	m.osize = len + len / 8 + 64;
	if ((m.out = malloc(m.osize)) == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i < len && !m.oom;) {
		if (!mask_maybe(&m, i, prev)) {
			prev = m.in[i++];
			continue;
		}
		/* Detectors judge boundaries on the output: bring it up to date. */
		mask_put(&m, m.in + from, i - from);
		if ((n = mask_at(&m, i)) == 0) {
			from = i;
			prev = m.in[i++];
		} else {
			i += n;
			from = i;
			prev = mask_prev(&m);
		}
	}
	mask_put(&m, m.in + from, len - from);
	if (m.oom) {
		free(m.out);
		errno = ENOMEM;
		return NULL;
	}
	m.out[m.olen] = '\0';
	if (outlen != NULL)
		*outlen = m.olen;
	if (m.pem_open)
		*pem_open = 1;
	return m.out;
}

/*
 * Masking one secret can change what the next detector sees (a token that swallowed an
 * assignment's name leaves its value for a second look), so idempotence is made to hold
 * by construction: passes repeat until one changes nothing. Real text reaches that point
 * on the second pass; MASK_MAX_PASSES bounds adversarial input, which then comes out
 * masked more, never less.
 */
#define MASK_MAX_PASSES	8

static char	*mask_literals[MASK_LITERALS_MAX];

int
mask_literal_add(const char *secret)
{
	size_t	 i, free_slot = MASK_LITERALS_MAX;

	if (secret == NULL || strlen(secret) < MASK_LITERAL_MIN) {
		errno = EINVAL;
		return -1;
	}
	for (i = 0; i < MASK_LITERALS_MAX; i++) {
		if (mask_literals[i] != NULL && strcmp(mask_literals[i], secret) == 0)
			return 0;
		if (mask_literals[i] == NULL && free_slot == MASK_LITERALS_MAX)
			free_slot = i;
	}
	if (free_slot == MASK_LITERALS_MAX) {
		errno = ENOSPC;
		return -1;
	}
	if ((mask_literals[free_slot] = strdup(secret)) == NULL)
		return -1;
	return 0;
}

void
mask_literal_remove(const char *secret)
{
	for (size_t i = 0; secret != NULL && i < MASK_LITERALS_MAX; i++)
		if (mask_literals[i] != NULL && strcmp(mask_literals[i], secret) == 0) {
			explicit_bzero(mask_literals[i], strlen(mask_literals[i]));
			free(mask_literals[i]);
			mask_literals[i] = NULL;
		}
}

/* Over len bytes that may hold NULs; returns the new length. */
static size_t
mask_literals_buf(char *s, size_t len)
{
	const size_t	 ml = sizeof MASK_LITERAL_MARK - 1;
	char		*p;
	size_t		 sl, off;

	for (size_t i = 0; i < MASK_LITERALS_MAX; i++) {
		if (mask_literals[i] == NULL)
			continue;
		sl = strlen(mask_literals[i]);
		off = 0;
		while (off + sl <= len && (p = memmem(s + off, len - off, mask_literals[i],
		    sl)) != NULL) {
			memcpy(p, MASK_LITERAL_MARK, ml);
			memmove(p + ml, p + sl, len - (size_t)(p - s) - sl);
			len -= sl - ml;
			off = (size_t)(p - s) + ml;
		}
		s[len] = '\0';
	}
	return len;
}

void
mask_literals_inplace(char *s)
{
	if (s != NULL)
		mask_literals_buf(s, strlen(s));
}

char *
mask_secrets_part(const char *text, size_t len, size_t *outlen, int *pem_open)
{
	char	*cur, *next;
	size_t	 curlen, nextlen;

	*pem_open = 0;
	if ((cur = mask_pass(text, len, &curlen, pem_open)) == NULL)
		return NULL;
	for (int pass = 1; pass < MASK_MAX_PASSES; pass++) {
		if ((next = mask_pass(cur, curlen, &nextlen, pem_open)) == NULL) {
			free(cur);
			return NULL;
		}
		if (nextlen == curlen && memcmp(next, cur, curlen) == 0) {
			free(next);
			break;
		}
		free(cur);
		cur = next;
		curlen = nextlen;
	}
	curlen = mask_literals_buf(cur, curlen);
	if (outlen != NULL)
		*outlen = curlen;
	return cur;
}

char *
mask_secrets_buf(const char *text, size_t len, size_t *outlen)
{
	int	pem_open;

	return mask_secrets_part(text, len, outlen, &pem_open);
}

char *
mask_secrets(const char *text)
{
	return mask_secrets_buf(text, strlen(text), NULL);
}
