/*
 * cwctl jobs discover [REPO] | list | preview NAME | enable NAME: repository jobs
 * (SPEC W2). Everything printed from a preview came from someone else's commit and
 * goes through cwctl_vis, so the terminal shows hidden characters as escapes.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "cwctl.h"
#include "json.h"

static int
cwctl_jobs_usage(void)
{
	fprintf(stderr,
	    "usage: cwctl jobs discover [REPO] [--json]   import REPO's .clockwork/jobs.{json,yaml}\n"
	    "                                             from its default branch, disabled\n"
	    "       cwctl jobs list [--json]\n"
	    "       cwctl jobs preview NAME [--json]      the security preview\n"
	    "       cwctl jobs enable NAME                enable after review (audited)\n");
	return CWCTL_EXIT_USAGE;
}

static void
cwctl_jobs_names(const cJSON *o, const char *key, const char *label)
{
	const cJSON	*e;

	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(o, key))
		if (cJSON_IsString(e))
			printf("%-10s %s\n", label, cwctl_vis(e->valuestring));
}

static void
cwctl_jobs_list_print(const cJSON *o, const char *title, const char *k1,
    const char *k2)
{
	const cJSON	*a = cJSON_GetObjectItemCaseSensitive(o, title), *e;
	int		 b;

	if (cJSON_GetArraySize(a) == 0)
		return;
	printf("%s:\n", title);
	cJSON_ArrayForEach(e, a) {
		if (cJSON_IsString(e)) {
			printf("  %s\n", cwctl_vis(e->valuestring));
			continue;
		}
		printf("  %s", cwctl_vis(json_get_string(e, k1)));
		if (k2 != NULL && json_get_string(e, k2) != NULL)
			printf("  %s", cwctl_vis(json_get_string(e, k2)));
		if (json_get_bool(e, "floor", &b) == 0)
			printf("  (%s rule)", b ? "floor" : "configured");
		if (json_get_bool(e, "outside_repository", &b) == 0 && b)
			printf("  (outside the repository)");
		if (json_get_string(e, "char") != NULL)
			printf("  %s %s at byte %d", json_get_string(e, "char"),
			    cwctl_vis(json_get_string(e, "kind")),
			    cJSON_GetObjectItem(e, "offset") != NULL ?
			    cJSON_GetObjectItem(e, "offset")->valueint : -1);
		printf("\n");
	}
}

static void
cwctl_jobs_preview_print(const cJSON *j)
{
	const cJSON	*p = cJSON_GetObjectItemCaseSensitive(j, "preview");
	const cJSON	*src = cJSON_GetObjectItemCaseSensitive(j, "source");
	const cJSON	*def = cJSON_GetObjectItemCaseSensitive(p, "defaults"), *e;
	double		 n = 0;
	int		 b = 0;

	printf("task:        %s\n", cwctl_vis(json_get_string(j, "name")));
	printf("source:      %s %s at %s (%s)\n", cwctl_vis(json_get_string(src, "repo")),
	    cwctl_vis(json_get_string(src, "path")),
	    cwctl_vis(json_get_string(src, "commit")),
	    cwctl_vis(json_get_string(src, "branch")));
	json_get_bool(src, "removed", &b);
	if (b)
		printf("state:       REMOVED from the file; disabled for good\n");
	else {
		b = 0;
		json_get_bool(j, "needs_review", &b);
		printf("state:       %s\n", b ? "disabled, waiting for review" :
		    json_get_bool(j, "enabled", &b) == 0 && b ? "enabled" : "disabled");
	}
	printf("hash:        %s\n", cwctl_vis(json_get_string(p, "definition_hash")));
	json_get_number(def, "budget_dollars", &n);
	printf("runs as:     engine %s, mode %s, $%.2f", cwctl_vis(json_get_string(def,
	    "engine")), cwctl_vis(json_get_string(def, "permission_mode")), n);
	json_get_number(def, "budget_turns", &n);
	printf(" / %.0f turns", n);
	json_get_number(def, "budget_seconds", &n);
	printf(" / %.0f s, schedule %s\n", n, cwctl_vis(json_get_string(def, "schedule")));
	if (json_get_string(p, "proposed_schedule") != NULL)
		printf("proposed:    schedule %s (not applied)\n",
		    cwctl_vis(json_get_string(p, "proposed_schedule")));
	if (json_get_string(p, "description") != NULL)
		printf("description: %s\n", cwctl_vis(json_get_string(p, "description")));
	printf("warnings:    %d\n", cJSON_GetObjectItem(p, "warnings") != NULL ?
	    cJSON_GetObjectItem(p, "warnings")->valueint : 0);
	printf("prompt (hidden characters shown as escapes):\n%s\n",
	    cwctl_vis(json_get_string(p, "prompt")));
	cwctl_jobs_list_print(p, "ignored", NULL, NULL);
	cwctl_jobs_list_print(p, "rules", "rule", "text");
	if (json_get_bool(p, "rules_incomplete", &b) == 0 && b)
		printf("rules: NOT every part of the prompt was checked (too long); read it "
		    "all\n");
	cwctl_jobs_list_print(p, "overrides", "phrase", "text");
	cwctl_jobs_list_print(p, "hidden", "kind", NULL);
	cwctl_jobs_list_print(p, "homoglyphs", "word", NULL);
	cwctl_jobs_list_print(p, "urls", NULL, NULL);
	cwctl_jobs_list_print(p, "paths", "path", NULL);
	/* What the prompt points at: enabling approves these objects too. */
	if (cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(p, "pinned_files")) > 0) {
		printf("pinned files (enabling approves them as they are; a change asks "
		    "again):\n");
		cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(p, "pinned_files"))
			printf("  %s  %.12s\n", cwctl_vis(e->string),
			    cJSON_IsString(e) ? e->valuestring : "?");
	}
	if (json_get_string(p, "pins_changed") != NULL)
		printf("changed since the last review: %s\n",
		    cwctl_vis(json_get_string(p, "pins_changed")));
	if ((e = cJSON_GetObjectItemCaseSensitive(p, "access")) != NULL) {
		cwctl_jobs_list_print(e, "read", NULL, NULL);
		cwctl_jobs_list_print(e, "write", NULL, NULL);
		printf("network: %s\n", cwctl_vis(json_get_string(e, "network")));
		if (json_get_string(e, "engine_note") != NULL)
			printf("note: %s\n", cwctl_vis(json_get_string(e, "engine_note")));
	}
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(p, "changes")) {
		char	*a = cJSON_PrintUnformatted(cJSON_GetObjectItem(e, "before"));
		char	*z = cJSON_PrintUnformatted(cJSON_GetObjectItem(e, "after"));

		printf("changed %s:\n  before: %s\n  after:  %s\n",
		    cwctl_vis(json_get_string(e, "field")), cwctl_vis(a), cwctl_vis(z));
		cJSON_free(a);
		cJSON_free(z);
	}
}

