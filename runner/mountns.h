/*
 * The mount-namespace layer: what Landlock (ABI <= 7) cannot say about the filesystem.
 * A named unix socket can be connect()ed wherever Landlock denies reading it; so the
 * root becomes an overlay of the host in which every socket outside the grants refuses
 * connections, with the grants bound back, real, on top (mountns.c explains). Where
 * overlayfs is missing, the places sockets usually live (/tmp, /var/tmp, /run) are
 * covered instead. Read-only binds pin the worktree's git pointers, and /dev/pts is a
 * private devpts instance.
 */
#ifndef CW_MOUNTNS_H
#define CW_MOUNTNS_H
#include <limits.h>
#include <stddef.h>

#include "spec.h"

struct mountns_result {
	int	applied;		/* 1: the namespace exists and is private */
	int	overlay;		/* 1: the overlay view (mountns.c) is the root */
	int	ptys;			/* 1: a private devpts backs /dev/pts and /dev/ptmx */
};

/*
 * Enter a new mount namespace (a user namespace too when not root) and arrange the
 * view. Returns 0 (applied), 1 when this kernel or container will not give us a mount
 * namespace (nothing changed; the caller notes it), or -1 with err naming the failed
 * step once the namespace exists (the caller must not exec).
 */
int	mountns_apply(const struct sandbox_spec *, const char *cwd,
	    struct mountns_result *, char *err, size_t errlen);

#endif
