/*
 * The Inbox (SPEC I1): a page served by clockworkd from files compiled into the binary,
 * and the sign-in that keeps it from weakening the API.
 *
 * Sign-in: `cwctl inbox` asks the API (bearer token) for a one-time code that lives
 * INBOX_CODE_TTL seconds; GET /inbox/login?code=... trades it, once, for a session
 * cookie (HttpOnly, SameSite=Strict, Path=/) and a per-session CSRF token, then
 * redirects to the clean URL /. Sessions and codes live only in the daemon's memory: a
 * restart or `cwctl inbox --revoke` ends them all.
 *
 * The page's data comes from /inbox/api/..., a session-authenticated gateway onto a
 * fixed subset of the API (api.c): reads of runs, approvals and the journal, and the
 * page's writes (answering an approval; starting, stopping, merging and discarding a
 * run), which also need the CSRF token and the daemon's own Origin. Without a session
 * the page is served (it holds no data) and every data request is answered 401.
 *
 * Live updates are pushed: the page listens on /inbox/api/events, the bus's stream
 * (events.c) through the gateway, which ends a stream with "signedout" when its
 * session is revoked or expires. Nothing here reads the store to find out what changed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "daemon.h"
#include "events.h"
#include "httpd.h"
#include "inbox.h"
#include "journal.h"
#include "log.h"
#include "token.h"

#define INBOX_SECRET_BYTES	DAEMON_TOKEN_BYTES	/* made by token_random_hex() */
#define INBOX_SECRET_HEX	(INBOX_SECRET_BYTES * 2 + 1)
#define INBOX_MAX_CODES		8
#define INBOX_MAX_SESSIONS	32

struct inbox_code {
	char	value[INBOX_SECRET_HEX];
	time_t	expires;		/* 0: free slot */
};

struct inbox_session {
	char	cookie[INBOX_SECRET_HEX];
	char	csrf[INBOX_SECRET_HEX];
	time_t	expires;		/* 0: free slot */
};

struct inbox {
	struct daemon		*d;
	struct inbox_code	 codes[INBOX_MAX_CODES];
	struct inbox_session	 sessions[INBOX_MAX_SESSIONS];
};

/* inbox_assets.c, generated at build time from daemon/assets/. */
extern const unsigned char	inbox_asset_index_html[], inbox_asset_app_js[],
				inbox_asset_app_css[];
extern const size_t		inbox_asset_index_html_len, inbox_asset_app_js_len,
				inbox_asset_app_css_len;

static struct inbox *
inbox_get(struct daemon *d)
{
	if (d->inbox == NULL && (d->inbox = calloc(1, sizeof *d->inbox)) != NULL)
		d->inbox->d = d;
	return d->inbox;
}

/*
 * Find one cookie's value in a Cookie header (untrusted text: fuzzed by fuzz_inbox).
 * Returns 1 and copies the value when found and it fits, 0 when absent or too long.
 */
int
inbox_cookie_get(const char *hdr, const char *name, char *out, size_t outlen)
{
	size_t		 nlen = strlen(name), vlen;
	const char	*p = hdr, *v, *end;

	if (hdr == NULL || outlen == 0)
		return 0;
	while (*p != '\0') {
		while (*p == ' ' || *p == '\t' || *p == ';')
			p++;
		if (*p == '\0')
			break;
		end = strchr(p, ';');
		if (end == NULL)
			end = p + strlen(p);
		if ((size_t)(end - p) > nlen && strncmp(p, name, nlen) == 0 &&
		    p[nlen] == '=') {
			v = p + nlen + 1;
			vlen = (size_t)(end - v);
			while (vlen > 0 && (v[vlen - 1] == ' ' || v[vlen - 1] == '\t'))
				vlen--;
			if (vlen >= outlen)
				return 0;
			memcpy(out, v, vlen);
			out[vlen] = '\0';
			return 1;
		}
		p = end;
	}
	return 0;
}

