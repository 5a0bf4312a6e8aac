/*
 * The messages between clockworkd and cw-parse (common/parsemsg.h). Both ends use these
 * functions, so the format has one definition; every read is bounded by the payload and
 * by the caller's limit for that field.
 */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "parsemsg.h"

static void
parsemsg_put(struct parsemsg_buf *b, const void *p, size_t n)
{
	size_t	 cap;
	uint8_t	*np;

	if (b->failed)
		return;
	if (n > PARSEMSG_MAX || b->len > PARSEMSG_MAX - n) {
		b->failed = 1;
		return;
	}
	if (b->len + n > b->cap) {
		cap = b->cap == 0 ? 256 : b->cap;
		while (cap < b->len + n)
			cap *= 2;
		if ((np = realloc(b->p, cap)) == NULL) {
			b->failed = 1;
			return;
		}
		b->p = np;
		b->cap = cap;
	}
	if (n > 0)
		memcpy(b->p + b->len, p, n);
	b->len += n;
}

void
parsemsg_put_raw(struct parsemsg_buf *b, const void *p, size_t n)
{
	parsemsg_put(b, p, n);
}

void
parsemsg_put_u8(struct parsemsg_buf *b, uint8_t v)
{
	parsemsg_put(b, &v, 1);
}

void
parsemsg_put_u32(struct parsemsg_buf *b, uint32_t v)
{
	uint8_t	x[4] = { v, v >> 8, v >> 16, v >> 24 };

	parsemsg_put(b, x, sizeof x);
}

void
parsemsg_put_u64(struct parsemsg_buf *b, uint64_t v)
{
	parsemsg_put_u32(b, (uint32_t)v);
	parsemsg_put_u32(b, (uint32_t)(v >> 32));
}

void
parsemsg_put_i64(struct parsemsg_buf *b, int64_t v)
{
	parsemsg_put_u64(b, (uint64_t)v);
}

void
parsemsg_put_f64(struct parsemsg_buf *b, double d)
{
	uint64_t	u;

	memcpy(&u, &d, sizeof u);
	parsemsg_put_u64(b, u);
}

void
parsemsg_put_str(struct parsemsg_buf *b, const char *s, size_t len)
{
	if (s == NULL)
		len = 0;
	else if (len == (size_t)-1)
		len = strlen(s);
	if (len > UINT32_MAX) {
		b->failed = 1;
		return;
	}
	parsemsg_put_u32(b, (uint32_t)len);
	parsemsg_put(b, s, len);
}

void
parsemsg_buf_free(struct parsemsg_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof *b);
}

void
parsemsg_rd_init(struct parsemsg_rd *r, const void *p, size_t len)
{
	r->p = p;
	r->len = p == NULL ? 0 : len;
	r->off = 0;
	r->bad = 0;
}

static const uint8_t *
parsemsg_take(struct parsemsg_rd *r, size_t n)
{
	const uint8_t	*p;

	if (r->bad || n > r->len - r->off) {
		r->bad = 1;
		return NULL;
	}
	p = r->p + r->off;
	r->off += n;
	return p;
}

uint8_t
parsemsg_get_u8(struct parsemsg_rd *r)
{
	const uint8_t	*p = parsemsg_take(r, 1);

	return p == NULL ? 0 : p[0];
}

uint32_t
parsemsg_get_u32(struct parsemsg_rd *r)
{
	const uint8_t	*p = parsemsg_take(r, 4);

	if (p == NULL)
		return 0;
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24;
}

uint64_t
parsemsg_get_u64(struct parsemsg_rd *r)
{
	uint64_t	lo = parsemsg_get_u32(r);

	return lo | (uint64_t)parsemsg_get_u32(r) << 32;
}

int64_t
parsemsg_get_i64(struct parsemsg_rd *r)
{
	return (int64_t)parsemsg_get_u64(r);
}

double
parsemsg_get_f64(struct parsemsg_rd *r)
{
	uint64_t	u = parsemsg_get_u64(r);
	double		d;

	memcpy(&d, &u, sizeof d);
	if (!isfinite(d)) {
		r->bad = 1;
		return 0;
	}
	return d;
}

const uint8_t *
parsemsg_get_bytes(struct parsemsg_rd *r, size_t max, size_t *len)
{
	uint32_t	 n = parsemsg_get_u32(r);
	const uint8_t	*p;

	*len = 0;
	if (r->bad || n > max) {
		r->bad = 1;
		return NULL;
	}
	if ((p = parsemsg_take(r, n)) == NULL)
		return NULL;
	*len = n;
	return p;
}

int
parsemsg_get_strbuf(struct parsemsg_rd *r, char *out, size_t outlen, size_t max)
{
	const uint8_t	*p;
	size_t		 n;

	out[0] = '\0';
	if (max >= outlen)
		max = outlen - 1;
	if ((p = parsemsg_get_bytes(r, max, &n)) == NULL)
		return -1;
	if (memchr(p, '\0', n) != NULL) {
		r->bad = 1;
		return -1;
	}
	memcpy(out, p, n);
	out[n] = '\0';
	return 0;
}

