/*
 * appr_password.h - approver passwords: argon2id hashes in libsodium's
 * crypto_pwhash_str format ("$argon2id$v=19$m=...,t=...,p=1$salt$hash"),
 * with the interactive limits. Only hashes are ever stored or configured.
 */
#ifndef APPR_PASSWORD_H
#define APPR_PASSWORD_H

#include <stddef.h>

#include "ig_limits.h"

#define APPR_PASSWORD_MIN IG_PASSWORD_MIN
#define APPR_PASSWORD_MAX IG_PASSWORD_MAX
#define APPR_HASH_MAX 128 /* crypto_pwhash_STRBYTES */

/* Hash password into out (>= APPR_HASH_MAX bytes): 0, or -1 when it is
   out of range (APPR_PASSWORD_MIN..MAX bytes) or memory ran out. */
int appr_password_hash(const char *password, size_t len, char *out);

/* 1 when hash is a well-formed argon2id hash string. */
int appr_password_hash_valid(const char *hash);

/* 1 when password matches hash (constant time inside libsodium); 0 on a
   mismatch or any error. */
int appr_password_verify(const char *hash, const char *password, size_t len);

#endif
