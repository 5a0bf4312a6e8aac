/*
 * Listeners with limits, and the helpers every HTTP server here shares (httpd.h).
 */
#define _GNU_SOURCE
#include <sys/ioctl.h>
#include <sys/queue.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/listener.h>

#include "httpd.h"
#include "log.h"

#define HTTPD_BACKLOG		128
#define HTTPD_BACKOFF_MIN_MS	50
#define HTTPD_BACKOFF_MAX_MS	1000
#define HTTPD_REPORT_SECONDS	60	/* one line per listener and kind per minute */

struct httpd_listener;

/* One admitted connection. */
struct httpd_conn {
	struct httpd			*h;
	struct httpd_listener		*l;
	struct evhttp_connection	*evcon;
	struct event			*deadline;
	struct httpd_peer		 peer;
	int				 served;
	httpd_close_fn			 closecb;
	void				*closearg;
	TAILQ_ENTRY(httpd_conn)		 entry;
};

/* A rate-limited report: the first event is logged, then one summary a minute. */
struct httpd_report {
	time_t		last;
	unsigned long	quiet;
};

struct httpd_listener {
	struct httpd			*h;
	struct evconnlistener		*lev;	/* owned by the evhttp once bound */
	struct httpd_limits		 lim;
	int				 family;
	int				 port;
	char				 path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	int				 n;
	int				 paused;	/* at a cap: not accepting */
	int				 backing_off;	/* accept() failed: not accepting */
	int				 backoff_ms;
	struct event			*backoff;
	struct httpd_report		 rep_refused, rep_accept;
	TAILQ_ENTRY(httpd_listener)	 entry;
};

struct httpd {
	struct event_base		*base;
	struct evhttp			*http;
	char				 name[32];
	int				 max_total;
	int				 n_total;
	int				 closing;
	struct event			*adopt;		/* admits new connections */
	struct bufferevent		**fresh;	/* made by evhttp, not yet admitted */
	size_t				 nfresh, capfresh;
	struct httpd_stats		 stats;
	TAILQ_HEAD(, httpd_conn)	 conns;
	TAILQ_HEAD(, httpd_listener)	 listeners;
	TAILQ_ENTRY(httpd)		 entry;
};

/* Every server of this process, to find a listener from libevent's error callback. */
static TAILQ_HEAD(, httpd)	httpd_all = TAILQ_HEAD_INITIALIZER(httpd_all);

