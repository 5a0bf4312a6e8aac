/* inbox.c: the Inbox page, its sign-in codes and sessions. */
#ifndef CW_INBOX_H
#define CW_INBOX_H
#include <stddef.h>

struct daemon;
struct evhttp_request;

#define INBOX_COOKIE		"cw_inbox"
#define INBOX_CODE_TTL		60		/* seconds a `cwctl inbox` link works */
#define INBOX_SESSION_TTL	(12 * 3600)	/* seconds a session lasts */
#define INBOX_CSP		"default-src 'self'; script-src 'self'; style-src 'self'; " \
				"img-src 'self'; connect-src 'self'; object-src 'none'; " \
				"base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
int	inbox_cookie_get(const char *hdr, const char *name, char *out, size_t outlen);
int	inbox_code_new(struct daemon *, char *out, size_t outlen);
int	inbox_revoke(struct daemon *);
int	inbox_authorize(struct daemon *, struct evhttp_request *, int write,
	    int origin_ok, char *why, size_t whylen);
int	inbox_signed_in(struct daemon *, struct evhttp_request *);
int	inbox_is_page(const char *path);
void	inbox_serve(struct daemon *, struct evhttp_request *, const char *path);
void	inbox_security_headers(struct evhttp_request *);
void	inbox_free(struct daemon *);
/* The request's valid session cookie into out (0), or -1 when it has none. */
int	inbox_cookie_of(struct daemon *, struct evhttp_request *, char *out, size_t outlen);
int	inbox_cookie_valid(struct daemon *, const char *cookie);

#endif
