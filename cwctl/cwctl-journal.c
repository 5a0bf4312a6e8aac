/*
 * cwctl journal [--run ID] [--audit] [--json]: the safety journal (floor hits,
 * approvals and answers, sandbox_disabled, refused and interrupted runs) or, with
 * --audit, the audit log of state-changing API calls.
 */
#include <stdio.h>
#include <string.h>

#include "client.h"
#include "cwctl.h"
#include "json.h"

int
cwctl_journal(int argc, char **argv)
{
	char		 path[256], esc[160];
	cJSON		*o = NULL, *a, *e, *data;
	char		*dt;
	const char	*s;
	int		 json = 0, audit = 0, rc;
	const char	*run = NULL;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = 1;
		else if (strcmp(argv[i], "--audit") == 0)
			audit = 1;
		else if (strcmp(argv[i], "--run") == 0 && i + 1 < argc)
			run = argv[++i];
		else
			goto usage;
	}
	if (audit && run != NULL)
		goto usage;
	if (run != NULL) {
		if (client_escape(run, esc, sizeof esc) == -1)
			goto usage;
		snprintf(path, sizeof path, "/api/journal?run=%s", esc);
	} else
		snprintf(path, sizeof path, audit ? "/api/audit" : "/api/journal");
	if ((rc = client_call("GET", path, NULL, &o)) != 0)
		return rc;
	a = cJSON_GetObjectItemCaseSensitive(o, "entries");
	if (json)
		cwctl_print_json(a);
	else {
		cJSON_ArrayForEach(e, a) {
			data = cJSON_GetObjectItemCaseSensitive(e, "data");
			dt = data != NULL && !cJSON_IsNull(data) ? json_print(data) : NULL;
			if (audit)
				printf("%s %-10s %-16s %-28s %s\n", cwctl_vis(json_get_string(e, "ts")),
				    cwctl_vis(json_get_string(e, "actor")), cwctl_vis(json_get_string(e, "action")),
				    (s = cwctl_vis(json_get_string(e, "target"))) ? s : "-", dt ? cwctl_vis_json(dt) : "");
			else
				printf("%s %-26s %-20s %s\n", cwctl_vis(json_get_string(e, "ts")),
				    (s = cwctl_vis(json_get_string(e, "run_id"))) ? s : "-",
				    cwctl_vis(json_get_string(e, "kind")), dt ? cwctl_vis_json(dt) : "");
			cJSON_free(dt);
		}
	}
	cJSON_Delete(o);
	return CWCTL_EXIT_OK;
usage:
	fprintf(stderr, "usage: cwctl journal [--run RUN | --audit] [--json]\n");
	return CWCTL_EXIT_USAGE;
}
