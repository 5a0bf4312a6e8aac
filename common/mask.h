/*
 * Secret masking, applied everywhere text leaves the daemon (reports, exports, the
 * Inbox, logs shown to people). Each secret is replaced by a marker that keeps at most
 * a short, non-identifying prefix (e.g. "sk-ant-…" keeps only the provider part, never
 * key material). Masking is idempotent: mask(mask(x)) == mask(x).
 */
#ifndef CW_MASK_H
#define CW_MASK_H
#include <stddef.h>

/* A newly allocated masked copy of text (NUL-terminated), or NULL with errno ENOMEM. */
char	*mask_secrets(const char *text);
/* Same for a buffer of len bytes that may hold NULs; *outlen receives the new length. */
char	*mask_secrets_buf(const char *text, size_t len, size_t *outlen);

#endif
