/*
 * test_paseto.c - PASETO v4.public against the official v4 vectors (the
 * 4-S tokens verify and re-signing reproduces them byte for byte; 4-F and
 * every v4.local token are refused), then signify-style forgeries: each
 * byte of body and footer flipped, wrong key, wrong implicit assertion,
 * other headers, every truncation, oversize, non-canonical base64url and
 * extra parts must all fail, and nothing is appended when they do.
 */
#include "testutil.h"

#include <jansson.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ig_b64.h"
#include "ig_limits.h"
#include "ig_paseto.h"

#define TOKCAP (IG_TOKEN_MAX_BYTES + 64)

static struct ig_signing_key *
key_from_sk_hex(const char *hex)
{
    struct ig_signing_key *k;
    char s[IG_PASERK_SECRET_STRLEN + 1];
    unsigned char *sk;
    size_t n;

    sk = tu_hex_decode(hex, &n);
    assert_int_equal(n, IG_SK_BYTES);
    memcpy(s, "k4.secret.", 10);
    (void)ig_b64_encode(sk, n, s + 10, sizeof(s) - 10);
    assert_int_equal(ig_signing_key_from_paserk(s, strlen(s), &k, NULL), IG_OK);
    sodium_memzero(s, sizeof(s));
    free(sk);
    return k;
}

static void
pk_from_hex(const char *hex, struct ig_public_key *out)
{
    unsigned char *pk;
    size_t n;

    pk = tu_hex_decode(hex, &n);
    assert_int_equal(n, IG_PK_BYTES);
    ig_public_key_from_bytes(pk, out);
    free(pk);
}

static const char *
field(json_t *t, const char *key)
{
    return json_string_value(json_object_get(t, key));
}

static enum ig_status
verify_s(const struct ig_public_key *pk, const char *tok, size_t len,
         const char *implicit)
{
    struct ig_buf m, f;
    enum ig_status st;

    ig_buf_init(&m, IG_TOKEN_MAX_BYTES);
    ig_buf_init(&f, IG_TOKEN_MAX_BYTES);
    st = ig_paseto_verify(pk, tok, len, implicit, strlen(implicit), &m, &f,
                          NULL);
    if (st != IG_OK) {
        assert_int_equal(m.len, 0);
        assert_int_equal(f.len, 0);
    }
    ig_buf_release(&m);
    ig_buf_release(&f);
    return st;
}

static void
check_sign_vector(json_t *t)
{
    const char *tok = field(t, "token"), *pl = field(t, "payload");
    const char *ft = field(t, "footer"), *ia = field(t, "implicit-assertion");
    struct ig_public_key pk;
    struct ig_signing_key *k;
    struct ig_buf m, f, out;

    pk_from_hex(field(t, "public-key"), &pk);
    ig_buf_init(&m, IG_TOKEN_MAX_BYTES);
    ig_buf_init(&f, IG_TOKEN_MAX_BYTES);
    assert_int_equal(
        ig_paseto_verify(&pk, tok, strlen(tok), ia, strlen(ia), &m, &f, NULL),
        IG_OK);
    assert_int_equal(m.len, strlen(pl));
    assert_memory_equal(m.data, pl, m.len);
    assert_int_equal(f.len, strlen(ft));
    if (f.len > 0)
        assert_memory_equal(f.data, ft, f.len);
    ig_buf_reset(&f);
    assert_int_equal(ig_paseto_peek_footer(tok, strlen(tok), &f, NULL), IG_OK);
    assert_int_equal(f.len, strlen(ft));
    /* Ed25519 is deterministic: re-signing gives the very same token. */
    k = key_from_sk_hex(field(t, "secret-key"));
    ig_buf_init(&out, IG_TOKEN_MAX_BYTES);
    assert_int_equal(ig_paseto_sign(k, pl, strlen(pl), ft, strlen(ft), ia,
                                    strlen(ia), &out, NULL),
                     IG_OK);
    assert_string_equal(out.data, tok);
    /* The same token without its implicit assertion, or another, fails. */
    if (ia[0] != '\0')
        assert_int_equal(verify_s(&pk, tok, strlen(tok), ""), IG_ERR_CRYPTO);
    assert_int_equal(verify_s(&pk, tok, strlen(tok), "x"), IG_ERR_CRYPTO);
    ig_signing_key_free(k);
    ig_buf_release(&out);
    ig_buf_release(&m);
    ig_buf_release(&f);
}

