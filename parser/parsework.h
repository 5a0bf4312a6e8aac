/*
 * What cw-parse does with one request (parser/parsework.c): parse the untrusted bytes
 * with the parser of their kind and encode what is valid as the reply's payload
 * (common/parsemsg.h). No I/O: cw-parse.c reads and writes the pipe, and the fuzz
 * targets call these directly.
 */
#ifndef CW_PARSEWORK_H
#define CW_PARSEWORK_H
#include <stddef.h>
#include <stdint.h>

#include "parsemsg.h"

/* The test-only trigger: any request holding it makes a --test child trap. */
#define PARSEWORK_CRASH_MARK	"cw-parse-test-crash"
/* And this one makes it spin without a system call (a parser caught in a loop). */
#define PARSEWORK_HANG_MARK	"cw-parse-test-hang"

/*
 * Answer one request of type with payload p: *rtype and out filled (PARSEMSG_ERROR
 * with a message when the input is refused). -1 when the request itself is out of
 * shape (the child then exits: the daemon sent something it never sends).
 */
int	parsework_handle(int type, const uint8_t *p, size_t len, int test, int *rtype,
	    struct parsemsg_buf *out);

/* The parsers on raw input, as the handlers call them (fuzz targets). */
void	parsework_transcript(const char *buf, size_t len, uint64_t max,
	    struct parsemsg_buf *out);
int	parsework_tgreply(const char *body, size_t len, struct parsemsg_buf *out);

#endif
