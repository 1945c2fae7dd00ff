/*
 * test_grant.c - grants end to end: a signed grant verifies and returns its
 * claims; it fails for an unknown key, another audience, another intent,
 * at or after its expiry and before nbf; key rotation through a keyring;
 * and hand-made tokens, signed with the right key but with a footer or
 * payload of the wrong shape, are refused.
 */
#include "testutil.h"

#include <jansson.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ig_canon.h"
#include "ig_grant.h"
#include "ig_hash.h"
#include "ig_limits.h"
#include "ig_paseto.h"
#include "ig_time.h"

#define T0 INT64_C(1798563600) /* 2026-12-29T17:00:00Z */

struct fixture {
    struct ig_signing_key *k;
    struct ig_public_key pk;
    struct ig_keyring *kr;
    char hash[IG_HASH_STRLEN + 1];
    char other_hash[IG_HASH_STRLEN + 1];
    struct ig_grant_claims c;
    struct ig_buf tok;
};

static int
setup(void **state)
{
    struct fixture *fx = calloc(1, sizeof(*fx));

    if (fx == NULL || ig_signing_key_generate(&fx->k) != IG_OK ||
        ig_keyring_new(&fx->kr) != IG_OK)
        return -1;
    ig_signing_key_public(fx->k, &fx->pk);
    if (ig_keyring_add(fx->kr, &fx->pk) != IG_OK)
        return -1;
    ig_hash_bytes("intent", 6, fx->hash);
    ig_hash_bytes("other", 5, fx->other_hash);
    fx->c.iss = "pdp-1";
    fx->c.aud = "executor-a";
    fx->c.sub = "agent:alice";
    fx->c.jti = "6f1c1d2e-3b4a-4c5d-8e6f-7a8b9c0d1e2f";
    fx->c.intent_id = "intent-42";
    fx->c.intent_hash = fx->hash;
    fx->c.action = "http.post";
    fx->c.resource = "https://api.example.com/pay";
    fx->c.decision_id = "decision-7";
    fx->c.policy_revision = "rev-3";
    fx->c.iat = T0;
    fx->c.nbf = T0;
    fx->c.exp = T0 + 60;
    ig_buf_init(&fx->tok, IG_TOKEN_MAX_BYTES);
    if (ig_grant_sign(fx->k, &fx->c, &fx->tok, NULL) != IG_OK)
        return -1;
    *state = fx;
    return 0;
}

static int
teardown(void **state)
{
    struct fixture *fx = *state;

    ig_signing_key_free(fx->k);
    ig_keyring_free(fx->kr);
    ig_buf_release(&fx->tok);
    free(fx);
    return 0;
}

static enum ig_status
verify_at(const struct fixture *fx, const struct ig_keyring *kr,
          const char *tok, size_t len, const char *hash, const char *aud,
          int64_t now)
{
    json_t *claims = (json_t *)1;
    enum ig_status st;
    struct ig_err err;

    st = ig_grant_verify(kr, tok, len, hash, aud, now, &claims, &err);
    (void)fx;
    if (st != IG_OK)
        assert_null(claims);
    json_decref(claims);
    return st;
}

static enum ig_status
verify_fx(const struct fixture *fx, int64_t now)
{
    return verify_at(fx, fx->kr, fx->tok.data, fx->tok.len, fx->hash, fx->c.aud,
                     now);
}

static void
assert_claim(json_t *claims, const char *key, const char *want)
{
    const char *got = json_string_value(json_object_get(claims, key));

    assert_non_null(got);
    assert_string_equal(got, want);
}

