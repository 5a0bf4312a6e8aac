/* cwctl task add|list|show|enable|disable|rm (rules|unrule|ask: cwctl-task-rules.c). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "cwctl.h"
#include "json.h"

static int
cwctl_task_usage(void)
{
	fprintf(stderr,
	    "usage: cwctl task add NAME (--prompt TEXT | --prompt - | --prompt-file FILE)\n"
	    "                [--repo DIR] [--engine E] [--key NAME]  (byok: a key from cwctl key list)\n"
	    "                [--mode acceptEdits|plan] [--dollars N] [--turns N] [--seconds N]\n"
	    "                [--budget-wait SECONDS|default] [--max-dollars N|default]\n"
	    "                [--processes N] [--memory-mb N] [--keep-build-outputs]\n"
	    "                [--no-notify-end]  (each run's end: desktop, the task's chat)\n"
	    "                [--telegram-chat CHAT_ID [--telegram-allow USER_ID]...]\n"
	    "                [--schedule queued|'CRON'] [--disabled] [--json]\n"
	    "                without --engine: engines.default, else the first of claude, codex,\n"
	    "                opencode, hermes on the daemon's PATH, else byok with a stored key\n"
	    "       cwctl task add NAME --command LINE [--repo DIR] ...  (a shell line, not an agent)\n"
	    "       cwctl task edit NAME [--prompt TEXT] [--mode M] [--dollars N] [--turns N]\n"
	    "                [--seconds N] [--schedule queued|'CRON'] [--base BRANCH|default]\n"
	    "                [--repo DIR] [--engine E] [--processes N] [--memory-mb N] [--json]\n"
	    "                [--budget-wait SECONDS|default] [--max-dollars N|default]\n"
	    "                [--keep-build-outputs | --no-keep-build-outputs]\n"
	    "                [--notify-end | --no-notify-end]\n"
	    "       cwctl task history NAME [--json]\n"
	    "       cwctl task list [--json]\n"
	    "       cwctl task show NAME [--json]\n"
	    "       cwctl task rules NAME | unrule NAME FAMILY | ask NAME all|none|default|RISKS\n"	    "       cwctl task rules NAME --from-repo | --import-repo DIGEST\n"
	    "       cwctl task enable|disable|rm NAME\n");
	return CWCTL_EXIT_USAGE;
}

static void
cwctl_task_print(const cJSON *t)
{
	const char	*s;
	double		 n;
	int		 b;

	printf("name:            %s\n", (s = cwctl_vis(json_get_string(t, "name"))) ? s : "?");
	printf("repo:            %s\n", (s = cwctl_vis(json_get_string(t, "repo"))) ? s :
	    "(none: scratch directory)");
	printf("engine:          %s\n", (s = cwctl_vis(json_get_string(t, "engine"))) ? s : "?");
	if ((s = json_get_string(t, "key")) != NULL)
		printf("key:             %s\n", cwctl_vis(s));
	printf("permission_mode: %s\n", (s = cwctl_vis(json_get_string(t, "permission_mode"))) ? s : "?");
	json_get_number(t, "budget_dollars", &n);
	printf("budget:          $%.2f", n);
	json_get_number(t, "budget_turns", &n);
	printf(", %.0f turns", n);
	json_get_number(t, "budget_seconds", &n);
	printf(", %.0f s\n", n);
	/* The budget pause (issue 23); null: the configuration's. */
	if (json_get_number(t, "budget_wait", &n) == 0)
		printf("budget_wait:     %.0f s%s\n", n, n == 0 ? " (a budget ends the run "
		    "at once)" : "");
	else
		printf("budget_wait:     the configuration's (budgets.wait)\n");
	if (json_get_number(t, "max_dollars", &n) == 0)
		printf("max_dollars:     %s$%.2f\n", n == 0 ? "none, " : "", n);
	else
		printf("max_dollars:     the configuration's (budgets.max_dollars)\n");
	n = 0;
	json_get_number(t, "limit_processes", &n);
	if (n > 0)
		printf("limits:          %.0f processes", n);
	else
		printf("limits:          processes from the configuration");
	n = 0;
	json_get_number(t, "limit_memory_mb", &n);
	if (n > 0)
		printf(", %.0f MiB\n", n);
	else
		printf(", memory from the configuration\n");
	b = 0;
	json_get_bool(t, "keep_build_outputs", &b);
	printf("build outputs:   %s\n", b ? "committed (keep_build_outputs)" :
	    "left out of the run's commit");
	b = 1;
	json_get_bool(t, "notify_end", &b);
	printf("run ends:        %s\n", b ? "announced (desktop, the task's chat)" :
	    "not announced (notify_end off)");
	printf("schedule:        %s\n", (s = cwctl_vis(json_get_string(t, "schedule"))) ? s : "?");
	b = 0;
	json_get_bool(t, "enabled", &b);
	printf("enabled:         %s\n", b ? "yes" : "no");
	{
		const cJSON	*tg = cJSON_GetObjectItemCaseSensitive(
				    cJSON_GetObjectItemCaseSensitive(t, "delivery"), "telegram");
		const cJSON	*id;

		if (json_get_number(tg, "chat_id", &n) == 0) {
			printf("telegram:        chat %.0f", n);
			cJSON_ArrayForEach(id, cJSON_GetObjectItemCaseSensitive(tg,
			    "allowed_user_ids"))
				if (cJSON_IsNumber(id))
					printf(", user %.0f", id->valuedouble);
			printf("\n");
		}
	}
	printf("base:            %s\n", (s = cwctl_vis(json_get_string(t, "base"))) ? s :
	    "(the repository's default branch)");
	b = 0;
	if (json_get_bool(t, "imported", &b) == 0 && b) {
		b = 0;
		json_get_bool(t, "needs_review", &b);
		printf("imported:        yes%s\n", b ? ", waiting for review (cwctl jobs "
		    "preview)" : "");
	}
	printf("prompt:          %s\n", (s = cwctl_vis(json_get_string(t, "prompt"))) ? s : "");
}

