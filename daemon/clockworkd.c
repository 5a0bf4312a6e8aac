#include <stdio.h>
#include <string.h>

int
main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--version") == 0) {
		printf("clockworkd %s\n", CW_VERSION);
		return 0;
	}
	if (argc > 1 && strcmp(argv[1], "--help") == 0) {
		printf("usage: clockworkd [--help | --version]\n");
		return 0;
	}
	fprintf(stderr, "clockworkd: unknown argument '%s' (try --help)\n", argc > 1 ? argv[1] : "");
	return 2;
}