static void
test_round_trip(void **state)
{
    struct fixture *fx = *state;
    json_t *claims = NULL;
    struct ig_buf m, f;
    struct ig_err err;
    char want[128];

    assert_int_equal(ig_grant_verify(fx->kr, fx->tok.data, fx->tok.len,
                                     fx->hash, "executor-a", T0, &claims, &err),
                     IG_OK);
    assert_int_equal(json_object_size(claims), 13);
    assert_claim(claims, "iss", "pdp-1");
    assert_claim(claims, "aud", "executor-a");
    assert_claim(claims, "sub", "agent:alice");
    assert_claim(claims, "jti", fx->c.jti);
    assert_claim(claims, "intent_id", "intent-42");
    assert_claim(claims, "intent_hash", fx->hash);
    assert_claim(claims, "action", "http.post");
    assert_claim(claims, "resource", "https://api.example.com/pay");
    assert_claim(claims, "decision_id", "decision-7");
    assert_claim(claims, "policy_revision", "rev-3");
    assert_claim(claims, "iat", "2026-12-29T17:00:00Z");
    assert_claim(claims, "nbf", "2026-12-29T17:00:00Z");
    assert_claim(claims, "exp", "2026-12-29T17:01:00Z");
    json_decref(claims);
    /* Payload canonical (sorted, no spaces); footer the literal kid. */
    ig_buf_init(&m, IG_TOKEN_MAX_BYTES);
    ig_buf_init(&f, IG_TOKEN_MAX_BYTES);
    assert_int_equal(ig_paseto_verify(&fx->pk, fx->tok.data, fx->tok.len,
                                      fx->hash, strlen(fx->hash), &m, &f, NULL),
                     IG_OK);
    assert_int_equal(strncmp(m.data, "{\"action\":\"http.post\",\"aud\":", 28),
                     0);
    assert_null(strchr(m.data, ' '));
    (void)snprintf(want, sizeof(want), "{\"kid\":\"%s\"}", fx->pk.kid);
    assert_string_equal(f.data, want);
    ig_buf_release(&m);
    ig_buf_release(&f);
    /* claims_out may be NULL. */
    assert_int_equal(ig_grant_verify(fx->kr, fx->tok.data, fx->tok.len,
                                     fx->hash, "executor-a", T0 + 59, NULL,
                                     NULL),
                     IG_OK);
}

static void
test_unknown_kid(void **state)
{
    struct fixture *fx = *state;
    struct ig_keyring *empty;
    struct ig_signing_key *other;
    struct ig_public_key opk;

    assert_int_equal(ig_keyring_new(&empty), IG_OK);
    assert_int_equal(verify_at(fx, empty, fx->tok.data, fx->tok.len, fx->hash,
                               fx->c.aud, T0),
                     IG_ERR_NOTFOUND);
    assert_int_equal(ig_signing_key_generate(&other), IG_OK);
    ig_signing_key_public(other, &opk);
    assert_int_equal(ig_keyring_add(empty, &opk), IG_OK);
    assert_int_equal(verify_at(fx, empty, fx->tok.data, fx->tok.len, fx->hash,
                               fx->c.aud, T0),
                     IG_ERR_NOTFOUND);
    ig_signing_key_free(other);
    ig_keyring_free(empty);
}

static void
test_wrong_aud_and_intent(void **state)
{
    struct fixture *fx = *state;

    assert_int_equal(verify_at(fx, fx->kr, fx->tok.data, fx->tok.len, fx->hash,
                               "executor-b", T0),
                     IG_ERR_CRYPTO);
    assert_int_equal(verify_at(fx, fx->kr, fx->tok.data, fx->tok.len, fx->hash,
                               "executor-", T0),
                     IG_ERR_CRYPTO);
    assert_int_equal(verify_at(fx, fx->kr, fx->tok.data, fx->tok.len,
                               fx->other_hash, fx->c.aud, T0),
                     IG_ERR_CRYPTO);
    assert_int_equal(verify_at(fx, fx->kr, fx->tok.data, fx->tok.len,
                               "sha256:abc", fx->c.aud, T0),
                     IG_ERR_INVALID);
    assert_int_equal(
        verify_at(fx, fx->kr, fx->tok.data, fx->tok.len, fx->hash, "", T0),
        IG_ERR_INVALID);
}

