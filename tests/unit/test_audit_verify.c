/*
 * test_audit_verify.c - the offline verifier engine.
 *
 * A log of 1000 leaves with signed checkpoints at several sizes verifies;
 * then each way of breaking it is detected with the right failure and the
 * right index: an edited, deleted or swapped leaf (the first checkpoint
 * after it stops matching), truncation below the last checkpoint, a
 * checkpoint forged with another key, one re-signed by the log's key over
 * another root, two checkpoints of one size that fork, a fork at another
 * size, a checkpoint of another log, and the reader's own findings.
 */
#include "testutil.h"

#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "audit_mem.h"
#include "audit_util.h"
#include "audit_verify.h"

#define LOG "example.com/intentgate-log"
#define N 1000
#define NCP 6

static const uint64_t cp_sizes[NCP] = {1, 100, 256, 500, 999, 1000};

static char leaf_text[N][80];
static size_t leaf_len[N];
static struct ig_signing_key *key, *other;
static struct audit_verifier ver;
static char *notes[NCP];
static size_t note_len[NCP];
static struct audit_mem *mem;

static int
setup(void **state)
{
    unsigned char h[32], root[32];
    size_t i;

    (void)state;
    assert_int_equal(audit_mem_new(&mem), IG_OK);
    for (i = 0; i < N; i++) {
        int n = snprintf(leaf_text[i], sizeof(leaf_text[i]),
                         "{\"seq\":%zu,\"decision\":\"allow\",\"n\":%zu}", i,
                         i * 7919 % 1000);

        leaf_len[i] = (size_t)n;
        audit_leaf_hash(leaf_text[i], leaf_len[i], h);
        assert_int_equal(audit_mem_append(mem, h), IG_OK);
    }
    key = au_key_new();
    other = au_key_new();
    au_verifier(key, LOG, &ver);
    for (i = 0; i < NCP; i++) {
        assert_int_equal(audit_root_at(cp_sizes[i], audit_mem_fetch, mem, root),
                         IG_OK);
        notes[i] =
            au_sign_checkpoint(key, LOG, LOG, cp_sizes[i], root, &note_len[i]);
    }
    return 0;
}

static int
teardown(void **state)
{
    size_t i;

    (void)state;
    for (i = 0; i < NCP; i++)
        free(notes[i]);
    audit_mem_free(mem);
    ig_signing_key_free(key);
    ig_signing_key_free(other);
    return 0;
}

/* Run the verifier over the leaves order[0..count) with the given notes. */
static struct audit_report
run(const size_t *order, size_t count, char *const *ns, const size_t *lens,
    size_t n)
{
    struct audit_report r;
    struct audit_verify *v = NULL;
    size_t i;

    assert_int_equal(
        audit_verify_start(&v, &ver, (const char *const *)ns, lens, n), IG_OK);
    assert_non_null(v);
    for (i = 0; i < count; i++)
        audit_verify_leaf(v, leaf_text[order[i]], leaf_len[order[i]]);
    audit_verify_end(v, &r);
    audit_verify_free(v);
    return r;
}

static size_t order_buf[N + 1];

static const size_t *
identity(void)
{
    size_t i;

    for (i = 0; i < N; i++)
        order_buf[i] = i;
    return order_buf;
}

static void
expect(struct audit_report r, enum audit_failure f, uint64_t index)
{
    if (r.failure != f || r.index != index)
        fail_msg("got %s at %llu (%s), want %s at %llu",
                 audit_failure_name(r.failure), (unsigned long long)r.index,
                 r.detail, audit_failure_name(f), (unsigned long long)index);
    if (f != AUDIT_OK)
        assert_true(strlen(r.detail) > 0);
}

static void
test_valid_log(void **state)
{
    char *shuffled[NCP + 1];
    size_t lens[NCP + 1], i;
    struct audit_report r;

    (void)state;
    r = run(identity(), N, notes, note_len, NCP);
    expect(r, AUDIT_OK, 0);
    assert_int_equal(r.leaves, N);
    assert_int_equal(r.checkpoints, NCP);
    assert_int_equal(r.checked, NCP);
    /* Any order, and a repeated checkpoint. */
    for (i = 0; i < NCP; i++) {
        shuffled[i] = notes[NCP - 1 - i];
        lens[i] = note_len[NCP - 1 - i];
    }
    shuffled[NCP] = notes[2];
    lens[NCP] = note_len[2];
    r = run(identity(), N, shuffled, lens, NCP + 1);
    expect(r, AUDIT_OK, 0);
    assert_int_equal(r.checkpoints, NCP + 1);
    assert_int_equal(r.checked, NCP);
    /* No checkpoint: nothing to check, nothing wrong. */
    r = run(identity(), N, NULL, NULL, 0);
    expect(r, AUDIT_OK, 0);
    assert_int_equal(r.checked, 0);
    /* Leaves past the last checkpoint are fine. */
    r = run(identity(), 999, notes, note_len, NCP - 1);
    expect(r, AUDIT_OK, 0);
}