/*
 * The prompt from --prompt TEXT, --prompt - (standard input) or --prompt-file FILE,
 * read whole up to the daemon's body limit; an empty one is refused here.
 */
static int
cwctl_task_prompt(cJSON *b, const char *opt, const char *v)
{
	char	*buf;
	size_t	 n = 0, cap = 256 * 1024;
	FILE	*f;

	if (strcmp(opt, "--prompt") == 0 && strcmp(v, "-") != 0) {
		json_add_string(b, "prompt", v);
		return 0;
	}
	if (strcmp(opt, "--prompt") == 0)
		f = stdin;
	else if ((f = fopen(v, "r")) == NULL) {
		fprintf(stderr, "cwctl: --prompt-file %s: %s\n", v, strerror(errno));
		return -1;
	}
	if ((buf = malloc(cap + 1)) == NULL) {
		fprintf(stderr, "cwctl: out of memory\n");
		return -1;
	}
	n = fread(buf, 1, cap + 1, f);
	if (f != stdin)
		fclose(f);
	if (n > cap || n == 0 || memchr(buf, '\0', n) != NULL) {
		fprintf(stderr, "cwctl: the prompt from %s is %s\n", strcmp(v, "-") == 0 &&
		    strcmp(opt, "--prompt") == 0 ? "standard input" : v, n == 0 ? "empty" : n > cap ? "longer than 256 KiB" :
		    "binary (it holds a NUL byte)");
		free(buf);
		return -1;
	}
	buf[n] = '\0';
	json_add_string(b, "prompt", buf);
	free(buf);
	return 0;
}

/* --telegram-chat ID and --telegram-allow ID: the task's delivery.telegram. */
static int
cwctl_task_telegram(cJSON *b, const char *opt, const char *v)
{
	cJSON		*dl, *tg, *ids;
	char		*end;
	long long	 n;

	errno = 0;
	n = strtoll(v, &end, 10);
	if (errno != 0 || *end != '\0' || end == v || n == 0)
		return -1;
	if ((dl = cJSON_GetObjectItemCaseSensitive(b, "delivery")) == NULL)
		dl = cJSON_AddObjectToObject(b, "delivery");
	if ((tg = cJSON_GetObjectItemCaseSensitive(dl, "telegram")) == NULL)
		tg = cJSON_AddObjectToObject(dl, "telegram");
	if (strcmp(opt, "--telegram-chat") == 0) {
		cJSON_DeleteItemFromObjectCaseSensitive(tg, "chat_id");
		cJSON_AddNumberToObject(tg, "chat_id", (double)n);
		return 0;
	}
	if ((ids = cJSON_GetObjectItemCaseSensitive(tg, "allowed_user_ids")) == NULL)
		ids = cJSON_AddArrayToObject(tg, "allowed_user_ids");
	cJSON_AddItemToArray(ids, cJSON_CreateNumber((double)n));
	return 0;
}

