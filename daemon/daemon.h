/*
 * clockworkd's internals: one struct daemon passed to every module, and each module's
 * functions, prefixed with its file's name (api.c -> api_*, runs.c -> runs_*, ...).
 * Everything runs on one libevent loop in one thread; nothing here locks.
 */
#ifndef CW_DAEMON_H
#define CW_DAEMON_H
#include <sys/queue.h>
#include <sys/types.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "asklimit.h"
#include "bus.h"
#include "clauderules.h"
#include "config.h"
#include "peerns.h"
#include "proctree.h"
#include "record.h"
#include "sha256.h"
#include "conversation.h"
#include "store.h"

#ifndef TAILQ_FOREACH_SAFE
#define TAILQ_FOREACH_SAFE(var, head, field, tvar)			\
	for ((var) = TAILQ_FIRST(head);					\
	    (var) != NULL && ((tvar) = TAILQ_NEXT(var, field), 1);	\
	    (var) = (tvar))
#endif

struct event_base;
struct event;
struct evhttp;
struct httpd;
struct bufferevent;
struct evhttp_request;
struct inbox;
struct telegram;
struct notify;
struct maskstream;

#define DAEMON_HOME_MAX		1024		/* longer homes are refused */
#define DAEMON_TOKEN_BYTES	32		/* 64 hex characters on disk */
#define DAEMON_MAX_BODY		(1024 * 1024)	/* API request bodies */
#define DAEMON_STOP_GRACE_MS	5000		/* SIGTERM -> SIGKILL */
#define DAEMON_BUDGET_GRACE_MS	2000		/* + stop grace, after the runner's budget */
#define DAEMON_TASK_NAME_MAX	64
#define DAEMON_PROMPT_MAX	(64 * 1024)
/* The run event a continue is queued with: {"from": run, "resume": id | "fresh": true}. */
#define RUNS_EVENT_CONVERSATION	"conversation"
#define DAEMON_SOCKET		"clockworkd.sock"	/* in the home: cwctl's way in */
#define DAEMON_UNIX_MAX_CONNS	64		/* on the socket, all reserved for it */
#define DAEMON_TCP_MAX_CONNS	256		/* on the loopback port, at most */
#define DAEMON_TCP_MAX_PER_PEER	64		/* per source address */
#define DAEMON_DEADLINE_MS	10000		/* accept to a whole request */
#define DAEMON_IDLE_SECONDS	30		/* evhttp's read/write timeout */
#define DAEMON_FD_RESERVE	512		/* descriptors kept for runs, store, logs */

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

	struct timespec		 t0;
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
TAILQ_HEAD(runs_head, run);

struct daemon {
	struct event_base	*base;
	struct httpd		*httpd;		/* the unix socket and the TCP port */
	struct store		*store;
	struct config		 cfg;
	char			 home[DAEMON_HOME_MAX];
	char			 config_path[PATH_MAX];
	char			 runner_path[PATH_MAX];
	char			 token[DAEMON_TOKEN_BYTES * 2 + 1];
	int			 port;
	char			 sock_path[108];	/* sun_path's size */
	long			 nofile;	/* RLIMIT_NOFILE after raising it */
	int			 foreground;
	int			 stop_grace_ms;
	int			 shutting_down;
	int			 disk_low;	/* below the free-space floor (diskguard.c) */
	int			 ticks_idle;	/* supervise ticks since the last run */
	time_t			 started;
	struct runs_head	 runs;		/* live runs */
	struct proctree	 detached;	/* runners left going at shutdown */
	size_t			 n_runs;
	struct event		*ev_term, *ev_int, *ev_hup, *ev_chld;
	struct event		*ev_supervise;	/* samples run process trees */
	struct bus_sub		*supervise_sub;	/* run events arm ev_supervise */
	struct event		*ev_cron;	/* once a minute */
	struct event		*ev_pump;	/* start queued runs, deferred */
	struct event		*ev_exit;	/* shutdown deadline */
	struct inbox		*inbox;		/* sessions of the Inbox page */
	struct telegram		*telegram;	/* Telegram approvals (telegram.c) */
	struct notify		*notify;	/* desktop notifications (notify.c) */
	struct bus		*bus;		/* what changed, to every surface (bus.h) */
	struct events		*events;	/* GET /api/events streams (events.c) */
	struct peerns		 pidns;		/* ours: the control socket serves no other */
	time_t			 peer_refused_since;	/* this minute of refusals */
	unsigned		 peer_refused_n;	/* refusals in it */
};

