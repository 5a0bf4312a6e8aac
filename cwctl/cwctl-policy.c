/*
 * cwctl policy check [--json] -- 'COMMAND' (SPEC F3): evaluate a command against the
 * floor and the configured rules offline, with the same code the runner's bridge uses.
 * cwctl policy explain -- 'COMMAND': the same, and how the command was read (each
 * simple command, wrappers stripped, heredocs and sh -c strings parsed) and which rule
 * matched or that none did. The current directory stands for the worktree.
 * Exit 0 allow, 3 deny, 2 usage or an unreadable config.
 */
#include <unistd.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "config.h"
#include "cwctl.h"
#include "floor.h"
#include "paths.h"

static int
cwctl_policy_usage(FILE *f)
{
	fprintf(f, "usage: cwctl policy check [--json] -- 'COMMAND'\n"
	    "       cwctl policy explain -- 'COMMAND'\n"
	    "  prints allow, or deny RULE: REASON, and the risk level; explain also\n"
	    "  shows how the command was parsed; exit 0 allow, 3 deny, 2 usage\n");
	return CWCTL_EXIT_USAGE;
}

/* The command: one word, or several joined by single spaces as a shell would see them. */
static char *
cwctl_policy_join(int argc, char **argv)
{
	size_t	 n = 1;
	char	*s, *q;

	for (int i = 0; i < argc; i++)
		n += strlen(argv[i]) + 1;
	if ((s = malloc(n)) == NULL)
		return NULL;
	q = s;
	for (int i = 0; i < argc; i++) {
		if (i > 0)
			*q++ = ' ';
		q = stpcpy(q, argv[i]);
	}
	*q = '\0';
	return s;
}

static int
cwctl_policy_print_json(const struct floor_result *r)
{
	cJSON	*o;
	char	*s;

	if ((o = cJSON_CreateObject()) == NULL)
		return -1;
	if (cJSON_AddStringToObject(o, "decision",
	    r->verdict == FLOOR_DENY ? "deny" : "allow") == NULL ||
	    (r->verdict == FLOOR_DENY ? cJSON_AddStringToObject(o, "rule", r->rule) :
	    cJSON_AddNullToObject(o, "rule")) == NULL ||
	    (r->verdict == FLOOR_DENY ? cJSON_AddStringToObject(o, "reason", r->reason) :
	    cJSON_AddNullToObject(o, "reason")) == NULL ||
	    cJSON_AddBoolToObject(o, "floor", r->floor) == NULL ||
	    cJSON_AddStringToObject(o, "risk", floor_risk_name(r->risk)) == NULL ||
	    (r->risk_rule[0] != '\0' ? cJSON_AddStringToObject(o, "risk_rule",
	    r->risk_rule) : cJSON_AddNullToObject(o, "risk_rule")) == NULL ||
	    (s = cJSON_PrintUnformatted(o)) == NULL) {
		cJSON_Delete(o);
		return -1;
	}
	printf("%s\n", s);
	cJSON_free(s);
	cJSON_Delete(o);
	return 0;
}

int
cwctl_policy(int argc, char **argv)
{
	struct config		 cfg;
	struct floor_policy	 pol;
	struct floor_result	 r;
	char			 path[PATH_MAX], home[PATH_MAX], cwhome[PATH_MAX];
	char			 err[512], *command;
	char			 cwd[PATH_MAX];
	struct floor_trace	 trace = { 0 };
	int			 i, json = 0, rc, explain;

	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		cwctl_policy_usage(stdout);
		return CWCTL_EXIT_OK;
	}
	if (argc < 2 || (strcmp(argv[1], "check") != 0 && strcmp(argv[1], "explain") != 0))
		return cwctl_policy_usage(stderr);
	explain = strcmp(argv[1], "explain") == 0;
	for (i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		}
		if (strcmp(argv[i], "--json") == 0)
			json = 1;
		else if (argv[i][0] == '-') {
			fprintf(stderr, "cwctl policy %s: unknown option '%s'\n", argv[1],
			    argv[i]);
			return cwctl_policy_usage(stderr);
		} else
			break;
	}
	if (i >= argc) {
		fprintf(stderr, "cwctl policy %s: no command given\n", argv[1]);
		return cwctl_policy_usage(stderr);
	}

	if (config_default_path(path, sizeof path) == -1) {
		fprintf(stderr, "cwctl policy: cannot locate the config file "
		    "(set HOME or CLOCKWORK_HOME)\n");
		return CWCTL_EXIT_USAGE;
	}
	if (config_load(path, 0, &cfg, err, sizeof err) == -1) {
		fprintf(stderr, "cwctl policy: %s\n", err);
		return CWCTL_EXIT_USAGE;
	}
	memset(&pol, 0, sizeof pol);
	pol.protected_branches = &cfg.protected_branches;
	pol.rules = cfg.rules;
	pol.n_rules = cfg.n_rules;
	if (paths_home(home, sizeof home) == 0)
		pol.home = home;
	if (paths_clockwork_home(cwhome, sizeof cwhome) == 0)
		pol.cwhome = cwhome;
	if (getcwd(cwd, sizeof cwd) != NULL)
		pol.worktree = cwd;

	if ((command = cwctl_policy_join(argc - i, argv + i)) == NULL) {
		config_free(&cfg);
		fprintf(stderr, "cwctl policy: out of memory\n");
		return CWCTL_EXIT_FAILURE;
	}
	rc = explain ? floor_explain(command, &pol, &r, &trace) :
	    floor_evaluate(command, &pol, &r);
	free(command);
	config_free(&cfg);
	if (rc == -1 || trace.oom) {
		floor_trace_free(&trace);
		fprintf(stderr, "cwctl policy: out of memory evaluating the command\n");
		return CWCTL_EXIT_FAILURE;
	}
	if (explain) {
		fputs(trace.buf != NULL ? trace.buf : "", stdout);
		floor_trace_free(&trace);
	} else if (json) {
		if (cwctl_policy_print_json(&r) == -1) {
			fprintf(stderr, "cwctl policy: out of memory\n");
			return CWCTL_EXIT_FAILURE;
		}
	} else {
		if (r.verdict == FLOOR_DENY)
			printf("deny %s: %s\n", r.rule, r.reason);
		else
			printf("allow\n");
		if (r.risk != FLOOR_RISK_ORDINARY)
			printf("risk %s (%s)\n", floor_risk_name(r.risk), r.risk_rule);
	}
	return r.verdict == FLOOR_DENY ? CWCTL_EXIT_DENIED : CWCTL_EXIT_OK;
}