/* A 4-E or 4-F vector: refused by verify (with the 4-S key) and peek. */
static void
check_refused_vector(json_t *t, const struct ig_public_key *pk, size_t *nfail,
                     size_t *nlocal)
{
    const char *name = field(t, "name"), *tok = field(t, "token");
    struct ig_buf f;

    /* 4-E are v4.local (not implemented: refused); 4-F must fail. */
    if (strncmp(name, "4-E-", 4) == 0) {
        assert_int_equal(strncmp(tok, "v4.local.", 9), 0);
        (*nlocal)++;
    } else {
        assert_true(json_is_true(json_object_get(t, "expect-fail")));
        (*nfail)++;
    }
    if (verify_s(pk, tok, strlen(tok), field(t, "implicit-assertion")) == IG_OK)
        fail_msg("%s verified", name);
    ig_buf_init(&f, IG_TOKEN_MAX_BYTES);
    if (strncmp(tok, "v4.public.", 10) != 0)
        assert_int_equal(ig_paseto_peek_footer(tok, strlen(tok), &f, NULL),
                         IG_ERR_INVALID);
    ig_buf_release(&f);
}

static void
test_v4_vectors(void **state)
{
    char path[512];
    json_error_t jerr;
    json_t *root, *t, *s1 = NULL;
    struct ig_public_key pk;
    size_t i, nsign = 0, nfail = 0, nlocal = 0;
    (void)state;

    assert_true(snprintf(path, sizeof(path), "%s/paseto/v4.json",
                         IG_VECTORS_DIR) < (int)sizeof(path));
    root = json_load_file(path, 0, &jerr);
    assert_non_null(root);
    json_array_foreach(json_object_get(root, "tests"), i, t)
    {
        if (strncmp(field(t, "name"), "4-S-", 4) == 0) {
            check_sign_vector(t);
            s1 = s1 ? s1 : t;
            nsign++;
        }
    }
    assert_non_null(s1);
    pk_from_hex(field(s1, "public-key"), &pk);
    json_array_foreach(json_object_get(root, "tests"), i, t)
    {
        if (strncmp(field(t, "name"), "4-S-", 4) != 0)
            check_refused_vector(t, &pk, &nfail, &nlocal);
    }
    assert_int_equal(nsign, 3);
    assert_int_equal(nfail, 5);
    assert_int_equal(nlocal, 9);
    json_decref(root);
}

/* ---- our own forgeries ---- */

struct fixture {
    struct ig_signing_key *k;
    struct ig_public_key pk;
    char tok[TOKCAP];
    size_t len;
};

static const char payload[] = "{\"data\":\"a grant\",\"n\":1}";
static const char footer[] = "{\"kid\":\"k4.pid.test\"}";
static const char implicit[] = "sha256:0123";

static void
make_token(struct fixture *fx, const char *m, size_t mlen, const char *f)
{
    struct ig_buf out;

    ig_buf_init(&out, IG_TOKEN_MAX_BYTES);
    assert_int_equal(ig_paseto_sign(fx->k, m, mlen, f, strlen(f), implicit,
                                    strlen(implicit), &out, NULL),
                     IG_OK);
    assert_true(out.len < sizeof(fx->tok));
    memcpy(fx->tok, out.data, out.len + 1);
    fx->len = out.len;
    ig_buf_release(&out);
}