/* token.c: the API bearer token in $CLOCKWORK_HOME/api.token (0600). */
/* DAEMON_TOKEN_BYTES random bytes from getrandom(2), as hex (outlen >= 2 * bytes + 1). */
int	token_random_hex(char *out, size_t outlen);
int	token_load_or_create(const char *home, char *out, size_t outlen, char *err,
	    size_t errlen);

/* server.c: start-up, signals, shutdown. */
struct server_options {
	int		 foreground;
	const char	*config_path;	/* NULL: the default */
	const char	*runner_path;	/* NULL: cw-runner next to clockworkd */
	int		 stop_grace_ms;
	int		 ready_fd;	/* written "ok\n" once serving, or -1 */
};
int	server_main(const struct server_options *);
void	server_reload(struct daemon *);

/* api.c: the HTTP API. */
int	api_start(struct daemon *, char *err, size_t errlen);
void	api_stop(struct daemon *);

/* approvals.c: answer one approval, the one respond path (cwctl, Inbox, Telegram). */
enum approvals_result {
	APPROVALS_OK = 0,
	APPROVALS_NOT_FOUND,
	APPROVALS_ALREADY,		/* already answered */
	APPROVALS_RUN_ENDED,
	APPROVALS_ERROR,
	APPROVALS_REFUSED,		/* not an answer this surface may give (why says) */
};
enum approvals_result approvals_respond(struct daemon *, const char *approval_id, int allow,
	    const char *message, const char *actor, char *why, size_t whylen);
/*
 * The same, naming the surface: APPROVALS_VIA_TELEGRAM may not extend a budget
 * past its hard ceiling (a budget question, runner/run.c; docs/SECURITY.md).
 */
#define APPROVALS_VIA_TELEGRAM	1
enum approvals_result approvals_respond_via(struct daemon *, const char *approval_id,
	    int allow, const char *message, const char *actor, int via, char *why,
	    size_t whylen);
#define APPROVALS_BUDGET_TOOL		"budget"	/* the runner's budget question's tool */

/* inbox.c: the Inbox page, its sign-in codes and sessions. */
#define INBOX_COOKIE		"cw_inbox"
#define INBOX_CODE_TTL		60		/* seconds a `cwctl inbox` link works */
#define INBOX_SESSION_TTL	(12 * 3600)	/* seconds a session lasts */
#define INBOX_CSP		"default-src 'self'; script-src 'self'; style-src 'self'; " \
				"img-src 'self'; connect-src 'self'; object-src 'none'; " \
				"base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
int	inbox_cookie_get(const char *hdr, const char *name, char *out, size_t outlen);
int	inbox_code_new(struct daemon *, char *out, size_t outlen);
int	inbox_revoke(struct daemon *);
int	inbox_authorize(struct daemon *, struct evhttp_request *, int write,
	    int origin_ok, char *why, size_t whylen);
int	inbox_signed_in(struct daemon *, struct evhttp_request *);
int	inbox_is_page(const char *path);
void	inbox_serve(struct daemon *, struct evhttp_request *, const char *path);
void	inbox_security_headers(struct evhttp_request *);
void	inbox_free(struct daemon *);
/* The request's valid session cookie into out (0), or -1 when it has none. */
int	inbox_cookie_of(struct daemon *, struct evhttp_request *, char *out, size_t outlen);
int	inbox_cookie_valid(struct daemon *, const char *cookie);

