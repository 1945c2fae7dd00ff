/*
 * store_copy.c - copy a SQLite store into an empty PostgreSQL database
 * (store_copy.h says what is promised).
 *
 * The source is read under SQLite's exclusive lock (locking_mode =
 * EXCLUSIVE and BEGIN EXCLUSIVE, never committed: nothing is written). In
 * WAL mode every open connection holds a shared lock on the file for its
 * whole life, so the lock is refused while a PDP has the file open, and
 * a PDP that starts meanwhile cannot open it.
 *
 * The target is migrated first (store_pg_migrate, as a PDP would), then
 * filled in one transaction: the migration lock (a PDP starting meanwhile
 * waits for the commit) and the sequencer's lock (refused while a PDP
 * runs on it) are taken for the transaction, every table of the schema is
 * checked empty, each SQLite table is sent with COPY ... FROM STDIN in
 * text form (columns by name; NULL as \N; backslash, tab, newline and CR
 * escaped; BYTEA columns as \x and hex), the rows PostgreSQL counted are
 * checked against the rows read, and each identity sequence is set past
 * its column's largest copied value. Any failure rolls it all back.
 */
#include "store_copy.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ig_buf.h"
#include "store.h"
#include "store_log.h"
#include "store_pg_int.h"

#define COPY_FLUSH_BYTES (1024 * 1024)
#define COPY_COLS_MAX 32

/* Tables in foreign key order; the others follow, by name. */
static const char *const first_tables[] = {
    "intents",   "decisions", "grants",      "redemptions", "outcomes",
    "approvals", "votes",     "resolutions", "checkpoints", "cosignatures"};

struct copy {
    const char *from, *to;
    sqlite3 *sq;
    PGconn *pg;
    struct ig_err *err;
    struct ig_buf out; /* COPY data not yet sent */
    char msg[512];     /* pg_message */
};

#define PGMSG(c)                                                               \
    store_pg_message(PQerrorMessage((c)->pg), (c)->msg, sizeof((c)->msg))

/* A statement without rows; IG_OK or IG_ERR_IO with err (what: doing). */
static enum ig_status
pg_command(struct copy *c, const char *sql, const char *what)
{
    PGresult *r = PQexec(c->pg, sql);
    int ok = r != NULL && PQresultStatus(r) == PGRES_COMMAND_OK;

    PQclear(r);
    if (ok)
        return IG_OK;
    return ig_err_set(c->err, IG_ERR_IO, "%s: %s: %s", c->to, what, PGMSG(c));
}

/* A query with text parameters; NULL (err set) when it failed. */
static PGresult *
pg_rows(struct copy *c, const char *sql, int n, const char *const *params,
        const char *what)
{
    PGresult *r = PQexecParams(c->pg, sql, n, NULL, params, NULL, NULL, 0);

    if (r != NULL && PQresultStatus(r) == PGRES_TUPLES_OK)
        return r;
    PQclear(r);
    (void)ig_err_set(c->err, IG_ERR_IO, "%s: %s: %s", c->to, what, PGMSG(c));
    return NULL;
}

/* ---- the source ---- */

