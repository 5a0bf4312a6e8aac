#define _GNU_SOURCE	/* struct ucred */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "log.h"
#include "uplink.h"

struct uplink {
	struct event_base	*base;
	int			 fd;		/* where lines go; -1 while detached */
	int			 attached_sock;	/* fd is the control connection */
	struct bufferevent	*bev;		/* reads that connection */
	/*
	 * Lines on their way to fd, written as fd takes them (never by waiting in the
	 * runner's loop, whose bridge, proxy and engine pipes must go on meanwhile).
	 * mid_line: the daemon has the start of pending's first line, not its end.
	 */
	struct evbuffer		*pending;
	int			 mid_line;
	struct event		*wev;		/* fd writable */
	struct event		*stall;		/* no progress for UPLINK_WRITE_TIMEOUT_MS */
	struct evbuffer		*outbox;
	size_t			 dropped;
	struct evconnlistener	*listener;
	char			 path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	uplink_attach_fn	 on_attach;
	void			*arg;
};

static void	uplink_write_cb(evutil_socket_t, short, void *);
static void	uplink_stall_cb(evutil_socket_t, short, void *);
static int	uplink_use_fd(struct uplink *, int);

struct uplink *
uplink_new(struct event_base *base, int fd_out)
{
	struct uplink	*u;

	if ((u = calloc(1, sizeof *u)) == NULL)
		return NULL;
	if ((u->outbox = evbuffer_new()) == NULL || (u->pending = evbuffer_new()) == NULL ||
	    (u->stall = evtimer_new(base, uplink_stall_cb, u)) == NULL) {
		if (u->outbox != NULL)
			evbuffer_free(u->outbox);
		if (u->pending != NULL)
			evbuffer_free(u->pending);
		free(u);
		return NULL;
	}
	u->base = base;
	u->fd = -1;
	if (fd_out >= 0 && uplink_use_fd(u, fd_out) == -1) {
		uplink_free(u);
		return NULL;
	}
	return u;
}

static int
uplink_now_ms(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int)(ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

static void
uplink_arm(struct uplink *u)
{
	struct timeval	 tv = { UPLINK_WRITE_TIMEOUT_MS / 1000,
			    (UPLINK_WRITE_TIMEOUT_MS % 1000) * 1000 };

	if (u->wev != NULL && !event_pending(u->wev, EV_WRITE, NULL))
		event_add(u->wev, NULL);
	if (!evtimer_pending(u->stall, NULL))
		evtimer_add(u->stall, &tv);
}

static void
uplink_disarm(struct uplink *u)
{
	if (u->wev != NULL)
		event_del(u->wev);
	evtimer_del(u->stall);
}

/* fd carries the lines from now on: made non-blocking, watched for room. 0 or -1. */
static int
uplink_use_fd(struct uplink *u, int fd)
{
	int	 fl;

	if ((fl = fcntl(fd, F_GETFL)) == -1 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) == -1)
		return -1;
	if ((u->wev = event_new(u->base, fd, EV_WRITE, uplink_write_cb, u)) == NULL)
		return -1;
	u->fd = fd;
	u->mid_line = 0;
	return 0;
}

/*
 * Write what fd takes now. 0: all written, or the rest waits for room; -1 when the
 * daemon is gone (the caller detaches).
 */
static int
uplink_flush_some(struct uplink *u)
{
	unsigned char	*p;
	size_t		 len;
	ssize_t		 n;

	while ((len = evbuffer_get_length(u->pending)) > 0) {
		if (len > 65536)
			len = 65536;
		if ((p = evbuffer_pullup(u->pending, (ssize_t)len)) == NULL)
			return -1;
		n = write(u->fd, p, len);
		if (n > 0) {
			/* Did the daemon get the end of a line, or is one half sent? */
			u->mid_line = p[n - 1] != '\n';
			evbuffer_drain(u->pending, (size_t)n);
			evtimer_del(u->stall);
			continue;
		}
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno == EAGAIN)
			break;
		return -1;
	}
	if (evbuffer_get_length(u->pending) > 0)
		uplink_arm(u);
	else
		uplink_disarm(u);
	return 0;
}

static void
uplink_drop_connection(struct uplink *u)
{
	uplink_disarm(u);
	if (u->wev != NULL) {
		event_free(u->wev);
		u->wev = NULL;
	}
	if (u->bev != NULL) {
		bufferevent_free(u->bev);	/* closes the control connection */
		u->bev = NULL;
	} else if (u->fd >= 0 && !u->attached_sock)
		close(u->fd);			/* the stdout pipe */
	u->fd = -1;
	u->attached_sock = 0;
}

/*
 * The daemon is gone with lines on their way: a line it got part of is lost with the
 * connection; the whole ones wait in the outbox for the next daemon (when listening).
 */
static void
uplink_lost(struct uplink *u)
{
	struct evbuffer_ptr	 p;

	uplink_drop_connection(u);
	if (u->mid_line && evbuffer_get_length(u->pending) > 0) {
		p = evbuffer_search(u->pending, "\n", 1, NULL);
		evbuffer_drain(u->pending, p.pos >= 0 ? (size_t)p.pos + 1 :
		    evbuffer_get_length(u->pending));
	}
	u->mid_line = 0;
	if (u->listener != NULL)
		evbuffer_prepend_buffer(u->outbox, u->pending);
	evbuffer_drain(u->pending, evbuffer_get_length(u->pending));
}

static void
uplink_write_cb(evutil_socket_t fd, short what, void *arg)
{
	struct uplink	*u = arg;

	if (u->fd >= 0 && uplink_flush_some(u) == -1)
		uplink_lost(u);
}

