/*
 * ig_b64.c - strict unpadded base64url for PASETO and PASERK.
 *
 * A thin wrapper over libsodium's URL-safe, no-padding variant. libsodium
 * 1.0.18 already refuses characters outside the alphabet (so '=', '+', '/'
 * and whitespace, since no ignore set is passed), a dangling character
 * (len % 4 == 1) and non-zero unused bits in the last character; this file
 * adds the check that decoding stopped at the end of the input rather than
 * at the first bad character, and turns the result into an ig_status.
 * tests/unit/test_b64.c pins each of those refusals.
 */
#include "ig_b64.h"

#include <sodium.h>
#include <stdint.h>

size_t
ig_b64_encode(const void *in, size_t n, char *out, size_t outcap)
{
    size_t need = IG_B64_ENCODED_LEN(n);

    IG_ASSERT(n <= (SIZE_MAX - 1) / 4 * 3);
    IG_ASSERT(out != NULL && outcap > need);
    (void)sodium_bin2base64(out, outcap, (const unsigned char *)in, n,
                            sodium_base64_VARIANT_URLSAFE_NO_PADDING);
    return need;
}

enum ig_status
ig_b64_decode(const char *s, size_t len, unsigned char *out, size_t outcap,
              size_t *outlen)
{
    const char *end = NULL;
    size_t n = 0;

    *outlen = 0;
    if (len == 0)
        return IG_OK;
    if (len % 4 == 1)
        return IG_ERR_INVALID;
    /* Exact decoded size is known up front: refuse a short buffer here. */
    if ((len / 4) * 3 + (len % 4 ? len % 4 - 1 : 0) > outcap)
        return IG_ERR_INVALID;
    if (sodium_base642bin(out, outcap, s, len, NULL, &n, &end,
                          sodium_base64_VARIANT_URLSAFE_NO_PADDING) != 0)
        return IG_ERR_INVALID;
    if (end != s + len)
        return IG_ERR_INVALID;
    *outlen = n;
    return IG_OK;
}
