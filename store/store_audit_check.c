/*
 * store_audit_check.c - the audit log checked against itself when the
 * store opens, before anything is appended or signed.
 *
 * DESIGN
 * The events are the log; audit_tiles and checkpoints are derived from
 * them and may have been edited along with them by whoever can write the
 * database file. So at every open every event is read once, in seq order,
 * its leaf hash recomputed and pushed onto a fresh frontier; every
 * complete subtree that completes (audit_frontier_append's on_node, leaf
 * level first) at levels 0, 8, 16... is an entry of a tile
 * (audit/audit_tile.h), collected in a partial tile; when a tile fills,
 * it is compared with its stored row, read by one cursor per tile level
 * in index order (the table's primary key, so nothing is sorted). The
 * first difference refuses the start and names it: a gap in seq, the
 * first leaf whose event no longer hashes to its entry of a level-0 tile,
 * a tile of another length, a missing tile, an entry of a higher tile
 * the events do not make. Rows beyond the tree are refused too. Events
 * after the stored tiles (a database from before the tiles) have no rows
 * to compare yet: store_audit_open.c computes them after this pass.
 *
 * Then every stored checkpoint's root must be the root of the tree of its
 * size (from the tiles, now known to be the events'); the newest becomes
 * the one the next checkpoint extends. The anchor outside the database
 * (store_anchor.c) is checked after this, against the same tree.
 *
 * Cost: one SHA-256 per leaf and about one per leaf for the nodes, one
 * sequential read of audit_events, and one 8 KiB row per 256 leaves
 * (docs/audit.md has the figure for a million leaves).
 */
#include "store_int.h"

#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "ig_limits.h"

#define STR_(x) #x
#define STR(x) STR_(x)

struct level_cursor {
    sqlite3_stmt *st; /* SELECT idx, hashes ... WHERE level = ? ORDER BY idx */
    int have;         /* a row is current */
    sqlite3_int64 idx;
    const unsigned char *hashes; /* the row's blob, until the next step */
    int len;
};

struct recompute {
    struct store_sq *s;
    uint64_t stored; /* leaves whose tiles are stored (full level-0 tiles) */
    uint64_t size;   /* the events, once all are read */
    struct level_cursor lv[AUDIT_TILE_LEVELS];
    struct audit_tile_edge edge; /* the tiles being recomputed */
    struct ig_err *err;
    enum ig_status st;
};

static void
cursor_next(struct level_cursor *c)
{
    c->have = sqlite3_step(c->st) == SQLITE_ROW;
    if (!c->have)
        return;
    c->idx = sqlite3_column_int64(c->st, 0);
    c->hashes = sqlite3_column_blob(c->st, 1);
    c->len = sqlite3_column_bytes(c->st, 1);
}

static struct level_cursor *
cursor_at(struct recompute *r, unsigned level)
{
    struct level_cursor *c = &r->lv[level];

    if (c->st != NULL)
        return c;
    if (sqlite3_prepare_v2(r->s->wdb,
                           "SELECT idx, hashes FROM audit_tiles WHERE level = "
                           "?1 ORDER BY idx",
                           -1, &c->st, NULL) != SQLITE_OK) {
        r->st = ig_err_set(r->err, IG_ERR_IO, "cannot read audit_tiles: %s",
                           sqlite3_errmsg(r->s->wdb));
        return NULL;
    }
    (void)sqlite3_bind_int(c->st, 1, (int)level);
    cursor_next(c);
    return c;
}

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

