/*
 * store_log_pg.c - a PostgreSQL store's audit log read offline, read-only
 * (store_log.h says what; store_log.c hands its calls here for a
 * postgresql:// URL).
 *
 * One connection (store_pg_connect's defaults: connect timeout,
 * keepalives), one READ ONLY REPEATABLE READ transaction from open to
 * close: every call sees the same snapshot, and no statement can write.
 * Nothing is created or migrated: a database without audit_events is
 * "not an intentgate database".
 *
 * Scans are keyset pages (key > the last one seen, ORDER BY key LIMIT n)
 * inside that transaction, so a cursor holds one page at a time and any
 * number of cursors can be open at once (verify reads the events and each
 * tile level side by side). Rows come back in binary form: the key and
 * the time as 8-byte integers, an event or note as its exact bytes, a
 * tile's hashes as its exact bytes - as stored, unchecked (the caller
 * verifies; store_log.h).
 */
#include "store_log_be.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit_tile.h"
#include "store.h"
#include "store_pg_int.h"

#define PAGE_ROWS 1000
#define TILE_PAGE_ROWS 64 /* 512 KiB of tiles */
#define STR_(x) #x
#define STR(x) STR_(x)

struct store_log_pg {
    PGconn *pg;
    char *url;
    int cosigs;    /* the cosignatures table is there, and readable */
    char msg[512]; /* pg_message */
    struct audit_tile_src src;
    unsigned char tile[AUDIT_TILE_BYTES];
};

struct store_log_pg_cursor {
    struct store_log_pg *l;
    enum store_log_table table;
    const char *sql; /* $1 the key to go on after; $2 the filter */
    char *arg;       /* $2: the text to contain, or the tile level */
    char after[24];  /* $1 */
    PGresult *res;   /* the current page */
    int row, rows;
    int last; /* the current page was the last one */
};

static const char *const scan_sql[] = {
    [STORE_LOG_EVENTS] =
        "SELECT seq, event, 0::bigint FROM audit_events"
        " WHERE seq > $1::bigint AND ($2::text IS NULL OR"
        " strpos(event, $2) > 0) ORDER BY seq LIMIT " STR(PAGE_ROWS),
    [STORE_LOG_CHECKPOINTS] = "SELECT size, note, created_at FROM checkpoints"
                              " WHERE size > $1::bigint AND $2::text IS NULL"
                              " ORDER BY size LIMIT " STR(PAGE_ROWS),
    [STORE_LOG_TILES] = "SELECT idx, hashes, level::bigint FROM audit_tiles"
                        " WHERE idx > $1::bigint AND level = $2::integer"
                        " ORDER BY idx LIMIT " STR(TILE_PAGE_ROWS),
    [STORE_LOG_LEAVES] = "SELECT seq, event, 0::bigint FROM audit_events"
                         " WHERE seq > $1::bigint AND $2::text IS NULL"
                         " ORDER BY seq LIMIT " STR(PAGE_ROWS),
};

/* A checkpoint's note with its witnesses' cosignature lines appended
   (store.h), ordered by witness name bytewise; a NULL note stays NULL. */
#define COSIGS                                                                 \
    " || coalesce((SELECT string_agg(c.line, '' ORDER BY c.witness COLLATE"    \
    " \"C\") FROM cosignatures c WHERE c.size = checkpoints.size), '')"

static const char SQL_CHECKPOINTS_COSIGS[] =
    "SELECT size, note" COSIGS ", created_at FROM checkpoints"
    " WHERE size > $1::bigint AND $2::text IS NULL"
    " ORDER BY size LIMIT " STR(PAGE_ROWS);

/* One checkpoint: [with cosignatures][0 the latest, 1 by size]. */
static const char *const checkpoint_sql[2][2] = {
    {"SELECT size, note FROM checkpoints ORDER BY size DESC LIMIT 1",
     "SELECT size, note FROM checkpoints WHERE size = $1::bigint"},
    {"SELECT size, note" COSIGS " FROM checkpoints ORDER BY size DESC LIMIT 1",
     "SELECT size, note" COSIGS " FROM checkpoints WHERE size = $1::bigint"}};

/* 1 when the table is there and this role may read it (a database of
   schema 1 has none; an auditor's role may lack the grant): a failed
   statement would end the read transaction. */
static const char SQL_HAS_COSIGS[] =
    "SELECT coalesce(has_table_privilege(to_regclass('cosignatures'),"
    " 'SELECT'), false)";