static enum ig_status
open_source(struct copy *c)
{
    sqlite3_stmt *q = NULL;
    int rc, version = -1;

    if (access(c->from, R_OK) != 0)
        return ig_err_set(c->err, IG_ERR_INVALID, "cannot open %s: %s", c->from,
                          strerror(errno));
    /* Read-write only to take the write lock: nothing is written. */
    if (sqlite3_open_v2(c->from, &c->sq, SQLITE_OPEN_READWRITE, NULL) !=
        SQLITE_OK)
        return ig_err_set(c->err, IG_ERR_INVALID, "cannot open %s: %s", c->from,
                          sqlite3_errmsg(c->sq));
    (void)sqlite3_busy_timeout(c->sq, 0);
    (void)sqlite3_exec(c->sq, "PRAGMA locking_mode = EXCLUSIVE", NULL, NULL,
                       NULL);
    rc = sqlite3_exec(c->sq, "BEGIN EXCLUSIVE", NULL, NULL, NULL);
    if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED)
        return ig_err_set(c->err, IG_ERR_EXISTS,
                          "%s is in use (a PDP has it open?): stop the PDP, "
                          "then copy",
                          c->from);
    if (rc != SQLITE_OK)
        return ig_err_set(c->err, IG_ERR_INVALID, "cannot lock %s: %s", c->from,
                          sqlite3_errmsg(c->sq));
    if (sqlite3_prepare_v2(c->sq, "PRAGMA user_version", -1, &q, NULL) ==
            SQLITE_OK &&
        sqlite3_step(q) == SQLITE_ROW)
        version = sqlite3_column_int(q, 0);
    sqlite3_finalize(q);
    q = NULL;
    if (sqlite3_prepare_v2(c->sq, "SELECT seq, event FROM audit_events LIMIT 0",
                           -1, &q, NULL) != SQLITE_OK ||
        version < 0) {
        sqlite3_finalize(q);
        return ig_err_set(c->err, IG_ERR_INVALID,
                          "%s is not an intentgate database: %s", c->from,
                          sqlite3_errmsg(c->sq));
    }
    sqlite3_finalize(q);
    if (version < 5)
        return ig_err_set(c->err, IG_ERR_INVALID,
                          "%s has schema %d: open it once with this "
                          "intentgate (serve) to migrate it, then copy",
                          c->from, version);
    if (version > 7)
        return ig_err_set(c->err, IG_ERR_INVALID,
                          "%s has schema %d, newer than this intentgate "
                          "copies (5 to 7)",
                          c->from, version);
    return IG_OK;
}

/* ---- the target ---- */

static enum ig_status
open_target(struct copy *c)
{
    struct ig_err cerr;
    struct store_pg *dummy;
    struct store_pg_conn conn;
    enum ig_status st;
    char sql[96];
    PGresult *r;
    int free_seq;

    if ((c->pg = store_pg_connect(c->to, &cerr)) == NULL)
        return ig_err_set(c->err, IG_ERR_INVALID, "cannot open %s: %s", c->to,
                          store_pg_message(cerr.msg, c->msg, sizeof(c->msg)));
    if (pg_command(c, "SET client_encoding = 'UTF8'", "encoding") != IG_OK)
        return IG_ERR_IO;
    /* The PDP's own migration (it reads nothing of the store struct but
       the connection; a zeroed one logs nowhere). */
    if ((dummy = calloc(1, sizeof(*dummy))) == NULL)
        return ig_err_set(c->err, IG_ERR_NOMEM, "out of memory");
    memset(&conn, 0, sizeof(conn));
    conn.pg = c->pg;
    st = store_pg_migrate(dummy, &conn, &cerr);
    free(dummy);
    if (st != IG_OK)
        return ig_err_set(c->err, IG_ERR_INVALID, "%s: %s", c->to,
                          store_pg_message(cerr.msg, c->msg, sizeof(c->msg)));
    if (pg_command(c, "BEGIN", "begin") != IG_OK ||
        pg_command(c, "SET LOCAL statement_timeout = 0", "timeout") != IG_OK)
        return IG_ERR_IO;
    (void)snprintf(sql, sizeof(sql), "SELECT pg_advisory_xact_lock(%lld)",
                   STORE_PG_LOCK_MIGRATE);
    if ((r = pg_rows(c, sql, 0, NULL, "cannot take the migration lock")) ==
        NULL)
        return IG_ERR_IO;
    PQclear(r);
    (void)snprintf(sql, sizeof(sql), "SELECT pg_try_advisory_xact_lock(%lld)",
                   STORE_PG_LOCK_SEQUENCER);
    if ((r = pg_rows(c, sql, 0, NULL, "cannot ask for the sequencer's lock")) ==
        NULL)
        return IG_ERR_IO;
    free_seq = PQntuples(r) == 1 && strcmp(PQgetvalue(r, 0, 0), "t") == 0;
    PQclear(r);
    if (!free_seq)
        return ig_err_set(c->err, IG_ERR_EXISTS,
                          "a PDP is running on %s (it holds the sequencer's "
                          "lock): copy into a database no PDP uses",
                          c->to);
    return IG_OK;
}

