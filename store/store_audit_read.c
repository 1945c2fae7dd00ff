/*
 * store_audit_read.c - reading the audit log for its HTTP endpoints:
 * stored checkpoints, pages of leaves, inclusion and consistency proofs.
 *
 * Each call borrows a read connection and holds one read transaction, so
 * a checkpoint and the tiles its proof is built from come from the same
 * committed state. Proofs are built from the stored tiles (audit_tiles,
 * O(log n) rows, audit/audit_tile.h); only the entries of the partial
 * tiles at the checkpoint's right edge are recomputed, from the last
 * events (at level 0) or from the full tiles below.
 */
#include "store_int.h"

#include <stdlib.h>
#include <string.h>

/* Where a proof's tiles come from: c, and a copy of the last tile. */
struct rtiles {
    struct store_rconn *c;
    struct audit_tile_src src;
    unsigned char tile[AUDIT_TILE_BYTES];
};

static enum ig_status
rtile(void *ctx, unsigned level, uint64_t index, const unsigned char **out)
{
    struct rtiles *t = ctx;

    *out = t->tile;
    return store_audit_fetch_tile(t->c->st[R_NODE], level, index, t->tile);
}

/* The leaf hash of leaf index, from its event. */
static enum ig_status
rleaf(void *ctx, uint64_t index, unsigned char out[AUDIT_HASH_BYTES])
{
    struct rtiles *t = ctx;
    sqlite3_stmt *st = t->c->st[R_LEAVES];
    enum ig_status rc = IG_ERR_IO;

    (void)sqlite3_bind_int64(st, 1, (sqlite3_int64)index);
    (void)sqlite3_bind_int64(st, 2, (sqlite3_int64)index + 1);
    if (sqlite3_step(st) == SQLITE_ROW &&
        sqlite3_column_int64(st, 0) == (sqlite3_int64)index + 1) {
        audit_leaf_hash(sqlite3_column_text(st, 1),
                        (size_t)sqlite3_column_bytes(st, 1), out);
        rc = IG_OK;
    }
    (void)sqlite3_reset(st);
    (void)sqlite3_clear_bindings(st);
    return rc;
}

/* Ready t for the tree of size leaves on c (t is heap: 8 KiB). */
static struct rtiles *
rtiles_new(struct store_rconn *c, uint64_t size)
{
    struct rtiles *t = malloc(sizeof(*t));

    if (t == NULL)
        return NULL;
    t->c = c;
    t->src.size = size;
    t->src.tile = rtile;
    t->src.entry = NULL;
    t->src.leaf = rleaf;
    t->src.ctx = t;
    return t;
}

/* The checkpoint of tree size `size` (0: the latest). note may be NULL
   when only its existence matters. */
static enum ig_status
read_checkpoint(struct store_rconn *c, uint64_t size, char **note,
                uint64_t *out_size)
{
    sqlite3_stmt *st = c->st[size == 0 ? R_CKPT_LATEST : R_CKPT_SIZE];
    enum ig_status rc = IG_ERR_IO;
    int step;

    if (size > 0)
        (void)sqlite3_bind_int64(st, 1, (sqlite3_int64)size);
    step = sqlite3_step(st);
    if (step == SQLITE_ROW) {
        *out_size = (uint64_t)sqlite3_column_int64(st, 0);
        rc = IG_OK;
        if (note != NULL) {
            *note = strdup((const char *)sqlite3_column_text(st, 1));
            rc = *note != NULL ? IG_OK : IG_ERR_NOMEM;
        }
    } else if (step == SQLITE_DONE) {
        rc = IG_ERR_NOTFOUND;
    }
    (void)sqlite3_reset(st);
    (void)sqlite3_clear_bindings(st);
    return rc;
}

enum ig_status
store_sq_checkpoint_get(struct store_sq *s, uint64_t size, char **note,
                        uint64_t *out_size)
{
    struct store_rconn *c = store_read_begin(s);
    enum ig_status rc;

    *note = NULL;
    if (c == NULL)
        return IG_ERR_IO;
    rc = read_checkpoint(c, size, note, out_size);
    store_read_end(s, c);
    return rc;
}

/* The number of events (dense: seq runs 1..n). */
static enum ig_status
log_size(struct store_rconn *c, uint64_t *out)
{
    sqlite3_stmt *st = c->st[R_AUDIT_SIZE];
    enum ig_status rc = IG_ERR_IO;

    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int64(st, 0) >= 0) {
        *out = (uint64_t)sqlite3_column_int64(st, 0);
        rc = IG_OK;
    }
    (void)sqlite3_reset(st);
    return rc;
}

