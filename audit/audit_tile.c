/*
 * audit_tile.c - tiles of 256 hashes (audit_tile.h): their widths and
 * roots, a writer's partial tiles, and subtree hashes read from tiles.
 *
 * A subtree (k, j) is found in tile level L = k / 8 as the 2^r entries
 * from j << r (r = k % 8): one stored hash when r = 0, at most 128 hashed
 * up otherwise. Entries of a full tile come from the tile; entries of the
 * partial tile from the writer's edge, or are recomputed: at level 0 a
 * leaf hash, above it the root of the full tile below (255 hashes). A
 * proof touches one subtree per level, so the worst case is a few
 * hundred tile reads at the right edge of a large tree.
 */
#include "audit_tile.h"

#include <stdio.h>
#include <string.h>

unsigned
audit_tile_width(uint64_t size, unsigned level)
{
    unsigned shift = AUDIT_TILE_HEIGHT * level;

    if (level >= AUDIT_TILE_LEVELS)
        return 0;
    return (unsigned)((size >> shift) & (AUDIT_TILE_WIDTH - 1));
}

uint64_t
audit_tile_count(uint64_t size, unsigned level)
{
    unsigned shift = AUDIT_TILE_HEIGHT * (level + 1);

    return shift >= 64 ? 0 : size >> shift;
}

/* Hash n (a power of two, <= 256) consecutive entries up to one root;
   scratch holds n / 2 hashes. */
static void
fold(const unsigned char *entries, size_t n,
     unsigned char scratch[][AUDIT_HASH_BYTES],
     unsigned char out[AUDIT_HASH_BYTES])
{
    size_t i;

    if (n == 1) {
        memcpy(out, entries, AUDIT_HASH_BYTES);
        return;
    }
    for (i = 0; i < n / 2; i++)
        audit_node_hash(entries + 2 * i * AUDIT_HASH_BYTES,
                        entries + (2 * i + 1) * AUDIT_HASH_BYTES, scratch[i]);
    for (n /= 2; n > 1; n /= 2)
        for (i = 0; i < n / 2; i++)
            audit_node_hash(scratch[2 * i], scratch[2 * i + 1], scratch[i]);
    memcpy(out, scratch[0], AUDIT_HASH_BYTES);
}

void
audit_tile_root(const unsigned char *tile, unsigned char out[AUDIT_HASH_BYTES])
{
    unsigned char scratch[AUDIT_TILE_WIDTH / 2][AUDIT_HASH_BYTES];

    fold(tile, AUDIT_TILE_WIDTH, scratch, out);
}

int
audit_tile_edge_put(struct audit_tile_edge *e, unsigned level, uint64_t index,
                    const unsigned char hash[AUDIT_HASH_BYTES], unsigned *tl,
                    uint64_t *tn)
{
    unsigned l = level / AUDIT_TILE_HEIGHT, i;

    if (level % AUDIT_TILE_HEIGHT != 0 || l >= AUDIT_TILE_LEVELS)
        return 0;
    i = (unsigned)(index & (AUDIT_TILE_WIDTH - 1));
    memcpy(e->hash[l][i], hash, AUDIT_HASH_BYTES);
    if (i != AUDIT_TILE_WIDTH - 1)
        return 0;
    *tl = l;
    *tn = index / AUDIT_TILE_WIDTH;
    return 1;
}

/* Entry `index` of level l's partial tile, from below. */
static enum ig_status
entry_below(const struct audit_tile_src *src, unsigned l, uint64_t index,
            unsigned char out[AUDIT_HASH_BYTES])
{
    const unsigned char *t = NULL;
    enum ig_status st;

    if (l == 0)
        return src->leaf(src->ctx, index, out);
    if ((st = src->tile(src->ctx, l - 1, index, &t)) != IG_OK)
        return st;
    audit_tile_root(t, out);
    return IG_OK;
}

enum ig_status
audit_tile_node(void *ctx, unsigned level, uint64_t index,
                unsigned char out[AUDIT_HASH_BYTES])
{
    const struct audit_tile_src *src = ctx;
    unsigned char part[AUDIT_TILE_WIDTH / 2][AUDIT_HASH_BYTES];
    unsigned char scratch[AUDIT_TILE_WIDTH / 4][AUDIT_HASH_BYTES];
    unsigned l = level / AUDIT_TILE_HEIGHT, r = level % AUDIT_TILE_HEIGHT;
    uint64_t first, tile, i, n = UINT64_C(1) << r;
    const unsigned char *t = NULL;
    enum ig_status st;

    if (level >= AUDIT_MAX_HEIGHT || index >= (src->size >> level))
        return IG_ERR_NOTFOUND; /* not a complete subtree of this tree */
    first = index << r;
    tile = first / AUDIT_TILE_WIDTH;
    if (tile < audit_tile_count(src->size, l)) {
        if ((st = src->tile(src->ctx, l, tile, &t)) != IG_OK)
            return st;
        fold(t + (first % AUDIT_TILE_WIDTH) * AUDIT_HASH_BYTES, (size_t)n, part,
             out);
        return IG_OK;
    }
    /* A reader may find the tile stored full (a tree that grew since):
       its first entries are this tree's. */
    if (src->entry == NULL &&
        (st = src->tile(src->ctx, l, tile, &t)) != IG_ERR_NOTFOUND) {
        if (st != IG_OK)
            return st;
        fold(t + (first % AUDIT_TILE_WIDTH) * AUDIT_HASH_BYTES, (size_t)n, part,
             out);
        return IG_OK;
    }
    for (i = 0; i < n; i++) {
        st = src->entry != NULL ? src->entry(src->ctx, l, first + i, part[i])
                                : entry_below(src, l, first + i, part[i]);
        if (st != IG_OK)
            return st;
    }
    fold(part[0], (size_t)n, scratch, out);
    return IG_OK;
}

void
audit_tile_name(unsigned level, uint64_t index, char out[AUDIT_TILE_NAME_MAX])
{
    char groups[40] = ""; /* 7 groups of 3 digits: 2^64 - 1 */
    char g[8];
    uint64_t div = 1;
    size_t used = 0;
    int k;

    while (index / div >= 1000)
        div *= 1000;
    for (k = 0; div > 0; div /= 1000, k++) {
        (void)snprintf(g, sizeof(g), "%s%03u", div > 1 ? "x" : "",
                       (unsigned)((index / div) % 1000));
        if (used + strlen(g) + 2 > sizeof(groups))
            break;
        used += (size_t)snprintf(groups + used, sizeof(groups) - used, "%s%s",
                                 k > 0 ? "/" : "", g);
    }
    (void)snprintf(out, AUDIT_TILE_NAME_MAX, "tile/%u/%s", level, groups);
}
