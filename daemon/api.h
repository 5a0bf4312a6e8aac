/* api.c: the HTTP API. */
#ifndef CW_API_H
#define CW_API_H
#include <stddef.h>

struct daemon;

int	api_start(struct daemon *, char *err, size_t errlen);
void	api_stop(struct daemon *);

#endif
