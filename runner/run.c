#include <stdio.h>

#include "commands.h"

int
runner_cmd_run(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "cw-runner run: not built yet\n");
	return RUNNER_EXIT_USAGE;
}
