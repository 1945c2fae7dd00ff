/*
 * fuzz_token.c - libFuzzer target for everything that reads a grant token
 * or a PASERK string from outside: ig_paseto_peek_footer, ig_paseto_verify,
 * ig_grant_verify and the PASERK parsers; and the unverified readers the
 * PDP's redeem uses on its own stored tokens (ig_paseto_peek_payload,
 * ig_grant_check_stored), which must agree with verify on every token
 * that verifies.
 *
 * The fixed key is the one of the PASETO v4 "4-S" vectors, so the seed
 * corpus (tests/fuzz/corpus/token/) holds tokens that really verify. Beyond
 * "never crash", it checks two properties that catch malleability: a token
 * that verifies is byte for byte the token signing its payload and footer
 * again would produce (one spelling per token), and a PASERK that parses
 * prints back as the same string. Failures leave the outputs untouched.
 */
#include <jansson.h>
#include <sodium.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ig_grant.h"
#include "ig_key.h"
#include "ig_limits.h"
#include "ig_paseto.h"

#define FUZZ_SECRET                                                            \
    "k4.secret.tMv7Q99M4hByfZU-SnEzB_oZu32fhQQUONnhG5QqN3Qeudu7vAR8A_1wYE4Ac"  \
    "fCYfhayi3VyJcEfAEFdDiCxog"
/* intent hash and audience of the grant seeds; time inside their window. */
#define FUZZ_HASH                                                              \
    "sha256:0000000000000000000000000000000000000000000000000000000000000000"
#define FUZZ_AUD "executor-a"
#define FUZZ_NOW INT64_C(1798563600)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct ig_signing_key *key;
static struct ig_public_key pub;
static struct ig_keyring *ring;

static void
init_once(void)
{
    if (key != NULL)
        return;
    if (ig_crypto_init() != IG_OK ||
        ig_signing_key_from_paserk(FUZZ_SECRET, strlen(FUZZ_SECRET), &key,
                                   NULL) != IG_OK ||
        ig_keyring_new(&ring) != IG_OK)
        abort();
    ig_signing_key_public(key, &pub);
    if (ig_keyring_add(ring, &pub) != IG_OK)
        abort();
}

/* Verify s with implicit; if it verifies, re-signing must give s back. */
static void
check_verify(const char *s, size_t size, const char *implicit)
{
    struct ig_buf m, f, again;
    size_t ilen = strlen(implicit);

    ig_buf_init(&m, IG_TOKEN_MAX_BYTES);
    ig_buf_init(&f, IG_TOKEN_MAX_BYTES);
    ig_buf_init(&again, IG_TOKEN_MAX_BYTES);
    if (ig_paseto_verify(&pub, s, size, implicit, ilen, &m, &f, NULL) ==
        IG_OK) {
        if (ig_paseto_sign(key, m.data, m.len, f.data, f.len, implicit, ilen,
                           &again, NULL) != IG_OK ||
            again.len != size || memcmp(again.data, s, size) != 0)
            abort();
    } else if (m.len != 0 || f.len != 0) {
        abort();
    }
    ig_buf_release(&m);
    ig_buf_release(&f);
    ig_buf_release(&again);
}

static void
check_paserk(const char *s, size_t size)
{
    char out[IG_PASERK_SECRET_STRLEN + 1];
    struct ig_signing_key *k = NULL;
    struct ig_public_key p;

    if (ig_public_key_from_paserk(s, size, &p, NULL) == IG_OK) {
        ig_public_key_to_paserk(&p, out, sizeof(out));
        if (size != strlen(out) || memcmp(out, s, size) != 0)
            abort();
    }
    if (ig_signing_key_from_paserk(s, size, &k, NULL) == IG_OK) {
        ig_signing_key_to_paserk(k, out, sizeof(out));
        if (size != strlen(out) || memcmp(out, s, size) != 0)
            abort();
        sodium_memzero(out, sizeof(out));
        ig_signing_key_free(k);
    } else if (k != NULL) {
        abort();
    }
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    json_t *claims = NULL, *stored = NULL;
    struct ig_buf f;
    struct ig_err err;
    enum ig_status st;

    init_once();
    ig_buf_init(&f, IG_TOKEN_MAX_BYTES);
    if (ig_paseto_peek_footer(s, size, &f, &err) != IG_OK && f.len != 0)
        abort();
    ig_buf_release(&f);
    ig_buf_init(&f, IG_TOKEN_MAX_BYTES);
    if (ig_paseto_peek_payload(s, size, &f, &err) != IG_OK && f.len != 0)
        abort();
    ig_buf_release(&f);
    check_verify(s, size, "");
    check_verify(s, size, FUZZ_HASH);
    st = ig_grant_verify(ring, s, size, FUZZ_HASH, FUZZ_AUD, FUZZ_NOW, &claims,
                         &err);
    if ((st == IG_OK) != (claims != NULL))
        abort();
    /* What verifies passes the stored-token check with the same claims. */
    if (ig_grant_check_stored(ring, s, size, FUZZ_HASH, FUZZ_AUD, FUZZ_NOW,
                              &stored, &err) == IG_OK) {
        if (stored == NULL)
            abort();
    } else if (st == IG_OK || stored != NULL) {
        abort();
    }
    if (st == IG_OK && !json_equal(claims, stored))
        abort();
    json_decref(claims);
    json_decref(stored);
    check_paserk(s, size);
    return 0;
}
