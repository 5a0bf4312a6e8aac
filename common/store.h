/*
 * The daemon's sqlite3 store (SPEC D1): tasks, runs, run events, approvals, the safety
 * journal and the audit log, in one file in WAL mode with a busy timeout of 5 s and
 * foreign keys on. The schema is a list of numbered migrations (store_schema.c), each
 * applied in its own transaction and recorded in schema_migrations.
 *
 * Conventions:
 *  - One handle per thread. Two handles (or two processes) on one file are fine: WAL
 *    lets readers run beside a writer and the busy timeout queues writers.
 *  - Functions return 0 on success and -1 on error; store_errmsg() then says what
 *    failed in one line and errno tells the kind: ENOENT (no such row), EBUSY (refused:
 *    task has an active run), EINVAL (bad argument or a CHECK/UNIQUE constraint),
 *    EIO (anything else from sqlite). Lookups return 1 found, 0 not found, -1 error.
 *  - Row structs own their strings. store_X_free() frees the members of one row (the
 *    struct itself is the caller's); store_X_list_free() frees an array from a
 *    *_list function, members and array. A NULL string member is SQL NULL.
 *  - JSON columns (report, data, input) must hold valid JSON or NULL: the database
 *    checks it.
 *  - Timestamps are ISO-8601 UTC text with milliseconds: "2026-11-30T00:44:35.123Z".
 *  - The journal and the audit log are append-only: no function here updates or
 *    deletes them, and triggers in the database abort any UPDATE or DELETE on them.
 *  - Values are always bound to prepared statements, never spliced into SQL text.
 */
#ifndef CW_STORE_H
#define CW_STORE_H
#include <stddef.h>
#include <stdint.h>

#include "strlist.h"

struct sqlite3;
struct store;

#define STORE_SCHEMA_LATEST	20
#define STORE_TIME_LEN		25	/* "YYYY-MM-DDTHH:MM:SS.mmmZ" + NUL */
#define STORE_ID_LEN		40	/* room for a generated or caller-chosen id */

/*
 * Open (creating it 0600 if missing; its directory must exist) and migrate to
 * STORE_SCHEMA_LATEST. Refused, with the file left unchanged: a file that is not a
 * sqlite database, and a database whose schema is newer than this code knows.
 */
int		 store_open(const char *path, struct store **out, char *err,
		    size_t errlen);
/* For tests: as store_open, but migrate only up to version (0..LATEST). */
int		 store_open_at_version(const char *path, int version, struct store **out,
		    char *err, size_t errlen);
void		 store_close(struct store *);
/* The connection, for modules that run their own prepared statements. */
struct sqlite3	*store_db(struct store *);
/* The highest applied migration, or -1 on error. */
int		 store_schema_version(struct store *);
/* The last error on this handle, one line; "" when none. */
const char	*store_errmsg(struct store *);

/*
 * Group several calls into one write transaction (BEGIN IMMEDIATE: the write lock is
 * taken up front, so the busy timeout applies and no upgrade can deadlock). Not
 * nestable; store_rollback is a no-op outside a transaction.
 */
int		 store_begin(struct store *);
int		 store_commit(struct store *);
void		 store_rollback(struct store *);

/* Now, or ms since the epoch, as the store's timestamp text. */
void		 store_now(char *buf, size_t len);
void		 store_format_time(int64_t epoch_ms, char *buf, size_t len);

/* ---- tasks ---------------------------------------------------------------- */

struct store_task {
	int64_t	 id;
	char	*name;			/* unique */
	char	*repo;			/* NULL: a scratch task */
	char	*prompt;
	char	*engine;
	char	*permission_mode;	/* "plan" or "acceptEdits" (database CHECK) */
	double	 budget_dollars;
	int	 budget_turns;
	int	 budget_seconds;
	int	 budget_wait;		/* s a run held at a budget waits for an answer:
					   0 none (it ends), -1 the configuration's */
	double	 max_dollars;		/* the hard ceiling: 0 none, < 0 the configuration's */
	int	 limit_processes;	/* 0: the configuration's limits.processes */
	int	 limit_memory_mb;	/* 0: the configuration's limits.memory_mb */
	int64_t	 telegram_chat_id;	/* 0: no Telegram delivery */
	char	*telegram_allowed_user_ids;	/* JSON array of user ids, or NULL */
	char	*key_name;		/* byok: the provider key's name (cwctl key), or NULL;
					   the key itself is never in the store */
	char	*schedule;		/* "queued" or a cron expression */
	int	 enabled;
	char	*created_at;		/* set by the store */
	char	*updated_at;		/* set by the store */
	char	*base;			/* NULL: the repository's default branch */
	int	 archived;		/* removed by a person; its runs stay */
	char	*source;		/* JSON: where an imported task came from */
	char	*preview;		/* JSON: its security preview */
	int	 needs_review;		/* 1: only an explicit enable may enable it */
	int	 keep_build_outputs;	/* 1: the seal commits build outputs too */
	int	 notify_end;		/* 1: each run's end is announced (desktop, chat) */
};

