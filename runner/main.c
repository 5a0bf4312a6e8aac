/*
 * cw-runner: one process per run. It builds the sandbox spec, applies it, starts the
 * engine in its own process group, hosts the permission bridge and reports. Its
 * subcommands are listed in one table.
 */
#include <stdio.h>
#include <string.h>

#include "commands.h"

static const struct runner_cmd {
	const char	*name;
	int		(*fn)(int, char **);
	const char	*usage;
} runner_cmds[] = {
	{ "run", runner_cmd_run, "run                      read a run spec on stdin, JSON lines both ways (daemon use)" },
	{ "exec", runner_cmd_exec, "exec --workdir DIR [--engine NAME] [--context DIR:ro] -- CMD [ARG...]" },
	{ "spec", runner_cmd_spec, "spec --json|--plan [--workdir DIR] [--engine NAME] [--context DIR:ro]" },
};

static void
runner_usage(FILE *f)
{
	fprintf(f, "usage: cw-runner COMMAND [ARGS]\n       cw-runner --help | --version\n\ncommands:\n");
	for (size_t i = 0; i < sizeof runner_cmds / sizeof runner_cmds[0]; i++)
		fprintf(f, "  %s\n", runner_cmds[i].usage);
	fprintf(f, "\nexit codes: 0 ok; 1 the run failed; 2 usage or bad input; 3 sandbox could not\n"
	    "be enforced (nothing ran); exec passes the command's own status through\n"
	    "(128+N when it was killed by signal N).\n");
}

int
main(int argc, char **argv)
{
	if (argc < 2) {
		runner_usage(stderr);
		return RUNNER_EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		runner_usage(stdout);
		return RUNNER_EXIT_OK;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("cw-runner %s\n", CW_VERSION);
		return RUNNER_EXIT_OK;
	}
	for (size_t i = 0; i < sizeof runner_cmds / sizeof runner_cmds[0]; i++)
		if (strcmp(argv[1], runner_cmds[i].name) == 0)
			return runner_cmds[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "cw-runner: unknown command or flag '%s' (try --help)\n", argv[1]);
	return RUNNER_EXIT_USAGE;
}
