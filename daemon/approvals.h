/* approvals.c: answer one approval, the one respond path (cwctl, Inbox, Telegram). */
#ifndef CW_APPROVALS_H
#define CW_APPROVALS_H
#include <stddef.h>

struct daemon;

enum approvals_result {
	APPROVALS_OK = 0,
	APPROVALS_NOT_FOUND,
	APPROVALS_ALREADY,		/* already answered */
	APPROVALS_RUN_ENDED,
	APPROVALS_ERROR,
	APPROVALS_REFUSED,		/* not an answer this surface may give (why says) */
};
enum approvals_result approvals_respond(struct daemon *, const char *approval_id, int allow,
	    const char *message, const char *actor, char *why, size_t whylen);
/*
 * The same, naming the surface: APPROVALS_VIA_TELEGRAM may not extend a budget
 * past its hard ceiling (a budget question, runner/run.c; docs/SECURITY.md).
 */
#define APPROVALS_VIA_TELEGRAM	1
enum approvals_result approvals_respond_via(struct daemon *, const char *approval_id,
	    int allow, const char *message, const char *actor, int via, char *why,
	    size_t whylen);
#define APPROVALS_BUDGET_TOOL		"budget"	/* the runner's budget question's tool */

#endif
