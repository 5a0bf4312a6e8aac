/*
 * The runner's line to clockworkd (SPEC R1: runs outlive daemon restarts). At first it
 * is the runner's stdout, the pipe the daemon made. When the daemon goes away (its end
 * of the pipe closes), the run goes on: messages wait in a bounded outbox, and the
 * runner listens on a control socket, <clockwork home>/runs/<run-id>.sock (the home is
 * 0700 and no run's sandbox grants it), for a restarted daemon to attach. On attach the
 * outbox is replayed in order and the socket carries both directions from then on.
 */
#ifndef CW_UPLINK_H
#define CW_UPLINK_H
#include <stddef.h>

#include <event2/bufferevent.h>

#define UPLINK_OUTBOX_MAX	(16 * 1024 * 1024)	/* bytes kept while detached */
#define UPLINK_WRITE_TIMEOUT_MS	10000		/* a daemon that reads nothing is gone */

struct event_base;
struct uplink;

/*
 * Called for a daemon that attached through the control socket, once the outbox is
 * replayed: bev reads what the daemon sends (the caller sets its callbacks).
 */
typedef void	(*uplink_attach_fn)(void *arg, struct bufferevent *bev);

struct uplink	*uplink_new(struct event_base *, int fd_out);
/*
 * Listen at path (0600, our uid only: a peer of another uid is refused). A stale
 * socket left at path is replaced; anything else there is an error. 0 or -1 with err.
 */
int		 uplink_listen(struct uplink *, const char *path, uplink_attach_fn,
		    void *arg, char *err, size_t errlen);
/*
 * Send one line (text without its newline). While detached it is queued; past the
 * outbox's bound a line that is droppable (engine output) is counted and dropped,
 * any other is kept.
 */
void		 uplink_send(struct uplink *, const char *text, size_t len, int droppable);
/*
 * Before the runner ends: wait (up to timeout_ms) until every line on its way has
 * been written. 0, or -1 when the daemon took them not (then, when listening, the
 * whole lines wait in the outbox for the next daemon).
 */
int		 uplink_flush(struct uplink *, int timeout_ms);
/* Bytes on their way to the daemon, not yet taken. */
size_t		 uplink_pending(const struct uplink *);
/* The daemon is gone: queue from now on (only when listening; 0 when not). */
int		 uplink_detach(struct uplink *);
int		 uplink_attached(const struct uplink *);
int		 uplink_listening(const struct uplink *);
size_t		 uplink_dropped(const struct uplink *);
/* Stop listening, remove the socket, close everything. */
void		 uplink_free(struct uplink *);

#endif
