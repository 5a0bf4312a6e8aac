/*
 * cw-runner run: one run, driven by the daemon over JSON lines (common/wire.h).
 *
 * One libevent loop serves the daemon's stdin, the engine's stdout and stderr, the
 * permission bridge and the budget timers. The engine is started only through
 * spec_build() + apply_sandbox(), in its own session; the runner is the subreaper of
 * everything below it, and when the run ends every descendant is ended
 * (proc_kill_tree). Exactly one report is the last line written.
 *
 * Exit codes: 0 the run completed; 1 it failed, was stopped or exceeded a budget;
 * 2 the run message was unusable; 3 the sandbox could not be enforced (nothing ran).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* asprintf, pipe2 */
#endif
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "asklimit.h"
#include "autoallow.h"
#include "bridge.h"
#include "budgetpause.h"
#include "egress.h"
#include "proxy.h"
#include "cgroup.h"
#include "runlimits.h"
#include "commands.h"
#include "config.h"
#include "engine.h"
#include "mask.h"
#include "netsets.h"
#include "maskstream.h"
#include "transcript.h"
#include "floor.h"
#include "json.h"
#include "log.h"
#include "paths.h"
#include "prices.h"
#include "proc.h"
#include "record.h"
#include "rmtree.h"
#include "sandbox.h"
#include "seal.h"
#include "spec.h"
#include "uplink.h"
#include "wire.h"

#define RUN_PARSE_MAX	(1024 * 1024)	/* engine lines longer than this are not parsed */
#define RUN_REATTACH_WAIT_S	600	/* an ended run waits this long for a daemon */
#define RUN_LIMITS_POLL_MS	200	/* how often the cgroup's limit counters are read */
#define RUN_CGROUP_REMOVE_MS	3000	/* how long killed members may take to leave */

struct run_pipe {
	struct run		*run;
	struct bufferevent	*bev;
	const char		*name;		/* "stdout" | "stderr" */
	int			 skipping;	/* inside an over-long line */
	int			 eof;
};

struct run {
	struct event_base	*base;
	struct bufferevent	*in;
	struct uplink		*up;		/* to clockworkd: stdout, then a re-attach */
	int			 awaiting;	/* over, waiting for a daemon to take the report */
	size_t			 detached_logged; /* log bytes written while detached */
	struct maskstream	*detached_mask;	/* what it writes then, masked (run_emit) */
	long			 log_max;	/* the run's log cap (run_log_max_bytes) */
	int			 log_capped;	/* the cap was reached while detached */
	struct event		*ev_chld, *ev_term, *ev_int;
	struct event		*ev_budget, *ev_kill, *ev_drain, *ev_soft, *ev_limits;
	struct event		*ev_pause;	/* budget_wait: no answer, the run ends */
	struct run_pipe		 out, err;
	struct bridge		*bridge;
	struct proxy		*proxy;		/* the egress proxy (SPEC N1), or NULL */
	int			 netns;		/* the run has its own network namespace */
	struct strlist		 net_allow;	/* the task's egress rules (run message) */
	int			 net_ask;	/* the task's network.ask */
	int			 ask_set;	/* the run message's approvals.ask */
	unsigned		 ask;		/* ...its mask (autoallow.h) */
	struct autoallow_rule	*rules;		/* the task's remembered families */
	size_t			 n_rules;
	struct autoallow_rule	*ask_rules;	/* the families it always asks about */
	size_t			 n_ask_rules;
	struct config		 cfg;
	int			 have_cfg;
	struct asklimit		 asks;		/* the run's approval budget: bridge and
						   proxy count together (asklimit.h) */
	struct floor_policy	 policy;
	char			 home[PATH_MAX], cwhome[PATH_MAX];
	char			 cache_scope[64];	/* "tasks/<task id>", or "" */
	long long		 task_id;	/* 0: none given */

	/* the conversation (common/conversation.h) */
	int			 conv_keep;	/* keep it for a later `run continue` */
	char			*resume_run, *resume_id;	/* what this run resumes */
	int			 resume_fd;	/* that run's keep directory, or -1 */
	int			 conv_kept;	/* 1 kept, 0 not (yet), -1 failed */
	char			 conv_error[512];

	/* the run message */
	int			 have_run;
	char			*run_id, *task, *engine, *prompt, *workdir, *mode, *key;
	char			*base_url, *model;	/* the provider, from config */
	char			*provider;	/* byok: "anthropic" | "openai" */
	char			*state_dir, *hook_path;
	char			 turns_file[PATH_MAX];	/* ENGINE_TURNS_FILE, or "" */
	char			*git_branch, *git_base, *git_objects;	/* repository runs */
	struct strlist		 argv, context, env;
	double			 budget_dollars;
	int			 budget_turns, budget_seconds;
	/*
	 * The budget pause (budgetpause.h): budget_wait seconds for a person to answer
	 * (0: a budget ends the run at once), the hard dollar ceiling no extension passes
	 * (0: none), and the extension an "extend" answer adds: the run's first budgets.
	 */
	int			 budget_wait;
	double			 max_dollars;
	double			 ext_dollars;
	int			 ext_turns, ext_seconds;
	struct budgetpause	 pause;
	const char		*pause_which;	/* "dollars"|"turns"|"seconds", while paused */
	char			 pause_id[32];	/* the question's approval id, while paused */
	cJSON			*pause_ask;	/* the approval_request, for a re-attach */
	double			 pause_add_dollars;	/* what this question's extend adds */
	int			 pause_n;
	cJSON			*pauses;	/* the report's record of every pause */
	long			 limit_processes;	/* 0: none asked for */
	long long		 limit_memory;		/* bytes, 0: none asked for */

	/* the run's cgroup (R2): limits, and the freezer for the ending */
	struct cgroup_run	 cg;
	struct strlist		 limit_notes;	/* limits not enforced, for the report */
	char			 cost_unknown[768]; /* byok with no price: why, else "" */
	int			 dollars_by_engine; /* claude with no price: its own
						       --max-budget-usd keeps the budget */
	int			 unpriced_noted;	/* the stream named a model with no
						   price and the budget was refused */
	/* the rlimit layer where no cgroup holds a limit (runlimits.h) */
	struct runlimits	 rl;
	/* what holds each limit: "cgroup v1"|"cgroup v2"|"rlimit"|"none"; NULL not asked */
	const char		*procs_by, *mem_by;
	char			 tmpdir_left[PATH_MAX + 128];	/* why TMPDIR was kept */

	/* the engine */
	pid_t			 pid;
	pid_t			 companion;	/* byok: the agent, outside the sandbox */
	int			 exited, status;
	struct timespec		 t0;
	const struct engine_ops	*ops;		/* NULL for "command" */
	struct engine_stream	*stream;
	struct engine_progress	 usage;
	struct sandbox_report	 sreport;
	int			 sreport_set;
	struct sandbox_spec	 spec;		/* kept for the seal at the end */
	int			 have_spec;
	struct seal_result	 seal;
	int			 seal_done;	/* 1 sealed, -1 the seal failed */
	int			 seal_keep_outputs;	/* the task keeps build outputs */
	char			 seal_error[512];
	int			 sandbox_off;
	char			 token[33];

	/* the ending */
	const char		*reason;	/* exit_reason once decided */
	int			 stopping, finished, code;
	char			 error[1024];
};

/* ---- output ------------------------------------------------------------------- */

/*
 * While detached, the runner writes the run's log itself: the daemon's cap holds for
 * it too, counted from the file's size. The first line past it says so, once.
 */
static int
run_log_room(struct run *r, size_t need)
{
	struct stat	 st;
	char		 note[160];
	int		 n;

	if (r->log_capped)
		return 0;
	if (r->log_max <= 0 || fstat(STDERR_FILENO, &st) == -1 || !S_ISREG(st.st_mode) ||
	    st.st_size + (off_t)need <= (off_t)r->log_max)
		return 1;
	r->log_capped = 1;
	n = snprintf(note, sizeof note, "[cw-runner] the log reached its cap of %ld bytes "
	    "(run_log_max_bytes) while clockworkd was away; the rest is not kept\n",
	    r->log_max);
	(void)!write(STDERR_FILENO, note, (size_t)n);
	return 0;
}

/*
 * Write one wire message (and free it). Engine output (its log lines and transcript
 * entries) is the one kind the outbox may drop while no daemon is attached: events,
 * approvals and the report are kept. A
 * message that would not fit in a wire line would be a protocol error that ends the
 * run and loses its report, so it is replaced by a small "message_dropped" event
 * naming its type and size. Nothing the runner sends should get here (records are
 * bounded, the report is built to fit): this is the last guard, not the mechanism.
 */
static void
run_emit(struct run *r, cJSON *msg)
{
	char		*text;
	size_t		 len;
	const char	*type;
	cJSON		*ev;

	if (msg == NULL)
		return;
	type = json_get_string(msg, "type");
	/*
	 * While no daemon is attached, engine output goes straight to the run's log file
	 * (the runner's stderr is that file, opened for appending by the daemon), so it
	 * is kept even if this runner never sees a daemon again; bounded like the outbox.
	 */
	if (type != NULL && strcmp(type, "log") == 0 && !uplink_attached(r->up) &&
	    uplink_listening(r->up)) {
		const char	*t = json_get_string(msg, "text");
		size_t		 tl = t != NULL ? strlen(t) : 0;

		/*
		 * Masked as clockworkd masks the log it writes (runs.c), one stream for
		 * all: nothing unmasked reaches the file. Dropped when memory runs out.
		 */
		if (t != NULL && r->detached_logged + tl <= UPLINK_OUTBOX_MAX &&
		    run_log_room(r, tl + 1) && (r->detached_mask != NULL ||
		    (r->detached_mask = maskstream_new()) != NULL)) {
			char	*m, *nl;
			size_t	 ml;

			r->detached_logged += tl;
			if ((m = maskstream_feed(r->detached_mask, t, tl, &ml)) != NULL) {
				(void)!write(STDERR_FILENO, m, ml);
				free(m);
			}
			nl = tl > 0 && t[tl - 1] == '\n' ? NULL : "\n";
			if (nl != NULL &&
			    (m = maskstream_feed(r->detached_mask, nl, 1, &ml)) != NULL) {
				(void)!write(STDERR_FILENO, m, ml);
				free(m);
			}
		}
		cJSON_Delete(msg);
		return;
	}
	if ((text = json_print(msg)) != NULL) {
		len = strlen(text);
		if (len >= CW_WIRE_MAX_LINE && (ev = cJSON_CreateObject()) != NULL) {
			cJSON_AddNumberToObject(ev, "v", CW_WIRE_VERSION);
			cJSON_AddStringToObject(ev, "type", "event");
			cJSON_AddStringToObject(ev, "kind", "message_dropped");
			if (r->run_id != NULL)
				json_add_string(ev, "run_id", r->run_id);
			record_add_string(ev, "message_type", type, 64);
			cJSON_AddNumberToObject(ev, "bytes", (double)len);
			cJSON_free(text);
			text = json_print(ev);
			cJSON_Delete(ev);
			type = "event";
			len = text != NULL ? strlen(text) : 0;
		}
		/* What the engine's output makes (log and transcript lines) may be dropped. */
		if (text != NULL && len < CW_WIRE_MAX_LINE)
			uplink_send(r->up, text, len, type != NULL &&
			    (strcmp(type, "log") == 0 || strcmp(type, "say") == 0));
		cJSON_free(text);
	}
	cJSON_Delete(msg);
}

static void run_check_usage(struct run *);

/*
 * The bridge's messages go to the daemon. A floor denial is also a model turn the
 * engine spent; an engine whose output does not show refused calls counts it here.
 */
static void
run_emit_cb(void *arg, cJSON *msg)
{
	struct run	*r = arg;
	const char	*type = json_get_string(msg, "type");
	const char	*kind = json_get_string(msg, "kind");
	int		 denied;

	denied = type != NULL && kind != NULL && strcmp(type, "event") == 0 &&
	    strcmp(kind, "floor_deny") == 0;
	run_emit(r, msg);
	if (denied && r->ops != NULL && r->ops->floor_denied != NULL && r->stream != NULL &&
	    r->ops->floor_denied(r->stream, &r->usage) == 1)
		run_check_usage(r);
}

static cJSON *
run_msg(const char *type)
{
	cJSON	*m;

	if ((m = cJSON_CreateObject()) == NULL)
		return NULL;
	cJSON_AddNumberToObject(m, "v", CW_WIRE_VERSION);
	cJSON_AddStringToObject(m, "type", type);
	return m;
}

static cJSON *
run_event(struct run *r, const char *kind)
{
	cJSON	*m;

	if ((m = run_msg("event")) == NULL)
		return NULL;
	cJSON_AddStringToObject(m, "kind", kind);
	if (r->run_id != NULL)
		cJSON_AddStringToObject(m, "run_id", r->run_id);
	return m;
}

/*
 * One entry of the readable transcript (common/transcript.h), from the engine's
 * output: {"type":"say","run_id":..,"entry":{..}}. The daemon stores it, masked.
 */
static void
run_say_cb(void *arg, cJSON *entry)
{
	struct run	*r = arg;
	cJSON		*m;

	if (entry == NULL)
		return;
	if ((m = run_msg("say")) == NULL) {
		cJSON_Delete(entry);
		return;
	}
	if (r->run_id != NULL)
		cJSON_AddStringToObject(m, "run_id", r->run_id);
	cJSON_AddItemToObject(m, "entry", entry);
	run_emit(r, m);
}

static void
run_log_line(struct run *r, const char *stream, const char *text, size_t len,
    int truncated)
{
	cJSON	*m;
	char	*t;

	if ((m = run_msg("log")) == NULL || (t = malloc(len + 1)) == NULL) {
		cJSON_Delete(m);
		return;
	}
	memcpy(t, text, len);
	t[len] = '\0';
	cJSON_AddStringToObject(m, "stream", stream);
	json_add_string(m, "text", t);
	if (truncated)
		cJSON_AddBoolToObject(m, "truncated", 1);
	free(t);
	run_emit(r, m);
}

/* A line of the runner's own, for the run's live log. */
static void
run_note(struct run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void
run_note(struct run *r, const char *fmt, ...)
{
	char	buf[1024];
	va_list	ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	run_log_line(r, "runner", buf, strlen(buf), 0);
}

static double
run_elapsed(const struct run *r)
{
	struct timespec	now;

	if (r->t0.tv_sec == 0 && r->t0.tv_nsec == 0)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - r->t0.tv_sec) +
	    (double)(now.tv_nsec - r->t0.tv_nsec) / 1e9;
}

static void
run_usage(struct run *r)
{
	cJSON	*m;

	if ((m = run_msg("usage")) == NULL)
		return;
	cJSON_AddStringToObject(m, "run_id", r->run_id);
	/* Negative: no cost to report (the model has no price, run_cost_check). */
	cJSON_AddNumberToObject(m, "dollars", r->cost_unknown[0] != '\0' ? -1 :
	    r->usage.dollars);
	cJSON_AddNumberToObject(m, "turns", r->usage.turns);
	cJSON_AddNumberToObject(m, "seconds", (int)run_elapsed(r));
	run_emit(r, m);
}

/* ---- the report ----------------------------------------------------------------- */

/*
 * The report also goes to <clockwork home>/runs/<run-id>.report.json (0600, written
 * whole, then renamed into place), so that a daemon restarted after this runner has
 * gone still finds it; that daemon removes the file once the report is stored.
 */
static void
run_report_file(struct run *r, const cJSON *m)
{
	char	 path[PATH_MAX], tmp[PATH_MAX + 8], *text;
	size_t	 len;
	int	 fd, ok;

	if (!uplink_listening(r->up) || r->run_id == NULL ||
	    (size_t)snprintf(path, sizeof path, "%s/runs/%s.report.json", r->cwhome,
	    r->run_id) >= sizeof path ||
	    (size_t)snprintf(tmp, sizeof tmp, "%s.tmp", path) >= sizeof tmp)
		return;
	if ((text = json_print(m)) == NULL)
		return;
	len = strlen(text);
	(void)unlink(tmp);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	    0600)) == -1) {
		cJSON_free(text);
		return;
	}
	ok = write(fd, text, len) == (ssize_t)len && fsync(fd) == 0;
	ok = close(fd) == 0 && ok;
	cJSON_free(text);
	if (!ok || rename(tmp, path) == -1) {
		log_warn("cannot keep the report in %s: %s", path, strerror(errno));
		(void)unlink(tmp);
	}
}

