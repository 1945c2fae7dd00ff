/*
 * test_verify.c - the executor's offline grant checks: one accepted grant,
 * and every refusal with its stable code (signify-style: a tampered,
 * foreign, misdirected, expired grant, or a changed intent, must fail).
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "exec_verify.h"
#include "ig_grant.h"
#include "ig_json.h"

#define NOW 1800000000

static struct ig_signing_key *key;
static struct ig_keyring *ring, *empty_ring;

static int
setup(void **state)
{
    struct ig_public_key pub;
    (void)state;

    assert_int_equal(ig_crypto_init(), IG_OK);
    assert_int_equal(ig_signing_key_generate(&key), IG_OK);
    ig_signing_key_public(key, &pub);
    assert_int_equal(ig_keyring_new(&ring), IG_OK);
    assert_int_equal(ig_keyring_add(ring, &pub), IG_OK);
    assert_int_equal(ig_keyring_new(&empty_ring), IG_OK);
    return 0;
}

static int
teardown(void **state)
{
    (void)state;
    ig_signing_key_free(key);
    ig_keyring_free(ring);
    ig_keyring_free(empty_ring);
    return 0;
}

static json_t *
intent(double amount)
{
    static const char text[] =
        "{\"version\":\"intentgate.intent/1\","
        "\"intent_id\":\"4b0c6b9e-2f7a-4c1e-9d3a-8f2e5a1c7b60\","
        "\"principal\":\"a\",\"tenant\":\"t\",\"action\":\"payments.refund\","
        "\"resource\":\"orders/1\",\"params\":{\"amount\":42},"
        "\"context\":{},\"created_at\":\"2027-01-15T08:00:00Z\","
        "\"expires_at\":\"2027-01-15T08:01:00Z\"}";
    json_t *v = NULL;

    assert_int_equal(ig_json_parse(text, strlen(text), &v, NULL), IG_OK);
    json_object_set_new(json_object_get(v, "params"), "amount",
                        json_real(amount));
    return v;
}

/* A grant for intent i (hash computed here) with audience aud. */
static char *
grant_for(const json_t *i, const char *aud, int64_t nbf, int64_t exp)
{
    char hash[IG_HASH_STRLEN + 1];
    struct ig_grant_claims c;
    struct ig_buf out;

    assert_int_equal(ig_hash_json(i, hash, NULL), IG_OK);
    memset(&c, 0, sizeof(c));
    c.iss = "pdp";
    c.aud = aud;
    c.sub = "a";
    c.jti = "0d7e3c52-6f0b-4b8e-9a51-2c4f6d8e1a3b";
    c.intent_id = json_string_value(json_object_get(i, "intent_id"));
    c.intent_hash = hash;
    c.action = "payments.refund";
    c.resource = "orders/1";
    c.decision_id = "d";
    c.policy_revision = "sha256:00";
    c.iat = nbf;
    c.nbf = nbf;
    c.exp = exp;
    ig_buf_init(&out, 8192);
    assert_int_equal(ig_grant_sign(key, &c, &out, NULL), IG_OK);
    return ig_buf_take(&out, NULL);
}

static enum exec_refusal
check(const struct ig_keyring *kr, const json_t *i, const char *g, int64_t now)
{
    char hash[IG_HASH_STRLEN + 1];
    json_t *claims = NULL;
    struct ig_err err;
    enum exec_refusal r;

    r = exec_verify_grant(kr, i, g, "ex-1", now, &claims, hash, &err);
    if (r == EXEC_ACCEPT) {
        assert_non_null(claims);
        assert_string_equal(json_string_value(json_object_get(claims, "aud")),
                            "ex-1");
    } else {
        assert_null(claims);
        assert_true(err.msg[0] != '\0');
    }
    json_decref(claims);
    return r;
}

static void
test_accept_and_every_refusal(void **state)
{
    json_t *i = intent(42), *changed = intent(43), *arr = json_array();
    char *g = grant_for(i, "ex-1", NOW, NOW + 30);
    char *other = grant_for(i, "ex-2", NOW, NOW + 30);
    size_t n = strlen(g);
    (void)state;

    assert_int_equal(check(ring, i, g, NOW + 1), EXEC_ACCEPT);
    assert_int_equal(check(ring, i, NULL, NOW), EXEC_REFUSE_NO_GRANT);
    assert_int_equal(check(ring, i, "", NOW), EXEC_REFUSE_NO_GRANT);
    assert_int_equal(check(ring, i, "v4.local.AAAA", NOW),
                     EXEC_REFUSE_GRANT_MALFORMED);
    assert_int_equal(check(ring, i, "garbage", NOW),
                     EXEC_REFUSE_GRANT_MALFORMED);
    assert_int_equal(check(ring, arr, g, NOW), EXEC_REFUSE_INTENT_INVALID);
    assert_int_equal(check(ring, changed, g, NOW), EXEC_REFUSE_INTENT_CHANGED);
    assert_int_equal(check(empty_ring, i, g, NOW), EXEC_REFUSE_UNKNOWN_KID);
    assert_int_equal(check(ring, i, other, NOW), EXEC_REFUSE_WRONG_AUDIENCE);
    assert_int_equal(check(ring, i, g, NOW + 30), EXEC_REFUSE_GRANT_EXPIRED);
    assert_int_equal(check(ring, i, g, NOW - 5),
                     EXEC_REFUSE_GRANT_NOT_YET_VALID);
    /* A flipped signature byte (inside the body, before the footer). */
    {
        char *dot = strrchr(g, '.');
        size_t at = (size_t)(dot - g) - 3;
        g[at] = g[at] == 'A' ? 'B' : 'A';
        assert_int_equal(check(ring, i, g, NOW), EXEC_REFUSE_BAD_SIGNATURE);
    }
    assert_true(n > 0);
    assert_string_equal(exec_refusal_code(EXEC_REFUSE_WRONG_AUDIENCE),
                        "WRONG_AUDIENCE");
    assert_string_equal(exec_refusal_code((enum exec_refusal)99), "INTERNAL");
    free(g);
    free(other);
    json_decref(i);
    json_decref(changed);
    json_decref(arr);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_accept_and_every_refusal),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
