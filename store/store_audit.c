/*
 * store_audit.c - the audit log's Merkle tree inside the store: the one
 * append path for audit events, the tree's frontier, checkpoints.
 *
 * DESIGN
 * Every audit event is a leaf of an RFC 6962 tree (audit/audit_tree.h).
 * The writer thread keeps the tree's frontier (one hash per set bit of the
 * size) in s->audit. Appending an event inserts its row, hashes its exact
 * text bytes into a leaf and pushes the leaf onto the frontier; each
 * subtree that completes (the leaf itself at level 0, then its parents) is
 * inserted into audit_nodes, in the same savepoint as the event. So the
 * nodes table always holds every complete subtree of the committed log,
 * and proofs and roots of any past size are built from O(log n) node rows
 * without rereading the log. store_sqlite.c saves s->audit before each
 * job and each transaction and puts it back when they are rolled back.
 *
 * At open the whole tree is first recomputed from the events and checked
 * against the nodes and the checkpoints (store_audit_check.c); then
 * the frontier is rebuilt from the nodes of its set bits; a database
 * written before the tree existed (events, no nodes) has its nodes
 * backfilled here once, in chunks, and says so in the log; last the
 * anchor file is checked (store_anchor.c).
 *
 * A checkpoint is a job on the writer thread: the root of the current
 * frontier must equal the root recomputed from the stored nodes, and
 * consistency proofs built from the nodes must verify against the
 * previous checkpoint's root and the anchor's. Only then is the C2SP
 * checkpoint text signed (audit/audit_note.h) and stored, and after its
 * commit written to the anchor; otherwise it is refused, loudly.
 */
#include "store_int.h"

#include <stdlib.h>
#include <string.h>

#include "audit_note.h"
#include "ig_limits.h"

void
store_audit_log(struct store *s, const char *level, const char *event,
                json_t *fields)
{
    if (s->opts.log != NULL)
        s->opts.log(level, event, fields);
    else
        json_decref(fields);
}

/* ---- nodes ---- */

enum ig_status
store_audit_fetch_node(sqlite3_stmt *st, unsigned level, uint64_t index,
                       unsigned char out[AUDIT_HASH_BYTES])
{
    enum ig_status rc = IG_ERR_IO;
    int step;

    (void)sqlite3_bind_int(st, 1, (int)level);
    (void)sqlite3_bind_int64(st, 2, (sqlite3_int64)index);
    step = sqlite3_step(st);
    if (step == SQLITE_ROW && sqlite3_column_bytes(st, 0) == AUDIT_HASH_BYTES) {
        memcpy(out, sqlite3_column_blob(st, 0), AUDIT_HASH_BYTES);
        rc = IG_OK;
    } else if (step == SQLITE_ROW || step == SQLITE_DONE) {
        rc = IG_ERR_NOTFOUND;
    }
    (void)sqlite3_reset(st);
    return rc;
}

enum ig_status
store_audit_wfetch(void *ctx, unsigned level, uint64_t index,
                   unsigned char out[AUDIT_HASH_BYTES])
{
    struct store *s = ctx;

    return store_audit_fetch_node(s->wst[W_NODE_GET], level, index, out);
}

#ifndef PDP_AUDIT_NO_TREE
static int
on_node(void *ctx, unsigned level, uint64_t index,
        const unsigned char hash[AUDIT_HASH_BYTES])
{
    struct store *s = ctx;
    sqlite3_stmt *st = s->wst[W_NODE];
    int rc;

    (void)sqlite3_bind_int(st, 1, (int)level);
    (void)sqlite3_bind_int64(st, 2, (sqlite3_int64)index);
    (void)sqlite3_bind_blob(st, 3, hash, AUDIT_HASH_BYTES, SQLITE_STATIC);
    rc = sqlite3_step(st);
    (void)sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : -1;
}
#endif

/* One more leaf: the event at seq (which must be the next index + 1),
   its hash given (pre) or computed here. */
static enum ig_status
add_leaf(struct store *s, sqlite3_int64 seq, const void *text, size_t len,
         const unsigned char *pre)
{
#ifndef PDP_AUDIT_NO_TREE /* the benchmark's baseline: no tree at all */
    unsigned char leaf[AUDIT_HASH_BYTES];

    if (seq != (sqlite3_int64)s->audit.tree.size + 1) {
        store_audit_log(s, "error", "audit.seq_mismatch",
                        json_pack("{s:I, s:I}", "seq", (json_int_t)seq,
                                  "tree_size", (json_int_t)s->audit.tree.size));
        return IG_ERR_IO;
    }
    if (pre == NULL) {
        audit_leaf_hash(text, len, leaf);
        pre = leaf;
    }
    if (audit_frontier_append(&s->audit.tree, pre, on_node, s) != IG_OK)
        return IG_ERR_IO;
#else
    (void)s;
    (void)seq;
    (void)text;
    (void)len;
    (void)pre;
#endif
    return IG_OK;
}