/* Log fmt now if the last line of this kind was a minute ago; count it otherwise. */
static void
httpd_report(struct httpd_report *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
httpd_report(struct httpd_report *r, const char *fmt, ...)
{
	char	msg[512];
	va_list	ap;
	time_t	now = time(NULL);

	if (r->last != 0 && now - r->last < HTTPD_REPORT_SECONDS) {
		r->quiet++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (r->quiet > 0)
		log_warn("%s (and %lu more like it in the last %ld s)", msg, r->quiet,
		    (long)(now - r->last));
	else
		log_warn("%s", msg);
	r->last = now;
	r->quiet = 0;
}

static const char *
httpd_listener_name(const struct httpd_listener *l, char *buf, size_t len)
{
	if (l->family == AF_UNIX)
		snprintf(buf, len, "%s", l->path);
	else
		snprintf(buf, len, "127.0.0.1:%d", l->port);
	return buf;
}

/* Free slots of the budget this listener may use: others' unused reserves are kept. */
static int
httpd_budget_left(const struct httpd *h, const struct httpd_listener *l)
{
	const struct httpd_listener	*o;
	int				 left = h->max_total - h->n_total;

	TAILQ_FOREACH(o, &h->listeners, entry)
		if (o != l && o->lim.reserve > o->n)
			left -= o->lim.reserve - o->n;
	return left;
}

static int
httpd_listener_full(const struct httpd_listener *l)
{
	return l->n >= l->lim.max_conns || httpd_budget_left(l->h, l) <= 0;
}

/*
 * Has c bytes of a request that the loop has not read yet (in the socket) or not
 * parsed yet (in its buffer)? Connections accepted together are read only on the
 * next turn of the loop: the one whose request is already there is not idle.
 */
static int
httpd_conn_pending(const struct httpd_conn *c)
{
	struct bufferevent	*bev = evhttp_connection_get_bufferevent(c->evcon);
	int			 n = 0;

	if (bev == NULL)
		return 0;
	if (evbuffer_get_length(bufferevent_get_input(bev)) > 0)
		return 1;
	return ioctl(bufferevent_getfd(bev), FIONREAD, &n) == 0 && n > 0;
}

/* Does an evict_idle listener have a connection that sent no request yet? */
static int
httpd_has_idle(const struct httpd *h, const struct httpd_listener *l)
{
	const struct httpd_conn	*c;

	if (!l->lim.evict_idle)
		return 0;
	TAILQ_FOREACH(c, &h->conns, entry)
		if (c->l == l && !c->served && !httpd_conn_pending(c))
			return 1;
	return 0;
}

/*
 * For an evict_idle listener at its cap: close the oldest connection on it that has
 * sent no request yet, to make room. 1 when one was closed, 0 when none is idle.
 */
static int
httpd_evict_idle(struct httpd *h, struct httpd_listener *l)
{
	struct httpd_conn	*c;

	if (!l->lim.evict_idle)
		return 0;
	TAILQ_FOREACH(c, &h->conns, entry) {
		if (c->l != l || c->served || httpd_conn_pending(c))
			continue;
		h->stats.expired++;
		/* The close callback frees c and gives its slot back. */
		evhttp_connection_free(c->evcon);
		return 1;
	}
	return 0;
}

/* Accept again on every listener that is paused and now has room. */
static void
httpd_resume(struct httpd *h)
{
	struct httpd_listener	*l;

	if (h->closing)
		return;
	TAILQ_FOREACH(l, &h->listeners, entry) {
		if (!l->paused || l->backing_off || httpd_listener_full(l))
			continue;
		l->paused = 0;
		evconnlistener_enable(l->lev);
	}
}

static void
httpd_pause_if_full(struct httpd *h)
{
	struct httpd_listener	*l;

	TAILQ_FOREACH(l, &h->listeners, entry) {
		/* An evict_idle listener with an idle connection keeps accepting: it makes room. */
		if (l->paused || !httpd_listener_full(l) || httpd_has_idle(h, l))
			continue;
		l->paused = 1;
		evconnlistener_disable(l->lev);
	}
}

static void
httpd_conn_free(struct httpd_conn *c)
{
	struct httpd	*h = c->h;

	TAILQ_REMOVE(&h->conns, c, entry);
	c->l->n--;
	h->n_total--;
	h->stats.open--;
	if (c->deadline != NULL)
		event_free(c->deadline);
	free(c);
	httpd_resume(h);
}

static void
httpd_closed(struct evhttp_connection *evcon, void *arg)
{
	struct httpd_conn	*c = arg;

	evhttp_connection_set_closecb(evcon, NULL, NULL);
	if (c->closecb != NULL)
		c->closecb(evcon, c->closearg);
	httpd_conn_free(c);
}

static void
httpd_deadline_cb(evutil_socket_t fd, short what, void *arg)
{
	struct httpd_conn	*c = arg;

	if (c->served)
		return;
	c->h->stats.expired++;
	/* The close callback frees c. */
	evhttp_connection_free(c->evcon);
}

static struct httpd_listener *
httpd_listener_of(struct httpd *h, int fd)
{
	struct httpd_listener	*l;
	struct sockaddr_storage	 ss;
	socklen_t		 sl = sizeof ss;

	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == -1)
		return NULL;
	TAILQ_FOREACH(l, &h->listeners, entry) {
		if (l->family != ss.ss_family)
			continue;
		if (l->family == AF_UNIX ||
		    ntohs(((struct sockaddr_in *)&ss)->sin_port) == l->port)
			return l;
	}
	return NULL;
}

static int
httpd_peer_of(int fd, int family, struct httpd_peer *p)
{
	struct sockaddr_storage	 ss;
	socklen_t		 sl = sizeof ss;
	struct ucred		 uc;
	socklen_t		 ul = sizeof uc;

	memset(p, 0, sizeof *p);
	if (family == AF_UNIX) {
		p->kind = HTTPD_UNIX;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &ul) == -1)
			return -1;
		p->uid = uc.uid;
		p->pid = uc.pid;
		snprintf(p->addr, sizeof p->addr, "uid=%u", (unsigned)uc.uid);
		return 0;
	}
	p->kind = HTTPD_TCP;
	p->uid = (uid_t)-1;
	if (getpeername(fd, (struct sockaddr *)&ss, &sl) == -1 || ss.ss_family != AF_INET)
		return -1;
	if (inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, p->addr,
	    sizeof p->addr) == NULL)
		return -1;
	return 0;
}

