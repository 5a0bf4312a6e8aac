/* token.c: the API bearer token in $CLOCKWORK_HOME/api.token (0600). */
#ifndef CW_TOKEN_H
#define CW_TOKEN_H
#include <stddef.h>

/* DAEMON_TOKEN_BYTES random bytes from getrandom(2), as hex (outlen >= 2 * bytes + 1). */
int	token_random_hex(char *out, size_t outlen);
int	token_load_or_create(const char *home, char *out, size_t outlen, char *err,
	    size_t errlen);

#endif
