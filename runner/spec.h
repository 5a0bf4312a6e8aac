/*
 * The sandbox spec: everything apply_sandbox() needs to confine one run, built from the
 * merged policy and the run context. Every path in it is absolute and canonical.
 * `cw-runner spec --json` prints it.
 */
#ifndef CW_SPEC_H
#define CW_SPEC_H
#include <stddef.h>

#include "strlist.h"

struct spec_context {
	const char	*workdir;	/* worktree or scratch dir: read-write */
	const char	*engine;	/* "command", "claude", ... */
	const char	*home;		/* the user's HOME */
	const char	*cwhome;	/* Clockwork home */
	const char	*run_id;	/* names the private TMPDIR; NULL for exec */
	const char	*cache_scope;	/* the tool caches' home beneath <cwhome>/caches:
					   "tasks/<id>" for a task's runs (kept between
					   them), "scopes/<name>" for exec --cache-scope;
					   NULL: a private one-off cache in the TMPDIR */
	struct strlist	 context_ro;	/* read-only context roots */
	const char	*git_objects;	/* a run's repository borrows this object store
					   (read-only); NULL outside a run (exec) */
	int		 sandbox_off;	/* CW_SANDBOX=off was asked for */
	const char	*resume_id;	/* the conversation the engine's home() puts
					   back (runner/engine.h), or NULL */
	int		 resume_fd;	/* the earlier run's keep directory; -1: none
					   (a zeroed context must set it) */
	int		 defer_carve;	/* leave the carve of /etc's read grant to
					   spec_carve_finish() (spec_carve_pending below) */
};

struct spec_carve;

struct sandbox_spec {
	int		 enabled;	/* 0 only through CW_SANDBOX=off */
	char		*workdir;
	char		*engine;
	char		*home;
	char		*tmpdir;	/* private per-run TMPDIR (read-write) */
	int		 tmpdir_view;	/* the TMPDIR is a tmpfs in the run's view only,
					   nothing on the host (an exec on Linux) */
	struct strlist	 read_dirs;	/* recursive read + execute */
	struct strlist	 write_dirs;	/* recursive read-write */
	struct strlist	 read_files;	/* single files, read-only */
	struct strlist	 write_files;	/* single files, read-write */
	struct strlist	 env;		/* the whole environment, "NAME=value" */
	struct strlist	 hide;		/* sockets and paths hidden by the mount namespace */
	struct strlist	 ro_binds;	/* made read-only by the mount namespace, inside
					   writable grants (a worktree's .git pointer) */
	char		*ssh_auth_sock;	/* feature ssh: the one socket allowed, or NULL */
	char		*disabled_by;	/* why enabled is 0: "CW_SANDBOX=off" or the config */
	struct strlist	 env_secret;	/* names whose values spec_to_json masks */
	struct strlist	 notes;		/* grants skipped or narrowed, one sentence each */
	int		 net_open;	/* network: open; else a network namespace of the
					   run's own, loopback only (SPEC N1) */
	struct strlist	 system_scan;	/* "<dir> walked|kept": how each system directory's
					   entries that are not world-readable were found
					   (unreadable.h) */
	struct strlist	 carve_pending;	/* system directories (/etc) whose read grant is
					   still to be carved (defer_carve): bound whole in
					   the view, granted to Landlock by no rule yet */
	struct spec_carve *carve;	/* what spec_carve_finish() needs, or NULL */
};

struct config;

/*
 * Build the spec for one run from the config (global + engine policy, merged and
 * resolved) and the context. Refuses (-1, err names the path and why) a grant or
 * context root that resolves into a credential location, and a read-only grant under
 * a prefix that must stay writable. Creates the private TMPDIR and cache directories
 * (SPEC U2: per task or private, never shared between tasks; a bad cache_scope is
 * refused with EINVAL).
 */
int	spec_build(const struct spec_context *, const struct config *,
	    struct sandbox_spec *out, char *err, size_t errlen);
/*
 * Whether spec_build() will enable the sandbox for engine (neither CW_SANDBOX=off nor
 * sandbox.enabled false in the merged policy), for an engine that must know before its
 * command line is built: 1 or 0, -1 when out of memory.
 */
int	spec_sandbox_enabled(const struct config *, const char *engine, int sandbox_off);
/*
 * If path lies in one of the system locations every spec grants for reading (/usr,
 * /etc, /opt, /lib*, /proc, /sys, ...), return 1 and that location's canonical path in
 * root. The mount namespace binds those whole and read-only, which stops what Landlock
 * does not check there (chmod, utimes, xattrs by a root run).
 */
int	spec_system_root(const char *path, char *root, size_t rootlen);
/*
 * The system locations (sandbox/sysdirs.c): how many, each as spelled, and each
 * canonical ("" where it cannot be resolved; resolved once per process).
 */
size_t	 spec_system_ndirs(void);
const char *spec_system_dir(size_t);
const char *spec_system_canon(size_t);
/* The value of name in the spec's environment ("NAME=value" entries), or NULL. */
const char *spec_getenv(const struct sandbox_spec *, const char *name);
/* The spec as JSON text (newly allocated), for `cw-runner spec --json`. */
char	*spec_to_json(const struct sandbox_spec *);
/*
 * Remove a run's private TMPDIR and all it holds with rmtree_at() (from the parent's
 * descriptor down, never following a symlink); refuses any path that is not directly
 * under <cwhome>/tmp. survivors is how many processes of the run are still alive:
 * while any is, nothing is removed (-1, EBUSY, err says it was kept and why).
 */
int	spec_remove_tmpdir(const char *tmpdir, const char *cwhome, size_t survivors,
	    char *err, size_t errlen);
/*
 * With defer_carve, spec_build() leaves the read grant of each directory in
 * carve_pending (/etc: its walk or kept outline, and the carve around what is not
 * world-readable, the largest part of a spec) to this call, which apply_sandbox()
 * makes in the parent while the child builds its namespaces and its view, and sends
 * the grants it adds to the child before Landlock. Appends to read_dirs and
 * read_files, empties carve_pending; 0, or -1 with err (out of memory).
 */
int	spec_carve_finish(struct sandbox_spec *, char *err, size_t errlen);
void	spec_free(struct sandbox_spec *);

#endif
