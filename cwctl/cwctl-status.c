/* cwctl status [--json]: is the daemon up, and what is it doing. */
#include <stdio.h>
#include <string.h>

#include "client.h"
#include "cwctl.h"
#include "json.h"

/* What waits on a person comes first: an unnoticed approval stalls a run. */
static void
cwctl_status_waiting(const cJSON *o)
{
	const cJSON	*a = cJSON_GetObjectItemCaseSensitive(o, "approvals_pending"), *e;
	int		 n = cJSON_GetArraySize(a);

	if (n == 0)
		return;
	printf("WAITING ON YOU: %d approval%s pending\n", n, n == 1 ? "" : "s");
	cJSON_ArrayForEach(e, a)
		cwctl_approvals_announce(stdout, e, "  ");
	printf("\n");
}

static void
cwctl_status_telegram(const cJSON *o)
{
	const cJSON	*t = cJSON_GetObjectItemCaseSensitive(o, "telegram");
	const char	*err;
	int		 set = 0;

	json_get_bool(t, "token_set", &set);
	if (!set) {
		printf("telegram: off (no bot token)\n");
		return;
	}
	if ((err = json_get_string(t, "error")) != NULL)
		printf("telegram: %s\n", cwctl_vis(err));
	else
		printf("telegram: on\n");
}

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
		cwctl_status_waiting(o);
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
		cwctl_status_telegram(o);
		if ((s = json_get_string(o, "desktop_notifications")) != NULL)
			printf("desktop notifications: %s\n", cwctl_vis(s));
	}
	cJSON_Delete(o);
	return CWCTL_EXIT_OK;
}
