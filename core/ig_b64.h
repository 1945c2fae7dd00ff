/*
 * ig_b64.h - strict unpadded base64url (RFC 4648 section 5), as PASETO and
 * PASERK use it: no '=' padding, no whitespace, no '+' or '/', and the
 * unused low bits of the last character must be zero. Built on libsodium's
 * sodium_bin2base64 / sodium_base642bin.
 */
#ifndef IG_B64_H
#define IG_B64_H

#include <stddef.h>

#include "ig_error.h"

/* Characters needed to encode n bytes, without the NUL. */
#define IG_B64_ENCODED_LEN(n) (((n) / 3) * 4 + (((n) % 3) ? ((n) % 3) + 1 : 0))

/*
 * Encode n bytes into out (outcap bytes incl. the NUL). Returns the length
 * written (without NUL); IG_ASSERTs that outcap is large enough.
 */
size_t ig_b64_encode(const void *in, size_t n, char *out, size_t outcap);

/*
 * Decode exactly len characters of s into out (outcap bytes). *outlen gets
 * the decoded length. IG_ERR_INVALID on any character outside the alphabet,
 * padding, an impossible length (len % 4 == 1), non-zero trailing bits, or
 * output larger than outcap.
 */
enum ig_status ig_b64_decode(const char *s, size_t len, unsigned char *out,
                             size_t outcap, size_t *outlen) IG_WUR;

/*
 * The same encoding with the same refusals, table-driven: several times
 * faster, but its time depends on the data (table lookups indexed by it),
 * so for public data only - token bodies and footers, never secret keys.
 * libsodium's constant-time codec costs about 5 ns a byte, which on a
 * large token is a third of an Ed25519 check.
 */
size_t ig_b64_encode_public(const void *in, size_t n, char *out, size_t outcap);
enum ig_status ig_b64_decode_public(const char *s, size_t len,
                                    unsigned char *out, size_t outcap,
                                    size_t *outlen) IG_WUR;

#endif
