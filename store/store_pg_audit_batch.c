/*
 * store_pg_audit_batch.c - one batch of the PostgreSQL sequencer
 * (store_pg_audit.c has the design), one transaction on its connection:
 * the oldest queued events moved into audit_events in queue order, the
 * tree extended by their leaves, the tiles they fill stored, a checkpoint
 * signed when one is due, the new size announced on ig_sequenced.
 *
 * The transaction is REPEATABLE READ, so the SELECT of the queue, the
 * INSERT ... SELECT into audit_events and the DELETE from the queue all
 * see one snapshot: exactly the rows read are moved and deleted, and a
 * row queued by a transaction that commits meanwhile (with a lower id:
 * ids are taken at insert, not at commit) waits for the next batch. Two
 * sequencers at once - a deposed leader that did not notice yet - collide
 * on audit_events' PRIMARY KEY or on the queue rows (23505, 40001): the
 * batch fails and its sequencer steps down.
 */
#include "store_pg_audit_tree.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ig_time.h"

static const char SQL_RR[] = "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ";
static const char SQL_QUEUED[] =
    "SELECT id, event FROM audit_queue ORDER BY id LIMIT $1";
static const char SQL_MOVE[] =
    "INSERT INTO audit_events (seq, event) SELECT $1::bigint + row_number() "
    "OVER (ORDER BY id), event FROM audit_queue WHERE id BETWEEN $2 AND $3";
static const char SQL_DEQUEUE[] =
    "DELETE FROM audit_queue WHERE id BETWEEN $1 AND $2";
static const char SQL_PUT_TILE[] =
    "INSERT INTO audit_tiles (level, idx, hashes) VALUES ($1, $2, $3)";
static const char SQL_PUT_CKPT[] =
    "INSERT INTO checkpoints (size, note, created_at) VALUES ($1, $2, $3)";
static const char SQL_SEQUENCED[] =
    "SELECT pg_notify('" STORE_PG_CH_SEQUENCED "', $1)";

/* ---- the tree ---- */

/* audit_node_fn: a subtree the append completed. Entries of tiles go to
   the edge; a tile they fill is inserted. */
static int
on_node(void *ctx, unsigned level, uint64_t index,
        const unsigned char hash[AUDIT_HASH_BYTES])
{
    struct store_pg_seq *q = ctx;
    struct store_pg_params p;
    uint64_t tn;
    unsigned tl;

    if (!audit_tile_edge_put(&q->edge, level, index, hash, &tl, &tn))
        return 0;
    store_pg_params_init(&p);
    store_pg_param_int(&p, (int64_t)tl);
    store_pg_param_int(&p, (int64_t)tn);
    store_pg_param_bin(&p, q->edge.hash[tl], AUDIT_TILE_BYTES);
    return store_pg_exec(q->s, &q->conn, SQL_PUT_TILE, &p) == IG_OK ? 0 : -1;
}

static enum ig_status
add_leaf(struct store_pg_seq *q, const char *event, size_t len)
{
    unsigned char leaf[AUDIT_HASH_BYTES];

    if (q->edge.size != q->audit.tree.size &&
        store_pg_tree_edge_rebuild(q) != IG_OK)
        return IG_ERR_IO;
    audit_leaf_hash(event, len, leaf);
    if (audit_frontier_append(&q->audit.tree, leaf, on_node, q) != IG_OK)
        return IG_ERR_IO;
    q->edge.size = q->audit.tree.size;
    return IG_OK;
}

/* A statement that must change exactly n rows. */
static enum ig_status
exec_n(struct store_pg_seq *q, const char *sql, const struct store_pg_params *p,
       int n)
{
    PGresult *r = store_pg_query(q->s, &q->conn, sql, p, NULL, NULL);
    long changed = -1;

    if (r != NULL)
        changed = strtol(PQcmdTuples(r), NULL, 10);
    PQclear(r);
    if (r == NULL)
        return IG_ERR_IO;
    if (changed != n) {
        store_pg_log(
            q->s, "error", "audit.sequencer_conflict",
            json_pack("{s:i, s:i}", "expected", n, "changed", (int)changed));
        return IG_ERR_IO;
    }
    return IG_OK;
}

/* Move the queued rows of r (ids ascending) to the log. */
static enum ig_status
move(struct store_pg_seq *q, const PGresult *r, int n)
{
    struct store_pg_params p;
    int64_t lo = store_pg_int(r, 0, 0), hi = store_pg_int(r, n - 1, 0);
    int i;

    store_pg_params_init(&p);
    store_pg_param_int(&p, (int64_t)q->audit.tree.size);
    store_pg_param_int(&p, lo);
    store_pg_param_int(&p, hi);
    if (exec_n(q, SQL_MOVE, &p, n) != IG_OK)
        return IG_ERR_IO;
    store_pg_params_init(&p);
    store_pg_param_int(&p, lo);
    store_pg_param_int(&p, hi);
    if (exec_n(q, SQL_DEQUEUE, &p, n) != IG_OK)
        return IG_ERR_IO;
    for (i = 0; i < n; i++)
        if (add_leaf(q, PQgetvalue(r, i, 1), (size_t)PQgetlength(r, i, 1)) !=
            IG_OK)
            return IG_ERR_IO;
    return IG_OK;
}

