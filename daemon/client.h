/*
 * cwctl's client for clockworkd's API: finds the daemon and its token in the Clockwork
 * home, talks HTTP to 127.0.0.1 (libcurl, proxies ignored), and maps answers to
 * cwctl's exit codes.
 */
#ifndef CW_CLIENT_H
#define CW_CLIENT_H
#include <stddef.h>

#include <cjson/cJSON.h>

/*
 * One request. body may be NULL. On success *out holds the parsed JSON answer (or
 * NULL for an empty one) and the return is a cwctl exit code: 0 for 2xx; otherwise the
 * error is printed as "cwctl: MESSAGE" and the code is 1 (failed), 3 (refused:
 * 409 already answered / run ended / forbidden) or 4 (daemon not running).
 */
int	client_call(const char *method, const char *path, const cJSON *body, cJSON **out);
/* As client_call, but prints nothing and hands back the HTTP status (0: no daemon). */
int	client_call_quiet(const char *method, const char *path, const cJSON *body,
	    long *status, cJSON **out);
/* Print v as indented JSON on stdout. */
void	client_print_json(const cJSON *v);
/* URL-encode s into out; -1 when it does not fit. */
int	client_escape(const char *s, char *out, size_t outlen);

#endif
