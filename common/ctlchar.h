/*
 * Control characters in a JSON text, found before it is decoded. A decoder turns
 * "\u0000" into a real NUL, and every C string after it ends there: the floor would
 * judge "ls" of "ls\u0000; git push -f origin main". The hook and the bridge refuse
 * such a body outright. libc only (cw-floor-hook links it).
 */
#ifndef CW_CTLCHAR_H
#define CW_CTLCHAR_H
#include <stddef.h>

/*
 * The first control character (below 0x20, other than tab and newline) that the JSON
 * text s[0..len) would decode into a string: a \uXXXX escape, the short escapes \b \f
 * \r, or a raw NUL byte. Returns it (0 for NUL), or -1 when there is none. Raw
 * whitespace between tokens does not count.
 */
int	ctlchar_json_find(const char *s, size_t len);
/* As ctlchar_json_find, for NUL only: 1 when the text decodes to one, else 0. */
int	ctlchar_json_has_nul(const char *s, size_t len);
/* The value of one hex digit (either case), or -1 (the proxy's chunk sizes too). */
int	ctlchar_hex(int c);

#endif
