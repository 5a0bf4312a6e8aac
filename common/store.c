/*
 * The sqlite3 store: opening, migrations, and the statement helpers its table files
 * share (store_impl.h); one file a table: store_task.c, store_run.c (and run events),
 * store_approval.c, store_journal.c (and the audit log). Every statement is prepared
 * with its values bound; nothing here builds SQL from data. Errors land in the handle's message buffer and errno,
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

#include "clock.h"
#include "json.h"
#include "store.h"
#include "store_impl.h"

#define STORE_BUSY_TIMEOUT_MS	5000


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

int
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
int
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
	store_format_time(clock_wall_ms(), buf, len);
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
int
store_make_run_id(char *buf, size_t len)
{
	struct tm	tm;
	uint32_t	rnd;
	time_t		t;
	int		n;

	if (store_random(&rnd, sizeof rnd) == -1)
		return -1;
	t = (time_t)(clock_wall_ms() / 1000);
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

int
store_prepare(struct store *st, const char *sql, sqlite3_stmt **stmt,
    const char *what)
{
	*stmt = NULL;
	if (sqlite3_prepare_v2(st->db, sql, -1, stmt, NULL) != SQLITE_OK)
		return store_sqlfail(st, *stmt, what);
	return 0;
}

/* Bind a string, or SQL NULL for a NULL pointer. The string outlives the step. */
int
store_bind_text(sqlite3_stmt *stmt, int idx, const char *s)
{
	if (s == NULL)
		return sqlite3_bind_null(stmt, idx);
	return sqlite3_bind_text(stmt, idx, s, -1, SQLITE_STATIC);
}

/* Copy a text column; NULL stays NULL. 0 or ENOMEM. */
int
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
int
store_step_done(struct store *st, sqlite3_stmt *stmt, const char *what)
{
	if (sqlite3_step(stmt) != SQLITE_DONE)
		return store_sqlfail(st, stmt, what);
	sqlite3_finalize(stmt);
	return 0;
}

int
store_exec(struct store *st, const char *sql, const char *what)
{
	if (sqlite3_exec(st->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return store_sqlfail(st, NULL, what);
	return 0;
}

/* Step a lookup of at most one row into out: 1 found, 0 none, -1 error. */
int
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
int
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
sqlite3_int64
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
/*
 * The version a store must be at for m to apply: the migration before it in the
 * table (0 for the first). Numbers are handed out to parallel branches, so a branch
 * may carry 13 before 12 has landed; the order of the table is what holds.
 */
static int
store_migration_before(const struct store_migration *m)
{
	int	prev = 0;

	for (size_t i = 0; i < store_n_migrations && &store_migrations[i] != m; i++)
		prev = store_migrations[i].version;
	return prev;
}

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
	if (cur != store_migration_before(m)) {
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

/* cw_mask_json(text): a stored record's JSON, secret-masked (json_mask_text). */
static void
store_sql_mask_json(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const unsigned char	*t;
	char			*m;

	(void)argc;
	if ((t = sqlite3_value_text(argv[0])) == NULL) {
		sqlite3_result_null(ctx);
		return;
	}
	if ((m = json_mask_text((const char *)t)) == NULL) {
		sqlite3_result_error_nomem(ctx);
		return;
	}
	sqlite3_result_text(ctx, m, -1, free);
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
	/* For migration 17, which masks what an older daemon stored raw. */
	if (sqlite3_create_function_v2(st->db, "cw_mask_json", 1, SQLITE_UTF8 |
	    SQLITE_DETERMINISTIC, NULL, store_sql_mask_json, NULL, NULL, NULL) != SQLITE_OK) {
		store_sqlfail(st, NULL, path);
		goto fail;
	}
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
