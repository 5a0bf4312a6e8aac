/*
 * The sqlite3 store. Every statement is prepared with its values bound; nothing
 * here builds SQL from data. Errors land in the handle's message buffer and errno,
 * never on stderr: the daemon, which knows the context, says what failed.
 */
#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/random.h>
#endif

#include <sqlite3.h>

#include "store.h"

#define STORE_BUSY_TIMEOUT_MS	5000

struct store {
	sqlite3	*db;
	char	*path;
	char	 err[512];
};

/* Row readers fill one row from the current statement: 0, or an errno value. */
typedef int	(*store_row_fn)(sqlite3_stmt *, void *);
typedef void	(*store_free_fn)(void *);

static const char *store_run_status_names[] = {
	"queued", "starting", "running", "completed", "failed", "stopped",
	"interrupted", "refused",
};
static const char *store_exit_reason_names[] = {
	NULL, "completed", "failed", "budget_seconds", "budget_turns",
	"budget_dollars", "stopped", "interrupted", "limit_memory", "limit_pids",
};
static const char *store_approval_state_names[] = {
	"pending", "allowed", "denied", "expired",
};
#define NITEMS(a)	(sizeof (a) / sizeof (a)[0])

/* ---- errors ---------------------------------------------------------------- */

static int __attribute__((format(printf, 3, 4)))
store_fail(struct store *st, int e, const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	vsnprintf(st->err, sizeof st->err, fmt, ap);
	va_end(ap);
	errno = e;
	return -1;
}

static int
store_errno(int rc)
{
	switch (rc & 0xff) {
	case SQLITE_CONSTRAINT:
	case SQLITE_MISMATCH:
	case SQLITE_RANGE:
	case SQLITE_TOOBIG:
		return EINVAL;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return EAGAIN;
	case SQLITE_NOMEM:
		return ENOMEM;
	default:
		return EIO;
	}
}

/* Record sqlite's error for what, then finalize stmt (may be NULL). */
static int
store_sqlfail(struct store *st, sqlite3_stmt *stmt, const char *what)
{
	int	e;

	e = store_errno(sqlite3_extended_errcode(st->db));
	snprintf(st->err, sizeof st->err, "%s: %s", what, sqlite3_errmsg(st->db));
	sqlite3_finalize(stmt);
	errno = e;
	return -1;
}

const char *
store_errmsg(struct store *st)
{
	return st->err;
}

/* ---- time and ids ------------------------------------------------------------ */

void
store_format_time(int64_t ms, char *buf, size_t len)
{
	struct tm	tm;
	time_t		t;
	int64_t		frac;
	int		n;

	t = (time_t)(ms / 1000);
	frac = ms % 1000;
	if (frac < 0) {
		frac += 1000;
		t--;
	}
	if (gmtime_r(&t, &tm) == NULL) {
		snprintf(buf, len, "1970-01-01T00:00:00.000Z");
		return;
	}
	/* A buffer too small for a timestamp gets an empty string, never a cut one. */
	n = snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
	    tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)frac);
	if ((n < 0 || (size_t)n >= len) && len > 0)
		buf[0] = '\0';
}

