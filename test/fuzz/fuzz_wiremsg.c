/*
 * wiremsg_decode (common/wiremsg.c) over arbitrary lines: it must decode or refuse,
 * never crash, and what it decodes must hold its documented bounds.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wiremsg.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct wiremsg	 m;
	char		 err[128];

	if (wiremsg_decode((const char *)data, size, &m, err, sizeof err) == -1)
		return 0;
	if (m.type == WIREMSG_EVENT && (m.kind == NULL || strlen(m.kind) > WIREMSG_KIND_MAX))
		abort();
	if (m.type == WIREMSG_APPROVAL_REQUEST && (m.id == NULL || m.tool == NULL ||
	    m.id[0] == '\0' || strlen(m.id) > WIREMSG_ID_MAX ||
	    strlen(m.tool) > WIREMSG_TOOL_MAX))
		abort();
	if (m.sandboxed < -1 || m.sandboxed > 1 || m.turns < -1)
		abort();
	wiremsg_free(&m);
	return 0;
}
