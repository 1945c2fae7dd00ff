/*
 * audit_tree.c - the RFC 6962 / RFC 9162 Merkle tree: hashes, the
 * append-only frontier, roots and proofs from stored subtrees, and proof
 * verification.
 *
 * How it works. A tree of n leaves is the balanced tree RFC 6962 defines:
 * split at k, the largest power of two below n, left [0, k) complete, the
 * right part recursively. Every complete subtree [j*2^l, (j+1)*2^l) is a
 * node (level l, index j); the store of a log keeps them all (on_node).
 * Any range the proof recursion visits starts at a multiple of a power of
 * two at least its length, so its root is the fold of at most 64 stored
 * complete subtrees, the largest first (range_root). The frontier is the
 * same decomposition of [0, size): one complete subtree per set bit.
 *
 * Proofs are collected top-down and reversed, giving RFC 9162's order
 * (the sibling nearest the leaf first). Verification is the bit-twiddling
 * of RFC 9162 sections 2.1.3.2 and 2.1.4.2, with no allocation.
 */
#include "audit_tree.h"

#include <sodium.h>
#include <string.h>

#include "ig_hash.h"

/* Both through core's SHA-256 (libcrypto: about three times libsodium's
   speed on a node, five times on a leaf), which the open-time check of
   the PDP and `audit verify` spend their time in. */
void
audit_leaf_hash(const void *leaf, size_t len,
                unsigned char out[AUDIT_HASH_BYTES])
{
    static const unsigned char prefix = 0x00;

    ig_sha256_2(&prefix, 1, leaf, len, out);
}

void
audit_node_hash(const unsigned char left[AUDIT_HASH_BYTES],
                const unsigned char right[AUDIT_HASH_BYTES],
                unsigned char out[AUDIT_HASH_BYTES])
{
    unsigned char in[1 + 2 * AUDIT_HASH_BYTES];

    in[0] = 0x01;
    memcpy(in + 1, left, AUDIT_HASH_BYTES);
    memcpy(in + 1 + AUDIT_HASH_BYTES, right, AUDIT_HASH_BYTES);
    ig_sha256_2(in, sizeof(in), NULL, 0, out);
}

static void
empty_root(unsigned char out[AUDIT_HASH_BYTES])
{
    ig_sha256(NULL, 0, out);
}

/* The largest power of two strictly below n (n >= 2). */
static uint64_t
split_point(uint64_t n)
{
    return UINT64_C(1) << (63 - __builtin_clzll(n - 1));
}

void
audit_frontier_init(struct audit_frontier *f)
{
    memset(f, 0, sizeof(*f));
}

enum ig_status
audit_frontier_append(struct audit_frontier *f,
                      const unsigned char leaf[AUDIT_HASH_BYTES],
                      audit_node_fn on_node, void *ctx)
{
    unsigned char cur[AUDIT_HASH_BYTES];
    uint64_t index = f->size;
    unsigned level = 0;

    if (f->size == UINT64_MAX)
        return IG_ERR_LIMIT;
    memcpy(cur, leaf, AUDIT_HASH_BYTES);
    if (on_node != NULL && on_node(ctx, 0, index, cur) != 0)
        return IG_ERR_IO;
    /* Binary counter: each set low bit merges with the new subtree. */
    while ((f->size >> level) & 1) {
        audit_node_hash(f->hash[level], cur, cur);
        level++;
        index >>= 1;
        if (on_node != NULL && on_node(ctx, level, index, cur) != 0)
            return IG_ERR_IO;
    }
    memcpy(f->hash[level], cur, AUDIT_HASH_BYTES);
    f->size++;
    return IG_OK;
}

void
audit_frontier_root(const struct audit_frontier *f,
                    unsigned char out[AUDIT_HASH_BYTES])
{
    unsigned char acc[AUDIT_HASH_BYTES];
    unsigned level;
    int have = 0;

    if (f->size == 0) {
        empty_root(out);
        return;
    }
    /* Fold from the rightmost (smallest) subtree up the right edge. */
    for (level = 0; level < AUDIT_MAX_HEIGHT; level++) {
        if (!((f->size >> level) & 1))
            continue;
        if (have) {
            audit_node_hash(f->hash[level], acc, acc);
        } else {
            memcpy(acc, f->hash[level], AUDIT_HASH_BYTES);
            have = 1;
        }
    }
    memcpy(out, acc, AUDIT_HASH_BYTES);
}

/*
 * The root of the count leaves from start (count >= 1; start a multiple of
 * the largest power of two in count): fetch the complete subtrees, largest
 * first, and fold them from the right.
 */
