/*
 * test_audit_tree.c - the RFC 6962 Merkle tree of the audit log.
 *
 * Known answers first: the RFC 6962 reference data of Certificate
 * Transparency (tests/vectors/audit/rfc6962-merkle.json: 8 leaves, the root
 * of every size, inclusion and consistency proofs) and the 7-entry worked
 * example of C2SP's merkle-tree spec (c2sp-merkle-tree-7.json, labels
 * computed here from the spec's formulas). Then every size up to 64
 * against a naive recursive implementation written straight from RFC 9162
 * section 2.1: roots three ways, every inclusion and consistency proof
 * byte for byte, and the verifiers refusing every flipped byte, wrong
 * index, wrong size, truncated or extended proof. Last, arithmetic at the
 * top of the 64-bit range with a synthetic store.
 */
#include "testutil.h"

#include <jansson.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "audit_mem.h"
#include "audit_tree.h"

#define MAXN 64
#define H AUDIT_HASH_BYTES

typedef unsigned char hash_t[H];

/* ---- a naive tree, straight from the RFC ---- */

static hash_t leaf_h[MAXN + 1];

static void
naive_node(const unsigned char *l, const unsigned char *r, unsigned char *out)
{
    unsigned char in[1 + 2 * H];

    in[0] = 1;
    memcpy(in + 1, l, H);
    memcpy(in + 1 + H, r, H);
    crypto_hash_sha256(out, in, sizeof(in));
}

static uint64_t
split_k(uint64_t n)
{
    uint64_t k = 1;

    while (k * 2 < n)
        k *= 2;
    return k;
}

/* MTH(D[lo:hi]) over leaf_h. */
static void
mth(uint64_t lo, uint64_t hi, unsigned char *out)
{
    hash_t l, r;
    uint64_t k;

    if (hi - lo == 1) {
        memcpy(out, leaf_h[lo], H);
        return;
    }
    k = split_k(hi - lo);
    mth(lo, lo + k, l);
    mth(lo + k, hi, r);
    naive_node(l, r, out);
}

/* PATH(m, D[lo:hi]) appended to out. */
static void
path(uint64_t m, uint64_t lo, uint64_t hi, hash_t *out, size_t *n)
{
    uint64_t k;

    if (hi - lo <= 1)
        return;
    k = split_k(hi - lo);
    if (m < k) {
        path(m, lo, lo + k, out, n);
        mth(lo + k, hi, out[(*n)++]);
    } else {
        path(m - k, lo + k, hi, out, n);
        mth(lo, lo + k, out[(*n)++]);
    }
}

/* SUBPROOF(m, D[lo:hi], b) appended to out. */
static void
subproof(uint64_t m, uint64_t lo, uint64_t hi, int b, hash_t *out, size_t *n)
{
    uint64_t k;

    if (m == hi - lo) {
        if (!b)
            mth(lo, hi, out[(*n)++]);
        return;
    }
    k = split_k(hi - lo);
    if (m <= k) {
        subproof(m, lo, lo + k, b, out, n);
        mth(lo + k, hi, out[(*n)++]);
    } else {
        subproof(m - k, lo + k, hi, 0, out, n);
        mth(lo, lo + k, out[(*n)++]);
    }
}

/* ---- helpers ---- */

static struct audit_mem *
build_mem(size_t n)
{
    struct audit_mem *m = NULL;
    size_t i;

    assert_int_equal(audit_mem_new(&m), IG_OK);
    for (i = 0; i < n; i++)
        assert_int_equal(audit_mem_append(m, leaf_h[i]), IG_OK);
    return m;
}

static void
make_leaves(void)
{
    char buf[32];
    int i, len;

    for (i = 0; i <= MAXN; i++) {
        len = snprintf(buf, sizeof(buf), "audit leaf %d", i);
        audit_leaf_hash(buf, (size_t)len, leaf_h[i]);
    }
}