/* Refuse a target with a row in any table of the schema. */
static enum ig_status
target_empty(struct copy *c)
{
    PGresult *t, *r;
    enum ig_status st = IG_OK;
    char sql[256];
    char *id;
    int i;

    t = pg_rows(c,
                "SELECT tablename FROM pg_tables WHERE schemaname ="
                " current_schema() AND tablename <> 'ig_schema'"
                " ORDER BY tablename",
                0, NULL, "listing the tables");
    if (t == NULL)
        return IG_ERR_IO;
    for (i = 0; i < PQntuples(t) && st == IG_OK; i++) {
        const char *name = PQgetvalue(t, i, 0);

        if ((id = PQescapeIdentifier(c->pg, name, strlen(name))) == NULL) {
            st = ig_err_set(c->err, IG_ERR_NOMEM, "out of memory");
            break;
        }
        (void)snprintf(sql, sizeof(sql), "SELECT EXISTS (SELECT 1 FROM %s)",
                       id);
        PQfreemem(id);
        if ((r = pg_rows(c, sql, 0, NULL, "checking it is empty")) == NULL) {
            st = IG_ERR_IO;
            break;
        }
        if (strcmp(PQgetvalue(r, 0, 0), "t") == 0)
            st = ig_err_set(c->err, IG_ERR_EXISTS,
                            "%s is not empty (table %s has rows): copy into "
                            "a new database",
                            c->to, name);
        PQclear(r);
    }
    PQclear(t);
    return st;
}

/* ---- one table ---- */

struct table {
    const char *name;
    char *id; /* quoted for PostgreSQL */
    int ncols;
    char *col[COPY_COLS_MAX];
    int bytea[COPY_COLS_MAX];
    uint64_t rows;
};

static void
table_release(struct table *t)
{
    int i;

    PQfreemem(t->id);
    for (i = 0; i < t->ncols; i++)
        free(t->col[i]);
    memset(t, 0, sizeof(*t));
}

/* The columns of SQLite's table, each found in the target's. */
static enum ig_status
table_columns(struct copy *c, struct table *t)
{
    const char *params[1] = {t->name};
    sqlite3_stmt *q = NULL;
    PGresult *r;
    enum ig_status st = IG_OK;
    int i, found;

    r = pg_rows(c,
                "SELECT column_name, data_type FROM information_schema.columns"
                " WHERE table_schema = current_schema() AND table_name = $1",
                1, params, "reading the schema");
    if (r == NULL)
        return IG_ERR_IO;
    if (PQntuples(r) == 0) {
        PQclear(r);
        return ig_err_set(c->err, IG_ERR_INVALID,
                          "%s has no table %s (is %s newer than this "
                          "intentgate?): nothing copied",
                          c->to, t->name, c->from);
    }
    if (sqlite3_prepare_v2(c->sq, "SELECT name FROM pragma_table_info(?1)", -1,
                           &q, NULL) != SQLITE_OK) {
        PQclear(r);
        return ig_err_set(c->err, IG_ERR_IO, "%s: %s", c->from,
                          sqlite3_errmsg(c->sq));
    }
    (void)sqlite3_bind_text(q, 1, t->name, -1, SQLITE_STATIC);
    while (st == IG_OK && sqlite3_step(q) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(q, 0);

        if (t->ncols == COPY_COLS_MAX) {
            st = ig_err_set(c->err, IG_ERR_LIMIT,
                            "%s: table %s: too many "
                            "columns",
                            c->from, t->name);
            break;
        }
        for (i = 0, found = -1; i < PQntuples(r); i++)
            if (strcmp(PQgetvalue(r, i, 0), name) == 0)
                found = i;
        if (found < 0) {
            st = ig_err_set(c->err, IG_ERR_INVALID,
                            "%s: table %s has no column %s: nothing copied",
                            c->to, t->name, name);
            break;
        }
        t->bytea[t->ncols] = strcmp(PQgetvalue(r, found, 1), "bytea") == 0;
        if ((t->col[t->ncols] =
                 PQescapeIdentifier(c->pg, name, strlen(name))) == NULL)
            st = ig_err_set(c->err, IG_ERR_NOMEM, "out of memory");
        else
            t->ncols++;
    }
    sqlite3_finalize(q);
    PQclear(r);
    if (st == IG_OK && t->ncols == 0)
        st = ig_err_set(c->err, IG_ERR_INVALID, "%s: table %s has no columns",
                        c->from, t->name);
    return st;
}

