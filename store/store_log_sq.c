/*
 * store_log_sq.c - a SQLite audit log database read offline, read-only
 * (store_log.h says what; store_log.c hands its calls here for a file).
 *
 * The file is opened with SQLITE_OPEN_READONLY (never _CREATE) and
 * query_only on, and read in one transaction. Two ways:
 *
 * - Nobody has it open (no -shm beside it, no -wal or -journal with
 *   content: its main file is the whole database). Then it is read as an
 *   immutable file: no locks, and SQLite creates nothing beside it - a
 *   read-only connection to a WAL database would leave an empty -wal and
 *   a -shm behind. The same when a connection cannot be opened at all (a
 *   copy in a directory this user cannot write, where SQLite cannot make
 *   the -shm a WAL database needs) and there is no WAL with content.
 *   Immutable means SQLite trusts the file not to change: a PDP that
 *   opened it meanwhile would break that, so every read that ends checks
 *   that the file is still as it was at open, with nothing beside it,
 *   and fails (IG_ERR_IO: read it again) when not.
 * - A PDP has it open: an ordinary read-only connection, which shares
 *   the PDP's -wal and -shm and sees its last commit.
 *
 * Reads are sequential scans of B-trees in key order; a memory map makes
 * them cheap.
 */
#include "store_log_be.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit_tile.h"
#include "ig_limits.h"

#define STR_(x) #x
#define STR(x) STR_(x)

struct store_log_sq {
    sqlite3 *db;
    /* store_log_sq_nodes: one tile (or a schema-3 node) by level and idx, and
       one event by seq; the tile last read, and the tree's tiles. */
    sqlite3_stmt *node, *event;
    int tiles;
    struct audit_tile_src src;
    unsigned char tile[AUDIT_TILE_BYTES];
    /* Read as an immutable file: its path and what it was at open, to
       see that nobody wrote it while it was read (changed()). */
    int immutable;
    char *path;
    struct stat at_open;
};

struct store_log_sq_cursor {
    struct store_log_sq *l;
    enum store_log_table table;
    sqlite3_stmt *q;
};

/* ---- opening ---- */

/* A SQLite URI for path opened immutable: no locks, no -shm, no -wal. */
static int
immutable_uri(const char *path, char *out, size_t cap)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n;
    const unsigned char *p;

    if (cap < 32)
        return -1;
    memcpy(out, "file:", 5);
    n = 5;
    for (p = (const unsigned char *)path; *p != '\0'; p++) {
        if (n + 4 + 12 >= cap)
            return -1;
        if (strchr("?#%", *p) != NULL || *p < 0x20 || *p >= 0x7f) {
            out[n++] = '%';
            out[n++] = hex[*p >> 4];
            out[n++] = hex[*p & 15];
        } else {
            out[n++] = (char)*p;
        }
    }
    memcpy(out + n, "?immutable=1", 13);
    return 0;
}

/* 1 when path+suffix exists and (empty_ok) is not empty; 0 when not. */
static int
beside(const char *path, const char *suffix, int empty_ok)
{
    char name[4096];
    struct stat sb;
    int n = snprintf(name, sizeof(name), "%s%s", path, suffix);

    if (n < 0 || (size_t)n >= sizeof(name))
        return 1; /* cannot tell: assume it is there */
    return stat(name, &sb) == 0 && (empty_ok || sb.st_size > 0);
}

/* 1 when path has no write-ahead log or journal with content beside it:
   then its main file alone is the whole database, and immutable mode
   reads it right. */
static int
no_wal(const char *path)
{
    return !beside(path, "-wal", 0) && !beside(path, "-journal", 0);
}

/* 1 when, besides, no connection has it open (a WAL database's open
   connections share its -shm). */
static int
quiet(const char *path)
{
    return no_wal(path) && !beside(path, "-shm", 1);
}

