/*
 * GET /api/events (and the Inbox's /inbox/api/events): the bus (bus.h) as server-sent
 * events. Each event is
 *
 *	id: N
 *	event: TYPE
 *	data: {"id":N,"type":TYPE,"at_ms":...,"task":...,"run":...,"data":{...}}
 *
 * with ?types=a,b, ?task=NAME and ?run=ID as filters. A client that comes back with
 * Last-Event-ID (the header, or ?last_event_id=) gets every event it missed that the
 * bus still holds; when some had fallen off, it first gets the journal's entries from
 * that span (journal events are kept for ever), then one "gap" event saying that the
 * other events of that span (run output, status changes) are gone and state should be
 * read again. A "heartbeat" event every EVENTS_HEARTBEAT_S keeps proxies and timeouts
 * quiet and shows the stream is alive.
 *
 * A subscriber that does not read is never waited for: once the events queued for it
 * pass EVENTS_MAX_BACKLOG bytes it gets a "cutoff" event (delivered if it ever reads)
 * and its stream ends; evhttp's write timeout then closes the connection. So one stuck
 * client costs at most that much memory, and the loop never blocks on it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "bus.h"
#include "daemon.h"
#include "events.h"
#include "httpd.h"
#include "inbox.h"
#include "journal.h"
#include "json.h"
#include "log.h"
#include "store.h"

#define EVENTS_MAX_STREAMS	128
#define EVENTS_MAX_BACKLOG	(1024 * 1024)	/* bytes queued for one stream */
#define EVENTS_MAX_REPLAY	(4 * 1024 * 1024) /* what one resume may queue at once */
#define EVENTS_HEARTBEAT_S	15
#define EVENTS_JOURNAL_MAX	2000		/* journal entries replayed past the ring */

struct events_stream {
	struct events		*ev;
	struct evhttp_request	*req;
	struct bus_sub		*sub;
	struct bus_filter	 f;
	uint64_t		 last;		/* the last id sent */
	int			 overflow;	/* a resume passed EVENTS_MAX_REPLAY */
	char			 cookie[80];	/* the Inbox session; "" for the token */
	TAILQ_ENTRY(events_stream) entry;
};

struct events {
	struct daemon		*d;
	TAILQ_HEAD(, events_stream) streams;
	size_t			 n;
	struct event		*heartbeat;	/* armed while there are streams */
};

static struct events *
events_get(struct daemon *d)
{
	if (d->events == NULL && (d->events = calloc(1, sizeof *d->events)) != NULL) {
		d->events->d = d;
		TAILQ_INIT(&d->events->streams);
	}
	return d->events;
}

static void
events_stream_free(struct events_stream *st)
{
	struct events	*ev = st->ev;

	bus_unsubscribe(st->sub);
	TAILQ_REMOVE(&ev->streams, st, entry);
	ev->n--;
	free(st);
	if (ev->n == 0 && ev->heartbeat != NULL)
		evtimer_del(ev->heartbeat);
}

/* Bytes written to the connection and not yet taken by the client. */
static size_t
events_backlog(struct events_stream *st)
{
	struct evhttp_connection	*c = evhttp_request_get_connection(st->req);
	struct bufferevent		*bev;

	if (c == NULL || (bev = evhttp_connection_get_bufferevent(c)) == NULL)
		return 0;
	return evbuffer_get_length(bufferevent_get_output(bev));
}

/* The stream's last words (a "cutoff" or "signedout" event), and its end. */
static void
events_stream_end(struct events_stream *st, const char *type, const char *why)
{
	struct evbuffer	*buf;
	cJSON		*o;
	char		*t;

	if ((buf = evbuffer_new()) != NULL) {
		o = cJSON_CreateObject();
		json_add_string(o, "reason", why);
		cJSON_AddNumberToObject(o, "last_id", (double)st->last);
		t = json_print(o);
		cJSON_Delete(o);
		evbuffer_add_printf(buf, "event: %s\ndata: %s\n\n", type, t != NULL ? t : "{}");
		cJSON_free(t);
		evhttp_send_reply_chunk(st->req, buf);
		evbuffer_free(buf);
	}
	httpd_set_closecb(st->ev->d->httpd, st->req, NULL, NULL);
	evhttp_send_reply_end(st->req);
	events_stream_free(st);
}

