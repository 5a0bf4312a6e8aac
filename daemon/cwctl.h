/* cwctl's verbs, one file each (cwctl-<verb>.c), registered in cwctl.c's table. */
#ifndef CW_CWCTL_H
#define CW_CWCTL_H

/* Exit codes (documented in cwctl --help and docs/cwctl.1). */
#define CWCTL_EXIT_OK		0
#define CWCTL_EXIT_FAILURE	1	/* the thing asked for failed */
#define CWCTL_EXIT_USAGE	2
#define CWCTL_EXIT_DENIED	3	/* policy check: denied; approve/deny: refused */
#define CWCTL_EXIT_NODAEMON	4	/* clockworkd is not running */

int	cwctl_policy(int argc, char **argv);	/* cwctl-policy.c */
int	cwctl_sandbox(int argc, char **argv);	/* cwctl-sandbox.c */

#endif
