/*
 * The Bot API's replies and updates (daemon/tgapi.c) over arbitrary bytes: they come
 * from the network. Each must parse or be refused, never crash; a press that is read
 * as ours must carry a bounded, well-formed approval id and its button data must
 * round-trip.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tgapi.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tgapi_reply	 r;
	struct tgapi_press	 p;
	const cJSON		*u;
	char			 buf[TGAPI_DATA_MAX + 1];

	if (tgapi_reply_parse((const char *)data, size, &r) == -1)
		return 0;
	if (r.ok && cJSON_IsArray(r.result)) {
		cJSON_ArrayForEach(u, r.result) {
			if (tgapi_update_parse(u, &p) == -1)
				continue;
			if (p.ours && (p.approval_id[0] == '\0' ||
			    strlen(p.approval_id) >= sizeof p.approval_id ||
			    tgapi_button_data(buf, sizeof buf, p.allow, p.approval_id) == -1))
				abort();
			if (p.ours && !p.is_press)
				abort();
			if (strlen(p.from_username) >= sizeof p.from_username ||
			    strspn(p.from_username, "abcdefghijklmnopqrstuvwxyz"
			    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != strlen(p.from_username))
				abort();
		}
	}
	tgapi_reply_free(&r);
	return 0;
}
