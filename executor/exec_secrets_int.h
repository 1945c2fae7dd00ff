/*
 * exec_secrets_int.h - private to the secrets module: the file format's
 * sizes and the file helpers in exec_secrets_file.c (reading the key and
 * the secrets file with caps, writing them safely).
 */
#ifndef EXEC_SECRETS_INT_H
#define EXEC_SECRETS_INT_H

#include <sodium.h>
#include <stddef.h>

#include "exec_secrets.h"
#include "ig_b64.h"
#include "ig_error.h"
#include "ig_limits.h"

#define EXEC_SECRETS_HEADER "intentgate-secrets/1"
#define EXEC_SECRETS_KEY_BYTES crypto_secretbox_KEYBYTES
#define EXEC_SECRETS_KEY_STRLEN IG_B64_ENCODED_LEN(EXEC_SECRETS_KEY_BYTES)
#define EXEC_SECRET_NAME_MAX IG_EXEC_SECRET_NAME_MAX

/* A sealed entry: nonce || MAC || ciphertext of (name || NUL || value). */
#define EXEC_SEALED_MAX                                                        \
    (crypto_secretbox_NONCEBYTES + crypto_secretbox_MACBYTES +                 \
     EXEC_SECRET_NAME_MAX + 1 + EXEC_SECRET_MAX_BYTES)
/* Longest line: "NAME " + base64url(sealed) + "\n". */
#define EXEC_SECRETS_LINE_MAX                                                  \
    (EXEC_SECRET_NAME_MAX + 1 + IG_B64_ENCODED_LEN(EXEC_SEALED_MAX) + 1)
/* Largest secrets file. */
#define EXEC_SECRETS_FILE_MAX                                                  \
    (sizeof(EXEC_SECRETS_HEADER) + EXEC_SECRETS_MAX * EXEC_SECRETS_LINE_MAX)

/*
 * The key from key_path, or from EXEC_SECRETS_KEY_ENV when key_path is
 * NULL, into a sodium_malloc'd, read-only buffer of EXEC_SECRETS_KEY_BYTES
 * (the caller sodium_free's it). A key file readable by group or others is
 * refused.
 */
enum ig_status exec_sfile_load_key(const char *key_path, unsigned char **key,
                                   struct ig_err *err) IG_WUR;

/*
 * The whole secrets file at path, malloc'd and NUL-terminated; *text is
 * NULL (and IG_OK returned) when the file does not exist. Over
 * EXEC_SECRETS_FILE_MAX is IG_ERR_LIMIT.
 */
enum ig_status exec_sfile_read(const char *path, char **text, size_t *len,
                               struct ig_err *err) IG_WUR;

/*
 * Replace path with text atomically: a temporary file beside it (mode
 * 0600), fsync, rename, fsync of the directory.
 */
enum ig_status exec_sfile_write(const char *path, const char *text, size_t len,
                                struct ig_err *err) IG_WUR;

#endif
