/*
 * libFuzzer target: the words of an imported job's prompt that could name paths in its
 * repository (daemon/jobpins.c), from someone else's commit. Every name it keeps must
 * be relative, without a ".." component or a URL, and no longer than a word may be.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jobpins.h"
#include "strlist.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct strlist	 names = { 0 };
	char		*prompt;

	if (size > 65536 || (prompt = malloc(size + 1)) == NULL)
		return 0;
	memcpy(prompt, data, size);
	prompt[size] = '\0';
	if (jobpins_names(prompt, &names) == 0)
		for (size_t i = 0; i < names.n; i++) {
			const char	*w = names.v[i];

			if (w[0] == '/' || w[0] == '\0' || strstr(w, "://") != NULL ||
			    strcmp(w, "..") == 0 || strncmp(w, "../", 3) == 0 ||
			    strstr(w, "/../") != NULL || strlen(w) >= 512)
				abort();
		}
	strlist_free(&names);
	free(prompt);
	return 0;
}
