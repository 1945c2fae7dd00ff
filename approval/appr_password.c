/*
 * appr_password.c - argon2id through libsodium's crypto_pwhash_str.
 */
#include "appr_password.h"

#include <sodium.h>
#include <string.h>

int
appr_password_hash(const char *password, size_t len, char *out)
{
    if (len < APPR_PASSWORD_MIN || len > APPR_PASSWORD_MAX)
        return -1;
    return crypto_pwhash_str_alg(out, password, (unsigned long long)len,
                                 crypto_pwhash_OPSLIMIT_INTERACTIVE,
                                 crypto_pwhash_MEMLIMIT_INTERACTIVE,
                                 crypto_pwhash_ALG_ARGON2ID13) == 0
               ? 0
               : -1;
}

int
appr_password_hash_valid(const char *hash)
{
    size_t n = strnlen(hash, APPR_HASH_MAX);

    return n > 10 && n < APPR_HASH_MAX &&
           strncmp(hash, "$argon2id$v=19$m=", 17) == 0;
}

int
appr_password_verify(const char *hash, const char *password, size_t len)
{
    if (!appr_password_hash_valid(hash) || len > APPR_PASSWORD_MAX)
        return 0;
    return crypto_pwhash_str_verify(hash, password, (unsigned long long)len) ==
           0;
}
