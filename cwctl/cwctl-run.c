/* cwctl run start|list|show|stop|logs, and cwctl runs (run list). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client.h"
#include "cwctl.h"
#include "json.h"
#include "strlist.h"
#include "transcript.h"
#include "vis.h"

static int
cwctl_run_usage(void)
{
	fprintf(stderr,
	    "usage: cwctl run start TASK [--wait] [--json]\n"
	    "       cwctl run list [--task NAME] [--status S] [--review] [--limit N] [--json]\n"
	    "       cwctl run show RUN [--json]\n"
	    "       cwctl run stop RUN\n"
	    "       cwctl run logs [-f] [--raw | --json] RUN\n"
	    "       cwctl run export RUN [--transcript] [-o FILE]\n"
	    "       cwctl run retry RUN [--wait] [--json]\n"
	    "       cwctl run continue RUN --prompt TEXT [--fresh] [--wait] [--json]\n"
	    "       cwctl run diff RUN [--stat]\n"
	    "       cwctl run merge RUN [--into BRANCH] [--squash | --ff-only] [--accept-automation]\n"
	    "       cwctl run land RUN [--into BRANCH] [--squash | --ff-only] [--accept-automation]\n"
	    "       cwctl run push RUN [--remote REMOTE] [--pr] [--json]\n"
	    "       cwctl run discard RUN\n");
	return CWCTL_EXIT_USAGE;
}

/*
 * The event stream of one run (types: "run,log", ...), opened before its state is
 * first read, so that a change between the two is not missed.
 */
static int
cwctl_run_events(const char *id, const char *types, struct client_events **ce)
{
	char	q[256], esc[160];

	if (client_escape(id, esc, sizeof esc) == -1) {
		fprintf(stderr, "cwctl: run id too long\n");
		return CWCTL_EXIT_USAGE;
	}
	snprintf(q, sizeof q, "types=%s&run=%s", types, esc);
	return client_events_open(q, ce);
}

static int
cwctl_run_terminal(const char *s)
{
	return s != NULL && strcmp(s, "queued") != 0 && strcmp(s, "starting") != 0 &&
	    strcmp(s, "running") != 0;
}

/* How the run was contained, and the agent's final message (a plan run's plan). */
static void
cwctl_run_print_engine(const cJSON *rep)
{
	const cJSON	*e = cJSON_GetObjectItemCaseSensitive(rep, "engine");
	const char	*s;

	if ((s = json_get_string(e, "name")) != NULL)
		printf("engine:       %s\n", cwctl_vis(s));
	if ((s = json_get_string(e, "floor")) != NULL)
		printf("floor:        %s\n", cwctl_vis(s));
	if ((s = json_get_string(e, "approvals")) != NULL)
		printf("approvals:    %s\n", cwctl_vis(s));
	/* SPEC N1: how the run reached the network; open says so plainly. */
	if ((s = json_get_string(rep, "network")) != NULL) {
		const cJSON	*n = cJSON_GetObjectItemCaseSensitive(rep, "network_egress");
		double		 c = 0, d = 0;

		if (strcmp(s, "open") == 0)
			printf("network:      OPEN (network: open: no namespace, no proxy)\n");
		else if (n != NULL && json_get_number(n, "connections", &c) == 0 &&
		    json_get_number(n, "denied", &d) == 0)
			printf("network:      %s (%.0f connections, %.0f refused)\n", cwctl_vis(s),
			    c, d);
		else
			printf("network:      %s\n", cwctl_vis(s));
	}
	/* What run continue would resume, and what this run resumed. */
	if ((e = cJSON_GetObjectItemCaseSensitive(rep, "conversation")) != NULL) {
		const char	*from = json_get_string(e, "resumed_run");
		int		 kept = 0;

		(void)json_get_bool(e, "kept", &kept);
		printf("conversation: %s%s%s%s%s\n", kept ? "kept (run continue resumes it)" :
		    "not kept", !kept && json_get_string(e, "error") != NULL ? ": " : "",
		    !kept && json_get_string(e, "error") != NULL ?
		    cwctl_vis(json_get_string(e, "error")) : "", from != NULL ?
		    "; resumed run " : "", from != NULL ? cwctl_vis(from) : "");
	}
	if ((s = json_get_string(rep, "result")) != NULL) {
		printf("result:\n");
		vis_fputs(s, VIS_KEEP_NL | VIS_KEEP_TAB, stdout);
		printf("\n");
	}
}

