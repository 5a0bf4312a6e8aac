/*
 * The store's schema as numbered migrations. A migration, once released, never
 * changes: a new need is a new entry at the end, and STORE_SCHEMA_LATEST in store.h
 * follows it. Each runs in its own transaction with its row in schema_migrations.
 */
#include <stddef.h>

#include "store.h"

/*
 * 1: tasks, runs and their event stream. Removing a task takes its history with it
 * (ON DELETE CASCADE), but never while a run is live: the trigger is the backstop
 * for store_task_remove's own check, so raw SQL cannot orphan a running runner.
 */
static const char store_schema_v1[] =
"CREATE TABLE tasks ("
"  id INTEGER PRIMARY KEY,"
"  name TEXT NOT NULL UNIQUE CHECK (length(name) > 0),"
"  repo TEXT,"
"  prompt TEXT NOT NULL,"
"  engine TEXT NOT NULL,"
"  permission_mode TEXT NOT NULL DEFAULT 'plan'"
"    CHECK (permission_mode IN ('plan', 'acceptEdits')),"
"  budget_dollars REAL NOT NULL DEFAULT 2.0 CHECK (budget_dollars >= 0),"
"  budget_turns INTEGER NOT NULL DEFAULT 50 CHECK (budget_turns >= 0),"
"  budget_seconds INTEGER NOT NULL DEFAULT 3600 CHECK (budget_seconds >= 0),"
"  schedule TEXT NOT NULL DEFAULT 'queued',"
"  enabled INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),"
"  created_at TEXT NOT NULL,"
"  updated_at TEXT NOT NULL"
");"
"CREATE TABLE runs ("
"  id TEXT PRIMARY KEY,"
"  task_id INTEGER NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,"
"  status TEXT NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'starting',"
"    'running', 'completed', 'failed', 'stopped', 'interrupted', 'refused')),"
"  exit_reason TEXT CHECK (exit_reason IS NULL OR exit_reason IN ('completed',"
"    'failed', 'budget_seconds', 'budget_turns', 'budget_dollars', 'stopped',"
"    'interrupted')),"
"  worktree TEXT,"
"  branch TEXT,"
"  base_commit TEXT,"
"  final_commit TEXT,"
"  runner_pid INTEGER,"
"  runner_pgid INTEGER,"
"  runner_start_time INTEGER,"
"  sandboxed INTEGER CHECK (sandboxed IS NULL OR sandboxed IN (0, 1)),"
"  spent_dollars REAL NOT NULL DEFAULT 0,"
"  spent_turns INTEGER NOT NULL DEFAULT 0,"
"  spent_seconds REAL NOT NULL DEFAULT 0,"
"  report TEXT CHECK (report IS NULL OR json_valid(report)),"
"  log_path TEXT,"
"  exported INTEGER NOT NULL DEFAULT 0,"
"  created_at TEXT NOT NULL,"
"  started_at TEXT,"
"  ended_at TEXT"
");"
"CREATE TABLE run_events ("
"  id INTEGER PRIMARY KEY AUTOINCREMENT,"
"  run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
"  ts TEXT NOT NULL,"
"  kind TEXT NOT NULL,"
"  data TEXT CHECK (data IS NULL OR json_valid(data))"
");"
"CREATE TRIGGER tasks_no_remove_active BEFORE DELETE ON tasks"
"  WHEN EXISTS (SELECT 1 FROM runs WHERE task_id = OLD.id"
"    AND status IN ('queued', 'starting', 'running'))"
"  BEGIN SELECT RAISE(ABORT, 'task has an active run'); END;";

/* 2: approvals. An answered approval is final; the answer is a compare-and-set. */
static const char store_schema_v2[] =
"CREATE TABLE approvals ("
"  id TEXT PRIMARY KEY,"
"  run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
"  tool TEXT NOT NULL,"
"  input TEXT CHECK (input IS NULL OR json_valid(input)),"
"  state TEXT NOT NULL DEFAULT 'pending'"
"    CHECK (state IN ('pending', 'allowed', 'denied', 'expired')),"
"  message TEXT,"
"  answered_by TEXT,"
"  created_at TEXT NOT NULL,"
"  deadline TEXT,"
"  answered_at TEXT"
");"
"CREATE TRIGGER approvals_answer_final BEFORE UPDATE OF state ON approvals"
"  WHEN OLD.state <> 'pending'"
"  BEGIN SELECT RAISE(ABORT, 'approval already answered'); END;";

