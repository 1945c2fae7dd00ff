/*
 * audit_util.h - helpers shared by the audit unit tests: JSON vectors,
 * Ed25519 keys from a seed or fresh, verifiers, and signed checkpoints.
 * Test code only; failures fail the running test.
 */
#ifndef AUDIT_UTIL_H
#define AUDIT_UTIL_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "audit_note.h"
#include "ig_key.h"

/* A JSON file below IG_VECTORS_DIR; the caller json_decref()s it. */
json_t *au_load_json(const char *relpath);

/* A signing key from a 32-byte Ed25519 seed, or a fresh one. */
struct ig_signing_key *au_key_from_seed(const unsigned char seed[32]);
struct ig_signing_key *au_key_new(void);

/* The verifier of k under name. */
void au_verifier(const struct ig_signing_key *k, const char *name,
                 struct audit_verifier *v);

/* A checkpoint (origin, size, root) signed by k as name: a malloc'd,
   NUL-terminated note; *len gets its length. */
char *au_sign_checkpoint(const struct ig_signing_key *k, const char *name,
                         const char *origin, uint64_t size,
                         const unsigned char root[32], size_t *len);

/* Sign any text (ending in a newline) as name: malloc'd note. */
char *au_sign_text(const struct ig_signing_key *k, const char *name,
                   const char *text, size_t *len);

#endif
