/*
 * Secret masking, applied once to every record as it enters the daemon (log lines,
 * transcript entries, journal entries, approvals, reports; docs/SECURITY.md). Each secret is replaced by a marker that keeps at most
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
 * The same for one part of a stream (common/maskstream.c): *pem_open is set when a
 * private key's BEGIN line was met with no END line after it, so the part ends inside a
 * key (masked to its end) whose rest is still to come.
 */
char	*mask_secrets_part(const char *text, size_t len, size_t *outlen, int *pem_open);

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