/* Insert t (id and timestamps ignored); *id gets the new id. A taken name: EINVAL. */
int	store_task_add(struct store *, const struct store_task *t, int64_t *id);
/* Replace the editable fields of task t->id (everything but id and created_at). */
int	store_task_update(struct store *, const struct store_task *t);
int	store_task_get(struct store *, int64_t id, struct store_task *out);
int	store_task_get_by_name(struct store *, const char *name,
	    struct store_task *out);
/* All tasks that are not archived, ordered by name. */
int	store_task_list(struct store *, struct store_task **out, size_t *n);
/* Archived tasks only (for gc). */
int	store_task_list_archived(struct store *, struct store_task **out, size_t *n);
/*
 * Archive a task (`task rm`): disabled, renamed "NAME (archived ID)" so its name is
 * free again, its runs and history kept. EBUSY while it has an active run.
 */
int	store_task_archive(struct store *, int64_t id);
/* An imported task's source, preview and review flag (NULL leaves a column). */
int	store_task_set_review(struct store *, int64_t id, const char *source,
	    const char *preview, int needs_review, int enabled);
/* Append t's current definition (JSON) to its history, by actor. */
int	store_task_history_add(struct store *, int64_t task_id, const char *actor,
	    const char *definition_json);
struct store_task_history {
	int64_t	 id;
	char	*ts;
	char	*actor;
	char	*definition;
};
/* Oldest first. */
int	store_task_history_list(struct store *, int64_t task_id,
	    struct store_task_history **out, size_t *n);
void	store_task_history_list_free(struct store_task_history *, size_t n);
int	store_task_set_enabled(struct store *, int64_t id, int enabled);
/*
 * Remove a task with its finished runs, their events and approvals (the journal and
 * audit log keep their entries). Refused with EBUSY while the task has a run that is
 * queued, starting or running.
 */
int	store_task_remove(struct store *, int64_t id);
void	store_task_free(struct store_task *);
/*
 * A task's network policy (SPEC N1): ask (an unknown host becomes an approval) and
 * its own allow rules ("host:port", common/netrule.h). A task with none set has ask 0
 * and no rules.
 */
int	store_task_network_get(struct store *, int64_t task_id, int *ask,
	    struct strlist *allow);
int	store_task_network_set(struct store *, int64_t task_id, int ask,
	    const struct strlist *allow);
/* Add one rule (kept once), as an approval "for this task" does. */
int	store_task_network_allow(struct store *, int64_t task_id, const char *rule);
void	store_task_list_free(struct store_task *, size_t n);
/*
 * A task's remembered answers (SPEC A1): command families a person answered "always
 * for this task" for, each up to the risk they saw. Oldest first.
 */
struct store_task_rule {
	int64_t	 id;
	char	*family;
	char	*max_risk;	/* floor_risk_name() */
	char	*approval_id;	/* the approval it came from; NULL: none */
	char	*created_by;
	char	*created_at;
	char	*kind;		/* "allow", or "ask": the family is always asked */
	char	*source;	/* imported: "FILE@COMMIT: RULE"; NULL: a person's answer */
};
int	store_task_rules_list(struct store *, int64_t task_id,
	    struct store_task_rule **out, size_t *n);
/*
 * Remember family up to max_risk; a family kept already keeps the higher risk.
 * EINVAL for a family autoallow_family_valid() refuses or an unknown risk; ENOSPC
 * past AUTOALLOW_RULES_MAX rules; EEXIST when the task always asks about the family
 * (an ask rule: a person's answer does not undo an imported deny; unrule does).
 */