static json_t *
load_json(const char *rel)
{
    json_error_t e;
    size_t len;
    char *text = tu_read_vector(rel, &len);
    json_t *doc = json_loadb(text, len, 0, &e);

    if (doc == NULL)
        fail_msg("%s: %s", rel, e.text);
    free(text);
    return doc;
}

static void
hex32(const json_t *v, unsigned char *out)
{
    size_t len;
    unsigned char *b = tu_hex_decode(json_string_value(v), &len);

    assert_int_equal(len, H);
    memcpy(out, b, H);
    free(b);
}

/* ---- known answers ---- */

static void
test_rfc6962_vectors(void **state)
{
    json_t *doc = load_json("audit/rfc6962-merkle.json"), *leaves, *v, *p;
    hash_t proof[AUDIT_CPROOF_MAX], want, root, got;
    struct audit_frontier f;
    struct audit_mem *m;
    size_t i, j, n, len;
    unsigned char *data;

    (void)state;
    leaves = json_object_get(doc, "leaves");
    assert_int_equal(json_array_size(leaves), 8);
    assert_int_equal(audit_mem_new(&m), IG_OK);
    audit_frontier_init(&f);
    audit_frontier_root(&f, got);
    hex32(json_object_get(doc, "empty_root"), want);
    assert_memory_equal(got, want, H);
    assert_int_equal(audit_root_at(0, audit_mem_fetch, m, got), IG_OK);
    assert_memory_equal(got, want, H);
    for (i = 0; i < 8; i++) {
        data =
            tu_hex_decode(json_string_value(json_array_get(leaves, i)), &len);
        audit_leaf_hash(data, len, leaf_h[i]);
        free(data);
        assert_int_equal(audit_mem_append(m, leaf_h[i]), IG_OK);
        assert_int_equal(audit_frontier_append(&f, leaf_h[i], NULL, NULL),
                         IG_OK);
        hex32(json_array_get(json_object_get(doc, "roots"), i), want);
        audit_frontier_root(&f, got);
        assert_memory_equal(got, want, H);
        assert_int_equal(audit_root_at(i + 1, audit_mem_fetch, m, got), IG_OK);
        assert_memory_equal(got, want, H);
    }
    json_array_foreach(json_object_get(doc, "inclusion"), i, v)
    {
        uint64_t idx =
            (uint64_t)json_integer_value(json_object_get(v, "index"));
        uint64_t size =
            (uint64_t)json_integer_value(json_object_get(v, "size"));

        p = json_object_get(v, "proof");
        assert_int_equal(
            audit_inclusion_proof(idx, size, audit_mem_fetch, m, proof, &n),
            IG_OK);
        assert_int_equal(n, json_array_size(p));
        for (j = 0; j < n; j++) {
            hex32(json_array_get(p, j), want);
            assert_memory_equal(proof[j], want, H);
        }
        hex32(json_array_get(json_object_get(doc, "roots"), size - 1), root);
        assert_int_equal(audit_verify_inclusion(leaf_h[idx], idx, size,
                                                (const hash_t *)proof, n, root),
                         IG_OK);
    }
    json_array_foreach(json_object_get(doc, "consistency"), i, v)
    {
        uint64_t s1 = (uint64_t)json_integer_value(json_object_get(v, "size1"));
        uint64_t s2 = (uint64_t)json_integer_value(json_object_get(v, "size2"));
        hash_t r1;

        p = json_object_get(v, "proof");
        assert_int_equal(
            audit_consistency_proof(s1, s2, audit_mem_fetch, m, proof, &n),
            IG_OK);
        assert_int_equal(n, json_array_size(p));
        for (j = 0; j < n; j++) {
            hex32(json_array_get(p, j), want);
            assert_memory_equal(proof[j], want, H);
        }
        hex32(json_array_get(json_object_get(doc, "roots"), s1 - 1), r1);
        hex32(json_array_get(json_object_get(doc, "roots"), s2 - 1), root);
        assert_int_equal(audit_verify_consistency(s1, s2, r1, root,
                                                  (const hash_t *)proof, n),
                         IG_OK);
    }
    audit_mem_free(m);
    json_decref(doc);
}