/* The statement "SELECT cols FROM t" (SQLite) or "COPY t (cols) FROM
   STDIN" (PostgreSQL) into sql. */
static enum ig_status
statement(const struct table *t, int copy, struct ig_buf *sql)
{
    enum ig_status st;
    int i;

    st = ig_buf_adds(sql, copy ? "COPY " : "SELECT ");
    if (copy && st == IG_OK)
        st = ig_buf_adds(sql, t->id);
    if (copy && st == IG_OK)
        st = ig_buf_adds(sql, " (");
    for (i = 0; i < t->ncols && st == IG_OK; i++) {
        if (i > 0)
            st = ig_buf_adds(sql, ", ");
        if (st == IG_OK)
            st = ig_buf_adds(sql, t->col[i]);
    }
    if (st == IG_OK)
        st = ig_buf_adds(sql, copy ? ") FROM STDIN" : " FROM ");
    if (!copy && st == IG_OK)
        st = ig_buf_adds(sql, t->id);
    return st;
}

/* Send what is buffered (all of it, or once over the flush size). */
static enum ig_status
flush(struct copy *c, int all)
{
    if (c->out.len == 0 || (!all && c->out.len < COPY_FLUSH_BYTES))
        return IG_OK;
    if (PQputCopyData(c->pg, c->out.data, (int)c->out.len) != 1)
        return ig_err_set(c->err, IG_ERR_IO, "%s: sending rows: %s", c->to,
                          PGMSG(c));
    ig_buf_reset(&c->out);
    return IG_OK;
}

/* One value in COPY's text form. */
static enum ig_status
put_value(struct copy *c, sqlite3_stmt *q, int i, int bytea)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p;
    enum ig_status st = IG_OK;
    size_t n, k;

    if (sqlite3_column_type(q, i) == SQLITE_NULL)
        return ig_buf_adds(&c->out, "\\N");
    if (bytea) {
        p = sqlite3_column_blob(q, i);
        n = (size_t)sqlite3_column_bytes(q, i);
        st = ig_buf_adds(&c->out, "\\\\x");
        for (k = 0; k < n && st == IG_OK; k++) {
            st = ig_buf_addc(&c->out, hex[p[k] >> 4]);
            if (st == IG_OK)
                st = ig_buf_addc(&c->out, hex[p[k] & 15]);
        }
        return st;
    }
    p = sqlite3_column_text(q, i);
    n = (size_t)sqlite3_column_bytes(q, i);
    for (k = 0; k < n && st == IG_OK; k++) {
        switch (p[k]) {
        case '\\':
            st = ig_buf_adds(&c->out, "\\\\");
            break;
        case '\n':
            st = ig_buf_adds(&c->out, "\\n");
            break;
        case '\r':
            st = ig_buf_adds(&c->out, "\\r");
            break;
        case '\t':
            st = ig_buf_adds(&c->out, "\\t");
            break;
        default:
            st = ig_buf_addc(&c->out, (char)p[k]);
        }
    }
    return st;
}

/* Stream the rows of q into the COPY under way. */
static enum ig_status
send_rows(struct copy *c, struct table *t, sqlite3_stmt *q)
{
    enum ig_status st = IG_OK;
    int rc, i;

    while (st == IG_OK && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        for (i = 0; i < t->ncols && st == IG_OK; i++) {
            if (i > 0)
                st = ig_buf_addc(&c->out, '\t');
            if (st == IG_OK)
                st = put_value(c, q, i, t->bytea[i]);
        }
        if (st == IG_OK)
            st = ig_buf_addc(&c->out, '\n');
        if (st == IG_OK)
            st = flush(c, 0);
        t->rows++;
    }
    if (st == IG_OK && rc != SQLITE_DONE)
        st = ig_err_set(c->err, IG_ERR_IO, "%s: reading %s: %s", c->from,
                        t->name, sqlite3_errmsg(c->sq));
    if (st == IG_ERR_NOMEM || st == IG_ERR_LIMIT)
        (void)ig_err_set(c->err, st, "out of memory");
    return st;
}

