/*
 * pol_utf8.c - the UTF-8 rules every policy file shares: what one valid
 * character is, encoding a code point, and copying untrusted bytes into a
 * fixed message buffer as valid text.
 *
 * How it works: pol_utf8_char() follows RFC 3629's table (no overlong
 * forms, no surrogates, nothing past U+10FFFF); pol_copy_text() keeps whole
 * characters and writes '?' for anything else or a control byte, so a
 * message built from a policy's strings is always printable. This file
 * depends on nothing else of the engine: the helpers, the text checks, the
 * verdicts and the sandbox all build on it.
 */
#include "pol_int.h"

#include <string.h>

size_t
pol_utf8_char(const unsigned char *s, size_t n)
{
    unsigned char lo = 0x80, hi = 0xBF;
    size_t len, i;

    if (s[0] < 0x80)
        return 1;
    if (s[0] >= 0xC2 && s[0] <= 0xDF)
        len = 2;
    else if (s[0] >= 0xE0 && s[0] <= 0xEF)
        len = 3;
    else if (s[0] >= 0xF0 && s[0] <= 0xF4)
        len = 4;
    else
        return 0;
    if (s[0] == 0xE0)
        lo = 0xA0;
    else if (s[0] == 0xED)
        hi = 0x9F;
    else if (s[0] == 0xF0)
        lo = 0x90;
    else if (s[0] == 0xF4)
        hi = 0x8F;
    if (n < len || s[1] < lo || s[1] > hi)
        return 0;
    for (i = 2; i < len; i++)
        if ((s[i] & 0xC0) != 0x80)
            return 0;
    return len;
}

void
pol_copy_text(char *dst, size_t dstsz, const char *src, size_t n)
{
    const unsigned char *s = (const unsigned char *)src;
    size_t i = 0, o = 0, len;

    while (i < n) {
        len = pol_utf8_char(s + i, n - i);
        if (len <= 1) {
            if (o + 1 >= dstsz)
                break;
            dst[o++] =
                (len == 0 || s[i] < 0x20 || s[i] == 0x7f) ? '?' : (char)s[i];
            i++;
            continue;
        }
        if (o + len >= dstsz)
            break;
        memcpy(dst + o, s + i, len);
        o += len;
        i += len;
    }
    dst[o] = '\0';
}

size_t
pol_utf8_encode(unsigned long cp, char *out)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}
