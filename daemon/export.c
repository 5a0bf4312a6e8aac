/*
 * The proof-of-work export (SPEC I3): one self-contained HTML file about one run, meant
 * to leave the machine and be published where we control nothing. So, stricter than
 * the rest of the daemon:
 *  - every interpolated string goes through mask_secrets() and then HTML escaping, in
 *    that order (escaping first could split a secret so the mask misses it); there is
 *    no switch that turns either off;
 *  - the file references nothing outside itself: inline style only, no <script>, no
 *    <link>, no <img>, no URL of any kind is emitted as markup, and a CSP meta tag
 *    (default-src 'none') forbids loading anything should a viewer find a way;
 *  - the run's transcript (its log) is left out unless this export asks for it;
 *  - every export is an audit-log entry and counted on the run.
 */
#define _GNU_SOURCE
#include <sys/stat.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "daemon.h"
#include "export.h"
#include "journal.h"
#include "json.h"
#include "mask.h"
#include "review.h"
#include "store.h"
#include "transcript.h"
#include "transcripts.h"

#define EXPORT_MAX_DIFF		(2 * 1024 * 1024)
#define EXPORT_MAX_TRANSCRIPT	(4 * 1024 * 1024)

/* Mask, then escape for HTML text and attribute values alike. */
static void
export_put(FILE *f, const char *s)
{
	char	*m;

	if (s == NULL)
		return;
	if ((m = mask_secrets(s)) == NULL) {
		fputs("[unavailable: out of memory]", f);
		return;
	}
	for (const char *p = m; *p != '\0'; p++) {
		switch (*p) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		case '`': fputs("&#96;", f); break;
		default:
			/* Control characters other than newline and tab carry nothing readable. */
			if ((unsigned char)*p < 0x20 && *p != '\n' && *p != '\t')
				fputc('?', f);
			else
				fputc(*p, f);
		}
	}
	free(m);
}

static void
export_row(FILE *f, const char *k, const char *v)
{
	fprintf(f, "<tr><th>%s</th><td>", k);
	export_put(f, v != NULL ? v : "-");
	fputs("</td></tr>\n", f);
}