static enum ig_status
range_root(uint64_t start, uint64_t count, audit_fetch_fn fetch, void *ctx,
           unsigned char out[AUDIT_HASH_BYTES])
{
    unsigned char part[AUDIT_MAX_HEIGHT][AUDIT_HASH_BYTES];
    size_t n = 0, i;
    enum ig_status st;
    int level;

    for (level = AUDIT_MAX_HEIGHT - 1; level >= 0; level--) {
        if (!((count >> level) & 1))
            continue;
        st = fetch(ctx, (unsigned)level, start >> level, part[n]);
        if (st != IG_OK)
            return st;
        n++;
        start += UINT64_C(1) << level;
    }
    memcpy(out, part[n - 1], AUDIT_HASH_BYTES);
    for (i = n - 1; i > 0; i--)
        audit_node_hash(part[i - 1], out, out);
    return IG_OK;
}

enum ig_status
audit_frontier_load(struct audit_frontier *f, uint64_t size,
                    audit_fetch_fn fetch, void *ctx)
{
    struct audit_frontier tmp;
    uint64_t start = 0;
    enum ig_status st;
    int level;

    audit_frontier_init(&tmp);
    for (level = AUDIT_MAX_HEIGHT - 1; level >= 0; level--) {
        if (!((size >> level) & 1))
            continue;
        st = fetch(ctx, (unsigned)level, start >> level, tmp.hash[level]);
        if (st != IG_OK)
            return st;
        start += UINT64_C(1) << level;
    }
    tmp.size = size;
    memcpy(f, &tmp, sizeof(tmp));
    return IG_OK;
}

enum ig_status
audit_root_at(uint64_t size, audit_fetch_fn fetch, void *ctx,
              unsigned char out[AUDIT_HASH_BYTES])
{
    if (size == 0) {
        empty_root(out);
        return IG_OK;
    }
    return range_root(0, size, fetch, ctx, out);
}

static void
reverse(unsigned char proof[][AUDIT_HASH_BYTES], size_t n)
{
    unsigned char t[AUDIT_HASH_BYTES];
    size_t i;

    for (i = 0; i < n / 2; i++) {
        memcpy(t, proof[i], AUDIT_HASH_BYTES);
        memcpy(proof[i], proof[n - 1 - i], AUDIT_HASH_BYTES);
        memcpy(proof[n - 1 - i], t, AUDIT_HASH_BYTES);
    }
}

/* One step down the subtree [*start, *start + *count) split at k: into
   its left part (left) or its right one; the root of the part not taken
   goes to sibling. */
static enum ig_status
descend(uint64_t *start, uint64_t *count, uint64_t k, int left,
        audit_fetch_fn fetch, void *ctx,
        unsigned char sibling[AUDIT_HASH_BYTES])
{
    uint64_t from = left ? *start + k : *start, len = left ? *count - k : k;

    if (left) {
        *count = k;
    } else {
        *start += k;
        *count -= k;
    }
    return range_root(from, len, fetch, ctx, sibling);
}

enum ig_status
audit_inclusion_proof(uint64_t index, uint64_t size, audit_fetch_fn fetch,
                      void *ctx, unsigned char proof[][AUDIT_HASH_BYTES],
                      size_t *n)
{
    uint64_t start = 0, count = size, k;
    enum ig_status st;

    *n = 0;
    if (index >= size)
        return IG_ERR_INVALID;
    /* RFC 9162 2.1.3.1 PATH(m, D[start:start+count]), top-down. */
    while (count > 1) {
        k = split_point(count);
        IG_ASSERT(*n < AUDIT_PROOF_MAX);
        st = descend(&start, &count, k, index - start < k, fetch, ctx,
                     proof[*n]);
        if (st != IG_OK) {
            *n = 0;
            return st;
        }
        (*n)++;
    }
    reverse(proof, *n);
    return IG_OK;
}