/*
 * The report is the one message that must arrive. Its lists are bounded already
 * (record.h), so this only acts if the bounds were ever raised past the line: then
 * the lists go, their counts stay, and "report_trimmed" says so.
 */
static void
run_report_fit(cJSON *m)
{
	/* The proxy's refusals first: they are in the run's events and journal too. */
	static const char *const lists[] = { "network_egress.denials", "approvals",
	    "denials" };
	char	*text;
	size_t	 len;
	double	 count;
	cJSON	*o;

	for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++) {
		if ((text = json_print(m)) == NULL)
			return;
		len = strlen(text);
		cJSON_free(text);
		if (len <= CW_RUN_REPORT_MAX)
			return;
		if (i == 0)
			o = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(m,
			    "network_egress"), "denials");
		else
			o = cJSON_GetObjectItemCaseSensitive(m, lists[i]);
		if (o == NULL)
			continue;
		if (json_get_number(o, "count", &count) == -1)
			count = 0;
		cJSON_DeleteItemFromObjectCaseSensitive(o, "list");
		cJSON_DeleteItemFromObjectCaseSensitive(o, "omitted");
		cJSON_AddArrayToObject(o, "list");
		cJSON_AddNumberToObject(o, "omitted", count);
		cJSON_DeleteItemFromObjectCaseSensitive(m, "report_trimmed");
		cJSON_AddBoolToObject(m, "report_trimmed", 1);
	}
}

/*
 * The engine's part of the report: how the run was contained (the shared table's
 * words, so the report says what this engine's floor and approvals really are) and
 * the agent's final message, masked like every record, so a plan is one command away.
 */
static void
run_report_engine(struct run *r, cJSON *m)
{
	const struct engine_info	*e = r->engine != NULL ? engines_find(r->engine) : NULL;
	cJSON				*o;
	char				*masked;

	if (e == NULL || (o = cJSON_AddObjectToObject(m, "engine")) == NULL)
		return;
	cJSON_AddStringToObject(o, "name", e->name);
	cJSON_AddStringToObject(o, "floor", e->floor);
	cJSON_AddStringToObject(o, "approvals", e->ask);
	if (r->usage.result != NULL &&
	    (masked = mask_secrets(r->usage.result)) != NULL) {
		record_add_string(m, "result", masked, TRANSCRIPT_TEXT_MAX);
		free(masked);
	}
}

/*
 * "conversation": the id a later `cwctl run continue` resumes (the daemon checks it
 * again before it sends it back), whether it was kept, and what this run resumed.
 */
static void
run_report_conversation(struct run *r, cJSON *m)
{
	cJSON	*o;

	if (r->ops == NULL || (!r->conv_keep && r->resume_id == NULL) ||
	    (o = cJSON_AddObjectToObject(m, "conversation")) == NULL)
		return;
	if (r->usage.session[0] != '\0')
		cJSON_AddStringToObject(o, "id", r->usage.session);
	cJSON_AddBoolToObject(o, "kept", r->conv_kept == 1);
	if (r->conv_error[0] != '\0')
		cJSON_AddStringToObject(o, "error", r->conv_error);
	if (r->resume_id != NULL) {
		cJSON_AddStringToObject(o, "resumed_run", r->resume_run);
		cJSON_AddStringToObject(o, "resumed_id", r->resume_id);
	}
}

/* "network": the mode, and the proxy's totals and denials when there was one. */
static void
run_report_network(struct run *r, cJSON *m)
{
	cJSON	*net, *t, *it;

	if (r->proxy == NULL) {
		cJSON_AddStringToObject(m, "network", r->netns ? "allowlist" : "open");
		return;
	}
	if ((net = cJSON_AddObjectToObject(m, "network_egress")) == NULL)
		return;
	cJSON_AddStringToObject(m, "network", "allowlist");
	if ((t = proxy_totals(r->proxy)) == NULL)
		return;
	while ((it = t->child) != NULL)
		cJSON_AddItemToObject(net, it->string, cJSON_DetachItemViaPointer(t, it));
	cJSON_Delete(t);
}

/* What one layer bounds, said in the report next to the layer's name. */
static const char *
run_limits_scope(const char *by, int processes)
{
	if (by == NULL || strcmp(by, "none") == 0)
		return "not enforced";
	if (strncmp(by, "cgroup", 6) == 0)
		return processes ? "every task of the run together (pids.max)" :
		    "the run's memory together, page cache included";
	return processes ? "every task of the run together: RLIMIT_NPROC in the run's "
	    "user namespace refuses the fork past it; the runner ends the run when it is "
	    "reached" : "each process's private writable memory by RLIMIT_DATA; the "
	    "run's processes together by the runner, which sums their resident memory "
	    "(RssAnon + RssShmem, every 200 ms) and ends the run when it reaches the "
	    "limit; page cache and kernel memory are not counted";
}

/*
 * The report's limits: the cgroup fields as before ("mechanism", "processes" and
 * "memory_bytes": what a cgroup enforced, 0 for none), and "layers" with what holds
 * each limit asked for: {"processes":{"max":N,"by":"cgroup v1"|"cgroup v2"|"rlimit"|
 * "none","bounds":"..."},"memory":{...}}.
 */
static void
run_report_limits(struct run *r, cJSON *lim)
{
	cJSON	*layers, *o;

	cJSON_AddStringToObject(lim, "mechanism", r->cg.version == 2 ? "cgroup v2" :
	    r->cg.version == 1 ? "cgroup v1" : r->rl.nproc > 0 || r->rl.data > 0 ?
	    "rlimit" : "none");
	cJSON_AddNumberToObject(lim, "processes", (double)r->cg.pids_max);
	cJSON_AddNumberToObject(lim, "memory_bytes", (double)r->cg.mem_max);
	if ((layers = cJSON_AddObjectToObject(lim, "layers")) == NULL)
		return;
	if (r->procs_by != NULL && (o = cJSON_AddObjectToObject(layers,
	    "processes")) != NULL) {
		cJSON_AddNumberToObject(o, "max", (double)r->limit_processes);
		cJSON_AddStringToObject(o, "by", r->procs_by);
		cJSON_AddStringToObject(o, "bounds", run_limits_scope(r->procs_by, 1));
	}
	if (r->mem_by != NULL && (o = cJSON_AddObjectToObject(layers, "memory")) != NULL) {
		cJSON_AddNumberToObject(o, "max", (double)r->limit_memory);
		cJSON_AddStringToObject(o, "by", r->mem_by);
		cJSON_AddStringToObject(o, "bounds", run_limits_scope(r->mem_by, 0));
	}
}

/*
 * The build outputs the seal left out of the commit (sealskip.h): the first
 * SEALSKIP_REPORT_MAX entries by path, with exact totals.
 */
static void
run_report_left_out(struct run *r, cJSON *seal)
{
	const struct sealskip	*k = &r->seal.skip;
	cJSON			*lo, *paths;

	if (r->seal.kept_outputs) {
		cJSON_AddTrueToObject(seal, "kept_build_outputs");
		return;
	}
	if ((lo = cJSON_AddObjectToObject(seal, "left_out")) == NULL)
		return;
	cJSON_AddNumberToObject(lo, "files", (double)k->files);
	cJSON_AddNumberToObject(lo, "entries", (double)k->n);
	if ((paths = cJSON_AddArrayToObject(lo, "paths")) != NULL)
		for (size_t i = 0; i < k->n && i < SEALSKIP_REPORT_MAX; i++)
			cJSON_AddItemToArray(paths, cJSON_CreateString(k->v[i].path));
	if (r->seal.skip_error[0] != '\0')
		cJSON_AddStringToObject(lo, "error", r->seal.skip_error);
}

static void
run_report(struct run *r, const char *status)
{
	cJSON	*m, *spent, *ne, *empty, *seal, *lim, *b;
	size_t	 i;

	if ((m = run_msg("report")) == NULL)
		return;
	json_add_string(m, "run_id", r->run_id);
	cJSON_AddStringToObject(m, "status", status);
	cJSON_AddStringToObject(m, "exit_reason", r->reason != NULL ? r->reason : "failed");
	/*
	 * r->pid is the run's PID 1 (apply_sandbox): it exits with the engine's status, a
	 * death of the engine by signal N as exit code 128 + N. "signal" is reported only
	 * when PID 1 itself was killed (our SIGKILL, or one from outside), or with the
	 * sandbox off, where r->pid is the engine.
	 */
	if (r->pid > 0 && r->exited) {
		if (WIFEXITED(r->status))
			cJSON_AddNumberToObject(m, "exit_code", WEXITSTATUS(r->status));
		else if (WIFSIGNALED(r->status))
			cJSON_AddNumberToObject(m, "signal", WTERMSIG(r->status));
	}
	if (r->error[0] != '\0')
		cJSON_AddStringToObject(m, "error", r->error);
	cJSON_AddBoolToObject(m, "sandboxed", r->sreport_set ? r->sreport.sandboxed :
	    !r->sandbox_off);
	ne = cJSON_AddArrayToObject(m, "not_enforced");
	if (r->sreport_set)
		for (i = 0; i < r->sreport.not_enforced.n; i++)
			cJSON_AddItemToArray(ne,
			    cJSON_CreateString(r->sreport.not_enforced.v[i]));
	for (i = 0; i < r->limit_notes.n; i++)
		cJSON_AddItemToArray(ne, cJSON_CreateString(r->limit_notes.v[i]));
	cJSON_AddNumberToObject(m, "landlock_abi", r->sreport_set ?
	    r->sreport.landlock_abi : 0);
	if ((lim = cJSON_AddObjectToObject(m, "limits")) != NULL)
		run_report_limits(r, lim);
	if (r->tmpdir_left[0] != '\0')
		cJSON_AddStringToObject(m, "tmpdir_left", r->tmpdir_left);
	if (r->seal_done != 0 && (seal = cJSON_AddObjectToObject(m, "seal")) != NULL) {
		if (r->seal_done == 1) {
			cJSON_AddStringToObject(seal, "tip", r->seal.tip);
			cJSON_AddBoolToObject(seal, "bundle", r->seal.bundle);
			cJSON_AddBoolToObject(seal, "committed", r->seal.committed);
			run_report_left_out(r, seal);
		} else
			cJSON_AddStringToObject(seal, "error", r->seal_error);
	}
	run_report_engine(r, m);
	run_report_conversation(r, m);
	run_report_network(r, m);
	spent = cJSON_AddObjectToObject(m, "spent");
	cJSON_AddNumberToObject(spent, "dollars", r->usage.dollars);
	/* No price for the model: the cost is unknown, not $0 (docs/configuration.md). */
	if (r->cost_unknown[0] != '\0') {
		cJSON_AddBoolToObject(spent, "dollars_known", 0);
		cJSON_AddStringToObject(m, "cost_unknown", r->cost_unknown);
	}
	cJSON_AddNumberToObject(spent, "turns", r->usage.turns);
	cJSON_AddNumberToObject(spent, "seconds", (int)(run_elapsed(r) + 0.5));
	/* The budgets as they ended (extensions in), and every pause with its hold. */
	if (r->budget_wait > 0 && (b = cJSON_AddObjectToObject(m, "budget")) != NULL) {
		cJSON_AddNumberToObject(b, "dollars", r->budget_dollars);
		cJSON_AddNumberToObject(b, "turns", r->budget_turns);
		cJSON_AddNumberToObject(b, "seconds", r->budget_seconds);
		cJSON_AddNumberToObject(b, "wait", r->budget_wait);
		cJSON_AddNumberToObject(b, "max_dollars", r->max_dollars);
		cJSON_AddNumberToObject(b, "paused_seconds",
		    (int)(budgetpause_seconds(&r->pause) + 0.5));
		cJSON_AddItemToObject(b, "pauses", r->pauses != NULL ?
		    cJSON_Duplicate(r->pauses, 1) : cJSON_CreateArray());
	}
	if (r->bridge != NULL) {
		cJSON_AddItemToObject(m, "denials", bridge_denials(r->bridge));
		cJSON_AddItemToObject(m, "approvals", bridge_approvals(r->bridge));
	} else {
		empty = cJSON_AddObjectToObject(m, "denials");
		cJSON_AddNumberToObject(empty, "count", 0);
		cJSON_AddArrayToObject(empty, "list");
		empty = cJSON_AddObjectToObject(m, "approvals");
		cJSON_AddNumberToObject(empty, "count", 0);
		cJSON_AddArrayToObject(empty, "list");
	}
	run_report_fit(m);
	run_report_file(r, m);
	run_emit(r, m);
}

/* Refuse the run before anything started: one report, and the exit code to use. */
static int
run_refuse(struct run *r, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int
run_refuse(struct run *r, int code, const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	vsnprintf(r->error, sizeof r->error, fmt, ap);
	va_end(ap);
	log_error("run %s refused: %s", r->run_id != NULL ? r->run_id : "?", r->error);
	r->reason = "failed";
	run_report(r, "refused");
	r->finished = 1;
	r->code = code;
	return code;
}

/* ---- stopping and finishing ------------------------------------------------------ */

/*
 * Tell the engine's own gate (ENGINE_TURNS_FILE, engine.h) the turn budget now: n
 * turns (0: none kept there), or -1 when the run is ending. Written whole, by
 * rename, so a reader sees the old number or the new one.
 */
static int
run_turns_file(struct run *r, int n)
{
	char	tmp[PATH_MAX + 8], buf[32];
	int	fd, len, save;

	if (r->turns_file[0] == '\0')
		return 0;
	if ((size_t)snprintf(tmp, sizeof tmp, "%s.new", r->turns_file) >= sizeof tmp) {
		errno = ENAMETOOLONG;
		return -1;
	}
	len = snprintf(buf, sizeof buf, "%d\n", n);
	(void)unlink(tmp);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	    0444)) == -1)
		return -1;
	if (write(fd, buf, (size_t)len) != len) {
		save = errno;
		close(fd);
		(void)unlink(tmp);
		errno = save != 0 ? save : EIO;
		return -1;
	}
	close(fd);
	if (rename(tmp, r->turns_file) == -1) {
		save = errno;
		(void)unlink(tmp);
		errno = save;
		return -1;
	}
	return 0;
}

static void	run_pause_end(struct run *, const char *, const char *);

static void
run_kill_group(struct run *r, int sig)
{
	/* The engine is our unreaped child, so its pid (= its group) cannot be reused. */
	if (r->pid > 0 && !r->exited)
		(void)kill(-r->pid, sig);
}

static void
run_kill_cb(evutil_socket_t fd, short what, void *arg)
{
	run_kill_group(arg, SIGKILL);
}

static void
run_soft_cb(evutil_socket_t fd, short what, void *arg)
{
	struct run	*r = arg;
	struct timeval	 tv = { CW_RUN_KILL_GRACE_MS / 1000,
			    (CW_RUN_KILL_GRACE_MS % 1000) * 1000 };

	run_kill_group(r, SIGTERM);
	event_add(r->ev_kill, &tv);
}

/*
 * End the engine for reason (the first reason wins): SIGTERM, then SIGKILL after the
 * grace period. Held approvals are denied first; when there were some, the engine gets
 * a moment to read those denials before the signal, so the record it keeps (and the
 * model sees) says why the call did not run.
 */
static void
run_stop(struct run *r, const char *reason)
{
	struct timeval	tv = { 0, 0 };
	int		had = 0;

	if (r->reason == NULL)
		r->reason = reason;
	/* No tool call starts while the engine is ending (it may not heed SIGTERM). */
	if (run_turns_file(r, -1) == -1)
		log_warn("run %s: write %s: %s", r->run_id, r->turns_file, strerror(errno));
	/* A held run must run again for SIGTERM to land and for its work to be sealed. */
	if (r->pause.active)
		run_pause_end(r, strncmp(reason, "budget_", 7) == 0 ? NULL : "stopped",
		    NULL);
	if (r->bridge != NULL) {
		had = bridge_pending(r->bridge);
		bridge_expire(r->bridge, strcmp(reason, "budget_seconds") == 0 ?
		    BRIDGE_TIMEOUT_MESSAGE : "the run was stopped before an answer came",
		    strcmp(reason, "budget_seconds") == 0 ? "timeout" : "stopped");
	}
	if (r->stopping)
		return;
	r->stopping = 1;
	if (r->pid <= 0 || r->exited) {
		event_base_loopbreak(r->base);
		return;
	}
	if (had > 0)
		tv.tv_sec = 1;
	event_add(r->ev_soft, &tv);
}

