/* Small helpers over cJSON: typed lookups that never crash on the wrong shape. */
#ifndef CW_JSON_H
#define CW_JSON_H
#include <stddef.h>

#include <cjson/cJSON.h>

/* Parse exactly len bytes (need not be NUL-terminated). NULL on malformed input. */
cJSON		*json_parse(const char *text, size_t len);
/* The string member key of obj, or NULL when absent or not a string. */
const char	*json_get_string(const cJSON *obj, const char *key);
/* The number member; returns 0 and fills *out, or -1 when absent or not a number. */
int		 json_get_number(const cJSON *obj, const char *key, double *out);
/* The integer member (a number with no fractional part, within int range). */
int		 json_get_int(const cJSON *obj, const char *key, int *out);
/* The boolean member; -1 when absent or not a boolean. */
int		 json_get_bool(const cJSON *obj, const char *key, int *out);
/* Compact serialisation, newly allocated (cJSON_free it); NULL on ENOMEM. */
char		*json_print(const cJSON *);
/* Add key:str, tolerating str == NULL (adds null). Returns 0 or -1 on ENOMEM. */
int		 json_add_string(cJSON *obj, const char *key, const char *str);
/*
 * A JSON text, secret-masked (common/mask.h) for storing as a record: masked as one text,
 * so that a value is judged with its name ("password": "..."), or, when that would not
 * parse any more (a key block cut off inside a string is masked to the end), string by
 * string. Newly allocated (free it); NULL on ENOMEM.
 */
char		*json_mask_text(const char *text);
/* The same for an object: its compact serialisation, masked. */
char		*json_print_masked(const cJSON *);

#endif