/* A recomputed full tile against its row (c current, its idx tn). */
static void
compare_tile(struct recompute *r, const struct level_cursor *c, unsigned tl,
             uint64_t tn)
{
    const unsigned char *want = r->edge.hash[tl][0];
    unsigned shift = AUDIT_TILE_HEIGHT * (tl + 1), i;
    uint64_t first = tn << shift, last = ((tn + 1) << shift) - 1;
    char name[AUDIT_TILE_NAME_MAX];

    audit_tile_name(tl, tn, name);
    if (!c->have || c->idx != (sqlite3_int64)tn)
        r->st = ig_err_set(r->err, IG_ERR_IO,
                           "audit log check: %s (leaves %llu to %llu) is "
                           "missing from audit_tiles: the tree was edited; "
                           "refusing to start",
                           name, (unsigned long long)first,
                           (unsigned long long)last);
    else if (c->len != AUDIT_TILE_BYTES || c->hashes == NULL)
        r->st = ig_err_set(r->err, IG_ERR_IO,
                           "audit log check: %s in audit_tiles is %d bytes, "
                           "not %d: the tree was edited; refusing to start",
                           name, c->len, AUDIT_TILE_BYTES);
    else if (memcmp(c->hashes, want, AUDIT_TILE_BYTES) == 0)
        return;
    else if (tl == 0) {
        i = first_diff(c->hashes, want);
        r->st = ig_err_set(r->err, IG_ERR_IO,
                           "audit log check: leaf %llu (audit_events seq "
                           "%llu) does not hash to its stored leaf hash "
                           "(entry %u of %s): the event or the tile was "
                           "edited; refusing to start",
                           (unsigned long long)(first + i),
                           (unsigned long long)(first + i + 1), i, name);
    } else {
        i = first_diff(c->hashes, want);
        r->st = ig_err_set(r->err, IG_ERR_IO,
                           "audit log check: entry %u of %s (leaves %llu to "
                           "%llu) is not the one the events make: "
                           "audit_tiles was edited; refusing to start",
                           i, name, (unsigned long long)first,
                           (unsigned long long)last);
    }
}

/* audit_node_fn: collect tile entries; compare a tile that fills. */
static int
check_node(void *ctx, unsigned level, uint64_t index,
           const unsigned char hash[AUDIT_HASH_BYTES])
{
    struct recompute *r = ctx;
    struct level_cursor *c;
    uint64_t tn;
    unsigned tl;

    if (!audit_tile_edge_put(&r->edge, level, index, hash, &tl, &tn))
        return 0;
    if (((index + 1) << level) - 1 >= r->stored)
        return 0; /* not stored yet: store_audit_open.c adds it */
    if ((c = cursor_at(r, tl)) == NULL)
        return -1;
    compare_tile(r, c, tl, tn);
    if (r->st != IG_OK)
        return -1;
    cursor_next(c);
    return 0;
}

/* Rows left over: a tile of a level the tree has, beyond it, or of a
   level it has not reached. */
static void
check_leftovers(struct recompute *r)
{
    char name[AUDIT_TILE_NAME_MAX];
    sqlite3_stmt *st = NULL;
    unsigned level, top = 0;
    sqlite3_int64 l, i;

    for (level = 0; level < AUDIT_TILE_LEVELS && r->st == IG_OK; level++) {
        if (r->lv[level].st == NULL)
            continue;
        top = level + 1;
        if (r->lv[level].have) {
            audit_tile_name(
                level, r->lv[level].idx >= 0 ? (uint64_t)r->lv[level].idx : 0,
                name);
            r->st = ig_err_set(r->err, IG_ERR_IO,
                               "audit log check: audit_tiles holds %s, "
                               "past the log of %llu leaves; refusing to "
                               "start",
                               name, (unsigned long long)r->size);
        }
    }
    if (r->st != IG_OK)
        return;
    if (sqlite3_prepare_v2(r->s->wdb,
                           "SELECT level, idx FROM audit_tiles WHERE level >= "
                           "?1 OR level < 0 OR idx < 0 LIMIT 1",
                           -1, &st, NULL) != SQLITE_OK) {
        r->st = ig_err_set(r->err, IG_ERR_IO, "cannot read audit_tiles: %s",
                           sqlite3_errmsg(r->s->wdb));
        return;
    }
    (void)sqlite3_bind_int(st, 1, (int)top);
    if (sqlite3_step(st) == SQLITE_ROW) {
        l = sqlite3_column_int64(st, 0);
        i = sqlite3_column_int64(st, 1);
        r->st =
            ig_err_set(r->err, IG_ERR_IO,
                       "audit log check: audit_tiles holds a tile (level "
                       "%lld, index %lld) past the log of %llu leaves; "
                       "refusing to start",
                       (long long)l, (long long)i, (unsigned long long)r->size);
    }
    sqlite3_finalize(st);
}