/* ---- checkpoints ---- */

int
store_pg_checkpoint_due(struct store_pg_seq *q, double now)
{
    const struct store_opts *o = &q->s->opts;
    uint64_t size = q->audit.tree.size, last = q->audit.ckpt_size;
    int timer = o->checkpoint_interval > 0 && now >= q->ckpt_due;

    if (o->audit_key == NULL)
        return 0;
    if (size <= last) {
        if (timer) /* nothing new: look again one interval later */
            q->ckpt_due = now + (double)o->checkpoint_interval;
        return 0;
    }
    if (timer)
        return 1;
    return o->checkpoint_every > 0 && !q->ckpt_refused &&
           size - last >= o->checkpoint_every;
}

/* Sign, insert, and stage the note for the anchor (written once the
   transaction commits). */
static enum ig_status
sign_and_insert(struct store_pg_seq *q, uint64_t size,
                const unsigned char root[AUDIT_HASH_BYTES])
{
    struct store_pg_params p;
    struct ig_buf note;
    enum ig_status rc;

    ig_buf_init(&note, AUDIT_NOTE_MAX);
    rc = store_anchor_sign(&q->s->opts, size, root, &note);
    if (rc == IG_OK) {
        store_pg_params_init(&p);
        store_pg_param_int(&p, (int64_t)size);
        store_pg_param_text(&p, note.data);
        store_pg_param_int(&p, ig_time_now());
        rc = store_pg_exec(q->s, &q->conn, SQL_PUT_CKPT, &p);
    }
    if (rc == IG_OK)
        rc = store_anchor_stage(&q->anchor, note.data, note.len, size, root);
    ig_buf_release(&note);
    return rc == IG_OK ? IG_OK : IG_ERR_IO;
}

/* A checkpoint of the tree as it is in the batch: IG_OK, IG_ERR_NOTFOUND
   (no key), IG_ERR_EXISTS (did not grow), IG_ERR_CRYPTO (refused:
   logged), IG_ERR_IO. */
static enum ig_status
checkpoint(struct store_pg_seq *q)
{
    const struct store_opts *o = &q->s->opts;
    struct store_audit_state *a = &q->audit;
    unsigned char root[AUDIT_HASH_BYTES];
    uint64_t size = a->tree.size;
    enum ig_status rc;

    if (o->audit_key == NULL || o->audit_name == NULL)
        return IG_ERR_NOTFOUND;
    if (size == 0 || size <= a->ckpt_size)
        return IG_ERR_EXISTS;
    /* The previous checkpoint must be in the anchor file first. */
    if (q->no_sign || store_anchor_ready(&q->anchor) != IG_OK) {
        q->ckpt_refused = 1;
        return IG_ERR_CRYPTO;
    }
    audit_frontier_root(&a->tree, root);
    if ((rc = store_anchor_check_next(&q->anchor, size, root)) != IG_OK) {
        q->ckpt_refused = 1;
        return rc;
    }
    if ((rc = sign_and_insert(q, size, root)) != IG_OK)
        return rc;
    a->ckpt_size = size;
    memcpy(a->ckpt_root, root, sizeof(root));
    q->ckpt_refused = 0;
    return IG_OK;
}

/* ---- the batch ---- */

enum ig_status
store_pg_tree_batch(struct store_pg *s, struct store_pg_conn *c, void *arg)
{
    struct store_pg_seq *q = arg;
    struct store_pg_params p;
    char size[24];
    PGresult *r;
    int n;

    /* A retry starts from the tree as committed. */
    q->audit = q->before;
    q->moved = 0;
    q->sign_rc = IG_ERR_EXISTS;
    store_anchor_after_commit(&q->anchor, 0);
    if (store_pg_exec(s, c, SQL_RR, NULL) != IG_OK)
        return IG_ERR_IO;
    store_pg_params_init(&p);
    store_pg_param_int(&p, STORE_PG_SEQ_BATCH);
    if ((r = store_pg_query(s, c, SQL_QUEUED, &p, NULL, NULL)) == NULL)
        return IG_ERR_IO;
    n = PQntuples(r);
    if (n > 0 && move(q, r, n) != IG_OK) {
        PQclear(r);
        return IG_ERR_IO;
    }
    PQclear(r);
    if (q->sign || store_pg_checkpoint_due(q, ig_time_mono()))
        q->sign_rc = checkpoint(q);
    if (q->sign_rc == IG_ERR_IO)
        return IG_ERR_IO;
    if (n == 0 && q->sign_rc != IG_OK)
        return IG_ERR_NOTFOUND; /* nothing to commit */
    (void)snprintf(size, sizeof(size), "%llu",
                   (unsigned long long)q->audit.tree.size);
    store_pg_params_init(&p);
    store_pg_param_text(&p, size);
    if (store_pg_exec(s, c, SQL_SEQUENCED, &p) != IG_OK)
        return IG_ERR_IO;
    q->moved = (uint64_t)n;
    return IG_OK;
}