/* task add NAME ... (edit 0) or task edit NAME ... (edit 1): the same options. */
static int
cwctl_task_add(int argc, char **argv, int edit)
{
	cJSON		*b, *o = NULL;
	char		 real[PATH_MAX], *end, path[256], name[200];
	const char	*verb = edit ? "task edit" : "task add", *engine = NULL;
	int		 json = 0, rc, prompted = 0, command = 0;
	double		 d;
	long		 l;

	if (argc < 2 || argv[1][0] == '-') {
		fprintf(stderr, "cwctl: %s: the task needs a NAME first\n", verb);
		return cwctl_task_usage();
	}
	b = cJSON_CreateObject();
	if (!edit)
		json_add_string(b, "name", argv[1]);
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(a, "--json") == 0) {
			json = 1;
			continue;
		}
		if (strcmp(a, "--disabled") == 0) {
			cJSON_AddBoolToObject(b, "enabled", 0);
			continue;
		}
		/* The seal commits build outputs too (docs/configuration.md). */
		if (strcmp(a, "--keep-build-outputs") == 0 ||
		    strcmp(a, "--no-keep-build-outputs") == 0) {
			cJSON_AddBoolToObject(b, "keep_build_outputs", a[2] == 'k');
			continue;
		}
		/* Each run's end announced (desktop, the task's chat): on by default. */
		if (strcmp(a, "--notify-end") == 0 || strcmp(a, "--no-notify-end") == 0) {
			cJSON_AddBoolToObject(b, "notify_end", strcmp(a, "--notify-end") == 0);
			continue;
		}
		if (v == NULL) {
			fprintf(stderr, "cwctl: %s: %s needs a value\n", verb, a);
			goto usage;
		}
		i++;
		if (strcmp(a, "--prompt") == 0 || strcmp(a, "--prompt-file") == 0) {
			prompted = 1;
			if (cwctl_task_prompt(b, a, v) == -1) {
				cJSON_Delete(b);
				return CWCTL_EXIT_FAILURE;
			}
		} else if (strcmp(a, "--command") == 0) {
			/* A shell line is asked for by name: --command LINE. */
			if (command++ == 0)
				json_add_string(b, "prompt", v);
		} else if (strcmp(a, "--repo") == 0) {
			/* The daemon wants an absolute path; resolve relative ones here. */
			if (realpath(v, real) == NULL) {
				fprintf(stderr, "cwctl: %s: %s\n", v, strerror(errno));
				cJSON_Delete(b);
				return CWCTL_EXIT_FAILURE;
			}
			json_add_string(b, "repo", real);
		} else if (strcmp(a, "--engine") == 0)
			engine = v;
		else if (strcmp(a, "--key") == 0)
			json_add_string(b, "key", v);
		else if (strcmp(a, "--mode") == 0 || strcmp(a, "--permission-mode") == 0)
			json_add_string(b, "permission_mode", v);
		else if (strcmp(a, "--schedule") == 0)
			json_add_string(b, "schedule", v);
		else if (strcmp(a, "--base") == 0) {
			if (strcmp(v, "default") == 0)
				cJSON_AddNullToObject(b, "base");
			else
				json_add_string(b, "base", v);
		} else if (strcmp(a, "--dollars") == 0) {
			d = strtod(v, &end);
			if (*end != '\0' || end == v)
				goto bad_number;
			cJSON_AddNumberToObject(b, "budget_dollars", d);
		} else if ((strcmp(a, "--budget-wait") == 0 || strcmp(a, "--max-dollars") ==
		    0) && strcmp(v, "default") == 0) {
			/* The configuration's budgets.wait / budgets.max_dollars. */
			cJSON_AddNullToObject(b, strcmp(a, "--budget-wait") == 0 ? "budget_wait" :
			    "max_dollars");
		} else if (strcmp(a, "--max-dollars") == 0) {
			d = strtod(v, &end);
			if (*end != '\0' || end == v)
				goto bad_number;
			cJSON_AddNumberToObject(b, "max_dollars", d);
		} else if (strcmp(a, "--turns") == 0 || strcmp(a, "--seconds") == 0 ||
		    strcmp(a, "--budget-wait") == 0) {
			errno = 0;
			l = strtol(v, &end, 10);
			if (*end != '\0' || end == v || errno != 0)
				goto bad_number;
			cJSON_AddNumberToObject(b, strcmp(a, "--turns") == 0 ? "budget_turns" :
			    strcmp(a, "--seconds") == 0 ? "budget_seconds" : "budget_wait",
			    (double)l);
		} else if (strcmp(a, "--processes") == 0 || strcmp(a, "--memory-mb") == 0) {
			errno = 0;
			l = strtol(v, &end, 10);
			if (*end != '\0' || end == v || errno != 0)
				goto bad_number;
			cJSON_AddNumberToObject(b, strcmp(a, "--processes") == 0 ?
			    "limit_processes" : "limit_memory_mb", (double)l);
		} else if (strcmp(a, "--telegram-chat") == 0 ||
		    strcmp(a, "--telegram-allow") == 0) {
			if (cwctl_task_telegram(b, a, v) == -1) {
				fprintf(stderr, "cwctl: %s: %s: '%s' is not a Telegram id\n",
				    verb, a, v);
				goto usage;
			}
		} else {
			fprintf(stderr, "cwctl: %s: unknown option '%s'\n", verb, a);
			goto usage;
		}
		continue;