/*
 * 3: the safety journal and the audit log. Append-only is enforced here, in the
 * database, not only by the absence of an API: any UPDATE or DELETE aborts. run_id
 * is deliberately not a foreign key, so removing a task never touches the journal.
 */
static const char store_schema_v3[] =
"CREATE TABLE journal ("
"  id INTEGER PRIMARY KEY AUTOINCREMENT,"
"  ts TEXT NOT NULL,"
"  run_id TEXT,"
"  kind TEXT NOT NULL,"
"  data TEXT CHECK (data IS NULL OR json_valid(data))"
");"
"CREATE TABLE audit ("
"  id INTEGER PRIMARY KEY AUTOINCREMENT,"
"  ts TEXT NOT NULL,"
"  actor TEXT NOT NULL,"
"  action TEXT NOT NULL,"
"  target TEXT,"
"  data TEXT CHECK (data IS NULL OR json_valid(data))"
");"
"CREATE TRIGGER journal_no_update BEFORE UPDATE ON journal"
"  BEGIN SELECT RAISE(ABORT, 'journal is append-only'); END;"
"CREATE TRIGGER journal_no_delete BEFORE DELETE ON journal"
"  BEGIN SELECT RAISE(ABORT, 'journal is append-only'); END;"
"CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit"
"  BEGIN SELECT RAISE(ABORT, 'audit log is append-only'); END;"
"CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit"
"  BEGIN SELECT RAISE(ABORT, 'audit log is append-only'); END;"
/*
 * INSERT OR REPLACE deletes the old row without firing DELETE triggers (unless
 * recursive_triggers is on, which a stray sqlite3 shell would not set): refuse a
 * new row that reuses an existing id.
 */
"CREATE TRIGGER journal_no_replace BEFORE INSERT ON journal"
"  WHEN EXISTS (SELECT 1 FROM journal WHERE id = NEW.id)"
"  BEGIN SELECT RAISE(ABORT, 'journal is append-only'); END;"
"CREATE TRIGGER audit_no_replace BEFORE INSERT ON audit"
"  WHEN EXISTS (SELECT 1 FROM audit WHERE id = NEW.id)"
"  BEGIN SELECT RAISE(ABORT, 'audit log is append-only'); END;";

/* 4: indexes for the queries the daemon runs on every poll and listing. */
static const char store_schema_v4[] =
"CREATE INDEX runs_task ON runs(task_id, created_at);"
"CREATE INDEX runs_status ON runs(status);"
"CREATE INDEX run_events_run ON run_events(run_id, id);"
"CREATE INDEX approvals_run_state ON approvals(run_id, state);"
"CREATE INDEX approvals_state ON approvals(state);"
"CREATE INDEX journal_run ON journal(run_id, id);";

/*
 * 5: per-run resource limits (SPEC R2). A task may set its own process and memory
 * limits (0: the configuration's). The runs table is rebuilt, the way SQLite's
 * ALTER TABLE documentation describes, because its exit_reason CHECK gains the two
 * limit reasons and a CHECK cannot be altered in place: the migration runs with
 * foreign keys off (store_migrate_one), so dropping the old table takes none of
 * its events or approvals with it, and foreign_key_check is run before the commit.
 */
