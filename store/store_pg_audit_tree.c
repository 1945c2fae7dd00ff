/*
 * store_pg_audit_tree.c - the audit tree as the PostgreSQL store keeps it
 * (store_pg_audit.c has the design): C2SP tiles in audit_tiles, written
 * by the sequencer in the transaction of the events that fill them, the
 * events themselves in audit_events (leaf index = seq - 1, the leaf hash
 * of the event's exact bytes, as in SQLite).
 *
 * At open every event is read once, in seq order and in one snapshot
 * (another replica's sequencer may be appending meanwhile), its leaf
 * hashed and pushed onto a fresh frontier; each tile that fills is
 * compared with its stored row, and the rows must be exactly those
 * tiles. Then every stored checkpoint must be the root of the tree of its
 * size. At a takeover the tree is rebuilt cheaply instead: the frontier
 * and the partial tiles from the stored tiles and the last events, and
 * the newest checkpoint checked against them.
 */
#include "store_pg_audit_tree.h"

#include <string.h>

static const char SQL_TILE[] =
    "SELECT hashes FROM audit_tiles WHERE level = $1 AND idx = $2";
static const char SQL_LEAF[] = "SELECT event FROM audit_events WHERE seq = $1";
static const char SQL_SIZE[] =
    "SELECT coalesce(max(seq), 0), count(*) FROM audit_events";
static const char SQL_EVENTS[] = "SELECT seq, event FROM audit_events "
                                 "WHERE seq > $1 ORDER BY seq LIMIT $2";
static const char SQL_NTILES[] = "SELECT count(*) FROM audit_tiles";
static const char SQL_CKPTS[] = "SELECT size, note FROM checkpoints "
                                "WHERE size > $1 ORDER BY size LIMIT 256";
static const char SQL_NEWEST[] =
    "SELECT size, note FROM checkpoints ORDER BY size DESC LIMIT 1";
static const char SQL_SNAPSHOT[] =
    "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY";

/* ---- reading tiles and leaves ---- */

/* The full tile (level, index) into out: IG_OK, IG_ERR_NOTFOUND,
   IG_ERR_INVALID (another length), IG_ERR_IO. */
static enum ig_status
read_tile(struct store_pg_tiles *t, unsigned level, uint64_t index,
          unsigned char out[AUDIT_TILE_BYTES])
{
    struct store_pg_params p;
    unsigned char *raw;
    size_t len = 0;
    enum ig_status st;
    PGresult *r;

    store_pg_params_init(&p);
    store_pg_param_int(&p, (int64_t)level);
    store_pg_param_int(&p, (int64_t)index);
    r = store_pg_query(t->s, t->c, SQL_TILE, &p, NULL, NULL);
    if (r == NULL)
        return IG_ERR_IO;
    if (PQntuples(r) == 0) {
        PQclear(r);
        return IG_ERR_NOTFOUND;
    }
    raw = PQunescapeBytea((const unsigned char *)PQgetvalue(r, 0, 0), &len);
    PQclear(r);
    if (raw == NULL)
        return IG_ERR_IO;
    st = len == AUDIT_TILE_BYTES ? IG_OK : IG_ERR_INVALID;
    if (st == IG_OK)
        memcpy(out, raw, AUDIT_TILE_BYTES);
    PQfreemem(raw);
    return st;
}

static enum ig_status
t_tile(void *ctx, unsigned level, uint64_t index, const unsigned char **out)
{
    struct store_pg_tiles *t = ctx;

    *out = t->tile;
    return read_tile(t, level, index, t->tile);
}

static enum ig_status
t_entry(void *ctx, unsigned level, uint64_t index,
        unsigned char out[AUDIT_HASH_BYTES])
{
    const struct store_pg_tiles *t = ctx;

    memcpy(out, t->edge->hash[level][index % AUDIT_TILE_WIDTH],
           AUDIT_HASH_BYTES);
    return IG_OK;
}

/* The leaf hash of leaf index, from its event. */
static enum ig_status
t_leaf(void *ctx, uint64_t index, unsigned char out[AUDIT_HASH_BYTES])
{
    struct store_pg_tiles *t = ctx;
    struct store_pg_params p;
    PGresult *r;
    enum ig_status st = IG_ERR_IO;

    store_pg_params_init(&p);
    store_pg_param_int(&p, (int64_t)index + 1);
    r = store_pg_query(t->s, t->c, SQL_LEAF, &p, NULL, NULL);
    if (r != NULL && PQntuples(r) == 1) {
        audit_leaf_hash(PQgetvalue(r, 0, 0), (size_t)PQgetlength(r, 0, 0), out);
        st = IG_OK;
    }
    PQclear(r);
    return st;
}

