/*
 * The messages between clockworkd and its parsing child, cw-parse (parser/cw-parse.c,
 * daemon/parsechild.c): one small, versioned, length-prefixed format, written and read
 * by the functions here and nothing else.
 *
 * A message is a 12-byte header and a payload:
 *
 *   offset 0  'C' 'P'            magic
 *          2  PARSEMSG_VERSION   one byte; a different version is refused
 *          3  type               one byte: enum parsemsg_type
 *          4  length             payload bytes, uint32 little-endian, <= PARSEMSG_MAX
 *          8  sequence           uint32 little-endian: a reply carries its request's
 *
 * A payload is a sequence of fields with no names: each message type fixes their order
 * (documented at the type). u8/u32/u64 are little-endian; i64 two's complement; f64 the
 * IEEE bits as a u64; a string is a u32 length and that many bytes with no NUL, and its
 * reader gives the bound it accepts (a string over it makes the whole message bad). A
 * reader that runs past the payload, or a payload with bytes left over, is bad too.
 */
#ifndef CW_PARSEMSG_H
#define CW_PARSEMSG_H
#include <stddef.h>
#include <stdint.h>

#define PARSEMSG_VERSION	1
#define PARSEMSG_HEADER		12
#define PARSEMSG_MAX		(8u * 1024 * 1024)	/* payload bytes, either way */

enum parsemsg_type {
	/* Requests, daemon -> child. */
	PARSEMSG_TRANSCRIPT = 1,	/* u64 max, str bytes: JSONL of transcript entries */
	PARSEMSG_JOBSPEC = 2,		/* str name, u8 format, str text */
	PARSEMSG_TGREPLY = 3,		/* str body: a Bot API reply */
	PARSEMSG_BUNDLEHDR = 4,		/* str branch, str head: a git bundle's first bytes */
	PARSEMSG_PROBE = 5,		/* (empty): try what the child may not do; say how it went */
	PARSEMSG_REQ_LAST = PARSEMSG_PROBE,
	/* Replies, child -> daemon. */
	PARSEMSG_ERROR = 64,		/* str message: the input was refused */
	PARSEMSG_TRANSCRIPT_OK = 65,	/* u64 next; u32 n; n x entry (daemon/parsechild.c) */
	PARSEMSG_JOBSPEC_OK = 66,	/* the jobs, the ignored keys (daemon/parsechild.c) */
	PARSEMSG_TGREPLY_OK = 67,	/* the envelope, message_id, the updates */
	PARSEMSG_BUNDLEHDR_OK = 68,	/* str tip, u64 header length */
	PARSEMSG_PROBE_OK = 69,		/* u32 n; n x (str what, i32 result, i32 errno) */
};

/* A payload being written; grows up to PARSEMSG_MAX, after which it is failed. */
struct parsemsg_buf {
	uint8_t	*p;
	size_t	 len, cap;
	int	 failed;		/* ENOMEM or over PARSEMSG_MAX: do not send */
};

void	parsemsg_put_u8(struct parsemsg_buf *, uint8_t);
void	parsemsg_put_u32(struct parsemsg_buf *, uint32_t);
void	parsemsg_put_u64(struct parsemsg_buf *, uint64_t);
void	parsemsg_put_i64(struct parsemsg_buf *, int64_t);
void	parsemsg_put_f64(struct parsemsg_buf *, double);
/* s may be NULL (written as empty); len bytes, or strlen(s) when len is (size_t)-1. */
void	parsemsg_put_str(struct parsemsg_buf *, const char *s, size_t len);
/* Bytes as they are, no length (another buffer's payload appended). */
void	parsemsg_put_raw(struct parsemsg_buf *, const void *p, size_t n);
void	parsemsg_buf_free(struct parsemsg_buf *);

/* A payload being read. bad is set by the first read that does not fit. */
struct parsemsg_rd {
	const uint8_t	*p;
	size_t		 len, off;
	int		 bad;
};

void	parsemsg_rd_init(struct parsemsg_rd *, const void *p, size_t len);
uint8_t	parsemsg_get_u8(struct parsemsg_rd *);
uint32_t parsemsg_get_u32(struct parsemsg_rd *);
uint64_t parsemsg_get_u64(struct parsemsg_rd *);
int64_t	parsemsg_get_i64(struct parsemsg_rd *);
/* A finite double, else bad. */
double	parsemsg_get_f64(struct parsemsg_rd *);
/*
 * A string of at most max bytes without a NUL, newly allocated and NUL-terminated;
 * NULL (and bad) when it is longer, holds a NUL, runs past the end, or on ENOMEM.
 */
char	*parsemsg_get_str(struct parsemsg_rd *, size_t max);
/* The same into out (outlen > max), 0 or -1 (and bad). */
int	parsemsg_get_strbuf(struct parsemsg_rd *, char *out, size_t outlen, size_t max);
/* A string's bytes in place (NULs allowed): *len set; NULL and bad past the end. */
const uint8_t *parsemsg_get_bytes(struct parsemsg_rd *, size_t max, size_t *len);
/* 0 when nothing went wrong and every byte was read, else -1. */
int	parsemsg_rd_done(const struct parsemsg_rd *);

/* The header of a message of type with payload len and sequence seq. */
void	parsemsg_header(uint8_t out[PARSEMSG_HEADER], int type, size_t len, uint32_t seq);
/*
 * Check a header: magic, version, a known type, length <= PARSEMSG_MAX. 0 with *type,
 * *len and *seq set, or -1 with why naming what is wrong.
 */
int	parsemsg_header_check(const uint8_t in[PARSEMSG_HEADER], int *type, size_t *len,
	    uint32_t *seq, const char **why);
/*
 * Write a whole message to fd (blocking; EINTR retried), or read one, waiting at most
 * timeout_ms in all (-1: no limit). read: *payload newly allocated (NULL for an empty
 * one). 0, or -1 with errno (ETIMEDOUT, EPIPE/ECONNRESET, EPROTO for a bad header,
 * EMSGSIZE over max) and why set to a short reason.
 */
int	parsemsg_write(int fd, int type, uint32_t seq, const struct parsemsg_buf *);
int	parsemsg_read(int fd, int timeout_ms, size_t max, int *type, uint32_t *seq,
	    uint8_t **payload, size_t *len, const char **why);

#endif
