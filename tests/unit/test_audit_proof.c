/*
 * test_audit_proof.c - the C2SP tlog-proof text format: format and parse
 * round trips for every leaf of a tree, each opened and verified the way
 * an offline checker would (checkpoint_open, then verify_inclusion); an
 * optional extra line; the C2SP spec's own example layout; and malformed
 * proofs, including the cases of transparency-dev/merkle's
 * TestVerifyTLogProofErrors.
 */
#include "testutil.h"

#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "audit_mem.h"
#include "audit_note.h"
#include "audit_util.h"

#define LOG "example.com/intentgate-log"

typedef unsigned char hash_t[32];

static char *
subst(const char *s, const char *from, const char *to)
{
    size_t fl = strlen(from), tl = strlen(to), n = 0, cap = strlen(s) * 3 + 1;
    char *out = malloc(cap);
    const char *p;

    assert_non_null(out);
    while ((p = strstr(s, from)) != NULL) {
        memcpy(out + n, s, (size_t)(p - s));
        n += (size_t)(p - s);
        memcpy(out + n, to, tl);
        n += tl;
        s = p + fl;
    }
    memcpy(out + n, s, strlen(s) + 1);
    return out;
}

static void
test_proof_round_trip(void **state)
{
    struct ig_signing_key *k = au_key_new();
    hash_t proof[AUDIT_PROOF_MAX], got[AUDIT_PROOF_MAX], leaf, root;
    struct audit_checkpoint c;
    struct audit_verifier v;
    struct audit_mem *m;
    const char *note;
    size_t n, gn, nlen, clen;
    uint64_t i, idx;
    char *cp;
    struct ig_buf b;

    (void)state;
    au_verifier(k, LOG, &v);
    assert_int_equal(audit_mem_new(&m), IG_OK);
    for (i = 0; i < 21; i++) {
        audit_leaf_hash(&i, sizeof(i), leaf);
        assert_int_equal(audit_mem_append(m, leaf), IG_OK);
    }
    audit_frontier_root(audit_mem_frontier(m), root);
    cp = au_sign_checkpoint(k, LOG, LOG, 21, root, &clen);
    for (i = 0; i < 21; i++) {
        assert_int_equal(
            audit_inclusion_proof(i, 21, audit_mem_fetch, m, proof, &n), IG_OK);
        ig_buf_init(&b, 1 << 20);
        assert_int_equal(
            audit_proof_format(i, (const hash_t *)proof, n, cp, &b), IG_OK);
        assert_int_equal(audit_proof_parse(b.data, b.len, &idx, got, &gn, &note,
                                           &nlen, NULL),
                         IG_OK);
        assert_int_equal(idx, i);
        assert_int_equal(gn, n);
        assert_memory_equal(got, proof, n * 32);
        assert_int_equal(nlen, clen);
        assert_memory_equal(note, cp, clen);
        /* The whole offline check. */
        assert_int_equal(audit_checkpoint_open(note, nlen, &v, &c, NULL),
                         IG_OK);
        audit_leaf_hash(&i, sizeof(i), leaf);
        assert_int_equal(audit_verify_inclusion(leaf, idx, c.size,
                                                (const hash_t *)got, gn,
                                                c.root),
                         IG_OK);
        ig_buf_release(&b);
    }
    /* An optional extra line is read past. */
    ig_buf_init(&b, 1 << 20);
    assert_int_equal(audit_proof_format(3, (const hash_t *)proof, n, cp, &b),
                     IG_OK);
    {
        char *with = subst(b.data, "@v1\n", "@v1\nextra YWdlLXYxLjIuMQ==\n");

        assert_int_equal(audit_proof_parse(with, strlen(with), &idx, got, &gn,
                                           &note, &nlen, NULL),
                         IG_OK);
        assert_int_equal(idx, 3);
        free(with);
    }
    ig_buf_release(&b);
    /* Too many hashes are refused on both sides. */
    ig_buf_init(&b, 1 << 20);
    assert_int_equal(audit_proof_format(0, (const hash_t *)proof,
                                        AUDIT_PROOF_MAX + 1, cp, &b),
                     IG_ERR_INVALID);
    ig_buf_release(&b);
    free(cp);
    audit_mem_free(m);
    ig_signing_key_free(k);
}

