/*
 * cwctl run diff|merge|land|discard: review a finished run's branch and land it (or
 * throw it away). Each of merge, land and discard is done once: the daemon refuses a
 * second (exit 3), saying what was done and when. The daemon does the git work (review.c), so the Inbox's buttons and these
 * verbs take the same path and leave the same journal and audit entries.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client.h"
#include "cwctl.h"
#include "json.h"
#include "spawnchild.h"
#include "vis.h"

static void
cwctl_review_help(FILE *f, const char *verb)	/* --help: cwctl.c, from its table */
{
	if (strcmp(verb, "diff") == 0)
		fprintf(f, "usage: cwctl run diff RUN [--stat] [--json]\n"
		    "  the run's branch against the commit it started from\n");
	else if (strcmp(verb, "merge") == 0)
		fprintf(f, "usage: cwctl run merge RUN [--into BRANCH] [--squash | --ff-only] "
		    "[--accept-automation] [--json]\n  land the run's branch in BRANCH "
		    "(default: the branch the repository is on)\n"
		    "  --accept-automation  land it although it adds or changes automation "
		    "files\n    (.claude/, .mcp.json, .envrc, .vscode/, CI workflows, git "
		    "hooks...);\n    without it such a run is refused with exit status 5\n"
		    "  a file the run would write over that git does not track in the "
		    "checkout\n  (an ignored .env) is left alone: the merge is refused "
		    "(exit 1) and names it\n");
	else if (strcmp(verb, "land") == 0)
		fprintf(f, "usage: cwctl run land RUN [--into BRANCH] [--squash | --ff-only] "
		    "[--accept-automation] [--json]\n  merge as run merge does, then delete "
		    "the run's branch and worktree\n");
	else
		fprintf(f, "usage: cwctl run discard RUN [--json]\n"
		    "  delete the run's branch and worktree\n");
}

static int
cwctl_review_usage(const char *verb)
{
	cwctl_review_help(stderr, verb);
	return CWCTL_EXIT_USAGE;
}

static int
cwctl_review_path(const char *id, const char *what, const char *query, char *path,
    size_t len)
{
	char	esc[160];

	if (client_escape(id, esc, sizeof esc) == -1)
		return -1;
	snprintf(path, len, "/api/runs/%s/%s%s", esc, what, query);
	return 0;
}

/* One line of a patch, coloured as git colours it, made visible either way. */
static void
cwctl_review_line(FILE *f, const char *line, size_t n, int color)
{
	const char	*c = NULL;
	char		*v;

	if ((v = strndup(line, n)) == NULL)
		return;
	if (color) {
		if (strncmp(v, "diff ", 5) == 0 || strncmp(v, "index ", 6) == 0 ||
		    strncmp(v, "--- ", 4) == 0 || strncmp(v, "+++ ", 4) == 0)
			c = "\033[1m";
		else if (v[0] == '@')
			c = "\033[36m";
		else if (v[0] == '+')
			c = "\033[32m";
		else if (v[0] == '-')
			c = "\033[31m";
	}
	if (c != NULL)
		fputs(c, f);
	vis_fputs(v, VIS_KEEP_TAB, f);
	if (c != NULL)
		fputs("\033[m", f);
	fputc('\n', f);
	free(v);
}

/*
 * Where the diff goes: through $PAGER (less -FRX when unset) on a terminal, else
 * straight to standard output. The pager is the person's own program on their own
 * terminal, so it gets their whole environment (TERM, LESS, ...), on purpose.
 */
static pid_t	cwctl_review_pager_pid = -1;

static FILE *
cwctl_review_pager(int *piped)
{
	extern char	**environ;
	const char	*pager = getenv("PAGER");
	char		*argv[] = { "/bin/sh", "-c", NULL, NULL }, err[512];
	struct spawnchild sp;
	FILE		*f;
	int		 p[2];

	*piped = 0;
	if (!isatty(STDOUT_FILENO))
		return stdout;
	if (pager == NULL || *pager == '\0')
		pager = "less";
	if (strcmp(pager, "cat") == 0)
		return stdout;
	if (getenv("LESS") == NULL)
		setenv("LESS", "FRX", 1);
	fflush(stdout);
	signal(SIGPIPE, SIG_IGN);
	if (pipe2(p, O_CLOEXEC) == -1)
		return stdout;
	argv[2] = (char *)pager;
	memset(&sp, 0, sizeof sp);
	sp.path = argv[0];
	sp.argv = argv;
	sp.env = environ;
	sp.fds[0] = p[0];
	sp.fds[1] = 1;
	sp.fds[2] = 2;
	sp.nfds = 3;
	if (spawnchild_start(&sp, &cwctl_review_pager_pid, err, sizeof err) == -1) {
		close(p[0]);
		close(p[1]);
		fprintf(stderr, "cwctl: the pager: %s\n", err);
		return stdout;
	}
	close(p[0]);
	if ((f = fdopen(p[1], "w")) == NULL) {
		close(p[1]);
		return stdout;
	}
	*piped = 1;
	return f;
}

