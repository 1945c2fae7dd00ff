/*
 * test_audit_tile.c - the audit tree stored as C2SP tiles (audit_tile.h).
 *
 * A tree of up to 70,000 leaves is built with the frontier and its tiles
 * collected with audit_tile_edge_put, as the PDP stores them; then every
 * complete subtree a proof can ask for is read back through
 * audit_tile_node - from full tiles, from the writer's partial tiles, and
 * recomputed from leaves and lower tiles as a reader does - and compared
 * with the subtree computed straight from the leaves. The widths and
 * names follow the spec's examples (size 70,000: 273 full level-0 tiles,
 * level-0 width 112, one full level-1 tile, width 17, level-2 width 1;
 * 1234067 is x001/x234/067). A tile of another length is refused, never
 * read.
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "audit_tile.h"
#include "audit_tree.h"

#define N 70000
#define H AUDIT_HASH_BYTES

static unsigned char leaves[N][H];

/* The stored tiles: full tiles of levels 0..2. */
struct store {
    unsigned char *tile[3][N / 256 + 1];
    struct audit_tile_edge edge;
    int short_tile; /* tile (0, 1) reads as 100 bytes */
    uint64_t leaf_reads;
};

static int
collect(void *ctx, unsigned level, uint64_t index, const unsigned char hash[H])
{
    struct store *s = ctx;
    uint64_t tn;
    unsigned tl;

    if (audit_tile_edge_put(&s->edge, level, index, hash, &tl, &tn)) {
        s->tile[tl][tn] = malloc(AUDIT_TILE_BYTES);
        assert_non_null(s->tile[tl][tn]);
        memcpy(s->tile[tl][tn], s->edge.hash[tl], AUDIT_TILE_BYTES);
    }
    return 0;
}

static enum ig_status
get_tile(void *ctx, unsigned level, uint64_t index, const unsigned char **out)
{
    struct store *s = ctx;

    if (level > 2 || index > N / 256 || s->tile[level][index] == NULL)
        return IG_ERR_NOTFOUND;
    if (s->short_tile && level == 0 && index == 1)
        return IG_ERR_INVALID;
    *out = s->tile[level][index];
    return IG_OK;
}

static enum ig_status
get_entry(void *ctx, unsigned level, uint64_t index, unsigned char out[H])
{
    struct store *s = ctx;

    memcpy(out, s->edge.hash[level][index % 256], H);
    return IG_OK;
}

static enum ig_status
get_leaf(void *ctx, uint64_t index, unsigned char out[H])
{
    struct store *s = ctx;

    s->leaf_reads++;
    memcpy(out, leaves[index], H);
    return IG_OK;
}

/* MTH of the 2^level leaves from index << level. */
static void
subtree(unsigned level, uint64_t index, unsigned char out[H])
{
    unsigned char l[H], r[H];

    if (level == 0) {
        memcpy(out, leaves[index], H);
        return;
    }
    subtree(level - 1, 2 * index, l);
    subtree(level - 1, 2 * index + 1, r);
    audit_node_hash(l, r, out);
}

static struct store *
build(uint64_t size)
{
    struct store *s = calloc(1, sizeof(*s));
    struct audit_frontier f;
    uint64_t i;

    assert_non_null(s);
    audit_frontier_init(&f);
    for (i = 0; i < size; i++)
        assert_int_equal(audit_frontier_append(&f, leaves[i], collect, s),
                         IG_OK);
    s->edge.size = size;
    return s;
}

static void
release(struct store *s)
{
    size_t l, i;

    for (l = 0; l < 3; l++)
        for (i = 0; i <= N / 256; i++)
            free(s->tile[l][i]);
    free(s);
}

/* Every complete subtree of levels 0..17 at a few indexes, through both
   ways of reading partial tiles, equals the one from the leaves. */
static void
check_size(uint64_t size)
{
    struct store *s = build(size);
    struct audit_tile_src w = {size, get_tile, get_entry, NULL, s};
    struct audit_tile_src r = {size, get_tile, NULL, get_leaf, s};
    unsigned char want[H], got[H];
    uint64_t idx, count;
    unsigned level;

    for (level = 0; level < 18 && (size >> level) > 0; level++) {
        count = size >> level;
        for (idx = 0; idx < count; idx += 1 + count / 7) {
            subtree(level, idx, want);
            assert_int_equal(audit_tile_node(&w, level, idx, got), IG_OK);
            assert_memory_equal(got, want, H);
            assert_int_equal(audit_tile_node(&r, level, idx, got), IG_OK);
            assert_memory_equal(got, want, H);
        }
        subtree(level, count - 1, want); /* the last one: at the edge */
        assert_int_equal(audit_tile_node(&r, level, count - 1, got), IG_OK);
        assert_memory_equal(got, want, H);
        assert_int_equal(audit_tile_node(&w, level, count, got),
                         IG_ERR_NOTFOUND);
    }
    release(s);
}

