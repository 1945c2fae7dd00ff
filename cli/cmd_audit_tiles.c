/*
 * cmd_audit_tiles.c - `audit verify --db`'s check of the stored tiles
 * (audit_tiles, audit/audit_tile.h) against the tree it recomputes.
 *
 * The first verifier hands every complete subtree it computes to
 * cli_audit_tiles_node. Those at levels 0, 8, 16... are the entries of
 * tiles (level 0: the leaf hashes), collected in partial tiles; a tile
 * that fills is compared whole with its row, and an entry that differs
 * in a level-0 tile names its leaf (an edited event). One cursor per tile level
 * reads the rows in index order. A row that is missing, of another length than
 * 8 KiB (the bytes are untrusted), not the events' or past the log is a finding
 * that names the tile; the first one is kept. The signed checkpoints stay the
 * trust anchor: this locates an edit.
 */
#include "cmd_audit_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit_tile.h"

struct tile_cursor {
    struct store_log_cursor *c;
    int have;
    uint64_t idx;
    const unsigned char *hashes;
    size_t len;
};

struct cli_audit_tiles {
    struct tile_cursor lv[AUDIT_TILE_LEVELS];
    struct audit_tile_edge edge;
    uint64_t compared;
    enum ig_status st; /* a read failed: err says which */
    struct ig_err *err;
    enum audit_failure failure;
    uint64_t index;
    char detail[160];
};

static void
cursor_next(struct cli_audit_tiles *t, struct tile_cursor *c)
{
    struct store_log_row row;
    enum ig_status st;

    c->have = 0;
    while (t->st == IG_OK &&
           (st = store_log_next(c->c, &row, t->err)) == IG_OK) {
        if (row.key < 0)
            continue;
        c->idx = (uint64_t)row.key;
        c->hashes = row.data;
        c->len = row.len;
        c->have = 1;
        return;
    }
    if (t->st == IG_OK && st != IG_ERR_NOTFOUND)
        t->st = st;
}

enum ig_status
cli_audit_tiles_new(struct store_log *db, struct cli_audit_tiles **out,
                    struct ig_err *err)
{
    struct cli_audit_tiles *t = calloc(1, sizeof(*t));
    enum ig_status st = IG_OK;
    unsigned l;

    *out = NULL;
    if (t == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    t->err = err;
    for (l = 0; st == IG_OK && l < AUDIT_TILE_LEVELS; l++)
        if ((st = store_log_scan_tiles(db, l, &t->lv[l].c, err)) == IG_OK)
            cursor_next(t, &t->lv[l]);
    if (st == IG_OK)
        st = t->st;
    if (st != IG_OK) {
        cli_audit_tiles_free(t);
        return st;
    }
    *out = t;
    return IG_OK;
}

void
cli_audit_tiles_free(struct cli_audit_tiles *t)
{
    unsigned l;

    if (t == NULL)
        return;
    for (l = 0; l < AUDIT_TILE_LEVELS; l++)
        store_log_cursor_free(t->lv[l].c);
    free(t);
}

static void finding(struct cli_audit_tiles *t, enum audit_failure f,
                    uint64_t index, const char *fmt, ...) IG_PRINTF(4, 5);

static void
finding(struct cli_audit_tiles *t, enum audit_failure f, uint64_t index,
        const char *fmt, ...)
{
    va_list ap;

    if (t->failure != AUDIT_OK)
        return;
    t->failure = f;
    t->index = index;
    va_start(ap, fmt);
    (void)vsnprintf(t->detail, sizeof(t->detail), fmt, ap);
    va_end(ap);
}

/* The row of tile (level, n) current on its cursor, or NULL. */
static const struct tile_cursor *
tile_row(struct cli_audit_tiles *t, unsigned level, uint64_t n)
{
    struct tile_cursor *c = &t->lv[level];

    while (c->have && c->idx < n)
        cursor_next(t, c);
    return c->have && c->idx == n ? c : NULL;
}

/* The first entry where a stored tile differs from the recomputed. */
static unsigned
first_diff(const unsigned char *stored, const unsigned char *want)
{
    unsigned i;

    for (i = 0; i < AUDIT_TILE_WIDTH - 1; i++)
        if (memcmp(stored + (size_t)i * AUDIT_HASH_BYTES,
                   want + (size_t)i * AUDIT_HASH_BYTES, AUDIT_HASH_BYTES) != 0)
            break;
    return i;
}

/* A tile the recomputed tree filled against its row. */
static void
tile_check(struct cli_audit_tiles *t, unsigned level, uint64_t n)
{
    const struct tile_cursor *c = tile_row(t, level, n);
    const unsigned char *want = t->edge.hash[level][0];
    unsigned shift = AUDIT_TILE_HEIGHT * (level + 1), i;
    uint64_t first = n << shift;
    char name[AUDIT_TILE_NAME_MAX];

    audit_tile_name(level, n, name);
    if (c == NULL) {
        finding(t, AUDIT_BAD_TILE, first,
                "%s (leaves %llu to %llu) is missing from audit_tiles", name,
                (unsigned long long)first,
                (unsigned long long)(((n + 1) << shift) - 1));
        return;
    }
    if (c->len != AUDIT_TILE_BYTES || c->hashes == NULL) {
        finding(t, AUDIT_BAD_TILE, first,
                "%s in audit_tiles is %zu bytes, not %d", name, c->len,
                AUDIT_TILE_BYTES);
        return;
    }
    if (memcmp(c->hashes, want, AUDIT_TILE_BYTES) == 0) {
        t->compared += level == 0 ? AUDIT_TILE_WIDTH : 0;
        return;
    }
    i = first_diff(c->hashes, want);
    if (level == 0)
        finding(t, AUDIT_LEAF_MISMATCH, first + i,
                "leaf %llu no longer hashes to the leaf hash stored when it "
                "was appended (entry %u of %s)",
                (unsigned long long)(first + i), i, name);
    else
        finding(t, AUDIT_BAD_TILE, first,
                "entry %u of %s (from leaf %llu) is not the tree the leaves "
                "make",
                i, name, (unsigned long long)first);
}

int
cli_audit_tiles_node(void *ctx, unsigned level, uint64_t index,
                     const unsigned char hash[AUDIT_HASH_BYTES])
{
    struct cli_audit_tiles *t = ctx;
    uint64_t n;
    unsigned l;

    if (audit_tile_edge_put(&t->edge, level, index, hash, &l, &n))
        tile_check(t, l, n);
    return 0;
}

void
cli_audit_tiles_end(struct cli_audit_tiles *t, uint64_t size)
{
    char name[AUDIT_TILE_NAME_MAX];
    unsigned l;

    for (l = 0; l < AUDIT_TILE_LEVELS; l++) {
        (void)tile_row(t, l, audit_tile_count(size, l));
        if (!t->lv[l].have)
            continue;
        audit_tile_name(l, t->lv[l].idx, name);
        finding(t, AUDIT_BAD_TILE, size, "%s is past the log of %llu leaves",
                name, (unsigned long long)size);
    }
}

int
cli_audit_tiles_finding(const struct cli_audit_tiles *t, enum audit_failure *f,
                        uint64_t *index, const char **detail)
{
    if (t->failure == AUDIT_OK)
        return 0;
    *f = t->failure;
    *index = t->index;
    *detail = t->detail;
    return 1;
}

uint64_t
cli_audit_tiles_compared(const struct cli_audit_tiles *t)
{
    return t->compared;
}

enum ig_status
cli_audit_tiles_status(const struct cli_audit_tiles *t)
{
    return t->st;
}