char *
parsemsg_get_str(struct parsemsg_rd *r, size_t max)
{
	const uint8_t	*p;
	size_t		 n;
	char		*s;

	if ((p = parsemsg_get_bytes(r, max, &n)) == NULL)
		return NULL;
	if (memchr(p, '\0', n) != NULL || (s = malloc(n + 1)) == NULL) {
		r->bad = 1;
		return NULL;
	}
	memcpy(s, p, n);
	s[n] = '\0';
	return s;
}

int
parsemsg_rd_done(const struct parsemsg_rd *r)
{
	return r->bad || r->off != r->len ? -1 : 0;
}

void
parsemsg_header(uint8_t out[PARSEMSG_HEADER], int type, size_t len, uint32_t seq)
{
	out[0] = 'C';
	out[1] = 'P';
	out[2] = PARSEMSG_VERSION;
	out[3] = (uint8_t)type;
	for (int i = 0; i < 4; i++) {
		out[4 + i] = (uint8_t)(len >> (8 * i));
		out[8 + i] = (uint8_t)(seq >> (8 * i));
	}
}

static int
parsemsg_type_known(int t)
{
	return (t >= PARSEMSG_TRANSCRIPT && t <= PARSEMSG_REQ_LAST) ||
	    (t >= PARSEMSG_ERROR && t <= PARSEMSG_PROBE_OK);
}

int
parsemsg_header_check(const uint8_t in[PARSEMSG_HEADER], int *type, size_t *len,
    uint32_t *seq, const char **why)
{
	uint32_t	n = 0, s = 0;

	for (int i = 3; i >= 0; i--) {
		n = n << 8 | in[4 + i];
		s = s << 8 | in[8 + i];
	}
	if (in[0] != 'C' || in[1] != 'P') {
		*why = "not a cw-parse message (magic)";
		return -1;
	}
	if (in[2] != PARSEMSG_VERSION) {
		*why = "a cw-parse message of another version";
		return -1;
	}
	if (!parsemsg_type_known(in[3])) {
		*why = "a cw-parse message of an unknown type";
		return -1;
	}
	if (n > PARSEMSG_MAX) {
		*why = "a cw-parse message over its size limit";
		return -1;
	}
	*type = in[3];
	*len = n;
	*seq = s;
	return 0;
}

static int
parsemsg_write_all(int fd, const uint8_t *p, size_t n)
{
	ssize_t	w;

	while (n > 0) {
		if ((w = write(fd, p, n)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int
parsemsg_write(int fd, int type, uint32_t seq, const struct parsemsg_buf *b)
{
	uint8_t	h[PARSEMSG_HEADER];

	if (b != NULL && b->failed) {
		errno = EMSGSIZE;
		return -1;
	}
	parsemsg_header(h, type, b == NULL ? 0 : b->len, seq);
	if (parsemsg_write_all(fd, h, sizeof h) == -1)
		return -1;
	return b == NULL || b->len == 0 ? 0 : parsemsg_write_all(fd, b->p, b->len);
}

/* n bytes into p before the deadline (-1: none). */
static int
parsemsg_read_all(int fd, uint8_t *p, size_t n, int64_t deadline, const char **why)
{
	struct pollfd	pfd = { .fd = fd, .events = POLLIN };
	ssize_t		r;
	int		wait, rc;

	while (n > 0) {
		wait = -1;
		if (deadline >= 0) {
			int64_t	left = deadline - clock_mono_ms();

			if (left <= 0) {
				*why = "no answer in time";
				errno = ETIMEDOUT;
				return -1;
			}
			wait = left > 1000000 ? 1000000 : (int)left;
		}
		if ((rc = poll(&pfd, 1, wait)) == -1) {
			if (errno == EINTR)
				continue;
			*why = "poll";
			return -1;
		}
		if (rc == 0)
			continue;
		if ((r = read(fd, p, n)) == -1) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			*why = "read";
			return -1;
		}
		if (r == 0) {
			*why = "the other end closed the pipe";
			errno = EPIPE;
			return -1;
		}
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

int
parsemsg_read(int fd, int timeout_ms, size_t max, int *type, uint32_t *seq,
    uint8_t **payload, size_t *len, const char **why)
{
	uint8_t	h[PARSEMSG_HEADER];
	int64_t	deadline = timeout_ms < 0 ? -1 : clock_mono_ms() + timeout_ms;

	*payload = NULL;
	*len = 0;
	if (parsemsg_read_all(fd, h, sizeof h, deadline, why) == -1)
		return -1;
	if (parsemsg_header_check(h, type, len, seq, why) == -1) {
		errno = EPROTO;
		return -1;
	}
	if (*len > max) {
		*why = "a message over the limit for its direction";
		errno = EMSGSIZE;
		return -1;
	}
	if (*len == 0)
		return 0;
	if ((*payload = malloc(*len)) == NULL) {
		*why = "out of memory";
		return -1;
	}
	if (parsemsg_read_all(fd, *payload, *len, deadline, why) == -1) {
		free(*payload);
		*payload = NULL;
		return -1;
	}
	return 0;
}
