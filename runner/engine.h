/*
 * The engine seam: everything the runner does differently for one engine goes through
 * one struct engine_ops, so that run.c, spec.c and bridge.c name no engine. Adding an
 * engine is one file pair (runner/engine_<name>.c/.h) that fills an engine_ops, one row
 * in common/engines.c (what the rest of Clockwork may rely on) and one line in
 * engine.c's table.
 *
 * The order of a run, as run.c drives it:
 *   1. prepare(): with the run's facts (engine_run) it writes the engine's files into
 *      the runner's state directory (outside the worktree, granted read-only to the
 *      sandbox, so nothing the run does can rewrite the floor's configuration) and
 *      fills the command line, the environment and the files the engine must read.
 *   2. home(): inside spec_build(), with the run's private TMPDIR made, the engine's own
 *      home is made new there and the variables that point the engine at it are set.
 *      It is removed with the TMPDIR: nothing the run writes lands in the user's real
 *      engine home.
 *   3. stream_line(): each line of the engine's stdout is read for progress (turns,
 *      dollars, the final message) and turned into transcript entries
 *      (common/transcript.h) handed to say().
 *   4. floor_command(): the bridge's /floor takes the body cw-floor-hook forwarded
 *      and asks the engine which shell command, if any, it carries.
 */
#ifndef CW_ENGINE_H
#define CW_ENGINE_H
#include <sys/types.h>

#include <stddef.h>

#include <cjson/cJSON.h>

#include "engines.h"
#include "strlist.h"

/* What the runner knows about a run when it prepares the engine. */
struct engine_run {
	const char	*run_id;
	const char	*workdir;	/* the run's worktree (its cwd) */
	const char	*state_dir;	/* runner-owned, outside the worktree, read-only to
					   the engine; exists */
	const char	*prompt;
	const char	*mode;		/* "plan" | "acceptEdits" */
	const char	*hook_path;	/* cw-floor-hook, absolute, checked executable */
	const char	*token;		/* the run token for the hook and the bridge */
	int		 port;		/* the bridge's loopback port; 0 when none */
	int		 max_turns;
	double		 max_dollars;
	long		 tool_timeout_ms;	/* how long an approval may be held */
	const char	*key;		/* the provider key the daemon sent, or NULL */
	const char	*base_url;	/* the provider's base URL from configuration, or NULL */
	const char	*model;		/* the model from configuration, or NULL */
};

/* The engine's private home, made by spec_build() in the run's TMPDIR. */
struct engine_home {
	const char	*dir;		/* new, empty, 0700, writable by the engine */
	const char	*user_home;	/* the user's real $HOME: read from, never granted */
	struct strlist	*env;		/* add "NAME=value" for the engine */
	struct strlist	*notes;		/* add lines for the sandbox report */
};

/* What the engine's output has said so far. */
struct engine_progress {
	double	 dollars;	/* as the engine reported it */
	int	 turns;		/* model turns seen */
	int	 have_result;	/* the engine said it finished */
	int	 is_error;	/* ... and that it failed */
	char	 subtype[64];	/* the engine's word for how it ended, e.g. "success" */
	char	*result;	/* the final message (owned; NULL until known) */
};

/* Rules an engine needs in a macOS Seatbelt profile beyond the spec's grants. */
struct engine_sbrule {
	char	*op;		/* "allow file-read* file-write*" */
	char	*filter;	/* "literal" | "subpath" | "regex" */
	char	*arg;		/* the path, or the regex */
};
struct engine_sbrules {
	struct engine_sbrule	*v;
	size_t			 n;
	char			*comment;	/* why, for the profile's reader */
};

/* Takes ownership of entry, a transcript entry (common/transcript.h). */
typedef void engine_say_fn(void *arg, cJSON *entry);

struct engine_stream;		/* one engine's parser state for one run */

struct engine_ops {
	const char	*name;		/* its row in common/engines.c */
	/*
	 * Fill argv (argv[0] is the binary, found through PATH), env ("NAME=value" on top
	 * of the sandbox's allowlisted environment) and files (paths the engine must be
	 * able to read, granted read-only). -1 with err: the run is refused.
	 */
	int	(*prepare)(const struct engine_run *, struct strlist *argv,
		    struct strlist *env, struct strlist *files, char *err, size_t errlen);
	/* Make the private home; NULL when the engine keeps no state. */
	int	(*home)(const struct engine_home *, char *err, size_t errlen);
	struct engine_stream *(*stream_new)(void);
	/*
	 * Read one line of the engine's stdout. 1 when progress changed, 0 when not, -1
	 * when the line is not in the engine's format (kept in the raw log; never fatal).
	 */
	int	(*stream_line)(struct engine_stream *, const char *line, size_t len,
		    struct engine_progress *, engine_say_fn *say, void *arg);
	void	(*stream_free)(struct engine_stream *);
	/*
	 * From the body cw-floor-hook forwarded (the engine's own hook payload): 0 with
	 * *command the shell command (pointing into body), or 0 with *command NULL when
	 * the call is not a shell command; -1 when the body is not what this engine sends.
	 * NULL when the engine has no floor hook.
	 */
	int	(*floor_command)(const cJSON *body, const char **command);
	/*
	 * The Seatbelt rules the engine needs for a run in workdir as uid (its own
	 * scratch paths outside the spec's grants); NULL when it needs none. -1 with err.
	 */
	int	(*seatbelt)(const char *workdir, unsigned long uid,
		    struct engine_sbrules *out, char *err, size_t errlen);
};

/* The runtime side of a runnable engine, or NULL. */
const struct engine_ops *engine_find(const char *name);
/* Its row in the shared table. */
const struct engine_info *engine_info(const struct engine_ops *);
void	engine_progress_free(struct engine_progress *);
int	engine_sbrules_add(struct engine_sbrules *, const char *op, const char *filter,
	    const char *arg);
void	engine_sbrules_free(struct engine_sbrules *);

/* Shared by the engines' prepare() and home(). */
/* 0 when path is an absolute executable file; else -1 with err (no hook, no run). */
int	engine_check_hook(const char *path, char *err, size_t errlen);
/* Write text to dir/name (new file, mode, no link followed); its path in out. */
int	engine_write_file(const char *dir, const char *name, const char *text,
	    mode_t mode, char *out, size_t outlen, char *err, size_t errlen);
/* Create path (O_EXCL, never through a link) and write len bytes. -1 with errno. */
int	engine_write_new(const char *path, const char *text, size_t len, mode_t mode);
/*
 * Read a user's file of at most max bytes (a regular file only, opened without
 * blocking so a planted FIFO cannot stall the runner). NULL with errno (ENOENT...).
 */
char	*engine_read_user_file(const char *path, size_t max, size_t *lenp);

#endif
