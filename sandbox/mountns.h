/*
 * The mount-namespace layer: the run's filesystem view, a fresh tmpfs root holding
 * only the spec's grants, bound in from the host (mountns.c explains). It says what
 * Landlock (ABI <= 7) cannot: a path outside the grants cannot be chmod'ed, touched,
 * or connect()ed to as a named unix socket, because it is not there. The same view is
 * built for root and for a normal user (inside the runner's user namespace).
 */
#ifndef CW_MOUNTNS_H
#define CW_MOUNTNS_H
#include <limits.h>
#include <stddef.h>
#include <sys/types.h>

#include "spec.h"

struct mountns_result {
	int	applied;		/* 1: the namespace exists and is private */
	int	ptys;			/* 1: a private devpts backs /dev/pts and /dev/ptmx */
};

/*
 * In a new user namespace, map uid and gid (the runner's, read before the clone) to
 * themselves. Returns 0, or -1 with err naming the file that could not be written.
 */
int	mountns_idmap(uid_t uid, gid_t gid, char *err, size_t errlen);

/*
 * Build the view in the mount namespace the caller is already in (made by
 * apply_sandbox's clone), as PID 1 of a new PID namespace (/proc is a fresh proc of
 * that namespace), and make it the root. names (NULL-terminated, may be NULL) are
 * paths the run will use as spelled (argv[0], the working directory): the symlinks
 * on the way to each are shown as on the host, as are those on the way to HOME and
 * PATH's entries. Returns 0, or -1 with err naming the failed step and path (the
 * caller must not exec: the view may be half built).
 */
int	mountns_apply(const struct sandbox_spec *, const char *const *names,
	    struct mountns_result *, char *err, size_t errlen);

#endif
