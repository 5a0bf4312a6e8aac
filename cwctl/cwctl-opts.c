/*
 * The options of every cwctl command, in one table: main() checks a command line
 * against it before the verb's own code sees it (an option not listed here is refused,
 * exit 2), --help prints it, cwctl completion is generated from it, and the test
 * (test/integration/cli_options.sh, through the hidden "cwctl __options") holds it
 * against --help and docs/cwctl.1. A new option or subcommand is one line here.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "cwctl.h"

#define F(n, h)		{ n, NULL, h }		/* a flag */
#define V(n, a, h)	{ n, a, h }		/* an option with a value */
#define END		{ NULL, NULL, NULL }

static const struct cwctl_opt cwctl_o_json[] = {
	F("--json", "print the result as JSON"), END
};
static const struct cwctl_opt cwctl_o_none[] = { END };

/* task add and task edit share one parser (cwctl-task.c), so one list. */
static const struct cwctl_opt cwctl_o_task_add[] = {
	V("--prompt", "TEXT|-", "what the agent is asked (-: read it from standard input)"),
	V("--prompt-file", "FILE", "the prompt from a file"),
	V("--command", "LINE", "a shell line for the command engine instead of an agent"),
	V("--repo", "DIR", "the git repository the task works on (default: a scratch directory)"),
	V("--engine", "E", "claude, codex, opencode, hermes, byok or command"),
	V("--key", "NAME", "byok: the provider key to use (cwctl key list)"),
	V("--mode", "M", "acceptEdits or plan"),
	V("--permission-mode", "M", "the same as --mode"),
	V("--base", "BRANCH|default", "the branch runs start from"),
	V("--dollars", "N", "the budget in dollars"),
	V("--turns", "N", "the budget in turns"),
	V("--seconds", "N", "the budget in seconds"),
	V("--budget-wait", "SECONDS|default", "how long a run spent up waits for more budget"),
	V("--max-dollars", "N|default", "the most a person may raise the budget to"),
	V("--processes", "N", "the run's process limit"),
	V("--memory-mb", "N", "the run's memory limit in MiB"),
	V("--telegram-chat", "CHAT_ID", "send this task's approvals to a Telegram chat"),
	V("--telegram-allow", "USER_ID", "a Telegram user who may answer them (repeatable)"),
	V("--schedule", "queued|'CRON'", "when it runs: on demand, or a cron line"),
	F("--disabled", "add it disabled"),
	F("--keep-build-outputs", "commit the build outputs runs make (left out by default)"),
	F("--no-keep-build-outputs", "leave them out of the commit again"),
	F("--notify-end", "announce each run's end: desktop, the task's chat (the default)"),
	F("--no-notify-end", "do not announce the runs' ends (work that needs an eye still is)"),
	F("--json", "print the task as JSON"),
	END
};
static const struct cwctl_opt cwctl_o_task_rules[] = {
	F("--from-repo", "show the repository's own Claude rules, with a digest"),
	V("--import-repo", "DIGEST", "import those rules, only if they are as shown"),
	F("--json", "print as JSON"),
	END
};
static const struct cwctl_opt cwctl_o_wait[] = {
	F("--wait", "wait for the run to end; exit with its outcome"),
	F("--json", "print the run as JSON"),
	END
};
static const struct cwctl_opt cwctl_o_run_continue[] = {
	V("--prompt", "TEXT", "what to ask the agent next"),
	F("--fresh", "start a new conversation on the run's branch"),
	F("--wait", "wait for the run to end; exit with its outcome"),
	F("--json", "print the run as JSON"),
	END
};
static const struct cwctl_opt cwctl_o_run_list[] = {
	V("--task", "NAME", "only this task's runs"),
	V("--status", "S", "only runs in this state"),
	F("--review", "only ended runs whose work waits for a person"),
	V("--limit", "N", "at most N runs"),
	F("--json", "print as JSON"),
	END
};
static const struct cwctl_opt cwctl_o_run_logs[] = {
	F("-f", "follow: keep printing as the run goes on"),
	F("--follow", "the same as -f"),
	F("--raw", "the engine's own lines"),
	F("--json", "the transcript as JSON lines"),
	END
};
static const struct cwctl_opt cwctl_o_run_export[] = {
	F("--transcript", "include the whole transcript"),
	V("-o", "FILE", "write the HTML file here"),
	END
};
static const struct cwctl_opt cwctl_o_run_diff[] = {
	F("--stat", "files and line counts only"),
	F("--json", "print as JSON"),
	END
};
static const struct cwctl_opt cwctl_o_run_merge[] = {
	V("--into", "BRANCH", "merge into this branch (default: the run's base)"),
	F("--squash", "one commit"),
	F("--ff-only", "only a fast-forward"),
	F("--accept-automation", "land automation files (CI, hooks) the run changed"),
	F("--json", "print as JSON"),
	END
};
static const struct cwctl_opt cwctl_o_run_push[] = {
	V("--remote", "REMOTE", "push there (default: the branch's upstream remote, else origin)"),
	F("--pr", "then open a pull request (gh, glab), else print the page that opens one"),
	F("--json", "print as JSON"),
	END
};
static const struct cwctl_opt cwctl_o_template_export[] = {
	V("-o", "FILE", "write the template here (default: standard output)"),
	END
};
static const struct cwctl_opt cwctl_o_template_import[] = {
	V("--repo", "DIR", "the repository the imported task works on"),
	F("--json", "print as JSON"),
	END
};
static const struct cwctl_opt cwctl_o_approvals[] = {
	V("--run", "RUN", "only this run's approvals"),
	V("--task", "NAME", "with --watch: only this task's"),
	F("--watch", "print each request and answer as it comes"),
	F("--json", "print as JSON"),
	END
};
static const struct cwctl_opt cwctl_o_approve[] = {
	F("--for-task", "remember the host, or the command family, for the task"),
	F("--json", "print as JSON"),
	END
};
static const struct cwctl_opt cwctl_o_deny[] = {
	V("--message", "TEXT", "tell the agent why"),
	F("--json", "print as JSON"),
	END
};
static const struct cwctl_opt cwctl_o_key_add[] = {
	V("--provider", "anthropic|openai", "whose key it is"),
	V("--base-url", "URL", "the provider's API address"),
	V("--model", "M", "the model to ask for"),
	END
};
static const struct cwctl_opt cwctl_o_inbox[] = {
	F("--open", "open the link in a browser"),
	F("--revoke", "end every Inbox session"),
	END
};
static const struct cwctl_opt cwctl_o_network[] = {
	F("--ask", "ask a person about hosts no rule allows"),
	F("--no-ask", "refuse them without asking"),
	V("--allow", "RULE", "replace the task's allow list (repeatable)"),
	V("--add", "RULE", "add a rule to it (repeatable)"),
	F("--json", "print as JSON"),
	END
};
static const struct cwctl_opt cwctl_o_journal[] = {
	V("--run", "RUN", "only this run's entries"),
	F("--audit", "the audit log instead"),
	F("--json", "print as JSON"),
	END
};
static const struct cwctl_opt cwctl_o_gc[] = {
	V("--task", "NAME", "only this task's runs"),
	F("--force", "also what is kept for review"),
	F("--json", "print as JSON"),
	END
};
static const struct cwctl_opt cwctl_o_service_install[] = {
	F("--print", "print the unit instead of installing it"),
	F("--force", "replace a unit that differs"),
	F("--systemd", "a systemd user unit"),
	F("--launchd", "a launchd agent"),
	END
};
static const struct cwctl_opt cwctl_o_service[] = {
	F("--systemd", "the systemd user unit"),
	F("--launchd", "the launchd agent"),
	END
};
static const struct cwctl_opt cwctl_o_apparmor[] = {
	F("--print", "print the profile instead of loading it"),
	V("--bindir", "DIR", "where cw-sandbox is installed"),
	V("--dir", "DIR", "where to write the profile"),
	END
};
static const struct cwctl_opt cwctl_o_sandbox_exec[] = {
	V("--workdir", "DIR", "the directory the command works in, as a run's worktree"),
	V("--engine", "NAME", "the sandbox of this engine's runs"),
	V("--context", "DIR:ro", "a directory the command may read (repeatable)"),
	END
};

