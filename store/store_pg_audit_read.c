/*
 * store_pg_audit_read.c - reading the PostgreSQL store's audit log for its
 * HTTP endpoints: waiting until what was committed is sequenced, stored
 * checkpoints, pages of leaves, inclusion and consistency proofs (the
 * auditors' pages' reads are in store_pg_audit_view.c, on the helpers
 * here).
 *
 * Settling: replicas append events to audit_queue; only the sequencer
 * (store_pg_audit.c) moves them into audit_events. A client that reads
 * the log right after its own write must see it, so each read first
 * notes the highest queued id and waits - on s->seq_cv, which the
 * listener broadcasts when the sequencer NOTIFYs ig_sequenced, and at
 * least every SETTLE_TICK_MS in case a notification was lost - until no
 * queue row at or below it remains. It gives up (IG_ERR_IO: the PDP
 * answers 503, never a log without the caller's events) after its bound.
 *
 * Each read then runs in ONE read-only REPEATABLE READ transaction, so a
 * checkpoint and the tiles its proof is built from come from the same
 * snapshot. Proofs are built from the stored tiles (audit_tiles, O(log n)
 * rows, audit/audit_tile.h); the entries of the partial tiles at the
 * checkpoint's right edge are recomputed from the last events (at level
 * 0) or from the full tiles below. Stored bytes are untrusted: a tile of
 * another length is IG_ERR_INVALID, never read past.
 */
#include "store_pg_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "audit_tile.h"

#define SETTLE_TICK_MS 100 /* re-check at least this often */

static const char SQL_QUEUE_MAX[] = "SELECT max(id) FROM audit_queue";
static const char SQL_QUEUE_LEFT[] =
    "SELECT (EXISTS (SELECT 1 FROM audit_queue WHERE id <= $1))::int";
static const char SQL_SIZE[] = "SELECT coalesce(max(seq), 0) FROM audit_events";
static const char SQL_CKPT_LATEST[] =
    "SELECT size, note FROM checkpoints ORDER BY size DESC LIMIT 1";
static const char SQL_CKPT_SIZE[] =
    "SELECT size, note FROM checkpoints WHERE size = $1";
static const char SQL_TILE[] =
    "SELECT hashes FROM audit_tiles WHERE level = $1 AND idx = $2";
static const char SQL_EVENT[] = "SELECT event FROM audit_events WHERE seq = $1";
static const char SQL_LEAVES[] =
    "SELECT seq, event FROM audit_events WHERE seq > $1 AND seq <= $2"
    " ORDER BY seq LIMIT " STORE_PG_PAGE_ROWS_TEXT;

/* ---- settling ---- */