static int
httpd_peer_count(const struct httpd *h, const struct httpd_listener *l,
    const struct httpd_peer *p)
{
	const struct httpd_conn	*c;
	int			 n = 0;

	TAILQ_FOREACH(c, &h->conns, entry)
		if (c->l == l && (l->family == AF_UNIX ? c->peer.uid == p->uid :
		    strcmp(c->peer.addr, p->addr) == 0))
			n++;
	return n;
}

/* Admit evcon, just accepted on fd, or free it. */
static void
httpd_admit(struct httpd *h, struct evhttp_connection *evcon, int fd)
{
	struct httpd_listener	*l;
	struct httpd_conn	*c;
	struct httpd_peer	 p;
	struct timeval		 tv;
	const char		*why = NULL;
	char			 name[128];

	if ((l = httpd_listener_of(h, fd)) == NULL) {
		evhttp_connection_free(evcon);
		return;
	}
	l->backoff_ms = 0;
	if (httpd_peer_of(fd, l->family, &p) == -1)
		why = "the peer cannot be identified";
	else if (l->family == AF_UNIX && p.uid != geteuid())
		why = "the peer's uid is not ours";
	else if (l->lim.admit != NULL && l->lim.admit(fd, &p, l->lim.admit_arg) == -1) {
		h->stats.refused++;
		evhttp_connection_free(evcon);
		httpd_pause_if_full(h);
		return;
	}
	else if ((l->n >= l->lim.max_conns || httpd_budget_left(h, l) <= 0) &&
	    httpd_evict_idle(h, l) && (l->n >= l->lim.max_conns ||
	    httpd_budget_left(h, l) <= 0))
		why = "the listener is full";
	else if (l->n >= l->lim.max_conns)
		why = "the listener is full";
	else if (httpd_budget_left(h, l) <= 0)
		why = "the connection budget is spent (the rest is reserved)";
	else if (httpd_peer_count(h, l, &p) >= l->lim.max_per_peer)
		why = "the peer is at its cap";
	if (why == NULL && (c = calloc(1, sizeof *c)) == NULL)
		why = "out of memory";
	if (why != NULL) {
		h->stats.refused++;
		httpd_report(&l->rep_refused, "%s: refused a connection on %s from %s: %s",
		    h->name, httpd_listener_name(l, name, sizeof name),
		    p.addr[0] != '\0' ? p.addr : "?", why);
		evhttp_connection_free(evcon);
		httpd_pause_if_full(h);
		return;
	}
	c->h = h;
	c->l = l;
	c->evcon = evcon;
	c->peer = p;
	if (l->lim.deadline_ms > 0 &&
	    (c->deadline = evtimer_new(h->base, httpd_deadline_cb, c)) != NULL) {
		tv.tv_sec = l->lim.deadline_ms / 1000;
		tv.tv_usec = (l->lim.deadline_ms % 1000) * 1000;
		evtimer_add(c->deadline, &tv);
	}
	TAILQ_INSERT_TAIL(&h->conns, c, entry);
	l->n++;
	h->n_total++;
	h->stats.open++;
	h->stats.admitted++;
	evhttp_connection_set_closecb(evcon, httpd_closed, c);
	httpd_pause_if_full(h);
}

/*
 * evhttp made a connection for each bufferevent bevcb handed it. It keeps the
 * connection as the bufferevent's callback argument (http.c, since 2.0), which the
 * check against evhttp_connection_get_bufferevent() confirms before it is used.
 */
static void
httpd_adopt_cb(evutil_socket_t unused, short what, void *arg)
{
	struct httpd			*h = arg;
	struct bufferevent		*bev;
	struct evhttp_connection	*evcon;
	bufferevent_data_cb		 rd;
	void				*cbarg;
	int				 fd;

	for (size_t i = 0; i < h->nfresh; i++) {
		bev = h->fresh[i];
		rd = NULL;
		cbarg = NULL;
		bufferevent_getcb(bev, &rd, NULL, NULL, &cbarg);
		fd = bufferevent_getfd(bev);
		evcon = cbarg;
		if (rd != NULL && evcon != NULL && fd != -1 &&
		    evhttp_connection_get_bufferevent(evcon) == bev)
			httpd_admit(h, evcon, fd);
		bufferevent_decref(bev);
	}
	h->nfresh = 0;
}