enum ig_status
audit_consistency_proof(uint64_t old_size, uint64_t new_size,
                        audit_fetch_fn fetch, void *ctx,
                        unsigned char proof[][AUDIT_HASH_BYTES], size_t *n)
{
    uint64_t start = 0, m = old_size, count = new_size, k;
    enum ig_status st = IG_OK;
    int whole = 1; /* SUBPROOF's b: the old tree is this whole subtree */

    *n = 0;
    if (old_size == 0 || old_size > new_size)
        return IG_ERR_INVALID;
    /* RFC 9162 2.1.4.1 SUBPROOF(m, D[start:start+count], b), top-down. */
    while (m != count) {
        k = split_point(count);
        IG_ASSERT(*n < AUDIT_CPROOF_MAX);
        st = descend(&start, &count, k, m <= k, fetch, ctx, proof[*n]);
        if (m > k) {
            m -= k;
            whole = 0;
        }
        if (st != IG_OK)
            goto out;
        (*n)++;
    }
    if (!whole) {
        IG_ASSERT(*n < AUDIT_CPROOF_MAX);
        st = range_root(start, count, fetch, ctx, proof[*n]);
        if (st != IG_OK)
            goto out;
        (*n)++;
    }
    reverse(proof, *n);
out:
    if (st != IG_OK)
        *n = 0;
    return st;
}

static int
hash_equal(const unsigned char a[AUDIT_HASH_BYTES],
           const unsigned char b[AUDIT_HASH_BYTES])
{
    return sodium_memcmp(a, b, AUDIT_HASH_BYTES) == 0;
}

enum ig_status
audit_verify_inclusion(const unsigned char leaf[AUDIT_HASH_BYTES],
                       uint64_t index, uint64_t size,
                       const unsigned char proof[][AUDIT_HASH_BYTES], size_t n,
                       const unsigned char root[AUDIT_HASH_BYTES])
{
    unsigned char r[AUDIT_HASH_BYTES];
    uint64_t fn = index, sn;
    size_t i;

    if (index >= size || n > AUDIT_PROOF_MAX)
        return IG_ERR_INVALID;
    sn = size - 1;
    memcpy(r, leaf, AUDIT_HASH_BYTES);
    for (i = 0; i < n; i++) {
        if (sn == 0)
            return IG_ERR_CRYPTO;
        if ((fn & 1) || fn == sn) {
            audit_node_hash(proof[i], r, r);
            while (!(fn & 1) && fn != 0) {
                fn >>= 1;
                sn >>= 1;
            }
        } else {
            audit_node_hash(r, proof[i], r);
        }
        fn >>= 1;
        sn >>= 1;
    }
    if (sn != 0 || !hash_equal(r, root))
        return IG_ERR_CRYPTO;
    return IG_OK;
}

enum ig_status
audit_verify_consistency(uint64_t old_size, uint64_t new_size,
                         const unsigned char old_root[AUDIT_HASH_BYTES],
                         const unsigned char new_root[AUDIT_HASH_BYTES],
                         const unsigned char proof[][AUDIT_HASH_BYTES],
                         size_t n)
{
    unsigned char fr[AUDIT_HASH_BYTES], sr[AUDIT_HASH_BYTES];
    const unsigned char *c;
    uint64_t fn, sn;
    size_t i = 0;

    if (old_size > new_size || n > AUDIT_CPROOF_MAX)
        return IG_ERR_INVALID;
    if (old_size == new_size || old_size == 0) {
        /* Nothing to prove: the empty proof, and equal (or empty) roots. */
        if (n != 0)
            return IG_ERR_CRYPTO;
        if (old_size == 0)
            empty_root(fr);
        else
            memcpy(fr, new_root, AUDIT_HASH_BYTES);
        return hash_equal(old_root, fr) ? IG_OK : IG_ERR_CRYPTO;
    }
    if (n == 0)
        return IG_ERR_CRYPTO;
    /* A power-of-two old tree is a node of the new one: first_hash leads. */
    if ((old_size & (old_size - 1)) == 0) {
        memcpy(fr, old_root, AUDIT_HASH_BYTES);
    } else {
        memcpy(fr, proof[0], AUDIT_HASH_BYTES);
        i = 1;
    }
    memcpy(sr, fr, AUDIT_HASH_BYTES);
    fn = old_size - 1;
    sn = new_size - 1;
    while (fn & 1) {
        fn >>= 1;
        sn >>= 1;
    }
    for (; i < n; i++) {
        c = proof[i];
        if (sn == 0)
            return IG_ERR_CRYPTO;
        if ((fn & 1) || fn == sn) {
            audit_node_hash(c, fr, fr);
            audit_node_hash(c, sr, sr);
            while (!(fn & 1) && fn != 0) {
                fn >>= 1;
                sn >>= 1;
            }
        } else {
            audit_node_hash(sr, c, sr);
        }
        fn >>= 1;
        sn >>= 1;
    }
    if (sn != 0 || !hash_equal(fr, old_root) || !hash_equal(sr, new_root))
        return IG_ERR_CRYPTO;
    return IG_OK;
}
