/*
 * store_audit.c - the audit log's Merkle tree inside the store: the one
 * append path for audit events, the tree's frontier, checkpoints.
 *
 * DESIGN
 * Every audit event is a leaf of an RFC 6962 tree (audit/audit_tree.h).
 * The writer thread keeps the tree's frontier (one hash per set bit of the
 * size) in s->audit. Appending an event inserts its row, hashes its exact
 * text bytes into a leaf and pushes the leaf onto the frontier. The tree
 * is stored as C2SP tlog tiles (audit/audit_tile.h): the subtrees at
 * levels 0, 8, 16... that the append completes are entries of tiles,
 * kept in the writer's partial tiles (s->edge); a tile that fills is
 * inserted into audit_tiles as one 8 KiB row, in the same savepoint as
 * the event - one row per 256 leaves instead of two per leaf. Roots and
 * proofs of the current tree read O(log n) tiles and the edge, never the
 * log. store_sqlite.c saves s->audit before each job and each
 * transaction and puts it back when they are rolled back; the edge is
 * not saved (64 KiB) but rebuilt when its size is no longer the tree's.
 *
 * At open (store_audit_open.c) the whole tree is first recomputed from
 * the events and checked against the tiles (store_audit_check.c); then
 * the edge and the frontier are rebuilt from the tiles; a database whose
 * tiles stop short (written before the tiles existed) has them computed
 * from its events once, in chunks, and says so in the log; then the
 * checkpoints and last the anchor file are checked (store_anchor.c).
 *
 * A checkpoint is a job on the writer thread: the root of the current
 * frontier must equal the root recomputed from the stored tiles, and
 * consistency proofs built from the tiles must verify against the
 * previous checkpoint's root and the anchor's. Only then is the C2SP
 * checkpoint text signed (audit/audit_note.h) and stored, and after its
 * commit written to the anchor; otherwise it is refused, loudly.
 */
#include "store_int.h"

#include <stdlib.h>
#include <string.h>

#include "audit_note.h"
#include "ig_limits.h"

/* ---- tiles ---- */

/* audit_node_fn: a subtree the append completed. Entries of tiles go to
   the edge; a tile they fill is inserted, once. */
