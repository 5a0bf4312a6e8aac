/*
 * cwctl: the command-line client. Each verb lives in its own file and is listed once in
 * the table below.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cwctl.h"
#include "vis.h"

static const struct cwctl_verb {
	const char	*name;
	int		(*fn)(int, char **);
	const char	*usage;
} cwctl_verbs[] = {
	{ "status", cwctl_status, "status [--json]   is clockworkd running, and what is it doing" },
	{ "task", cwctl_task, "task add NAME --prompt TEXT [--repo DIR] [--engine E] [--mode M] ...\n"
	    "  task list|show NAME|enable NAME|disable NAME|rm NAME [--json]" },
	{ "run", cwctl_run, "run start TASK [--wait] | list | show RUN | stop RUN | logs [-f] RUN [--json]\n"
	    "  run export RUN [--transcript] [-o FILE]   the run's proof-of-work HTML file" },
	{ "approvals", cwctl_approvals, "approvals [--run RUN] [--json]   approvals waiting for an answer\n"
	    "  approvals show ID [--json]   one pending approval with its whole input" },
	{ "approve", cwctl_approve, "approve ID   allow a pending tool call" },
	{ "deny", cwctl_deny, "deny ID [--message TEXT]   deny a pending tool call" },
	{ "telegram", cwctl_telegram, "telegram set-token | remove-token | test CHAT_ID | status [--json]\n"
	    "        the bot that sends approvals to Telegram (set-token reads the token from stdin)" },
	{ "inbox", cwctl_inbox, "inbox [--open] | --revoke   a one-time sign-in link to the Inbox page, or end its sessions" },
	{ "journal", cwctl_journal, "journal [--run RUN | --audit] [--json]   the safety journal or the audit log" },
	{ "gc", cwctl_gc, "gc [--task NAME] [--force] [--json]   prune finished runs' worktrees now" },
	{ "service", cwctl_service, "service install [--print]   write the systemd user unit (launchd agent on macOS)" },
	{ "policy", cwctl_policy, "policy check [--json] -- 'COMMAND'   evaluate a command against the floor, offline" },
	{ "sandbox", cwctl_sandbox, "sandbox exec --workdir DIR [--engine NAME] -- CMD...   run a command in a run's sandbox" },
};

/*
 * Text from runs (engine output, commands, task names) is printed through these two:
 * nothing a run wrote can reach the terminal as a control sequence (common/vis.h).
 * cwctl_vis() returns a visible copy that stays valid for the next CWCTL_VIS_RING
 * calls, which is enough for one printf of a table row.
 */
#define CWCTL_VIS_RING	16

static const char *
cwctl_vis_flags(const char *s, int flags)
{
	static char	*ring[CWCTL_VIS_RING];
	static size_t	 next;
	char		*v;

	if (s == NULL)
		return NULL;
	if ((v = vis_str(s, flags)) == NULL)
		return "[unprintable]";
	free(ring[next]);
	ring[next] = v;
	next = (next + 1) % CWCTL_VIS_RING;
	return v;
}

const char *
cwctl_vis(const char *s)
{
	return cwctl_vis_flags(s, 0);
}

const char *
cwctl_vis_json(const char *s)
{
	return cwctl_vis_flags(s, VIS_JSON);
}

/* JSON as cJSON prints it, with hidden characters as JSON escapes: still JSON. */
void
cwctl_print_json(const cJSON *v)
{
	char	*t;

	if ((t = cJSON_Print(v)) == NULL)
		return;
	vis_fputs(t, VIS_JSON, stdout);
	fputc('\n', stdout);
	cJSON_free(t);
}

static void
cwctl_usage(FILE *f)
{
	fprintf(f, "usage: cwctl VERB [ARGS]\n       cwctl --help | --version\n\nverbs:\n");
	for (size_t i = 0; i < sizeof cwctl_verbs / sizeof cwctl_verbs[0]; i++)
		fprintf(f, "  %s\n", cwctl_verbs[i].usage);
	fprintf(f, "\nexit codes: 0 ok; 1 the thing asked for failed; 2 usage; 3 denied;\n"
	    "4 clockworkd is not running.\n");
}

int
main(int argc, char **argv)
{
	if (argc < 2) {
		cwctl_usage(stderr);
		return CWCTL_EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		cwctl_usage(stdout);
		return CWCTL_EXIT_OK;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("cwctl %s\n", CW_VERSION);
		return CWCTL_EXIT_OK;
	}
	for (size_t i = 0; i < sizeof cwctl_verbs / sizeof cwctl_verbs[0]; i++)
		if (strcmp(argv[1], cwctl_verbs[i].name) == 0)
			return cwctl_verbs[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "cwctl: unknown verb or flag '%s' (try cwctl --help)\n", argv[1]);
	return CWCTL_EXIT_USAGE;
}
