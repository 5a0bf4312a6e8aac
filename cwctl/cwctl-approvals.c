/*
 * cwctl approvals [--run RUN] [--json]: the approvals waiting for an answer.
 * cwctl approvals show ID [--json]: one of them, with its whole input.
 * cwctl approvals --watch [--run RUN | --task NAME] [--json]: each request as it comes
 * and each answer or expiry, one line each, from GET /api/events (no polling).
 *
 * The input comes from the run, so a person deciding must be able to see all of it:
 * the listing cuts it at CWCTL_APPROVALS_WIDTH bytes and says how much was left out
 * and how to see it (never inside a network ask's host name), and every byte a run
 * chose is printed made visible (vis.h).
 */
#define _GNU_SOURCE	/* asprintf */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "strlist.h"
#include "cwctl.h"
#include "json.h"
#include "record.h"
#include "vis.h"

#define CWCTL_APPROVALS_WIDTH	120

static int
cwctl_approvals_usage(void)
{
	fprintf(stderr, "usage: cwctl approvals [--run RUN] [--json]\n"
	    "       cwctl approvals show ID [--json]\n"
	    "       cwctl approvals --watch [--run RUN | --task NAME] [--json]\n");
	return CWCTL_EXIT_USAGE;
}

/*
 * The input of an approval as a person reads it: a Bash command as itself; a network
 * ask as "CONNECT host:port" and its question. *whole is how many leading bytes no
 * listing may cut: all of the host name, which is what the person approves (issue 26
 * item 9: a cut name showed "registry.npmjs.org.aaaa" and hid "evil-exfil.example").
 */
static char *
cwctl_approvals_input(const cJSON *e, size_t *whole)
{
	const cJSON	*in = cJSON_GetObjectItemCaseSensitive(e, "input");
	const char	*tool = json_get_string(e, "tool"), *cmd, *host, *q;
	char		*t;
	int		 port, n;

	*whole = 0;
	/* A budget question (the runner's own): the question, whole. */
	if (tool != NULL && strcmp(tool, "budget") == 0 &&
	    (q = json_get_string(in, "question")) != NULL) {
		*whole = strlen(q);
		return strdup(q);
	}
	if (tool != NULL && strcmp(tool, "Bash") == 0 &&
	    (cmd = json_get_string(in, "command")) != NULL)
		return strdup(cmd);
	if (tool != NULL && strcmp(tool, "network") == 0 &&
	    (host = json_get_string(in, "host")) != NULL &&
	    json_get_int(in, "port", &port) == 0) {
		q = json_get_string(in, "question");
		if ((n = asprintf(&t, "%s %s%s%s:%d", json_get_string(in, "method") != NULL ?
		    json_get_string(in, "method") : "CONNECT", strchr(host, ':') ? "[" : "",
		    host, strchr(host, ':') ? "]" : "", port)) == -1)
			return NULL;
		*whole = (size_t)n;
		if (q != NULL) {
			char	*tq;

			if (asprintf(&tq, "%s -- %s", t, q) == -1) {
				free(t);
				return NULL;
			}
			free(t);
			t = tq;
		}
		return t;
	}
	if (in == NULL || (t = json_print(in)) == NULL)
		return strdup("");
	/* cJSON's allocator is malloc here; copy to keep one free() for callers. */
	{
		char *c = strdup(t);

		cJSON_free(t);
		return c;
	}
}

/*
 * "destructive (config.rm_root)": the level and the rule that raised it, from the
 * floor's evaluation in the runner. One static buffer: one call per printf.
 */
static const char *
cwctl_approvals_risk(const cJSON *e)
{
	static char	 buf[160];
	const char	*risk = json_get_string(e, "risk");
	const char	*rule = json_get_string(e, "risk_rule");
	char		 r1[64];

	snprintf(r1, sizeof r1, "%s", cwctl_vis(risk != NULL ? risk : "ordinary"));
	if (rule != NULL && rule[0] != '\0')
		snprintf(buf, sizeof buf, "%s (%s)", r1, cwctl_vis(rule));
	else
		snprintf(buf, sizeof buf, "%s", r1);
	return buf;
}

/* "59m 58s", "1h 02m", "none", or "-" when the approval names no deadline. */
void
cwctl_approvals_left(const cJSON *e, char *buf, size_t len)
{
	double	 n;
	long	 s;

	if (json_get_number(e, "seconds_left", &n) == -1) {
		snprintf(buf, len, "-");
		return;
	}
	s = (long)n;
	if (s <= 0)
		snprintf(buf, len, "none");
	else if (s >= 3600)
		snprintf(buf, len, "%ldh %02ldm", s / 3600, s % 3600 / 60);
	else
		snprintf(buf, len, "%ldm %02lds", s / 60, s % 60);
}

