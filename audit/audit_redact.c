/*
 * audit_redact.c - HMAC-SHA256 placeholders for sensitive values at JSON
 * pointers (audit_redact.h).
 *
 * How it works. A value's RFC 8785 canonical form is MACed with the
 * 32-byte key (ig_hash_json_hmac, which wipes the bytes). audit_redact
 * checks every pointer first, then resolves them by increasing depth with
 * core's RFC 6901 walk (ig_json_pointer_find: objects by key, "~1" and
 * "~0" unescaped, arrays by decimal index), and a missing member, an index
 * out of range or a scalar on the way means "nothing there" - ignored. The
 * value found is replaced in its parent by the placeholder string.
 */
#include "audit_redact.h"

#include <string.h>

#include "audit_int.h"
#include "ig_hash.h"
#include "ig_json.h"

_Static_assert(AUDIT_REDACT_KEY_BYTES == IG_SHA256_BYTES,
               "the redaction key is an HMAC-SHA256 key");

int
audit_pointer_valid(const char *p)
{
    /* ig_json_pointer_valid bounds p's length first. */
    return ig_json_pointer_valid(p) && p[0] != '\0' &&
           audit_text_valid(p, strlen(p), 0);
}

enum ig_status
audit_redact_value(const json_t *v,
                   const unsigned char key[AUDIT_REDACT_KEY_BYTES],
                   char out[AUDIT_REDACT_STRLEN + 1], struct ig_err *err)
{
    return ig_hash_json_hmac(v, key, out, err);
}

enum ig_status
audit_redact_text(const char *text, size_t len,
                  const unsigned char key[AUDIT_REDACT_KEY_BYTES],
                  char out[AUDIT_REDACT_STRLEN + 1], struct ig_err *err)
{
    json_t *v = NULL;
    enum ig_status st;

    out[0] = '\0';
    st = ig_json_parse(text, len, &v, err);
    if (st == IG_OK)
        st = audit_redact_value(v, key, out, err);
    json_decref(v);
    return st;
}

static size_t
depth(const char *p)
{
    size_t d = 0;

    for (; *p != '\0'; p++)
        d += *p == '/';
    return d;
}

/* Redact the value at one (valid) pointer, if there is one. */
static enum ig_status
redact_one(json_t *doc, const char *p,
           const unsigned char key[AUDIT_REDACT_KEY_BYTES], struct ig_err *err)
{
    char ph[AUDIT_REDACT_STRLEN + 1];
    struct ig_json_step last;
    const json_t *cur;
    json_t *parent;
    enum ig_status st;
    int rc;

    cur = ig_json_pointer_find(doc, p, &last);
    if (cur == NULL)
        return IG_OK; /* names nothing */
    st = audit_redact_value(cur, key, ph, err);
    if (st != IG_OK)
        return st;
    /* The parent lies inside doc, which is ours to change. */
    parent = ig_json_unconst(last.parent);
    /* Both _set_new calls steal the new string's reference, even on
       failure; json_string's NULL (out of memory) makes them fail. */
    if (json_is_object(parent))
        rc = json_object_setn_new(parent, last.key, last.key_len,
                                  json_string(ph));
    else
        rc = json_array_set_new(parent, last.index, json_string(ph));
    if (rc != 0)
        return ig_err_set(err, IG_ERR_NOMEM, "redact: out of memory");
    return IG_OK;
}

enum ig_status
audit_redact(json_t *doc, const char *const *pointers, size_t n,
             const unsigned char key[AUDIT_REDACT_KEY_BYTES],
             struct ig_err *err)
{
    size_t i, d, deepest = 0;
    enum ig_status st;

    if (!json_is_object(doc))
        return ig_err_set(err, IG_ERR_INVALID, "redact: not a JSON object");
    for (i = 0; i < n; i++) {
        if (!audit_pointer_valid(pointers[i]))
            return ig_err_set(err, IG_ERR_INVALID,
                              "redact: pointer %zu is not a valid JSON "
                              "pointer",
                              i + 1);
        d = depth(pointers[i]);
        if (d > deepest)
            deepest = d;
    }
    /* Outermost first: a value is hashed before any part of it is. */
    for (d = 1; d <= deepest; d++)
        for (i = 0; i < n; i++) {
            if (depth(pointers[i]) != d)
                continue;
            st = redact_one(doc, pointers[i], key, err);
            if (st != IG_OK)
                return st;
        }
    return IG_OK;
}