enum ig_status
store_pg_tree_edge_rebuild(struct store_pg_seq *q)
{
    struct audit_tile_src src = {q->audit.tree.size, t_tile, NULL, t_leaf,
                                 &q->rd};
    uint64_t first;
    unsigned l, i, w;

    q->edge.size = UINT64_MAX; /* not valid until done */
    for (l = 0; l < AUDIT_TILE_LEVELS; l++) {
        w = audit_tile_width(src.size, l);
        first = audit_tile_count(src.size, l) * AUDIT_TILE_WIDTH;
        for (i = 0; i < w; i++)
            if (audit_tile_node(&src, l * AUDIT_TILE_HEIGHT, first + i,
                                q->edge.hash[l][i]) != IG_OK)
                return IG_ERR_IO;
    }
    q->edge.size = src.size;
    return IG_OK;
}

enum ig_status
store_pg_tree_fetch(void *ctx, unsigned level, uint64_t index,
                    unsigned char out[AUDIT_HASH_BYTES])
{
    struct store_pg_seq *q = ctx;
    struct audit_tile_src src = {q->audit.tree.size, t_tile, t_entry, NULL,
                                 &q->rd};

    if (q->edge.size != q->audit.tree.size &&
        store_pg_tree_edge_rebuild(q) != IG_OK)
        return IG_ERR_IO;
    q->rd.edge = &q->edge;
    return audit_tile_node(&src, level, index, out);
}

/* One number of the first row: 0, or -1. */
static int
query_u64(struct store_pg *s, struct store_pg_conn *c, const char *sql, int col,
          uint64_t *out)
{
    PGresult *r = store_pg_query(s, c, sql, NULL, NULL, NULL);
    int rc = -1;

    if (r != NULL && PQntuples(r) == 1 && store_pg_int(r, 0, col) >= 0) {
        *out = (uint64_t)store_pg_int(r, 0, col);
        rc = 0;
    }
    PQclear(r);
    return rc;
}

/* ---- head ---- */

/* audit_fetch_fn over t, its tree from tiles and leaves alone. */
static enum ig_status
head_fetch(void *ctx, unsigned level, uint64_t index,
           unsigned char out[AUDIT_HASH_BYTES])
{
    struct store_pg_tiles *t = ctx;
    struct audit_tile_src src = {t->size, t_tile, NULL, t_leaf, t};

    return audit_tile_node(&src, level, index, out);
}

enum ig_status
store_pg_tree_head(struct store_pg *s, struct store_pg_conn *c, uint64_t *size,
                   unsigned char root[AUDIT_HASH_BYTES])
{
    struct store_pg_tiles *t = calloc(1, sizeof(*t));
    enum ig_status st = IG_ERR_IO;

    if (t == NULL)
        return IG_ERR_NOMEM;
    t->s = s;
    t->c = c;
    if (query_u64(s, c, SQL_SIZE, 0, size) == 0) {
        t->size = *size;
        st = audit_root_at(*size, head_fetch, t, root);
    }
    free(t);
    return st == IG_OK ? IG_OK : IG_ERR_IO;
}

/* ---- the takeover ---- */

static enum ig_status
load_body(struct store_pg *s, struct store_pg_conn *c, void *arg)
{
    struct store_pg_seq *q = arg;
    struct ig_err *err = q->load_err;
    uint64_t size = 0, count = 0;
    PGresult *r;
    enum ig_status st;

    (void)c;
    if (store_pg_exec(s, c, SQL_SNAPSHOT, NULL) != IG_OK ||
        query_u64(s, c, SQL_SIZE, 0, &size) != 0 ||
        query_u64(s, c, SQL_SIZE, 1, &count) != 0)
        return ig_err_set(err, IG_ERR_IO, "cannot read the audit log");
    if (count != size)
        return ig_err_set(err, IG_ERR_IO,
                          "audit log check: audit_events holds %llu rows "
                          "but its last seq is %llu: a gap",
                          (unsigned long long)count, (unsigned long long)size);
    memset(&q->audit, 0, sizeof(q->audit));
    q->audit.tree.size = size;
    q->rd.edge = NULL;
    if (store_pg_tree_edge_rebuild(q) != IG_OK ||
        audit_frontier_load(&q->audit.tree, size, store_pg_tree_fetch, q) !=
            IG_OK)
        return ig_err_set(err, IG_ERR_IO,
                          "cannot rebuild the audit tree of %llu leaves from "
                          "audit_tiles",
                          (unsigned long long)size);
    r = store_pg_query(s, c, SQL_NEWEST, NULL, NULL, NULL);
    if (r == NULL)
        return ig_err_set(err, IG_ERR_IO, "cannot read checkpoints");
    st = IG_OK;
    if (PQntuples(r) == 1)
        st = store_anchor_check_stored(&q->anchor,
                                       (uint64_t)store_pg_int(r, 0, 0),
                                       store_pg_text(r, 0, 1), err);
    PQclear(r);
    return st;
}