static int
setup(void **state)
{
    struct fixture *fx = calloc(1, sizeof(*fx));

    if (fx == NULL || ig_signing_key_generate(&fx->k) != IG_OK)
        return -1;
    ig_signing_key_public(fx->k, &fx->pk);
    make_token(fx, payload, strlen(payload), footer);
    *state = fx;
    return 0;
}

static int
teardown(void **state)
{
    struct fixture *fx = *state;

    ig_signing_key_free(fx->k);
    free(fx);
    return 0;
}

/* Flip bit `bit` of byte i of the decoded part (0 body, 1 footer). */
static size_t
tamper(const struct fixture *fx, int part, size_t i, char *out, size_t cap)
{
    unsigned char raw[IG_TOKEN_MAX_BYTES];
    const char *dot = memchr(fx->tok + 10, '.', fx->len - 10);
    const char *s = part == 0 ? fx->tok + 10 : dot + 1;
    size_t slen =
        part == 0 ? (size_t)(dot - s) : fx->len - (size_t)(s - fx->tok);
    size_t n, pre = (size_t)(s - fx->tok), enc;

    assert_int_equal(ig_b64_decode(s, slen, raw, sizeof(raw), &n), IG_OK);
    if (i >= n)
        return 0;
    raw[i] ^= 0x01;
    memcpy(out, fx->tok, pre);
    enc = ig_b64_encode(raw, n, out + pre, cap - pre);
    assert_int_equal(enc, slen);
    memcpy(out + pre + enc, s + slen, fx->len - pre - slen);
    out[fx->len] = '\0';
    return fx->len;
}

static void
test_round_trip_and_outputs(void **state)
{
    struct fixture *fx = *state;
    struct ig_buf m, f;
    (void)state;

    ig_buf_init(&m, 1000);
    ig_buf_init(&f, 1000);
    assert_int_equal(ig_buf_adds(&m, "pre:"), IG_OK);
    assert_int_equal(ig_paseto_verify(&fx->pk, fx->tok, fx->len, implicit,
                                      strlen(implicit), &m, &f, NULL),
                     IG_OK);
    assert_string_equal(m.data + 4, payload);
    assert_string_equal(f.data, footer);
    /* footer_out may be NULL. */
    ig_buf_reset(&m);
    assert_int_equal(ig_paseto_verify(&fx->pk, fx->tok, fx->len, implicit,
                                      strlen(implicit), &m, NULL, NULL),
                     IG_OK);
    assert_string_equal(m.data, payload);
    /* All or nothing: a footer buffer too small leaves payload_out alone. */
    ig_buf_release(&f);
    ig_buf_init(&f, 4);
    ig_buf_reset(&m);
    assert_int_equal(ig_buf_adds(&m, "pre"), IG_OK);
    assert_int_equal(ig_paseto_verify(&fx->pk, fx->tok, fx->len, implicit,
                                      strlen(implicit), &m, &f, NULL),
                     IG_ERR_LIMIT);
    assert_string_equal(m.data, "pre");
    assert_int_equal(f.len, 0);
    ig_buf_release(&m);
    ig_buf_release(&f);
}

static void
test_tampered_body_and_footer(void **state)
{
    struct fixture *fx = *state;
    char t[TOKCAP];
    size_t i, n, count = 0;
    int part;

    for (part = 0; part < 2; part++)
        for (i = 0;; i++) {
            n = tamper(fx, part, i, t, sizeof(t));
            if (n == 0)
                break;
            assert_int_equal(verify_s(&fx->pk, t, n, implicit), IG_ERR_CRYPTO);
            count++;
        }
    /* Every payload, signature and footer byte was tried. */
    assert_int_equal(count, strlen(payload) + 64 + strlen(footer));
}