/* The node called label in the 7-entry example, from the spec's formulas. */
static const unsigned char *
label_hash(json_t *doc, const char *label, hash_t *store, const char **names,
           size_t *count)
{
    json_t *kids, *leafs = json_object_get(doc, "leaf_labels");
    const unsigned char *l, *r;
    size_t i;

    for (i = 0; i < *count; i++)
        if (strcmp(names[i], label) == 0)
            return store[i];
    for (i = 0; i < json_array_size(leafs); i++)
        if (strcmp(json_string_value(json_array_get(leafs, i)), label) == 0)
            return leaf_h[i];
    kids = json_object_get(json_object_get(doc, "nodes"), label);
    assert_non_null(kids);
    l = label_hash(doc, json_string_value(json_array_get(kids, 0)), store,
                   names, count);
    r = label_hash(doc, json_string_value(json_array_get(kids, 1)), store,
                   names, count);
    naive_node(l, r, store[*count]);
    names[*count] = label;
    return store[(*count)++];
}

static void
test_c2sp_seven_leaves(void **state)
{
    json_t *doc = load_json("audit/c2sp-merkle-tree-7.json");
    json_t *rfc = load_json("audit/rfc6962-merkle.json"), *v, *p;
    hash_t store[16], proof[AUDIT_CPROOF_MAX], want;
    const char *names[16];
    size_t count = 0, i, j, n, len;
    struct audit_mem *m = NULL;
    unsigned char *data;

    (void)state;
    assert_int_equal(audit_mem_new(&m), IG_OK);
    for (i = 0; i < 7; i++) {
        data = tu_hex_decode(json_string_value(json_array_get(
                                 json_object_get(doc, "entries"), i)),
                             &len);
        /* a = SHA-256(0x00 || d[0]) ... written out, not audit_leaf_hash */
        {
            unsigned char buf[64];

            buf[0] = 0;
            memcpy(buf + 1, data, len);
            crypto_hash_sha256(leaf_h[i], buf, len + 1);
        }
        free(data);
        assert_int_equal(audit_mem_append(m, leaf_h[i]), IG_OK);
    }
    /* root = SHA-256(0x01 || k || l) equals the RFC 6962 size-7 root. */
    hex32(json_array_get(json_object_get(rfc, "roots"), 6), want);
    assert_memory_equal(label_hash(doc, "root", store, names, &count), want, H);
    {
        hash_t r;

        audit_frontier_root(audit_mem_frontier(m), r);
        assert_memory_equal(r, want, H);
    }
    json_array_foreach(json_object_get(doc, "inclusion"), i, v)
    {
        uint64_t idx =
            (uint64_t)json_integer_value(json_object_get(v, "index"));

        p = json_object_get(v, "proof");
        assert_int_equal(
            audit_inclusion_proof(idx, 7, audit_mem_fetch, m, proof, &n),
            IG_OK);
        assert_int_equal(n, json_array_size(p));
        for (j = 0; j < n; j++)
            assert_memory_equal(
                proof[j],
                label_hash(doc, json_string_value(json_array_get(p, j)), store,
                           names, &count),
                H);
        assert_int_equal(audit_verify_inclusion(leaf_h[idx], idx, 7,
                                                (const hash_t *)proof, n, want),
                         IG_OK);
    }
    json_array_foreach(json_object_get(doc, "consistency"), i, v)
    {
        uint64_t s1 = (uint64_t)json_integer_value(json_object_get(v, "size1"));
        hash_t r1;

        p = json_object_get(v, "proof");
        assert_int_equal(
            audit_consistency_proof(s1, 7, audit_mem_fetch, m, proof, &n),
            IG_OK);
        assert_int_equal(n, json_array_size(p));
        for (j = 0; j < n; j++)
            assert_memory_equal(
                proof[j],
                label_hash(doc, json_string_value(json_array_get(p, j)), store,
                           names, &count),
                H);
        assert_int_equal(audit_root_at(s1, audit_mem_fetch, m, r1), IG_OK);
        assert_int_equal(
            audit_verify_consistency(s1, 7, r1, want, (const hash_t *)proof, n),
            IG_OK);
    }
    audit_mem_free(m);
    json_decref(doc);
    json_decref(rfc);
}

