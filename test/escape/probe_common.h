/*
 * Shared by the escape-matrix probes: each probe tries one family of operations and
 * prints one line per operation, "OP ok" or "OP ERRNAME" (the errno's name), so the
 * matrix can check the refusal by its kind. Exit status: 0 when every operation was
 * refused, 1 when at least one succeeded, 2 on a usage error.
 */
#ifndef CW_PROBE_COMMON_H
#define CW_PROBE_COMMON_H
#include <errno.h>
#include <stdio.h>
#include <string.h>

static int probe_escaped;

/* Record one operation's outcome: rc < 0 means refused with errno e. */
static void
probe_result(const char *op, long rc, int e)
{
	const char *name;

	if (rc >= 0) {
		printf("%s ok\n", op);
		probe_escaped = 1;
	} else {
		name = strerrorname_np(e);
		printf("%s %s\n", op, name != NULL ? name : "E?");
	}
	fflush(stdout);
}

#endif