static void
run_maybe_done(struct run *r)
{
	struct timeval	tv = { 2, 0 };

	if (!r->exited)
		return;
	if (r->out.eof && r->err.eof) {
		event_base_loopbreak(r->base);
		return;
	}
	/* A descendant may hold the pipes open: do not wait for it for long. */
	if (!event_pending(r->ev_drain, EV_TIMEOUT, NULL))
		event_add(r->ev_drain, &tv);
}

static void
run_drain_cb(evutil_socket_t fd, short what, void *arg)
{
	event_base_loopbreak(((struct run *)arg)->base);
}

/*
 * A run that hits its process or memory limit is ended with that reason: a fork bomb
 * never ends by itself, and a process the kernel killed for memory leaves the engine
 * working on without it. The cgroup's counters are read on a timer (they only grow);
 * where the rlimit layer holds a limit, the run's tasks and resident memory are
 * counted on the same timer instead (runlimits_usage): RLIMIT_NPROC refuses the fork
 * that would pass the limit, and RLIMIT_DATA bounds one process, not the run.
 */
static void
run_limits_check(struct run *r)
{
	enum cgroup_hit	 hit;
	const char	*by;
	long		 tasks = 0;
	long long	 resident = 0;
	cJSON		*ev;

	if (r->reason != NULL)
		return;
	if ((hit = cgroup_run_hit(&r->cg)) == CGROUP_HIT_NONE && (r->rl.nproc > 0 ||
	    r->rl.data > 0) && r->pid > 0 && !r->exited &&
	    runlimits_usage(r->pid, &tasks, &resident) == 0) {
		if (r->rl.nproc > 0 && tasks >= r->rl.nproc)
			hit = CGROUP_HIT_PIDS;
		else if (r->rl.data > 0 && resident >= r->rl.data)
			hit = CGROUP_HIT_MEMORY;
	}
	if (hit == CGROUP_HIT_NONE)
		return;
	by = hit == CGROUP_HIT_PIDS ? r->procs_by : r->mem_by;
	if ((ev = run_event(r, "limit_exceeded")) != NULL) {
		cJSON_AddStringToObject(ev, "limit", hit == CGROUP_HIT_PIDS ? "processes" :
		    "memory");
		cJSON_AddStringToObject(ev, "reason", hit == CGROUP_HIT_PIDS ? "limit_pids" :
		    "limit_memory");
		cJSON_AddNumberToObject(ev, "max", hit == CGROUP_HIT_PIDS ?
		    (double)r->limit_processes : (double)r->limit_memory);
		cJSON_AddStringToObject(ev, "by", by != NULL ? by : "none");
		run_emit(r, ev);
	}
	if (hit == CGROUP_HIT_PIDS && tasks > 0)
		run_note(r, "process limit of %ld reached (%ld tasks in the run; %s): "
		    "stopping the run", r->limit_processes, tasks, by);
	else if (hit == CGROUP_HIT_PIDS)
		run_note(r, "process limit of %ld reached (a fork was refused; %s): "
		    "stopping the run", r->limit_processes, by);
	else if (resident > 0)
		run_note(r, "memory limit of %lld MiB reached (%lld MiB resident in the "
		    "run's processes; %s): stopping the run", r->limit_memory >> 20,
		    resident >> 20, by);
	else
		run_note(r, "memory limit of %lld MiB reached (the kernel killed a process "
		    "of the run; %s): stopping the run", r->limit_memory >> 20, by);
	run_stop(r, hit == CGROUP_HIT_PIDS ? "limit_pids" : "limit_memory");
}

static void
run_limits_cb(evutil_socket_t fd, short what, void *arg)
{
	run_limits_check(arg);
}

/* ---- the budget pause (budgetpause.h) ----------------------------------------------- */

/* Whether reaching this budget pauses the run (and asks) rather than ending it. */
static int
run_pausable(const struct run *r, const char *which)
{
	if (r->budget_wait <= 0)
		return 0;
	if (strcmp(which, "seconds") == 0)
		return 1;
	/*
	 * The runner must see the budget reached while the engine is still working.
	 * Turns: byok reports them after every turn, Claude Code as they start, Codex
	 * and OpenCode in their event streams (engine_codex.c, engine_opencode.c); the
	 * command engine has none. Dollars: byok counts them from the provider's usage,
	 * and the runner counts Claude Code's from the usage each response reports in
	 * its stream, priced by prices.h (engine_claude.c), unless the model has no
	 * price (Claude Code's own --max-budget-usd keeps that budget: run_cost_check).
	 * Codex reports tokens and OpenCode its own cost only per step: their dollar
	 * budgets are not kept by the runner.
	 */
	if (strcmp(which, "turns") == 0)
		return r->ops != NULL;
	return strcmp(which, "dollars") == 0 && (strcmp(r->engine, "byok") == 0 ||
	    (strcmp(r->engine, "claude") == 0 && !r->dollars_by_engine));
}

/* Seconds of the time budget left, time held still not counted. */
static double
run_seconds_left(struct run *r)
{
	return r->budget_seconds - (run_elapsed(r) - budgetpause_seconds(&r->pause));
}

/*
 * The budgets now, for the daemon's own backstops (daemon/runs.c): it must not end
 * a run that a person let go on. backstop_seconds: how long from now the run may
 * still take, a wait for an answer included.
 */
static cJSON *
run_budget_state(struct run *r)
{
	cJSON	*o = cJSON_CreateObject();
	double	 left = run_seconds_left(r);

	if (o == NULL)
		return NULL;
	cJSON_AddBoolToObject(o, "paused", r->pause.active);
	cJSON_AddNumberToObject(o, "dollars", r->budget_dollars);
	cJSON_AddNumberToObject(o, "turns", r->budget_turns);
	cJSON_AddNumberToObject(o, "seconds", r->budget_seconds);
	cJSON_AddNumberToObject(o, "max_dollars", r->max_dollars);
	cJSON_AddNumberToObject(o, "paused_seconds", (int)(budgetpause_seconds(&r->pause) +
	    0.5));
	cJSON_AddNumberToObject(o, "backstop_seconds", (int)((left > 0 ? left : 0) +
	    (r->pause.active ? r->budget_wait : 0) + 0.999));
	return o;
}

static void
run_budget_event(struct run *r, const char *kind, const char *answer, const char *by)
{
	cJSON	*ev;

	if ((ev = run_event(r, kind)) == NULL)
		return;
	if (r->pause_which != NULL)
		cJSON_AddStringToObject(ev, "budget", r->pause_which);
	if (r->pause.hold != NULL)
		cJSON_AddStringToObject(ev, "hold", r->pause.hold);
	if (answer != NULL)
		cJSON_AddStringToObject(ev, "answer", answer);
	if (by != NULL)
		json_add_string(ev, "by", by);
	if (r->pause_id[0] != '\0')
		cJSON_AddStringToObject(ev, "id", r->pause_id);
	cJSON_AddItemToObject(ev, "state", run_budget_state(r));
	run_emit(r, ev);
}

static void
run_money(char *buf, size_t len, double d)
{
	snprintf(buf, len, d < 0.995 && d > 0 ? "$%.4g" : "$%.2f", d);
}

/*
 * The question, as every surface shows it: what is spent, what "extend" adds, how
 * long the run waits. The dollar extension is cut at the hard ceiling; at the
 * ceiling a dollar pause can only be answered with stop.
 */
static cJSON *
run_pause_input(struct run *r, const char *which, double add_d, int beyond)
{
	cJSON	*in, *o;
	char	 q[768], spent[32], lim[32], add[32], ceil[32], ext[160], tail[200] = "";
	char	 money[96];
	int	 secs = (int)(run_elapsed(r) - budgetpause_seconds(&r->pause) + 0.5);
	int	 extendable = !(strcmp(which, "dollars") == 0 && add_d <= 0);
	char	 turns[32] = "";

	if (run_pausable(r, "turns") && r->budget_turns > 0)
		snprintf(turns, sizeof turns, "%d turns", r->ext_turns);

	run_money(spent, sizeof spent, r->usage.dollars);
	run_money(lim, sizeof lim, r->budget_dollars);
	run_money(add, sizeof add, add_d);
	run_money(ceil, sizeof ceil, r->max_dollars);
	if (!extendable)
		snprintf(ext, sizeof ext, "the hard ceiling of %s is reached: stop", ceil);
	else
		snprintf(ext, sizeof ext, "extend by %s%s%s%s%d min, or stop",
		    add_d > 0 ? add : "", add_d > 0 ? " / " : "", turns,
		    turns[0] != '\0' ? " / " : "", (r->ext_seconds + 59) / 60);
	if (beyond && extendable)
		snprintf(tail, sizeof tail, " (hard ceiling %s: the extension stops there, "
		    "and only cwctl or the Inbox can give it)", ceil);
	/* An engine that reports no cost (Codex, OpenCode) has no dollars to show. */
	if (r->ops != NULL && !(engine_info(r->ops)->caps & ENGINE_CAN_DOLLARS))
		snprintf(money, sizeof money, "no cost reported");
	else
		snprintf(money, sizeof money, "%s spent%s%s", spent, r->budget_dollars > 0 ?
		    " of " : "", r->budget_dollars > 0 ? lim : "");
	snprintf(q, sizeof q, "The %s budget is reached: %s, %d turn%s, %d min "
	    "%d s \u2014 %s%s. The run is held (%s) until an answer; with none in %d min "
	    "it ends.", strcmp(which, "dollars") == 0 ? "dollar" : strcmp(which, "turns") ==
	    0 ? "turn" : "time", money, r->usage.turns, r->usage.turns == 1 ? "" : "s",
	    secs / 60, secs % 60, ext, tail, r->pause.hold, (r->budget_wait + 59) / 60);
	if ((in = cJSON_CreateObject()) == NULL)
		return NULL;
	cJSON_AddStringToObject(in, "question", q);
	cJSON_AddStringToObject(in, "budget", which);
	cJSON_AddStringToObject(in, "hold", r->pause.hold);
	if ((o = cJSON_AddObjectToObject(in, "spent")) != NULL) {
		cJSON_AddNumberToObject(o, "dollars", r->usage.dollars);
		cJSON_AddNumberToObject(o, "turns", r->usage.turns);
		cJSON_AddNumberToObject(o, "seconds", secs);
	}
	if ((o = cJSON_AddObjectToObject(in, "limits")) != NULL) {
		cJSON_AddNumberToObject(o, "dollars", r->budget_dollars);
		cJSON_AddNumberToObject(o, "turns", r->budget_turns);
		cJSON_AddNumberToObject(o, "seconds", r->budget_seconds);
	}
	if ((o = cJSON_AddObjectToObject(in, "extend")) != NULL) {
		cJSON_AddNumberToObject(o, "dollars", add_d);
		cJSON_AddNumberToObject(o, "turns", turns[0] != '\0' ? r->ext_turns : 0);
		cJSON_AddNumberToObject(o, "seconds", r->ext_seconds);
	}
	cJSON_AddNumberToObject(in, "max_dollars", r->max_dollars);
	cJSON_AddBoolToObject(in, "beyond_ceiling", beyond);
	cJSON_AddBoolToObject(in, "extendable", extendable);
	cJSON_AddNumberToObject(in, "wait_seconds", r->budget_wait);
	return in;
}

/*
 * Hold the run and ask (budgetpause.h). -1: it cannot be held (or it is over
 * already); the caller ends it as before.
 */
static int
run_pause(struct run *r, const char *which)
{
	struct timeval	 tv = { r->budget_wait, 0 };
	struct timespec	 now;
	char		 err[256];
	double		 add_d = 0;
	int		 beyond = 0;
	cJSON		*m, *rec;

	if (r->pid <= 0 || r->exited || r->stopping || r->reason != NULL)
		return -1;
	if (budgetpause_hold(&r->pause, &r->cg, r->companion, err, sizeof err) == -1) {
		run_note(r, "the %s budget is reached and the run cannot be held (%s): "
		    "ending it", which, err);
		return -1;
	}
	event_del(r->ev_budget);
	r->pause_which = which;
	snprintf(r->pause_id, sizeof r->pause_id, "budget-%d", ++r->pause_n);
	/*
	 * "Extend" adds the run's first dollar budget, cut at the hard ceiling, where the
	 * runner keeps that budget (an engine that keeps its own is not told of more).
	 */
	if (r->budget_dollars > 0 && r->ext_dollars > 0 && run_pausable(r, "dollars")) {
		add_d = r->ext_dollars;
		if (r->max_dollars > 0 && r->budget_dollars + add_d > r->max_dollars) {
			beyond = 1;
			add_d = r->max_dollars - r->budget_dollars;
			if (add_d < 0.00005)
				add_d = 0;
		}
	}
	r->pause_add_dollars = add_d;
	if ((m = run_msg("approval_request")) != NULL) {
		clock_gettime(CLOCK_REALTIME, &now);
		cJSON_AddStringToObject(m, "run_id", r->run_id);
		cJSON_AddStringToObject(m, "id", r->pause_id);
		cJSON_AddStringToObject(m, "tool", BRIDGE_RESERVED_TOOL);
		cJSON_AddItemToObject(m, "input", run_pause_input(r, which, add_d, beyond));
		cJSON_AddNumberToObject(m, "deadline", ((double)now.tv_sec + r->budget_wait) *
		    1000.0 + now.tv_nsec / 1000000);
		cJSON_Delete(r->pause_ask);
		r->pause_ask = cJSON_Duplicate(m, 1);
	}
	if (r->pauses == NULL)
		r->pauses = cJSON_CreateArray();
	if ((rec = cJSON_CreateObject()) != NULL) {
		cJSON_AddStringToObject(rec, "budget", which);
		cJSON_AddStringToObject(rec, "hold", r->pause.hold);
		cJSON_AddNumberToObject(rec, "dollars", r->usage.dollars);
		cJSON_AddNumberToObject(rec, "turns", r->usage.turns);
		cJSON_AddItemToArray(r->pauses, rec);
	}
	run_note(r, "%s budget reached: the run is held (%s) and a person is asked "
	    "(approval %s; no answer in %d s ends it)", which, r->pause.hold, r->pause_id,
	    r->budget_wait);
	run_budget_event(r, "budget_paused", NULL, NULL);
	run_emit(r, m);
	event_add(r->ev_pause, &tv);
	return 0;
}

/*
 * The pause is over: answer "extend" raises the budgets and lets the run go on;
 * anything else lets it run again only so that it can be ended (the caller stops
 * it). answer NULL: the budget ends the run (no answer, or "stop").
 */
static void
run_pause_end(struct run *r, const char *answer, const char *by)
{
	struct timeval	 tv;
	cJSON		*rec;
	double		 left;
	int		 extend = answer != NULL && strcmp(answer, "extend") == 0;

	if (!r->pause.active)
		return;
	budgetpause_release(&r->pause, &r->cg);
	event_del(r->ev_pause);
	if (extend) {
		r->budget_dollars += r->pause_add_dollars;
		if (run_pausable(r, "turns")) {
			r->budget_turns += r->budget_turns > 0 ? r->ext_turns : 0;
			if (run_turns_file(r, r->budget_turns) == -1)
				run_note(r, "cannot tell the engine the new turn budget "
				    "(%s: %s): its next tool call waits until the run ends",
				    r->turns_file, strerror(errno));
		}
		r->budget_seconds += r->ext_seconds;
	}
	if ((rec = cJSON_GetArrayItem(r->pauses, cJSON_GetArraySize(r->pauses) - 1)) !=
	    NULL) {
		cJSON_AddStringToObject(rec, "answer", answer != NULL ? answer : "stop");
		if (by != NULL)
			json_add_string(rec, "by", by);
		if (extend) {
			cJSON_AddNumberToObject(rec, "new_dollars", r->budget_dollars);
			cJSON_AddNumberToObject(rec, "new_turns", r->budget_turns);
			cJSON_AddNumberToObject(rec, "new_seconds", r->budget_seconds);
		}
	}
	run_note(r, "budget pause %s: %s%s%s", r->pause_id, extend ? "extended, the run "
	    "goes on" : "the run ends", by != NULL ? " \u2014 " : "", by != NULL ? by : "");
	run_budget_event(r, "budget_resumed", answer != NULL ? answer : "stop", by);
	cJSON_Delete(r->pause_ask);
	r->pause_ask = NULL;
	r->pause_id[0] = '\0';
	r->pause_which = NULL;
	if (extend) {
		/* Time held still does not count: the time budget goes on from what is left. */
		left = run_seconds_left(r);
		tv.tv_sec = left > 1 ? (time_t)left : 1;
		tv.tv_usec = 0;
		event_add(r->ev_budget, &tv);
	}
}

