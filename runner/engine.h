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
 *   5. keep(): once every process of the run has ended, and before the TMPDIR goes,
 *      the conversation is copied out of the private home into the run's keep
 *      directory (common/conversation.h), so that `cwctl run continue` can resume
 *      it: prepare() then names the id to resume (resume_id) and home() or
 *      companion() put the kept files back (resume_fd).
 */
#ifndef CW_ENGINE_H
#define CW_ENGINE_H
#include <sys/types.h>

#include <stddef.h>

#include <cjson/cJSON.h>

#include "conversation.h"
#include "engines.h"
#include "strlist.h"

/* The engine's private home in the run's TMPDIR (spec.c makes it, run.c keeps from it). */
#define ENGINE_HOME_NAME	"engine-home"

/*
 * The turn budget as it is now, for an engine whose own code gates its tool calls
 * (OpenCode's plugin): a file in the state directory that only the runner writes,
 * holding one number: the turns allowed (0: none kept there), or -1 once the run is
 * ending (no tool call may start). A budget pause extends it (run.c).
 */
#define ENGINE_TURNS_FILE	"turn-budget"

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
	int		 sandboxed;	/* 1: our sandbox will be applied; 0: CW_SANDBOX=off
					   or sandbox.enabled false */
	const char	*provider;	/* byok: "anthropic" | "openai", or NULL */
	const double	*price;		/* byok: $ per million tokens (input, output,
					   cache write, cache read), or NULL: no price */
	const char	*resume_id;	/* the conversation to resume (checked with
					   conversation_id_valid()), or NULL: a new one */
	int		 resume_fd;	/* its keep directory (O_DIRECTORY), or -1 */
};

/* The engine's private home, made by spec_build() in the run's TMPDIR. */
struct engine_home {
	const char	*dir;		/* new, empty, 0700, writable by the engine */
	const char	*user_home;	/* the user's real $HOME: read from, never granted */
	struct strlist	*env;		/* add "NAME=value" for the engine */
	struct strlist	*notes;		/* add lines for the sandbox report */
	const char	*resume_id;	/* as in engine_run, or NULL */
	int		 resume_fd;	/* the earlier run's keep directory, or -1 */
};

/* What keep() copies from and to, every process of the run gone. */
struct engine_keep {
	int			 home_fd;	/* the private home (O_DIRECTORY), or -1;
						   written by the run: untrusted */
	int			 keep_fd;	/* the run's keep directory, new, empty */
	int			 resume_fd;	/* the earlier run's, when this one
						   resumed; else -1 */
	const char		*session;	/* the id the stream saw, checked */
	struct engine_stream	*stream;
};

