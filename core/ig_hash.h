/*
 * ig_hash.h - the intent hash: "sha256:" followed by the lowercase hex
 * SHA-256 of the RFC 8785 canonical bytes of a JSON value; and the keyed
 * HMAC of those bytes.
 */
#ifndef IG_HASH_H
#define IG_HASH_H

#include <jansson.h>
#include <stddef.h>

#include "ig_error.h"

#define IG_HASH_PREFIX "sha256:"
/* Characters in an intent hash string, without the NUL. */
#define IG_HASH_STRLEN (7 + 64)

/* Characters of a SHA-256 digest in hex, without the NUL. */
#define IG_SHA256_HEXLEN 64

/* Bytes of a SHA-256 digest. */
#define IG_SHA256_BYTES 32

/*
 * SHA-256, every one of the project's: OpenSSL's libcrypto, which uses the
 * CPU's SHA instructions (libsodium, which does not, stays the independent
 * reference of the tests). The digest is fetched once per process and each
 * thread keeps one digest context, so a hash allocates nothing after a
 * thread's first. libcrypto refusing SHA-256 (no default provider) or out
 * of memory for a thread's first context is fatal (ig_assert_fail): there
 * is no second implementation to drift from the first. ig_sha256_check()
 * lets start-up find that out before any request (the PDP and the executor
 * call it; the CLI does not, as the first fetch costs milliseconds).
 */

/* IG_OK when libcrypto computes SHA-256 correctly ("abc"'s known digest),
   else IG_ERR_CRYPTO. Thread safe; cheap after the first call. */
enum ig_status ig_sha256_check(void) IG_WUR;

/* The SHA-256 digest of len bytes at p (p may be NULL when len is 0).
   Thread safe. */
void ig_sha256(const void *p, size_t len, unsigned char out[IG_SHA256_BYTES]);

/* The SHA-256 digest of alen bytes at a followed by blen bytes at b (either
   may be NULL when its length is 0): the Merkle tree's 0x00 || leaf
   without a copy. Thread safe. */
void ig_sha256_2(const void *a, size_t alen, const void *b, size_t blen,
                 unsigned char out[IG_SHA256_BYTES]);

/* An incremental SHA-256, for input read in pieces (a file). Not shared
   between threads. */
struct ig_sha256;

/* A fresh context in *out; IG_ERR_NOMEM (*out NULL then). */
enum ig_status ig_sha256_new(struct ig_sha256 **out) IG_WUR;

/* Hash len more bytes at p (p may be NULL when len is 0). */
void ig_sha256_update(struct ig_sha256 *h, const void *p, size_t len);

/* The digest of everything hashed since ig_sha256_new or the last final;
   the context starts over. */
void ig_sha256_final(struct ig_sha256 *h, unsigned char out[IG_SHA256_BYTES]);

/* Free h; NULL is a no-op. */
void ig_sha256_free(struct ig_sha256 *h);

/* The SHA-256 of len bytes as lowercase hex: 64 characters and a NUL.
   The one SHA-256 of digests that are reported (outcome details, spool
   checksums), so a faster implementation goes in one place. */
void ig_sha256_hex(const void *p, size_t len, char out[IG_SHA256_HEXLEN + 1]);

/* Hash len bytes: writes IG_HASH_STRLEN characters and a NUL. */
void ig_hash_bytes(const void *p, size_t len, char out[IG_HASH_STRLEN + 1]);

/*
 * Canonicalize v (ig_canon_write) and hash the result. Errors as
 * ig_canon_write. Thread safe.
 */
enum ig_status ig_hash_json(const json_t *v, char out[IG_HASH_STRLEN + 1],
                            struct ig_err *err) IG_WUR;

#define IG_HMAC_PREFIX "hmac-sha256:"
/* Characters in a keyed hash string, without the NUL. */
#define IG_HMAC_STRLEN (12 + 64)

/*
 * "hmac-sha256:" and the lowercase hex HMAC-SHA256, with the 32-byte key,
 * of v's canonical bytes (ig_canon_write), which are wiped afterwards:
 * the audit log's placeholder for a redacted value. Errors as
 * ig_canon_write, out "" then. Thread safe.
 */
enum ig_status ig_hash_json_hmac(const json_t *v,
                                 const unsigned char key[IG_SHA256_BYTES],
                                 char out[IG_HMAC_STRLEN + 1],
                                 struct ig_err *err) IG_WUR;

/* 1 when s is exactly "sha256:" + 64 lowercase hex digits, else 0. */
int ig_hash_is_valid(const char *s);

#endif
