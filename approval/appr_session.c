/*
 * appr_session.c - session ids and CSRF tokens: random bytes in
 * base64url, and the SHA-256 an id is stored as (store.h keeps the
 * sessions). (Failed sign-ins: the store's store_login_*.)
 */
#include "appr_session.h"

#include <sodium.h>
#include <string.h>

#include "ig_b64.h"
#include "ig_hash.h"

static void
random_text(char *out, size_t cap)
{
    unsigned char raw[32];
    size_t n;

    randombytes_buf(raw, sizeof(raw));
    n = ig_b64_encode(raw, sizeof(raw), out, cap);
    out[n] = '\0';
    sodium_memzero(raw, sizeof(raw));
}

void
appr_session_new(char id[APPR_SESSION_ID_LEN + 1], char csrf[APPR_CSRF_LEN + 1],
                 unsigned char hash[APPR_SESSION_HASH_BYTES])
{
    memcpy(id, "igs_", 4);
    random_text(id + 4, APPR_SESSION_ID_LEN - 4 + 1);
    random_text(csrf, APPR_CSRF_LEN + 1);
    ig_sha256(id, APPR_SESSION_ID_LEN, hash);
}

int
appr_session_hash(const char *id, unsigned char hash[APPR_SESSION_HASH_BYTES])
{
    if (id == NULL || strlen(id) != APPR_SESSION_ID_LEN ||
        strncmp(id, "igs_", 4) != 0)
        return -1;
    ig_sha256(id, APPR_SESSION_ID_LEN, hash);
    return 0;
}
