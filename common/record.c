/* Bounded run records (see record.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "mask.h"
#include "record.h"
#include "sha256.h"
#include "wire.h"

size_t
record_cut(const char *s, size_t len, size_t max)
{
	size_t	n;

	if (len <= max)
		return len;
	n = max;
	/* Step back over continuation bytes so the cut lands before a whole sequence. */
	while (n > 0 && max - n < 4 && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	return n;
}

void
record_add_string(cJSON *obj, const char *name, const char *s, size_t max)
{
	char	*t, flag[64];
	size_t	 len, n;

	if (s == NULL)
		return;
	len = strlen(s);
	if ((n = record_cut(s, len, max)) == len) {
		json_add_string(obj, name, s);
		return;
	}
	if ((t = strndup(s, n)) == NULL)
		return;
	json_add_string(obj, name, t);
	free(t);
	snprintf(flag, sizeof flag, "%s_truncated", name);
	cJSON_AddBoolToObject(obj, flag, 1);
}

int
record_add_command(cJSON *obj, const char *command)
{
	char	*m, hex[SHA256_HEX];
	size_t	 len, n;

	if ((m = mask_secrets(command != NULL ? command : "")) == NULL) {
		json_add_string(obj, "command", "[command withheld: masking failed]");
		return -1;
	}
	len = strlen(m);
	n = record_cut(m, len, CW_RECORD_MAX_COMMAND);
	if (n < len) {
		sha256_hex(m, len, hex);
		m[n] = '\0';
		json_add_string(obj, "command", m);
		cJSON_AddBoolToObject(obj, "command_truncated", 1);
		cJSON_AddNumberToObject(obj, "command_bytes", (double)len);
		json_add_string(obj, "command_sha256", hex);
	} else
		json_add_string(obj, "command", m);
	free(m);
	return 0;
}

int
record_list_init(struct record_list *l, size_t max_items, size_t max_bytes)
{
	memset(l, 0, sizeof *l);
	l->max_items = max_items;
	l->max_bytes = max_bytes;
	if ((l->items = cJSON_CreateArray()) == NULL)
		return -1;
	return 0;
}

int
record_list_add(struct record_list *l, cJSON *item)
{
	char	*t;
	size_t	 n;

	l->count++;
	if (item == NULL)
		return 0;
	if ((size_t)cJSON_GetArraySize(l->items) >= l->max_items ||
	    (t = json_print(item)) == NULL) {
		cJSON_Delete(item);
		return 0;
	}
	n = strlen(t) + 2;
	cJSON_free(t);
	if (l->bytes + n > l->max_bytes) {
		cJSON_Delete(item);
		return 0;
	}
	l->bytes += n;
	cJSON_AddItemToArray(l->items, item);
	return 1;
}

cJSON *
record_list_json(const struct record_list *l)
{
	cJSON	*o;
	size_t	 kept = (size_t)cJSON_GetArraySize(l->items);

	if ((o = cJSON_CreateObject()) == NULL)
		return NULL;
	cJSON_AddNumberToObject(o, "count", (double)l->count);
	cJSON_AddItemToObject(o, "list", cJSON_Duplicate(l->items, 1));
	if (l->count > kept)
		cJSON_AddNumberToObject(o, "omitted", (double)(l->count - kept));
	return o;
}

void
record_list_free(struct record_list *l)
{
	cJSON_Delete(l->items);
	l->items = NULL;
}
