/*
 * The mount-namespace layer: what Landlock (ABI <= 7) cannot say about the filesystem.
 * A named unix socket can be connect()ed wherever Landlock denies reading it; so the
 * root becomes an overlay of the host in which every socket outside the grants refuses
 * connections, with the grants bound back, real, on top (mountns.c explains). Where
 * overlayfs is missing, the places sockets usually live (/tmp, /var/tmp, /run) are
 * covered instead. Read-only binds pin the worktree's git pointers, /dev/pts is a
 * private devpts instance, and /proc a fresh proc of the run's own PID namespace.
 */
#ifndef CW_MOUNTNS_H
#define CW_MOUNTNS_H
#include <limits.h>
#include <stddef.h>
#include <sys/types.h>

#include "spec.h"

struct mountns_result {
	int	applied;		/* 1: the namespace exists and is private */
	int	overlay;		/* 1: the overlay view (mountns.c) is the root */
	int	ptys;			/* 1: a private devpts backs /dev/pts and /dev/ptmx */
};

/*
 * In a new user namespace, map uid and gid (the runner's, read before the clone) to
 * themselves. Returns 0, or -1 with err naming the file that could not be written.
 */
int	mountns_idmap(uid_t uid, gid_t gid, char *err, size_t errlen);

/*
 * Arrange the view of a mount namespace the caller is already in (made by
 * apply_sandbox's clone), as PID 1 of a new PID namespace: /proc becomes a fresh proc
 * of that namespace. Returns 0, or -1 with err naming the failed step (the caller must
 * not exec).
 */
int	mountns_apply(const struct sandbox_spec *, const char *cwd,
	    struct mountns_result *, char *err, size_t errlen);

#endif
