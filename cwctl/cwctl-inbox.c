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
#include "spawnchild.h"

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
		char			*xargv[] = { "xdg-open", (char *)url, NULL };
		char			*env[SPAWNCHILD_ENV_MAX], err[512];
		struct spawnchild	 sp;

		/* The display's variables and the basics; a session of its own. */
		spawnchild_env_tool(env, SPAWNCHILD_ENV_MAX, 1, NULL);
		memset(&sp, 0, sizeof sp);
		sp.path = "xdg-open";
		sp.argv = xargv;
		sp.env = env;
		sp.fds[0] = -1;
		sp.fds[1] = 1;
		sp.fds[2] = 2;
		sp.nfds = 3;
		sp.new_session = 1;
		if (spawnchild_start(&sp, &pid, err, sizeof err) == -1)
			fprintf(stderr, "cwctl: %s\n", err);
	}
	cJSON_Delete(o);
	return CWCTL_EXIT_OK;
}
