/*
 * A run's transcript file as cw-parse reads it (parser/parsework.c, the lines that
 * transcripts_read used to parse in the daemon) over arbitrary bytes: whole lines,
 * each a JSON entry or skipped. What the child encodes must decode in the daemon
 * (daemon/parsechild.c) into entries that pass transcript_check and render, and the
 * offset it reports must be a line's end inside the input.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parsechild.h"
#include "parsemsg.h"
#include "parsework.h"
#include "transcript.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct parsemsg_buf	 out = { 0 };
	cJSON			*entries, *e;
	size_t			 used;
	char			*line;

	parsework_transcript((const char *)data, size, size / 2, &out);
	if (!out.failed) {
		if (parsechild_decode_transcript(out.p, out.len, size, &entries, &used) == -1)
			abort();
		if (used > size || (used > 0 && data[used - 1] != '\n'))
			abort();
		cJSON_ArrayForEach(e, entries) {
			if ((line = transcript_render(e, 0)) == NULL)
				abort();
			free(line);
		}
		cJSON_Delete(entries);
	}
	parsemsg_buf_free(&out);
	return 0;
}
