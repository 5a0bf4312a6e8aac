/*
 * The run manager (SPEC D3, W1). A queued run lives only in the store; when a slot is
 * free it gets a worktree (or a scratch directory), a live log and one cw-runner child
 * in its own process group, spoken to only over its stdin and stdout in JSON lines
 * (common/wire.h). Every message the runner sends up is checked for size and shape
 * before use; a malformed one is a protocol error that ends that run, never the daemon.
 *
 * Ending a run: a stop line down the pipe and SIGTERM to the runner's group, then,
 * after the grace period, SIGKILL to every process the run ever had (supervise.c). The
 * daemon's own wall-clock timer fires budget_seconds plus a grace after the start, so
 * a runner that hangs is still ended. When the runner has been reaped and its stdout
 * is closed, whatever is left of its tree is killed, and the report is written.
 */
#define _GNU_SOURCE
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <sqlite3.h>

#include "asklimit.h"
#include "bus.h"
#include "clock.h"
#include "config.h"
#include "conversation.h"
#include "daemon.h"
#include "diskguard.h"
#include "engines.h"
#include "gc.h"
#include "jobs.h"
#include "jobsgit.h"
#include "journal.h"
#include "json.h"
#include "keys.h"
#include "log.h"
#include "mask.h"
#include "maskstream.h"
#include "parsechild.h"
#include "paths.h"
#include "procid.h"
#include "proctree.h"
#include "record.h"
#include "recover.h"
#include "runbranch.h"
#include "runimport.h"
#include "runs.h"
#include "sha256.h"
#include "spawnchild.h"
#include "store.h"
#include "strlist.h"
#include "supervise.h"
#include "transcript.h"
#include "transcripts.h"
#include "wire.h"
#include "wiremsg.h"
#include "worktree.h"

extern char **environ;

/*
 * Variables a runner may inherit; anything else, keys included, stays behind.
 * CW_TEST_LIMITS_NO_LAYER=1 (tests only) makes the runner find no layer for a run's
 * limits: it can only refuse runs, never weaken one the user did not opt out of.
 */
static const char *const runs_env_allow[] = {
	"PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TZ", "USER",
	"LOGNAME", "SHELL", "TERM", "TMPDIR", "CW_SANDBOX", "CW_TEST_LIMITS_NO_LAYER",
};

/* Event kinds that also go to the safety journal. */
static const char *const runs_journal_kinds[] = {
	"floor_deny", "rule_deny", "floor_hit", "deny_list_hit", "policy_deny",
	"sandbox_disabled",
	"approval_timeout", "approval_expired", "approval_limit", "bridge_limit",
	"limit_exceeded", "net_deny", "network_open", "budget_paused", "budget_resumed",
	"auto_allow", "task_rule_added",
};

static void	runs_free(struct run *);
static void	runs_read_cb(struct bufferevent *, void *);

static void
runs_elapsed(const struct run *r, double *secs)
{
	*secs = (double)(clock_mono_ms() - r->t0_ms) / 1000.0;
}

/* A line of the daemon's own in the run's live log, marked as such. */
void
runs_log_line(struct run *r, const char *fmt, ...)
{
	char	buf[1024], *m;
	va_list	ap;
	int	n;

	if (r->log_fd == -1)
		return;
	n = snprintf(buf, sizeof buf, "[clockworkd] ");
	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof buf - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof buf - 2)
		n = (int)sizeof buf - 2;
	buf[n] = '\0';
	/* What it says may quote the run (an error, a path): masked like the rest. */
	if ((m = mask_secrets(buf)) == NULL)
		return;
	transcripts_note(r, strncmp(m, "[clockworkd] ", 13) == 0 ? m + 13 : m);
	n = (int)strlen(m);
	m[n++] = '\n';		/* over the NUL: written by length, not as a string */
	/* The daemon's own lines are few and always written, past the cap too. */
	if (write(r->log_fd, m, (size_t)n) == -1)
		log_warn("run %s: cannot write its log: %s", r->id, strerror(errno));
	else
		r->log_bytes += n;
	free(m);
}

/* A line of run output longer than this is cut when written (lines are served whole). */
#define RUNS_LOG_LINE_MAX	(64 * 1024)
#define RUNS_LOG_MARK		"[clockworkd]"
#define RUNS_LOG_FORGED		"[output] "

/*
 * A line of the run's log as written, to the bus: the masked copy that went to the
 * disk ("log" events carry it as the log route serves it).
 */
static void
runs_log_published(struct run *r, const char *text, size_t len)
{
	cJSON	*o;
	char	*t;

	if (r->d->bus == NULL || (t = strndup(text, len)) == NULL)
		return;
	if ((o = cJSON_CreateObject()) != NULL)
		json_add_string(o, "text", t);
	free(t);
	(void)bus_publish(r->d->bus, BUS_LOG, r->task_name, r->id, o);
}

/*
 * Write one line of run output, already masked, to the live log within the run's cap
 * (config run_log_max_bytes). Past the cap the log says so once and the rest is
 * counted, not written; the report carries the count. The line goes out in one
 * write, newline included, so a reader never sees it without its end (the log route
 * serves whole lines only, api.c). Output that starts with the daemon's own mark is
 * tagged so that a run cannot forge a "[clockworkd] run ended" line.
 */
static void
runs_log_write(struct run *r, const char *text, size_t len)
{
	struct iovec	iov[3];
	int		n = 0;
	size_t		need;

	if (len >= strlen(RUNS_LOG_MARK) &&
	    strncmp(text, RUNS_LOG_MARK, strlen(RUNS_LOG_MARK)) == 0) {
		iov[n].iov_base = (void *)RUNS_LOG_FORGED;
		iov[n++].iov_len = strlen(RUNS_LOG_FORGED);
	}
	iov[n].iov_base = (void *)text;
	iov[n++].iov_len = len;
	iov[n].iov_base = (void *)"\n";
	iov[n++].iov_len = 1;
	need = len + 1 + (n == 3 ? strlen(RUNS_LOG_FORGED) : 0);
	if (r->log_dropped > 0 || r->log_bytes + (long)need > r->log_max) {
		if (r->log_dropped == 0)
			runs_log_line(r, "log truncated: the run's output passed its cap of "
			    "%ld bytes (run_log_max_bytes); the rest is not kept", r->log_max);
		r->log_dropped += (long)need;
		return;
	}
	if (writev(r->log_fd, iov, n) == -1) {
		log_warn("run %s: cannot write its log: %s", r->id, strerror(errno));
		return;
	}
	r->log_bytes += (long)need;
	runs_log_published(r, text, len);
}

/*
 * A run's status as just stored, to the bus. task NULL: the live run's, else the
 * store's (a queued or an ended run).
 */
void
runs_status_published(struct daemon *d, const char *run_id, const char *task,
    enum store_run_status status, enum store_exit_reason why)
{
	struct store_task	 t;
	struct store_run	 sr;
	struct run		*r;
	cJSON			*o;
	int			 have_t = 0;

	if (d->bus == NULL)
		return;
	if (task == NULL && (r = runs_find(d, run_id)) != NULL)
		task = r->task_name;
	if (task == NULL && store_run_get(d->store, run_id, &sr) == 1) {
		if (store_task_get(d->store, sr.task_id, &t) == 1) {
			have_t = 1;
			task = t.name;
		}
		store_run_free(&sr);
	}
	if ((o = cJSON_CreateObject()) != NULL) {
		json_add_string(o, "status", store_run_status_name(status));
		if (store_exit_reason_name(why) != NULL)
			json_add_string(o, "exit_reason", store_exit_reason_name(why));
	}
	(void)bus_publish(d->bus, BUS_RUN, task, run_id, o);
	if (have_t)
		store_task_free(&t);
}

/* Write what a log stream gave out, line by line; an unfinished last line too. */
static void
runs_log_write_masked(struct run *r, const char *m, size_t mlen)
{
	const char	*nl;

	while (mlen > 0) {
		if ((nl = memchr(m, '\n', mlen)) == NULL) {
			runs_log_write(r, m, mlen);
			return;
		}
		runs_log_write(r, m, (size_t)(nl - m));
		mlen -= (size_t)(nl - m) + 1;
		m = nl + 1;
	}
}

/*
 * The one place run output (engine or runner) becomes a log record: masked on its
 * stream (stdout, stderr, or the runner's and daemon's notes about the run), then
 * written, so that nothing unmasked reaches the disk or any reader of the log. A
 * secret split over lines (a key block) or cut by a chunk is held back until it can be
 * masked whole (common/maskstream.h). A line the runner cut for length ends where the
 * rest was dropped: its last word, which may be the start of a secret, is not kept.
 */
static void
runs_log_output(struct run *r, int stream, const char *text, size_t len, int cut)
{
	struct maskstream	**ms = &r->log_mask[stream];
	char			 *m;
	size_t			  mlen;

	if (r->log_fd == -1)
		return;
	len = record_cut(text, len, RUNS_LOG_LINE_MAX);
	if (len > 0 && text[len - 1] == '\n')
		len--;
	if (cut)
		len = maskstream_cut_len(text, len);
	if (*ms == NULL && (*ms = maskstream_new()) == NULL) {
		log_warn("run %s: a log line is dropped: out of memory", r->id);
		return;
	}
	/* Dropped, never written unmasked, when memory runs out. */
	if ((m = maskstream_feed(*ms, text, len, &mlen)) != NULL) {
		runs_log_write_masked(r, m, mlen);
		free(m);
	}
	if ((m = maskstream_feed(*ms, "\n", 1, &mlen)) != NULL) {
		runs_log_write_masked(r, m, mlen);
		free(m);
	}
}

/* The end of the run's output, or of this daemon's hold on it: what the streams held. */
static void
runs_log_flush(struct run *r)
{
	char	*m;
	size_t	 mlen;

	for (size_t i = 0; i < sizeof r->log_mask / sizeof r->log_mask[0]; i++) {
		if (r->log_mask[i] == NULL)
			continue;
		if (r->log_fd != -1 && (m = maskstream_end(r->log_mask[i], &mlen)) != NULL) {
			runs_log_write_masked(r, m, mlen);
			free(m);
		}
		maskstream_free(r->log_mask[i]);
		r->log_mask[i] = NULL;
	}
}

#define RUNS_LOGS_MASKED	".logs-masked"	/* in runs/: old logs were masked */

