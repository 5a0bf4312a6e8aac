#include <stdio.h>

#include "cwctl.h"

int
cwctl_sandbox(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "cwctl sandbox: not built yet\n");
	return CWCTL_EXIT_USAGE;
}
