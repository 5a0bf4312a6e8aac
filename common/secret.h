/*
 * Named secrets kept outside the sqlite store (SPEC K2): delivery credentials such as
 * the Telegram bot token, and later model-provider keys. A secret goes to the Secret
 * Service (the desktop keyring, through libsecret) when a session bus with a keyring
 * answers; otherwise to a 0600 file <cwhome>/secrets/<name> in a 0700 directory. That
 * directory is in the credential table (credpaths.c), so no run's sandbox can grant it.
 *
 * Names are 1..SECRET_NAME_MAX of [a-z0-9._-], not starting with '.'; values are at
 * most SECRET_VALUE_MAX bytes with no NUL. Every function returns -1 with err filled
 * (one line naming the secret and what failed) on error.
 */
#ifndef CW_SECRET_H
#define CW_SECRET_H
#include <stddef.h>

#define SECRET_NAME_MAX		64
#define SECRET_VALUE_MAX	4096
#define SECRET_DIR		"secrets"	/* under the Clockwork home */

enum secret_backend {
	SECRET_BACKEND_FILE = 0,
	SECRET_BACKEND_SERVICE,		/* the Secret Service, through libsecret */
};

/* 1 if name is a valid secret name. */
int	secret_name_valid(const char *name);
/* Where secrets go on this machine now: the Secret Service when it answers. */
enum secret_backend secret_backend(void);
const char *secret_backend_name(enum secret_backend);
/* Store value under name (replacing it), whole or not at all. 0 or -1. */
int	secret_set(const char *cwhome, const char *name, const char *value,
	    enum secret_backend *where, char *err, size_t errlen);
/* 1 and *value (malloc'd, NUL-terminated) when found, 0 when absent, -1 on error. */
int	secret_get(const char *cwhome, const char *name, char **value, char *err,
	    size_t errlen);
/* 1 when something was removed, 0 when there was nothing, -1 on error. */
int	secret_remove(const char *cwhome, const char *name, char *err, size_t errlen);
/* Overwrite and free a value from secret_get. */
void	secret_free(char *value);

#endif