static int
on_node(void *ctx, unsigned level, uint64_t index,
        const unsigned char hash[AUDIT_HASH_BYTES])
{
    struct store_sq *s = ctx;
    sqlite3_stmt *st = s->wst[W_NODE];
    uint64_t tn;
    unsigned tl;
    int rc;

    if (!audit_tile_edge_put(&s->edge, level, index, hash, &tl, &tn))
        return 0;
    (void)sqlite3_bind_int(st, 1, (int)tl);
    (void)sqlite3_bind_int64(st, 2, (sqlite3_int64)tn);
    (void)sqlite3_bind_blob(st, 3, s->edge.hash[tl], AUDIT_TILE_BYTES,
                            SQLITE_STATIC);
    rc = sqlite3_step(st);
    (void)sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

enum ig_status
store_audit_add_leaf(struct store_sq *s, sqlite3_int64 seq, const void *text,
                     size_t len, const unsigned char *pre)
{
    unsigned char leaf[AUDIT_HASH_BYTES];

    if (seq != (sqlite3_int64)s->audit.tree.size + 1) {
        store_audit_log(s, "error", "audit.seq_mismatch",
                        json_pack("{s:I, s:I}", "seq", (json_int_t)seq,
                                  "tree_size", (json_int_t)s->audit.tree.size));
        return IG_ERR_IO;
    }
    if (store_audit_edge_sync(s) != IG_OK)
        return IG_ERR_IO;
    if (pre == NULL) {
        audit_leaf_hash(text, len, leaf);
        pre = leaf;
    }
    if (audit_frontier_append(&s->audit.tree, pre, on_node, s) != IG_OK)
        return IG_ERR_IO;
    s->edge.size = s->audit.tree.size;
    return IG_OK;
}

void
store_job_hash_events(struct store_job *j, const char *const *ev, size_t n)
{
    size_t i;

    if (ev == NULL || n == 0 || n > SIZE_MAX / AUDIT_HASH_BYTES ||
        (j->leaves = malloc(n * AUDIT_HASH_BYTES)) == NULL)
        return;
    for (i = 0; i < n; i++)
        if (ev[i] != NULL)
            audit_leaf_hash(ev[i], strlen(ev[i]), j->leaves[i]);
    j->leaf_src = ev;
    j->nleaves = n;
}

enum ig_status
store_append_events(struct store_sq *s, const char *const *ev, size_t n)
{
    sqlite3_stmt *st = s->wst[W_EVENT];
    const struct store_job *j = s->cur_job;
    /* The leaves hashed by the submitter, when they are of this array. */
    int pre =
        j != NULL && j->leaves != NULL && j->leaf_src == ev && j->nleaves == n;
    size_t i, len;
    int rc;

    for (i = 0; i < n; i++) {
        if (ev[i] == NULL)
            return IG_ERR_INVALID;
        len = strlen(ev[i]);
        (void)sqlite3_bind_text(st, 1, ev[i], (int)len, SQLITE_STATIC);
        rc = sqlite3_step(st);
        (void)sqlite3_reset(st);
        (void)sqlite3_clear_bindings(st);
        if (rc != SQLITE_DONE ||
            store_audit_add_leaf(s, sqlite3_last_insert_rowid(s->wdb), ev[i],
                                 len, pre ? j->leaves[i] : NULL) != IG_OK)
            return IG_ERR_IO;
    }
    return IG_OK;
}

/* ---- checkpoints ---- */

int
store_audit_checkpoint_due(struct store_sq *s, double now, int final)
{
    uint64_t size = s->audit.tree.size, last = s->audit.ckpt_size;
    int timer = s->opts.checkpoint_interval > 0 && now >= s->ckpt_due;

    if (s->opts.audit_key == NULL)
        return 0;
    if (size <= last) {
        if (timer) /* nothing new: look again one interval later */
            s->ckpt_due = now + (double)s->opts.checkpoint_interval;
        return 0;
    }
    if (final || timer)
        return 1;
    return s->opts.checkpoint_every > 0 && !s->ckpt_refused &&
           size - last >= s->opts.checkpoint_every;
}

double
store_audit_deadline(const struct store_sq *s)
{
    if (s->opts.audit_key == NULL || s->opts.checkpoint_interval <= 0)
        return 0;
    return s->ckpt_due;
}

/* Sign, insert, and stage the note for the anchor (written once the
   transaction commits). */
static enum ig_status
sign_and_insert(struct store_sq *s, uint64_t size,
                const unsigned char root[AUDIT_HASH_BYTES])
{
    sqlite3_stmt *st = s->wst[W_CHECKPOINT];
    struct ig_buf note;
    enum ig_status rc;

    ig_buf_init(&note, AUDIT_NOTE_MAX);
    rc = store_anchor_sign(&s->opts, size, root, &note);
    if (rc == IG_OK) {
        (void)sqlite3_bind_int64(st, 1, (sqlite3_int64)size);
        (void)sqlite3_bind_text(st, 2, note.data, (int)note.len, SQLITE_STATIC);
        (void)sqlite3_bind_int64(st, 3, ig_time_now());
        rc = sqlite3_step(st) == SQLITE_DONE ? IG_OK : IG_ERR_IO;
        (void)sqlite3_reset(st);
        (void)sqlite3_clear_bindings(st);
    }
    if (rc == IG_OK)
        rc = store_anchor_stage(&s->anchor, note.data, note.len, size, root);
    ig_buf_release(&note);
    return rc == IG_OK ? IG_OK : IG_ERR_IO;
}

enum ig_status
store_job_checkpoint(struct store_sq *s, struct store_job *j)
{
    struct store_audit_state *a = &s->audit;
    unsigned char root[AUDIT_HASH_BYTES];
    uint64_t size = a->tree.size;
    enum ig_status rc;

    if (s->opts.audit_key == NULL || s->opts.audit_name == NULL)
        return IG_ERR_NOTFOUND;
    if (size == 0 || size <= a->ckpt_size)
        return IG_ERR_EXISTS;
    /* The previous checkpoint must be in the anchor file first. */
    if (store_anchor_ready(&s->anchor) != IG_OK) {
        s->ckpt_refused = 1;
        return IG_ERR_CRYPTO;
    }
    audit_frontier_root(&a->tree, root);
    if ((rc = store_anchor_check_next(&s->anchor, size, root)) != IG_OK) {
        s->ckpt_refused = 1;
        return rc;
    }
    if ((rc = sign_and_insert(s, size, root)) != IG_OK)
        return rc;
    a->ckpt_size = size;
    memcpy(a->ckpt_root, root, sizeof(root));
    s->ckpt_refused = 0;
    if (s->nckpt_signed < sizeof(s->ckpt_signed) / sizeof(s->ckpt_signed[0]))
        s->nckpt_signed++;
    s->ckpt_signed[s->nckpt_signed - 1] = size;
    j->at = (int64_t)size;
    return IG_OK;
}

void
store_audit_checkpoint_done(struct store_sq *s, const struct store_job *j)
{
    s->ckpt_due = store_mono() + (double)s->opts.checkpoint_interval;
    if (j->status == IG_OK)
        store_audit_log(s, "info", "audit.checkpoint_signed",
                        json_pack("{s:I, s:s}", "size", (json_int_t)j->at,
                                  "name", s->opts.audit_name));
    else if (j->status != IG_ERR_CRYPTO && j->status != IG_ERR_EXISTS)
        store_audit_log(s, "error", "audit.checkpoint_failed",
                        json_pack("{s:I, s:s}", "size",
                                  (json_int_t)s->audit.tree.size, "error",
                                  ig_strerror(j->status)));
}
