/* preview.c: the security preview of an imported job or template (W2). */
#ifndef CW_PREVIEW_H
#define CW_PREVIEW_H
#include <stddef.h>

#include <cjson/cJSON.h>

#include "store.h"

struct daemon;

struct preview_input {
	const char	*name;
	const char	*prompt;		/* the task's prompt, as it would run */
	const char	*description;
	const char	*proposed_schedule;	/* from the file; not applied */
	const char	*const *context;
	size_t		 n_context;
	const char	*const *ignored;	/* keys the parser did not read */
	size_t		 n_ignored;
	size_t		 ignored_more;
	const struct store_task *task;		/* the defaults it gets */
	const cJSON	*source;
	const cJSON	*previous;		/* the definition it replaces, or NULL */
	size_t		*budget;		/* floor evaluations left, shared, or NULL */
};
cJSON	*preview_build(struct daemon *, const struct preview_input *);

#endif