/* A daemon that took nothing for UPLINK_WRITE_TIMEOUT_MS is gone. */
static void
uplink_stall_cb(evutil_socket_t fd, short what, void *arg)
{
	struct uplink	*u = arg;

	if (u->fd >= 0 && evbuffer_get_length(u->pending) > 0) {
		log_warn("clockworkd took nothing for %d s: detaching",
		    UPLINK_WRITE_TIMEOUT_MS / 1000);
		uplink_lost(u);
	}
}

int
uplink_detach(struct uplink *u)
{
	if (u->listener == NULL)
		return 0;
	uplink_lost(u);
	return 1;
}

void
uplink_send(struct uplink *u, const char *text, size_t len, int droppable)
{
	if (u->fd >= 0) {
		/* A daemon that reads slowly holds engine output back only so far. */
		if (droppable && evbuffer_get_length(u->pending) + len + 1 > UPLINK_OUTBOX_MAX) {
			u->dropped++;
			return;
		}
		evbuffer_add(u->pending, text, len);
		evbuffer_add(u->pending, "\n", 1);
		if (uplink_flush_some(u) == -1 && !uplink_detach(u))
			uplink_drop_connection(u);	/* nobody can ever read it */
		return;
	}
	if (u->listener == NULL)
		return;
	if (droppable && evbuffer_get_length(u->outbox) + len + 1 > UPLINK_OUTBOX_MAX) {
		u->dropped++;
		return;
	}
	evbuffer_add(u->outbox, text, len);
	evbuffer_add(u->outbox, "\n", 1);
}

int
uplink_flush(struct uplink *u, int timeout_ms)
{
	struct pollfd	 pfd;
	int		 deadline = uplink_now_ms() + timeout_ms, left;

	while (u->fd >= 0 && evbuffer_get_length(u->pending) > 0) {
		if (uplink_flush_some(u) == -1) {
			uplink_lost(u);
			return -1;
		}
		if (evbuffer_get_length(u->pending) == 0)
			break;
		if ((left = deadline - uplink_now_ms()) <= 0) {
			uplink_lost(u);
			return -1;
		}
		pfd.fd = u->fd;
		pfd.events = POLLOUT;
		(void)poll(&pfd, 1, left);
	}
	return u->fd >= 0 ? 0 : -1;
}

size_t
uplink_pending(const struct uplink *u)
{
	return evbuffer_get_length(u->pending);
}

static void
uplink_accept(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int salen,
    void *arg)
{
	struct uplink	*u = arg;
	struct ucred	 cred;
	socklen_t	 clen = sizeof cred;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) == -1 ||
	    cred.uid != getuid()) {
		log_warn("control socket: refused a peer of uid %d", (int)cred.uid);
		close(fd);
		return;
	}
	if (u->fd >= 0) {
		/* A daemon is attached (or the first one's pipe is open): one at a time. */
		close(fd);
		return;
	}
	if ((u->bev = bufferevent_socket_new(u->base, fd, BEV_OPT_CLOSE_ON_FREE)) == NULL) {
		close(fd);
		return;
	}
	if (uplink_use_fd(u, fd) == -1) {
		bufferevent_free(u->bev);
		u->bev = NULL;
		return;
	}
	u->attached_sock = 1;
	/* The outbox first, in order; then the run goes on over this connection. */
	evbuffer_add_buffer(u->pending, u->outbox);
	if (uplink_flush_some(u) == -1) {
		uplink_lost(u);
		return;
	}
	log_info("clockworkd attached through the control socket");
	if (u->on_attach != NULL)
		u->on_attach(u->arg, u->bev);
}

int
uplink_listen(struct uplink *u, const char *path, uplink_attach_fn fn, void *arg,
    char *err, size_t errlen)
{
	struct sockaddr_un	 sun;
	struct stat		 st;
	mode_t			 old;
	int			 fd;

	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof sun.sun_path) {
		snprintf(err, errlen, "control socket path %s is longer than a unix socket "
		    "path may be (%zu bytes)", path, sizeof sun.sun_path - 1);
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(sun.sun_path, path, strlen(path) + 1);
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			snprintf(err, errlen, "%s exists and is not a socket", path);
			errno = EEXIST;
			return -1;
		}
		(void)unlink(path);	/* a run id is never reused: this one is stale */
	}
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) == -1) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	old = umask(0177);
	if (bind(fd, (struct sockaddr *)&sun, sizeof sun) == -1 || listen(fd, 4) == -1) {
		umask(old);
		snprintf(err, errlen, "bind %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	umask(old);
	if ((u->listener = evconnlistener_new(u->base, uplink_accept, u,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, -1, fd)) == NULL) {
		snprintf(err, errlen, "listen %s: cannot watch it", path);
		close(fd);
		(void)unlink(path);
		return -1;
	}
	snprintf(u->path, sizeof u->path, "%s", path);
	u->on_attach = fn;
	u->arg = arg;
	return 0;
}

int
uplink_attached(const struct uplink *u)
{
	return u->fd >= 0;
}

int
uplink_listening(const struct uplink *u)
{
	return u->listener != NULL;
}

size_t
uplink_dropped(const struct uplink *u)
{
	return u->dropped;
}

void
uplink_free(struct uplink *u)
{
	if (u == NULL)
		return;
	if (u->listener != NULL) {
		evconnlistener_free(u->listener);
		(void)unlink(u->path);
	}
	uplink_drop_connection(u);
	if (u->stall != NULL)
		event_free(u->stall);
	evbuffer_free(u->pending);
	evbuffer_free(u->outbox);
	free(u);
}
