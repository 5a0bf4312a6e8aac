/*
 * The daemon's event bus (daemon/bus.c): ids in publish order, filters, delivery to
 * the subscribers there at publish time (also when one unsubscribes itself or another
 * from its callback, or publishes), the ring's bounds, replay and its "lost" answer,
 * id reservation, and the types list parser.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bus.h"
#include "json.h"

struct seen {
	uint64_t	 ids[64];
	char		 types[64][16];
	size_t		 n;
	struct bus_sub	*self, *other;	/* unsubscribed from the callback */
	struct bus	*bus;		/* published into from the callback */
};

static void
seen_fn(const struct bus_event *e, void *arg)
{
	struct seen	*s = arg;

	if (s->n < 64) {
		s->ids[s->n] = e->id;
		snprintf(s->types[s->n], sizeof s->types[0], "%s", bus_type_name(e->type));
		s->n++;
	}
	if (s->self != NULL) {
		bus_unsubscribe(s->self);
		s->self = NULL;
	}
	if (s->other != NULL) {
		bus_unsubscribe(s->other);
		s->other = NULL;
	}
	if (s->bus != NULL) {
		struct bus *b = s->bus;

		s->bus = NULL;		/* once */
		bus_publish(b, BUS_TASK, "nested", NULL, NULL);
	}
}

static cJSON *
data(const char *k, const char *v)
{
	cJSON	*o = cJSON_CreateObject();

	json_add_string(o, k, v);
	return o;
}

static void
test_publish_order_and_json(void **state)
{
	struct bus	*b = bus_new(5, 100, 1 << 20, NULL, NULL);
	struct seen	 s = { 0 };
	struct bus_sub	*sub;
	uint64_t	 id;

	(void)state;
	assert_non_null(sub = bus_subscribe(b, NULL, seen_fn, &s));
	assert_int_equal(bus_publish(b, BUS_RUN, "t1", "r1", data("status", "queued")), 5);
	assert_int_equal(bus_publish(b, BUS_LOG, "t1", "r1", data("text", "hi")), 6);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.ids[0], 5);
	assert_string_equal(s.types[1], "log");
	assert_int_equal(bus_next_id(b), 7);
	id = bus_publish(b, BUS_APPROVAL, NULL, "r1", data("state", "pending"));
	assert_int_equal(id, 7);
	bus_unsubscribe(sub);
	assert_int_equal(bus_publish(b, BUS_RUN, NULL, NULL, NULL), 8);
	assert_int_equal(s.n, 3);
	bus_free(b);
}

struct text {
	char	json[512];
};

static void
text_fn(const struct bus_event *e, void *arg)
{
	struct text	*t = arg;

	snprintf(t->json, sizeof t->json, "%s", e->json);
}

static void
test_event_text(void **state)
{
	struct bus	*b = bus_new(9007199254740993ULL, 10, 1 << 20, NULL, NULL);
	struct text	 t = { { 0 } };
	cJSON		*j;

	(void)state;
	bus_subscribe(b, NULL, text_fn, &t);
	bus_publish(b, BUS_BUDGET, "task \"q\"", "r9", data("k", "v\nw"));
	/* Past 2^53, a double would round: the id is printed exactly. */
	assert_non_null(strstr(t.json, "\"id\":9007199254740993,"));
	assert_null(strchr(t.json, '\n'));	/* one line: SSE's data: needs it */
	assert_non_null(j = cJSON_Parse(t.json));
	assert_string_equal(json_get_string(j, "type"), "budget");
	assert_string_equal(json_get_string(j, "task"), "task \"q\"");
	assert_string_equal(json_get_string(j, "run"), "r9");
	assert_string_equal(json_get_string(cJSON_GetObjectItem(j, "data"), "k"), "v\nw");
	cJSON_Delete(j);
	bus_free(b);
}

static void
test_filters(void **state)
{
	struct bus		*b = bus_new(1, 100, 1 << 20, NULL, NULL);
	struct seen		 by_run = { 0 }, by_task = { 0 }, by_type = { 0 };
	struct bus_filter	 f;
	char			 bad[48];

	(void)state;
	memset(&f, 0, sizeof f);
	f.types = BUS_TYPES_ALL;
	snprintf(f.run, sizeof f.run, "r2");
	bus_subscribe(b, &f, seen_fn, &by_run);
	memset(&f, 0, sizeof f);
	f.types = BUS_TYPES_ALL;
	snprintf(f.task, sizeof f.task, "t1");
	bus_subscribe(b, &f, seen_fn, &by_task);
	memset(&f, 0, sizeof f);
	assert_int_equal(bus_types_parse("approval,run", &f.types, bad, sizeof bad), 0);
	bus_subscribe(b, &f, seen_fn, &by_type);

	bus_publish(b, BUS_RUN, "t1", "r1", NULL);	/* task, type */
	bus_publish(b, BUS_LOG, "t2", "r2", NULL);	/* run */
	bus_publish(b, BUS_APPROVAL, "t1", "r2", NULL);	/* all three */
	bus_publish(b, BUS_TASK, NULL, NULL, NULL);	/* none: no task, no run */
	assert_int_equal(by_run.n, 2);
	assert_int_equal(by_run.ids[0], 2);
	assert_int_equal(by_task.n, 2);
	assert_int_equal(by_task.ids[1], 3);
	assert_int_equal(by_type.n, 2);
	assert_int_equal(by_type.ids[0], 1);

	/* The types list: names only; empty means all. */
	assert_int_equal(bus_types_parse("run,nope", &f.types, bad, sizeof bad), -1);
	assert_string_equal(bad, "nope");
	assert_int_equal(bus_types_parse("", &f.types, bad, sizeof bad), 0);
	assert_int_equal(f.types, BUS_TYPES_ALL);
	assert_int_equal(bus_types_parse("runs", &f.types, bad, sizeof bad), -1);
	bus_free(b);
}

