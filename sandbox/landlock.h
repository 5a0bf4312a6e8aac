/*
 * Landlock: the filesystem allowlist and IPC scoping (SPEC S4, S5). The parent probes
 * the ABI and describes what it cannot enforce; the sandboxed child builds the ruleset
 * and restricts itself.
 */
#ifndef CW_LANDLOCK_H
#define CW_LANDLOCK_H
#include <stddef.h>

#include "spec.h"
#include "strlist.h"

/* The newest Landlock ABI both we and the running kernel speak; 0 if Landlock is absent. */
#define LANDLOCK_ABI_MAX	7
int	landlock_abi(void);
/* One sentence per thing this ABI leaves unenforced (for the run's report). */
int	landlock_limits(int abi, struct strlist *not_enforced);

/* Extra grants decided while the sandbox is applied (the mount namespace's private dirs). */
struct landlock_extra {
	const char	*write_dirs[4];
	int		 ptys;		/* 1: a private devpts is mounted, grant /dev/pts + ptmx */
	/*
	 * The ruleset to complete and apply, when the parent made it and added the rules
	 * of a deferred carve (sandbox.c); landlock_apply closes it.
	 */
	int		 has_ruleset, ruleset;
};

/*
 * Build the ruleset for the spec and restrict the calling process (no_new_privs must
 * already be set, or CAP_SYS_ADMIN held). Grants whose path does not exist are skipped:
 * skipping an allow rule only takes access away. Returns 0, or -1 with err naming what
 * failed (errno kept).
 */
/* A new ruleset handling every right of abi (and its scopes): its fd, or -1 with err. */
int	landlock_ruleset(int abi, char *err, size_t errlen);
/*
 * Add read grants to ruleset rfd: dirs from dirs_from on and files from files_from on
 * (paths that do not exist are skipped). The rules name inodes, not paths: added by a
 * process outside a mount namespace, they hold inside it wherever a bind shows those
 * inodes. 0, or -1 with err.
 */
int	landlock_add_reads(int rfd, int abi, const struct strlist *dirs, size_t dirs_from,
	    const struct strlist *files, size_t files_from, char *err, size_t errlen);
int	landlock_apply(int abi, const struct sandbox_spec *, const struct landlock_extra *,
	    char *err, size_t errlen);

#endif
