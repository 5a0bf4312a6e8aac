#define _GNU_SOURCE	/* O_PATH */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"
#include "paths.h"

#define CGROUP_FREEZE_MS	2000	/* how long a freeze may take to settle */

static const char *const cgroup_v1_names[CGROUP_NCTL] = { "pids", "memory", "freezer" };

void
cgroup_run_init(struct cgroup_run *cg)
{
	memset(cg, 0, sizeof *cg);
	for (int i = 0; i < CGROUP_NCTL; i++)
		cg->procs[i] = -1;
}

/* 1 when the comma- or space-separated list holds word. */
static int
cgroup_has_word(const char *list, const char *word, const char *seps)
{
	size_t	 len = strlen(word);

	for (const char *p = list; *p != '\0'; ) {
		size_t	 n = strcspn(p, seps);

		if (n == len && strncmp(p, word, len) == 0)
			return 1;
		p += n;
		p += strspn(p, seps);
	}
	return 0;
}

/* Read a small control file into buf. 0 or -1 (errno). */
static int
cgroup_read(const char *dir, const char *file, char *buf, size_t len)
{
	char	 path[PATH_MAX];
	ssize_t	 n;
	int	 fd;

	if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, file) >= sizeof path) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

/* Write text to a control file (one write: the kernel parses each write whole). */
static int
cgroup_write(const char *dir, const char *file, const char *text)
{
	char	 path[PATH_MAX];

	if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, file) >= sizeof path) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return paths_write_control(path, text);
}

/* The value of key in a keyed file ("key value" lines), or -1 when absent. */
static long long
cgroup_key(const char *dir, const char *file, const char *key)
{
	char	 buf[4096], *line, *save = NULL;
	size_t	 klen = strlen(key);

	if (dir[0] == '\0' || cgroup_read(dir, file, buf, sizeof buf) == -1)
		return -1;
	for (line = strtok_r(buf, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save))
		if (strncmp(line, key, klen) == 0 && line[klen] == ' ')
			return strtoll(line + klen + 1, NULL, 10);
	return -1;
}

/*
 * Where the hierarchy holding ctl (NULL: the cgroup v2 one) is mounted, from
 * /proc/self/mountinfo, and the cgroup path its mount root stands for.
 */
static int
cgroup_mount(const char *ctl, char *mnt, size_t mlen, char *root, size_t rlen)
{
	FILE	*f;
	char	*line = NULL, *fld[12], *dash, *p, *save;
	size_t	 cap = 0;
	int	 found = -1;

	if ((f = fopen("/proc/self/mountinfo", "re")) == NULL)
		return -1;
	while (found == -1 && getline(&line, &cap, f) != -1) {
		int	 n = 0;

		line[strcspn(line, "\n")] = '\0';
		if ((dash = strstr(line, " - ")) == NULL)
			continue;
		*dash = '\0';
		save = NULL;
		for (p = strtok_r(line, " ", &save); p != NULL && n < 5;
		    p = strtok_r(NULL, " ", &save))
			fld[n++] = p;
		if (n < 5)
			continue;
		save = NULL;
		n = 5;
		for (p = strtok_r(dash + 3, " ", &save); p != NULL && n < 8;
		    p = strtok_r(NULL, " ", &save))
			fld[n++] = p;
		if (n < 8)
			continue;
		/* fld[3] root, fld[4] mount point, fld[5] type, fld[7] super options */
		if (ctl == NULL ? strcmp(fld[5], "cgroup2") != 0 :
		    strcmp(fld[5], "cgroup") != 0 || !cgroup_has_word(fld[7], ctl, ","))
			continue;
		/* Mount points with spaces come escaped (\040): not ours to guess at. */
		if (strchr(fld[4], '\\') != NULL)
			continue;
		snprintf(mnt, mlen, "%s", fld[4]);
		snprintf(root, rlen, "%s", fld[3]);
		found = 0;
	}
	free(line);
	fclose(f);
	if (found == -1)
		errno = ENOENT;
	return found;
}