/* Rewrite one ended run's log file masked, through a temporary file and a rename. */
static int
runs_mask_old_log(int dirfd, const char *name)
{
	struct maskstream	*ms;
	char			 tmp[NAME_MAX + 16], buf[64 * 1024], *m;
	size_t			 mlen;
	ssize_t			 n;
	int			 in, out, rc = -1;

	snprintf(tmp, sizeof tmp, ".%s.masking", name);
	if ((in = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return -1;
	(void)unlinkat(dirfd, tmp, 0);
	if ((out = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	    0600)) == -1) {
		close(in);
		return -1;
	}
	if ((ms = maskstream_new()) == NULL)
		goto done;
	for (;;) {
		if ((n = read(in, buf, sizeof buf)) == -1 && errno == EINTR)
			continue;
		if (n < 0)
			goto done;
		m = n > 0 ? maskstream_feed(ms, buf, (size_t)n, &mlen) :
		    maskstream_end(ms, &mlen);
		if (m == NULL)
			goto done;
		if (mlen > 0 && write(out, m, mlen) != (ssize_t)mlen) {
			free(m);
			goto done;
		}
		free(m);
		if (n == 0)
			break;
	}
	if (fsync(out) == 0 && renameat(dirfd, tmp, dirfd, name) == 0)
		rc = 0;
done:
	maskstream_free(ms);
	close(in);
	close(out);
	if (rc == -1)
		(void)unlinkat(dirfd, tmp, 0);
	return rc;
}

/*
 * Once per home: the logs of ended runs that a daemon from before masking at ingest
 * wrote raw are rewritten masked, since the log route now serves the file as it is. A
 * live run's log is left (its runner appends to the file it has open); it is masked
 * from now on only. The store's records are masked by migration 17.
 */
void
runs_mask_old_logs(struct daemon *d)
{
	struct store_run	 sr;
	struct dirent		*de;
	char			 path[PATH_MAX], id[NAME_MAX + 1];
	size_t			 len;
	int			 dirfd, fd, n = 0, failed = 0, terminal;
	DIR			*dir;

	snprintf(path, sizeof path, "%s/runs", d->home);
	if ((dirfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return;
	if (faccessat(dirfd, RUNS_LOGS_MASKED, F_OK, AT_SYMLINK_NOFOLLOW) == 0 ||
	    (fd = dup(dirfd)) == -1 || (dir = fdopendir(fd)) == NULL) {
		close(dirfd);
		return;
	}
	while ((de = readdir(dir)) != NULL) {
		len = strlen(de->d_name);
		if (de->d_name[0] == '.' || len <= 4 || len - 4 >= sizeof id ||
		    strcmp(de->d_name + len - 4, ".log") != 0)
			continue;
		memcpy(id, de->d_name, len - 4);
		id[len - 4] = '\0';
		if (store_run_get(d->store, id, &sr) != 1)
			continue;
		terminal = store_run_status_terminal(sr.status);
		store_run_free(&sr);
		if (!terminal)
			continue;
		if (runs_mask_old_log(dirfd, de->d_name) == 0)
			n++;
		else {
			failed++;
			log_warn("run %s: cannot mask its old log: %s", id, strerror(errno));
		}
	}
	closedir(dir);
	if (failed == 0 && (fd = openat(dirfd, RUNS_LOGS_MASKED, O_WRONLY | O_CREAT |
	    O_NOFOLLOW | O_CLOEXEC, 0600)) != -1)
		close(fd);
	if (n > 0)
		log_info("masked the logs of %d ended run(s) written before masking at ingest",
		    n);
	close(dirfd);
}

/* Which of the run's log streams a runner log line belongs to. */
static int
runs_log_stream(const char *name)
{
	if (name != NULL && strcmp(name, "stdout") == 0)
		return 0;
	if (name != NULL && strcmp(name, "stderr") == 0)
		return 1;
	return 2;
}

struct run *
runs_find(struct daemon *d, const char *id)
{
	struct run	*r;

	TAILQ_FOREACH(r, &d->runs, entry)
		if (strcmp(r->id, id) == 0)
			return r;
	return NULL;
}

int
runs_send(struct run *r, cJSON *msg)
{
	char	*text;
	int	 rc = -1;

	if (r->down == NULL) {
		cJSON_Delete(msg);
		errno = EPIPE;
		return -1;
	}
	cJSON_AddNumberToObject(msg, "v", CW_WIRE_VERSION);
	if ((text = json_print(msg)) != NULL) {
		if (bufferevent_write(r->down, text, strlen(text)) == 0 &&
		    bufferevent_write(r->down, "\n", 1) == 0)
			rc = 0;
		cJSON_free(text);
	}
	cJSON_Delete(msg);
	return rc;
}

/*
 * A provider key's variable (an engine's key_env, built in or configured) never goes
 * into a runner's environment, even when a policy grants the name: keys travel in the
 * run message on stdin only.
 */
static int
runs_env_is_key(struct daemon *d, const char *name)
{
	const struct engine_info	*e;

	for (size_t i = 0; i < engines_count(); i++)
		if ((e = engines_at(i))->key_env != NULL && strcmp(e->key_env, name) == 0)
			return 1;
	for (size_t i = 0; i < d->cfg.n_engines; i++)
		if (d->cfg.engines[i].key_env != NULL &&
		    strcmp(d->cfg.engines[i].key_env, name) == 0)
			return 1;
	return 0;
}

/* The environment a runner starts with: the allowlist, plus names the policy grants. */
static char **
runs_env(struct daemon *d)
{
	struct strlist	 names = { 0 }, env = { 0 };
	char		 buf[PATH_MAX + 32];
	const char	*v;
	char		**out;

	for (size_t i = 0; i < sizeof runs_env_allow / sizeof runs_env_allow[0]; i++)
		strlist_add_unique(&names, runs_env_allow[i]);
	strlist_extend(&names, &d->cfg.sandbox.env);
	for (size_t i = 0; i < d->cfg.n_engines; i++)
		strlist_extend(&names, &d->cfg.engines[i].sandbox.env);
	for (size_t i = 0; i < names.n; i++) {
		if (strcmp(names.v[i], "CLOCKWORK_HOME") == 0 ||
		    runs_env_is_key(d, names.v[i]) || (v = getenv(names.v[i])) == NULL)
			continue;
		if (strcmp(names.v[i], "PATH") == 0 && v[0] == '\0')
			continue;
		snprintf(buf, sizeof buf, "%s=%s", names.v[i], v);
		strlist_add(&env, buf);
	}
	if (getenv("PATH") == NULL)
		strlist_add(&env, "PATH=/usr/local/bin:/usr/bin:/bin");
	snprintf(buf, sizeof buf, "CLOCKWORK_HOME=%s", d->home);
	strlist_add(&env, buf);
	strlist_free(&names);
	if ((out = calloc(env.n + 1, sizeof *out)) == NULL) {
		strlist_free(&env);
		return NULL;
	}
	for (size_t i = 0; i < env.n; i++)
		out[i] = env.v[i];	/* ownership moves to out */
	free(env.v);
	return out;
}

static void
runs_env_free(char **env)
{
	for (size_t i = 0; env != NULL && env[i] != NULL; i++)
		free(env[i]);
	free(env);
}

/*
 * Start the runner (common/spawnchild.c): its own process group, stdin/stdout the pipes,
 * stderr the live log, nothing else. The pid, or -1 with err.
 */
static pid_t
runs_spawn(struct daemon *d, struct run *r, int *down_fd, int *up_fd, char *err,
    size_t errlen)
{
	int		 in[2] = { -1, -1 }, out[2] = { -1, -1 };
	char		*argv[] = { "cw-runner", "run", NULL };
	char		**env;
	struct spawnchild	 sp;
	pid_t		 pid = -1;

	if ((env = runs_env(d)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (pipe2(in, O_CLOEXEC) == -1 || pipe2(out, O_CLOEXEC) == -1) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		goto out;
	}
	memset(&sp, 0, sizeof sp);
	sp.path = d->runner_path;
	sp.argv = argv;
	sp.env = env;
	sp.fds[0] = in[0];
	sp.fds[1] = out[1];
	sp.fds[2] = r->log_fd;
	sp.nfds = 3;
	sp.new_pgrp = 1;
	if (spawnchild_start(&sp, &pid, err, errlen) == -1)
		pid = -1;
out:
	if (in[0] != -1)
		close(in[0]);
	if (out[1] != -1)
		close(out[1]);
	if (pid == -1) {
		if (in[1] != -1)
			close(in[1]);
		if (out[0] != -1)
			close(out[0]);
	} else {
		*down_fd = in[1];
		*up_fd = out[0];
	}
	runs_env_free(env);
	return pid;
}

static void
runs_budget_cb(evutil_socket_t fd, short what, void *arg)
{
	struct run	*r = arg;
	char		 msg[128];

	snprintf(msg, sizeof msg, "wall-clock budget of %d s exceeded (ended by clockworkd)",
	    r->budget_seconds);
	runs_stop(r, STORE_EXIT_BUDGET_SECONDS, msg);
}

static void
runs_grace_cb(evutil_socket_t fd, short what, void *arg)
{
	struct run	*r = arg;
	int		 n;

	n = supervise_kill_tree(&r->procs, r->reaped ? 0 : r->pid);
	if (n > 0) {
		log_info("run %s: SIGKILL to %d process(es) after the grace period", r->id, n);
		runs_log_line(r, "killed %d process(es) that outlived the grace period", n);
	}
	/* Pipes may still be held by something we could not see: finish regardless. */
	if (r->reaped && !r->eof) {
		r->eof = 1;
		runs_finish(r);
	}
}

/* The one place a live run's identity-verified group signal goes out. */
static void
runs_signal_group(struct run *r, int sig)
{
	/*
	 * The runner is our child and unreaped, so its pid, and with it the group's id,
	 * cannot have been reused: killpg is safe exactly while !reaped. After that each
	 * process is reached through a pidfd checked against its start time.
	 */
	/*
	 * Look before signalling: once a member dies its children are re-parented to us and
	 * no longer hang off the run's tree.
	 */
	supervise_collect(&r->procs, r->reaped ? 0 : r->pid);
	if (!r->reaped && killpg(r->pid, sig) == -1 && errno != ESRCH)
		log_warn("run %s: killpg %d: %s", r->id, (int)r->pid, strerror(errno));
	supervise_signal(&r->procs, sig);
}

int
runs_stop(struct run *r, enum store_exit_reason reason, const char *message)
{
	struct timeval	 tv;
	cJSON		*m;

	if (r->stopping)
		return 0;
	r->stopping = 1;
	r->stop_reason = reason;
	free(r->stop_message);
	r->stop_message = strdup(message != NULL ? message : "stopped");
	log_info("run %s: stopping (%s): %s", r->id, store_exit_reason_name(reason),
	    r->stop_message != NULL ? r->stop_message : "");
	runs_log_line(r, "stopping: %s", r->stop_message != NULL ? r->stop_message : "");
	if ((m = cJSON_CreateObject()) != NULL) {
		json_add_string(m, "type", "stop");
		json_add_string(m, "reason", store_exit_reason_name(reason));
		runs_send(r, m);
	}
	runs_signal_group(r, SIGTERM);
	tv.tv_sec = r->d->stop_grace_ms / 1000;
	tv.tv_usec = (r->d->stop_grace_ms % 1000) * 1000;
	evtimer_add(r->grace_ev, &tv);
	return 0;
}

/* A run's files in <home>/runs that only the run's own end makes useless. */
static void
runs_forget_files(struct daemon *d, const char *id)
{
	char		 path[PATH_MAX];
	struct stat	 st;

	snprintf(path, sizeof path, "%s/runs/%s.report.json", d->home, id);
	(void)unlink(path);
	snprintf(path, sizeof path, "%s/runs/%s.sock", d->home, id);
	if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode))
		(void)unlink(path);
}

void
runs_detach_all(struct daemon *d)
{
	struct run	*r, *next;

	TAILQ_FOREACH_SAFE(r, &d->runs, entry, next) {
		if (r->import != NULL || r->import_started)
			continue;	/* ending: its import finishes it */
		log_info("run %s: left running for the next clockworkd", r->id);
		runs_log_flush(r);
		runs_log_line(r, "clockworkd is stopping: the run goes on and will be "
		    "re-attached");
		if (!r->adopted)
			proctree_add(&d->detached, r->pid, r->start);
		TAILQ_REMOVE(&d->runs, r, entry);
		d->n_runs--;
		runs_free(r);	/* closes its pipes: the runner keeps the run going */
	}
}

void
runs_stop_all(struct daemon *d)
{
	struct run	*r, *next;

	TAILQ_FOREACH_SAFE(r, &d->runs, entry, next)
		runs_stop(r, STORE_EXIT_STOPPED, "clockworkd is shutting down");
}

static int
runs_is_journal_kind(const char *kind)
{
	for (size_t i = 0; i < sizeof runs_journal_kinds / sizeof runs_journal_kinds[0]; i++)
		if (strcmp(kind, runs_journal_kinds[i]) == 0)
			return 1;
	return strncmp(kind, "floor_", 6) == 0;
}

static void
runs_protocol_error(struct run *r, const char *why)
{
	cJSON	*data;

	if (r->protocol_error)
		return;
	r->protocol_error = 1;
	log_warn("run %s: protocol error from cw-runner: %s", r->id, why);
	runs_log_line(r, "protocol error from cw-runner: %s", why);
	if ((data = cJSON_CreateObject()) != NULL) {
		json_add_string(data, "error", why);
		char *t = json_print(data);
		store_run_event_append(r->d->store, r->id, "protocol_error", t, NULL);
		cJSON_free(t);
		cJSON_Delete(data);
	}
	runs_stop(r, STORE_EXIT_FAILED, "protocol error from cw-runner");
}

/*
 * When a request names no deadline of its own, it holds until the run's wall-clock
 * budget ends (SPEC B2): that end, in ms since the epoch, is what people are shown
 * as its deadline. 0 when the run has no time budget.
 */
static int64_t
runs_budget_end_ms(const struct run *r)
{
	double		 secs;

	if (r->budget_seconds <= 0)
		return 0;
	runs_elapsed(r, &secs);
	return clock_wall_ms() + (int64_t)((r->budget_seconds - secs) * 1000);
}

static void
runs_approval_deadline_cb(evutil_socket_t fd, short what, void *arg)
{
	struct run_approval	*a = arg;
	cJSON			*j;

	if (store_approval_answer(a->run->d->store, a->id, STORE_APPROVAL_EXPIRED,
	    "no answer before its deadline", "clockworkd") == 1) {
		transcripts_append(a->run, transcript_answer(a->id, "deny", "clockworkd",
		    "no answer before its deadline"));
		if ((j = cJSON_CreateObject()) != NULL) {
			json_add_string(j, "approval", a->id);
			journal_add(a->run->d, a->run->id, "approval_expired", j);
		}
		runs_approval_published(a->run, a->id, "expired", NULL);
	}
	runs_approval_forget(a);
}

/*
 * An approval as just stored, to the bus: state "pending", "allowed", "denied" or
 * "expired"; extra (taken, may be NULL) adds its fields.
 */
void
runs_approval_published(struct run *r, const char *approval_id, const char *state,
    cJSON *extra)
{
	cJSON	*o = extra != NULL ? extra : cJSON_CreateObject();

	if (o != NULL) {
		json_add_string(o, "approval", approval_id);
		json_add_string(o, "state", state);
	}
	(void)bus_publish(r->d->bus, BUS_APPROVAL, r->task_name, r->id, o);
}

void
runs_approval_forget(struct run_approval *a)
{
	TAILQ_REMOVE(&a->run->approvals, a, entry);
	if (a->deadline_ev != NULL)
		event_free(a->deadline_ev);
	free(a->runner_id);
	free(a);
}

/*
 * After a restart the store still holds the run's pending approvals, under the ids
 * people were shown, but not the runner's own ids: a re-announced request is matched
 * to the pending one of the same run with the same tool and input. 0 when adopted.
 */
static int
runs_approval_readopt(struct run *r, const char *rid, const char *tool,
    const cJSON *input)
{
	struct store_approval	*v;
	struct run_approval	*a, *b;
	size_t			 n;
	/* Compared with the stored text, which was masked the same way. */
	char			*itext = input != NULL ? json_print_masked(input) : NULL;
	int			 rc = -1, taken;

	if (store_approval_list_pending(r->d->store, r->id, &v, &n) == -1) {
		free(itext);
		return -1;
	}
	for (size_t i = 0; i < n && rc == -1; i++) {
		if (strcmp(v[i].tool, tool) != 0 || (itext == NULL) != (v[i].input == NULL) ||
		    (itext != NULL && strcmp(itext, v[i].input) != 0))
			continue;
		taken = 0;
		TAILQ_FOREACH(b, &r->approvals, entry)
			if (strcmp(b->id, v[i].id) == 0)
				taken = 1;
		if (taken || (a = calloc(1, sizeof *a)) == NULL ||
		    (a->runner_id = strdup(rid)) == NULL) {
			if (!taken)
				free(a);
			continue;
		}
		a->run = r;
		snprintf(a->id, sizeof a->id, "%s", v[i].id);
		TAILQ_INSERT_TAIL(&r->approvals, a, entry);
		r->n_approvals++;
		rc = 0;
	}
	store_approval_list_free(v, n);
	free(itext);
	return rc;
}

/*
 * The approval's id: the runner's own when it has the bridge's shape (ap- and 24 hex
 * digits) and no approval has it yet, so the request, the answer, the journal and the
 * run's report all name it alike; else one of ours (a run chooses the ids it sends).
 */
static void
runs_approval_id(struct run *r, const char *rid, char *out, size_t outlen)
{
	struct store_approval	 have;
	unsigned char		 raw[12];
	int			 rc = 0;

	if (strlen(rid) == 27 && strncmp(rid, "ap-", 3) == 0 &&
	    strspn(rid + 3, "0123456789abcdef") == 24 &&
	    (rc = store_approval_get(r->d->store, rid, &have)) == 0) {
		snprintf(out, outlen, "%s", rid);
		return;
	} else if (rc == 1)
		store_approval_free(&have);
	if (getrandom(raw, sizeof raw, 0) != sizeof raw)
		memset(raw, 0, sizeof raw);
	snprintf(out, outlen, "ap-");
	for (size_t i = 0; i < sizeof raw; i++)
		snprintf(out + 3 + 2 * i, outlen - 3 - 2 * i, "%02x", raw[i]);
}

static void
runs_approval_request(struct run *r, const struct wiremsg *m)
{
	struct run_approval	*a;
	const cJSON		*input = m->input;
	const char		*rid = m->id, *tool = m->tool;
	char			*itext = NULL;
	double			 deadline = m->deadline;
	size_t			 pending = 0;
	cJSON			*j, *dec;
	struct timeval		 tv;
	int64_t			 now_ms;

	TAILQ_FOREACH(a, &r->approvals, entry)
		pending++;
	if (pending >= CW_BRIDGE_MAX_PENDING) {
		if ((dec = cJSON_CreateObject()) != NULL) {
			json_add_string(dec, "type", "decision");
			json_add_string(dec, "id", rid);
			json_add_string(dec, "behavior", "deny");
			json_add_string(dec, "message", "too many approvals pending for this run");
			runs_send(r, dec);
		}
		return;
	}
	/* Announced again after a re-attach: the same approval, already stored. */
	TAILQ_FOREACH(a, &r->approvals, entry)
		if (strcmp(a->runner_id, rid) == 0)
			return;
	if (r->adopted && runs_approval_readopt(r, rid, tool, input) == 0)
		return;
	/*
	 * The runner already counts (asklimit.h); this is the second count, so a runner
	 * that did not still cannot fill the store, the Inbox or a chat. Refused: denied
	 * at once, journaled once per burst.
	 */
	{
		char		 why[160];
		const char	*kind;
		int		 first;

		if (asklimit_admit(&r->asks, clock_mono_ms(), why, sizeof why, &kind,
		    &first) == -1) {
			if ((dec = cJSON_CreateObject()) != NULL) {
				json_add_string(dec, "type", "decision");
				json_add_string(dec, "id", rid);
				json_add_string(dec, "behavior", "deny");
				json_add_string(dec, "message", why);
				runs_send(r, dec);
			}
			if (first && (j = cJSON_CreateObject()) != NULL) {
				json_add_string(j, "tool", tool);
				json_add_string(j, "limit", kind);
				json_add_string(j, "reason", why);
				json_add_string(j, "by", "clockworkd");
				journal_add(r->d, r->id, "approval_limit", j);
			}
			return;
		}
	}
	if ((a = calloc(1, sizeof *a)) == NULL || (a->runner_id = strdup(rid)) == NULL) {
		free(a);
		return;
	}
	a->run = r;
	runs_approval_id(r, rid, a->id, sizeof a->id);
	/* The approval's text is masked before it is stored: every surface shows that. */
	if (input != NULL)
		itext = json_print_masked(input);
	/* Deadlines arrive in ms since the epoch; a smaller number is taken as seconds. */
	if (deadline > 0 && deadline < 1e11)
		deadline *= 1000;
	if (store_approval_create(r->d->store, a->id, r->id, tool, itext,
	    deadline > 0 ? (int64_t)deadline : runs_budget_end_ms(r)) == -1) {
		log_error("run %s: cannot store approval: %s", r->id, store_errmsg(r->d->store));
		free(itext);
		free(a->runner_id);
		free(a);
		return;
	}
	free(itext);
	if (store_approval_set_risk(r->d->store, a->id, m->risk, m->risk_rule) == -1)
		log_error("run %s: cannot store approval risk: %s", r->id,
		    store_errmsg(r->d->store));
	if (m->family != NULL && store_approval_set_family(r->d->store, a->id,
	    m->family) == -1)
		log_error("run %s: cannot store approval family: %s", r->id,
		    store_errmsg(r->d->store));
	TAILQ_INSERT_TAIL(&r->approvals, a, entry);
	r->n_approvals++;
	if (deadline > 0) {
		now_ms = clock_wall_ms();
		if ((int64_t)deadline < now_ms)
			deadline = (double)now_ms;
		tv = clock_ms_timeval((int64_t)deadline - now_ms);
		a->deadline_ev = evtimer_new(r->d->base, runs_approval_deadline_cb, a);
		if (a->deadline_ev != NULL)
			evtimer_add(a->deadline_ev, &tv);
	}
	transcripts_append(r, transcript_ask(a->id, tool, json_get_string(input,
	    "command"), deadline > 0 ? deadline / 1000 : 0));
	if ((j = cJSON_CreateObject()) != NULL) {
		json_add_string(j, "approval", a->id);
		json_add_string(j, "tool", tool);
		/* What was asked, masked and cut as every recorded command (record.h). */
		if (json_get_string(input, "command") != NULL)
			record_add_command(j, json_get_string(input, "command"));
		json_add_string(j, "risk", m->risk);
		if (m->risk_rule != NULL)
			json_add_string(j, "risk_rule", m->risk_rule);
		journal_add(r->d, r->id, "approval_request", j);
	}
	if ((j = cJSON_CreateObject()) != NULL) {
		json_add_string(j, "tool", tool);
		if (json_get_string(input, "command") != NULL)
			record_add_command(j, json_get_string(input, "command"));
		json_add_string(j, "risk", m->risk);
		if (deadline > 0)
			cJSON_AddNumberToObject(j, "deadline_ms", deadline);
	}
	runs_approval_published(r, a->id, "pending", j);
}

/*
 * The runner paused the run at a budget, or let it go on with new budgets, or says
 * what they are after a re-attach (runner/run.c): the daemon's own wall-clock
 * backstop follows, so it never ends a run that a person let go on.
 */
static void
runs_budget_state(struct run *r, const cJSON *msg)
{
	const cJSON	*st = cJSON_GetObjectItemCaseSensitive(msg, "state");
	struct timeval	 tv = { 0, 0 };
	double		 n;
	int		 paused;

	if (!cJSON_IsObject(st))
		return;
	if (json_get_number(st, "dollars", &n) == 0 && n >= 0 && n <= 1e6)
		r->budget_dollars = n;
	if (json_get_number(st, "turns", &n) == 0 && n >= 0 && n <= 1e9)
		r->budget_turns = (int)n;
	if (json_get_number(st, "seconds", &n) == 0 && n > 0 && n <= 1e9)
		r->budget_seconds = (int)n;
	if (json_get_bool(st, "paused", &paused) == 0)
		r->budget_paused = paused;
	if (json_get_number(st, "backstop_seconds", &n) == 0 && n >= 0 && n <= 1e9 &&
	    r->budget_ev != NULL) {
		tv.tv_sec = (time_t)n + (r->d->stop_grace_ms + DAEMON_BUDGET_GRACE_MS) / 1000;
		evtimer_add(r->budget_ev, &tv);
	}
}

static void
runs_handle_event(struct run *r, const struct wiremsg *m)
{
	const cJSON		*msg = m->obj;
	const char		*kind = m->kind, *rid;
	struct run_approval	*a;
	int			 fl;

	if (strcmp(kind, "sandbox_disabled") == 0)
		r->sandboxed = 0;
	if (strcmp(kind, "budget_paused") == 0 || strcmp(kind, "budget_resumed") == 0 ||
	    strcmp(kind, "budget_state") == 0)
		runs_budget_state(r, msg);
	if (strcmp(kind, "budget_paused") == 0 || strcmp(kind, "budget_resumed") == 0) {
		cJSON	*o = cJSON_CreateObject();

		if (o != NULL) {
			cJSON_AddBoolToObject(o, "paused", kind[7] == 'p');
			cJSON_AddNumberToObject(o, "dollars", r->budget_dollars);
			cJSON_AddNumberToObject(o, "turns", r->budget_turns);
			cJSON_AddNumberToObject(o, "seconds", r->budget_seconds);
		}
		(void)bus_publish(r->d->bus, BUS_BUDGET, r->task_name, r->id, o);
	}
	if (m->sandboxed != -1)
		r->sandboxed = m->sandboxed;
	if (strcmp(kind, "floor_deny") == 0 || strcmp(kind, "rule_deny") == 0 ||
	    strcmp(kind, "policy_deny") == 0 ||
	    strcmp(kind, "deny_list_hit") == 0 || strcmp(kind, "floor_hit") == 0) {
		cJSON *copy = cJSON_Duplicate(msg, 1);

		if (copy != NULL) {
			cJSON_DeleteItemFromObjectCaseSensitive(copy, "v");
			cJSON_DeleteItemFromObjectCaseSensitive(copy, "type");
		}
		record_list_add(&r->denials, copy);
		transcripts_append(r, transcript_floor(json_get_string(msg, "rule"),
		    json_get_string(msg, "reason"), json_get_string(msg, "command")));
	}
	if (strcmp(kind, "net_deny") == 0) {
		char	 line[1400];
		int	 port = 0;
		const cJSON *pj = cJSON_GetObjectItemCaseSensitive(msg, "port");

		if (cJSON_IsNumber(pj))
			port = pj->valueint;
		snprintf(line, sizeof line, "network: refused %.260s:%d: %.1024s",
		    json_get_string(msg, "host") ? json_get_string(msg, "host") : "?", port,
		    json_get_string(msg, "reason") ? json_get_string(msg, "reason") : "");
		transcripts_append(r, transcript_note(line));
		/* In the raw log too (a command run's transcript), under the log's cap. */
		runs_log_output(r, 2, line, strlen(line), 0);
	}
	/*
	 * The runner gave up on an approval (deadline, limit, or the agent hung up on
	 * it): it is no longer answerable, and must not stay in the Inbox as pending.
	 */
	if ((strcmp(kind, "approval_timeout") == 0 || strcmp(kind, "approval_limit") == 0 ||
	    strcmp(kind, "approval_abandoned") == 0) &&
	    (rid = m->id) != NULL) {
		TAILQ_FOREACH(a, &r->approvals, entry)
			if (strcmp(a->runner_id, rid) == 0)
				break;
		if (a != NULL) {
			store_approval_answer(r->d->store, a->id, STORE_APPROVAL_EXPIRED,
			    kind, "cw-runner");
			transcripts_append(r, transcript_answer(a->id, "deny", "cw-runner",
			    kind));
			runs_approval_published(r, a->id, "expired", NULL);
			runs_approval_forget(a);
		}
	}
	if (runs_is_journal_kind(kind)) {
		cJSON *copy = cJSON_Duplicate(msg, 1);

		if (copy != NULL) {
			cJSON_DeleteItemFromObjectCaseSensitive(copy, "v");
			cJSON_DeleteItemFromObjectCaseSensitive(copy, "type");
		}
		if (strcmp(kind, "sandbox_disabled") == 0)
			r->journaled_sandbox_off = 1;
		/* A configured rule's hit is the user's own rule, not the floor's. */
		if (strcmp(kind, "floor_deny") == 0 && json_get_bool(msg, "floor", &fl) == 0 &&
		    !fl) {
			kind = "rule_deny";
			if (copy != NULL)
				cJSON_ReplaceItemInObjectCaseSensitive(copy, "kind",
				    cJSON_CreateString(kind));
		}
		journal_add(r->d, r->id, kind, copy);
	}
}

static void
runs_backstop_cb(evutil_socket_t fd, short what, void *arg)
{
	struct run	*r = arg;

	(void)fd;
	(void)what;
	if (!r->reaped)
		runs_stop(r, r->backstop_reason, r->backstop_why);
}

/*
 * A budget the runner reported past its limit. The runner stops its engine itself and
 * then seals the work for import, which the signals of runs_stop() and a SIGKILL after
 * the grace period would lose (an engine that ignores SIGTERM takes the runner's whole
 * engine grace). So the daemon asks the runner first and holds its signals back for
 * RUNS_BACKSTOP_MS; runs_stop() follows only if the run is still there then.
 */
#define RUNS_BACKSTOP_MS	30000

static void
runs_backstop(struct run *r, enum store_exit_reason reason, const char *why)
{
	struct timeval	 tv = { RUNS_BACKSTOP_MS / 1000, (RUNS_BACKSTOP_MS % 1000) * 1000 };
	cJSON		*m;

	if (r->stopping || r->backstop_ev != NULL)
		return;
	r->backstop_reason = reason;
	snprintf(r->backstop_why, sizeof r->backstop_why, "%s", why);
	runs_log_line(r, "%s: asking the runner to stop the run", why);
	if ((m = cJSON_CreateObject()) != NULL) {
		json_add_string(m, "type", "stop");
		json_add_string(m, "reason", store_exit_reason_name(reason));
		runs_send(r, m);
	}
	if ((r->backstop_ev = evtimer_new(r->d->base, runs_backstop_cb, r)) == NULL)
		runs_stop(r, reason, why);
	else
		evtimer_add(r->backstop_ev, &tv);
}

static void
runs_handle_usage(struct run *r, const struct wiremsg *m)
{
	char	 why[128];

	if (m->dollars >= 0)
		r->spent_dollars = m->dollars;
	if (m->turns >= 0)
		r->spent_turns = m->turns;
	store_run_set_spent(r->d->store, r->id, r->spent_dollars, r->spent_turns, 0);
	/*
	 * The runner enforces these itself; this is the backstop. A run that pauses at
	 * its budget reports spending past it before it says it is held (its budgets
	 * come with budget_paused and budget_resumed): only the hard ceiling holds here.
	 */
	if (r->budget_wait > 0) {
		if (r->max_dollars > 0 && r->spent_dollars > r->max_dollars) {
			snprintf(why, sizeof why, "hard ceiling of %.2f dollars exceeded",
			    r->max_dollars);
			runs_backstop(r, STORE_EXIT_BUDGET_DOLLARS, why);
		}
		return;
	}
	if (r->spent_dollars > r->budget_dollars && r->budget_dollars > 0) {
		snprintf(why, sizeof why, "dollar budget of %.2f exceeded", r->budget_dollars);
		runs_backstop(r, STORE_EXIT_BUDGET_DOLLARS, why);
	} else if (r->spent_turns > r->budget_turns) {
		snprintf(why, sizeof why, "turn budget of %d exceeded", r->budget_turns);
		runs_backstop(r, STORE_EXIT_BUDGET_TURNS, why);
	}
}

/*
 * Keep one message in run_events, within the run's bounds: at most CW_RUN_EVENTS_MAX
 * rows (then one "events_capped" row, and the rest only counted), each at most
 * CW_RUN_EVENT_MAX_DATA bytes (a longer line is kept as its size and hash). The report
 * is stored whatever the count: it is the one message that must not be lost.
 */
static void
runs_store_event(struct run *r, const char *kind, const char *line, size_t len)
{
	cJSON	*o;
	char	*t = NULL, *masked = NULL, hex[SHA256_HEX];
	int	 rc;

	if (strcmp(kind, "report") != 0 && r->n_events >= CW_RUN_EVENTS_MAX) {
		if (r->events_dropped++ == 0 && (o = cJSON_CreateObject()) != NULL) {
			cJSON_AddNumberToObject(o, "max", CW_RUN_EVENTS_MAX);
			t = json_print(o);
			cJSON_Delete(o);
			store_run_event_append(r->d->store, r->id, "events_capped", t, NULL);
			cJSON_free(t);
			runs_log_line(r, "events capped: this run sent more than %d events; "
			    "the rest are counted in its report", CW_RUN_EVENTS_MAX);
		}
		return;
	}
	r->n_events++;
	if (len > CW_RUN_EVENT_MAX_DATA && (o = cJSON_CreateObject()) != NULL) {
		sha256_hex(line, len, hex);
		cJSON_AddBoolToObject(o, "truncated", 1);
		cJSON_AddNumberToObject(o, "bytes", (double)len);
		json_add_string(o, "sha256", hex);
		t = json_print(o);
		cJSON_Delete(o);
	}
	/* Masked as it is stored: the events route serves the stored text as it is. */
	if (t == NULL && (masked = json_mask_text(line)) == NULL) {
		log_warn("run %s: an event is not stored: out of memory", r->id);
		return;
	}
	rc = store_run_event_append(r->d->store, r->id, kind, t != NULL ? t : masked, NULL);
	cJSON_free(t);
	free(masked);
	if (rc == -1)
		log_warn("run %s: cannot store event: %s", r->id, store_errmsg(r->d->store));
}

/* One line from the runner, already bounded in length. */
static void
runs_handle_line(struct run *r, const char *line, size_t len)
{
	struct wiremsg	 m;
	char		 err[128];
	const char	*s;
	cJSON		*j;

	/* Decoded once (common/wiremsg.c): shapes and bounds are checked there. */
	if (wiremsg_decode(line, len, &m, err, sizeof err) == -1) {
		runs_protocol_error(r, err);
		return;
	}
	switch (m.type) {
	case WIREMSG_LOG:
		if (m.text != NULL) {
			int	trunc = 0;

			json_get_bool(m.obj, "truncated", &trunc);
			runs_log_output(r, runs_log_stream(json_get_string(m.obj, "stream")),
			    m.text, strlen(m.text), trunc);
			/* The runner's own lines (budgets, stops, the seal) are for people. */
			if ((s = json_get_string(m.obj, "stream")) != NULL &&
			    strcmp(s, "runner") == 0)
				transcripts_note(r, m.text);
		}
		wiremsg_free(&m);
		return;
	case WIREMSG_SAY:
		/* Transcript entries are not events: they have their own file and cap. */
		transcripts_append(r, cJSON_Duplicate(m.entry, 1));
		/*
		 * But a follower of the transcript (cwctl run logs -f) is told that one
		 * was stored: a "log" event naming only its kind, never its text.
		 */
		if (r->d->bus != NULL && (j = cJSON_CreateObject()) != NULL) {
			s = json_get_string(m.entry, "k");
			json_add_string(j, "transcript", s != NULL ? s : "entry");
			(void)bus_publish(r->d->bus, BUS_LOG, r->task_name, r->id, j);
		}
		wiremsg_free(&m);
		return;
	case WIREMSG_REPORT:
		if (r->report == NULL)
			r->report = cJSON_Duplicate(m.obj, 1);
		break;
	case WIREMSG_HELLO:
		if (m.sandboxed != -1)
			r->sandboxed = m.sandboxed;
		break;
	case WIREMSG_EVENT:
		runs_handle_event(r, &m);
		break;
	case WIREMSG_APPROVAL_REQUEST:
		runs_approval_request(r, &m);
		break;
	case WIREMSG_USAGE:
		runs_handle_usage(r, &m);
		break;
	case WIREMSG_OTHER:
		log_debug("run %s: ignoring message type %.32s", r->id, m.type_name);
		break;
	}
	runs_store_event(r, m.type == WIREMSG_EVENT ? m.kind : m.type_name, line, len);
	wiremsg_free(&m);
}

static void
runs_read_cb(struct bufferevent *bev, void *arg)
{
	struct run	*r = arg;
	struct evbuffer	*in = bufferevent_get_input(bev);
	char		*line;
	size_t		 len;

	while (!r->protocol_error &&
	    (line = evbuffer_readln(in, &len, EVBUFFER_EOL_LF)) != NULL) {
		if (len > CW_WIRE_MAX_LINE)
			runs_protocol_error(r, "a line longer than the protocol allows");
		else if (len > 0)
			runs_handle_line(r, line, len);
		free(line);
	}
	if (!r->protocol_error && evbuffer_get_length(in) > CW_WIRE_MAX_LINE)
		runs_protocol_error(r, "a line longer than the protocol allows");
	if (r->protocol_error)
		evbuffer_drain(in, evbuffer_get_length(in));
}

static void
runs_up_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct run	*r = arg;

	if (!(what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)))
		return;
	runs_read_cb(bev, r);
	bufferevent_free(r->up);
	r->up = NULL;
	r->eof = 1;
	if (r->reaped)
		runs_finish(r);
}

