#define _GNU_SOURCE	/* reallocarray */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "procid.h"
#include "proctree.h"

/* Rounds of stop-and-look before a tree that keeps growing is killed as it stands. */
#define PROCTREE_FREEZE_ROUNDS	64

struct proctree_snap {
	pid_t			pid, ppid, pgid;
	unsigned long long	start;
};

int
proctree_add(struct proctree *t, pid_t pid, unsigned long long start)
{
	struct proctree_proc	*nv;

	if (proctree_has(t, pid, start))
		return 0;
	if (t->n == t->cap) {
		size_t	ncap = t->cap ? t->cap * 2 : 16;

		if ((nv = reallocarray(t->v, ncap, sizeof *nv)) == NULL)
			return -1;
		t->v = nv;
		t->cap = ncap;
	}
	t->v[t->n].pid = pid;
	t->v[t->n].start = start;
	t->n++;
	return 1;
}

int
proctree_has(const struct proctree *t, pid_t pid, unsigned long long start)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].pid == pid && t->v[i].start == start)
			return 1;
	return 0;
}

void
proctree_free(struct proctree *t)
{
	free(t->v);
	t->v = NULL;
	t->n = t->cap = 0;
}

/* Every live (non-zombie) process, with its parent, group and start time. */
static int
proctree_snapshot(struct proctree_snap **out, size_t *nout)
{
	DIR			*dir;
	struct dirent		*de;
	struct proctree_snap	*v = NULL, *nv;
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

int
proctree_collect(struct proctree *t, const struct proctree_scope *sc)
{
	struct proctree_snap	*snap;
	pid_t			*cgp = NULL;
	size_t			 n, ncg = 0;
	pid_t			 pgid = sc->pgid;
	int			 added, any;

	if (sc->cgroup != NULL && cgroup_run_pids(sc->cgroup, &cgp, &ncg) == -1)
		return -1;
	if (proctree_snapshot(&snap, &n) == -1) {
		free(cgp);
		return -1;
	}
	/*
	 * A group outlives its leader, and its id cannot be reused while it has members;
	 * but once it is empty a new process may get that number. A live process whose
	 * pid is pgid and which is not ours means the number is a stranger's now.
	 */
	for (size_t i = 0; pgid > 1 && i < n; i++)
		if (snap[i].pid == pgid && !proctree_has(t, snap[i].pid, snap[i].start))
			pgid = 0;
	do {
		added = 0;
		for (size_t i = 0; i < n; i++) {
			if (proctree_has(t, snap[i].pid, snap[i].start))
				continue;
			any = (pgid > 1 && snap[i].pgid == pgid) ||
			    (sc->parent > 0 && snap[i].ppid == sc->parent);
			for (size_t j = 0; !any && j < ncg; j++)
				any = cgp[j] == snap[i].pid;
			for (size_t j = 0; !any && j < n; j++)
				if (snap[j].pid == snap[i].ppid &&
				    proctree_has(t, snap[j].pid, snap[j].start))
					any = 1;
			if (any) {
				if (proctree_add(t, snap[i].pid, snap[i].start) == -1) {
					free(snap);
					free(cgp);
					return -1;
				}
				added = 1;
			}
		}
	} while (added);
	free(snap);
	free(cgp);
	return 0;
}

int
proctree_children(struct proctree *t, pid_t parent)
{
	struct proctree_snap	*snap;
	size_t			 n;

	if (proctree_snapshot(&snap, &n) == -1)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (snap[i].ppid == parent &&
		    proctree_add(t, snap[i].pid, snap[i].start) == -1) {
			free(snap);
			return -1;
		}
	free(snap);
	return 0;
}

int
proctree_signal(const struct proctree *t, int sig)
{
	int	count = 0;

	for (size_t i = 0; i < t->n; i++)
		if (procid_signal(t->v[i].pid, t->v[i].start, sig) == 0)
			count++;
	return count;
}

size_t
proctree_alive(const struct proctree *t)
{
	struct procid	 id;
	size_t		 alive = 0;

	for (size_t i = 0; i < t->n; i++)
		if (procid_stat(t->v[i].pid, &id) == 0 && id.start == t->v[i].start &&
		    id.state != 'Z')
			alive++;
	return alive;
}

int
proctree_kill(struct proctree *t, const struct proctree_scope *sc)
{
	size_t	before;
	int	rounds = 0, frozen = 0, sent;

	/* Freeze: the cgroup at once where there is one, else stop, look again. */
	if (sc->cgroup != NULL && cgroup_run_freeze(sc->cgroup, 1) == 0)
		frozen = 1;
	do {
		before = t->n;
		if (proctree_collect(t, sc) == -1) {
			if (frozen)
				(void)cgroup_run_freeze(sc->cgroup, 0);
			return -1;
		}
		if (!frozen)
			proctree_signal(t, SIGSTOP);
	} while (t->n != before && ++rounds < PROCTREE_FREEZE_ROUNDS);
	sent = proctree_signal(t, SIGKILL);
	/* A frozen task dies of SIGKILL only once it runs again. */
	if (frozen)
		(void)cgroup_run_freeze(sc->cgroup, 0);
	return sent;
}

int
proctree_stop(struct proctree *t, const struct proctree_scope *sc)
{
	size_t	before;
	int	rounds = 0;

	/* A stopped process cannot fork: stop what is known, look again, until still. */
	do {
		before = t->n;
		if (proctree_collect(t, sc) == -1)
			return -1;
		proctree_signal(t, SIGSTOP);
	} while (t->n != before && ++rounds < PROCTREE_FREEZE_ROUNDS);
	return (int)proctree_alive(t);
}