/* End the run on the budget that paused it, as a budget always did. */
static void
run_pause_stop(struct run *r, const char *which, const char *answer, const char *by)
{
	/*
	 * SIGTERM first, while the run is still held: it is the first thing the engine
	 * meets when it runs again, before it could start another call; and the turn
	 * gate says the run is ending before it is let go (run_stop says it again).
	 */
	run_kill_group(r, SIGTERM);
	(void)run_turns_file(r, -1);
	run_pause_end(r, answer, by);
	run_stop(r, strcmp(which, "turns") == 0 ? "budget_turns" : strcmp(which,
	    "dollars") == 0 ? "budget_dollars" : "budget_seconds");
}

/* budget_wait passed with no answer: the run ends as it did before pauses. */
static void
run_pause_cb(evutil_socket_t fd, short what, void *arg)
{
	struct run	*r = arg;
	const char	*which = r->pause_which;
	cJSON		*ev;

	if (!r->pause.active || which == NULL)
		return;
	if ((ev = run_event(r, "approval_timeout")) != NULL) {
		cJSON_AddStringToObject(ev, "id", r->pause_id);
		cJSON_AddStringToObject(ev, "tool", BRIDGE_RESERVED_TOOL);
		run_emit(r, ev);
	}
	run_note(r, "no answer within budget_wait (%d s): ending the run", r->budget_wait);
	run_pause_stop(r, which, "timeout", NULL);
}

/* A person's answer to the pause: 0 when id named it. */
static int
run_pause_decide(struct run *r, const char *id, int allow, const char *by)
{
	const char	*which = r->pause_which;

	if (!r->pause.active || which == NULL || strcmp(id, r->pause_id) != 0)
		return -1;
	if (allow) {
		run_pause_end(r, "extend", by);
		return 0;
	}
	run_pause_stop(r, which, "stop", by);
	return 0;
}

static void
run_budget_cb(evutil_socket_t fd, short what, void *arg)
{
	struct run	*r = arg;
	cJSON		*ev;

	if ((ev = run_event(r, "budget_exceeded")) != NULL) {
		cJSON_AddStringToObject(ev, "budget", "seconds");
		cJSON_AddNumberToObject(ev, "limit", r->budget_seconds);
		cJSON_AddBoolToObject(ev, "paused", run_pausable(r, "seconds"));
		run_emit(r, ev);
	}
	if (run_pausable(r, "seconds") && run_pause(r, "seconds") == 0)
		return;
	run_note(r, "wall-clock budget of %d s reached: stopping the engine",
	    r->budget_seconds);
	run_stop(r, "budget_seconds");
}

static void
run_chld_cb(evutil_socket_t fd, short what, void *arg)
{
	struct run	*r = arg;
	pid_t		 p;
	int		 st;

	/* Reap only the engine here; proc_kill_tree() collects the rest at the end. */
	if (r->pid <= 0 || r->exited)
		return;
	while ((p = waitpid(r->pid, &st, WNOHANG)) == -1 && errno == EINTR)
		;
	if (p == r->pid) {
		r->exited = 1;
		r->status = st;
		run_maybe_done(r);
	}
}

static void
run_signal_cb(evutil_socket_t sig, short what, void *arg)
{
	struct run	*r = arg;
	cJSON		*ev;

	if ((ev = run_event(r, "stop_requested")) != NULL) {
		cJSON_AddStringToObject(ev, "by", sig == SIGTERM ? "SIGTERM" : "SIGINT");
		run_emit(r, ev);
	}
	run_stop(r, "stopped");
}

/* ---- the engine's output ---------------------------------------------------------- */

/*
 * Claude Code named a model the price table does not have (with no model set in
 * the configuration, the runner learns it only from the stream): the runner's count
 * cannot hold the dollar budget, and Claude Code was not given it. The budget is
 * refused as a byok run's is (run_cost_check), once, in the live log and the
 * report; the turn and time budgets hold as ever, and the hard ceiling, if any, is
 * still Claude Code's own --max-budget-usd.
 */
static void
run_unpriced_check(struct run *r)
{
	char	buf[1800];

	if (r->usage.unpriced[0] == '\0' || r->unpriced_noted ||
	    !run_pausable(r, "dollars"))
		return;
	r->unpriced_noted = 1;
	if (r->budget_dollars <= 0) {
		run_note(r, "cost: model '%.120s' has no price: the dollars shown count only "
		    "the models that have one, until Claude Code reports its own total",
		    r->usage.unpriced);
		return;
	}
	snprintf(buf, sizeof buf, "budget: the dollar budget ($%.2f) is refused: model "
	    "'%.120s' has no price: neither prices.%.120s in config.yaml nor the built-in "
	    "table (checked %s) has one, so no dollar budget can hold; add prices.%.120s "
	    "(input and output, $ per million tokens) to config.yaml, or set the model, to "
	    "have one. The run goes on under its turn and time budgets", r->budget_dollars,
	    r->usage.unpriced, r->usage.unpriced, PRICES_TABLE_DATE, r->usage.unpriced);
	if (strlist_add(&r->limit_notes, buf) == 0)
		run_note(r, "WARNING: %s", buf);
	r->budget_dollars = 0;
}

static void
run_check_usage(struct run *r)
{
	const char	*which = NULL;
	cJSON		*ev;

	run_unpriced_check(r);
	run_usage(r);
	if (r->pause.active)
		return;
	if (r->usage.have_result) {
		if (strcmp(r->usage.subtype, "error_max_turns") == 0)
			which = "turns";
		else if (strncmp(r->usage.subtype, "error_max_budget", 16) == 0)
			which = "dollars";
	}
	/*
	 * A budget that pauses is reached where the engine would have stopped itself:
	 * byok after the turn that reached it, when that turn asks for more (a last
	 * answer is let through); Claude Code, Codex and OpenCode at the first turn past
	 * it. The dollar budget is reached by the response that reaches it when that
	 * response asks for tools (byok, Claude Code): a last answer is let through, and
	 * a run that has ended has nothing left to hold.
	 */
	if (which == NULL && r->budget_turns > 0 && (run_pausable(r, "turns") &&
	    strcmp(r->engine, "byok") == 0 ? r->usage.turns >= r->budget_turns &&
	    r->usage.more : r->usage.turns > r->budget_turns))
		which = "turns";
	if (which == NULL && r->budget_dollars > 0 && (run_pausable(r, "dollars") ?
	    r->usage.dollars >= r->budget_dollars && r->usage.more &&
	    !r->usage.have_result : r->usage.dollars > r->budget_dollars))
		which = "dollars";
	if (which == NULL || r->reason != NULL)
		return;
	if ((ev = run_event(r, "budget_exceeded")) != NULL) {
		cJSON_AddStringToObject(ev, "budget", which);
		cJSON_AddBoolToObject(ev, "paused", !r->usage.have_result &&
		    run_pausable(r, which));
		run_emit(r, ev);
	}
	/*
	 * Nothing to ask when the engine ended itself, or when the hard ceiling is
	 * spent: no answer could let the run go on.
	 */
	if (!r->usage.have_result && run_pausable(r, which) && !(r->max_dollars > 0 &&
	    r->usage.dollars >= r->max_dollars) && run_pause(r, which) == 0)
		return;
	run_note(r, "%s budget exceeded: stopping the engine", which);
	run_stop(r, strcmp(which, "turns") == 0 ? "budget_turns" : "budget_dollars");
}

static void
run_engine_line(struct run *r, struct run_pipe *p, const char *line, size_t len,
    int cut)
{
	if (cut || p != &r->out || r->ops == NULL || r->ops->log_skip == NULL ||
	    !r->ops->log_skip(line, len))
		run_log_line(r, p->name, line, len > CW_RUN_LOG_MAX_LINE ?
		    CW_RUN_LOG_MAX_LINE : len, cut || len > CW_RUN_LOG_MAX_LINE);
	if (!cut && p == &r->out && r->stream != NULL &&
	    r->ops->stream_line(r->stream, line, len, &r->usage, run_say_cb, r) == 1)
		run_check_usage(r);
}

static void
run_pipe_read(struct bufferevent *bev, void *arg)
{
	struct run_pipe		*p = arg;
	struct evbuffer		*in = bufferevent_get_input(bev);
	struct evbuffer_ptr	 eol;
	size_t			 n, eol_len;
	char			*line;

	for (;;) {
		eol = evbuffer_search_eol(in, NULL, &eol_len, EVBUFFER_EOL_LF);
		if (eol.pos == -1) {
			n = evbuffer_get_length(in);
			if (n <= RUN_PARSE_MAX)
				return;
			/* An over-long line: log its start, drop the rest up to its end. */
			if (!p->skipping) {
				line = (char *)evbuffer_pullup(in, CW_RUN_LOG_MAX_LINE);
				run_engine_line(p->run, p, line, CW_RUN_LOG_MAX_LINE, 1);
			}
			p->skipping = 1;
			evbuffer_drain(in, n);
			continue;
		}
		n = (size_t)eol.pos;
		if (p->skipping) {
			p->skipping = 0;
		} else {
			line = (char *)evbuffer_pullup(in, (ev_ssize_t)(n + eol_len));
			if (line != NULL)
				run_engine_line(p->run, p, line, n, 0);
		}
		evbuffer_drain(in, n + eol_len);
	}
}

static void
run_pipe_event(struct bufferevent *bev, short what, void *arg)
{
	struct run_pipe		*p = arg;
	struct evbuffer		*in = bufferevent_get_input(bev);
	size_t			 n;

	if (!(what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)))
		return;
	run_pipe_read(bev, p);
	if ((n = evbuffer_get_length(in)) > 0 && !p->skipping)
		run_engine_line(p->run, p, (char *)evbuffer_pullup(in, -1), n, 0);
	evbuffer_drain(in, n);
	bufferevent_disable(bev, EV_READ);
	p->eof = 1;
	run_maybe_done(p->run);
}

/* ---- the conversation ------------------------------------------------------------- */

/*
 * The earlier run's keep directory, opened before the sandbox is built: a run asked
 * to resume a conversation that is not there is refused (the engine would otherwise
 * fail later, or worse start a new conversation the person did not ask for).
 */