bad_number:
		fprintf(stderr, "cwctl: %s: %s: '%s' is not a number\n", verb, a, v);
		goto usage;
	}
	/* --command LINE is the engine and the prompt at once: nothing may say otherwise. */
	if (command && (prompted || command > 1 || (engine != NULL &&
	    strcmp(engine, "command") != 0))) {
		fprintf(stderr, "cwctl: %s: --command LINE is a shell line for the command "
		    "engine; it cannot go with %s (an agent's task takes --prompt)\n", verb,
		    prompted ? "--prompt" : engine != NULL ? "--engine other than command" :
		    "a second --command");
		goto usage;
	}
	if (command || engine != NULL)
		json_add_string(b, "engine", command ? "command" : engine);
	if (edit) {
		if (b->child == NULL) {
			fprintf(stderr, "cwctl: task edit: nothing to change\n");
			goto usage;
		}
		if (client_escape(argv[1], name, sizeof name) == -1)
			goto usage;
		snprintf(path, sizeof path, "/api/tasks/%s", name);
		rc = client_send("PATCH", path, b, &o);
	} else {
		if (cJSON_GetObjectItemCaseSensitive(b, "prompt") == NULL) {
			fprintf(stderr, "cwctl: task add: a prompt is required (--prompt TEXT, "
			    "--prompt - for standard input, or --prompt-file FILE)\n");
			goto usage;
		}
		rc = client_send("POST", "/api/tasks", b, &o);
	}
	if (rc != 0)
		return rc;
	if (json)
		cwctl_print_json(o);
	else {
		printf("task %s %s\n", cwctl_vis(json_get_string(o, "name")), edit ? "edited" :
		    "added");
		/* No --engine: say which engine the daemon chose, and why. */
		if (json_get_string(o, "engine_default") != NULL)
			printf("engine %s, mode %s, the default: %s\n",
			    cwctl_vis(json_get_string(o, "engine")),
			    cwctl_vis(json_get_string(o, "permission_mode")),
			    cwctl_vis(json_get_string(o, "engine_default")));
	}
	cJSON_Delete(o);
	return CWCTL_EXIT_OK;
usage:
	cJSON_Delete(b);
	return cwctl_task_usage();
}

static void
cwctl_task_history_print(const cJSON *o)
{
	const cJSON	*e, *def;
	const char	*s;
	double		 n;

	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(o, "history")) {
		def = cJSON_GetObjectItemCaseSensitive(e, "definition");
		printf("%s  by %s\n", cwctl_vis(json_get_string(e, "ts")),
		    cwctl_vis(json_get_string(e, "actor")));
		n = 0;
		json_get_number(def, "budget_dollars", &n);
		printf("  mode %s, $%.2f, schedule %s, base %s\n",
		    cwctl_vis(json_get_string(def, "permission_mode")), n,
		    cwctl_vis(json_get_string(def, "schedule")),
		    (s = json_get_string(def, "base")) != NULL ? cwctl_vis(s) : "(default)");
		printf("  prompt: %s\n", cwctl_vis(json_get_string(def, "prompt")));
	}
	printf("now\n  prompt: %s\n", cwctl_vis(json_get_string(
	    cJSON_GetObjectItemCaseSensitive(o, "current"), "prompt")));
}