static const char store_schema_v5[] =
"ALTER TABLE tasks ADD COLUMN limit_processes INTEGER NOT NULL DEFAULT 0"
"  CHECK (limit_processes >= 0);"
"ALTER TABLE tasks ADD COLUMN limit_memory_mb INTEGER NOT NULL DEFAULT 0"
"  CHECK (limit_memory_mb >= 0);"
"DROP TRIGGER tasks_no_remove_active;"
"CREATE TABLE runs_new ("
"  id TEXT PRIMARY KEY,"
"  task_id INTEGER NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,"
"  status TEXT NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'starting',"
"    'running', 'completed', 'failed', 'stopped', 'interrupted', 'refused')),"
"  exit_reason TEXT CHECK (exit_reason IS NULL OR exit_reason IN ('completed',"
"    'failed', 'budget_seconds', 'budget_turns', 'budget_dollars', 'stopped',"
"    'interrupted', 'limit_memory', 'limit_pids')),"
"  worktree TEXT,"
"  branch TEXT,"
"  base_commit TEXT,"
"  final_commit TEXT,"
"  runner_pid INTEGER,"
"  runner_pgid INTEGER,"
"  runner_start_time INTEGER,"
"  sandboxed INTEGER CHECK (sandboxed IS NULL OR sandboxed IN (0, 1)),"
"  spent_dollars REAL NOT NULL DEFAULT 0,"
"  spent_turns INTEGER NOT NULL DEFAULT 0,"
"  spent_seconds REAL NOT NULL DEFAULT 0,"
"  report TEXT CHECK (report IS NULL OR json_valid(report)),"
"  log_path TEXT,"
"  exported INTEGER NOT NULL DEFAULT 0,"
"  created_at TEXT NOT NULL,"
"  started_at TEXT,"
"  ended_at TEXT"
");"
"INSERT INTO runs_new (id, task_id, status, exit_reason, worktree, branch,"
"  base_commit, final_commit, runner_pid, runner_pgid, runner_start_time, sandboxed,"
"  spent_dollars, spent_turns, spent_seconds, report, log_path, exported,"
"  created_at, started_at, ended_at)"
"  SELECT id, task_id, status, exit_reason, worktree, branch,"
"  base_commit, final_commit, runner_pid, runner_pgid, runner_start_time, sandboxed,"
"  spent_dollars, spent_turns, spent_seconds, report, log_path, exported,"
"  created_at, started_at, ended_at FROM runs;"
"DROP TABLE runs;"
"ALTER TABLE runs_new RENAME TO runs;"
"CREATE INDEX runs_task ON runs(task_id, created_at);"
"CREATE INDEX runs_status ON runs(status);"
"CREATE TRIGGER tasks_no_remove_active BEFORE DELETE ON tasks"
"  WHEN EXISTS (SELECT 1 FROM runs WHERE task_id = OLD.id"
"    AND status IN ('queued', 'starting', 'running'))"
"  BEGIN SELECT RAISE(ABORT, 'task has an active run'); END;";

/*
 * Telegram delivery (issue 13): a task's chat and, for groups, who may press; the
 * messages sent for approvals (to edit them later); the Bot API's update offset, so a
 * restart neither replays nor loses a press. The bot token is not here (secret.c).
 */
static const char store_schema_v6[] =
"ALTER TABLE tasks ADD COLUMN telegram_chat_id INTEGER;"
"ALTER TABLE tasks ADD COLUMN telegram_allowed_user_ids TEXT"
"  CHECK (telegram_allowed_user_ids IS NULL OR json_valid(telegram_allowed_user_ids));"
"CREATE TABLE telegram_messages ("
"  approval_id TEXT PRIMARY KEY,"
"  chat_id INTEGER NOT NULL,"
"  message_id INTEGER NOT NULL,"
"  shown TEXT NOT NULL DEFAULT 'pending',"
"  created_at TEXT NOT NULL"
");"
"CREATE TABLE telegram_state ("
"  key TEXT PRIMARY KEY,"
"  value TEXT NOT NULL"
");";

/*
 * 7: tasks a person can iterate on, and work that arrives with someone else's commit
 * (SPEC W2). A task gains its base branch (NULL: the repository's default branch at
 * each run's start), an archived flag (`task rm` keeps its runs readable), and for
 * an imported job or template its source (repository, path, commit, definition hash)
 * with the security preview computed at discovery; needs_review is 1 while that
 * preview waits for a person's explicit enable. A run may carry its own prompt and
 * base (a follow-up starts from an earlier run's branch) and the run it repeats or
 * follows. task_history keeps every earlier definition of a task.
 */
static const char store_schema_v7[] =
"ALTER TABLE tasks ADD COLUMN base TEXT;"
"ALTER TABLE tasks ADD COLUMN archived INTEGER NOT NULL DEFAULT 0"
"  CHECK (archived IN (0, 1));"
"ALTER TABLE tasks ADD COLUMN source TEXT CHECK (source IS NULL OR json_valid(source));"
"ALTER TABLE tasks ADD COLUMN preview TEXT"
"  CHECK (preview IS NULL OR json_valid(preview));"
"ALTER TABLE tasks ADD COLUMN needs_review INTEGER NOT NULL DEFAULT 0"
"  CHECK (needs_review IN (0, 1));"
"ALTER TABLE runs ADD COLUMN prompt TEXT;"
"ALTER TABLE runs ADD COLUMN base_ref TEXT;"
"ALTER TABLE runs ADD COLUMN parent_run TEXT;"
"CREATE TABLE task_history ("
"  id INTEGER PRIMARY KEY AUTOINCREMENT,"
"  task_id INTEGER NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,"
"  ts TEXT NOT NULL,"
"  actor TEXT NOT NULL,"
"  definition TEXT NOT NULL CHECK (json_valid(definition))"
");"
"CREATE INDEX task_history_task ON task_history(task_id, id);";