/* evhttp's hook for a new connection's bufferevent: remember it, admit it soon. */
static struct bufferevent *
httpd_bevcb(struct event_base *base, void *arg)
{
	struct httpd		*h = arg;
	struct bufferevent	*bev, **nv;
	size_t			 ncap;

	if (h->nfresh == h->capfresh) {
		ncap = h->capfresh ? h->capfresh * 2 : 16;
		if ((nv = reallocarray(h->fresh, ncap, sizeof *nv)) == NULL)
			return NULL;
		h->fresh = nv;
		h->capfresh = ncap;
	}
	if ((bev = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE)) == NULL)
		return NULL;
	/* Our reference keeps it valid should evhttp give up on it before we look. */
	bufferevent_incref(bev);
	h->fresh[h->nfresh++] = bev;
	event_active(h->adopt, EV_TIMEOUT, 1);
	return bev;
}

static void
httpd_backoff_cb(evutil_socket_t fd, short what, void *arg)
{
	struct httpd_listener	*l = arg;

	l->backing_off = 0;
	if (l->h->closing)
		return;
	if (httpd_listener_full(l)) {
		l->paused = 1;
		return;
	}
	l->paused = 0;
	evconnlistener_enable(l->lev);
}

/*
 * accept() failed for a reason other than a retriable one. Left alone, libevent
 * would log it and try again at once, forever (the socket stays readable): pause
 * this listener instead, doubling the pause up to a second while it keeps failing.
 */
static void
httpd_accept_error(struct evconnlistener *lev, void *unused)
{
	struct httpd		*h;
	struct httpd_listener	*l = NULL;
	struct timeval		 tv;
	char			 name[128];
	int			 err = errno;

	TAILQ_FOREACH(h, &httpd_all, entry) {
		TAILQ_FOREACH(l, &h->listeners, entry)
			if (l->lev == lev)
				break;
		if (l != NULL)
			break;
	}
	if (l == NULL)
		return;
	h->stats.accept_errors++;
	l->backoff_ms = l->backoff_ms == 0 ? HTTPD_BACKOFF_MIN_MS :
	    l->backoff_ms * 2 > HTTPD_BACKOFF_MAX_MS ? HTTPD_BACKOFF_MAX_MS :
	    l->backoff_ms * 2;
	httpd_report(&l->rep_accept, "%s: accept on %s: %s; not accepting for %d ms",
	    h->name, httpd_listener_name(l, name, sizeof name), strerror(err),
	    l->backoff_ms);
	evconnlistener_disable(lev);
	l->backing_off = 1;
	tv.tv_sec = l->backoff_ms / 1000;
	tv.tv_usec = (l->backoff_ms % 1000) * 1000;
	evtimer_add(l->backoff, &tv);
}

struct httpd *
httpd_new(struct event_base *base, const char *name, int max_total, int idle_seconds,
    char *err, size_t errlen)
{
	struct httpd	*h;

	if ((h = calloc(1, sizeof *h)) == NULL) {
		snprintf(err, errlen, "%s: out of memory", name);
		return NULL;
	}
	h->base = base;
	snprintf(h->name, sizeof h->name, "%s", name);
	h->max_total = max_total;
	TAILQ_INIT(&h->conns);
	TAILQ_INIT(&h->listeners);
	if ((h->http = evhttp_new(base)) == NULL ||
	    (h->adopt = event_new(base, -1, 0, httpd_adopt_cb, h)) == NULL) {
		snprintf(err, errlen, "%s: cannot create the HTTP server", name);
		if (h->http != NULL)
			evhttp_free(h->http);
		free(h);
		return NULL;
	}
	evhttp_set_bevcb(h->http, httpd_bevcb, h);
	if (idle_seconds > 0)
		evhttp_set_timeout(h->http, idle_seconds);
	TAILQ_INSERT_TAIL(&httpd_all, h, entry);
	return h;
}

struct evhttp *
httpd_evhttp(struct httpd *h)
{
	return h->http;
}

static int
httpd_bind_listener(struct httpd *h, int fd, int family, const struct httpd_limits *lim,
    struct httpd_listener **out, char *err, size_t errlen)
{
	struct httpd_listener	*l;