static int
cwctl_jobs_discover(const char *repo_arg, int json)
{
	char	 real[PATH_MAX];
	cJSON	*b, *o = NULL;
	int	 rc;

	if (realpath(repo_arg != NULL ? repo_arg : ".", real) == NULL) {
		fprintf(stderr, "cwctl: %s: %s\n", repo_arg != NULL ? repo_arg : ".",
		    strerror(errno));
		return CWCTL_EXIT_FAILURE;
	}
	b = cJSON_CreateObject();
	json_add_string(b, "repo", real);
	if ((rc = client_send("POST", "/api/jobs/discover", b, &o)) != 0)
		return rc;
	if (json)
		cwctl_print_json(o);
	else {
		printf("%s at %s (%s)\n", cwctl_vis(json_get_string(o, "repo")),
		    cwctl_vis(json_get_string(o, "commit")),
		    cwctl_vis(json_get_string(o, "branch")));
		cwctl_jobs_names(o, "created", "created");
		cwctl_jobs_names(o, "changed", "changed");
		cwctl_jobs_names(o, "unchanged", "unchanged");
		cwctl_jobs_names(o, "removed", "removed");
		cwctl_jobs_names(o, "conflicts", "conflict");
		if (cJSON_GetArraySize(cJSON_GetObjectItem(o, "created")) +
		    cJSON_GetArraySize(cJSON_GetObjectItem(o, "changed")) > 0)
			printf("new and changed jobs are disabled: review each with "
			    "'cwctl jobs preview NAME', then 'cwctl jobs enable NAME'\n");
	}
	cJSON_Delete(o);
	return CWCTL_EXIT_OK;
}

static int
cwctl_jobs_list(int json)
{
	cJSON		*o = NULL, *e;
	int		 rc, en, nr;

	if ((rc = client_call("GET", "/api/jobs", NULL, &o)) != 0)
		return rc;
	if (json)
		cwctl_print_json(cJSON_GetObjectItem(o, "jobs"));
	else {
		printf("%-24s %-22s %-8s %s\n", "NAME", "STATE", "WARNINGS", "SOURCE");
		cJSON_ArrayForEach(e, cJSON_GetObjectItem(o, "jobs")) {
			const cJSON *src = cJSON_GetObjectItem(e, "source");

			en = nr = 0;
			json_get_bool(e, "enabled", &en);
			json_get_bool(e, "needs_review", &nr);
			printf("%-24s %-22s %-8d %s %s\n", cwctl_vis(json_get_string(e, "name")),
			    nr ? "waiting for review" : en ? "enabled" : "disabled",
			    cJSON_GetObjectItem(e, "warnings") != NULL ?
			    cJSON_GetObjectItem(e, "warnings")->valueint : 0,
			    cwctl_vis(json_get_string(src, "repo")),
			    cwctl_vis(json_get_string(src, "path")));
		}
	}
	cJSON_Delete(o);
	return CWCTL_EXIT_OK;
}

int
cwctl_jobs(int argc, char **argv)
{
	char		 path[256], name[200];
	const char	*pos = NULL;
	cJSON		*o = NULL;
	int		 json = 0, rc;

	if (argc < 2)
		return cwctl_jobs_usage();
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = 1;
		else if (argv[i][0] == '-' || pos != NULL)
			return cwctl_jobs_usage();
		else
			pos = argv[i];
	}
	if (strcmp(argv[1], "discover") == 0)
		return cwctl_jobs_discover(pos, json);
	if (strcmp(argv[1], "list") == 0 || strcmp(argv[1], "ls") == 0)
		return pos == NULL ? cwctl_jobs_list(json) : cwctl_jobs_usage();
	if (pos == NULL || client_escape(pos, name, sizeof name) == -1)
		return cwctl_jobs_usage();
	if (strcmp(argv[1], "preview") == 0 || strcmp(argv[1], "show") == 0) {
		snprintf(path, sizeof path, "/api/jobs/%s", name);
		if ((rc = client_call("GET", path, NULL, &o)) != 0)
			return rc;
		if (json)
			cwctl_print_json(o);
		else
			cwctl_jobs_preview_print(o);
	} else if (strcmp(argv[1], "enable") == 0) {
		snprintf(path, sizeof path, "/api/jobs/%s/enable", name);
		if ((rc = client_call("POST", path, NULL, &o)) != 0)
			return rc;
		if (json)
			cwctl_print_json(o);
		else
			printf("job %s enabled\n", cwctl_vis(pos));
	} else
		return cwctl_jobs_usage();
	cJSON_Delete(o);
	return CWCTL_EXIT_OK;
}