static void
test_wrong_key_and_implicit(void **state)
{
    struct fixture *fx = *state;
    struct ig_signing_key *other;
    struct ig_public_key opk;
    struct ig_err err;
    struct ig_buf m;

    assert_int_equal(ig_signing_key_generate(&other), IG_OK);
    ig_signing_key_public(other, &opk);
    assert_int_equal(verify_s(&opk, fx->tok, fx->len, implicit), IG_ERR_CRYPTO);
    assert_int_equal(verify_s(&fx->pk, fx->tok, fx->len, "sha256:0124"),
                     IG_ERR_CRYPTO);
    assert_int_equal(verify_s(&fx->pk, fx->tok, fx->len, ""), IG_ERR_CRYPTO);
    ig_buf_init(&m, 100);
    assert_int_equal(ig_paseto_verify(&fx->pk, fx->tok, fx->len, implicit,
                                      strlen(implicit) - 1, &m, NULL, &err),
                     IG_ERR_CRYPTO);
    assert_non_null(strstr(err.msg, "signature"));
    ig_buf_release(&m);
    ig_signing_key_free(other);
}

static void
test_other_headers(void **state)
{
    struct fixture *fx = *state;
    static const char *const hdrs[] = {"v4.local.",  "v3.public.",
                                       "V4.public.", "v4.public",
                                       "v4.publi.",  "v4.public.."};
    char t[TOKCAP + 16];
    size_t i, n;

    for (i = 0; i < sizeof(hdrs) / sizeof(hdrs[0]); i++) {
        n = (size_t)snprintf(t, sizeof(t), "%s%s", hdrs[i], fx->tok + 10);
        assert_int_equal(verify_s(&fx->pk, t, n, implicit), IG_ERR_INVALID);
    }
}

static void
test_every_truncation(void **state)
{
    struct fixture *fx = *state;
    char *t;
    size_t n;

    for (n = 0; n < fx->len; n++) {
        /* An exact-size heap copy lets ASan catch any read past the end. */
        t = malloc(n + 1);
        assert_non_null(t);
        memcpy(t, fx->tok, n);
        if (verify_s(&fx->pk, t, n, implicit) == IG_OK)
            fail_msg("prefix of %zu chars verified", n);
        free(t);
    }
    /* Without its footer part, too. */
    n = (size_t)((const char *)memchr(fx->tok + 10, '.', fx->len - 10) -
                 fx->tok);
    assert_int_equal(verify_s(&fx->pk, fx->tok, n, implicit), IG_ERR_CRYPTO);
}

static void
test_extra_parts(void **state)
{
    struct fixture *fx = *state;
    char t[TOKCAP + 16];
    struct ig_buf f;
    size_t n;

    n = (size_t)snprintf(t, sizeof(t), "%s.", fx->tok);
    assert_int_equal(verify_s(&fx->pk, t, n, implicit), IG_ERR_INVALID);
    n = (size_t)snprintf(t, sizeof(t), "%s.Zm9v", fx->tok);
    assert_int_equal(verify_s(&fx->pk, t, n, implicit), IG_ERR_INVALID);
    ig_buf_init(&f, 100);
    assert_int_equal(ig_paseto_peek_footer(t, n, &f, NULL), IG_ERR_INVALID);
    assert_int_equal(f.len, 0);
    ig_buf_release(&f);
    n = (size_t)snprintf(t, sizeof(t), "v4.public..%s", fx->tok + 10);
    assert_int_equal(verify_s(&fx->pk, t, n, implicit), IG_ERR_INVALID);
    /* A token without a footer, given an empty footer part. */
    make_token(fx, payload, strlen(payload), "");
    assert_null(memchr(fx->tok + 10, '.', fx->len - 10));
    assert_int_equal(verify_s(&fx->pk, fx->tok, fx->len, implicit), IG_OK);
    n = (size_t)snprintf(t, sizeof(t), "%s.", fx->tok);
    assert_int_equal(verify_s(&fx->pk, t, n, implicit), IG_ERR_INVALID);
    make_token(fx, payload, strlen(payload), footer);
}