/* Dollars as people read them: cents, and a fraction of a cent under a dollar. */
static const char *
cwctl_run_money(double d, char *buf, size_t len)
{
	snprintf(buf, len, d > 0 && d < 1 ? "$%.4f" : "$%.2f", d);
	return buf;
}

static const char *
cwctl_run_or(const char *s)
{
	return s != NULL ? cwctl_vis(s) : "?";
}

/* "count" of a report's list object ({"count": N, "list": [...]}), 0 when absent. */
static int
cwctl_run_count(const cJSON *rep, const char *key, const cJSON **list)
{
	const cJSON	*o = cJSON_GetObjectItemCaseSensitive(rep, key);
	double		 n = 0;

	*list = cJSON_GetObjectItemCaseSensitive(o, "list");
	json_get_number(o, "count", &n);
	return (int)n;
}

/*
 * One sentence on what held the run's limits (the report's limits.layers): which
 * layer held each, so that "rlimit" and "none" are read as what they are.
 */
static void
cwctl_run_print_limits(const cJSON *rep)
{
	const cJSON	*layers, *o;
	const char	*by, *what[2] = { "processes", "memory" };
	double		 max;
	int		 n = 0;

	layers = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(rep,
	    "limits"), "layers");
	if (!cJSON_IsObject(layers))
		return;
	for (int i = 0; i < 2; i++) {
		if ((o = cJSON_GetObjectItemCaseSensitive(layers, what[i])) == NULL ||
		    (by = json_get_string(o, "by")) == NULL || json_get_number(o, "max",
		    &max) == -1)
			continue;
		printf("%s%s %.0f%s %s", n++ ? ", " : "limits:       ", what[i],
		    i == 1 ? max / (1024 * 1024) : max, i == 1 ? " MiB" : "",
		    strcmp(by, "none") == 0 ? "NOT ENFORCED" : "held by");
		if (strcmp(by, "none") != 0)
			printf(" %s%s", cwctl_vis(by), strcmp(by, "rlimit") == 0 ? (i == 0 ?
			    " (RLIMIT_NPROC in the run's user namespace)" : " (per process, "
			    "and the run's resident total counted by the runner)") : "");
	}
	if (n > 0)
		printf("\n");
}

/*
 * The report's git part: automation files the run changed (SPEC U3: they land only
 * with --accept-automation), and for refused work where it is kept and how to look
 * at it without running it.
 */
static void
cwctl_run_print_git(const cJSON *git)
{
	const cJSON	*e, *list = cJSON_GetObjectItemCaseSensitive(git, "automation");
	const char	*s, *id;

	if (cJSON_GetArraySize(list) > 0) {
		printf("automation files (they make tools run code when a checkout is "
		    "opened; held back\n  in the kept worktree, and a merge needs "
		    "--accept-automation):\n");
		cJSON_ArrayForEach(e, list) {
			printf("  %-8s %s", cwctl_run_or(json_get_string(e, "status")),
			    cwctl_run_or(json_get_string(e, "path")));
			printf("  (%s)\n", cwctl_run_or(json_get_string(e, "what")));
		}
	}
	if ((s = json_get_string(git, "quarantine")) == NULL)
		return;
	printf("not imported: %s\n", cwctl_run_or(json_get_string(git, "error")));
	printf("quarantine:   %s (untrusted; no git repository in it)\n", cwctl_vis(s));
	if ((s = json_get_string(git, "quarantine_bundle")) != NULL) {
		id = "inspect";
		printf("  bundle:     %s\n", cwctl_vis(s));
		printf("  inspect:    git clone --no-checkout %s /tmp/%s && git -C /tmp/%s "
		    "log -p --all\n", cwctl_vis(s), id, id);
	}
	if ((s = json_get_string(git, "quarantine_files")) != NULL)
		printf("  files:      %s (plain files: no .git, automation files held back)\n",
		    cwctl_vis(s));
	printf("  (README.txt there says more)\n");
}

/*
 * The report as people read it: what the floor refused, what was asked, what the
 * sandbox could not enforce, the error; all of it with --json.
 */