int	store_task_rule_add(struct store *, int64_t task_id, const char *family,
	    const char *max_risk, const char *approval_id, const char *actor);
/*
 * Import one rule from a repository's settings (reporules.c), in the caller's
 * transaction. kind "allow": a new family up to max_risk, a family kept already stays
 * as it is (an ask stays an ask). kind "ask": the family is always asked; an allow
 * kept for it becomes an ask (a deny wins, as in Claude Code). *changed is 1 when a
 * row was added or changed. Importing the same twice changes nothing. EINVAL and
 * ENOSPC as store_task_rule_add.
 */
int	store_task_rule_import(struct store *, int64_t task_id, const char *kind,
	    const char *family, const char *max_risk, const char *source,
	    const char *actor, int *changed);
/* Forget one: 0, or -1 with ENOENT when the task has no such rule. */
int	store_task_rule_remove(struct store *, int64_t task_id, const char *family);
void	store_task_rules_free(struct store_task_rule *, size_t n);
/*
 * The risks a task asks about (autoallow_ask_format()'s words), or NULL in *ask for
 * config.yaml's. set with ask NULL goes back to the configuration.
 */
int	store_task_ask_get(struct store *, int64_t task_id, char **ask);
int	store_task_ask_set(struct store *, int64_t task_id, const char *ask);

/* ---- runs ------------------------------------------------------------------ */

enum store_run_status {
	STORE_RUN_ANY = -1,		/* only as a filter */
	STORE_RUN_QUEUED = 0,
	STORE_RUN_STARTING,
	STORE_RUN_RUNNING,
	STORE_RUN_COMPLETED,
	STORE_RUN_FAILED,
	STORE_RUN_STOPPED,
	STORE_RUN_INTERRUPTED,
	STORE_RUN_REFUSED,
};

enum store_exit_reason {
	STORE_EXIT_NONE = 0,		/* NULL in the database: not ended yet */
	STORE_EXIT_COMPLETED,
	STORE_EXIT_FAILED,
	STORE_EXIT_BUDGET_SECONDS,
	STORE_EXIT_BUDGET_TURNS,
	STORE_EXIT_BUDGET_DOLLARS,
	STORE_EXIT_STOPPED,
	STORE_EXIT_INTERRUPTED,
	STORE_EXIT_LIMIT_MEMORY,	/* the run's cgroup memory limit (R2) */
	STORE_EXIT_LIMIT_PIDS,		/* the run's cgroup process limit (R2) */
};

struct store_run {
	char			*id;
	int64_t			 task_id;
	char			*task_name;	/* joined from tasks, for listings */
	enum store_run_status	 status;
	enum store_exit_reason	 exit_reason;
	char			*worktree;
	char			*branch;
	char			*base_commit;
	char			*final_commit;
	int64_t			 runner_pid;	/* 0: none yet */
	int64_t			 runner_pgid;
	int64_t			 runner_start_time; /* field 22 of /proc/<pid>/stat */
	int			 sandboxed;	/* -1 unknown, 0, 1 */
	double			 spent_dollars;
	int			 spent_turns;
	double			 spent_seconds;
	char			*report;	/* JSON */
	char			*log_path;
	int			 exported;	/* number of proof-of-work exports */
	char			*created_at;
	char			*started_at;	/* NULL until it leaves queued */
	char			*ended_at;	/* NULL until a terminal status */
	char			*prompt;	/* NULL: the task's */
	char			*base_ref;	/* NULL: the task's base */
	char			*parent_run;	/* the run it retries or follows */
	char			*continues;	/* the run whose branch it works on */
	char			*review_state;	/* NULL, "merged", "landed", "discarded" */
	char			*review_at;	/* when review_state was set */
	char			*review_detail;	/* "into main (fast-forward)", ... */
	char			*pushed_remote;	/* the last push, NULL: never pushed */
	char			*pushed_branch;
	char			*pushed_at;
};

/* "queued", ... and back. parse returns -1 (or STORE_EXIT_NONE) on unknown text. */
const char	*store_run_status_name(enum store_run_status);
int		 store_run_status_parse(const char *);
const char	*store_exit_reason_name(enum store_exit_reason);	/* NULL for NONE */
int		 store_exit_reason_parse(const char *);
/* Completed, failed, stopped, interrupted and refused are terminal. */
int		 store_run_status_terminal(enum store_run_status);