static void
test_subtrees_from_tiles(void **state)
{
    static const uint64_t sizes[] = {1,   2,    255,   256,   257,   511,
                                     512, 1000, 65535, 65536, 65537, 70000};
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
        check_size(sizes[i]);
}

/* Roots and proofs built from tiles equal those of the leaves. */
static void
test_proofs_from_tiles(void **state)
{
    struct store *s = build(N);
    struct audit_tile_src r = {N, get_tile, NULL, get_leaf, s};
    unsigned char proof[AUDIT_CPROOF_MAX][H], root[H], old_root[H];
    struct audit_frontier f;
    size_t n = 0;
    uint64_t i;

    (void)state;
    audit_frontier_init(&f);
    for (i = 0; i < N; i++)
        assert_int_equal(audit_frontier_append(&f, leaves[i], NULL, NULL),
                         IG_OK);
    audit_frontier_root(&f, root);
    for (i = 0; i < N; i += 6997) {
        assert_int_equal(
            audit_inclusion_proof(i, N, audit_tile_node, &r, proof, &n), IG_OK);
        assert_int_equal(
            audit_verify_inclusion(leaves[i], i, N,
                                   (const unsigned char(*)[H])proof, n, root),
            IG_OK);
    }
    assert_int_equal(audit_root_at(66000, audit_tile_node, &r, old_root),
                     IG_OK);
    assert_int_equal(
        audit_consistency_proof(66000, N, audit_tile_node, &r, proof, &n),
        IG_OK);
    assert_int_equal(audit_verify_consistency(66000, N, old_root, root,
                                              (const unsigned char(*)[H])proof,
                                              n),
                     IG_OK);
    /* A reader at an older size finds full tiles of today's tree. */
    r.size = 300;
    s->leaf_reads = 0;
    assert_int_equal(audit_tile_node(&r, 5, 8, old_root), IG_OK);
    assert_int_equal(s->leaf_reads, 0);
    release(s);
}

static void
test_widths_and_names(void **state)
{
    char name[AUDIT_TILE_NAME_MAX];

    (void)state;
    assert_int_equal(audit_tile_count(70000, 0), 273);
    assert_int_equal(audit_tile_width(70000, 0), 112);
    assert_int_equal(audit_tile_count(70000, 1), 1);
    assert_int_equal(audit_tile_width(70000, 1), 17);
    assert_int_equal(audit_tile_count(70000, 2), 0);
    assert_int_equal(audit_tile_width(70000, 2), 1);
    assert_int_equal(audit_tile_width(UINT64_MAX, 7), 255);
    assert_int_equal(audit_tile_count(UINT64_MAX, 7), 0);
    assert_int_equal(audit_tile_width(UINT64_MAX, 8), 0);
    audit_tile_name(0, 1234067, name);
    assert_string_equal(name, "tile/0/x001/x234/067");
    audit_tile_name(1, 67, name);
    assert_string_equal(name, "tile/1/067");
    audit_tile_name(2, 1000, name);
    assert_string_equal(name, "tile/2/x001/000");
    audit_tile_name(0, 0, name);
    assert_string_equal(name, "tile/0/000");
    audit_tile_name(7, UINT64_MAX, name);
    assert_string_equal(name, "tile/7/x018/x446/x744/x073/x709/x551/615");
}

/* A stored tile of another length is an error, for writer and reader. */
static void
test_short_tile_refused(void **state)
{
    struct store *s = build(1000);
    struct audit_tile_src r = {1000, get_tile, NULL, get_leaf, s};
    unsigned char out[H];

    (void)state;
    s->short_tile = 1;
    assert_int_equal(audit_tile_node(&r, 0, 300, out), IG_ERR_INVALID);
    assert_int_equal(audit_tile_node(&r, 8, 1, out), IG_ERR_INVALID);
    assert_int_equal(audit_tile_node(&r, 8, 0, out), IG_OK);
    release(s);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_subtrees_from_tiles),
        cmocka_unit_test(test_proofs_from_tiles),
        cmocka_unit_test(test_widths_and_names),
        cmocka_unit_test(test_short_tile_refused),
    };
    uint64_t i;

    for (i = 0; i < N; i++)
        audit_leaf_hash(&i, sizeof(i), leaves[i]);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
