/*
 * libFuzzer target: the security preview (daemon/preview.c) over an arbitrary prompt,
 * the text of someone else's commit: it decodes UTF-8, splits lines, clauses and
 * words, and runs the floor on pieces. It must finish, never crash, and always say
 * how many warnings it found.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "preview.h"
#include "store.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct store_task	 t = { .name = "f", .repo = "/r", .engine = "command",
	    .permission_mode = "acceptEdits", .schedule = "queued" };
	struct preview_input	 in = { 0 };
	char			*prompt;
	cJSON			*p;

	if (size > 16384 || (prompt = malloc(size + 1)) == NULL)
		return 0;
	memcpy(prompt, data, size);
	prompt[size] = '\0';
	in.name = "f";
	in.prompt = prompt;
	in.task = &t;
	if ((p = preview_build(NULL, &in)) == NULL ||
	    cJSON_GetObjectItem(p, "warnings") == NULL)
		abort();
	cJSON_Delete(p);
	free(prompt);
	return 0;
}