/* Our own cgroup in the hierarchy holding ctl (NULL: v2), from /proc/self/cgroup. */
static int
cgroup_self(const char *ctl, char *path, size_t len)
{
	FILE	*f;
	char	*line = NULL, *c1, *c2;
	size_t	 cap = 0;
	int	 found = -1;

	if ((f = fopen("/proc/self/cgroup", "re")) == NULL)
		return -1;
	while (found == -1 && getline(&line, &cap, f) != -1) {
		line[strcspn(line, "\n")] = '\0';
		if ((c1 = strchr(line, ':')) == NULL || (c2 = strchr(c1 + 1, ':')) == NULL)
			continue;
		*c2 = '\0';
		if (ctl == NULL ? strcmp(line, "0:") != 0 || c1[1] != '\0' :
		    !cgroup_has_word(c1 + 1, ctl, ","))
			continue;
		snprintf(path, len, "%s", c2 + 1);
		found = 0;
	}
	free(line);
	fclose(f);
	if (found == -1)
		errno = ENOENT;
	return found;
}

/* The directory of our own cgroup for ctl (NULL: v2), under its mount point. */
static int
cgroup_self_dir(const char *ctl, char *dir, size_t len)
{
	char	 mnt[PATH_MAX], root[PATH_MAX], own[PATH_MAX];
	size_t	 rl;

	if (cgroup_mount(ctl, mnt, sizeof mnt, root, sizeof root) == -1 ||
	    cgroup_self(ctl, own, sizeof own) == -1)
		return -1;
	/* In a cgroup namespace or a bind mount the mount's root is a prefix of ours. */
	rl = strcmp(root, "/") == 0 ? 0 : strlen(root);
	if (rl > 0 && (strncmp(own, root, rl) != 0 || (own[rl] != '/' && own[rl] != '\0'))) {
		errno = ENOENT;
		return -1;
	}
	if ((size_t)snprintf(dir, len, "%s%s", mnt, strcmp(own + rl, "/") == 0 ? "" :
	    own + rl) >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

/* mkdir dir/name into out, and open its cgroup.procs for joining. */
static int
cgroup_make(const char *parent, const char *name, char *out, size_t len, int *procs)
{
	char	 path[PATH_MAX];

	if ((size_t)snprintf(out, len, "%s/%s", parent, name) >= len ||
	    (size_t)snprintf(path, sizeof path, "%s/cgroup.procs", out) >= sizeof path) {
		out[0] = '\0';
		errno = ENAMETOOLONG;
		return -1;
	}
	if (mkdir(out, 0755) == -1 && errno != EEXIST) {
		out[0] = '\0';
		return -1;
	}
	if ((*procs = open(path, O_WRONLY | O_CLOEXEC)) == -1) {
		int	 save = errno;

		rmdir(out);
		out[0] = '\0';
		errno = save;
		return -1;
	}
	return 0;
}

static int __attribute__((format(printf, 2, 3)))
cgroup_note(struct strlist *notes, const char *fmt, ...)
{
	char	 buf[PATH_MAX + 512];
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	return strlist_add(notes, buf);
}

/*
 * cgroup v2: a child of the subtree whose cgroup.subtree_control already hands pids
 * and memory down. clockworkd's cgroup_delegate() arranged that for the cgroup above
 * its "daemon" leaf, which the runner inherited; no other cgroup is ours to change.
 */
static int
cgroup_create_v2(struct cgroup_run *cg, const char *name)
{
	char	 own[PATH_MAX], base[PATH_MAX], ctl[512], *slash;

	if (cgroup_self_dir(NULL, own, sizeof own) == -1)
		return -1;
	snprintf(base, sizeof base, "%s", own);
	if ((slash = strrchr(base, '/')) != NULL && strcmp(slash, "/daemon") == 0)
		*slash = '\0';
	if (cgroup_read(base, "cgroup.subtree_control", ctl, sizeof ctl) == -1)
		return -1;
	if (!cgroup_has_word(ctl, "pids", " \n") || !cgroup_has_word(ctl, "memory", " \n")) {
		errno = ENOTSUP;
		return -1;
	}
	if (cgroup_make(base, name, cg->dir[0], sizeof cg->dir[0], &cg->procs[0]) == -1)
		return -1;
	cg->version = 2;
	return 0;
}

int
cgroup_run_create(struct cgroup_run *cg, const char *name, long pids_max,
    long long mem_max, struct strlist *notes)
{
	char	 num[32], parent[PATH_MAX], v2why[256];
	int	 e2, e1[CGROUP_NCTL] = { 0 };

	cgroup_run_init(cg);
	if (cgroup_create_v2(cg, name) == 0) {
		const char	*d = cg->dir[0];

		snprintf(num, sizeof num, "%ld", pids_max);
		if (pids_max > 0 && cgroup_write(d, "pids.max", num) == 0)
			cg->pids_max = pids_max;
		else if (pids_max > 0 && cgroup_note(notes, "processes: cannot set "
		    "pids.max in %s: %s", d, strerror(errno)) == -1)
			return -1;
		snprintf(num, sizeof num, "%lld", mem_max);
		if (mem_max > 0 && cgroup_write(d, "memory.max", num) == 0) {
			cg->mem_max = mem_max;
			/* Swap would let a run go past its limit; one OOM ends the group. */
			(void)cgroup_write(d, "memory.swap.max", "0");
			(void)cgroup_write(d, "memory.oom.group", "1");
		} else if (mem_max > 0 && cgroup_note(notes, "memory: cannot set "
		    "memory.max in %s: %s", d, strerror(errno)) == -1)
			return -1;
		cg->freezer = access(d, F_OK) == 0 &&
		    cgroup_read(d, "cgroup.freeze", num, sizeof num) == 0;
		return 0;
	}
	e2 = errno;
	snprintf(v2why, sizeof v2why, "%s", e2 == ENOTSUP ? "no delegated subtree with the "
	    "pids and memory controllers" : strerror(e2));

	/* cgroup v1: one child of our own cgroup in each hierarchy. */
	for (int i = 0; i < CGROUP_NCTL; i++) {
		if (cgroup_self_dir(cgroup_v1_names[i], parent, sizeof parent) == -1 ||
		    cgroup_make(parent, name, cg->dir[i], sizeof cg->dir[i],
		    &cg->procs[i]) == -1)
			e1[i] = errno;
		else
			cg->version = 1;
	}
	if (cg->version == 0) {
		char	 buf[512];

		snprintf(buf, sizeof buf, "no cgroup for the run (cgroup v2: %s; cgroup "
		    "v1: %s)", v2why, strerror(e1[CGROUP_PIDS]));
		return strlist_add(notes, buf) == -1 ? -1 : (errno = ENOTSUP, -1);
	}
	if (pids_max > 0) {
		snprintf(num, sizeof num, "%ld", pids_max);
		if (cg->dir[CGROUP_PIDS][0] != '\0' &&
		    cgroup_write(cg->dir[CGROUP_PIDS], "pids.max", num) == 0)
			cg->pids_max = pids_max;
		else if (cgroup_note(notes, "processes: no cgroup v1 pids "
		    "controller (%s): %s", cg->dir[CGROUP_PIDS][0] != '\0' ?
		    cg->dir[CGROUP_PIDS] : "not mounted", strerror(cg->dir[CGROUP_PIDS][0] !=
		    '\0' ? errno : e1[CGROUP_PIDS])) == -1)
			return -1;
	}
	if (mem_max > 0) {
		snprintf(num, sizeof num, "%lld", mem_max);
		if (cg->dir[CGROUP_MEMORY][0] != '\0' &&
		    cgroup_write(cg->dir[CGROUP_MEMORY], "memory.limit_in_bytes", num) == 0) {
			cg->mem_max = mem_max;
			/* With swap accounting, memory+swap gets the same ceiling. */
			(void)cgroup_write(cg->dir[CGROUP_MEMORY], "memory.memsw.limit_in_bytes",
			    num);
		} else if (cgroup_note(notes, "memory: no cgroup v1 memory "
		    "controller (%s): %s", cg->dir[CGROUP_MEMORY][0] != '\0' ?
		    cg->dir[CGROUP_MEMORY] : "not mounted", strerror(cg->dir[CGROUP_MEMORY][0] !=
		    '\0' ? errno : e1[CGROUP_MEMORY])) == -1)
			return -1;
	}
	cg->freezer = cg->dir[CGROUP_FREEZER][0] != '\0';
	return 0;
}

int
cgroup_run_find(struct cgroup_run *cg, const char *name)
{
	char		 own[PATH_MAX], base[PATH_MAX], *slash;
	struct stat	 st;

	cgroup_run_init(cg);
	if (cgroup_self_dir(NULL, own, sizeof own) == 0) {
		snprintf(base, sizeof base, "%s", own);
		if ((slash = strrchr(base, '/')) != NULL && strcmp(slash, "/daemon") == 0)
			*slash = '\0';
		if ((size_t)snprintf(cg->dir[0], sizeof cg->dir[0], "%s/%s", base, name) <
		    sizeof cg->dir[0] && stat(cg->dir[0], &st) == 0 && S_ISDIR(st.st_mode)) {
			cg->version = 2;
			cg->freezer = 1;
			return 0;
		}
		cg->dir[0][0] = '\0';
	}
	for (int i = 0; i < CGROUP_NCTL; i++) {
		if (cgroup_self_dir(cgroup_v1_names[i], own, sizeof own) == -1 ||
		    (size_t)snprintf(cg->dir[i], sizeof cg->dir[i], "%s/%s", own, name) >=
		    sizeof cg->dir[i] || stat(cg->dir[i], &st) == -1 || !S_ISDIR(st.st_mode)) {
			cg->dir[i][0] = '\0';
			continue;
		}
		cg->version = 1;
	}
	cg->freezer = cg->version == 1 && cg->dir[CGROUP_FREEZER][0] != '\0';
	return cg->version > 0 ? 0 : (errno = ENOENT, -1);
}

int
cgroup_run_join(const struct cgroup_run *cg)
{
	for (int i = 0; i < CGROUP_NCTL; i++) {
		ssize_t	 n;

		if (cg->procs[i] == -1)
			continue;
		/* "0" is the writer itself: our pid in a new PID namespace would be 1. */
		do
			n = write(cg->procs[i], "0", 1);
		while (n == -1 && errno == EINTR);
		if (n != 1)
			return -1;
	}
	return 0;
}

void
cgroup_run_close_join(struct cgroup_run *cg)
{
	for (int i = 0; i < CGROUP_NCTL; i++)
		if (cg->procs[i] != -1) {
			close(cg->procs[i]);
			cg->procs[i] = -1;
		}
}

enum cgroup_hit
cgroup_run_hit(const struct cgroup_run *cg)
{
	const char	*mem, *pids;

	if (cg->version == 0)
		return CGROUP_HIT_NONE;
	mem = cg->version == 2 ? cg->dir[0] : cg->dir[CGROUP_MEMORY];
	pids = cg->version == 2 ? cg->dir[0] : cg->dir[CGROUP_PIDS];
	/*
	 * The memory limit was hit when the kernel had to kill for it: usage touching
	 * the limit alone is only reclaim (page cache), which every build does.
	 */
	if (cg->mem_max > 0) {
		if (cg->version == 2 ? cgroup_key(mem, "memory.events", "oom_kill") > 0 ||
		    cgroup_key(mem, "memory.events", "oom_group_kill") > 0 :
		    cgroup_key(mem, "memory.oom_control", "oom_kill") > 0 ||
		    cgroup_key(mem, "memory.oom_control", "under_oom") > 0)
			return CGROUP_HIT_MEMORY;
	}
	if (cg->pids_max > 0 && cgroup_key(pids, "pids.events", "max") > 0)
		return CGROUP_HIT_PIDS;
	return CGROUP_HIT_NONE;
}

/* The directory whose cgroup.procs lists the run's processes. */
static const char *
cgroup_members_dir(const struct cgroup_run *cg)
{
	if (cg->version == 2)
		return cg->dir[0];
	for (int i = 0; i < CGROUP_NCTL; i++)
		if (cg->dir[i][0] != '\0')
			return cg->dir[i];
	return NULL;
}

int
cgroup_run_pids(const struct cgroup_run *cg, pid_t **out, size_t *n)
{
	const char	*dir = cgroup_members_dir(cg);
	char		 path[PATH_MAX];
	FILE		*f;
	pid_t		*v = NULL, *nv;
	size_t		 cap = 0;
	long		 pid;

	*out = NULL;
	*n = 0;
	if (dir == NULL)
		return 0;
	if ((size_t)snprintf(path, sizeof path, "%s/cgroup.procs", dir) >= sizeof path) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if ((f = fopen(path, "re")) == NULL)
		return errno == ENOENT ? 0 : -1;
	while (fscanf(f, "%ld", &pid) == 1) {
		if (pid <= 0)
			continue;	/* 0: a member outside our PID namespace */
		if (*n == cap) {
			cap = cap ? cap * 2 : 64;
			if ((nv = reallocarray(v, cap, sizeof *v)) == NULL) {
				free(v);
				fclose(f);
				return -1;
			}
			v = nv;
		}
		v[(*n)++] = (pid_t)pid;
	}
	fclose(f);
	*out = v;
	return 0;
}

int
cgroup_run_freeze(const struct cgroup_run *cg, int frozen)
{
	const char	*dir = cg->version == 2 ? cg->dir[0] : cg->dir[CGROUP_FREEZER];
	char		 buf[64];

	if (cg->version == 0 || !cg->freezer) {
		errno = ENOTSUP;
		return -1;
	}
	if ((cg->version == 2 ? cgroup_write(dir, "cgroup.freeze", frozen ? "1" : "0") :
	    cgroup_write(dir, "freezer.state", frozen ? "FROZEN" : "THAWED")) == -1)
		return -1;
	if (!frozen)
		return 0;
	/* A freeze is asynchronous: wait until the kernel says every member is stopped. */
	for (int ms = 0; ms < CGROUP_FREEZE_MS; ms += 5) {
		if (cg->version == 2 ? cgroup_key(dir, "cgroup.events", "frozen") == 1 :
		    cgroup_read(dir, "freezer.state", buf, sizeof buf) == 0 &&
		    strncmp(buf, "FROZEN", 6) == 0)
			return 0;
		poll(NULL, 0, 5);
	}
	/* Not settled (a member stuck in the kernel): thaw, the caller falls back. */
	(void)cgroup_run_freeze(cg, 0);
	errno = ETIMEDOUT;
	return -1;
}

int
cgroup_run_remove(struct cgroup_run *cg, int wait_ms, char *err, size_t errlen)
{
	int	 left = 0, e = 0;

	cgroup_run_close_join(cg);
	for (int ms = 0; ; ms += 10) {
		left = 0;
		for (int i = 0; i < CGROUP_NCTL; i++) {
			if (cg->dir[i][0] == '\0')
				continue;
			if (rmdir(cg->dir[i]) == 0 || errno == ENOENT)
				cg->dir[i][0] = '\0';
			else {
				e = errno;
				left++;
			}
		}
		/* Killed members leave the cgroup as they finish exiting: give them time. */
		if (left == 0 || e != EBUSY || ms >= wait_ms)
			break;
		poll(NULL, 0, 10);
	}
	if (left == 0)
		return 0;
	for (int i = 0; i < CGROUP_NCTL; i++)
		if (cg->dir[i][0] != '\0') {
			snprintf(err, errlen, "remove cgroup %s: %s", cg->dir[i], strerror(e));
			break;
		}
	errno = e;
	return -1;
}

/* 1 when name is longer than suffix and ends with it. */
static int
cgroup_has_suffix(const char *name, const char *suffix)
{
	size_t	 n = strlen(name), k = strlen(suffix);

	return n > k && strcmp(name + n - k, suffix) == 0;
}

int
cgroup_delegate(char *err, size_t errlen)
{
	char		 own[PATH_MAX], leaf[PATH_MAX], buf[512], pid[32];
	struct stat	 st;
	const char	*slash;

	if (cgroup_self_dir(NULL, own, sizeof own) == -1)
		return 0;	/* no cgroup v2 here: the runner uses v1 or nothing */
	if ((slash = strrchr(own, '/')) != NULL && strcmp(slash, "/daemon") == 0)
		return 0;	/* done before this exec */
	/*
	 * Only a subtree given to us: a service unit with Delegate=yes (the user unit
	 * packaging/clockworkd.service), or a scope made by hand with systemd-run --user
	 * --scope -p Delegate=yes clockworkd, whose cgroup systemd hands to the user.
	 * Anyone else's cgroup is left alone.
	 */
	if (slash == NULL || !(cgroup_has_suffix(slash + 1, ".service") ||
	    cgroup_has_suffix(slash + 1, ".scope")) ||
	    stat(own, &st) == -1 || st.st_uid != geteuid())
		return 0;
	if (cgroup_read(own, "cgroup.controllers", buf, sizeof buf) == -1 ||
	    !cgroup_has_word(buf, "pids", " \n") || !cgroup_has_word(buf, "memory", " \n"))
		return 0;
	/* No process may stay in a cgroup that hands controllers down: we move out. */
	if ((size_t)snprintf(leaf, sizeof leaf, "%s/daemon", own) >= sizeof leaf ||
	    (mkdir(leaf, 0755) == -1 && errno != EEXIST)) {
		snprintf(err, errlen, "cgroup: create %s: %s", leaf, strerror(errno));
		return -1;
	}
	snprintf(pid, sizeof pid, "%d", (int)getpid());
	if (cgroup_write(leaf, "cgroup.procs", pid) == -1) {
		snprintf(err, errlen, "cgroup: move into %s: %s", leaf, strerror(errno));
		return -1;
	}
	if (cgroup_write(own, "cgroup.subtree_control", "+pids +memory") == -1) {
		snprintf(err, errlen, "cgroup: enable pids and memory in %s: %s", own,
		    strerror(errno));
		return -1;
	}
	return 0;
}
