/*
 * The built-in price table (prices.h) and the lookup through config.yaml's prices:.
 *
 * Dollars per million tokens: input, output, cache write, cache read. Checked on
 * 2026-12-01 (PRICES_TABLE_DATE) against stored copies of the providers' published
 * pages, named above each group; where a number could not be confirmed on the
 * provider's own page it says so, and where sources disagree the higher number is
 * kept, so that a dollar budget stops a run early rather than late. A model left out
 * has no price here (prices: in config.yaml gives it one); a wrong row is overridden
 * the same way. Review the table when the date above is old.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "prices.h"

static const struct prices_entry prices_table[] = {
	/*
	 * Anthropic: platform.claude.com/docs/en/about-claude/pricing ("Model pricing":
	 * base input, output, 5-minute cache writes, cache hits), for Fable, Mythos and
	 * Opus; the older snapshot of the same page (docs.anthropic.com) for Sonnet 4,
	 * Sonnet 3.7 and the Claude 3 models; the model overview pages for Sonnet 5 and
	 * the input/output of Sonnet 5.5 and Opus 5.5.
	 */
	{ "claude-fable-5-1",	{ 10.00, 50.00, 12.50, 0.25 } },
	{ "claude-mythos-5-1",	{ 10.00, 50.00, 12.50, 0.25 } },
	{ "claude-fable-5",	{ 10.00, 50.00, 12.50, 1.00 } },
	{ "claude-mythos-5",	{ 10.00, 50.00, 12.50, 1.00 } },
	/*
	 * Opus 5.5: $4 / $20 is on the Sonnet 5.5 overview's comparison; its cache
	 * prices (1.25x and 0.05x input) are from third-party tables, not confirmed.
	 */
	{ "claude-opus-5-5",	{ 4.00, 20.00, 5.00, 0.20 } },
	{ "claude-opus-5",	{ 5.00, 25.00, 6.25, 0.50 } },
	{ "claude-opus-4-8",	{ 5.00, 25.00, 6.25, 0.50 } },
	{ "claude-opus-4-7",	{ 5.00, 25.00, 6.25, 0.50 } },
	{ "claude-opus-4-6",	{ 5.00, 25.00, 6.25, 0.50 } },
	{ "claude-opus-4-5",	{ 5.00, 25.00, 6.25, 0.50 } },
	{ "claude-opus-4-1",	{ 15.00, 75.00, 18.75, 1.50 } },
	{ "claude-opus-4",	{ 15.00, 75.00, 18.75, 1.50 } },
	/*
	 * Sonnet 5.5: the overview lists cache reads at $0.20; third-party notes say
	 * they were cut to $0.10 on 2026-10-07, which no official page read here shows.
	 * The $0.20 is kept.
	 */
	{ "claude-sonnet-5-5",	{ 2.00, 10.00, 2.50, 0.20 } },
	{ "claude-sonnet-5",	{ 2.00, 10.00, 2.50, 0.20 } },
	/*
	 * Sonnet 4.6, Sonnet 4.5 and Haiku 4.5: their rows were not in the copy of the
	 * official page read; these are the prices every other source agrees on.
	 */
	{ "claude-sonnet-4-6",	{ 3.00, 15.00, 3.75, 0.30 } },
	{ "claude-sonnet-4-5",	{ 3.00, 15.00, 3.75, 0.30 } },
	{ "claude-sonnet-4",	{ 3.00, 15.00, 3.75, 0.30 } },
	{ "claude-3-7-sonnet",	{ 3.00, 15.00, 3.75, 0.30 } },
	{ "claude-haiku-4-5",	{ 1.00, 5.00, 1.25, 0.10 } },
	/*
	 * Haiku 5.5 is priced by prompt length ($0.10 / $0.50 up to 100k tokens, $0.50
	 * / $2.50 above), per request; one row cannot say that, so this is the higher
	 * band. From third-party release notes, not confirmed on an official page.
	 */
	{ "claude-haiku-5-5",	{ 0.50, 2.50, 0.625, 0.05 } },
	{ "claude-3-5-haiku",	{ 0.80, 4.00, 1.00, 0.08 } },
	{ "claude-3-haiku",	{ 0.25, 1.25, 0.30, 0.03 } },
	{ "claude-3-opus",	{ 15.00, 75.00, 18.75, 1.50 } },

	/*
	 * OpenAI: developers.openai.com/api/docs/models (gpt-5-codex's page, which also
	 * prices gpt-5); the rest from copies of developers.openai.com/api/docs/pricing
	 * quoted by others (GitHub's Copilot price table for gpt-5-mini, gpt-5.2,
	 * gpt-5.3-codex and gpt-4.1; 2026 write-ups for gpt-5.4 and gpt-5.5), not read
	 * on OpenAI's own page. OpenAI does not bill cache writes: the cache-write
	 * column is the input price, which no OpenAI usage report fills anyway.
	 */
	{ "gpt-5.5",		{ 5.00, 30.00, 5.00, 0.50 } },
	{ "gpt-5.4",		{ 2.50, 15.00, 2.50, 0.25 } },
	{ "gpt-5.4-mini",	{ 0.75, 4.50, 0.75, 0.075 } },
	{ "gpt-5.4-nano",	{ 0.20, 1.25, 0.20, 0.02 } },
	{ "gpt-5.3-codex",	{ 1.75, 14.00, 1.75, 0.175 } },
	{ "gpt-5.2",		{ 1.75, 14.00, 1.75, 0.175 } },
	{ "gpt-5.2-codex",	{ 1.75, 14.00, 1.75, 0.175 } },
	/* gpt-5.1: one source only (the same as gpt-5); not confirmed. */
	{ "gpt-5.1",		{ 1.25, 10.00, 1.25, 0.125 } },
	{ "gpt-5.1-codex",	{ 1.25, 10.00, 1.25, 0.125 } },
	{ "gpt-5",		{ 1.25, 10.00, 1.25, 0.125 } },
	{ "gpt-5-codex",	{ 1.25, 10.00, 1.25, 0.125 } },
	{ "gpt-5-mini",		{ 0.25, 2.00, 0.25, 0.025 } },
	/* gpt-5-nano's cached input: $0.005 and $0.013 are both quoted; the higher. */
	{ "gpt-5-nano",		{ 0.05, 0.40, 0.05, 0.013 } },
	{ "gpt-4.1",		{ 2.00, 8.00, 2.00, 0.50 } },
	{ "gpt-4o",		{ 2.50, 10.00, 2.50, 1.25 } },
	{ "gpt-4o-mini",	{ 0.15, 0.60, 0.15, 0.075 } },
	/*
	 * Not listed, for want of a confirmed price or model id: o3 (quoted at $2 / $8
	 * and at $10 / $40), GPT-6 "Sol" and "Luna" (ids not confirmed), gpt-4.1-mini.
	 */

	/*
	 * OpenAI-compatible providers. DeepSeek prices by hour of day; these are its
	 * peak prices (so a budget holds at any hour; off-peak costs less), from a
	 * copy of api-docs.deepseek.com's Models & Pricing checked on 2026-10-27 by a
	 * third party, not read on DeepSeek's own page. deepseek-chat and
	 * deepseek-reasoner are left out: the only official copy read is from 2025.
	 */
	{ "deepseek-flash",	{ 0.30, 1.20, 0.30, 0.006 } },
	{ "deepseek-v4-pro",	{ 1.32, 3.96, 1.32, 0.044 } },
};