/* 8, SPEC N1: a task's own egress rules and whether an unknown host becomes an approval. */
static const char store_schema_v8[] =
"CREATE TABLE task_network ("
"  task_id INTEGER PRIMARY KEY REFERENCES tasks(id) ON DELETE CASCADE,"
"  ask INTEGER NOT NULL DEFAULT 0 CHECK (ask IN (0, 1)),"
"  allow TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(allow) AND json_type(allow) = 'array')"
");";

/*
 * 9: an approval's risk level (floor.h: ordinary, outside_worktree, fetch_exec,
 * destructive) and the rule that raised it, from the floor's evaluation in the runner,
 * shown first wherever a person answers. Rows from before have none: ordinary.
 */
static const char store_schema_v9[] =
"ALTER TABLE approvals ADD COLUMN risk TEXT NOT NULL DEFAULT 'ordinary'"
"  CHECK (risk IN ('ordinary', 'outside_worktree', 'fetch_exec', 'destructive'));"
"ALTER TABLE approvals ADD COLUMN risk_rule TEXT;";

/* 10: byok (issue 12): the name of a task's provider key; the key is in secret.c's store. */
static const char store_schema_v10[] =
"ALTER TABLE tasks ADD COLUMN key_name TEXT;";

/*
 * 11, SPEC U3: the Telegram notice sent for a run whose work needs a person's eye
 * (automation files, or refused into quarantine), so it is sent once. Runs from
 * before count as noticed: an upgrade must not flood the chats with old runs.
 */
static const char store_schema_v11[] =
"CREATE TABLE telegram_run_notices ("
"  run_id TEXT PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,"
"  chat_id INTEGER NOT NULL,"
"  message_id INTEGER NOT NULL DEFAULT 0,"
"  created_at TEXT NOT NULL"
");"
"INSERT INTO telegram_run_notices (run_id, chat_id, created_at)"
"  SELECT id, 0, 'before migration 11' FROM runs;";

/*
 * 12, SPEC A1: who answers. A task's remembered answers (a command family, up to the
 * risk the person saw when they said "always for this task"), the risks the task asks
 * about (NULL: config.yaml's approvals.ask), and the family an approval would be
 * remembered as (NULL: none, e.g. a payload behind sh -c).
 */
static const char store_schema_v12[] =
"CREATE TABLE task_rules ("
"  id INTEGER PRIMARY KEY AUTOINCREMENT,"
"  task_id INTEGER NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,"
"  family TEXT NOT NULL CHECK (length(family) BETWEEN 1 AND 95),"
"  max_risk TEXT NOT NULL"
"    CHECK (max_risk IN ('ordinary', 'outside_worktree', 'fetch_exec', 'destructive')),"
"  approval_id TEXT,"
"  created_by TEXT NOT NULL,"
"  created_at TEXT NOT NULL,"
"  UNIQUE (task_id, family)"
");"
"CREATE TABLE task_approvals ("
"  task_id INTEGER PRIMARY KEY REFERENCES tasks(id) ON DELETE CASCADE,"
"  ask TEXT NOT NULL CHECK (length(ask) BETWEEN 1 AND 200)"
");"
"ALTER TABLE approvals ADD COLUMN family TEXT;";

/*
 * 13, issue 23: a task's budget pause. budget_wait: seconds a run held at its budget
 * waits for a person's answer (0: it ends at once; NULL: config.yaml's budgets.wait);
 * max_dollars: the hard ceiling no extension passes (0: none; NULL: budgets.max_dollars).
 */
static const char store_schema_v13[] =
"ALTER TABLE tasks ADD COLUMN budget_wait INTEGER"
"  CHECK (budget_wait IS NULL OR budget_wait >= 0);"
"ALTER TABLE tasks ADD COLUMN max_dollars REAL"
"  CHECK (max_dollars IS NULL OR max_dollars >= 0);";

