/*
 * audit_mem.h - an in-memory audit tree: every complete subtree hash of a
 * log, kept in one array per level, so that proofs and past roots can be
 * computed without a database (the tests, the interop sample, the
 * benchmarks; no product code uses it: library igauditmem, built in
 * tests/audit.cmake). 64 bytes of memory per leaf.
 *
 *   audit_mem_new(&m); audit_mem_append(m, leaf_hash)...;
 *   audit_inclusion_proof(i, n, audit_mem_fetch, m, proof, &len);
 *
 * Not thread safe; one owner.
 */
#ifndef AUDIT_MEM_H
#define AUDIT_MEM_H

#include <stdint.h>

#include "audit_tree.h"
#include "ig_error.h"

struct audit_mem;

/* An empty tree. IG_ERR_NOMEM. */
enum ig_status audit_mem_new(struct audit_mem **out) IG_WUR;

/* Free the tree. NULL is fine. */
void audit_mem_free(struct audit_mem *m);

/* Append one leaf hash. IG_ERR_NOMEM, IG_ERR_LIMIT past
   IG_AUDIT_MEM_MAX_LEAVES; the tree is unchanged on failure. */
enum ig_status
audit_mem_append(struct audit_mem *m,
                 const unsigned char leaf[AUDIT_HASH_BYTES]) IG_WUR;

/* Leaves appended so far. */
uint64_t audit_mem_size(const struct audit_mem *m);

/* The right edge of the whole tree (its root: audit_frontier_root). */
const struct audit_frontier *audit_mem_frontier(const struct audit_mem *m);

/* An audit_fetch_fn over the tree (ctx is the struct audit_mem):
   IG_ERR_NOTFOUND for a subtree that is not complete. */
enum ig_status audit_mem_fetch(void *ctx, unsigned level, uint64_t index,
                               unsigned char out[AUDIT_HASH_BYTES]) IG_WUR;

#endif
