/*
 * Secret masking over a stream that arrives in chunks (common/maskstream.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mask.h"
#include "maskstream.h"

#define MASKSTREAM_END		"-----END "
#define MASKSTREAM_LABEL_MAX	40	/* as mask.c's MASK_LABEL_MAX */
#define MASKSTREAM_SEED		8	/* strlen(MASKSTREAM_END) - 1 */
#define MASKSTREAM_CUT_TRIES	4	/* candidate cuts checked inside one long line */

struct maskstream {
	char	*buf;		/* input held back, unmasked, never given out as it is */
	size_t	 len;
	size_t	 size;
	int	 in_pem;	/* inside a key block whose marker went out */
	int	 resync;	/* a key ran past MASKSTREAM_PEM_MAX: drop to the line end */
	size_t	 pem_skipped;
};

/* What goes out of one call. */
struct maskstream_out {
	char	*p;
	size_t	 len;
	size_t	 size;
	int	 oom;
};

struct maskstream *
maskstream_new(void)
{
	struct maskstream	*ms;

	if ((ms = calloc(1, sizeof *ms)) == NULL)
		errno = ENOMEM;
	return ms;
}

void
maskstream_free(struct maskstream *ms)
{
	if (ms == NULL)
		return;
	if (ms->buf != NULL)
		explicit_bzero(ms->buf, ms->size);
	free(ms->buf);
	free(ms);
}

size_t
maskstream_held(const struct maskstream *ms)
{
	return ms->len;
}

static void
maskstream_put(struct maskstream_out *o, const char *s, size_t n)
{
	size_t	 nsize;
	char	*p;

	if (o->oom)
		return;
	if (o->len + n + 1 > o->size) {
		nsize = o->size > 0 ? o->size : 256;
		while (nsize < o->len + n + 1)
			nsize *= 2;
		if ((p = realloc(o->p, nsize)) == NULL) {
			o->oom = 1;
			return;
		}
		o->p = p;
		o->size = nsize;
	}
	memcpy(o->p + o->len, s, n);
	o->len += n;
	o->p[o->len] = '\0';
}

/* Forget the first n held bytes (key material among them is wiped). */
static void
maskstream_drop(struct maskstream *ms, size_t n)
{
	memmove(ms->buf, ms->buf + n, ms->len - n);
	explicit_bzero(ms->buf + ms->len - n, n);
	ms->len -= n;
}

/*
 * Mask the first n held bytes and give them out. When they end inside a key block, the
 * stream goes on swallowing it; the last bytes stay held so that an END line whose
 * start they are is still found.
 */
static void
maskstream_emit(struct maskstream *ms, struct maskstream_out *o, size_t n)
{
	char	*m;
	size_t	 mlen, seed = 0;
	int	 pem_open;

	if ((m = mask_secrets_part(ms->buf, n, &mlen, &pem_open)) == NULL) {
		o->oom = 1;
		maskstream_drop(ms, n);
		return;
	}
	maskstream_put(o, m, mlen);
	free(m);
	if (pem_open) {
		ms->in_pem = 1;
		ms->pem_skipped = 0;
		seed = n < MASKSTREAM_SEED ? n : MASKSTREAM_SEED;
	}
	maskstream_drop(ms, n - seed);
}

static int
maskstream_label(int c)
{
	return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == ' ';
}

/*
 * Inside a key block: drop what is held up to and through its END line ("-----END ",
 * its label, "-----"), as mask.c's mask_pem does. Returns 1 when the block is over
 * (or given up on), 0 to wait for more input.
 */
static int
maskstream_pem(struct maskstream *ms, int eos)
{
	const char	*e;
	size_t		 j, l, keep;

	e = memmem(ms->buf, ms->len, MASKSTREAM_END, strlen(MASKSTREAM_END));
	if (e == NULL) {
		keep = eos ? 0 : (ms->len < MASKSTREAM_SEED ? ms->len : MASKSTREAM_SEED);
		ms->pem_skipped += ms->len - keep;
		maskstream_drop(ms, ms->len - keep);
		if (eos || ms->pem_skipped > MASKSTREAM_PEM_MAX) {
			ms->in_pem = 0;
			ms->resync = !eos;
			return 1;
		}
		return 0;
	}
	j = (size_t)(e - ms->buf) + strlen(MASKSTREAM_END);
	for (l = j; l < ms->len && l - j <= MASKSTREAM_LABEL_MAX &&
	    maskstream_label((unsigned char)ms->buf[l]); l++)
		;
	if (!eos && (l == ms->len || (ms->len - l < 5 &&
	    memcmp(ms->buf + l, "-----", ms->len - l) == 0))) {
		/* The label or its dashes may go on in the next chunk. */
		maskstream_drop(ms, (size_t)(e - ms->buf));
		return 0;
	}
	if (ms->len - l >= 5 && memcmp(ms->buf + l, "-----", 5) == 0)
		l += 5;
	maskstream_drop(ms, l);
	ms->in_pem = 0;
	return 1;
}

/* A key too long to be one: what is left of its line is dropped too. */
static int
maskstream_resync(struct maskstream *ms)
{
	const char	*nl = memchr(ms->buf, '\n', ms->len);

	if (nl == NULL) {
		maskstream_drop(ms, ms->len);
		return 0;
	}
	maskstream_drop(ms, (size_t)(nl - ms->buf));
	ms->resync = 0;
	return 1;
}

