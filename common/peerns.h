/*
 * Is the peer of a unix socket in our own PID namespace? clockworkd serves its control
 * socket only to processes that share its PID namespace: every run has a PID namespace
 * of its own (SPEC G3), so a run that reaches the socket anyway (through a path its view
 * should not have, after a daemon restart, by a descriptor passed in) is still refused.
 * The mount view keeps the socket out of reach; this is the layer behind it.
 */
#ifndef CW_PEERNS_H
#define CW_PEERNS_H
#include <sys/types.h>
#include <stddef.h>

/* Our own PID namespace, recorded once at start (peerns_init). */
struct peerns {
	dev_t	dev;
	ino_t	ino;
};

/* Record /proc/self/ns/pid. 0, or -1 with errno (no /proc: nothing can be checked). */
int	peerns_init(struct peerns *self);
/*
 * 0 when the process at the other end of the connected unix socket fd, whose
 * SO_PEERCRED pid is pid, lives in self's PID namespace. -1 otherwise, with why filled:
 * pid 0 (the peer is in a namespace we cannot see), a /proc/<pid>/ns/pid that cannot be
 * read, another namespace, or a peer that exited (its pid may already name another
 * process). Where the kernel has SO_PEERPIDFD (Linux 6.5) the peer is pinned by a pidfd
 * across the check, so a pid reused in between cannot pass for it.
 */
int	peerns_check(const struct peerns *self, int fd, pid_t pid, char *why,
	    size_t whylen);

#endif
