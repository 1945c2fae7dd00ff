/*
 * audit_redact.h - keyed hashes in place of sensitive values, so the audit
 * log can show that a value was there, and let someone who holds both the
 * value and the key confirm it, without storing it.
 *
 *   placeholder = "hmac-sha256:" + lowercase hex(HMAC-SHA256(key, JCS(v)))
 *
 * where JCS(v) is the RFC 8785 canonical JSON text of the value (so
 * {"b":1,"a":2} and {"a":2,"b":1}, or 1.0 and 1, hash alike). The key is
 * 32 secret bytes (a keyed hash: without it a low-entropy value such as a
 * card number cannot be found by trying them all). Values are named by
 * RFC 6901 JSON pointers into a JSON object; pointers that name nothing
 * are ignored. `intentgate audit hash-value` is audit_redact_text.
 *
 * Thread safe; the caller's key is only read. The canonical text of each
 * value is wiped after hashing.
 */
#ifndef AUDIT_REDACT_H
#define AUDIT_REDACT_H

#include <jansson.h>
#include <stddef.h>

#include "ig_error.h"
#include "ig_hash.h"

#define AUDIT_REDACT_KEY_BYTES 32
#define AUDIT_REDACT_PREFIX IG_HMAC_PREFIX
/* Characters in a placeholder, without the NUL. */
#define AUDIT_REDACT_STRLEN IG_HMAC_STRLEN

/*
 * 1 when p is a JSON pointer this module takes: "/" then tokens separated
 * by "/", "~0" and "~1" the only escapes, valid UTF-8 without control
 * characters, at most IG_AUDIT_POINTER_MAX bytes. The empty pointer (the
 * whole document) is refused: a document is not replaced, only its parts.
 */
int audit_pointer_valid(const char *p);

/* The placeholder of v into out. IG_ERR_INVALID for a value with no
   canonical form, IG_ERR_LIMIT past IG_CANON_MAX_BYTES, IG_ERR_NOMEM. */
enum ig_status audit_redact_value(
    const json_t *v, const unsigned char key[AUDIT_REDACT_KEY_BYTES],
    char out[AUDIT_REDACT_STRLEN + 1], struct ig_err *err) IG_WUR;

/* The same for a value given as JSON text (read by ig_json_parse: any
   top-level value, strict I-JSON). Errors as ig_json_parse and above. */
enum ig_status
audit_redact_text(const char *text, size_t len,
                  const unsigned char key[AUDIT_REDACT_KEY_BYTES],
                  char out[AUDIT_REDACT_STRLEN + 1], struct ig_err *err) IG_WUR;

/*
 * Replace, in doc (a JSON object), the value at each of the n pointers by
 * its placeholder string. Pointers are applied outermost first, so when
 * both "/a" and "/a/b" are given, "/a" is hashed as it was (with its b)
 * and "/a/b" then names nothing. An array index must be "0" or have no
 * leading zero and be below the array's size ("-" names nothing).
 * IG_ERR_INVALID when doc is not an object or a pointer is not valid
 * (checked before anything changes); IG_ERR_NOMEM and the errors of
 * audit_redact_value may leave doc partly redacted - do not log it then.
 */
enum ig_status audit_redact(json_t *doc, const char *const *pointers, size_t n,
                            const unsigned char key[AUDIT_REDACT_KEY_BYTES],
                            struct ig_err *err) IG_WUR;

#endif