static void
test_validity_window(void **state)
{
    struct fixture *fx = *state;
    struct ig_err err;

    assert_int_equal(verify_fx(fx, T0), IG_OK);
    assert_int_equal(verify_fx(fx, T0 + 59), IG_OK);
    assert_int_equal(verify_fx(fx, T0 + 60), IG_ERR_EXPIRED);
    assert_int_equal(verify_fx(fx, T0 + 3600), IG_ERR_EXPIRED);
    assert_int_equal(verify_fx(fx, T0 - 1), IG_ERR_INVALID);
    assert_int_equal(ig_grant_verify(fx->kr, fx->tok.data, fx->tok.len,
                                     fx->hash, fx->c.aud, T0 - 1, NULL, &err),
                     IG_ERR_INVALID);
    assert_non_null(strstr(err.msg, "not yet valid"));
}

static void
test_tampered_token(void **state)
{
    struct fixture *fx = *state;
    char *t = malloc(fx->tok.len + 1);
    size_t i;

    assert_non_null(t);
    for (i = 0; i < fx->tok.len; i++) {
        memcpy(t, fx->tok.data, fx->tok.len + 1);
        t[i] = t[i] == 'A' ? 'B' : 'A';
        if (verify_at(fx, fx->kr, t, fx->tok.len, fx->hash, fx->c.aud, T0) ==
            IG_OK)
            fail_msg("grant with char %zu changed verified", i);
    }
    for (i = 0; i < fx->tok.len; i++)
        assert_int_not_equal(
            verify_at(fx, fx->kr, fx->tok.data, i, fx->hash, fx->c.aud, T0),
            IG_OK);
    free(t);
}

static void
test_rotation(void **state)
{
    struct fixture *fx = *state;
    struct ig_signing_key *next;
    struct ig_public_key npk;
    struct ig_keyring *only_new;
    struct ig_buf tok2;

    assert_int_equal(ig_signing_key_generate(&next), IG_OK);
    ig_signing_key_public(next, &npk);
    assert_int_equal(ig_keyring_add(fx->kr, &npk), IG_OK);
    ig_buf_init(&tok2, IG_TOKEN_MAX_BYTES);
    assert_int_equal(ig_grant_sign(next, &fx->c, &tok2, NULL), IG_OK);
    assert_int_equal(verify_fx(fx, T0), IG_OK);
    assert_int_equal(
        verify_at(fx, fx->kr, tok2.data, tok2.len, fx->hash, fx->c.aud, T0),
        IG_OK);
    /* Once the old key is retired, its grants no longer verify. */
    assert_int_equal(ig_keyring_new(&only_new), IG_OK);
    assert_int_equal(ig_keyring_add(only_new, &npk), IG_OK);
    assert_int_equal(
        verify_at(fx, only_new, tok2.data, tok2.len, fx->hash, fx->c.aud, T0),
        IG_OK);
    assert_int_equal(verify_at(fx, only_new, fx->tok.data, fx->tok.len,
                               fx->hash, fx->c.aud, T0),
                     IG_ERR_NOTFOUND);
    ig_keyring_free(only_new);
    ig_buf_release(&tok2);
    ig_signing_key_free(next);
}

/* The claims of fx as a JSON object, for hand-made payloads. */
static json_t *
claims_json(const struct fixture *fx)
{
    char iat[IG_TIME_STRLEN + 1], nbf[IG_TIME_STRLEN + 1];
    char exp[IG_TIME_STRLEN + 1];
    const struct ig_grant_claims *c = &fx->c;
    json_t *o;

    assert_int_equal(ig_time_format(c->iat, iat), IG_OK);
    assert_int_equal(ig_time_format(c->nbf, nbf), IG_OK);
    assert_int_equal(ig_time_format(c->exp, exp), IG_OK);
    o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s,"
                  " s:s, s:s}",
                  "iss", c->iss, "aud", c->aud, "sub", c->sub, "jti", c->jti,
                  "iat", iat, "nbf", nbf, "exp", exp, "intent_id", c->intent_id,
                  "intent_hash", c->intent_hash, "action", c->action,
                  "resource", c->resource, "decision_id", c->decision_id,
                  "policy_revision", c->policy_revision);
    assert_non_null(o);
    return o;
}