/*
 * Create a queued run of task_id. id NULL or "": the store makes one, unique and
 * safe in a branch name and a path ("20261130-004435-1a2b3c4d"). A caller's id must
 * be as safe: [A-Za-z0-9._-], not starting with '.' or '-', no "..", shorter than
 * STORE_ID_LEN (else EINVAL). The id is copied to id_out when given.
 */
int	store_run_create(struct store *, int64_t task_id, const char *id,
	    char *id_out, size_t id_outlen);
int	store_run_get(struct store *, const char *id, struct store_run *out);
/* A queued run's own prompt and base and the run it comes from (NULL: none). */
int	store_run_set_origin(struct store *, const char *id, const char *parent_run,
	    const char *prompt, const char *base_ref);
/*
 * A queued run continues run `continues` on its branch: both are recorded. Refused
 * with EBUSY (store_errmsg names it) when a run that has not ended holds the branch.
 */
int	store_run_set_continues(struct store *, const char *id, const char *continues,
	    const char *branch);
/*
 * The run, other than except (may be NULL), that holds branch: one that has not ended
 * (live 1), else the newest that records it (live 0). 1 found (id copied), 0 none.
 */
int	store_run_branch_holder(struct store *, const char *branch, const char *except,
	    char *id_out, size_t idlen, int *live);
/* Newest first. task_id 0: any task; status STORE_RUN_ANY: any; limit 0: no limit. */
int	store_run_list(struct store *, int64_t task_id, int status, size_t limit,
	    struct store_run **out, size_t *n);
/* Runs in queued, starting or running, oldest first: what reconciliation looks at. */
int	store_run_list_unfinished(struct store *, struct store_run **out, size_t *n);
/*
 * Move a run to status (exit_reason NONE leaves it NULL). Sets started_at on the way
 * out of queued and ended_at on a terminal status. A terminal status is final:
 * returns 1 when the row changed, 0 when the run had already ended, -1 (ENOENT for
 * no such run).
 */
int	store_run_set_status(struct store *, const char *id, enum store_run_status,
	    enum store_exit_reason);
int	store_run_set_report(struct store *, const char *id, const char *report_json);
int	store_run_set_spent(struct store *, const char *id, double dollars, int turns,
	    double seconds);
/* NULL arguments leave that column as it is. */
int	store_run_set_git(struct store *, const char *id, const char *worktree,
	    const char *branch, const char *base_commit, const char *final_commit);
int	store_run_set_runner(struct store *, const char *id, int64_t pid, int64_t pgid,
	    int64_t start_time, int sandboxed);
int	store_run_set_log_path(struct store *, const char *id, const char *path);
/* Count one more proof-of-work export. */
int	store_run_add_export(struct store *, const char *id);
/*
 * Record what a person did with an ended run's work (review_state above), once:
 * 1 set (its time into at when given), 0 the run already has one (a second merge, a
 * merge after a discard: the caller refuses it), -1 (ENOENT: no such run).
 */
int	store_run_set_review(struct store *, const char *id, const char *state,
	    const char *detail, char *at, size_t atlen);
/* Record a push of the run's branch: 1, 0 when landed or discarded (no branch), -1. */
int	store_run_set_pushed(struct store *, const char *id, const char *remote,
	    const char *branch, char *at, size_t atlen);
/*
 * Ended runs with a branch that no one has merged, landed or discarded: the ones
 * waiting for a person (cwctl runs --review), newest first; limit 0: no limit.
 */
int	store_run_list_waiting(struct store *, size_t limit, struct store_run **out,
	    size_t *n);
void	store_run_free(struct store_run *);
void	store_run_list_free(struct store_run *, size_t n);

/* ---- run events (the run's live event stream) ------------------------------ */

struct store_run_event {
	int64_t	 id;		/* increasing: follow with ids > the last seen */
	char	*run_id;
	char	*ts;
	char	*kind;
	char	*data;		/* JSON or NULL */
};

int	store_run_event_append(struct store *, const char *run_id, const char *kind,
	    const char *data_json, int64_t *id);
