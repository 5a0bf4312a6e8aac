/*
 * The proxy's request-head parser: see proxyreq.h. It never reads past len, never
 * trusts a length the client gives, and builds the upstream head by copying only lines
 * it has checked.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ctlchar.h"
#include "proxyreq.h"

/* RFC 9110 tchar */
static int
proxyreq_tchar(int c)
{
	return isalnum(c) || (c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

/* The end of the head ("\r\n\r\n" or "\n\n"), as an offset past it, or 0. */
static size_t
proxyreq_end(const char *buf, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (buf[i] != '\n')
			continue;
		if (i + 1 < len && buf[i + 1] == '\n')
			return i + 2;
		if (i + 2 < len && buf[i + 1] == '\r' && buf[i + 2] == '\n')
			return i + 3;
	}
	return 0;
}

/* "host:port" (CONNECT) or the authority of a URL (default port dflt). */
static int
proxyreq_authority(const char *a, size_t len, int dflt, struct proxyreq *r)
{
	char		 host[NETRULE_HOST_MAX + 3];
	const char	*colon = NULL;
	size_t		 hl;
	long		 port = dflt;

	if (len == 0 || memchr(a, '@', len) != NULL)
		return -1;
	if (a[0] == '[') {
		const char *rb = memchr(a, ']', len);

		if (rb == NULL)
			return -1;
		if ((size_t)(rb - a) + 1 < len) {
			if (rb[1] != ':')
				return -1;
			colon = rb + 1;
		}
	} else
		colon = memchr(a, ':', len);
	hl = colon != NULL ? (size_t)(colon - a) : len;
	if (hl == 0 || hl >= sizeof host)
		return -1;
	memcpy(host, a, hl);
	host[hl] = '\0';
	if (colon != NULL) {
		size_t	 pl = len - hl - 1;

		if (pl == 0 || pl > 5)
			return -1;
		port = 0;
		for (size_t i = 0; i < pl; i++) {
			if (!isdigit((unsigned char)colon[1 + i]))
				return -1;
			port = port * 10 + (colon[1 + i] - '0');
		}
	} else if (dflt == 0)
		return -1;
	if (port < 1 || port > 65535)
		return -1;
	if (netrule_host(host, r->host, sizeof r->host, &r->is_addr) == -1)
		return -1;
	r->port = (int)port;
	return 0;
}

static int
proxyreq_hop(const char *name, size_t len)
{
	static const char *const hop[] = { "connection", "proxy-connection", "keep-alive",
	    "proxy-authorization", "proxy-authenticate", "te", "upgrade", "host" };

	for (size_t i = 0; i < sizeof hop / sizeof hop[0]; i++)
		if (strlen(hop[i]) == len && strncasecmp(hop[i], name, len) == 0)
			return 1;
	return 0;
}

static int
proxyreq_put(struct proxyreq *r, size_t *cap, const char *s, size_t n)
{
	char	*p;

	if (r->upstream_len + n + 1 > *cap) {
		size_t	 nc = (r->upstream_len + n + 1) * 2;

		if ((p = realloc(r->upstream, nc)) == NULL)
			return -1;
		r->upstream = p;
		*cap = nc;
	}
	memcpy(r->upstream + r->upstream_len, s, n);
	r->upstream_len += n;
	r->upstream[r->upstream_len] = '\0';
	return 0;
}

/* The value of a header line (after its colon, up to end), OWS trimmed. */
static void
proxyreq_value(const char *colon, const char *end, const char **v, size_t *vl)
{
	const char	*a = colon + 1, *b = end;

	while (a < b && (*a == ' ' || *a == '\t'))
		a++;
	while (b > a && (b[-1] == ' ' || b[-1] == '\t'))
		b--;
	*v = a;
	*vl = (size_t)(b - a);
}

/*
 * Content-Length and Transfer-Encoding of an absolute-form request: kept in r when
 * there is one way to read them, else -1 with err saying what is ambiguous.
 */
static int
proxyreq_framing(struct proxyreq *r, const char *name, size_t nl, const char *colon,
    const char *end, int *seen_cl, int *seen_te, char *err, size_t errlen)
{
	const char	*v;
	size_t		 vl;

	if (nl == 14 && strncasecmp(name, "content-length", 14) == 0) {
		if ((*seen_cl)++) {
			snprintf(err, errlen, "more than one Content-Length");
			return -1;
		}
		proxyreq_value(colon, end, &v, &vl);
		if (vl == 0 || vl > 18) {
			snprintf(err, errlen, "malformed Content-Length (want 1 to 18 digits)");
			return -1;
		}
		r->content_length = 0;
		for (size_t i = 0; i < vl; i++) {
			if (!isdigit((unsigned char)v[i])) {
				snprintf(err, errlen, "malformed Content-Length (want 1 to 18 "
				    "digits)");
				return -1;
			}
			r->content_length = r->content_length * 10 + (uint64_t)(v[i] - '0');
		}
	} else if (nl == 17 && strncasecmp(name, "transfer-encoding", 17) == 0) {
		if ((*seen_te)++) {
			snprintf(err, errlen, "more than one Transfer-Encoding");
			return -1;
		}
		proxyreq_value(colon, end, &v, &vl);
		if (vl != 7 || strncasecmp(v, "chunked", 7) != 0) {
			snprintf(err, errlen, "Transfer-Encoding other than chunked");
			return -1;
		}
		r->chunked = 1;
	}
	return 0;
}

#define PROXYREQ_FAIL(...) do { snprintf(err, errlen, __VA_ARGS__); goto fail; } while (0)

int
proxyreq_parse(const char *buf, size_t len, struct proxyreq *r, char *err, size_t errlen)
{
	const char	*p, *eol, *sp1, *sp2, *target, *path, *end;
	size_t		 head, tl, cap = 0, ml, n;
	char		 line[NETRULE_HOST_MAX + 64];
	int		 seen_cl = 0, seen_te = 0;

	memset(r, 0, sizeof *r);
	if ((head = proxyreq_end(buf, len > PROXYREQ_MAX_HEAD ? PROXYREQ_MAX_HEAD : len)) == 0) {
		if (len >= PROXYREQ_MAX_HEAD) {
			snprintf(err, errlen, "request head over %d bytes", PROXYREQ_MAX_HEAD);
			return -1;
		}
		return 0;
	}
	end = buf + head;
	if (memchr(buf, '\0', head) != NULL)
		PROXYREQ_FAIL("NUL byte in the request head");
	/* The request line: METHOD SP target SP HTTP/1.x */
	eol = memchr(buf, '\n', head);
	n = (size_t)(eol - buf);
	if (n > 0 && buf[n - 1] == '\r')
		n--;
	sp1 = memchr(buf, ' ', n);
	if (sp1 == NULL || sp1 == buf || (ml = (size_t)(sp1 - buf)) >= sizeof r->method)
		PROXYREQ_FAIL("malformed request line");
	for (size_t i = 0; i < ml; i++)
		if (!proxyreq_tchar((unsigned char)buf[i]))
			PROXYREQ_FAIL("malformed method");
	memcpy(r->method, buf, ml);
	target = sp1 + 1;
	sp2 = memchr(target, ' ', n - ml - 1);
	if (sp2 == NULL || sp2 == target || (size_t)(buf + n - sp2 - 1) != 8 ||
	    (strncmp(sp2 + 1, "HTTP/1.1", 8) != 0 && strncmp(sp2 + 1, "HTTP/1.0", 8) != 0))
		PROXYREQ_FAIL("malformed request line (want METHOD target HTTP/1.x)");
	tl = (size_t)(sp2 - target);
	for (size_t i = 0; i < tl; i++)
		if ((unsigned char)target[i] <= 0x20 || (unsigned char)target[i] >= 0x7f)
			PROXYREQ_FAIL("control or non-ASCII byte in the request target");
	if (strcmp(r->method, "CONNECT") == 0) {
		r->connect = 1;
		if (proxyreq_authority(target, tl, 0, r) == -1)
			PROXYREQ_FAIL("CONNECT needs host:port (a name or an IP address)");
	} else {
		if (tl < 8 || strncasecmp(target, "http://", 7) != 0) {
			if (tl >= 8 && strncasecmp(target, "https://", 8) == 0)
				PROXYREQ_FAIL("https:// URLs go through CONNECT");
			PROXYREQ_FAIL("a proxy request needs an absolute http:// URL");
		}
		path = memchr(target + 7, '/', tl - 7);
		{
			const char *q = memchr(target + 7, '?', tl - 7);

			if (q != NULL && (path == NULL || q < path))
				path = q;
		}
		if (proxyreq_authority(target + 7, (size_t)((path ? path : sp2) -
		    (target + 7)), 80, r) == -1)
			PROXYREQ_FAIL("malformed host in the URL");
		if (proxyreq_put(r, &cap, r->method, ml) == -1 ||
		    proxyreq_put(r, &cap, " ", 1) == -1)
			goto nomem;
		if (path == NULL || *path == '?') {
			if (proxyreq_put(r, &cap, "/", 1) == -1)
				goto nomem;
		}
		if (path != NULL && proxyreq_put(r, &cap, path, (size_t)(sp2 - path)) == -1)
			goto nomem;
		if (proxyreq_put(r, &cap, sp2, 9) == -1 || proxyreq_put(r, &cap, "\r\n", 2) == -1)
			goto nomem;
	}
	/* Header lines: name ":" value, no folding, no bare CR. */
	for (p = eol + 1; p < end; p = eol + 1) {
		const char	*colon;

		eol = memchr(p, '\n', (size_t)(end - p));
		n = (size_t)(eol - p);
		if (n > 0 && p[n - 1] == '\r')
			n--;
		if (n == 0)
			break;
		if (memchr(p, '\r', n) != NULL)
			PROXYREQ_FAIL("bare CR in a header line");
		colon = memchr(p, ':', n);
		if (colon == NULL || colon == p)
			PROXYREQ_FAIL("malformed header line");
		for (const char *c = p; c < colon; c++)
			if (!proxyreq_tchar((unsigned char)*c))
				PROXYREQ_FAIL("malformed header name (or a folded line)");
		for (const char *c = colon + 1; c < p + n; c++)
			if (((unsigned char)*c < 0x20 && *c != '\t') || *c == 0x7f)
				PROXYREQ_FAIL("control byte in a header value");
		if (r->connect)
			continue;
		if (proxyreq_framing(r, p, (size_t)(colon - p), colon, p + n, &seen_cl,
		    &seen_te, err, errlen) == -1)
			goto fail;
		if (proxyreq_hop(p, (size_t)(colon - p)))
			continue;
		if (proxyreq_put(r, &cap, p, n) == -1 || proxyreq_put(r, &cap, "\r\n", 2) == -1)
			goto nomem;
	}
	if (seen_cl && seen_te)
		PROXYREQ_FAIL("both Content-Length and Transfer-Encoding");
	if (seen_te && strncmp(sp2 + 1, "HTTP/1.0", 8) == 0)
		PROXYREQ_FAIL("Transfer-Encoding in an HTTP/1.0 request");
	if (!r->connect) {
		int	 v6 = strchr(r->host, ':') != NULL;

		if (r->port == 80)
			snprintf(line, sizeof line, "Host: %s%s%s\r\n", v6 ? "[" : "", r->host,
			    v6 ? "]" : "");
		else
			snprintf(line, sizeof line, "Host: %s%s%s:%d\r\n", v6 ? "[" : "",
			    r->host, v6 ? "]" : "", r->port);
		if (proxyreq_put(r, &cap, line, strlen(line)) == -1 ||
		    proxyreq_put(r, &cap, "Connection: close\r\n\r\n", 21) == -1)
			goto nomem;
	}
	r->head_len = head;
	return 1;
nomem:
	snprintf(err, errlen, "out of memory");
fail:
	proxyreq_free(r);
	return -1;
}

void
proxyreq_free(struct proxyreq *r)
{
	free(r->upstream);
	r->upstream = NULL;
	r->upstream_len = 0;
}

/* The states of a body (proxyreq_body_take). */
enum {
	PB_LENGTH,		/* Content-Length bytes */
	PB_SIZE,		/* chunk-size hex digits */
	PB_EXT,			/* ;chunk-ext up to CR */
	PB_SIZE_LF,		/* the LF after the size line */
	PB_DATA,		/* chunk data */
	PB_DATA_CR,		/* the CRLF after the data */
	PB_DATA_LF,
	PB_TRAILER_START,	/* the start of a trailer line, or CR of the last one */
	PB_TRAILER_NAME,	/* a trailer field's name up to ':' */
	PB_TRAILER_VALUE,	/* its value up to CR */
	PB_TRAILER_LF,
	PB_END_LF,		/* the LF that ends the body */
	PB_DONE
};

#define PROXYREQ_EXT_MAX	4096	/* bytes of a chunk-size line's extensions */

void
proxyreq_body_init(struct proxyreq_body *b, const struct proxyreq *r)
{
	memset(b, 0, sizeof *b);
	if (r->chunked)
		b->state = PB_SIZE;
	else if ((b->left = r->content_length) > 0)
		b->state = PB_LENGTH;
	else {
		b->state = PB_DONE;
		b->done = 1;
	}
}

#define PROXYREQ_BAD(...) do { snprintf(err, errlen, __VA_ARGS__); return -1; } while (0)

ssize_t
proxyreq_body_take(struct proxyreq_body *b, const char *buf, size_t len, char *err,
    size_t errlen)
{
	size_t	 i = 0, n;
	int	 c, h;

	while (i < len && b->state != PB_DONE) {
		c = (unsigned char)buf[i];
		switch (b->state) {
		case PB_LENGTH:
		case PB_DATA:
			n = len - i;
			if ((uint64_t)n > b->left)
				n = (size_t)b->left;
			b->left -= n;
			i += n;
			if (b->left == 0)
				b->state = b->state == PB_LENGTH ? PB_DONE : PB_DATA_CR;
			continue;
		case PB_SIZE:
			if ((h = ctlchar_hex(c)) != -1) {
				/* 15 digits: far past any body, and no overflow. */
				if (++b->digits > 15)
					PROXYREQ_BAD("chunk size too long");
				b->left = b->left * 16 + (uint64_t)h;
			} else if (b->digits == 0)
				PROXYREQ_BAD("malformed chunk size");
			else if (c == ';') {
				b->state = PB_EXT;
				b->line = 0;
			} else if (c == '\r')
				b->state = PB_SIZE_LF;
			else
				PROXYREQ_BAD("malformed chunk size line");
			break;
		case PB_EXT:
			if (c == '\r')
				b->state = PB_SIZE_LF;
			else if ((c < 0x20 && c != '\t') || c == 0x7f)
				PROXYREQ_BAD("control byte in a chunk extension");
			else if (++b->line > PROXYREQ_EXT_MAX)
				PROXYREQ_BAD("chunk extension over %d bytes", PROXYREQ_EXT_MAX);
			break;
		case PB_SIZE_LF:
			if (c != '\n')
				PROXYREQ_BAD("chunk size line not ended by CRLF");
			b->digits = 0;
			b->state = b->left == 0 ? PB_TRAILER_START : PB_DATA;
			break;
		case PB_DATA_CR:
			if (c != '\r')
				PROXYREQ_BAD("chunk data not followed by CRLF");
			b->state = PB_DATA_LF;
			break;
		case PB_DATA_LF:
			if (c != '\n')
				PROXYREQ_BAD("chunk data not followed by CRLF");
			b->state = PB_SIZE;
			break;
		case PB_TRAILER_START:
			if (c == '\r') {
				b->state = PB_END_LF;
				break;
			}
			if (!proxyreq_tchar(c))
				PROXYREQ_BAD("malformed trailer line");
			b->state = PB_TRAILER_NAME;
			break;
		case PB_TRAILER_NAME:
			if (c == ':')
				b->state = PB_TRAILER_VALUE;
			else if (!proxyreq_tchar(c))
				PROXYREQ_BAD("malformed trailer name");
			break;
		case PB_TRAILER_VALUE:
			if (c == '\r')
				b->state = PB_TRAILER_LF;
			else if ((c < 0x20 && c != '\t') || c == 0x7f)
				PROXYREQ_BAD("control byte in a trailer line");
			break;
		case PB_TRAILER_LF:
			if (c != '\n')
				PROXYREQ_BAD("trailer line not ended by CRLF");
			b->state = PB_TRAILER_START;
			break;
		case PB_END_LF:
			if (c != '\n')
				PROXYREQ_BAD("chunked body not ended by CRLF");
			b->state = PB_DONE;
			break;
		}
		i++;
		if (b->state >= PB_TRAILER_START && b->state <= PB_TRAILER_LF &&
		    ++b->trailers > PROXYREQ_MAX_HEAD)
			PROXYREQ_BAD("trailers over %d bytes", PROXYREQ_MAX_HEAD);
	}
	if (b->state == PB_DONE)
		b->done = 1;
	return (ssize_t)i;
}
