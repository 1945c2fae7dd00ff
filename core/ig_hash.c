/*
 * ig_hash.c - the intent hash: "sha256:" + lowercase hex SHA-256 of the
 * RFC 8785 canonical bytes of a JSON value.
 *
 * How it works: ig_canon_write() fills a buffer capped at
 * IG_CANON_MAX_BYTES, OpenSSL's libcrypto digests it (it uses the CPU's SHA
 * instructions where there are some; libsodium's portable code is about
 * five times slower on large inputs, and hashes of request and response
 * bodies are on every request's path), and the digest is written as hex
 * by hand (no allocation, no locale). libcrypto is used for this alone.
 * The same canonical bytes MACed with libsodium's HMAC-SHA256
 * (ig_hash_json_hmac) are the audit log's placeholder for a redacted
 * value; that buffer is wiped.
 */
#include "ig_hash.h"

#include <openssl/evp.h>
#include <pthread.h>
#include <sodium.h>
#include <string.h>

#include "ig_buf.h"
#include "ig_canon.h"
#include "ig_limits.h"

static const char hexdigits[] = "0123456789abcdef";

static EVP_MD *sha256_md; /* fetched once; NULL: libsodium's instead */
static pthread_once_t sha256_once = PTHREAD_ONCE_INIT;

static void
sha256_fetch(void)
{
    sha256_md = EVP_MD_fetch(NULL, "SHA256", NULL);
}

/* SHA-256 of a then b: OpenSSL with the digest fetched once (its
   one-shot SHA256() fetches on every call, slower than libsodium below
   a few hundred bytes), libsodium when OpenSSL cannot. */
void
ig_sha256_2(const void *a, size_t alen, const void *b, size_t blen,
            unsigned char out[IG_SHA256_BYTES])
{
    crypto_hash_sha256_state st;
    EVP_MD_CTX *c;
    unsigned int n = 0;
    int ok;

    (void)pthread_once(&sha256_once, sha256_fetch);
    c = sha256_md != NULL ? EVP_MD_CTX_new() : NULL;
    ok = c != NULL && EVP_DigestInit_ex(c, sha256_md, NULL) == 1 &&
         EVP_DigestUpdate(c, a, alen) == 1 &&
         (blen == 0 || EVP_DigestUpdate(c, b, blen) == 1) &&
         EVP_DigestFinal_ex(c, out, &n) == 1 && n == IG_SHA256_BYTES;
    EVP_MD_CTX_free(c);
    if (ok)
        return;
    crypto_hash_sha256_init(&st);
    crypto_hash_sha256_update(&st, a, (unsigned long long)alen);
    if (blen > 0)
        crypto_hash_sha256_update(&st, b, (unsigned long long)blen);
    crypto_hash_sha256_final(&st, out);
}

static void
sha256(const void *p, size_t len, unsigned char h[IG_SHA256_BYTES])
{
    ig_sha256_2(p, len, NULL, 0, h);
}

/* h as lowercase hex: 64 characters and a NUL. */
static void
to_hex(const unsigned char h[IG_SHA256_BYTES], char out[IG_SHA256_HEXLEN + 1])
{
    size_t i, o = 0;

    for (i = 0; i < IG_SHA256_BYTES; i++) {
        out[o++] = hexdigits[h[i] >> 4];
        out[o++] = hexdigits[h[i] & 0xF];
    }
    out[o] = '\0';
}

void
ig_sha256_hex(const void *p, size_t len, char out[IG_SHA256_HEXLEN + 1])
{
    unsigned char h[IG_SHA256_BYTES];

    sha256(p, len, h);
    to_hex(h, out);
}

void
ig_hash_bytes(const void *p, size_t len, char out[IG_HASH_STRLEN + 1])
{
    size_t o = sizeof(IG_HASH_PREFIX) - 1;

    memcpy(out, IG_HASH_PREFIX, o);
    ig_sha256_hex(p, len, out + o);
}

/* prefix and the hex of v's canonical bytes MACed with key, or hashed
   when key is NULL; the bytes of a MACed value are wiped (it is a
   secret). out is "" on an error. */
static enum ig_status
canon_digest(const json_t *v, const unsigned char *key, const char *prefix,
             char *out, struct ig_err *err)
{
    unsigned char d[IG_SHA256_BYTES];
    size_t o = strlen(prefix);
    struct ig_buf b;
    enum ig_status st;

    out[0] = '\0';
    ig_buf_init(&b, IG_CANON_MAX_BYTES);
    st = ig_canon_write(v, &b, err);
    if (st == IG_OK && key != NULL)
        (void)crypto_auth_hmacsha256(d, (const unsigned char *)b.data, b.len,
                                     key);
    else if (st == IG_OK)
        sha256(b.data != NULL ? b.data : "", b.len, d);
    if (key != NULL)
        ig_buf_release_secret(&b);
    else
        ig_buf_release(&b);
    if (st != IG_OK)
        return st;
    memcpy(out, prefix, o);
    to_hex(d, out + o);
    return IG_OK;
}

enum ig_status
ig_hash_json(const json_t *v, char out[IG_HASH_STRLEN + 1], struct ig_err *err)
{
    return canon_digest(v, NULL, IG_HASH_PREFIX, out, err);
}

enum ig_status
ig_hash_json_hmac(const json_t *v, const unsigned char key[IG_SHA256_BYTES],
                  char out[IG_HMAC_STRLEN + 1], struct ig_err *err)
{
    IG_ASSERT(key != NULL);
    return canon_digest(v, key, IG_HMAC_PREFIX, out, err);
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