/* ---- every size up to 64 ---- */

struct seen {
    hash_t node[7][MAXN];
    int have[7][MAXN];
    int calls;
};

static int
record_node(void *ctx, unsigned level, uint64_t index, const unsigned char *h)
{
    struct seen *s = ctx;

    assert_true(level < 7 && index < MAXN);
    assert_false(s->have[level][index]);
    memcpy(s->node[level][index], h, H);
    s->have[level][index] = 1;
    s->calls++;
    return 0;
}

static void
test_roots_every_size(void **state)
{
    static struct seen s;
    struct audit_frontier f, g;
    struct audit_mem *m;
    hash_t a, b, c;
    uint64_t n, idx;
    unsigned l;

    (void)state;
    make_leaves();
    m = build_mem(MAXN);
    memset(&s, 0, sizeof(s));
    audit_frontier_init(&f);
    for (n = 1; n <= MAXN; n++) {
        assert_int_equal(
            audit_frontier_append(&f, leaf_h[n - 1], record_node, &s), IG_OK);
        assert_int_equal(f.size, n);
        audit_frontier_root(&f, a);
        assert_int_equal(audit_root_at(n, audit_mem_fetch, m, b), IG_OK);
        mth(0, n, c);
        assert_memory_equal(a, c, H);
        assert_memory_equal(b, c, H);
        assert_int_equal(audit_frontier_load(&g, n, audit_mem_fetch, m), IG_OK);
        audit_frontier_root(&g, b);
        assert_memory_equal(b, c, H);
    }
    /* Every complete subtree was reported once, with its right hash. */
    assert_int_equal(s.calls, 2 * MAXN - 1);
    for (l = 0; l < 7; l++)
        for (idx = 0; idx < ((uint64_t)MAXN >> l); idx++) {
            assert_true(s.have[l][idx]);
            mth(idx << l, (idx + 1) << l, c);
            assert_memory_equal(s.node[l][idx], c, H);
        }
    audit_mem_free(m);
}

static void
expect_inclusion_fails(const unsigned char *leaf, uint64_t i, uint64_t n,
                       hash_t *proof, size_t len, const unsigned char *root)
{
    if (audit_verify_inclusion(leaf, i, n, (const hash_t *)proof, len, root) ==
        IG_OK)
        fail_msg("inclusion verified: index %llu size %llu len %zu",
                 (unsigned long long)i, (unsigned long long)n, len);
}

static void
inclusion_probes(struct audit_mem *m, uint64_t i, uint64_t n, hash_t *proof,
                 size_t len, hash_t *roots)
{
    hash_t other[AUDIT_PROOF_MAX + 1];
    size_t k, b, olen;
    uint64_t j;

    for (k = 0; k < len; k++)
        for (b = 0; b < H; b++) {
            proof[k][b] ^= 0x01;
            expect_inclusion_fails(leaf_h[i], i, n, proof, len, roots[n]);
            proof[k][b] ^= 0x01;
        }
    for (b = 0; b < H; b++) {
        hash_t leaf, root;

        memcpy(leaf, leaf_h[i], H);
        leaf[b] ^= 0x80;
        expect_inclusion_fails(leaf, i, n, proof, len, roots[n]);
        memcpy(root, roots[n], H);
        root[b] ^= 0x80;
        expect_inclusion_fails(leaf_h[i], i, n, proof, len, root);
    }
    for (j = 0; j <= n + 1; j++)
        if (j != i)
            expect_inclusion_fails(leaf_h[i], j, n, proof, len, roots[n]);
    /* Another size with its own root: fails unless the proof is the same. */
    for (j = i + 1; j <= MAXN; j++) {
        if (j == n)
            continue;
        assert_int_equal(
            audit_inclusion_proof(i, j, audit_mem_fetch, m, other, &olen),
            IG_OK);
        if (olen == len && memcmp(other, proof, len * H) == 0)
            continue;
        expect_inclusion_fails(leaf_h[i], i, j, proof, len, roots[j]);
    }
    if (len > 0)
        expect_inclusion_fails(leaf_h[i], i, n, proof, len - 1, roots[n]);
    memcpy(other, proof, len * H);
    memcpy(other[len], roots[n], H);
    expect_inclusion_fails(leaf_h[i], i, n, other, len + 1, roots[n]);
    memcpy(other[0], roots[n], H);
    memcpy(other + 1, proof, len * H);
    expect_inclusion_fails(leaf_h[i], i, n, other, len + 1, roots[n]);
}

