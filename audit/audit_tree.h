/*
 * audit_tree.h - the RFC 6962 / RFC 9162 Merkle tree over audit leaves.
 *
 *   leaf hash = SHA-256(0x00 || leaf bytes)
 *   node hash = SHA-256(0x01 || left || right)
 *   the root of an empty tree = SHA-256("")
 *
 * struct audit_frontier is the tree's right edge (one hash per set bit of
 * the size): appending a leaf costs O(log n) hashes at worst, O(1) on
 * average, and never rereads the log; the root is computed from it.
 * Proofs are built from complete-subtree hashes fetched through a callback
 * (the PDP keeps them in its store; a verifier computes them from leaves).
 * Proof verification follows RFC 9162 section 2.1.3.2 and 2.1.4.2.
 * All functions are pure and thread safe on distinct objects.
 */
#ifndef AUDIT_TREE_H
#define AUDIT_TREE_H

#include <stddef.h>
#include <stdint.h>

#include "ig_error.h"

/* Not limits we chose but what a tree of up to 2^64 - 1 leaves needs: a
   proof holds at most one hash per level (inclusion), two (consistency). */
#define AUDIT_HASH_BYTES 32
#define AUDIT_MAX_HEIGHT 64              /* sizes up to 2^64 - 1 */
#define AUDIT_PROOF_MAX AUDIT_MAX_HEIGHT /* hashes in one inclusion proof */
#define AUDIT_CPROOF_MAX (2 * AUDIT_MAX_HEIGHT) /* in a consistency proof */

void audit_leaf_hash(const void *leaf, size_t len,
                     unsigned char out[AUDIT_HASH_BYTES]);
void audit_node_hash(const unsigned char left[AUDIT_HASH_BYTES],
                     const unsigned char right[AUDIT_HASH_BYTES],
                     unsigned char out[AUDIT_HASH_BYTES]);

struct audit_frontier {
    uint64_t size;
    /* hash[i] is the root of the complete subtree of 2^i leaves that the
       size's bit i stands for (only set bits are meaningful). */
    unsigned char hash[AUDIT_MAX_HEIGHT][AUDIT_HASH_BYTES];
};

void audit_frontier_init(struct audit_frontier *f);

/*
 * Append one leaf hash. on_node (may be NULL) is called for every complete
 * subtree this append completes, leaf level first: (level, index at that
 * level, hash) - a store keeps these to build proofs later. It returns 0,
 * or -1 to fail the append (the frontier is then unchanged, IG_ERR_IO;
 * nodes reported before the failure are the store's to roll back).
 * IG_ERR_LIMIT at 2^64 - 1 leaves.
 */
typedef int (*audit_node_fn)(void *ctx, unsigned level, uint64_t index,
                             const unsigned char hash[AUDIT_HASH_BYTES]);
enum ig_status audit_frontier_append(struct audit_frontier *f,
                                     const unsigned char leaf[AUDIT_HASH_BYTES],
                                     audit_node_fn on_node, void *ctx) IG_WUR;

/* The root of the tree the frontier describes. */
void audit_frontier_root(const struct audit_frontier *f,
                         unsigned char out[AUDIT_HASH_BYTES]);

/*
 * Rebuild a frontier of the given size from the stored complete subtrees:
 * for each set bit, fetch(level, index). IG_ERR_NOTFOUND / IG_ERR_IO from
 * fetch are returned.
 */
typedef enum ig_status (*audit_fetch_fn)(void *ctx, unsigned level,
                                         uint64_t index,
                                         unsigned char out[AUDIT_HASH_BYTES]);
enum ig_status audit_frontier_load(struct audit_frontier *f, uint64_t size,
                                   audit_fetch_fn fetch, void *ctx) IG_WUR;

/* The root hash of the first size leaves, from stored subtrees. */
enum ig_status audit_root_at(uint64_t size, audit_fetch_fn fetch, void *ctx,
                             unsigned char out[AUDIT_HASH_BYTES]) IG_WUR;

/*
 * Inclusion proof of leaf index in the tree of size leaves (index < size):
 * *n hashes into proof (AUDIT_PROOF_MAX), RFC 9162 order. IG_ERR_INVALID
 * for index >= size; fetch's error otherwise (then *n = 0). Subtrees on
 * the right edge that are not complete are folded from complete ones.
 */
enum ig_status audit_inclusion_proof(uint64_t index, uint64_t size,
                                     audit_fetch_fn fetch, void *ctx,
                                     unsigned char proof[][AUDIT_HASH_BYTES],
                                     size_t *n) IG_WUR;

/* Consistency proof between trees of old_size and new_size leaves
   (0 < old_size <= new_size, else IG_ERR_INVALID), RFC 9162 order; empty
   when the sizes are equal. fetch's errors as above. */
enum ig_status audit_consistency_proof(uint64_t old_size, uint64_t new_size,
                                       audit_fetch_fn fetch, void *ctx,
                                       unsigned char proof[][AUDIT_HASH_BYTES],
                                       size_t *n) IG_WUR;

/*
 * IG_OK when the proof shows leaf at index is in the tree with root;
 * IG_ERR_CRYPTO when it does not, IG_ERR_INVALID for index >= size or
 * n > AUDIT_PROOF_MAX. (C before C23: pass a non-const hash array with a
 * cast, (const unsigned char(*)[32])proof.)
 */
enum ig_status
audit_verify_inclusion(const unsigned char leaf[AUDIT_HASH_BYTES],
                       uint64_t index, uint64_t size,
                       const unsigned char proof[][AUDIT_HASH_BYTES], size_t n,
                       const unsigned char root[AUDIT_HASH_BYTES]) IG_WUR;

/* IG_OK when the proof shows the tree (old_size, old_root) is a prefix of
   (new_size, new_root): equal sizes need the empty proof and equal roots,
   old_size 0 the empty proof and the empty root. IG_ERR_CRYPTO when it
   does not, IG_ERR_INVALID for old_size > new_size or n too large. */
enum ig_status
audit_verify_consistency(uint64_t old_size, uint64_t new_size,
                         const unsigned char old_root[AUDIT_HASH_BYTES],
                         const unsigned char new_root[AUDIT_HASH_BYTES],
                         const unsigned char proof[][AUDIT_HASH_BYTES],
                         size_t n) IG_WUR;

#endif