/*
 * One pending approval for people who are not looking at the listing: what, where,
 * how long, and the commands that answer it (cwctl status, run start --wait).
 */
void
cwctl_approvals_announce(FILE *f, const cJSON *e, const char *indent)
{
	char		*in, *head, left[32];
	const char	*id = cwctl_vis(json_get_string(e, "id"));
	size_t		 len, cut, whole;

	if ((in = cwctl_approvals_input(e, &whole)) == NULL)
		return;
	len = strlen(in);
	if ((cut = record_cut(in, len, CWCTL_APPROVALS_WIDTH / 2)) < whole)
		cut = whole;
	head = strndup(in, cut);
	cwctl_approvals_left(e, left, sizeof left);
	fprintf(f, "%s%s  task %s  run %s  (%s left)\n", indent, id != NULL ? id : "?",
	    cwctl_vis(json_get_string(e, "task")) ? cwctl_vis(json_get_string(e, "task")) :
	    "?", cwctl_vis(json_get_string(e, "run_id")), left);
	/* The kind of call first: the floor's risk level and its rule. */
	fprintf(f, "%s  [%s] ", indent, cwctl_approvals_risk(e));
	fprintf(f, "%s: %s%s\n", cwctl_vis(json_get_string(e, "tool")),
	    head != NULL ? cwctl_vis(head) : "", cut < len ? "\u2026" : "");
	fprintf(f, "%s  answer: cwctl approve %s | cwctl deny %s   (all of it: cwctl "
	    "approvals show %s)\n", indent, id, id, id);
	free(head);
	free(in);
}

static int
cwctl_approvals_show(const char *id, int json)
{
	cJSON		*o = NULL, *a, *e;
	const char	*eid;
	char		*in, left[32];
	size_t		 whole;
	int		 rc;

	if ((rc = client_call("GET", "/api/approvals", NULL, &o)) != 0)
		return rc;
	a = cJSON_GetObjectItemCaseSensitive(o, "approvals");
	cJSON_ArrayForEach(e, a) {
		if ((eid = json_get_string(e, "id")) == NULL || strcmp(eid, id) != 0)
			continue;
		if (json)
			cwctl_print_json(e);
		else {
			printf("risk:     %s\n", cwctl_approvals_risk(e));
			printf("id:       %s\n", cwctl_vis(eid));
			printf("run:      %s\n", cwctl_vis(json_get_string(e, "run_id")));
			printf("task:     %s\n", cwctl_vis(json_get_string(e, "task")));
			printf("tool:     %s\n", cwctl_vis(json_get_string(e, "tool")));
			printf("deadline: %s\n", cwctl_vis(json_get_string(e, "deadline")));
			cwctl_approvals_left(e, left, sizeof left);
			printf("left:     %s\n", left);
			in = cwctl_approvals_input(e, &whole);
			printf("input (%zu bytes):\n", in != NULL ? strlen(in) : 0);
			vis_fputs(in, VIS_KEEP_NL | VIS_KEEP_TAB, stdout);
			printf("\n");
			free(in);
		}
		cJSON_Delete(o);
		return CWCTL_EXIT_OK;
	}
	cJSON_Delete(o);
	fprintf(stderr, "cwctl: no pending approval %s\n", cwctl_vis(id));
	return CWCTL_EXIT_FAILURE;
}


/*
 * One line for one approval event: "pending ID task T run R [RISK] TOOL: INPUT" with
 * the input cut as in the listing, or "allowed|denied ID ... by WHO[: message]",
 * "expired ID ...". e is the pending record (from the listing) when there is one;
 * else the event's own fields. --json prints the event itself, one object a line.
 */