/*
 * sub NULL: the verb on its own (or with options only). nargs: the positional
 * arguments it needs at least, after the subcommand.
 */
static const struct cwctl_cmd cwctl_cmds[] = {
	{ "status", NULL, NULL, 0, 0, NULL, cwctl_o_json },
	{ "task", "add", NULL, 1, 0, NULL, cwctl_o_task_add },
	{ "task", "edit", NULL, 1, 0, "TASK", cwctl_o_task_add },
	{ "task", "list", "ls", 0, 0, NULL, cwctl_o_json },
	{ "task", "show", NULL, 1, 0, "TASK", cwctl_o_json },
	{ "task", "history", NULL, 1, 0, "TASK", cwctl_o_json },
	{ "task", "enable", NULL, 1, 0, "TASK", cwctl_o_json },
	{ "task", "disable", NULL, 1, 0, "TASK", cwctl_o_json },
	{ "task", "rm", "remove", 1, 0, "TASK", cwctl_o_json },
	{ "task", "rules", NULL, 1, 0, "TASK", cwctl_o_task_rules },
	{ "task", "unrule", NULL, 2, 0, "TASK", cwctl_o_json },
	{ "task", "ask", NULL, 2, 0, "TASK all none default", cwctl_o_json },
	{ "run", "start", NULL, 1, 0, "TASK", cwctl_o_wait },
	{ "run", "list", "ls", 0, 0, NULL, cwctl_o_run_list },
	{ "runs", NULL, NULL, 0, 0, NULL, cwctl_o_run_list },
	{ "run", "show", NULL, 1, 0, "RUN", cwctl_o_json },
	{ "run", "stop", NULL, 1, 0, "RUN", cwctl_o_json },
	{ "run", "logs", "log", 1, 0, "RUN", cwctl_o_run_logs },
	{ "run", "export", NULL, 1, 0, "RUN", cwctl_o_run_export },
	{ "run", "retry", NULL, 1, 0, "RUN", cwctl_o_wait },
	{ "run", "continue", NULL, 1, 0, "RUN", cwctl_o_run_continue },
	{ "run", "diff", NULL, 1, 0, "RUN", cwctl_o_run_diff },
	{ "run", "merge", NULL, 1, 0, "RUN", cwctl_o_run_merge },
	{ "run", "land", NULL, 1, 0, "RUN", cwctl_o_run_merge },
	{ "run", "push", NULL, 1, 0, "RUN", cwctl_o_run_push },
	{ "run", "discard", NULL, 1, 0, "RUN", cwctl_o_json },
	{ "jobs", "discover", NULL, 0, 0, NULL, cwctl_o_json },
	{ "jobs", "list", "ls", 0, 0, NULL, cwctl_o_json },
	{ "jobs", "preview", "show", 1, 0, NULL, cwctl_o_json },
	{ "jobs", "enable", NULL, 1, 0, NULL, cwctl_o_json },
	{ "template", "export", NULL, 1, 0, "TASK", cwctl_o_template_export },
	{ "template", "import", NULL, 1, 0, NULL, cwctl_o_template_import },
	{ "approvals", NULL, NULL, 0, 0, NULL, cwctl_o_approvals },
	{ "approvals", "show", NULL, 1, 0, "APPROVAL", cwctl_o_json },
	{ "approve", NULL, NULL, 1, 0, "APPROVAL", cwctl_o_approve },
	{ "deny", NULL, NULL, 1, 0, "APPROVAL", cwctl_o_deny },
	{ "telegram", "set-token", NULL, 0, 0, NULL, cwctl_o_none },
	{ "telegram", "remove-token", NULL, 0, 0, NULL, cwctl_o_none },
	{ "telegram", "test", NULL, 1, 0, NULL, cwctl_o_none },
	{ "telegram", "status", NULL, 0, 0, NULL, cwctl_o_json },
	{ "key", "add", NULL, 1, 0, NULL, cwctl_o_key_add },
	{ "key", "list", NULL, 0, 0, NULL, cwctl_o_json },
	{ "key", "rm", NULL, 1, 0, NULL, cwctl_o_none },
	{ "inbox", NULL, NULL, 0, 0, NULL, cwctl_o_inbox },
	{ "network", NULL, NULL, 1, 0, "TASK", cwctl_o_network },
	{ "journal", NULL, NULL, 0, 0, NULL, cwctl_o_journal },
	{ "gc", NULL, NULL, 0, 0, NULL, cwctl_o_gc },
	{ "service", "install", NULL, 0, 0, NULL, cwctl_o_service_install },
	{ "service", "uninstall", NULL, 0, 0, NULL, cwctl_o_service },
	{ "service", "status", NULL, 0, 0, NULL, cwctl_o_service },
	{ "service", "apparmor", NULL, 0, 0, NULL, cwctl_o_apparmor },
	/* The first word that is not an option starts the command being checked. */
	{ "policy", "check", NULL, 1, CWCTL_CMD_STOP, NULL, cwctl_o_json },
	{ "policy", "explain", NULL, 1, CWCTL_CMD_STOP, NULL, cwctl_o_json },
	{ "doctor", NULL, NULL, 0, 0, NULL, cwctl_o_json },
	{ "sandbox", "exec", NULL, 1, 0, NULL, cwctl_o_sandbox_exec },
	{ "completion", NULL, NULL, 1, 0, "bash zsh", cwctl_o_none },
};