static void
runs_down_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct run	*r = arg;

	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)) {
		bufferevent_free(r->down);
		r->down = NULL;
	}
}

/*
 * The engine's provider: base URL and model from engines.<name> in the configuration,
 * and the key from the daemon's variable the configuration names (key_env), else the
 * engine's own (common/engines.c). The key travels in the run message on the runner's
 * stdin, never in its environment or argv.
 */
static void
runs_send_provider(struct run *r, const struct store_task *t, cJSON *m)
{
	const struct config_engine	*ce = config_engine(&r->d->cfg, t->engine);
	const struct engine_info	*e = engines_find(t->engine);
	const char			*name = NULL, *key;
	struct key_entry		 ke;
	char				 err[512];

	/*
	 * byok: the key the task names, from the secret store; its base URL and model
	 * before the configuration's. Never a variable of the daemon's environment.
	 */
	if (strcmp(t->engine, "byok") == 0) {
		if (t->key_name == NULL || keys_get(r->d->home, t->key_name, &ke, err,
		    sizeof err) != 1) {
			log_warn("run %s: provider key %s: %s", r->id, t->key_name != NULL ?
			    t->key_name : "(none)", t->key_name == NULL ? "the task names "
			    "none" : err[0] != '\0' ? err : "no such key (cwctl key list)");
			return;
		}
		json_add_string(m, "base_url", ke.base_url != NULL ? ke.base_url :
		    ce != NULL ? ce->base_url : NULL);
		json_add_string(m, "model", ke.model != NULL ? ke.model :
		    ce != NULL ? ce->model : NULL);
		json_add_string(m, "provider", ke.provider);
		json_add_string(m, "key", ke.key);
		key_entry_free(&ke);
		return;
	}
	if (ce != NULL) {
		json_add_string(m, "base_url", ce->base_url);
		json_add_string(m, "model", ce->model);
		name = ce->key_env;
	}
	if (name == NULL && e != NULL)
		name = e->key_env;
	if (name != NULL && (key = getenv(name)) != NULL && key[0] != '\0')
		json_add_string(m, "key", key);
}