static const char *const scan_table[] = {
    [STORE_LOG_EVENTS] = "audit_events",
    [STORE_LOG_LEAF_HASHES] = "audit_nodes",
    [STORE_LOG_CHECKPOINTS] = "checkpoints",
    [STORE_LOG_TILES] = "audit_tiles",
    [STORE_LOG_LEAVES] = "audit_events",
};

#define PGMSG(l)                                                               \
    store_pg_message(PQerrorMessage((l)->pg), (l)->msg, sizeof((l)->msg))

/* Run sql with n text parameters; binary results. NULL when it failed. */
static PGresult *
query(struct store_log_pg *l, const char *sql, int n, const char *const *params)
{
    PGresult *r = PQexecParams(l->pg, sql, n, NULL, params, NULL, NULL, 1);

    if (r != NULL && PQresultStatus(r) == PGRES_TUPLES_OK)
        return r;
    PQclear(r);
    return NULL;
}

/* A plain statement (no rows); 0 or -1. */
static int
command(struct store_log_pg *l, const char *sql)
{
    PGresult *r = PQexec(l->pg, sql);
    int ok = r != NULL && PQresultStatus(r) == PGRES_COMMAND_OK;

    PQclear(r);
    return ok ? 0 : -1;
}

/* An 8-byte big-endian integer column (binary), or 0 when not one. */
static int64_t
col_int(const PGresult *r, int row, int col)
{
    const unsigned char *p = (const unsigned char *)PQgetvalue(r, row, col);
    uint64_t v = 0;
    int i;

    if (PQgetisnull(r, row, col) || PQgetlength(r, row, col) != 8)
        return 0;
    for (i = 0; i < 8; i++)
        v = v << 8 | p[i];
    return (int64_t)v;
}

struct pg_conn *
store_log_pg_conn(struct store_log_pg *l)
{
    return l->pg;
}

const char *
store_log_pg_error(struct store_log_pg *l)
{
    return PGMSG(l);
}

/* ---- opening ---- */

static int
hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* 1 when the URL parameter at p (up to '=') names "password", as libpq
   reads it: percent-decoded. */
static int
param_is_password(const char *p)
{
    static const char want[] = "password";
    size_t n = 0;
    int c, hi, lo;

    while (*p != '\0' && *p != '=' && *p != '&') {
        c = (unsigned char)*p++;
        if (c == '%' && (hi = hex_digit(p[0])) >= 0 &&
            (lo = hex_digit(p[1])) >= 0) {
            c = hi << 4 | lo;
            p += 2;
        }
        if (n >= sizeof(want) - 1 || c != want[n])
            return 0;
        n++;
    }
    return n == sizeof(want) - 1 && *p == '=';
}

int
store_url_has_password(const char *url)
{
    const char *auth, *end, *at, *colon, *q;

    if (!store_is_postgres(url))
        return 0;
    auth = strstr(url, "://") + 3;
    end = auth + strcspn(auth, "/?#");
    at = NULL;
    for (q = auth; q < end; q++)
        if (*q == '@')
            at = q;
    colon = at != NULL ? memchr(auth, ':', (size_t)(at - auth)) : NULL;
    if (colon != NULL)
        return 1;
    for (q = strchr(end, '?'); q != NULL; q = strchr(q, '&'))
        if (param_is_password(++q))
            return 1;
    return 0;
}

void
store_url_for_log(const char *db, char *out, size_t cap)
{
    const char *auth, *end, *at = NULL, *colon, *q;
    int n;

    if (cap == 0)
        return;
    if (!store_url_has_password(db)) {
        (void)snprintf(out, cap, "%s", db);
        return;
    }
    auth = strstr(db, "://") + 3;
    end = auth + strcspn(auth, "/?#");
    for (q = auth; q < end; q++)
        if (*q == '@')
            at = q;
    colon = at != NULL ? memchr(auth, ':', (size_t)(at - auth)) : NULL;
    /* scheme://user@host/path, without the password and the parameters
       (one of which may be the password). */
    if (colon != NULL)
        n = snprintf(out, cap, "%.*s%.*s", (int)(colon - db), db,
                     (int)(end - at), at);
    else
        n = snprintf(out, cap, "%.*s", (int)(end - db), db);
    if (n >= 0 && (size_t)n < cap) {
        q = end + strcspn(end, "?#");
        (void)snprintf(out + n, cap - (size_t)n, "%.*s%s", (int)(q - end), end,
                       *q == '?' ? "?(parameters withheld)" : "");
    }
}