static void
test_proof_malformed(void **state)
{
#define HASH "gSKyXoYZUgZ6jduWYrkDOARinOMGJveXjgMkBTcdPlQ=\n"
#define CP                                                                     \
    "example.com/fancylog\n109482\nsFodV/vSp5O8n9a8QpW6PRY97tfOSW5bsc2Xl/"     \
    "EQi08=\n\n"
    static const char *bad[] = {
        "",
        "c2sp.org/tlog-proof@v1",
        "c2sp.org/tlog-proof@v1\n",
        "wrong-header\nindex 0\n\ncheckpoint\n",
        "c2sp.org/tlog-proof@v2\nindex 0\n\n" CP,
        "c2sp.org/tlog-proof@v1\nextra !!notbase64!!\nindex 0\n\n" CP,
        "c2sp.org/tlog-proof@v1\n\n\ncheckpoint\n",
        "c2sp.org/tlog-proof@v1\nindex notanumber\n\n" CP,
        "c2sp.org/tlog-proof@v1\nindex -5\n\n" CP,
        "c2sp.org/tlog-proof@v1\nindex 05\n\n" CP,
        "c2sp.org/tlog-proof@v1\nindex  5\n\n" CP,
        "c2sp.org/tlog-proof@v1\nindex 5 \n\n" CP,
        "c2sp.org/tlog-proof@v1\nindex 18446744073709551616\n\n" CP,
        "c2sp.org/tlog-proof@v1\nindex 0\n!!notbase64!!\n\n" CP,
        "c2sp.org/tlog-proof@v1\nindex 0\n"
        "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
        "AAAAAAAAAAAAAAAAAA==\n\n" CP,
        "c2sp.org/tlog-proof@v1\nindex "
        "0\ngSKyXoYZUgZ6jduWYrkDOARinOMGJveXjgMkBTc"
        "dPlQ\n\n" CP,
        "c2sp.org/tlog-proof@v1\nindex 0\n" HASH,
        "c2sp.org/tlog-proof@v1\nindex 0\n" HASH "\n",
        "c2sp.org/tlog-proof@v1\r\nindex 0\r\n\r\n" CP,
        "c2sp.org/tlog-proof@v1\nindex 0\r\n\n" CP,
        "c2sp.org/tlog-proof@v1\nextra YWdl\n\n" CP,
        "c2sp.org/tlog-proof@v1\nindex 0\nextra YWdl\n\n" CP,
    };
    hash_t got[AUDIT_PROOF_MAX];
    const char *note;
    struct ig_err err;
    uint64_t idx;
    size_t i, n, nlen;
    char *many, *p;

    (void)state;
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (audit_proof_parse(bad[i], strlen(bad[i]), &idx, got, &n, &note,
                              &nlen, &err) == IG_OK)
            fail_msg("malformed proof %zu parsed", i);
        assert_null(note);
        assert_int_equal(n, 0);
    }
    /* The C2SP example's layout (extra, five hashes) parses. */
    {
        const char *ex = "c2sp.org/tlog-proof@v1\n"
                         "extra YWdlLXYxLjIuMS1kYXJ3aW4tYXJtNjQudGFyLmd6\n"
                         "index 73894\n" HASH HASH HASH HASH HASH "\n" CP;

        assert_int_equal(audit_proof_parse(ex, strlen(ex), &idx, got, &n, &note,
                                           &nlen, &err),
                         IG_OK);
        assert_int_equal(idx, 73894);
        assert_int_equal(n, 5);
        assert_int_equal(nlen, strlen(CP));
    }
    /* 64 hashes parse, 65 do not. */
    many = malloc(100 + 66 * strlen(HASH) + strlen(CP));
    assert_non_null(many);
    for (i = 64; i <= 65; i++) {
        size_t h;

        p = many + snprintf(many, 100, "c2sp.org/tlog-proof@v1\nindex 0\n");
        for (h = 0; h < i; h++) {
            memcpy(p, HASH, strlen(HASH));
            p += strlen(HASH);
        }
        (void)snprintf(p, 3 + strlen(CP), "\n%s", CP);
        assert_int_equal(audit_proof_parse(many, strlen(many), &idx, got, &n,
                                           &note, &nlen, &err),
                         i == 64 ? IG_OK : IG_ERR_INVALID);
        assert_int_equal(n, i == 64 ? 64 : 0);
    }
    free(many);
#undef HASH
#undef CP
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_proof_round_trip),
        cmocka_unit_test(test_proof_malformed),
    };

    if (ig_crypto_init() != IG_OK)
        return 1;
    return cmocka_run_group_tests(tests, NULL, NULL);
}