/*
 * events.c: the bus as server-sent events (GET /api/events). Opens the stream on req
 * with the filters and Last-Event-ID given (each may be NULL); cookie names the Inbox
 * session it lives on (NULL: the token's), so that it ends with it. 0 once the
 * stream is open; else the HTTP status to answer, with the reason in err.
 */
int	events_open(struct daemon *, struct evhttp_request *, const char *types,
	    const char *task, const char *run, const char *last_id, const char *cookie,
	    char *err, size_t errlen);
/* The stream's query (each NULL when absent): 0, or -1 with err naming the field. */
int	events_parse_query(const char *types, const char *task, const char *run,
	    const char *last_id, struct bus_filter *, uint64_t *after, char *err,
	    size_t errlen);
/* End the streams of Inbox sessions (a revoke); each gets a "signedout" event. */
void	events_end_sessions(struct daemon *);
size_t	events_streams(struct daemon *);
void	events_free(struct daemon *);

/* export.c: the proof-of-work export (SPEC I3). */
struct export_input {
	const char	*run_id, *task, *prompt, *engine, *permission_mode, *status;
	const char	*exit_reason, *repo, *branch, *base_commit, *final_commit;
	const char	*created_at, *ended_at;
	double		 budget_dollars, spent_dollars, spent_seconds;
	int		 budget_turns, budget_seconds, spent_turns, sandboxed;
	const char	*report;	/* JSON text or NULL */
	const char	*diffstat;	/* text or NULL */
	const char	*diff;		/* text or NULL */
	const char	*transcript;	/* NULL: not included */
	const struct store_journal_entry *journal;	/* denials and the like */
	size_t		 n_journal;
	const struct store_approval *approvals;
	size_t		 n_approvals;
};
/* Render the HTML; a newly allocated NUL-terminated string, or NULL (ENOMEM). */
char	*export_render(const struct export_input *);
/* Build the export of run_id from the store, its log and its git branch. */
int	export_run(struct daemon *, const char *run_id, int transcript, const char *actor,
	    char **html, char *err, size_t errlen);

/* tasks.c: validation of task documents and their JSON form. */
int	tasks_from_json(struct daemon *, const cJSON *in, const struct store_task *base,
	    struct store_task *out, char *field, size_t fieldlen, char *err, size_t errlen);
cJSON	*tasks_to_json(const struct store_task *);
int	tasks_name_valid(const char *);
int	tasks_branch_valid(const char *);
/*
 * The engine a new task (or an imported job) gets when it names none: a key named
 * (key_name, or NULL) means byok; then engines.default; then the first agent CLI on
 * the daemon's PATH (common/enginepick.h); then byok when a provider key is stored.
 * Fills engine, key (the only stored key, when byok is picked and none was named; else
 * empty) and why, one sentence for the person; -1 with why saying what to do. d may be
 * NULL (no configuration, no key store).
 */
int	tasks_default_engine(struct daemon *d, const char *key_name, char *engine,
	    size_t enginelen, char *key, size_t keylen, char *why, size_t whylen);

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
struct runbranch;
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

/* recover.c: clockworkd starting over. */
int	recover_runs(struct daemon *);
/* Move a run's directory to <home>/quarantine/<run>; out gets where ("" if none). */
int	recover_quarantine(struct daemon *, const char *id, const char *workdir,
	    char *out, size_t outlen);
cJSON	*runs_to_json(const struct store_run *, int with_report);
int	runs_send(struct run *, cJSON *msg);
/*
 * "Always for this task" on an answered approval (cwctl, the Inbox, Telegram): its
 * host:port or its command family kept for the task (approvals.c). 0 with rule, -1 with
 * why.
 */
int	approvals_for_task(struct daemon *, const char *id, const char *actor,
	    char *rule, size_t rulelen, char *why, size_t whylen);
/*
 * A task rule was added: tell every live run of the task (SPEC A1). max_risk NULL:
 * an ask rule (the family is always asked).
 */
