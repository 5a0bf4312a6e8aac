#include <math.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "mask.h"

cJSON *
json_parse(const char *text, size_t len)
{
	return cJSON_ParseWithLength(text, len);
}

const char *
json_get_string(const cJSON *obj, const char *key)
{
	const cJSON	*v;

	if (!cJSON_IsObject(obj))
		return NULL;
	v = cJSON_GetObjectItemCaseSensitive(obj, key);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

int
json_get_number(const cJSON *obj, const char *key, double *out)
{
	const cJSON	*v;

	if (!cJSON_IsObject(obj))
		return -1;
	v = cJSON_GetObjectItemCaseSensitive(obj, key);
	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
		return -1;
	*out = v->valuedouble;
	return 0;
}

int
json_get_int(const cJSON *obj, const char *key, int *out)
{
	double	 d;

	if (json_get_number(obj, key, &d) == -1)
		return -1;
	if (d != floor(d) || d < INT_MIN || d > INT_MAX)
		return -1;
	*out = (int)d;
	return 0;
}

int
json_get_bool(const cJSON *obj, const char *key, int *out)
{
	const cJSON	*v;

	if (!cJSON_IsObject(obj))
		return -1;
	v = cJSON_GetObjectItemCaseSensitive(obj, key);
	if (!cJSON_IsBool(v))
		return -1;
	*out = cJSON_IsTrue(v);
	return 0;
}

char *
json_print(const cJSON *v)
{
	return cJSON_PrintUnformatted(v);
}

int
json_add_string(cJSON *obj, const char *key, const char *str)
{
	cJSON	*v = str != NULL ? cJSON_CreateString(str) : cJSON_CreateNull();

	if (v == NULL)
		return -1;
	if (!cJSON_AddItemToObject(obj, key, v)) {
		cJSON_Delete(v);
		return -1;
	}
	return 0;
}

/* Mask every string of v in place, keys left as they are. 0, or -1 on ENOMEM. */
static int
json_mask_strings(cJSON *v)
{
	cJSON	*c;
	char	*m;

	if (cJSON_IsString(v) && v->valuestring != NULL) {
		if ((m = mask_secrets(v->valuestring)) == NULL)
			return -1;
		if (strcmp(m, v->valuestring) != 0 && cJSON_SetValuestring(v, m) == NULL) {
			free(m);
			return -1;
		}
		free(m);
		return 0;
	}
	for (c = v != NULL ? v->child : NULL; c != NULL; c = c->next)
		if (json_mask_strings(c) == -1)
			return -1;
	return 0;
}

char *
json_mask_text(const char *text)
{
	cJSON	*o, *check;
	char	*m, *t, *out;

	if ((m = mask_secrets(text)) == NULL)
		return NULL;
	if ((check = json_parse(m, strlen(m))) != NULL ||
	    (o = json_parse(text, strlen(text))) == NULL) {
		cJSON_Delete(check);
		return m;	/* still JSON, or was never JSON: masked as text */
	}
	free(m);
	out = NULL;
	if (json_mask_strings(o) == 0 && (t = json_print(o)) != NULL) {
		out = strdup(t);
		cJSON_free(t);
	}
	cJSON_Delete(o);
	return out;
}

char *
json_print_masked(const cJSON *v)
{
	char	*t, *m;

	if ((t = json_print(v)) == NULL)
		return NULL;
	m = json_mask_text(t);
	cJSON_free(t);
	return m;
}