	if ((l = calloc(1, sizeof *l)) == NULL ||
	    (l->backoff = evtimer_new(h->base, httpd_backoff_cb, l)) == NULL) {
		free(l);
		close(fd);
		snprintf(err, errlen, "%s: out of memory", h->name);
		return -1;
	}
	l->h = h;
	l->family = family;
	l->lim = *lim;
	if (l->lim.max_per_peer <= 0 || l->lim.max_per_peer > l->lim.max_conns)
		l->lim.max_per_peer = l->lim.max_conns;
	/* Backlog 0: the socket is listening already. */
	if ((l->lev = evconnlistener_new(h->base, NULL, NULL, LEV_OPT_CLOSE_ON_FREE |
	    LEV_OPT_CLOSE_ON_EXEC, 0, fd)) == NULL) {
		event_free(l->backoff);
		free(l);
		close(fd);
		snprintf(err, errlen, "%s: cannot make a listener", h->name);
		return -1;
	}
	if (evhttp_bind_listener(h->http, l->lev) == NULL) {
		evconnlistener_free(l->lev);
		event_free(l->backoff);
		free(l);
		snprintf(err, errlen, "%s: cannot bind the listener", h->name);
		return -1;
	}
	/* After evhttp_bind_listener(), which sets the accept callback but not this. */
	evconnlistener_set_error_cb(l->lev, httpd_accept_error);
	TAILQ_INSERT_TAIL(&h->listeners, l, entry);
	*out = l;
	return 0;
}

int
httpd_listen_tcp(struct httpd *h, int port, const struct httpd_limits *lim, int *bound,
    char *err, size_t errlen)
{
	struct httpd_listener	*l;
	struct sockaddr_in	 sin;
	socklen_t		 sl = sizeof sin;
	int			 fd, one = 1;

	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_port = htons((unsigned short)port);
	/* Loopback only, by construction: no configuration can widen this. */
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) == -1 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) == -1 ||
	    bind(fd, (struct sockaddr *)&sin, sizeof sin) == -1 ||
	    listen(fd, HTTPD_BACKLOG) == -1 ||
	    getsockname(fd, (struct sockaddr *)&sin, &sl) == -1) {
		snprintf(err, errlen, "%s: cannot listen on 127.0.0.1:%d: %s", h->name, port,
		    strerror(errno));
		if (fd != -1)
			close(fd);
		return -1;
	}
	if (httpd_bind_listener(h, fd, AF_INET, lim, &l, err, errlen) == -1)
		return -1;
	l->port = ntohs(sin.sin_port);
	*bound = l->port;
	return 0;
}

int
httpd_listen_fd(struct httpd *h, int fd, const struct httpd_limits *lim, int *bound,
    char *err, size_t errlen)
{
	struct httpd_listener	*l;
	struct sockaddr_in	 sin;
	socklen_t		 sl = sizeof sin;
	int			 acc = 0;
	socklen_t		 al = sizeof acc;

	/* Only what httpd_listen_tcp would have made: a listening loopback TCP socket. */
	if (getsockname(fd, (struct sockaddr *)&sin, &sl) == -1 ||
	    getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &al) == -1) {
		snprintf(err, errlen, "%s: adopted listener: %s", h->name, strerror(errno));
		close(fd);
		return -1;
	}
	if (sin.sin_family != AF_INET || ntohl(sin.sin_addr.s_addr) >> 24 != 127 || !acc) {
		snprintf(err, errlen, "%s: adopted descriptor is not a listening loopback "
		    "TCP socket", h->name);
		close(fd);
		return -1;
	}
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) == -1 ||
	    fcntl(fd, F_SETFD, FD_CLOEXEC) == -1) {
		snprintf(err, errlen, "%s: adopted listener: %s", h->name, strerror(errno));
		close(fd);
		return -1;
	}
	if (httpd_bind_listener(h, fd, AF_INET, lim, &l, err, errlen) == -1)
		return -1;
	l->port = ntohs(sin.sin_port);
	if (bound != NULL)
		*bound = l->port;
	return 0;
}