void	runs_task_rule_added(struct daemon *, int64_t task_id, const char *family,
	    const char *max_risk);
void	runs_approval_forget(struct run_approval *);
/* An approval as just stored, to the bus: its state and (taken) extra fields. */
void	runs_approval_published(struct run *, const char *approval_id, const char *state,
	    cJSON *extra);

/*
 * supervise.c: a run's processes as the daemon sees them (its runner's group and
 * everything below), on the shared process tree (common/proctree.c).
 */
/* Grow set with every live descendant of its members and every member of pgid. */
int	supervise_collect(struct proctree *, pid_t pgid);
/* Signal every live, identity-checked member. Returns how many were signalled. */
int	supervise_signal(const struct proctree *, int sig);
/* Stop every member and its descendants, then SIGKILL them all. Returns the count. */
int	supervise_kill_tree(struct proctree *, pid_t pgid);
/*
 * End and remove a run's cgroup that its runner left (a runner killed hard): the
 * count of processes killed in it, or -1 with err filled when it could not go.
 */
int	supervise_cgroup_end(const char *run_id, char *err, size_t errlen);
/* Children of this process (orphans re-parented to us). */
int	supervise_orphans(pid_t self, struct proctree *out);
int	supervise_save(const struct proctree *, const char *path);
int	supervise_load(struct proctree *, const char *path);

/* worktree.c: a run's own repository, and the user's repository after import (libgit2). */
struct worktree_stat {
	size_t		files, insertions, deletions;
	long long	added_bytes;	/* every added or changed file's size, path by path */
	long long	largest;	/* the largest of them */
	int		no_lines;	/* a file over WORKTREE_BLOB_MAX: lines not counted */
};
/* A file larger than this is not read for the diffstat's line counts. */
#define WORKTREE_BLOB_MAX	(256LL * 1024 * 1024)
void	worktree_init(void);
void	worktree_shutdown(void);
/* err = "PATH: WHAT: <libgit2's last error>", for every caller of libgit2 in daemon/. */
void	worktree_err(char *err, size_t errlen, const char *what, const char *path);
/*
 * The blob of tree entry e, named path in repo_path, for a file read from a commit (a
 * jobs file, Claude's settings): a regular file only, never a link, and at most max
 * bytes, its size read from the object's header before the object itself. *out is
 * freed with git_blob_free. 0, or -1 with err naming repo_path, path and why.
 */
struct git_repository;
struct git_tree_entry;
struct git_blob;
int	worktree_tree_blob(struct git_repository *repo, const struct git_tree_entry *e,
	    const char *repo_path, const char *path, size_t max, struct git_blob **out,
	    char *err, size_t errlen);
int	worktree_create_run(const char *repo, const char *path, const char *branch,
	    char *base_out, size_t baselen, char *objects_out, size_t objlen, char *err,
	    size_t errlen);
int	worktree_create_run_at(const char *repo, const char *base_ref, const char *path,
	    const char *branch, char *base_out, size_t baselen, char *objects_out,
	    size_t objlen, char *err, size_t errlen);
/*
 * hold: [{path, status}] (review_automation) to keep out of the checkout: removed from
 * its files and marked skip-worktree in its index, so git shows the tree clean and no
 * tool opened there reads them. NULL: none.
 */
int	worktree_adopt(const char *repo, const char *path, const char *name,
	    const char *branch, const cJSON *hold, char *err, size_t errlen);
int	worktree_branch_at(const char *repo, const char *branch, const char *commit,
	    char *err, size_t errlen);
int	worktree_contains(const char *repo, const char *base, const char *tip);
/* The commit a branch of repo points at, hex, in out. */
int	worktree_rev(const char *repo, const char *branch, char *out, size_t outlen,
	    char *err, size_t errlen);
int	worktree_diffstat(const char *repo, const char *base, const char *tip,
	    struct worktree_stat *, char *err, size_t errlen);
