/*
 * The store's insides, shared by its files (store.c: opening, migrations and the
 * statement helpers; store_task.c, store_run.c, store_approval.c, store_journal.c:
 * one table each). Nothing outside common/store*.c includes this.
 */
#ifndef CW_STORE_IMPL_H
#define CW_STORE_IMPL_H
#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "store.h"

struct store {
	sqlite3	*db;
	char	*path;
	char	 err[512];
};

/* Row readers fill one row from the current statement: 0, or an errno value. */
typedef int	(*store_row_fn)(sqlite3_stmt *, void *);
typedef void	(*store_free_fn)(void *);

/* Fill st's message and errno; -1. */
int	store_fail(struct store *, int e, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));
/* sqlite's error for what (finalizing stmt if given); -1. */
int	store_sqlfail(struct store *, sqlite3_stmt *, const char *what);
int	store_make_run_id(char *buf, size_t len);
int	store_prepare(struct store *, const char *sql, sqlite3_stmt **, const char *what);
/* Bind a string, or SQL NULL for a NULL pointer. The string outlives the step. */
int	store_bind_text(sqlite3_stmt *, int idx, const char *s);
/* Copy a text column; NULL stays NULL. 0 or ENOMEM. */
int	store_col_text(sqlite3_stmt *, int i, char **out);
int	store_step_done(struct store *, sqlite3_stmt *, const char *what);
int	store_exec(struct store *, const char *sql, const char *what);
/* Step a lookup of at most one row into out: 1 found, 0 none, -1 error. */
int	store_get_one(struct store *, sqlite3_stmt *, size_t size, store_row_fn,
	    store_free_fn, void *out, const char *what);
/* Step every row into a new array of size-byte rows. Finalizes stmt. */
int	store_collect(struct store *, sqlite3_stmt *, size_t size, store_row_fn,
	    store_free_fn, void **out, size_t *n, const char *what);
/* A limit for SQL: 0 means none, which sqlite spells -1. */
sqlite3_int64	store_limit(size_t limit);
/* After an UPDATE ... WHERE id = ? that changed nothing: was the row there? */
int	store_exists(struct store *, const char *sql, const char *id, const char *what);

#endif