/* 1 when an immutable read may have seen the file change under it. */
static int
changed(const struct store_log_sq *l)
{
    struct stat sb;

    if (!l->immutable)
        return 0;
    return stat(l->path, &sb) != 0 || sb.st_ino != l->at_open.st_ino ||
           sb.st_size != l->at_open.st_size ||
           sb.st_mtim.tv_sec != l->at_open.st_mtim.tv_sec ||
           sb.st_mtim.tv_nsec != l->at_open.st_mtim.tv_nsec || !quiet(l->path);
}

/* A read that ended: st, or IG_ERR_IO when the file changed meanwhile. */
static enum ig_status
read_ended(const struct store_log_sq *l, enum ig_status st, struct ig_err *err)
{
    if ((st == IG_OK || st == IG_ERR_NOTFOUND) && changed(l))
        return ig_err_set(err, IG_ERR_IO,
                          "%s changed while it was read (a PDP opened it?): "
                          "run the command again",
                          l->path);
    return st;
}

struct sqlite3 *
store_log_sq_db(struct store_log_sq *l)
{
    return l->db;
}

enum ig_status
store_log_sq_ended(const struct store_log_sq *l, enum ig_status st,
                   struct ig_err *err)
{
    return read_ended(l, st, err);
}

/* Open read-only and start a read transaction on a table we need. */
static int
try_open(const char *name, int flags, sqlite3 **db)
{
    sqlite3_stmt *q = NULL;
    int ok;

    if (sqlite3_open_v2(name, db,
                        flags | SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX,
                        NULL) != SQLITE_OK)
        return -1;
    (void)sqlite3_busy_timeout(*db, IG_STORE_BUSY_TIMEOUT_MS);
    (void)sqlite3_exec(*db,
                       "PRAGMA query_only = 1; PRAGMA mmap_size = " STR(
                           IG_STORE_MMAP_BYTES) "; PRAGMA cache_size = -65536",
                       NULL, NULL, NULL);
    ok = sqlite3_exec(*db, "BEGIN", NULL, NULL, NULL) == SQLITE_OK &&
         sqlite3_prepare_v2(*db, "SELECT seq, event FROM audit_events LIMIT 0",
                            -1, &q, NULL) == SQLITE_OK &&
         sqlite3_step(q) == SQLITE_DONE;
    sqlite3_finalize(q);
    return ok ? 0 : -1;
}

/* Open it immutable (see the top of this file). */
static int
try_immutable(struct store_log_sq *l, const char *path)
{
    char uri[4200];

    if (immutable_uri(path, uri, sizeof(uri)) != 0 ||
        stat(path, &l->at_open) != 0)
        return -1;
    sqlite3_close(l->db);
    l->db = NULL;
    l->immutable = 1;
    return try_open(uri, SQLITE_OPEN_URI, &l->db);
}

/* Open l->db, or fail with err. */
static enum ig_status
open_db(struct store_log_sq *l, const char *path, struct ig_err *err)
{
    if (quiet(path) && try_immutable(l, path) == 0)
        return IG_OK;
    sqlite3_close(l->db);
    l->db = NULL;
    l->immutable = 0;
    if (try_open(path, 0, &l->db) == 0)
        return IG_OK;
    /* A copy in a directory this user cannot write: SQLite cannot make
       the shared-memory file a WAL database needs. Read it immutable. */
    if (sqlite3_errcode(l->db) != SQLITE_NOTADB && no_wal(path) &&
        try_immutable(l, path) == 0)
        return IG_OK;
    return ig_err_set(err, IG_ERR_INVALID,
                      "%s is not an intentgate database: %s", path,
                      l->db != NULL ? sqlite3_errmsg(l->db) : "out of memory");
}

enum ig_status
store_log_sq_open(const char *path, struct store_log_sq **out,
                  struct ig_err *err)
{
    struct store_log_sq *l;
    enum ig_status st;