static void
events_send(struct events_stream *st, uint64_t id, const char *type, const char *json,
    size_t len)
{
	struct evbuffer	*buf;

	if ((buf = evbuffer_new()) == NULL)
		return;
	if (id != 0)
		evbuffer_add_printf(buf, "id: %llu\n", (unsigned long long)id);
	evbuffer_add_printf(buf, "event: %s\ndata: ", type);
	evbuffer_add(buf, json, len);
	evbuffer_add(buf, "\n\n", 2);
	evhttp_send_reply_chunk(st->req, buf);
	evbuffer_free(buf);
	if (id != 0)
		st->last = id;
}

static void
events_deliver(const struct bus_event *e, void *arg)
{
	struct events_stream	*st = arg;
	char			 why[160];
	size_t			 behind;

	if (e->id <= st->last)
		return;			/* replayed already */
	if ((behind = events_backlog(st)) > EVENTS_MAX_BACKLOG) {
		snprintf(why, sizeof why, "this stream fell %zu bytes behind (the limit is "
		    "%d); reconnect with Last-Event-ID to go on", behind, EVENTS_MAX_BACKLOG);
		log_warn("events: a stream fell %zu bytes behind: cut off", behind);
		events_stream_end(st, "cutoff", why);
		return;
	}
	events_send(st, e->id, bus_type_name(e->type), e->json, e->len);
}

static void
events_heartbeat_cb(evutil_socket_t fd, short what, void *arg)
{
	struct events		*ev = arg;
	struct events_stream	*st, *next;
	char			 line[96];
	int			 n;

	(void)fd;
	(void)what;
	n = snprintf(line, sizeof line, "{\"next_id\":%llu}",
	    (unsigned long long)bus_next_id(ev->d->bus));
	for (st = TAILQ_FIRST(&ev->streams); st != NULL; st = next) {
		next = TAILQ_NEXT(st, entry);
		if (st->cookie[0] != '\0' && !inbox_cookie_valid(ev->d, st->cookie))
			events_stream_end(st, "signedout", "the Inbox session ended");
		else
			events_send(st, 0, "heartbeat", line, (size_t)n);
	}
}

static void
events_closed(struct evhttp_connection *evcon, void *arg)
{
	struct events_stream	*st = arg;
	struct evhttp_request	*req = st->req;

	(void)evcon;
	events_stream_free(st);
	/* Detached by libevent (the client went away): ending the reply frees it. */
	if (evhttp_request_get_connection(req) == NULL)
		evhttp_send_reply_end(req);
}

/* A task filter on a journal entry of a run that may have ended: the store says. */
static int
events_journal_task_ok(struct daemon *d, const struct bus_filter *f, const char *run_id,
    char *task, size_t tasklen)
{
	struct store_run	 sr;
	struct store_task	 t;
	const char		*live;
	int			 ok = 0;

	task[0] = '\0';
	if (run_id == NULL)
		return f->task[0] == '\0';
	if ((live = journal_task(d, run_id)) != NULL) {
		snprintf(task, tasklen, "%s", live);
	} else if (store_run_get(d->store, run_id, &sr) == 1) {
		if (store_task_get(d->store, sr.task_id, &t) == 1) {
			snprintf(task, tasklen, "%s", t.name);
			store_task_free(&t);
		}
		store_run_free(&sr);
	}
	ok = f->task[0] == '\0' || strcmp(f->task, task) == 0;
	return ok;
}