/* 0 when path is free to bind (a stale socket of ours was removed), else -1. */
static int
httpd_unix_clear(struct httpd *h, const struct sockaddr_un *sun, char *err, size_t errlen)
{
	struct stat	st;
	int		fd;

	if (lstat(sun->sun_path, &st) == -1) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, errlen, "%s: %s", sun->sun_path, strerror(errno));
		return -1;
	}
	if (!S_ISSOCK(st.st_mode) || st.st_uid != geteuid()) {
		snprintf(err, errlen, "%s exists and is not a socket of ours; refusing to "
		    "replace it", sun->sun_path);
		return -1;
	}
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	if (connect(fd, (const struct sockaddr *)sun, sizeof *sun) == 0) {
		close(fd);
		errno = EADDRINUSE;
		snprintf(err, errlen, "%s answers: another server is running", sun->sun_path);
		return -1;
	}
	close(fd);
	if (errno != ECONNREFUSED) {
		snprintf(err, errlen, "%s: %s", sun->sun_path, strerror(errno));
		return -1;
	}
	/* Nobody listens: a socket left by a server that died. */
	if (unlink(sun->sun_path) == -1 && errno != ENOENT) {
		snprintf(err, errlen, "cannot remove the stale %s: %s", sun->sun_path,
		    strerror(errno));
		return -1;
	}
	return 0;
}

int
httpd_listen_unix(struct httpd *h, const char *path, const struct httpd_limits *lim,
    char *err, size_t errlen)
{
	struct httpd_listener	*l;
	struct sockaddr_un	 sun;
	mode_t			 old;
	int			 fd, rc;

	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof sun.sun_path) {
		snprintf(err, errlen, "%s: longer than a unix socket path may be (%zu "
		    "bytes)", path, sizeof sun.sun_path - 1);
		return -1;
	}
	memcpy(sun.sun_path, path, strlen(path));
	if (httpd_unix_clear(h, &sun, err, errlen) == -1)
		return -1;
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) == -1) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	/* Born 0600: there is no moment at which another user could connect. */
	old = umask(0177);
	rc = bind(fd, (struct sockaddr *)&sun, sizeof sun);
	umask(old);
	if (rc == -1 || chmod(path, 0600) == -1 || listen(fd, HTTPD_BACKLOG) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	if (httpd_bind_listener(h, fd, AF_UNIX, lim, &l, err, errlen) == -1) {
		unlink(path);
		return -1;
	}
	snprintf(l->path, sizeof l->path, "%s", path);
	return 0;
}

void
httpd_free(struct httpd *h)
{
	struct httpd_listener	*l;

	if (h == NULL)
		return;
	h->closing = 1;
	/* Frees the listeners and every connection (whose close callbacks free ours). */
	evhttp_free(h->http);
	for (size_t i = 0; i < h->nfresh; i++)
		bufferevent_decref(h->fresh[i]);
	free(h->fresh);
	while ((l = TAILQ_FIRST(&h->listeners)) != NULL) {
		TAILQ_REMOVE(&h->listeners, l, entry);
		if (l->family == AF_UNIX && l->path[0] != '\0')
			unlink(l->path);
		event_free(l->backoff);
		free(l);
	}
	event_free(h->adopt);
	TAILQ_REMOVE(&httpd_all, h, entry);
	free(h);
}

void
httpd_stats(const struct httpd *h, struct httpd_stats *s)
{
	*s = h->stats;
}

static struct httpd_conn *
httpd_conn_of(struct httpd *h, struct evhttp_request *req)
{
	struct evhttp_connection	*evcon = evhttp_request_get_connection(req);
	struct httpd_conn		*c;

	if (evcon == NULL)
		return NULL;
	TAILQ_FOREACH(c, &h->conns, entry)
		if (c->evcon == evcon)
			return c;
	return NULL;
}

int
httpd_begin(struct httpd *h, struct evhttp_request *req, struct httpd_peer *peer)
{
	struct httpd_conn	*c;

	/* One request per connection: keep-alive would reopen the idle window. */
	evhttp_add_header(evhttp_request_get_output_headers(req), "Connection", "close");
	if ((c = httpd_conn_of(h, req)) == NULL) {
		if (peer != NULL)
			memset(peer, 0, sizeof *peer);
		return -1;
	}
	c->served = 1;
	if (c->deadline != NULL)
		evtimer_del(c->deadline);
	if (peer != NULL)
		*peer = c->peer;
	return 0;
}

