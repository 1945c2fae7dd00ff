/*
 * fuzz_verify.c - libFuzzer target for the executor's handling of an
 * untrusted POST /v1/execute body: strict JSON, then the offline grant
 * checks (unverified peek at the claims, kid lookup, signature). Nothing
 * may crash, and nothing may be accepted: the keyring holds a key whose
 * secret the fuzzer never has.
 */
#include <stdlib.h>
#include <string.h>

#include "exec_verify.h"
#include "ig_json.h"

static struct ig_keyring *ring;

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    char hash[IG_HASH_STRLEN + 1];
    struct ig_signing_key *k = NULL;
    struct ig_public_key pub;
    json_t *body = NULL, *claims = NULL;
    enum exec_refusal r;

    if (ring == NULL) {
        if (ig_crypto_init() != IG_OK || ig_keyring_new(&ring) != IG_OK ||
            ig_signing_key_generate(&k) != IG_OK)
            abort();
        ig_signing_key_public(k, &pub);
        ig_signing_key_free(k); /* nobody can sign for it now */
        if (ig_keyring_add(ring, &pub) != IG_OK)
            abort();
    }
    if (ig_json_parse((const char *)data, size, &body, NULL) != IG_OK)
        return 0;
    r = exec_verify_grant(ring, json_object_get(body, "intent"),
                          json_string_value(json_object_get(body, "grant")),
                          "ex-1", 1800000000, &claims, hash, NULL);
    if (r == EXEC_ACCEPT || claims != NULL)
        abort();
    json_decref(body);
    return 0;
}
