/*
 * A git bundle's header (common/bundlehdr.c), which a run wrote, over arbitrary bytes:
 * it parses or is refused, never crashes; what it accepts is a 40/64-digit lower-case
 * hex tip and a header length inside the input.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bundlehdr.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	 tip[65], err[256];
	size_t	 hdrlen, tl;

	if (bundlehdr_parse((const char *)data, size, "clockwork/t/run-1", tip, sizeof tip,
	    &hdrlen, err, sizeof err) == -1) {
		if (err[0] == '\0')
			abort();
		return 0;
	}
	tl = strlen(tip);
	if ((tl != 40 && tl != 64) || strspn(tip, "0123456789abcdef") != tl ||
	    hdrlen > size || hdrlen > BUNDLEHDR_MAX || data[hdrlen - 1] != '\n')
		abort();
	return 0;
}