/*
 * The task's network policy (SPEC N1): its own rules, and whether an unknown host
 * becomes an approval. The global and engine rules the runner reads from config.yaml.
 */
static void
runs_send_network(struct run *r, const struct store_task *t, cJSON *m)
{
	struct strlist	 allow = { 0 };
	cJSON		*n, *a;
	int		 ask = 0;

	if (store_task_network_get(r->d->store, t->id, &ask, &allow) == -1)
		log_warn("run %s: task network policy: %s", r->id, store_errmsg(r->d->store));
	if ((n = cJSON_AddObjectToObject(m, "network")) != NULL) {
		cJSON_AddBoolToObject(n, "ask", ask);
		if ((a = cJSON_AddArrayToObject(n, "allow")) != NULL)
			for (size_t i = 0; i < allow.n; i++)
				cJSON_AddItemToArray(a, cJSON_CreateString(allow.v[i]));
	}
	strlist_free(&allow);
}

/*
 * Who answers (SPEC A1): the task's approvals.ask when it has one (else the runner
 * reads config.yaml's), and the families a person answered "always for this task"
 * for. A store error sends no rules: calls are asked, never run unasked by mistake.
 */
static void
runs_send_approvals(struct run *r, const struct store_task *t, cJSON *m)
{
	struct store_task_rule	*v = NULL;
	size_t			 n = 0;
	char			*ask = NULL;
	cJSON			*o, *a, *e;

	if ((o = cJSON_AddObjectToObject(m, "approvals")) == NULL)
		return;
	if (store_task_ask_get(r->d->store, t->id, &ask) == -1)
		log_warn("run %s: task approvals.ask: %s", r->id, store_errmsg(r->d->store));
	if (ask != NULL && (a = cJSON_AddArrayToObject(o, "ask")) != NULL) {
		/* Stored as autoallow_ask_format() wrote it: "all", "none" or "a,b". */
		for (char *p = ask, *q; p != NULL && *p != '\0'; p = q) {
			if ((q = strchr(p, ',')) != NULL)
				*q++ = '\0';
			cJSON_AddItemToArray(a, cJSON_CreateString(p));
		}
	}
	free(ask);
	if (store_task_rules_list(r->d->store, t->id, &v, &n) == -1) {
		log_warn("run %s: task rules: %s", r->id, store_errmsg(r->d->store));
		return;
	}
	/*
	 * Ask rules travel in a list of their own: a runner that did not know them would
	 * ignore the list (and ask as before), never read an ask as an allow.
	 */
	if ((a = cJSON_AddArrayToObject(o, "rules")) != NULL)
		for (size_t i = 0; i < n; i++)
			if (strcmp(v[i].kind, "allow") == 0 &&
			    (e = cJSON_CreateObject()) != NULL) {
				json_add_string(e, "family", v[i].family);
				json_add_string(e, "max_risk", v[i].max_risk);
				cJSON_AddItemToArray(a, e);
			}
	if ((a = cJSON_AddArrayToObject(o, "ask_rules")) != NULL)
		for (size_t i = 0; i < n; i++)
			if (strcmp(v[i].kind, "ask") == 0 &&
			    (e = cJSON_CreateObject()) != NULL) {
				json_add_string(e, "family", v[i].family);
				cJSON_AddItemToArray(a, e);
			}
	store_task_rules_free(v, n);
}

/*
 * A rule a person just added for a task: every live run of that task honours it for
 * the rest of the run (the next runs read it from the store).
 */
void
runs_task_rule_added(struct daemon *d, int64_t task_id, const char *family,
    const char *max_risk)
{
	struct run	*r;
	cJSON		*msg;

	TAILQ_FOREACH(r, &d->runs, entry) {
		if (r->task_id != task_id || r->reaped)
			continue;
		if ((msg = cJSON_CreateObject()) == NULL)
			return;
		/* max_risk NULL: an ask rule (its own message type, as in the run spec). */
		json_add_string(msg, "type", max_risk != NULL ? "task_rule" : "task_ask_rule");
		json_add_string(msg, "family", family);
		if (max_risk != NULL)
			json_add_string(msg, "max_risk", max_risk);
		runs_send(r, msg);
	}
}

