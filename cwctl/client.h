/*
 * cwctl's client for clockworkd's API: finds the daemon and its token in the Clockwork
 * home, talks HTTP to 127.0.0.1 (libcurl, proxies ignored), and maps answers to
 * cwctl's exit codes.
 */
#ifndef CW_CLIENT_H
#define CW_CLIENT_H
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

/*
 * One request. body may be NULL. On success *out holds the parsed JSON answer (or
 * NULL for an empty one) and the return is a cwctl exit code: 0 for 2xx; otherwise the
 * error is printed as "cwctl: MESSAGE" and the code is 1 (failed), 3 (refused:
 * 409 already answered / run ended / forbidden) or 4 (daemon not running).
 */
int	client_call(const char *method, const char *path, const cJSON *body, cJSON **out);
/* As client_call, and frees body (a verb's request is built for one call). */
int	client_send(const char *method, const char *path, cJSON *body, cJSON **out);
/* As client_call, but prints nothing and hands back the HTTP status (0: no daemon). */
int	client_call_quiet(const char *method, const char *path, const cJSON *body,
	    long *status, cJSON **out);
/* Print v as indented JSON on stdout. */
void	client_print_json(const cJSON *v);
/* URL-encode s into out; -1 when it does not fit. */
int	client_escape(const char *s, char *out, size_t outlen);

/*
 * GET /api/events as a stream (events.c), read without polling: the client waits on
 * the socket. query is the filter ("types=run&run=ID", may be ""); open returns once
 * the daemon has subscribed the stream, so a caller that reads state after open misses
 * nothing that changes later. next blocks until an event: ev->type is the SSE event
 * name ("run", "approval", "log", "gap", ...) and ev->data its parsed JSON; heartbeats
 * are taken. A lost stream (a daemon restart, a crash, a cutoff, 45 s without a
 * heartbeat) is opened again with Last-Event-ID for up to 30 s, saying so on stderr,
 * and then next hands back one "reconnected" event: like "gap", it means that events
 * may have been lost and state should be read again. Both return cwctl exit codes,
 * the error printed: 4 when the daemon is not there (or did not come back).
 */
struct client_events;
struct client_event {
	uint64_t	 id;		/* 0: the event had none */
	char		 type[32];
	cJSON		*data;		/* NULL when absent or not JSON */
};
int	client_events_open(const char *query, struct client_events **out);
int	client_events_next(struct client_events *, struct client_event *ev);
void	client_event_clear(struct client_event *ev);
/*
 * "Something happened": wait for one event and take every one already come with it,
 * for callers that read state again on any event.
 */
int	client_events_wait(struct client_events *);
void	client_events_close(struct client_events *);

#endif
