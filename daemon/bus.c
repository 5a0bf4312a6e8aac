/*
 * The daemon's event bus (bus.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bus.h"
#include "clock.h"
#include "json.h"
#include "log.h"

struct bus_sub {
	struct bus		*bus;
	struct bus_filter	 f;
	bus_fn			*fn;		/* NULL: unsubscribed, freed after delivery */
	void			*arg;
	TAILQ_ENTRY(bus_sub)	 entry;
};

TAILQ_HEAD(bus_events, bus_event);
TAILQ_HEAD(bus_subs, bus_sub);

struct bus {
	uint64_t		 next;
	uint64_t		 limit;		/* ids below it are reserved */
	bus_reserve_fn		*reserve;
	void			*reserve_arg;
	int			 reserve_failed;
	struct bus_events	 ring;
	size_t			 n, bytes, max_n, max_bytes;
	struct bus_subs		 subs;
	size_t			 n_subs;
	int			 delivering;	/* depth: publish from a subscriber */
	int			 dead;		/* unsubscribed during delivery */
};

static const char *const bus_names[BUS_NTYPES] = {
	[BUS_RUN] = "run", [BUS_APPROVAL] = "approval", [BUS_LOG] = "log",
	[BUS_JOURNAL] = "journal", [BUS_BUDGET] = "budget", [BUS_TASK] = "task",
};

struct bus *
bus_new(uint64_t first_id, size_t max_events, size_t max_bytes, bus_reserve_fn *fn,
    void *arg)
{
	struct bus	*b;

	if ((b = calloc(1, sizeof *b)) == NULL)
		return NULL;
	b->next = first_id > 0 ? first_id : 1;
	b->reserve = fn;
	b->reserve_arg = arg;
	b->max_n = max_events > 0 ? max_events : 1;
	b->max_bytes = max_bytes;
	TAILQ_INIT(&b->ring);
	TAILQ_INIT(&b->subs);
	return b;
}

static void
bus_event_free(struct bus_event *ev)
{
	free(ev->run);
	free(ev->task);
	cJSON_free(ev->json);
	free(ev);
}

void
bus_free(struct bus *b)
{
	struct bus_event	*ev;
	struct bus_sub		*s;

	if (b == NULL)
		return;
	while ((ev = TAILQ_FIRST(&b->ring)) != NULL) {
		TAILQ_REMOVE(&b->ring, ev, entry);
		bus_event_free(ev);
	}
	while ((s = TAILQ_FIRST(&b->subs)) != NULL) {
		TAILQ_REMOVE(&b->subs, s, entry);
		free(s);
	}
	free(b);
}

uint64_t
bus_next_id(const struct bus *b)
{
	return b->next;
}

const char *
bus_type_name(enum bus_type t)
{
	return (unsigned)t < BUS_NTYPES ? bus_names[t] : "?";
}

int
bus_types_parse(const char *list, unsigned *mask, char *bad, size_t badlen)
{
	const char	*p = list, *e;
	size_t		 len;
	unsigned	 m = 0;
	int		 t;

	while (*p != '\0') {
		e = strchr(p, ',');
		len = e != NULL ? (size_t)(e - p) : strlen(p);
		for (t = 0; t < BUS_NTYPES; t++)
			if (strlen(bus_names[t]) == len && strncmp(p, bus_names[t], len) == 0)
				break;
		if (t == BUS_NTYPES) {
			snprintf(bad, badlen, "%.*s", len > 40 ? 40 : (int)len, p);
			return -1;
		}
		m |= 1u << t;
		p += len;
		if (*p == ',')
			p++;
	}
	*mask = m != 0 ? m : BUS_TYPES_ALL;
	return 0;
}

int
bus_match(const struct bus_filter *f, const struct bus_event *ev)
{
	if (f == NULL)
		return 1;
	if ((f->types & (1u << ev->type)) == 0)
		return 0;
	if (f->run[0] != '\0' && (ev->run == NULL || strcmp(f->run, ev->run) != 0))
		return 0;
	if (f->task[0] != '\0' && (ev->task == NULL || strcmp(f->task, ev->task) != 0))
		return 0;
	return 1;
}

/* Keep the ring within its bounds, the newest event always kept. */
static void
bus_trim(struct bus *b)
{
	struct bus_event	*ev;

	while ((b->n > b->max_n || b->bytes > b->max_bytes) &&
	    (ev = TAILQ_FIRST(&b->ring)) != NULL && ev != TAILQ_LAST(&b->ring, bus_events)) {
		TAILQ_REMOVE(&b->ring, ev, entry);
		b->n--;
		b->bytes -= ev->len;
		bus_event_free(ev);
	}
}

static void
bus_sweep(struct bus *b)
{
	struct bus_sub	*s, *next;

	for (s = TAILQ_FIRST(&b->subs); s != NULL; s = next) {
		next = TAILQ_NEXT(s, entry);
		if (s->fn == NULL) {
			TAILQ_REMOVE(&b->subs, s, entry);
			b->n_subs--;
			free(s);
		}
	}
	b->dead = 0;
}

