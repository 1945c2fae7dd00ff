/*
 * store_audit_edge.c - the audit tree's subtree hashes as the writer
 * reads them (for roots, proofs and checkpoints): from the stored tiles
 * and the writer's partial tiles at the right edge (s->edge), which are
 * rebuilt from the tiles and the last events when they no longer
 * describe the tree (at open, after a rollback). Below the append path
 * (store_audit.c) and the anchor (store_anchor.c), which both read
 * through it.
 */
#include "store_int.h"

#include <string.h>

static enum ig_status
wtile(void *ctx, unsigned level, uint64_t index, const unsigned char **out)
{
    struct store_sq *s = ctx;
    enum ig_status st =
        store_audit_fetch_tile(s->wst[W_NODE_GET], level, index, s->wtile);

    *out = s->wtile;
    return st;
}

static enum ig_status
wentry(void *ctx, unsigned level, uint64_t index,
       unsigned char out[AUDIT_HASH_BYTES])
{
    struct store_sq *s = ctx;

    memcpy(out, s->edge.hash[level][index % AUDIT_TILE_WIDTH],
           AUDIT_HASH_BYTES);
    return IG_OK;
}

/* The leaf hash of leaf index, from its event (rebuilding the edge). */
static enum ig_status
wleaf(void *ctx, uint64_t index, unsigned char out[AUDIT_HASH_BYTES])
{
    struct store_sq *s = ctx;
    sqlite3_stmt *q = NULL;
    enum ig_status st = IG_ERR_IO;

    if (sqlite3_prepare_v2(s->wdb,
                           "SELECT event FROM audit_events WHERE seq = ?1", -1,
                           &q, NULL) == SQLITE_OK &&
        sqlite3_bind_int64(q, 1, (sqlite3_int64)index + 1) == SQLITE_OK &&
        sqlite3_step(q) == SQLITE_ROW) {
        audit_leaf_hash(sqlite3_column_text(q, 0),
                        (size_t)sqlite3_column_bytes(q, 0), out);
        st = IG_OK;
    }
    sqlite3_finalize(q);
    return st;
}

enum ig_status
store_audit_edge_rebuild(struct store_sq *s)
{
    struct audit_tile_src src = {s->audit.tree.size, wtile, NULL, wleaf, s};
    uint64_t first;
    unsigned l, i, w;
    enum ig_status st;

    s->edge.size = UINT64_MAX; /* not valid until done */
    for (l = 0; l < AUDIT_TILE_LEVELS; l++) {
        w = audit_tile_width(src.size, l);
        first = audit_tile_count(src.size, l) * AUDIT_TILE_WIDTH;
        for (i = 0; i < w; i++) {
            st = audit_tile_node(&src, l * AUDIT_TILE_HEIGHT, first + i,
                                 s->edge.hash[l][i]);
            if (st != IG_OK)
                return IG_ERR_IO;
        }
    }
    s->edge.size = src.size;
    return IG_OK;
}

enum ig_status
store_audit_edge_sync(struct store_sq *s)
{
    if (s->edge.size == s->audit.tree.size)
        return IG_OK;
    return store_audit_edge_rebuild(s);
}

enum ig_status
store_audit_wfetch(void *ctx, unsigned level, uint64_t index,
                   unsigned char out[AUDIT_HASH_BYTES])
{
    struct store_sq *s = ctx;
    struct audit_tile_src src = {s->audit.tree.size, wtile, wentry, NULL, s};

    if (store_audit_edge_sync(s) != IG_OK)
        return IG_ERR_IO;
    return audit_tile_node(&src, level, index, out);
}