static int
cwctl_task_list(int json)
{
	cJSON		*o = NULL, *a, *t;
	const char	*s;
	int		 rc, en;

	if ((rc = client_call("GET", "/api/tasks", NULL, &o)) != 0)
		return rc;
	a = cJSON_GetObjectItemCaseSensitive(o, "tasks");
	if (json)
		cwctl_print_json(a);
	else {
		printf("%-24s %-8s %-11s %-8s %-16s %s\n", "NAME", "ENGINE", "MODE", "ENABLED",
		    "SCHEDULE", "REPO");
		cJSON_ArrayForEach(t, a) {
			en = 0;
			json_get_bool(t, "enabled", &en);
			s = json_get_string(t, "repo");
			printf("%-24s %-8s %-11s %-8s %-16s %s\n", cwctl_vis(json_get_string(t, "name")),
			    cwctl_vis(json_get_string(t, "engine")), cwctl_vis(json_get_string(t, "permission_mode")),
			    en ? "yes" : "no", cwctl_vis(json_get_string(t, "schedule")),
			    s != NULL ? cwctl_vis(s) : "-");
		}
	}
	cJSON_Delete(o);
	return CWCTL_EXIT_OK;
}

int
cwctl_task(int argc, char **argv)
{
	char		 path[256], name[200];
	cJSON		*o = NULL, *b;
	const char	*sub;
	int		 json = 0, rc, n = 0;
	char		*pos[2] = { NULL, NULL };

	if (argc < 2)
		return cwctl_task_usage();
	sub = argv[1];
	if (strcmp(sub, "add") == 0 || strcmp(sub, "edit") == 0)
		return cwctl_task_add(argc - 1, argv + 1, strcmp(sub, "edit") == 0);
	if (strcmp(sub, "rules") == 0 || strcmp(sub, "unrule") == 0 ||
	    strcmp(sub, "ask") == 0)
		return cwctl_task_rules(argc - 1, argv + 1);
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = 1;
		else if (argv[i][0] == '-' || n == 2)
			return cwctl_task_usage();
		else
			pos[n++] = argv[i];
	}
	if (strcmp(sub, "list") == 0 || strcmp(sub, "ls") == 0) {
		if (n != 0)
			return cwctl_task_usage();
		return cwctl_task_list(json);
	}
	if (n != 1 || client_escape(pos[0], name, sizeof name) == -1)
		return cwctl_task_usage();
	snprintf(path, sizeof path, "/api/tasks/%s", name);
	if (strcmp(sub, "show") == 0) {
		cJSON	*rules = NULL;

		if ((rc = client_call("GET", path, NULL, &o)) != 0)
			return rc;
		/* Who answers its calls: the task's approvals.ask and remembered families. */
		snprintf(path, sizeof path, "/api/tasks/%s/rules", name);
		if (client_call("GET", path, NULL, &rules) != 0)
			rules = NULL;
		if (json) {
			if (rules != NULL)
				cJSON_AddItemToObject(o, "approvals", rules);
			cwctl_print_json(o);
		} else {
			cwctl_task_print(o);
			if (rules != NULL)
				cwctl_task_rules_print(rules);
			cJSON_Delete(rules);
		}
	} else if (strcmp(sub, "enable") == 0 || strcmp(sub, "disable") == 0) {
		b = cJSON_CreateObject();
		cJSON_AddBoolToObject(b, "enabled", strcmp(sub, "enable") == 0);
		if ((rc = client_send("PATCH", path, b, &o)) != 0)
			return rc;
		if (json)
			cwctl_print_json(o);
		else
			printf("task %s %sd\n", pos[0], sub);
	} else if (strcmp(sub, "history") == 0) {
		snprintf(path, sizeof path, "/api/tasks/%s/history", name);
		if ((rc = client_call("GET", path, NULL, &o)) != 0)
			return rc;
		if (json)
			cwctl_print_json(o);
		else
			cwctl_task_history_print(o);
	} else if (strcmp(sub, "rm") == 0 || strcmp(sub, "remove") == 0) {
		if ((rc = client_call("DELETE", path, NULL, &o)) != 0)
			return rc;
		if (json)
			cwctl_print_json(o);
		else
			printf("task %s removed (archived: its runs stay readable; cwctl gc "
			    "clears its worktrees and branches)\n", pos[0]);
	} else
		return cwctl_task_usage();
	cJSON_Delete(o);
	return CWCTL_EXIT_OK;
}
