/*
 * cwctl inbox [--open] | --revoke: print a one-time sign-in link to the Inbox page
 * (valid for a minute, usable once), or end every Inbox session.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "client.h"
#include "cwctl.h"
#include "json.h"

int
cwctl_inbox(int argc, char **argv)
{
	int		 open_it = 0, revoke = 0, rc;
	const char	*url;
	double		 n = 0;
	cJSON		*o = NULL;
	pid_t		 pid;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--open") == 0)
			open_it = 1;
		else if (strcmp(argv[i], "--revoke") == 0)
			revoke = 1;
		else {
			fprintf(stderr, "usage: cwctl inbox [--open] | --revoke\n");
			return CWCTL_EXIT_USAGE;
		}
	}
	if (revoke) {
		if ((rc = client_call("POST", "/api/inbox/revoke", NULL, &o)) != 0)
			return rc;
		json_get_number(o, "revoked", &n);
		printf("revoked %.0f Inbox session(s)\n", n);
		cJSON_Delete(o);
		return CWCTL_EXIT_OK;
	}
	if ((rc = client_call("POST", "/api/inbox/code", NULL, &o)) != 0)
		return rc;
	if ((url = json_get_string(o, "url")) == NULL) {
		fprintf(stderr, "cwctl: the daemon sent no sign-in link\n");
		cJSON_Delete(o);
		return CWCTL_EXIT_FAILURE;
	}
	json_get_number(o, "expires_in", &n);
	printf("%s\n", url);
	fprintf(stderr, "Open this link within %.0f seconds; it works once.\n", n);
	if (open_it) {
		/* The browser gets the link on its command line, not through a shell. */
		fflush(stdout);
		if ((pid = fork()) == 0) {
			execlp("xdg-open", "xdg-open", url, (char *)NULL);
			_exit(127);
		}
		if (pid == -1)
			perror("cwctl: fork");
	}
	cJSON_Delete(o);
	return CWCTL_EXIT_OK;
}