static int
run_resume_open(struct run *r, char *err, size_t errlen)
{
	char	dir[PATH_MAX];

	if (conversation_dir(r->cwhome, r->task_id, r->resume_run, dir, sizeof dir) == -1) {
		snprintf(err, errlen, "conversation: run %s: %s", r->resume_run,
		    strerror(errno));
		return -1;
	}
	if ((r->resume_fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) ==
	    -1) {
		snprintf(err, errlen, "conversation: the conversation of run %s was not "
		    "kept (%.600s: %s); it cannot be resumed", r->resume_run, dir,
		    strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Copy the conversation out of the run's private home into its keep directory, made
 * new here (0700; a directory left by an earlier run with this id is an error, never
 * reused). What the run wrote there is untrusted: the engine's keep() opens it
 * without following links (engine_copy_beneath) and the run's processes are gone.
 */
static void
run_keep(struct run *r)
{
	struct engine_keep	 k;
	char			 dir[PATH_MAX], parent[PATH_MAX], home[PATH_MAX], *slash;
	int			 rc;

	r->conv_kept = -1;
	if (r->ops == NULL || r->ops->keep == NULL) {
		snprintf(r->conv_error, sizeof r->conv_error, "engine %s cannot resume a "
		    "conversation", r->engine);
		return;
	}
	if (r->usage.session[0] == '\0') {
		snprintf(r->conv_error, sizeof r->conv_error, "the engine's output named "
		    "no conversation");
		r->conv_kept = 0;
		return;
	}
	if (conversation_dir(r->cwhome, r->task_id, r->run_id, dir, sizeof dir) == -1) {
		snprintf(r->conv_error, sizeof r->conv_error, "%s", strerror(errno));
		return;
	}
	snprintf(parent, sizeof parent, "%s", dir);
	if ((slash = strrchr(parent, '/')) != NULL)
		*slash = '\0';
	if (paths_mkdir_p(parent, 0700) == -1 || mkdir(dir, 0700) == -1) {
		snprintf(r->conv_error, sizeof r->conv_error, "create %.400s: %s", dir,
		    strerror(errno));
		return;
	}
	memset(&k, 0, sizeof k);
	k.home_fd = -1;
	k.resume_fd = r->resume_fd;
	k.session = r->usage.session;
	k.stream = r->stream;
	if ((k.keep_fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) ==
	    -1) {
		snprintf(r->conv_error, sizeof r->conv_error, "open %.400s: %s", dir,
		    strerror(errno));
		return;
	}
	/* <cwhome>/tmp/<run id> is ours; the home inside it the run could have replaced. */
	if ((size_t)snprintf(home, sizeof home, "%s/tmp/%s", r->cwhome, r->run_id) <
	    sizeof home) {
		int	tfd = open(home, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

		if (tfd != -1) {
			k.home_fd = openat(tfd, ENGINE_HOME_NAME, O_RDONLY | O_DIRECTORY |
			    O_NOFOLLOW | O_CLOEXEC);
			close(tfd);
		}
	}
	rc = r->ops->keep(&k, r->conv_error, sizeof r->conv_error);
	if (k.home_fd != -1)
		close(k.home_fd);
	close(k.keep_fd);
	if (rc == 1) {
		r->conv_kept = 1;
		r->conv_error[0] = '\0';
		return;
	}
	if (rc == 0 && r->conv_error[0] == '\0')
		snprintf(r->conv_error, sizeof r->conv_error, "the engine left no "
		    "conversation to keep");
	r->conv_kept = rc == 0 ? 0 : -1;
	/* Nothing half-kept: a later continue finds no directory and says so. */
	(void)rmtree_path(dir);
	run_note(r, "the conversation was not kept: %s", r->conv_error);
}

/* ---- the daemon's lines ------------------------------------------------------------ */

static int	run_start(struct run *);
static int	run_resume_open(struct run *, char *, size_t);
static int	run_companion(struct run *, int, int, int, int, char *, size_t);
static void	run_remove_tmpdir(struct run *, size_t);
static const double *run_price(struct run *);
static int run_cost_check(struct run *);

static char *
run_strdup_field(const cJSON *j, const char *key)
{
	const char	*s;

	return (s = json_get_string(j, key)) != NULL ? strdup(s) : NULL;
}

static int
run_id_ok(const char *s)
{
	size_t	n = 0;

	if (s == NULL)
		return 0;
	for (; s[n] != '\0'; n++)
		if (strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		    "0123456789._-", s[n]) == NULL)
			return 0;
	return n > 0 && n <= CW_RUN_ID_MAX && strcmp(s, ".") != 0 && strcmp(s, "..") != 0;
}

/* A variable the run message may not set: the sandbox and the runner own these. */
static int
run_env_denied(const char *name)
{
	static const char *deny[] = { "HOME", "PATH", "TMPDIR", "MCP_TOOL_TIMEOUT" };
	size_t	i;

	if (strncmp(name, "LD_", 3) == 0 || strncmp(name, "CW_", 3) == 0)
		return 1;
	for (i = 0; i < sizeof deny / sizeof deny[0]; i++)
		if (strcmp(name, deny[i]) == 0)
			return 1;
	for (i = 0; name[i] != '\0'; i++)
		if (strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_"
		    "0123456789", name[i]) == NULL || (i == 0 && name[i] >= '0' &&
		    name[i] <= '9'))
			return 1;
	return i == 0;
}

static int
run_abs_list(const cJSON *arr, struct strlist *out, int need_abs)
{
	const cJSON	*e;

	if (arr == NULL)
		return 0;
	if (!cJSON_IsArray(arr))
		return -1;
	cJSON_ArrayForEach(e, arr) {
		if (!cJSON_IsString(e) || (need_abs && e->valuestring[0] != '/') ||
		    strlist_add(out, e->valuestring) == -1)
			return -1;
	}
	return 0;
}

/* Take the run message apart; -1 with r->error on anything missing or ill-shaped. */
static int
run_parse(struct run *r, const cJSON *j)
{
	const cJSON	*b, *env, *e, *g;
	char		 kv[8192];
	double		 d;

#define RUN_FAIL(...) do { snprintf(r->error, sizeof r->error, __VA_ARGS__); return -1; } while (0)
	r->run_id = run_strdup_field(j, "run_id");
	if (!run_id_ok(r->run_id)) {
		free(r->run_id);
		r->run_id = NULL;
		RUN_FAIL("run_id is missing or not [A-Za-z0-9._-]{1,%d}", CW_RUN_ID_MAX);
	}
	r->task = run_strdup_field(j, "task");
	r->engine = run_strdup_field(j, "engine");
	r->prompt = run_strdup_field(j, "prompt");
	r->workdir = run_strdup_field(j, "workdir");
	r->mode = run_strdup_field(j, "permission_mode");
	r->key = run_strdup_field(j, "key");
	r->base_url = run_strdup_field(j, "base_url");
	r->model = run_strdup_field(j, "model");
	r->provider = run_strdup_field(j, "provider");
	r->state_dir = run_strdup_field(j, "state_dir");
	r->hook_path = run_strdup_field(j, "hook_path");
	if (r->engine == NULL || engines_runnable(r->engine) == NULL)
		RUN_FAIL("engine must be one of: %s", engines_names(1));
	r->ops = engine_find(r->engine);
	if (r->workdir == NULL || r->workdir[0] != '/')
		RUN_FAIL("workdir must be an absolute path");
	if (r->state_dir != NULL && r->state_dir[0] != '/')
		RUN_FAIL("state_dir must be an absolute path");
	if (r->hook_path != NULL && r->hook_path[0] != '/')
		RUN_FAIL("hook_path must be an absolute path");
	if ((g = cJSON_GetObjectItemCaseSensitive(j, "git")) != NULL) {
		if (!cJSON_IsObject(g))
			RUN_FAIL("git must be an object");
		r->git_branch = run_strdup_field(g, "branch");
		r->git_base = run_strdup_field(g, "base");
		r->git_objects = run_strdup_field(g, "objects");
		if (r->git_branch == NULL || strncmp(r->git_branch, "clockwork/", 10) != 0 ||
		    strstr(r->git_branch, "..") != NULL || strchr(r->git_branch, ' ') != NULL)
			RUN_FAIL("git.branch must be a clockwork/ branch name");
		if (r->git_base == NULL || strlen(r->git_base) < 40 ||
		    strspn(r->git_base, "0123456789abcdef") != strlen(r->git_base))
			RUN_FAIL("git.base must be a commit id");
		if (r->git_objects == NULL || r->git_objects[0] != '/')
			RUN_FAIL("git.objects must be an absolute path");
	}
	/* The seal's options (seal.h): a task that commits its build outputs keeps them. */
	if ((g = cJSON_GetObjectItemCaseSensitive(j, "seal")) != NULL) {
		const cJSON	*kb;

		if (!cJSON_IsObject(g))
			RUN_FAIL("seal must be an object");
		kb = cJSON_GetObjectItemCaseSensitive(g, "keep_build_outputs");
		if (kb != NULL && !cJSON_IsBool(kb))
			RUN_FAIL("seal.keep_build_outputs must be true or false");
		r->seal_keep_outputs = cJSON_IsTrue(kb);
	}
	if (run_abs_list(cJSON_GetObjectItemCaseSensitive(j, "context"), &r->context, 1))
		RUN_FAIL("context must be an array of absolute paths");
	if (run_abs_list(cJSON_GetObjectItemCaseSensitive(j, "argv"), &r->argv, 0))
		RUN_FAIL("argv must be an array of strings");
	if (strcmp(r->engine, "command") == 0 && r->argv.n == 0)
		RUN_FAIL("engine \"command\" needs a non-empty argv");
	if (engines_find(r->engine)->caps & ENGINE_TAKES_PROMPT) {
		if (r->prompt == NULL || r->prompt[0] == '\0')
			RUN_FAIL("engine \"%s\" needs a prompt", r->engine);
		if (r->mode == NULL || (strcmp(r->mode, "plan") != 0 &&
		    strcmp(r->mode, "acceptEdits") != 0))
			RUN_FAIL("permission_mode must be \"plan\" or \"acceptEdits\"");
	} else if (r->mode != NULL && strcmp(r->mode, "plan") != 0 &&
	    strcmp(r->mode, "acceptEdits") != 0)
		RUN_FAIL("permission_mode must be \"plan\" or \"acceptEdits\"");
	/*
	 * The task's id names its tool caches (SPEC U2), kept between that task's runs
	 * and seen by no other task. Ids, unlike names, are never reused (an archived
	 * task keeps its row). Without one the run gets a private one-off cache.
	 */
	if (cJSON_HasObjectItem(j, "task_id")) {
		if (json_get_number(j, "task_id", &d) == -1 || d < 1 || d > 0x1p53 ||
		    d != (double)(long long)d)
			RUN_FAIL("task_id must be a positive integer");
		snprintf(r->cache_scope, sizeof r->cache_scope, "tasks/%lld", (long long)d);
		r->task_id = (long long)d;
	}
	/*
	 * The conversation: kept for a later run of the same task, and resumed from an
	 * earlier one's. Both directories are made from the task's id here, never from
	 * a path in the message; the id to resume is checked as untrusted (the earlier
	 * run's engine printed it).
	 */
	if ((b = cJSON_GetObjectItemCaseSensitive(j, "conversation")) != NULL) {
		const cJSON	*rs, *kp;

		if (!cJSON_IsObject(b))
			RUN_FAIL("conversation must be an object");
		kp = cJSON_GetObjectItemCaseSensitive(b, "keep");
		if (kp != NULL && !cJSON_IsBool(kp))
			RUN_FAIL("conversation.keep must be true or false");
		r->conv_keep = cJSON_IsTrue(kp);
		if ((rs = cJSON_GetObjectItemCaseSensitive(b, "resume")) != NULL) {
			if (!cJSON_IsObject(rs))
				RUN_FAIL("conversation.resume must be an object");
			r->resume_run = run_strdup_field(rs, "run");
			r->resume_id = run_strdup_field(rs, "id");
			if (!run_id_ok(r->resume_run))
				RUN_FAIL("conversation.resume.run is missing or not a run id");
			if (!conversation_id_valid(r->engine, r->resume_id))
				RUN_FAIL("conversation.resume.id is not a %s conversation id",
				    r->engine);
		}
		if ((r->conv_keep || r->resume_id != NULL) &&
		    (r->task_id < 1 || !conversation_engine_resumes(r->engine)))
			RUN_FAIL("conversation: needs a task_id and an engine that resumes "
			    "(claude, codex, opencode, byok)");
	}
	if (cJSON_HasObjectItem(j, "log_max_bytes")) {
		if (json_get_number(j, "log_max_bytes", &d) == -1 || d < 0 || d > 1e15)
			RUN_FAIL("log_max_bytes must be a non-negative number");
		r->log_max = (long)d;
	}
	b = cJSON_GetObjectItemCaseSensitive(j, "budget");
	if (!cJSON_IsObject(b) || json_get_int(b, "seconds", &r->budget_seconds) == -1 ||
	    r->budget_seconds <= 0)
		RUN_FAIL("budget.seconds must be a positive integer");
	if (cJSON_HasObjectItem(b, "turns") && (json_get_int(b, "turns",
	    &r->budget_turns) == -1 || r->budget_turns < 0))
		RUN_FAIL("budget.turns must be a non-negative integer");
	if (cJSON_HasObjectItem(b, "dollars")) {
		if (json_get_number(b, "dollars", &d) == -1 || d < 0)
			RUN_FAIL("budget.dollars must be a non-negative number");
		r->budget_dollars = d;
	}
	if (cJSON_HasObjectItem(b, "wait") && (json_get_int(b, "wait", &r->budget_wait) ==
	    -1 || r->budget_wait < 0 || r->budget_wait > 7 * 86400))
		RUN_FAIL("budget.wait must be a whole number of seconds from 0 to 604800");
	if (cJSON_HasObjectItem(b, "max_dollars")) {
		if (json_get_number(b, "max_dollars", &d) == -1 || d < 0)
			RUN_FAIL("budget.max_dollars must be a non-negative number");
		r->max_dollars = d;
	}
	if (r->max_dollars > 0 && r->budget_dollars > r->max_dollars)
		RUN_FAIL("budget.dollars ($%.2f) is above budget.max_dollars ($%.2f)",
		    r->budget_dollars, r->max_dollars);
	r->ext_dollars = r->budget_dollars;
	r->ext_turns = r->budget_turns;
	r->ext_seconds = r->budget_seconds;
	b = cJSON_GetObjectItemCaseSensitive(j, "limits");
	if (b != NULL && !cJSON_IsObject(b))
		RUN_FAIL("limits must be an object");
	if (cJSON_HasObjectItem(b, "processes")) {
		if (json_get_number(b, "processes", &d) == -1 || d < 0 || d > 4194304 ||
		    d != (long)d)
			RUN_FAIL("limits.processes must be a whole number from 0 to 4194304");
		r->limit_processes = (long)d;
	}
	if (cJSON_HasObjectItem(b, "memory_bytes")) {
		if (json_get_number(b, "memory_bytes", &d) == -1 || d < 0 || d > 0x1p50 ||
		    d != (long long)d)
			RUN_FAIL("limits.memory_bytes must be a whole number of bytes");
		r->limit_memory = (long long)d;
	}
	if ((b = cJSON_GetObjectItemCaseSensitive(j, "network")) != NULL) {
		const cJSON	*al;
		struct netrule	 nr;
		char		 nerr[400];

		if (!cJSON_IsObject(b))
			RUN_FAIL("network must be an object");
		al = cJSON_GetObjectItemCaseSensitive(b, "allow");
		if (run_abs_list(al, &r->net_allow, 0))
			RUN_FAIL("network.allow must be an array of host:port strings");
		for (size_t k = 0; k < r->net_allow.n; k++)
			if (netsets_find(r->net_allow.v[k]) == NULL &&
			    netrule_parse(r->net_allow.v[k], &nr, nerr, sizeof nerr) == -1)
				RUN_FAIL("network.allow: %s", nerr);
		al = cJSON_GetObjectItemCaseSensitive(b, "ask");
		if (al != NULL && !cJSON_IsBool(al))
			RUN_FAIL("network.ask must be true or false");
		r->net_ask = cJSON_IsTrue(al);
	}
	/*
	 * approvals: {"ask": [risk...] | "all" | "none", "rules": [{"family", "max_risk"}]}
	 * from the daemon (the task's setting over config.yaml's, and its remembered
	 * families). Without ask the runner's own config.yaml says.
	 */
	if ((b = cJSON_GetObjectItemCaseSensitive(j, "approvals")) != NULL) {
		const cJSON	*ask, *rules;
		const char	*words[8];
		size_t		 nw = 0;
		char		 aerr[200];

		if (!cJSON_IsObject(b))
			RUN_FAIL("approvals must be an object");
		if ((ask = cJSON_GetObjectItemCaseSensitive(b, "ask")) != NULL) {
			if (cJSON_IsString(ask))
				words[nw++] = ask->valuestring;
			else if (cJSON_IsArray(ask) && cJSON_GetArraySize(ask) <= 8)
				cJSON_ArrayForEach(e, ask) {
					if (!cJSON_IsString(e))
						RUN_FAIL("approvals.ask: risks are strings");
					words[nw++] = e->valuestring;
				}
			else
				RUN_FAIL("approvals.ask must be all, none or a list of risks");
			if (autoallow_ask_parse(words, nw, &r->ask, aerr, sizeof aerr) == -1)
				RUN_FAIL("approvals.ask: %s", aerr);
			r->ask_set = 1;
		}
		rules = cJSON_GetObjectItemCaseSensitive(b, "rules");
		if (rules != NULL && (!cJSON_IsArray(rules) ||
		    cJSON_GetArraySize(rules) > AUTOALLOW_RULES_MAX))
			RUN_FAIL("approvals.rules must be an array of at most %d rules",
			    AUTOALLOW_RULES_MAX);
		if (rules != NULL && cJSON_GetArraySize(rules) > 0 &&
		    (r->rules = calloc((size_t)cJSON_GetArraySize(rules),
		    sizeof *r->rules)) == NULL)
			RUN_FAIL("out of memory");
		cJSON_ArrayForEach(e, rules) {
			const char *fam = json_get_string(e, "family");
			const char *mr = json_get_string(e, "max_risk");
			int risk = mr != NULL ? floor_risk_parse(mr) : -1;
			if (fam == NULL || !autoallow_family_valid(fam) || risk == -1)
				RUN_FAIL("approvals.rules: each needs a family and a max_risk");
			snprintf(r->rules[r->n_rules].family,
			    sizeof r->rules[r->n_rules].family, "%s", fam);
			r->rules[r->n_rules++].max_risk = (enum floor_risk)risk;
		}
		rules = cJSON_GetObjectItemCaseSensitive(b, "ask_rules");
		if (rules != NULL && (!cJSON_IsArray(rules) ||
		    cJSON_GetArraySize(rules) > AUTOALLOW_RULES_MAX))
			RUN_FAIL("approvals.ask_rules must be an array of at most %d rules",
			    AUTOALLOW_RULES_MAX);
		if (rules != NULL && cJSON_GetArraySize(rules) > 0 &&
		    (r->ask_rules = calloc((size_t)cJSON_GetArraySize(rules),
		    sizeof *r->ask_rules)) == NULL)
			RUN_FAIL("out of memory");
		cJSON_ArrayForEach(e, rules) {
			const char *fam = json_get_string(e, "family");
			if (fam == NULL || !autoallow_family_valid(fam))
				RUN_FAIL("approvals.ask_rules: each needs a family");
			snprintf(r->ask_rules[r->n_ask_rules].family,
			    sizeof r->ask_rules[r->n_ask_rules].family, "%s", fam);
			r->n_ask_rules++;
		}
	}
	env = cJSON_GetObjectItemCaseSensitive(j, "env");
	if (env != NULL && !cJSON_IsObject(env))
		RUN_FAIL("env must be an object of strings");
	cJSON_ArrayForEach(e, env) {
		if (!cJSON_IsString(e) || run_env_denied(e->string))
			RUN_FAIL("env: variable '%s' may not be set by a run", e->string);
		if ((size_t)snprintf(kv, sizeof kv, "%s=%s", e->string, e->valuestring) >=
		    sizeof kv)
			RUN_FAIL("env: variable '%s' is too long", e->string);
		if (strlist_add(&r->env, kv) == -1)
			RUN_FAIL("out of memory");
	}
#undef RUN_FAIL
	return 0;
}

static void
run_decision(struct run *r, const cJSON *j)
{
	const char	*id, *behavior, *message;
	cJSON		*ev;

	id = json_get_string(j, "id");
	behavior = json_get_string(j, "behavior");
	message = json_get_string(j, "message");
	if (id == NULL || behavior == NULL || (strcmp(behavior, "allow") != 0 &&
	    strcmp(behavior, "deny") != 0)) {
		run_note(r, "ignored a decision without an id or an allow/deny behavior");
		return;
	}
	/* The budget question (the runner's own), a held network connection (the
	 * proxy's ids), else a tool call (the bridge's). */
	if (run_pause_decide(r, id, strcmp(behavior, "allow") == 0,
	    json_get_string(j, "by")) == 0)
		return;
	if ((r->proxy == NULL || proxy_decide(r->proxy, id, strcmp(behavior, "allow") == 0,
	    message) == -1) && (r->bridge == NULL || bridge_decide(r->bridge, id,
	    strcmp(behavior, "allow") == 0, message) == -1)) {
		log_warn("decision for unknown approval id ignored");
		if ((ev = run_event(r, "decision_unknown_id")) != NULL) {
			json_add_string(ev, "id", id);
			run_emit(r, ev);
		}
	}
}

/*
 * {"type":"task_rule","family":F,"max_risk":R}: a person answered "always for this
 * task"; the rest of this run honours it too (the daemon stored it for later runs).
 */
static void
run_task_rule(struct run *r, const cJSON *j)
{
	const char	*fam = json_get_string(j, "family");
	const char	*mr = json_get_string(j, "max_risk");
	cJSON		*ev;

	if (r->bridge == NULL || fam == NULL || mr == NULL ||
	    bridge_add_rule(r->bridge, fam, floor_risk_parse(mr)) == -1) {
		run_note(r, "ignored a task rule without a valid family and max_risk");
		return;
	}
	if ((ev = run_event(r, "task_rule_added")) != NULL) {
		json_add_string(ev, "family", fam);
		json_add_string(ev, "max_risk", mr);
		run_emit(r, ev);
	}
}

/*
 * {"type":"task_ask_rule","family":F}: a person imported a repository's deny or ask
 * rule; the rest of this run asks about F too.
 */
static void
run_task_ask_rule(struct run *r, const cJSON *j)
{
	const char	*fam = json_get_string(j, "family");
	cJSON		*ev;

	if (r->bridge == NULL || fam == NULL || bridge_add_ask_rule(r->bridge, fam) == -1) {
		run_note(r, "ignored a task ask rule without a valid family");
		return;
	}
	if ((ev = run_event(r, "task_rule_added")) != NULL) {
		json_add_string(ev, "family", fam);
		json_add_string(ev, "kind", "ask");
		run_emit(r, ev);
	}
}

static void
run_malformed(struct run *r, const char *why)
{
	cJSON	*ev;

	log_warn("ignored a line from the daemon: %s", why);
	if ((ev = run_event(r, "malformed_line")) != NULL) {
		cJSON_AddStringToObject(ev, "reason", why);
		run_emit(r, ev);
	}
}

static void
run_line(struct run *r, const char *line, size_t len)
{
	const char	*type;
	cJSON		*j, *k;
	int		 v;

	if ((j = json_parse(line, len)) == NULL || !cJSON_IsObject(j)) {
		run_malformed(r, "not a JSON object");
		goto out;
	}
	type = json_get_string(j, "type");
	if (json_get_int(j, "v", &v) == -1 || v != CW_WIRE_VERSION || type == NULL) {
		run_malformed(r, "missing or unsupported v/type");
		goto out;
	}
	if (strcmp(type, "run") == 0) {
		if (r->have_run) {
			run_malformed(r, "a second run message");
			goto out;
		}
		r->have_run = 1;
		if (run_parse(r, j) == -1) {
			char	why[sizeof r->error];

			memcpy(why, r->error, sizeof why);
			(void)run_refuse(r, RUNNER_EXIT_USAGE, "%s", why);
			event_base_loopbreak(r->base);
			goto out;
		}
		if (run_start(r) == -1)
			event_base_loopbreak(r->base);
	} else if (strcmp(type, "decision") == 0) {
		run_decision(r, j);
	} else if (strcmp(type, "task_rule") == 0) {
		run_task_rule(r, j);
	} else if (strcmp(type, "task_ask_rule") == 0) {
		run_task_ask_rule(r, j);
	} else if (strcmp(type, "stop") == 0) {
		cJSON	*ev;

		if ((ev = run_event(r, "stop_requested")) != NULL) {
			cJSON_AddStringToObject(ev, "by", "daemon");
			json_add_string(ev, "reason", json_get_string(j, "reason"));
			run_emit(r, ev);
		}
		run_stop(r, "stopped");
	} else
		run_malformed(r, "unknown message type");
out:
	/* The provider's key is kept in r->key alone (and wiped there once handed on). */
	if ((k = cJSON_GetObjectItemCaseSensitive(j, "key")) != NULL && cJSON_IsString(k))
		explicit_bzero(k->valuestring, strlen(k->valuestring));
	cJSON_Delete(j);
}

static void
run_stdin_read(struct bufferevent *bev, void *arg)
{
	struct run	*r = arg;
	struct evbuffer	*in = bufferevent_get_input(bev);
	char		*line;
	size_t		 n;

	while (!r->finished && (line = evbuffer_readln(in, &n, EVBUFFER_EOL_LF)) != NULL) {
		run_line(r, line, n);
		explicit_bzero(line, n);	/* the run message carries a key */
		free(line);
	}
	if (!r->finished && evbuffer_get_length(in) > CW_WIRE_MAX_LINE) {
		/* wire.h: an over-long line is a protocol error that ends the run. */
		evbuffer_drain(in, evbuffer_get_length(in));
		run_malformed(r, "line longer than the protocol allows");
		if (!r->have_run) {
			(void)run_refuse(r, RUNNER_EXIT_USAGE, "run message too long");
			event_base_loopbreak(r->base);
		} else
			run_stop(r, "failed");
	}
}

/*
 * The daemon is gone (its pipe or its control connection closed). With a control
 * socket the run goes on, held approvals keep waiting for a person (or the budget),
 * and messages wait in the outbox for a restarted daemon; the event says so to it.
 */
static void
run_daemon_gone(struct run *r)
{
	cJSON	*ev;

	if (uplink_detach(r->up))
		log_warn("clockworkd went away: the run goes on, waiting for it to attach");
	if ((ev = run_event(r, "daemon_gone")) != NULL) {
		cJSON_AddBoolToObject(ev, "run_goes_on", uplink_listening(r->up));
		run_emit(r, ev);
	}
}

static void
run_uplink_event(struct bufferevent *bev, short what, void *arg)
{
	struct run	*r = arg;

	if (!(what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)))
		return;
	bufferevent_disable(bev, EV_READ);
	if (!r->awaiting)
		run_daemon_gone(r);
	else
		(void)uplink_detach(r->up);
}

/* A restarted daemon attached through the control socket (uplink.c). */
static void
run_attached(void *arg, struct bufferevent *bev)
{
	struct run	*r = arg;
	cJSON		*m;

	bufferevent_setcb(bev, run_stdin_read, NULL, run_uplink_event, r);
	bufferevent_setwatermark(bev, EV_READ, 0, CW_WIRE_MAX_LINE + 1);
	bufferevent_enable(bev, EV_READ);
	if ((m = run_msg("hello")) != NULL) {
		cJSON_AddNumberToObject(m, "pid", getpid());
		cJSON_AddNumberToObject(m, "pgid", getpgrp());
		cJSON_AddStringToObject(m, "version", CW_VERSION);
		cJSON_AddBoolToObject(m, "reattached", 1);
		cJSON_AddNumberToObject(m, "log_lines_dropped", (double)uplink_dropped(r->up));
		run_emit(r, m);
	}
	bridge_reannounce(r->bridge);
	if (r->proxy != NULL)
		proxy_reannounce(r->proxy);
	/* The budgets as they are now (a person may have extended them), and the question. */
	if (r->budget_wait > 0)
		run_budget_event(r, "budget_state", NULL, NULL);
	if (r->pause_ask != NULL)
		run_emit(r, cJSON_Duplicate(r->pause_ask, 1));
	/* The run was over and waited only for this: its report went with the outbox. */
	if (r->awaiting)
		event_base_loopexit(r->base, NULL);
}

static void
run_stdin_event(struct bufferevent *bev, short what, void *arg)
{
	struct run	*r = arg;

	if (!(what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)))
		return;
	bufferevent_disable(bev, EV_READ);
	if (r->finished)
		return;
	run_daemon_gone(r);
	if (uplink_listening(r->up))
		return;
	/* No way back for a daemon: nobody can answer or watch, so the run ends. */
	log_warn("stdin closed: stopping the run");
	if (!r->have_run) {
		r->finished = 1;
		event_base_loopbreak(r->base);
		return;
	}
	run_stop(r, "stopped");
}