/* The run message: everything the runner needs, keys included, down the pipe. */
static int
runs_send_spec(struct run *r, const struct store_task *t)
{
	cJSON	*m, *b, *pb, *argv, *g;

	if ((m = cJSON_CreateObject()) == NULL)
		return -1;
	json_add_string(m, "type", "run");
	json_add_string(m, "run_id", r->id);
	json_add_string(m, "task", t->name);
	/* The runner keeps this task's tool caches apart from every other's (SPEC U2). */
	cJSON_AddNumberToObject(m, "task_id", (double)t->id);
	json_add_string(m, "engine", t->engine);
	json_add_string(m, "prompt", t->prompt);
	/* The command engine's prompt is a shell command line, run by sh -c in the sandbox. */
	if (strcmp(t->engine, "command") == 0 &&
	    (argv = cJSON_AddArrayToObject(m, "argv")) != NULL) {
		cJSON_AddItemToArray(argv, cJSON_CreateString("/bin/sh"));
		cJSON_AddItemToArray(argv, cJSON_CreateString("-c"));
		cJSON_AddItemToArray(argv, cJSON_CreateString(t->prompt));
	}
	json_add_string(m, "permission_mode", t->permission_mode);
	runs_send_provider(r, t, m);
	runs_send_network(r, t, m);
	runs_send_approvals(r, t, m);
	json_add_string(m, "workdir", r->workdir);
	json_add_string(m, "repo", t->repo);
	json_add_string(m, "branch", r->branch);
	if (r->repo != NULL && (g = cJSON_AddObjectToObject(m, "git")) != NULL) {
		json_add_string(g, "branch", r->branch);
		json_add_string(g, "base", r->base_commit);
		json_add_string(g, "objects", r->git_objects);
		/* The seal leaves build outputs out unless the task keeps them (seal.h). */
		if (t->keep_build_outputs && (g = cJSON_AddObjectToObject(m, "seal")) != NULL)
			cJSON_AddTrueToObject(g, "keep_build_outputs");
	}
	json_add_string(m, "clockwork_home", r->d->home);
	/* For the runner's own writes to the log while no daemon is attached. */
	cJSON_AddNumberToObject(m, "log_max_bytes", (double)r->log_max);
	if ((b = cJSON_AddObjectToObject(m, "budget")) != NULL) {
		cJSON_AddNumberToObject(b, "dollars", t->budget_dollars);
		cJSON_AddNumberToObject(b, "turns", t->budget_turns);
		cJSON_AddNumberToObject(b, "seconds", t->budget_seconds);
		cJSON_AddNumberToObject(b, "wait", r->budget_wait);
		cJSON_AddNumberToObject(b, "max_dollars", r->max_dollars);
	}
	/* The run's cgroup limits (R2): the task's own, else the configuration's. */
	if ((b = cJSON_AddObjectToObject(m, "limits")) != NULL) {
		cJSON_AddNumberToObject(b, "processes", t->limit_processes > 0 ?
		    t->limit_processes : r->d->cfg.limit_processes);
		cJSON_AddNumberToObject(b, "memory_bytes", (double)(t->limit_memory_mb > 0 ?
		    t->limit_memory_mb : r->d->cfg.limit_memory_mb) * 1024 * 1024);
	}
	/*
	 * Every run of an engine that can resume keeps its conversation for a later
	 * `run continue` of this task (the runner makes the directory from task_id);
	 * a continue names the run and the id it resumes.
	 */
	if (conversation_engine_resumes(t->engine) &&
	    (b = cJSON_AddObjectToObject(m, "conversation")) != NULL) {
		cJSON_AddTrueToObject(b, "keep");
		if (r->resume_id[0] != '\0' && (g = cJSON_AddObjectToObject(b, "resume")) !=
		    NULL) {
			json_add_string(g, "run", r->resume_run);
			json_add_string(g, "id", r->resume_id);
		}
	}
	if ((pb = cJSON_AddArrayToObject(m, "protected_branches")) != NULL)
		for (size_t i = 0; i < r->d->cfg.protected_branches.n; i++)
			cJSON_AddItemToArray(pb,
			    cJSON_CreateString(r->d->cfg.protected_branches.v[i]));
	return runs_send(r, m);
}

static void
runs_free(struct run *r)
{
	struct run_approval	*a;

	while ((a = TAILQ_FIRST(&r->approvals)) != NULL)
		runs_approval_forget(a);
	asklimit_free(&r->asks);
	if (r->up != NULL)
		bufferevent_free(r->up);
	if (r->down != NULL)
		bufferevent_free(r->down);
	if (r->budget_ev != NULL)
		event_free(r->budget_ev);
	if (r->grace_ev != NULL)
		event_free(r->grace_ev);
	if (r->backstop_ev != NULL)
		event_free(r->backstop_ev);
	if (r->pidfd_ev != NULL)
		event_free(r->pidfd_ev);
	if (r->pidfd != -1)
		close(r->pidfd);
	for (size_t i = 0; i < sizeof r->log_mask / sizeof r->log_mask[0]; i++)
		maskstream_free(r->log_mask[i]);
	if (r->log_fd != -1)
		close(r->log_fd);
	proctree_free(&r->procs);
	if (r->import != NULL) {
		runimport_free(r->import);
		r->import = NULL;
	}
	cJSON_Delete(r->import_result);
	cJSON_Delete(r->report);
	record_list_free(&r->denials);
	free(r->stop_message);
	free(r->repo);
	free(r->branch);
	free(r);
}

/*
 * The one place a run's report becomes a record: masked (json_print_masked), then
 * stored, so that every reader of the store (the API, the Inbox, Telegram, the export)
 * gets the masked copy only.
 */
int
runs_report_store(struct daemon *d, const char *id, const cJSON *rep)
{
	char	*text;
	int	 rc;

	if ((text = json_print_masked(rep)) == NULL) {
		log_error("run %s: cannot store report: out of memory", id);
		return -1;
	}
	if ((rc = store_run_set_report(d->store, id, text)) == -1)
		log_error("run %s: cannot store report: %s", id, store_errmsg(d->store));
	free(text);
	return rc;
}

/* End a run that never got a runner: record why, keep the daemon going. */
static void
runs_fail_early(struct daemon *d, const char *id, enum store_run_status status,
    const char *why)
{
	cJSON	*rep;

	log_warn("run %s: %s", id, why);
	if ((rep = cJSON_CreateObject()) != NULL) {
		json_add_string(rep, "run_id", id);
		json_add_string(rep, "status", store_run_status_name(status));
		json_add_string(rep, "exit_reason", "failed");
		json_add_string(rep, "error", why);
		runs_report_store(d, id, rep);
		cJSON_Delete(rep);
	}
	store_run_set_status(d->store, id, status, STORE_EXIT_FAILED);
	runs_status_published(d, id, NULL, status, STORE_EXIT_FAILED);
	if (status == STORE_RUN_REFUSED && (rep = cJSON_CreateObject()) != NULL) {
		json_add_string(rep, "reason", why);
		journal_add(d, id, "run_refused", rep);
	}
}

/*
 * A live run of the daemon for store run id of task t: its lists, bounds and timers,
 * its clock started. Not yet one of the daemon's runs (runs_track). NULL: no memory.
 */
struct run *
runs_alloc(struct daemon *d, const char *id, const struct store_task *t)
{
	struct run	*r;

	if ((r = calloc(1, sizeof *r)) == NULL)
		return NULL;
	r->d = d;
	r->pidfd = r->log_fd = -1;
	r->sandboxed = -1;
	TAILQ_INIT(&r->approvals);
	if (asklimit_init(&r->asks, d->cfg.approvals_max_per_run,
	    d->cfg.approvals_per_minute) == -1) {
		free(r);
		return NULL;
	}
	snprintf(r->id, sizeof r->id, "%s", id);
	snprintf(r->task_name, sizeof r->task_name, "%s", t->name);
	r->task_id = t->id;
	r->budget_seconds = t->budget_seconds;
	r->budget_turns = t->budget_turns;
	r->budget_dollars = t->budget_dollars;
	r->budget_wait = t->budget_wait >= 0 ? t->budget_wait : d->cfg.budget_wait;
	r->max_dollars = t->max_dollars >= 0 ? t->max_dollars : d->cfg.max_dollars;
	record_list_init(&r->denials, CW_RECORD_MAX_LIST, CW_RECORD_MAX_BYTES);
	r->log_max = d->cfg.run_log_max_bytes > 0 ? d->cfg.run_log_max_bytes :
	    CONFIG_DEFAULT_RUN_LOG;
	r->budget_ev = evtimer_new(d->base, runs_budget_cb, r);
	r->grace_ev = evtimer_new(d->base, runs_grace_cb, r);
	r->t0_ms = clock_mono_ms();
	return r;
}

/*
 * The wire to the runner: its lines come from up_fd, ours go to down_fd (the same
 * socket, dup'ed, for a re-attached runner). Both are taken over, also on failure
 * (-1, r->up and r->down left NULL).
 */
int
runs_connect(struct run *r, int up_fd, int down_fd)
{
	evutil_make_socket_nonblocking(up_fd);
	evutil_make_socket_nonblocking(down_fd);
	r->up = bufferevent_socket_new(r->d->base, up_fd, BEV_OPT_CLOSE_ON_FREE);
	r->down = bufferevent_socket_new(r->d->base, down_fd, BEV_OPT_CLOSE_ON_FREE);
	if (r->up == NULL || r->down == NULL) {
		if (r->up != NULL)
			bufferevent_free(r->up);
		else
			close(up_fd);
		if (r->down != NULL)
			bufferevent_free(r->down);
		else
			close(down_fd);
		r->up = r->down = NULL;
		return -1;
	}
	bufferevent_setcb(r->up, runs_read_cb, NULL, runs_up_event_cb, r);
	bufferevent_setcb(r->down, NULL, NULL, runs_down_event_cb, r);
	bufferevent_enable(r->up, EV_READ);
	bufferevent_enable(r->down, EV_WRITE);
	return 0;
}

/* From now on it is one of the daemon's live runs. */
void
runs_track(struct run *r)
{
	TAILQ_INSERT_TAIL(&r->d->runs, r, entry);
	r->d->n_runs++;
}

static int	runs_conversation_load(struct daemon *, struct run *, const char *,
		    char *, size_t);

/*
 * What this run starts from: its own prompt (a follow-up) over the task's, and the
 * ref of its base: the run's own (continue: the earlier run's branch), else the
 * task's base branch, else the repository's default branch, resolved now
 * (jobsgit.c states the rule) so the user's checkout never decides it.
 */
static int
runs_origin(struct daemon *d, struct run *r, const struct store_run *sr,
    struct store_task *t, char *err, size_t errlen)
{
	const char	*b = sr->base_ref != NULL ? sr->base_ref : t->base;
	char		 branch[256];

	(void)d;
	if (sr->prompt != NULL) {
		free(t->prompt);
		if ((t->prompt = strdup(sr->prompt)) == NULL) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
	}
	if (t->repo == NULL)
		return 0;
	if (b != NULL) {
		if ((size_t)snprintf(r->base_ref, sizeof r->base_ref, "refs/heads/%s", b) >=
		    sizeof r->base_ref) {
			snprintf(err, errlen, "base %.64s: name too long", b);
			return -1;
		}
		return 0;
	}
	return jobsgit_default_branch(t->repo, r->base_ref, sizeof r->base_ref, branch,
	    sizeof branch, err, errlen);
}

/*
 * A continued run works on the branch of the run it continues (runbranch.c): at its
 * start the branch must still be there and free of every checkout but the kept
 * worktrees, which are detached (the API checked all this when it queued the run; a
 * person may have changed the repository since). 0 ready, r->branch set; 1 refused
 * (err says why); -1 failed.
 */
