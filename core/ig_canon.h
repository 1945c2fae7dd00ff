/*
 * ig_canon.h - RFC 8785 JSON Canonicalization Scheme (JCS) serializer.
 *
 * jansson's json_dumps is not canonical; this is. Rules:
 *   - object members sorted by key, comparing keys as arrays of UTF-16 code
 *     units (not UTF-8 bytes, not code points); no whitespace anywhere;
 *   - strings: '"' and '\\' escaped, U+0008/0009/000A/000C/000D as
 *     \b \t \n \f \r, other controls below U+0020 as \u00xx (lowercase hex),
 *     everything else (including U+007F and non-ASCII) as raw UTF-8;
 *   - numbers as ECMAScript Number.prototype.toString: shortest round-trip
 *     digits, exponent form outside [1e-6, 1e21), -0 written as 0;
 *   - true, false, null as literals.
 * Values come from ig_json_parse() or are built in code; json_integer values
 * are written as the double they equal and refused when their magnitude is
 * above 2^53 (they would not round-trip). NaN and infinities are refused.
 */
#ifndef IG_CANON_H
#define IG_CANON_H

#include <jansson.h>
#include <stddef.h>

#include "ig_buf.h"
#include "ig_error.h"

/* Longest text ig_canon_number() writes, including the NUL. */
#define IG_NUMBER_STRMAX 32

/*
 * Append the canonical form of v to out (which keeps its own cap; the
 * caller normally uses IG_CANON_MAX_BYTES). IG_ERR_INVALID for a value that
 * has no canonical form (NaN, infinity, integer beyond 2^53, string that is
 * not valid UTF-8), IG_ERR_LIMIT past out's cap, IG_ERR_NOMEM. On failure
 * out may hold a partial result. Thread safe for distinct out buffers.
 */
enum ig_status ig_canon_write(const json_t *v, struct ig_buf *out,
                              struct ig_err *err) IG_WUR;

/*
 * Write d as ECMAScript would (JSON.stringify) into out, NUL-terminated;
 * *len (when not NULL) receives the length. IG_ERR_INVALID for NaN and
 * infinities.
 */
enum ig_status ig_canon_number(double d, char out[IG_NUMBER_STRMAX],
                               size_t *len) IG_WUR;

/*
 * Convenience: parse text strictly (ig_json_parse) and append its canonical
 * form to out. Same errors as both.
 */
enum ig_status ig_canon_text(const char *text, size_t len, struct ig_buf *out,
                             struct ig_err *err) IG_WUR;

#endif