const struct cwctl_cmd *
cwctl_opts_cmds(size_t *n)
{
	*n = sizeof cwctl_cmds / sizeof cwctl_cmds[0];
	return cwctl_cmds;
}

/* Does the verb have subcommands? */
static int
cwctl_opts_has_subs(const char *verb)
{
	for (size_t i = 0; i < sizeof cwctl_cmds / sizeof cwctl_cmds[0]; i++)
		if (strcmp(cwctl_cmds[i].verb, verb) == 0 && cwctl_cmds[i].sub != NULL)
			return 1;
	return 0;
}

/*
 * The command argv names (argv[0] the verb, argv[1] perhaps its subcommand): the
 * subcommand's entry, else the verb's own (sub NULL), else NULL.
 */
const struct cwctl_cmd *
cwctl_opts_find(int argc, char **argv)
{
	const struct cwctl_cmd	*c, *bare = NULL;

	for (size_t i = 0; i < sizeof cwctl_cmds / sizeof cwctl_cmds[0]; i++) {
		c = &cwctl_cmds[i];
		if (strcmp(c->verb, argv[0]) != 0)
			continue;
		if (c->sub == NULL)
			bare = c;
		else if (argc > 1 && (strcmp(c->sub, argv[1]) == 0 ||
		    (c->alias != NULL && strcmp(c->alias, argv[1]) == 0)))
			return c;
	}
	return bare;
}

