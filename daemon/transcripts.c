/*
 * Runs' readable transcripts on disk (daemon/transcripts.h).
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "engines.h"
#include "json.h"
#include "log.h"
#include "mask.h"
#include "parsechild.h"
#include "runs.h"
#include "store.h"
#include "transcript.h"
#include "transcripts.h"

void
transcripts_path(const char *home, const char *run_id, char *out, size_t outlen)
{
	snprintf(out, outlen, "%s/runs/%s.transcript", home, run_id);
}

/* Every string of the entry goes through mask_secrets() (a key in a tool's output). */
static int
transcripts_mask(cJSON *o)
{
	cJSON	*f, *next;
	char	*m;

	/* Replacing an item frees it: the next one is taken first. */
	for (f = o != NULL ? o->child : NULL; f != NULL; f = next) {
		next = f->next;
		if (!cJSON_IsString(f) || f->valuestring == NULL)
			continue;
		if ((m = mask_secrets(f->valuestring)) == NULL)
			return -1;
		/* By name: the new item gets the key (ReplaceItemViaPointer would not). */
		if (strcmp(m, f->valuestring) != 0 &&
		    !cJSON_ReplaceItemInObjectCaseSensitive(o, f->string,
		    cJSON_CreateString(m))) {
			free(m);
			return -1;
		}
		free(m);
	}
	return 0;
}

static int
transcripts_write(const char *path, const char *text, size_t len, long cap)
{
	struct stat	 st;
	int		 fd, rc = -1;

	if ((fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
	    0600)) == -1)
		return -1;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		if (cap > 0 && st.st_size + (off_t)len > (off_t)cap)
			errno = EFBIG;
		else if (write(fd, text, len) == (ssize_t)len)
			rc = 0;
	} else
		errno = EINVAL;
	close(fd);
	return rc;
}

/*
 * The one place a transcript entry becomes a record: checked, masked
 * (transcripts_mask), then appended to the run's transcript file, which every reader
 * (the API, the Inbox, cwctl run logs, the export) serves as it is.
 */
void
transcripts_append(struct run *r, cJSON *entry)
{
	char	 path[PATH_MAX], *text = NULL, *line = NULL;
	size_t	 len;
	cJSON	*note;

	if (entry == NULL)
		return;
	/* Past the cap nothing more is written: no file work per entry either. */
	if (r->transcript_capped)
		goto out;
	if (transcript_check(entry) == -1 || transcripts_mask(entry) == -1 ||
	    (text = json_print(entry)) == NULL)
		goto out;
	len = strlen(text);
	if (len + 1 > TRANSCRIPTS_LINE_MAX || (line = malloc(len + 2)) == NULL)
		goto out;
	memcpy(line, text, len);
	line[len++] = '\n';
	line[len] = '\0';
	transcripts_path(r->d->home, r->id, path, sizeof path);
	if (transcripts_write(path, line, len, r->log_max) == -1 && errno == EFBIG &&
	    !r->transcript_capped) {
		/* Once, past the cap itself: a reader learns why the transcript stops. */
		r->transcript_capped = 1;
		if ((note = transcript_note("transcript capped at run_log_max_bytes; the "
		    "raw log (cwctl run logs --raw) may hold more")) != NULL) {
			cJSON_free(text);
			free(line);
			text = json_print(note);
			cJSON_Delete(note);
			line = NULL;
			if (text != NULL && (line = malloc(strlen(text) + 2)) != NULL) {
				len = (size_t)sprintf(line, "%s\n", text);
				(void)transcripts_write(path, line, len, 0);
			}
		}
	}
out:
	cJSON_free(text);
	free(line);
	cJSON_Delete(entry);
}

void
transcripts_note(struct run *r, const char *text)
{
	transcripts_append(r, transcript_note(text));
}

int
transcripts_read(const char *path, long long offset, size_t max, cJSON **entries,
    long long *next)
{
	struct stat	 st;
	char		*buf, err[PARSECHILD_ERR_MAX + 128];
	size_t		 want, got = 0, used = 0;
	ssize_t		 n;
	int		 fd, save;
	cJSON		*arr;

	*entries = NULL;
	*next = offset;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1)
		return -1;
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		save = errno != 0 ? errno : EINVAL;
		close(fd);
		errno = save;
		return -1;
	}
	if ((arr = cJSON_CreateArray()) == NULL) {
		close(fd);
		errno = ENOMEM;
		return -1;
	}
	if (offset >= st.st_size) {
		close(fd);
		*entries = arr;
		return 0;
	}
	/* Enough for max bytes, or one whole line when the first is longer. */
	want = (size_t)(st.st_size - offset);
	if (want > max + TRANSCRIPTS_LINE_MAX)
		want = max + TRANSCRIPTS_LINE_MAX;
	if ((buf = malloc(want + 1)) == NULL) {
		close(fd);
		cJSON_Delete(arr);
		errno = ENOMEM;
		return -1;
	}
	while (got < want) {
		n = pread(fd, buf + got, want - got, (off_t)offset + (off_t)got);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	cJSON_Delete(arr);
	/*
	 * The lines hold what an engine wrote (masked, but still its bytes): cw-parse
	 * parses them, and the entries come back rebuilt and checked (parsechild.h).
	 */
	if (parsechild_transcript(buf, got, max, &arr, &used, err, sizeof err) == -1) {
		log_warn("transcript %s: %s", path, err);
		free(buf);
		errno = EIO;
		return -1;
	}
	*next = offset + (long long)used;
	free(buf);
	*entries = arr;
	return 0;
}

/* Whether the run's engine output is read into a transcript (common/engines.h). */
int
transcripts_readable(struct daemon *d, const struct store_run *r)
{
	struct store_task		 t;
	const struct engine_info	*e;
	int				 readable = 0;

	if (store_task_get(d->store, r->task_id, &t) == 1) {
		e = engines_find(t.engine);
		readable = e != NULL && (e->caps & ENGINE_TRANSCRIPT);
		store_task_free(&t);
	}
	return readable;
}
