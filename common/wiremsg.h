/*
 * The runner's messages to the daemon (common/wire.h), decoded once into a typed
 * struct: the version, the type and each field's shape and bounds are checked here, in
 * one place, and the daemon's handlers take what passed. Kept apart from wire.h, which
 * cw-floor-hook includes and which must not pull in cJSON.
 */
#ifndef CW_WIREMSG_H
#define CW_WIREMSG_H
#include <stddef.h>

#include <cjson/cJSON.h>

enum wiremsg_type {
	WIREMSG_OTHER = 0,	/* a type this daemon does not know: kept, not acted on */
	WIREMSG_HELLO,
	WIREMSG_EVENT,
	WIREMSG_APPROVAL_REQUEST,
	WIREMSG_USAGE,
	WIREMSG_LOG,
	WIREMSG_REPORT,
	WIREMSG_SAY,		/* a readable transcript entry (common/transcript.h) */
};

#define WIREMSG_KIND_MAX	64	/* bytes of an event's kind */
#define WIREMSG_ID_MAX		128	/* bytes of an approval request's id */
#define WIREMSG_TOOL_MAX	256	/* bytes of an approval request's tool */

struct wiremsg {
	enum wiremsg_type	 type;
	const char		*type_name;	/* as sent (bounded) */
	cJSON			*obj;		/* the whole message: owned */
	int			 sandboxed;	/* hello, event: -1 when absent */
	const char		*kind;		/* event */
	const char		*id;		/* event (optional), approval_request */
	const char		*tool;		/* approval_request */
	const cJSON		*input;		/* approval_request, may be NULL */
	double			 deadline;	/* approval_request: 0 when none */
	const char		*risk;		/* approval_request: a floor.h level */
	const char		*risk_rule;	/* approval_request, may be NULL */
	const char		*family;	/* approval_request: what "always for
						   this task" remembers; may be NULL */
	double			 dollars;	/* usage: -1 when absent */
	int			 turns;		/* usage: -1 when absent */
	const char		*text;		/* log, may be NULL */
	const cJSON		*entry;		/* say: checked by transcript_check() */
};

/*
 * Decode one line (without its newline). 0, or -1 with err saying what was wrong (the
 * sender's protocol error); m then holds nothing to free.
 */
int	wiremsg_decode(const char *line, size_t len, struct wiremsg *m, char *err,
	    size_t errlen);
void	wiremsg_free(struct wiremsg *);

#endif
