/*
 * ig_json.h - strict reader for untrusted JSON text.
 *
 * Parses with jansson under I-JSON rules (RFC 7493) and intentgate's limits:
 *   - the text is at most IG_JSON_MAX_BYTES and valid UTF-8;
 *   - no duplicate object keys, no lone surrogate escapes, no NaN/Infinity;
 *   - every number is read as an IEEE double (json_real); a number whose
 *     magnitude overflows a double is refused;
 *   - nesting at most IG_JSON_MAX_DEPTH, at most IG_JSON_MAX_OBJECT_MEMBERS
 *     per object, IG_JSON_MAX_ARRAY_LENGTH per array, IG_JSON_MAX_VALUES in
 *     the whole document;
 *   - "\u0000" is allowed inside strings (jansson's JSON_ALLOW_NUL): use
 *     json_string_length(), never strlen(), on parsed strings; jansson 2.14
 *     refuses it inside object keys;
 *   - any top-level value is accepted; surrounding whitespace only.
 * On failure err->msg names the problem and err->line / err->column give its
 * 1-based position in the text (columns count bytes).
 */
#ifndef IG_JSON_H
#define IG_JSON_H

#include <jansson.h>
#include <stddef.h>

#include "ig_error.h"
#include "ig_limits.h"

/*
 * Parse len bytes of text (need not be NUL-terminated). On IG_OK *out holds
 * a new reference the caller must json_decref(). On failure *out is NULL and
 * the status is IG_ERR_INVALID (malformed), IG_ERR_LIMIT (over a limit) or
 * IG_ERR_NOMEM. Thread safe.
 */
enum ig_status ig_json_parse(const char *text, size_t len, json_t **out,
                             struct ig_err *err) IG_WUR;

/*
 * 1 when p is an RFC 6901 JSON pointer: "" (the whole document) or "/"
 * followed by tokens separated by "/", with "~" only as "~0" (a "~") or
 * "~1" (a "/"), at most IG_AUDIT_POINTER_MAX bytes. 0 otherwise, and for
 * NULL. Thread safe.
 */
int ig_json_pointer_valid(const char *p);

/*
 * The value pointer p names in doc, borrowed (valid while doc lives and is
 * not changed), or NULL when p is not valid (ig_json_pointer_valid) or
 * names nothing: a missing member, a step into a scalar, an array index
 * past the end, "-", or a token that is not an index ("01", "+1", "1a").
 * doc may be NULL (names nothing). Allocates nothing; thread safe.
 */
const json_t *ig_json_pointer_get(const json_t *doc, const char *p);

/* The last step of a pointer: the value it was taken from, and the token
   it took (unescaped), as an array index when parent is an array. */
struct ig_json_step {
    const json_t *parent;               /* an object or an array; NULL for "" */
    char key[IG_AUDIT_POINTER_MAX + 1]; /* key_len bytes and a NUL */
    size_t key_len;
    size_t index; /* when parent is an array */
};

/*
 * ig_json_pointer_get, with the last step in *last, for a caller that
 * replaces the value in its parent. *last is meaningful only when the
 * result is not NULL. Allocates nothing; thread safe.
 */
const json_t *ig_json_pointer_find(const json_t *doc, const char *p,
                                   struct ig_json_step *last);

/*
 * jansson's iterator functions take non-const pointers but do not write
 * through them: this drops the const without a cast warning, for walking a
 * const value, or for changing a value that ig_json_pointer_find found in
 * a document the caller owns.
 */
static inline json_t *
ig_json_unconst(const json_t *v)
{
    union {
        const json_t *c;
        json_t *m;
    } u;

    u.c = v;
    return u.m;
}

#endif
