/*
 * cwctl gc [--task NAME] [--force] [--json]: prune finished runs' worktrees now, by
 * the retention rule (keep the newest keep_runs per task and anything not merged or
 * exported); --force prunes the older unmerged ones too (their branches stay).
 */
#include <stdio.h>
#include <string.h>

#include "client.h"
#include "cwctl.h"
#include "json.h"

int
cwctl_gc(int argc, char **argv)
{
	cJSON	*b, *o = NULL, *e;
	double	 kept = 0, caches = 0;
	int	 json = 0, rc;

	b = cJSON_CreateObject();
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = 1;
		else if (strcmp(argv[i], "--force") == 0)
			cJSON_AddBoolToObject(b, "force", 1);
		else if (strcmp(argv[i], "--task") == 0 && i + 1 < argc)
			json_add_string(b, "task", argv[++i]);
		else {
			cJSON_Delete(b);
			fprintf(stderr, "usage: cwctl gc [--task NAME] [--force] [--json]\n");
			return CWCTL_EXIT_USAGE;
		}
	}
	if ((rc = client_send("POST", "/api/gc", b, &o)) != 0)
		return rc;
	if (json)
		cwctl_print_json(o);
	else {
		cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(o, "pruned"))
			printf("pruned %s\n", e->valuestring);
		json_get_number(o, "kept", &kept);
		printf("%d worktree(s) pruned, %.0f kept\n",
		    cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(o, "pruned")), kept);
		if (json_get_number(o, "caches_removed", &caches) == 0 && caches > 0)
			printf("%.0f archived task(s)' tool caches removed\n", caches);
	}
	cJSON_Delete(o);
	return CWCTL_EXIT_OK;
}
