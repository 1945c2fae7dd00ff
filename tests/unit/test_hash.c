/*
 * test_hash.c - the intent hash.
 *
 * Known SHA-256 digests, the cross-implementation agent-safe vectors
 * (the files in tests/vectors/agent-safe: "binding" must hash to "intent_hash"
 * and, when given, canonicalize to "canonical_json"), the format check and
 * refused values; the raw digest of two parts (ig_sha256_2).
 *
 * SHA-256 itself is libcrypto's (ig_hash.c); libsodium's
 * crypto_hash_sha256 is the independent reference here: both must give
 * the FIPS 180-2 / RFC 6234 digests (empty, "abc", the 448- and 896-bit
 * messages, a million 'a'), and the same digest of 10,000 pseudo-random
 * inputs of 0..4096 bytes through every entry point (one-shot, two parts
 * split anywhere, incremental in random pieces), from several threads at
 * once (each has its own context).
 */
#include "testutil.h"

#include <pthread.h>
#include <sodium.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ig_canon.h"
#include "ig_hash.h"
#include "ig_json.h"
#include "ig_limits.h"

static void
test_known_digests(void **state)
{
    char h[IG_HASH_STRLEN + 1];

    (void)state;
    ig_hash_bytes("", 0, h);
    assert_string_equal(h, "sha256:e3b0c44298fc1c149afbf4c8996fb924"
                           "27ae41e4649b934ca495991b7852b855");
    ig_hash_bytes("abc", 3, h);
    assert_string_equal(h, "sha256:ba7816bf8f01cfea414140de5dae2223"
                           "b00361a396177a9cb410ff61f20015ad");
    assert_int_equal(strlen(h), IG_HASH_STRLEN);
    assert_true(ig_hash_is_valid(h));
}

/* The raw digest of two parts is the digest of their concatenation,
   libsodium's for any split (the Merkle tree hashes 0x00 || leaf). */
static void
test_sha256_of_two_parts(void **state)
{
    static const unsigned char abc[IG_SHA256_BYTES] = {
        0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea, 0x41, 0x41, 0x40,
        0xde, 0x5d, 0xae, 0x22, 0x23, 0xb0, 0x03, 0x61, 0xa3, 0x96, 0x17,
        0x7a, 0x9c, 0xb4, 0x10, 0xff, 0x61, 0xf2, 0x00, 0x15, 0xad};
    unsigned char buf[300], got[IG_SHA256_BYTES], want[IG_SHA256_BYTES];
    size_t split, i;

    (void)state;
    ig_sha256_2("ab", 2, "c", 1, got);
    assert_memory_equal(got, abc, sizeof(abc));
    ig_sha256_2("abc", 3, NULL, 0, got);
    assert_memory_equal(got, abc, sizeof(abc));
    ig_sha256_2("", 0, "abc", 3, got);
    assert_memory_equal(got, abc, sizeof(abc));
    for (i = 0; i < sizeof(buf); i++)
        buf[i] = (unsigned char)(i * 7 + 1);
    crypto_hash_sha256(want, buf, sizeof(buf));
    for (split = 0; split <= sizeof(buf); split += 13) {
        ig_sha256_2(buf, split, buf + split, sizeof(buf) - split, got);
        assert_memory_equal(got, want, sizeof(want));
    }
}