static void
cwctl_run_print_report(const cJSON *rep)
{
	const cJSON	*list, *e;
	const char	*s;
	int		 n;

	n = cwctl_run_count(rep, "denials", &list);
	printf("floor denials: %d\n", n);
	cJSON_ArrayForEach(e, list)
		printf("  %s: %s\n", cwctl_run_or(json_get_string(e, "rule")),
		    cwctl_run_or(json_get_string(e, "command")));
	n = cwctl_run_count(rep, "approvals", &list);
	printf("approvals asked: %d\n", n);
	cJSON_ArrayForEach(e, list) {
		const char *dec = json_get_string(e, "behavior");

		if (dec == NULL)
			dec = json_get_string(e, "state");
		printf("  %s: %s\n", cwctl_run_or(json_get_string(e, "id")),
		    cwctl_run_or(dec));
	}
	cwctl_run_print_limits(rep);
	if ((s = json_get_string(rep, "cost_unknown")) != NULL)
		printf("cost:         unknown: %s\n", cwctl_vis(s));
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(rep, "not_enforced"))
		if (cJSON_IsString(e))
			printf("not enforced: %s\n", cwctl_vis(e->valuestring));
	if ((s = json_get_string(rep, "error")) != NULL)
		printf("error:        %s\n", cwctl_vis(s));
	cwctl_run_print_git(cJSON_GetObjectItemCaseSensitive(rep, "git"));
	printf("(the whole report: cwctl run show RUN --json)\n");
}

/* What a person did with the work (issue 27), and the commands when nothing yet. */
static void
cwctl_run_print_review(const cJSON *r)
{
	const cJSON	*rv = cJSON_GetObjectItemCaseSensitive(r, "review"), *p;
	const char	*st = json_get_string(rv, "state"), *d, *id;

	if (st == NULL)
		return;
	id = cwctl_vis(json_get_string(r, "id"));
	d = json_get_string(rv, "detail");
	if (strcmp(st, "waiting") == 0)
		printf("review:       waiting (cwctl run diff|merge|land|push|discard %s)\n",
		    id);
	else
		printf("review:       %s at %s%s%s%s\n", cwctl_vis(st),
		    cwctl_run_or(json_get_string(rv, "at")), d != NULL && *d != '\0' ?
		    " (" : "", d != NULL ? cwctl_vis(d) : "", d != NULL && *d != '\0' ?
		    ")" : "");
	if ((p = cJSON_GetObjectItemCaseSensitive(rv, "pushed")) != NULL &&
	    cJSON_IsObject(p))
		printf("pushed:       %s to %s at %s\n",
		    cwctl_run_or(json_get_string(p, "branch")),
		    cwctl_run_or(json_get_string(p, "remote")),
		    cwctl_run_or(json_get_string(p, "at")));
}

static void
cwctl_run_print(const cJSON *r)
{
	const cJSON	*sp, *rep;
	const char	*s;
	char		 money[32];
	double		 n;
	int		 b;

	printf("run:          %s\n", cwctl_vis(json_get_string(r, "id")));
	printf("task:         %s\n", (s = cwctl_vis(json_get_string(r, "task"))) ? s : "?");
	printf("status:       %s", cwctl_vis(json_get_string(r, "status")));
	/* The reason only when it says more than the status ("stopped (budget_turns)"). */
	if ((s = json_get_string(r, "exit_reason")) != NULL && (json_get_string(r, "status") ==
	    NULL || strcmp(s, json_get_string(r, "status")) != 0))
		printf(" (%s)", cwctl_vis(s));
	printf("\n");
	if (json_get_bool(r, "sandboxed", &b) == 0)
		printf("sandboxed:    %s\n", b ? "yes" : "NO");
	if ((s = json_get_string(r, "worktree")) != NULL)
		printf("worktree:     %s\n", cwctl_vis(s));
	if ((s = json_get_string(r, "branch")) != NULL)
		printf("branch:       %s\n", cwctl_vis(s));
	if ((s = json_get_string(r, "base_commit")) != NULL)
		printf("base commit:  %s\n", cwctl_vis(s));
	if ((s = json_get_string(r, "continues")) != NULL)
		printf("continues:    %s on %s\n", cwctl_vis(s),
		    cwctl_run_or(json_get_string(r, "branch")));
	if ((s = json_get_string(r, "parent_run")) != NULL)
		printf("from run:     %s%s\n", cwctl_vis(s), json_get_string(r, "prompt") != NULL ?
		    " (a follow-up)" : " (a retry)");
	if ((s = json_get_string(r, "final_commit")) != NULL)
		printf("final commit: %s\n", cwctl_vis(s));
	if ((sp = cJSON_GetObjectItemCaseSensitive(r, "spent")) != NULL) {
		n = 0;
		json_get_number(sp, "dollars", &n);
		b = 1;
		json_get_bool(sp, "dollars_known", &b);
		printf("spent:        %s", b ? cwctl_run_money(n, money, sizeof money) :
		    "cost unknown (the model has no price)");
		n = 0;
		json_get_number(sp, "turns", &n);
		printf(", %.0f turn%s", n, n == 1 ? "" : "s");
		if ((s = json_get_string(r, "exit_reason")) != NULL &&
		    strcmp(s, "budget_turns") == 0)
			printf(" (the engine stops at the first turn past the budget, and "
			    "counts it)");
		json_get_number(sp, "seconds", &n);
		printf(", %.1f s\n", n);
	}
	if ((s = json_get_string(r, "log_path")) != NULL)
		printf("log:          %s\n", cwctl_vis(s));
	printf("created:      %s\n", (s = cwctl_vis(json_get_string(r, "created_at"))) ? s : "-");
	if ((s = json_get_string(r, "ended_at")) != NULL)
		printf("ended:        %s\n", cwctl_vis(s));
	cwctl_run_print_review(r);
	if ((rep = cJSON_GetObjectItemCaseSensitive(r, "report")) != NULL &&
	    cJSON_IsObject(rep)) {
		cwctl_run_print_engine(rep);
		cwctl_run_print_report(rep);
	}
}

