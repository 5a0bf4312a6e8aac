/*
 * Process identity and identity-verified kills (SPEC D3, D4).
 *
 * A pid alone is not an identity: it is recycled. Every process we act on is named by
 * its pid and its start time (field 22 of /proc/<pid>/stat), and every signal goes
 * through a pidfd opened and then checked against that start time, so a signal can
 * never reach a process that merely inherited a number.
 *
 * A run's processes are its runner's process group, every descendant of the runner,
 * and everything seen in the run before (a process that called setsid() leaves the
 * group but not the tree; once its parent dies it is re-parented to clockworkd, which
 * is a child subreaper, and the set still names it). Killing a tree first stops every
 * member with SIGSTOP, re-collecting until no new process appears (a stopped process
 * cannot fork), then sends SIGKILL: so no child escapes between the scan and the kill.
 */
#define _GNU_SOURCE
#include <sys/syscall.h>
#include <sys/types.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "procid.h"

struct supervise_snap {
	pid_t			pid, ppid, pgid;
	unsigned long long	start;
};

int
supervise_set_add(struct supervise_set *s, pid_t pid, unsigned long long start)
{
	struct supervise_proc	*nv;

	if (supervise_set_has(s, pid, start))
		return 0;
	if (s->n == s->cap) {
		size_t	ncap = s->cap ? s->cap * 2 : 16;

		if ((nv = reallocarray(s->v, ncap, sizeof *nv)) == NULL)
			return -1;
		s->v = nv;
		s->cap = ncap;
	}
	s->v[s->n].pid = pid;
	s->v[s->n].start = start;
	s->n++;
	return 1;
}

int
supervise_set_has(const struct supervise_set *s, pid_t pid, unsigned long long start)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].pid == pid && s->v[i].start == start)
			return 1;
	return 0;
}

void
supervise_set_free(struct supervise_set *s)
{
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
}

static int
supervise_snapshot(struct supervise_snap **out, size_t *nout)
{
	DIR			*dir;
	struct dirent		*de;
	struct supervise_snap	*v = NULL, *nv;
	size_t			 n = 0, cap = 0;
	struct procid		 id;
	char			*end;
	long			 pid;

	if ((dir = opendir("/proc")) == NULL)
		return -1;
	while ((de = readdir(dir)) != NULL) {
		pid = strtol(de->d_name, &end, 10);
		if (*end != '\0' || pid <= 0)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			if ((nv = reallocarray(v, cap, sizeof *v)) == NULL) {
				free(v);
				closedir(dir);
				return -1;
			}
			v = nv;
		}
		if (procid_stat((pid_t)pid, &id) == 0 && id.state != 'Z') {
			v[n].pid = (pid_t)pid;
			v[n].ppid = id.ppid;
			v[n].pgid = id.pgid;
			v[n].start = id.start;
			n++;
		}
	}
	closedir(dir);
	*out = v;
	*nout = n;
	return 0;
}

/*
 * Grow s to a fixed point: members of pgid (when > 1), and children of members.
 * Members that died stay in the set (their ids cannot match anything new).
 */
int
supervise_collect(struct supervise_set *s, pid_t pgid)
{
	struct supervise_snap	*snap;
	size_t			 n;
	int			 added, any;

	if (supervise_snapshot(&snap, &n) == -1)
		return -1;
	/*
	 * A group outlives its leader, and its id cannot be reused while it has members;
	 * but once it is empty a new process may get that number. A live process whose
	 * pid is pgid and which is not ours means the number is a stranger's now.
	 */
	for (size_t i = 0; pgid > 1 && i < n; i++)
		if (snap[i].pid == pgid && !supervise_set_has(s, snap[i].pid, snap[i].start))
			pgid = 0;
	do {
		added = 0;
		for (size_t i = 0; i < n; i++) {
			if (supervise_set_has(s, snap[i].pid, snap[i].start))
				continue;
			any = pgid > 1 && snap[i].pgid == pgid;
			for (size_t j = 0; !any && j < n; j++)
				if (snap[j].pid == snap[i].ppid &&
				    supervise_set_has(s, snap[j].pid, snap[j].start))
					any = 1;
			if (any) {
				if (supervise_set_add(s, snap[i].pid, snap[i].start) == -1) {
					free(snap);
					return -1;
				}
				added = 1;
			}
		}
	} while (added);
	free(snap);
	return 0;
}

int
supervise_signal(const struct supervise_set *s, int sig)
{
	int	count = 0;

	for (size_t i = 0; i < s->n; i++)
		if (procid_signal(s->v[i].pid, s->v[i].start, sig) == 0)
			count++;
	return count;
}

int
supervise_kill_tree(struct supervise_set *s, pid_t pgid)
{
	size_t	before;
	int	rounds = 0;

	/* Freeze: stop everything, look again, until a look finds nothing new. */
	do {
		before = s->n;
		if (supervise_collect(s, pgid) == -1)
			return -1;
		supervise_signal(s, SIGSTOP);
	} while (s->n != before && ++rounds < 64);
	return supervise_signal(s, SIGKILL);
}

/* Our own children that are not runners: processes that left a run's tree. */
int
supervise_orphans(pid_t self, struct supervise_set *out)
{
	struct supervise_snap	*snap;
	size_t			 n;

	if (supervise_snapshot(&snap, &n) == -1)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (snap[i].ppid == self && supervise_set_add(out, snap[i].pid,
		    snap[i].start) == -1) {
			free(snap);
			return -1;
		}
	free(snap);
	return 0;
}

/* Written to a temporary file and renamed, so a crash never leaves half a list. */
int
supervise_save(const struct supervise_set *s, const char *path)
{
	char	 tmp[PATH_MAX];
	FILE	*f;
	int	 fd;

	if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp", path) >= sizeof tmp) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) == -1)
		return -1;
	if ((f = fdopen(fd, "w")) == NULL) {
		close(fd);
		return -1;
	}
	for (size_t i = 0; i < s->n; i++)
		fprintf(f, "%d %llu\n", (int)s->v[i].pid, s->v[i].start);
	if (fflush(f) != 0 || fsync(fileno(f)) == -1) {
		fclose(f);
		unlink(tmp);
		return -1;
	}
	fclose(f);
	return rename(tmp, path);
}

int
supervise_load(struct supervise_set *s, const char *path)
{
	FILE			*f;
	int			 pid;
	unsigned long long	 start;

	if ((f = fopen(path, "re")) == NULL)
		return errno == ENOENT ? 0 : -1;
	while (fscanf(f, "%d %llu", &pid, &start) == 2)
		if (pid > 1 && supervise_set_add(s, pid, start) == -1) {
			fclose(f);
			return -1;
		}
	fclose(f);
	return 0;
}
