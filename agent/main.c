/*
 * cw-agent: Clockwork's own agent, the byok engine, apart from cw-runner so that the
 * program that builds every sandbox carries no provider code and no TLS. Two entry
 * points, both started by cw-runner (runner/engine_byok.c), both sandboxed:
 *   loop   the model loop, the one process that holds the provider key (agent.c)
 *   tools  the tool host, the engine process in the run's sandbox (toolhost.c)
 */
#include <stdio.h>
#include <string.h>

#include "agent.h"

static void
agent_usage(FILE *f)
{
	fprintf(f, "usage: cw-agent loop | tools\n       cw-agent --help | --version\n\n"
	    "  loop   the byok engine's model loop (started by cw-runner run)\n"
	    "  tools  the byok engine's tools, in the run's sandbox (started by cw-runner run)\n"
	    "\nexit codes: 0 ok; 1 failed; 2 usage or bad input; 3 not in a sandbox, or the\n"
	    "sandbox could not be narrowed (nothing ran).\n");
}

int
main(int argc, char **argv)
{
	if (argc < 2) {
		agent_usage(stderr);
		return AGENT_EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		agent_usage(stdout);
		return AGENT_EXIT_OK;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("cw-agent %s\n", CW_VERSION);
		return AGENT_EXIT_OK;
	}
	if (strcmp(argv[1], "loop") == 0)
		return agent_cmd_loop(argc - 1, argv + 1);
	if (strcmp(argv[1], "tools") == 0)
		return agent_cmd_tools(argc - 1, argv + 1);
	fprintf(stderr, "cw-agent: unknown command or flag '%s' (try --help)\n", argv[1]);
	return AGENT_EXIT_USAGE;
}