/* The journal's entries between after and the bus's oldest, as journal events. */
static size_t
events_replay_journal(struct events_stream *st, uint64_t after, uint64_t before,
    int *truncated)
{
	struct daemon			*d = st->ev->d;
	struct store_journal_entry	*v;
	cJSON				*o, *data;
	char				*t, task[DAEMON_TASK_NAME_MAX + 1];
	size_t				 n, sent = 0;

	*truncated = 0;
	if ((st->f.types & (1u << BUS_JOURNAL)) == 0)
		return 0;
	if (store_journal_list_events(d->store, (int64_t)after, (int64_t)before,
	    EVENTS_JOURNAL_MAX + 1, &v, &n) == -1) {
		log_warn("events: cannot read the journal: %s", store_errmsg(d->store));
		*truncated = 1;
		return 0;
	}
	for (size_t i = 0; i < n && i < EVENTS_JOURNAL_MAX; i++) {
		if (st->f.run[0] != '\0' && (v[i].run_id == NULL ||
		    strcmp(st->f.run, v[i].run_id) != 0))
			continue;
		if (!events_journal_task_ok(d, &st->f, v[i].run_id, task, sizeof task))
			continue;
		if ((o = cJSON_CreateObject()) == NULL)
			break;
		cJSON_AddNumberToObject(o, "id", (double)v[i].event_id);
		json_add_string(o, "type", "journal");
		json_add_string(o, "ts", v[i].ts);
		if (task[0] != '\0')
			json_add_string(o, "task", task);
		if (v[i].run_id != NULL)
			json_add_string(o, "run", v[i].run_id);
		if ((data = journal_event_data(v[i].kind, v[i].data)) != NULL)
			cJSON_AddItemToObject(o, "data", data);
		if ((t = json_print(o)) != NULL) {
			events_send(st, (uint64_t)v[i].event_id, "journal", t, strlen(t));
			sent++;
		}
		cJSON_free(t);
		cJSON_Delete(o);
	}
	*truncated = n > EVENTS_JOURNAL_MAX;
	store_journal_list_free(v, n);
	return sent;
}

/* One kept event of a resume; past EVENTS_MAX_REPLAY the rest waits for the next. */
static void
events_replay_one(const struct bus_event *e, void *arg)
{
	struct events_stream	*st = arg;

	if (st->overflow || e->id <= st->last)
		return;
	if (events_backlog(st) > EVENTS_MAX_REPLAY) {
		st->overflow = 1;
		return;
	}
	events_send(st, e->id, bus_type_name(e->type), e->json, e->len);
}

/* Give the stream what it missed since after: the journal past the ring, then the ring. */
static void
events_resume(struct events_stream *st, uint64_t after)
{
	struct bus	*bus = st->ev->d->bus;
	uint64_t	 oldest;
	size_t		 njournal;
	int		 truncated;
	char		 line[256];
	int		 n;

	/* An id from the future (another home, a forged header) resumes from now. */
	if (after >= bus_next_id(bus)) {
		st->last = bus_next_id(bus) - 1;
		return;
	}
	oldest = bus_oldest_id(bus);
	st->last = after;
	if (after + 1 < oldest) {
		njournal = events_replay_journal(st, after, oldest, &truncated);
		n = snprintf(line, sizeof line, "{\"after\":%llu,\"until\":%llu,\"journal\":"
		    "%zu,\"truncated\":%s,\"message\":\"events older than the stream's "
		    "buffer: journal entries replayed, other events lost; read state "
		    "again\"}", (unsigned long long)after, (unsigned long long)oldest,
		    njournal, truncated ? "true" : "false");
		events_send(st, 0, "gap", line, (size_t)n);
		st->last = oldest - 1;
	}
	(void)bus_replay(bus, st->last, &st->f, events_replay_one, st, &oldest);
}

static int
events_parse_id(const char *s, uint64_t *out)
{
	char			*end;
	unsigned long long	 v;

	if (s == NULL || *s < '0' || *s > '9' || strlen(s) > 20)
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0')
		return -1;
	*out = v;
	return 0;
}

int
events_parse_query(const char *types, const char *task, const char *run,
    const char *last_id, struct bus_filter *f, uint64_t *after, char *err, size_t errlen)
{
	char	bad[48];

	memset(f, 0, sizeof *f);
	f->types = BUS_TYPES_ALL;
	*after = 0;
	if (types != NULL && bus_types_parse(types, &f->types, bad, sizeof bad) == -1) {
		snprintf(err, errlen, "types: no event type '%s' (run, approval, log, "
		    "journal, budget, task)", bad);
		return -1;
	}
	if (task != NULL && (strlen(task) == 0 || strlen(task) >= sizeof f->task)) {
		snprintf(err, errlen, "task: a task name of 1 to %zu bytes", sizeof f->task - 1);
		return -1;
	}
	if (run != NULL && (strlen(run) == 0 || strlen(run) >= sizeof f->run)) {
		snprintf(err, errlen, "run: a run id of 1 to %zu bytes", sizeof f->run - 1);
		return -1;
	}
	if (last_id != NULL && events_parse_id(last_id, after) == -1) {
		snprintf(err, errlen, "Last-Event-ID: not an event id (a decimal number)");
		return -1;
	}
	if (task != NULL)
		snprintf(f->task, sizeof f->task, "%s", task);
	if (run != NULL)
		snprintf(f->run, sizeof f->run, "%s", run);
	return 0;
}

