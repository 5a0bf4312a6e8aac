/*
 * runs.c: the run manager. A live run (struct run: one cw-runner child and its
 * pipes; queued runs live only in the store), and the functions that queue, start,
 * watch and end runs.
 */
#ifndef CW_RUNS_H
#define CW_RUNS_H
#include <sys/queue.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <sys/types.h>

#include <cjson/cJSON.h>

#include "asklimit.h"
#include "conversation.h"
#include "daemon.h"
#include "proctree.h"
#include "record.h"
#include "store.h"

struct bufferevent;
struct event;
struct maskstream;
struct runbranch;
struct runimport;

/* The run event a continue is queued with: {"from": run, "resume": id | "fresh": true}. */
#define RUNS_EVENT_CONVERSATION	"conversation"

/* One pending approval of a live run: the daemon's id and the runner's own. */
struct run_approval {
	char			 id[STORE_ID_LEN];
	char			*runner_id;
	struct event		*deadline_ev;
	struct run		*run;
	TAILQ_ENTRY(run_approval) entry;
};

/* A live run: one cw-runner child and its pipes. Queued runs live only in the store. */
struct run {
	struct daemon		*d;
	char			 id[STORE_ID_LEN];
	int64_t			 task_id;
	char			 task_name[DAEMON_TASK_NAME_MAX + 1];
	char			*repo;		/* NULL: scratch */
	char			 workdir[PATH_MAX];
	char			 log_path[PATH_MAX];
	char			 pids_path[PATH_MAX];
	char			*branch;
	char			 base_commit[64];
	char			 base_ref[320];	/* the ref it started from */
	char			 git_objects[PATH_MAX];	/* the user's store, lent read-only */
	/* run continue: the run whose conversation it resumes, and the engine's id */
	char			 resume_run[STORE_ID_LEN];
	char			 resume_id[CONVERSATION_ID_MAX + 1];
	/* run continue: the run whose branch it works on, and that run's last commit */
	char			 continues[STORE_ID_LEN];
	char			 continues_from[64];
	struct runimport	*import;	/* the import child, while it works */
	int			 import_started;
	cJSON			*import_result;	/* what the import said, once it ended */
	int			 budget_seconds;
	int			 budget_turns;
	double			 budget_dollars;
	int			 budget_wait;	/* the budget pause: 0 none (issue 23) */
	double			 max_dollars;	/* the hard ceiling, 0 none */
	int			 budget_paused;	/* the runner holds the run, asking */

	pid_t			 pid;		/* the runner: also its pgid */
	unsigned long long	 start;		/* its start time, for identity checks */
	int			 pidfd;
	int			 log_fd;
	struct bufferevent	*up;		/* runner stdout: JSON lines to us */
	struct bufferevent	*down;		/* runner stdin: JSON lines from us */
	struct proctree	 procs;		/* every process seen in the run */

	int64_t			 t0_ms;	/* clock_mono_ms() at its start */
	struct event		*budget_ev;
	struct event		*grace_ev;
	struct event		*backstop_ev;	/* a budget past its limit: signals wait */
	enum store_exit_reason	 backstop_reason;
	char			 backstop_why[128];
	int			 reaped;	/* waitpid() collected the runner */
	int			 wstatus;
	int			 eof;		/* its stdout closed */
	int			 stopping;	/* a stop was asked */
	enum store_exit_reason	 stop_reason;
	char			*stop_message;
	int			 protocol_error;
	cJSON			*report;	/* the runner's report line, if any */
	struct record_list	 denials;	/* from events, bounded (record.h) */
	/*
	 * What the run has made us keep, each with a cap (docs/SECURITY.md, "Bounded
	 * records"): the live log's bytes, rows in run_events, journal entries.
	 */
	long			 log_max;	/* config run_log_max_bytes at start */
	long			 log_bytes;	/* written so far */
	long			 log_dropped;	/* bytes of run output past the cap */
	/*
	 * The log's streams (stdout, stderr, the rest), each masked as one stream before
	 * a byte is written (runs.c runs_log_output): a secret cut across lines or
	 * chunks is held back until it can be masked whole.
	 */
	struct maskstream	*log_mask[3];
	int			 transcript_capped;	/* said so once (transcripts.c) */
	size_t			 n_events;
	size_t			 events_dropped;
	size_t			 n_journal;
	size_t			 journal_dropped;
	int			 n_approvals;
	struct asklimit		 asks;		/* approvals.* counted again before each
						   approval is stored (asklimit.h) */
	double			 spent_dollars;
	int			 spent_turns;
	int			 sandboxed;	/* -1 until the runner says */
	int			 adopted;	/* re-attached after a restart: not our child */
	struct event		*pidfd_ev;	/* an adopted runner's end */
	int			 journaled_sandbox_off;
	int			 disk_full;	/* stopped for filling the disk (diskguard.c) */
	long long		 disk_bytes;	/* what it held then */