    *out = NULL;
    /* Checked first so that a missing file is named as such, and so that
       SQLite is never asked to open (let alone create) it. */
    if (access(path, R_OK) != 0)
        return ig_err_set(err, IG_ERR_INVALID, "cannot open %s: %s", path,
                          strerror(errno));
    if ((l = calloc(1, sizeof(*l))) == NULL ||
        (l->path = strdup(path)) == NULL) {
        free(l);
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    }
    if ((st = open_db(l, path, err)) != IG_OK) {
        store_log_sq_close(l);
        return st;
    }
    *out = l;
    return IG_OK;
}

void
store_log_sq_close(struct store_log_sq *l)
{
    if (l == NULL)
        return;
    sqlite3_finalize(l->node);
    sqlite3_finalize(l->event);
    if (l->db != NULL)
        (void)sqlite3_exec(l->db, "COMMIT", NULL, NULL, NULL);
    sqlite3_close(l->db);
    free(l->path);
    free(l);
}

/* ---- scanning ---- */

/* A checkpoint's note with its witnesses' cosignature lines appended
   (store.h), ordered by witness name; a NULL note stays NULL. */
#define COSIGS                                                                 \
    " || coalesce((SELECT group_concat(line, '') FROM (SELECT line FROM"       \
    " cosignatures c WHERE c.size = checkpoints.size ORDER BY witness)), '')"

/* Prepare sql, or plain (when not NULL) when sql cannot be (no
   cosignatures table). */
static int
prepare_or(sqlite3 *db, const char *sql, const char *plain, sqlite3_stmt **q)
{
    int rc = sqlite3_prepare_v2(db, sql, -1, q, NULL);

    if (rc == SQLITE_OK || plain == NULL)
        return rc;
    return sqlite3_prepare_v2(db, plain, -1, q, NULL);
}

static const char *const scan_sql[] = {
    [STORE_LOG_EVENTS] = "SELECT seq, event, 0 FROM audit_events WHERE "
                         "?1 IS NULL OR instr(event, ?1) > 0 ORDER BY seq",
    [STORE_LOG_LEAF_HASHES] = "SELECT idx, hash, 0 FROM audit_nodes WHERE "
                              "level = 0 ORDER BY idx",
    [STORE_LOG_CHECKPOINTS] = "SELECT size, note" COSIGS ", created_at FROM "
                              "checkpoints ORDER BY size",
};

/* One checkpoint: [with cosignatures][0 the latest, 1 by size]. */
static const char *const checkpoint_sql[2][2] = {
    {"SELECT size, note FROM checkpoints ORDER BY size DESC LIMIT 1",
     "SELECT size, note FROM checkpoints WHERE size = ?1"},
    {"SELECT size, note" COSIGS " FROM checkpoints ORDER BY size DESC LIMIT 1",
     "SELECT size, note" COSIGS " FROM checkpoints WHERE size = ?1"}};

/* The checkpoints without their cosignatures: a file of schema 6 or
   older has no cosignatures table. */
static const char *const plain_checkpoints =
    "SELECT size, note, created_at FROM checkpoints ORDER BY size";

static const char *const scan_table[] = {
    [STORE_LOG_EVENTS] = "audit_events",
    [STORE_LOG_LEAF_HASHES] = "audit_nodes",
    [STORE_LOG_CHECKPOINTS] = "checkpoints",
    [STORE_LOG_TILES] = "audit_tiles",
    [STORE_LOG_LEAVES] = "audit_events",
};

enum ig_status
store_log_sq_scan(struct store_log_sq *l, enum store_log_table table,
                  const char *contains, struct store_log_sq_cursor **out,
                  struct ig_err *err)
{
    struct store_log_sq_cursor *c;

