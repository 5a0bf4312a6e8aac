/*
 * The HTTP plumbing shared by clockworkd's API and Inbox and cw-runner's permission
 * bridge, on libevent's evhttp (linked only by those two: cw-floor-hook never sees it).
 *
 * Listeners. Every listener is an evconnlistener we make ourselves (a 127.0.0.1 TCP
 * port or a unix socket) handed to evhttp with evhttp_bind_listener(), so that:
 *  - each accepted connection is admitted or refused against limits: a cap on the
 *    listener, a cap per peer (per uid on a unix socket, which must also be our own
 *    uid; per source address on TCP) and a process-wide budget in which a listener's
 *    reserve stays free for it (a run's connections to the TCP port cannot use the
 *    slots kept for cwctl's unix socket);
 *  - a listener at its cap stops accepting (the kernel's backlog holds the rest)
 *    until a connection closes, instead of accepting and closing in a loop;
 *  - accept() failing with EMFILE, ENFILE, ENOBUFS or ENOMEM pauses that listener
 *    for a back-off interval and is logged once a minute, not once per attempt;
 *  - a connection must deliver one whole request (headers and body) within the
 *    listener's deadline, and serves exactly one request (Connection: close), so
 *    an idle or trickling connection is closed however it behaves.
 * Admission happens on the loop pass after evhttp accepted the connection (evhttp
 * 2.1 has no accept hook): the connection is freed before any of its bytes are read.
 *
 * Helpers. One Host gate, one Origin check, one bounded body reader, one reply
 * function and one constant-time compare for every server.
 */
#ifndef CW_HTTPD_H
#define CW_HTTPD_H
#include <sys/types.h>
#include <stddef.h>

struct event_base;
struct evhttp;
struct evhttp_request;
struct evhttp_connection;
struct httpd;

struct httpd_peer;

/*
 * A server's own admission rule for a listener, asked after the uid check and before
 * any limit: 0 admits, -1 refuses (the connection is freed unanswered, nothing of it
 * read). The rule logs its own refusals.
 */
typedef int	(*httpd_admit_fn)(int fd, const struct httpd_peer *, void *arg);

struct httpd_limits {
	int		max_conns;	/* open connections on this listener */
	int		max_per_peer;	/* per uid (unix socket) or source address (TCP) */
	int		deadline_ms;	/* from accept to a whole request */
	int		reserve;	/* slots of the process budget no other listener may take */
	httpd_admit_fn	admit;		/* NULL: the limits alone decide */
	void		*admit_arg;
	/*
	 * 1: when the listener is full, a new connection closes the oldest one that has
	 * not sent its request yet, instead of waiting behind it. For a listener whose
	 * real clients speak at once (a run's bridge): idle connections held by the run
	 * itself cannot shut the floor hook out.
	 */
	int		evict_idle;
};

enum httpd_kind {
	HTTPD_TCP = 0,
	HTTPD_UNIX,
};

/* Who is on the other end of a connection, as the kernel says. */
struct httpd_peer {
	enum httpd_kind	kind;
	uid_t		uid;		/* unix: SO_PEERCRED */
	pid_t		pid;
	char		addr[48];	/* TCP: the source address */
};

struct httpd_stats {
	size_t		open;		/* connections now */
	unsigned long	admitted, refused, expired, accept_errors;
};

typedef void	(*httpd_close_fn)(struct evhttp_connection *, void *);

/*
 * A server: one evhttp and the listeners that feed it. max_total bounds the
 * connections of all its listeners together; idle_seconds is evhttp's read/write
 * timeout. NULL on failure, with err filled.
 */
struct httpd	*httpd_new(struct event_base *, const char *name, int max_total,
		    int idle_seconds, char *err, size_t errlen);
struct evhttp	*httpd_evhttp(struct httpd *);
/* Listen on 127.0.0.1:port (0: any free port); the port bound is in *bound. */
int		 httpd_listen_tcp(struct httpd *, int port, const struct httpd_limits *,
		    int *bound, char *err, size_t errlen);
/*
 * Serve a listening 127.0.0.0/8 TCP socket made elsewhere (in a run's network
 * namespace, runner/sandbox.c), taking ownership of fd (closed on failure too).
 */
int		 httpd_listen_fd(struct httpd *, int fd, const struct httpd_limits *,
		    int *bound, char *err, size_t errlen);
/*
 * Listen on a unix socket at path, mode 0600. A socket left there by a dead server
 * is replaced; one that answers means another server is running (EADDRINUSE); a
 * path that is not a socket we own is refused. The caller has checked that the
 * directory is ours and closed to others.
 */
int		 httpd_listen_unix(struct httpd *, const char *path,
		    const struct httpd_limits *, char *err, size_t errlen);
/* Close every connection and listener, unlink unix sockets, free the evhttp. */
void		 httpd_free(struct httpd *);
void		 httpd_stats(const struct httpd *, struct httpd_stats *);

/*
 * Call first in every request callback: ends the connection's deadline, makes this
 * its only request and says who the peer is. -1 when the connection is not one we
 * admitted (the caller refuses it).
 */
int		 httpd_begin(struct httpd *, struct evhttp_request *, struct httpd_peer *);
/* The one close callback a user may hang on a request's connection (NULL clears). */
int		 httpd_set_closecb(struct httpd *, struct evhttp_request *, httpd_close_fn,
		    void *);

/* Host is 127.0.0.1:port or localhost:port (any case): the DNS-rebinding gate. */
int		 httpd_host_ok(const char *host, int port);
/* Origin is http://127.0.0.1:port or http://localhost:port. */
int		 httpd_origin_ok(const char *origin, int port);
/* Compare in time independent of where the strings differ; empty never matches. */
int		 httpd_equal(const char *a, const char *b);
/*
 * The request body as a NUL-terminated copy. NULL with errno E2BIG past max bytes
 * (nothing is copied), ENODATA when empty and !allow_empty, ENOMEM.
 */
char		*httpd_body(struct evhttp_request *, size_t max, int allow_empty,
		    size_t *len);
const char	*httpd_reason(int code);
/* Reply with body (len bytes, may be NULL) as type, uncacheable and unsniffable. */
void		 httpd_reply(struct evhttp_request *, int code, const char *type,
		    const void *body, size_t len);
void		 httpd_reply_json(struct evhttp_request *, int code, const char *json);

/*
 * Raise RLIMIT_NOFILE's soft limit to the hard limit; the limit now in force, or -1.
 * A server must not run out of descriptors at the 1,024 a service is given.
 */
long		 httpd_raise_nofile(void);
/* Send libevent's own messages to our log, at most a few a minute. */
void		 httpd_quiet_libevent(void);

#endif