void
store_now(char *buf, size_t len)
{
	struct timespec	ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	store_format_time((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000, buf, len);
}

static int
store_random(void *buf, size_t len)
{
#ifdef __linux__
	ssize_t	r;

	do
		r = getrandom(buf, len, 0);
	while (r == -1 && errno == EINTR);
	return r == (ssize_t)len ? 0 : -1;
#else
	arc4random_buf(buf, len);
	return 0;
#endif
}

/* A run id: sortable by creation time, safe in a path and a branch name. */
static int
store_make_run_id(char *buf, size_t len)
{
	struct timespec	ts;
	struct tm	tm;
	uint32_t	rnd;
	time_t		t;
	int		n;

	if (store_random(&rnd, sizeof rnd) == -1)
		return -1;
	clock_gettime(CLOCK_REALTIME, &ts);
	t = ts.tv_sec;
	if (gmtime_r(&t, &tm) == NULL)
		return -1;
	n = snprintf(buf, len, "%04d%02d%02d-%02d%02d%02d-%08x", tm.tm_year + 1900,
	    tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, rnd);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* ---- enums ------------------------------------------------------------------- */

const char *
store_run_status_name(enum store_run_status s)
{
	if ((int)s < 0 || (size_t)s >= NITEMS(store_run_status_names))
		return NULL;
	return store_run_status_names[s];
}

int
store_run_status_parse(const char *s)
{
	for (size_t i = 0; s != NULL && i < NITEMS(store_run_status_names); i++)
		if (strcmp(s, store_run_status_names[i]) == 0)
			return (int)i;
	return -1;
}

int
store_run_status_terminal(enum store_run_status s)
{
	return s >= STORE_RUN_COMPLETED && s <= STORE_RUN_REFUSED;
}

const char *
store_exit_reason_name(enum store_exit_reason r)
{
	if ((int)r < 0 || (size_t)r >= NITEMS(store_exit_reason_names))
		return NULL;
	return store_exit_reason_names[r];
}

int
store_exit_reason_parse(const char *s)
{
	for (size_t i = 1; s != NULL && i < NITEMS(store_exit_reason_names); i++)
		if (strcmp(s, store_exit_reason_names[i]) == 0)
			return (int)i;
	return STORE_EXIT_NONE;
}

const char *
store_approval_state_name(enum store_approval_state s)
{
	if ((int)s < 0 || (size_t)s >= NITEMS(store_approval_state_names))
		return NULL;
	return store_approval_state_names[s];
}

int
store_approval_state_parse(const char *s)
{
	for (size_t i = 0; s != NULL && i < NITEMS(store_approval_state_names); i++)
		if (strcmp(s, store_approval_state_names[i]) == 0)
			return (int)i;
	return -1;
}

/* ---- statement helpers ------------------------------------------------------ */

static int
store_prepare(struct store *st, const char *sql, sqlite3_stmt **stmt,
    const char *what)
{
	*stmt = NULL;
	if (sqlite3_prepare_v2(st->db, sql, -1, stmt, NULL) != SQLITE_OK)
		return store_sqlfail(st, *stmt, what);
	return 0;
}

/* Bind a string, or SQL NULL for a NULL pointer. The string outlives the step. */
static int
store_bind_text(sqlite3_stmt *stmt, int idx, const char *s)
{
	if (s == NULL)
		return sqlite3_bind_null(stmt, idx);
	return sqlite3_bind_text(stmt, idx, s, -1, SQLITE_STATIC);
}

/* Copy a text column; NULL stays NULL. 0 or ENOMEM. */
static int
store_col_text(sqlite3_stmt *stmt, int i, char **out)
{
	const unsigned char	*s;

	*out = NULL;
	if (sqlite3_column_type(stmt, i) == SQLITE_NULL)
		return 0;
	if ((s = sqlite3_column_text(stmt, i)) == NULL)
		return ENOMEM;
	if ((*out = strdup((const char *)s)) == NULL)
		return ENOMEM;
	return 0;
}

/* Run a statement that returns no rows; finalizes it. */
static int
store_step_done(struct store *st, sqlite3_stmt *stmt, const char *what)
{
	if (sqlite3_step(stmt) != SQLITE_DONE)
		return store_sqlfail(st, stmt, what);
	sqlite3_finalize(stmt);
	return 0;
}

static int
store_exec(struct store *st, const char *sql, const char *what)
{
	if (sqlite3_exec(st->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return store_sqlfail(st, NULL, what);
	return 0;
}

/* Step a lookup of at most one row into out: 1 found, 0 none, -1 error. */
static int
store_get_one(struct store *st, sqlite3_stmt *stmt, size_t size, store_row_fn row,
    store_free_fn fr, void *out, const char *what)
{
	int	rc, e;

	memset(out, 0, size);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_DONE) {
		sqlite3_finalize(stmt);
		return 0;
	}
	if (rc != SQLITE_ROW)
		return store_sqlfail(st, stmt, what);
	if ((e = row(stmt, out)) != 0) {
		fr(out);
		sqlite3_finalize(stmt);
		return store_fail(st, e, "%s: %s", what, strerror(e));
	}
	sqlite3_finalize(stmt);
	return 1;
}

/* Step every row into a new array of size-byte rows. Finalizes stmt. */
static int
store_collect(struct store *st, sqlite3_stmt *stmt, size_t size, store_row_fn row,
    store_free_fn fr, void **out, size_t *n, const char *what)
{
	char	*v = NULL, *nv;
	size_t	 cnt = 0, cap = 0, ncap;
	int	 rc, e = 0;

	*out = NULL;
	*n = 0;
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		if (cnt == cap) {
			ncap = cap ? cap * 2 : 8;
			if (ncap > SIZE_MAX / size ||
			    (nv = realloc(v, ncap * size)) == NULL) {
				e = ENOMEM;
				break;
			}
			v = nv;
			cap = ncap;
		}
		memset(v + cnt * size, 0, size);
		if ((e = row(stmt, v + cnt * size)) != 0) {
			fr(v + cnt * size);
			break;
		}
		cnt++;
	}
	if (e == 0 && rc == SQLITE_DONE) {
		sqlite3_finalize(stmt);
		*out = v;
		*n = cnt;
		return 0;
	}
	for (size_t i = 0; i < cnt; i++)
		fr(v + i * size);
	free(v);
	if (e != 0) {
		sqlite3_finalize(stmt);
		return store_fail(st, e, "%s: %s", what, strerror(e));
	}
	return store_sqlfail(st, stmt, what);
}

/* A limit for SQL: 0 means none, which sqlite spells -1. */
static sqlite3_int64
store_limit(size_t limit)
{
	if (limit == 0 || limit > INT64_MAX)
		return -1;
	return (sqlite3_int64)limit;
}

/* ---- open and migrate ----------------------------------------------------------- */

/* 1 when schema_migrations exists, 0 when not, -1 on error. */
static int
store_has_migrations_table(struct store *st)
{
	sqlite3_stmt	*stmt;
	int		 rc;

	if (store_prepare(st, "SELECT 1 FROM sqlite_master WHERE type = 'table'"
	    " AND name = 'schema_migrations'", &stmt, st->path) == -1)
		return -1;
	rc = sqlite3_step(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_sqlfail(st, stmt, st->path);
	sqlite3_finalize(stmt);
	return rc == SQLITE_ROW;
}

int
store_schema_version(struct store *st)
{
	sqlite3_stmt	*stmt;
	int		 v, has;

	if ((has = store_has_migrations_table(st)) <= 0)
		return has;
	if (store_prepare(st, "SELECT coalesce(max(version), 0) FROM schema_migrations",
	    &stmt, st->path) == -1)
		return -1;
	if (sqlite3_step(stmt) != SQLITE_ROW)
		return store_sqlfail(st, stmt, st->path);
	v = sqlite3_column_int(stmt, 0);
	sqlite3_finalize(stmt);
	return v;
}

/* After a table rebuild: every reference still names a row (foreign_key_check). */
static int
store_foreign_keys_ok(struct store *st, const char *what)
{
	sqlite3_stmt	*stmt;
	int		 rc;

	if (store_prepare(st, "PRAGMA foreign_key_check", &stmt, what) == -1)
		return -1;
	rc = sqlite3_step(stmt);
	sqlite3_finalize(stmt);
	if (rc == SQLITE_ROW)
		return store_fail(st, EIO, "%s: a foreign key no longer matches", what);
	if (rc != SQLITE_DONE)
		return store_fail(st, EIO, "%s: foreign_key_check: %s", what,
		    sqlite3_errmsg(st->db));
	return 0;
}

/*
 * Apply migration m in one IMMEDIATE transaction. The version is read again under
 * the write lock so that two processes opening one new file migrate it once.
 */
static int
store_migrate_one(struct store *st, const struct store_migration *m)
{
	sqlite3_stmt	*stmt;
	char		 now[STORE_TIME_LEN], what[256];
	int		 cur;

	snprintf(what, sizeof what, "%s: migration %d (%s)", st->path, m->version,
	    m->name);
	/*
	 * A migration that rebuilds a table others reference runs with foreign keys
	 * off (the pragma is a no-op inside a transaction): dropping the old table would
	 * otherwise cascade into its children. foreign_key_check stands in for them.
	 */
	if (m->rebuild && store_exec(st, "PRAGMA foreign_keys = OFF", what) == -1)
		return -1;
	if (store_exec(st, "BEGIN IMMEDIATE", what) == -1)
		goto fail_fk;
	if (store_exec(st, "CREATE TABLE IF NOT EXISTS schema_migrations ("
	    " version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)", what) == -1)
		goto fail;
	if ((cur = store_schema_version(st)) == -1)
		goto fail;
	if (cur >= m->version) {
		if (store_exec(st, "COMMIT", what) == -1)
			goto fail;
		goto fk_on;
	}
	if (cur != m->version - 1) {
		store_fail(st, EIO, "%s: database is at version %d", what, cur);
		goto fail;
	}
	if (store_exec(st, m->sql, what) == -1)
		goto fail;
	if (m->rebuild && store_foreign_keys_ok(st, what) == -1)
		goto fail;
	if (store_prepare(st, "INSERT INTO schema_migrations (version, applied_at)"
	    " VALUES (?1, ?2)", &stmt, what) == -1)
		goto fail;
	store_now(now, sizeof now);
	sqlite3_bind_int(stmt, 1, m->version);
	store_bind_text(stmt, 2, now);
	if (store_step_done(st, stmt, what) == -1)
		goto fail;
	if (store_exec(st, "COMMIT", what) == -1)
		goto fail;
	goto fk_on;
fail:
	{
		int	e = errno;

		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
		errno = e;
	}
fail_fk:
	if (m->rebuild) {
		int	e = errno;

		sqlite3_exec(st->db, "PRAGMA foreign_keys = ON", NULL, NULL, NULL);
		errno = e;
	}
	return -1;
fk_on:
	if (m->rebuild && store_exec(st, "PRAGMA foreign_keys = ON", what) == -1)
		return -1;
	return 0;
}

/*
 * Look at the file before changing anything: refuse a file that is not a sqlite
 * database, a database that is not ours, and a schema newer than we know. Only
 * then is WAL switched on (which rewrites the header) and are migrations applied.
 */
static int
store_check(struct store *st)
{
	sqlite3_stmt	*stmt;
	int		 rc, objects, version;

	if (store_prepare(st, "SELECT count(*) FROM sqlite_master", &stmt,
	    st->path) == -1) {
		if ((sqlite3_errcode(st->db) & 0xff) == SQLITE_NOTADB)
			return store_fail(st, EINVAL, "%s: not a sqlite database",
			    st->path);
		return -1;
	}
	rc = sqlite3_step(stmt);
	if (rc != SQLITE_ROW) {
		if ((rc & 0xff) == SQLITE_NOTADB) {
			sqlite3_finalize(stmt);
			return store_fail(st, EINVAL, "%s: not a sqlite database",
			    st->path);
		}
		return store_sqlfail(st, stmt, st->path);
	}
	objects = sqlite3_column_int(stmt, 0);
	sqlite3_finalize(stmt);

	if ((version = store_schema_version(st)) == -1)
		return -1;
	if (version == 0 && objects > 0 && store_has_migrations_table(st) == 0)
		return store_fail(st, EINVAL, "%s: a sqlite database, but not a "
		    "clockwork store (no schema_migrations table)", st->path);
	if (version > STORE_SCHEMA_LATEST)
		return store_fail(st, EINVAL, "%s: schema version %d is newer than "
		    "this clockwork knows (%d); refusing to open it", st->path,
		    version, STORE_SCHEMA_LATEST);
	return 0;
}

static int
store_set_wal(struct store *st)
{
	sqlite3_stmt	*stmt;
	const char	*mode;

	if (store_prepare(st, "PRAGMA journal_mode = WAL", &stmt, st->path) == -1)
		return -1;
	if (sqlite3_step(stmt) != SQLITE_ROW)
		return store_sqlfail(st, stmt, st->path);
	mode = (const char *)sqlite3_column_text(stmt, 0);
	if (mode == NULL || strcmp(mode, "wal") != 0) {
		store_fail(st, EIO, "%s: cannot use WAL journal mode (got %s)",
		    st->path, mode == NULL ? "nothing" : mode);
		sqlite3_finalize(stmt);
		errno = EIO;
		return -1;
	}
	sqlite3_finalize(stmt);
	return 0;
}

int
store_open_at_version(const char *path, int target, struct store **out, char *err,
    size_t errlen)
{
	struct store	*st;
	int		 fd, version;

	*out = NULL;
	if (target < 0 || target > STORE_SCHEMA_LATEST) {
		snprintf(err, errlen, "%s: no schema version %d", path, target);
		errno = EINVAL;
		return -1;
	}
	if ((st = calloc(1, sizeof *st)) == NULL || (st->path = strdup(path)) == NULL) {
		free(st);
		snprintf(err, errlen, "%s: %s", path, strerror(ENOMEM));
		errno = ENOMEM;
		return -1;
	}

	/* Create it here so the mode is 0600; sqlite gives -wal and -shm the same. */
	if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) == -1) {
		store_fail(st, errno, "%s: %s", path, strerror(errno));
		goto fail;
	}
	close(fd);

	if (sqlite3_open_v2(path, &st->db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		if (st->db == NULL)
			store_fail(st, ENOMEM, "%s: %s", path, strerror(ENOMEM));
		else
			store_sqlfail(st, NULL, path);
		goto fail;
	}
	sqlite3_extended_result_codes(st->db, 1);
	sqlite3_busy_timeout(st->db, STORE_BUSY_TIMEOUT_MS);
	/* No writable_schema tricks through store_db(): the schema is ours. */
	sqlite3_db_config(st->db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
	if (store_exec(st, "PRAGMA foreign_keys = ON", path) == -1)
		goto fail;

	/*
	 * Two processes opening a new file at once: while one switches it to WAL, the
	 * other's first read or its own switch can be told "database is locked" at once,
	 * without the busy handler (sqlite does so to avoid a deadlock). Those steps are
	 * retried, within the same busy timeout.
	 */
	for (int waited = 0; ; waited += 10) {
		struct timespec	 ts = { 0, 10 * 1000 * 1000 };

		if (store_check(st) == 0 && store_set_wal(st) == 0)
			break;
		if ((sqlite3_errcode(st->db) & 0xff) != SQLITE_BUSY ||
		    waited >= STORE_BUSY_TIMEOUT_MS)
			goto fail;
		nanosleep(&ts, NULL);
	}
	if ((version = store_schema_version(st)) == -1)
		goto fail;
	for (size_t i = 0; i < store_n_migrations; i++) {
		const struct store_migration *m = &store_migrations[i];

		if (m->version <= version || m->version > target)
			continue;
		if (store_migrate_one(st, m) == -1)
			goto fail;
	}
	st->err[0] = '\0';
	*out = st;
	return 0;
fail:
	{
		int	e = errno;

		snprintf(err, errlen, "%s", st->err);
		store_close(st);
		errno = e;
	}
	return -1;
}

int
store_open(const char *path, struct store **out, char *err, size_t errlen)
{
	return store_open_at_version(path, STORE_SCHEMA_LATEST, out, err, errlen);
}

void
store_close(struct store *st)
{
	if (st == NULL)
		return;
	sqlite3_close_v2(st->db);
	free(st->path);
	free(st);
}

struct sqlite3 *
store_db(struct store *st)
{
	return st->db;
}

int
store_begin(struct store *st)
{
	return store_exec(st, "BEGIN IMMEDIATE", "begin");
}

int
store_commit(struct store *st)
{
	return store_exec(st, "COMMIT", "commit");
}

void
store_rollback(struct store *st)
{
	if (!sqlite3_get_autocommit(st->db))
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
}

/* ---- tasks ------------------------------------------------------------------------ */

#define TASK_COLUMNS \
	"id, name, repo, prompt, engine, permission_mode, budget_dollars," \
	" budget_turns, budget_seconds, schedule, enabled, created_at, updated_at," \
	" limit_processes, limit_memory_mb"

static int
store_task_row(sqlite3_stmt *stmt, void *p)
{
	struct store_task	*t = p;

	t->id = sqlite3_column_int64(stmt, 0);
	t->budget_dollars = sqlite3_column_double(stmt, 6);
	t->budget_turns = sqlite3_column_int(stmt, 7);
	t->budget_seconds = sqlite3_column_int(stmt, 8);
	t->enabled = sqlite3_column_int(stmt, 10);
	t->limit_processes = sqlite3_column_int(stmt, 13);
	t->limit_memory_mb = sqlite3_column_int(stmt, 14);
	if (store_col_text(stmt, 1, &t->name) || store_col_text(stmt, 2, &t->repo) ||
	    store_col_text(stmt, 3, &t->prompt) ||
	    store_col_text(stmt, 4, &t->engine) ||
	    store_col_text(stmt, 5, &t->permission_mode) ||
	    store_col_text(stmt, 9, &t->schedule) ||
	    store_col_text(stmt, 11, &t->created_at) ||
	    store_col_text(stmt, 12, &t->updated_at))
		return ENOMEM;
	return 0;
}

void
store_task_free(struct store_task *t)
{
	if (t == NULL)
		return;
	free(t->name);
	free(t->repo);
	free(t->prompt);
	free(t->engine);
	free(t->permission_mode);
	free(t->schedule);
	free(t->created_at);
	free(t->updated_at);
	memset(t, 0, sizeof *t);
}

static void
store_task_free_v(void *p)
{
	store_task_free(p);
}

void
store_task_list_free(struct store_task *v, size_t n)
{
	for (size_t i = 0; v != NULL && i < n; i++)
		store_task_free(&v[i]);
	free(v);
}

/* Bind the editable fields of t at ?1..?10 (name .. enabled), ?13 and ?14 (limits). */
static void
store_task_bind(sqlite3_stmt *stmt, const struct store_task *t)
{
	store_bind_text(stmt, 1, t->name);
	store_bind_text(stmt, 2, t->repo);
	store_bind_text(stmt, 3, t->prompt);
	store_bind_text(stmt, 4, t->engine);
	store_bind_text(stmt, 5, t->permission_mode != NULL ? t->permission_mode :
	    "plan");
	sqlite3_bind_double(stmt, 6, t->budget_dollars);
	sqlite3_bind_int(stmt, 7, t->budget_turns);
	sqlite3_bind_int(stmt, 8, t->budget_seconds);
	store_bind_text(stmt, 9, t->schedule != NULL ? t->schedule : "queued");
	sqlite3_bind_int(stmt, 10, t->enabled ? 1 : 0);
	sqlite3_bind_int(stmt, 13, t->limit_processes);
	sqlite3_bind_int(stmt, 14, t->limit_memory_mb);
}

int
store_task_add(struct store *st, const struct store_task *t, int64_t *id)
{
	sqlite3_stmt	*stmt;
	char		 now[STORE_TIME_LEN];

	if (t->name == NULL || t->prompt == NULL || t->engine == NULL)
		return store_fail(st, EINVAL, "task add: name, prompt and engine are "
		    "required");
	if (store_prepare(st, "INSERT INTO tasks (name, repo, prompt, engine,"
	    " permission_mode, budget_dollars, budget_turns, budget_seconds, schedule,"
	    " enabled, created_at, updated_at, limit_processes, limit_memory_mb)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?11, ?13, ?14)", &stmt,
	    "task add") == -1)
		return -1;
	store_now(now, sizeof now);
	store_task_bind(stmt, t);
	store_bind_text(stmt, 11, now);
	if (store_step_done(st, stmt, "task add") == -1)
		return -1;
	if (id != NULL)
		*id = sqlite3_last_insert_rowid(st->db);
	return 0;
}

int
store_task_update(struct store *st, const struct store_task *t)
{
	sqlite3_stmt	*stmt;
	char		 now[STORE_TIME_LEN];

	if (t->name == NULL || t->prompt == NULL || t->engine == NULL)
		return store_fail(st, EINVAL, "task update: name, prompt and engine "
		    "are required");
	if (store_prepare(st, "UPDATE tasks SET name = ?1, repo = ?2, prompt = ?3,"
	    " engine = ?4, permission_mode = ?5, budget_dollars = ?6,"
	    " budget_turns = ?7, budget_seconds = ?8, schedule = ?9, enabled = ?10,"
	    " updated_at = ?11, limit_processes = ?13, limit_memory_mb = ?14"
	    " WHERE id = ?12", &stmt, "task update") == -1)
		return -1;
	store_now(now, sizeof now);
	store_task_bind(stmt, t);
	store_bind_text(stmt, 11, now);
	sqlite3_bind_int64(stmt, 12, t->id);
	if (store_step_done(st, stmt, "task update") == -1)
		return -1;
	if (sqlite3_changes(st->db) == 0)
		return store_fail(st, ENOENT, "task %lld: no such task",
		    (long long)t->id);
	return 0;
}

int
store_task_get(struct store *st, int64_t id, struct store_task *out)
{
	sqlite3_stmt	*stmt;

	if (store_prepare(st, "SELECT " TASK_COLUMNS " FROM tasks WHERE id = ?1",
	    &stmt, "task get") == -1)
		return -1;
	sqlite3_bind_int64(stmt, 1, id);
	return store_get_one(st, stmt, sizeof *out, store_task_row,
	    store_task_free_v, out, "task get");
}

int
store_task_get_by_name(struct store *st, const char *name, struct store_task *out)
{
	sqlite3_stmt	*stmt;

	if (store_prepare(st, "SELECT " TASK_COLUMNS " FROM tasks WHERE name = ?1",
	    &stmt, "task get") == -1)
		return -1;
	store_bind_text(stmt, 1, name);
	return store_get_one(st, stmt, sizeof *out, store_task_row,
	    store_task_free_v, out, "task get");
}

int
store_task_list(struct store *st, struct store_task **out, size_t *n)
{
	sqlite3_stmt	*stmt;

	if (store_prepare(st, "SELECT " TASK_COLUMNS " FROM tasks ORDER BY name",
	    &stmt, "task list") == -1)
		return -1;
	return store_collect(st, stmt, sizeof **out, store_task_row,
	    store_task_free_v, (void **)out, n, "task list");
}

int
store_task_set_enabled(struct store *st, int64_t id, int enabled)
{
	sqlite3_stmt	*stmt;
	char		 now[STORE_TIME_LEN];

	if (store_prepare(st, "UPDATE tasks SET enabled = ?1, updated_at = ?2"
	    " WHERE id = ?3", &stmt, "task enable") == -1)
		return -1;
	store_now(now, sizeof now);
	sqlite3_bind_int(stmt, 1, enabled ? 1 : 0);
	store_bind_text(stmt, 2, now);
	sqlite3_bind_int64(stmt, 3, id);
	if (store_step_done(st, stmt, "task enable") == -1)
		return -1;
	if (sqlite3_changes(st->db) == 0)
		return store_fail(st, ENOENT, "task %lld: no such task", (long long)id);
	return 0;
}

/*
 * The check and the delete share one write transaction, so a run queued between
 * them cannot slip through; the schema's trigger would stop it anyway. Inside a
 * caller's store_begin() it nests as a savepoint.
 */
int
store_task_remove(struct store *st, int64_t id)
{
	sqlite3_stmt	*stmt;
	int		 rc, e, outer;

	outer = !sqlite3_get_autocommit(st->db);
	if (store_exec(st, outer ? "SAVEPOINT task_remove" : "BEGIN IMMEDIATE",
	    "task remove") == -1)
		return -1;
	if (store_prepare(st, "SELECT (SELECT count(*) FROM tasks WHERE id = ?1),"
	    " (SELECT count(*) FROM runs WHERE task_id = ?1 AND status IN"
	    " ('queued', 'starting', 'running'))", &stmt, "task remove") == -1)
		goto fail;
	sqlite3_bind_int64(stmt, 1, id);
	if (sqlite3_step(stmt) != SQLITE_ROW) {
		store_sqlfail(st, stmt, "task remove");
		goto fail;
	}
	if (sqlite3_column_int(stmt, 0) == 0) {
		sqlite3_finalize(stmt);
		store_fail(st, ENOENT, "task %lld: no such task", (long long)id);
		goto fail;
	}
	if ((rc = sqlite3_column_int(stmt, 1)) > 0) {
		sqlite3_finalize(stmt);
		store_fail(st, EBUSY, "task %lld: has %d active run%s; stop %s first",
		    (long long)id, rc, rc == 1 ? "" : "s", rc == 1 ? "it" : "them");
		goto fail;
	}
	sqlite3_finalize(stmt);
	if (store_prepare(st, "DELETE FROM tasks WHERE id = ?1", &stmt,
	    "task remove") == -1)
		goto fail;
	sqlite3_bind_int64(stmt, 1, id);
	if (store_step_done(st, stmt, "task remove") == -1)
		goto fail;
	if (store_exec(st, outer ? "RELEASE task_remove" : "COMMIT",
	    "task remove") == -1)
		goto fail;
	return 0;
fail:
	e = errno;
	if (outer)
		sqlite3_exec(st->db, "ROLLBACK TO task_remove; RELEASE task_remove",
		    NULL, NULL, NULL);
	else
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	errno = e;
	return -1;
}

/* ---- runs ------------------------------------------------------------------------- */

#define RUN_COLUMNS \
	"r.id, r.task_id, t.name, r.status, r.exit_reason, r.worktree, r.branch," \
	" r.base_commit, r.final_commit, r.runner_pid, r.runner_pgid," \
	" r.runner_start_time, r.sandboxed, r.spent_dollars, r.spent_turns," \
	" r.spent_seconds, r.report, r.log_path, r.exported, r.created_at," \
	" r.started_at, r.ended_at"
#define RUN_FROM	" FROM runs r JOIN tasks t ON t.id = r.task_id"

static int
store_run_row(sqlite3_stmt *stmt, void *p)
{
	struct store_run	*r = p;
	int			 s;

	r->task_id = sqlite3_column_int64(stmt, 1);
	if ((s = store_run_status_parse((const char *)
	    sqlite3_column_text(stmt, 3))) == -1)
		return EIO;
	r->status = s;
	r->exit_reason = store_exit_reason_parse((const char *)
	    sqlite3_column_text(stmt, 4));
	r->runner_pid = sqlite3_column_int64(stmt, 9);
	r->runner_pgid = sqlite3_column_int64(stmt, 10);
	r->runner_start_time = sqlite3_column_int64(stmt, 11);
	if (sqlite3_column_type(stmt, 12) == SQLITE_NULL)
		r->sandboxed = -1;
	else
		r->sandboxed = sqlite3_column_int(stmt, 12);
	r->spent_dollars = sqlite3_column_double(stmt, 13);
	r->spent_turns = sqlite3_column_int(stmt, 14);
	r->spent_seconds = sqlite3_column_double(stmt, 15);
	r->exported = sqlite3_column_int(stmt, 18);
	if (store_col_text(stmt, 0, &r->id) ||
	    store_col_text(stmt, 2, &r->task_name) ||
	    store_col_text(stmt, 5, &r->worktree) ||
	    store_col_text(stmt, 6, &r->branch) ||
	    store_col_text(stmt, 7, &r->base_commit) ||
	    store_col_text(stmt, 8, &r->final_commit) ||
	    store_col_text(stmt, 16, &r->report) ||
	    store_col_text(stmt, 17, &r->log_path) ||
	    store_col_text(stmt, 19, &r->created_at) ||
	    store_col_text(stmt, 20, &r->started_at) ||
	    store_col_text(stmt, 21, &r->ended_at))
		return ENOMEM;
	return 0;
}

void
store_run_free(struct store_run *r)
{
	if (r == NULL)
		return;
	free(r->id);
	free(r->task_name);
	free(r->worktree);
	free(r->branch);
	free(r->base_commit);
	free(r->final_commit);
	free(r->report);
	free(r->log_path);
	free(r->created_at);
	free(r->started_at);
	free(r->ended_at);
	memset(r, 0, sizeof *r);
}

static void
store_run_free_v(void *p)
{
	store_run_free(p);
}

void
store_run_list_free(struct store_run *v, size_t n)
{
	for (size_t i = 0; v != NULL && i < n; i++)
		store_run_free(&v[i]);
	free(v);
}

/*
 * A run id becomes a directory name and part of a branch name: letters, digits,
 * '.', '_' and '-' only, not starting with '.' or '-', no "..", and short.
 */
static int
store_run_id_valid(const char *id)
{
	size_t	len = strlen(id);

	if (len == 0 || len >= STORE_ID_LEN || id[0] == '.' || id[0] == '-' ||
	    strstr(id, "..") != NULL)
		return 0;
	for (const char *p = id; *p != '\0'; p++)
		if (strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		    "0123456789._-", *p) == NULL)
			return 0;
	return 1;
}

int
store_run_create(struct store *st, int64_t task_id, const char *id, char *id_out,
    size_t id_outlen)
{
	sqlite3_stmt	*stmt;
	char		 now[STORE_TIME_LEN], made[STORE_ID_LEN];

	if (id == NULL || *id == '\0') {
		if (store_make_run_id(made, sizeof made) == -1)
			return store_fail(st, EIO, "run create: cannot make an id");
		id = made;
	}
	if (!store_run_id_valid(id))
		return store_fail(st, EINVAL, "run create: bad run id \"%.64s\"", id);
	if (id_out != NULL && strlen(id) >= id_outlen)
		return store_fail(st, EINVAL, "run create: id buffer too small");
	if (store_prepare(st, "INSERT INTO runs (id, task_id, status, created_at)"
	    " VALUES (?1, ?2, 'queued', ?3)", &stmt, "run create") == -1)
		return -1;
	store_now(now, sizeof now);
	store_bind_text(stmt, 1, id);
	sqlite3_bind_int64(stmt, 2, task_id);
	store_bind_text(stmt, 3, now);
	if (store_step_done(st, stmt, "run create") == -1)
		return -1;
	if (id_out != NULL)
		memcpy(id_out, id, strlen(id) + 1);
	return 0;
}

int
store_run_get(struct store *st, const char *id, struct store_run *out)
{
	sqlite3_stmt	*stmt;

	if (store_prepare(st, "SELECT " RUN_COLUMNS RUN_FROM " WHERE r.id = ?1",
	    &stmt, "run get") == -1)
		return -1;
	store_bind_text(stmt, 1, id);
	return store_get_one(st, stmt, sizeof *out, store_run_row,
	    store_run_free_v, out, "run get");
}

int
store_run_list(struct store *st, int64_t task_id, int status, size_t limit,
    struct store_run **out, size_t *n)
{
	sqlite3_stmt	*stmt;

	if (status != STORE_RUN_ANY && store_run_status_name(status) == NULL)
		return store_fail(st, EINVAL, "run list: bad status %d", status);
	if (store_prepare(st, "SELECT " RUN_COLUMNS RUN_FROM
	    " WHERE (?1 = 0 OR r.task_id = ?1) AND (?2 IS NULL OR r.status = ?2)"
	    " ORDER BY r.created_at DESC, r.rowid DESC LIMIT ?3", &stmt,
	    "run list") == -1)
		return -1;
	sqlite3_bind_int64(stmt, 1, task_id);
	store_bind_text(stmt, 2, status == STORE_RUN_ANY ? NULL :
	    store_run_status_name(status));
	sqlite3_bind_int64(stmt, 3, store_limit(limit));
	return store_collect(st, stmt, sizeof **out, store_run_row,
	    store_run_free_v, (void **)out, n, "run list");
}

int
store_run_list_unfinished(struct store *st, struct store_run **out, size_t *n)
{
	sqlite3_stmt	*stmt;

	if (store_prepare(st, "SELECT " RUN_COLUMNS RUN_FROM
	    " WHERE r.status IN ('queued', 'starting', 'running')"
	    " ORDER BY r.created_at, r.rowid", &stmt, "run list unfinished") == -1)
		return -1;
	return store_collect(st, stmt, sizeof **out, store_run_row,
	    store_run_free_v, (void **)out, n, "run list unfinished");
}

/* After an UPDATE ... WHERE id = ? that changed nothing: was the row there? */
static int
store_exists(struct store *st, const char *sql, const char *id, const char *what)
{
	sqlite3_stmt	*stmt;
	int		 rc;

	if (store_prepare(st, sql, &stmt, what) == -1)
		return -1;
	store_bind_text(stmt, 1, id);
	rc = sqlite3_step(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_sqlfail(st, stmt, what);
	sqlite3_finalize(stmt);
	return rc == SQLITE_ROW;
}

static int
store_run_missing(struct store *st, const char *id, const char *what)
{
	int	rc;

	rc = store_exists(st, "SELECT 1 FROM runs WHERE id = ?1", id, what);
	if (rc == -1)
		return -1;
	if (rc == 0)
		return store_fail(st, ENOENT, "run %s: no such run", id);
	return 0;
}

int
store_run_set_status(struct store *st, const char *id, enum store_run_status status,
    enum store_exit_reason reason)
{
	sqlite3_stmt	*stmt;
	char		 now[STORE_TIME_LEN];

	if (store_run_status_name(status) == NULL ||
	    (reason != STORE_EXIT_NONE && store_exit_reason_name(reason) == NULL))
		return store_fail(st, EINVAL, "run %s: bad status %d or exit reason %d",
		    id, (int)status, (int)reason);
	if (store_prepare(st, "UPDATE runs SET status = ?1, exit_reason = ?2,"
	    " started_at = CASE WHEN started_at IS NULL AND ?1 IN ('starting',"
	    "  'running') THEN ?3 ELSE started_at END,"
	    " ended_at = CASE WHEN ?4 THEN ?3 ELSE ended_at END"
	    " WHERE id = ?5 AND status IN ('queued', 'starting', 'running')", &stmt,
	    "run status") == -1)
		return -1;
	store_now(now, sizeof now);
	store_bind_text(stmt, 1, store_run_status_name(status));
	store_bind_text(stmt, 2, store_exit_reason_name(reason));
	store_bind_text(stmt, 3, now);
	sqlite3_bind_int(stmt, 4, store_run_status_terminal(status));
	store_bind_text(stmt, 5, id);
	if (store_step_done(st, stmt, "run status") == -1)
		return -1;
	if (sqlite3_changes(st->db) == 1)
		return 1;
	return store_run_missing(st, id, "run status");
}

/* Finish a one-row UPDATE of runs: ENOENT when it matched nothing. */
static int
store_run_update(struct store *st, sqlite3_stmt *stmt, const char *id,
    const char *what)
{
	if (store_step_done(st, stmt, what) == -1)
		return -1;
	if (sqlite3_changes(st->db) == 0)
		return store_fail(st, ENOENT, "run %s: no such run", id);
	return 0;
}

int
store_run_set_report(struct store *st, const char *id, const char *report_json)
{
	sqlite3_stmt	*stmt;

	if (store_prepare(st, "UPDATE runs SET report = ?1 WHERE id = ?2", &stmt,
	    "run report") == -1)
		return -1;
	store_bind_text(stmt, 1, report_json);
	store_bind_text(stmt, 2, id);
	return store_run_update(st, stmt, id, "run report");
}

int
store_run_set_spent(struct store *st, const char *id, double dollars, int turns,
    double seconds)
{
	sqlite3_stmt	*stmt;

	if (store_prepare(st, "UPDATE runs SET spent_dollars = ?1, spent_turns = ?2,"
	    " spent_seconds = ?3 WHERE id = ?4", &stmt, "run spent") == -1)
		return -1;
	sqlite3_bind_double(stmt, 1, dollars);
	sqlite3_bind_int(stmt, 2, turns);
	sqlite3_bind_double(stmt, 3, seconds);
	store_bind_text(stmt, 4, id);
	return store_run_update(st, stmt, id, "run spent");
}

int
store_run_set_git(struct store *st, const char *id, const char *worktree,
    const char *branch, const char *base_commit, const char *final_commit)
{
	sqlite3_stmt	*stmt;

	if (store_prepare(st, "UPDATE runs SET worktree = coalesce(?1, worktree),"
	    " branch = coalesce(?2, branch), base_commit = coalesce(?3, base_commit),"
	    " final_commit = coalesce(?4, final_commit) WHERE id = ?5", &stmt,
	    "run git") == -1)
		return -1;
	store_bind_text(stmt, 1, worktree);
	store_bind_text(stmt, 2, branch);
	store_bind_text(stmt, 3, base_commit);
	store_bind_text(stmt, 4, final_commit);
	store_bind_text(stmt, 5, id);
	return store_run_update(st, stmt, id, "run git");
}

int
store_run_set_runner(struct store *st, const char *id, int64_t pid, int64_t pgid,
    int64_t start_time, int sandboxed)
{
	sqlite3_stmt	*stmt;

	if (store_prepare(st, "UPDATE runs SET runner_pid = ?1, runner_pgid = ?2,"
	    " runner_start_time = ?3, sandboxed = ?4 WHERE id = ?5", &stmt,
	    "run runner") == -1)
		return -1;
	sqlite3_bind_int64(stmt, 1, pid);
	sqlite3_bind_int64(stmt, 2, pgid);
	sqlite3_bind_int64(stmt, 3, start_time);
	if (sandboxed < 0)
		sqlite3_bind_null(stmt, 4);
	else
		sqlite3_bind_int(stmt, 4, sandboxed ? 1 : 0);
	store_bind_text(stmt, 5, id);
	return store_run_update(st, stmt, id, "run runner");
}

int
store_run_set_log_path(struct store *st, const char *id, const char *path)
{
	sqlite3_stmt	*stmt;

	if (store_prepare(st, "UPDATE runs SET log_path = ?1 WHERE id = ?2", &stmt,
	    "run log path") == -1)
		return -1;
	store_bind_text(stmt, 1, path);
	store_bind_text(stmt, 2, id);
	return store_run_update(st, stmt, id, "run log path");
}

int
store_run_add_export(struct store *st, const char *id)
{
	sqlite3_stmt	*stmt;

	if (store_prepare(st, "UPDATE runs SET exported = exported + 1 WHERE id = ?1",
	    &stmt, "run export") == -1)
		return -1;
	store_bind_text(stmt, 1, id);
	return store_run_update(st, stmt, id, "run export");
}

/* ---- run events ----------------------------------------------------------------- */

static int
store_run_event_row(sqlite3_stmt *stmt, void *p)
{
	struct store_run_event	*ev = p;

	ev->id = sqlite3_column_int64(stmt, 0);
	if (store_col_text(stmt, 1, &ev->run_id) || store_col_text(stmt, 2, &ev->ts) ||
	    store_col_text(stmt, 3, &ev->kind) || store_col_text(stmt, 4, &ev->data))
		return ENOMEM;
	return 0;
}

void
store_run_event_free(struct store_run_event *ev)
{
	if (ev == NULL)
		return;
	free(ev->run_id);
	free(ev->ts);
	free(ev->kind);
	free(ev->data);
	memset(ev, 0, sizeof *ev);
}

static void
store_run_event_free_v(void *p)
{
	store_run_event_free(p);
}

void
store_run_event_list_free(struct store_run_event *v, size_t n)
{
	for (size_t i = 0; v != NULL && i < n; i++)
		store_run_event_free(&v[i]);
	free(v);
}

int
store_run_event_append(struct store *st, const char *run_id, const char *kind,
    const char *data_json, int64_t *id)
{
	sqlite3_stmt	*stmt;
	char		 now[STORE_TIME_LEN];

	if (store_prepare(st, "INSERT INTO run_events (run_id, ts, kind, data)"
	    " VALUES (?1, ?2, ?3, ?4)", &stmt, "run event") == -1)
		return -1;
	store_now(now, sizeof now);
	store_bind_text(stmt, 1, run_id);
	store_bind_text(stmt, 2, now);
	store_bind_text(stmt, 3, kind);
	store_bind_text(stmt, 4, data_json);
	if (store_step_done(st, stmt, "run event") == -1)
		return -1;
	if (id != NULL)
		*id = sqlite3_last_insert_rowid(st->db);
	return 0;
}

int
store_run_event_list(struct store *st, const char *run_id, int64_t since_id,
    size_t limit, struct store_run_event **out, size_t *n)
{
	sqlite3_stmt	*stmt;

	if (store_prepare(st, "SELECT id, run_id, ts, kind, data FROM run_events"
	    " WHERE run_id = ?1 AND id > ?2 ORDER BY id LIMIT ?3", &stmt,
	    "run event list") == -1)
		return -1;
	store_bind_text(stmt, 1, run_id);
	sqlite3_bind_int64(stmt, 2, since_id);
	sqlite3_bind_int64(stmt, 3, store_limit(limit));
	return store_collect(st, stmt, sizeof **out, store_run_event_row,
	    store_run_event_free_v, (void **)out, n, "run event list");
}

/* ---- approvals ------------------------------------------------------------------ */

#define APPROVAL_COLUMNS \
	"id, run_id, tool, input, state, message, answered_by, created_at," \
	" deadline, answered_at"

static int
store_approval_row(sqlite3_stmt *stmt, void *p)
{
	struct store_approval	*a = p;
	int			 s;

	if ((s = store_approval_state_parse((const char *)
	    sqlite3_column_text(stmt, 4))) == -1)
		return EIO;
	a->state = s;
	if (store_col_text(stmt, 0, &a->id) || store_col_text(stmt, 1, &a->run_id) ||
	    store_col_text(stmt, 2, &a->tool) || store_col_text(stmt, 3, &a->input) ||
	    store_col_text(stmt, 5, &a->message) ||
	    store_col_text(stmt, 6, &a->answered_by) ||
	    store_col_text(stmt, 7, &a->created_at) ||
	    store_col_text(stmt, 8, &a->deadline) ||
	    store_col_text(stmt, 9, &a->answered_at))
		return ENOMEM;
	return 0;
}

void
store_approval_free(struct store_approval *a)
{
	if (a == NULL)
		return;
	free(a->id);
	free(a->run_id);
	free(a->tool);
	free(a->input);
	free(a->message);
	free(a->answered_by);
	free(a->created_at);
	free(a->deadline);
	free(a->answered_at);
	memset(a, 0, sizeof *a);
}

static void
store_approval_free_v(void *p)
{
	store_approval_free(p);
}

void
store_approval_list_free(struct store_approval *v, size_t n)
{
	for (size_t i = 0; v != NULL && i < n; i++)
		store_approval_free(&v[i]);
	free(v);
}

int
store_approval_create(struct store *st, const char *id, const char *run_id,
    const char *tool, const char *input_json, int64_t deadline_ms)
{
	sqlite3_stmt	*stmt;
	char		 now[STORE_TIME_LEN], deadline[STORE_TIME_LEN];

	if (id == NULL || *id == '\0')
		return store_fail(st, EINVAL, "approval create: an id is required");
	if (store_prepare(st, "INSERT INTO approvals (id, run_id, tool, input, state,"
	    " created_at, deadline) VALUES (?1, ?2, ?3, ?4, 'pending', ?5, ?6)", &stmt,
	    "approval create") == -1)
		return -1;
	store_now(now, sizeof now);
	store_bind_text(stmt, 1, id);
	store_bind_text(stmt, 2, run_id);
	store_bind_text(stmt, 3, tool);
	store_bind_text(stmt, 4, input_json);
	store_bind_text(stmt, 5, now);
	if (deadline_ms > 0) {
		store_format_time(deadline_ms, deadline, sizeof deadline);
		store_bind_text(stmt, 6, deadline);
	} else
		sqlite3_bind_null(stmt, 6);
	return store_step_done(st, stmt, "approval create");
}

int
store_approval_get(struct store *st, const char *id, struct store_approval *out)
{
	sqlite3_stmt	*stmt;

	if (store_prepare(st, "SELECT " APPROVAL_COLUMNS " FROM approvals"
	    " WHERE id = ?1", &stmt, "approval get") == -1)
		return -1;
	store_bind_text(stmt, 1, id);
	return store_get_one(st, stmt, sizeof *out, store_approval_row,
	    store_approval_free_v, out, "approval get");
}

/*
 * The compare-and-set: the WHERE clause, not a read before the write, decides who
 * answers. Two channels answering at once both run this UPDATE; sqlite serialises
 * them and exactly one sees a changed row.
 */
int
store_approval_answer(struct store *st, const char *id,
    enum store_approval_state new_state, const char *message,
    const char *answered_by)
{
	sqlite3_stmt	*stmt;
	char		 now[STORE_TIME_LEN];
	int		 rc;

	if (new_state == STORE_APPROVAL_PENDING ||
	    store_approval_state_name(new_state) == NULL)
		return store_fail(st, EINVAL, "approval %s: cannot answer with state %d",
		    id, (int)new_state);
	if (store_prepare(st, "UPDATE approvals SET state = ?1, message = ?2,"
	    " answered_by = ?3, answered_at = ?4 WHERE id = ?5 AND state = 'pending'",
	    &stmt, "approval answer") == -1)
		return -1;
	store_now(now, sizeof now);
	store_bind_text(stmt, 1, store_approval_state_name(new_state));
	store_bind_text(stmt, 2, message);
	store_bind_text(stmt, 3, answered_by);
	store_bind_text(stmt, 4, now);
	store_bind_text(stmt, 5, id);
	if (store_step_done(st, stmt, "approval answer") == -1)
		return -1;
	if (sqlite3_changes(st->db) == 1)
		return 1;
	rc = store_exists(st, "SELECT 1 FROM approvals WHERE id = ?1", id,
	    "approval answer");
	if (rc == -1)
		return -1;
	if (rc == 0)
		return store_fail(st, ENOENT, "approval %s: no such approval", id);
	return 0;
}

int
store_approval_expire_run(struct store *st, const char *run_id)
{
	sqlite3_stmt	*stmt;
	char		 now[STORE_TIME_LEN];

	if (store_prepare(st, "UPDATE approvals SET state = 'expired',"
	    " answered_by = 'clockworkd', answered_at = ?1"
	    " WHERE run_id = ?2 AND state = 'pending'", &stmt,
	    "approval expire") == -1)
		return -1;
	store_now(now, sizeof now);
	store_bind_text(stmt, 1, now);
	store_bind_text(stmt, 2, run_id);
	if (store_step_done(st, stmt, "approval expire") == -1)
		return -1;
	return sqlite3_changes(st->db);
}

int
store_approval_list_pending(struct store *st, const char *run_id,
    struct store_approval **out, size_t *n)
{
	sqlite3_stmt	*stmt;

	if (store_prepare(st, "SELECT " APPROVAL_COLUMNS " FROM approvals"
	    " WHERE state = 'pending' AND (?1 IS NULL OR run_id = ?1)"
	    " ORDER BY created_at, rowid", &stmt, "approval list") == -1)
		return -1;
	store_bind_text(stmt, 1, run_id);
	return store_collect(st, stmt, sizeof **out, store_approval_row,
	    store_approval_free_v, (void **)out, n, "approval list");
}

/* ---- journal ------------------------------------------------------------------- */

static int
store_journal_row(sqlite3_stmt *stmt, void *p)
{
	struct store_journal_entry	*j = p;

	j->id = sqlite3_column_int64(stmt, 0);
	if (store_col_text(stmt, 1, &j->ts) || store_col_text(stmt, 2, &j->run_id) ||
	    store_col_text(stmt, 3, &j->kind) || store_col_text(stmt, 4, &j->data))
		return ENOMEM;
	return 0;
}

void
store_journal_entry_free(struct store_journal_entry *j)
{
	if (j == NULL)
		return;
	free(j->ts);
	free(j->run_id);
	free(j->kind);
	free(j->data);
	memset(j, 0, sizeof *j);
}

static void
store_journal_entry_free_v(void *p)
{
	store_journal_entry_free(p);
}

void
store_journal_list_free(struct store_journal_entry *v, size_t n)
{
	for (size_t i = 0; v != NULL && i < n; i++)
		store_journal_entry_free(&v[i]);
	free(v);
}

int
store_journal_append(struct store *st, const char *run_id, const char *kind,
    const char *data_json)
{
	sqlite3_stmt	*stmt;
	char		 now[STORE_TIME_LEN];

	if (store_prepare(st, "INSERT INTO journal (ts, run_id, kind, data)"
	    " VALUES (?1, ?2, ?3, ?4)", &stmt, "journal append") == -1)
		return -1;
	store_now(now, sizeof now);
	store_bind_text(stmt, 1, now);
	store_bind_text(stmt, 2, run_id);
	store_bind_text(stmt, 3, kind);
	store_bind_text(stmt, 4, data_json);
	return store_step_done(st, stmt, "journal append");
}

int
store_journal_list(struct store *st, const char *run_id, int64_t since_id,
    size_t limit, struct store_journal_entry **out, size_t *n)
{
	sqlite3_stmt	*stmt;

	if (store_prepare(st, "SELECT id, ts, run_id, kind, data FROM journal"
	    " WHERE (?1 IS NULL OR run_id = ?1) AND id > ?2 ORDER BY id LIMIT ?3",
	    &stmt, "journal list") == -1)
		return -1;
	store_bind_text(stmt, 1, run_id);
	sqlite3_bind_int64(stmt, 2, since_id);
	sqlite3_bind_int64(stmt, 3, store_limit(limit));
	return store_collect(st, stmt, sizeof **out, store_journal_row,
	    store_journal_entry_free_v, (void **)out, n, "journal list");
}

/* ---- audit log ------------------------------------------------------------------- */

static int
store_audit_row(sqlite3_stmt *stmt, void *p)
{
	struct store_audit_entry	*a = p;

	a->id = sqlite3_column_int64(stmt, 0);
	if (store_col_text(stmt, 1, &a->ts) || store_col_text(stmt, 2, &a->actor) ||
	    store_col_text(stmt, 3, &a->action) ||
	    store_col_text(stmt, 4, &a->target) || store_col_text(stmt, 5, &a->data))
		return ENOMEM;
	return 0;
}

void
store_audit_entry_free(struct store_audit_entry *a)
{
	if (a == NULL)
		return;
	free(a->ts);
	free(a->actor);
	free(a->action);
	free(a->target);
	free(a->data);
	memset(a, 0, sizeof *a);
}

static void
store_audit_entry_free_v(void *p)
{
	store_audit_entry_free(p);
}

void
store_audit_list_free(struct store_audit_entry *v, size_t n)
{
	for (size_t i = 0; v != NULL && i < n; i++)
		store_audit_entry_free(&v[i]);
	free(v);
}

int
store_audit_append(struct store *st, const char *actor, const char *action,
    const char *target, const char *data_json)
{
	sqlite3_stmt	*stmt;
	char		 now[STORE_TIME_LEN];

	if (store_prepare(st, "INSERT INTO audit (ts, actor, action, target, data)"
	    " VALUES (?1, ?2, ?3, ?4, ?5)", &stmt, "audit append") == -1)
		return -1;
	store_now(now, sizeof now);
	store_bind_text(stmt, 1, now);
	store_bind_text(stmt, 2, actor);
	store_bind_text(stmt, 3, action);
	store_bind_text(stmt, 4, target);
	store_bind_text(stmt, 5, data_json);
	return store_step_done(st, stmt, "audit append");
}

int
store_audit_list(struct store *st, int64_t since_id, size_t limit,
    struct store_audit_entry **out, size_t *n)
{
	sqlite3_stmt	*stmt;

	if (store_prepare(st, "SELECT id, ts, actor, action, target, data FROM audit"
	    " WHERE id > ?1 ORDER BY id LIMIT ?2", &stmt, "audit list") == -1)
		return -1;
	sqlite3_bind_int64(stmt, 1, since_id);
	sqlite3_bind_int64(stmt, 2, store_limit(limit));
	return store_collect(st, stmt, sizeof **out, store_audit_row,
	    store_audit_entry_free_v, (void **)out, n, "audit list");
}
