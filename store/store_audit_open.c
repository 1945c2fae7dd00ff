/*
 * store_audit_open.c - the audit log when the store opens, before the
 * writer starts (store_audit.c has the design): the whole tree recomputed
 * from the events and checked against the stored nodes
 * (store_audit_check.c), the frontier rebuilt from the nodes of its set
 * bits, the nodes of events written before the tree existed backfilled
 * once, in chunks (and said so in the log), every stored checkpoint
 * checked, and last the anchor file (store_anchor_open.c).
 */
#include "store_int.h"

#include <string.h>

#include "ig_limits.h"

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
        rc = store_audit_add_leaf(s, sqlite3_column_int64(st, 0),
                                  sqlite3_column_text(st, 1),
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
