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

/* Append s (len bytes, valid UTF-8) as a canonical JSON string. Same
   errors as ig_canon_write. */
enum ig_status ig_canon_string(const char *s, size_t len, struct ig_buf *out,
                               struct ig_err *err) IG_WUR;

/*
 * An object written member by member (ig_canon_obj.c), for the records the
 * PDP writes on every decision: building a jansson object only to
 * serialise it costs an allocation per member and a sort per object, and
 * values that are already canonical text (the intent binding, say) would
 * be parsed or serialised again. Keys are ASCII (no '"', '\\' or
 * controls) and must come in canonical order, which for ASCII is byte
 * order: a key out of order or not ASCII fails the object with
 * IG_ERR_INVALID, so the output is canonical or refused, never subtly off.
 * The first failure sticks; ig_canon_obj_end reports it.
 *
 *   struct ig_canon_obj o, g;
 *   ig_canon_obj_begin(&o, &buf, &err);
 *   ig_canon_obj_str(&o, "decision", "ALLOW");
 *   ig_canon_obj_open(&o, "grant", &g);     nested, on the same buffer
 *   ig_canon_obj_str(&g, "jti", jti);
 *   ig_canon_obj_end(&g);                   before o is written again
 *   ig_canon_obj_raw(&o, "reasons", text, len);   already canonical
 *   st = ig_canon_obj_end(&o);
 */
struct ig_canon_obj {
    struct ig_buf *out;
    struct ig_err *err;
    const char *last; /* the previous key; NULL before the first */
    struct ig_canon_obj *parent;
    enum ig_status st;
};

void ig_canon_obj_begin(struct ig_canon_obj *o, struct ig_buf *out,
                        struct ig_err *err);
/* A string member (s NUL-terminated, valid UTF-8). */
void ig_canon_obj_str(struct ig_canon_obj *o, const char *key, const char *s);
/* A member whose value is canonical JSON text already (the caller's
   promise: it is copied as it is). */
void ig_canon_obj_raw(struct ig_canon_obj *o, const char *key,
                      const char *canon, size_t len);
/* A member whose value is the object child, written next on o's buffer
   until ig_canon_obj_end(child). */
void ig_canon_obj_open(struct ig_canon_obj *o, const char *key,
                       struct ig_canon_obj *child);
/* Close the object; its first failure (IG_OK when none). A child's
   failure is also its parent's. */
enum ig_status ig_canon_obj_end(struct ig_canon_obj *o);

#endif
