/*
 * audit_util.c - helpers for the audit unit tests (see audit_util.h).
 */
#include "testutil.h"

#include "audit_util.h"

#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "ig_b64.h"

json_t *
au_load_json(const char *relpath)
{
    json_error_t e;
    size_t len;
    char *text = tu_read_vector(relpath, &len);
    json_t *doc = json_loadb(text, len, 0, &e);

    if (doc == NULL)
        fail_msg("%s: %s", relpath, e.text);
    free(text);
    return doc;
}

struct ig_signing_key *
au_key_from_seed(const unsigned char seed[32])
{
    unsigned char pk[crypto_sign_PUBLICKEYBYTES],
        sk[crypto_sign_SECRETKEYBYTES];
    char paserk[IG_PASERK_SECRET_STRLEN + 1];
    struct ig_signing_key *k = NULL;
    size_t n;

    assert_int_equal(crypto_sign_seed_keypair(pk, sk, seed), 0);
    memcpy(paserk, "k4.secret.", 10);
    n = 10 + ig_b64_encode(sk, sizeof(sk), paserk + 10, sizeof(paserk) - 10);
    assert_int_equal(ig_signing_key_from_paserk(paserk, n, &k, NULL), IG_OK);
    sodium_memzero(sk, sizeof(sk));
    sodium_memzero(paserk, sizeof(paserk));
    return k;
}

struct ig_signing_key *
au_key_new(void)
{
    struct ig_signing_key *k = NULL;

    assert_int_equal(ig_signing_key_generate(&k), IG_OK);
    return k;
}

void
au_verifier(const struct ig_signing_key *k, const char *name,
            struct audit_verifier *v)
{
    struct ig_public_key pub;

    ig_signing_key_public(k, &pub);
    assert_int_equal(audit_verifier_init(v, name, pub.pk), IG_OK);
}

char *
au_sign_text(const struct ig_signing_key *k, const char *name, const char *text,
             size_t *len)
{
    struct ig_buf b;
    char *out;

    ig_buf_init(&b, AUDIT_NOTE_MAX);
    assert_int_equal(audit_note_sign(text, strlen(text), name, k, &b), IG_OK);
    out = ig_buf_take(&b, len);
    assert_non_null(out);
    return out;
}

char *
au_sign_checkpoint(const struct ig_signing_key *k, const char *name,
                   const char *origin, uint64_t size,
                   const unsigned char root[32], size_t *len)
{
    struct ig_buf t;
    char *out;

    ig_buf_init(&t, AUDIT_NOTE_MAX);
    assert_int_equal(audit_checkpoint_text(origin, size, root, &t), IG_OK);
    out = au_sign_text(k, name, t.data, len);
    ig_buf_release(&t);
    return out;
}