/* A code for `cwctl inbox`: usable once, for INBOX_CODE_TTL seconds. */
int
inbox_code_new(struct daemon *d, char *out, size_t outlen)
{
	struct inbox	*ib = inbox_get(d);
	time_t		 now = time(NULL);
	size_t		 slot = 0;

	if (ib == NULL || outlen < INBOX_SECRET_HEX)
		return -1;
	/* A free or expired slot; when all are live, the oldest gives way. */
	for (size_t i = 0; i < INBOX_MAX_CODES; i++) {
		if (ib->codes[i].expires <= now) {
			slot = i;
			break;
		}
		if (ib->codes[i].expires < ib->codes[slot].expires)
			slot = i;
	}
	if (token_random_hex(ib->codes[slot].value, sizeof ib->codes[slot].value) == -1)
		return -1;
	ib->codes[slot].expires = now + INBOX_CODE_TTL;
	snprintf(out, outlen, "%s", ib->codes[slot].value);
	return 0;
}

/* Trade a code for a new session; the code is spent whether or not this succeeds. */
static struct inbox_session *
inbox_code_redeem(struct inbox *ib, const char *code)
{
	time_t			 now = time(NULL);
	struct inbox_session	*s = NULL;
	int			 found = 0;

	if (code == NULL || strlen(code) != INBOX_SECRET_HEX - 1)
		return NULL;
	for (size_t i = 0; i < INBOX_MAX_CODES; i++) {
		if (ib->codes[i].expires == 0)
			continue;
		if (httpd_equal(code, ib->codes[i].value)) {
			found = ib->codes[i].expires > now;
			memset(&ib->codes[i], 0, sizeof ib->codes[i]);
		}
	}
	if (!found)
		return NULL;
	for (size_t i = 0; i < INBOX_MAX_SESSIONS; i++) {
		if (ib->sessions[i].expires <= now) {
			s = &ib->sessions[i];
			break;
		}
		if (s == NULL || ib->sessions[i].expires < s->expires)
			s = &ib->sessions[i];
	}
	if (token_random_hex(s->cookie, sizeof s->cookie) == -1 ||
	    token_random_hex(s->csrf, sizeof s->csrf) == -1) {
		memset(s, 0, sizeof *s);
		return NULL;
	}
	s->expires = now + INBOX_SESSION_TTL;
	return s;
}

static struct inbox_session *
inbox_session_by_cookie(struct inbox *ib, const char *cookie)
{
	time_t	now = time(NULL);

	if (strlen(cookie) != INBOX_SECRET_HEX - 1)
		return NULL;
	for (size_t i = 0; i < INBOX_MAX_SESSIONS; i++)
		if (ib->sessions[i].expires > now &&
		    httpd_equal(cookie, ib->sessions[i].cookie))
			return &ib->sessions[i];
	return NULL;
}

static struct inbox_session *
inbox_session(struct daemon *d, struct evhttp_request *req)
{
	struct inbox	*ib = inbox_get(d);
	char		 v[INBOX_SECRET_HEX];

	if (ib == NULL || !inbox_cookie_get(evhttp_find_header(
	    evhttp_request_get_input_headers(req), "Cookie"), INBOX_COOKIE, v, sizeof v))
		return NULL;
	return inbox_session_by_cookie(ib, v);
}

int
inbox_cookie_of(struct daemon *d, struct evhttp_request *req, char *out, size_t outlen)
{
	struct inbox_session	*s = inbox_session(d, req);

	if (s == NULL)
		return -1;
	snprintf(out, outlen, "%s", s->cookie);
	return 0;
}

int
inbox_cookie_valid(struct daemon *d, const char *cookie)
{
	struct inbox	*ib = inbox_get(d);

	return ib != NULL && inbox_session_by_cookie(ib, cookie) != NULL;
}