/* End the COPY (aborted when st is not IG_OK) and check its count. */
static enum ig_status
copy_end(struct copy *c, struct table *t, enum ig_status st)
{
    PGresult *r;
    char want[24];

    if (st == IG_OK)
        st = flush(c, 1);
    if (PQputCopyEnd(c->pg, st == IG_OK ? NULL : "store copy failed") != 1 &&
        st == IG_OK)
        st = ig_err_set(c->err, IG_ERR_IO, "%s: copying %s: %s", c->to, t->name,
                        PGMSG(c));
    while ((r = PQgetResult(c->pg)) != NULL) {
        if (st == IG_OK && PQresultStatus(r) != PGRES_COMMAND_OK)
            st = ig_err_set(c->err, IG_ERR_IO, "%s: copying %s: %s", c->to,
                            t->name, PGMSG(c));
        (void)snprintf(want, sizeof(want), "%llu", (unsigned long long)t->rows);
        if (st == IG_OK && strcmp(PQcmdTuples(r), want) != 0)
            st = ig_err_set(c->err, IG_ERR_IO,
                            "%s: copying %s: %s rows arrived of %s sent", c->to,
                            t->name, PQcmdTuples(r), want);
        PQclear(r);
    }
    ig_buf_reset(&c->out);
    return st;
}

/* Set each identity sequence of t past its column's largest value. */
static enum ig_status
identities(struct copy *c, const struct table *t)
{
    const char *params[1] = {t->id};
    PGresult *r, *s;
    enum ig_status st = IG_OK;
    char sql[1024], *col;
    int i, n;

    r = pg_rows(c,
                "SELECT attname FROM pg_attribute WHERE attrelid ="
                " $1::regclass AND attidentity <> '' AND NOT attisdropped",
                1, params, "reading the identity columns");
    if (r == NULL)
        return IG_ERR_IO;
    for (i = 0; i < PQntuples(r) && st == IG_OK; i++) {
        const char *name = PQgetvalue(r, i, 0);

        if ((col = PQescapeIdentifier(c->pg, name, strlen(name))) == NULL) {
            st = ig_err_set(c->err, IG_ERR_NOMEM, "out of memory");
            break;
        }
        /* pg_get_serial_sequence parses its first argument as an
           identifier (quoted here) and takes the second literally. */
        n = snprintf(sql, sizeof(sql),
                     "SELECT setval(pg_get_serial_sequence($1, $2),"
                     " coalesce((SELECT max(%s) FROM %s), 0) + 1, false)",
                     col, t->id);
        PQfreemem(col);
        if (n < 0 || (size_t)n >= sizeof(sql)) {
            st =
                ig_err_set(c->err, IG_ERR_LIMIT, "%s: names too long", t->name);
            break;
        }
        {
            const char *args[2] = {t->id, name};

            if ((s = pg_rows(c, sql, 2, args, "moving a sequence")) == NULL)
                st = IG_ERR_IO;
            PQclear(s);
        }
    }
    PQclear(r);
    return st;
}

static enum ig_status
copy_table(struct copy *c, const char *name, store_copy_fn fn, void *ctx)
{
    struct table t;
    struct ig_buf sql;
    sqlite3_stmt *q = NULL;
    PGresult *r;
    enum ig_status st;

    memset(&t, 0, sizeof(t));
    t.name = name;
    ig_buf_init(&sql, 4096);
    if ((t.id = PQescapeIdentifier(c->pg, name, strlen(name))) == NULL) {
        st = ig_err_set(c->err, IG_ERR_NOMEM, "out of memory");
        goto out;
    }
    if ((st = table_columns(c, &t)) != IG_OK)
        goto out;
    if ((st = statement(&t, 0, &sql)) != IG_OK ||
        sqlite3_prepare_v2(c->sq, sql.data, -1, &q, NULL) != SQLITE_OK) {
        st = ig_err_set(c->err, IG_ERR_IO, "%s: reading %s: %s", c->from, name,
                        sqlite3_errmsg(c->sq));
        goto out;
    }
    ig_buf_reset(&sql);
    if ((st = statement(&t, 1, &sql)) != IG_OK)
        goto out;
    r = PQexec(c->pg, sql.data);
    if (r == NULL || PQresultStatus(r) != PGRES_COPY_IN) {
        PQclear(r);
        st = ig_err_set(c->err, IG_ERR_IO, "%s: copying %s: %s", c->to, name,
                        PGMSG(c));
        goto out;
    }
    PQclear(r);
    st = copy_end(c, &t, send_rows(c, &t, q));
    if (st == IG_OK)
        st = identities(c, &t);
    if (st == IG_OK && fn != NULL)
        fn(ctx, name, t.rows);
out:
    sqlite3_finalize(q);
    ig_buf_release(&sql);
    table_release(&t);
    return st;
}

