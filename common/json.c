#include <math.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

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
