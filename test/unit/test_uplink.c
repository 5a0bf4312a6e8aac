/*
 * The runner's line to the daemon never waits in the runner's loop (issue 26, item 11):
 * a daemon that is slow to read (its pipe full) must not hold up the bridge, the proxy
 * or the engine's pipes, which share that loop. Lines the pipe cannot take now wait,
 * in order, and go as it takes them; nothing is lost or reordered.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/event.h>

#include "uplink.h"

#define LINES	200
#define WIDTH	4000

static void
line_text(char *buf, int i)
{
	snprintf(buf, WIDTH + 1, "%05d:", i);
	memset(buf + 6, 'a' + i % 26, WIDTH - 6);
	buf[WIDTH] = '\0';
}

static void
test_full_pipe_does_not_block(void **state)
{
	struct event_base	*base = event_base_new();
	struct uplink		*u;
	char			 line[WIDTH + 1], *got;
	size_t			 want = (size_t)LINES * (WIDTH + 1), have = 0;
	ssize_t			 n;
	int			 p[2], fl;

	assert_non_null(base);
	assert_int_equal(pipe(p), 0);
	assert_non_null(u = uplink_new(base, p[1]));
	/* 800 KiB into a 64 KiB pipe nobody reads yet. */
	for (int i = 0; i < LINES; i++) {
		line_text(line, i);
		uplink_send(u, line, WIDTH, 0);
	}
	/* It came back at once: still attached, the rest waiting (the old code waited
	 * 10 s in poll for the first full pipe, then gave the daemon up). */
	assert_true(uplink_attached(u));
	assert_true(uplink_pending(u) > 0);
	assert_true(uplink_pending(u) < want);
	/* The daemon reads again: everything arrives, whole and in order. */
	fl = fcntl(p[0], F_GETFL);
	assert_int_equal(fcntl(p[0], F_SETFL, fl | O_NONBLOCK), 0);
	assert_non_null(got = malloc(want + 1));
	while (have < want) {
		n = read(p[0], got + have, want - have);
		if (n > 0)
			have += (size_t)n;
		else
			assert_true(n == -1 && errno == EAGAIN);
		event_base_loop(base, EVLOOP_NONBLOCK);
	}
	assert_int_equal(uplink_pending(u), 0);
	for (int i = 0; i < LINES; i++) {
		line_text(line, i);
		assert_memory_equal(got + (size_t)i * (WIDTH + 1), line, WIDTH);
		assert_int_equal(got[(size_t)i * (WIDTH + 1) + WIDTH], '\n');
	}
	free(got);
	uplink_free(u);
	close(p[0]);
	event_base_free(base);
}

/* Before the runner ends, uplink_flush writes what is left (the report among it). */
static void
test_flush_at_the_end(void **state)
{
	struct event_base	*base = event_base_new();
	struct uplink		*u;
	char			 buf[256];
	ssize_t			 n;
	int			 p[2];

	assert_int_equal(pipe(p), 0);
	assert_non_null(u = uplink_new(base, p[1]));
	uplink_send(u, "{\"type\":\"report\"}", 17, 0);
	assert_int_equal(uplink_flush(u, 1000), 0);
	assert_int_equal(uplink_pending(u), 0);
	n = read(p[0], buf, sizeof buf);
	assert_int_equal(n, 18);
	assert_memory_equal(buf, "{\"type\":\"report\"}\n", 18);
	uplink_free(u);
	close(p[0]);
	event_base_free(base);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_pipe_does_not_block),
		cmocka_unit_test(test_flush_at_the_end),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