/* The base64url character with the lowest of c's 6 bits set. */
static char
low_bit_set(char c)
{
    static const char alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const char *p = strchr(alphabet, c);

    assert_non_null(p);
    return alphabet[(p - alphabet) | 1];
}

/* Set an unused low bit of the last character of a part. */
static void
test_noncanonical_base64(void **state)
{
    struct fixture *fx = *state;
    char t[TOKCAP];
    const char *dot;
    size_t blen;

    /* 57 + 64 = 121 bytes: one byte in the last group, 4 unused bits. */
    make_token(fx,
               "{\"a\":\"0123456789012345678901234567890123456789012345678\"}",
               57, "{\"kid\":\"x\"}");
    dot = memchr(fx->tok + 10, '.', fx->len - 10);
    blen = (size_t)(dot - fx->tok - 10);
    assert_int_equal((57 + 64) % 3, 1);
    assert_int_equal(blen % 4, 2);
    assert_int_equal(verify_s(&fx->pk, fx->tok, fx->len, implicit), IG_OK);
    memcpy(t, fx->tok, fx->len + 1);
    /* The last body char holds 2 real bits and 4 unused: set the lowest. */
    t[10 + blen - 1] = low_bit_set(t[10 + blen - 1]);
    assert_int_equal(verify_s(&fx->pk, t, fx->len, implicit), IG_ERR_INVALID);
    /* A byte 0x80-0xff where '_' would be. */
    memcpy(t, fx->tok, fx->len + 1);
    t[12] = (char)0xff;
    assert_int_equal(verify_s(&fx->pk, t, fx->len, implicit), IG_ERR_INVALID);
    /* Footer "{"kid":"x"}" is 11 bytes: 2 left over, 2 unused bits. */
    memcpy(t, fx->tok, fx->len + 1);
    t[fx->len - 1] = low_bit_set(t[fx->len - 1]);
    assert_int_equal(verify_s(&fx->pk, t, fx->len, implicit), IG_ERR_INVALID);
    /* Padding and whitespace. */
    memcpy(t, fx->tok, fx->len);
    memcpy(t + fx->len, "=", 2);
    assert_int_equal(verify_s(&fx->pk, t, fx->len + 1, implicit),
                     IG_ERR_INVALID);
    memcpy(t + fx->len, "\n", 2);
    assert_int_equal(verify_s(&fx->pk, t, fx->len + 1, implicit),
                     IG_ERR_INVALID);
    make_token(fx, payload, strlen(payload), footer);
}

static void
test_size_limits(void **state)
{
    struct fixture *fx = *state;
    char *big = malloc(IG_TOKEN_MAX_BYTES + 2);
    struct ig_buf out;
    size_t m;

    assert_non_null(big);
    memset(big, 'x', IG_TOKEN_MAX_BYTES + 2);
    ig_buf_init(&out, IG_TOKEN_MAX_BYTES + 100);
    /* The largest payload that fits signs and verifies; one more byte not. */
    for (m = IG_TOKEN_MAX_BYTES; m > 0; m--)
        if (ig_paseto_sign(fx->k, big, m, NULL, 0, implicit, strlen(implicit),
                           &out, NULL) == IG_OK)
            break;
    assert_true(out.len <= IG_TOKEN_MAX_BYTES &&
                out.len > IG_TOKEN_MAX_BYTES - 4);
    assert_int_equal(verify_s(&fx->pk, out.data, out.len, implicit), IG_OK);
    /* A token one byte over the cap is refused before anything else. */
    assert_int_equal(ig_buf_adds(&out, "xxxx"), IG_OK);
    assert_int_equal(
        verify_s(&fx->pk, out.data, IG_TOKEN_MAX_BYTES + 1, implicit),
        IG_ERR_INVALID);
    ig_buf_reset(&out);
    assert_int_equal(
        ig_paseto_sign(fx->k, big, m + 1, NULL, 0, NULL, 0, &out, NULL),
        IG_ERR_LIMIT);
    assert_int_equal(ig_paseto_sign(fx->k, big, 10, big, IG_TOKEN_MAX_BYTES,
                                    NULL, 0, &out, NULL),
                     IG_ERR_LIMIT);
    assert_int_equal(out.len, 0);
    ig_buf_release(&out);
    /* Output buffer too small: nothing appended. */
    ig_buf_init(&out, 20);
    assert_int_equal(ig_buf_adds(&out, "pre"), IG_OK);
    assert_int_equal(ig_paseto_sign(fx->k, payload, strlen(payload), NULL, 0,
                                    NULL, 0, &out, NULL),
                     IG_ERR_LIMIT);
    assert_string_equal(out.data, "pre");
    ig_buf_release(&out);
    free(big);
}