/* ---- the whole copy ---- */

static int
known_rank(const char *name)
{
    size_t i;

    for (i = 0; i < sizeof(first_tables) / sizeof(first_tables[0]); i++)
        if (strcmp(name, first_tables[i]) == 0)
            return (int)i;
    return (int)i;
}

/* Every table of the source, in copy order. */
static enum ig_status
copy_tables(struct copy *c, store_copy_fn fn, void *ctx)
{
    sqlite3_stmt *q = NULL;
    enum ig_status st = IG_OK;
    char *names[64];
    int n = 0, i, j;

    if (sqlite3_prepare_v2(c->sq,
                           "SELECT name FROM sqlite_master WHERE type ="
                           " 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE"
                           " '\\' ORDER BY name",
                           -1, &q, NULL) != SQLITE_OK)
        return ig_err_set(c->err, IG_ERR_IO, "%s: %s", c->from,
                          sqlite3_errmsg(c->sq));
    while (st == IG_OK && sqlite3_step(q) == SQLITE_ROW) {
        if (n == (int)(sizeof(names) / sizeof(names[0])))
            st = ig_err_set(c->err, IG_ERR_LIMIT, "%s: too many tables",
                            c->from);
        else if ((names[n] = strdup((const char *)sqlite3_column_text(q, 0))) ==
                 NULL)
            st = ig_err_set(c->err, IG_ERR_NOMEM, "out of memory");
        else
            n++;
    }
    sqlite3_finalize(q);
    /* Insertion sort by rank (then name: already in name order). */
    for (i = 1; i < n; i++)
        for (j = i; j > 0 && known_rank(names[j]) < known_rank(names[j - 1]);
             j--) {
            char *tmp = names[j];

            names[j] = names[j - 1];
            names[j - 1] = tmp;
        }
    for (i = 0; i < n && st == IG_OK; i++)
        st = copy_table(c, names[i], fn, ctx);
    for (i = 0; i < n; i++)
        free(names[i]);
    return st;
}

enum ig_status
store_copy(const char *from, const char *to, store_copy_fn fn, void *ctx,
           struct ig_err *err)
{
    struct copy c;
    enum ig_status st;

    memset(&c, 0, sizeof(c));
    c.from = from;
    c.to = to;
    c.err = err;
    ig_buf_init(&c.out, 64 * COPY_FLUSH_BYTES);
    if (store_is_postgres(from))
        return ig_err_set(err, IG_ERR_INVALID,
                          "--from must be a SQLite file, not a URL");
    if (!store_is_postgres(to))
        return ig_err_set(err, IG_ERR_INVALID,
                          "--to must be a postgresql:// URL");
    if (store_url_has_password(to))
        return ig_err_set(err, IG_ERR_INVALID,
                          "the URL holds a password, which every local user "
                          "can read on a command line (put it in PGPASSWORD "
                          "or ~/.pgpass)");
    st = open_source(&c);
    if (st == IG_OK)
        st = open_target(&c);
    if (st == IG_OK)
        st = target_empty(&c);
    if (st == IG_OK)
        st = copy_tables(&c, fn, ctx);
    if (st == IG_OK)
        st = pg_command(&c, "COMMIT", "commit");
    if (c.pg != NULL && PQtransactionStatus(c.pg) != PQTRANS_IDLE) {
        PGresult *r = PQexec(c.pg, "ROLLBACK");

        PQclear(r);
    }
    PQfinish(c.pg);
    if (c.sq != NULL)
        (void)sqlite3_exec(c.sq, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_close(c.sq);
    ig_buf_release(&c.out);
    return st;
}