/* ---- starting the engine ----------------------------------------------------------- */

static int
run_token(char *out, size_t outlen)
{
	unsigned char	b[16];
	size_t		i;

	if (outlen < 2 * sizeof b + 1 || getrandom(b, sizeof b, 0) != (ssize_t)sizeof b)
		return -1;
	for (i = 0; i < sizeof b; i++)
		snprintf(out + 2 * i, 3, "%02x", b[i]);
	return 0;
}

/* cw-floor-hook beside our own binary, unless the run message names one. */
static int
run_default_hook(char *out, size_t outlen)
{
	char	self[PATH_MAX], *slash;
	ssize_t	n;

	if ((n = readlink("/proc/self/exe", self, sizeof self - 1)) <= 0)
		return -1;
	self[n] = '\0';
	if ((slash = strrchr(self, '/')) == NULL)
		return -1;
	*slash = '\0';
	if ((size_t)snprintf(out, outlen, "%s/cw-floor-hook", self) >= outlen)
		return -1;
	return 0;
}

static int
run_set_env(struct strlist *env, const char *kv)
{
	size_t	i, nl = strcspn(kv, "=");
	char	*c;

	for (i = 0; i < env->n; i++)
		if (strncmp(env->v[i], kv, nl) == 0 && env->v[i][nl] == '=') {
			if ((c = strdup(kv)) == NULL)
				return -1;
			free(env->v[i]);
			env->v[i] = c;
			return 0;
		}
	return strlist_add(env, kv);
}

static int
run_open_pipe(struct run *r, struct run_pipe *p, const char *name, int fd)
{
	p->run = r;
	p->name = name;
	evutil_make_socket_nonblocking(fd);
	if ((p->bev = bufferevent_socket_new(r->base, fd, BEV_OPT_CLOSE_ON_FREE)) == NULL)
		return -1;
	bufferevent_setcb(p->bev, run_pipe_read, NULL, run_pipe_event, p);
	bufferevent_enable(p->bev, EV_READ);
	return 0;
}

/* What the run message says for the engine: the part prepare() and companion() share. */
static void
run_engine_facts(struct run *r, struct engine_run *o)
{
	memset(o, 0, sizeof *o);
	o->run_id = r->run_id;
	o->prompt = r->prompt;
	o->mode = r->mode;
	o->max_turns = r->budget_turns;
	o->max_dollars = r->budget_dollars;
	/* A budget that pauses is the runner's to keep; the engine keeps the ceiling. */
	if (run_pausable(r, "turns"))
		o->max_turns = 0;
	if (run_pausable(r, "dollars"))
		o->max_dollars = r->max_dollars;
	o->key = r->key;
	o->base_url = r->base_url;
	o->model = r->model;
	o->provider = r->provider;
	o->price = run_price(r);
	o->resume_id = r->resume_id;
	o->resume_fd = r->resume_fd;
}

/*
 * Everything an engine needs before it can start: the floor hook's path (checked by
 * the engines that install it: no hook, no run), the runner's state directory outside
 * the worktree, the run token, the bridge, and then the engine's own prepare().
 */
static int
run_prepare_engine(struct run *r, struct strlist *argv, struct strlist *env,
    struct strlist *files, char *err, size_t errlen)
{
	struct engine_run	o;
	struct bridge_config	bc;
	char			hook[PATH_MAX], dir[PATH_MAX], w[PATH_MAX], s[PATH_MAX];