#define PRICES_N	(sizeof prices_table / sizeof prices_table[0])

/* Drop a trailing "-YYYYMMDD" or "-YYYY-MM-DD" from s (len bytes); the new length. */
static size_t
prices_drop_date(const char *s, size_t len)
{
	size_t	i;

	if (len > 9 && s[len - 9] == '-') {
		for (i = len - 8; i < len && isdigit((unsigned char)s[i]); i++)
			;
		if (i == len)
			return len - 9;
	}
	if (len > 11 && s[len - 11] == '-' && s[len - 6] == '-' && s[len - 3] == '-') {
		for (i = len - 10; i < len; i++)
			if (i != len - 6 && i != len - 3 && !isdigit((unsigned char)s[i]))
				return len;
		return len - 11;
	}
	return len;
}

int
prices_normalise(const char *model, char *out, size_t outlen)
{
	char		 buf[512];
	const char	*p, *q;
	size_t		 len, i, prev;
	int		 bedrock = 0;

	if (model == NULL || (len = strlen(model)) == 0 || len >= sizeof buf)
		return -1;
	for (i = 0; i <= len; i++)
		buf[i] = (char)tolower((unsigned char)model[i]);
	/* A provider or gateway prefix: everything up to the last '/'. */
	p = (q = strrchr(buf, '/')) != NULL ? q + 1 : buf;
	/* Bedrock's "anthropic.claude-..." and "us.anthropic.claude-...". */
	if ((q = strstr(p, "anthropic.")) != NULL) {
		p = q + strlen("anthropic.");
		bedrock = 1;
	}
	len = strlen(p);
	memmove(buf, p, len + 1);
	/* Tags: Vertex's "@20250929", ":0" / ":latest", Claude Code's "[1m]". */
	if ((q = strpbrk(buf, "@:[")) != NULL)
		len = (size_t)(q - buf);
	buf[len] = '\0';
	/* Bedrock's "-v1" (its ":0" went above), "-latest", then a date, repeatedly. */
	do {
		prev = len;
		if (bedrock && len > 3 && strncmp(buf + len - 3, "-v", 2) == 0 &&
		    isdigit((unsigned char)buf[len - 1]))
			len -= 3;
		if (len > 7 && strcmp(buf + len - 7, "-latest") == 0)
			len -= 7;
		len = prices_drop_date(buf, len);
		buf[len] = '\0';
	} while (len != prev && len > 0);
	/* A Claude version's dots are dashes in Anthropic's ids; a ".0" or "-0" goes. */
	if (strncmp(buf, "claude-", 7) == 0) {
		for (i = 0; i < len; i++)
			if (buf[i] == '.')
				buf[i] = '-';
		if (len > 2 && strcmp(buf + len - 2, "-0") == 0)
			buf[len -= 2] = '\0';
	}
	if (len == 0 || (size_t)snprintf(out, outlen, "%s", buf) >= outlen)
		return -1;
	return 0;
}

