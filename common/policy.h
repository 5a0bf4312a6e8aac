/*
 * The sandbox policy model (SPEC S2, adopted from graith): a global policy merged with a
 * per-engine one, then resolved against the filesystem into absolute, canonical paths.
 */
#ifndef CW_POLICY_H
#define CW_POLICY_H
#include <stddef.h>

#include "strlist.h"

#define POLICY_UNSET	(-1)

struct policy {
	int		enabled;	/* 1, 0, or POLICY_UNSET */
	struct strlist	read_dirs;	/* recursive, read-only */
	struct strlist	write_dirs;	/* recursive, read-write */
	struct strlist	read_files;	/* single files, read-only */
	struct strlist	write_files;	/* single files, read-write */
	struct strlist	env;		/* names of variables passed through */
	int		ssh;		/* agent socket only; 1, 0, or POLICY_UNSET */
	int		ssh_keys;	/* read ~/.ssh on top of ssh; same */
};

void	policy_init(struct policy *);
void	policy_free(struct policy *);
/*
 * Merge: the lists are the union of both (global entries first, no duplicates); a
 * scalar set in the engine policy overrides the global one; unset stays unset, and
 * policy_enabled() reads unset as enabled. ssh-keys implies ssh.
 */
int	policy_merge(const struct policy *global, const struct policy *engine,
	    struct policy *out);
int	policy_enabled(const struct policy *);

/*
 * Resolve a merged policy: expand ~ against home, expand globs, resolve symlinks.
 * Directory grants that do not exist are dropped; file grants are kept even when
 * missing (lock files appear later). Errors (a grant that resolves into a credential
 * location without the feature that allows it; a read-only grant under a prefix that
 * must stay writable, such as /tmp; a relative path) fill err and return -1: the
 * whole resolve fails, nothing is half-applied.
 */
struct policy_resolved {
	struct strlist	read_dirs, write_dirs, read_files, write_files, env;
	int		enabled, ssh, ssh_keys;
};

int	policy_resolve(const struct policy *merged, const char *home, const char *cwhome,
	    struct policy_resolved *out, char *err, size_t errlen);
void	policy_resolved_free(struct policy_resolved *);
/* Prefixes that the sandbox always leaves writable: no read-only grant may sit under one. */
int	policy_under_writable_prefix(const char *canonical, const char *tmpdir);

#endif
