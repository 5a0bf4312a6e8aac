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
 * is a child subreaper, and the set still names it). Collecting, freezing and killing
 * are the shared process-tree module's (common/proctree.c), which cw-runner uses too.
 */
#define _GNU_SOURCE
#include <sys/types.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"
#include "proctree.h"
#include "supervise.h"

#define SUPERVISE_CGROUP_WAIT_MS	500

/*
 * The daemon's scope for a run: its runner's process group (when > 1) and every
 * descendant of what the set already holds. The runner makes and ends the run's
 * cgroup; the daemon, which may outlive a runner killed hard, works from the tree.
 */
int
supervise_collect(struct proctree *s, pid_t pgid)
{
	struct proctree_scope	 sc = { pgid, 0, NULL };

	return proctree_collect(s, &sc);
}

int
supervise_signal(const struct proctree *s, int sig)
{
	return proctree_signal(s, sig);
}

int
supervise_kill_tree(struct proctree *s, pid_t pgid)
{
	struct proctree_scope	 sc = { pgid, 0, NULL };

	return proctree_kill(s, &sc);
}

/*
 * The run's cgroup, if its runner could not remove it (killed before its cleanup):
 * freeze, kill what is in it, remove it. The daemon's loop waits at most a moment.
 */
int
supervise_cgroup_end(const char *run_id, char *err, size_t errlen)
{
	struct cgroup_run	 cg;
	struct proctree		 t = { 0 };
	struct proctree_scope	 sc = { 0, 0, &cg };
	char			 name[128];
	int			 n;

	err[0] = '\0';
	snprintf(name, sizeof name, "clockwork-run-%s", run_id);
	if (cgroup_run_find(&cg, name) == -1)
		return 0;
	n = proctree_kill(&t, &sc);
	proctree_free(&t);
	if (cgroup_run_remove(&cg, SUPERVISE_CGROUP_WAIT_MS, err, errlen) == -1)
		return -1;
	return n > 0 ? n : 0;
}

/* Our own children (runners and processes that left a run's tree). */
int
supervise_orphans(pid_t self, struct proctree *out)
{
	return proctree_children(out, self);
}

/* Written to a temporary file and renamed, so a crash never leaves half a list. */
int
supervise_save(const struct proctree *s, const char *path)
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
supervise_load(struct proctree *s, const char *path)
{
	FILE			*f;
	int			 pid;
	unsigned long long	 start;

	if ((f = fopen(path, "re")) == NULL)
		return errno == ENOENT ? 0 : -1;
	while (fscanf(f, "%d %llu", &pid, &start) == 2)
		if (pid > 1 && proctree_add(s, pid, start) == -1) {
			fclose(f);
			return -1;
		}
	fclose(f);
	return 0;
}
