/* confcheck.c: the sandbox grants of a loaded configuration, resolved (-1: err says). */
#ifndef CW_CONFCHECK_H
#define CW_CONFCHECK_H
#include <stddef.h>

struct config;

int	confcheck_grants(const struct config *, char *err, size_t errlen);

#endif
