/*
 * The readable transcript of each run (common/transcript.h), kept by the daemon one
 * entry per line in <home>/runs/<run>.transcript: entries the runner sent ("say") and
 * the daemon's own (floor, ask, answer, note). Every string is masked before it is
 * written, and the file has the run's log cap (run_log_max_bytes). Each append opens
 * the file anew, so a re-attached run needs no state to go on writing it.
 */
#ifndef CW_TRANSCRIPTS_H
#define CW_TRANSCRIPTS_H
#include <stddef.h>

#include <cjson/cJSON.h>

struct daemon;
struct run;
struct store_run;

#define TRANSCRIPTS_LINE_MAX	(128 * 1024)	/* an entry's printed line, at most */
#define TRANSCRIPTS_CHUNK	(256 * 1024)	/* bytes served per request, at most */

void	transcripts_path(const char *home, const char *run_id, char *out, size_t outlen);
/* Mask, bound and append entry (taken: freed here) to r's transcript. */
void	transcripts_append(struct run *r, cJSON *entry);
/* Whether the run's engine output is read into a transcript; else the log is it. */
int	transcripts_readable(struct daemon *, const struct store_run *);
/* The daemon's own line as a "note" entry. */
void	transcripts_note(struct run *r, const char *text);
/*
 * Whole entries from byte offset on, at most max bytes of them, as a new array in
 * *entries; *next is where the next read starts. A line that is not a valid entry is
 * skipped. 0, or -1 with errno (ENOENT when the run has no transcript yet).
 */
int	transcripts_read(const char *path, long long offset, size_t max, cJSON **entries,
	    long long *next);

#endif
