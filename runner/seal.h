/*
 * The end of a repository run (SPEC G1): inside the run's own sandbox, once the engine
 * and everything it started are gone, commit whatever the agent left uncommitted (so
 * nothing is lost), point the run's branch at the result and write a git bundle of what
 * the run added beyond its base. The daemon imports that bundle into the user's
 * repository the way a server receives a push (daemon/runimport.c); nothing here is
 * trusted by it. Git runs sandboxed because the run's repository, its config and hooks
 * included, is the run's to shape.
 */
#ifndef CW_SEAL_H
#define CW_SEAL_H
#include <stddef.h>

#include "cgroup.h"
#include "sealskip.h"
#include "spec.h"

#define SEAL_TIMEOUT_MS		(60 * 1000)
#define SEAL_BUNDLE_NAME	"clockwork-run.bundle"	/* under <workdir>/.git/ */

struct seal_result {
	char	tip[65];	/* the branch's commit at the end, hex */
	int	bundle;		/* 1: a bundle was written (the tip is not in the base) */
	int	committed;	/* 1: uncommitted work was committed by the seal */
	int	kept_outputs;	/* 1: the task keeps build outputs (nothing left out) */
	struct sealskip	skip;	/* the build outputs left out of the commit */
	char	skip_error[256];	/* why nothing was left out, when it could not be */
};

/*
 * Seal the run at spec->workdir on branch from base (a commit id), inside the run's
 * cgroup when there is one (NULL: none), leaving build outputs out of the commit
 * (sealskip.h) unless keep_outputs. 0, or -1 with err naming what failed (git's own
 * message where it gave one). The bundle is written to <workdir>/.git/SEAL_BUNDLE_NAME.
 * On 0 the result holds memory: seal_result_free().
 */
int	seal_run(struct sandbox_spec *, const struct cgroup_run *,
	    const char *branch, const char *base, const char *run_id, int keep_outputs,
	    struct seal_result *, char *err, size_t errlen);
void	seal_result_free(struct seal_result *);

#endif
