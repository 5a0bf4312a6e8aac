/*
 * The macOS backend's profile generator (SPEC S8): the per-run Seatbelt profile is the
 * versioned base profile (sandbox-profiles/clockwork-base.sb) followed by rules
 * rendered from the same struct sandbox_spec the Linux backend applies. Rendering is
 * pure text work with no filesystem access, so it is golden-tested on any host;
 * applying the result needs sandbox-exec on a Mac.
 */
#ifndef CW_SEATBELT_H
#define CW_SEATBELT_H
#include <stddef.h>

#include "spec.h"

/* The installed name of the base profile, inside sandbox-profiles/. */
#define SEATBELT_BASE_NAME	"clockwork-base.sb"
/* Every base profile starts with this, then a decimal version: ";; clockwork-base v1". */
#define SEATBELT_BASE_TAG	";; clockwork-base v"
/* A base profile larger than this is refused: it is a hand-written file. */
#define SEATBELT_BASE_MAX	(256 * 1024)

/* What the spec does not carry but the profile needs; seatbelt_render() fills defaults. */
struct seatbelt_options {
	const char	*cwhome;	/* Clockwork home (credential entries under it) */
	unsigned long	 uid;		/* names the Claude CLI's /tmp/claude-<uid> */
};

/*
 * Read and check a base profile (version line, (version 1), (deny default), no
 * (allow default), no NUL byte, at most SEATBELT_BASE_MAX bytes). *out is newly
 * allocated. -1 with err naming the path and the reason.
 */
int	seatbelt_load_base(const char *path, char **out, char *err, size_t errlen);
/* Check base profile text as seatbelt_load_base() does; store its version in *version. */
int	seatbelt_check_base(const char *text, unsigned *version, char *err, size_t errlen);

/*
 * Render the per-run profile for spec on top of base. The Clockwork home comes from
 * CLOCKWORK_HOME in the spec's environment, else <home>/.clockwork; the uid is the
 * caller's. *out is newly allocated. -1 with err naming the offending path when a
 * path is relative, holds a control character or invalid UTF-8, or cannot be written
 * as a rule; nothing is rendered then.
 */
int	seatbelt_render(const struct sandbox_spec *, const char *base, char **out,
	    char *err, size_t errlen);
/* seatbelt_render() with explicit options: deterministic, for golden tests. */
int	seatbelt_render_opts(const struct sandbox_spec *, const struct seatbelt_options *,
	    const char *base, char **out, char *err, size_t errlen);

/*
 * The Seatbelt regex (unquoted, before SBPL string escaping) matching an absolute
 * path or anything beneath it, where the path may hold fnmatch(3) wildcards (*, ?,
 * [...]); every other regex metacharacter is escaped. Refuses non-ASCII and control
 * bytes: the Seatbelt regex compiler only takes printable ASCII. *out newly allocated.
 */
int	seatbelt_glob_regex(const char *glob, char **out, char *err, size_t errlen);
/*
 * The Claude CLI's name for a working directory under /tmp/claude-<uid>/: every
 * character other than an ASCII letter or digit becomes '-' (one per UTF-16 unit, as
 * the CLI's JavaScript does). *out newly allocated; -1 on ENOMEM or invalid UTF-8.
 */
int	seatbelt_claude_slug(const char *workdir, char **out);

#endif
