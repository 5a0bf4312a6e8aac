/* Finding an engine to default to (enginepick.h). */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "enginepick.h"
#include "engines.h"

int
enginepick_which(const char *program, const char *path_env, char *out, size_t outlen)
{
	const char	*p = path_env, *colon;
	char		 cand[PATH_MAX];
	struct stat	 st;
	size_t		 n;

	if (program == NULL || *program == '\0' || strchr(program, '/') != NULL ||
	    path_env == NULL)
		return -1;
	for (; *p != '\0'; p = *colon != '\0' ? colon + 1 : colon) {
		colon = strchrnul(p, ':');
		n = (size_t)(colon - p);
		/* An empty entry means "." to a shell: not a place to find an engine. */
		if (n == 0 || p[0] != '/')
			continue;
		if ((size_t)snprintf(cand, sizeof cand, "%.*s/%s", (int)n, p, program) >=
		    sizeof cand)
			continue;
		if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) &&
		    access(cand, X_OK) == 0) {
			if ((size_t)snprintf(out, outlen, "%s", cand) >= outlen)
				return -1;
			return 0;
		}
	}
	return -1;
}

/* The agent CLIs: runnable, with a program of their own, taking a prompt. */
static int
enginepick_is_cli(const struct engine_info *e)
{
	return (e->caps & ENGINE_RUNNABLE) && (e->caps & ENGINE_TAKES_PROMPT) &&
	    e->binary != NULL;
}

const char *
enginepick_on_path(const char *path_env, char *found, size_t foundlen)
{
	const struct engine_info	*e;

	for (size_t i = 0; i < engines_count(); i++) {
		e = engines_at(i);
		if (enginepick_is_cli(e) && enginepick_which(e->binary, path_env, found,
		    foundlen) == 0)
			return e->name;
	}
	return NULL;
}

const char *
enginepick_order(void)
{
	static char	 buf[128];
	size_t		 len = 0;

	if (buf[0] != '\0')
		return buf;
	for (size_t i = 0; i < engines_count(); i++)
		if (enginepick_is_cli(engines_at(i)))
			len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s",
			    len > 0 ? ", " : "", engines_at(i)->name);
	return buf;
}
