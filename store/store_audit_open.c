/*
 * store_audit_open.c - the audit log when the store opens, before the
 * writer starts (store_audit.c has the design): the whole tree recomputed
 * from the events and checked against the stored tiles
 * (store_audit_check.c), the partial tiles and the frontier rebuilt from
 * the tiles, the tiles of a log written before they existed (schema 3
 * kept audit_nodes, which migration 4 drops) computed once from its
 * events in one transaction (and said so in the log), every stored
 * checkpoint checked, and last the anchor file (store_anchor_open.c).
 *
 * Tiles are written in the transaction of the events that fill them, so
 * a committed log has every full tile: tiles that stop short of the
 * events are refused (a row was deleted), unless there are none at all
 * (a log converted from schema 3).
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
backfill_chunk(struct store_sq *s, sqlite3_stmt *st)
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

/* Push the events [tree size, size) onto the tree: the partial tile at
   the end, or all of them in a log converted from schema 3 (its tiles
   are then stored, in one transaction: all of them or none). Read in
   chunks. */
static enum ig_status
backfill(struct store_sq *s, uint64_t size, struct ig_err *err)
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
    if (sqlite3_exec(s->wdb, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
        rc = IG_ERR_IO;
    while (rc == IG_OK && s->audit.tree.size < size)
        rc = backfill_chunk(s, st);
    if (rc == IG_OK &&
        sqlite3_exec(s->wdb, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
        rc = IG_ERR_IO;
    if (rc != IG_OK)
        (void)sqlite3_exec(s->wdb, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_finalize(st);
    if (rc != IG_OK || s->audit.tree.size != size)
        return ig_err_set(err, IG_ERR_IO,
                          "cannot store the audit tiles at leaf %llu of "
                          "%llu: %s",
                          (unsigned long long)s->audit.tree.size,
                          (unsigned long long)size, sqlite3_errmsg(s->wdb));
    if (audit_tile_count(from, 0) == audit_tile_count(size, 0))
        return IG_OK; /* only the partial tile: nothing was stored */
    store_audit_log(s, "warning", "audit.backfilled",
                    json_pack("{s:I, s:I, s:s}", "from", (json_int_t)from, "to",
                              (json_int_t)size, "message",
                              "audit tiles computed for audit events written "
                              "before the tiles existed"));
    return IG_OK;
}

/* How many leaves the stored level-0 tiles cover: all the full tiles of
   the events, or none. */
static enum ig_status
stored_leaves(struct store_sq *s, uint64_t size, uint64_t *stored,
              struct ig_err *err)
{
    char name[AUDIT_TILE_NAME_MAX];
    uint64_t tiles = 0, want = audit_tile_count(size, 0);

    if (query_u64(s->wdb,
                  "SELECT max(idx) + 1 FROM audit_tiles WHERE level = 0",
                  &tiles) != 0)
        return ig_err_set(err, IG_ERR_IO, "cannot read audit_tiles: %s",
                          sqlite3_errmsg(s->wdb));
    *stored = tiles * AUDIT_TILE_WIDTH;
    if (tiles == 0 || tiles == want)
        return IG_OK;
    audit_tile_name(0, tiles > want ? tiles - 1 : want - 1, name);
    if (tiles > want)
        return ig_err_set(err, IG_ERR_IO,
                          "audit log check: audit_tiles holds %s, past the "
                          "log of %llu events: the log was truncated or the "
                          "tile added; refusing to start",
                          name, (unsigned long long)size);
    return ig_err_set(err, IG_ERR_IO,
                      "audit log check: %s (leaves %llu to %llu) is missing "
                      "from audit_tiles: the tree was edited; refusing to "
                      "start",
                      name, (unsigned long long)(want - 1) * AUDIT_TILE_WIDTH,
                      (unsigned long long)want * AUDIT_TILE_WIDTH - 1);
}

/* The edge and the frontier of the first `stored` leaves, from the
   tiles (just checked against the events). */
static enum ig_status
load_tree(struct store_sq *s, uint64_t stored, struct ig_err *err)
{
    s->audit.tree.size = stored;
    if (store_audit_edge_rebuild(s) == IG_OK &&
        audit_frontier_load(&s->audit.tree, stored, store_audit_wfetch, s) ==
            IG_OK)
        return IG_OK;
    return ig_err_set(err, IG_ERR_IO,
                      "cannot rebuild the audit tree of %llu leaves from "
                      "audit_tiles",
                      (unsigned long long)stored);
}

/* store_anchor_env's record: append the event (the anchor's adoption) in
   a transaction of its own, before the writer starts. */
static enum ig_status
record_event(void *ctx, const char *event, struct ig_err *err)
{
    struct store_sq *s = ctx;
    const char *ev[1];
    enum ig_status rc;

    ev[0] = event;
    rc = sqlite3_exec(s->wdb, "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK
             ? store_append_events(s, ev, 1)
             : IG_ERR_IO;
    if (rc == IG_OK &&
        sqlite3_exec(s->wdb, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
        rc = IG_ERR_IO;
    if (rc != IG_OK) {
        (void)ig_err_set(err, IG_ERR_IO,
                         "cannot record the adoption of the audit anchor "
                         "in the log: %s",
                         sqlite3_errmsg(s->wdb));
        (void)sqlite3_exec(s->wdb, "ROLLBACK", NULL, NULL, NULL);
    }
    return rc;
}

/* The frontier rebuilt from the tiles must be the tree of the events. */
static enum ig_status
same_tree(struct store_sq *s, const struct audit_frontier *events,
          struct ig_err *err)
{
    unsigned char a[AUDIT_HASH_BYTES], b[AUDIT_HASH_BYTES];

    audit_frontier_root(events, a);
    audit_frontier_root(&s->audit.tree, b);
    if (events->size == s->audit.tree.size && memcmp(a, b, sizeof(a)) == 0)
        return IG_OK;
    return ig_err_set(err, IG_ERR_IO,
                      "audit log check: the tree rebuilt from audit_tiles "
                      "(%llu leaves) is not the one the %llu events make; "
                      "refusing to start",
                      (unsigned long long)s->audit.tree.size,
                      (unsigned long long)events->size);
}

enum ig_status
store_audit_open(struct store_sq *s, struct ig_err *err)
{
    struct audit_frontier events;
    uint64_t size = 0, stored = 0;
    double t0 = store_mono();

    memset(&s->audit, 0, sizeof(s->audit));
    audit_frontier_init(&s->audit.tree);
    s->anchor.env.opts = &s->opts;
    s->anchor.env.db_path = s->path;
    s->anchor.env.audit = &s->audit;
    s->anchor.env.fetch = store_audit_wfetch;
    s->anchor.env.ctx = s;
    s->anchor.env.record = record_event;
    if (query_u64(s->wdb, "SELECT max(seq) FROM audit_events", &size) != 0)
        return ig_err_set(err, IG_ERR_IO, "cannot read the audit log: %s",
                          sqlite3_errmsg(s->wdb));
    if (stored_leaves(s, size, &stored, err) != IG_OK ||
        store_audit_recompute(s, stored, &events, err) != IG_OK ||
        load_tree(s, stored, err) != IG_OK)
        return IG_ERR_IO;
    if (stored < events.size && backfill(s, events.size, err) != IG_OK)
        return IG_ERR_IO;
    if (same_tree(s, &events, err) != IG_OK ||
        store_audit_check_checkpoints(s, err) != IG_OK)
        return IG_ERR_IO;
    store_audit_log(s, "info", "audit.log_checked",
                    json_pack("{s:I, s:I, s:f}", "leaves",
                              (json_int_t)s->audit.tree.size, "checkpoint",
                              (json_int_t)s->audit.ckpt_size, "seconds",
                              store_mono() - t0));
    if (store_anchor_open(&s->anchor, err) != IG_OK)
        return IG_ERR_IO;
    s->ckpt_due = store_mono() + (double)s->opts.checkpoint_interval;
    return IG_OK;
}