/* Sign payload text and footer text with fx's key and intent hash. */
static enum ig_status
sign_and_verify(const struct fixture *fx, const char *payload,
                const char *footer)
{
    struct ig_buf tok;
    enum ig_status st;

    ig_buf_init(&tok, IG_TOKEN_MAX_BYTES);
    assert_int_equal(ig_paseto_sign(fx->k, payload, strlen(payload), footer,
                                    strlen(footer), fx->hash, strlen(fx->hash),
                                    &tok, NULL),
                     IG_OK);
    st = verify_at(fx, fx->kr, tok.data, tok.len, fx->hash, fx->c.aud, T0);
    ig_buf_release(&tok);
    return st;
}

/* Sign the canonical form of o (reference taken) with the right footer. */
static enum ig_status
sign_json_and_verify(const struct fixture *fx, json_t *o)
{
    struct ig_buf p;
    char footer[128];
    enum ig_status st;

    ig_buf_init(&p, IG_TOKEN_MAX_BYTES);
    assert_int_equal(ig_canon_write(o, &p, NULL), IG_OK);
    json_decref(o);
    (void)snprintf(footer, sizeof(footer), "{\"kid\":\"%s\"}", fx->pk.kid);
    st = sign_and_verify(fx, p.data, footer);
    ig_buf_release(&p);
    return st;
}

static void
test_footer_shapes(void **state)
{
    struct fixture *fx = *state;
    struct ig_buf p;
    char f[256];
    const char *kid = fx->pk.kid;
    json_t *o = claims_json(fx);

    ig_buf_init(&p, IG_TOKEN_MAX_BYTES);
    assert_int_equal(ig_canon_write(o, &p, NULL), IG_OK);
    json_decref(o);
    (void)snprintf(f, sizeof(f), "{\"kid\":\"%s\"}", kid);
    assert_int_equal(sign_and_verify(fx, p.data, f), IG_OK);
    /* Whitespace is fine for a strict parser, and is signed anyway. */
    (void)snprintf(f, sizeof(f), "{ \"kid\" : \"%s\" }", kid);
    assert_int_equal(sign_and_verify(fx, p.data, f), IG_OK);
    (void)snprintf(f, sizeof(f), "{\"kid\":\"%s\",\"x\":1}", kid);
    assert_int_equal(sign_and_verify(fx, p.data, f), IG_ERR_INVALID);
    (void)snprintf(f, sizeof(f), "{\"kid\":\"%s\",\"kid\":\"%s\"}", kid, kid);
    assert_int_equal(sign_and_verify(fx, p.data, f), IG_ERR_INVALID);
    (void)snprintf(f, sizeof(f), "[\"%s\"]", kid);
    assert_int_equal(sign_and_verify(fx, p.data, f), IG_ERR_INVALID);
    (void)snprintf(f, sizeof(f), "{\"kid\":\"%s\"", kid);
    assert_int_equal(sign_and_verify(fx, p.data, f), IG_ERR_INVALID);
    assert_int_equal(sign_and_verify(fx, p.data, "{\"kid\":1}"),
                     IG_ERR_INVALID);
    assert_int_equal(sign_and_verify(fx, p.data, "{\"KID\":\"x\"}"),
                     IG_ERR_INVALID);
    assert_int_equal(sign_and_verify(fx, p.data, "{\"kid\":\"k4.pid.x\"}"),
                     IG_ERR_NOTFOUND);
    assert_int_equal(sign_and_verify(fx, p.data, ""), IG_ERR_INVALID);
    ig_buf_release(&p);
}

