/*
 * The one evaluation of who answers a tool call: see autoallow.h. Pure: it reads the
 * floor's result and the policy, nothing else, so the bridge, the daemon and the
 * tests share it as is.
 */
#include <stdio.h>
#include <string.h>

#include "autoallow.h"

/* Is every family of the line covered by a rule that allows the line's risk? */
static const struct autoallow_rule *
autoallow_covered(const struct floor_result *fr, const struct autoallow_policy *pol)
{
	const struct autoallow_rule	*first = NULL;

	if (fr->family_opaque || fr->n_families == 0 || pol->n_rules == 0)
		return NULL;
	for (size_t i = 0; i < fr->n_families; i++) {
		const struct autoallow_rule *hit = NULL;
		for (size_t k = 0; k < pol->n_rules && hit == NULL; k++)
			if (strcmp(pol->rules[k].family, fr->families[i]) == 0 &&
			    pol->rules[k].max_risk >= fr->risk)
				hit = &pol->rules[k];
		if (hit == NULL)
			return NULL;
		if (first == NULL)
			first = hit;
	}
	return first;
}

int
autoallow_ask_covers(const char *rule, const char *call)
{
	size_t	 n = strlen(rule);

	return strncmp(rule, call, n) == 0 && (call[n] == '\0' || call[n] == ' ');
}

/*
 * The ask rule a call meets, or NULL. What the floor cannot name it cannot show to
 * be outside every asked family: with any ask rule, an opaque line is asked.
 */
static const char *
autoallow_asked(const struct floor_result *fr, const struct autoallow_policy *pol)
{
	if (pol->n_ask_rules == 0)
		return NULL;
	if (fr->family_opaque || fr->n_families == 0)
		return "(commands Clockwork cannot all name)";
	for (size_t i = 0; i < fr->n_families; i++)
		for (size_t k = 0; k < pol->n_ask_rules; k++)
			if (autoallow_ask_covers(pol->ask_rules[k].family, fr->families[i]))
				return pol->ask_rules[k].family;
	return NULL;
}

void
autoallow_decide(const struct floor_result *fr, const struct autoallow_policy *pol,
    struct autoallow_result *out)
{
	const struct autoallow_rule	*r;
	const char			*asked;
	unsigned			 ask = pol->ask;

	memset(out, 0, sizeof *out);
	if (fr->verdict == FLOOR_DENY) {
		out->verdict = AUTOALLOW_DENY;
		snprintf(out->rule, sizeof out->rule, "%s", fr->rule);
		return;
	}
	/* An ask rule holds over every risk, every policy and every task rule. */
	if ((asked = autoallow_asked(fr, pol)) != NULL) {
		out->verdict = AUTOALLOW_ASK;
		snprintf(out->rule, sizeof out->rule, "task_ask:%s", asked);
		return;
	}
	/* Without the sandbox nothing bounds an ordinary call's code: ask it too. */
	if (!pol->sandboxed && ask != AUTOALLOW_ASK_NONE)
		ask |= AUTOALLOW_BIT(FLOOR_RISK_ORDINARY);
	if ((ask & AUTOALLOW_BIT(fr->risk)) == 0) {
		out->verdict = AUTOALLOW_RUN;
		snprintf(out->rule, sizeof out->rule, "%s", fr->risk ==
		    FLOOR_RISK_ORDINARY ? "risk.ordinary" : "approvals.ask");
		return;
	}
	if ((r = autoallow_covered(fr, pol)) != NULL) {
		out->verdict = AUTOALLOW_RUN;
		snprintf(out->rule, sizeof out->rule, "task_rule:%s", r->family);
		return;
	}
	out->verdict = AUTOALLOW_ASK;
}

int
autoallow_family(const struct floor_result *fr, char *out, size_t outlen)
{
	if (fr->verdict == FLOOR_DENY || fr->family_opaque || fr->n_families != 1 ||
	    !autoallow_family_valid(fr->families[0]) ||
	    (size_t)snprintf(out, outlen, "%s", fr->families[0]) >= outlen)
		return -1;
	return 0;
}

int
autoallow_family_valid(const char *f)
{
	size_t	 n = strlen(f);

	if (n == 0 || n >= FLOOR_FAMILY_MAX || f[0] == ' ' || f[n - 1] == ' ')
		return 0;
	for (; *f != '\0'; f++)
		if ((unsigned char)*f < 0x21 && *f != ' ')
			return 0;
		else if ((unsigned char)*f == 0x7f)
			return 0;
	return 1;
}

int
autoallow_ask_parse(const char *const *words, size_t n, unsigned *mask, char *err,
    size_t errlen)
{
	int	 r;

	*mask = 0;
	if (n == 1 && strcmp(words[0], "all") == 0) {
		*mask = AUTOALLOW_ASK_ALL;
		return 0;
	}
	if (n == 1 && strcmp(words[0], "none") == 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if ((r = floor_risk_parse(words[i])) == -1) {
			snprintf(err, errlen, "'%.60s' is not a risk (ordinary, "
			    "outside_worktree, fetch_exec, destructive), and all or none "
			    "stand alone", words[i]);
			return -1;
		}
		*mask |= AUTOALLOW_BIT(r);
	}
	return 0;
}

void
autoallow_ask_format(unsigned mask, char *out, size_t outlen)
{
	size_t	 n = 0;

	if (outlen == 0)
		return;
	out[0] = '\0';
	if (mask == AUTOALLOW_ASK_ALL) {
		snprintf(out, outlen, "all");
		return;
	}
	if (mask == AUTOALLOW_ASK_NONE) {
		snprintf(out, outlen, "none");
		return;
	}
	for (int r = FLOOR_RISK_ORDINARY; r <= FLOOR_RISK_DESTRUCTIVE; r++) {
		if ((mask & AUTOALLOW_BIT(r)) == 0)
			continue;
		n += (size_t)snprintf(out + n, n < outlen ? outlen - n : 0, "%s%s",
		    n > 0 ? "," : "", floor_risk_name((enum floor_risk)r));
		if (n >= outlen) {
			out[outlen - 1] = '\0';
			return;
		}
	}
}