/* One event: its seq must be the next, its leaf pushed and checked. */
static void
check_event(struct recompute *r, struct audit_frontier *f, sqlite3_stmt *q)
{
    unsigned char leaf[AUDIT_HASH_BYTES];
    sqlite3_int64 seq = sqlite3_column_int64(q, 0);
    uint64_t next = f->size;

    if (seq != (sqlite3_int64)next + 1) {
        r->st = ig_err_set(
            r->err, IG_ERR_IO,
            seq > (sqlite3_int64)next + 1
                ? "audit log check: leaf %llu is missing (a gap in "
                  "audit_events.seq: the next row is seq %lld); refusing to "
                  "start"
                : "audit log check: before leaf %llu audit_events holds a "
                  "row with seq %lld, outside the log; refusing to start",
            (unsigned long long)next, (long long)seq);
        return;
    }
    audit_leaf_hash(sqlite3_column_text(q, 1),
                    (size_t)sqlite3_column_bytes(q, 1), leaf);
    if (audit_frontier_append(f, leaf, check_node, r) != IG_OK &&
        r->st == IG_OK)
        r->st = ig_err_set(r->err, IG_ERR_IO,
                           "audit log check: cannot add leaf %llu",
                           (unsigned long long)next);
}

enum ig_status
store_audit_recompute(struct store_sq *s, uint64_t stored,
                      struct audit_frontier *out, struct ig_err *err)
{
    struct recompute *r = calloc(1, sizeof(*r));
    sqlite3_stmt *q = NULL;
    enum ig_status st;
    unsigned level;
    int step = SQLITE_DONE;

    if (r == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    r->s = s;
    r->stored = stored;
    r->err = err;
    audit_frontier_init(out);
    /* One sequential pass over the whole file: read it through a memory
       map (as `audit verify` does), not the page cache's copies. */
    (void)sqlite3_exec(s->wdb, "PRAGMA mmap_size=" STR(IG_STORE_MMAP_BYTES),
                       NULL, NULL, NULL);
    if (sqlite3_prepare_v2(s->wdb,
                           "SELECT seq, event FROM audit_events ORDER BY seq",
                           -1, &q, NULL) != SQLITE_OK)
        r->st = ig_err_set(err, IG_ERR_IO, "cannot read the audit log: %s",
                           sqlite3_errmsg(s->wdb));
    while (r->st == IG_OK && (step = sqlite3_step(q)) == SQLITE_ROW)
        check_event(r, out, q);
    if (r->st == IG_OK && step != SQLITE_DONE)
        r->st = ig_err_set(err, IG_ERR_IO, "cannot read the audit log: %s",
                           sqlite3_errmsg(s->wdb));
    if (r->st == IG_OK && out->size < stored)
        r->st = ig_err_set(err, IG_ERR_IO,
                           "the audit tree has %llu leaves but the log only "
                           "%llu events: the log was truncated",
                           (unsigned long long)stored,
                           (unsigned long long)out->size);
    r->size = out->size;
    if (r->st == IG_OK)
        check_leftovers(r);
    sqlite3_finalize(q);
    for (level = 0; level < AUDIT_TILE_LEVELS; level++)
        sqlite3_finalize(r->lv[level].st);
    (void)sqlite3_exec(s->wdb, "PRAGMA mmap_size=0", NULL, NULL, NULL);
    st = r->st;
    free(r);
    return st;
}

/* ---- checkpoints ---- */

enum ig_status
store_audit_check_checkpoints(struct store_sq *s, struct ig_err *err)
{
    sqlite3_stmt *st = NULL;
    enum ig_status rc = IG_OK;
    sqlite3_int64 size;
    int step = SQLITE_DONE;

    s->audit.ckpt_size = 0;
    if (sqlite3_prepare_v2(s->wdb,
                           "SELECT size, note FROM checkpoints ORDER BY size",
                           -1, &st, NULL) != SQLITE_OK)
        return ig_err_set(err, IG_ERR_IO, "cannot read checkpoints: %s",
                          sqlite3_errmsg(s->wdb));
    while (rc == IG_OK && (step = sqlite3_step(st)) == SQLITE_ROW) {
        size = sqlite3_column_int64(st, 0);
        rc = store_anchor_check_stored(
            &s->anchor, size > 0 ? (uint64_t)size : 0,
            (const char *)sqlite3_column_text(st, 1), err);
    }
    if (rc == IG_OK && step != SQLITE_DONE)
        rc = ig_err_set(err, IG_ERR_IO, "cannot read checkpoints: %s",
                        sqlite3_errmsg(s->wdb));
    sqlite3_finalize(st);
    return rc;
}