enum ig_status
store_log_pg_open(const char *url, struct store_log_pg **out,
                  struct ig_err *err)
{
    struct store_log_pg *l;
    struct ig_err cerr;
    PGresult *r;

    *out = NULL;
    if (store_url_has_password(url))
        return ig_err_set(err, IG_ERR_INVALID,
                          "cannot open the database: its URL holds a "
                          "password, which every local user can read on a "
                          "command line (put it in PGPASSWORD or ~/.pgpass)");
    if ((l = calloc(1, sizeof(*l))) == NULL || (l->url = strdup(url)) == NULL) {
        free(l);
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    }
    if ((l->pg = store_pg_connect(url, &cerr)) == NULL) {
        (void)ig_err_set(err, IG_ERR_INVALID, "cannot open %s: %s", url,
                         store_pg_message(cerr.msg, l->msg, sizeof(l->msg)));
        store_log_pg_close(l);
        return IG_ERR_INVALID;
    }
    /* A scan filtered by text may read the whole table in one page: the
       connection's statement timeout (a PDP's) is too short for a big
       log, but a read must still end. */
    if (command(l, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY") != 0 ||
        command(l, "SET LOCAL statement_timeout = '10min'") != 0) {
        (void)ig_err_set(err, IG_ERR_IO, "%s: cannot start a read: %s", url,
                         PGMSG(l));
        store_log_pg_close(l);
        return IG_ERR_IO;
    }
    r = query(l, "SELECT seq, event FROM audit_events LIMIT 0", 0, NULL);
    if (r == NULL) {
        (void)ig_err_set(err, IG_ERR_INVALID,
                         "%s is not an intentgate database: %s", url, PGMSG(l));
        store_log_pg_close(l);
        return IG_ERR_INVALID;
    }
    PQclear(r);
    r = query(l, SQL_HAS_COSIGS, 0, NULL);
    l->cosigs = r != NULL && PQntuples(r) == 1 && PQgetlength(r, 0, 0) == 1 &&
                PQgetvalue(r, 0, 0)[0] == 1;
    if (r == NULL) {
        (void)ig_err_set(err, IG_ERR_IO, "%s: %s", url, PGMSG(l));
        store_log_pg_close(l);
        return IG_ERR_IO;
    }
    PQclear(r);
    *out = l;
    return IG_OK;
}

void
store_log_pg_close(struct store_log_pg *l)
{
    if (l == NULL)
        return;
    if (l->pg != NULL && PQtransactionStatus(l->pg) != PQTRANS_IDLE)
        (void)command(l, "ROLLBACK"); /* read only: nothing to keep */
    PQfinish(l->pg);
    free(l->url);
    free(l);
}

/* ---- scanning ---- */

static enum ig_status
cursor_new(struct store_log_pg *l, enum store_log_table table, const char *arg,
           struct store_log_pg_cursor **out, struct ig_err *err)
{
    struct store_log_pg_cursor *c = calloc(1, sizeof(*c));

    if (c == NULL || (arg != NULL && (c->arg = strdup(arg)) == NULL)) {
        free(c);
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    }
    c->l = l;
    c->table = table;
    c->sql = table == STORE_LOG_CHECKPOINTS && l->cosigs
                 ? SQL_CHECKPOINTS_COSIGS
                 : scan_sql[table];
    (void)snprintf(c->after, sizeof(c->after), "%" PRId64, INT64_MIN);
    *out = c;
    return IG_OK;
}

enum ig_status
store_log_pg_scan(struct store_log_pg *l, enum store_log_table table,
                  const char *contains, struct store_log_pg_cursor **out,
                  struct ig_err *err)
{
    *out = NULL;
    if ((unsigned)table > STORE_LOG_LEAVES || table == STORE_LOG_TILES ||
        (table != STORE_LOG_EVENTS && contains != NULL))
        return ig_err_set(err, IG_ERR_INVALID, "no such table");
    if (table == STORE_LOG_LEAF_HASHES) /* never in a PostgreSQL store */
        return ig_err_set(err, IG_ERR_IO,
                          "database: no audit_nodes table (the tree is "
                          "stored as tiles)");
    return cursor_new(l, table, contains, out, err);
}

enum ig_status
store_log_pg_scan_tiles(struct store_log_pg *l, unsigned level,
                        struct store_log_pg_cursor **out, struct ig_err *err)
{
    char lv[16];

