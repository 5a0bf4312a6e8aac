/* tasks.c: validation of task documents and their JSON form. */
#ifndef CW_TASKS_H
#define CW_TASKS_H
#include <stddef.h>

#include <cjson/cJSON.h>

#include "store.h"

struct daemon;

int	tasks_from_json(struct daemon *, const cJSON *in, const struct store_task *base,
	    struct store_task *out, char *field, size_t fieldlen, char *err, size_t errlen);
cJSON	*tasks_to_json(const struct store_task *);
int	tasks_branch_valid(const char *);
/*
 * The engine a new task (or an imported job) gets when it names none: a key named
 * (key_name, or NULL) means byok; then engines.default; then the first agent CLI on
 * the daemon's PATH (common/enginepick.h); then byok when a provider key is stored.
 * Fills engine, key (the only stored key, when byok is picked and none was named; else
 * empty) and why, one sentence for the person; -1 with why saying what to do. d may be
 * NULL (no configuration, no key store).
 */
int	tasks_default_engine(struct daemon *d, const char *key_name, char *engine,
	    size_t enginelen, char *key, size_t keylen, char *why, size_t whylen);

#endif