/* 1 when nothing would be lost by pruning: branch merged into repo HEAD, tree clean. */
int	worktree_merged(const char *repo, const char *path, const char *branch);
int	worktree_remove(const char *repo, const char *path, const char *name,
	    const char *branch, int delete_branch, char *err, size_t errlen);
/*
 * Who has branch checked out in repo (a continued run's branch must be free, issue 23).
 * WORKTREE_FREE: nobody but kept worktrees of runs under root (the daemon's
 * worktrees/), each clean; with act they are then detached (HEAD at the same commit,
 * files untouched) so the branch is free, and a record whose directory is gone is
 * pruned; h->path names the last one. WORKTREE_OUTSIDE: checked out at h->path
 * outside root (the repository's own checkout, or a person's worktree).
 * WORKTREE_DIRTY: a kept worktree at h->path has uncommitted changes (h->changes
 * lists some). -1: err says what failed. Nothing is changed unless all are free.
 */
#define WORKTREE_FREE		0
#define WORKTREE_OUTSIDE	1
#define WORKTREE_DIRTY		2
struct worktree_hold {
	char	path[PATH_MAX];
	char	changes[256];
	int	detached;	/* kept worktrees detached (act) */
};
int	worktree_branch_free(const char *repo, const char *branch, const char *root,
	    int act, struct worktree_hold *h, char *err, size_t errlen);
/*
 * The import's move of branch to tip (hex): created when missing; when it exists it
 * moves only forward (tip contains its commit) and only when no checkout has it, so
 * a continued run never drops the commits of the run it continues, or moves a branch
 * under a person's checkout. err says why not.
 */
int	worktree_branch_advance(const char *repo, const char *branch, const char *tip,
	    char *err, size_t errlen);
/* 1 when branch's tip is in the history of the branch repo's HEAD is on (into). */
int	worktree_landed(const char *repo, const char *branch, char *into, size_t intolen);
int	worktree_is_repo(const char *path);
int	worktree_check_repo(const char *path, char *why, size_t whylen);

/* runbranch.c: the branch a continued run works on (issue 23; the file says the rules). */
struct runbranch {
	const char		*code;		/* the API's error code when refused */
	char			 branch[320];
	char			 tip[64];	/* the branch's tip when checked */
	char			 landed_into[256]; /* "": not merged into HEAD's branch */
	struct worktree_hold	 hold;
};
/* 0: r's branch can be continued on; -1: refused (b->code) or failed, err says why. */
int	runbranch_check(struct daemon *, const struct store_task *,
	    const struct store_run *r, struct runbranch *b, char *err, size_t errlen);
/* Free the branch checked by runbranch_check: its kept worktrees are detached. */
int	runbranch_take(struct daemon *, const struct store_task *, struct runbranch *b,
	    char *err, size_t errlen);

/* runimport.c: a run's branch into the user's repository, in a child with a timeout. */
struct runimport;
typedef void	(*runimport_done_fn)(struct run *, cJSON *result);
/*
 * Start importing r's sealed work (seal: the runner's report's "seal" object, or NULL);
 * nothing_ran: the run was refused, its directory is only removed. done is called once,
 * from the event loop, with the child's result ({"ok":..., "final_commit", "diffstat",
 * "error", "quarantine"}), which it owns. 0, or -1 (nothing started).
 */
int	runimport_start(struct run *r, const cJSON *seal, int nothing_ran,
	    runimport_done_fn done);
void	runimport_free(struct runimport *);

/* quarantine.c: refused work kept inert, as a bundle and plain files (SPEC U3). */
struct quarantine_job {
	const char	*home, *repo, *workdir, *branch, *run_id;
	const char	*tip;		/* the seal's word for the tip, a fallback; or NULL */
	const char	*why;		/* why the import refused, for the README */
};
/*
 * Convert the run's directory into <home>/quarantine/<run>/{run.bundle,files/,
 * README.txt} and remove it; out gets "quarantine", "quarantine_bundle",
 * "quarantine_files" (and "..._error" fields for the parts that failed). 0, or -1
 * with errno when nothing could be moved. For the import child only.
 */