	TAILQ_HEAD(, run_approval) approvals;
	TAILQ_ENTRY(run)	 entry;
};

/* runs.c: the run manager. */
/* spent_dollars stored for a run whose model had no price: its cost is unknown. */
#define RUNS_DOLLARS_UNKNOWN	(-1.0)
/* Queue a run; the caller tells the bus once it is committed (runs_status_published). */
int	runs_enqueue(struct daemon *, const struct store_task *, char *id_out,
	    size_t idlen, char *err, size_t errlen);
/*
 * A run from an earlier one (retry, continue): its own prompt and base, or NULL, and
 * for a continue the conversation it resumes (resume_id, checked, kept by run
 * resume_from: the parent, or for a retry of a continue the run that continue
 * resumed) or, with resume_id NULL and fresh 1, the record that it was asked to
 * start a new one.
 * A continue (continues: the run whose branch it works on, cb: that branch as
 * runbranch_check found it) records the branch as the queued run's and frees it in
 * git (runbranch_take) in the same step; 1 when another run holds it (err names it).
 */
int	runs_enqueue_from(struct daemon *, const struct store_task *, const char *parent,
	    const char *prompt, const char *base, const char *resume_from,
	    const char *resume_id, int fresh, const char *continues, struct runbranch *cb,
	    char *id_out, size_t idlen, char *err, size_t errlen);
/*
 * The conversation id a later `run continue` of sr may resume, from its report: 0
 * with id filled, or -1 with why (it kept none, its engine cannot, the id fails
 * conversation_id_valid()).
 */
int	runs_conversation_of(const struct store_run *sr, const char *engine, char *id,
	    size_t idlen, char *why, size_t whylen);
/*
 * The conversation run_id was queued to resume (runs_enqueue_from's record): 1 with
 * the run it came from and the id, 0 when it resumes none, -1 with err.
 */
int	runs_conversation_resumed(struct daemon *, const char *run_id, const char *engine,
	    char *from, size_t fromlen, char *id, size_t idlen, char *err, size_t errlen);
void	runs_pump(struct daemon *);
void	runs_pump_later(struct daemon *);
struct run *runs_find(struct daemon *, const char *id);
int	runs_stop(struct run *, enum store_exit_reason, const char *message);
/* A run's status as just stored, to the bus (task NULL: looked up). */
void	runs_status_published(struct daemon *, const char *run_id, const char *task,
	    enum store_run_status, enum store_exit_reason);
void	runs_stop_all(struct daemon *);
/*
 * Let go of every live run without ending it (SPEC R1): each runner goes on and waits
 * on its control socket for the next clockworkd. Runs being imported finish first.
 */
void	runs_detach_all(struct daemon *);
void	runs_sigchld(struct daemon *);
void	runs_supervise_tick(struct daemon *);

/* runs.c, for recover.c: a run's making and ending. */
struct run *runs_alloc(struct daemon *, const char *id, const struct store_task *);
int	runs_connect(struct run *, int up_fd, int down_fd);
void	runs_track(struct run *);
void	runs_finish(struct run *);
int	runs_report_store(struct daemon *, const char *id, const cJSON *report);
void	runs_mask_old_logs(struct daemon *);
void	runs_log_line(struct run *, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));

#endif
