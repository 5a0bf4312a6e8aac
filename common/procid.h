/*
 * Process identity, shared by clockworkd and cw-runner: a pid is only a name until its
 * start time (field 22 of /proc/<pid>/stat) says it is still the process recorded. Every
 * signal Clockwork sends goes through a pidfd opened here and checked that way, never to
 * a bare pid that may have been reused.
 */
#ifndef CW_PROCID_H
#define CW_PROCID_H
#include <sys/types.h>

struct procid {
	pid_t			ppid;
	pid_t			pgid;
	char			state;	/* 'R', 'S', 'Z', ... */
	unsigned long long	start;	/* clock ticks since boot */
};

/* Read /proc/<pid>/stat. 0, or -1 with errno (ENOENT/ESRCH gone, EINVAL unparsable). */
int	procid_stat(pid_t pid, struct procid *out);
/*
 * A pidfd for pid, only if it is still the process that started at start (checked
 * after opening: the pidfd pins the process, so the check cannot go stale). -1 with
 * errno ESRCH when pid is gone or now names another process; EINVAL for pid <= 1.
 */
int	procid_pidfd(pid_t pid, unsigned long long start);
/* Send sig through a pidfd (one from procid_pidfd). 0 or -1 with errno. */
int	procid_send(int pidfd, int sig);
/* Send sig to that process through a verified pidfd. 0 or -1 with errno. */
int	procid_signal(pid_t pid, unsigned long long start, int sig);

#endif