enum ig_status
store_pg_tree_load(struct store_pg_seq *q, struct ig_err *err)
{
    q->load_err = err;
    return store_pg_txn_on(q->s, &q->conn, load_body, q) == IG_OK ? IG_OK
                                                                  : IG_ERR_IO;
}

/* ---- the check at open ---- */

struct check {
    struct store_pg_seq *q;
    struct audit_frontier tree;
    struct audit_tile_edge edge; /* the tiles being recomputed */
    uint64_t tiles;              /* full tiles compared */
    unsigned char row[AUDIT_TILE_BYTES];
    struct ig_err *err;
    enum ig_status st;
};

/* The first entry where the stored tile differs from the recomputed. */
static unsigned
first_diff(const unsigned char *stored, const unsigned char *want)
{
    unsigned i;

    for (i = 0; i < AUDIT_TILE_WIDTH - 1; i++)
        if (memcmp(stored + i * AUDIT_HASH_BYTES, want + i * AUDIT_HASH_BYTES,
                   AUDIT_HASH_BYTES) != 0)
            break;
    return i;
}

/* A recomputed full tile (tl, tn) against its row. */
static void
compare_tile(struct check *k, unsigned tl, uint64_t tn)
{
    const unsigned char *want = k->edge.hash[tl][0];
    unsigned shift = AUDIT_TILE_HEIGHT * (tl + 1), i;
    unsigned long long first = tn << shift, last = ((tn + 1) << shift) - 1;
    char name[AUDIT_TILE_NAME_MAX];
    enum ig_status st = read_tile(&k->q->rd, tl, tn, k->row);

    audit_tile_name(tl, tn, name);
    if (st == IG_ERR_NOTFOUND)
        k->st = ig_err_set(k->err, IG_ERR_IO,
                           "audit log check: %s (leaves %llu to %llu) is "
                           "missing from audit_tiles: the tree was edited; "
                           "refusing to start",
                           name, first, last);
    else if (st == IG_ERR_INVALID)
        k->st = ig_err_set(k->err, IG_ERR_IO,
                           "audit log check: %s in audit_tiles is not %d "
                           "bytes: the tree was edited; refusing to start",
                           name, AUDIT_TILE_BYTES);
    else if (st != IG_OK)
        k->st = ig_err_set(k->err, IG_ERR_IO, "cannot read audit_tiles");
    else if (memcmp(k->row, want, AUDIT_TILE_BYTES) == 0)
        return;
    else if (tl == 0) {
        i = first_diff(k->row, want);
        k->st = ig_err_set(k->err, IG_ERR_IO,
                           "audit log check: leaf %llu (audit_events seq "
                           "%llu) does not hash to its stored leaf hash "
                           "(entry %u of %s): the event or the tile was "
                           "edited; refusing to start",
                           first + i, first + i + 1, i, name);
    } else {
        i = first_diff(k->row, want);
        k->st = ig_err_set(k->err, IG_ERR_IO,
                           "audit log check: entry %u of %s (leaves %llu to "
                           "%llu) is not the one the events make: "
                           "audit_tiles was edited; refusing to start",
                           i, name, first, last);
    }
}

/* audit_node_fn: collect tile entries; compare a tile that fills. */
static int
check_node(void *ctx, unsigned level, uint64_t index,
           const unsigned char hash[AUDIT_HASH_BYTES])
{
    struct check *k = ctx;
    uint64_t tn;
    unsigned tl;

    if (!audit_tile_edge_put(&k->edge, level, index, hash, &tl, &tn))
        return 0;
    compare_tile(k, tl, tn);
    k->tiles++;
    return k->st == IG_OK ? 0 : -1;
}

/* The events after k->tree's size, one page: how many were read, -1 on
   an error (k->st). */
