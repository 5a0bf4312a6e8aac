/*
 * cwctl: the command-line client. Each verb lives in its own file and is listed once in
 * the table below.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "cwctl.h"
#include "vis.h"

static const struct cwctl_verb {
	const char	*name;
	int		(*fn)(int, char **);
	const char	*usage;
} cwctl_verbs[] = {
	{ "status", cwctl_status, "status [--json]   is clockworkd running, and what is it doing" },
	{ "task", cwctl_task, "task add NAME (--prompt TEXT | --prompt - | --prompt-file FILE |\n"
	    "      --command LINE) [--repo DIR] [--engine E (default: engines.default, else\n"
	    "      the first agent CLI found)] [--mode acceptEdits|plan] [--base B] [--dollars N]\n"
	    "      [--turns N] [--seconds N] [--budget-wait S] [--max-dollars N]\n"
	    "      [--processes N] [--memory-mb N]\n"
	    "      [--schedule queued|'CRON'] [--disabled] [--json]\n"
	    "  task edit NAME [--prompt TEXT] [--mode M] [--base B|default] ...   (history kept)\n"
	    "  task list|show NAME|history NAME|enable NAME|disable NAME|rm NAME [--json]\n"
	    "  task rules NAME | unrule NAME FAMILY | ask NAME all|none|default|RISK,...\n"
	    "        who answers a task's tool calls: its approvals.ask and remembered families\n"
	    "  task rules NAME --from-repo | --import-repo DIGEST   the repository's own Claude\n"
	    "        rules: shown with a digest, imported only as shown" },
	{ "run", cwctl_run, "run start TASK [--wait] | list | show RUN | stop RUN\n"
	    "  run logs [-f] [--raw | --json] RUN   the readable transcript (--raw: the engine's lines)\n"
	    "  run export RUN [--transcript] [-o FILE]   the run's proof-of-work HTML file\n"
	    "  run diff RUN [--stat] | merge RUN [--into BRANCH] [--squash|--ff-only] | discard RUN\n"
	    "  run land RUN [--into BRANCH] [--squash|--ff-only]   merge, then delete its branch and worktree\n"
	    "  run push RUN [--remote REMOTE] [--pr]   push its branch with your own git; --pr: a pull request\n"
	    "        (merge, land and discard are done once: a second is refused, exit 3, saying when)\n"
	    "  run retry RUN | run continue RUN --prompt TEXT [--fresh] [--wait]   a new run from an earlier one\n"
	    "                                        (continue resumes its conversation on RUN's own branch;\n"
	    "                                        exit 6 no conversation, 7 busy, 8 branch not free)" },
	{ "runs", cwctl_runs, "runs [--review] [--task NAME] [--status S] [--limit N] [--json]   runs and their\n"
	    "        review state (--review: only ended runs no one has merged, landed or discarded)" },
	{ "jobs", cwctl_jobs, "jobs discover [REPO] | list | preview NAME | enable NAME   repository jobs, imported disabled" },
	{ "template", cwctl_template, "template export NAME [-o FILE] | import FILE [--repo DIR]   shareable task definitions" },
	{ "approvals", cwctl_approvals, "approvals [--run RUN] [--json]   approvals waiting for an answer\n"
	    "  approvals show ID [--json]   one pending approval with its whole input\n"
	    "  approvals --watch [--run RUN | --task NAME] [--json]   each request and answer as it comes" },
	{ "approve", cwctl_approve, "approve ID [--for-task]   allow a pending tool call or network host\n"
	    "        (--for-task: remember its host, or its command family, for the task)" },
	{ "deny", cwctl_deny, "deny ID [--message TEXT]   deny a pending tool call" },
	{ "telegram", cwctl_telegram, "telegram set-token | remove-token | test CHAT_ID | status [--json]\n"
	    "        the bot that sends approvals to Telegram (set-token reads the token from stdin)" },
	{ "key", cwctl_key, "key add NAME --provider anthropic|openai [--base-url URL] [--model M] | list [--json] | rm NAME\n"
	    "        provider keys for the byok engine (add reads the key from stdin)" },
	{ "inbox", cwctl_inbox, "inbox [--open] | --revoke   a one-time sign-in link to the Inbox page, or end its sessions" },
	{ "network", cwctl_network, "network TASK [--ask | --no-ask] [--allow RULE]... [--add RULE]... [--json]   a task's network policy" },
	{ "journal", cwctl_journal, "journal [--run RUN | --audit] [--json]   the safety journal or the audit log" },
	{ "gc", cwctl_gc, "gc [--task NAME] [--force] [--json]   prune finished runs' worktrees now" },
	{ "service", cwctl_service, "service install [--print] [--force] | uninstall | status   the systemd user unit (launchd agent on macOS)\n"
	    "  service apparmor [--print]   (root) load the AppArmor profile Ubuntu 24.04 needs for cw-runner" },
	{ "policy", cwctl_policy, "policy check [--json] -- 'COMMAND'   evaluate a command against the floor, offline" },
	{ "doctor", cwctl_doctor, "doctor [--json]   what this machine allows a run (namespaces, AppArmor, Landlock, seccomp,\n"
	    "        cgroups, engines, the daemon) and the command that fixes each failure" },
	{ "sandbox", cwctl_sandbox, "sandbox exec --workdir DIR [--engine NAME] -- CMD...   run a command in a run's sandbox" },
	{ "completion", cwctl_completion, "completion bash|zsh   a completion script for the shell (eval \"$(cwctl completion bash)\")" },
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
	fprintf(f, "\n(cwctl VERB --help: its options.)\n"
	    "\nexit codes:\n"
	    "  0  ok\n"
	    "  1  the thing asked for failed (a runtime failure)\n"
	    "  2  usage: an unknown verb, subcommand or option, a missing argument or value\n"
	    "  3  refused: policy check denied; approve|deny refused; run --wait: the run\n"
	    "     was refused; task rules --import-repo: the settings changed since shown;\n"
	    "     run merge|land|discard|push: the run was merged, landed or discarded\n"
	    "     already\n"
	    "  4  clockworkd is not running\n"
	    "  5  run merge refused automation files (--accept-automation lands them)\n"
	    "  6  run continue: no conversation to resume (--fresh starts anew)\n"
	    "  7  run continue|retry: the run has not ended, or its branch is busy\n"
	    "  8  run continue: a person must act: its branch is gone, checked out\n"
	    "     elsewhere, or its kept worktree is not clean\n");
}

/*
 * --help (or -h) anywhere among a verb's options, before a "--" (after it, words are a
 * command's own): the verb's usage on standard output, exit 0, whatever else is there.
 */