int	quarantine_make(const struct quarantine_job *, cJSON *out);
/*
 * The fallback when no conversion can run: move workdir to <home>/quarantine/<run>/
 * unconverted, its top .git renamed away and its mode 0, with a README; where gets
 * the quarantine folder ("" when workdir was gone). 0, or -1 with errno.
 */
int	quarantine_move_raw(const char *home, const char *run_id, const char *workdir,
	    const char *why, char *where, size_t wherelen);

/* review.c: review and land a run's work in the user's repository (libgit2). */
struct review_diff {
	char	 tip[72];	/* the branch tip, hex */
	char	*stat;		/* git's --stat text */
	char	*patch;		/* the patch, NULL when not asked for */
	int	 truncated;	/* the patch was cut at max bytes */
	cJSON	*files;		/* [{path, status, insertions, deletions}] */
};
int	review_diff(const char *repo, const char *base, const char *branch,
	    int want_patch, size_t max, struct review_diff *, char *err, size_t errlen);
void	review_diff_free(struct review_diff *);
enum review_mode {
	REVIEW_MERGE = 0,	/* fast-forward when it can, else a merge commit */
	REVIEW_FF_ONLY,
	REVIEW_SQUASH,		/* one new commit on the target with the run's changes */
};
#define REVIEW_OK	 0
#define REVIEW_ERROR	-1	/* libgit2 failed */
#define REVIEW_REFUSED	-2	/* dirty target, no such branch, not a fast-forward */
#define REVIEW_CONFLICT	-3	/* res->conflicts lists the files */
#define REVIEW_AUTOMATION -4	/* res->automation lists them: not accepted */
#define REVIEW_IGNORED	-5	/* res->left_alone: the user's ignored/untracked files */
struct review_merge {
	const char	*result;	/* "fast-forward", "merged", "squashed", "up-to-date" */
	char		 into[256];
	char		 commit[72];	/* the target's new tip */
	cJSON		*conflicts;	/* owned by the caller */
	cJSON		*automation;	/* [{path, status, what}], owned by the caller */
	cJSON		*left_alone;	/* [path], owned by the caller */
};
const char	*review_mode_name(enum review_mode);
int		 review_mode_parse(const char *, enum review_mode *);
int	review_merge(const char *repo, const char *run_id, const char *branch,
	    const char *into, enum review_mode, int accept_automation,
	    struct review_merge *, char *err, size_t errlen);
void	review_merge_free(struct review_merge *);
/* The automation files (common/automation.h) branch changes since base: [{path, status, what}]. */
int	review_automation(const char *repo, const char *base, const char *branch,
	    cJSON **out, char *err, size_t errlen);
int	review_discard(const char *repo, const char *worktree, const char *run_id,
	    const char *branch, char *err, size_t errlen);

/* confcheck.c: the sandbox grants of a loaded configuration, resolved (-1: err says). */
int	confcheck_grants(const struct config *, char *err, size_t errlen);

/* gc.c: retention of finished runs' worktrees. */
struct gc_result {
	size_t	pruned, kept;
	size_t	caches;		/* archived tasks whose tool caches were removed */
};
int	gc_run(struct daemon *, int64_t task_id, int force, struct gc_result *,
	    cJSON *pruned_list);

/* cron.c: 5-field cron expressions (untrusted text: bounds-checked). */
struct cron {
	uint64_t	minute;		/* bit n: minute n */
	uint32_t	hour;
	uint32_t	dom;		/* bits 1..31 */
	uint16_t	month;		/* bits 1..12 */
	uint8_t		dow;		/* bits 0..6, Sunday 0 */
	int		dom_star, dow_star;
};
int	cron_parse(const char *expr, struct cron *, char *err, size_t errlen);
int	cron_match(const struct cron *, const struct tm *);
/* The first minute strictly after t that matches (local time), or -1 within 5 years. */
time_t	cron_next(const struct cron *, time_t t);

