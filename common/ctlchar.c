/*
 * ctlchar_json_find: a scan of JSON text for escapes that decode to control
 * characters. It does not validate the JSON; it only needs to see every escape the
 * decoder will see, and a backslash escapes exactly the one character after it.
 */
#include "ctlchar.h"

int
ctlchar_hex(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int
ctlchar_bad(unsigned v, int nul_only)
{
	if (nul_only)
		return v == 0;
	return v < 0x20 && v != '\t' && v != '\n';
}

static int
ctlchar_scan(const char *s, size_t len, int nul_only)
{
	size_t	 i = 0;
	unsigned v;
	int	 h, k;

	while (i < len) {
		if (s[i] == '\0')
			return 0;
		if (s[i] != '\\') {
			i++;
			continue;
		}
		if (i + 1 >= len)
			return -1;
		switch (s[i + 1]) {
		case '\0':
			return 0;	/* a raw NUL is one even after a backslash */
		case 'b':
			if (!nul_only)
				return '\b';
			i += 2;
			break;
		case 'f':
			if (!nul_only)
				return '\f';
			i += 2;
			break;
		case 'r':
			if (!nul_only)
				return '\r';
			i += 2;
			break;
		case 'u':
			for (v = 0, k = 0; k < 4 && i + 2 + k < len; k++) {
				if ((h = ctlchar_hex(s[i + 2 + k])) == -1)
					break;
				v = v * 16 + (unsigned)h;
			}
			if (k == 4 && ctlchar_bad(v, nul_only))
				return (int)v;
			i += 2 + (size_t)k;
			break;
		default:
			i += 2;
			break;
		}
	}
	return -1;
}

int
ctlchar_json_find(const char *s, size_t len)
{
	return ctlchar_scan(s, len, 0);
}

int
ctlchar_json_has_nul(const char *s, size_t len)
{
	return ctlchar_scan(s, len, 1) == 0;
}