    *out = NULL;
    (void)snprintf(lv, sizeof(lv), "%u", level);
    return cursor_new(l, STORE_LOG_TILES, lv, out, err);
}

/* The next page into c->res. */
static enum ig_status
next_page(struct store_log_pg_cursor *c, struct ig_err *err)
{
    const char *params[2] = {c->after, c->arg};
    int n;

    PQclear(c->res);
    c->res = query(c->l, c->sql, 2, params);
    c->row = c->rows = 0;
    if (c->res == NULL) {
        if (c->table == STORE_LOG_CHECKPOINTS)
            return ig_err_set(err, IG_ERR_INVALID,
                              "the database has no readable checkpoints "
                              "table: %s",
                              PGMSG(c->l));
        return ig_err_set(err, IG_ERR_IO, "reading %s: %s",
                          scan_table[c->table], PGMSG(c->l));
    }
    c->rows = PQntuples(c->res);
    c->last =
        c->rows < (c->table == STORE_LOG_TILES ? TILE_PAGE_ROWS : PAGE_ROWS);
    n = c->rows;
    if (n > 0)
        (void)snprintf(c->after, sizeof(c->after), "%" PRId64,
                       col_int(c->res, n - 1, 0));
    return IG_OK;
}

enum ig_status
store_log_pg_next(struct store_log_pg_cursor *c, struct store_log_row *row,
                  struct ig_err *err)
{
    enum ig_status st;
    int i;