static int
check_page(struct check *k)
{
    struct store_pg_seq *q = k->q;
    struct store_pg_params p;
    unsigned char leaf[AUDIT_HASH_BYTES];
    PGresult *r;
    int i, n;

    store_pg_params_init(&p);
    store_pg_param_int(&p, (int64_t)k->tree.size);
    store_pg_param_int(&p, STORE_PG_SEQ_CHECK_ROWS);
    r = store_pg_query(q->s, &q->conn, SQL_EVENTS, &p, NULL, NULL);
    if (r == NULL) {
        k->st = ig_err_set(k->err, IG_ERR_IO, "cannot read the audit log");
        return -1;
    }
    n = PQntuples(r);
    for (i = 0; i < n && k->st == IG_OK; i++) {
        long long seq = (long long)store_pg_int(r, i, 0);

        if (seq != (long long)k->tree.size + 1) {
            k->st = ig_err_set(k->err, IG_ERR_IO,
                               "audit log check: leaf %llu is missing (a gap "
                               "in audit_events.seq: the next row is seq "
                               "%lld); refusing to start",
                               (unsigned long long)k->tree.size, seq);
            break;
        }
        audit_leaf_hash(PQgetvalue(r, i, 1), (size_t)PQgetlength(r, i, 1),
                        leaf);
        if (audit_frontier_append(&k->tree, leaf, check_node, k) != IG_OK &&
            k->st == IG_OK)
            k->st = ig_err_set(k->err, IG_ERR_IO,
                               "audit log check: cannot add leaf %llu",
                               (unsigned long long)k->tree.size);
    }
    PQclear(r);
    return k->st == IG_OK ? n : -1;
}

/* Every stored checkpoint against the tree, in size order. */
static enum ig_status
check_checkpoints(struct store_pg_seq *q, struct ig_err *err)
{
    struct store_pg_params p;
    uint64_t after = 0;
    enum ig_status st = IG_OK;
    PGresult *r;
    int i, n;

    do {
        store_pg_params_init(&p);
        store_pg_param_int(&p, (int64_t)after);
        r = store_pg_query(q->s, &q->conn, SQL_CKPTS, &p, NULL, NULL);
        if (r == NULL)
            return ig_err_set(err, IG_ERR_IO, "cannot read checkpoints");
        n = PQntuples(r);
        for (i = 0; i < n && st == IG_OK; i++) {
            after = (uint64_t)store_pg_int(r, i, 0);
            st = store_anchor_check_stored(&q->anchor, after,
                                           store_pg_text(r, i, 1), err);
        }
        PQclear(r);
    } while (st == IG_OK && n > 0);
    return st;
}

static enum ig_status
check_body(struct store_pg *s, struct store_pg_conn *c, void *arg)
{
    struct check *k = arg;
    struct store_pg_seq *q = k->q;
    uint64_t ntiles = 0;
    int n;

    if (store_pg_exec(s, c, SQL_SNAPSHOT, NULL) != IG_OK)
        return ig_err_set(k->err, IG_ERR_IO, "cannot read the audit log");
    while ((n = check_page(k)) == STORE_PG_SEQ_CHECK_ROWS)
        ;
    if (n < 0)
        return IG_ERR_IO;
    if (query_u64(s, c, SQL_NTILES, 0, &ntiles) != 0)
        return ig_err_set(k->err, IG_ERR_IO, "cannot read audit_tiles");
    if (ntiles != k->tiles)
        return ig_err_set(k->err, IG_ERR_IO,
                          "audit log check: audit_tiles holds %llu tiles, "
                          "the log of %llu leaves makes %llu: tiles past the "
                          "log; refusing to start",
                          (unsigned long long)ntiles,
                          (unsigned long long)k->tree.size,
                          (unsigned long long)k->tiles);
    memset(&q->audit, 0, sizeof(q->audit));
    q->audit.tree = k->tree;
    q->edge = k->edge;
    q->edge.size = k->tree.size;
    return check_checkpoints(q, k->err);
}

enum ig_status
store_pg_tree_check(struct store_pg_seq *q, struct ig_err *err)
{
    struct check *k = calloc(1, sizeof(*k));
    enum ig_status st;

    ig_err_clear(err);
    if (k == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    k->q = q;
    k->err = err;
    audit_frontier_init(&k->tree);
    st = store_pg_txn_on(q->s, &q->conn, check_body, k);
    free(k);
    if (st != IG_OK && err->msg[0] == '\0')
        (void)ig_err_set(err, IG_ERR_IO, "cannot read the audit log");
    return st == IG_OK ? IG_OK : IG_ERR_IO;
}