static const struct cwctl_opt *
cwctl_opts_lookup(const struct cwctl_cmd *c, const char *name)
{
	for (const struct cwctl_opt *o = c->opts; o->name != NULL; o++)
		if (strcmp(o->name, name) == 0)
			return o;
	return NULL;
}

/* A word that is an argument, not an option: "-" (standard input), -100123 (an id). */
static int
cwctl_opts_is_option(const char *a)
{
	return a[0] == '-' && a[1] != '\0' && !isdigit((unsigned char)a[1]);
}

static void
cwctl_opts_name(FILE *f, const struct cwctl_cmd *c)
{
	fprintf(f, "%s%s%s", c->verb, c->sub != NULL ? " " : "", c->sub != NULL ? c->sub :
	    "");
}

/*
 * Check argv (argv[0] the verb) against the table: the subcommand is known, every
 * option is the command's and has its value, and the arguments it needs are there.
 * 0, or CWCTL_EXIT_USAGE after saying what is wrong.
 */
int
cwctl_opts_check(int argc, char **argv)
{
	const struct cwctl_cmd	*c;
	const struct cwctl_opt	*o;
	int			 i, npos = 0;

	if ((c = cwctl_opts_find(argc, argv)) == NULL) {
		if (!cwctl_opts_has_subs(argv[0]))
			/* A verb added to cwctl.c without its rows here: said, not guessed. */
			fprintf(stderr, "cwctl: %s: the verb has no row in the option table "
			    "(cwctl/cwctl-opts.c)\n", argv[0]);
		else if (argc < 2)
			fprintf(stderr, "cwctl: %s: a subcommand is needed (try cwctl %s "
			    "--help)\n", argv[0], argv[0]);
		else
			fprintf(stderr, "cwctl: %s: unknown subcommand '%s' (try cwctl %s "
			    "--help)\n", argv[0], argv[1], argv[0]);
		return CWCTL_EXIT_USAGE;
	}
	/* The verb on its own, but a word that is not an option: not a subcommand. */
	if (c->sub == NULL && argc > 1 && cwctl_opts_has_subs(c->verb) &&
	    !cwctl_opts_is_option(argv[1])) {
		fprintf(stderr, "cwctl: %s: unknown subcommand '%s' (try cwctl %s --help)\n",
		    argv[0], argv[1], argv[0]);
		return CWCTL_EXIT_USAGE;
	}
	for (i = c->sub != NULL ? 2 : 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			npos += argc - i - 1;
			break;
		}
		if (!cwctl_opts_is_option(argv[i])) {
			npos++;
			if (c->flags & CWCTL_CMD_STOP) {
				npos += argc - i - 1;
				break;
			}
			continue;
		}
		if ((o = cwctl_opts_lookup(c, argv[i])) == NULL) {
			fprintf(stderr, "cwctl: ");
			cwctl_opts_name(stderr, c);
			fprintf(stderr, ": unknown option '%s' (try cwctl ", argv[i]);
			cwctl_opts_name(stderr, c);
			fprintf(stderr, " --help)\n");
			return CWCTL_EXIT_USAGE;
		}
		if (o->arg != NULL && ++i >= argc) {
			fprintf(stderr, "cwctl: ");
			cwctl_opts_name(stderr, c);
			fprintf(stderr, ": %s needs a value (%s)\n", o->name, o->arg);
			return CWCTL_EXIT_USAGE;
		}
	}
	if (npos < c->nargs) {
		fprintf(stderr, "cwctl: ");
		cwctl_opts_name(stderr, c);
		fprintf(stderr, ": %s missing (try cwctl ", c->nargs - npos == 1 ?
		    "an argument is" : "arguments are");
		cwctl_opts_name(stderr, c);
		fprintf(stderr, " --help)\n");
		return CWCTL_EXIT_USAGE;
	}
	return 0;
}