static int
cwctl_run_get(const char *id, cJSON **o)
{
	char	path[256], esc[160];

	if (client_escape(id, esc, sizeof esc) == -1) {
		fprintf(stderr, "cwctl: run id too long\n");
		return CWCTL_EXIT_USAGE;
	}
	snprintf(path, sizeof path, "/api/runs/%s", esc);
	return client_call("GET", path, NULL, o);
}

/*
 * Ctrl-C while waiting ends the wait, not the run: say so, and how to follow it. The
 * message is made before the wait (a signal handler may only write(2) it).
 */
static char	cwctl_run_intr_msg[512];

static void
cwctl_run_intr(int sig)
{
	ssize_t	n;

	(void)sig;
	n = write(STDERR_FILENO, cwctl_run_intr_msg, strlen(cwctl_run_intr_msg));
	(void)n;
	_exit(130);
}

/*
 * Say so on stderr when the run waits on a person, once per approval, with the
 * commands that answer it: a run that needs an answer must never look merely slow.
 */
static void
cwctl_run_announce(const char *id, struct strlist *seen)
{
	char		 path[256], esc[160];
	cJSON		*o = NULL, *e;
	const char	*aid;
	long		 status = 0;

	if (client_escape(id, esc, sizeof esc) == -1)
		return;
	snprintf(path, sizeof path, "/api/approvals?run=%s", esc);
	if (client_call_quiet("GET", path, NULL, &status, &o) != 0 || status != 200) {
		cJSON_Delete(o);
		return;
	}
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(o, "approvals")) {
		if ((aid = json_get_string(e, "id")) == NULL || strlist_contains(seen, aid))
			continue;
		strlist_add(seen, aid);
		fprintf(stderr, "run %s is waiting on you: approval pending\n", id);
		cwctl_approvals_announce(stderr, e, "  ");
	}
	cJSON_Delete(o);
}

static int
cwctl_run_wait(const char *id, int json)
{
	struct sigaction	 sa;
	cJSON			*o = NULL;
	struct strlist		 seen = { 0 };
	struct client_events	*ce = NULL;
	int			 rc, ok, refused;

	snprintf(cwctl_run_intr_msg, sizeof cwctl_run_intr_msg,
	    "\ncwctl: stopped waiting; run %s goes on.\n"
	    "  follow it:  cwctl run logs -f %s\n"
	    "  stop it:    cwctl run stop %s\n", id, id, id);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = cwctl_run_intr;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	/* Subscribed first, then read: a run that ends in between is still seen. */
	if ((rc = cwctl_run_events(id, "run,approval", &ce)) != 0)
		return rc;
	for (;;) {
		if ((rc = cwctl_run_get(id, &o)) != 0)
			goto out;
		if (cwctl_run_terminal(json_get_string(o, "status")))
			break;
		cwctl_run_announce(id, &seen);
		cJSON_Delete(o);
		o = NULL;
		/* Any event of the run (or a gap, a reconnect): read it again. */
		if ((rc = client_events_wait(ce)) != 0)
			goto out;
	}
	client_events_close(ce);
	ce = NULL;
	strlist_free(&seen);
	if (json)
		cwctl_print_json(o);
	else
		cwctl_run_print(o);
	/* The end, for a person who looked away: the terminal's bell (stderr, a tty only). */
	if (isatty(STDERR_FILENO))
		fputc('\a', stderr);
	ok = strcmp(json_get_string(o, "status"), "completed") == 0;
	/* Refused (nothing ran: the sandbox or a limit could not be held): exit 3. */
	refused = strcmp(json_get_string(o, "status"), "refused") == 0;
	cJSON_Delete(o);
	return ok ? CWCTL_EXIT_OK : refused ? CWCTL_EXIT_DENIED : CWCTL_EXIT_FAILURE;
out:
	client_events_close(ce);
	strlist_free(&seen);
	return rc;
}