static int
cwctl_wants_help(int argc, char **argv)
{
	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			return 0;
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
			return 1;
	}
	return 0;
}

/* The verbs, in the order of the table (the completion lists them). */
const char *
cwctl_verb(size_t i)
{
	return i < sizeof cwctl_verbs / sizeof cwctl_verbs[0] ? cwctl_verbs[i].name : NULL;
}

int
main(int argc, char **argv)
{
	int	rc;

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
	/* For the tests and the completion: the option table, the verbs. */
	if (strcmp(argv[1], "__options") == 0)
		return cwctl_opts_dump();
	if (strcmp(argv[1], "__verbs") == 0) {
		for (size_t i = 0; i < sizeof cwctl_verbs / sizeof cwctl_verbs[0]; i++)
			printf("%s\n", cwctl_verbs[i].name);
		return CWCTL_EXIT_OK;
	}
	for (size_t i = 0; i < sizeof cwctl_verbs / sizeof cwctl_verbs[0]; i++)
		if (strcmp(argv[1], cwctl_verbs[i].name) == 0) {
			if (cwctl_wants_help(argc - 2, argv + 2)) {
				printf("usage: cwctl %s\n", cwctl_verbs[i].usage);
				cwctl_opts_help(stdout, argc - 1, argv + 1);
				return CWCTL_EXIT_OK;
			}
			/* Usage errors first, before the verb asks the daemon anything. */
			if ((rc = cwctl_opts_check(argc - 1, argv + 1)) != 0) {
				fprintf(stderr, "usage: cwctl %s\n", cwctl_verbs[i].usage);
				return rc;
			}
			return cwctl_verbs[i].fn(argc - 1, argv + 1);
		}
	fprintf(stderr, "cwctl: unknown verb or flag '%s' (try cwctl --help)\n", argv[1]);
	return CWCTL_EXIT_USAGE;
}

/*
 * A secret (a provider key, a bot token) as one line from stdin, never from argv,
 * without echo on a terminal; trailing blanks removed. what names it in messages,
 * prompt is shown on a terminal. -1 with a message when it is missing, too long or
 * holds a space or control character (the buffer is wiped then).
 */
int
cwctl_read_secret(const char *what, const char *prompt, char *buf, size_t len)
{
	struct termios	 old, quiet;
	int		 tty = isatty(STDIN_FILENO), restored = 0;
	size_t		 n;

	if (tty) {
		fprintf(stderr, "%s", prompt);
		if (tcgetattr(STDIN_FILENO, &old) == 0) {
			quiet = old;
			quiet.c_lflag &= ~(tcflag_t)ECHO;
			restored = tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet) == 0;
		}
	}
	if (fgets(buf, (int)len, stdin) == NULL)
		buf[0] = '\0';
	if (restored) {
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &old);
		fprintf(stderr, "\n");
	}
	n = strlen(buf);
	if (n == len - 1 && buf[n - 1] != '\n') {
		explicit_bzero(buf, len);
		fprintf(stderr, "cwctl: the %s is longer than %zu bytes\n", what, len - 2);
		return -1;
	}
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' ' ||
	    buf[n - 1] == '\t'))
		buf[--n] = '\0';
	if (n == 0) {
		fprintf(stderr, "cwctl: no %s on stdin\n", what);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)buf[i] < 0x21 || buf[i] == 0x7f) {
			explicit_bzero(buf, len);
			fprintf(stderr, "cwctl: the %s holds a space or control character\n",
			    what);
			return -1;
		}
	return 0;
}