/*
 * 14, issue 23: a task rule's kind and where it came from. kind 'ask': the family is
 * always asked (a repository's deny or ask rule a person imported); 'allow': the
 * remembered answer it always was. source: for an imported rule, the file, commit and
 * rule text it came from (NULL: a person's own answer).
 */
static const char store_schema_v14[] =
"ALTER TABLE task_rules ADD COLUMN kind TEXT NOT NULL DEFAULT 'allow'"
"  CHECK (kind IN ('allow', 'ask'));"
"ALTER TABLE task_rules ADD COLUMN source TEXT"
"  CHECK (source IS NULL OR length(source) BETWEEN 1 AND 600);";

/*
 * 15, issue 23: a continued run works on the branch of the run it continues. continues
 * names that run (NULL: none); the index lets at most one run that has not ended hold
 * a branch, so two continues of one run cannot both work on it (git would refuse the
 * second checkout; the store refuses the second holder first).
 */
static const char store_schema_v15[] =
"ALTER TABLE runs ADD COLUMN continues TEXT;"
"CREATE UNIQUE INDEX runs_branch_held ON runs(branch)"
"  WHERE branch IS NOT NULL AND status IN ('queued', 'starting', 'running');";

/*
 * 16, issue 24: the id of the bus event a journal entry was published as (daemon/bus.h),
 * so that an event stream resumed past the bus's ring gets the journal's entries in
 * order (NULL for entries from before). bus_state: the event ids a daemon has reserved
 * (it may give out ids below `reserved`), so that the next daemon starts above them.
 */
static const char store_schema_v16[] =
"ALTER TABLE journal ADD COLUMN event_id INTEGER;"
"CREATE INDEX journal_event ON journal(event_id) WHERE event_id IS NOT NULL;"
"CREATE TABLE bus_state ("
"  id INTEGER PRIMARY KEY CHECK (id = 1),"
"  reserved INTEGER NOT NULL CHECK (reserved >= 0)"
");";

/*
 * 17, issue 24: records are masked once, as they enter the daemon, and served as they
 * are stored; what an older daemon stored raw is masked here, once, by cw_mask_json
 * (common/json.c json_mask_text, registered by store_open). The journal and the audit
 * log stay append-only: their UPDATE triggers are set aside for this one statement
 * each, inside the migration's transaction, and put back as they were.
 */
static const char store_schema_v17[] =
"UPDATE runs SET report = cw_mask_json(report) WHERE report IS NOT NULL;"
"UPDATE run_events SET data = cw_mask_json(data) WHERE data IS NOT NULL;"
"UPDATE approvals SET input = cw_mask_json(input) WHERE input IS NOT NULL;"
"DROP TRIGGER journal_no_update;"
"UPDATE journal SET data = cw_mask_json(data) WHERE data IS NOT NULL;"
"CREATE TRIGGER journal_no_update BEFORE UPDATE ON journal"
"  BEGIN SELECT RAISE(ABORT, 'journal is append-only'); END;"
"DROP TRIGGER audit_no_update;"
"UPDATE audit SET data = cw_mask_json(data) WHERE data IS NOT NULL;"
"CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit"
"  BEGIN SELECT RAISE(ABORT, 'audit log is append-only'); END;";

/*
 * 18, issue 27: what a person did with a finished run's work. review_state is final
 * (merged, landed: merged and its branch and worktree removed, discarded): the trigger
 * refuses a second one, as for an approval's answer, so a second merge cannot be
 * recorded even by raw SQL. A push is its own record beside it (a run may be pushed
 * and merged). Runs merged or discarded by an older daemon are read back from the
 * journal, so an upgrade does not show them as waiting; a discard after a merge is the
 * later act and the branch is gone, so it wins.
 */