/* A run was queued (o, taken): print its id, or wait for it to end. from: its origin. */
static int
cwctl_run_queued(cJSON *o, int wait, int json, const char *from)
{
	char	 id[64];

	snprintf(id, sizeof id, "%s", json_get_string(o, "id") ? json_get_string(o, "id") :
	    "");
	if (!wait) {
		if (json)
			cwctl_print_json(o);
		else {
			printf("%s\n", id);
			cwctl_hint_run(id);
		}
		cJSON_Delete(o);
		return CWCTL_EXIT_OK;
	}
	cJSON_Delete(o);
	if (!json)
		fprintf(stderr, "run %s queued%s%s%s; waiting for it to end\n", id,
		    from != NULL ? " (from " : "", from != NULL ? from : "",
		    from != NULL ? ")" : "");
	return cwctl_run_wait(id, json);
}

static int
cwctl_run_start(int argc, char **argv)
{
	const char	*task = NULL;
	cJSON		*b, *o = NULL;
	int		 wait = 0, json = 0, rc;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--wait") == 0)
			wait = 1;
		else if (strcmp(argv[i], "--json") == 0)
			json = 1;
		else if (argv[i][0] == '-' || task != NULL)
			return cwctl_run_usage();
		else
			task = argv[i];
	}
	if (task == NULL)
		return cwctl_run_usage();
	b = cJSON_CreateObject();
	json_add_string(b, "task", task);
	if ((rc = client_send("POST", "/api/runs", b, &o)) != 0)
		return rc;
	return cwctl_run_queued(o, wait, json, NULL);
}

/* run retry RUN | run continue RUN --prompt TEXT: a new run from an earlier one. */
static int
cwctl_run_again(int argc, char **argv, int follow)
{
	const char	*run = NULL, *prompt = NULL;
	cJSON		*b, *o = NULL;
	char		 path[256], esc[160];
	int		 wait = 0, json = 0, rc, fresh = 0;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--wait") == 0)
			wait = 1;
		else if (strcmp(argv[i], "--json") == 0)
			json = 1;
		else if (follow && strcmp(argv[i], "--fresh") == 0)
			fresh = 1;
		else if (follow && strcmp(argv[i], "--prompt") == 0 && i + 1 < argc)
			prompt = argv[++i];
		else if (argv[i][0] == '-' || run != NULL)
			return cwctl_run_usage();
		else
			run = argv[i];
	}
	if (run == NULL || (follow && prompt == NULL) ||
	    client_escape(run, esc, sizeof esc) == -1)
		return cwctl_run_usage();
	snprintf(path, sizeof path, "/api/runs/%s/%s", esc, follow ? "continue" : "retry");
	b = cJSON_CreateObject();
	if (follow)
		json_add_string(b, "prompt", prompt);
	if (fresh)
		cJSON_AddTrueToObject(b, "fresh");
	if ((rc = client_send("POST", path, b, &o)) != 0)
		return rc;
	/* What changed beside the new run, said once (stderr: stdout is the id). */
	if (!json && json_get_string(o, "detached_worktree") != NULL)
		fprintf(stderr, "cwctl: the kept worktree %s was detached from %s (its files "
		    "are as they were) so that the new run can work on that branch\n",
		    cwctl_vis(json_get_string(o, "detached_worktree")),
		    cwctl_run_or(json_get_string(o, "branch")));
	if (!json && json_get_string(o, "already_merged_into") != NULL)
		fprintf(stderr, "cwctl: %s is already merged into %s: the new run's commits go "
		    "on top of it, and merging it again lands only them\n",
		    cwctl_run_or(json_get_string(o, "branch")),
		    cwctl_vis(json_get_string(o, "already_merged_into")));
	return cwctl_run_queued(o, wait, json, run);
}