int
httpd_set_closecb(struct httpd *h, struct evhttp_request *req, httpd_close_fn cb,
    void *arg)
{
	struct httpd_conn	*c;

	if ((c = httpd_conn_of(h, req)) == NULL) {
		errno = ENOENT;
		return -1;
	}
	c->closecb = cb;
	c->closearg = arg;
	return 0;
}

/* s names this daemon on loopback: prefix, then 127.0.0.1:port or localhost:port. */
static int
httpd_loopback_is(const char *s, const char *prefix, int port)
{
	char	a[64], b[64];

	if (s == NULL)
		return 0;
	snprintf(a, sizeof a, "%s127.0.0.1:%d", prefix, port);
	snprintf(b, sizeof b, "%slocalhost:%d", prefix, port);
	return strcasecmp(s, a) == 0 || strcasecmp(s, b) == 0;
}

int
httpd_host_ok(const char *host, int port)
{
	return httpd_loopback_is(host, "", port);
}

int
httpd_origin_ok(const char *origin, int port)
{
	return httpd_loopback_is(origin, "http://", port);
}

int
httpd_equal(const char *a, const char *b)
{
	size_t		 la, lb;
	unsigned char	 diff;

	if (a == NULL || b == NULL)
		return 0;
	la = strlen(a);
	lb = strlen(b);
	diff = la != lb;
	for (size_t i = 0; i < la; i++)
		diff |= (unsigned char)a[i] ^ (unsigned char)b[i % (lb ? lb : 1)];
	return diff == 0 && lb > 0;
}

char *
httpd_body(struct evhttp_request *req, size_t max, int allow_empty, size_t *len)
{
	struct evbuffer	*in = evhttp_request_get_input_buffer(req);
	size_t		 n = in != NULL ? evbuffer_get_length(in) : 0;
	char		*p;

	*len = 0;
	if (n > max) {
		errno = E2BIG;
		return NULL;
	}
	if (n == 0 && !allow_empty) {
		errno = ENODATA;
		return NULL;
	}
	if ((p = malloc(n + 1)) == NULL)
		return NULL;
	if (n > 0 && evbuffer_copyout(in, p, n) != (ev_ssize_t)n) {
		free(p);
		errno = EIO;
		return NULL;
	}
	p[n] = '\0';
	*len = n;
	return p;
}

const char *
httpd_reason(int code)
{
	switch (code) {
	case 200: return "OK";
	case 201: return "Created";
	case 202: return "Accepted";
	case 204: return "No Content";
	case 302: return "Found";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 409: return "Conflict";
	case 413: return "Payload Too Large";
	case 429: return "Too Many Requests";
	case 503: return "Service Unavailable";
	default: return code >= 500 ? "Internal Server Error" : "Error";
	}
}

void
httpd_reply(struct evhttp_request *req, int code, const char *type, const void *body,
    size_t len)
{
	struct evkeyvalq	*h = evhttp_request_get_output_headers(req);
	struct evbuffer		*buf = NULL;

	if (type != NULL)
		evhttp_add_header(h, "Content-Type", type);
	if (evhttp_find_header(h, "Cache-Control") == NULL)
		evhttp_add_header(h, "Cache-Control", "no-store");
	if (evhttp_find_header(h, "X-Content-Type-Options") == NULL)
		evhttp_add_header(h, "X-Content-Type-Options", "nosniff");
	if (body != NULL && len > 0 && (buf = evbuffer_new()) != NULL)
		evbuffer_add(buf, body, len);
	evhttp_send_reply(req, code, httpd_reason(code), buf);
	if (buf != NULL)
		evbuffer_free(buf);
}

void
httpd_reply_json(struct evhttp_request *req, int code, const char *json)
{
	httpd_reply(req, code, json != NULL ? "application/json" : NULL, json,
	    json != NULL ? strlen(json) : 0);
}

long
httpd_raise_nofile(void)
{
	struct rlimit	rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == -1)
		return -1;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) == -1)
			return -1;
	}
	return rl.rlim_cur > (rlim_t)(1L << 30) ? (1L << 30) : (long)rl.rlim_cur;
}

static struct httpd_report	httpd_libevent_report;

static void
httpd_libevent_log(int severity, const char *msg)
{
	if (severity < EVENT_LOG_WARN)
		return;
	httpd_report(&httpd_libevent_report, "libevent: %s", msg);
}

void
httpd_quiet_libevent(void)
{
	event_set_log_callback(httpd_libevent_log);
}
