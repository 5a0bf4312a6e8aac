/*
 * Which engine a task gets when it names none (issue 23: agent-first defaults). The
 * order is the engine table's (common/engines.c): the agent CLIs claude, codex and
 * opencode, the first whose program is on PATH; then byok, Clockwork's own agent, when
 * a provider key is stored. "command" is never picked: a shell line is asked for.
 * The daemon (daemon/tasks.c) puts engines.default from config.yaml before this.
 */
#ifndef CW_ENGINEPICK_H
#define CW_ENGINEPICK_H
#include <stddef.h>

/*
 * The full path of program in path_env (a PATH value; empty entries are skipped, not
 * read as the current directory) into out: 0, or -1 when no entry holds an
 * executable regular file of that name.
 */
int	 enginepick_which(const char *program, const char *path_env, char *out,
	    size_t outlen);
/*
 * The first agent CLI found on path_env, in the table's order, with its path in
 * found; NULL when none is (byok, which has no program, is the caller's to add).
 */
const char *enginepick_on_path(const char *path_env, char *found, size_t foundlen);
/* "claude, codex, opencode": the CLIs enginepick_on_path looks for, for messages. */
const char *enginepick_order(void);

#endif
