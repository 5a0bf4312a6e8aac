/*
 * clockworkd starting over (SPEC D4, R1): every run the store says is live is taken
 * over when its runner answers on its control socket (runner/uplink.c) or has left its
 * report, and interrupted otherwise; a repository run's files that were never sealed
 * go to quarantine, where nothing opens them with git.
 */
#define _GNU_SOURCE	/* struct ucred */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/bufferevent.h>
#include <event2/event.h>
#include <sqlite3.h>

#include "daemon.h"
#include "journal.h"
#include "json.h"
#include "log.h"
#include "procid.h"
#include "proctree.h"
#include "quarantine.h"
#include "recover.h"
#include "runs.h"
#include "store.h"
#include "supervise.h"
#include "wire.h"

/*
 * Move a run's directory to <home>/quarantine/<run> (quarantine.c: unconverted, its
 * .git out of git's sight); a missing one is not an error (out is "" then).
 */
int
recover_quarantine(struct daemon *d, const char *id, const char *workdir, char *out,
    size_t outlen)
{
	return quarantine_move_raw(d->home, id, workdir, "the run's work could not be "
	    "imported (the import did not finish, or the daemon restarted before the run "
	    "was sealed)", out, outlen);
}

/* Connect to a runner's control socket (runner/uplink.c); the descriptor or -1. */
static int
recover_connect(struct daemon *d, const char *id)
{
	struct sockaddr_un	 sun;
	struct ucred		 cred;
	socklen_t		 clen = sizeof cred;
	int			 fd;

	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	if ((size_t)snprintf(sun.sun_path, sizeof sun.sun_path, "%s/runs/%s.sock", d->home,
	    id) >= sizeof sun.sun_path)
		return -1;
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	/* Only a runner of our own uid is taken at its word. */
	if (connect(fd, (struct sockaddr *)&sun, sizeof sun) == -1 ||
	    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) == -1 ||
	    cred.uid != getuid()) {
		close(fd);
		return -1;
	}
	return fd;
}

/* A report a runner left in <home>/runs/<id>.report.json (bounded, regular file only). */
static cJSON *
recover_report_file(struct daemon *d, const char *id)
{
	char		 path[PATH_MAX], *buf;
	struct stat	 st;
	ssize_t		 got;
	cJSON		*j = NULL;
	int		 fd;

	snprintf(path, sizeof path, "%s/runs/%s.report.json", d->home, id);
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)) == -1)
		return NULL;
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    st.st_size > CW_WIRE_MAX_LINE || (buf = malloc((size_t)st.st_size)) == NULL) {
		close(fd);
		return NULL;
	}
	got = read(fd, buf, (size_t)st.st_size);
	close(fd);
	if (got == st.st_size)
		j = json_parse(buf, (size_t)got);
	free(buf);
	if (j != NULL && (!cJSON_IsObject(j) ||
	    strcmp(json_get_string(j, "type") ? json_get_string(j, "type") : "", "report") != 0)) {
		cJSON_Delete(j);
		j = NULL;
	}
	return j;
}

/* How long a runner that left its report is given to end by itself. */
#define RECOVER_END_WAIT_MS	2000

/* Is the run's runner still the process the store named (pid and start time)? */
static int
recover_alive(const struct store_run *v)
{
	struct procid	 pi;

	return v->runner_pid > 1 && procid_stat((pid_t)v->runner_pid, &pi) == 0 &&
	    pi.state != 'Z' && pi.start == (unsigned long long)v->runner_start_time;
}

static void
recover_pidfd_cb(evutil_socket_t fd, short what, void *arg)
{
	struct run	*r = arg;

	/* An adopted runner is not our child: its end comes through its pidfd. */
	r->reaped = 1;
	r->wstatus = 0;
	if (r->eof)
		runs_finish(r);
	else {
		struct timeval	tv = { 1, 0 };

		evtimer_del(r->grace_ev);
		evtimer_add(r->grace_ev, &tv);
	}
}

/*
 * A restarted clockworkd takes over a run it finds unfinished (SPEC R1): when its
 * runner (verified by pid and start time) answers on its control socket, the run
 * goes on under this daemon, its pending approvals answerable under the ids people
 * were shown; when the runner has ended but left its report, the run is finished
 * with that report (and its work imported). -1: neither, the caller interrupts it.
 */
