/*
 * store_copy.h - moving house: copy a SQLite store (every table, rows
 * exactly as stored) into an empty PostgreSQL database, for
 * `intentgate store copy` (cli/cmd_store.c). Afterwards a PDP on the
 * database, with the same audit key and anchor file, serves the same
 * records and the same audit log: `audit verify --db URL` accepts it
 * with the same checkpoints.
 *
 * The source: a SQLite store of schema 5 to 7 (an older one is migrated
 * by opening it once with `intentgate serve`), read under an exclusive
 * lock held for the whole copy (PRAGMA locking_mode = EXCLUSIVE, BEGIN
 * EXCLUSIVE): a PDP that has the file open makes the copy refuse, and no
 * PDP can open it meanwhile. Nothing in it is changed.
 *
 * The target: a postgresql:// URL without a password (PGPASSWORD or
 * ~/.pgpass), created and migrated as the PDP would (store_pg_migrate),
 * then filled in ONE transaction that holds the migration lock and the
 * sequencer's lock (a PDP starting meanwhile waits; one running on it
 * makes the copy refuse), refusing a database with any row in any of
 * the store's tables. Tables are copied with COPY, each in both stores'
 * column set (a table or column the target lacks is refused: nothing is
 * dropped on the way); the tables only the target has stay empty.
 * Identity sequences are moved past the copied keys. Not thread safe (a
 * command's one thread).
 */
#ifndef STORE_COPY_H
#define STORE_COPY_H

#include <stdint.h>

#include "ig_error.h"

/* Called after each table is copied, in copy order. */
typedef void (*store_copy_fn)(void *ctx, const char *table, uint64_t rows);

/*
 * Copy the SQLite store at from into the PostgreSQL database at to.
 * IG_OK after the commit; else nothing was written to the target (but
 * the schema, when it was created) and err says why in one line:
 * IG_ERR_INVALID (from or to unusable: not a store, a schema this binary
 * cannot copy, a URL with a password, a table or column the target
 * lacks, no server), IG_ERR_EXISTS (the target holds rows, or a PDP runs
 * on it or on the source), IG_ERR_IO (a read or write failed),
 * IG_ERR_NOMEM.
 */
enum ig_status store_copy(const char *from, const char *to, store_copy_fn fn,
                          void *ctx, struct ig_err *err) IG_WUR;

#endif