	if (r->hook_path == NULL) {
		if (run_default_hook(hook, sizeof hook) == -1) {
			snprintf(err, errlen, "cannot locate cw-floor-hook beside cw-runner");
			return -1;
		}
	} else
		snprintf(hook, sizeof hook, "%s", r->hook_path);
	if (r->state_dir != NULL)
		snprintf(dir, sizeof dir, "%s", r->state_dir);
	else if ((size_t)snprintf(dir, sizeof dir, "%s/runs/%s", r->cwhome, r->run_id) >=
	    sizeof dir) {
		snprintf(err, errlen, "state directory path too long");
		return -1;
	}
	if (paths_mkdir_p(dir, 0700) == -1) {
		snprintf(err, errlen, "cannot create state directory %.900s: %s", dir,
		    strerror(errno));
		return -1;
	}
	if (paths_canonical(dir, s, sizeof s) == -1 ||
	    paths_canonical(r->workdir, w, sizeof w) == -1 || paths_within(s, w)) {
		snprintf(err, errlen, "state directory %.900s must exist outside the workdir",
		    dir);
		return -1;
	}
	if (run_token(r->token, sizeof r->token) == -1) {
		snprintf(err, errlen, "getrandom: %s", strerror(errno));
		return -1;
	}
	memset(&bc, 0, sizeof bc);
	bc.run_id = r->run_id;
	bc.token = r->token;
	bc.policy = &r->policy;
	/* A connection idle through a budget pause is not a dead one. */
	bc.hold_seconds = r->budget_seconds + r->budget_wait;
	bc.floor_command = r->ops->floor_command;
	bc.hook_asks = r->ops->hook_asks;
	bc.emit = run_emit_cb;
	bc.arg = r;
	bc.asks = &r->asks;
	/*
	 * Who answers: approvals.ask (the task's, else config.yaml's) in acceptEdits; a
	 * plan-mode run changes nothing unasked, so there every call is asked.
	 */
	bc.ask_set = 1;
	bc.ask = r->mode == NULL || strcmp(r->mode, "acceptEdits") != 0 ?
	    AUTOALLOW_ASK_ALL : r->ask_set ? r->ask : r->cfg.approvals_ask;
	bc.rules = r->rules;
	bc.n_rules = r->n_rules;
	bc.ask_rules = r->ask_rules;
	bc.n_ask_rules = r->n_ask_rules;
	if (r->netns) {
		/* Its socket is made in the run's network namespace (run_start). */
		bc.defer_listen = 1;
		bc.port = EGRESS_BRIDGE_PORT;
	}
	if ((r->bridge = bridge_new(r->base, &bc, err, errlen)) == NULL)
		return -1;
	run_engine_facts(r, &o);
	o.workdir = w;
	o.state_dir = s;
	if ((size_t)snprintf(r->turns_file, sizeof r->turns_file, "%s/%s", s,
	    ENGINE_TURNS_FILE) >= sizeof r->turns_file) {
		snprintf(err, errlen, "state directory path too long");
		return -1;
	}
	if (run_turns_file(r, run_pausable(r, "turns") ? r->budget_turns : 0) == -1) {
		snprintf(err, errlen, "write %.900s: %s", r->turns_file, strerror(errno));
		return -1;
	}
	o.hook_path = hook;
	o.token = r->token;
	o.port = bridge_port(r->bridge);
	/* Hold an approval for the whole budget, and then some, so ours ends it first. */
	o.tool_timeout_ms = ((long)r->budget_seconds + 60) * 1000;
	if ((o.sandboxed = spec_sandbox_enabled(&r->cfg, r->engine, r->sandbox_off)) == -1) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	/* An ordinary call runs unasked only inside the sandbox's promises. */
	bridge_set_sandboxed(r->bridge, o.sandboxed);
	if (r->ops->prepare(&o, argv, env, files, err, errlen) == -1)
		return -1;
	if ((r->stream = r->ops->stream_new()) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (r->ops->stream_prices != NULL)
		r->ops->stream_prices(r->stream, r->have_cfg ? &r->cfg : NULL);
	return 0;
}

/*
 * A limit no layer holds, run anyway (limits.allow_unenforced, or the sandbox off):
 * one sentence in the report's not_enforced, and a warning in the live log.
 */
static int
run_limits_unenforced(struct run *r, const char *what, long processes,
    long long memory, const char *cgwhy, const char *nor)
{
	char	 buf[1536], val[64];

	if (processes > 0)
		snprintf(val, sizeof val, "%ld", processes);
	else
		snprintf(val, sizeof val, "%lld MiB", memory >> 20);
	snprintf(buf, sizeof buf, "limits: %s (%s) not enforced: no cgroup (%s) and no "
	    "rlimit (%s); %s", what, val, cgwhy[0] != '\0' ? cgwhy : "none made", nor,
	    r->cfg.limit_allow_unenforced ? "limits.allow_unenforced: true" :
	    "the sandbox is off");
	if (strlist_add(&r->limit_notes, buf) == -1)
		return -1;
	run_note(r, "WARNING: not enforced: %s", buf);
	return 0;
}

/* Why the rlimit layer cannot hold a limit here (processes: 1), or NULL when it can. */
static const char *
run_limits_no_rlimit(const struct sandbox_spec *spec, int processes, int test_none)
{
	if (test_none)
		return "the rlimit layer is switched off (CW_TEST_LIMITS_NO_LAYER=1, set by "
		    "a test)";
	if (!spec->enabled)
		return "the sandbox is off, so the run has no user or PID namespace of its "
		    "own to count in";
	if (processes && getuid() == 0)
		return "cw-runner runs as root: RLIMIT_NPROC does not bind root, and the "
		    "run has no user namespace of its own";
	if (processes && !runlimits_nproc_per_userns())
		return "this kernel counts RLIMIT_NPROC per user, not per user namespace "
		    "(Linux 5.14 or later is needed)";
	return NULL;
}

/*
 * Hold the run's limits (SPEC R2, U1), each by the first layer that can: the run's own
 * cgroup (root, a delegated cgroup v2 subtree, a cgroup v1 subtree the user owns),
 * else rlimits set in the sandbox child inside the run's user namespace, counted by
 * the runner across the run (runlimits.h). A limit no layer can hold refuses the run
 * (-1, err filled; the caller exits 3) unless the configuration says
 * limits.allow_unenforced: true or the sandbox is off (its own loud opt-out): then the
 * report lists it under not_enforced. -1 with err "out of memory" otherwise.
 */
static int
run_limits_create(struct run *r, const struct sandbox_spec *spec, int *refuse,
    char *err, size_t errlen)
{
	struct strlist	 why = { 0 };
	const char	*cgby, *nor_p, *nor_m, *tn = getenv("CW_TEST_LIMITS_NO_LAYER");
	char		 name[128], cgwhy[1024], miss[160];
	int		 test_none = tn != NULL && strcmp(tn, "1") == 0, rc = -1;
	int		 miss_p = 0, miss_m = 0;
	size_t		 off = 0;

	*refuse = 0;
	snprintf(name, sizeof name, "clockwork-run-%s", r->run_id);
	if (test_none) {
		if (strlist_add(&why, "switched off (CW_TEST_LIMITS_NO_LAYER=1, set by a "
		    "test)") == -1)
			goto nomem;
	} else if (cgroup_run_create(&r->cg, name, r->limit_processes, r->limit_memory,
	    &why) == -1 && errno == ENOMEM)
		goto nomem;
	cgwhy[0] = '\0';
	for (size_t i = 0; i < why.n && off < sizeof cgwhy; i++)
		off += (size_t)snprintf(cgwhy + off, sizeof cgwhy - off, "%s%s", i ? "; " : "",
		    why.v[i]);
	cgby = r->cg.version == 2 ? "cgroup v2" : "cgroup v1";
	nor_p = run_limits_no_rlimit(spec, 1, test_none);
	nor_m = run_limits_no_rlimit(spec, 0, test_none);
	if (r->limit_processes > 0) {
		if (r->cg.pids_max > 0)
			r->procs_by = cgby;
		else if (nor_p == NULL) {
			r->rl.nproc = r->limit_processes;
			r->procs_by = "rlimit";
		} else {
			r->procs_by = "none";
			miss_p = 1;
		}
	}
	if (r->limit_memory > 0) {
		if (r->cg.mem_max > 0)
			r->mem_by = cgby;
		else if (nor_m == NULL) {
			r->rl.data = r->limit_memory;
			r->mem_by = "rlimit";
		} else {
			r->mem_by = "none";
			miss_m = 1;
		}
	}
	if (miss_p || miss_m) {
		snprintf(miss, sizeof miss, "%s%s%s", miss_p ? "processes" : "",
		    miss_p && miss_m ? " and " : "", miss_m ? "memory" : "");
		if (!r->cfg.limit_allow_unenforced && spec->enabled) {
			snprintf(err, errlen, "limits: no layer can hold this run's %s limit "
			    "(cgroup: %s; rlimit: %s); `cwctl doctor` shows what this machine "
			    "is missing and how to fix it (for a normal user: a delegated cgroup, "
			    "systemd-run --user --scope -p Delegate=yes clockworkd), or set "
			    "limits.allow_unenforced: true in config.yaml to run without them",
			    miss, cgwhy[0] != '\0' ? cgwhy : "none made",
			    miss_p ? nor_p : nor_m);
			*refuse = 1;
			goto out;
		}
		if (miss_p && run_limits_unenforced(r, "processes", r->limit_processes, 0,
		    cgwhy, nor_p) == -1)
			goto nomem;
		if (miss_m && run_limits_unenforced(r, "memory", 0, r->limit_memory, cgwhy,
		    nor_m) == -1)
			goto nomem;
	}
	if ((r->rl.nproc > 0 || r->rl.data > 0) && cgwhy[0] != '\0')
		run_note(r, "limits: no cgroup holds %s%s%s (%s): the rlimit layer does",
		    r->rl.nproc > 0 ? "processes" : "", r->rl.nproc > 0 && r->rl.data > 0 ?
		    " and " : "", r->rl.data > 0 ? "memory" : "", cgwhy);
	rc = 0;
	goto out;
nomem:
	snprintf(err, errlen, "out of memory");
out:
	strlist_free(&why);
	return rc;
}

/* Build the spec, start the engine in the sandbox, arm the budget. -1: refused. */
/* Where a restarted daemon finds this run (uplink.c); without it the run ends with it. */
static void
run_control_socket(struct run *r)
{
	char	 dir[PATH_MAX], path[PATH_MAX], err[PATH_MAX + 128];

	err[0] = '\0';
	if ((size_t)snprintf(dir, sizeof dir, "%s/runs", r->cwhome) >= sizeof dir ||
	    paths_mkdir_p(dir, 0700) == -1)
		snprintf(err, sizeof err, "%s: %s", dir, strerror(errno));
	else if ((size_t)snprintf(path, sizeof path, "%s/%s.sock", dir, r->run_id) >=
	    sizeof path)
		snprintf(err, sizeof err, "path too long");
	else
		(void)uplink_listen(r->up, path, run_attached, r, err, sizeof err);
	if (!uplink_listening(r->up))
		run_note(r, "no control socket (%s): if clockworkd goes away, this run ends "
		    "with it", err);
}

/* The egress proxy with the run's rules (its socket comes from the namespace). */
static int
run_egress(struct run *r, char *err, size_t errlen)
{
	struct proxy_config	 pc;
	struct netrule		*rules = NULL;
	size_t			 n = 0;
	cJSON			*ev, *list;

	if (egress_rules(&r->cfg, r->engine, r->base_url, &r->net_allow, &rules, &n, err,
	    errlen) == -1)
		return -1;
	memset(&pc, 0, sizeof pc);
	pc.run_id = r->run_id;
	pc.rules = rules;
	pc.n_rules = n;
	pc.idle_seconds = r->budget_seconds + r->budget_wait;
	pc.ask = r->net_ask;
	pc.hold_seconds = r->budget_seconds;
	pc.emit = run_emit_cb;
	pc.arg = r;
	pc.asks = &r->asks;
	r->proxy = proxy_new(r->base, &pc, err, errlen);
	if (r->proxy != NULL && (ev = run_event(r, "network_policy")) != NULL) {
		cJSON_AddStringToObject(ev, "mode", "allowlist");
		cJSON_AddBoolToObject(ev, "ask", r->net_ask);
		if ((list = cJSON_AddArrayToObject(ev, "allow")) != NULL)
			for (size_t i = 0; i < n; i++)
				cJSON_AddItemToArray(list, cJSON_CreateString(rules[i].text));
		run_emit(r, ev);
	}
	free(rules);
	return r->proxy != NULL ? 0 : -1;
}

static int
run_start(struct run *r)
{
	struct spec_context	 ctx;
	struct sandbox_spec	 spec;
	struct sandbox_launch	 l;
	struct strlist		 argv = { 0 }, env = { 0 }, files = { 0 };
	struct timeval		 tv;
	char			 err[1024], cfgpath[PATH_MAX], *kv, **cargv = NULL;
	int			 outp[2] = { -1, -1 }, errp[2] = { -1, -1 };
	int			 toolsv[2] = { -1, -1 };
	int			 refused = 0, rc = -1, code = RUNNER_EXIT_FAILURE;
	int			 lfds[2] = { -1, -1 };
	struct sockaddr_in	 lsin[2];
	size_t			 i;
	cJSON			*ev;

	memset(&spec, 0, sizeof spec);
	err[0] = '\0';
	if (paths_home(r->home, sizeof r->home) == -1 ||
	    paths_clockwork_home(r->cwhome, sizeof r->cwhome) == -1) {
		snprintf(err, sizeof err, "cannot find HOME or the Clockwork home: %s",
		    strerror(errno));
		goto refuse;
	}
	if (config_default_path(cfgpath, sizeof cfgpath) == -1 ||
	    config_load(cfgpath, 0, &r->cfg, err, sizeof err) == -1)
		goto refuse;
	r->have_cfg = 1;
	if (asklimit_init(&r->asks, r->cfg.approvals_max_per_run,
	    r->cfg.approvals_per_minute) == -1) {
		snprintf(err, sizeof err, "approval limits: %s", strerror(errno));
		goto refuse;
	}
	run_control_socket(r);
	r->policy.protected_branches = r->cfg.protected_branches.n > 0 ?
	    &r->cfg.protected_branches : NULL;
	r->policy.home = r->home;
	r->policy.cwhome = r->cwhome;
	r->policy.worktree = r->workdir;
	r->policy.rules = r->cfg.rules;
	r->policy.n_rules = r->cfg.n_rules;

	memset(&ctx, 0, sizeof ctx);
	ctx.workdir = r->workdir;
	ctx.engine = r->engine;
	ctx.home = r->home;
	ctx.cwhome = r->cwhome;
	ctx.run_id = r->run_id;
	ctx.cache_scope = r->cache_scope[0] != '\0' ? r->cache_scope : NULL;
	ctx.context_ro = r->context;
	ctx.git_objects = r->git_objects;
	ctx.sandbox_off = r->sandbox_off;
	if (r->resume_id != NULL && run_resume_open(r, err, sizeof err) == -1) {
		code = RUNNER_EXIT_REFUSED;
		goto refuse;
	}
	ctx.resume_id = r->resume_id;
	ctx.resume_fd = r->resume_fd;
	if (spec_build(&ctx, &r->cfg, &spec, err, sizeof err) == -1) {
		code = RUNNER_EXIT_REFUSED;
		goto refuse;
	}
	/* SPEC N1: a network namespace of its own unless the sandbox or the policy is off. */
	r->netns = spec.enabled && !spec.net_open;
	if (r->ops != NULL) {
		if (run_cost_check(r) == -1)
			goto nomem;
		/* Without its hook and bridge the floor is not in place: nothing runs. */
		if (run_prepare_engine(r, &argv, &env, &files, err, sizeof err) == -1) {
			code = RUNNER_EXIT_REFUSED;
			goto refuse;
		}
	} else {
		for (i = 0; i < r->argv.n; i++)
			if (strlist_add(&argv, r->argv.v[i]) == -1)
				goto nomem;
		if (r->prompt != NULL) {
			if (asprintf(&kv, "CW_PROMPT=%s", r->prompt) == -1)
				goto nomem;
			i = (size_t)strlist_add(&env, kv);
			free(kv);
			if (i != 0)
				goto nomem;
		}
	}
	if (asprintf(&kv, "CW_RUN_ID=%s", r->run_id) == -1)
		goto nomem;
	i = (size_t)strlist_add(&env, kv);
	free(kv);
	if (i != 0)
		goto nomem;

	/* The run's own variables go on top of the allowlisted environment. */
	for (i = 0; i < r->env.n; i++)
		if (run_set_env(&spec.env, r->env.v[i]) == -1)
			goto nomem;
	for (i = 0; i < env.n; i++)
		if (run_set_env(&spec.env, env.v[i]) == -1)
			goto nomem;
	if (r->netns && (run_egress(r, err, sizeof err) == -1 ||
	    egress_env(&spec.env) == -1)) {
		code = RUNNER_EXIT_REFUSED;
		if (err[0] == '\0')
			snprintf(err, sizeof err, "out of memory");
		goto refuse;
	}
	/* The engine reads its settings and runs the hook; it must never rewrite them. */
	for (i = 0; i < files.n; i++)
		if (strlist_add_unique(&spec.read_files, files.v[i]) == -1)
			goto nomem;
	if ((cargv = calloc(argv.n + 1, sizeof *cargv)) == NULL)
		goto nomem;
	for (i = 0; i < argv.n; i++)
		cargv[i] = argv.v[i];
	if (!spec.enabled || r->sandbox_off) {
		/* SPEC S7: the escape hatch is loud, in the live log and as an event. */
		run_note(r, "WARNING: CW_SANDBOX=off: this run is NOT sandboxed; the engine "
		    "runs with every permission of your user");
		if ((ev = run_event(r, "sandbox_disabled")) != NULL) {
			cJSON_AddStringToObject(ev, "by", "CW_SANDBOX=off");
			run_emit(r, ev);
		}
	}

	if (spec.enabled && spec.net_open) {
		/* SPEC N1's opt-out is as loud as CW_SANDBOX=off. */
		run_note(r, "WARNING: network: open: this run has no network namespace and "
		    "no egress proxy; it can reach any host, and every service on this "
		    "machine's loopback and LAN");
		if ((ev = run_event(r, "network_open")) != NULL) {
			cJSON_AddStringToObject(ev, "by", "config: network: open");
			run_emit(r, ev);
		}
	}
	if (pipe2(outp, O_CLOEXEC) == -1 || pipe2(errp, O_CLOEXEC) == -1) {
		snprintf(err, sizeof err, "pipe: %s", strerror(errno));
		goto refuse;
	}
	/* byok: the sandboxed tool host's stdin is a socket to the agent outside. */
	if (r->ops != NULL && r->ops->companion != NULL &&
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, toolsv) == -1) {
		snprintf(err, sizeof err, "socketpair: %s", strerror(errno));
		goto refuse;
	}
	memset(&l, 0, sizeof l);
	l.argv = cargv;
	l.cwd = NULL;
	l.fd_in = toolsv[1];
	l.fd_out = outp[1];
	l.fd_err = errp[1];
	l.new_session = 1;
	/*
	 * The run's cgroup, which its PID 1 joins before anything of the run runs, or
	 * its rlimits, set at the same step.
	 */
	if ((r->limit_processes > 0 || r->limit_memory > 0) &&
	    run_limits_create(r, &spec, &refused, err, sizeof err) == -1) {
		if (refused)
			code = RUNNER_EXIT_REFUSED;
		goto refuse;
	}
	if (r->cg.version > 0)
		l.cgroup = &r->cg;
	if (r->rl.nproc > 0 || r->rl.data > 0)
		l.rlimits = &r->rl;
	if (r->netns) {
		/* The bridge and the proxy listen inside; the runner serves them from here. */
		memset(lsin, 0, sizeof lsin);
		for (i = 0; i < 2; i++) {
			lsin[i].sin_family = AF_INET;
			lsin[i].sin_addr.s_addr = htonl(INADDR_LOOPBACK);
			lsin[i].sin_port = htons(i == 0 ? EGRESS_PROXY_PORT : EGRESS_BRIDGE_PORT);
		}
		l.listen = lsin;
		l.n_listen = r->bridge != NULL ? 2 : 1;
		l.listen_fds = lfds;
	}
	clock_gettime(CLOCK_MONOTONIC, &r->t0);
	/* byok: the agent first, so the run's facts are queued for it before the tools. */
	if (toolsv[0] != -1) {
		rc = run_companion(r, toolsv[0], toolsv[1], outp[1], errp[1], err,
		    sizeof err);
		close(toolsv[0]);
		toolsv[0] = -1;
		if (rc == -1) {
			code = RUNNER_EXIT_REFUSED;
			r->t0.tv_sec = r->t0.tv_nsec = 0;
			goto refuse;
		}
	}
	r->pid = apply_sandbox(&spec, &l, &r->sreport, &refused, err, sizeof err);
	r->sreport_set = 1;
	cgroup_run_close_join(&r->cg);
	close(outp[1]);
	close(errp[1]);
	outp[1] = errp[1] = -1;
	if (r->pid == -1) {
		r->pid = 0;
		code = RUNNER_EXIT_REFUSED;
		r->t0.tv_sec = r->t0.tv_nsec = 0;
		goto refuse;
	}
	if (r->netns && (lfds[0] == -1 || (r->bridge != NULL && lfds[1] == -1) ||
	    proxy_adopt(r->proxy, lfds[0], err, sizeof err) == -1 ||
	    (r->bridge != NULL && bridge_adopt(r->bridge, lfds[1], err, sizeof err) == -1))) {
		if (err[0] == '\0' || lfds[0] == -1)
			snprintf(err, sizeof err, "network namespace: the listeners were not "
			    "handed over");
		goto refuse;
	}
	if (run_open_pipe(r, &r->out, "stdout", outp[0]) == -1 ||
	    run_open_pipe(r, &r->err, "stderr", errp[0]) == -1)
		goto nomem;
	outp[0] = errp[0] = -1;
	if ((ev = run_event(r, "engine_started")) != NULL) {
		cJSON_AddStringToObject(ev, "engine", r->engine);
		cJSON_AddNumberToObject(ev, "pid", r->pid);
		cJSON_AddNumberToObject(ev, "pgid", r->pid);
		cJSON_AddBoolToObject(ev, "sandboxed", r->sreport.sandboxed);
		cJSON_AddNumberToObject(ev, "landlock_abi", r->sreport.landlock_abi);
		if (r->bridge != NULL)
			cJSON_AddNumberToObject(ev, "bridge_port", bridge_port(r->bridge));
		run_emit(r, ev);
	}
	tv.tv_sec = r->budget_seconds;
	tv.tv_usec = 0;
	event_add(r->ev_budget, &tv);
	if (r->cg.pids_max > 0 || r->cg.mem_max > 0 || r->rl.nproc > 0 || r->rl.data > 0) {
		tv.tv_sec = 0;
		tv.tv_usec = RUN_LIMITS_POLL_MS * 1000;
		event_add(r->ev_limits, &tv);
	}
	/* The seal at the end runs in this same sandbox. */
	r->spec = spec;
	r->have_spec = 1;
	memset(&spec, 0, sizeof spec);
	rc = 0;
	goto out;
nomem:
	snprintf(err, sizeof err, "out of memory");
refuse:
	if (r->pid > 0) {
		/* Started but cannot be watched: end it, and report a failure. */
		run_kill_group(r, SIGKILL);
		r->reason = "failed";
		snprintf(r->error, sizeof r->error, "%s", err);
		r->stopping = 1;
		rc = -1;
		goto out;
	}
	if (r->companion > 0) {
		(void)kill(r->companion, SIGKILL);
		while (waitpid(r->companion, NULL, 0) == -1 && errno == EINTR)
			;
		r->companion = 0;
	}
	/* Refused after the spec made its TMPDIR (an engine's prepare() said no): it goes. */
	if (spec.tmpdir != NULL)
		run_remove_tmpdir(r, 0);
	(void)run_refuse(r, code, "%s", err);
	rc = -1;
out:
	if (toolsv[0] != -1)
		close(toolsv[0]);
	if (toolsv[1] != -1)
		close(toolsv[1]);
	if (outp[0] != -1)
		close(outp[0]);
	if (errp[0] != -1)
		close(errp[0]);
	if (outp[1] != -1)
		close(outp[1]);
	if (errp[1] != -1)
		close(errp[1]);
	strlist_free(&argv);
	strlist_free(&env);
	strlist_free(&files);
	spec_free(&spec);
	free(cargv);
	return rc;
}

