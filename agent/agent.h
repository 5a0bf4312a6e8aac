/*
 * Clockwork's own agent (the "byok" engine): the process that holds the provider key.
 *
 * cw-agent (agent/main.c) has two entry points: `cw-agent loop`, this one, and
 * `cw-agent tools`, the tool host (toolhost.c). cw-runner starts the loop through
 * apply_sandbox() in a sandbox of its own, apart from the run's (engine_byok.c), with
 * its stdin a socket to the run's tool host;
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

/* Narrow the calling process as described above. 0, or -1 with err. */
int	agent_narrow(char *err, size_t errlen);

/* cw-agent's entry points: agent.c and toolhost.c. */
int	agent_cmd_loop(int argc, char **argv);
int	agent_cmd_tools(int argc, char **argv);

/* Exit codes, as cw-runner's (runner/commands.h), which reads them. */
#define AGENT_EXIT_OK		0
#define AGENT_EXIT_FAILURE	1
#define AGENT_EXIT_USAGE	2
#define AGENT_EXIT_REFUSED	3

/*
 * Set by both entry points, which run sandboxed: in a build with AddressSanitizer,
 * LeakSanitizer's check at exit stops the world with ptrace, which the sandbox's
 * seccomp filter refuses, and would fail the process. No effect in a normal build.
 */
extern int	agent_lsan_off;

#endif
