/*
 * What config_load cannot see from the file alone, checked when clockworkd loads it
 * (at start, on SIGHUP, and for --check-config): every sandbox grant, global and per
 * engine, resolved against this user's home as a run would resolve it. A grant of a
 * credential location is refused here, with the file's name, not at the first run.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "confcheck.h"
#include "config.h"
#include "paths.h"
#include "policy.h"

int
confcheck_grants(const struct config *cfg, char *err, size_t errlen)
{
	struct policy		 merged;
	struct policy_resolved	 r;
	char			 home[PATH_MAX], cwhome[PATH_MAX], why[768];
	const char		*file = cfg->path != NULL ? cfg->path : "configuration";

	if (paths_home(home, sizeof home) == -1 ||
	    paths_clockwork_home(cwhome, sizeof cwhome) == -1) {
		snprintf(err, errlen, "%s: cannot find the home directory to check the "
		    "sandbox grants", file);
		return -1;
	}
	for (size_t i = 0; i <= cfg->n_engines; i++) {
		const struct config_engine *e = i < cfg->n_engines ? &cfg->engines[i] : NULL;

		if (policy_merge(&cfg->sandbox, e != NULL ? &e->sandbox : NULL, &merged) == -1) {
			snprintf(err, errlen, "%s: out of memory", file);
			return -1;
		}
		if (policy_resolve(&merged, home, cwhome, &r, why, sizeof why) == -1) {
			policy_free(&merged);
			if (e != NULL)
				snprintf(err, errlen, "%s: sandbox (with engines.%s.sandbox): %s",
				    file, e->name, why);
			else
				snprintf(err, errlen, "%s: sandbox: %s", file, why);
			return -1;
		}
		policy_resolved_free(&r);
		policy_free(&merged);
	}
	return 0;
}
