#include <stdio.h>

#include "commands.h"

int
runner_cmd_exec(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "cw-runner exec: not built yet\n");
	return RUNNER_EXIT_USAGE;
}

int
runner_cmd_spec(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "cw-runner spec: not built yet\n");
	return RUNNER_EXIT_USAGE;
}
