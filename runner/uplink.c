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
	struct evbuffer		*outbox;
	size_t			 dropped;
	struct evconnlistener	*listener;
	char			 path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	uplink_attach_fn	 on_attach;
	void			*arg;
};

struct uplink *
uplink_new(struct event_base *base, int fd_out)
{
	struct uplink	*u;

	if ((u = calloc(1, sizeof *u)) == NULL)
		return NULL;
	if ((u->outbox = evbuffer_new()) == NULL) {
		free(u);
		return NULL;
	}
	u->base = base;
	u->fd = fd_out;
	return u;
}

static int
uplink_now_ms(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int)(ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

/*
 * Write all of p to the daemon, waiting (bounded) while its socket is full. 0, or -1
 * when it is gone or stuck: the caller detaches and queues what is left.
 */
static int
uplink_write(struct uplink *u, const char *p, size_t len, size_t *done)
{
	struct pollfd	 pfd;
	int		 deadline = uplink_now_ms() + UPLINK_WRITE_TIMEOUT_MS, left;
	ssize_t		 n;

	*done = 0;
	while (*done < len) {
		n = write(u->fd, p + *done, len - *done);
		if (n > 0) {
			*done += (size_t)n;
			continue;
		}
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno == EAGAIN) {
			if ((left = deadline - uplink_now_ms()) <= 0)
				return -1;
			pfd.fd = u->fd;
			pfd.events = POLLOUT;
			(void)poll(&pfd, 1, left);
			continue;
		}
		return -1;
	}
	return 0;
}

static void
uplink_drop_connection(struct uplink *u)
{
	if (u->bev != NULL) {
		bufferevent_free(u->bev);	/* closes the control connection */
		u->bev = NULL;
	} else if (u->fd >= 0 && !u->attached_sock)
		close(u->fd);			/* the stdout pipe */
	u->fd = -1;
	u->attached_sock = 0;
}

int
uplink_detach(struct uplink *u)
{
	if (u->listener == NULL)
		return 0;
	uplink_drop_connection(u);
	return 1;
}

void
uplink_send(struct uplink *u, const char *text, size_t len, int droppable)
{
	size_t	 done = 0;

	if (u->fd >= 0) {
		if (uplink_write(u, text, len, &done) == 0 &&
		    uplink_write(u, "\n", 1, &(size_t){ 0 }) == 0)
			return;
		/* Gone mid-line: what was written is lost with the connection. */
		if (!uplink_detach(u))
			return;		/* nobody can ever read it */
		if (done > 0)
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

static void
uplink_accept(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int salen,
    void *arg)
{
	struct uplink	*u = arg;
	struct ucred	 cred;
	socklen_t	 clen = sizeof cred;
	unsigned char	*data;
	size_t		 len, done;

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
	u->fd = fd;
	u->attached_sock = 1;
	/* The outbox first, in order; then the run goes on over this connection. */
	len = evbuffer_get_length(u->outbox);
	if (len > 0 && (data = evbuffer_pullup(u->outbox, -1)) != NULL) {
		if (uplink_write(u, (const char *)data, len, &done) == -1) {
			evbuffer_drain(u->outbox, done);
			uplink_drop_connection(u);
			return;
		}
		evbuffer_drain(u->outbox, len);
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
	if (u->bev != NULL)
		bufferevent_free(u->bev);
	evbuffer_free(u->outbox);
	free(u);
}