static int
runs_continue_branch(struct daemon *d, struct run *r, const struct store_run *sr,
    const struct store_task *t, char *err, size_t errlen)
{
	struct store_run	 prev;
	struct worktree_hold	 h;
	char			 root[PATH_MAX], tip[64], e[512];

	if (sr->branch == NULL) {
		snprintf(err, errlen, "it continues run %s but names no branch",
		    sr->continues);
		return -1;
	}
	snprintf(r->continues, sizeof r->continues, "%s", sr->continues);
	if (store_run_get(d->store, sr->continues, &prev) == 1) {
		if (prev.final_commit != NULL)
			snprintf(r->continues_from, sizeof r->continues_from, "%s",
			    prev.final_commit);
		store_run_free(&prev);
	}
	if (worktree_rev(t->repo, sr->branch, tip, sizeof tip, e, sizeof e) == -1) {
		snprintf(err, errlen, "branch %s of run %s is no longer in %s (deleted "
		    "while this run was queued): nothing to continue on", sr->branch,
		    sr->continues, t->repo);
		return 1;
	}
	snprintf(root, sizeof root, "%s/worktrees", d->home);
	switch (worktree_branch_free(t->repo, sr->branch, root, 1, &h, e, sizeof e)) {
	case WORKTREE_FREE:
		break;
	case WORKTREE_OUTSIDE:
		snprintf(err, errlen, "branch %s was checked out at %.300s while this run was "
		    "queued: a continued run must be the only one to move it", sr->branch,
		    h.path);
		return 1;
	case WORKTREE_DIRTY:
		snprintf(err, errlen, "the kept worktree %.300s of branch %s has uncommitted "
		    "changes (%.100s): commit or discard them, then continue again", h.path,
		    sr->branch, h.changes);
		return 1;
	default:
		snprintf(err, errlen, "%s", e);
		return -1;
	}
	if ((r->branch = strdup(sr->branch)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

/* The log's account of where a continued run starts, and whether the branch moved. */
static void
runs_continue_logged(struct run *r)
{
	int	moved = r->continues_from[0] != '\0' &&
	    strcmp(r->continues_from, r->base_commit) != 0;

	runs_log_line(r, "continues run %s on branch %s%s%s%s", r->continues, r->branch,
	    moved ? " (the branch moved since that run ended, from " : "",
	    moved ? r->continues_from : "", moved ? "): from its current tip" : "");
}

static int
runs_start(struct daemon *d, const char *id)
{
	struct procid		 pi;
	struct store_run	 sr;
	struct store_task	 t;
	struct run		*r;
	char			 dir[2048], err[512];
	int			 down_fd = -1, up_fd = -1, tx;
	struct timeval		 tv;

	memset(&t, 0, sizeof t);
	if (store_run_get(d->store, id, &sr) != 1)
		return -1;
	if (store_task_get(d->store, sr.task_id, &t) != 1) {
		runs_fail_early(d, id, STORE_RUN_FAILED, "its task no longer exists");
		store_run_free(&sr);
		return -1;
	}
	/*
	 * An imported task whose file changed while this run was queued waits for
	 * review again (jobs.c): the run must not start with a definition nobody saw.
	 */
	if (t.needs_review) {
		runs_fail_early(d, id, STORE_RUN_REFUSED, "its task was imported and its "
		    "definition changed; it waits for review (cwctl jobs preview)");
		store_run_free(&sr);
		store_task_free(&t);
		return -1;
	}
	if ((r = runs_alloc(d, sr.id, &t)) == NULL) {
		store_run_free(&sr);
		store_task_free(&t);
		return -1;
	}
	if (runs_origin(d, r, &sr, &t, err, sizeof err) == -1 ||
	    runs_conversation_load(d, r, t.engine, err, sizeof err) == -1) {
		store_run_free(&sr);
		goto fail;
	}
	if (sr.continues != NULL && t.repo != NULL) {
		switch (runs_continue_branch(d, r, &sr, &t, err, sizeof err)) {
		case 0:
			break;
		case 1:
			runs_log_line(r, "run refused: %s", err);
			runs_fail_early(d, r->id, STORE_RUN_REFUSED, err);
			store_run_free(&sr);
			store_task_free(&t);
			runs_free(r);
			return -1;
		default:
			store_run_free(&sr);
			goto fail;
		}
	}
	store_run_free(&sr);
	store_run_set_status(d->store, r->id, STORE_RUN_STARTING, STORE_EXIT_NONE);
	runs_status_published(d, r->id, r->task_name, STORE_RUN_STARTING, STORE_EXIT_NONE);

	snprintf(dir, sizeof dir, "%s/runs", d->home);
	snprintf(r->log_path, sizeof r->log_path, "%s/runs/%s.log", d->home, r->id);
	snprintf(r->pids_path, sizeof r->pids_path, "%s/runs/%s.pids", d->home, r->id);
	if (paths_mkdir_p(dir, 0700) == -1 ||
	    (r->log_fd = open(r->log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
	    0600)) == -1) {
		snprintf(err, sizeof err, "cannot open its log %.400s: %s", r->log_path,
		    strerror(errno));
		goto fail;
	}
	store_run_set_log_path(d->store, r->id, r->log_path);

	snprintf(dir, sizeof dir, "%s/worktrees/%s", d->home, r->task_name);
	snprintf(r->workdir, sizeof r->workdir, "%s/%s", dir, r->id);
	if (paths_mkdir_p(dir, 0700) == -1) {
		snprintf(err, sizeof err, "cannot create %.400s: %s", dir, strerror(errno));
		goto fail;
	}
	if (t.repo != NULL) {
		/* A continue works on the branch it continues (runs_continue_branch). */
		if ((r->repo = strdup(t.repo)) == NULL || (r->branch == NULL &&
		    asprintf(&r->branch, "clockwork/%s/%s", r->task_name, r->id) == -1)) {
			r->branch = NULL;
			snprintf(err, sizeof err, "out of memory");
			goto fail;
		}
		if (worktree_create_run_at(t.repo, r->base_ref, r->workdir, r->branch,
		    r->base_commit, sizeof r->base_commit, r->git_objects,
		    sizeof r->git_objects, err, sizeof err) == -1)
			goto fail;
		store_run_set_git(d->store, r->id, r->workdir, r->branch, r->base_commit, NULL);
		runs_log_line(r, "worktree %s on branch %s from %s (%s)", r->workdir,
		    r->branch, r->base_ref, r->base_commit);
		if (r->continues[0] != '\0')
			runs_continue_logged(r);
		/*
		 * An imported job's review covers the files its prompt names (jobs.c):
		 * at this base they must be the objects the person saw.
		 */
		switch (jobs_pins_check(d, &t, r->base_commit, err, sizeof err)) {
		case 0:
			break;
		case 1:
			runs_log_line(r, "run refused: %s", err);
			runs_fail_early(d, r->id, STORE_RUN_REFUSED, err);
			store_task_free(&t);
			runs_free(r);
			return -1;
		default:
			goto fail;
		}
	} else {
		if (mkdir(r->workdir, 0700) == -1) {
			snprintf(err, sizeof err, "cannot create %.400s: %s", r->workdir,
			    strerror(errno));
			goto fail;
		}
		store_run_set_git(d->store, r->id, r->workdir, NULL, NULL, NULL);
		runs_log_line(r, "scratch directory %s", r->workdir);
	}

	if ((r->pid = runs_spawn(d, r, &down_fd, &up_fd, err, sizeof err)) == -1)
		goto fail;
	if (procid_stat(r->pid, &pi) == 0 && pi.state != 'Z') {
		r->start = pi.start;
		proctree_add(&r->procs, r->pid, r->start);
	}
	r->pidfd = procid_pidfd(r->pid, r->start);
	(void)runs_connect(r, up_fd, down_fd);	/* a failure is told below */
	runs_track(r);
	/* The runner and the running status: one transaction, one sync (issue 24). */
	tx = store_begin(d->store) == 0;
	store_run_set_runner(d->store, r->id, r->pid, r->pid, (int64_t)r->start, -1);
	store_run_set_status(d->store, r->id, STORE_RUN_RUNNING, STORE_EXIT_NONE);
	if (tx && store_commit(d->store) == -1) {
		log_error("run %s: cannot record its runner: %s", r->id,
		    store_errmsg(d->store));
		store_rollback(d->store);
	}
	/* Published once on disk: the store writes, then the bus tells. */
	runs_status_published(d, r->id, r->task_name, STORE_RUN_RUNNING, STORE_EXIT_NONE);
	supervise_save(&r->procs, r->pids_path);
	log_info("run %s: task %s, runner pid %d, workdir %s", r->id, r->task_name,
	    (int)r->pid, r->workdir);
	runs_log_line(r, "run %s of task %s started (runner pid %d)", r->id, r->task_name,
	    (int)r->pid);
	if (r->up == NULL || r->down == NULL || runs_send_spec(r, &t) == -1)
		runs_stop(r, STORE_EXIT_FAILED, "cannot talk to cw-runner");
	/* The runner ends its own budget first; this fires only if it did not. */
	tv.tv_sec = r->budget_seconds + (d->stop_grace_ms + DAEMON_BUDGET_GRACE_MS) / 1000;
	tv.tv_usec = ((d->stop_grace_ms + DAEMON_BUDGET_GRACE_MS) % 1000) * 1000;
	evtimer_add(r->budget_ev, &tv);
	store_task_free(&t);
	return 0;
fail:
	runs_log_line(r, "run could not start: %s", err);
	runs_fail_early(d, r->id, STORE_RUN_FAILED, err);
	store_task_free(&t);
	runs_free(r);
	return -1;
}

static enum store_run_status
runs_status_for(enum store_exit_reason why)
{
	switch (why) {
	case STORE_EXIT_COMPLETED:
		return STORE_RUN_COMPLETED;
	case STORE_EXIT_STOPPED:
	case STORE_EXIT_BUDGET_SECONDS:
	case STORE_EXIT_BUDGET_TURNS:
	case STORE_EXIT_BUDGET_DOLLARS:
		return STORE_RUN_STOPPED;
	case STORE_EXIT_INTERRUPTED:
		return STORE_RUN_INTERRUPTED;
	default:
		return STORE_RUN_FAILED;
	}
}


/* The import has ended: its result goes in the report, and the run ends. */

static void
runs_import_done(struct run *r, cJSON *res)
{
	char	 q[PATH_MAX];
	int	 ok = 0, removed = 0;

	runimport_free(r->import);
	r->import = NULL;
	/*
	 * An import that ended without saying where the run's files went (killed at
	 * its timeout, crashed) may have left the run's own repository at the worktree
	 * path: it goes to quarantine, so nobody's git opens it there.
	 */
	(void)json_get_bool(res, "ok", &ok);
	(void)json_get_bool(res, "removed", &removed);
	if (!ok && !removed && cJSON_GetObjectItemCaseSensitive(res, "quarantine") == NULL) {
		q[0] = '\0';
		if (recover_quarantine(r->d, r->id, r->workdir, q, sizeof q) == -1)
			log_warn("run %s: cannot move %s to quarantine: %s", r->id, r->workdir,
			    strerror(errno));
		else if (q[0] != '\0')
			json_add_string(res, "quarantine", q);
	}
	r->import_result = res;
	runs_finish(r);
}

/*
 * The report's git facts come from the import (runimport.c), which read the user's
 * repository after verifying what the run sent: never from the run's own repository.
 */
static void
runs_git_report(struct run *r, cJSON *git)
{
	struct daemon	*d = r->d;
	const cJSON	*res = r->import_result, *ds;
	const char	*final, *q, *e;
	cJSON		*j;
	int		 ok = 0, removed = 0;

	json_add_string(git, "base_commit", r->base_commit);
	if (r->base_ref[0] != '\0')
		json_add_string(git, "base_ref", r->base_ref);
	if (r->continues[0] != '\0' && (j = cJSON_AddObjectToObject(git,
	    "continues")) != NULL) {
		/* Both runs list the branch; this one says it worked on top of the other. */
		json_add_string(j, "run", r->continues);
		json_add_string(j, "branch", r->branch);
		json_add_string(j, "from_commit", r->continues_from[0] != '\0' ?
		    r->continues_from : NULL);
		cJSON_AddBoolToObject(j, "moved", r->continues_from[0] != '\0' &&
		    strcmp(r->continues_from, r->base_commit) != 0);
	}
	if (res == NULL)
		return;
	(void)json_get_bool(res, "ok", &ok);
	(void)json_get_bool(res, "removed", &removed);
	final = json_get_string(res, "final_commit");
	json_add_string(git, "final_commit", final);
	if ((ds = cJSON_GetObjectItemCaseSensitive(res, "diffstat")) != NULL)
		cJSON_AddItemToObject(git, "diffstat", cJSON_Duplicate(ds, 1));
	cJSON_AddBoolToObject(git, "imported", ok && !removed);
	if ((ds = cJSON_GetObjectItemCaseSensitive(res, "automation")) != NULL &&
	    cJSON_GetArraySize(ds) > 0) {
		cJSON_AddItemToObject(git, "automation", cJSON_Duplicate(ds, 1));
		runs_log_line(r, "the run changed %d automation file(s) (they make tools run "
		    "code when a checkout is opened): held back in its worktree; merging "
		    "needs --accept-automation", cJSON_GetArraySize(ds));
	}
	if (final != NULL)
		store_run_set_git(d->store, r->id, NULL, NULL, NULL, final);
	if (removed)
		return;
	if (ok) {
		runs_log_line(r, "imported: %s is at %s", r->branch, final);
		if ((ds = cJSON_GetObjectItemCaseSensitive(res, "checkout")) != NULL) {
			cJSON_AddItemToObject(git, "checkout", cJSON_Duplicate(ds, 1));
			runs_log_line(r, "%s", json_get_string(ds, "why") ?
			    json_get_string(ds, "why") : "the kept worktree was not checked out");
		}
		return;
	}
	e = json_get_string(res, "error");
	q = json_get_string(res, "quarantine");
	json_add_string(git, "error", e);
	json_add_string(git, "quarantine", q);
	{
		static const char *const keep[] = { "quarantine_bundle", "quarantine_files",
		    "quarantine_bundle_error", "quarantine_held_back", "quarantine_error" };

		for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++)
			if ((ds = cJSON_GetObjectItemCaseSensitive(res, keep[i])) != NULL)
				cJSON_AddItemToObject(git, keep[i], cJSON_Duplicate(ds, 1));
	}
	runs_log_line(r, "not imported: %s%s%s%s", e != NULL ? e : "unknown error",
	    q == NULL ? "" : cJSON_GetObjectItemCaseSensitive(res, "quarantine_files") !=
	    NULL ? "; the run's work is kept, untrusted and inert (a bundle and plain "
	    "files, no repository), in " : "; the run's directory is kept, untrusted and "
	    "unconverted (do not run git or an agent in it), in ", q != NULL ? q : "",
	    q != NULL ? " (its README.txt says how to inspect it safely)" : "");
	if ((j = cJSON_CreateObject()) != NULL) {
		json_add_string(j, "branch", r->branch);
		json_add_string(j, "error", e);
		json_add_string(j, "quarantine", q);
		journal_add(d, r->id, "import_refused", j);
	}
}

/* What was cut or only counted because of a bound: the daemon's facts on the report. */
static void
runs_report_bounds(struct run *r, cJSON *rep)
{
	cJSON	*o;

	cJSON_DeleteItemFromObjectCaseSensitive(rep, "log");
	if ((o = cJSON_AddObjectToObject(rep, "log")) != NULL) {
		cJSON_AddBoolToObject(o, "truncated", r->log_dropped > 0);
		cJSON_AddNumberToObject(o, "bytes_dropped", (double)r->log_dropped);
		cJSON_AddNumberToObject(o, "max_bytes", (double)r->log_max);
	}
	cJSON_DeleteItemFromObjectCaseSensitive(rep, "records");
	if ((r->events_dropped > 0 || r->journal_dropped > 0) &&
	    (o = cJSON_AddObjectToObject(rep, "records")) != NULL) {
		cJSON_AddNumberToObject(o, "events_dropped", (double)r->events_dropped);
		cJSON_AddNumberToObject(o, "journal_dropped", (double)r->journal_dropped);
	}
}

/* The stored report: the runner's own, with the daemon's facts laid over it. */
void
runs_finish(struct run *r)
{
	struct daemon		*d = r->d;
	struct run_approval	*a;
	enum store_exit_reason	 why;
	enum store_run_status	 status;
	const char		*rs, *es, *sn, *wn;
	cJSON			*rep, *j, *git, *spent, *runner, *ap;
	char			 cgerr[PATH_MAX + 64], ended[96];
	double			 secs;
	int			 refused = 0, sb, n, cost_unknown = 0, tx, recorded;

	if (r->import != NULL)
		return;		/* the import is under way: it finishes the run */
	/* Whatever the run left running ends with it. */
	n = supervise_kill_tree(&r->procs, 0);
	if (n > 0) {
		log_info("run %s: ended %d leftover process(es)", r->id, n);
		runs_log_line(r, "ended %d leftover process(es)", n);
	}
	/* And its cgroup, if the runner was ended before it could remove that. */
	if (supervise_cgroup_end(r->id, cgerr, sizeof cgerr) == -1)
		runs_log_line(r, "the run's cgroup was left: %s", cgerr);
	evtimer_del(r->budget_ev);
	evtimer_del(r->grace_ev);
	if (r->backstop_ev != NULL)
		evtimer_del(r->backstop_ev);
	if (r->repo != NULL && !r->import_started) {
		int	 nothing_ran = !r->stopping && ((WIFEXITED(r->wstatus) &&
		    WEXITSTATUS(r->wstatus) == 3) || (r->report != NULL &&
		    (rs = json_get_string(r->report, "status")) != NULL &&
		    strcmp(rs, "refused") == 0));

		/* What filled the disk is removed, not imported (diskguard.c). */
		if (r->disk_full)
			nothing_ran = 1;

		r->import_started = 1;
		if (runimport_start(r, r->report != NULL ? cJSON_GetObjectItemCaseSensitive(
		    r->report, "seal") : NULL, nothing_ran, runs_import_done) == 0) {
			if (!nothing_ran)
				runs_log_line(r, "importing the run's branch %s into %s",
				    r->branch, r->repo);
			return;
		}
		r->import_result = cJSON_CreateObject();
		cJSON_AddBoolToObject(r->import_result, "ok", 0);
		json_add_string(r->import_result, "error", "cannot start the import");
	}
	runs_elapsed(r, &secs);

	rep = r->report != NULL ? cJSON_Duplicate(r->report, 1) : cJSON_CreateObject();
	if (rep == NULL)
		rep = cJSON_CreateObject();
	cJSON_DeleteItemFromObjectCaseSensitive(rep, "v");
	cJSON_DeleteItemFromObjectCaseSensitive(rep, "type");
	if (r->disk_full && (j = cJSON_AddObjectToObject(rep, "disk")) != NULL) {
		cJSON_AddBoolToObject(j, "full", 1);
		cJSON_AddNumberToObject(j, "run_bytes", (double)r->disk_bytes);
		cJSON_AddBoolToObject(j, "worktree_removed", r->repo != NULL);
		json_add_string(j, "why", "the run held the most bytes when the disk "
		    "fell below the free-space floor; what it wrote was removed so that "
		    "the queue could go on");
	}

	if (r->stopping && r->stop_reason != STORE_EXIT_FAILED)
		why = r->stop_reason;
	else if (r->protocol_error || r->stopping)
		why = STORE_EXIT_FAILED;
	else if ((rs = json_get_string(r->report, "exit_reason")) != NULL &&
	    store_exit_reason_parse(rs) > 0)
		why = (enum store_exit_reason)store_exit_reason_parse(rs);
	else if (r->report != NULL && (rs = json_get_string(r->report, "status")) != NULL &&
	    (strcmp(rs, "succeeded") == 0 || strcmp(rs, "completed") == 0))
		why = STORE_EXIT_COMPLETED;
	else
		why = STORE_EXIT_FAILED;
	status = runs_status_for(why);
	if (!r->stopping && WIFEXITED(r->wstatus) && WEXITSTATUS(r->wstatus) == 3) {
		/* The runner could not enforce the sandbox: nothing ran. */
		status = STORE_RUN_REFUSED;
		why = STORE_EXIT_FAILED;
		refused = 1;
	}
	if (r->report == NULL && !r->stopping && !refused)
		json_add_string(rep, "error", "cw-runner ended without a report");
	if (r->report != NULL && (rs = json_get_string(r->report, "status")) != NULL &&
	    strcmp(rs, "refused") == 0) {
		status = STORE_RUN_REFUSED;
		refused = 1;
	}

	if (json_get_bool(rep, "sandboxed", &sb) == 0)
		r->sandboxed = sb;
	cJSON_DeleteItemFromObjectCaseSensitive(rep, "run_id");
	cJSON_DeleteItemFromObjectCaseSensitive(rep, "status");
	cJSON_DeleteItemFromObjectCaseSensitive(rep, "exit_reason");
	cJSON_DeleteItemFromObjectCaseSensitive(rep, "sandboxed");
	json_add_string(rep, "run_id", r->id);
	json_add_string(rep, "task", r->task_name);
	json_add_string(rep, "status", store_run_status_name(status));
	json_add_string(rep, "exit_reason", store_exit_reason_name(why));
	if (r->sandboxed == -1)
		cJSON_AddNullToObject(rep, "sandboxed");
	else
		cJSON_AddBoolToObject(rep, "sandboxed", r->sandboxed);
	if (cJSON_GetObjectItemCaseSensitive(rep, "not_enforced") == NULL)
		cJSON_AddArrayToObject(rep, "not_enforced");
	if (r->stop_message != NULL)
		json_add_string(rep, "message", r->stop_message);

	/* Spent: the runner's figures when it gave them, the daemon's clock for time. */
	if ((spent = cJSON_GetObjectItemCaseSensitive(rep, "spent")) != NULL &&
	    cJSON_IsObject(spent)) {
		double	dd;
		int	tt;

		/* byok without a price (issue 23): the cost is unknown, not $0. */
		cost_unknown = cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(spent,
		    "dollars_known"));

		if (json_get_number(spent, "dollars", &dd) == 0 && dd > r->spent_dollars)
			r->spent_dollars = dd;
		if (json_get_int(spent, "turns", &tt) == 0 && tt > r->spent_turns)
			r->spent_turns = tt;
	}
	cJSON_DeleteItemFromObjectCaseSensitive(rep, "spent");
	if ((spent = cJSON_AddObjectToObject(rep, "spent")) != NULL) {
		cJSON_AddNumberToObject(spent, "dollars", r->spent_dollars);
		cJSON_AddNumberToObject(spent, "turns", r->spent_turns);
		cJSON_AddNumberToObject(spent, "seconds", (double)(int64_t)(secs * 1000) / 1000);
		if (cost_unknown) {
			cJSON_AddBoolToObject(spent, "dollars_known", 0);
			r->spent_dollars = RUNS_DOLLARS_UNKNOWN;
		}
	}
	if (cJSON_GetObjectItemCaseSensitive(rep, "denials") == NULL)
		cJSON_AddItemToObject(rep, "denials", record_list_json(&r->denials));
	runs_report_bounds(r, rep);
	if ((ap = cJSON_GetObjectItemCaseSensitive(rep, "approvals")) == NULL) {
		ap = cJSON_AddObjectToObject(rep, "approvals");
		if (ap != NULL)
			cJSON_AddNumberToObject(ap, "requested", r->n_approvals);
	}

	cJSON_DeleteItemFromObjectCaseSensitive(rep, "git");
	if ((git = cJSON_AddObjectToObject(rep, "git")) != NULL) {
		json_add_string(git, "repo", r->repo);
		json_add_string(git, "worktree", r->workdir);
		json_add_string(git, "branch", r->branch);
		if (r->repo != NULL)
			runs_git_report(r, git);
	}
	if ((runner = cJSON_AddObjectToObject(rep, "runner")) != NULL) {
		cJSON_AddNumberToObject(runner, "pid", r->pid);
		if (r->adopted)
			cJSON_AddBoolToObject(runner, "reattached", 1);
		else if (r->reaped && WIFEXITED(r->wstatus))
			cJSON_AddNumberToObject(runner, "exit_status", WEXITSTATUS(r->wstatus));
		else if (r->reaped && WIFSIGNALED(r->wstatus))
			cJSON_AddNumberToObject(runner, "signal", WTERMSIG(r->wstatus));
	}

	/*
	 * The report, what was spent, the runner and the end status in one transaction
	 * (issue 24): one sync to disk instead of five, and a crash leaves the run's end
	 * recorded whole or not at all (then recovery ends it as interrupted). The bus
	 * is told after the commit.
	 */
	tx = store_begin(d->store) == 0;
	runs_report_store(d, r->id, rep);
	store_run_set_spent(d->store, r->id, r->spent_dollars, r->spent_turns, secs);
	store_run_set_runner(d->store, r->id, r->pid, r->pid, (int64_t)r->start,
	    r->sandboxed);
	if ((recorded = store_run_set_status(d->store, r->id, status, why)) == -1)
		log_error("run %s: cannot record its end: %s", r->id, store_errmsg(d->store));
	store_approval_expire_run(d->store, r->id);
	if (tx && store_commit(d->store) == -1) {
		log_error("run %s: cannot record its end: %s", r->id, store_errmsg(d->store));
		store_rollback(d->store);
	} else {
		if (recorded != -1)
			runs_status_published(d, r->id, r->task_name, status, why);
		TAILQ_FOREACH(a, &r->approvals, entry)
			runs_approval_published(r, a->id, "expired", NULL);
	}

	if (r->sandboxed == 0 && !r->journaled_sandbox_off &&
	    (j = cJSON_CreateObject()) != NULL) {
		json_add_string(j, "source", "report");
		journal_add(d, r->id, "sandbox_disabled", j);
	}
	if (refused && (j = cJSON_CreateObject()) != NULL) {
		es = json_get_string(rep, "error");
		json_add_string(j, "reason", es != NULL ? es : "cw-runner refused the run");
		journal_add(d, r->id, "run_refused", j);
	}
	cJSON_Delete(rep);

	/* The reason only when it says more than the status ("stopped (budget_turns)"). */
	sn = store_run_status_name(status);
	wn = store_exit_reason_name(why);
	if (wn == NULL || strcmp(wn, sn) == 0)
		snprintf(ended, sizeof ended, "%s", sn);
	else
		snprintf(ended, sizeof ended, "%s (%s)", sn, wn);
	log_info("run %s: %s after %.1f s", r->id, ended, secs);
	runs_log_flush(r);
	runs_log_line(r, "run ended: %s after %.1f s", ended, secs);
	unlink(r->pids_path);
	runs_forget_files(d, r->id);
	TAILQ_REMOVE(&d->runs, r, entry);
	d->n_runs--;
	{
		int64_t	task_id = r->task_id;

		runs_free(r);
		if (!d->shutting_down) {
			struct gc_result	res;

			gc_run(d, task_id, 0, &res, NULL);
		}
	}
	if (d->shutting_down && d->n_runs == 0)
		event_base_loopexit(d->base, NULL);
	else
		runs_pump_later(d);
}

void
runs_sigchld(struct daemon *d)
{
	struct run	*r;
	pid_t		 pid;
	int		 status;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		if (pid == parsechild_pid()) {
			parsechild_reaped(pid, status);	/* it says so at its next call */
			continue;
		}
		TAILQ_FOREACH(r, &d->runs, entry)
			if (r->pid == pid && !r->reaped)
				break;
		if (r == NULL) {
			log_debug("reaped pid %d (not a runner)", (int)pid);
			continue;
		}
		r->reaped = 1;
		r->wstatus = status;
		if (r->eof)
			runs_finish(r);
		else {
			/* Its stdout may be held open by a leftover: end those, then finish. */
			struct timeval	tv = { 1, 0 };

			supervise_kill_tree(&r->procs, 0);
			evtimer_del(r->grace_ev);
			evtimer_add(r->grace_ev, &tv);
		}
	}
}

