/*
 * store_util.c - the small helpers every part of the store uses, at the
 * bottom of its files (it calls none of them): opening a connection,
 * binding text (NULL as SQL NULL), reading a text or JSON column, reading
 * one audit tree node, the monotonic clock, the operator's log, the row
 * loop of the reads.
 */
#include "store_int.h"

#include <string.h>
#include <time.h>

#include "ig_json.h"
#include "ig_limits.h"
#include "ig_time.h"

/* Before SQLite's first use: no memory statistics (nobody reads them, and
   keeping them takes a process-wide mutex on every allocation, which the
   writer and the readers then contend for). Fails harmlessly when
   something else initialised SQLite first. */
static void
sqlite_setup(void)
{
    (void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    (void)sqlite3_initialize();
}

enum ig_status
store_db_open(const char *path, int flags, sqlite3 **out, struct ig_err *err)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    sqlite3 *db = NULL;

    (void)pthread_once(&once, sqlite_setup);
    if (sqlite3_open_v2(path, &db, flags | SQLITE_OPEN_NOMUTEX, NULL) !=
        SQLITE_OK) {
        (void)ig_err_set(err, IG_ERR_IO, "cannot open database %s: %s", path,
                         db != NULL ? sqlite3_errmsg(db) : "out of memory");
        sqlite3_close(db);
        return IG_ERR_IO;
    }
    (void)sqlite3_busy_timeout(db, IG_STORE_BUSY_TIMEOUT_MS);
    (void)sqlite3_extended_result_codes(db, 1);
    *out = db;
    return IG_OK;
}

void
store_sql_bind_text(sqlite3_stmt *st, int i, const char *s)
{
    if (s == NULL)
        (void)sqlite3_bind_null(st, i);
    else
        (void)sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
}

const char *
store_sql_text(sqlite3_stmt *st, int i)
{
    const unsigned char *p = sqlite3_column_text(st, i);

    return p != NULL ? (const char *)p : "";
}

json_t *
store_sql_json(sqlite3_stmt *st, int i)
{
    const char *p = store_sql_text(st, i);
    json_t *v = NULL;

    if (ig_json_parse(p, strlen(p), &v, NULL) != IG_OK)
        return NULL;
    return v;
}

/* The monotonic clock of the writer's waits and the checkpoint interval
   (core's, so a test build's test clock moves it too). */
double
store_mono(void)
{
    return ig_time_mono();
}

void
store_audit_log(struct store_sq *s, const char *level, const char *event,
                json_t *fields)
{
    if (s->opts.log != NULL)
        s->opts.log(level, event, fields);
    else
        json_decref(fields);
}

enum ig_status
store_audit_fetch_tile(sqlite3_stmt *st, unsigned level, uint64_t index,
                       unsigned char out[AUDIT_TILE_BYTES])
{
    enum ig_status rc = IG_ERR_IO;
    int step;

    if (index > (uint64_t)INT64_MAX)
        return IG_ERR_NOTFOUND;
    (void)sqlite3_bind_int(st, 1, (int)level);
    (void)sqlite3_bind_int64(st, 2, (sqlite3_int64)index);
    step = sqlite3_step(st);
    if (step == SQLITE_ROW && sqlite3_column_bytes(st, 0) == AUDIT_TILE_BYTES) {
        memcpy(out, sqlite3_column_blob(st, 0), AUDIT_TILE_BYTES);
        rc = IG_OK;
    } else if (step == SQLITE_ROW) {
        rc = IG_ERR_INVALID; /* untrusted bytes: never read past them */
    } else if (step == SQLITE_DONE) {
        rc = IG_ERR_NOTFOUND;
    }
    (void)sqlite3_reset(st);
    return rc;
}

/* Step st to its end, appending row(st) of each row to arr: the row loop
   the store's reads share. */
enum ig_status
store_sql_rows(sqlite3_stmt *st, json_t *(*row)(sqlite3_stmt *), json_t *arr)
{
    json_t *v;
    int step;

    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        v = row(st);
        /* json_array_append_new steals v. */
        if (v == NULL || json_array_append_new(arr, v) != 0)
            return IG_ERR_NOMEM;
    }
    return step == SQLITE_DONE ? IG_OK : IG_ERR_IO;
}