static void
export_rowf(FILE *f, const char *k, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
export_rowf(FILE *f, const char *k, const char *fmt, ...)
{
	char	buf[256];
	va_list	ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	export_row(f, k, buf);
}

static void
export_pre(FILE *f, const char *title, const char *text, const char *none)
{
	fprintf(f, "<h2>%s</h2>\n", title);
	if (text == NULL || *text == '\0') {
		fprintf(f, "<p class=\"none\">%s</p>\n", none);
		return;
	}
	fputs("<pre>", f);
	export_put(f, text);
	fputs("</pre>\n", f);
}

char *
export_render(const struct export_input *in)
{
	FILE	*f;
	char	*out = NULL, *pretty = NULL;
	size_t	 len = 0;
	cJSON	*rep;

	if ((f = open_memstream(&out, &len)) == NULL)
		return NULL;
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	    "style-src 'unsafe-inline'; img-src data:\">\n"
	    "<meta name=\"referrer\" content=\"no-referrer\">\n"
	    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	    "<title>Proof of work: ", f);
	export_put(f, in->task);
	fputs(" (", f);
	export_put(f, in->run_id);
	fputs(")</title>\n<style>\n"
	    "body{font:15px/1.45 system-ui,sans-serif;max-width:60rem;margin:1.5rem auto;"
	    "padding:0 1rem;color:#1b1f24;background:#fff}\n"
	    "h1{font-size:1.4rem}h2{font-size:1.1rem;margin-top:1.8rem;border-bottom:1px solid "
	    "#d0d7de}\n"
	    "table{border-collapse:collapse;width:100%}th,td{text-align:left;vertical-align:top;"
	    "padding:.25rem .5rem;border-bottom:1px solid #eaeef2}th{width:11rem;color:#57606a;"
	    "font-weight:600}\n"
	    "pre{background:#f6f8fa;padding:.75rem;overflow:auto;white-space:pre-wrap;"
	    "word-break:break-word;font:13px/1.4 ui-monospace,monospace}\n"
	    ".none{color:#57606a;font-style:italic}.warn{color:#a40e26;font-weight:600}\n"
	    "footer{margin-top:2rem;color:#57606a;font-size:.85rem}\n"
	    "</style></head><body>\n<h1>Proof of work: ", f);
	export_put(f, in->task);
	fputs("</h1>\n<table>\n", f);
	export_row(f, "Run", in->run_id);
	export_row(f, "Task", in->task);
	export_row(f, "Engine", in->engine);
	export_row(f, "Permission mode", in->permission_mode);
	export_row(f, "Status", in->status);
	export_row(f, "Exit reason", in->exit_reason);
	if (in->sandboxed == 1)
		export_row(f, "Sandboxed", "yes");
	else
		fprintf(f, "<tr><th>Sandboxed</th><td class=\"warn\">%s</td></tr>\n",
		    in->sandboxed == 0 ? "NO: the sandbox was turned off for this run" :
		    "unknown");
	export_rowf(f, "Budget", "$%.2f, %d turns, %d s", in->budget_dollars,
	    in->budget_turns, in->budget_seconds);
	if (in->spent_dollars < 0)	/* RUNS_DOLLARS_UNKNOWN: the model had no price */
		export_rowf(f, "Spent", "cost unknown (the model has no price), %d turns, "
		    "%.1f s", in->spent_turns, in->spent_seconds);
	else
		export_rowf(f, "Spent", "$%.4f, %d turns, %.1f s", in->spent_dollars,
		    in->spent_turns, in->spent_seconds);
	export_row(f, "Repository", in->repo != NULL ? in->repo : "(scratch run)");
	export_row(f, "Branch", in->branch);
	export_row(f, "Base commit", in->base_commit);
	export_row(f, "Final commit", in->final_commit);
	export_row(f, "Created", in->created_at);
	export_row(f, "Ended", in->ended_at);
	fputs("</table>\n", f);

	export_pre(f, "Prompt", in->prompt, "(none)");
	if (in->report != NULL && (rep = json_parse(in->report, strlen(in->report))) != NULL) {
		/* The agent's final message: a plan run's plan, first after the prompt. */
		if (json_get_string(rep, "result") != NULL)
			export_pre(f, "Result", json_get_string(rep, "result"), "");
		pretty = cJSON_Print(rep);
		cJSON_Delete(rep);
	}
	export_pre(f, "Report", pretty != NULL ? pretty : in->report, "(no report)");
	cJSON_free(pretty);
	export_pre(f, "Diffstat", in->diffstat, "(no changes, or no repository)");
	export_pre(f, "Diff", in->diff, "(no changes, or no repository)");

	fputs("<h2>Denials and safety journal</h2>\n", f);
	if (in->n_journal == 0)
		fputs("<p class=\"none\">(no entries)</p>\n", f);
	else {
		fputs("<table>\n", f);
		for (size_t i = 0; i < in->n_journal; i++) {
			fputs("<tr><th>", f);
			export_put(f, in->journal[i].kind);
			fputs("<br><small>", f);
			export_put(f, in->journal[i].ts);
			fputs("</small></th><td><pre>", f);
			export_put(f, in->journal[i].data);
			fputs("</pre></td></tr>\n", f);
		}
		fputs("</table>\n", f);
	}
	fputs("<h2>Approvals</h2>\n", f);
	if (in->n_approvals == 0)
		fputs("<p class=\"none\">(no tool call asked for approval)</p>\n", f);
	else {
		fputs("<table>\n", f);
		for (size_t i = 0; i < in->n_approvals; i++) {
			const struct store_approval	*a = &in->approvals[i];

			fputs("<tr><th>", f);
			export_put(f, a->tool);
			fputs("<br><small>", f);
			export_put(f, store_approval_state_name(a->state));
			if (a->answered_by != NULL) {
				fputs(" by ", f);
				export_put(f, a->answered_by);
			}
			fputs("</small></th><td><pre>", f);
			export_put(f, a->input);
			fputs("</pre>", f);
			if (a->message != NULL) {
				fputs("<p>", f);
				export_put(f, a->message);
				fputs("</p>", f);
			}
			fputs("</td></tr>\n", f);
		}
		fputs("</table>\n", f);
	}
	if (in->transcript != NULL)
		export_pre(f, "Transcript", in->transcript, "(empty)");
	else
		fputs("<h2>Transcript</h2>\n<p class=\"none\">Not included in this export "
		    "(ask for it with --transcript).</p>\n", f);
	fputs("<footer>Exported by Clockwork. Secrets are masked and every string is "
	    "escaped; this file loads nothing from anywhere.</footer>\n</body></html>\n", f);
	if (fclose(f) != 0) {
		free(out);
		return NULL;
	}
	return out;
}

