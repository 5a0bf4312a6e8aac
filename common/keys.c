/* Provider keys by name, in the secret store: see keys.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "keys.h"
#include "secret.h"

#define KEYS_INDEX	"keys.index"

int
keys_name_valid(const char *name)
{
	size_t	 n;

	if (name == NULL || (n = strlen(name)) == 0 || n > KEYS_NAME_MAX || name[0] == '-')
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= '0' &&
		    name[i] <= '9') || name[i] == '_' || name[i] == '-'))
			return 0;
	return 1;
}

int
keys_provider_valid(const char *provider)
{
	return provider != NULL && (strcmp(provider, "anthropic") == 0 ||
	    strcmp(provider, "openai") == 0);
}

static void
keys_secret_name(const char *name, char *out, size_t outlen)
{
	snprintf(out, outlen, "key.%s", name);
}

/* The index as stored, or a new empty array when there is none. */
static cJSON *
keys_index(const char *home, char *err, size_t errlen)
{
	char	*v = NULL;
	cJSON	*a;
	int	 rc;

	if ((rc = secret_get(home, KEYS_INDEX, &v, err, errlen)) == -1)
		return NULL;
	if (rc == 0)
		return cJSON_CreateArray();
	a = cJSON_Parse(v);
	secret_free(v);
	if (!cJSON_IsArray(a)) {
		cJSON_Delete(a);
		snprintf(err, errlen, "the key index (secret %s) is not a JSON array",
		    KEYS_INDEX);
		return NULL;
	}
	return a;
}

static int
keys_index_put(const char *home, cJSON *a, char *err, size_t errlen)
{
	char	*s;
	int	 rc;

	if ((s = cJSON_PrintUnformatted(a)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	rc = secret_set(home, KEYS_INDEX, s, NULL, err, errlen);
	cJSON_free(s);
	return rc;
}

static void
keys_index_drop(cJSON *a, const char *name)
{
	int	 i = 0;
	cJSON	*it;

	cJSON_ArrayForEach(it, a) {
		const char *n = json_get_string(it, "name");

		if (n != NULL && strcmp(n, name) == 0) {
			cJSON_DeleteItemFromArray(a, i);
			return;
		}
		i++;
	}
}

int
keys_add(const char *home, const struct key_entry *e, enum secret_backend *where,
    char *err, size_t errlen)
{
	char	 sname[SECRET_NAME_MAX + 1], *s;
	cJSON	*o, *a, *it;
	int	 rc;

	if (!keys_name_valid(e->name)) {
		snprintf(err, errlen, "key name must be 1-%d of a-z 0-9 _ -", KEYS_NAME_MAX);
		return -1;
	}
	if (e->key == NULL || e->key[0] == '\0' || strlen(e->key) > KEYS_VALUE_MAX) {
		snprintf(err, errlen, "the key must be 1 to %d bytes", KEYS_VALUE_MAX);
		return -1;
	}
	if ((a = keys_index(home, err, errlen)) == NULL)
		return -1;
	o = cJSON_CreateObject();
	json_add_string(o, "provider", e->provider);
	if (e->base_url != NULL)
		json_add_string(o, "base_url", e->base_url);
	if (e->model != NULL)
		json_add_string(o, "model", e->model);
	it = cJSON_Duplicate(o, 1);
	json_add_string(o, "key", e->key);
	s = cJSON_PrintUnformatted(o);
	/* Wipe the copy of the key in the tree before it is freed. */
	explicit_bzero(cJSON_GetObjectItemCaseSensitive(o, "key")->valuestring,
	    strlen(e->key));
	cJSON_Delete(o);
	if (s == NULL || it == NULL) {
		cJSON_free(s);
		cJSON_Delete(it);
		cJSON_Delete(a);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	keys_secret_name(e->name, sname, sizeof sname);
	rc = secret_set(home, sname, s, where, err, errlen);
	explicit_bzero(s, strlen(s));
	cJSON_free(s);
	if (rc == 0) {
		keys_index_drop(a, e->name);
		cJSON_AddStringToObject(it, "name", e->name);
		cJSON_AddItemToArray(a, it);
		it = NULL;
		rc = keys_index_put(home, a, err, errlen);
	}
	cJSON_Delete(it);
	cJSON_Delete(a);
	return rc;
}

static char *
keys_dup(const cJSON *o, const char *k)
{
	const char	*s = json_get_string(o, k);

	return s != NULL ? strdup(s) : NULL;
}

int
keys_get(const char *home, const char *name, struct key_entry *e, char *err,
    size_t errlen)
{
	char		 sname[SECRET_NAME_MAX + 1], *v = NULL;
	cJSON		*o;
	cJSON		*k;
	int		 rc;

	memset(e, 0, sizeof *e);
	if (!keys_name_valid(name)) {
		snprintf(err, errlen, "'%.64s' is not a key name", name);
		return -1;
	}
	keys_secret_name(name, sname, sizeof sname);
	if ((rc = secret_get(home, sname, &v, err, errlen)) != 1)
		return rc;
	o = cJSON_Parse(v);
	secret_free(v);
	k = cJSON_GetObjectItemCaseSensitive(o, "key");
	if (!cJSON_IsString(k) || !keys_provider_valid(json_get_string(o, "provider"))) {
		if (cJSON_IsString(k))
			explicit_bzero(k->valuestring, strlen(k->valuestring));
		cJSON_Delete(o);
		snprintf(err, errlen, "key %s: the stored value is malformed: add it again",
		    name);
		return -1;
	}
	e->name = strdup(name);
	e->provider = keys_dup(o, "provider");
	e->base_url = keys_dup(o, "base_url");
	e->model = keys_dup(o, "model");
	e->key = strdup(k->valuestring);
	explicit_bzero(k->valuestring, strlen(k->valuestring));
	cJSON_Delete(o);
	if (e->name == NULL || e->provider == NULL || e->key == NULL) {
		key_entry_free(e);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 1;
}

cJSON *
keys_list(const char *home, char *err, size_t errlen)
{
	return keys_index(home, err, errlen);
}

int
keys_remove(const char *home, const char *name, char *err, size_t errlen)
{
	char	 sname[SECRET_NAME_MAX + 1];
	cJSON	*a;
	int	 rc;

	if (!keys_name_valid(name)) {
		snprintf(err, errlen, "'%.64s' is not a key name", name);
		return -1;
	}
	keys_secret_name(name, sname, sizeof sname);
	if ((rc = secret_remove(home, sname, err, errlen)) == -1)
		return -1;
	if ((a = keys_index(home, err, errlen)) == NULL)
		return -1;
	keys_index_drop(a, name);
	if (keys_index_put(home, a, err, errlen) == -1)
		rc = -1;
	cJSON_Delete(a);
	return rc;
}

void
key_entry_free(struct key_entry *e)
{
	if (e == NULL)
		return;
	if (e->key != NULL) {
		explicit_bzero(e->key, strlen(e->key));
		free(e->key);
	}
	free(e->name);
	free(e->provider);
	free(e->base_url);
	free(e->model);
	memset(e, 0, sizeof *e);
}
