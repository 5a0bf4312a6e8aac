#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "runlimits.h"

int
runlimits_nproc_per_userns(void)
{
	struct utsname	 u;
	unsigned long	 major, minor;
	char		*end;

	if (uname(&u) == -1)
		return 0;
	major = strtoul(u.release, &end, 10);
	if (*end != '.')
		return 0;
	minor = strtoul(end + 1, NULL, 10);
	/* Linux 5.14 moved RLIMIT_NPROC to per-user-namespace ucounts. */
	return major > 5 || (major == 5 && minor >= 14);
}

/* Lower resource res to max, soft and hard; a stricter limit already there stays. */
static int
runlimits_lower(int res, rlim_t max)
{
	struct rlimit	 rl;

	if (getrlimit(res, &rl) == -1)
		return -1;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < max)
		max = rl.rlim_max;
	rl.rlim_cur = rl.rlim_max = max;
	return setrlimit(res, &rl);
}

int
runlimits_apply(const struct runlimits *lim, int which, const char **what)
{
	if ((which & RUNLIMITS_NPROC) && lim->nproc > 0 &&
	    runlimits_lower(RLIMIT_NPROC, (rlim_t)lim->nproc) == -1) {
		*what = "RLIMIT_NPROC";
		return -1;
	}
	if ((which & RUNLIMITS_DATA) && lim->data > 0 &&
	    runlimits_lower(RLIMIT_DATA, (rlim_t)lim->data) == -1) {
		*what = "RLIMIT_DATA";
		return -1;
	}
	return 0;
}

/* The start of /proc/<pid>/<name> (dirfd: /proc), NUL-terminated. Its length or -1. */
static ssize_t
runlimits_read(int dirfd, const char *pid, const char *name, char *buf, size_t size)
{
	char	 path[300];
	ssize_t	 n;
	int	 fd;

	snprintf(path, sizeof path, "%s/%s", pid, name);
	if ((fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return n;
}

/* Threads, RssAnon and RssShmem (kB) from one /proc/<pid>/status. 0 or -1. */
static int
runlimits_status(int dirfd, const char *pid, long *threads, long long *kb)
{
	char	 buf[4096], *p;

	if (runlimits_read(dirfd, pid, "status", buf, sizeof buf) == -1)
		return -1;
	*threads = 1;
	*kb = 0;
	for (p = buf; p != NULL && *p != '\0'; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, "Threads:", 8) == 0)
			*threads = strtol(p + 8, NULL, 10);
		else if (strncmp(p, "RssAnon:", 8) == 0 || strncmp(p, "RssShmem:", 9) == 0)
			*kb += strtoll(p + (p[3] == 'A' ? 8 : 9), NULL, 10);
	}
	return 0;
}

/* The parent of one process, from /proc/<pid>/stat (after the command's ")"). */
static pid_t
runlimits_ppid(int dirfd, const char *pid)
{
	char	 buf[512], *p;

	if (runlimits_read(dirfd, pid, "stat", buf, sizeof buf) == -1)
		return -1;
	if ((p = strrchr(buf, ')')) == NULL || p[1] != ' ' || p[2] == '\0' || p[3] != ' ')
		return -1;
	return (pid_t)strtol(p + 4, NULL, 10);
}

/* The index of pid p in the list, or -1 (a linear look: the list is a few hundred). */
static ssize_t
runlimits_find(const pid_t *pid, size_t n, pid_t p)
{
	for (size_t i = 0; i < n; i++)
		if (pid[i] == p)
			return (ssize_t)i;
	return -1;
}

/*
 * Decide in[i]: 1 for a descendant of init (or init), 2 for not. 0 is undecided.
 * depth bounds the walk (a pid reused into a cycle between two scans). 0 or -1.
 */
static int
runlimits_member(const pid_t *pid, const pid_t *ppid, char *in, size_t n, size_t i,
    int depth)
{
	ssize_t	 j;

	if (in[i] != 0)
		return 0;
	if (depth > 4096 || ppid[i] <= 1 || (j = runlimits_find(pid, n, ppid[i])) == -1) {
		in[i] = 2;
		return 0;
	}
	if (runlimits_member(pid, ppid, in, n, (size_t)j, depth + 1) == -1)
		return -1;
	in[i] = in[j];
	return 0;
}

/*
 * The run's processes are init's descendants: in the run's PID namespace an orphan is
 * adopted by init (its PID 1), never by anything outside, so following parents finds
 * all of them. (init's own ns/pid cannot be compared: it never execs, so it is not
 * dumpable to the runner once it is in the run's user namespace.)
 */
int
runlimits_usage(pid_t init, long *tasks, long long *resident)
{
	struct dirent	*de;
	DIR		*d;
	pid_t		*pid = NULL, *ppid = NULL, *np;
	char		*in = NULL, *ni, name[32];
	size_t		 n = 0, cap = 0, i;
	long		 threads;
	long long	 kb;
	int		 dfd, rc = -1;

	*tasks = 0;
	*resident = 0;
	if ((d = opendir("/proc")) == NULL)
		return -1;
	dfd = dirfd(d);
	while ((de = readdir(d)) != NULL) {
		pid_t	 pp;

		if (!isdigit((unsigned char)de->d_name[0]) ||
		    (pp = runlimits_ppid(dfd, de->d_name)) == -1)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 512;
			if ((np = reallocarray(pid, cap, sizeof *pid)) == NULL)
				goto out;
			pid = np;
			if ((np = reallocarray(ppid, cap, sizeof *ppid)) == NULL)
				goto out;
			ppid = np;
			if ((ni = realloc(in, cap)) == NULL)
				goto out;
			in = ni;
		}
		pid[n] = (pid_t)strtol(de->d_name, NULL, 10);
		ppid[n] = pp;
		in[n] = pid[n] == init ? 1 : 0;
		n++;
	}
	/* Which are init's descendants: walk each one's parents, remembering answers. */
	for (i = 0; i < n; i++)
		if (runlimits_member(pid, ppid, in, n, i, 0) == -1)
			goto out;
	for (i = 0; i < n; i++) {
		if (in[i] != 1)
			continue;
		snprintf(name, sizeof name, "%d", (int)pid[i]);
		if (runlimits_status(dfd, name, &threads, &kb) == -1)
			continue;	/* gone meanwhile */
		*tasks += threads;
		*resident += kb * 1024;
	}
	rc = 0;
out:
	closedir(d);
	free(pid);
	free(ppid);
	free(in);
	return rc;
}