/*
 * The run's changes: exactly its branch in the user's repository against the run's
 * base commit, as `cwctl run diff` shows them (review.c). The run's own repository is
 * never opened here (it is the run's to shape, and this runs on the daemon's loop): a
 * live run, one whose work was not imported or was discarded, has no diff.
 */
static void
export_diff(const struct store_run *r, const char *repo_path, char **stat_out,
    char **diff_out)
{
	struct review_diff	df;
	char			err[512];

	*stat_out = *diff_out = NULL;
	if (r->base_commit == NULL || r->branch == NULL || repo_path == NULL ||
	    !store_run_status_terminal(r->status))
		return;
	if (review_diff(repo_path, r->base_commit, r->branch, 1, EXPORT_MAX_DIFF, &df, err,
	    sizeof err) == -1)
		return;
	*stat_out = df.stat;
	if (df.truncated && df.patch != NULL &&
	    (*diff_out = malloc(strlen(df.patch) + 64)) != NULL) {
		strcpy(*diff_out, df.patch);
		strcat(*diff_out, "\n[... diff truncated ...]\n");
		free(df.patch);
	} else
		*diff_out = df.patch;
	df.stat = df.patch = NULL;
	review_diff_free(&df);
}

static char *
export_read_log(const char *path)
{
	char	*buf;
	ssize_t	 n;
	size_t	 got = 0;
	int	 fd;

	if (path == NULL || (fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return NULL;
	if ((buf = malloc(EXPORT_MAX_TRANSCRIPT + 1)) == NULL) {
		close(fd);
		return NULL;
	}
	while (got < EXPORT_MAX_TRANSCRIPT &&
	    (n = read(fd, buf + got, EXPORT_MAX_TRANSCRIPT - got)) > 0)
		got += (size_t)n;
	close(fd);
	/*
	 * Cut at the bound, the transcript ends after its last whole line: masking
	 * happens on whole lines (as the log route serves them, api.c), so a secret
	 * cut by the bound cannot be left half unmasked.
	 */
	if (got == EXPORT_MAX_TRANSCRIPT) {
		while (got > 0 && buf[got - 1] != '\n')
			got--;
	}
	/* NULs would end the text early; the log is text, so show them as '?'. */
	for (size_t i = 0; i < got; i++)
		if (buf[i] == '\0')
			buf[i] = '?';
	buf[got] = '\0';
	return buf;
}

/* The run's transcript entries rendered one per line (as cwctl run logs shows them). */
static char *
export_read_transcript(struct daemon *d, const char *run_id)
{
	char		 path[PATH_MAX], *line, *buf = NULL, *nb;
	size_t		 len = 0, n;
	long long	 next;
	cJSON		*entries = NULL, *e;

	transcripts_path(d->home, run_id, path, sizeof path);
	if (transcripts_read(path, 0, EXPORT_MAX_TRANSCRIPT, &entries, &next) == -1 ||
	    cJSON_GetArraySize(entries) == 0) {
		cJSON_Delete(entries);
		return NULL;
	}
	cJSON_ArrayForEach(e, entries) {
		if ((line = transcript_render(e, 0)) == NULL)
			continue;
		n = strlen(line);
		if (len + n + 2 > EXPORT_MAX_TRANSCRIPT ||
		    (nb = realloc(buf, len + n + 2)) == NULL) {
			free(line);
			break;
		}
		buf = nb;
		memcpy(buf + len, line, n);
		len += n;
		buf[len++] = '\n';
		buf[len] = '\0';
		free(line);
	}
	cJSON_Delete(entries);
	return buf;
}

static char *
export_dup(const unsigned char *s)
{
	return s != NULL ? strdup((const char *)s) : NULL;
}

/* Every approval of the run, answered or not, oldest first. */
static int
export_approvals(struct daemon *d, const char *run_id, struct store_approval **out,
    size_t *n)
{
	sqlite3_stmt		*st;
	struct store_approval	*v = NULL, *nv, *a;
	size_t			 cap = 0;

	*out = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(store_db(d->store), "SELECT id, run_id, tool, input, state, "
	    "message, answered_by, created_at, deadline, answered_at FROM approvals WHERE "
	    "run_id = ? ORDER BY created_at, id", -1, &st, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_text(st, 1, run_id, -1, SQLITE_STATIC);
	while (sqlite3_step(st) == SQLITE_ROW) {
		if (*n == cap) {
			cap = cap ? cap * 2 : 8;
			if ((nv = reallocarray(v, cap, sizeof *v)) == NULL)
				break;
			v = nv;
		}
		a = &v[(*n)++];
		memset(a, 0, sizeof *a);
		a->id = export_dup(sqlite3_column_text(st, 0));
		a->run_id = export_dup(sqlite3_column_text(st, 1));
		a->tool = export_dup(sqlite3_column_text(st, 2));
		a->input = export_dup(sqlite3_column_text(st, 3));
		a->state = store_approval_state_parse((const char *)sqlite3_column_text(st,
		    4));
		a->message = export_dup(sqlite3_column_text(st, 5));
		a->answered_by = export_dup(sqlite3_column_text(st, 6));
		a->created_at = export_dup(sqlite3_column_text(st, 7));
		a->deadline = export_dup(sqlite3_column_text(st, 8));
		a->answered_at = export_dup(sqlite3_column_text(st, 9));
	}
	sqlite3_finalize(st);
	*out = v;
	return 0;
}

int
export_run(struct daemon *d, const char *run_id, int transcript, const char *actor,
    char **html, char *err, size_t errlen)
{
	struct store_run		 r;
	struct store_task		 t;
	struct store_journal_entry	*j = NULL;
	struct store_approval		*ap = NULL;
	struct export_input		 in;
	size_t				 nj = 0, na = 0;
	char				*dstat = NULL, *diff = NULL, *log = NULL;
	int				 have_task, rc = -1;
	cJSON				*a;

	*html = NULL;
	if (store_run_get(d->store, run_id, &r) != 1) {
		snprintf(err, errlen, "no run '%.48s'", run_id);
		return -1;
	}
	have_task = store_task_get(d->store, r.task_id, &t) == 1;
	memset(&in, 0, sizeof in);
	in.run_id = r.id;
	in.task = r.task_name;
	in.status = store_run_status_name(r.status);
	in.exit_reason = store_exit_reason_name(r.exit_reason);
	in.branch = r.branch;
	in.base_commit = r.base_commit;
	in.final_commit = r.final_commit;
	in.created_at = r.created_at;
	in.ended_at = r.ended_at;
	in.sandboxed = r.sandboxed;
	in.spent_dollars = r.spent_dollars;
	in.spent_turns = r.spent_turns;
	in.spent_seconds = r.spent_seconds;
	in.report = r.report;
	if (have_task) {
		in.prompt = t.prompt;
		in.engine = t.engine;
		in.permission_mode = t.permission_mode;
		in.repo = t.repo;
		in.budget_dollars = t.budget_dollars;
		in.budget_turns = t.budget_turns;
		in.budget_seconds = t.budget_seconds;
	}
	export_diff(&r, have_task ? t.repo : NULL, &dstat, &diff);
	in.diffstat = dstat;
	in.diff = diff;
	if (store_journal_list(d->store, r.id, 0, 0, &j, &nj) == 0) {
		in.journal = j;
		in.n_journal = nj;
	}
	if (export_approvals(d, r.id, &ap, &na) == 0) {
		in.approvals = ap;
		in.n_approvals = na;
	}
	if (transcript) {
		/* The readable transcript; the raw log only for a run that has none. */
		if (!transcripts_readable(d, &r) ||
		    (log = export_read_transcript(d, r.id)) == NULL)
			log = export_read_log(r.log_path);
		in.transcript = log != NULL ? log : "";
	}
	if ((*html = export_render(&in)) == NULL)
		snprintf(err, errlen, "out of memory");
	else {
		rc = 0;
		store_run_add_export(d->store, r.id);
		a = cJSON_CreateObject();
		cJSON_AddBoolToObject(a, "transcript", transcript);
		journal_audit(d, actor, "run.export", r.id, a);
	}
	free(dstat);
	free(diff);
	free(log);
	if (j != NULL)
		store_journal_list_free(j, nj);
	if (ap != NULL)
		store_approval_list_free(ap, na);
	if (have_task)
		store_task_free(&t);
	store_run_free(&r);
	return rc;
}
