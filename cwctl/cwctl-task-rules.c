/*
 * cwctl task rules|unrule|ask: who answers a task's tool calls (SPEC A1). rules lists
 * the command families a person answered "always for this task" for (cwctl approve
 * --for-task, the Inbox's or Telegram's button), the families the task always asks
 * about, and the risks it asks about; unrule forgets one family; ask sets
 * approvals.ask for the task (default: back to config.yaml's).
 *
 * rules --from-repo shows the Claude Code rules committed in the task's repository
 * (.claude/settings.json, settings.local.json) and what each would become, with a
 * digest; rules --import-repo DIGEST imports them, refused (exit 3, nothing changed)
 * when the repository's settings are no longer the ones that digest was shown for.
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
	    "       cwctl task rules NAME --from-repo [--json]   (the repository's Claude "
	    "rules, shown)\n"
	    "       cwctl task rules NAME --import-repo DIGEST [--json]   (imported, as "
	    "shown)\n"
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
		const char *kind = json_get_string(r, "kind");
		const char *src = json_get_string(r, "source");
		const char *lead = n++ == 0 ? "rules:           " : "                 ";
		if (kind != NULL && strcmp(kind, "ask") == 0)
			printf("%s%-24s always asked, by %s at %s\n", lead,
			    fam != NULL ? cwctl_vis(fam) : "?",
			    cwctl_vis(json_get_string(r, "created_by")),
			    cwctl_vis(json_get_string(r, "created_at")));
		else
			printf("%s%-24s up to %s, by %s at %s\n", lead,
			    fam != NULL ? cwctl_vis(fam) : "?",
			    cwctl_vis(json_get_string(r, "max_risk")),
			    cwctl_vis(json_get_string(r, "created_by")),
			    cwctl_vis(json_get_string(r, "created_at")));
		if (src != NULL)
			printf("                   from %s\n", cwctl_vis(src));
	}
	if (n == 0)
		printf("rules:           (none: cwctl approve ID --for-task remembers one)\n");
}

/* What --from-repo found: each rule, what it becomes and why, then the digest. */
static void
cwctl_task_rules_repo_print(const char *task, const cJSON *o)
{
	const cJSON	*r, *f;
	int		 n = 0, k = 0;

	printf("repository rules of task %s, as committed on %s at %.12s:\n", task,
	    cwctl_vis(json_get_string(o, "ref")), cwctl_vis(json_get_string(o, "commit")));
	cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(o, "files"))
		printf("  %-28s %s\n", cwctl_vis(json_get_string(f, "path")),
		    json_get_string(f, "blob") != NULL ?
		    cwctl_vis(json_get_string(f, "blob")) : "(not committed)");
	cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(o, "rules")) {
		const char *b = json_get_string(r, "becomes");
		const char *fam = json_get_string(r, "family");
		const char *note = json_get_string(r, "note");
		n++;
		printf("  %-5s %s\n", cwctl_vis(json_get_string(r, "list")),
		    cwctl_vis(json_get_string(r, "rule")));
		if (b != NULL && strcmp(b, "allow") == 0) {
			k++;
			printf("        -> task rule '%s'", cwctl_vis(fam));
		} else if (b != NULL && strcmp(b, "ask") == 0) {
			k++;
			printf("        -> always asked: '%s'", cwctl_vis(fam));
		} else
			printf("        -> NOT imported");
		printf("%s%s\n", note != NULL && note[0] != '\0' ? ": " : "",
		    note != NULL ? cwctl_vis(note) : "");
	}
	if (n == 0) {
		printf("  (no permission rules: nothing to import)\n");
		return;
	}
	printf("%d of %d would be imported. To import exactly these:\n"
	    "  cwctl task rules %s --import-repo %s\n", k, n, task,
	    cwctl_vis(json_get_string(o, "digest")));
}

int
cwctl_task_rules(int argc, char **argv)
{
	char		 path[256], name[200];
	const char	*sub = argv[0], *pos[2] = { NULL, NULL };
	const char	*digest = NULL;
	cJSON		*o = NULL, *b = NULL, *a;
	int		 json = 0, n = 0, rc, want, from_repo = 0;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = 1;
		else if (strcmp(sub, "rules") == 0 && strcmp(argv[i], "--from-repo") == 0)
			from_repo = 1;
		else if (strcmp(sub, "rules") == 0 && strcmp(argv[i], "--import-repo") == 0 &&
		    i + 1 < argc)
			digest = argv[++i];
		else if (n == 2 || (argv[i][0] == '-' && argv[i][1] != '\0'))
			return cwctl_task_rules_usage();
		else
			pos[n++] = argv[i];
	}
	want = strcmp(sub, "rules") == 0 ? 1 : 2;
	if (n != want || client_escape(pos[0], name, sizeof name) == -1)
		return cwctl_task_rules_usage();
	if (from_repo && digest != NULL)
		return cwctl_task_rules_usage();
	snprintf(path, sizeof path, "/api/tasks/%s/%s", name, from_repo ||
	    digest != NULL ? "repo-rules" : "rules");
	if (digest != NULL) {
		b = cJSON_CreateObject();
		json_add_string(b, "digest", digest);
	} else if (strcmp(sub, "unrule") == 0) {
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
	if ((rc = client_send(b != NULL ? "POST" : "GET", path, b, &o)) != 0)
		return rc;
	if (json)
		cwctl_print_json(o);
	else if (from_repo)
		cwctl_task_rules_repo_print(pos[0], o);
	else {
		if (digest != NULL) {
			double ch = 0;
			json_get_number(o, "imported_changed", &ch);
			printf("task %s: imported the repository's rules from commit %.12s (%d "
			    "rules added or changed; runs already going have them too)\n", pos[0],
			    cwctl_vis(json_get_string(o, "imported_commit")), (int)ch);
		}
		if (strcmp(sub, "unrule") == 0)
			printf("task %s: rule '%s' removed (runs already going keep it until "
			    "they end)\n", pos[0], pos[1]);
		cwctl_task_rules_print(o);
	}
	cJSON_Delete(o);
	return CWCTL_EXIT_OK;
}