/* Once a second while runs are live: remember every process each run has. */
void
runs_supervise_tick(struct daemon *d)
{
	struct run		*r;
	struct proctree	 orphans = { 0 }, strays = { 0 };
	size_t			 before;
	int			 owned;

	TAILQ_FOREACH(r, &d->runs, entry) {
		before = r->procs.n;
		supervise_collect(&r->procs, r->reaped ? 0 : r->pid);
		if (r->procs.n != before)
			supervise_save(&r->procs, r->pids_path);
	}
	/*
	 * clockworkd is a child subreaper: a process whose parent died inside a run is
	 * re-parented here. It belongs to a live run if that run has seen it; otherwise it
	 * escaped every run's supervision and is ended.
	 */
	if (supervise_orphans(getpid(), &orphans) == 0) {
		for (size_t i = 0; i < orphans.n; i++) {
			/* cw-parse is the daemon's own child, not a run's. */
			owned = orphans.v[i].pid == parsechild_pid();
			TAILQ_FOREACH(r, &d->runs, entry)
				if (proctree_has(&r->procs, orphans.v[i].pid,
				    orphans.v[i].start))
					owned = 1;
			if (!owned)
				proctree_add(&strays, orphans.v[i].pid, orphans.v[i].start);
		}
		if (strays.n > 0) {
			int n = supervise_kill_tree(&strays, 0);

			log_warn("ended %d process(es) that left their run's supervision", n);
		}
	}
	proctree_free(&orphans);
	proctree_free(&strays);
}

