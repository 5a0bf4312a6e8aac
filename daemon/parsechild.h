/*
 * The daemon's side of cw-parse (parser/cw-parse.c): untrusted bytes the daemon must
 * read (run transcripts, Telegram replies, repository job files, a run's bundle header)
 * are parsed there, in a re-executed child with no keys, no store, no socket, only its
 * two pipes, under seccomp and rlimits. What comes back is a message of
 * common/parsemsg.h, decoded here with every bound checked again.
 *
 * One child serves the daemon for its lifetime, started at the first call and again at
 * the first call after it died (a crash is that call's error and one log line, never the
 * daemon's). The run import's child (clockworkd --import-child) starts one of its own.
 * Calls are synchronous with a deadline (PARSECHILD_TIMEOUT_MS): past it the child is
 * killed and the call fails.
 */
#ifndef CW_PARSECHILD_H
#define CW_PARSECHILD_H
#include <sys/types.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "jobspec.h"

struct tgapi_reply;

#define PARSECHILD_TIMEOUT_MS	5000
#define PARSECHILD_ERR_MAX	1024	/* an error message from the child, at most */
#define PARSECHILD_KEY_MAX	64	/* a transcript entry's key */
#define PARSECHILD_FIELDS_MAX	32	/* fields of one transcript entry */

/*
 * Where cw-parse is (NULL: next to the running program, /proc/self/exe) and whether it
 * runs its test-only crash trigger (CLOCKWORK_TEST_PARSE=1 in the daemon's
 * environment: any input holding "cw-parse-test-crash" makes the child trap, and
 * "cw-parse-test-hang" makes it spin).
 */
void	parsechild_init(const char *path);
/* End the child (at shutdown); the next call would start another. */
void	parsechild_stop(void);
/* The child's pid, or 0; runs.c leaves it alone and hands its exit status here. */
pid_t	parsechild_pid(void);
void	parsechild_reaped(pid_t, int status);

/*
 * Whole transcript entries from len bytes of JSONL: stop after the line that reaches
 * max bytes; *consumed is where the next read starts. A line that is not a valid entry
 * is skipped. 0, or -1 with err.
 */
int	parsechild_transcript(const char *buf, size_t len, size_t max, cJSON **entries,
	    size_t *consumed, char *err, size_t errlen);
/* jobspec_parse (common/jobspec.h) in the child: the same contract. */
int	parsechild_jobspec(const char *name, const char *text, size_t len,
	    enum jobspec_format, struct jobspec *out, char *err, size_t errlen);
/* tgapi_reply_parse and its digest (daemon/tgapi.h) in the child; root stays NULL. */
int	parsechild_tgreply(const char *body, size_t len, struct tgapi_reply *out,
	    char *err, size_t errlen);
/* bundlehdr_parse (common/bundlehdr.h) in the child. */
int	parsechild_bundlehdr(const char *head, size_t len, const char *branch, char *tip,
	    size_t tiplen, size_t *hdrlen, char *err, size_t errlen);
/* What the child's probe found: [{"what":..,"result":..,"errno":..}], or NULL. */
cJSON	*parsechild_probe(char *err, size_t errlen);

/*
 * The decoders of the child's replies, one per reply type (fuzz_parsechild). Each
 * takes a payload as received and checks every count, length and value against the
 * request's bounds; 0, or -1 when anything is out of shape (nothing is returned then).
 */
int	parsechild_decode_transcript(const uint8_t *p, size_t len, size_t inlen,
	    cJSON **entries, size_t *consumed);
int	parsechild_decode_jobspec(const uint8_t *p, size_t len, struct jobspec *out);
int	parsechild_decode_tgreply(const uint8_t *p, size_t len, struct tgapi_reply *out);
int	parsechild_decode_bundlehdr(const uint8_t *p, size_t len, size_t inlen, char *tip,
	    size_t tiplen, size_t *hdrlen);
int	parsechild_decode_error(const uint8_t *p, size_t len, char *err, size_t errlen);

#endif
