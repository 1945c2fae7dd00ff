/*
 * audit_tile.h - the audit tree's stored form: C2SP tlog-tiles style
 * tiles of 256 hashes.
 *
 *   tile (L, N) holds the hashes of tree level 8L, entries 256N .. 256N+255:
 *   entry i is MTH(D[(256N + i) * 256^L : (256N + i + 1) * 256^L]), so a
 *   level-0 tile holds 256 leaf hashes and a level-1 entry is the root of
 *   one full level-0 tile. A tile is stored once, when it is full
 *   (AUDIT_TILE_BYTES: the 256 hashes concatenated).
 *
 * A tree of `size` leaves has, at level L, (size >> 8(L+1)) full tiles and
 * one partial tile of audit_tile_width(size, L) entries (0: none). A
 * writer keeps those partial tiles in a struct audit_tile_edge; a reader
 * recomputes the entries of a partial tile it needs from below (a leaf
 * hash, or the root of a full tile one level down).
 *
 * Any complete subtree (k, j) - leaves [j * 2^k, (j+1) * 2^k) - lies in
 * one tile: level L = k / 8, entries [j << r, (j+1) << r) with r = k % 8,
 * and is those 2^r entries hashed up r times. audit_tile_node turns tiles
 * into the audit_fetch_fn that audit_tree.h's roots and proofs take.
 * Tile bytes read from a database are untrusted: every function here
 * checks a tile's length before reading it. Pure; thread safe on
 * distinct objects.
 */
#ifndef AUDIT_TILE_H
#define AUDIT_TILE_H

#include <stddef.h>
#include <stdint.h>

#include "audit_tree.h"
#include "ig_error.h"

#define AUDIT_TILE_HEIGHT 8 /* tree levels per tile level */
#define AUDIT_TILE_WIDTH 256
#define AUDIT_TILE_BYTES (AUDIT_TILE_WIDTH * AUDIT_HASH_BYTES)
#define AUDIT_TILE_LEVELS (AUDIT_MAX_HEIGHT / AUDIT_TILE_HEIGHT)

/* The entries of the partial tile at tile level `level` of a tree of size
   leaves (0..255; 0: no partial tile there). */
unsigned audit_tile_width(uint64_t size, unsigned level);

/* The number of full tiles at tile level `level`. */
uint64_t audit_tile_count(uint64_t size, unsigned level);

/* The root of one full tile: its 256 entries hashed up 8 levels. */
void audit_tile_root(const unsigned char *tile,
                     unsigned char out[AUDIT_HASH_BYTES]);

/* The partial tiles of a tree: hash[L][i] is entry i of level L's partial
   tile, valid for i < audit_tile_width(size, L). */
struct audit_tile_edge {
    uint64_t size;
    unsigned char hash[AUDIT_TILE_LEVELS][AUDIT_TILE_WIDTH][AUDIT_HASH_BYTES];
};

/*
 * Record a complete subtree as audit_frontier_append's on_node reports it
 * (every level: only levels 8L are tile entries). Returns 1 when it is
 * the last entry of tile (*tl, *tn): its 256 entries are then
 * e->hash[*tl], until the next put at that level; 0 otherwise. e->size
 * is the caller's to set once the append is done.
 */
int audit_tile_edge_put(struct audit_tile_edge *e, unsigned level,
                        uint64_t index,
                        const unsigned char hash[AUDIT_HASH_BYTES],
                        unsigned *tl, uint64_t *tn);

/*
 * Where audit_tile_node finds hashes, for a tree of `size` leaves.
 *   tile:  the full tile (level, index): *out borrowed, AUDIT_TILE_BYTES
 *          long, valid until the next call; IG_ERR_NOTFOUND (not stored),
 *          IG_ERR_INVALID (stored with another length), IG_ERR_IO.
 *   entry: entry `index` of level `level`'s partial tile (a writer's
 *          edge); NULL: computed from below with leaf and tile.
 *   leaf:  the leaf hash of leaf `index` (from its event); only needed
 *          when entry is NULL.
 */
struct audit_tile_src {
    uint64_t size;
    enum ig_status (*tile)(void *ctx, unsigned level, uint64_t index,
                           const unsigned char **out);
    enum ig_status (*entry)(void *ctx, unsigned level, uint64_t index,
                            unsigned char out[AUDIT_HASH_BYTES]);
    enum ig_status (*leaf)(void *ctx, uint64_t index,
                           unsigned char out[AUDIT_HASH_BYTES]);
    void *ctx;
};

/*
 * An audit_fetch_fn (ctx: a struct audit_tile_src): the hash of the
 * complete subtree (level, index) of src->size leaves. IG_ERR_NOTFOUND
 * when the subtree is not complete in that tree; the callbacks' errors.
 */
enum ig_status audit_tile_node(void *src, unsigned level, uint64_t index,
                               unsigned char out[AUDIT_HASH_BYTES]) IG_WUR;

/* The C2SP name of tile (level, index) for messages: "tile/L/x001/234";
   out must hold AUDIT_TILE_NAME_MAX bytes. */
#define AUDIT_TILE_NAME_MAX 48
void audit_tile_name(unsigned level, uint64_t index,
                     char out[AUDIT_TILE_NAME_MAX]);

#endif
