/* cwctl approvals [--run RUN] [--json]: the approvals waiting for an answer. */
#include <stdio.h>
#include <string.h>

#include "client.h"
#include "cwctl.h"
#include "json.h"

int
cwctl_approvals(int argc, char **argv)
{
	char		 path[256], esc[160];
	cJSON		*o = NULL, *a, *e, *in;
	char		*it;
	int		 json = 0, rc;

	snprintf(path, sizeof path, "/api/approvals");
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = 1;
		else if (strcmp(argv[i], "--run") == 0 && i + 1 < argc &&
		    client_escape(argv[i + 1], esc, sizeof esc) == 0) {
			snprintf(path, sizeof path, "/api/approvals?run=%s", esc);
			i++;
		} else {
			fprintf(stderr, "usage: cwctl approvals [--run RUN] [--json]\n");
			return CWCTL_EXIT_USAGE;
		}
	}
	if ((rc = client_call("GET", path, NULL, &o)) != 0)
		return rc;
	a = cJSON_GetObjectItemCaseSensitive(o, "approvals");
	if (json)
		client_print_json(a);
	else if (cJSON_GetArraySize(a) == 0)
		printf("no approvals pending\n");
	else {
		printf("%-16s %-26s %-12s %s\n", "ID", "RUN", "TOOL", "INPUT");
		cJSON_ArrayForEach(e, a) {
			in = cJSON_GetObjectItemCaseSensitive(e, "input");
			it = in != NULL ? json_print(in) : NULL;
			printf("%-16s %-26s %-12s %.120s\n", json_get_string(e, "id"),
			    json_get_string(e, "run_id"), json_get_string(e, "tool"),
			    it != NULL ? it : "");
			cJSON_free(it);
		}
	}
	cJSON_Delete(o);
	return CWCTL_EXIT_OK;
}
