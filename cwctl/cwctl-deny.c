/* cwctl deny ID [--message M]: see cwctl-approve.c. */
#include "cwctl.h"

int
cwctl_deny(int argc, char **argv)
{
	return cwctl_answer(argc, argv, 0);
}
