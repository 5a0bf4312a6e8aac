/*
 * Clockwork's own agent (the "byok" engine): the process that holds the provider key.
 *
 * The runner starts it through apply_sandbox() in a sandbox of its own, apart from the
 * run's (engine_byok.c), with its stdin a socket to the run's tool host (toolhost.c);
 * the first line on that socket, queued by the runner before the tool host exists, is
 * the run's facts with the key (never argv or the environment). Before it reads that
 * line it narrows itself for good: not dumpable (so /proc/<pid>/mem, environ
 * and fd of it are closed to processes of the same user), no_new_privs, a Landlock
 * ruleset that grants nothing writable and only the CA certificates and resolver files
 * readable, and a seccomp filter that forbids exec, ptrace and process_vm_*. It talks
 * to the provider over libcurl (TLS verified), sends each tool call to the tool host
 * and never runs one itself, and writes its progress as JSON lines on stdout, read by
 * runner/engine_byok.c.
 */
#ifndef CW_AGENT_H
#define CW_AGENT_H
#include <stddef.h>

#define AGENT_FD_TOOLS	0	/* JSON lines both ways with the tool host; the first
				   line in is the run's facts, the key among them */
#define AGENT_INIT_MAX	(256 * 1024)

#define AGENT_CONVERSATION_MESSAGES	100000	/* the most a kept conversation holds */

struct cJSON;

/*
 * A kept conversation, {"messages": [{role, content}, ...]}, as the runner sends it to
 * a continued run (it was written by an earlier run's agent, from what the model and
 * the tools said: untrusted). 0 with *messages (owned by the caller): a non-empty
 * array whose turns alternate, a user's first, each content a string or an array of
 * typed blocks; -1 with err.
 */
int	agent_conversation_parse(const char *text, size_t len, struct cJSON **messages,
	    char *err, size_t errlen);

/* Narrow the calling process as described above. 0, or -1 with err. */
int	agent_narrow(char *err, size_t errlen);

int	runner_cmd_agent(int argc, char **argv);
int	runner_cmd_toolhost(int argc, char **argv);

#endif