static int
maskstream_blank(int c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

size_t
maskstream_cut_len(const char *s, size_t len)
{
	size_t	i;

	for (i = len; i > 0 && len - i < MASKSTREAM_TAIL; i--)
		if (maskstream_blank((unsigned char)s[i - 1]))
			return i;
	return i;
}

/* Whether masking [0, c) and [c, len) alone gives what masking [0, len) gives. */
static int
maskstream_cut_ok(const struct maskstream *ms, const char *whole, size_t wlen, size_t c)
{
	char	*a, *b;
	size_t	 alen, blen;
	int	 pem_a, pem_b, ok = 0;

	if ((a = mask_secrets_part(ms->buf, c, &alen, &pem_a)) == NULL)
		return 0;
	if ((b = mask_secrets_part(ms->buf + c, ms->len - c, &blen, &pem_b)) != NULL)
		ok = !pem_a && alen + blen == wlen && memcmp(a, whole, alen) == 0 &&
		    memcmp(b, whole + alen, blen) == 0;
	free(a);
	free(b);
	return ok;
}

/*
 * Where an open line may be cut: after a blank at least MASKSTREAM_TAIL bytes before
 * its end, where the two sides masked alone give what the whole gives. A blank is as
 * good as the start of a text to every detector (none looks back across one), and a
 * secret that crossed the cut would have to run on through the whole tail. 0: none
 * found in MASKSTREAM_CUT_TRIES tries; a forced cut then falls back on the tail alone.
 */
static size_t
maskstream_cut(const struct maskstream *ms, int forced)
{
	char	*whole;
	size_t	 wlen, c, found = 0;
	int	 pem, tries = 0;

	if (ms->len <= MASKSTREAM_TAIL)
		return 0;
	if ((whole = mask_secrets_part(ms->buf, ms->len, &wlen, &pem)) == NULL)
		return forced ? ms->len - MASKSTREAM_TAIL : 0;
	for (c = ms->len - MASKSTREAM_TAIL; c > 0 && tries < MASKSTREAM_CUT_TRIES; c--) {
		if (!maskstream_blank((unsigned char)ms->buf[c - 1]))
			continue;
		tries++;
		if (maskstream_cut_ok(ms, whole, wlen, c)) {
			found = c;
			break;
		}
	}
	free(whole);
	if (found == 0 && forced)
		found = ms->len - MASKSTREAM_TAIL;
	return found;
}

/* Give out all that may go out now; at the end of the stream, everything. */
static void
maskstream_run(struct maskstream *ms, struct maskstream_out *o, int eos, int idle)
{
	const char	*nl;
	size_t		 n;

	while (!o->oom) {
		if (ms->resync) {
			if (eos) {
				maskstream_drop(ms, ms->len);
				ms->resync = 0;
			} else if (!maskstream_resync(ms))
				break;
			continue;
		}
		if (ms->in_pem) {
			if (!maskstream_pem(ms, eos))
				break;
			continue;
		}
		if (ms->len == 0)
			break;
		if ((nl = memrchr(ms->buf, '\n', ms->len)) != NULL)
			n = (size_t)(nl - ms->buf) + 1;
		else if (eos)
			n = ms->len;
		else if (ms->len > MASKSTREAM_HOLD_MAX)
			n = maskstream_cut(ms, 1);
		else if (idle) {
			n = maskstream_cut(ms, 0);
			idle = 0;	/* once per call: the rest waits for more input */
		} else
			n = 0;
		if (n == 0)
			break;
		maskstream_emit(ms, o, n);
	}
}

static char *
maskstream_result(struct maskstream_out *o, size_t *outlen)
{
	if (o->oom) {
		free(o->p);
		errno = ENOMEM;
		return NULL;
	}
	if (o->p == NULL && (o->p = calloc(1, 1)) == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	if (outlen != NULL)
		*outlen = o->len;
	return o->p;
}

char *
maskstream_feed(struct maskstream *ms, const char *data, size_t len, size_t *outlen)
{
	struct maskstream_out	 o = { NULL, 0, 0, 0 };
	size_t			 nsize;
	char			*p;

	if (ms->len + len + 1 > ms->size) {
		nsize = ms->size > 0 ? ms->size : 1024;
		while (nsize < ms->len + len + 1)
			nsize *= 2;
		if ((p = malloc(nsize)) == NULL) {
			errno = ENOMEM;
			return NULL;
		}
		/* Not realloc: the old copy is wiped before it is freed. */
		if (ms->len > 0)
			memcpy(p, ms->buf, ms->len);
		if (ms->buf != NULL)
			explicit_bzero(ms->buf, ms->size);
		free(ms->buf);
		ms->buf = p;
		ms->size = nsize;
	}
	if (len > 0)
		memcpy(ms->buf + ms->len, data, len);
	ms->len += len;
	maskstream_run(ms, &o, 0, 0);
	return maskstream_result(&o, outlen);
}

char *
maskstream_idle(struct maskstream *ms, size_t *outlen)
{
	struct maskstream_out	 o = { NULL, 0, 0, 0 };

	maskstream_run(ms, &o, 0, 1);
	return maskstream_result(&o, outlen);
}

char *
maskstream_end(struct maskstream *ms, size_t *outlen)
{
	struct maskstream_out	 o = { NULL, 0, 0, 0 };

	maskstream_run(ms, &o, 1, 0);
	ms->in_pem = ms->resync = 0;
	maskstream_drop(ms, ms->len);
	return maskstream_result(&o, outlen);
}