/* sched.c: cron schedules. */
void	sched_start(struct daemon *);
void	sched_tick(struct daemon *, time_t now);

/* telegram.c: approvals through a Telegram bot (outbound long-poll only). */
#define TELEGRAM_TOKEN_SECRET	"telegram.bot_token"	/* its name in secret.h */
int	telegram_start(struct daemon *);
void	telegram_stop(struct daemon *);
/* Re-read the token from the secret store; a new one restarts polling. */
int	telegram_reload(struct daemon *);
int	telegram_set_token(struct daemon *, const char *token, char *err, size_t errlen);
/* Send a test message to chat_id; its outcome shows in telegram_status_json. */
int	telegram_test(struct daemon *, int64_t chat_id, char *err, size_t errlen);
cJSON	*telegram_status_json(struct daemon *);

/* notify.c: a desktop notification of each new approval (desktop_notifications). */
int	notify_start(struct daemon *);
void	notify_stop(struct daemon *);
/* Where notifications stand: "off", "on", or why they cannot be shown. */
const char *notify_state(struct daemon *);
/* jobsgit.c: a repository's jobs file as committed on its default branch (W2). */
struct jobsgit_file {
	char	 path[64];		/* ".clockwork/jobs.yaml" */
	char	 blob[64];		/* its blob id */
	char	*text;			/* NUL-terminated copy */
	size_t	 len;
};
struct jobsgit_result {
	char			ref[512];	/* the default branch's ref read */
	char			branch[256];	/* its short name */
	char			commit[64];	/* the commit read */
	struct jobsgit_file	files[2];
	size_t			n_files;	/* 0: no jobs file */
};
int	jobsgit_default_branch(const char *repo, char *refname, size_t reflen,
	    char *branch, size_t blen, char *err, size_t errlen);
int	jobsgit_read(const char *repo, struct jobsgit_result *, char *err, size_t errlen);
void	jobsgit_result_free(struct jobsgit_result *);
/*
 * reporules.c: a task repository's Claude permission rules as committed on the ref
 * its runs start from (issue 23): shown with a digest, imported only with it.
 */
#define REPORULES_FILES	2
struct reporules_file {
	char			 path[64];	/* ".claude/settings.json" */
	char			 blob[64];	/* its blob id, when present */
	int			 present;
	struct clauderules	 rules;		/* parsed and mapped */
};
struct reporules {
	char			 ref[512];	/* the ref read */
	char			 commit[64];	/* its commit */
	struct reporules_file	 files[REPORULES_FILES];
	char			 digest[SHA256_HEX];	/* of what is shown */
};
/* base: the task's base branch, NULL for the default branch. err names the file. */
int	reporules_read(const char *repo, const char *base, struct reporules *,
	    char *err, size_t errlen);
void	reporules_free(struct reporules *);
/* {"ref","commit","digest","files":[...],"rules":[{file,list,rule,becomes,...}]} */
cJSON	*reporules_json(const struct reporules *);
/* Import every mapped rule in one transaction, journaled; *n_changed rows changed. */
int	reporules_import(struct daemon *, const struct store_task *,
	    const struct reporules *, const char *actor, size_t *n_changed, char *err,
	    size_t errlen);

/* preview.c: the security preview of an imported job or template (W2). */
struct preview_input {
	const char	*name;
	const char	*prompt;		/* the task's prompt, as it would run */
	const char	*description;
	const char	*proposed_schedule;	/* from the file; not applied */
	const char	*const *context;
	size_t		 n_context;
	const char	*const *ignored;	/* keys the parser did not read */
	size_t		 n_ignored;
	size_t		 ignored_more;
	const struct store_task *task;		/* the defaults it gets */
	const cJSON	*source;
	const cJSON	*previous;		/* the definition it replaces, or NULL */
	size_t		*budget;		/* floor evaluations left, shared, or NULL */
};
cJSON	*preview_build(struct daemon *, const struct preview_input *);

