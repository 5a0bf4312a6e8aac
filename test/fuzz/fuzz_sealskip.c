/*
 * libFuzzer target: git's listing of a run's tree as the sandboxed seal printed it
 * (runner/sealskip.c), which the run can shape (file names are its own). A listing is
 * planned or refused whole, never crashes the runner, and an accepted plan keeps its
 * contract: entries sorted and distinct, none inside another, each an untracked path
 * or a directory above one, the file counts adding up.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sealskip.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sealskip	 s;
	char		 err[128], *text;
	size_t		 total = 0, plen;

	if (size > 262144 || (text = malloc(size + 1)) == NULL)
		return 0;
	memcpy(text, data, size);
	/* Half the inputs NUL-ended, so that most get past the first check. */
	if (size > 0 && (data[0] & 1))
		text[size - 1] = '\0';
	if (sealskip_plan(text, size, &s, err, sizeof err) == 0) {
		for (size_t i = 0; i < s.n; i++) {
			plen = strlen(s.v[i].path);
			if (plen == 0 || s.v[i].path[0] == '/' || s.v[i].files == 0)
				abort();
			if (i > 0 && (strcmp(s.v[i - 1].path, s.v[i].path) >= 0 ||
			    (s.v[i - 1].path[strlen(s.v[i - 1].path) - 1] == '/' &&
			    strncmp(s.v[i].path, s.v[i - 1].path,
			    strlen(s.v[i - 1].path)) == 0)))
				abort();
			total += s.v[i].files;
		}
		if (total != s.files)
			abort();
	} else if (s.n != 0 || s.files != 0)
		abort();
	sealskip_free(&s);
	free(text);
	return 0;
}
