/*
 * Provider keys for Clockwork's own agent (the byok engine), by name. Each key lives in
 * the secret store (common/secret.h: the Secret Service, else a 0600 file under the
 * Clockwork home that no run may be granted) as secret "key.NAME", a JSON object with
 * the provider, base URL, model and the key itself; "keys.index" lists the names with
 * everything but the key, for `cwctl key list`. Nothing of a key is in the sqlite store:
 * a task holds only the name.
 */
#ifndef CW_KEYS_H
#define CW_KEYS_H
#include <stddef.h>

#include <cjson/cJSON.h>

#include "secret.h"

#define KEYS_NAME_MAX	48
#define KEYS_VALUE_MAX	2048	/* the key itself */

struct key_entry {
	char	*name;
	char	*provider;	/* "anthropic" | "openai" */
	char	*base_url;	/* or NULL: the provider's own */
	char	*model;		/* or NULL: the configuration's */
	char	*key;		/* wiped by key_entry_free */
};

/* 1 if name is a valid key name: 1..KEYS_NAME_MAX of [a-z0-9_-], not starting with '-'. */
int	keys_name_valid(const char *name);
/* 1 if provider is one the agent speaks. */
int	keys_provider_valid(const char *provider);
/* Store (or replace) a key. 0, or -1 with err. */
int	keys_add(const char *home, const struct key_entry *, enum secret_backend *where,
	    char *err, size_t errlen);
/* 1 and *e filled when found, 0 when there is no such key, -1 with err. */
int	keys_get(const char *home, const char *name, struct key_entry *e, char *err,
	    size_t errlen);
/* The index: an array of {name, provider, base_url, model}. NULL with err. */
cJSON	*keys_list(const char *home, char *err, size_t errlen);
/* 1 removed, 0 there was none, -1 with err. */
int	keys_remove(const char *home, const char *name, char *err, size_t errlen);
void	key_entry_free(struct key_entry *);

#endif