/* What the engine's output has said so far. */
struct engine_progress {
	double	 dollars;	/* as the engine reported it */
	int	 turns;		/* model turns seen */
	int	 more;		/* byok, claude: the last turn asked for tools (it
				   goes on) */
	char	 unpriced[128];	/* claude: a model its messages named that has no
				   price (prices.h): its cost is not in dollars */
	int	 have_result;	/* the engine said it finished */
	int	 is_error;	/* ... and that it failed */
	char	 subtype[64];	/* the engine's word for how it ended, e.g. "success" */
	char	 session[CONVERSATION_ID_MAX + 1];	/* the conversation's id once
					   the output named one that passes
					   conversation_id_valid(); else "" */
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
struct config;			/* common/config.h */

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
	 * Engines whose stream reports tokens that the runner prices (claude): the
	 * configuration whose prices: go before the built-in table (cfg may be NULL; it
	 * outlives the stream). May be NULL.
	 */
	void	(*stream_prices)(struct engine_stream *, const struct config *cfg);
	/*
	 * 1 when a line of the engine's stdout is not worth a place in the run's log
	 * (it repeats what another line says in full). May be NULL: every line is kept.
	 */
	int	(*log_skip)(const char *line, size_t len);
	/*
	 * From the body cw-floor-hook forwarded (the engine's own hook payload): 0 with
	 * *command the shell command (pointing into body), or 0 with *command NULL when
	 * the call is not a shell command; -1 when the body is not what this engine sends.
	 * NULL when the engine has no floor hook.
	 */
	int	(*floor_command)(const cJSON *body, const char **command);
	/*
	 * 1 when the engine's floor hook can hand a call to the engine's own permission
	 * prompt (Claude Code's permissionDecision "ask", which sends it to the approval
	 * tool): the bridge's /floor then answers "ask" for what the risk policy asks.
	 * 0 for engines whose hook only allows or denies (codex, opencode).
	 */
	int	hook_asks;
	/*
	 * The floor refused one of the engine's calls. 1 when progress changed: an engine
	 * whose output does not show a refused call counts its model turn here, so a run
	 * that keeps trying refused commands still meets its turn budget. May be NULL.
	 */
	int	(*floor_denied)(struct engine_stream *, struct engine_progress *);
	/*
	 * The Seatbelt rules the engine needs for a run in workdir as uid (its own
	 * scratch paths outside the spec's grants); NULL when it needs none. -1 with err.
	 */
	int	(*seatbelt)(const char *workdir, unsigned long uid,
		    struct engine_sbrules *out, char *err, size_t errlen);
	/*
	 * Engines whose model loop runs apart from the run's sandbox (byok): start the
	 * loop before the sandboxed process, through apply_sandbox() with a sandbox of its
	 * own. tools and peer are the two ends of a socket: tools becomes the loop's
	 * stdin, peer the sandboxed process's stdin, and the run's facts (the key among
	 * them) are written into peer first, so they are queued for the loop before
	 * anything else can write there. out and err are the run's stdout and stderr
	 * pipes, which run.c reads as the engine's. The loop's pid, or -1 with err. NULL
	 * for engines that are one CLI in the sandbox.
	 */
	pid_t	(*companion)(const struct engine_run *, int tools, int peer, int out,
		    int errfd, char *err, size_t errlen);
	/*
	 * Copy the conversation named k->session out of the run's private home (or, for
	 * byok, out of what the stream gathered) into k->keep_fd. 1 when kept, 0 when
	 * there was none, -1 with err. NULL: the engine's conversations cannot resume.
	 */
	int	(*keep)(const struct engine_keep *k, char *err, size_t errlen);
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
/*
 * What an engine driven through an OpenAI-compatible provider and the bridge's floor
 * (opencode, hermes) needs before anything is written: the hook, the bridge, a plan or
 * acceptEdits mode, an http(s) engines.<name>.base_url and a model. 0, or -1 with err.
 */
int	engine_check_openai_run(const struct engine_run *r, const char *name, char *err,
	    size_t errlen);
/* Write text to dir/name (new file, mode, no link followed); its path in out. */
int	engine_write_file(const char *dir, const char *name, const char *text,
	    mode_t mode, char *out, size_t outlen, char *err, size_t errlen);
/* Create path (O_EXCL, never through a link) and write len bytes. -1 with errno. */
int	engine_write_new(const char *path, const char *text, size_t len, mode_t mode);
/*
 * Open rel (a relative path of plain names) beneath dirfd, never through a link in any
 * component; the last is opened with flags | O_NOFOLLOW. -1 with errno (ELOOP for a
 * link, EINVAL for a name with "..", "." or an empty component).
 */
int	engine_open_beneath(int dirfd, const char *rel, int flags);
/*
 * Copy the regular file rel beneath from_fd (engine_open_beneath) to the new file name
 * in to_fd (O_EXCL, 0600), at most CONVERSATION_FILE_MAX bytes, opened without blocking
 * so a FIFO cannot stall the runner. 0, or -1 with errno (ENOENT when there is none,
 * EFBIG past the limit, EINVAL for a file that is not regular) and err.
 */
int	engine_copy_beneath(int from_fd, const char *rel, int to_fd, const char *name,
	    char *err, size_t errlen);
/* mkdir rel beneath dirfd, each component (0700, an existing directory is fine). */
int	engine_mkdirs_beneath(int dirfd, const char *rel);

/*
 * Read a user's file of at most max bytes (a regular file only, opened without
 * blocking so a planted FIFO cannot stall the runner). NULL with errno (ENOENT...).
 */
char	*engine_read_user_file(const char *path, size_t max, size_t *lenp);

#endif