static void
check_vector(const char *name)
{
    char path[128], h[IG_HASH_STRLEN + 1];
    struct ig_err err;
    struct ig_buf b;
    json_t *doc = NULL, *binding, *canon, *want;
    size_t len;
    char *text;

    (void)snprintf(path, sizeof(path), "agent-safe/%s", name);
    text = tu_read_vector(path, &len);
    if (ig_json_parse(text, len, &doc, &err) != IG_OK)
        fail_msg("%s: %s at %d:%d", name, err.msg, err.line, err.column);
    binding = json_object_get(doc, "binding");
    canon = json_object_get(doc, "canonical_json");
    want = json_object_get(doc, "intent_hash");
    assert_non_null(binding);
    assert_true(json_is_string(want));
    assert_true(ig_hash_is_valid(json_string_value(want)));
    if (ig_hash_json(binding, h, &err) != IG_OK)
        fail_msg("%s: %s", name, err.msg);
    if (strcmp(h, json_string_value(want)) != 0)
        fail_msg("%s: hash %s want %s", name, h, json_string_value(want));
    if (canon != NULL) {
        assert_true(json_is_string(canon));
        ig_buf_init(&b, IG_CANON_MAX_BYTES);
        assert_int_equal(ig_canon_write(binding, &b, &err), IG_OK);
        assert_int_equal(b.len, json_string_length(canon));
        assert_memory_equal(b.data, json_string_value(canon), b.len);
        ig_buf_release(&b);
        ig_hash_bytes(json_string_value(canon), json_string_length(canon), h);
        assert_string_equal(h, json_string_value(want));
    }
    json_decref(doc);
    free(text);
}

static void
test_agent_safe_vectors(void **state)
{
    static const char *names[] = {
        "agent-safe-intent-v1.json", "composed-vs-decomposed.json",
        "fractional-exponent.json",  "negative-zero.json",
        "nested-arrays.json",        "unicode-astral.json",
        "utf16-sort-order.json"};
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        check_vector(names[i]);
}

/* Member order and insignificant whitespace do not change the hash. */
static void
test_hash_ignores_layout(void **state)
{
    static const char a[] =
        "{\"b\":[1,2.0,{\"y\":null,\"x\":true}],\"a\":\"s\"}";
    static const char b[] =
        "{ \"a\" : \"s\",\n \"b\" : [ 1e0, 2, { \"x\":true, \"y\":null } ] }";
    char ha[IG_HASH_STRLEN + 1], hb[IG_HASH_STRLEN + 1];
    struct ig_err err;
    json_t *va, *vb;

    (void)state;
    assert_int_equal(ig_json_parse(a, sizeof(a) - 1, &va, &err), IG_OK);
    assert_int_equal(ig_json_parse(b, sizeof(b) - 1, &vb, &err), IG_OK);
    assert_int_equal(ig_hash_json(va, ha, &err), IG_OK);
    assert_int_equal(ig_hash_json(vb, hb, &err), IG_OK);
    assert_string_equal(ha, hb);
    /* ...but any change of value does. */
    assert_int_equal(json_object_set_new(vb, "a", json_string("t")), 0);
    assert_int_equal(ig_hash_json(vb, hb, &err), IG_OK);
    assert_string_not_equal(ha, hb);
    json_decref(va);
    json_decref(vb);
}

static void
test_hash_refused(void **state)
{
    char h[IG_HASH_STRLEN + 1];
    struct ig_err err;
    json_t *v, *inner;
    int i;

    (void)state;
    v = json_pack("{s:I}", "n", (json_int_t)9007199254740993LL);
    assert_int_equal(ig_hash_json(v, h, &err), IG_ERR_INVALID);
    assert_string_equal(h, "");
    assert_non_null(strstr(err.msg, "2^53"));
    json_decref(v);
    v = json_stringn_nocheck("\xc3", 1);
    assert_int_equal(ig_hash_json(v, h, &err), IG_ERR_INVALID);
    json_decref(v);
    v = json_array();
    for (i = 0; i < IG_JSON_MAX_DEPTH; i++) {
        inner = json_array();
        assert_int_equal(json_array_append_new(inner, v), 0);
        v = inner;
    }
    assert_int_equal(ig_hash_json(v, h, &err), IG_ERR_LIMIT);
    json_decref(v);
    assert_int_equal(ig_hash_json(NULL, h, NULL), IG_ERR_INVALID);
}

