/*
 * ig_hash.c - the intent hash: "sha256:" + lowercase hex SHA-256 of the
 * RFC 8785 canonical bytes of a JSON value.
 *
 * How it works: ig_canon_write() fills a buffer capped at
 * IG_CANON_MAX_BYTES, libsodium's crypto_hash_sha256() digests it, and the
 * digest is written as hex by hand (no allocation, no locale).
 */
#include "ig_hash.h"

#include <sodium.h>
#include <string.h>

#include "ig_buf.h"
#include "ig_canon.h"
#include "ig_limits.h"

static const char hexdigits[] = "0123456789abcdef";

void
ig_sha256_hex(const void *p, size_t len, char out[IG_SHA256_HEXLEN + 1])
{
    unsigned char h[crypto_hash_sha256_BYTES];
    size_t i, o = 0;

    crypto_hash_sha256(h, p, (unsigned long long)len);
    for (i = 0; i < sizeof(h); i++) {
        out[o++] = hexdigits[h[i] >> 4];
        out[o++] = hexdigits[h[i] & 0xF];
    }
    out[o] = '\0';
}

void
ig_hash_bytes(const void *p, size_t len, char out[IG_HASH_STRLEN + 1])
{
    size_t o = sizeof(IG_HASH_PREFIX) - 1;

    memcpy(out, IG_HASH_PREFIX, o);
    ig_sha256_hex(p, len, out + o);
}

enum ig_status
ig_hash_json(const json_t *v, char out[IG_HASH_STRLEN + 1], struct ig_err *err)
{
    struct ig_buf b;
    enum ig_status st;

    out[0] = '\0';
    ig_buf_init(&b, IG_CANON_MAX_BYTES);
    st = ig_canon_write(v, &b, err);
    if (st != IG_OK)
        goto out;
    ig_hash_bytes(b.data != NULL ? b.data : "", b.len, out);
out:
    ig_buf_release(&b);
    return st;
}

int
ig_hash_is_valid(const char *s)
{
    size_t i, n = sizeof(IG_HASH_PREFIX) - 1;

    if (s == NULL || strncmp(s, IG_HASH_PREFIX, n) != 0)
        return 0;
    for (i = n; i < IG_HASH_STRLEN; i++) {
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
    }
    return s[IG_HASH_STRLEN] == '\0';
}
