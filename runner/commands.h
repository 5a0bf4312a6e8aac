/* cw-runner's subcommands, one file each, registered in main.c's table. */
#ifndef CW_RUNNER_COMMANDS_H
#define CW_RUNNER_COMMANDS_H

/* Exit codes shared by every subcommand (documented in --help). */
#define RUNNER_EXIT_OK		0
#define RUNNER_EXIT_FAILURE	1	/* the run or command failed */
#define RUNNER_EXIT_USAGE	2	/* bad arguments or bad input */
#define RUNNER_EXIT_REFUSED	3	/* the sandbox could not be enforced: nothing ran */
/* exec: the command's own status is passed through; killed by signal N: 128 + N. */

int	runner_cmd_spec(int argc, char **argv);	/* spec.c's front end: exec.c */
int	runner_cmd_exec(int argc, char **argv);	/* exec.c */
int	runner_cmd_run(int argc, char **argv);	/* run.c */

#endif