/* Events of run_id with id > since_id, oldest first; limit 0: no limit. */
int	store_run_event_list(struct store *, const char *run_id, int64_t since_id,
	    size_t limit, struct store_run_event **out, size_t *n);
void	store_run_event_free(struct store_run_event *);
void	store_run_event_list_free(struct store_run_event *, size_t n);

/* ---- approvals --------------------------------------------------------------- */

enum store_approval_state {
	STORE_APPROVAL_PENDING = 0,
	STORE_APPROVAL_ALLOWED,
	STORE_APPROVAL_DENIED,
	STORE_APPROVAL_EXPIRED,
};

struct store_approval {
	char				*id;
	char				*run_id;
	char				*tool;
	char				*input;		/* JSON */
	enum store_approval_state	 state;
	char				*message;
	char				*answered_by;	/* "inbox", "telegram:<id>", ... */
	char				*created_at;
	char				*deadline;	/* NULL: none */
	char				*answered_at;
	char				*risk;		/* "ordinary", ..., floor.h */
	char				*risk_rule;	/* NULL: none */
	char				*family;	/* remembered as; NULL: none */
};

const char	*store_approval_state_name(enum store_approval_state);
int		 store_approval_state_parse(const char *);

/* A pending approval. deadline_ms: ms since the epoch, 0 for none. */
int	store_approval_create(struct store *, const char *id, const char *run_id,
	    const char *tool, const char *input_json, int64_t deadline_ms);
int	store_approval_get(struct store *, const char *id, struct store_approval *out);
/*
 * Set a pending approval's risk level (one of floor_risk_name()'s words; anything
 * else is EINVAL) and the rule that raised it (may be NULL).
 */
int	store_approval_set_risk(struct store *, const char *id, const char *risk,
	    const char *risk_rule);
/* The command family "always for this task" would remember (autoallow.h). */
int	store_approval_set_family(struct store *, const char *id, const char *family);
/*
 * Answer an approval: a compare-and-set from pending, the one respond path for the
 * Inbox, cwctl and Telegram. Returns 1 when this call changed the row, 0 when it was
 * already answered, -1 on error (ENOENT: no such approval; EINVAL: new_state pending).
 */
int	store_approval_answer(struct store *, const char *id,
	    enum store_approval_state new_state, const char *message,
	    const char *answered_by);
/* Expire every pending approval of run_id (the run ended). Returns the count or -1. */
int	store_approval_expire_run(struct store *, const char *run_id);
/* How many approvals run_id has stored, in any state; -1 on error. */
int	store_approval_count_run(struct store *, const char *run_id);
/* Pending approvals, oldest first; run_id NULL: of every run. */
int	store_approval_list_pending(struct store *, const char *run_id,
	    struct store_approval **out, size_t *n);
void	store_approval_free(struct store_approval *);
void	store_approval_list_free(struct store_approval *, size_t n);

/* ---- the safety journal (append-only) --------------------------------------- */

struct store_journal_entry {
	int64_t	 id;
	char	*ts;
	char	*run_id;	/* NULL: not about one run */
	char	*kind;		/* "floor_deny", "sandbox_disabled", ... */
	char	*data;		/* JSON or NULL */
	int64_t	 event_id;	/* the bus event it was published as (daemon/bus.h); 0 none */
};

int	store_journal_append(struct store *, const char *run_id, const char *kind,
	    const char *data_json);
/* The same, with the id of the bus event it will be published as (0: none). */
int	store_journal_append_event(struct store *, const char *run_id, const char *kind,
	    const char *data_json, int64_t event_id);
/*
 * Entries published as events after `after` and before `before` (0: no bound), oldest
 * first, at most limit: how a stream resumes past what the bus still holds.
 */
int	store_journal_list_events(struct store *, int64_t after, int64_t before,
	    size_t limit, struct store_journal_entry **out, size_t *n);
/* The largest event id the journal holds, 0 when none. */
int	store_journal_max_event(struct store *, int64_t *out);
/* The event ids reserved so far (0: none), and a new reservation (never lower). */
int	store_bus_reserved(struct store *, int64_t *out);
int	store_bus_reserve(struct store *, int64_t upto);
/* Entries with id > since_id, oldest first; run_id NULL: all; limit 0: no limit. */
int	store_journal_list(struct store *, const char *run_id, int64_t since_id,
	    size_t limit, struct store_journal_entry **out, size_t *n);