static void
test_inclusion_every_size(void **state)
{
    hash_t roots[MAXN + 1], proof[AUDIT_PROOF_MAX], want[AUDIT_PROOF_MAX];
    struct audit_mem *m;
    size_t len, wlen;
    uint64_t n, i;

    (void)state;
    make_leaves();
    m = build_mem(MAXN);
    for (n = 1; n <= MAXN; n++)
        mth(0, n, roots[n]);
    for (n = 1; n <= MAXN; n++)
        for (i = 0; i < n; i++) {
            assert_int_equal(
                audit_inclusion_proof(i, n, audit_mem_fetch, m, proof, &len),
                IG_OK);
            wlen = 0;
            path(i, 0, n, want, &wlen);
            assert_int_equal(len, wlen);
            assert_memory_equal(proof, want, len * H);
            assert_int_equal(audit_verify_inclusion(leaf_h[i], i, n,
                                                    (const hash_t *)proof, len,
                                                    roots[n]),
                             IG_OK);
            inclusion_probes(m, i, n, proof, len, roots);
        }
    assert_int_equal(
        audit_inclusion_proof(3, 3, audit_mem_fetch, m, proof, &len),
        IG_ERR_INVALID);
    assert_int_equal(
        audit_inclusion_proof(0, 0, audit_mem_fetch, m, proof, &len),
        IG_ERR_INVALID);
    /* A size beyond the stored tree: the store's error comes back. */
    assert_int_equal(
        audit_inclusion_proof(0, MAXN + 1, audit_mem_fetch, m, proof, &len),
        IG_ERR_NOTFOUND);
    assert_int_equal(len, 0);
    audit_mem_free(m);
}

static void
expect_consistency_fails(uint64_t m1, uint64_t n, const unsigned char *r1,
                         const unsigned char *r2, hash_t *proof, size_t len)
{
    if (audit_verify_consistency(m1, n, r1, r2, (const hash_t *)proof, len) ==
        IG_OK)
        fail_msg("consistency verified: %llu -> %llu len %zu",
                 (unsigned long long)m1, (unsigned long long)n, len);
}