/* The pager has all of the diff: close its pipe and wait until the person quits it. */
static void
cwctl_review_pager_close(FILE *f)
{
	int	 st;

	fclose(f);
	if (cwctl_review_pager_pid > 0)
		(void)spawnchild_wait(cwctl_review_pager_pid, &st);
	cwctl_review_pager_pid = -1;
}

static int
cwctl_review_diff(const char *id, int stat, int json)
{
	char		 path[320];
	const char	*text, *s, *nl;
	cJSON		*o = NULL;
	FILE		*f;
	int		 rc, piped, color;

	if (cwctl_review_path(id, "diff", stat ? "?patch=0" : "", path, sizeof path) == -1)
		return cwctl_review_usage("diff");
	if ((rc = client_call("GET", path, NULL, &o)) != 0)
		return rc;
	if (json) {
		cwctl_print_json(o);
		cJSON_Delete(o);
		return CWCTL_EXIT_OK;
	}
	text = json_get_string(o, stat ? "stat" : "patch");
	f = cwctl_review_pager(&piped);
	color = isatty(STDOUT_FILENO) && getenv("NO_COLOR") == NULL && !stat;
	if (text != NULL && text[0] == '\0')
		fprintf(f, "run %s changed nothing: branch %s is at its base\n",
		    cwctl_vis(id), cwctl_vis(json_get_string(o, "branch")));
	for (s = text; s != NULL && *s != '\0'; s = nl != NULL ? nl + 1 : NULL) {
		nl = strchr(s, '\n');
		cwctl_review_line(f, s, nl != NULL ? (size_t)(nl - s) : strlen(s), color);
	}
	if (!stat && json_get_bool(o, "truncated", &rc) == 0 && rc)
		fprintf(f, "[the diff was cut at 4 MiB]\n");
	if (piped)
		cwctl_review_pager_close(f);
	else
		fflush(f);
	cJSON_Delete(o);
	return CWCTL_EXIT_OK;
}

/*
 * A merge the daemon refused for automation files or for files of the user's it would
 * replace: the files, one a line (made visible: their names are the run's), and what
 * to do. The exit status: CWCTL_EXIT_AUTOMATION or CWCTL_EXIT_FAILURE.
 */
static int
cwctl_review_refused(const char *id, const cJSON *e)
{
	const char	*code = json_get_string(e, "code");
	const cJSON	*f;

	if (code != NULL && strcmp(code, "automation_files") == 0) {
		fprintf(stderr, "cwctl: run %s adds or changes automation files (they make "
		    "tools run code when a\ncheckout is opened: Claude Code, direnv, editors, "
		    "CI, git hooks); nothing was merged:\n", cwctl_vis(id));
		cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(e, "automation")) {
			fprintf(stderr, "  %-8s %s", cwctl_vis(json_get_string(f, "status")),
			    cwctl_vis(json_get_string(f, "path")));
			fprintf(stderr, "  (%s)\n", cwctl_vis(json_get_string(f, "what")));
		}
		fprintf(stderr, "review them:  cwctl run diff %s\nthen land:    cwctl run "
		    "merge %s --accept-automation\n", cwctl_vis(id), cwctl_vis(id));
		return CWCTL_EXIT_AUTOMATION;
	}
	fprintf(stderr, "cwctl: %s\n", cwctl_vis(json_get_string(e, "message")));
	/* Merged, landed or discarded already: a refusal (the message says when). */
	if (code != NULL && strncmp(code, "already_", 8) == 0)
		return CWCTL_EXIT_DENIED;
	cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(e, "left_alone"))
		if (cJSON_IsString(f))
			fprintf(stderr, "  left alone: %s\n", cwctl_vis(f->valuestring));
	return CWCTL_EXIT_FAILURE;
}