void	store_journal_entry_free(struct store_journal_entry *);
void	store_journal_list_free(struct store_journal_entry *, size_t n);

/* ---- the audit log (append-only) --------------------------------------------- */

struct store_audit_entry {
	int64_t	 id;
	char	*ts;
	char	*actor;		/* "cwctl", "inbox", "telegram:<user>", "daemon" */
	char	*action;	/* "task.add", "approval.answer", "run.export", ... */
	char	*target;
	char	*data;		/* JSON or NULL */
};

int	store_audit_append(struct store *, const char *actor, const char *action,
	    const char *target, const char *data_json);
/* Entries with id > since_id, oldest first; limit 0: no limit. */
int	store_audit_list(struct store *, int64_t since_id, size_t limit,
	    struct store_audit_entry **out, size_t *n);
void	store_audit_entry_free(struct store_audit_entry *);
void	store_audit_list_free(struct store_audit_entry *, size_t n);

/* ---- internal to store.c / store_schema.c ------------------------------------ */

/* ---- telegram delivery (the bot token is not here: common/secret.h) --------- */

/* Small named values of the Telegram poller (the update offset): 1 found, 0, -1. */
int	store_telegram_state_get(struct store *, const char *key, char **value);
int	store_telegram_state_set(struct store *, const char *key, const char *value);

/* An approval of a task with Telegram delivery, with what its chat was shown. */
struct store_telegram_item {
	char	*approval_id;
	char	*run_id;
	char	*task;
	char	*tool;
	char	*input;			/* JSON text or NULL */
	char	*deadline;
	char	*state;			/* the approval's: pending, allowed, ... */
	char	*answered_by;
	char	*allowed_user_ids;	/* the task's list (JSON) or NULL */
	char	*shown;			/* the state its message shows; NULL: none sent */
	int64_t	 task_chat_id;		/* the task's chat now; 0: none */
	int64_t	 chat_id;		/* where its message went; 0: none sent */
	int64_t	 message_id;
	char	*risk;			/* the floor's level: destructive, ... */
	char	*risk_rule;		/* the rule that raised it, or NULL */
	int64_t	 run_others;		/* the run's other pending approvals */
};
/*
 * What the chats need, oldest first, at most limit: pending approvals of tasks with a
 * chat that have no message yet, and messages that show another state than the
 * approval's now (answered, expired, the run ended). A run has one live message at a
 * time: its next pending approval is due only once none of its pending ones has a
 * message (the caller sends at most one per run from one batch).
 */
int	store_telegram_due(struct store *, size_t limit, struct store_telegram_item **out,
	    size_t *n);
/* One approval with its task's Telegram settings: 1 found, 0 none, -1 error. */
int	store_telegram_item_get(struct store *, const char *approval_id,
	    struct store_telegram_item *out);
/*
 * A run whose report asks for a person's eye (SPEC U3: report.git.automation not
 * empty, or report.git.quarantine set) in a task with a chat, not noticed yet.
 */
struct store_telegram_notice {
	char	*run_id;
	char	*task;
	char	*report;		/* JSON text */
	int64_t	 chat_id;
	int	 notify_end;		/* the task's: its runs' ends are announced */
};
int	store_telegram_notices_due(struct store *, size_t limit,
	    struct store_telegram_notice **out, size_t *n);
void	store_telegram_notice_list_free(struct store_telegram_notice *, size_t n);
int	store_telegram_notice_add(struct store *, const char *run_id, int64_t chat_id,
	    int64_t message_id);
int	store_telegram_message_add(struct store *, const char *approval_id,
	    int64_t chat_id, int64_t message_id);
int	store_telegram_message_shown(struct store *, const char *approval_id,
	    const char *shown);
void	store_telegram_item_free(struct store_telegram_item *);
void	store_telegram_item_list_free(struct store_telegram_item *, size_t n);

struct store_migration {
	int		 version;
	const char	*name;
	const char	*sql;
	int		 rebuild;	/* 1: rebuilds a referenced table (foreign keys off) */
};
extern const struct store_migration	store_migrations[];
extern const size_t			store_n_migrations;

#endif