/* An implicit assertion too big for the stack buffer takes the heap path. */
static void
test_long_implicit(void **state)
{
    struct fixture *fx = *state;
    size_t n = 3 * IG_TOKEN_MAX_BYTES;
    char *ia = malloc(n + 1);
    struct ig_buf out, m;

    assert_non_null(ia);
    memset(ia, 'i', n);
    ia[n] = '\0';
    ig_buf_init(&out, IG_TOKEN_MAX_BYTES);
    ig_buf_init(&m, IG_TOKEN_MAX_BYTES);
    assert_int_equal(ig_paseto_sign(fx->k, payload, strlen(payload), footer,
                                    strlen(footer), ia, n, &out, NULL),
                     IG_OK);
    assert_int_equal(
        ig_paseto_verify(&fx->pk, out.data, out.len, ia, n, &m, NULL, NULL),
        IG_OK);
    assert_string_equal(m.data, payload);
    ia[n - 1] = 'j';
    assert_int_equal(verify_s(&fx->pk, out.data, out.len, ia), IG_ERR_CRYPTO);
    ig_buf_release(&out);
    ig_buf_release(&m);
    free(ia);
}

static void
test_empty_payload_and_peek(void **state)
{
    struct fixture *fx = *state;
    struct ig_buf f;

    make_token(fx, "", 0, "");
    /* v4.public. + 86 chars of signature, nothing else. */
    assert_int_equal(fx->len, 10 + 86);
    assert_int_equal(verify_s(&fx->pk, fx->tok, fx->len, implicit), IG_OK);
    ig_buf_init(&f, 100);
    assert_int_equal(ig_paseto_peek_footer(fx->tok, fx->len, &f, NULL), IG_OK);
    assert_int_equal(f.len, 0);
    make_token(fx, payload, strlen(payload), footer);
    assert_int_equal(ig_paseto_peek_footer(fx->tok, fx->len, &f, NULL), IG_OK);
    assert_string_equal(f.data, footer);
    ig_buf_reset(&f);
    assert_int_equal(ig_paseto_peek_footer("v4.public.AAAA.A", 16, &f, NULL),
                     IG_ERR_INVALID);
    assert_int_equal(ig_paseto_peek_footer("", 0, &f, NULL), IG_ERR_INVALID);
    assert_int_equal(f.len, 0);
    ig_buf_release(&f);
    assert_int_equal(verify_s(&fx->pk, "v4.public.", 10, implicit),
                     IG_ERR_INVALID);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_v4_vectors),
        cmocka_unit_test_setup_teardown(test_round_trip_and_outputs, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_tampered_body_and_footer, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_wrong_key_and_implicit, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_other_headers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_every_truncation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_extra_parts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_noncanonical_base64, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_size_limits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_long_implicit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_empty_payload_and_peek, setup,
                                        teardown),
    };

    if (ig_crypto_init() != IG_OK)
        return 1;
    return cmocka_run_group_tests(tests, NULL, NULL);
}
