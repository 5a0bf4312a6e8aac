/*
 * cw-floor-hook's logic: argument checks, the token file, the request, one loopback round trip under a
 * deadline, and a judgement of the answer that allows only on an unmistakable "allow".
 * The answer parser is a small JSON scanner over the caller's buffer: it reads the
 * top-level object's "decision" and "reason" and skips every other value, so a
 * "decision" that only appears inside another string or a nested object counts for
 * nothing.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "ctlchar.h"
#include "hook.h"
#include "wire.h"

#define HOOK_MAX_DEPTH	32

int
hook_args(int argc, char **argv, int *port, const char **token_file, char *err,
    size_t errlen)
{
	char		*end;
	long		 n;
	int		 i;

	*port = 0;
	*token_file = NULL;
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--port") == 0 && i + 1 < argc) {
			errno = 0;
			n = strtol(argv[++i], &end, 10);
			if (errno != 0 || end == argv[i] || *end != '\0' || n < 1 ||
			    n > 65535) {
				snprintf(err, errlen, "bad --port '%s'", argv[i]);
				return -1;
			}
			*port = (int)n;
		} else if (strcmp(argv[i], "--token-file") == 0 && i + 1 < argc) {
			*token_file = argv[++i];
		} else {
			snprintf(err, errlen, "unexpected argument '%s'", argv[i]);
			return -1;
		}
	}
	if (*port == 0 || *token_file == NULL) {
		snprintf(err, errlen, "usage: cw-floor-hook --port PORT --token-file PATH");
		return -1;
	}
	if ((*token_file)[0] != '/') {
		snprintf(err, errlen, "--token-file must be an absolute path");
		return -1;
	}
	return 0;
}

int
hook_token_ok(const char *token)
{
	const char	*p;

	if (token[0] == '\0' || strlen(token) > HOOK_MAX_TOKEN)
		return -1;
	for (p = token; *p != '\0'; p++)
		if (*p <= ' ' || *p > '~')
			return -1;
	return 0;
}

/*
 * The token file is the runner's, in the run's private state: a regular file, never a
 * link or a FIFO (O_NONBLOCK keeps a FIFO from blocking the open; fstat refuses it).
 */
int
hook_token_read(const char *path, char *token, size_t tokenlen, char *err,
    size_t errlen)
{
	struct stat	st;
	size_t		got = 0;
	ssize_t		n;
	int		fd;

	if (tokenlen < 2) {
		snprintf(err, errlen, "token buffer too small");
		return -1;
	}
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY)) ==
	    -1) {
		snprintf(err, errlen, "cannot open the token file %s: %s", path,
		    strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "the token file %s is not a regular file", path);
		close(fd);
		return -1;
	}
	while (got < tokenlen - 1) {
		n = read(fd, token + got, tokenlen - 1 - got);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			snprintf(err, errlen, "cannot read the token file %s: %s", path,
			    strerror(errno));
			close(fd);
			return -1;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	token[got] = '\0';
	if (got > 0 && token[got - 1] == '\n')
		token[--got] = '\0';
	if (got == tokenlen - 1 || hook_token_ok(token) == -1) {
		snprintf(err, errlen, "bad token in %s", path);
		explicit_bzero(token, tokenlen);
		return -1;
	}
	return 0;
}

static int
hook_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

int
hook_input_ok(const char *buf, size_t len)
{
	size_t	a = 0, z = len;

	if (memchr(buf, '\0', len) != NULL)
		return -1;
	while (a < z && hook_space(buf[a]))
		a++;
	while (z > a && hook_space(buf[z - 1]))
		z--;
	if (z - a < 2 || buf[a] != '{' || buf[z - 1] != '}')
		return -1;
	return 0;
}

int
hook_input_controls(const char *buf, size_t len, char *reason, size_t reasonlen)
{
	int	 ch;

	if ((ch = ctlchar_json_find(buf, len)) == -1)
		return 0;
	snprintf(reason, reasonlen, "the tool call holds control character 0x%02x "
	    "(%s), which would cut or hide part of the command; the Clockwork floor "
	    "refuses it", ch, ch == 0 ? "a NUL, \\u0000" : "escaped in the JSON");
	return -1;
}