static void
cwctl_approvals_watch_line(const cJSON *event, const cJSON *e, int json)
{
	const cJSON	*data = cJSON_GetObjectItemCaseSensitive(event, "data");
	const char	*state = json_get_string(data, "state"), *by, *msg, *task, *run;
	char		*in = NULL, *head = NULL, *t;
	size_t		 len, cut, whole;

	if (json) {
		if ((t = cJSON_PrintUnformatted(event)) != NULL) {
			vis_fputs(t, VIS_JSON, stdout);
			fputc('\n', stdout);
			cJSON_free(t);
		}
		fflush(stdout);
		return;
	}
	task = json_get_string(event, "task");
	run = json_get_string(event, "run");
	printf("%-8s %s  task %s  run %s", state != NULL ? cwctl_vis(state) : "?",
	    cwctl_vis(json_get_string(data, "approval")), task != NULL ? cwctl_vis(task) :
	    "-", run != NULL ? cwctl_vis(run) : "-");
	if (state != NULL && strcmp(state, "pending") == 0) {
		if (e != NULL) {
			in = cwctl_approvals_input(e, &whole);
			printf("  [%s] %s: ", cwctl_approvals_risk(e),
			    cwctl_vis(json_get_string(e, "tool")));
		} else {
			/* Answered before we could read it: what the event says. */
			in = strdup(json_get_string(data, "command") != NULL ?
			    json_get_string(data, "command") : "");
			whole = 0;
			printf("  [%s] %s: ", cwctl_approvals_risk(data),
			    cwctl_vis(json_get_string(data, "tool")));
		}
		if (in != NULL) {
			len = strlen(in);
			if ((cut = record_cut(in, len, CWCTL_APPROVALS_WIDTH)) < whole)
				cut = whole;
			head = strndup(in, cut);
			printf("%s%s", head != NULL ? cwctl_vis(head) : "",
			    cut < len ? "\u2026" : "");
		}
	} else if ((by = json_get_string(data, "by")) != NULL) {
		msg = json_get_string(data, "message");
		printf("  by %s%s%s", cwctl_vis(by), msg != NULL ? ": " : "",
		    msg != NULL ? cwctl_vis(msg) : "");
	}
	printf("\n");
	fflush(stdout);
	free(head);
	free(in);
}

/* An approval of the listing as the event its request was. */
static cJSON *
cwctl_approvals_as_event(const cJSON *e)
{
	cJSON		*o = cJSON_CreateObject(), *data = cJSON_CreateObject();
	const char	*s;

	json_add_string(o, "type", "approval");
	if ((s = json_get_string(e, "task")) != NULL)
		json_add_string(o, "task", s);
	json_add_string(o, "run", json_get_string(e, "run_id"));
	json_add_string(data, "approval", json_get_string(e, "id"));
	json_add_string(data, "state", "pending");
	json_add_string(data, "tool", json_get_string(e, "tool"));
	if ((s = json_get_string(e, "risk")) != NULL)
		json_add_string(data, "risk", s);
	cJSON_AddItemToObject(o, "data", data);
	return o;
}

/*
 * The pending approvals (of run, or all) not printed yet: at the start, and after a
 * gap or a reconnect, when requests may have come unseen. id: only that one (a
 * request just announced), with its event; NULL for all.
 */
static int
cwctl_approvals_watch_list(const char *run, const char *task, const char *id,
    const cJSON *event, struct strlist *seen, int json)
{
	char		 path[256], esc[160];
	cJSON		*o = NULL, *e, *ev;
	const char	*eid;
	long		 status = 0;
	int		 found = 0;

	snprintf(path, sizeof path, "/api/approvals");
	if (run != NULL && client_escape(run, esc, sizeof esc) == 0)
		snprintf(path, sizeof path, "/api/approvals?run=%s", esc);
	if (client_call_quiet("GET", path, NULL, &status, &o) != 0 || status != 200) {
		cJSON_Delete(o);
		return -1;
	}
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(o, "approvals")) {
		if ((eid = json_get_string(e, "id")) == NULL || strlist_contains(seen, eid))
			continue;
		if (id != NULL && strcmp(id, eid) != 0)
			continue;
		if (task != NULL && (json_get_string(e, "task") == NULL ||
		    strcmp(task, json_get_string(e, "task")) != 0))
			continue;
		strlist_add(seen, eid);
		found = 1;
		if (event != NULL) {
			cwctl_approvals_watch_line(event, e, json);
		} else {
			ev = cwctl_approvals_as_event(e);
			cwctl_approvals_watch_line(ev, e, json);
			cJSON_Delete(ev);
		}
	}
	cJSON_Delete(o);
	return found;
}

