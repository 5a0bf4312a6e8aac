/*
 * libFuzzer target for the Codex engine's readers of untrusted input: each line of the
 * input through stream_line (codex's --json output, which the agent's model shapes),
 * and the whole input as a hook body through floor_command. Entries must be well
 * formed; nothing may leak or crash.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "engine_codex.h"
#include "json.h"
#include "transcript.h"

static void
check(void *arg, cJSON *entry)
{
	(void)arg;
	if (transcript_check(entry) != 0)
		abort();
	cJSON_Delete(entry);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct engine_progress	 pr = { 0 };
	struct engine_stream	*st;
	const char		*p = (const char *)data, *end = p + size, *nl, *cmd;
	cJSON			*body;

	if ((st = engine_codex_ops.stream_new()) == NULL)
		return 0;
	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (nl == NULL)
			nl = end;
		(void)engine_codex_ops.stream_line(st, p, (size_t)(nl - p), &pr, check, NULL);
		p = nl + 1;
	}
	engine_codex_ops.stream_free(st);
	engine_progress_free(&pr);
	if ((body = json_parse((const char *)data, size)) != NULL) {
		if (engine_codex_ops.floor_command(body, &cmd) == 0 && cmd != NULL)
			(void)strlen(cmd);
		cJSON_Delete(body);
	}
	return 0;
}
