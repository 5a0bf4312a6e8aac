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

/*
 * Literal secrets this process holds (the Telegram bot token, say), masked by exact
 * match wherever mask_secrets runs and in every log line (log.c), whatever their
 * shape. At most MASK_LITERALS_MAX, each MASK_LITERAL_MIN bytes or longer (shorter
 * text would mask ordinary words). 0, or -1 with errno EINVAL or ENOSPC.
 */
#define MASK_LITERALS_MAX	8
#define MASK_LITERAL_MIN	8
#define MASK_LITERAL_MARK	"[MASKED]"
int	mask_literal_add(const char *secret);
void	mask_literal_remove(const char *secret);
/* Replace every literal in the NUL-terminated s, in place (it never grows). */
void	mask_literals_inplace(char *s);

#endif