static const char store_schema_v18[] =
"ALTER TABLE runs ADD COLUMN review_state TEXT"
"  CHECK (review_state IS NULL OR review_state IN ('merged', 'landed', 'discarded'));"
"ALTER TABLE runs ADD COLUMN review_at TEXT;"
"ALTER TABLE runs ADD COLUMN review_detail TEXT;"
"ALTER TABLE runs ADD COLUMN pushed_remote TEXT;"
"ALTER TABLE runs ADD COLUMN pushed_branch TEXT;"
"ALTER TABLE runs ADD COLUMN pushed_at TEXT;"
"UPDATE runs SET review_state = 'discarded',"
"  review_at = (SELECT ts FROM journal j WHERE j.run_id = runs.id"
"    AND j.kind = 'run_discarded' ORDER BY j.id DESC LIMIT 1),"
"  review_detail = 'branch ' || coalesce(branch, '?') || ' and its worktree removed'"
"  WHERE EXISTS (SELECT 1 FROM journal j WHERE j.run_id = runs.id"
"    AND j.kind = 'run_discarded');"
"UPDATE runs SET review_state = 'merged',"
"  review_at = (SELECT ts FROM journal j WHERE j.run_id = runs.id"
"    AND j.kind = 'run_merged' ORDER BY j.id DESC LIMIT 1),"
"  review_detail = (SELECT 'into ' || coalesce(json_extract(j.data, '$.into'), '?') ||"
"    ', ' || coalesce(json_extract(j.data, '$.result'), '?') FROM journal j"
"    WHERE j.run_id = runs.id AND j.kind = 'run_merged' ORDER BY j.id DESC LIMIT 1)"
"  WHERE review_state IS NULL AND EXISTS (SELECT 1 FROM journal j"
"    WHERE j.run_id = runs.id AND j.kind = 'run_merged');"
"CREATE TRIGGER runs_review_final BEFORE UPDATE OF review_state ON runs"
"  WHEN OLD.review_state IS NOT NULL"
"  BEGIN SELECT RAISE(ABORT, 'run review already ended'); END;";

/*
 * A task's seal keeps the build outputs its runs make (issue 27): the seal leaves them
 * out of the commit unless a person said the repository commits them.
 */
static const char store_schema_v19[] =
"ALTER TABLE tasks ADD COLUMN keep_build_outputs INTEGER NOT NULL DEFAULT 0"
"  CHECK (keep_build_outputs IN (0, 1));";

/*
 * A task says whether the end of each of its runs is announced (issue 27): a desktop
 * notification where the daemon has a session bus, and one message in the task's
 * Telegram chat. On by default; the runs that ended before count as announced, so that
 * an upgrade does not send a chat every run it ever had (telegram_run_notices holds
 * the runs announced, as for migration 11). A run whose work needs a person's eye
 * (automation files, quarantine) is announced whatever the task says.
 */
static const char store_schema_v20[] =
"ALTER TABLE tasks ADD COLUMN notify_end INTEGER NOT NULL DEFAULT 1"
"  CHECK (notify_end IN (0, 1));"
"INSERT OR IGNORE INTO telegram_run_notices (run_id, chat_id, created_at)"
"  SELECT id, 0, 'before migration 20' FROM runs WHERE report IS NOT NULL;";

const struct store_migration store_migrations[] = {
	{ 1, "tasks, runs, run_events", store_schema_v1, 0 },
	{ 2, "approvals", store_schema_v2, 0 },
	{ 3, "journal and audit log, append-only", store_schema_v3, 0 },
	{ 4, "indexes", store_schema_v4, 0 },
	{ 5, "per-run resource limits", store_schema_v5, 1 },
	{ 6, "telegram delivery", store_schema_v6, 0 },
	{ 7, "task base, archive, history; imported jobs' source and preview",
	    store_schema_v7, 0 },
	{ 8, "per-task network policy", store_schema_v8, 0 },
	{ 9, "approval risk", store_schema_v9, 0 },
	{ 10, "a task's provider key name", store_schema_v10, 0 },
	{ 11, "telegram run notices", store_schema_v11, 0 },
	{ 12, "who answers: task rules, approvals.ask, approval family", store_schema_v12,
	    0 },
	{ 13, "a task's budget pause: budget_wait, max_dollars", store_schema_v13, 0 },
	{ 14, "task rule kind (allow, ask) and source", store_schema_v14, 0 },
	{ 15, "a continued run holds the branch it continues", store_schema_v15, 0 },
	{ 16, "the bus event of a journal entry", store_schema_v16, 0 },
	{ 17, "records stored raw by an older daemon, masked", store_schema_v17, 0 },
	{ 18, "a run's review end state and its push", store_schema_v18, 0 },
	{ 19, "a task keeps its build outputs in the seal", store_schema_v19, 0 },
	{ 20, "a task announces its runs' ends", store_schema_v20, 0 },
};
const size_t store_n_migrations =
    sizeof store_migrations / sizeof store_migrations[0];