    memset(row, 0, sizeof(*row));
    if (c->res == NULL || (c->row == c->rows && !c->last)) {
        if ((st = next_page(c, err)) != IG_OK)
            return st;
    }
    if (c->row == c->rows)
        return IG_ERR_NOTFOUND;
    i = c->row++;
    row->key = col_int(c->res, i, 0);
    row->at = col_int(c->res, i, 2);
    if (!PQgetisnull(c->res, i, 1)) {
        row->data = PQgetvalue(c->res, i, 1);
        row->len = (size_t)PQgetlength(c->res, i, 1);
    }
    if (c->table == STORE_LOG_LEAVES && row->len == 0)
        row->data = NULL;
    return IG_OK;
}

void
store_log_pg_cursor_free(struct store_log_pg_cursor *c)
{
    if (c == NULL)
        return;
    PQclear(c->res);
    free(c->arg);
    free(c);
}

/* ---- single rows ---- */

/* Copy column col of r into a malloc'd, NUL-terminated string. */
static enum ig_status
col_dup(const PGresult *r, int col, char **out, size_t *len)
{
    size_t n = (size_t)PQgetlength(r, 0, col);

    if ((*out = malloc(n + 1)) == NULL)
        return IG_ERR_NOMEM;
    memcpy(*out, PQgetvalue(r, 0, col), n);
    (*out)[n] = '\0';
    *len = n;
    return IG_OK;
}

enum ig_status
store_log_pg_checkpoint(struct store_log_pg *l, uint64_t size, char **note,
                        size_t *len, uint64_t *got, struct ig_err *err)
{
    char arg[24];
    const char *params[1] = {arg};
    PGresult *r;
    enum ig_status st;

    *note = NULL;
    (void)snprintf(arg, sizeof(arg), "%" PRIu64,
                   size <= INT64_MAX ? size : (uint64_t)INT64_MAX);
    r = query(l, checkpoint_sql[l->cosigs != 0][size > 0], size == 0 ? 0 : 1,
              params);
    if (r == NULL)
        return ig_err_set(err, IG_ERR_INVALID,
                          "the database has no readable checkpoints table: "
                          "%s",
                          PGMSG(l));
    if (PQntuples(r) > 0) {
        *got = (uint64_t)col_int(r, 0, 0);
        st = col_dup(r, 1, note, len);
        if (st != IG_OK)
            (void)ig_err_set(err, st, "out of memory");
    } else if (size == 0) {
        st = ig_err_set(err, IG_ERR_NOTFOUND, "the log has no checkpoint yet");
    } else {
        st = ig_err_set(err, IG_ERR_NOTFOUND, "no checkpoint of size %llu",
                        (unsigned long long)size);
    }
    PQclear(r);
    return st;
}

enum ig_status
store_log_pg_leaf(struct store_log_pg *l, uint64_t index, char **leaf,
                  size_t *len, struct ig_err *err)
{
    char arg[24];
    const char *params[1] = {arg};
    PGresult *r;
    enum ig_status st;

    *leaf = NULL;
    if (index >= (uint64_t)INT64_MAX)
        return ig_err_set(err, IG_ERR_NOTFOUND, "no leaf %llu",
                          (unsigned long long)index);
    (void)snprintf(arg, sizeof(arg), "%" PRIu64, index + 1);
    r = query(l, "SELECT event FROM audit_events WHERE seq = $1::bigint", 1,
              params);
    if (r == NULL)
        return ig_err_set(err, IG_ERR_IO, "reading leaf %llu: %s",
                          (unsigned long long)index, PGMSG(l));
    if (PQntuples(r) > 0) {
        st = col_dup(r, 0, leaf, len);
        if (st != IG_OK)
            (void)ig_err_set(err, st, "out of memory");
    } else {
        st = ig_err_set(err, IG_ERR_NOTFOUND, "no leaf %llu in the log",
                        (unsigned long long)index);
    }
    PQclear(r);
    return st;
}

enum ig_status
store_log_pg_queued(struct store_log_pg *l, uint64_t *n, struct ig_err *err)
{
    PGresult *r = query(l, "SELECT count(*) FROM audit_queue", 0, NULL);

    *n = 0;
    if (r == NULL)
        return ig_err_set(err, IG_ERR_IO, "reading audit_queue: %s", PGMSG(l));
    if (PQntuples(r) == 1)
        *n = (uint64_t)col_int(r, 0, 0);
    PQclear(r);
    return IG_OK;
}

/* ---- tree nodes ---- */

static enum ig_status
log_tile(void *ctx, unsigned level, uint64_t index, const unsigned char **out)
{
    struct store_log_pg *l = ctx;
    char lv[16], ix[24];
    const char *params[2] = {lv, ix};
    PGresult *r;
    enum ig_status st = IG_ERR_NOTFOUND;

    *out = l->tile;
    if (index > (uint64_t)INT64_MAX)
        return IG_ERR_NOTFOUND;
    (void)snprintf(lv, sizeof(lv), "%u", level);
    (void)snprintf(ix, sizeof(ix), "%" PRIu64, index);
    r = query(l,
              "SELECT hashes FROM audit_tiles WHERE level = $1::integer"
              " AND idx = $2::bigint",
              2, params);
    if (r == NULL)
        return IG_ERR_IO;
    if (PQntuples(r) > 0 && PQgetlength(r, 0, 0) == AUDIT_TILE_BYTES) {
        memcpy(l->tile, PQgetvalue(r, 0, 0), AUDIT_TILE_BYTES);
        st = IG_OK;
    } else if (PQntuples(r) > 0) {
        st = IG_ERR_INVALID; /* untrusted: never read past its bytes */
    }
    PQclear(r);
    return st;
}

static enum ig_status
log_leaf(void *ctx, uint64_t index, unsigned char out[AUDIT_HASH_BYTES])
{
    struct store_log_pg *l = ctx;
    char arg[24];
    const char *params[1] = {arg};
    PGresult *r;
    enum ig_status st = IG_ERR_NOTFOUND;

    if (index >= (uint64_t)INT64_MAX)
        return IG_ERR_NOTFOUND;
    (void)snprintf(arg, sizeof(arg), "%" PRIu64, index + 1);
    r = query(l, "SELECT event FROM audit_events WHERE seq = $1::bigint", 1,
              params);
    if (r == NULL)
        return IG_ERR_IO;
    if (PQntuples(r) > 0) {
        audit_leaf_hash(PQgetvalue(r, 0, 0), (size_t)PQgetlength(r, 0, 0), out);
        st = IG_OK;
    }
    PQclear(r);
    return st;
}

enum ig_status
store_log_pg_nodes(struct store_log_pg *l, uint64_t size, struct ig_err *err)
{
    PGresult *r = query(l, "SELECT hashes FROM audit_tiles LIMIT 0", 0, NULL);

    if (r == NULL)
        return ig_err_set(err, IG_ERR_INVALID,
                          "the database has no readable audit_tiles table: "
                          "%s",
                          PGMSG(l));
    PQclear(r);
    l->src.size = size;
    l->src.tile = log_tile;
    l->src.entry = NULL;
    l->src.leaf = log_leaf;
    l->src.ctx = l;
    return IG_OK;
}

enum ig_status
store_log_pg_fetch_node(void *ctx, unsigned level, uint64_t index,
                        unsigned char out[AUDIT_HASH_BYTES])
{
    struct store_log_pg *l = ctx;

    if (l->src.tile == NULL)
        return IG_ERR_IO;
    if (index > (uint64_t)INT64_MAX)
        return IG_ERR_NOTFOUND;
    return audit_tile_node(&l->src, level, index, out);
}