int
hook_request_head(char *out, size_t outlen, int port, const char *token,
    size_t bodylen)
{
	int	n;

	n = snprintf(out, outlen, "POST /floor HTTP/1.1\r\n"
	    "Host: 127.0.0.1:%d\r\n"
	    "Content-Type: application/json\r\n"
	    "Content-Length: %zu\r\n"
	    "%s: %s\r\n"
	    "Connection: close\r\n\r\n", port, bodylen, CW_HOOK_RUN_HEADER, token);
	if (n < 0 || (size_t)n >= outlen)
		return -1;
	return n;
}

/* ---- the answer's JSON ------------------------------------------------------------ */

struct hook_scan {
	const char	*p;
	const char	*end;
};

static void
hook_ws(struct hook_scan *s)
{
	while (s->p < s->end && hook_space(*s->p))
		s->p++;
}

static void
hook_put(char *out, size_t outlen, size_t *n, unsigned c)
{
	if (out != NULL && *n + 1 < outlen)
		out[(*n)++] = (char)c;
}

static int
hook_hex4(struct hook_scan *s, unsigned *v)
{
	int	i;
	char	c;

	if (s->end - s->p < 4)
		return -1;
	*v = 0;
	for (i = 0; i < 4; i++) {
		c = *s->p++;
		*v <<= 4;
		if (c >= '0' && c <= '9')
			*v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			*v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			*v |= (unsigned)(c - 'A' + 10);
		else
			return -1;
	}
	return 0;
}

/*
 * A JSON string at s->p, unescaped into out (may be NULL; cut to fit, always
 * terminated). *full is cleared when it was cut. Returns 0, or -1 on malformed input.
 */
static int
hook_string(struct hook_scan *s, char *out, size_t outlen, int *full)
{
	size_t		n = 0;
	unsigned	u, lo;
	char		c;

	if (full != NULL)
		*full = 1;
	if (s->p >= s->end || *s->p != '"')
		return -1;
	s->p++;
	for (;;) {
		if (s->p >= s->end)
			return -1;
		c = *s->p++;
		if (c == '"')
			break;
		if ((unsigned char)c < 0x20)
			return -1;
		if (c != '\\') {
			hook_put(out, outlen, &n, (unsigned char)c);
			continue;
		}
		if (s->p >= s->end)
			return -1;
		switch ((c = *s->p++)) {
		case '"': case '\\': case '/':
			hook_put(out, outlen, &n, (unsigned char)c);
			break;
		case 'b': hook_put(out, outlen, &n, '\b'); break;
		case 'f': hook_put(out, outlen, &n, '\f'); break;
		case 'n': hook_put(out, outlen, &n, '\n'); break;
		case 'r': hook_put(out, outlen, &n, '\r'); break;
		case 't': hook_put(out, outlen, &n, '\t'); break;
		case 'u':
			if (hook_hex4(s, &u) == -1)
				return -1;
			if (u >= 0xd800 && u < 0xdc00 && s->end - s->p >= 6 &&
			    s->p[0] == '\\' && s->p[1] == 'u') {
				s->p += 2;
				if (hook_hex4(s, &lo) == -1)
					return -1;
				if (lo >= 0xdc00 && lo < 0xe000)
					u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
				else
					u = '?';
			} else if (u >= 0xd800 && u < 0xe000)
				u = '?';
			if (u < 0x80)
				hook_put(out, outlen, &n, u);
			else if (u < 0x800) {
				hook_put(out, outlen, &n, 0xc0 | (u >> 6));
				hook_put(out, outlen, &n, 0x80 | (u & 0x3f));
			} else if (u < 0x10000) {
				hook_put(out, outlen, &n, 0xe0 | (u >> 12));
				hook_put(out, outlen, &n, 0x80 | ((u >> 6) & 0x3f));
				hook_put(out, outlen, &n, 0x80 | (u & 0x3f));
			} else {
				hook_put(out, outlen, &n, 0xf0 | (u >> 18));
				hook_put(out, outlen, &n, 0x80 | ((u >> 12) & 0x3f));
				hook_put(out, outlen, &n, 0x80 | ((u >> 6) & 0x3f));
				hook_put(out, outlen, &n, 0x80 | (u & 0x3f));
			}
			break;
		default:
			return -1;
		}
		if (out != NULL && full != NULL && n + 1 >= outlen)
			*full = 0;
	}
	if (out != NULL && outlen > 0)
		out[n] = '\0';
	return 0;
}