/* ---- main -------------------------------------------------------------------------- */

/* The price of the run's model: config.yaml's prices:, else the built-in table; or NULL. */
static const double *
run_price(struct run *r)
{
	return prices_find(r->have_cfg ? &r->cfg : NULL, r->model, NULL);
}

/*
 * byok counts its spend from the model's price. With none, the run still runs (issue
 * 23): its cost is shown as unknown, and only its dollar budget is refused, in the
 * report's not_enforced and the live log, naming the model and the key that would
 * price it. The turn and time budgets hold as ever.
 */
static int
run_cost_check(struct run *r)
{
	char	buf[1800];

	if (r->model == NULL || r->model[0] == '\0' || run_price(r) != NULL)
		return 0;
	/*
	 * Claude Code prices its model itself: where the runner cannot, the dollar
	 * budget stays Claude Code's own --max-budget-usd, which ends the run at the
	 * budget instead of pausing it (run_pausable, run_engine_facts).
	 */
	if (strcmp(r->engine, "claude") == 0 && r->budget_dollars > 0 &&
	    r->budget_wait > 0) {
		r->dollars_by_engine = 1;
		snprintf(buf, sizeof buf, "budget: the dollar budget ($%.2f) cannot pause: "
		    "model '%.200s' has no price (neither prices.%.200s in config.yaml nor "
		    "the built-in table, checked %s), so the runner cannot count its cost; "
		    "Claude Code's own --max-budget-usd ends the run at the budget instead. "
		    "Add prices.%.200s to config.yaml to have it pause", r->budget_dollars,
		    r->model, r->model, PRICES_TABLE_DATE, r->model);
		if (strlist_add(&r->limit_notes, buf) == -1)
			return -1;
		run_note(r, "WARNING: %s", buf);
		return 0;
	}
	if (strcmp(r->engine, "byok") != 0)
		return 0;
	snprintf(r->cost_unknown, sizeof r->cost_unknown, "model '%.200s' has no price: "
	    "neither prices.%.200s in config.yaml nor the built-in table (checked %s) "
	    "has one", r->model, r->model, PRICES_TABLE_DATE);
	if (r->budget_dollars <= 0) {
		run_note(r, "cost unknown: %s", r->cost_unknown);
		return 0;
	}
	snprintf(buf, sizeof buf, "budget: the dollar budget ($%.2f) is refused: %s, so "
	    "no dollar budget can hold; add prices.%.200s (input and output, $ per million "
	    "tokens) to config.yaml to have one. The run goes on under its turn and time "
	    "budgets, its cost unknown", r->budget_dollars, r->cost_unknown, r->model);
	if (strlist_add(&r->limit_notes, buf) == -1)
		return -1;
	run_note(r, "WARNING: %s", buf);
	r->budget_dollars = 0;
	return 0;
}

/*
 * byok: start the engine's loop outside the sandbox with the key, then forget the key
 * here: from now on only the agent holds it.
 */
static int
run_companion(struct run *r, int tools, int peer, int out, int errfd, char *err,
    size_t errlen)
{
	struct engine_run	o;

	run_engine_facts(r, &o);
	r->companion = r->ops->companion(&o, tools, peer, out, errfd, err, errlen);
	if (r->key != NULL)
		explicit_bzero(r->key, strlen(r->key));
	return r->companion > 0 ? 0 : -1;
}

static void
run_free(struct run *r)
{
	char	*m;
	size_t	 ml;

	/* What the detached log held back (a key cut off by the end), masked. */
	if (r->detached_mask != NULL) {
		if ((m = maskstream_end(r->detached_mask, &ml)) != NULL) {
			(void)!write(STDERR_FILENO, m, ml);
			free(m);
		}
		maskstream_free(r->detached_mask);
		r->detached_mask = NULL;
	}
	if (r->in != NULL)
		bufferevent_free(r->in);
	if (r->out.bev != NULL)
		bufferevent_free(r->out.bev);
	if (r->err.bev != NULL)
		bufferevent_free(r->err.bev);
	bridge_free(r->bridge);
	proxy_free(r->proxy);
	strlist_free(&r->net_allow);
	free(r->rules);
	free(r->ask_rules);
	uplink_free(r->up);
	if (r->ev_chld != NULL)
		event_free(r->ev_chld);
	if (r->ev_term != NULL)
		event_free(r->ev_term);
	if (r->ev_int != NULL)
		event_free(r->ev_int);
	if (r->ev_budget != NULL)
		event_free(r->ev_budget);
	if (r->ev_kill != NULL)
		event_free(r->ev_kill);
	if (r->ev_drain != NULL)
		event_free(r->ev_drain);
	if (r->ev_soft != NULL)
		event_free(r->ev_soft);
	if (r->ev_limits != NULL)
		event_free(r->ev_limits);
	if (r->ev_pause != NULL)
		event_free(r->ev_pause);
	budgetpause_free(&r->pause);
	cJSON_Delete(r->pause_ask);
	cJSON_Delete(r->pauses);
	if (r->base != NULL)
		event_base_free(r->base);
	if (r->have_cfg)
		config_free(&r->cfg);
	asklimit_free(&r->asks);
	if (r->sreport_set)
		sandbox_report_free(&r->sreport);
	if (r->key != NULL)
		explicit_bzero(r->key, strlen(r->key));
	free(r->run_id);
	free(r->task);
	free(r->engine);
	free(r->prompt);
	free(r->workdir);
	free(r->mode);
	free(r->key);
	free(r->base_url);
	free(r->provider);
	free(r->model);
	if (r->stream != NULL)
		r->ops->stream_free(r->stream);
	engine_progress_free(&r->usage);
	free(r->state_dir);
	free(r->hook_path);
	free(r->resume_run);
	free(r->resume_id);
	if (r->resume_fd != -1)
		close(r->resume_fd);
	free(r->git_branch);
	free(r->git_base);
	seal_result_free(&r->seal);
	free(r->git_objects);
	if (r->have_spec)
		spec_free(&r->spec);
	strlist_free(&r->argv);
	strlist_free(&r->context);
	strlist_free(&r->env);
	strlist_free(&r->limit_notes);
	cgroup_run_close_join(&r->cg);
}

/*
 * Every process of the run is gone: its private TMPDIR goes too. While one survives,
 * the directory stays (it could still reshape it under the unsandboxed runner), and
 * the log and the report say so.
 */
static void
run_remove_tmpdir(struct run *r, size_t survivors)
{
	char	 dir[PATH_MAX], err[PATH_MAX + 128];

	if (r->run_id == NULL || r->cwhome[0] == '\0')
		return;
	if ((size_t)snprintf(dir, sizeof dir, "%s/tmp/%s", r->cwhome, r->run_id) >= sizeof dir)
		return;
	if (spec_remove_tmpdir(dir, r->cwhome, survivors, err, sizeof err) == -1) {
		snprintf(r->tmpdir_left, sizeof r->tmpdir_left, "%s", err);
		run_note(r, "the run's TMPDIR was left in place: %s", err);
	}
}

/*
 * A repository run's work is committed and bundled in its own sandbox once every
 * process of the run is gone (seal.c); the daemon imports the bundle. A run that never
 * started has nothing to seal.
 */
static void
run_seal(struct run *r)
{
	if (r->git_branch == NULL || !r->have_spec || r->pid <= 0)
		return;
	if (seal_run(&r->spec, r->cg.version != 0 ? &r->cg : NULL, r->git_branch,
	    r->git_base, r->run_id, r->seal_keep_outputs, &r->seal, r->seal_error,
	    sizeof r->seal_error) == -1) {
		r->seal_done = -1;
		run_note(r, "%s", r->seal_error);
		return;
	}
	r->seal_done = 1;
	if (r->seal.committed)
		run_note(r, "work left uncommitted was committed on %s as %s",
		    r->git_branch, r->seal.tip);
	if (r->seal.skip.files > 0)
		run_note(r, "left out of the commit: %zu build output file(s) in %zu "
		    "place(s), first %s (a task commits them with keep_build_outputs)",
		    r->seal.skip.files, r->seal.skip.n, r->seal.skip.v[0].path);
	if (r->seal.skip_error[0] != '\0')
		run_note(r, "seal: %s", r->seal.skip_error);
}

/* The engine has ended (or never watched): end every descendant, then report. */
static int
run_finish(struct run *r)
{
	char	err[PATH_MAX + 128];
	int	st = 0, reaped = 0, code;
	size_t	survivors = 0;

	if (r->bridge != NULL)
		bridge_expire(r->bridge, "the run ended before an answer came", "stopped");
	if (r->companion > 0) {
		(void)kill(r->companion, SIGKILL);
		while (waitpid(r->companion, NULL, 0) == -1 && errno == EINTR)
			;
		r->companion = 0;
	}
	/* A limit hit just before the engine ended is still the reason it ended. */
	run_limits_check(r);
	if (proc_kill_tree(CW_RUN_KILL_GRACE_MS, r->exited ? 0 : r->pid, &st, &reaped,
	    &r->cg, &survivors, err, sizeof err) == -1)
		run_note(r, "could not end every process of the run: %s", err);
	if (!r->exited && reaped) {
		r->exited = 1;
		r->status = st;
	}
	run_limits_check(r);
	/*
	 * The seal runs in the run's own cgroup (its limits hold for git too), and only
	 * when nothing of the run survived: a survivor could change the work under it.
	 */
	if (survivors == 0)
		run_seal(r);
	else if (r->git_branch != NULL) {
		r->seal_done = -1;
		snprintf(r->seal_error, sizeof r->seal_error, "seal: not attempted, %zu "
		    "process(es) of the run survived", survivors);
		run_note(r, "%s", r->seal_error);
	}
	if (cgroup_run_remove(&r->cg, RUN_CGROUP_REMOVE_MS, err, sizeof err) == -1)
		run_note(r, "the run's cgroup was left: %s", err);
	/* Like the seal: only once nothing of the run can change the home under us. */
	if (r->conv_keep && survivors == 0)
		run_keep(r);
	else if (r->conv_keep) {
		r->conv_kept = -1;
		snprintf(r->conv_error, sizeof r->conv_error, "not kept: %zu process(es) "
		    "of the run survived", survivors);
	}
	run_remove_tmpdir(r, survivors);
	if (r->ops != NULL)
		run_check_usage(r);
	if (r->reason == NULL) {
		if (r->exited && WIFEXITED(r->status) && WEXITSTATUS(r->status) == 0 &&
		    !(r->usage.have_result && r->usage.is_error))
			r->reason = "completed";
		else
			r->reason = "failed";
	}
	code = strcmp(r->reason, "completed") == 0 ? RUNNER_EXIT_OK : RUNNER_EXIT_FAILURE;
	run_report(r, strcmp(r->reason, "completed") == 0 ? "succeeded" :
	    strcmp(r->reason, "failed") == 0 || strncmp(r->reason, "limit_", 6) == 0 ?
	    "failed" : "stopped");
	r->finished = 1;
	return code;
}

int
runner_cmd_run(int argc, char **argv)
{
	struct run	 r;
	const char	*sb;
	cJSON		*m;
	char		 cgerr[PATH_MAX + 64];
	int		 code = RUNNER_EXIT_FAILURE;

	if (argc != 1) {
		fprintf(stderr, "usage: cw-runner run < run.jsonl\n");
		return RUNNER_EXIT_USAGE;
	}
	memset(&r, 0, sizeof r);
	r.resume_fd = -1;
	cgroup_run_init(&r.cg);
	log_init("cw-runner", LOG_INFO, 1);
	signal(SIGPIPE, SIG_IGN);
	if (proc_subreaper() == -1) {
		fprintf(stderr, "cw-runner run: PR_SET_CHILD_SUBREAPER: %s\n",
		    strerror(errno));
		return RUNNER_EXIT_FAILURE;
	}
	if ((r.base = event_base_new()) == NULL ||
	    (r.up = uplink_new(r.base, STDOUT_FILENO)) == NULL ||
	    (r.in = bufferevent_socket_new(r.base, STDIN_FILENO, 0)) == NULL ||
	    (r.ev_chld = evsignal_new(r.base, SIGCHLD, run_chld_cb, &r)) == NULL ||
	    (r.ev_term = evsignal_new(r.base, SIGTERM, run_signal_cb, &r)) == NULL ||
	    (r.ev_int = evsignal_new(r.base, SIGINT, run_signal_cb, &r)) == NULL ||
	    (r.ev_budget = evtimer_new(r.base, run_budget_cb, &r)) == NULL ||
	    (r.ev_kill = evtimer_new(r.base, run_kill_cb, &r)) == NULL ||
	    (r.ev_drain = evtimer_new(r.base, run_drain_cb, &r)) == NULL ||
	    (r.ev_soft = evtimer_new(r.base, run_soft_cb, &r)) == NULL ||
	    (r.ev_limits = event_new(r.base, -1, EV_PERSIST, run_limits_cb, &r)) == NULL ||
	    (r.ev_pause = evtimer_new(r.base, run_pause_cb, &r)) == NULL) {
		fprintf(stderr, "cw-runner run: cannot set up the event loop\n");
		run_free(&r);
		return RUNNER_EXIT_FAILURE;
	}
	event_add(r.ev_chld, NULL);
	event_add(r.ev_term, NULL);
	event_add(r.ev_int, NULL);
	bufferevent_setcb(r.in, run_stdin_read, NULL, run_stdin_event, &r);
	/* Reading stops at CW_WIRE_MAX_LINE + 1 so an endless line cannot eat memory. */
	bufferevent_setwatermark(r.in, EV_READ, 0, CW_WIRE_MAX_LINE + 1);
	bufferevent_enable(r.in, EV_READ);

	if ((m = run_msg("hello")) != NULL) {
		cJSON_AddNumberToObject(m, "pid", getpid());
		cJSON_AddNumberToObject(m, "pgid", getpgrp());
		cJSON_AddStringToObject(m, "version", CW_VERSION);
		run_emit(&r, m);
	}
	sb = getenv("CW_SANDBOX");
	r.sandbox_off = sb != NULL && strcmp(sb, "off") == 0;

	event_base_dispatch(r.base);

	if (r.finished)
		code = r.code;	/* refused: the report is out already */
	else if (r.have_run)
		code = run_finish(&r);
	/*
	 * What is still on its way to the daemon (the report among it) goes now, a
	 * bounded time: the loop that wrote it as the daemon took it has ended.
	 */
	(void)uplink_flush(r.up, UPLINK_WRITE_TIMEOUT_MS);
	/* A run refused after its cgroup was made: nothing of it ever ran in it. */
	(void)cgroup_run_remove(&r.cg, RUN_CGROUP_REMOVE_MS, cgerr, sizeof cgerr);
	/*
	 * Over while no daemon was attached: the report waits in the outbox (and in its
	 * file, run_report_file) for a restarted daemon, a bounded time.
	 */
	if (r.have_run && !uplink_attached(r.up) && uplink_listening(r.up)) {
		struct timeval	tv = { RUN_REATTACH_WAIT_S, 0 };

		r.awaiting = 1;
		log_info("the run is over; waiting up to %d s for clockworkd to take its "
		    "report", RUN_REATTACH_WAIT_S);
		event_base_loopexit(r.base, &tv);
		event_base_dispatch(r.base);
		(void)uplink_flush(r.up, UPLINK_WRITE_TIMEOUT_MS);
	}
	run_free(&r);
	return code;
}