static void
test_edited_leaf(void **state)
{
    struct audit_report r;
    char saved[80];

    (void)state;
    memcpy(saved, leaf_text[300], sizeof(saved));
    leaf_text[300][10] ^= 0x01;
    r = run(identity(), N, notes, note_len, NCP);
    memcpy(leaf_text[300], saved, sizeof(saved));
    expect(r, AUDIT_ROOT_MISMATCH, 500);
    assert_int_equal(r.checked, 3);
    /* The first leaf: the size-1 checkpoint catches it. */
    leaf_len[0]--;
    r = run(identity(), N, notes, note_len, NCP);
    leaf_len[0]++;
    expect(r, AUDIT_ROOT_MISMATCH, 1);
    /* The last leaf. */
    leaf_text[999][0] = '[';
    r = run(identity(), N, notes, note_len, NCP);
    leaf_text[999][0] = '{';
    expect(r, AUDIT_ROOT_MISMATCH, 1000);
}

static void
test_deleted_and_swapped_leaves(void **state)
{
    struct audit_report r;
    size_t *o = order_buf, t;

    (void)state;
    identity();
    memmove(o + 300, o + 301, (N - 301) * sizeof(*o));
    r = run(o, N - 1, notes, note_len, NCP);
    expect(r, AUDIT_ROOT_MISMATCH, 500);
    identity();
    t = o[300];
    o[300] = o[301];
    o[301] = t;
    r = run(o, N, notes, note_len, NCP);
    expect(r, AUDIT_ROOT_MISMATCH, 500);
    /* A leaf inserted (replayed) twice. */
    identity();
    memmove(o + 1, o, N * sizeof(*o));
    r = run(o, N + 1, notes, note_len, NCP);
    expect(r, AUDIT_ROOT_MISMATCH, 100);
}

static void
test_truncated(void **state)
{
    struct audit_report r;

    (void)state;
    r = run(identity(), 995, notes, note_len, NCP);
    expect(r, AUDIT_TRUNCATED, 999);
    assert_int_equal(r.leaves, 995);
    assert_int_equal(r.checked, 4);
    r = run(identity(), 999, notes, note_len, NCP);
    expect(r, AUDIT_TRUNCATED, 1000);
    r = run(identity(), 0, notes, note_len, NCP);
    expect(r, AUDIT_TRUNCATED, 1);
}

static void
test_forged_and_resigned_checkpoints(void **state)
{
    unsigned char root[32];
    char *ns[NCP + 1];
    size_t lens[NCP + 1], i;
    char garbage[] = "not a checkpoint";
    struct audit_report r;
    char *forged;

    (void)state;
    for (i = 0; i < NCP; i++) {
        ns[i] = notes[i];
        lens[i] = note_len[i];
    }
    /* Signed by another key under the log's name. */
    assert_int_equal(audit_root_at(500, audit_mem_fetch, mem, root), IG_OK);
    forged = au_sign_checkpoint(other, LOG, LOG, 500, root, &lens[3]);
    ns[3] = forged;
    r = run(identity(), N, ns, lens, NCP);
    expect(r, AUDIT_BAD_SIGNATURE, 500);
    free(forged);
    /* Re-signed by the log's key over another root. */
    root[0] ^= 1;
    forged = au_sign_checkpoint(key, LOG, LOG, 500, root, &lens[3]);
    ns[3] = forged;
    r = run(identity(), N, ns, lens, NCP);
    expect(r, AUDIT_ROOT_MISMATCH, 500);
    assert_int_equal(r.checked, 3);
    /* Given beside the true one: a fork, found before any leaf. */
    ns[3] = notes[3];
    lens[3] = note_len[3];
    ns[NCP] = forged;
    lens[NCP] = strlen(forged);
    r = run(identity(), 0, ns, lens, NCP + 1);
    expect(r, AUDIT_FORK, 500);
    free(forged);
    /* A checkpoint of another log, signed by the same key. */
    forged = au_sign_checkpoint(key, LOG, "example.com/another-log", 500, root,
                                &lens[3]);
    ns[3] = forged;
    r = run(identity(), N, ns, lens, NCP);
    expect(r, AUDIT_BAD_CHECKPOINT, 500);
    free(forged);
    /* Garbage. */
    ns[3] = garbage;
    lens[3] = strlen(ns[3]);
    r = run(identity(), N, ns, lens, NCP);
    expect(r, AUDIT_BAD_CHECKPOINT, 0);
}

