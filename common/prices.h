/*
 * What a model's tokens cost, for engines that count their own spend from the usage
 * the provider reports (byok): the prices: section of config.yaml first, then a table
 * built into Clockwork (prices.c, dated there). A model found in neither has no price:
 * its run goes on with its cost shown as unknown, and no dollar budget can hold for it.
 *
 * Model names are compared after normalisation, so that the spellings providers and
 * gateways use for one model find one row: lower case; a provider prefix dropped
 * ("anthropic/", "openai/", "openrouter/anthropic/", Bedrock's "us.anthropic."); a
 * dated snapshot suffix dropped ("-20250929", "-2025-08-07", Vertex's "@20250929");
 * a tag dropped (":0", ":latest", Bedrock's "-v1:0", Claude Code's "[1m]", "-latest");
 * and a Claude version's dots made dashes ("claude-sonnet-4.5" is "claude-sonnet-4-5").
 */
#ifndef CW_PRICES_H
#define CW_PRICES_H
#include <stddef.h>

#include "config.h"

/* When the built-in table was last checked against the providers' pages. */
#define PRICES_TABLE_DATE	"2026-12-01"

struct prices_entry {
	const char	*model;		/* normalised */
	double		 per_mtok[4];	/* $ per million: input, output, cache_write,
					   cache_read (as struct config_price) */
};

/* The normalised name of model into out: 0, or -1 when it does not fit or is empty. */
int	prices_normalise(const char *model, char *out, size_t outlen);
/* The built-in table's row for model (normalised here), or NULL. */
const struct prices_entry *prices_builtin(const char *model);
/*
 * The price of model: the configuration's prices.<model> (as written, then
 * normalised), else the built-in table's; NULL when neither has one. *from, when not
 * NULL, says which, for reports: "prices.MODEL in config.yaml" or "the built-in
 * table (checked DATE)".
 */
const double *prices_find(const struct config *cfg, const char *model,
	    const char **from);

/* The token counts of one model response, in the order of per_mtok. */
enum { PRICES_INPUT, PRICES_OUTPUT, PRICES_CACHE_WRITE, PRICES_CACHE_READ, PRICES_N_KINDS };

/*
 * What tokens (PRICES_N_KINDS counts, each >= 0) cost at per_mtok ($ per million, in
 * the same order): the sum of each count times its price. A negative or non-finite
 * count or price counts as 0, so that a usage report no provider would send cannot
 * lower a run's spend.
 */
double	prices_cost(const double *per_mtok, const double *tokens);

#endif
