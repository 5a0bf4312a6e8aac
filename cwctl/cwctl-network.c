/*
 * cwctl network TASK [--ask | --no-ask] [--allow RULE]... [--add RULE]... [--json]:
 * a task's network policy (SPEC N1). With no option it is shown; --allow replaces the
 * task's rules with those given, --add appends, --ask makes a host no rule names an
 * approval instead of a refusal. A RULE is host:port or the name of a shipped rule set
 * (python, rust, go, java, node: common/netsets.c). The global and per-engine rules
 * live in config.yaml.
 */
#include <stdio.h>
#include <string.h>

#include "client.h"
#include "cwctl.h"
#include "json.h"

static void
cwctl_network_print(const cJSON *o)
{
	const cJSON	*a, *e;

	printf("task:  %s\n", json_get_string(o, "task") ? json_get_string(o, "task") : "?");
	printf("ask:   %s\n", cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "ask")) ?
	    "yes (a host no rule names becomes an approval)" : "no (refused at once)");
	a = cJSON_GetObjectItemCaseSensitive(o, "allow");
	printf("allow:%s\n", cJSON_GetArraySize(a) == 0 ? " (none of its own)" : "");
	cJSON_ArrayForEach(e, a)
		if (cJSON_IsString(e))
			printf("  %s\n", e->valuestring);
}

int
cwctl_network(int argc, char **argv)
{
	const char	*task = NULL;
	char		 path[256], esc[160];
	cJSON		*b, *allow = NULL, *add = NULL, *o = NULL;
	int		 json = 0, ask = -1, rc;

	if ((b = cJSON_CreateObject()) == NULL)
		return CWCTL_EXIT_FAILURE;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = 1;
		else if (strcmp(argv[i], "--ask") == 0)
			ask = 1;
		else if (strcmp(argv[i], "--no-ask") == 0)
			ask = 0;
		else if (strcmp(argv[i], "--allow") == 0 && i + 1 < argc) {
			if (allow == NULL)
				allow = cJSON_AddArrayToObject(b, "allow");
			cJSON_AddItemToArray(allow, cJSON_CreateString(argv[++i]));
		} else if (strcmp(argv[i], "--add") == 0 && i + 1 < argc) {
			if (add == NULL)
				add = cJSON_AddArrayToObject(b, "add");
			cJSON_AddItemToArray(add, cJSON_CreateString(argv[++i]));
		} else if (argv[i][0] == '-' || task != NULL)
			goto usage;
		else
			task = argv[i];
	}
	if (task == NULL || client_escape(task, esc, sizeof esc) == -1)
		goto usage;
	if (ask != -1)
		cJSON_AddBoolToObject(b, "ask", ask);
	snprintf(path, sizeof path, "/api/tasks/%s/network", esc);
	if (ask == -1 && allow == NULL && add == NULL)
		rc = client_call("GET", path, NULL, &o);
	else
		rc = client_call("POST", path, b, &o);
	cJSON_Delete(b);
	if (rc != 0)
		return rc;
	if (json)
		cwctl_print_json(o);
	else
		cwctl_network_print(o);
	cJSON_Delete(o);
	return CWCTL_EXIT_OK;
usage:
	cJSON_Delete(b);
	fprintf(stderr, "usage: cwctl network TASK [--ask | --no-ask] [--allow RULE]... "
	    "[--add RULE]... [--json]\n"
	    "  RULE: host:port, or a rule set: python, rust, go, java, node\n");
	return CWCTL_EXIT_USAGE;
}