    *out = NULL;
    if (table == STORE_LOG_TILES || (unsigned)table > STORE_LOG_LEAVES ||
        (table == STORE_LOG_LEAVES && contains != NULL))
        return ig_err_set(err, IG_ERR_INVALID, "no such table");
    if ((c = calloc(1, sizeof(*c))) == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    c->l = l;
    c->table = table;
    /* Without a filter, the plain scan (verify reads every row). */
    if (prepare_or(l->db,
                   table == STORE_LOG_LEAVES ||
                           (table == STORE_LOG_EVENTS && contains == NULL)
                       ? "SELECT seq, event, 0 FROM audit_events "
                         "ORDER BY seq"
                       : scan_sql[table],
                   table == STORE_LOG_CHECKPOINTS ? plain_checkpoints : NULL,
                   &c->q) != SQLITE_OK) {
        free(c);
        if (table == STORE_LOG_CHECKPOINTS)
            return ig_err_set(err, IG_ERR_INVALID,
                              "the database has no readable checkpoints "
                              "table: %s",
                              sqlite3_errmsg(l->db));
        return ig_err_set(err, IG_ERR_IO, "database: %s",
                          sqlite3_errmsg(l->db));
    }
    /* Copied (SQLITE_TRANSIENT): the caller's string may go first. */
    if (table == STORE_LOG_EVENTS && contains != NULL)
        (void)sqlite3_bind_text(c->q, 1, contains, -1, SQLITE_TRANSIENT);
    *out = c;
    return IG_OK;
}

enum ig_status
store_log_sq_next(struct store_log_sq_cursor *c, struct store_log_row *row,
                  struct ig_err *err)
{
    int rc = sqlite3_step(c->q);

    memset(row, 0, sizeof(*row));
    if (rc == SQLITE_DONE)
        return read_ended(c->l, IG_ERR_NOTFOUND, err);
    if (rc != SQLITE_ROW)
        return ig_err_set(err, IG_ERR_IO, "reading %s: %s",
                          scan_table[c->table], sqlite3_errmsg(c->l->db));
    row->key = sqlite3_column_int64(c->q, 0);
    /* sqlite3_column_text adds a NUL: for a value in place on its page
       that is an allocation and a copy per row. */
    row->data =
        c->table == STORE_LOG_EVENTS || c->table == STORE_LOG_CHECKPOINTS
            ? (const void *)sqlite3_column_text(c->q, 1)
            : sqlite3_column_blob(c->q, 1);
    row->len = row->data != NULL ? (size_t)sqlite3_column_bytes(c->q, 1) : 0;
    row->at = sqlite3_column_int64(c->q, 2);
    return IG_OK;
}

void
store_log_sq_cursor_free(struct store_log_sq_cursor *c)
{
    if (c == NULL)
        return;
    sqlite3_finalize(c->q);
    free(c);
}

/* ---- single rows ---- */

/* Copy column i of q into a malloc'd, NUL-terminated string. */
static enum ig_status
col_dup(sqlite3_stmt *q, int i, char **out, size_t *len)
{
    const unsigned char *p = sqlite3_column_text(q, i);
    size_t n = p != NULL ? (size_t)sqlite3_column_bytes(q, i) : 0;

    if ((*out = malloc(n + 1)) == NULL)
        return IG_ERR_NOMEM;
    if (n > 0)
        memcpy(*out, p, n);
    (*out)[n] = '\0';
    *len = n;
    return IG_OK;
}

enum ig_status
store_log_sq_checkpoint(struct store_log_sq *l, uint64_t size, char **note,
                        size_t *len, uint64_t *got, struct ig_err *err)
{
    sqlite3_stmt *q = NULL;
    enum ig_status st;
    int rc;

    *note = NULL;
    if (prepare_or(l->db, checkpoint_sql[1][size > 0],
                   checkpoint_sql[0][size > 0], &q) != SQLITE_OK)
        return ig_err_set(err, IG_ERR_INVALID,
                          "the database has no readable checkpoints table");
    if (size > 0)
        (void)sqlite3_bind_int64(
            q, 1, size <= INT64_MAX ? (sqlite3_int64)size : INT64_MAX);
    rc = sqlite3_step(q);
    if (rc == SQLITE_ROW) {
        *got = (uint64_t)sqlite3_column_int64(q, 0);
        st = col_dup(q, 1, note, len);
        if (st != IG_OK)
            (void)ig_err_set(err, st, "out of memory");
    } else if (rc == SQLITE_DONE && size == 0) {
        st = ig_err_set(err, IG_ERR_NOTFOUND, "the log has no checkpoint yet");
    } else if (rc == SQLITE_DONE) {
        st = ig_err_set(err, IG_ERR_NOTFOUND, "no checkpoint of size %llu",
                        (unsigned long long)size);
    } else {
        st = ig_err_set(err, IG_ERR_IO, "reading checkpoints: %s",
                        sqlite3_errmsg(l->db));
    }
    sqlite3_finalize(q);
    return read_ended(l, st, err);
}

enum ig_status
store_log_sq_leaf(struct store_log_sq *l, uint64_t index, char **leaf,
                  size_t *len, struct ig_err *err)
{
    sqlite3_stmt *q = NULL;
    enum ig_status st;
    int rc;

    *leaf = NULL;
    if (index >= (uint64_t)INT64_MAX)
        return ig_err_set(err, IG_ERR_NOTFOUND, "no leaf %llu",
                          (unsigned long long)index);
    if (sqlite3_prepare_v2(l->db,
                           "SELECT event FROM audit_events WHERE seq = ?1", -1,
                           &q, NULL) != SQLITE_OK)
        return ig_err_set(err, IG_ERR_IO, "database: %s",
                          sqlite3_errmsg(l->db));
    (void)sqlite3_bind_int64(q, 1, (sqlite3_int64)index + 1);
    rc = sqlite3_step(q);
    if (rc == SQLITE_ROW) {
        st = col_dup(q, 0, leaf, len);
        if (st != IG_OK)
            (void)ig_err_set(err, st, "out of memory");
    } else if (rc == SQLITE_DONE) {
        st = ig_err_set(err, IG_ERR_NOTFOUND, "no leaf %llu in the log",
                        (unsigned long long)index);
    } else {
        st = ig_err_set(err, IG_ERR_IO, "reading leaf %llu: %s",
                        (unsigned long long)index, sqlite3_errmsg(l->db));
    }
    sqlite3_finalize(q);
    return read_ended(l, st, err);
}

/* ---- tiles ---- */

int
store_log_sq_has_tiles(struct store_log_sq *l)
{
    sqlite3_stmt *q = NULL;
    int yes = sqlite3_prepare_v2(l->db, "SELECT 1 FROM audit_tiles LIMIT 0", -1,
                                 &q, NULL) == SQLITE_OK;

    sqlite3_finalize(q);
    return yes;
}

enum ig_status
store_log_sq_scan_tiles(struct store_log_sq *l, unsigned level,
                        struct store_log_sq_cursor **out, struct ig_err *err)
{
    struct store_log_sq_cursor *c;