/* The REVIEW column: waiting, merged, landed, discarded, "+pushed" beside; "-" live. */
static const char *
cwctl_run_review_word(const cJSON *r, char *buf, size_t len)
{
	const cJSON	*rv = cJSON_GetObjectItemCaseSensitive(r, "review");
	const char	*st = json_get_string(rv, "state");

	if (st == NULL)
		return "-";
	snprintf(buf, len, "%s%s", st, cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(rv,
	    "pushed")) ? "+pushed" : "");
	return cwctl_vis(buf);
}

static int
cwctl_run_list(int argc, char **argv)
{
	char		 path[512], esc[160], rv[48];
	cJSON		*o = NULL, *a, *r;
	const char	*s;
	size_t		 off;
	int		 json = 0, rc, b;

	off = (size_t)snprintf(path, sizeof path, "/api/runs?x=1");
	for (int i = 1; i < argc; i++) {
		const char *a1 = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(a1, "--json") == 0) {
			json = 1;
			continue;
		}
		/* Only what needs a person: ended, and not merged, landed or discarded. */
		if (strcmp(a1, "--review") == 0) {
			off += (size_t)snprintf(path + off, sizeof path - off, "&review=waiting");
			continue;
		}
		if (v == NULL || client_escape(v, esc, sizeof esc) == -1 ||
		    off + strlen(esc) + 16 >= sizeof path)
			return cwctl_run_usage();
		i++;
		if (strcmp(a1, "--task") == 0)
			off += (size_t)snprintf(path + off, sizeof path - off, "&task=%s", esc);
		else if (strcmp(a1, "--status") == 0)
			off += (size_t)snprintf(path + off, sizeof path - off, "&status=%s", esc);
		else if (strcmp(a1, "--limit") == 0) {
			if (v[strspn(v, "0123456789")] != '\0' || v[0] == '\0' || strlen(v) > 6) {
				fprintf(stderr, "cwctl: run list: --limit '%s' is not a number of "
				    "runs (0 to 100000)\n", v);
				return CWCTL_EXIT_USAGE;
			}
			off += (size_t)snprintf(path + off, sizeof path - off, "&limit=%s", esc);
		} else {
			fprintf(stderr, "cwctl: run list: unknown option '%s'\n", a1);
			return cwctl_run_usage();
		}
	}
	if ((rc = client_call("GET", path, NULL, &o)) != 0)
		return rc;
	a = cJSON_GetObjectItemCaseSensitive(o, "runs");
	if (json)
		cwctl_print_json(a);
	else {
		printf("%-26s %-20s %-11s %-15s %-9s %-16s %s\n", "RUN", "TASK", "STATUS",
		    "REASON", "SANDBOX", "REVIEW", "CREATED");
		cJSON_ArrayForEach(r, a) {
			b = -1;
			json_get_bool(r, "sandboxed", &b);
			s = json_get_string(r, "exit_reason");
			printf("%-26s %-20s %-11s %-15s %-9s %-16s %s\n",
			    cwctl_vis(json_get_string(r, "id")),
			    cwctl_vis(json_get_string(r, "task")), cwctl_vis(json_get_string(r, "status")),
			    s != NULL ? cwctl_vis(s) : "-", b == -1 ? "-" : b ? "yes" : "NO",
			    cwctl_run_review_word(r, rv, sizeof rv),
			    cwctl_vis(json_get_string(r, "created_at")));
		}
	}
	cJSON_Delete(o);
	return CWCTL_EXIT_OK;
}

/* A chunk of the log as JSON lines {"line": ...}: --json on a run with no transcript. */
static void
cwctl_run_log_json(const char *data)
{
	const char	*p, *nl;
	char		*t;
	cJSON		*l;

	for (p = data; p != NULL && *p != '\0'; p = nl + 1) {
		if ((nl = strchr(p, '\n')) == NULL)
			nl = p + strlen(p);
		if ((l = cJSON_CreateObject()) != NULL &&
		    (t = strndup(p, (size_t)(nl - p))) != NULL) {
			json_add_string(l, "line", t);
			free(t);
			if ((t = json_print(l)) != NULL)
				printf("%s\n", t);
			cJSON_free(t);
		}
		cJSON_Delete(l);
		if (*nl == '\0')
			break;
	}
}