static int
runs_next_queued(struct daemon *d, char *id, size_t idlen)
{
	sqlite3_stmt	*st;
	int		 found = 0;

	if (sqlite3_prepare_v2(store_db(d->store), "SELECT id FROM runs WHERE status = "
	    "'queued' ORDER BY created_at, rowid LIMIT 1", -1, &st, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW) {
		snprintf(id, idlen, "%s", (const char *)sqlite3_column_text(st, 0));
		found = 1;
	}
	sqlite3_finalize(st);
	return found;
}

/* Start queued runs, oldest first, while there are free slots. */
void
runs_pump(struct daemon *d)
{
	char	id[STORE_ID_LEN];
	int	limit = d->cfg.max_concurrent_runs > 0 ? d->cfg.max_concurrent_runs : 1;

	char	last[STORE_ID_LEN] = "";

	/*
	 * A start that fails without moving its run out of the queue (its status could
	 * not be written: a full disk) must not be tried again at once: the queue waits
	 * for the next pump instead of spinning the daemon's loop.
	 */
	while (!d->shutting_down && d->n_runs < (size_t)limit && diskguard_room(d) &&
	    runs_next_queued(d, id, sizeof id) == 1 && strcmp(id, last) != 0) {
		snprintf(last, sizeof last, "%s", id);
		runs_start(d, id);
	}
}

static void
runs_pump_cb(evutil_socket_t fd, short what, void *arg)
{
	runs_pump(arg);
}

void
runs_pump_later(struct daemon *d)
{
	if (d->ev_pump == NULL)
		d->ev_pump = evtimer_new(d->base, runs_pump_cb, d);
	/*
	 * A moment later, not at once: the reply to the request that queued the run goes
	 * out first, instead of waiting for a worktree and a fork.
	 */
	if (d->ev_pump != NULL && !evtimer_pending(d->ev_pump, NULL)) {
		struct timeval	tv = { 0, 1000 };

		evtimer_add(d->ev_pump, &tv);
	}
}

int
runs_enqueue(struct daemon *d, const struct store_task *t, char *id_out, size_t idlen,
    char *err, size_t errlen)
{
	if (store_run_create(d->store, t->id, NULL, id_out, idlen) == -1) {
		snprintf(err, errlen, "%s", store_errmsg(d->store));
		return -1;
	}
	log_info("run %s: queued for task %s", id_out, t->name);
	runs_pump_later(d);
	return 0;
}

int
runs_enqueue_from(struct daemon *d, const struct store_task *t, const char *parent,
    const char *prompt, const char *base, const char *resume_from,
    const char *resume_id, int fresh, const char *continues, struct runbranch *cb,
    char *id_out, size_t idlen, char *err, size_t errlen)
{
	char	*conv = NULL;
	cJSON	*c;
	int	 rc = -1, busy;

	/* The queued run's own record of what it continues: runs_start() reads it. */
	if (resume_id != NULL || fresh) {
		if ((c = cJSON_CreateObject()) == NULL) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		json_add_string(c, "from", resume_from != NULL ? resume_from : parent);
		if (resume_id != NULL)
			json_add_string(c, "resume", resume_id);
		else
			cJSON_AddTrueToObject(c, "fresh");
		conv = cJSON_PrintUnformatted(c);
		cJSON_Delete(c);
		if (conv == NULL) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
	}
	if (store_begin(d->store) == -1) {
		snprintf(err, errlen, "%s", store_errmsg(d->store));
		cJSON_free(conv);
		return -1;
	}
	if (store_run_create(d->store, t->id, NULL, id_out, idlen) == -1 ||
	    store_run_set_origin(d->store, id_out, parent, prompt, base) == -1 ||
	    (cb != NULL && store_run_set_continues(d->store, id_out, continues,
	    cb->branch) == -1) ||
	    (conv != NULL && store_run_event_append(d->store, id_out,
	    RUNS_EVENT_CONVERSATION, conv, NULL) == -1)) {
		busy = errno == EBUSY;
		snprintf(err, errlen, "%s", store_errmsg(d->store));
		store_rollback(d->store);
		cJSON_free(conv);
		return busy ? 1 : -1;
	}
	/*
	 * The branch is the queued run's in the store (above, not yet committed); git's
	 * hold goes last, so that a refusal leaves the kept worktree as it was.
	 */
	if (cb != NULL && runbranch_take(d, t, cb, err, errlen) == -1) {
		store_rollback(d->store);
		cJSON_free(conv);
		return -1;
	}
	if (store_commit(d->store) == -1) {
		snprintf(err, errlen, "%s", store_errmsg(d->store));
		store_rollback(d->store);
		cJSON_free(conv);
		return -1;
	}
	rc = 0;
	cJSON_free(conv);
	log_info("run %s: queued for task %s (from run %s%s%s%s)", id_out, t->name,
	    parent != NULL ? parent : "-", resume_id != NULL ? ", resuming its "
	    "conversation" : fresh ? ", a new conversation" : "", cb != NULL ?
	    ", on branch " : "", cb != NULL ? cb->branch : "");
	runs_status_published(d, id_out, t->name, STORE_RUN_QUEUED, STORE_EXIT_NONE);
	runs_pump_later(d);
	return rc;
}

int
runs_conversation_of(const struct store_run *sr, const char *engine, char *id,
    size_t idlen, char *why, size_t whylen)
{
	const cJSON	*c, *e;
	const char	*s;
	cJSON		*rep;
	int		 kept = 0;

	if (!conversation_engine_resumes(engine)) {
		snprintf(why, whylen, "engine %s has no conversation to resume", engine);
		return -1;
	}
	if (sr->report == NULL || (rep = json_parse(sr->report, strlen(sr->report))) ==
	    NULL) {
		snprintf(why, whylen, "run %s has no report", sr->id);
		return -1;
	}
	e = cJSON_GetObjectItemCaseSensitive(rep, "engine");
	c = cJSON_GetObjectItemCaseSensitive(rep, "conversation");
	s = json_get_string(e, "name");
	if (s == NULL || strcmp(s, engine) != 0) {
		snprintf(why, whylen, "run %s ran engine %.32s, and the task's engine is "
		    "now %s", sr->id, s != NULL ? s : "-", engine);
		goto fail;
	}
	(void)json_get_bool(c, "kept", &kept);
	s = json_get_string(c, "id");
	if (c == NULL || !kept) {
		snprintf(why, whylen, "run %s kept no conversation%s%.300s", sr->id,
		    json_get_string(c, "error") != NULL ? ": " : "",
		    json_get_string(c, "error") != NULL ? json_get_string(c, "error") : "");
		goto fail;
	}
	/* The engine printed it: checked again before it goes back to a runner. */
	if (!conversation_id_valid(engine, s) || strlen(s) >= idlen) {
		snprintf(why, whylen, "run %s's conversation id is not a valid %s id",
		    sr->id, engine);
		goto fail;
	}
	snprintf(id, idlen, "%s", s);
	cJSON_Delete(rep);
	return 0;
fail:
	cJSON_Delete(rep);
	return -1;
}

int
runs_conversation_resumed(struct daemon *d, const char *run_id, const char *engine,
    char *from_out, size_t fromlen, char *id_out, size_t idlen, char *err,
    size_t errlen)
{
	struct store_run_event	*ev = NULL;
	const char		*from, *id;
	cJSON			*c;
	size_t			 n = 0;
	int			 rc = 0;

	if (store_run_event_list(d->store, run_id, 0, 16, &ev, &n) == -1) {
		snprintf(err, errlen, "its events cannot be read: %s", store_errmsg(d->store));
		return -1;
	}
	for (size_t i = 0; i < n && rc == 0; i++) {
		if (strcmp(ev[i].kind, RUNS_EVENT_CONVERSATION) != 0 || ev[i].data == NULL)
			continue;
		if ((c = json_parse(ev[i].data, strlen(ev[i].data))) == NULL)
			continue;
		from = json_get_string(c, "from");
		id = json_get_string(c, "resume");
		if (id != NULL) {
			if (from == NULL || strlen(from) >= fromlen || strlen(id) >= idlen ||
			    !conversation_id_valid(engine, id)) {
				snprintf(err, errlen, "the conversation it continues is not a "
				    "valid %s conversation", engine);
				rc = -1;
			} else {
				snprintf(from_out, fromlen, "%s", from);
				snprintf(id_out, idlen, "%s", id);
				rc = 1;
			}
		}
		cJSON_Delete(c);
	}
	store_run_event_list_free(ev, n);
	return rc;
}

/* A continue's record, for the runner: checked again, as all a run's output is. */
static int
runs_conversation_load(struct daemon *d, struct run *r, const char *engine, char *err,
    size_t errlen)
{
	return runs_conversation_resumed(d, r->id, engine, r->resume_run,
	    sizeof r->resume_run, r->resume_id, sizeof r->resume_id, err, errlen) == -1 ?
	    -1 : 0;
}

/* A run as the API shows it; the report is masked on the way out. */
cJSON *
runs_review_json(const struct store_run *sr)
{
	cJSON	*o, *p;

	if (!store_run_status_terminal(sr->status) || (sr->branch == NULL &&
	    sr->review_state == NULL))
		return cJSON_CreateNull();
	o = cJSON_CreateObject();
	json_add_string(o, "state", sr->review_state != NULL ? sr->review_state :
	    "waiting");
	if (sr->review_at != NULL)
		json_add_string(o, "at", sr->review_at);
	else
		cJSON_AddNullToObject(o, "at");
	json_add_string(o, "detail", sr->review_detail != NULL ? sr->review_detail : "");
	if (sr->pushed_at == NULL)
		cJSON_AddNullToObject(o, "pushed");
	else if ((p = cJSON_AddObjectToObject(o, "pushed")) != NULL) {
		json_add_string(p, "remote", sr->pushed_remote);
		json_add_string(p, "branch", sr->pushed_branch);
		json_add_string(p, "at", sr->pushed_at);
	}
	return o;
}

cJSON *
runs_to_json(const struct store_run *sr, int with_report)
{
	cJSON	*o = cJSON_CreateObject(), *s, *rep;

	if (o == NULL)
		return NULL;
	json_add_string(o, "id", sr->id);
	cJSON_AddNumberToObject(o, "task_id", (double)sr->task_id);
	json_add_string(o, "task", sr->task_name);
	json_add_string(o, "status", store_run_status_name(sr->status));
	json_add_string(o, "exit_reason", store_exit_reason_name(sr->exit_reason));
	json_add_string(o, "worktree", sr->worktree);
	json_add_string(o, "branch", sr->branch);
	json_add_string(o, "base_commit", sr->base_commit);
	json_add_string(o, "final_commit", sr->final_commit);
	if (sr->runner_pid > 0)
		cJSON_AddNumberToObject(o, "runner_pid", (double)sr->runner_pid);
	else
		cJSON_AddNullToObject(o, "runner_pid");
	if (sr->sandboxed == -1)
		cJSON_AddNullToObject(o, "sandboxed");
	else
		cJSON_AddBoolToObject(o, "sandboxed", sr->sandboxed);
	if ((s = cJSON_AddObjectToObject(o, "spent")) != NULL) {
		/* To a hundredth of a cent and a millisecond: no float noise in the JSON. */
		/* Stored as RUNS_DOLLARS_UNKNOWN when the model had no price. */
		cJSON_AddNumberToObject(s, "dollars", sr->spent_dollars < 0 ? 0 :
		    round(sr->spent_dollars * 1e6) / 1e6);
		if (sr->spent_dollars < 0)
			cJSON_AddBoolToObject(s, "dollars_known", 0);
		cJSON_AddNumberToObject(s, "turns", sr->spent_turns);
		cJSON_AddNumberToObject(s, "seconds", round(sr->spent_seconds * 1e3) / 1e3);
	}
	json_add_string(o, "log_path", sr->log_path);
	cJSON_AddNumberToObject(o, "exported", sr->exported);
	json_add_string(o, "created_at", sr->created_at);
	json_add_string(o, "started_at", sr->started_at);
	json_add_string(o, "ended_at", sr->ended_at);
	json_add_string(o, "parent_run", sr->parent_run);
	json_add_string(o, "continues", sr->continues);
	json_add_string(o, "base_ref", sr->base_ref);
	if (sr->prompt != NULL)
		json_add_string(o, "prompt", sr->prompt);
	cJSON_AddItemToObject(o, "review", runs_review_json(sr));
	if (with_report) {
		/* Masked when it was stored (runs_report_store). */
		rep = sr->report != NULL ? json_parse(sr->report, strlen(sr->report)) : NULL;
		if (rep != NULL)
			cJSON_AddItemToObject(o, "report", rep);
		else
			cJSON_AddNullToObject(o, "report");
	}
	return o;
}