    *out = NULL;
    if ((c = calloc(1, sizeof(*c))) == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    c->l = l;
    c->table = STORE_LOG_TILES;
    if (sqlite3_prepare_v2(l->db,
                           "SELECT idx, hashes, level FROM audit_tiles WHERE "
                           "level = ?1 ORDER BY idx",
                           -1, &c->q, NULL) != SQLITE_OK) {
        free(c);
        return ig_err_set(err, IG_ERR_IO, "database: %s",
                          sqlite3_errmsg(l->db));
    }
    (void)sqlite3_bind_int(c->q, 1, (int)level);
    *out = c;
    return IG_OK;
}

/* ---- tree nodes ---- */

static enum ig_status
log_tile(void *ctx, unsigned level, uint64_t index, const unsigned char **out)
{
    struct store_log_sq *l = ctx;
    enum ig_status st = IG_ERR_NOTFOUND;
    int rc;

    *out = l->tile;
    if (index > (uint64_t)INT64_MAX)
        return IG_ERR_NOTFOUND;
    (void)sqlite3_bind_int(l->node, 1, (int)level);
    (void)sqlite3_bind_int64(l->node, 2, (sqlite3_int64)index);
    rc = sqlite3_step(l->node);
    if (rc == SQLITE_ROW &&
        sqlite3_column_bytes(l->node, 0) == AUDIT_TILE_BYTES) {
        memcpy(l->tile, sqlite3_column_blob(l->node, 0), AUDIT_TILE_BYTES);
        st = IG_OK;
    } else if (rc == SQLITE_ROW) {
        st = IG_ERR_INVALID; /* untrusted: never read past its bytes */
    } else if (rc != SQLITE_DONE) {
        st = IG_ERR_IO;
    }
    (void)sqlite3_reset(l->node);
    return st;
}

static enum ig_status
log_leaf(void *ctx, uint64_t index, unsigned char out[AUDIT_HASH_BYTES])
{
    struct store_log_sq *l = ctx;
    enum ig_status st = IG_ERR_NOTFOUND;
    int rc;

    if (index >= (uint64_t)INT64_MAX)
        return IG_ERR_NOTFOUND;
    (void)sqlite3_bind_int64(l->event, 1, (sqlite3_int64)index + 1);
    rc = sqlite3_step(l->event);
    if (rc == SQLITE_ROW) {
        audit_leaf_hash(sqlite3_column_text(l->event, 0),
                        (size_t)sqlite3_column_bytes(l->event, 0), out);
        st = IG_OK;
    } else if (rc != SQLITE_DONE) {
        st = IG_ERR_IO;
    }
    (void)sqlite3_reset(l->event);
    return st;
}

enum ig_status
store_log_sq_nodes(struct store_log_sq *l, uint64_t size, struct ig_err *err)
{
    l->src.size = size;
    if (l->node != NULL)
        return IG_OK;
    l->tiles = store_log_sq_has_tiles(l);
    if (sqlite3_prepare_v2(l->db,
                           l->tiles ? "SELECT hashes FROM audit_tiles WHERE "
                                      "level = ?1 AND idx = ?2"
                                    : "SELECT hash FROM audit_nodes WHERE "
                                      "level = ?1 AND idx = ?2",
                           -1, &l->node, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(l->db,
                           "SELECT event FROM audit_events WHERE seq = ?1", -1,
                           &l->event, NULL) == SQLITE_OK) {
        l->src.tile = log_tile;
        l->src.entry = NULL;
        l->src.leaf = log_leaf;
        l->src.ctx = l;
        return IG_OK;
    }
    sqlite3_finalize(l->node);
    l->node = NULL;
    return ig_err_set(err, IG_ERR_INVALID,
                      "the database has no readable audit_tiles table: %s",
                      sqlite3_errmsg(l->db));
}

/* A subtree from a schema-3 file's audit_nodes. */
static enum ig_status
legacy_node(struct store_log_sq *l, unsigned level, uint64_t index,
            unsigned char out[AUDIT_HASH_BYTES])
{
    enum ig_status st = IG_ERR_NOTFOUND;
    int rc;

    (void)sqlite3_bind_int(l->node, 1, (int)level);
    (void)sqlite3_bind_int64(l->node, 2, (sqlite3_int64)index);
    rc = sqlite3_step(l->node);
    if (rc == SQLITE_ROW &&
        sqlite3_column_bytes(l->node, 0) == AUDIT_HASH_BYTES) {
        memcpy(out, sqlite3_column_blob(l->node, 0), AUDIT_HASH_BYTES);
        st = IG_OK;
    } else if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        st = IG_ERR_IO;
    }
    (void)sqlite3_reset(l->node);
    return st;
}

enum ig_status
store_log_sq_fetch_node(void *ctx, unsigned level, uint64_t index,
                        unsigned char out[AUDIT_HASH_BYTES])
{
    struct store_log_sq *l = ctx;

    if (l->node == NULL)
        return IG_ERR_IO;
    if (index > (uint64_t)INT64_MAX)
        return IG_ERR_NOTFOUND;
    if (!l->tiles)
        return legacy_node(l, level, index, out);
    return audit_tile_node(&l->src, level, index, out);
}
