/*
 * cw-floor-hook: a Claude Code PreToolUse hook. It forwards the hook's JSON to the
 * runner's bridge and exits 0 (allow) or 2 (deny, reason on stderr). Every error is 2.
 */
#include <stdio.h>
#include <string.h>

#include "hook.h"

int
main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0) {
			printf("usage: cw-floor-hook --port PORT --run TOKEN < hook.json\n");
			return 0;
		}
		if (strcmp(argv[i], "--version") == 0) {
			printf("cw-floor-hook %s\n", CW_VERSION);
			return 0;
		}
	}
	fprintf(stderr, "cw-floor-hook: not yet able to reach the bridge; denying\n");
	return HOOK_EXIT_DENY;
}