const struct prices_entry *
prices_builtin(const char *model)
{
	char	norm[512];

	if (prices_normalise(model, norm, sizeof norm) == -1)
		return NULL;
	for (size_t i = 0; i < PRICES_N; i++)
		if (strcmp(prices_table[i].model, norm) == 0)
			return &prices_table[i];
	return NULL;
}

const double *
prices_find(const struct config *cfg, const char *model, const char **from)
{
	static char			 where[320];
	const struct config_price	*cp = NULL;
	const struct prices_entry	*e;
	char				 norm[512], other[512];

	if (model == NULL)
		return NULL;
	if (cfg != NULL && (cp = config_price(cfg, model)) == NULL &&
	    prices_normalise(model, norm, sizeof norm) == 0)
		for (size_t i = 0; i < cfg->n_prices && cp == NULL; i++)
			if (prices_normalise(cfg->prices[i].model, other, sizeof other) == 0 &&
			    strcmp(norm, other) == 0)
				cp = &cfg->prices[i];
	if (cp != NULL) {
		snprintf(where, sizeof where, "prices.%.256s in config.yaml", cp->model);
		if (from != NULL)
			*from = where;
		return cp->per_mtok;
	}
	if ((e = prices_builtin(model)) == NULL)
		return NULL;
	if (from != NULL)
		*from = "the built-in table (checked " PRICES_TABLE_DATE ")";
	return e->per_mtok;
}

double
prices_cost(const double *per_mtok, const double *tokens)
{
	double	sum = 0;

	for (int i = 0; i < PRICES_N_KINDS; i++)
		if (isfinite(tokens[i]) && tokens[i] > 0 && isfinite(per_mtok[i]) &&
		    per_mtok[i] > 0)
			sum += tokens[i] * per_mtok[i];
	return sum / 1e6;
}