void
store_job_hash_events(struct store_job *j, const char *const *ev, size_t n)
{
#ifndef PDP_AUDIT_NO_TREE
    size_t i;

    if (ev == NULL || n == 0 || n > SIZE_MAX / AUDIT_HASH_BYTES ||
        (j->leaves = malloc(n * AUDIT_HASH_BYTES)) == NULL)
        return;
    for (i = 0; i < n; i++)
        if (ev[i] != NULL)
            audit_leaf_hash(ev[i], strlen(ev[i]), j->leaves[i]);
    j->leaf_src = ev;
    j->nleaves = n;
#else
    (void)j;
    (void)ev;
    (void)n;
#endif
}

enum ig_status
store_append_events(struct store *s, const char *const *ev, size_t n)
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
            add_leaf(s, sqlite3_last_insert_rowid(s->wdb), ev[i], len,
                     pre ? j->leaves[i] : NULL) != IG_OK)
            return IG_ERR_IO;
    }
    return IG_OK;
}

/* ---- open: rebuild, backfill ---- */

/* A one-number query (NULL reads as 0): 0, or -1. */
static int
query_u64(sqlite3 *db, const char *sql, uint64_t *out)
{
    sqlite3_stmt *st = NULL;
    int rc = -1;

    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int64(st, 0) >= 0) {
        *out = (uint64_t)sqlite3_column_int64(st, 0);
        rc = 0;
    }
    sqlite3_finalize(st);
    return rc;
}

/* Hash up to one chunk of events after the frontier's size. */
static enum ig_status
backfill_chunk(struct store *s, sqlite3_stmt *st)
{
    enum ig_status rc = IG_OK;
    int step = SQLITE_DONE;

    (void)sqlite3_bind_int64(st, 1, (sqlite3_int64)s->audit.tree.size);
    (void)sqlite3_bind_int(st, 2, IG_AUDIT_BACKFILL_CHUNK);
    while (rc == IG_OK && (step = sqlite3_step(st)) == SQLITE_ROW)
        rc =
            add_leaf(s, sqlite3_column_int64(st, 0), sqlite3_column_text(st, 1),
                     (size_t)sqlite3_column_bytes(st, 1), NULL);
    if (rc == IG_OK && step != SQLITE_DONE)
        rc = IG_ERR_IO;
    (void)sqlite3_reset(st);
    return rc;
}

/* Store the nodes of events [tree size, size) (a database from before the
   tree, or one whose nodes stop short), one transaction per chunk. */