/* Skip one JSON value of any kind, nesting at most HOOK_MAX_DEPTH deep. */
static int
hook_skip(struct hook_scan *s, int depth)
{
	const char	*lit;
	size_t		 n;
	int		 first;
	char		 close;

	hook_ws(s);
	if (s->p >= s->end || depth > HOOK_MAX_DEPTH)
		return -1;
	switch (*s->p) {
	case '"':
		return hook_string(s, NULL, 0, NULL);
	case '{':
	case '[':
		close = *s->p == '{' ? '}' : ']';
		s->p++;
		for (first = 1;; first = 0) {
			hook_ws(s);
			if (s->p < s->end && *s->p == close && first) {
				s->p++;
				return 0;
			}
			if (close == '}') {
				if (hook_string(s, NULL, 0, NULL) == -1)
					return -1;
				hook_ws(s);
				if (s->p >= s->end || *s->p++ != ':')
					return -1;
			}
			if (hook_skip(s, depth + 1) == -1)
				return -1;
			hook_ws(s);
			if (s->p >= s->end)
				return -1;
			if (*s->p == close) {
				s->p++;
				return 0;
			}
			if (*s->p++ != ',')
				return -1;
		}
	case 't': lit = "true"; break;
	case 'f': lit = "false"; break;
	case 'n': lit = "null"; break;
	default:
		for (n = 0; s->p < s->end && strchr("+-.0123456789eE", *s->p) != NULL &&
		    *s->p != '\0'; n++)
			s->p++;
		return n > 0 ? 0 : -1;
	}
	n = strlen(lit);
	if ((size_t)(s->end - s->p) < n || memcmp(s->p, lit, n) != 0)
		return -1;
	s->p += n;
	return 0;
}

/*
 * The body: 1 for allow, 2 for ask, 0 for deny. reason receives the bridge's reason
 * if any. A second "decision", whatever it says, makes it a deny.
 */
static int
hook_judge_body(const char *body, size_t len, char *reason, size_t reasonlen)
{
	struct hook_scan	 s = { body, body + len };
	char			 key[16], dec[16];
	int			 full, allow = 0, ask = 0, deny = 0, first;

	hook_ws(&s);
	if (s.p >= s.end || *s.p++ != '{')
		return 0;
	for (first = 1;; first = 0) {
		hook_ws(&s);
		if (s.p < s.end && *s.p == '}' && first) {
			s.p++;
			break;
		}
		if (hook_string(&s, key, sizeof key, &full) == -1)
			return 0;
		hook_ws(&s);
		if (s.p >= s.end || *s.p++ != ':')
			return 0;
		hook_ws(&s);
		if (full && strcmp(key, "decision") == 0) {
			if (s.p >= s.end || *s.p != '"' ||
			    hook_string(&s, dec, sizeof dec, &full) == -1)
				return 0;
			if (allow || ask)
				deny = 1;
			else if (full && strcmp(dec, "allow") == 0)
				allow = 1;
			else if (full && strcmp(dec, "ask") == 0)
				ask = 1;
			else
				deny = 1;
		} else if (full && strcmp(key, "reason") == 0 && s.p < s.end &&
		    *s.p == '"') {
			if (hook_string(&s, reason, reasonlen, NULL) == -1)
				return 0;
		} else if (hook_skip(&s, 1) == -1)
			return 0;
		hook_ws(&s);
		if (s.p >= s.end)
			return 0;
		if (*s.p == '}') {
			s.p++;
			break;
		}
		if (*s.p++ != ',')
			return 0;
	}
	hook_ws(&s);
	if (s.p != s.end || deny)
		return 0;
	return allow ? 1 : ask ? 2 : 0;
}

