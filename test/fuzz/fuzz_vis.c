/*
 * libFuzzer target for terminal escaping (common/vis.c): any bytes in, and the output
 * must be NUL-terminated, within VIS_MAX_EXPANSION, hold no byte a terminal acts on
 * (no C0 but kept LF/TAB, no DEL, no ESC, no C1 or bidi or zero-width code point),
 * be valid UTF-8, and be a fixed point of a second pass over it in JSON mode.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vis.h"

/* Every code point of s is shown as itself: valid UTF-8 and nothing hidden. */
static void
fuzz_vis_check(const char *s, size_t n, int flags)
{
	const unsigned char	*p = (const unsigned char *)s;
	size_t			 i = 0, len, k;
	unsigned long		 cp;

	while (i < n) {
		if (p[i] < 0x80) {
			if ((p[i] < 0x20 && !((p[i] == '\n' && (flags & VIS_KEEP_NL)) ||
			    (p[i] == '\t' && (flags & VIS_KEEP_TAB)))) || p[i] == 0x7f)
				abort();
			i++;
			continue;
		}
		if (p[i] >= 0xc2 && p[i] <= 0xdf) {
			len = 2; cp = p[i] & 0x1f;
		} else if (p[i] >= 0xe0 && p[i] <= 0xef) {
			len = 3; cp = p[i] & 0x0f;
		} else if (p[i] >= 0xf0 && p[i] <= 0xf4) {
			len = 4; cp = p[i] & 0x07;
		} else
			abort();
		if (i + len > n)
			abort();
		for (k = 1; k < len; k++) {
			if ((p[i + k] & 0xc0) != 0x80)
				abort();
			cp = cp << 6 | (p[i + k] & 0x3f);
		}
		if (vis_hidden_codepoint(cp))
			abort();
		i += len;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int	 modes[] = { 0, VIS_KEEP_NL | VIS_KEEP_TAB, VIS_JSON };
	char			*v, *w;
	size_t			 n, m;

	for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
		if ((v = vis_buf((const char *)data, size, modes[i], &n)) == NULL)
			abort();
		if (v[n] != '\0' || n > size * VIS_MAX_EXPANSION)
			abort();
		fuzz_vis_check(v, n, modes[i] == VIS_JSON ?
		    VIS_KEEP_NL | VIS_KEEP_TAB : modes[i]);
		/* Visible text has nothing left to escape in JSON mode. */
		if ((w = vis_buf(v, n, VIS_JSON, &m)) == NULL)
			abort();
		if (m != n || memcmp(v, w, n) != 0)
			abort();
		free(w);
		free(v);
	}
	return 0;
}
