/*
 * Terminal-safe text (see vis.h). One pass over the input: printable ASCII is copied,
 * UTF-8 is decoded strictly (no overlong forms, no surrogates, nothing past U+10FFFF)
 * so that a mark cannot hide in a malformed sequence, and everything a terminal would
 * act on or a reader could not see is written as a backslash escape.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vis.h"

int
vis_hidden_codepoint(unsigned long cp)
{
	if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f))
		return 1;			/* C0, DEL, C1 (CSI as U+009B among them) */
	switch (cp) {
	case 0x00ad:				/* soft hyphen */
	case 0x034f:				/* combining grapheme joiner */
	case 0x061c:				/* arabic letter mark */
	case 0x115f: case 0x1160:		/* hangul fillers */
	case 0x17b4: case 0x17b5:
	case 0x180e:				/* mongolian vowel separator */
	case 0x3164:				/* hangul filler */
	case 0xfeff:				/* zero-width no-break space, BOM */
	case 0xffa0:
		return 1;
	}
	if ((cp >= 0x200b && cp <= 0x200f) ||	/* zero-width, LRM, RLM */
	    (cp >= 0x2028 && cp <= 0x202e) ||	/* separators, LRE..RLO embeddings */
	    (cp >= 0x2060 && cp <= 0x206f) ||	/* word joiner, isolates, deprecated */
	    (cp >= 0xfe00 && cp <= 0xfe0f) ||	/* variation selectors */
	    (cp >= 0xfff9 && cp <= 0xfffb) ||	/* interlinear annotation */
	    (cp >= 0x1d173 && cp <= 0x1d17a) ||	/* musical format controls */
	    (cp >= 0xe0000 && cp <= 0xe0fff))	/* tags, variation selectors supplement */
		return 1;
	return 0;
}

/* Decode one UTF-8 sequence at p (n bytes left): its length, or 0 when invalid. */
static size_t
vis_utf8(const unsigned char *p, size_t n, unsigned long *cp)
{
	size_t		len, i;
	unsigned long	c, min;

	if (p[0] < 0x80) {
		*cp = p[0];
		return 1;
	} else if (p[0] >= 0xc2 && p[0] <= 0xdf) {
		len = 2; c = p[0] & 0x1f; min = 0x80;
	} else if (p[0] >= 0xe0 && p[0] <= 0xef) {
		len = 3; c = p[0] & 0x0f; min = 0x800;
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		len = 4; c = p[0] & 0x07; min = 0x10000;
	} else
		return 0;
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (p[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return len;
}

char *
vis_buf(const char *s, size_t len, int flags, size_t *outlen)
{
	const unsigned char	*p = (const unsigned char *)s;
	char			*out, *o;
	size_t			 i, n;
	unsigned long		 cp;

	if (len > (SIZE_MAX - 1) / VIS_MAX_EXPANSION) {
		errno = EOVERFLOW;
		return NULL;
	}
	if ((out = malloc(len * VIS_MAX_EXPANSION + 1)) == NULL)
		return NULL;
	o = out;
	for (i = 0; i < len; i += n) {
		if ((n = vis_utf8(p + i, len - i, &cp)) == 0) {
			if (flags & VIS_JSON)
				o += sprintf(o, "\\ufffd");	/* 1 byte in, 6 out */
			else
				o += sprintf(o, "\\x%02x", p[i]);	/* 1 in, 4 out */
			n = 1;
			continue;
		}
		if (flags & VIS_JSON) {
			if (cp == '\n' || cp == '\t' || !vis_hidden_codepoint(cp)) {
				memcpy(o, p + i, n);
				o += n;
			} else if (cp <= 0xffff)
				o += sprintf(o, "\\u%04lx", cp);	/* 1..3 in, 6 out */
			else
				o += sprintf(o, "\\u%04lx\\u%04lx",	/* 4 in, 12 out */
				    0xd800 + ((cp - 0x10000) >> 10),
				    0xdc00 + ((cp - 0x10000) & 0x3ff));
			continue;
		}
		if (cp == '\\') {
			*o++ = '\\';
			*o++ = '\\';
		} else if (cp == '\n' && (flags & VIS_KEEP_NL))
			*o++ = '\n';
		else if (cp == '\t' && (flags & VIS_KEEP_TAB))
			*o++ = '\t';
		else if (cp == '\n')
			o += sprintf(o, "\\n");
		else if (cp == '\t')
			o += sprintf(o, "\\t");
		else if (cp == '\r')
			o += sprintf(o, "\\r");
		else if (cp == 0x1b)
			o += sprintf(o, "\\e");
		else if (cp < 0x80 && vis_hidden_codepoint(cp))
			o += sprintf(o, "\\x%02lx", cp);	/* 1 in, 4 out */
		else if (!vis_hidden_codepoint(cp)) {
			memcpy(o, p + i, n);
			o += n;
		} else if (cp <= 0xffff)
			o += sprintf(o, "\\u%04lx", cp);	/* 2 or 3 in, 6 out */
		else
			o += sprintf(o, "\\U%08lx", cp);	/* 4 in, 10 out */
	}
	*o = '\0';
	if (outlen != NULL)
		*outlen = (size_t)(o - out);
	return out;
}

char *
vis_str(const char *s, int flags)
{
	if (s == NULL)
		s = "";
	return vis_buf(s, strlen(s), flags, NULL);
}

int
vis_fputs(const char *s, int flags, FILE *f)
{
	char	*v;
	size_t	 n;
	int	 rc = 0;

	if (s == NULL)
		return 0;
	if ((v = vis_buf(s, strlen(s), flags, &n)) == NULL)
		return -1;
	if (fwrite(v, 1, n, f) != n)
		rc = -1;
	free(v);
	return rc;
}