static int
recover_reattach(struct daemon *d, const struct store_run *v)
{
	struct store_task	 t;
	struct run		*r;
	cJSON			*report = NULL, *j;
	struct timeval		 tv;
	int			 fd = -1, alive, n;

	alive = recover_alive(v);
	if (alive)
		fd = recover_connect(d, v->id);
	/*
	 * Not reachable: either it is gone, or it was ending as we looked (a runner
	 * writes its report file, waits for a daemon a while, then stops listening and
	 * exits). Its report is its word either way; without one, the caller
	 * interrupts the run. Before this, a runner ending between the look and the
	 * connect had its run interrupted and its report and work thrown over.
	 */
	if (fd == -1 && (report = recover_report_file(d, v->id)) == NULL)
		return -1;
	if (fd == -1 && alive) {
		struct proctree	 set = { 0 };

		for (int i = 0; i < RECOVER_END_WAIT_MS / 50 && recover_alive(v); i++)
			usleep(50 * 1000);
		if (recover_alive(v)) {
			proctree_add(&set, (pid_t)v->runner_pid,
			    (unsigned long long)v->runner_start_time);
			(void)supervise_kill_tree(&set, 0);
			proctree_free(&set);
			log_warn("run %s: its runner left its report but did not end; ended it",
			    v->id);
		}
	}
	memset(&t, 0, sizeof t);
	if (store_task_get(d->store, v->task_id, &t) != 1 ||
	    (r = runs_alloc(d, v->id, &t)) == NULL) {
		store_task_free(&t);
		if (fd != -1)
			close(fd);
		cJSON_Delete(report);
		return -1;
	}
	r->sandboxed = v->sandboxed;
	r->adopted = 1;
	/* The run's approval budget goes on from what it has already asked for. */
	if ((n = store_approval_count_run(d->store, v->id)) > 0)
		r->asks.asked = n;
	r->spent_dollars = v->spent_dollars;
	r->spent_turns = v->spent_turns;
	r->t0_ms -= (int64_t)(v->spent_seconds * 1000);
	snprintf(r->workdir, sizeof r->workdir, "%s", v->worktree != NULL ? v->worktree : "");
	snprintf(r->log_path, sizeof r->log_path, "%s", v->log_path != NULL ? v->log_path : "");
	snprintf(r->pids_path, sizeof r->pids_path, "%s/runs/%s.pids", d->home, r->id);
	if (v->branch != NULL && t.repo != NULL) {
		r->repo = strdup(t.repo);
		r->branch = strdup(v->branch);
		snprintf(r->base_commit, sizeof r->base_commit, "%s",
		    v->base_commit != NULL ? v->base_commit : "");
		if (v->continues != NULL) {
			struct store_run	prev;

			snprintf(r->continues, sizeof r->continues, "%s", v->continues);
			if (store_run_get(d->store, v->continues, &prev) == 1) {
				if (prev.final_commit != NULL)
					snprintf(r->continues_from,
					    sizeof r->continues_from, "%s",
					    prev.final_commit);
				store_run_free(&prev);
			}
		}
	}
	store_task_free(&t);
	if (r->log_path[0] != '\0')
		r->log_fd = open(r->log_path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
	/*
	 * The caps hold across restarts: the log counts from its size on disk, and the
	 * run's events and journal entries from what the store already holds.
	 */
	{
		struct stat	 lst;
		sqlite3_stmt	*q;

		if (r->log_fd != -1 && fstat(r->log_fd, &lst) == 0)
			r->log_bytes = (long)lst.st_size;
		if (sqlite3_prepare_v2(store_db(d->store), "SELECT (SELECT count(*) FROM "
		    "run_events WHERE run_id = ?1), (SELECT count(*) FROM journal WHERE "
		    "run_id = ?1)", -1, &q, NULL) == SQLITE_OK) {
			sqlite3_bind_text(q, 1, r->id, -1, SQLITE_STATIC);
			if (sqlite3_step(q) == SQLITE_ROW) {
				r->n_events = (size_t)sqlite3_column_int64(q, 0);
				r->n_journal = (size_t)sqlite3_column_int64(q, 1);
			}
			sqlite3_finalize(q);
		}
	}
	supervise_load(&r->procs, r->pids_path);
	r->pid = (pid_t)v->runner_pid;
	r->start = (unsigned long long)v->runner_start_time;
	runs_track(r);
	if (fd == -1) {
		/* Over while no daemon was there: what it left is all there is. */
		r->report = report;
		r->reaped = r->eof = 1;
		log_info("run %s: its runner ended while clockworkd was away; finishing it "
		    "with the report it left", r->id);
		runs_log_line(r, "clockworkd found the report this run left while it was away");
		runs_finish(r);
		return 0;
	}
	r->pidfd = procid_pidfd(r->pid, r->start);
	if (r->pidfd != -1 && (r->pidfd_ev = event_new(d->base, r->pidfd, EV_READ,
	    recover_pidfd_cb, r)) != NULL)
		event_add(r->pidfd_ev, NULL);
	if (runs_connect(r, fd, dup(fd)) == -1) {
		runs_stop(r, STORE_EXIT_FAILED, "cannot talk to the re-attached cw-runner");
		return 0;
	}
	/* The runner ends its own budget; this backstop counts from now. */
	tv.tv_sec = r->budget_seconds + (d->stop_grace_ms + DAEMON_BUDGET_GRACE_MS) / 1000;
	tv.tv_usec = 0;
	evtimer_add(r->budget_ev, &tv);
	log_info("run %s: re-attached to its runner (pid %d)", r->id, (int)r->pid);
	runs_log_line(r, "clockworkd re-attached to this run (runner pid %d)", (int)r->pid);
	if ((j = cJSON_CreateObject()) != NULL) {
		cJSON_AddNumberToObject(j, "runner_pid", (double)r->pid);
		journal_add(d, r->id, "run_reattached", j);
	}
	return 0;
}

/*
 * After a crash (SPEC D4): runs left starting or running are interrupted. Every
 * process they had (the runner's group and the tree remembered in runs/<id>.pids,
 * each checked by start time) is ended; worktrees stay for inspection. Queued runs
 * stay queued.
 */
int
recover_runs(struct daemon *d)
{
	struct store_run	*v;
	struct proctree	 set;
	char			 path[PATH_MAX], quarantine[PATH_MAX];
	size_t			 n;
	cJSON			*rep, *j;
	char			 cgerr[PATH_MAX + 64];
	int			 killed;

	if (store_run_list_unfinished(d->store, &v, &n) == -1) {
		log_error("recovery: %s", store_errmsg(d->store));
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		if (v[i].status == STORE_RUN_QUEUED)
			continue;
		/* SPEC R1: a runner still at work, or one that left its report, goes on. */
		if (recover_reattach(d, &v[i]) == 0)
			continue;
		memset(&set, 0, sizeof set);
		snprintf(path, sizeof path, "%s/runs/%s.pids", d->home, v[i].id);
		supervise_load(&set, path);
		if (v[i].runner_pid > 1)
			proctree_add(&set, (pid_t)v[i].runner_pid,
			    (unsigned long long)v[i].runner_start_time);
		killed = supervise_kill_tree(&set, v[i].runner_pgid > 1 &&
		    proctree_has(&set, (pid_t)v[i].runner_pgid,
		    (unsigned long long)v[i].runner_start_time) ? (pid_t)v[i].runner_pgid : 0);
		proctree_free(&set);
		if (killed < 0)
			killed = 0;
		/* And the run's cgroup, which its runner (ended above) could not remove. */
		if (supervise_cgroup_end(v[i].id, cgerr, sizeof cgerr) == -1)
			log_warn("recovery: run %s: %s", v[i].id, cgerr);
		/*
		 * Its repository was the run's to shape and was never sealed: it goes where
		 * nothing opens it with git (one rename of a directory the daemon made).
		 */
		quarantine[0] = '\0';
		if (v[i].branch != NULL && v[i].worktree != NULL &&
		    recover_quarantine(d, v[i].id, v[i].worktree, quarantine,
		    sizeof quarantine) == -1) {
			log_warn("recovery: run %s: cannot move %s to quarantine: %s", v[i].id,
			    v[i].worktree, strerror(errno));
			quarantine[0] = '\0';
		}
		if ((rep = v[i].report != NULL ? json_parse(v[i].report,
		    strlen(v[i].report)) : NULL) == NULL)
			rep = cJSON_CreateObject();
		if (rep != NULL) {
			cJSON_DeleteItemFromObjectCaseSensitive(rep, "status");
			cJSON_DeleteItemFromObjectCaseSensitive(rep, "exit_reason");
			json_add_string(rep, "run_id", v[i].id);
			json_add_string(rep, "task", v[i].task_name);
			json_add_string(rep, "status", "interrupted");
			json_add_string(rep, "exit_reason", "interrupted");
			json_add_string(rep, "message", "clockworkd stopped while the run was "
			    "live; its processes were ended at the next start and its files "
			    "were kept (in quarantine: not imported, untrusted)");
			cJSON_AddNumberToObject(rep, "processes_ended", killed);
			if ((j = cJSON_AddObjectToObject(rep, "git")) != NULL) {
				json_add_string(j, "worktree", v[i].worktree);
				json_add_string(j, "branch", v[i].branch);
				json_add_string(j, "base_commit", v[i].base_commit);
				if (quarantine[0] != '\0') {
					cJSON_AddBoolToObject(j, "imported", 0);
					json_add_string(j, "error", "the run was not sealed, so "
					    "its work cannot be imported safely");
					json_add_string(j, "quarantine", quarantine);
				}
			}
			runs_report_store(d, v[i].id, rep);
			cJSON_Delete(rep);
		}
		store_run_set_status(d->store, v[i].id, STORE_RUN_INTERRUPTED,
		    STORE_EXIT_INTERRUPTED);
		runs_status_published(d, v[i].id, NULL, STORE_RUN_INTERRUPTED,
		    STORE_EXIT_INTERRUPTED);
		store_approval_expire_run(d->store, v[i].id);
		if ((j = cJSON_CreateObject()) != NULL) {
			cJSON_AddNumberToObject(j, "runner_pid", (double)v[i].runner_pid);
			cJSON_AddNumberToObject(j, "processes_ended", killed);
			json_add_string(j, "previous_status",
			    store_run_status_name(v[i].status));
			journal_add(d, v[i].id, "run_interrupted", j);
		}
		unlink(path);
		log_warn("recovery: run %s interrupted; %d process(es) ended", v[i].id, killed);
	}
	store_run_list_free(v, n);
	return 0;
}