static void
test_fork_at_another_size(void **state)
{
    unsigned char h[32], root[32];
    struct audit_mem *fork = NULL;
    char *ns[NCP + 1];
    size_t lens[NCP + 1], i;
    struct audit_report r;

    (void)state;
    /* The log's key also signed a tree whose leaf 600 differs. */
    assert_int_equal(audit_mem_new(&fork), IG_OK);
    for (i = 0; i < 800; i++) {
        audit_leaf_hash(leaf_text[i], leaf_len[i] - (i == 600), h);
        assert_int_equal(audit_mem_append(fork, h), IG_OK);
    }
    audit_frontier_root(audit_mem_frontier(fork), root);
    audit_mem_free(fork);
    for (i = 0; i < NCP; i++) {
        ns[i] = notes[i];
        lens[i] = note_len[i];
    }
    ns[NCP] = au_sign_checkpoint(key, LOG, LOG, 800, root, &lens[NCP]);
    r = run(identity(), N, ns, lens, NCP + 1);
    expect(r, AUDIT_ROOT_MISMATCH, 800);
    assert_int_equal(r.checked, 4);
    free(ns[NCP]);
}

static void
test_empty_tree_and_reader_failures(void **state)
{
    unsigned char empty[32];
    struct audit_verify *v = NULL;
    struct audit_report r;
    char *ns[1];
    size_t lens[1];

    (void)state;
    crypto_hash_sha256(empty, (const unsigned char *)"", 0);
    ns[0] = au_sign_checkpoint(key, LOG, LOG, 0, empty, &lens[0]);
    r = run(identity(), 0, ns, lens, 1);
    expect(r, AUDIT_OK, 0);
    assert_int_equal(r.checked, 1);
    free(ns[0]);
    empty[5] ^= 1;
    ns[0] = au_sign_checkpoint(key, LOG, LOG, 0, empty, &lens[0]);
    r = run(identity(), 10, ns, lens, 1);
    expect(r, AUDIT_ROOT_MISMATCH, 0);
    free(ns[0]);
    /* The reader's findings; the first failure sticks. */
    assert_int_equal(
        audit_verify_start(&v, &ver, (const char *const *)notes, note_len, NCP),
        IG_OK);
    audit_verify_leaf(v, leaf_text[0], leaf_len[0]);
    audit_verify_fail(v, AUDIT_MISSING_LEAF, 1, "leaf 1 is missing");
    audit_verify_fail(v, AUDIT_LEAF_MISMATCH, 2, NULL);
    audit_verify_leaf(v, leaf_text[2], leaf_len[2]);
    audit_verify_end(v, &r);
    expect(r, AUDIT_MISSING_LEAF, 1);
    assert_string_equal(r.detail, "leaf 1 is missing");
    assert_int_equal(r.leaves, 2);
    audit_verify_free(v);
    assert_int_equal(audit_verify_start(&v, &ver, NULL, NULL, 0), IG_OK);
    audit_verify_fail(v, AUDIT_LEAF_MISMATCH, 7, NULL);
    audit_verify_end(v, &r);
    expect(r, AUDIT_LEAF_MISMATCH, 7);
    audit_verify_free(v);
    audit_verify_free(NULL);
}

static void
test_leaf_hash_path_and_tree(void **state)
{
    unsigned char h[32], a[32], b[32];
    struct audit_verify *v = NULL;
    struct audit_report r;
    size_t i;

    (void)state;
    assert_int_equal(
        audit_verify_start(&v, &ver, (const char *const *)notes, note_len, NCP),
        IG_OK);
    for (i = 0; i < N; i++) {
        audit_leaf_hash(leaf_text[i], leaf_len[i], h);
        audit_verify_leaf_hash(v, h);
    }
    audit_frontier_root(audit_verify_tree(v), a);
    audit_frontier_root(audit_mem_frontier(mem), b);
    assert_memory_equal(a, b, 32);
    assert_int_equal(audit_verify_tree(v)->size, N);
    audit_verify_end(v, &r);
    expect(r, AUDIT_OK, 0);
    assert_int_equal(r.checked, NCP);
    audit_verify_free(v);
    assert_string_equal(audit_failure_name(AUDIT_OK), "ok");
    assert_string_equal(audit_failure_name(AUDIT_BAD_SIGNATURE),
                        "bad_signature");
    assert_string_equal(audit_failure_name(AUDIT_BAD_CHECKPOINT),
                        "bad_checkpoint");
    assert_string_equal(audit_failure_name(AUDIT_FORK), "fork");
    assert_string_equal(audit_failure_name(AUDIT_ROOT_MISMATCH),
                        "root_mismatch");
    assert_string_equal(audit_failure_name(AUDIT_TRUNCATED), "truncated");
    assert_string_equal(audit_failure_name(AUDIT_MISSING_LEAF), "missing_leaf");
    assert_string_equal(audit_failure_name(AUDIT_LEAF_MISMATCH),
                        "leaf_mismatch");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_log),
        cmocka_unit_test(test_edited_leaf),
        cmocka_unit_test(test_deleted_and_swapped_leaves),
        cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_forged_and_resigned_checkpoints),
        cmocka_unit_test(test_fork_at_another_size),
        cmocka_unit_test(test_empty_tree_and_reader_failures),
        cmocka_unit_test(test_leaf_hash_path_and_tree),
    };

    if (ig_crypto_init() != IG_OK)
        return 1;
    return cmocka_run_group_tests(tests, setup, teardown);
}
