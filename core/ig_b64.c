/*
 * ig_b64.c - strict unpadded base64url for PASETO and PASERK.
 *
 * A thin wrapper over libsodium's URL-safe, no-padding variant. libsodium
 * 1.0.18 already refuses ASCII characters outside the alphabet (so '=',
 * '+', '/' and whitespace, since no ignore set is passed), a dangling
 * character (len % 4 == 1) and non-zero unused bits in the last character;
 * this file adds the check that decoding stopped at the end of the input
 * rather than at the first bad character, and turns the result into an
 * ig_status.
 *
 * One gap is closed by hand: libsodium 1.0.18 decodes every byte from 0x80
 * to 0xff as if it were '_' (its constant-time classifier is handed a
 * sign-extended char), so "AAA\x80" would be a second spelling of "AAA_".
 * Such bytes are refused up front, without branching on the data, since a
 * k4.secret PASERK goes through here too.
 *
 * The _public pair is a plain table-driven codec with the same output and
 * refusals, for tokens: libsodium's constant-time one costs ~5 ns a byte,
 * a large share of a PASETO check. Bytes outside the alphabet map to 0xff
 * in the decode table, so one OR over the group values finds any of them;
 * the unused low bits of a final partial group must be zero.
 * tests/unit/test_b64.c runs every refusal, including each byte outside
 * the alphabet and all 2- and 3-character strings, against both codecs.
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
    unsigned high = 0;
    size_t n = 0, i;

    *outlen = 0;
    if (len == 0)
        return IG_OK;
    if (len % 4 == 1)
        return IG_ERR_INVALID;
    /* The decoded size is known up front: refuse a short buffer here. */
    if (len / 4 * 3 + (len % 4 ? len % 4 - 1 : 0) > outcap)
        return IG_ERR_INVALID;
    for (i = 0; i < len; i++)
        high |= (unsigned char)s[i];
    if ((high & 0x80) != 0)
        return IG_ERR_INVALID;
    if (sodium_base642bin(out, outcap, s, len, NULL, &n, &end,
                          sodium_base64_VARIANT_URLSAFE_NO_PADDING) != 0)
        return IG_ERR_INVALID;
    if (end != s + len)
        return IG_ERR_INVALID;
    *outlen = n;
    return IG_OK;
}

static const char enc_table[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

#define X 0xff
static const unsigned char dec_table[256] = {
    X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,
    X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,
    X,  X,  X,  X,  X,  X,  X,  62, X,  X,  52, 53, 54, 55, 56, 57, 58, 59, 60,
    61, X,  X,  X,  X,  X,  X,  X,  0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10,
    11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, X,  X,  X,  X,
    63, X,  26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42,
    43, 44, 45, 46, 47, 48, 49, 50, 51, X,  X,  X,  X,  X,  X,  X,  X,  X,  X,
    X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,
    X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,
    X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,
    X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,
    X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,
    X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,
    X,  X,  X,  X,  X,  X,  X,  X,  X,
};
#undef X

size_t
ig_b64_encode_public(const void *in, size_t n, char *out, size_t outcap)
{
    const unsigned char *p = in;
    size_t i, o = 0;
    unsigned long v;

    IG_ASSERT(n <= (SIZE_MAX - 1) / 4 * 3);
    IG_ASSERT(out != NULL && outcap > IG_B64_ENCODED_LEN(n));
    for (i = 0; n - i >= 3; i += 3) {
        v = (unsigned long)p[i] << 16 | (unsigned long)p[i + 1] << 8 | p[i + 2];
        out[o++] = enc_table[v >> 18];
        out[o++] = enc_table[(v >> 12) & 63];
        out[o++] = enc_table[(v >> 6) & 63];
        out[o++] = enc_table[v & 63];
    }
    if (n - i > 0) {
        v = (unsigned long)p[i] << 16;
        if (n - i == 2)
            v |= (unsigned long)p[i + 1] << 8;
        out[o++] = enc_table[v >> 18];
        out[o++] = enc_table[(v >> 12) & 63];
        if (n - i == 2)
            out[o++] = enc_table[(v >> 6) & 63];
    }
    out[o] = '\0';
    return o;
}

enum ig_status
ig_b64_decode_public(const char *s, size_t len, unsigned char *out,
                     size_t outcap, size_t *outlen)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t rem = len % 4, need = len / 4 * 3 + (rem ? rem - 1 : 0), i;
    unsigned a, b, c, d, bad = 0;

    *outlen = 0;
    if (rem == 1 || need > outcap)
        return IG_ERR_INVALID;
    for (i = 0; i < len / 4; i++, p += 4, out += 3) {
        a = dec_table[p[0]];
        b = dec_table[p[1]];
        c = dec_table[p[2]];
        d = dec_table[p[3]];
        bad |= a | b | c | d;
        out[0] = (unsigned char)(a << 2 | b >> 4);
        out[1] = (unsigned char)(b << 4 | c >> 2);
        out[2] = (unsigned char)(c << 6 | d);
    }
    if (rem > 1) {
        a = dec_table[p[0]];
        b = dec_table[p[1]];
        c = rem == 3 ? dec_table[p[2]] : 0;
        bad |= a | b | c;
        /* The unused low bits of the last character must be zero. */
        if ((rem == 2 ? b & 0x0f : c & 0x03) != 0)
            return IG_ERR_INVALID;
        out[0] = (unsigned char)(a << 2 | b >> 4);
        if (rem == 3)
            out[1] = (unsigned char)(b << 4 | c >> 2);
    }
    if ((bad & 0x80) != 0)
        return IG_ERR_INVALID;
    *outlen = need;
    return IG_OK;
}
