/* telegram.c: approvals through a Telegram bot (outbound long-poll only). */
#ifndef CW_TELEGRAM_H
#define CW_TELEGRAM_H
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

struct daemon;

#define TELEGRAM_TOKEN_SECRET	"telegram.bot_token"	/* its name in secret.h */
int	telegram_start(struct daemon *);
void	telegram_stop(struct daemon *);
/* Re-read the token from the secret store; a new one restarts polling. */
int	telegram_reload(struct daemon *);
int	telegram_set_token(struct daemon *, const char *token, char *err, size_t errlen);
/* Send a test message to chat_id; its outcome shows in telegram_status_json. */
int	telegram_test(struct daemon *, int64_t chat_id, char *err, size_t errlen);
cJSON	*telegram_status_json(struct daemon *);

#endif
