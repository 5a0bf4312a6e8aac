/*
 * cwctl task rules|unrule|ask: who answers a task's tool calls (SPEC A1). rules lists
 * the command families a person answered "always for this task" for (cwctl approve
 * --for-task, the Inbox's or Telegram's button) and the risks the task asks about;
 * unrule forgets one family; ask sets approvals.ask for the task (default: back to
 * config.yaml's).
 */
#include <stdio.h>
#include <string.h>

#include "client.h"
#include "cwctl.h"
#include "json.h"

static int
cwctl_task_rules_usage(void)
{
	fprintf(stderr,
	    "usage: cwctl task rules NAME [--json]\n"
	    "       cwctl task unrule NAME FAMILY [--json]   (FAMILY as rules shows it, "
	    "e.g. 'npm test')\n"
	    "       cwctl task ask NAME all|none|default|RISK[,RISK...] [--json]\n"
	    "             (RISK: ordinary, outside_worktree, fetch_exec, destructive)\n");
	return CWCTL_EXIT_USAGE;
}

/* The approvals block of cwctl task show and cwctl task rules. */
void
cwctl_task_rules_print(const cJSON *o)
{
	const cJSON	*r;
	const char	*ask = json_get_string(o, "ask");
	const char	*eff = json_get_string(o, "ask_effective");
	int		 n = 0;

	printf("approvals.ask:   %s%s\n", eff != NULL ? cwctl_vis(eff) : "?", ask != NULL ?
	    " (this task's)" : " (from config.yaml)");
	cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(o, "rules")) {
		const char *fam = json_get_string(r, "family");
		printf("%s%-24s up to %s, by %s at %s\n", n++ == 0 ? "rules:           " :
		    "                 ", fam != NULL ? cwctl_vis(fam) : "?",
		    cwctl_vis(json_get_string(r, "max_risk")),
		    cwctl_vis(json_get_string(r, "created_by")),
		    cwctl_vis(json_get_string(r, "created_at")));
	}
	if (n == 0)
		printf("rules:           (none: cwctl approve ID --for-task remembers one)\n");
}

int
cwctl_task_rules(int argc, char **argv)
{
	char		 path[256], name[200];
	const char	*sub = argv[0], *pos[2] = { NULL, NULL };
	cJSON		*o = NULL, *b = NULL, *a;
	int		 json = 0, n = 0, rc, want;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = 1;
		else if (n == 2 || (argv[i][0] == '-' && argv[i][1] != '\0'))
			return cwctl_task_rules_usage();
		else
			pos[n++] = argv[i];
	}
	want = strcmp(sub, "rules") == 0 ? 1 : 2;
	if (n != want || client_escape(pos[0], name, sizeof name) == -1)
		return cwctl_task_rules_usage();
	snprintf(path, sizeof path, "/api/tasks/%s/rules", name);
	if (strcmp(sub, "unrule") == 0) {
		b = cJSON_CreateObject();
		json_add_string(b, "remove", pos[1]);
	} else if (strcmp(sub, "ask") == 0) {
		b = cJSON_CreateObject();
		if (strcmp(pos[1], "default") == 0)
			cJSON_AddNullToObject(b, "ask");
		else if (strchr(pos[1], ',') == NULL)
			json_add_string(b, "ask", pos[1]);
		else {
			char	 buf[256], *p, *q;

			snprintf(buf, sizeof buf, "%s", pos[1]);
			a = cJSON_AddArrayToObject(b, "ask");
			for (p = buf; p != NULL; p = q) {
				if ((q = strchr(p, ',')) != NULL)
					*q++ = '\0';
				cJSON_AddItemToArray(a, cJSON_CreateString(p));
			}
		}
	}
	rc = client_call(b != NULL ? "POST" : "GET", path, b, &o);
	cJSON_Delete(b);
	if (rc != 0)
		return rc;
	if (json)
		cwctl_print_json(o);
	else {
		if (strcmp(sub, "unrule") == 0)
			printf("task %s: rule '%s' removed (runs already going keep it until "
			    "they end)\n", pos[0], pos[1]);
		cwctl_task_rules_print(o);
	}
	cJSON_Delete(o);
	return CWCTL_EXIT_OK;
}
