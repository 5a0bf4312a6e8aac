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
runlimits_apply(const struct runlimits *lim, const char **what)
{
	if (lim->nproc > 0 && runlimits_lower(RLIMIT_NPROC, (rlim_t)lim->nproc) == -1) {
		*what = "RLIMIT_NPROC";
		return -1;
	}
	if (lim->data > 0 && runlimits_lower(RLIMIT_DATA, (rlim_t)lim->data) == -1) {
		*what = "RLIMIT_DATA";
		return -1;
	}
	return 0;
}

/* Threads, RssAnon and RssShmem (kB) from one /proc/<pid>/status. 0 or -1. */
static int
runlimits_status(int dirfd, const char *pid, long *threads, long long *kb)
{
	char	 path[300], buf[4096], *p;
	ssize_t	 n;
	int	 fd;

	snprintf(path, sizeof path, "%s/status", pid);
	if ((fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
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

int
runlimits_usage(pid_t init, long *tasks, long long *resident)
{
	struct stat	 ns, st;
	struct dirent	*de;
	DIR		*d;
	char		 path[300];
	long		 threads;
	long long	 kb;
	int		 dfd;

	*tasks = 0;
	*resident = 0;
	snprintf(path, sizeof path, "/proc/%d/ns/pid", (int)init);
	if (stat(path, &ns) == -1)
		return -1;
	if ((d = opendir("/proc")) == NULL)
		return -1;
	dfd = dirfd(d);
	while ((de = readdir(d)) != NULL) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		/* A process of the run is one in its PID namespace (all of them are). */
		snprintf(path, sizeof path, "%s/ns/pid", de->d_name);
		if (fstatat(dfd, path, &st, 0) == -1 || st.st_ino != ns.st_ino ||
		    st.st_dev != ns.st_dev)
			continue;
		if (runlimits_status(dfd, de->d_name, &threads, &kb) == -1)
			continue;	/* gone meanwhile */
		*tasks += threads;
		*resident += kb * 1024;
	}
	closedir(d);
	return 0;
}
