/*
 * The Telegram Bot API's JSON, without any I/O (daemon/tgapi.c): reading replies and
 * updates, which are untrusted input from the network (fuzz_tgapi), and writing the
 * text of approval messages. The daemon's side of the conversation is telegram.c.
 */
#ifndef CW_TGAPI_H
#define CW_TGAPI_H
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "store.h"

#define TGAPI_MAX_REPLY		(4 * 1024 * 1024)	/* a reply past this is refused */
#define TGAPI_TEXT_MAX		4096	/* Telegram's limit on a message's text */
#define TGAPI_COMMAND_SHOWN	2800	/* bytes of a command a message shows */
#define TGAPI_DATA_MAX		64	/* Telegram's limit on callback_data */
#define TGAPI_DATA_PREFIX	"cw1:"

struct tgapi_press;

#define TGAPI_UPDATES_MAX	1000	/* presses one reply may carry */

/*
 * A reply's envelope: {"ok":true,"result":...} or {"ok":false,"error_code":N,...}.
 * tgapi_reply_parse fills root and result; the daemon never does: cw-parse parses the
 * body (daemon/parsechild.c) and sends the digest (message_id, updates) back.
 */
struct tgapi_reply {
	int	 ok;
	long	 error_code;
	long	 retry_after;		/* parameters.retry_after, or 0 */
	char	 description[256];
	cJSON	*root;
	cJSON	*result;		/* inside root; NULL when not ok */
	/* The digest of result (tgapi_reply_digest). */
	int			 has_message_id;
	int64_t			 message_id;	/* result.message_id */
	int			 result_array;	/* result is an array (getUpdates) */
	struct tgapi_press	*updates;	/* its updates that parse, in order */
	size_t			 n_updates;
};
/* 0, or -1 when the body is not a Bot API envelope (not JSON, no "ok"). */
int	tgapi_reply_parse(const char *body, size_t len, struct tgapi_reply *out);
/* Fill the digest from result, then free root; 0, or -1 on ENOMEM. */
int	tgapi_reply_digest(struct tgapi_reply *);
void	tgapi_reply_free(struct tgapi_reply *);

/* A press of one of our inline buttons, as an update carries it. */
struct tgapi_press {
	int64_t	 update_id;
	int	 is_press;		/* 0: another kind of update, to skip */
	int	 ours;			/* the button data is one of ours */
	char	 query_id[128];
	int64_t	 from_id;
	char	 from_username[40];	/* [A-Za-z0-9_] only, else "" */
	int64_t	 chat_id;		/* 0: the message is not there */
	char	 chat_type[16];		/* private, group, supergroup, channel */
	int64_t	 message_id;
	int	 allow;
	int	 for_task;		/* "Always for this task": allow and remember */
	char	 approval_id[STORE_ID_LEN];
};
/* Read one update; 0, or -1 when it has no update_id (the whole reply is then bad). */
int	tgapi_update_parse(const cJSON *update, struct tgapi_press *);
/*
 * The callback_data of a button: "cw1:a:<id>" (allow 1), "cw1:t:<id>" (allow 2: allow
 * and remember for the task) or "cw1:d:<id>" (0). -1 if too long.
 */
int	tgapi_button_data(char *out, size_t outlen, int allow, const char *approval_id);
/* 1 when uid is in the JSON array allowed (a task's allowed_user_ids). */
int	tgapi_user_allowed(const char *allowed, int64_t uid);
/* 1 for a chat whose members are not one person: group, supergroup, channel. */
int	tgapi_chat_is_group(const char *type, int64_t chat_id);

/*
 * The text of an approval's message: pending (tool, command masked and made visible,
 * cut with a pointer to `cwctl approvals show`, run, task, time left) or, once
 * answered, what became of it and who answered. Newly allocated, or NULL.
 */
char	*tgapi_message_text(const struct store_telegram_item *, time_t now);
/*
 * The text of a run's notice: the end of the run in one line (runend.h: how it
 * ended, the files its work changed) and what to type to review it, the Inbox's page
 * of it (review_url, or NULL); before those, the automation files its work changes
 * (SPEC U3: listed; merging needs --accept-automation) or that its work was refused
 * into quarantine and where. Paths masked and made visible; cut to TGAPI_TEXT_MAX.
 * Newly allocated, or NULL (also when nothing is to be said: announce_end 0 and the
 * work needs no eye).
 */
char	*tgapi_notice_text(const char *task, const char *run_id, const cJSON *report,
	    const char *review_url, int announce_end);
/*
 * The inline keyboard of a pending approval: Approve, "Always for this task" when
 * always (not for a budget question), Deny. NULL on ENOMEM or a too-long id.
 */
cJSON	*tgapi_keyboard(const char *approval_id, int always);
/* Seconds from now to a store timestamp; INT64_MIN when there is none. */
int64_t	 tgapi_seconds_left(const char *deadline, time_t now);

#endif