int
hook_parse_answer(const char *resp, size_t len, char *reason, size_t reasonlen)
{
	const char	*hdr_end = NULL;
	size_t		 i;
	char		 why[256];

	if (reasonlen == 0)
		return HOOK_EXIT_DENY;
	reason[0] = '\0';
	if (len < 12 || (memcmp(resp, "HTTP/1.1 ", 9) != 0 &&
	    memcmp(resp, "HTTP/1.0 ", 9) != 0)) {
		snprintf(reason, reasonlen, "the bridge's answer is not HTTP");
		return HOOK_EXIT_DENY;
	}
	for (i = 0; i + 4 <= len; i++)
		if (memcmp(resp + i, "\r\n\r\n", 4) == 0) {
			hdr_end = resp + i + 4;
			break;
		}
	if (hdr_end == NULL) {
		snprintf(reason, reasonlen, "the bridge's answer is incomplete");
		return HOOK_EXIT_DENY;
	}
	if (memcmp(resp + 9, "200", 3) != 0 || (len > 12 && resp[12] != ' ' &&
	    resp[12] != '\r')) {
		snprintf(reason, reasonlen, "the bridge answered HTTP %.3s", resp + 9);
		return HOOK_EXIT_DENY;
	}
	switch (hook_judge_body(hdr_end, len - (size_t)(hdr_end - resp), reason,
	    reasonlen)) {
	case 1:
		return HOOK_EXIT_ALLOW;
	case 2:
		if (reason[0] == '\0')
			snprintf(reason, reasonlen, "Clockwork asks a person about this "
			    "command");
		return HOOK_ASK;
	}
	if (reason[0] == '\0') {
		snprintf(why, sizeof why, "the bridge's answer is not an allow");
		snprintf(reason, reasonlen, "%s", why);
	}
	return HOOK_EXIT_DENY;
}

int
hook_ask_output(char *out, size_t outlen, const char *reason)
{
	static const char	 head[] = "{\"hookSpecificOutput\":{\"hookEventName\":"
	    "\"PreToolUse\",\"permissionDecision\":\"ask\",\"permissionDecisionReason\":\"";
	static const char	 tail[] = "\"}}\n";
	size_t			 n;
	unsigned char		 c;

	if (outlen < HOOK_MAX_ASK_OUTPUT)
		return -1;
	memcpy(out, head, sizeof head - 1);
	n = sizeof head - 1;
	/* Room for the widest character (2 bytes), the tail and the NUL, always. */
	for (; *reason != '\0' && n + 2 + sizeof tail <= HOOK_MAX_ASK_OUTPUT - 1;
	    reason++) {
		c = (unsigned char)*reason;
		if (c == '"' || c == '\\') {
			out[n++] = '\\';
			out[n++] = (char)c;
		} else
			out[n++] = c >= 0x20 && c <= 0x7e ? (char)c : '?';
	}
	memcpy(out + n, tail, sizeof tail);	/* with its NUL */
	return (int)(n + sizeof tail - 1);
}

/* ---- the round trip ------------------------------------------------------------- */