/* The options of the command argv names, or of each of the verb's, for --help. */
void
cwctl_opts_help(FILE *f, int argc, char **argv)
{
	const struct cwctl_cmd	*c, *only = cwctl_opts_find(argc, argv);
	char			 left[64];

	if (only != NULL && only->sub == NULL && cwctl_opts_has_subs(only->verb))
		only = NULL;	/* the verb's --help: every subcommand's options */
	for (size_t i = 0; i < sizeof cwctl_cmds / sizeof cwctl_cmds[0]; i++) {
		c = &cwctl_cmds[i];
		if (strcmp(c->verb, argv[0]) != 0 || (only != NULL && c != only) ||
		    c->opts[0].name == NULL)
			continue;
		fprintf(f, "\noptions of %s%s%s:\n", c->verb, c->sub != NULL ? " " : "",
		    c->sub != NULL ? c->sub : "");
		for (const struct cwctl_opt *o = c->opts; o->name != NULL; o++) {
			snprintf(left, sizeof left, "%s%s%s", o->name, o->arg != NULL ? " " :
			    "", o->arg != NULL ? o->arg : "");
			fprintf(f, "  %-30s %s\n", left, o->help);
		}
	}
}

/*
 * cwctl __options: the table for tests, one command a line:
 * VERB<TAB>SUB (- for none)<TAB>NARGS<TAB>OPTION... (a value-taking one as NAME=ARG).
 */
int
cwctl_opts_dump(void)
{
	const struct cwctl_cmd	*c;

	for (size_t i = 0; i < sizeof cwctl_cmds / sizeof cwctl_cmds[0]; i++) {
		c = &cwctl_cmds[i];
		printf("%s\t%s\t%d\t", c->verb, c->sub != NULL ? c->sub : "-", c->nargs);
		for (const struct cwctl_opt *o = c->opts; o->name != NULL; o++)
			printf("%s%s%s%s", o == c->opts ? "" : " ", o->name, o->arg != NULL ?
			    "=" : "", o->arg != NULL ? o->arg : "");
		printf("\n");
	}
	return CWCTL_EXIT_OK;
}
