/*
 * libFuzzer target: the Inbox's Cookie-header parser (inbox_cookie_get), which reads
 * untrusted text from any local client. The value found must fit and come from the
 * input; a miss must leave the output untouched as far as the contract says (0).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "inbox.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	*s, out[65], tiny[2];

	if ((s = malloc(size + 1)) == NULL)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	if (inbox_cookie_get(s, INBOX_COOKIE, out, sizeof out) == 1) {
		if (strlen(out) >= sizeof out || strstr(s, out) == NULL)
			abort();
	}
	(void)inbox_cookie_get(s, "", tiny, sizeof tiny);
	(void)inbox_cookie_get(s, "a", tiny, 1);
	free(s);
	return 0;
}
