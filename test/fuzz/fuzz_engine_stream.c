/*
 * Every runnable engine's output reader (runner/engine.h, stream_line) over arbitrary
 * lines, the way the runner feeds it: each line a separate call on one stream, so that
 * state carried between lines is fuzzed too. The first byte picks the engine. Every
 * entry it says must pass transcript_check() and render; the progress it reports must
 * stay sane (the dollars Claude Code's stream is priced at, through a prices: row, a
 * finite number that never falls), and a conversation id it took must pass
 * conversation_id_valid(). The engine's stdout is the run's: untrusted.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "engine.h"
#include "transcript.h"

static void
fuzz_say(void *arg, cJSON *entry)
{
	char	*line;

	(void)arg;
	if (entry == NULL)
		return;
	if (transcript_check(entry) == -1 || (line = transcript_render(entry, 1)) == NULL)
		abort();
	free(line);
	cJSON_Delete(entry);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct config_price	 row = { "claude-e2e", { 10, 50, 12.5, 1 } };
	struct config			 cfg;
	const struct engine_ops		*ops = NULL;
	const struct engine_info	*e;
	struct engine_progress		 p;
	double				 before;
	struct engine_stream		*st;
	const char			*line, *nl, *end;
	size_t				 n = 0, pick;

	if (size < 1)
		return 0;
	/* The runnable engines with a runtime side, in table order. */
	pick = data[0];
	for (size_t i = 0, k = 0; (e = engines_at(i)) != NULL; i++)
		if (engine_find(e->name) != NULL && k++ == pick % 8)
			ops = engine_find(e->name);
	for (size_t i = 0; ops == NULL && (e = engines_at(i)) != NULL; i++)
		ops = engine_find(e->name);
	if (ops == NULL || (st = ops->stream_new()) == NULL)
		return 0;
	memset(&p, 0, sizeof p);
	memset(&cfg, 0, sizeof cfg);
	cfg.prices = &row;
	cfg.n_prices = 1;
	if (ops->stream_prices != NULL)
		ops->stream_prices(st, &cfg);
	line = (const char *)data + 1;
	end = (const char *)data + size;
	for (; line < end && n < 64; line = nl + 1, n++) {
		if ((nl = memchr(line, '\n', (size_t)(end - line))) == NULL)
			nl = end;
		before = p.dollars;
		if (ops->log_skip != NULL)
			(void)ops->log_skip(line, (size_t)(nl - line));
		(void)ops->stream_line(st, line, (size_t)(nl - line), &p, fuzz_say, NULL);
		/* Only a final total may replace the count, and only with a higher one. */
		if (!isfinite(p.dollars) || (ops->stream_prices != NULL && p.dollars < before))
			abort();
	}
	if (p.turns < 0 || p.dollars < 0 || memchr(p.unpriced, '\0', sizeof p.unpriced) ==
	    NULL || (p.result != NULL &&
	    strlen(p.result) > TRANSCRIPT_TEXT_MAX))
		abort();
	/* A session id the stream took goes onto a later run's command line. */
	if (p.session[0] != '\0' && !conversation_id_valid(ops->name, p.session))
		abort();
	engine_progress_free(&p);
	ops->stream_free(st);
	return 0;
}