static void
test_is_valid(void **state)
{
    static const char good[] = "sha256:"
                               "0123456789abcdef0123456789abcdef"
                               "0123456789abcdef0123456789abcdef";
    char s[IG_HASH_STRLEN + 2];

    (void)state;
    assert_true(ig_hash_is_valid(good));
    assert_false(ig_hash_is_valid(NULL));
    assert_false(ig_hash_is_valid(""));
    assert_false(ig_hash_is_valid("sha256:"));
    memcpy(s, good, sizeof(good));
    s[7] = 'A'; /* upper case */
    assert_false(ig_hash_is_valid(s));
    s[7] = 'g';
    assert_false(ig_hash_is_valid(s));
    memcpy(s, good, sizeof(good));
    s[IG_HASH_STRLEN - 1] = '\0'; /* short */
    assert_false(ig_hash_is_valid(s));
    memcpy(s, good, sizeof(good));
    s[IG_HASH_STRLEN] = '0'; /* long */
    s[IG_HASH_STRLEN + 1] = '\0';
    assert_false(ig_hash_is_valid(s));
    memcpy(s, good, sizeof(good));
    s[0] = 'S';
    assert_false(ig_hash_is_valid(s));
    memcpy(s, good, sizeof(good));
    s[6] = '=';
    assert_false(ig_hash_is_valid(s));
    assert_false(ig_hash_is_valid("sha512:0123456789abcdef0123456789abcdef"
                                  "0123456789abcdef0123456789abcdef"));
}

/* ---- SHA-256: libcrypto against the vectors and against libsodium ---- */

#define RANDOM_INPUTS 10000
#define RANDOM_MAX 4096
#define THREADS 4

/* A deterministic generator (xorshift64*), so a failure replays. */
static uint64_t
next_rand(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * (uint64_t)0x2545F4914F6CDD1DULL;
}

static void
fill_rand(uint64_t *s, unsigned char *p, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        p[i] = (unsigned char)(next_rand(s) >> 56);
}

static void
hex_of(const unsigned char h[IG_SHA256_BYTES], char out[65])
{
    (void)sodium_bin2hex(out, 65, h, IG_SHA256_BYTES);
}

/* msg's digest is want (hex), by every entry point and by libsodium. */
static void
check_sha256(const unsigned char *msg, size_t len, const char *want)
{
    struct ig_sha256 *st = NULL;
    unsigned char got[IG_SHA256_BYTES];
    char hex[65], str[IG_HASH_STRLEN + 1];

    ig_sha256(msg, len, got);
    hex_of(got, hex);
    assert_string_equal(hex, want);
    ig_sha256_2(msg, len / 3, msg + len / 3, len - len / 3, got);
    hex_of(got, hex);
    assert_string_equal(hex, want);
    assert_int_equal(ig_sha256_new(&st), IG_OK);
    ig_sha256_update(st, msg, len / 2);
    ig_sha256_update(st, msg + len / 2, len - len / 2);
    ig_sha256_final(st, got);
    ig_sha256_free(st);
    hex_of(got, hex);
    assert_string_equal(hex, want);
    ig_sha256_hex(msg, len, hex);
    assert_string_equal(hex, want);
    ig_hash_bytes(msg, len, str);
    assert_string_equal(str + 7, want);
    crypto_hash_sha256(got, msg, len);
    hex_of(got, hex);
    assert_string_equal(hex, want); /* the reference agrees too */
}

static void
test_sha256_nist_vectors(void **state)
{
    static const char m448[] =
        "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    static const char m896[] =
        "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmn"
        "hijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";
    unsigned char *million = malloc(1000000);

    (void)state;
    assert_non_null(million);
    assert_int_equal(ig_sha256_check(), IG_OK);
    check_sha256((const unsigned char *)"", 0,
                 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b"
                 "7852b855");
    check_sha256((const unsigned char *)"abc", 3,
                 "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61"
                 "f20015ad");
    check_sha256((const unsigned char *)m448, sizeof(m448) - 1,
                 "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd4"
                 "19db06c1");
    check_sha256((const unsigned char *)m896, sizeof(m896) - 1,
                 "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac4503"
                 "7afee9d1");
    memset(million, 'a', 1000000);
    check_sha256(million, 1000000,
                 "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39cc"
                 "c7112cd0");
    free(million);
}

/* One random input: 1 when libcrypto's digest by each entry point equals
   libsodium's. The incremental context is reused, as callers may. No
   cmocka assertion here: it runs in threads too. */
