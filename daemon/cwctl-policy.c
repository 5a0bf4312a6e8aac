#include <stdio.h>

#include "cwctl.h"

int
cwctl_policy(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "cwctl policy: not built yet\n");
	return CWCTL_EXIT_USAGE;
}
