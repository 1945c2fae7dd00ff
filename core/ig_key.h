/*
 * ig_key.h - Ed25519 keys for grants, and their PASERK serialization.
 *
 *   k4.secret.<base64url(64-byte libsodium secret key: seed || public key)>
 *   k4.public.<base64url(32-byte public key)>
 *   k4.pid.<base64url(BLAKE2b-264("k4.pid." || "k4.public.<...>"))>
 *
 * A signing key's secret bytes live only in sodium_malloc'd memory (guarded
 * pages, mlock'ed where allowed) and are wiped on free. A public key is a
 * plain value with its k4.pid computed once. A keyring holds several public
 * keys by kid for rotation.
 *
 * sodium_init() must have succeeded before any of these is called
 * (ig_crypto_init does it).
 */
#ifndef IG_KEY_H
#define IG_KEY_H

#include <stddef.h>

#include "ig_error.h"

#define IG_PK_BYTES 32
#define IG_SK_BYTES 64
/* Lengths of the PASERK strings, without the NUL. */
#define IG_PASERK_PUBLIC_STRLEN (10 + 43) /* "k4.public." */
#define IG_PASERK_SECRET_STRLEN (10 + 86) /* "k4.secret." */
#define IG_PASERK_PID_STRLEN (7 + 44)     /* "k4.pid." */

struct ig_public_key {
    unsigned char pk[IG_PK_BYTES];
    char kid[IG_PASERK_PID_STRLEN + 1]; /* its k4.pid */
};

struct ig_signing_key; /* opaque; secret in sodium_malloc memory */
struct ig_keyring;     /* opaque; public keys by kid */

/* Call once at start-up; IG_ERR_CRYPTO when libsodium cannot initialize. */
enum ig_status ig_crypto_init(void) IG_WUR;

/* ---- signing keys ---- */

/* A fresh random key. IG_ERR_NOMEM. */
enum ig_status ig_signing_key_generate(struct ig_signing_key **out) IG_WUR;

/*
 * A key from its k4.secret PASERK (len chars, no trailing whitespace).
 * Refuses other versions/types, bad base64url, wrong length, and a secret
 * whose embedded public half does not match its seed.
 */
enum ig_status ig_signing_key_from_paserk(const char *s, size_t len,
                                          struct ig_signing_key **out,
                                          struct ig_err *err) IG_WUR;

/*
 * A key from a file holding its k4.secret PASERK (one trailing newline
 * allowed), read by ig_file_read_secret: a symlink, a file that is not
 * regular or that group or others may access (mode & 077) is IG_ERR_IO
 * naming the path. The read buffer is wiped.
 */
enum ig_status ig_signing_key_load_file(const char *path,
                                        struct ig_signing_key **out,
                                        struct ig_err *err) IG_WUR;

/*
 * Write the k4.secret PASERK into out (outcap >= IG_PASERK_SECRET_STRLEN+1).
 * The caller must sodium_memzero(out) when done.
 */
void ig_signing_key_to_paserk(const struct ig_signing_key *k, char *out,
                              size_t outcap);

/* The public half, with its kid. */
void ig_signing_key_public(const struct ig_signing_key *k,
                           struct ig_public_key *out);

/*
 * Ed25519 detached signature of msg into sig (64 bytes). Thread safe (the
 * key is only read).
 */
void ig_signing_key_sign(const struct ig_signing_key *k, unsigned char sig[64],
                         const unsigned char *msg, size_t len);

/* Wipe and free. NULL is fine. */
void ig_signing_key_free(struct ig_signing_key *k);

/* ---- public keys ---- */

/* Fill out (and its kid) from 32 raw bytes. */
void ig_public_key_from_bytes(const unsigned char pk[IG_PK_BYTES],
                              struct ig_public_key *out);

/* Parse a k4.public PASERK (len chars). */
enum ig_status ig_public_key_from_paserk(const char *s, size_t len,
                                         struct ig_public_key *out,
                                         struct ig_err *err) IG_WUR;

/* A public key from a file holding its k4.public PASERK (one trailing
   newline allowed): a regular file of at most IG_KEYFILE_MAX_BYTES. */
enum ig_status ig_public_key_load_file(const char *path,
                                       struct ig_public_key *out,
                                       struct ig_err *err) IG_WUR;

/* Write the k4.public PASERK (outcap >= IG_PASERK_PUBLIC_STRLEN + 1). */
void ig_public_key_to_paserk(const struct ig_public_key *k, char *out,
                             size_t outcap);

/*
 * Write a key pair into dir (created with mode 0700 if missing):
 * dir/signing.key (k4.secret, mode 0600, created exclusively: an existing
 * key is never overwritten) and dir/signing.pub (k4.public, 0644).
 */
enum ig_status ig_key_write_dir(const struct ig_signing_key *k, const char *dir,
                                struct ig_err *err) IG_WUR;

/* ---- keyring ---- */

enum ig_status ig_keyring_new(struct ig_keyring **out) IG_WUR;
void ig_keyring_free(struct ig_keyring *kr);

/* Add a copy of k. IG_ERR_INVALID if its kid is already present. */
enum ig_status ig_keyring_add(struct ig_keyring *kr,
                              const struct ig_public_key *k) IG_WUR;

/* The key with this kid (len chars), or NULL. Thread safe for readers. */
const struct ig_public_key *ig_keyring_find(const struct ig_keyring *kr,
                                            const char *kid, size_t len);

#endif