int
events_open(struct daemon *d, struct evhttp_request *req, const char *types,
    const char *task, const char *run, const char *last_id, const char *cookie,
    char *err, size_t errlen)
{
	struct events		*ev = events_get(d);
	struct events_stream	*st;
	struct bus_filter	 f;
	struct timeval		 hb = { EVENTS_HEARTBEAT_S, 0 };
	uint64_t		 after = 0;

	if (events_parse_query(types, task, run, last_id, &f, &after, err, errlen) == -1)
		return 400;
	if (ev == NULL || d->bus == NULL) {
		snprintf(err, errlen, "out of memory");
		return 500;
	}
	if (ev->n >= EVENTS_MAX_STREAMS) {
		snprintf(err, errlen, "too many open event streams (%d)", EVENTS_MAX_STREAMS);
		return 503;
	}
	if (ev->heartbeat == NULL &&
	    (ev->heartbeat = event_new(d->base, -1, EV_PERSIST, events_heartbeat_cb,
	    ev)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return 500;
	}
	if ((st = calloc(1, sizeof *st)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return 500;
	}
	st->ev = ev;
	st->req = req;
	st->f = f;
	if (cookie != NULL)
		snprintf(st->cookie, sizeof st->cookie, "%s", cookie);
	TAILQ_INSERT_TAIL(&ev->streams, st, entry);
	ev->n++;
	if (ev->n == 1)
		evtimer_add(ev->heartbeat, &hb);

	inbox_security_headers(req);
	evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
	    "text/event-stream");
	evhttp_add_header(evhttp_request_get_output_headers(req), "Cache-Control",
	    "no-store");
	evhttp_send_reply_start(req, 200, "OK");
	if (httpd_set_closecb(d->httpd, req, events_closed, st) == -1)
		log_warn("events: a stream on a connection we did not admit");
	/* "retry" tells EventSource how soon to come back; then what it missed. */
	{
		struct evbuffer *buf = evbuffer_new();

		if (buf != NULL) {
			evbuffer_add_printf(buf, "retry: 1000\n\n");
			evhttp_send_reply_chunk(req, buf);
			evbuffer_free(buf);
		}
	}
	if (last_id != NULL)
		events_resume(st, after);
	else
		st->last = bus_next_id(d->bus) - 1;
	if (st->overflow) {
		events_stream_end(st, "cutoff", "more missed events than one resume sends; "
		    "reconnect with Last-Event-ID to get the rest");
		return 0;
	}
	if ((st->sub = bus_subscribe(d->bus, &st->f, events_deliver, st)) == NULL) {
		events_stream_end(st, "cutoff", "out of memory");
		return 0;
	}
	return 0;
}

void
events_end_sessions(struct daemon *d)
{
	struct events_stream	*st, *next;

	if (d->events == NULL)
		return;
	for (st = TAILQ_FIRST(&d->events->streams); st != NULL; st = next) {
		next = TAILQ_NEXT(st, entry);
		if (st->cookie[0] != '\0')
			events_stream_end(st, "signedout", "the Inbox sessions were revoked");
	}
}

size_t
events_streams(struct daemon *d)
{
	return d->events != NULL ? d->events->n : 0;
}

void
events_free(struct daemon *d)
{
	struct events_stream	*st;

	if (d->events == NULL)
		return;
	while ((st = TAILQ_FIRST(&d->events->streams)) != NULL) {
		httpd_set_closecb(d->httpd, st->req, NULL, NULL);
		events_stream_free(st);
	}
	if (d->events->heartbeat != NULL)
		event_free(d->events->heartbeat);
	free(d->events);
	d->events = NULL;
}
