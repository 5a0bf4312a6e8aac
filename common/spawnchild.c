/* Starting a child: fork and exec, nothing inherited by accident (spawnchild.h). */
#define _GNU_SOURCE	/* close_range, pipe2 */
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spawnchild.h"

/* name looked up in the parent's PATH, as execvp would, but before the fork. */
static int
spawnchild_resolve(const char *name, char *out, size_t outlen)
{
	const char	*path = getenv("PATH"), *p, *e;
	size_t		 n;

	if (strchr(name, '/') != NULL) {
		if ((size_t)snprintf(out, outlen, "%s", name) >= outlen) {
			errno = ENAMETOOLONG;
			return -1;
		}
		return 0;
	}
	if (path == NULL || *path == '\0')
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path; *p != '\0'; p = *e == ':' ? e + 1 : e) {
		if ((e = strchr(p, ':')) == NULL)
			e = p + strlen(p);
		n = (size_t)(e - p);
		/* An empty entry is the working directory: never, for a daemon. */
		if (n == 0 || p[0] != '/')
			continue;
		if ((size_t)snprintf(out, outlen, "%.*s/%s", (int)n, p, name) >= outlen)
			continue;
		if (access(out, X_OK) == 0)
			return 0;
	}
	errno = ENOENT;
	return -1;
}

/*
 * In the child: the descriptors in place, the rest closed; the report pipe ends up on
 * descriptor n (close-on-exec), and *report is updated as it moves, so a failure can
 * still be reported. Async-signal-safe only.
 */
static int
spawnchild_fds(const struct spawnchild *s, int nul, int *report)
{
	int	 n = s->nfds > 0 ? s->nfds : 3, moved[SPAWNCHILD_FDS_MAX], r;
	int	 above = n + 1 > *report + 1 ? n + 1 : *report + 1;

	/*
	 * First the report pipe and every source above every target, so that putting one
	 * in place never overwrites another that has yet to move (fds = {4, 0} swaps).
	 */
	if ((r = fcntl(*report, F_DUPFD_CLOEXEC, above)) == -1)
		return -1;
	*report = r;
	for (int i = 0; i < n; i++) {
		int	 src = i < s->nfds && s->fds[i] != -1 ? s->fds[i] : nul;

		if ((moved[i] = fcntl(src, F_DUPFD_CLOEXEC, above)) == -1)
			return -1;
	}
	for (int i = 0; i < n; i++)
		if (dup3(moved[i], i, 0) == -1)
			return -1;
	if (dup3(r, n, O_CLOEXEC) == -1)
		return -1;
	*report = n;
	if (syscall(SYS_close_range, n + 1, ~0U, 0) == -1)
		for (int fd = n + 1; fd < 65536; fd++)
			(void)close(fd);
	return 0;
}

int
spawnchild_start(const struct spawnchild *s, pid_t *pid, char *err, size_t errlen)
{
	static char *const	 empty[] = { NULL };
	char			 path[PATH_MAX];
	sigset_t		 all, saved;
	int			 rep[2], nul, e = 0;
	ssize_t			 got;
	pid_t			 p;

	if (s->nfds < 0 || s->nfds > SPAWNCHILD_FDS_MAX) {
		snprintf(err, errlen, "spawn: %d descriptors (at most %d)", s->nfds,
		    SPAWNCHILD_FDS_MAX);
		return -1;
	}
	if (spawnchild_resolve(s->path, path, sizeof path) == -1) {
		snprintf(err, errlen, "%.400s: %s", s->path, strerror(errno));
		return -1;
	}
	if ((nul = open("/dev/null", O_RDWR | O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "/dev/null: %s", strerror(errno));
		return -1;
	}
	if (pipe2(rep, O_CLOEXEC) == -1) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		close(nul);
		return -1;
	}
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &saved);
	if ((p = fork()) == 0) {
		sigset_t	 none;

		for (int sig = 1; sig < NSIG; sig++)
			signal(sig, SIG_DFL);
		if (s->new_session)
			(void)setsid();
		else if (s->new_pgrp)
			(void)setpgid(0, 0);
		if (spawnchild_fds(s, nul, &rep[1]) == -1 ||
		    (s->cwd != NULL && chdir(s->cwd) == -1))
			goto fail;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		execve(path, s->argv, s->env != NULL ? s->env : empty);
fail:
		e = errno;
		(void)!write(rep[1], &e, sizeof e);
		_exit(127);
	}
	e = errno;
	sigprocmask(SIG_SETMASK, &saved, NULL);
	close(rep[1]);
	close(nul);
	if (p == -1) {
		close(rep[0]);
		snprintf(err, errlen, "fork: %s", strerror(e));
		return -1;
	}
	if (s->new_pgrp && !s->new_session)
		(void)setpgid(p, p);	/* both sides ask: it exists before either acts */
	/* Nothing to read (end of file at the exec) means the exec happened. */
	while ((got = read(rep[0], &e, sizeof e)) == -1 && errno == EINTR)
		;
	close(rep[0]);
	if (got == (ssize_t)sizeof e) {
		int	 st;

		(void)spawnchild_wait(p, &st);
		snprintf(err, errlen, "cannot run %.400s: %s", path, strerror(e));
		return -1;
	}
	*pid = p;
	return 0;
}

int
spawnchild_wait(pid_t pid, int *status)
{
	while (waitpid(pid, status, 0) == -1)
		if (errno != EINTR)
			return -1;
	return 0;
}

int
spawnchild_run(const struct spawnchild *s, char *err, size_t errlen)
{
	pid_t	 pid;
	int	 st;

	if (spawnchild_start(s, &pid, err, errlen) == -1)
		return -1;
	if (spawnchild_wait(pid, &st) == -1) {
		snprintf(err, errlen, "wait for %.400s: %s", s->path, strerror(errno));
		return -1;
	}
	if (WIFSIGNALED(st)) {
		snprintf(err, errlen, "%.400s was killed by signal %d", s->path,
		    WTERMSIG(st));
		return -1;
	}
	return WEXITSTATUS(st);
}

void
spawnchild_env_tool(char **out, size_t outmax, int display, char *const *extra)
{
	static const char *const base[] = {
		"PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "TMPDIR",
	};
	static const char *const gui[] = {
		"DISPLAY", "WAYLAND_DISPLAY", "XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS",
	};
	extern char	**environ;
	size_t		  n = 0, len;

	if (outmax == 0)
		return;
	for (char **e = environ; e != NULL && *e != NULL; e++) {
		for (size_t i = 0; i < sizeof base / sizeof base[0] + sizeof gui /
		    sizeof gui[0]; i++) {
			const char *name = i < sizeof base / sizeof base[0] ? base[i] :
			    gui[i - sizeof base / sizeof base[0]];

			if (i >= sizeof base / sizeof base[0] && !display)
				break;
			len = strlen(name);
			if (strncmp(*e, name, len) == 0 && (*e)[len] == '=' &&
			    n + 1 < outmax) {
				out[n++] = *e;
				break;
			}
		}
	}
	for (; extra != NULL && *extra != NULL && n + 1 < outmax; extra++)
		out[n++] = *extra;
	out[n] = NULL;
}
