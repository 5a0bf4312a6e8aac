/*
 * Making untrusted text safe to print on a terminal, in the spirit of strvis(3).
 *
 * Engine output, commands and task names come from runs and may carry control
 * characters, ANSI escape sequences (CSI cursor moves that forge lines, OSC 52 writes
 * to the clipboard), bidirectional overrides and zero-width marks that make a command
 * read differently from what it does. vis_buf() makes every such byte visible:
 *
 *   ESC -> \e, CR -> \r, TAB -> \t (unless VIS_KEEP_TAB), LF -> \n (unless
 *   VIS_KEEP_NL), other C0 bytes and DEL -> \xNN, backslash -> \\ (so the output is
 *   unambiguous), invalid UTF-8 -> \xNN per byte, C1 controls, bidi marks, zero-width
 *   and other invisible format characters -> \uXXXX (\UXXXXXXXX above U+FFFF).
 *
 * Everything else, printable ASCII and valid UTF-8 text, passes through unchanged.
 * The output never holds a byte below 0x20 (but LF/TAB when kept) nor DEL, so it
 * cannot start an escape sequence. It is at most VIS_MAX_EXPANSION times the input.
 */
#ifndef CW_VIS_H
#define CW_VIS_H
#include <stddef.h>
#include <stdio.h>

#define VIS_KEEP_NL		0x01	/* newlines pass through (multi-line text) */
#define VIS_KEEP_TAB		0x02	/* tabs pass through */
/*
 * For text that is JSON already (cJSON's output: every C0 byte, quote and backslash
 * escaped): backslash, LF and TAB pass, and everything else hidden becomes a JSON
 * escape (\uXXXX, a surrogate pair above U+FFFF, \ufffd for a byte of invalid
 * UTF-8), so the result is still valid JSON meaning the same text but for those bytes.
 */
#define VIS_JSON		0x04
#define VIS_MAX_EXPANSION	6	/* output bytes per input byte, at most */

/*
 * A newly allocated, NUL-terminated visible copy of len bytes of s (which may hold
 * NULs); *outlen (if not NULL) gets its length. NULL with errno ENOMEM or EOVERFLOW.
 */
char	*vis_buf(const char *s, size_t len, int flags, size_t *outlen);
/* Same for a NUL-terminated string; NULL s gives "". */
char	*vis_str(const char *s, int flags);
/* Write s made visible to f. Returns 0, or -1 with errno set. */
int	 vis_fputs(const char *s, int flags, FILE *f);
/* 1 when the code point must be shown escaped (controls, bidi, invisible format). */
int	 vis_hidden_codepoint(unsigned long cp);

#endif