static int	cwctl_run_logs(const char *, int, int);

/*
 * The readable transcript from the start (--json: one entry per line as JSON); with
 * follow, keep reading until the run has ended. Colour only on a terminal that has not
 * asked for none (NO_COLOR).
 */
static int
cwctl_run_transcript(const char *id, int follow, int json)
{
	char		 path[320], esc[160], *line;
	cJSON		*o = NULL, *e;
	const cJSON	*entries;
	double		 next = 0;
	int		 rc, done, n, color, raw = 0;
	struct client_events *ce = NULL;

	color = !json && isatty(STDOUT_FILENO) && getenv("NO_COLOR") == NULL;
	if (client_escape(id, esc, sizeof esc) == -1)
		return cwctl_run_usage();
	/* Following: subscribed before the first read, woken by the run's events. */
	if (follow && (rc = cwctl_run_events(id, "run,log,approval", &ce)) != 0)
		return rc;
	for (;;) {
		snprintf(path, sizeof path, "/api/runs/%s/transcript?offset=%.0f", esc, next);
		if ((rc = client_call("GET", path, NULL, &o)) != 0)
			break;
		/* A command run: its raw log is its transcript. */
		if (json_get_bool(o, "raw", &raw) == 0 && raw) {
			cJSON_Delete(o);
			client_events_close(ce);
			return cwctl_run_logs(id, follow, json);
		}
		entries = cJSON_GetObjectItemCaseSensitive(o, "entries");
		n = cJSON_GetArraySize(entries);
		cJSON_ArrayForEach(e, entries) {
			line = json ? json_print(e) : transcript_render(e, color);
			if (line != NULL)
				printf("%s\n", line);
			if (json)
				cJSON_free(line);
			else
				free(line);
		}
		fflush(stdout);
		json_get_number(o, "next", &next);
		done = 0;
		json_get_bool(o, "done", &done);
		cJSON_Delete(o);
		o = NULL;
		if (!follow || (done && n == 0)) {
			rc = CWCTL_EXIT_OK;
			break;
		}
		if (n == 0 && (rc = client_events_wait(ce)) != 0)
			break;
	}
	client_events_close(ce);
	return rc;
}

/*
 * The raw log (the engine's own lines) from the start, or as JSON lines; with follow,
 * until the end.
 */
static int
cwctl_run_logs(const char *id, int follow, int json)
{
	char		 path[320], esc[160];
	cJSON		*o = NULL;
	const char	*data;
	double		 next = 0;
	int		 rc, done;
	struct client_events *ce = NULL;

	if (client_escape(id, esc, sizeof esc) == -1)
		return cwctl_run_usage();
	if (follow && (rc = cwctl_run_events(id, "run,log", &ce)) != 0)
		return rc;
	for (;;) {
		snprintf(path, sizeof path, "/api/runs/%s/log?offset=%.0f", esc, next);
		if ((rc = client_call("GET", path, NULL, &o)) != 0)
			break;
		if ((data = json_get_string(o, "data")) != NULL && data[0] != '\0') {
			/* Engine output: made visible, never passed to the terminal raw. */
			if (json)
				cwctl_run_log_json(data);
			else
				vis_fputs(data, VIS_KEEP_NL | VIS_KEEP_TAB, stdout);
			fflush(stdout);
		}
		json_get_number(o, "next", &next);
		done = 0;
		json_get_bool(o, "done", &done);
		if (!follow || (done && (data == NULL || data[0] == '\0'))) {
			cJSON_Delete(o);
			rc = CWCTL_EXIT_OK;
			break;
		}
		rc = data == NULL || data[0] == '\0' ? client_events_wait(ce) : 0;
		cJSON_Delete(o);
		o = NULL;
		if (rc != 0)
			break;
	}
	client_events_close(ce);
	return rc;
}

/*
 * cwctl run export RUN [--transcript] [-o FILE]: the proof-of-work HTML, to FILE
 * (created 0600, never overwriting a symlink) or standard output.
 */