static enum ig_status
read_leaves(struct store_rconn *c, uint64_t start, uint64_t end,
            size_t max_bytes, struct ig_buf *out, uint64_t *count)
{
    sqlite3_stmt *st = c->st[R_LEAVES];
    enum ig_status rc = IG_OK;
    size_t len;
    int step = SQLITE_DONE;

    (void)sqlite3_bind_int64(st, 1, (sqlite3_int64)start);
    (void)sqlite3_bind_int64(st, 2, (sqlite3_int64)end);
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        len = (size_t)sqlite3_column_bytes(st, 1);
        if (sqlite3_column_int64(st, 0) !=
            (sqlite3_int64)(start + *count + 1)) {
            rc = IG_ERR_IO; /* a gap: the log was edited */
            break;
        }
        if (*count > 0 && out->len + len + 1 > max_bytes)
            break;
        rc = ig_buf_add(out, sqlite3_column_text(st, 1), len);
        if (rc == IG_OK)
            rc = ig_buf_addc(out, '\n');
        if (rc != IG_OK)
            break;
        (*count)++;
    }
    if (rc == IG_OK && step != SQLITE_ROW && step != SQLITE_DONE)
        rc = IG_ERR_IO;
    (void)sqlite3_reset(st);
    (void)sqlite3_clear_bindings(st);
    return rc;
}

enum ig_status
store_sq_audit_leaves(struct store_sq *s, uint64_t start, uint64_t end,
                      size_t max_bytes, struct ig_buf *out, uint64_t *tree_size,
                      uint64_t *count)
{
    struct store_rconn *c = store_read_begin(s);
    enum ig_status rc;

    *count = 0;
    if (c == NULL)
        return IG_ERR_IO;
    rc = log_size(c, tree_size);
    if (rc == IG_OK && end > *tree_size)
        end = *tree_size;
    if (rc == IG_OK && start < end)
        rc = read_leaves(c, start, end, max_bytes, out, count);
    store_read_end(s, c);
    return rc;
}

enum ig_status
store_sq_audit_inclusion(struct store_sq *s, uint64_t index, uint64_t size,
                         unsigned char proof[][AUDIT_HASH_BYTES], size_t *n,
                         char **note, uint64_t *out_size)
{
    struct store_rconn *c = store_read_begin(s);
    struct rtiles *t = NULL;
    enum ig_status rc;

    *note = NULL;
    *n = 0;
    if (c == NULL)
        return IG_ERR_IO;
    rc = read_checkpoint(c, size, note, out_size);
    if (rc == IG_OK && index >= *out_size)
        rc = IG_ERR_INVALID;
    if (rc == IG_OK && (t = rtiles_new(c, *out_size)) == NULL)
        rc = IG_ERR_NOMEM;
    if (rc == IG_OK && audit_inclusion_proof(index, *out_size, audit_tile_node,
                                             &t->src, proof, n) != IG_OK)
        rc = IG_ERR_IO;
    free(t);
    store_read_end(s, c);
    if (rc != IG_OK) {
        free(*note);
        *note = NULL;
    }
    return rc;
}

enum ig_status
store_sq_audit_consistency(struct store_sq *s, uint64_t old_size,
                           uint64_t new_size,
                           unsigned char proof[][AUDIT_HASH_BYTES], size_t *n)
{
    struct store_rconn *c;
    struct rtiles *t = NULL;
    enum ig_status rc;
    uint64_t got = 0;

    *n = 0;
    if (old_size == 0 || old_size > new_size)
        return IG_ERR_INVALID;
    if ((c = store_read_begin(s)) == NULL)
        return IG_ERR_IO;
    rc = read_checkpoint(c, old_size, NULL, &got);
    if (rc == IG_OK)
        rc = read_checkpoint(c, new_size, NULL, &got);
    if (rc == IG_OK && (t = rtiles_new(c, new_size)) == NULL)
        rc = IG_ERR_NOMEM;
    if (rc == IG_OK &&
        audit_consistency_proof(old_size, new_size, audit_tile_node, &t->src,
                                proof, n) != IG_OK)
        rc = IG_ERR_IO;
    free(t);
    store_read_end(s, c);
    return rc;
}