static enum ig_status
backfill(struct store *s, uint64_t size, struct ig_err *err)
{
    uint64_t from = s->audit.tree.size;
    sqlite3_stmt *st = NULL;
    enum ig_status rc = IG_OK;

    if (sqlite3_prepare_v2(s->wdb,
                           "SELECT seq, event FROM audit_events WHERE seq > ?1 "
                           "ORDER BY seq LIMIT ?2",
                           -1, &st, NULL) != SQLITE_OK)
        return ig_err_set(err, IG_ERR_IO, "cannot read the audit log: %s",
                          sqlite3_errmsg(s->wdb));
    while (rc == IG_OK && s->audit.tree.size < size) {
        if (sqlite3_exec(s->wdb, "BEGIN IMMEDIATE", NULL, NULL, NULL) !=
            SQLITE_OK) {
            rc = IG_ERR_IO;
            break;
        }
        rc = backfill_chunk(s, st);
        if (rc == IG_OK &&
            sqlite3_exec(s->wdb, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
            rc = IG_ERR_IO;
        if (rc != IG_OK)
            (void)sqlite3_exec(s->wdb, "ROLLBACK", NULL, NULL, NULL);
    }
    sqlite3_finalize(st);
    if (rc != IG_OK || s->audit.tree.size != size)
        return ig_err_set(err, IG_ERR_IO,
                          "cannot backfill the audit tree at leaf %llu of "
                          "%llu: %s",
                          (unsigned long long)s->audit.tree.size,
                          (unsigned long long)size, sqlite3_errmsg(s->wdb));
    store_audit_log(s, "warning", "audit.backfilled",
                    json_pack("{s:I, s:I, s:s}", "from", (json_int_t)from, "to",
                              (json_int_t)size, "message",
                              "tree nodes computed for audit events written "
                              "before the tree existed"));
    return IG_OK;
}

/* The frontier rebuilt from the nodes must be the tree of the events. */
static enum ig_status
same_tree(struct store *s, const struct audit_frontier *events,
          struct ig_err *err)
{
    unsigned char a[AUDIT_HASH_BYTES], b[AUDIT_HASH_BYTES];

    audit_frontier_root(events, a);
    audit_frontier_root(&s->audit.tree, b);
    if (events->size == s->audit.tree.size && memcmp(a, b, sizeof(a)) == 0)
        return IG_OK;
    return ig_err_set(err, IG_ERR_IO,
                      "audit log check: the tree rebuilt from audit_nodes "
                      "(%llu leaves) is not the one the %llu events make; "
                      "refusing to start",
                      (unsigned long long)s->audit.tree.size,
                      (unsigned long long)events->size);
}

enum ig_status
store_audit_open(struct store *s, struct ig_err *err)
{
    struct audit_frontier events;
    uint64_t size = 0, have = 0;
    double t0 = store_mono();

    memset(&s->audit, 0, sizeof(s->audit));
    audit_frontier_init(&s->audit.tree);
    if (query_u64(s->wdb, "SELECT max(seq) FROM audit_events", &size) != 0 ||
        query_u64(s->wdb,
                  "SELECT max(idx) + 1 FROM audit_nodes WHERE level = 0",
                  &have) != 0)
        return ig_err_set(err, IG_ERR_IO, "cannot read the audit log: %s",
                          sqlite3_errmsg(s->wdb));
    if (have > size)
        return ig_err_set(err, IG_ERR_IO,
                          "the audit tree has %llu leaves but the log only "
                          "%llu events: the log was truncated",
                          (unsigned long long)have, (unsigned long long)size);
    if (store_audit_recompute(s, have, &events, err) != IG_OK)
        return IG_ERR_IO;
    if (audit_frontier_load(&s->audit.tree, have, store_audit_wfetch, s) !=
        IG_OK)
        return ig_err_set(err, IG_ERR_IO,
                          "cannot rebuild the audit tree of %llu leaves: "
                          "nodes are missing from audit_nodes",
                          (unsigned long long)have);
    if (have < events.size && backfill(s, events.size, err) != IG_OK)
        return IG_ERR_IO;
    if (same_tree(s, &events, err) != IG_OK ||
        store_audit_check_checkpoints(s, store_audit_wfetch, err) != IG_OK)
        return IG_ERR_IO;
    store_audit_log(s, "info", "audit.log_checked",
                    json_pack("{s:I, s:I, s:f}", "leaves",
                              (json_int_t)s->audit.tree.size, "checkpoint",
                              (json_int_t)s->audit.ckpt_size, "seconds",
                              store_mono() - t0));
    if (store_anchor_open(s, err) != IG_OK)
        return IG_ERR_IO;
    s->ckpt_due = store_mono() + (double)s->opts.checkpoint_interval;
    return IG_OK;
}

/* ---- checkpoints ---- */

int
store_audit_checkpoint_due(struct store *s, double now, int final)
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
store_audit_deadline(const struct store *s)
{
    if (s->opts.audit_key == NULL || s->opts.checkpoint_interval <= 0)
        return 0;
    return s->ckpt_due;
}

/* The tree about to be signed must be the one the stored nodes describe,
   and consistent with the previous checkpoint. IG_ERR_CRYPTO, logged. */
static enum ig_status
check_consistent(struct store *s, uint64_t size,
                 const unsigned char root[AUDIT_HASH_BYTES])
{
    const struct pdp_audit_state *a = &s->audit;
    unsigned char stored[AUDIT_HASH_BYTES];
    unsigned char proof[AUDIT_CPROOF_MAX][AUDIT_HASH_BYTES];
    const char *why = NULL;
    size_t n = 0;

    if (audit_root_at(size, store_audit_wfetch, s, stored) != IG_OK)
        why = "the stored tree nodes are incomplete";
    else if (memcmp(stored, root, sizeof(stored)) != 0)
        why = "the stored tree nodes do not hash to the tree's root";
    else if (a->ckpt_size > 0 &&
             audit_consistency_proof(a->ckpt_size, size, store_audit_wfetch, s,
                                     proof, &n) != IG_OK)
        why = "no consistency proof can be built from the stored nodes";
    else if (a->ckpt_size > 0 &&
             audit_verify_consistency(a->ckpt_size, size, a->ckpt_root, root,
                                      (const unsigned char(*)[32])proof,
                                      n) != IG_OK)
        why = "the tree is not consistent with the previous checkpoint";
    else
        why = store_anchor_extends(s, size, root);
    if (why == NULL)
        return IG_OK;
    /* The marker first: once the refusal is logged, no restart signs. */
    store_anchor_mark_refused(s);
    store_audit_log(s, "error", "audit.checkpoint_refused",
                    json_pack("{s:I, s:I, s:I, s:s}", "size", (json_int_t)size,
                              "previous_size", (json_int_t)a->ckpt_size,
                              "anchor_size", (json_int_t)s->anchor.size,
                              "reason", why));
    return IG_ERR_CRYPTO;
}

enum ig_status
store_audit_sign_note(struct store *s, uint64_t size,
                      const unsigned char root[AUDIT_HASH_BYTES],
                      struct ig_buf *out)
{
    struct ig_buf text;
    enum ig_status rc;

    ig_buf_init(&text, AUDIT_NOTE_MAX);
    rc = audit_checkpoint_text(s->opts.audit_name, size, root, &text);
    if (rc == IG_OK)
        rc = audit_note_sign(text.data, text.len, s->opts.audit_name,
                             s->opts.audit_key, out);
    ig_buf_release(&text);
    return rc;
}

/* Sign, insert, and stage the note for the anchor (written once the
   transaction commits). */
static enum ig_status
sign_and_insert(struct store *s, uint64_t size,
                const unsigned char root[AUDIT_HASH_BYTES])
{
    sqlite3_stmt *st = s->wst[W_CHECKPOINT];
    struct ig_buf note;
    enum ig_status rc;

    ig_buf_init(&note, AUDIT_NOTE_MAX);
    rc = store_audit_sign_note(s, size, root, &note);
    if (rc == IG_OK) {
        (void)sqlite3_bind_int64(st, 1, (sqlite3_int64)size);
        (void)sqlite3_bind_text(st, 2, note.data, (int)note.len, SQLITE_STATIC);
        (void)sqlite3_bind_int64(st, 3, ig_time_now());
        rc = sqlite3_step(st) == SQLITE_DONE ? IG_OK : IG_ERR_IO;
        (void)sqlite3_reset(st);
        (void)sqlite3_clear_bindings(st);
    }
    if (rc == IG_OK)
        rc = store_anchor_stage(s, note.data, note.len, size, root);
    ig_buf_release(&note);
    return rc == IG_OK ? IG_OK : IG_ERR_IO;
}

enum ig_status
store_job_checkpoint(struct store *s, struct store_job *j)
{
    struct pdp_audit_state *a = &s->audit;
    unsigned char root[AUDIT_HASH_BYTES];
    uint64_t size = a->tree.size;
    enum ig_status rc;

    if (s->opts.audit_key == NULL || s->opts.audit_name == NULL)
        return IG_ERR_NOTFOUND;
    if (size == 0 || size <= a->ckpt_size)
        return IG_ERR_EXISTS;
    /* The previous checkpoint must be in the anchor file first. */
    if (store_anchor_ready(s) != IG_OK) {
        s->ckpt_refused = 1;
        return IG_ERR_CRYPTO;
    }
    audit_frontier_root(&a->tree, root);
    if ((rc = check_consistent(s, size, root)) != IG_OK) {
        s->ckpt_refused = 1;
        return rc;
    }
    if ((rc = sign_and_insert(s, size, root)) != IG_OK)
        return rc;
    a->ckpt_size = size;
    memcpy(a->ckpt_root, root, sizeof(root));
    s->ckpt_refused = 0;
    j->at = (int64_t)size;
    return IG_OK;
}

void
store_audit_checkpoint_done(struct store *s, const struct store_job *j)
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

/* ---- synchronous entry points (writer jobs) ---- */

struct head_rec {
    uint64_t *size;
    unsigned char *root;
};

static enum ig_status
job_head(struct store *s, struct store_job *j)
{
    const struct head_rec *h = j->rec;

    *h->size = s->audit.tree.size;
    audit_frontier_root(&s->audit.tree, h->root);
    return IG_OK;
}

enum ig_status
store_audit_head(struct store *s, uint64_t *size,
                 unsigned char root[AUDIT_HASH_BYTES])
{
    struct head_rec h;

    h.size = size;
    h.root = root;
    return store_run(s, job_head, &h, NULL);
}

static enum ig_status
job_sign(struct store *s, struct store_job *j)
{
    uint64_t *const *out = j->rec;
    enum ig_status rc = store_job_checkpoint(s, j);

    if (rc == IG_OK)
        **out = (uint64_t)j->at;
    return rc;
}

enum ig_status
store_audit_sign(struct store *s, uint64_t *size)
{
    uint64_t *out = size;

    *size = 0;
    return store_run(s, job_sign, &out, NULL);
}