static int
cwctl_review_merge(const char *id, const char *verb, const char *into,
    const char *mode, int accept, int json)
{
	char		 path[320];
	cJSON		*b, *o = NULL;
	const cJSON	*e;
	const char	*res, *code;
	long		 status = 0;
	int		 rc;

	if (cwctl_review_path(id, verb, "", path, sizeof path) == -1)
		return cwctl_review_usage(verb);
	b = cJSON_CreateObject();
	if (into != NULL)
		json_add_string(b, "into", into);
	json_add_string(b, "mode", mode);
	if (accept)
		cJSON_AddTrueToObject(b, "accept_automation");
	/*
	 * The refusals that list files are printed here, the rest as every verb prints
	 * them. A request that never reached the daemon goes again through client_call,
	 * which says why; one that reached it is never sent twice.
	 */
	if (client_call_quiet("POST", path, b, &status, &o) != 0)
		rc = client_call("POST", path, b, &o);
	else if (status >= 200 && status < 300)
		rc = CWCTL_EXIT_OK;
	else {
		e = cJSON_GetObjectItemCaseSensitive(o, "error");
		code = json_get_string(e, "code");
		if (json && code != NULL && strcmp(code, "automation_files") == 0)
			cwctl_print_json(o);
		rc = cwctl_review_refused(id, e);
		if (status == 401 || status == 403)
			rc = CWCTL_EXIT_DENIED;
		cJSON_Delete(o);
		o = NULL;
	}
	cJSON_Delete(b);
	if (rc != 0)
		return rc;
	if (json)
		cwctl_print_json(o);
	else {
		res = json_get_string(o, "result");
		if (res != NULL && strcmp(res, "up-to-date") == 0)
			printf("%s already has the work of run %s: nothing to do\n",
			    cwctl_vis(json_get_string(o, "into")), cwctl_vis(id));
		else
			printf("%s %s into %s: now at %s\n",
			    cwctl_vis(json_get_string(o, "branch")), cwctl_vis(res),
			    cwctl_vis(json_get_string(o, "into")),
			    cwctl_vis(json_get_string(o, "commit")));
		if (strcmp(verb, "land") == 0)
			printf("landed run %s: branch %s and its worktree are gone\n",
			    cwctl_vis(id), cwctl_vis(json_get_string(o, "branch")));
	}
	cJSON_Delete(o);
	return CWCTL_EXIT_OK;
}

static int
cwctl_review_discard(const char *id, int json)
{
	char	 path[320];
	cJSON	*o = NULL;
	int	 rc;

	if (cwctl_review_path(id, "discard", "", path, sizeof path) == -1)
		return cwctl_review_usage("discard");
	if ((rc = client_call("POST", path, NULL, &o)) != 0)
		return rc;
	if (json)
		cwctl_print_json(o);
	else
		printf("discarded run %s: branch %s and its worktree are gone\n",
		    cwctl_vis(id), cwctl_vis(json_get_string(o, "branch")));
	cJSON_Delete(o);
	return CWCTL_EXIT_OK;
}

/* argv[0] is the sub-verb: diff, merge, land or discard. */
int
cwctl_run_review(int argc, char **argv)
{
	const char	*verb = argv[0], *id = NULL, *into = NULL, *mode = "merge";
	int		 stat = 0, json = 0, accept = 0, merge;

	merge = strcmp(verb, "merge") == 0 || strcmp(verb, "land") == 0;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = 1;
		else if (strcmp(verb, "diff") == 0 && strcmp(argv[i], "--stat") == 0)
			stat = 1;
		else if (merge && strcmp(argv[i], "--accept-automation") == 0)
			accept = 1;
		else if (merge && strcmp(argv[i], "--into") == 0) {
			if (i + 1 >= argc) {
				fprintf(stderr, "cwctl: --into needs a branch name\n");
				return CWCTL_EXIT_USAGE;
			}
			into = argv[++i];
		} else if (merge && (strcmp(argv[i], "--squash") == 0 ||
		    strcmp(argv[i], "--ff-only") == 0)) {
			if (strcmp(mode, "merge") != 0) {
				fprintf(stderr, "cwctl: --squash and --ff-only exclude each "
				    "other\n");
				return CWCTL_EXIT_USAGE;
			}
			mode = argv[i] + 2;
		} else if (argv[i][0] == '-') {
			fprintf(stderr, "cwctl: run %s: unknown option '%s'\n", verb, argv[i]);
			return cwctl_review_usage(verb);
		} else if (id != NULL) {
			fprintf(stderr, "cwctl: run %s: one run at a time ('%s')\n", verb,
			    argv[i]);
			return cwctl_review_usage(verb);
		} else
			id = argv[i];
	}
	if (id == NULL) {
		fprintf(stderr, "cwctl: run %s: which run? (cwctl run list)\n", verb);
		return cwctl_review_usage(verb);
	}
	if (strcmp(verb, "diff") == 0)
		return cwctl_review_diff(id, stat, json);
	if (merge)
		return cwctl_review_merge(id, verb, into, mode, accept, json);
	return cwctl_review_discard(id, json);
}
