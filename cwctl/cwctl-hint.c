/*
 * What to type next, for a person at a terminal: after run start (retry, continue)
 * the commands that follow and review the run. Only when standard output is a
 * terminal: a script that captures the id gets the id and nothing else.
 */
#include <stdio.h>
#include <unistd.h>

#include "cwctl.h"

void
cwctl_hint_run(const char *id)
{
	if (!isatty(STDOUT_FILENO))
		return;
	id = cwctl_vis(id);
	printf("  follow it:    cwctl run logs -f %s\n", id);
	printf("  when it ends: cwctl run show %s; cwctl run diff %s\n", id, id);
	printf("  then:         cwctl run land %s (merge, then drop its branch), cwctl run merge %s\n"
	    "                or cwctl run discard %s\n", id, id, id);
}