/* Unsubscribing itself, and another not yet called, from a callback; a nested publish. */
static void
test_reentrant(void **state)
{
	struct bus	*b = bus_new(1, 100, 1 << 20, NULL, NULL);
	struct seen	 a = { 0 }, c = { 0 }, later = { 0 };
	struct bus_sub	*sa, *sc;
	size_t		 ne, nb, ns;

	(void)state;
	sa = bus_subscribe(b, NULL, seen_fn, &a);
	sc = bus_subscribe(b, NULL, seen_fn, &c);
	a.self = sa;
	a.other = sc;		/* c is after a: it must not be called for this event */
	a.bus = b;		/* and a publishes once from its callback */
	bus_publish(b, BUS_RUN, NULL, NULL, NULL);
	assert_int_equal(a.n, 1);
	assert_int_equal(c.n, 0);
	bus_stats(b, &ne, &nb, &ns);
	assert_int_equal(ns, 0);
	assert_int_equal(ne, 2);		/* the event and the nested one */
	bus_subscribe(b, NULL, seen_fn, &later);
	bus_publish(b, BUS_RUN, NULL, NULL, NULL);
	assert_int_equal(later.n, 1);
	assert_int_equal(later.ids[0], 3);
	bus_free(b);
}

static void
test_ring_and_replay(void **state)
{
	struct bus		*b = bus_new(1, 4, 1 << 20, NULL, NULL);
	struct seen		 s = { 0 };
	struct bus_filter	 f;
	uint64_t		 oldest;
	size_t			 ne, nb, ns;

	(void)state;
	for (int i = 0; i < 10; i++)
		bus_publish(b, i % 2 ? BUS_LOG : BUS_RUN, "t", "r", NULL);
	bus_stats(b, &ne, &nb, &ns);
	assert_int_equal(ne, 4);
	assert_int_equal(bus_oldest_id(b), 7);
	/* From 8: everything after is kept. */
	assert_int_equal(bus_replay(b, 8, NULL, seen_fn, &s, &oldest), 0);
	assert_int_equal(oldest, 7);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.ids[0], 9);
	/* From 6 exactly: 7 is the next wanted and is kept. */
	s.n = 0;
	assert_int_equal(bus_replay(b, 6, NULL, seen_fn, &s, &oldest), 0);
	assert_int_equal(s.n, 4);
	/* From 3: 4, 5 and 6 are gone. */
	s.n = 0;
	assert_int_equal(bus_replay(b, 3, NULL, seen_fn, &s, &oldest), 1);
	assert_int_equal(s.n, 4);
	/* A filter applies to the replay too. */
	s.n = 0;
	memset(&f, 0, sizeof f);
	f.types = 1u << BUS_LOG;
	bus_replay(b, 0, &f, seen_fn, &s, &oldest);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.ids[0], 8);
	bus_free(b);

	/* The byte bound: the newest event is kept however big. */
	b = bus_new(1, 100, 64, NULL, NULL);
	bus_publish(b, BUS_LOG, NULL, NULL, data("text", "0123456789012345678901234567890123456789"
	    "0123456789"));
	bus_publish(b, BUS_LOG, NULL, NULL, data("text", "x"));
	bus_stats(b, &ne, &nb, &ns);
	assert_int_equal(ne, 1);
	assert_true(nb <= 64);
	assert_int_equal(bus_oldest_id(b), 2);
	bus_free(b);
}

static uint64_t	reserved_upto;
static int	reserve_calls, reserve_fails;

static uint64_t
reserve_fn(uint64_t need, void *arg)
{
	(void)arg;
	reserve_calls++;
	if (reserve_fails)
		return 0;
	reserved_upto = need + 3;
	return reserved_upto;
}

static void
test_reserve(void **state)
{
	struct bus	*b = bus_new(10, 100, 1 << 20, reserve_fn, NULL);

	(void)state;
	for (int i = 0; i < 7; i++)
		assert_int_equal(bus_publish(b, BUS_RUN, NULL, NULL, NULL), 10 + (uint64_t)i);
	/* 10 reserves to 13, 13 to 16: every id given out is below a reservation. */
	assert_int_equal(reserve_calls, 3);
	assert_int_equal(reserved_upto, 19);
	/* A failed reservation does not stop the bus. */
	reserve_fails = 1;
	for (int i = 0; i < 5; i++)
		assert_true(bus_publish(b, BUS_RUN, NULL, NULL, NULL) > 0);
	bus_free(b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_publish_order_and_json),
		cmocka_unit_test(test_event_text),
		cmocka_unit_test(test_filters),
		cmocka_unit_test(test_reentrant),
		cmocka_unit_test(test_ring_and_replay),
		cmocka_unit_test(test_reserve),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