/* Wait for events on fd until the deadline; -1 with ETIMEDOUT when it passes. */
static int
hook_wait(int fd, short events, int64_t deadline)
{
	struct pollfd	pfd = { .fd = fd, .events = events };
	int64_t		left;
	int		n;

	for (;;) {
		if ((left = deadline - clock_mono_ms()) <= 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		n = poll(&pfd, 1, (int)left);
		if (n > 0)
			return 0;
		if (n == -1 && errno != EINTR)
			return -1;
	}
}

/* Head and body in one segment when they fit: one system call, no Nagle wait. */
static int
hook_send_all(int fd, const char *head, size_t hlen, const char *body, size_t blen,
    int64_t deadline)
{
	struct iovec	iov[2] = { { (void *)head, hlen }, { (void *)body, blen } };
	struct msghdr	msg;
	size_t		n;
	ssize_t		w;
	int		i = 0;

	while (i < 2) {
		memset(&msg, 0, sizeof msg);
		msg.msg_iov = iov + i;
		msg.msg_iovlen = (size_t)(2 - i);
		w = sendmsg(fd, &msg, MSG_NOSIGNAL);
		if (w == -1) {
			if (errno != EINTR && errno != EAGAIN)
				return -1;
			if (hook_wait(fd, POLLOUT, deadline) == -1)
				return -1;
			continue;
		}
		for (n = (size_t)w; i < 2 && n >= iov[i].iov_len; i++)
			n -= iov[i].iov_len;
		if (i < 2) {
			iov[i].iov_base = (char *)iov[i].iov_base + n;
			iov[i].iov_len -= n;
		}
	}
	return 0;
}

/* How often a connection the bridge closed before any answer is tried again. */
#define HOOK_CLOSED_RETRIES	3

int
hook_check(int port, const char *token, const char *body, size_t len, int timeout_ms,
    char *reason, size_t reasonlen)
{
	static char		 resp[HOOK_MAX_ANSWER + 1];
	struct sockaddr_in	 sin;
	struct timespec		 pause = { 0, 10 * 1000 * 1000 };
	char			 head[512];
	int64_t			 deadline = clock_mono_ms() + timeout_ms;
	size_t			 got;
	ssize_t			 n;
	socklen_t		 sl;
	int			 fd, hl, soerr, rc, tries = 0;

	if ((hl = hook_request_head(head, sizeof head, port, token, len)) == -1) {
		snprintf(reason, reasonlen, "cannot build the request");
		return HOOK_EXIT_DENY;
	}
again:
	got = 0;
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) == -1) {
		snprintf(reason, reasonlen, "socket: %s", strerror(errno));
		return HOOK_EXIT_DENY;
	}
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_port = htons((unsigned short)port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(fd, (struct sockaddr *)&sin, sizeof sin) == -1) {
		if (errno != EINPROGRESS)
			goto fail;
		sl = sizeof soerr;
		if (hook_wait(fd, POLLOUT, deadline) == -1 ||
		    getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) == -1)
			goto fail;
		if (soerr != 0) {
			errno = soerr;
			goto fail;
		}
	}
	if (hook_send_all(fd, head, (size_t)hl, body, len, deadline) == -1) {
		if (errno == EPIPE || errno == ECONNRESET)
			goto closed;
		goto fail;
	}
	for (;;) {
		if (hook_wait(fd, POLLIN, deadline) == -1)
			goto fail;
		n = recv(fd, resp + got, sizeof resp - 1 - got, 0);
		if (n == -1) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			if (errno == ECONNRESET && got == 0)
				goto closed;
			goto fail;
		}
		if (n == 0)
			break;
		got += (size_t)n;
		if (got == sizeof resp - 1) {
			close(fd);
			snprintf(reason, reasonlen, "the bridge's answer is too long");
			return HOOK_EXIT_DENY;
		}
	}
	if (got == 0) {
closed:
		/*
		 * Closed (or reset: our request was unread) before a byte of answer: the
		 * bridge, full of a run's idle connections, made room by closing ours
		 * before it read our request (it closes only those that sent none).
		 * Nothing was judged; ask again while there is time.
		 */
		close(fd);
		if (tries++ < HOOK_CLOSED_RETRIES && clock_mono_ms() + 10 < deadline) {
			nanosleep(&pause, NULL);
			pause.tv_nsec *= 2;
			goto again;
		}
		snprintf(reason, reasonlen, "the bridge closed the connection %d times "
		    "without an answer", tries);
		return HOOK_EXIT_DENY;
	}
	close(fd);
	resp[got] = '\0';
	rc = hook_parse_answer(resp, got, reason, reasonlen);
	return rc;
fail:
	snprintf(reason, reasonlen, "cannot reach the Clockwork bridge on port %d: %s",
	    port, strerror(errno));
	close(fd);
	return HOOK_EXIT_DENY;
}
