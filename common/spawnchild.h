/*
 * The one way clockworkd and cwctl start a child (issue 25; named so, not spawn.h,
 * which would hide the system's <spawn.h>): fork, then exec at once, always. The
 * child gets exactly the descriptors it is handed (fds[i] on i; nothing else, whatever
 * the parent forgot to mark close-on-exec), exactly the environment it is handed (none
 * when env is NULL: nothing of the parent's leaks through by default), default signal
 * dispositions and an empty signal mask. The parent's signals are blocked across
 * fork(), so no handler of the parent's (libevent's) runs in the child before the
 * reset. A failed exec is the caller's error, with its errno, not a child that exits
 * 127 later: it is reported back on a close-on-exec pipe.
 *
 * cw-runner does not use this: every process it starts goes through apply_sandbox()
 * (SPEC S1). Neither does clockworkd's daemonizing fork, which execs nothing.
 */
#ifndef CW_SPAWNCHILD_H
#define CW_SPAWNCHILD_H

#include <sys/types.h>
#include <stddef.h>

#define SPAWNCHILD_FDS_MAX	8

struct spawnchild {
	const char	*path;		/* a path, or a name looked up in PATH */
	char *const	*argv;
	char *const	*env;		/* the child's whole environment; NULL: empty */
	/*
	 * fds[i] becomes the child's descriptor i, for i < nfds; -1 puts /dev/null there.
	 * nfds 0 means 3, all /dev/null. Everything above nfds - 1 is closed.
	 */
	int		 fds[SPAWNCHILD_FDS_MAX];
	int		 nfds;
	int		 new_pgrp;	/* its own process group (setpgid in both) */
	int		 new_session;	/* setsid: a session of its own */
	const char	*cwd;		/* NULL: the parent's */
};

/* Start s. 0 with *pid, or -1 with err (fork, exec, a descriptor). */
int	spawnchild_start(const struct spawnchild *s, pid_t *pid, char *err, size_t errlen);

/* waitpid() until it is not interrupted: 0 with *status, or -1. */
int	spawnchild_wait(pid_t pid, int *status);

/* Start s and wait for it: its exit status (0..255), or -1 (err) if it did not run or
 * was killed (err names the signal). */
int	spawnchild_run(const struct spawnchild *s, char *err, size_t errlen);

/*
 * The fixed environment for a helper tool (git, apparmor_parser, xdg-open): the
 * parent's PATH, HOME, USER, LOGNAME, LANG, LC_ALL, TMPDIR and, for xdg-open, the
 * display's DISPLAY, WAYLAND_DISPLAY, XDG_RUNTIME_DIR, DBUS_SESSION_BUS_ADDRESS, plus
 * extra (NULL-terminated "NAME=value" strings). Into out[0..outmax-1], NULL-terminated;
 * the strings are the environment's own or extra's: nothing is allocated.
 */
#define SPAWNCHILD_ENV_MAX	24
void	spawnchild_env_tool(char **out, size_t outmax, int display, char *const *extra);

#endif