/* End every session and spend every code, and the event streams that lived on them. */
int
inbox_revoke(struct daemon *d)
{
	struct inbox	*ib = inbox_get(d);
	time_t		 now = time(NULL);
	int		 n = 0;

	if (ib == NULL)
		return 0;
	for (size_t i = 0; i < INBOX_MAX_SESSIONS; i++)
		if (ib->sessions[i].expires > now)
			n++;
	memset(ib->sessions, 0, sizeof ib->sessions);
	memset(ib->codes, 0, sizeof ib->codes);
	events_end_sessions(d);
	return n;
}

/*
 * May this request use the gateway? 0 when it may; otherwise the HTTP status to answer
 * (401 no session, 403 a write without the CSRF token or from a foreign Origin) with
 * the reason in why. Origin must be present on writes: browsers always send it there.
 */
int
inbox_authorize(struct daemon *d, struct evhttp_request *req, int write, int origin_ok,
    char *why, size_t whylen)
{
	struct inbox_session	*s;
	const char		*csrf;

	if ((s = inbox_session(d, req)) == NULL) {
		snprintf(why, whylen, "not signed in: run `cwctl inbox` and open the link");
		return 401;
	}
	if (!write)
		return 0;
	if (!origin_ok) {
		snprintf(why, whylen, "cross-origin requests that change state are refused");
		return 403;
	}
	csrf = evhttp_find_header(evhttp_request_get_input_headers(req), "X-CSRF-Token");
	if (csrf == NULL || !httpd_equal(csrf, s->csrf)) {
		snprintf(why, whylen, "a valid X-CSRF-Token header is required");
		return 403;
	}
	return 0;
}

/* Headers every Inbox answer carries: no framing, no foreign resources, no referrer. */
void
inbox_security_headers(struct evhttp_request *req)
{
	struct evkeyvalq	*h = evhttp_request_get_output_headers(req);

	evhttp_add_header(h, "Content-Security-Policy", INBOX_CSP);
	evhttp_add_header(h, "X-Content-Type-Options", "nosniff");
	evhttp_add_header(h, "Referrer-Policy", "no-referrer");
	evhttp_add_header(h, "X-Frame-Options", "DENY");
	evhttp_add_header(h, "Cross-Origin-Opener-Policy", "same-origin");
	evhttp_add_header(h, "Cross-Origin-Resource-Policy", "same-origin");
	evhttp_add_header(h, "Cache-Control", "no-store");
}

static void
inbox_send(struct evhttp_request *req, int code, const char *reason, const char *type,
    const void *body, size_t len)
{
	inbox_security_headers(req);
	httpd_reply(req, code, type, body, len);
}

static void
inbox_text(struct evhttp_request *req, int code, const char *reason, const char *msg)
{
	inbox_send(req, code, reason, "text/plain; charset=utf-8", msg, strlen(msg));
}

static void
inbox_login(struct daemon *d, struct evhttp_request *req)
{
	const struct evhttp_uri	*uri = evhttp_request_get_evhttp_uri(req);
	struct evkeyvalq	 q;
	struct inbox_session	*s = NULL;
	struct inbox		*ib = inbox_get(d);
	const char		*query = uri != NULL ? evhttp_uri_get_query(uri) : NULL;
	char			 cookie[256];

	TAILQ_INIT(&q);
	if (ib != NULL && query != NULL && evhttp_parse_query_str(query, &q) == 0)
		s = inbox_code_redeem(ib, evhttp_find_header(&q, "code"));
	evhttp_clear_headers(&q);
	if (s == NULL) {
		log_info("inbox: sign-in refused: unknown, used or expired code");
		inbox_text(req, 403, "Forbidden", "This sign-in link is not valid: it has "
		    "been used already or has expired. Run `cwctl inbox` for a new one.\n");
		return;
	}
	snprintf(cookie, sizeof cookie, "%s=%s; HttpOnly; SameSite=Strict; Path=/; "
	    "Max-Age=%d", INBOX_COOKIE, s->cookie, INBOX_SESSION_TTL);
	evhttp_add_header(evhttp_request_get_output_headers(req), "Set-Cookie", cookie);
	evhttp_add_header(evhttp_request_get_output_headers(req), "Location", "/");
	journal_audit(d, "inbox", "inbox.signin", NULL, NULL);
	inbox_text(req, 303, "See Other", "Signed in.\n");
}

