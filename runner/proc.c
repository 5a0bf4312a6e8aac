#define _GNU_SOURCE	/* pipe2 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proc.h"
#include "procid.h"
#include "proctree.h"

/* Rounds of freeze-and-kill before giving up on a tree that keeps growing. */
#define PROC_KILL_ROUNDS	50
/* How long a round waits for killed processes to be gone. */
#define PROC_KILL_WAIT_MS	1000

int
proc_subreaper(void)
{
	return prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
}

/* Reap every child that has exited, keeping main's status. */
static void
proc_reap(pid_t main, int *main_status, int *main_reaped)
{
	pid_t	 p;
	int	 st;

	while ((p = waitpid(-1, &st, WNOHANG)) > 0)
		if (main > 0 && p == main) {
			*main_status = st;
			*main_reaped = 1;
		}
}

static long long
proc_now_ms(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Wait until no member of t is alive (exited and reaped, or a zombie about to be),
 * or ms pass, reaping as we go. The members' pidfds poll readable once they exit.
 */
static void
proc_wait_gone(const struct proctree *t, int ms, pid_t main, int *main_status,
    int *main_reaped)
{
	struct pollfd	*pfd;
	size_t		 live = 0;
	long long	 deadline = proc_now_ms() + ms;

	if ((pfd = calloc(t->n ? t->n : 1, sizeof *pfd)) == NULL)
		return;
	for (size_t i = 0; i < t->n; i++) {
		int	 fd = procid_pidfd(t->v[i].pid, t->v[i].start);

		if (fd == -1)
			continue;
		pfd[live].fd = fd;
		pfd[live].events = POLLIN;
		live++;
	}
	for (;;) {
		long long	 left = deadline - proc_now_ms();
		size_t		 open = 0;

		proc_reap(main, main_status, main_reaped);
		for (size_t i = 0; i < live; i++) {
			if (pfd[i].fd >= 0 && (pfd[i].revents & (POLLIN | POLLHUP))) {
				close(pfd[i].fd);
				pfd[i].fd = -1;
			}
			if (pfd[i].fd >= 0)
				open++;
			pfd[i].revents = 0;
		}
		if (open == 0 || left <= 0)
			break;
		if (poll(pfd, live, left > 50 ? 50 : (int)left) == -1 && errno != EINTR)
			break;
	}
	for (size_t i = 0; i < live; i++)
		if (pfd[i].fd >= 0)
			close(pfd[i].fd);
	free(pfd);
	proc_reap(main, main_status, main_reaped);
}

int
proc_kill_tree(int grace_ms, pid_t main, int *main_status, int *main_reaped,
    const struct cgroup_run *cg, size_t *survivors, char *err, size_t errlen)
{
	struct proctree		 t = { 0 };
	struct proctree_scope	 sc = { 0, getpid(), cg };
	size_t			 left = 0;
	int			 total = 0, sent, dummy_st = 0, dummy_r = 0;

	if (main_status == NULL)
		main_status = &dummy_st;
	if (main_reaped == NULL)
		main_reaped = &dummy_r;
	if (survivors != NULL)
		*survivors = 0;
	if (cg != NULL && cg->version == 0)
		sc.cgroup = NULL;
	/* First a chance to end cleanly: SIGTERM to everything, and the grace period. */
	if (proctree_collect(&t, &sc) == -1)
		goto fail;
	if (proctree_alive(&t) > 0) {
		sent = proctree_signal(&t, SIGTERM);
		total += sent > 0 ? sent : 0;
		proc_wait_gone(&t, grace_ms, main, main_status, main_reaped);
	}
	/*
	 * Whatever survived, and whatever was forked meanwhile: freeze (the cgroup where
	 * there is one, SIGSTOP otherwise), kill, look again.
	 */
	for (int round = 0; round < PROC_KILL_ROUNDS; round++) {
		proc_reap(main, main_status, main_reaped);
		if (proctree_collect(&t, &sc) == -1)
			goto fail;
		if ((left = proctree_alive(&t)) == 0) {
			proctree_free(&t);
			return total;
		}
		if ((sent = proctree_kill(&t, &sc)) == -1)
			goto fail;
		total += sent;
		proc_wait_gone(&t, PROC_KILL_WAIT_MS, main, main_status, main_reaped);
	}
	left = proctree_alive(&t);
	proctree_free(&t);
	if (left == 0)
		return total;
	if (survivors != NULL)
		*survivors = left;
	snprintf(err, errlen, "%zu process%s of the run still alive after %d kill rounds",
	    left, left == 1 ? "" : "es", PROC_KILL_ROUNDS);
	errno = EAGAIN;
	return -1;
fail:
	snprintf(err, errlen, "list the run's processes: %s", strerror(errno));
	left = proctree_alive(&t);
	proctree_free(&t);
	/* Not knowing the tree, assume something of it survives. */
	if (survivors != NULL)
		*survivors = left > 0 ? left : 1;
	return -1;
}
