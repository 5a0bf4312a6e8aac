/* cwctl status [--json]: is the daemon up, and what is it doing. */
#include <stdio.h>
#include <string.h>

#include "client.h"
#include "cwctl.h"
#include "json.h"

int
cwctl_status(int argc, char **argv)
{
	cJSON		*o = NULL, *r;
	const char	*s;
	double		 n;
	int		 json = 0, rc;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = 1;
		else {
			fprintf(stderr, "usage: cwctl status [--json]\n");
			return CWCTL_EXIT_USAGE;
		}
	}
	if ((rc = client_call("GET", "/api/status", NULL, &o)) != 0)
		return rc;
	if (json)
		cwctl_print_json(o);
	else {
		json_get_number(o, "pid", &n);
		printf("clockworkd %s running, pid %.0f", (s = json_get_string(o,
		    "version")) != NULL ? s : "?", n);
		json_get_number(o, "port", &n);
		printf(", Inbox on 127.0.0.1:%.0f\n", n);
		printf("socket: %s\n", (s = cwctl_vis(json_get_string(o, "socket"))) ? s : "?");
		printf("home: %s\n", (s = cwctl_vis(json_get_string(o, "home"))) ? s : "?");
		printf("config: %s\n", (s = cwctl_vis(json_get_string(o, "config"))) ? s : "(defaults)");
		r = cJSON_GetObjectItemCaseSensitive(o, "runs");
		json_get_number(r, "live", &n);
		printf("runs: %.0f live", n);
		json_get_number(r, "queued", &n);
		printf(", %.0f queued", n);
		json_get_number(o, "max_concurrent_runs", &n);
		printf(" (at most %.0f at once)\n", n);
	}
	cJSON_Delete(o);
	return CWCTL_EXIT_OK;
}