static void
inbox_session_json(struct daemon *d, struct evhttp_request *req)
{
	struct inbox_session	*s = inbox_session(d, req);
	char			 body[256];
	int			 n;

	if (s == NULL) {
		n = snprintf(body, sizeof body, "{\"error\":{\"code\":\"unauthorized\","
		    "\"message\":\"not signed in\"}}\n");
		inbox_send(req, 401, "Unauthorized", "application/json", body, (size_t)n);
		return;
	}
	n = snprintf(body, sizeof body, "{\"csrf\":\"%s\",\"expires_in\":%lld}\n", s->csrf,
	    (long long)(s->expires - time(NULL)));
	inbox_send(req, 200, "OK", "application/json", body, (size_t)n);
}

/*
 * GET /inbox/events: the old stream, which re-read a fingerprint of the store every
 * 400 ms per open page. Its successor is pushed from the bus (events.c): 410 Gone with
 * a pointer, for a page loaded from an older daemon until it is reloaded.
 */
static void
inbox_events_gone(struct evhttp_request *req)
{
	evhttp_add_header(evhttp_request_get_output_headers(req), "Link",
	    "</inbox/api/events>; rel=\"alternate\"");
	inbox_text(req, 410, "Gone", "this stream is gone: the Inbox's events are at "
	    "/inbox/api/events (server-sent events, the same session); reload the page\n");
}

/* Is path one of the Inbox's own (non-gateway) routes? */
int
inbox_is_page(const char *path)
{
	return strcmp(path, "/") == 0 || strcmp(path, "/app.js") == 0 ||
	    strcmp(path, "/app.css") == 0 || strcmp(path, "/favicon.ico") == 0 ||
	    strncmp(path, "/inbox/", 7) == 0;
}

/* The Inbox's own routes; the Host check has passed. */
void
inbox_serve(struct daemon *d, struct evhttp_request *req, const char *path)
{
	enum evhttp_cmd_type	m = evhttp_request_get_command(req);

	/* HEAD only for the static files: a HEAD must not spend a sign-in code. */
	if (m != EVHTTP_REQ_GET && (m != EVHTTP_REQ_HEAD || strncmp(path, "/inbox/", 7) == 0)) {
		inbox_text(req, 405, "Method Not Allowed", "method not allowed\n");
		return;
	}
	if (strcmp(path, "/") == 0)
		inbox_send(req, 200, "OK", "text/html; charset=utf-8", inbox_asset_index_html,
		    inbox_asset_index_html_len);
	else if (strcmp(path, "/app.js") == 0)
		inbox_send(req, 200, "OK", "text/javascript; charset=utf-8",
		    inbox_asset_app_js, inbox_asset_app_js_len);
	else if (strcmp(path, "/app.css") == 0)
		inbox_send(req, 200, "OK", "text/css; charset=utf-8", inbox_asset_app_css,
		    inbox_asset_app_css_len);
	else if (strcmp(path, "/inbox/login") == 0)
		inbox_login(d, req);
	else if (strcmp(path, "/inbox/session") == 0)
		inbox_session_json(d, req);
	else if (strcmp(path, "/inbox/events") == 0)
		inbox_events_gone(req);
	else
		inbox_text(req, 404, "Not Found", "not found\n");
}

/* Is the session on this request valid? For routes that accept either it or the token. */
int
inbox_signed_in(struct daemon *d, struct evhttp_request *req)
{
	return inbox_session(d, req) != NULL;
}

void
inbox_free(struct daemon *d)
{
	if (d->inbox == NULL)
		return;
	explicit_bzero(d->inbox, sizeof *d->inbox);
	free(d->inbox);
	d->inbox = NULL;
}
