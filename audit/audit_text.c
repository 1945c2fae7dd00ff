/*
 * audit_text.c - the text helpers the audit parsers share (audit_int.h):
 * strict UTF-8, strict padded base64 over libsodium, and decimals.
 *
 * Everything here reads public data (notes, checkpoints, proofs), so
 * plain branches are fine; libsodium's codec is still the one decoding,
 * after an alphabet check that closes its 1.0.18 gap with bytes >= 0x80.
 */
#include "audit_int.h"
#include "ig_text.h"

#include <sodium.h>
#include <string.h>

int
audit_text_valid(const char *s, size_t len, int allow_nl)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0, n;
    uint32_t c;

    while (i < len) {
        n = ig_utf8_next(p + i, len - i, &c);
        if (n == 0)
            return 0;
        if (c < 0x20 && !(c == '\n' && allow_nl))
            return 0;
        i += n;
    }
    return 1;
}

static int
b64_alphabet(const char *s, size_t len)
{
    size_t i;
    char c;

    for (i = 0; i < len; i++) {
        c = s[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
              (c >= '0' && c <= '9') || c == '+' || c == '/' || c == '='))
            return 0;
    }
    return 1;
}

enum ig_status
audit_b64_decode(const char *s, size_t len, unsigned char *out, size_t cap,
                 size_t *outlen)
{
    const char *end = NULL;
    size_t n = 0;

    *outlen = 0;
    /* libsodium 1.0.18 misreads bytes >= 0x80: refuse them first. */
    if (len % 4 != 0 || !b64_alphabet(s, len))
        return IG_ERR_INVALID;
    if (len == 0)
        return IG_OK;
    if (sodium_base642bin(out, cap, s, len, NULL, &n, &end,
                          sodium_base64_VARIANT_ORIGINAL) != 0 ||
        end != s + len)
        return IG_ERR_INVALID;
    *outlen = n;
    return IG_OK;
}

enum ig_status
audit_b64_check(const char *s, size_t len, size_t *outlen)
{
    unsigned char tmp[3];
    size_t i, got, total = 0;

    *outlen = 0;
    if (len % 4 != 0)
        return IG_ERR_INVALID;
    /* Groups of four are independent; padding only in the last one. */
    for (i = 0; i < len; i += 4) {
        if (audit_b64_decode(s + i, 4, tmp, sizeof(tmp), &got) != IG_OK ||
            (got != 3 && i + 4 != len))
            return IG_ERR_INVALID;
        total += got;
    }
    *outlen = total;
    return IG_OK;
}

void
audit_b64_encode(const void *in, size_t n, char *out, size_t cap)
{
    IG_ASSERT(cap > AUDIT_B64_LEN(n));
    (void)sodium_bin2base64(out, cap, (const unsigned char *)in, n,
                            sodium_base64_VARIANT_ORIGINAL);
}

enum ig_status
audit_parse_u64(const char *s, size_t len, uint64_t *out)
{
    uint64_t v = 0, d;
    size_t i;

    *out = 0;
    if (len == 0 || len > 20 || (len > 1 && s[0] == '0'))
        return IG_ERR_INVALID;
    for (i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return IG_ERR_INVALID;
        d = (uint64_t)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return IG_ERR_INVALID;
        v = v * 10 + d;
    }
    *out = v;
    return IG_OK;
}

int
audit_next_line(const char *s, size_t len, size_t *pos, const char **line,
                size_t *n)
{
    const char *nl;

    if (*pos >= len)
        return 0;
    nl = memchr(s + *pos, '\n', len - *pos);
    if (nl == NULL)
        return 0;
    *line = s + *pos;
    *n = (size_t)(nl - *line);
    *pos += *n + 1;
    return 1;
}
