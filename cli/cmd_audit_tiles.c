/*
 * cmd_audit_tiles.c - `audit verify --db`'s check of the stored tiles
 * (audit_tiles, audit/audit_tile.h) against the tree it recomputes.
 *
 * The first verifier hands every complete subtree it computes to
 * cli_audit_tiles_node. Level-0 subtrees are the leaf hashes: each is
 * compared at once with its entry of the stored level-0 tile, so an
 * edited event is named by its leaf. Subtrees at levels 8, 16... are
 * entries of the higher tiles, collected in partial tiles; a tile that
 * fills is compared whole with its row. One cursor per tile level reads
 * the rows in index order. A row that is missing, of another length
 * than 8 KiB (the bytes are untrusted), not the events' or past the log
 * is a finding that names the tile; the first one is kept. The signed
 * checkpoints stay the trust anchor: this locates an edit.
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

/* A leaf hash against its entry of the stored level-0 tile. */
static void
leaf_check(struct cli_audit_tiles *t, uint64_t index,
           const unsigned char hash[AUDIT_HASH_BYTES])
{
    const struct tile_cursor *c = tile_row(t, 0, index / AUDIT_TILE_WIDTH);
    unsigned i = (unsigned)(index % AUDIT_TILE_WIDTH);
    char name[AUDIT_TILE_NAME_MAX];

    if (c == NULL || c->len != AUDIT_TILE_BYTES || c->hashes == NULL)
        return; /* named when the tile is complete */
    t->compared++;
    if (memcmp(c->hashes + (size_t)i * AUDIT_HASH_BYTES, hash,
               AUDIT_HASH_BYTES) == 0)
        return;
    audit_tile_name(0, index / AUDIT_TILE_WIDTH, name);
    finding(t, AUDIT_LEAF_MISMATCH, index,
            "leaf %llu no longer hashes to the leaf hash stored when it "
            "was appended (entry %u of %s)",
            (unsigned long long)index, i, name);
}

/* A tile the recomputed tree filled against its row. */
static void
tile_check(struct cli_audit_tiles *t, unsigned level, uint64_t n)
{
    const struct tile_cursor *c = tile_row(t, level, n);
    unsigned shift = AUDIT_TILE_HEIGHT * (level + 1);
    uint64_t first = n << shift;
    char name[AUDIT_TILE_NAME_MAX];

    audit_tile_name(level, n, name);
    if (c == NULL)
        finding(t, AUDIT_BAD_TILE, first,
                "%s (leaves %llu to %llu) is missing from audit_tiles", name,
                (unsigned long long)first,
                (unsigned long long)(((n + 1) << shift) - 1));
    else if (c->len != AUDIT_TILE_BYTES || c->hashes == NULL)
        finding(t, AUDIT_BAD_TILE, first,
                "%s in audit_tiles is %zu bytes, not %d", name, c->len,
                AUDIT_TILE_BYTES);
    else if (level > 0 &&
             memcmp(c->hashes, t->edge.hash[level], AUDIT_TILE_BYTES) != 0)
        finding(t, AUDIT_BAD_TILE, first,
                "%s (from leaf %llu) is not the tree the leaves make", name,
                (unsigned long long)first);
}

int
cli_audit_tiles_node(void *ctx, unsigned level, uint64_t index,
                     const unsigned char hash[AUDIT_HASH_BYTES])
{
    struct cli_audit_tiles *t = ctx;
    uint64_t n;
    unsigned l;

    if (level == 0)
        leaf_check(t, index, hash);
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
