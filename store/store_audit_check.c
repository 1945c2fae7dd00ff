/*
 * store_audit_check.c - the audit log checked against itself when the
 * store opens, before anything is appended or signed.
 *
 * DESIGN
 * The events are the log; audit_nodes and checkpoints are derived from
 * them and may have been edited along with them by whoever can write the
 * database file. So at every open every event is read once, in seq order,
 * its leaf hash recomputed and pushed onto a fresh frontier; every
 * complete subtree that completes (audit_frontier_append's on_node, leaf
 * level first) is compared with its stored row, read by one cursor per
 * level in index order (the table's primary key, so nothing is sorted).
 * The first difference refuses the start and names it: a gap in seq, the
 * first leaf whose event no longer hashes to its stored leaf hash, or the
 * first stored node (and the leaves it covers) that the events do not
 * make. Rows beyond the tree are refused too. Events after the stored
 * nodes (a database from before the tree) have no rows to compare yet:
 * store_audit.c backfills them after this pass.
 *
 * Then every stored checkpoint's root must be the root of the tree of its
 * size (from the nodes, now known to be the events'); the newest becomes
 * the one the next checkpoint extends. The anchor outside the database
 * (store_anchor.c) is checked after this, against the same tree.
 *
 * Cost: one SHA-256 per leaf and about one per leaf for the nodes, and one
 * sequential read of audit_events and audit_nodes (docs/audit.md has the
 * figure for a million leaves).
 */
#include "store_int.h"

#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "ig_limits.h"

#define STR_(x) #x
#define STR(x) STR_(x)

struct level_cursor {
    sqlite3_stmt *st; /* SELECT idx, hash ... WHERE level = ? ORDER BY idx */
    int have;         /* a row is current */
    sqlite3_int64 idx;
    unsigned char hash[AUDIT_HASH_BYTES];
    int hash_ok; /* the row's hash has 32 bytes */
};

struct recompute {
    struct store *s;
    uint64_t stored; /* leaves whose subtrees are stored (max idx + 1) */
    struct level_cursor lv[AUDIT_MAX_HEIGHT];
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
    c->hash_ok = sqlite3_column_bytes(c->st, 1) == AUDIT_HASH_BYTES;
    if (c->hash_ok)
        memcpy(c->hash, sqlite3_column_blob(c->st, 1), AUDIT_HASH_BYTES);
}

static struct level_cursor *
cursor_at(struct recompute *r, unsigned level)
{
    struct level_cursor *c = &r->lv[level];

    if (c->st != NULL)
        return c;
    if (sqlite3_prepare_v2(r->s->wdb,
                           "SELECT idx, hash FROM audit_nodes WHERE level = ?1 "
                           "ORDER BY idx",
                           -1, &c->st, NULL) != SQLITE_OK) {
        r->st = ig_err_set(r->err, IG_ERR_IO, "cannot read audit_nodes: %s",
                           sqlite3_errmsg(r->s->wdb));
        return NULL;
    }
    (void)sqlite3_bind_int(c->st, 1, (int)level);
    cursor_next(c);
    return c;
}

/* audit_node_fn: compare a subtree the events complete with its row. */
static int
check_node(void *ctx, unsigned level, uint64_t index,
           const unsigned char hash[AUDIT_HASH_BYTES])
{
    struct recompute *r = ctx;
    struct level_cursor *c;
    uint64_t first = index << level, last = ((index + 1) << level) - 1;

    if (last >= r->stored)
        return 0; /* not stored yet: the backfill adds it */
    if ((c = cursor_at(r, level)) == NULL)
        return -1;
    if (level == 0 && (!c->have || c->idx != (sqlite3_int64)index))
        r->st = ig_err_set(r->err, IG_ERR_IO,
                           "audit log check: leaf %llu has no stored leaf "
                           "hash (audit_nodes level 0): the tree was edited; "
                           "refusing to start",
                           (unsigned long long)index);
    else if (level == 0 && (!c->hash_ok ||
                            sodium_memcmp(c->hash, hash, sizeof(c->hash)) != 0))
        r->st = ig_err_set(r->err, IG_ERR_IO,
                           "audit log check: leaf %llu (audit_events seq "
                           "%llu) does not hash to its stored leaf hash: the "
                           "event was edited; refusing to start",
                           (unsigned long long)index,
                           (unsigned long long)index + 1);
    else if (!c->have || c->idx != (sqlite3_int64)index || !c->hash_ok ||
             sodium_memcmp(c->hash, hash, sizeof(c->hash)) != 0)
        r->st = ig_err_set(r->err, IG_ERR_IO,
                           "audit log check: the stored tree node (level %u, "
                           "index %llu: from leaf %llu to leaf %llu) is not "
                           "the one the events make: audit_nodes was edited; "
                           "refusing to start",
                           level, (unsigned long long)index,
                           (unsigned long long)first, (unsigned long long)last);
    if (r->st != IG_OK)
        return -1;
    cursor_next(c);
    return 0;
}