/* jobs.c: discovery of repository jobs, enabling, templates (W2). */
#define JOBS_MODE		"acceptEdits"
#define JOBS_DOLLARS		2.0
#define JOBS_TURNS		50
#define JOBS_SECONDS		3600
/*
 * Floor evaluations for the previews of one discovery or import, all jobs together
 * (each job has its own bound in preview.c too): the previews run on the daemon's
 * loop, so a file of many long prompts must not hold it for long. Past it a preview
 * says its rule check is incomplete.
 */
#define JOBS_PREVIEW_EVALS	4000
/*
 * Read repo's jobs file from its default branch and bring its jobs in as tasks,
 * disabled with a preview. All or nothing: any error leaves the store unchanged.
 * result gets {"repo","commit","created":[],"changed":[],"unchanged":[],
 * "removed":[],"conflicts":[]}. -1: err says why (code: 400 bad input, 500 else).
 */
int	jobs_discover(struct daemon *, const char *repo, const char *actor,
	    cJSON **result, int *code, char *err, size_t errlen);
/* Discover for the repository of every task that has one (start-up and cron). */
void	jobs_discover_all(struct daemon *);
/* A template file's text as one disabled task with a preview, in repo (or none). */
int	jobs_template_import(struct daemon *, const char *file, const char *text,
	    size_t len, const char *repo, const char *actor, cJSON **result, int *code,
	    char *err, size_t errlen);
/* The task's shareable definition, as a jobs document of one job. */
cJSON	*jobs_template_export(const struct store_task *);
/*
 * The explicit enable of an imported task; hash, when given, must be the preview's
 * definition hash (so a page showing an older preview cannot enable a newer one).
 */
int	jobs_enable(struct daemon *, const char *name, const char *hash, const char *actor,
	    int *code, char *err, size_t errlen);
/* A task's definition as its history keeps it. */
cJSON	*jobs_definition(const struct store_task *);
/*
 * Before a run of an imported task starts at base_commit: 0 when the paths its prompt
 * names are the objects the person reviewed; 1 when one changed (the task is then
 * disabled and waits for review again, with a new preview; err names the paths);
 * -1 on error (err says why; the run must not start either).
 */
int	jobs_pins_check(struct daemon *, const struct store_task *, const char *base_commit,
	    char *err, size_t errlen);

/* jobpins.c: the repository paths a job's prompt names, pinned by their git objects. */
/* The words of prompt that could be paths in a repository (see jobpins.c). */
int	jobpins_names(const char *prompt, struct strlist *out);
/* {"path": "object id"} for each of prompt's names that is a path at commit. */
int	jobpins_at(const char *repo, const char *commit_hex, const char *prompt,
	    cJSON **pins, char *err, size_t errlen);
/* The names whose objects differ, comma-separated (malloc'ed), or NULL when none. */
char	*jobpins_changed(const cJSON *was, const cJSON *now);

/* diskguard.c: a full disk ends the run that fills it and never wedges the queue. */
/* At start: make the reserve, or note that the disk is already below the floor. */
void	diskguard_init(struct daemon *);
/* Once a second: the floor, the reserve, and the run to stop when below it. */
void	diskguard_tick(struct daemon *);
/* Before a queued run starts: 1 when there is room, 0 when the queue must wait. */
int	diskguard_room(struct daemon *);
/* Bytes under path (blocks, links not followed), counted to a bound. */
long long diskguard_du(const char *path);

/* journal.c: the safety journal and audit log, with one log line each. */
void	journal_add(struct daemon *, const char *run_id, const char *kind, cJSON *data);
/* A journal event's data as the bus carries it, from the entry as stored. */
cJSON	*journal_event_data(const char *kind, const char *data_json);
const char *journal_task(struct daemon *, const char *run_id);
void	journal_audit(struct daemon *, const char *actor, const char *action,
	    const char *target, cJSON *data);

#endif
