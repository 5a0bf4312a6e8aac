/*
 * libFuzzer target for the Hermes engine's readers of untrusted input
 * (runner/engine_hermes.c): each line of the engine's stdout (the floor plugin's event
 * lines, and whatever else a command in the run writes there) through stream_line(),
 * priced at the built-in table (the input split at newlines, one stream across them,
 * as the runner feeds it), and the whole input as the floor plugin's body through
 * floor_command(). Every transcript
 * entry said must pass transcript_check(), progress must stay sane (turns never
 * negative, dollars never negative, a result only with have_result), and a command
 * found must be the body's own args.command.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine_hermes.h"
#include "json.h"
#include "transcript.h"

static void
fuzz_say(void *arg, cJSON *entry)
{
	(void)arg;
	if (entry == NULL || transcript_check(entry) != 0)
		abort();
	cJSON_Delete(entry);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct engine_stream	*st;
	struct engine_progress	 pr;
	const char		*p = (const char *)data, *end = p + size, *nl, *cmd;
	cJSON			*body;

	memset(&pr, 0, sizeof pr);
	if ((st = engine_hermes_ops.stream_new()) == NULL)
		abort();
	engine_hermes_ops.stream_prices(st, NULL);
	while (p < end) {
		if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
			nl = end;
		(void)engine_hermes_ops.stream_line(st, p, (size_t)(nl - p), &pr, fuzz_say,
		    NULL);
		if (pr.turns < 0 || !(pr.dollars >= 0) || (pr.result != NULL && !pr.have_result))
			abort();
		p = nl + 1;
	}
	engine_progress_free(&pr);
	engine_hermes_ops.stream_free(st);

	if ((body = json_parse((const char *)data, size)) != NULL) {
		cmd = NULL;
		/* A command found is the body's own args.command, nothing else. */
		if (engine_hermes_ops.floor_command(body, &cmd) == 0 && cmd != NULL &&
		    cmd != json_get_string(cJSON_GetObjectItemCaseSensitive(body, "args"),
		    "command"))
			abort();
		cJSON_Delete(body);
	}
	return 0;
}
