/*
 * The query of GET /api/events (daemon/events.c): types, task, run and Last-Event-ID
 * come from any local client. The input is split at NUL bytes into the four fields
 * (a missing one is absent). Checks: no crash; on success the filter's strings are
 * terminated and within their buffers, the types mask names only known types.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bus.h"
#include "events.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char			*buf, *field[4] = { NULL, NULL, NULL, NULL }, err[256];
	struct bus_filter	 f;
	uint64_t		 after;
	size_t			 n = 0;

	if ((buf = malloc(size + 1)) == NULL)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	for (char *p = buf; n < 4 && p <= buf + size; p += strlen(p) + 1)
		field[n++] = p;
	if (events_parse_query(field[0], field[1], field[2], field[3], &f, &after, err,
	    sizeof err) == 0) {
		if (memchr(f.task, '\0', sizeof f.task) == NULL ||
		    memchr(f.run, '\0', sizeof f.run) == NULL ||
		    (f.types & ~BUS_TYPES_ALL) != 0 || f.types == 0)
			abort();
	} else if (memchr(err, '\0', sizeof err) == NULL || err[0] == '\0') {
		abort();
	}
	free(buf);
	return 0;
}