static void
test_payload_shapes(void **state)
{
    struct fixture *fx = *state;
    json_t *o;
    char f[128];

    assert_int_equal(sign_json_and_verify(fx, claims_json(fx)), IG_OK);
    o = claims_json(fx);
    assert_int_equal(json_object_del(o, "decision_id"), 0);
    assert_int_equal(sign_json_and_verify(fx, o), IG_ERR_INVALID);
    o = claims_json(fx);
    /* Reference-stealing: the new string belongs to o. */
    assert_int_equal(json_object_set_new(o, "extra", json_string("x")), 0);
    assert_int_equal(sign_json_and_verify(fx, o), IG_ERR_INVALID);
    o = claims_json(fx);
    assert_int_equal(json_object_del(o, "jti"), 0);
    assert_int_equal(json_object_set_new(o, "JTI", json_string("x")), 0);
    assert_int_equal(sign_json_and_verify(fx, o), IG_ERR_INVALID);
    o = claims_json(fx);
    assert_int_equal(json_object_set_new(o, "sub", json_real(1)), 0);
    assert_int_equal(sign_json_and_verify(fx, o), IG_ERR_INVALID);
    o = claims_json(fx);
    assert_int_equal(json_object_set_new(o, "action", json_null()), 0);
    assert_int_equal(sign_json_and_verify(fx, o), IG_ERR_INVALID);
    o = claims_json(fx);
    assert_int_equal(
        json_object_set_new(o, "exp", json_string("2026-12-29T17:01:00+00:00")),
        0);
    assert_int_equal(sign_json_and_verify(fx, o), IG_ERR_INVALID);
    o = claims_json(fx);
    assert_int_equal(
        json_object_set_new(o, "nbf", json_string("2026-12-29T17:00:00.0Z")),
        0);
    assert_int_equal(sign_json_and_verify(fx, o), IG_ERR_INVALID);
    /* Signed for this intent (implicit) but naming another in the claim. */
    o = claims_json(fx);
    assert_int_equal(
        json_object_set_new(o, "intent_hash", json_string(fx->other_hash)), 0);
    assert_int_equal(sign_json_and_verify(fx, o), IG_ERR_CRYPTO);
    /* Not an object, not JSON, duplicate claim. */
    (void)snprintf(f, sizeof(f), "{\"kid\":\"%s\"}", fx->pk.kid);
    assert_int_equal(sign_and_verify(fx, "[]", f), IG_ERR_INVALID);
    assert_int_equal(sign_and_verify(fx, "\"iss\"", f), IG_ERR_INVALID);
    assert_int_equal(sign_and_verify(fx, "{", f), IG_ERR_INVALID);
    assert_int_equal(sign_and_verify(fx, "", f), IG_ERR_INVALID);
    assert_int_equal(sign_and_verify(fx, "{\"aud\":\"a\",\"aud\":\"a\"}", f),
                     IG_ERR_INVALID);
}

static void
test_sign_refusals(void **state)
{
    struct fixture *fx = *state;
    struct ig_grant_claims c = fx->c;
    struct ig_buf out;
    struct ig_err err;

    ig_buf_init(&out, IG_TOKEN_MAX_BYTES);
    c.sub = NULL;
    assert_int_equal(ig_grant_sign(fx->k, &c, &out, &err), IG_ERR_INVALID);
    assert_non_null(strstr(err.msg, "sub"));
    c = fx->c;
    c.policy_revision = "";
    assert_int_equal(ig_grant_sign(fx->k, &c, &out, &err), IG_ERR_INVALID);
    c = fx->c;
    c.intent_hash = "sha256:ABC";
    assert_int_equal(ig_grant_sign(fx->k, &c, &out, &err), IG_ERR_INVALID);
    c = fx->c;
    c.exp = c.nbf;
    assert_int_equal(ig_grant_sign(fx->k, &c, &out, &err), IG_ERR_INVALID);
    c = fx->c;
    c.exp = INT64_MAX;
    assert_int_equal(ig_grant_sign(fx->k, &c, &out, &err), IG_ERR_INVALID);
    c = fx->c;
    c.resource = "\xff\xfe";
    assert_int_equal(ig_grant_sign(fx->k, &c, &out, &err), IG_ERR_INVALID);
    assert_int_equal(out.len, 0);
    ig_buf_release(&out);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unknown_kid, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wrong_aud_and_intent, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_validity_window, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tampered_token, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rotation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_footer_shapes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_payload_shapes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sign_refusals, setup, teardown),
    };

    if (ig_crypto_init() != IG_OK)
        return 1;
    return cmocka_run_group_tests(tests, NULL, NULL);
}
