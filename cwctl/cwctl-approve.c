/*
 * cwctl approve ID [--for-task] and cwctl deny ID [--message M]: both answer through
 * the daemon's
 * one respond path. An approval already answered, or whose run has ended, is refused
 * (exit 3) with the reason.
 */
#include <stdio.h>
#include <string.h>

#include "client.h"
#include "cwctl.h"
#include "json.h"

int
cwctl_answer(int argc, char **argv, int allow)
{
	const char	*id = NULL, *msg = NULL;
	char		 path[256], esc[160];
	cJSON		*b, *o = NULL;
	int		 json = 0, rc, for_task = 0;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = 1;
		else if (allow && strcmp(argv[i], "--for-task") == 0)
			for_task = 1;
		else if (strcmp(argv[i], "--message") == 0 && i + 1 < argc)
			msg = argv[++i];
		else if (argv[i][0] == '-' || id != NULL)
			goto usage;
		else
			id = argv[i];
	}
	if (id == NULL || client_escape(id, esc, sizeof esc) == -1)
		goto usage;
	snprintf(path, sizeof path, "/api/approvals/%s", esc);
	b = cJSON_CreateObject();
	json_add_string(b, "decision", allow ? "allow" : "deny");
	if (msg != NULL)
		json_add_string(b, "message", msg);
	/*
	 * A network approval's host:port becomes one of the task's egress rules; a tool
	 * call's command family one of its remembered answers (cwctl task rules).
	 */
	if (for_task)
		json_add_string(b, "scope", "task");
	if ((rc = client_send("POST", path, b, &o)) != 0)
		return rc;
	if (json)
		cwctl_print_json(o);
	else {
		printf("approval %s %s\n", id, allow ? "allowed" : "denied");
		/* What "for this task" kept: a host:port, or a command family and its risk. */
		if (for_task && json_get_string(o, "task_rule") != NULL)
			printf("remembered for its task: %s\n",
			    cwctl_vis(json_get_string(o, "task_rule")));
		else if (for_task && json_get_string(o, "task_rule_error") != NULL)
			printf("not remembered for its task: %s\n",
			    cwctl_vis(json_get_string(o, "task_rule_error")));
	}
	cJSON_Delete(o);
	return CWCTL_EXIT_OK;
usage:
	fprintf(stderr, "usage: cwctl %s ID%s [--json]\n", allow ? "approve" : "deny",
	    allow ? " [--for-task]" : " [--message TEXT]");
	return CWCTL_EXIT_USAGE;
}

int
cwctl_approve(int argc, char **argv)
{
	return cwctl_answer(argc, argv, 1);
}
