/*
 * libFuzzer target for secret masking: any bytes in, and the masked text must be a fixed
 * point (masking it again changes nothing), must grow by at most a few bytes per marker
 * it holds, and must never crash or read out of bounds.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mask.h"

/* Longest growth of one replacement: ":x@" -> ":[MASKED]@", "K=v" -> "K=[MASKED]". */
#define MASK_GROWTH_PER_MARKER	8

static size_t
fuzz_count_markers(const char *p, size_t n)
{
	size_t	 i, k = 0;

	for (i = 0; i + 7 <= n; i++)
		if (p[i] == '[' && memcmp(p + i, "[MASKED", 7) == 0)
			k++;
	return k;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	*once, *twice;
	size_t	 n1, n2;

	if ((once = mask_secrets_buf((const char *)data, size, &n1)) == NULL)
		abort();
	if (once[n1] != '\0')
		abort();
	if (n1 > size + MASK_GROWTH_PER_MARKER * fuzz_count_markers(once, n1))
		abort();
	if (n1 > 3 * size + 64)
		abort();
	if ((twice = mask_secrets_buf(once, n1, &n2)) == NULL)
		abort();
	if (n2 != n1 || memcmp(once, twice, n1) != 0)
		abort();
	free(twice);
	free(once);
	return 0;
}
