#define _GNU_SOURCE	/* O_PATH, pipe2, dup3 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proc.h"
#include "procid.h"

/* Rounds of SIGKILL before giving up on a tree that keeps growing. */
#define PROC_KILL_ROUNDS	50

struct proc_entry {
	pid_t			pid;
	unsigned long long	start;
};

int
proc_subreaper(void)
{
	return prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
}


/* Every live descendant of ours, by walking all of /proc (zombies are not listed). */
static int
proc_descendants_scan(struct proc_entry **out, size_t *nout)
{
	struct all {
		pid_t			pid, ppid;
		unsigned long long	start;
		char			state;
		int			mine;
	}		*all = NULL, *na;
	size_t		 n = 0, cap = 0, k = 0;
	DIR		*d;
	struct dirent	*de;
	struct procid	 id;
	pid_t		 self = getpid();
	int		 changed;

	*out = NULL;
	*nout = 0;
	if ((d = opendir("/proc")) == NULL)
		return -1;
	while ((de = readdir(d)) != NULL) {
		char	*end;
		long	 pid = strtol(de->d_name, &end, 10);

		if (*end != '\0' || pid <= 0)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			if ((na = realloc(all, cap * sizeof *all)) == NULL) {
				free(all);
				closedir(d);
				return -1;
			}
			all = na;
		}
		if (procid_stat((pid_t)pid, &id) == -1)
			continue;
		all[n].start = id.start;
		all[n].ppid = id.ppid;
		all[n].state = id.state;
		all[n].pid = (pid_t)pid;
		all[n].mine = 0;
		n++;
	}
	closedir(d);
	/* Mark the tree under us: repeat until no parent link adds a process. */
	do {
		changed = 0;
		for (size_t i = 0; i < n; i++) {
			if (all[i].mine)
				continue;
			if (all[i].ppid == self) {
				all[i].mine = changed = 1;
				continue;
			}
			for (size_t j = 0; j < n; j++)
				if (all[j].mine && all[j].pid == all[i].ppid) {
					all[i].mine = changed = 1;
					break;
				}
		}
	} while (changed);
	for (size_t i = 0; i < n; i++)
		if (all[i].mine && all[i].state != 'Z')
			k++;
	if (k > 0 && (*out = calloc(k, sizeof **out)) == NULL) {
		free(all);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		if (all[i].mine && all[i].state != 'Z') {
			(*out)[*nout].pid = all[i].pid;
			(*out)[*nout].start = all[i].start;
			(*nout)++;
		}
	free(all);
	return 0;
}

/* Append the children of every thread of pid (from /proc/<pid>/task/<tid>/children). */
static int
proc_children(pid_t pid, pid_t **kids, size_t *n, size_t *cap)
{
	char		 path[96], buf[4096];
	DIR		*d;
	struct dirent	*de;

	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	if ((d = opendir(path)) == NULL)
		return errno == ENOENT ? 0 : -1;
	while ((de = readdir(d)) != NULL) {
		char	*p, *end;
		ssize_t	 len;
		int	 fd;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "/proc/%d/task/%.16s/children", (int)pid,
		    de->d_name);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
			continue;
		len = read(fd, buf, sizeof buf - 1);
		close(fd);
		if (len <= 0)
			continue;
		buf[len] = '\0';
		for (p = buf; ; p = end) {
			long	 c = strtol(p, &end, 10);

			if (end == p)
				break;
			if (*n == *cap) {
				pid_t	*nk;

				*cap = *cap ? *cap * 2 : 64;
				if ((nk = realloc(*kids, *cap * sizeof *nk)) == NULL) {
					closedir(d);
					return -1;
				}
				*kids = nk;
			}
			(*kids)[(*n)++] = (pid_t)c;
		}
	}
	closedir(d);
	return 0;
}

/*
 * Every live descendant of ours, walking down the children lists from ourselves: as
 * subreaper, orphans of the tree are our children. Much cheaper than reading every
 * process in /proc; falls back to that where the kernel lacks the children files.
 */
static int
proc_descendants(struct proc_entry **out, size_t *nout)
{
	pid_t		*kids = NULL;
	size_t		 n = 0, cap = 0, k = 0;
	char		 path[64];
	struct procid	 id;

	snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)getpid(),
	    (int)getpid());
	if (access(path, R_OK) == -1)
		return proc_descendants_scan(out, nout);
	*out = NULL;
	*nout = 0;
	if (proc_children(getpid(), &kids, &n, &cap) == -1)
		goto fail;
	/* kids grows as the walk goes down: each entry's own children are appended. */
	for (size_t i = 0; i < n; i++)
		if (proc_children(kids[i], &kids, &n, &cap) == -1)
			goto fail;
	if (n > 0 && (*out = calloc(n, sizeof **out)) == NULL)
		goto fail;
	for (size_t i = 0; i < n; i++) {
		if (procid_stat(kids[i], &id) == -1 || id.state == 'Z')
			continue;
		(*out)[k].start = id.start;
		(*out)[k++].pid = kids[i];
	}
	*nout = k;
	free(kids);
	return 0;
fail:
	free(kids);
	free(*out);
	*out = NULL;
	return -1;
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

/* Signal each listed process; wait (on their pidfds) until they exit or ms pass. */
static int
proc_signal_all(const struct proc_entry *e, size_t n, int sig, int ms, pid_t main,
    int *main_status, int *main_reaped)
{
	struct pollfd	*pfd;
	size_t		 live = 0;
	long long	 deadline = proc_now_ms() + ms;
	int		 sent = 0;

	if ((pfd = calloc(n ? n : 1, sizeof *pfd)) == NULL)
		return -1;
	for (size_t i = 0; i < n; i++) {
		int	 fd = procid_pidfd(e[i].pid, e[i].start);

		if (fd == -1)
			continue;
		if (procid_send(fd, sig) == 0)
			sent++;
		pfd[live].fd = fd;
		pfd[live].events = POLLIN;
		live++;
	}
	/* A pidfd polls readable once its process has exited. */
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
	return sent;
}

int
proc_kill_tree(int grace_ms, pid_t main, int *main_status, int *main_reaped, char *err,
    size_t errlen)
{
	struct proc_entry	*e;
	size_t			 n;
	int			 total = 0, sent, dummy_st = 0, dummy_r = 0;

	if (main_status == NULL)
		main_status = &dummy_st;
	if (main_reaped == NULL)
		main_reaped = &dummy_r;
	if (proc_descendants(&e, &n) == -1) {
		snprintf(err, errlen, "list descendants: %s", strerror(errno));
		return -1;
	}
	if (n > 0) {
		sent = proc_signal_all(e, n, SIGTERM, grace_ms, main, main_status,
		    main_reaped);
		total += sent > 0 ? sent : 0;
	}
	free(e);
	/* Whatever survived, and whatever was forked meanwhile, gets SIGKILL. */
	for (int round = 0; round < PROC_KILL_ROUNDS; round++) {
		proc_reap(main, main_status, main_reaped);
		if (proc_descendants(&e, &n) == -1) {
			snprintf(err, errlen, "list descendants: %s", strerror(errno));
			return -1;
		}
		if (n == 0) {
			free(e);
			return total;
		}
		sent = proc_signal_all(e, n, SIGKILL, 1000, main, main_status, main_reaped);
		total += sent > 0 ? sent : 0;
		free(e);
	}
	snprintf(err, errlen, "descendants still alive after %d SIGKILL rounds",
	    PROC_KILL_ROUNDS);
	errno = EAGAIN;
	return -1;
}