static double
mono_ms(void)
{
    struct timespec t;

    (void)clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* One statement with at most one int parameter and one row, one column:
 *v (0 for NULL), *null. IG_ERR_IO. */
static enum ig_status
one_int(struct store_pg *s, const char *sql, int has_arg, int64_t arg,
        int64_t *v, int *null)
{
    struct ig_err err;
    struct store_pg_conn *c = store_pg_conn_get(s, &err);
    struct store_pg_params p;
    PGresult *r;
    enum ig_status st = IG_ERR_IO;

    if (c == NULL) {
        store_pg_log(s, "warn", "store.pg_unavailable",
                     json_pack("{s:s}", "message", err.msg));
        return IG_ERR_IO;
    }
    store_pg_params_init(&p);
    if (has_arg)
        store_pg_param_int(&p, arg);
    r = store_pg_query(s, c, sql, &p, NULL, NULL);
    if (r != NULL && PQntuples(r) == 1 && PQnfields(r) == 1) {
        *null = PQgetisnull(r, 0, 0);
        *v = store_pg_int(r, 0, 0);
        st = IG_OK;
    }
    PQclear(r);
    store_pg_conn_put(s, c);
    return st;
}

/* Wait on seq_cv until the sequencer announces a size other than seen, or
   SETTLE_TICK_MS pass (never beyond the deadline). */
static void
settle_wait(struct store_pg *s, uint64_t seen, double deadline_ms)
{
    struct timespec until;
    double left = deadline_ms - mono_ms();
    long ms;

    if (left <= 0)
        return;
    ms = left < SETTLE_TICK_MS ? (long)left + 1 : SETTLE_TICK_MS;
    (void)clock_gettime(CLOCK_REALTIME, &until); /* seq_cv's clock */
    until.tv_nsec += (ms % 1000) * 1000000L;
    until.tv_sec += ms / 1000 + until.tv_nsec / 1000000000L;
    until.tv_nsec %= 1000000000L;
    (void)pthread_mutex_lock(&s->seq_mu);
    while (s->sequenced == seen &&
           pthread_cond_timedwait(&s->seq_cv, &s->seq_mu, &until) != ETIMEDOUT)
        ;
    (void)pthread_mutex_unlock(&s->seq_mu);
}

enum ig_status
store_pg_audit_settle(struct store_pg *s, int ms)
{
    double deadline = mono_ms() + (ms > 0 ? ms : 0);
    int64_t mark = 0, left = 0;
    uint64_t seen;
    int null = 0;

    if (one_int(s, SQL_QUEUE_MAX, 0, 0, &mark, &null) != IG_OK)
        return IG_ERR_IO;
    if (null)
        return IG_OK; /* nothing queued */
    for (;;) {
        (void)pthread_mutex_lock(&s->seq_mu);
        seen = s->sequenced;
        (void)pthread_mutex_unlock(&s->seq_mu);
        if (one_int(s, SQL_QUEUE_LEFT, 1, mark, &left, &null) != IG_OK)
            return IG_ERR_IO;
        if (left == 0)
            return IG_OK;
        if (mono_ms() >= deadline)
            break;
        settle_wait(s, seen, deadline);
    }
    store_pg_log(
        s, "warn", "audit.settle_timeout",
        json_pack("{s:I, s:i}", "queued_id", (json_int_t)mark, "ms", ms));
    return IG_ERR_IO;
}

/* ---- one read transaction ---- */

static enum ig_status
plain(struct store_pg_conn *c, const char *sql)
{
    PGresult *r = PQexec(c->pg, sql);
    enum ig_status st = IG_OK;

    if (r == NULL || PQresultStatus(r) != PGRES_COMMAND_OK) {
        c->bad = 1;
        st = IG_ERR_IO;
    }
    PQclear(r);
    return st;
}

struct store_pg_conn *
store_pg_read_begin(struct store_pg *s, int settle_ms)
{
    struct ig_err err;
    struct store_pg_conn *c;

    if (settle_ms > 0 && store_pg_audit_settle(s, settle_ms) != IG_OK)
        return NULL;
    if ((c = store_pg_conn_get(s, &err)) == NULL) {
        store_pg_log(s, "warn", "store.pg_unavailable",
                     json_pack("{s:s}", "message", err.msg));
        return NULL;
    }
    if (plain(c, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY") != IG_OK) {
        store_pg_conn_put(s, c);
        return NULL;
    }
    return c;
}

void
store_pg_read_end(struct store_pg *s, struct store_pg_conn *c)
{
    if (c == NULL)
        return;
    if (!c->bad && PQtransactionStatus(c->pg) != PQTRANS_IDLE)
        (void)plain(c, "COMMIT");
    store_pg_conn_put(s, c);
}

enum ig_status
store_pg_pages(struct store_pg *s, struct store_pg_conn *c, const char *sql,
               struct store_pg_params *p, store_pg_row_fn fn, void *ctx)
{
    enum ig_status st = IG_OK;
    int stop = 0, n, i;

    for (;;) {
        PGresult *r = store_pg_query(s, c, sql, p, NULL, NULL);

        if (r == NULL)
            return IG_ERR_IO;
        n = PQntuples(r);
        for (i = 0; i < n && st == IG_OK && !stop; i++)
            st = fn(ctx, r, i, &stop);
        if (n > 0) { /* go on after the last row's key */
            (void)snprintf(p->num[0], sizeof(p->num[0]), "%s",
                           PQgetvalue(r, n - 1, 0));
            p->v[0] = p->num[0];
        }
        PQclear(r);
        if (st != IG_OK || stop || n < STORE_PG_PAGE_ROWS)
            return st;
    }
}

/* ---- the reads ---- */

enum ig_status
store_pg_audit_size(struct store_pg *s, int64_t *out)
{
    int null = 0;

    if (store_pg_audit_settle(s, STORE_PG_SETTLE_MS) != IG_OK)
        return IG_ERR_IO;
    return one_int(s, SQL_SIZE, 0, 0, out, &null);
}

/* The checkpoint of tree size `size` (0: the latest). note may be NULL
   when only its existence matters. */
static enum ig_status
read_checkpoint(struct store_pg *s, struct store_pg_conn *c, uint64_t size,
                char **note, uint64_t *out_size)
{
    struct store_pg_params p;
    PGresult *r;
    enum ig_status st = IG_ERR_IO;

    if (size > (uint64_t)INT64_MAX)
        return IG_ERR_NOTFOUND;
    store_pg_params_init(&p);
    if (size > 0)
        store_pg_param_int(&p, (int64_t)size);
    r = store_pg_query(s, c, size > 0 ? SQL_CKPT_SIZE : SQL_CKPT_LATEST, &p,
                       NULL, NULL);
    if (r != NULL && PQntuples(r) == 0) {
        st = IG_ERR_NOTFOUND;
    } else if (r != NULL && store_pg_int(r, 0, 0) > 0) {
        *out_size = (uint64_t)store_pg_int(r, 0, 0);
        st = IG_OK;
        if (note != NULL) {
            *note = strdup(store_pg_text(r, 0, 1));
            st = *note != NULL ? IG_OK : IG_ERR_NOMEM;
        }
    }
    PQclear(r);
    return st;
}

enum ig_status
store_pg_checkpoint_get(struct store_pg *s, uint64_t size, char **note,
                        uint64_t *out_size)
{
    struct store_pg_conn *c = store_pg_read_begin(s, STORE_PG_SETTLE_MS);
    enum ig_status st;

    *note = NULL;
    if (c == NULL)
        return IG_ERR_IO;
    st = read_checkpoint(s, c, size, note, out_size);
    store_pg_read_end(s, c);
    return st;
}

/* The number of events (dense: seq runs 1..n) in c's snapshot. */
static enum ig_status
log_size(struct store_pg *s, struct store_pg_conn *c, uint64_t *out)
{
    PGresult *r = store_pg_query(s, c, SQL_SIZE, NULL, NULL, NULL);
    enum ig_status st = IG_ERR_IO;

    if (r != NULL && PQntuples(r) == 1 && store_pg_int(r, 0, 0) >= 0) {
        *out = (uint64_t)store_pg_int(r, 0, 0);
        st = IG_OK;
    }
    PQclear(r);
    return st;
}

struct leaves {
    uint64_t start;
    size_t max_bytes;
    struct ig_buf *out;
    uint64_t *count;
};

static enum ig_status
leaf_row(void *ctx, const PGresult *r, int row, int *stop)
{
    struct leaves *l = ctx;
    size_t len = (size_t)PQgetlength(r, row, 1);
    enum ig_status st;

    if (store_pg_int(r, row, 0) != (int64_t)(l->start + *l->count + 1))
        return IG_ERR_IO; /* a gap: the log was edited */
    if (*l->count > 0 && l->out->len + len + 1 > l->max_bytes) {
        *stop = 1;
        return IG_OK;
    }
    st = ig_buf_add(l->out, PQgetvalue(r, row, 1), len);
    if (st == IG_OK)
        st = ig_buf_addc(l->out, '\n');
    if (st == IG_OK)
        (*l->count)++;
    return st;
}

enum ig_status
store_pg_audit_leaves(struct store_pg *s, uint64_t start, uint64_t end,
                      size_t max_bytes, struct ig_buf *out, uint64_t *tree_size,
                      uint64_t *count)
{
    struct store_pg_conn *c = store_pg_read_begin(s, STORE_PG_SETTLE_MS);
    struct leaves l = {start, max_bytes, out, count};
    struct store_pg_params p;
    enum ig_status st;

    *count = 0;
    if (c == NULL)
        return IG_ERR_IO;
    st = log_size(s, c, tree_size);
    if (st == IG_OK && end > *tree_size)
        end = *tree_size;
    if (st == IG_OK && start < end) {
        store_pg_params_init(&p);
        store_pg_param_int(&p, (int64_t)start);
        store_pg_param_int(&p, (int64_t)end);
        st = store_pg_pages(s, c, SQL_LEAVES, &p, leaf_row, &l);
    }
    store_pg_read_end(s, c);
    return st;
}

/* ---- proofs from the stored tiles ---- */

/* Where a proof's tiles come from: c, and a copy of the last tile. */
struct rtiles {
    struct store_pg *s;
    struct store_pg_conn *c;
    struct audit_tile_src src;
    unsigned char tile[AUDIT_TILE_BYTES];
};

static int
hexval(char ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F')
        return ch - 'A' + 10;
    return -1;
}

enum ig_status
store_pg_bytea(const char *text, size_t len, unsigned char *out, size_t n)
{
    size_t i;
    int hi, lo;

    if (len != 2 + 2 * n || text[0] != '\\' || text[1] != 'x')
        return IG_ERR_INVALID;
    for (i = 0; i < n; i++) {
        hi = hexval(text[2 + 2 * i]);
        lo = hexval(text[3 + 2 * i]);
        if (hi < 0 || lo < 0)
            return IG_ERR_INVALID;
        out[i] = (unsigned char)(hi << 4 | lo);
    }
    return IG_OK;
}

static enum ig_status
rtile(void *ctx, unsigned level, uint64_t index, const unsigned char **out)
{
    struct rtiles *t = ctx;
    struct store_pg_params p;
    PGresult *r;
    enum ig_status st = IG_ERR_IO;

    *out = t->tile;
    if (index > (uint64_t)INT64_MAX)
        return IG_ERR_NOTFOUND;
    store_pg_params_init(&p);
    store_pg_param_int(&p, (int64_t)level);
    store_pg_param_int(&p, (int64_t)index);
    r = store_pg_query(t->s, t->c, SQL_TILE, &p, NULL, NULL);
    if (r != NULL && PQntuples(r) == 0)
        st = IG_ERR_NOTFOUND;
    else if (r != NULL)
        st = store_pg_bytea(PQgetvalue(r, 0, 0), (size_t)PQgetlength(r, 0, 0),
                            t->tile, AUDIT_TILE_BYTES);
    PQclear(r);
    return st;
}

/* The leaf hash of leaf index, from its event. */
static enum ig_status
rleaf(void *ctx, uint64_t index, unsigned char out[AUDIT_HASH_BYTES])
{
    struct rtiles *t = ctx;
    struct store_pg_params p;
    PGresult *r;
    enum ig_status st = IG_ERR_IO;

    if (index >= (uint64_t)INT64_MAX)
        return IG_ERR_NOTFOUND;
    store_pg_params_init(&p);
    store_pg_param_int(&p, (int64_t)index + 1);
    r = store_pg_query(t->s, t->c, SQL_EVENT, &p, NULL, NULL);
    if (r != NULL && PQntuples(r) == 1) {
        audit_leaf_hash(PQgetvalue(r, 0, 0), (size_t)PQgetlength(r, 0, 0), out);
        st = IG_OK;
    }
    PQclear(r);
    return st;
}

/* Ready for the tree of size leaves on c (heap: 8 KiB). */
static struct rtiles *
rtiles_new(struct store_pg *s, struct store_pg_conn *c, uint64_t size)
{
    struct rtiles *t = malloc(sizeof(*t));

    if (t == NULL)
        return NULL;
    t->s = s;
    t->c = c;
    t->src.size = size;
    t->src.tile = rtile;
    t->src.entry = NULL;
    t->src.leaf = rleaf;
    t->src.ctx = t;
    return t;
}

enum ig_status
store_pg_audit_inclusion(struct store_pg *s, uint64_t index, uint64_t size,
                         unsigned char proof[][AUDIT_HASH_BYTES], size_t *n,
                         char **note, uint64_t *out_size)
{
    struct store_pg_conn *c = store_pg_read_begin(s, STORE_PG_SETTLE_MS);
    struct rtiles *t = NULL;
    enum ig_status st;

    *note = NULL;
    *n = 0;
    if (c == NULL)
        return IG_ERR_IO;
    st = read_checkpoint(s, c, size, note, out_size);
    if (st == IG_OK && index >= *out_size)
        st = IG_ERR_INVALID;
    if (st == IG_OK && (t = rtiles_new(s, c, *out_size)) == NULL)
        st = IG_ERR_NOMEM;
    if (st == IG_OK && audit_inclusion_proof(index, *out_size, audit_tile_node,
                                             &t->src, proof, n) != IG_OK)
        st = IG_ERR_IO;
    free(t);
    store_pg_read_end(s, c);
    if (st != IG_OK) {
        free(*note);
        *note = NULL;
    }
    return st;
}

enum ig_status
store_pg_audit_consistency(struct store_pg *s, uint64_t old_size,
                           uint64_t new_size,
                           unsigned char proof[][AUDIT_HASH_BYTES], size_t *n)
{
    struct store_pg_conn *c;
    struct rtiles *t = NULL;
    enum ig_status st;
    uint64_t got = 0;

    *n = 0;
    if (old_size == 0 || old_size > new_size)
        return IG_ERR_INVALID;
    if ((c = store_pg_read_begin(s, STORE_PG_SETTLE_MS)) == NULL)
        return IG_ERR_IO;
    st = read_checkpoint(s, c, old_size, NULL, &got);
    if (st == IG_OK)
        st = read_checkpoint(s, c, new_size, NULL, &got);
    if (st == IG_OK && (t = rtiles_new(s, c, new_size)) == NULL)
        st = IG_ERR_NOMEM;
    if (st == IG_OK &&
        audit_consistency_proof(old_size, new_size, audit_tile_node, &t->src,
                                proof, n) != IG_OK)
        st = IG_ERR_IO;
    free(t);
    store_pg_read_end(s, c);
    return st;
}
