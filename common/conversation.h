/*
 * A run's conversation, kept so that `cwctl run continue` can resume it (issue 23).
 *
 * Each engine names its conversation with an id of its own, which it prints in its
 * output (Claude Code's and Codex's session UUIDs, OpenCode's "ses_..." ids) or, for
 * byok, which the runner makes. That output is the run's, so the id is untrusted: it
 * is checked here, strictly, wherever it is read (the runner's stream parser, the
 * daemon reading a run's report) and again before it goes onto a command line.
 *
 * What is kept lives in <clockwork home>/conversations/tasks/<task id>/<run id>/,
 * written by the runner after every process of the run has ended, read only by a
 * later run of the same task (the path is made from the task's id, never from
 * anything the run said).
 */
#ifndef CW_CONVERSATION_H
#define CW_CONVERSATION_H
#include <stddef.h>

#define CONVERSATION_ID_MAX	64	/* the longest id any engine's check accepts */
#define CONVERSATION_MESSAGES_MAX	100000	/* the most a kept byok conversation holds */
#define CONVERSATION_FILE_MAX	(64L * 1024 * 1024)	/* the most one kept file holds */

/*
 * 1 when id is a well-formed conversation id for engine, else 0:
 *   claude, codex   a UUID, 8-4-4-4-12 hex digits
 *   opencode        "ses_" and 20 to 40 letters and digits
 *   byok            32 lowercase hex digits (made by the runner)
 * Whatever passes is [A-Za-z0-9_-], does not start with '-', and is at most
 * CONVERSATION_ID_MAX bytes: safe as one argv word and as a file name.
 */
int	conversation_id_valid(const char *engine, const char *id);

/* 1 when engine keeps a conversation that a later run can resume. */
int	conversation_engine_resumes(const char *engine);

/*
 * The directory a run's conversation is kept in: <cwhome>/conversations/tasks/<task
 * id>/<run id>. -1 (ENAMETOOLONG, EINVAL for a run id that is not a plain name).
 */
int	conversation_dir(const char *cwhome, long long task_id, const char *run_id,
	    char *out, size_t outlen);

struct cJSON;

/*
 * byok's kept conversation, {"messages": [{role, content}, ...]}, as the runner sends
 * it to a continued run (an earlier run's agent wrote it from what the model and the
 * tools said: untrusted). Read by cw-runner (runner/engine_byok.c) and by cw-agent.
 * 0 with *messages (owned by the caller): a non-empty array of at most
 * CONVERSATION_MESSAGES_MAX turns that alternate, a user's first, each content a
 * string or an array of typed blocks; -1 with err.
 */
int	conversation_messages_parse(const char *text, size_t len,
	    struct cJSON **messages, char *err, size_t errlen);

#endif