uint64_t
bus_publish(struct bus *b, enum bus_type type, const char *task, const char *run,
    cJSON *data)
{
	struct bus_event	*ev;
	struct bus_sub		*s, *last;
	cJSON			*o;

	if (b == NULL) {
		cJSON_Delete(data);	/* no bus yet (start-up), or none (unit tests) */
		return 0;
	}
	if ((ev = calloc(1, sizeof *ev)) == NULL || (o = cJSON_CreateObject()) == NULL) {
		free(ev);
		cJSON_Delete(data);
		log_error("bus: out of memory: a %s event was not delivered",
		    bus_type_name(type));
		return 0;
	}
	if (b->reserve != NULL && b->next >= b->limit) {
		uint64_t limit = b->reserve(b->next, b->reserve_arg);

		if (limit > b->next) {
			b->limit = limit;
			b->reserve_failed = 0;
		} else if (!b->reserve_failed) {
			b->reserve_failed = 1;
			log_error("bus: cannot reserve event ids past %llu: after a crash, the "
			    "next daemon could give out ids a stream has seen",
			    (unsigned long long)b->next);
		}
	}
	ev->id = b->next;
	ev->type = type;
	ev->at_ms = clock_wall_ms();
	{
		char	idtext[24];	/* exact: a double would round past 2^53 */

		snprintf(idtext, sizeof idtext, "%llu", (unsigned long long)ev->id);
		cJSON_AddRawToObject(o, "id", idtext);
	}
	json_add_string(o, "type", bus_type_name(type));
	cJSON_AddNumberToObject(o, "at_ms", (double)ev->at_ms);
	if (task != NULL)
		json_add_string(o, "task", task);
	if (run != NULL)
		json_add_string(o, "run", run);
	if (data != NULL)
		cJSON_AddItemToObject(o, "data", data);
	ev->json = json_print(o);
	cJSON_Delete(o);
	if (ev->json == NULL || (task != NULL && (ev->task = strdup(task)) == NULL) ||
	    (run != NULL && (ev->run = strdup(run)) == NULL)) {
		bus_event_free(ev);
		log_error("bus: out of memory: a %s event was not delivered",
		    bus_type_name(type));
		return 0;
	}
	ev->len = strlen(ev->json);
	b->next++;
	TAILQ_INSERT_TAIL(&b->ring, ev, entry);
	b->n++;
	b->bytes += ev->len;
	/*
	 * Deliver before trimming (a tiny ring still delivers its newest event), to the
	 * subscribers there now: one added during delivery starts with the next event.
	 */
	b->delivering++;
	last = TAILQ_LAST(&b->subs, bus_subs);
	TAILQ_FOREACH(s, &b->subs, entry) {
		if (s->fn != NULL && bus_match(&s->f, ev))
			s->fn(ev, s->arg);
		if (s == last)
			break;
	}
	if (--b->delivering == 0) {
		if (b->dead)
			bus_sweep(b);
		bus_trim(b);
	}
	return b->next - 1;
}

struct bus_sub *
bus_subscribe(struct bus *b, const struct bus_filter *f, bus_fn *fn, void *arg)
{
	struct bus_sub	*s;

	if ((s = calloc(1, sizeof *s)) == NULL)
		return NULL;
	s->bus = b;
	if (f != NULL)
		s->f = *f;
	else
		s->f.types = BUS_TYPES_ALL;
	s->fn = fn;
	s->arg = arg;
	TAILQ_INSERT_TAIL(&b->subs, s, entry);
	b->n_subs++;
	return s;
}

void
bus_unsubscribe(struct bus_sub *s)
{
	struct bus	*b;

	if (s == NULL)
		return;
	b = s->bus;
	if (b->delivering > 0) {
		/* The delivery loop holds a pointer to it: free it after. */
		s->fn = NULL;
		b->dead = 1;
		return;
	}
	TAILQ_REMOVE(&b->subs, s, entry);
	b->n_subs--;
	free(s);
}

int
bus_replay(struct bus *b, uint64_t after, const struct bus_filter *f, bus_fn *fn,
    void *arg, uint64_t *oldest)
{
	struct bus_event	*ev, *first = TAILQ_FIRST(&b->ring);

	*oldest = first != NULL ? first->id : 0;
	TAILQ_FOREACH(ev, &b->ring, entry)
		if (ev->id > after && bus_match(f, ev))
			fn(ev, arg);
	/* Lost: the ring's oldest is past the next one the caller wants. */
	if (first != NULL)
		return first->id > after + 1 ? 1 : 0;
	return after + 1 < b->next ? 1 : 0;
}

uint64_t
bus_oldest_id(const struct bus *b)
{
	const struct bus_event	*ev = TAILQ_FIRST(&b->ring);

	return ev != NULL ? ev->id : b->next;
}

void
bus_stats(const struct bus *b, size_t *events, size_t *bytes, size_t *subs)
{
	*events = b->n;
	*bytes = b->bytes;
	*subs = b->n_subs;
}

int
bus_run_ended(const struct bus_event *e)
{
	cJSON		*o;
	const cJSON	*data;
	const char	*st;
	int		 ended = 0;

	if (e->type != BUS_RUN || (o = json_parse(e->json, e->len)) == NULL)
		return 0;
	if ((data = cJSON_GetObjectItemCaseSensitive(o, "data")) != NULL &&
	    (st = json_get_string(data, "status")) != NULL)
		ended = strcmp(st, "queued") != 0 && strcmp(st, "starting") != 0 &&
		    strcmp(st, "running") != 0;
	cJSON_Delete(o);
	return ended;
}
