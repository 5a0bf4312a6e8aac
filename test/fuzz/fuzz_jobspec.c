/*
 * libFuzzer target: the repository jobs parser (common/jobspec.c) on arbitrary bytes,
 * as JSON and as YAML (the first byte chooses), must fail cleanly or succeed, and a
 * success must hold only jobs the schema allows.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jobspec.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jobspec	 js;
	char		 err[512];
	int		 fmt;

	if (size == 0)
		return 0;
	fmt = (data[0] & 1) ? JOBSPEC_YAML : JOBSPEC_JSON;
	if (jobspec_parse("fuzz", (const char *)data + 1, size - 1, fmt, &js, err,
	    sizeof err) == 0) {
		if (js.n_jobs > JOBSPEC_MAX_JOBS || js.n_ignored > JOBSPEC_MAX_IGNORED)
			abort();
		for (size_t i = 0; i < js.n_jobs; i++)
			if (!jobspec_name_valid(js.jobs[i].name) || js.jobs[i].prompt == NULL ||
			    js.jobs[i].prompt[0] == '\0' ||
			    strlen(js.jobs[i].prompt) > JOBSPEC_MAX_PROMPT)
				abort();
		jobspec_free(&js);
	} else if (err[0] == '\0')
		abort();
	return 0;
}
