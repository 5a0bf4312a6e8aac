/*
 * The readable transcript of a run: one small vocabulary every engine's output is
 * turned into, so that `cwctl run logs`, the Inbox's live view and the export show the
 * same thing whichever engine ran. An entry is a JSON object with "k" naming its kind:
 *
 *   text     the agent's words                     text
 *   tool     a tool call                           tool, id?, command? | path? | detail?
 *   result   a tool's result (trimmed)             id?, text, error, cut?
 *   floor    the floor refused a shell command     rule, reason, command
 *   ask      an approval is waiting on a person    approval, tool, command?, deadline?
 *   answer   an approval was answered              approval, decision, by, reason?
 *   final    the agent's final message             text, error
 *   usage    what the run has spent                dollars, turns
 *   note     Clockwork's own line about the run    text
 *
 * Every string is bounded here (TRANSCRIPT_*_MAX, cut at a UTF-8 boundary with "cut"
 * giving the bytes left out), so an engine cannot grow one entry without end. Entries
 * are made by the runner (from the engine's output) and the daemon (floor, ask, answer,
 * note), stored by the daemon one per line, masked, in the run's transcript file.
 */
#ifndef CW_TRANSCRIPT_H
#define CW_TRANSCRIPT_H
#include <stddef.h>

#include <cjson/cJSON.h>

#define TRANSCRIPT_TEXT_MAX	(16 * 1024)	/* text, final */
#define TRANSCRIPT_RESULT_MAX	2048		/* a tool's result */
#define TRANSCRIPT_FIELD_MAX	4096		/* command, path, detail, reason */

cJSON	*transcript_text(const char *text);
/* command, path and detail may be NULL; id is the engine's call id, if it has one. */
cJSON	*transcript_tool(const char *tool, const char *id, const char *command,
	    const char *path, const char *detail);
cJSON	*transcript_result(const char *id, const char *text, size_t len, int error);
cJSON	*transcript_floor(const char *rule, const char *reason, const char *command);
cJSON	*transcript_ask(const char *approval, const char *tool, const char *command,
	    double deadline);
cJSON	*transcript_answer(const char *approval, const char *decision, const char *by,
	    const char *reason);
cJSON	*transcript_final(const char *text, int error);
cJSON	*transcript_usage(double dollars, int turns);
cJSON	*transcript_note(const char *text);

/*
 * One entry as a line for a person (no newline at the end), control characters made
 * visible (common/vis.c). color: ANSI colours for a terminal. Newly allocated; NULL
 * when entry is not a transcript entry.
 */
char	*transcript_render(const cJSON *entry, int color);
/* 0 when o is an entry of a known kind with its fields' shapes right. */
int	transcript_check(const cJSON *o);

#endif