static void
consistency_probes(struct audit_mem *m, uint64_t a, uint64_t n, hash_t *proof,
                   size_t len, hash_t *roots)
{
    hash_t other[AUDIT_CPROOF_MAX + 1];
    size_t k, b, olen;
    uint64_t j;

    for (k = 0; k < len; k++)
        for (b = 0; b < H; b++) {
            proof[k][b] ^= 0x10;
            expect_consistency_fails(a, n, roots[a], roots[n], proof, len);
            proof[k][b] ^= 0x10;
        }
    if (a == n)
        return; /* the empty proof: only the roots matter */
    expect_consistency_fails(a, n, roots[n], roots[a], proof, len);
    expect_consistency_fails(a, n, roots[a], roots[a], proof, len);
    expect_consistency_fails(a, n, roots[n], roots[n], proof, len);
    expect_consistency_fails(a, n, roots[a], roots[n], proof, 0);
    expect_consistency_fails(a, n, roots[a], roots[n], proof, len - 1);
    memcpy(other, proof, len * H);
    memcpy(other[len], roots[a], H);
    expect_consistency_fails(a, n, roots[a], roots[n], other, len + 1);
    memcpy(other[0], proof[0], H);
    memcpy(other + 1, proof, len * H);
    expect_consistency_fails(a, n, roots[a], roots[n], other, len + 1);
    /* Other sizes with their own roots, unless the proof is the same. */
    for (j = 1; j <= MAXN; j++) {
        uint64_t s1 = j, s2 = n;

        if (s1 != a && s1 <= s2 &&
            audit_consistency_proof(s1, s2, audit_mem_fetch, m, other, &olen) ==
                IG_OK &&
            !(olen == len && memcmp(other, proof, len * H) == 0))
            expect_consistency_fails(s1, s2, roots[s1], roots[s2], proof, len);
        s1 = a;
        s2 = j;
        if (s2 != n && s1 <= s2 &&
            audit_consistency_proof(s1, s2, audit_mem_fetch, m, other, &olen) ==
                IG_OK &&
            !(olen == len && memcmp(other, proof, len * H) == 0))
            expect_consistency_fails(s1, s2, roots[s1], roots[s2], proof, len);
    }
}

static void
test_consistency_every_pair(void **state)
{
    hash_t roots[MAXN + 1], proof[AUDIT_CPROOF_MAX], want[AUDIT_CPROOF_MAX];
    struct audit_mem *m;
    size_t len, wlen;
    uint64_t n, a;

    (void)state;
    make_leaves();
    m = build_mem(MAXN);
    for (n = 1; n <= MAXN; n++)
        mth(0, n, roots[n]);
    for (n = 1; n <= MAXN; n++)
        for (a = 1; a <= n; a++) {
            assert_int_equal(
                audit_consistency_proof(a, n, audit_mem_fetch, m, proof, &len),
                IG_OK);
            wlen = 0;
            subproof(a, 0, n, 1, want, &wlen);
            assert_int_equal(len, wlen);
            assert_memory_equal(proof, want, len * H);
            assert_int_equal(audit_verify_consistency(a, n, roots[a], roots[n],
                                                      (const hash_t *)proof,
                                                      len),
                             IG_OK);
            consistency_probes(m, a, n, proof, len, roots);
        }
    assert_int_equal(
        audit_consistency_proof(0, 5, audit_mem_fetch, m, proof, &len),
        IG_ERR_INVALID);
    assert_int_equal(
        audit_consistency_proof(6, 5, audit_mem_fetch, m, proof, &len),
        IG_ERR_INVALID);
    /* From the empty tree: the empty proof, and the empty root. */
    {
        hash_t empty;

        crypto_hash_sha256(empty, (const unsigned char *)"", 0);
        assert_int_equal(audit_verify_consistency(0, 9, empty, roots[9],
                                                  (const hash_t *)proof, 0),
                         IG_OK);
        assert_int_not_equal(audit_verify_consistency(0, 9, roots[1], roots[9],
                                                      (const hash_t *)proof, 0),
                             IG_OK);
        assert_int_not_equal(audit_verify_consistency(0, 9, empty, roots[9],
                                                      (const hash_t *)proof, 1),
                             IG_OK);
        assert_int_not_equal(audit_verify_consistency(5, 4, roots[5], roots[4],
                                                      (const hash_t *)proof, 0),
                             IG_OK);
    }
    audit_mem_free(m);
}

/* ---- failures and the top of the range ---- */

static int
fail_at_level2(void *ctx, unsigned level, uint64_t index,
               const unsigned char *h)
{
    (void)ctx;
    (void)index;
    (void)h;
    return level == 2 ? -1 : 0;
}