/* Rows left over: a node of a level the tree has, beyond it, or of a
   level it has not reached. */
static void
check_leftovers(struct recompute *r)
{
    sqlite3_stmt *st = NULL;
    unsigned level, top = 0;

    for (level = 0; level < AUDIT_MAX_HEIGHT && r->st == IG_OK; level++) {
        if (r->lv[level].st == NULL)
            continue;
        top = level + 1;
        if (r->lv[level].have)
            r->st = ig_err_set(r->err, IG_ERR_IO,
                               "audit log check: audit_nodes holds a node "
                               "(level %u, index %lld) the log of %llu "
                               "leaves does not have; refusing to start",
                               level, (long long)r->lv[level].idx,
                               (unsigned long long)r->stored);
    }
    if (r->st != IG_OK)
        return;
    if (sqlite3_prepare_v2(r->s->wdb,
                           "SELECT level, idx FROM audit_nodes WHERE level >= "
                           "?1 OR level < 0 LIMIT 1",
                           -1, &st, NULL) != SQLITE_OK) {
        r->st = ig_err_set(r->err, IG_ERR_IO, "cannot read audit_nodes: %s",
                           sqlite3_errmsg(r->s->wdb));
        return;
    }
    (void)sqlite3_bind_int(st, 1, (int)top);
    if (sqlite3_step(st) == SQLITE_ROW)
        r->st = ig_err_set(r->err, IG_ERR_IO,
                           "audit log check: audit_nodes holds a node "
                           "(level %lld, index %lld) the log of %llu leaves "
                           "does not have; refusing to start",
                           (long long)sqlite3_column_int64(st, 0),
                           (long long)sqlite3_column_int64(st, 1),
                           (unsigned long long)r->stored);
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
store_audit_recompute(struct store *s, uint64_t stored,
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
    if (r->st == IG_OK)
        check_leftovers(r);
    sqlite3_finalize(q);
    for (level = 0; level < AUDIT_MAX_HEIGHT; level++)
        sqlite3_finalize(r->lv[level].st);
    (void)sqlite3_exec(s->wdb, "PRAGMA mmap_size=0", NULL, NULL, NULL);
    st = r->st;
    free(r);
    return st;
}

/* ---- checkpoints ---- */

int
store_audit_note_root(const char *note, uint64_t size,
                      unsigned char root[AUDIT_HASH_BYTES])
{
    const char *l2 = note != NULL ? strchr(note, '\n') : NULL, *l3, *e;
    char *end;
    size_t len = 0;

    if (l2 == NULL || *++l2 < '0' || *l2 > '9' ||
        strtoull(l2, &end, 10) != size || *end != '\n')
        return -1;
    l3 = end + 1;
    e = strchr(l3, '\n');
    if (e == NULL ||
        sodium_base642bin(root, AUDIT_HASH_BYTES, l3, (size_t)(e - l3), NULL,
                          &len, NULL, sodium_base64_VARIANT_ORIGINAL) != 0 ||
        len != AUDIT_HASH_BYTES)
        return -1;
    return 0;
}

/* One stored checkpoint against the tree the nodes describe. */
static enum ig_status
check_one(struct store *s, audit_fetch_fn fetch, uint64_t size,
          const char *note, struct ig_err *err)
{
    struct store_audit_state *a = &s->audit;
    unsigned char root[AUDIT_HASH_BYTES], want[AUDIT_HASH_BYTES];

    if (size == 0 || size > a->tree.size)
        return ig_err_set(err, IG_ERR_IO,
                          "checkpoint of %llu leaves but the audit log holds "
                          "%llu: the log was truncated",
                          (unsigned long long)size,
                          (unsigned long long)a->tree.size);
    if (store_audit_note_root(note, size, root) != 0)
        return ig_err_set(err, IG_ERR_IO, "checkpoint %llu is malformed",
                          (unsigned long long)size);
    if (audit_root_at(size, fetch, s, want) != IG_OK ||
        sodium_memcmp(root, want, sizeof(root)) != 0)
        return ig_err_set(err, IG_ERR_IO,
                          "audit log check: the signed checkpoint of size "
                          "%llu is not the root of the first %llu events: "
                          "the log or its checkpoints were rewritten; "
                          "refusing to start",
                          (unsigned long long)size, (unsigned long long)size);
    a->ckpt_size = size;
    memcpy(a->ckpt_root, root, sizeof(root));
    free(s->anchor.newest);
    if ((s->anchor.newest = strdup(note)) == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    return IG_OK;
}

enum ig_status
store_audit_check_checkpoints(struct store *s, audit_fetch_fn fetch,
                              struct ig_err *err)
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
        rc = check_one(s, fetch, size > 0 ? (uint64_t)size : 0,
                       (const char *)sqlite3_column_text(st, 1), err);
    }
    if (rc == IG_OK && step != SQLITE_DONE)
        rc = ig_err_set(err, IG_ERR_IO, "cannot read checkpoints: %s",
                        sqlite3_errmsg(s->wdb));
    sqlite3_finalize(st);
    return rc;
}
