/*
 * A reader of Server-Sent Events (the WHATWG "text/event-stream" format), fed in
 * pieces as they arrive from the network. Lines end in LF, CRLF or CR; "event:" names
 * the event, "data:" lines are joined with LF, a line starting with ':' is a comment,
 * an empty line dispatches. Both model providers stream their answers this way.
 */
#ifndef CW_SSE_H
#define CW_SSE_H
#include <stddef.h>

/* One dispatched event: event is "message" when the stream named none. -1 stops. */
typedef int sse_event_fn(void *arg, const char *event, const char *data, size_t len);

struct sse;

/* max bounds one event's data (and one line): past it sse_feed fails. */
struct sse	*sse_new(size_t max, sse_event_fn *, void *arg);
/* 0, or -1 when an event is too large or the callback stopped. */
int		 sse_feed(struct sse *, const char *buf, size_t len);
void		 sse_free(struct sse *);

#endif
