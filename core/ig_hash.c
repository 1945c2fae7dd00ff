/*
 * ig_hash.c - SHA-256 for the whole project, and the intent hash:
 * "sha256:" + lowercase hex SHA-256 of the RFC 8785 canonical bytes of a
 * JSON value.
 *
 * How it works: OpenSSL's libcrypto computes every SHA-256 (it uses the
 * CPU's SHA instructions where there are some; libsodium's portable code
 * is three to six times slower, and hashes of intents, request and
 * response bodies, tokens and audit leaves and nodes are on every
 * request's path). libcrypto is used for this alone. The one-shot hashes
 * (ig_sha256, ig_sha256_2: leaves, nodes, tokens; `audit verify` makes
 * two per leaf) use SHA256_Init/Update/Final on a context on the stack:
 * the same code, but libcrypto 3.0's EVP_DigestInit_ex frees and
 * allocates the provider's context on every call, even on a reused
 * EVP_MD_CTX - a malloc and a free per hash, about a quarter of a node
 * hash. Those functions are deprecated in 3.0, not removed; this file
 * alone uses them. The incremental hash (ig_sha256_new) keeps an
 * EVP_MD_CTX with the digest fetched once (EVP_MD_fetch). A failure of
 * libcrypto is fatal rather than answered by a second implementation.
 * ig_hash_json() canonicalises into a buffer capped at IG_CANON_MAX_BYTES
 * and writes the digest as hex by hand (no allocation, no locale). The
 * same canonical bytes MACed with libsodium's HMAC-SHA256
 * (ig_hash_json_hmac) are the audit log's placeholder for a redacted
 * value; that buffer is wiped.
 */
#include "ig_hash.h"

/* SHA256_Init and friends: see the top of this file. */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <pthread.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "ig_buf.h"
#include "ig_canon.h"
#include "ig_limits.h"

static const char hexdigits[] = "0123456789abcdef";

struct ig_sha256 {
    EVP_MD_CTX *c;
};

static EVP_MD *sha256_md; /* fetched once */
static int sha256_ready;  /* usable */
static pthread_once_t sha256_once = PTHREAD_ONCE_INIT;

static void
sha256_setup(void)
{
    sha256_md = EVP_MD_fetch(NULL, "SHA256", NULL);
    sha256_ready = sha256_md != NULL;
}

/* 1 when c now holds the digest of a then b in out. */
static int
digest(EVP_MD_CTX *c, const void *a, size_t alen, const void *b, size_t blen,
       unsigned char out[IG_SHA256_BYTES])
{
    unsigned int n = 0;

    return EVP_DigestInit_ex(c, sha256_md, NULL) == 1 &&
           (alen == 0 || EVP_DigestUpdate(c, a, alen) == 1) &&
           (blen == 0 || EVP_DigestUpdate(c, b, blen) == 1) &&
           EVP_DigestFinal_ex(c, out, &n) == 1 && n == IG_SHA256_BYTES;
}

/* 1 when out holds the digest of a then b: the one-shot hashes' path
   (no allocation; see the top of this file). */
static int
oneshot(const void *a, size_t alen, const void *b, size_t blen,
        unsigned char out[IG_SHA256_BYTES])
{
    SHA256_CTX c;

    return SHA256_Init(&c) == 1 &&
           (alen == 0 || SHA256_Update(&c, a, alen) == 1) &&
           (blen == 0 || SHA256_Update(&c, b, blen) == 1) &&
           SHA256_Final(out, &c) == 1;
}

/* The digest is usable, or the process stops (ig_sha256_check at
   start-up says so politely). */
static void
sha256_require(void)
{
    (void)pthread_once(&sha256_once, sha256_setup);
    if (!sha256_ready)
        ig_assert_fail("libcrypto provides SHA-256", __FILE__, __LINE__);
}

enum ig_status
ig_sha256_check(void)
{
    static const unsigned char abc[IG_SHA256_BYTES] = {
        0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea, 0x41, 0x41, 0x40,
        0xde, 0x5d, 0xae, 0x22, 0x23, 0xb0, 0x03, 0x61, 0xa3, 0x96, 0x17,
        0x7a, 0x9c, 0xb4, 0x10, 0xff, 0x61, 0xf2, 0x00, 0x15, 0xad};
    unsigned char h[IG_SHA256_BYTES];
    EVP_MD_CTX *c;
    int ok;

    (void)pthread_once(&sha256_once, sha256_setup);
    if (!sha256_ready)
        return IG_ERR_CRYPTO;
    c = EVP_MD_CTX_new();
    ok = c != NULL && digest(c, "abc", 3, NULL, 0, h) &&
         memcmp(h, abc, sizeof(abc)) == 0 && oneshot("ab", 2, "c", 1, h) &&
         memcmp(h, abc, sizeof(abc)) == 0;
    EVP_MD_CTX_free(c);
    return ok ? IG_OK : IG_ERR_CRYPTO;
}

void
ig_sha256_2(const void *a, size_t alen, const void *b, size_t blen,
            unsigned char out[IG_SHA256_BYTES])
{
    int ok;

    sha256_require();
    ok = oneshot(a, alen, b, blen, out);
    IG_ASSERT(ok);
}

void
ig_sha256(const void *p, size_t len, unsigned char out[IG_SHA256_BYTES])
{
    ig_sha256_2(p, len, NULL, 0, out);
}

enum ig_status
ig_sha256_new(struct ig_sha256 **out)
{
    struct ig_sha256 *h;

    sha256_require();
    *out = NULL;
    h = calloc(1, sizeof(*h));
    if (h == NULL)
        return IG_ERR_NOMEM;
    h->c = EVP_MD_CTX_new();
    if (h->c == NULL || EVP_DigestInit_ex(h->c, sha256_md, NULL) != 1) {
        ig_sha256_free(h);
        return IG_ERR_NOMEM;
    }
    *out = h;
    return IG_OK;
}

void
ig_sha256_update(struct ig_sha256 *h, const void *p, size_t len)
{
    int ok = len == 0 || EVP_DigestUpdate(h->c, p, len) == 1;

    IG_ASSERT(ok);
}

void
ig_sha256_final(struct ig_sha256 *h, unsigned char out[IG_SHA256_BYTES])
{
    unsigned int n = 0;
    int ok = EVP_DigestFinal_ex(h->c, out, &n) == 1 && n == IG_SHA256_BYTES &&
             EVP_DigestInit_ex(h->c, sha256_md, NULL) == 1;

    IG_ASSERT(ok);
}

void
ig_sha256_free(struct ig_sha256 *h)
{
    if (h == NULL)
        return;
    EVP_MD_CTX_free(h->c);
    free(h);
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

    ig_sha256(p, len, h);
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
        ig_sha256(b.data, b.len, d);
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