static void
test_append_failure_keeps_frontier(void **state)
{
    struct audit_frontier f, before;
    int i;

    (void)state;
    make_leaves();
    audit_frontier_init(&f);
    for (i = 0; i < 3; i++)
        assert_int_equal(
            audit_frontier_append(&f, leaf_h[i], fail_at_level2, NULL), IG_OK);
    memcpy(&before, &f, sizeof(f));
    /* The 4th leaf completes a level-2 subtree: the callback refuses. */
    assert_int_equal(audit_frontier_append(&f, leaf_h[3], fail_at_level2, NULL),
                     IG_ERR_IO);
    assert_memory_equal(&f, &before, sizeof(f));
    assert_int_equal(audit_frontier_append(&f, leaf_h[3], NULL, NULL), IG_OK);
    assert_int_equal(f.size, 4);
}

/*
 * A synthetic store of 2^64 equal leaves: the node of level l is the same
 * for every index, N(0) = leaf hash of "", N(l) = node(N(l-1), N(l-1)), so
 * it is a consistent tree of any size at no cost.
 */
static enum ig_status
synthetic_fetch(void *ctx, unsigned level, uint64_t index, unsigned char *out)
{
    unsigned l;

    (void)ctx;
    (void)index;
    audit_leaf_hash("", 0, out);
    for (l = 0; l < level; l++)
        audit_node_hash(out, out, out);
    return IG_OK;
}

static void
test_huge_sizes(void **state)
{
    static const uint64_t sizes[] = {
        UINT64_MAX, UINT64_MAX - 1, UINT64_C(1) << 63, (UINT64_C(1) << 63) + 1};
    hash_t proof[AUDIT_CPROOF_MAX], leaf, root, r1;
    uint64_t idx[4];
    size_t s, i, n;

    (void)state;
    for (s = 0; s < 4; s++) {
        idx[0] = 0;
        idx[1] = sizes[s] - 1;
        idx[2] = sizes[s] / 3;
        idx[3] = sizes[s] / 2 + 1;
        assert_int_equal(audit_root_at(sizes[s], synthetic_fetch, NULL, root),
                         IG_OK);
        for (i = 0; i < 4; i++) {
            assert_int_equal(audit_inclusion_proof(idx[i], sizes[s],
                                                   synthetic_fetch, NULL, proof,
                                                   &n),
                             IG_OK);
            assert_true(n >= 1 && n <= AUDIT_PROOF_MAX);
            assert_int_equal(synthetic_fetch(NULL, 0, idx[i], leaf), IG_OK);
            assert_int_equal(audit_verify_inclusion(leaf, idx[i], sizes[s],
                                                    (const hash_t *)proof, n,
                                                    root),
                             IG_OK);
            leaf[0] ^= 1;
            assert_int_not_equal(audit_verify_inclusion(leaf, idx[i], sizes[s],
                                                        (const hash_t *)proof,
                                                        n, root),
                                 IG_OK);
        }
        /* Consistency from a few old sizes. */
        for (i = 1; i < 4; i++) {
            uint64_t old = idx[i] ? idx[i] : 1;

            assert_int_equal(audit_consistency_proof(old, sizes[s],
                                                     synthetic_fetch, NULL,
                                                     proof, &n),
                             IG_OK);
            assert_true(n <= AUDIT_CPROOF_MAX);
            assert_int_equal(audit_root_at(old, synthetic_fetch, NULL, r1),
                             IG_OK);
            assert_int_equal(audit_verify_consistency(old, sizes[s], r1, root,
                                                      (const hash_t *)proof, n),
                             IG_OK);
        }
    }
    {
        struct audit_frontier f;

        audit_frontier_init(&f);
        f.size = UINT64_MAX;
        assert_int_equal(audit_frontier_append(&f, leaf, NULL, NULL),
                         IG_ERR_LIMIT);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rfc6962_vectors),
        cmocka_unit_test(test_c2sp_seven_leaves),
        cmocka_unit_test(test_roots_every_size),
        cmocka_unit_test(test_inclusion_every_size),
        cmocka_unit_test(test_consistency_every_pair),
        cmocka_unit_test(test_append_failure_keeps_frontier),
        cmocka_unit_test(test_huge_sizes),
    };

    if (sodium_init() < 0)
        return 1;
    return cmocka_run_group_tests(tests, NULL, NULL);
}
