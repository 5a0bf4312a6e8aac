/*
 * cwctl sandbox exec ...: the same as `cw-runner exec ...`, which it becomes. cw-runner
 * is found next to cwctl's own executable, never through PATH, so the sandbox a user
 * tries is the one installed with this cwctl.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cwctl.h"

static int
cwctl_sandbox_usage(FILE *f)
{
	fprintf(f, "usage: cwctl sandbox exec --workdir DIR [--engine NAME] "
	    "[--context DIR:ro]... -- CMD [ARG...]\n"
	    "Runs CMD inside exactly the sandbox a run would get (see cw-runner exec);\n"
	    "exits with CMD's status, 3 when the sandbox could not be enforced.\n");
	return f == stdout ? CWCTL_EXIT_OK : CWCTL_EXIT_USAGE;
}

int
cwctl_sandbox(int argc, char **argv)
{
	char	 self[PATH_MAX], runner[PATH_MAX + 16], wd[PATH_MAX], **nargv, *slash;
	ssize_t	 n;

	if (argc < 2)
		return cwctl_sandbox_usage(stderr);
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
		return cwctl_sandbox_usage(stdout);
	if (strcmp(argv[1], "exec") != 0) {
		fprintf(stderr, "cwctl sandbox: unknown subcommand '%s'\n", argv[1]);
		return cwctl_sandbox_usage(stderr);
	}
	if ((n = readlink("/proc/self/exe", self, sizeof self - 1)) == -1) {
		fprintf(stderr, "cwctl sandbox: /proc/self/exe: %s\n", strerror(errno));
		return CWCTL_EXIT_FAILURE;
	}
	self[n] = '\0';
	if ((slash = strrchr(self, '/')) != NULL)
		*slash = '\0';
	snprintf(runner, sizeof runner, "%s/cw-runner", self);

	/* argv[1..] is "exec ARGS...": cw-runner takes exactly that. */
	if ((nargv = calloc((size_t)argc + 1, sizeof *nargv)) == NULL) {
		fprintf(stderr, "cwctl sandbox: out of memory\n");
		return CWCTL_EXIT_FAILURE;
	}
	nargv[0] = runner;
	for (int i = 1; i < argc; i++) {
		nargv[i] = argv[i];
		if (strcmp(argv[i], "--") == 0)
			break;
		/* A relative --workdir (".") is resolved here, as task add does --repo. */
		if (strcmp(argv[i], "--workdir") == 0 && i + 1 < argc && argv[i + 1][0] != '/') {
			if (realpath(argv[i + 1], wd) == NULL) {
				fprintf(stderr, "cwctl sandbox: --workdir %s: %s\n", argv[i + 1],
				    strerror(errno));
				free(nargv);
				return CWCTL_EXIT_FAILURE;
			}
			nargv[i + 1] = wd;
			i++;
		}
	}
	for (int i = 1; i < argc; i++)
		if (nargv[i] == NULL)
			nargv[i] = argv[i];
	execv(runner, nargv);
	fprintf(stderr, "cwctl sandbox: %s: %s\n", runner, strerror(errno));
	free(nargv);
	return CWCTL_EXIT_FAILURE;
}
