/*
 * Repository jobs and task templates (SPEC W2): .clockwork/jobs.json or
 * .clockwork/jobs.yaml in a target repository, or a file given to `cwctl template
 * import`. The text arrived with someone else's commit, so it is untrusted input.
 *
 * The schema names only what a job may say about itself:
 *
 *   jobs:
 *     - name: lint                # a task name: [A-Za-z0-9._-], 1-64, not ./- first
 *       prompt: "..."             # required, at most JOBSPEC_MAX_PROMPT bytes
 *       description: "..."        # optional
 *       schedule: "0 3 * * *"     # optional: only proposed, never applied on import
 *       context: [docs/a.md]      # optional: relative paths inside the repository
 *
 * There is no permission mode, engine, key or budget field: a file that has one (or
 * any other key) gets it listed in `ignored` by its path ("jobs[0].permissionMode"),
 * and its value is never read into anything. A malformed file (bad JSON or YAML, a
 * wrong type, a duplicate key, a bound exceeded) is an error naming the file, the
 * field and the limit, and yields no job at all.
 */
#ifndef CW_JOBSPEC_H
#define CW_JOBSPEC_H
#include <stddef.h>

#define JOBSPEC_MAX_BYTES	(256 * 1024)	/* the whole file */
#define JOBSPEC_MAX_JOBS	64
#define JOBSPEC_MAX_NAME	64
#define JOBSPEC_MAX_PROMPT	(64 * 1024)
#define JOBSPEC_MAX_DESCRIPTION	4096
#define JOBSPEC_MAX_SCHEDULE	128
#define JOBSPEC_MAX_CONTEXT	32		/* paths per job */
#define JOBSPEC_MAX_PATH	256		/* bytes per path */
#define JOBSPEC_MAX_IGNORED	64		/* listed; the rest only counted */
#define JOBSPEC_MAX_KEY		64		/* an ignored key is listed cut to this */
#define JOBSPEC_MAX_DEPTH	16		/* YAML/JSON nesting */
#define JOBSPEC_MAX_NODES	20000		/* YAML nodes visited, aliases included */

enum jobspec_format {
	JOBSPEC_JSON = 0,
	JOBSPEC_YAML,
};

struct jobspec_job {
	char	 *name;
	char	 *prompt;
	char	 *description;		/* NULL: none */
	char	 *schedule;		/* NULL: none */
	char	**context;
	size_t	  n_context;
};

struct jobspec {
	struct jobspec_job	 *jobs;
	size_t			  n_jobs;
	char			**ignored;	/* key paths, as written (may hold anything) */
	size_t			  n_ignored;
	size_t			  ignored_more;	/* ignored keys past JOBSPEC_MAX_IGNORED */
};

/* The format a file name implies: ".json" JSON, ".yaml"/".yml" YAML, else -1. */
int	jobspec_format_of(const char *path);
/*
 * Parse len bytes of text (need not be NUL-terminated; NULs inside are refused).
 * name is used in messages only. 0 and *out filled, or -1 with err holding one line
 * "NAME: FIELD: what is wrong" and *out empty.
 */
int	jobspec_parse(const char *name, const char *text, size_t len,
	    enum jobspec_format, struct jobspec *out, char *err, size_t errlen);
void	jobspec_free(struct jobspec *);
/*
 * A task's or job's name, which appears in paths and branch names: letters, digits,
 * '.', '_', '-', not starting with '.' or '-', no "..", not ending in ".lock".
 */
int	jobspec_name_valid(const char *);
/* A relative path that stays inside the repository: no "/" first, no ".." part. */
int	jobspec_path_valid(const char *);

#endif