static int
random_input_agrees(uint64_t *s, unsigned char *buf, struct ig_sha256 *st)
{
    unsigned char want[IG_SHA256_BYTES], got[3][IG_SHA256_BYTES];
    size_t len = (size_t)(next_rand(s) % (RANDOM_MAX + 1)), split, off, n;

    fill_rand(s, buf, len);
    crypto_hash_sha256(want, buf, len);
    ig_sha256(buf, len, got[0]);
    split = (size_t)(next_rand(s) % (len + 1));
    ig_sha256_2(buf, split, buf + split, len - split, got[1]);
    for (off = 0; off < len; off += n) {
        n = (size_t)(next_rand(s) % 700);
        if (n > len - off)
            n = len - off;
        ig_sha256_update(st, buf + off, n);
    }
    ig_sha256_final(st, got[2]);
    return memcmp(got[0], want, sizeof(want)) == 0 &&
           memcmp(got[1], want, sizeof(want)) == 0 &&
           memcmp(got[2], want, sizeof(want)) == 0;
}

struct rand_run {
    uint64_t seed;
    int count;
    int agreed; /* inputs whose digests all agreed, read after join */
};

static void *
random_inputs(void *arg)
{
    struct rand_run *r = arg;
    unsigned char *buf = malloc(RANDOM_MAX);
    struct ig_sha256 *st = NULL;
    int i;

    if (buf != NULL && ig_sha256_new(&st) == IG_OK)
        for (i = 0; i < r->count; i++)
            r->agreed += random_input_agrees(&r->seed, buf, st);
    ig_sha256_free(st);
    free(buf);
    return NULL;
}

static void
test_sha256_matches_libsodium(void **state)
{
    struct rand_run r = {(uint64_t)0x9E3779B97F4A7C15ULL, RANDOM_INPUTS, 0};

    (void)state;
    (void)random_inputs(&r);
    assert_int_equal(r.agreed, RANDOM_INPUTS);
}

/* Threads hashing at once each use their own context: every digest still
   equals libsodium's. */
static void
test_sha256_threads(void **state)
{
    struct rand_run r[THREADS];
    pthread_t t[THREADS];
    int i;

    (void)state;
    for (i = 0; i < THREADS; i++) {
        r[i].seed = (uint64_t)0xD1B54A32D192ED03ULL * (uint64_t)(i + 1);
        r[i].count = RANDOM_INPUTS / THREADS;
        r[i].agreed = 0;
        assert_int_equal(pthread_create(&t[i], NULL, random_inputs, &r[i]), 0);
    }
    for (i = 0; i < THREADS; i++) {
        assert_int_equal(pthread_join(t[i], NULL), 0);
        assert_int_equal(r[i].agreed, RANDOM_INPUTS / THREADS);
    }
}

/* One flipped bit anywhere changes the digest (the check can fail). */
static void
test_sha256_detects_a_flip(void **state)
{
    unsigned char buf[200], a[IG_SHA256_BYTES], b[IG_SHA256_BYTES];
    uint64_t s = 42;
    size_t i;

    (void)state;
    fill_rand(&s, buf, sizeof(buf));
    ig_sha256(buf, sizeof(buf), a);
    for (i = 0; i < sizeof(buf) * 8; i += 7) {
        buf[i / 8] ^= (unsigned char)(1u << (i % 8));
        ig_sha256_2(buf, i / 16, buf + i / 16, sizeof(buf) - i / 16, b);
        assert_memory_not_equal(a, b, sizeof(a));
        buf[i / 8] ^= (unsigned char)(1u << (i % 8));
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_digests),
        cmocka_unit_test(test_sha256_of_two_parts),
        cmocka_unit_test(test_sha256_nist_vectors),
        cmocka_unit_test(test_sha256_matches_libsodium),
        cmocka_unit_test(test_sha256_threads),
        cmocka_unit_test(test_sha256_detects_a_flip),
        cmocka_unit_test(test_agent_safe_vectors),
        cmocka_unit_test(test_hash_ignores_layout),
        cmocka_unit_test(test_hash_refused),
        cmocka_unit_test(test_is_valid),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
