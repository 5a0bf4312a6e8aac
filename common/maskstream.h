/*
 * Secret masking over a stream that arrives in chunks (a run's output, read line by
 * line or in pipe reads): a secret cut in two by a chunk boundary is masked as if the
 * stream had come in one piece (common/mask.h masks one text whole).
 *
 * The stream holds back what could still become part of a secret and masks the rest:
 *  - text up to the last newline is masked and given out: no detector of mask.c reads
 *    across a line end, except a private key block, handled below;
 *  - a private key whose BEGIN line was given out (as its marker) with no END line yet
 *    swallows what follows, up to and through its END line, as mask.c does; past
 *    MASKSTREAM_PEM_MAX bytes without an END line it stops, at the next line end;
 *  - a line longer than MASKSTREAM_HOLD_MAX is cut at a blank MASKSTREAM_TAIL bytes or
 *    more before its end where masking the two sides alone gives what masking the
 *    whole gives (a secret cannot cross such a cut unless it is longer than the tail);
 *  - maskstream_idle() gives out, from a line still open, what such a cut allows (the
 *    caller calls it when the stream has been quiet); maskstream_end() the rest.
 *
 * What comes out, put together, is what mask_secrets_buf() makes of the whole stream,
 * but for lines cut for length or by idle(), keys left without an END line for
 * MASKSTREAM_PEM_MAX bytes, and a literal (mask_literal_add) holding a newline.
 */
#ifndef CW_MASKSTREAM_H
#define CW_MASKSTREAM_H
#include <stddef.h>

#define MASKSTREAM_HOLD_MAX	(64 * 1024)	/* an open line held at most */
#define MASKSTREAM_TAIL		512		/* kept back at a cut inside a line */
#define MASKSTREAM_PEM_MAX	(64 * 1024)	/* a key's body, at most, without an END */

struct maskstream;

/* A new stream, or NULL with errno ENOMEM. */
struct maskstream	*maskstream_new(void);
void			 maskstream_free(struct maskstream *);

/*
 * Feed len bytes. Returns the masked text that may go out now (NUL-terminated, maybe
 * empty, *outlen its length; free() it), or NULL with errno ENOMEM, in which case the
 * bytes fed are dropped, never given out unmasked.
 */
char	*maskstream_feed(struct maskstream *, const char *data, size_t len, size_t *outlen);
/* The stream has been quiet: what of an open line can no longer join a secret. */
char	*maskstream_idle(struct maskstream *, size_t *outlen);
/* The end of the stream: everything held, masked. The stream starts afresh after it. */
char	*maskstream_end(struct maskstream *, size_t *outlen);
/*
 * The length of the line s without its last word: a line cut for length, whose rest
 * never comes, must not end in the start of a secret. At most MASKSTREAM_TAIL bytes go.
 */
size_t	 maskstream_cut_len(const char *s, size_t len);
/* Bytes held back (for tests and for deciding whether idle() is worth a timer). */
size_t	 maskstream_held(const struct maskstream *);

#endif
