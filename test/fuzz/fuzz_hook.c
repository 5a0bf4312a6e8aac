/*
 * cw-floor-hook's untrusted inputs: the bridge's answer (hook_parse_answer) and the
 * hook JSON on stdin (hook_input_ok, hook_input_controls). The first byte picks the
 * target. Neither may crash, an answer is only ever an allow or an ask when its
 * status line says 200, the "ask" output built from any reason the answer carried is
 * always the one JSON shape of printable ASCII (hook_ask_output), and an input with a
 * raw NUL is never passed as free of control bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hook.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	reason[HOOK_MAX_ASK_OUTPUT * 2], out[HOOK_MAX_ASK_OUTPUT], *copy;
	int	rc, n;

	if (size == 0)
		return 0;
	/* Exact-size copy so ASan sees any read past the end. */
	if ((copy = malloc(size - 1 ? size - 1 : 1)) == NULL)
		return 0;
	memcpy(copy, data + 1, size - 1);
	if (data[0] & 1) {
		(void)hook_input_ok(copy, size - 1);
		if (hook_input_controls(copy, size - 1, reason, sizeof reason) == 0 &&
		    memchr(copy, '\0', size - 1) != NULL)
			abort();
	} else if ((rc = hook_parse_answer(copy, size - 1, reason, sizeof reason)) ==
	    HOOK_EXIT_ALLOW || rc == HOOK_ASK) {
		if (size - 1 < 12 || memcmp(copy, "HTTP/1.", 7) != 0 ||
		    memcmp(copy + 9, "200", 3) != 0)
			abort();
		if (rc == HOOK_ASK) {
			n = hook_ask_output(out, sizeof out, reason);
			if (n <= 0 || (size_t)n >= sizeof out || (size_t)n != strlen(out) ||
			    strcmp(out + n - 4, "\"}}\n") != 0)
				abort();
			for (int i = 0; i < n - 1; i++)
				if (out[i] < 0x20 || out[i] > 0x7e)
					abort();
		}
	} else if (rc != HOOK_EXIT_DENY)
		abort();
	(void)hook_parse_answer(copy, size - 1, reason, 1);
	free(copy);
	return 0;
}
