/*
 * test_hash.c - the intent hash.
 *
 * Known SHA-256 digests, the cross-implementation agent-safe vectors
 * (the files in tests/vectors/agent-safe: "binding" must hash to "intent_hash"
 * and, when given, canonicalize to "canonical_json"), the format check and
 * refused values; the raw digest of two parts (ig_sha256_2).
 */
#include "testutil.h"

#include <sodium.h>
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

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_digests),
        cmocka_unit_test(test_sha256_of_two_parts),
        cmocka_unit_test(test_agent_safe_vectors),
        cmocka_unit_test(test_hash_ignores_layout),
        cmocka_unit_test(test_hash_refused),
        cmocka_unit_test(test_is_valid),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
