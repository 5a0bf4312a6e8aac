/*
 * The table of engines every program shares: the configuration, the task schema, the
 * daemon, cwctl, the Inbox and the runner all ask here which engines exist and what
 * each can do, so no list of names is kept anywhere else. What an engine does at run
 * time (its command line, its private home, the reading of its output) lives in the
 * runner, behind runner/engine.h; this table holds only the facts the other programs
 * need to decide and to explain.
 */
#ifndef CW_ENGINES_H
#define CW_ENGINES_H
#include <stddef.h>

/* What an engine can do, as the rest of Clockwork may rely on it. */
#define ENGINE_CAN_FLOOR	0x01	/* cw-floor-hook sees its shell calls before they run */
#define ENGINE_CAN_ASK		0x02	/* it can hold a tool call for a person's answer */
#define ENGINE_CAN_DOLLARS	0x04	/* it reports what it spent, so a dollar budget holds */
#define ENGINE_CAN_TURNS	0x08	/* its turns are counted, so a turn budget holds */
#define ENGINE_TAKES_PROMPT	0x10	/* a run needs a prompt (else an argv: "command") */
#define ENGINE_RUNNABLE		0x20	/* Clockwork can start it (Hermes: documented only) */
#define ENGINE_TRANSCRIPT	0x40	/* its output is read into the readable transcript;
					   without it, the raw log is the transcript */

struct engine_info {
	const char	*name;		/* as in config, tasks and the run message */
	const char	*binary;	/* looked up in PATH; NULL for "command" */
	const char	*label;		/* for people: "Claude Code" */
	unsigned	 caps;		/* ENGINE_CAN_* */
	const char	*key_env;	/* the variable the engine reads its key from, or NULL */
	const char	*floor;		/* how the floor reaches it, for reports and docs */
	const char	*ask;		/* how an approval is asked, or why it cannot be */
};

/* The entry named name, or NULL. */
const struct engine_info *engines_find(const char *name);
/* The entry for a name that must be runnable: NULL when unknown or not runnable. */
const struct engine_info *engines_runnable(const char *name);
/* The i-th entry (0 <= i < engines_count()). */
const struct engine_info *engines_at(size_t i);
size_t	engines_count(void);
/* "command, claude, codex, opencode" (runnable ones when runnable_only): for messages. */
const char *engines_names(int runnable_only);

#endif
