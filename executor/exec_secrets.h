/*
 * exec_secrets.h - the executor's credentials, encrypted at rest.
 *
 * A secrets file holds named values, each sealed with libsodium's
 * crypto_secretbox (XSalsa20-Poly1305) under one 32-byte key:
 *
 *   intentgate-secrets/1
 *   NAME base64url(nonce || ciphertext)
 *   ...
 *
 * What is sealed is NAME || NUL || value, so a line moved to another name
 * fails to open. Values are 1 to EXEC_SECRET_MAX_BYTES bytes (any bytes,
 * NUL included); an empty value is refused.
 *
 * The key comes from a file (mode 0600, one base64url line, refused when
 * group or others may read it) or, when no file is given, from the
 * environment variable INTENTGATE_EXECUTOR_SECRETS_KEY (the same text).
 * A value is decrypted only when asked for, into sodium_malloc'd memory (a
 * pooled ig_secmem block) the caller wipes and frees with exec_secret_free();
 * nothing else ever holds plaintext. Names match ^[a-z0-9][a-z0-9._-]{0,63}$.
 * Not thread safe for writers; exec_secrets_get is safe from many threads once
 * opened.
 */
#ifndef EXEC_SECRETS_H
#define EXEC_SECRETS_H

#include <stddef.h>

#include "ig_error.h"
#include "ig_limits.h"

#define EXEC_SECRETS_KEY_ENV "INTENTGATE_EXECUTOR_SECRETS_KEY"
#define EXEC_SECRET_MAX_BYTES IG_EXEC_SECRET_MAX_BYTES
#define EXEC_SECRETS_MAX IG_EXEC_SECRETS_MAX

struct exec_secrets;

/*
 * Write a new random key to key_path (O_EXCL, mode 0600; an existing file
 * is never overwritten: IG_ERR_EXISTS). IG_ERR_IO, IG_ERR_NOMEM.
 */
enum ig_status exec_secrets_keygen(const char *key_path,
                                   struct ig_err *err) IG_WUR;

/*
 * Open the secrets file at path (a missing file is an empty set; it is
 * created by the first exec_secrets_set) with the key from key_path, or
 * from the environment when key_path is NULL. Every entry is checked to
 * decrypt at open, so a wrong key or a tampered file fails here, naming
 * the line. The key is kept in sodium_malloc'd memory.
 */
enum ig_status exec_secrets_open(const char *path, const char *key_path,
                                 struct exec_secrets **out,
                                 struct ig_err *err) IG_WUR;

/* Wipe and free. NULL is fine. */
void exec_secrets_free(struct exec_secrets *s);

/*
 * Set (add or replace) NAME to value, and rewrite the file atomically
 * (temporary file, fsync, rename; mode 0600).
 */
enum ig_status exec_secrets_set(struct exec_secrets *s, const char *name,
                                const unsigned char *value, size_t len,
                                struct ig_err *err) IG_WUR;

/*
 * Decrypt NAME into *value (sodium_malloc'd, len bytes plus a NUL) for the
 * duration of one call. IG_ERR_NOTFOUND when absent. The caller must call
 * exec_secret_free(*value, *len) on every path.
 */
enum ig_status exec_secrets_get(const struct exec_secrets *s, const char *name,
                                unsigned char **value, size_t *len,
                                struct ig_err *err) IG_WUR;

/* Wipe and free a value from exec_secrets_get. NULL is fine. */
void exec_secret_free(unsigned char *value, size_t len);

/* How many names the set holds. */
size_t exec_secrets_count(const struct exec_secrets *s);

/*
 * The i-th name (in file order), or NULL when i >= count. Owned by s, valid
 * until the next exec_secrets_set or exec_secrets_free.
 */
const char *exec_secrets_name(const struct exec_secrets *s, size_t i);

/* 1 when name is a valid secret name. */
int exec_secret_name_valid(const char *name);

#endif