static int
cwctl_approvals_watch(const char *run, const char *task, int json)
{
	struct client_events	*ce = NULL;
	struct client_event	 ev;
	struct strlist		 seen = { 0 };
	char			 q[512], esc[160], tesc[400];
	const char		*state, *aid;
	int			 rc;

	snprintf(q, sizeof q, "types=approval");
	if (run != NULL && client_escape(run, esc, sizeof esc) == 0)
		snprintf(q, sizeof q, "types=approval&run=%s", esc);
	else if (task != NULL && client_escape(task, tesc, sizeof tesc) == 0)
		snprintf(q, sizeof q, "types=approval&task=%s", tesc);
	/* Subscribed first, then what is already pending: nothing falls between. */
	if ((rc = client_events_open(q, &ce)) != 0)
		return rc;
	(void)cwctl_approvals_watch_list(run, task, NULL, NULL, &seen, json);
	for (;;) {
		if ((rc = client_events_next(ce, &ev)) != 0)
			break;
		if (strcmp(ev.type, "gap") == 0 || strcmp(ev.type, "reconnected") == 0) {
			(void)cwctl_approvals_watch_list(run, task, NULL, NULL, &seen, json);
		} else if (strcmp(ev.type, "approval") == 0) {
			const cJSON *data = cJSON_GetObjectItemCaseSensitive(ev.data, "data");

			state = json_get_string(data, "state");
			aid = json_get_string(data, "approval");
			if (state != NULL && aid != NULL && strcmp(state, "pending") == 0) {
				if (!strlist_contains(&seen, aid) &&
				    cwctl_approvals_watch_list(run, task, aid, ev.data, &seen,
				    json) != 1) {
					strlist_add(&seen, aid);
					cwctl_approvals_watch_line(ev.data, NULL, json);
				}
			} else if (ev.data != NULL)
				cwctl_approvals_watch_line(ev.data, NULL, json);
		}
		client_event_clear(&ev);
	}
	client_events_close(ce);
	strlist_free(&seen);
	return rc;
}

int
cwctl_approvals(int argc, char **argv)
{
	char		 path[256], esc[160], left[32];
	cJSON		*o = NULL, *a, *e;
	char		*in, *head;
	size_t		 len, cut, whole;
	int		 json = 0, rc, watch = 0;
	const char	*show = NULL, *run = NULL, *task = NULL;

	snprintf(path, sizeof path, "/api/approvals");
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = 1;
		else if (strcmp(argv[i], "--watch") == 0)
			watch = 1;
		else if (i == 1 && strcmp(argv[i], "show") == 0 && i + 1 < argc)
			show = argv[++i];
		else if (strcmp(argv[i], "--run") == 0 && i + 1 < argc &&
		    client_escape(argv[i + 1], esc, sizeof esc) == 0) {
			snprintf(path, sizeof path, "/api/approvals?run=%s", esc);
			run = argv[++i];
		} else if (strcmp(argv[i], "--task") == 0 && i + 1 < argc)
			task = argv[++i];
		else
			return cwctl_approvals_usage();
	}
	if (show != NULL && (watch || task != NULL))
		return cwctl_approvals_usage();
	if (show != NULL)
		return cwctl_approvals_show(show, json);
	if (watch && run != NULL && task != NULL)
		return cwctl_approvals_usage();
	if (watch)
		return cwctl_approvals_watch(run, task, json);
	if (task != NULL)
		return cwctl_approvals_usage();
	if ((rc = client_call("GET", path, NULL, &o)) != 0)
		return rc;
	a = cJSON_GetObjectItemCaseSensitive(o, "approvals");
	if (json)
		cwctl_print_json(a);
	else if (cJSON_GetArraySize(a) == 0)
		printf("no approvals pending\n");
	else {
		printf("%-16s %-30s %-16s %-26s %-8s %-8s %s\n", "ID", "RISK", "TASK",
		    "RUN", "TOOL", "LEFT", "INPUT");
		cJSON_ArrayForEach(e, a) {
			if ((in = cwctl_approvals_input(e, &whole)) == NULL)
				continue;
			len = strlen(in);
			if ((cut = record_cut(in, len, CWCTL_APPROVALS_WIDTH)) < whole)
				cut = whole;
			head = strndup(in, cut);
			cwctl_approvals_left(e, left, sizeof left);
			printf("%-16s %-30s %-16s %-26s %-8s %-8s ",
			    cwctl_vis(json_get_string(e, "id")), cwctl_approvals_risk(e),
			    cwctl_vis(json_get_string(e, "task")) != NULL ?
			    cwctl_vis(json_get_string(e, "task")) : "-",
			    cwctl_vis(json_get_string(e, "run_id")),
			    cwctl_vis(json_get_string(e, "tool")), left);
			printf("%s", head != NULL ? cwctl_vis(head) : "");
			/* A harmless start must not hide the rest: say it was cut. */
			if (cut < len)
				printf("\u2026 (+%zu bytes, cwctl approvals show %s)", len - cut,
				    cwctl_vis(json_get_string(e, "id")));
			printf("\n");
			free(head);
			free(in);
		}
	}
	cJSON_Delete(o);
	return CWCTL_EXIT_OK;
}
