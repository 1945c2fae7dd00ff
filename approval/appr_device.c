/*
 * appr_device.c - device tokens (the layout is in appr_device.h): issue
 * and check, with libsodium's HMAC-SHA256 and strict base64url.
 */
#include "appr_device.h"

#include <sodium.h>
#include <string.h>

#include "ig_b64.h"

#define EXP_BYTES 8
#define NONCE_BYTES 16
#define MAC_BYTES crypto_auth_hmacsha256_BYTES
#define BODY_BYTES (EXP_BYTES + NONCE_BYTES + MAC_BYTES)
#define DOMAIN "intentgate-device-v1"

/* The MAC of body's expiry and nonce for approver. */
static void
mac_of(const unsigned char key[APPR_DEVICE_KEY_BYTES],
       const unsigned char body[EXP_BYTES + NONCE_BYTES], const char *approver,
       unsigned char mac[MAC_BYTES])
{
    crypto_auth_hmacsha256_state st;

    crypto_auth_hmacsha256_init(&st, key, APPR_DEVICE_KEY_BYTES);
    crypto_auth_hmacsha256_update(&st, (const unsigned char *)DOMAIN,
                                  sizeof(DOMAIN)); /* with its NUL */
    crypto_auth_hmacsha256_update(&st, body, EXP_BYTES + NONCE_BYTES);
    crypto_auth_hmacsha256_update(&st, (const unsigned char *)approver,
                                  strlen(approver));
    crypto_auth_hmacsha256_final(&st, mac);
    sodium_memzero(&st, sizeof(st));
}

void
appr_device_issue(const unsigned char key[APPR_DEVICE_KEY_BYTES],
                  const char *approver, int64_t now, int64_t ttl,
                  char out[APPR_DEVICE_LEN + 1])
{
    unsigned char body[BODY_BYTES];
    uint64_t exp = (uint64_t)(now + ttl);
    int i;

    for (i = 0; i < EXP_BYTES; i++)
        body[i] = (unsigned char)(exp >> (8 * (EXP_BYTES - 1 - i)));
    randombytes_buf(body + EXP_BYTES, NONCE_BYTES);
    mac_of(key, body, approver, body + EXP_BYTES + NONCE_BYTES);
    memcpy(out, "igd_", 4);
    (void)ig_b64_encode(body, sizeof(body), out + 4, APPR_DEVICE_LEN - 4 + 1);
}

int
appr_device_check(const unsigned char key[APPR_DEVICE_KEY_BYTES],
                  const char *token, const char *approver, int64_t now,
                  char id[APPR_DEVICE_ID_LEN + 1])
{
    unsigned char body[BODY_BYTES], mac[MAC_BYTES];
    uint64_t exp = 0;
    size_t n = 0;
    int i, ok;

    if (token == NULL || strlen(token) != APPR_DEVICE_LEN ||
        strncmp(token, "igd_", 4) != 0 ||
        ig_b64_decode(token + 4, APPR_DEVICE_LEN - 4, body, sizeof(body), &n) !=
            IG_OK ||
        n != sizeof(body))
        return 0;
    for (i = 0; i < EXP_BYTES; i++)
        exp = exp << 8 | body[i];
    mac_of(key, body, approver, mac);
    ok = sodium_memcmp(mac, body + EXP_BYTES + NONCE_BYTES, MAC_BYTES) == 0 &&
         now >= 0 && (uint64_t)now < exp;
    if (ok)
        sodium_bin2hex(id, APPR_DEVICE_ID_LEN + 1, body + EXP_BYTES,
                       NONCE_BYTES);
    return ok;
}