static int
cwctl_run_export(int argc, char **argv)
{
	const char	*id = NULL, *file = NULL, *html;
	char		 path[256], esc[160];
	int		 transcript = 0, rc, fd;
	cJSON		*o = NULL;
	FILE		*f;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--transcript") == 0)
			transcript = 1;
		else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc)
			file = argv[++i];
		else if (argv[i][0] == '-' || id != NULL)
			return cwctl_run_usage();
		else
			id = argv[i];
	}
	if (id == NULL || client_escape(id, esc, sizeof esc) == -1)
		return cwctl_run_usage();
	snprintf(path, sizeof path, "/api/runs/%s/export%s", esc,
	    transcript ? "?transcript=1" : "");
	if ((rc = client_call("GET", path, NULL, &o)) != 0)
		return rc;
	if ((html = json_get_string(o, "html")) == NULL) {
		fprintf(stderr, "cwctl: the daemon sent no export\n");
		cJSON_Delete(o);
		return CWCTL_EXIT_FAILURE;
	}
	if (file == NULL)
		f = stdout;
	else if ((fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
	    0600)) == -1 || (f = fdopen(fd, "w")) == NULL) {
		fprintf(stderr, "cwctl: %s: %s\n", file, strerror(errno));
		cJSON_Delete(o);
		return CWCTL_EXIT_FAILURE;
	}
	fputs(html, f);
	if (fflush(f) != 0 || (f != stdout && fclose(f) != 0)) {
		fprintf(stderr, "cwctl: %s: %s\n", file ? file : "stdout", strerror(errno));
		cJSON_Delete(o);
		return CWCTL_EXIT_FAILURE;
	}
	if (file != NULL)
		fprintf(stderr, "wrote %s\n", file);
	cJSON_Delete(o);
	return CWCTL_EXIT_OK;
}

/* cwctl runs [--review] [...]: run list, the word a person types for it. */
int
cwctl_runs(int argc, char **argv)
{
	return cwctl_run_list(argc, argv);
}

int
cwctl_run(int argc, char **argv)
{
	char		 path[256], esc[160];
	cJSON		*o = NULL;
	const char	*sub, *id = NULL;
	int		 json = 0, follow = 0, raw = 0, rc;

	if (argc < 2)
		return cwctl_run_usage();
	sub = argv[1];
	if (strcmp(sub, "start") == 0)
		return cwctl_run_start(argc - 1, argv + 1);
	if (strcmp(sub, "list") == 0 || strcmp(sub, "ls") == 0)
		return cwctl_run_list(argc - 1, argv + 1);
	if (strcmp(sub, "export") == 0)
		return cwctl_run_export(argc - 1, argv + 1);
	if (strcmp(sub, "retry") == 0 || strcmp(sub, "continue") == 0)
		return cwctl_run_again(argc - 1, argv + 1, strcmp(sub, "continue") == 0);
	if (strcmp(sub, "diff") == 0 || strcmp(sub, "merge") == 0 ||
	    strcmp(sub, "land") == 0 || strcmp(sub, "discard") == 0)
		return cwctl_run_review(argc - 1, argv + 1);
	if (strcmp(sub, "push") == 0)
		return cwctl_run_push(argc - 1, argv + 1);
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = 1;
		else if (strcmp(argv[i], "-f") == 0 || strcmp(argv[i], "--follow") == 0)
			follow = 1;
		else if (strcmp(argv[i], "--raw") == 0)
			raw = 1;
		else if (argv[i][0] == '-' || id != NULL)
			return cwctl_run_usage();
		else
			id = argv[i];
	}
	if (id == NULL)
		return cwctl_run_usage();
	if (strcmp(sub, "show") == 0) {
		if ((rc = cwctl_run_get(id, &o)) != 0)
			return rc;
		if (json)
			cwctl_print_json(o);
		else
			cwctl_run_print(o);
		cJSON_Delete(o);
		return CWCTL_EXIT_OK;
	}
	if (strcmp(sub, "stop") == 0) {
		if (client_escape(id, esc, sizeof esc) == -1)
			return cwctl_run_usage();
		snprintf(path, sizeof path, "/api/runs/%s/stop", esc);
		if ((rc = client_call("POST", path, NULL, &o)) != 0)
			return rc;
		if (json)
			cwctl_print_json(o);
		else if (json_get_bool(o, "was_queued", &rc) == 0 && rc)
			printf("run %s was queued: it will not start\n", id);
		else
			printf("stopping run %s\n", id);
		cJSON_Delete(o);
		return CWCTL_EXIT_OK;
	}
	if (strcmp(sub, "logs") == 0 || strcmp(sub, "log") == 0) {
		if (raw && json)
			return cwctl_run_usage();
		return raw ? cwctl_run_logs(id, follow, 0) :
		    cwctl_run_transcript(id, follow, json);
	}
	return cwctl_run_usage();
}
