/*
 * events.c: the bus as server-sent events (GET /api/events). Opens the stream on req
 * with the filters and Last-Event-ID given (each may be NULL); cookie names the Inbox
 * session it lives on (NULL: the token's), so that it ends with it. 0 once the
 * stream is open; else the HTTP status to answer, with the reason in err.
 */
#ifndef CW_EVENTS_H
#define CW_EVENTS_H
#include <stddef.h>
#include <stdint.h>

struct bus_filter;
struct daemon;
struct evhttp_request;

int	events_open(struct daemon *, struct evhttp_request *, const char *types,
	    const char *task, const char *run, const char *last_id, const char *cookie,
	    char *err, size_t errlen);
/* The stream's query (each NULL when absent): 0, or -1 with err naming the field. */
int	events_parse_query(const char *types, const char *task, const char *run,
	    const char *last_id, struct bus_filter *, uint64_t *after, char *err,
	    size_t errlen);
/* End the streams of Inbox sessions (a revoke); each gets a "signedout" event. */
void	events_end_sessions(struct daemon *);
size_t	events_streams(struct daemon *);
void	events_free(struct daemon *);

#endif
