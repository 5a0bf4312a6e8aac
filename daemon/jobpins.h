/* jobpins.c: the repository paths a job's prompt names, pinned by their git objects. */
#ifndef CW_JOBPINS_H
#define CW_JOBPINS_H
#include <stddef.h>

#include <cjson/cJSON.h>

struct strlist;

/* The words of prompt that could be paths in a repository (see jobpins.c). */
int	jobpins_names(const char *prompt, struct strlist *out);
/* {"path": "object id"} for each of prompt's names that is a path at commit. */
int	jobpins_at(const char *repo, const char *commit_hex, const char *prompt,
	    cJSON **pins, char *err, size_t errlen);
/* The names whose objects differ, comma-separated (malloc'ed), or NULL when none. */
char	*jobpins_changed(const cJSON *was, const cJSON *now);

#endif
