/*
 * audit_redact.c - HMAC-SHA256 placeholders for sensitive values at JSON
 * pointers (audit_redact.h).
 *
 * How it works. A value is written in its RFC 8785 canonical form
 * (ig_canon_write) into a capped buffer, MACed with the 32-byte key
 * (crypto_auth_hmacsha256), and the buffer is wiped. audit_redact checks
 * every pointer first, then resolves them by increasing depth: each one
 * walks from the document through objects (by key, "~1" and "~0"
 * unescaped) and arrays (by decimal index), and a missing member, an index
 * out of range or a scalar on the way means "nothing there" - ignored. The
 * value found is replaced in its parent by the placeholder string.
 */
#include "audit_redact.h"

#include <sodium.h>
#include <string.h>

#include "audit_int.h"
#include "ig_buf.h"
#include "ig_canon.h"
#include "ig_json.h"
#include "ig_limits.h"

int
audit_pointer_valid(const char *p)
{
    size_t n, i;

    if (p == NULL)
        return 0;
    n = strnlen(p, IG_AUDIT_POINTER_MAX + 1);
    if (n == 0 || n > IG_AUDIT_POINTER_MAX || p[0] != '/' ||
        !audit_text_valid(p, n, 0))
        return 0;
    for (i = 0; i < n; i++)
        if (p[i] == '~' && p[i + 1] != '0' && p[i + 1] != '1')
            return 0;
    return 1;
}

enum ig_status
audit_redact_value(const json_t *v,
                   const unsigned char key[AUDIT_REDACT_KEY_BYTES],
                   char out[AUDIT_REDACT_STRLEN + 1], struct ig_err *err)
{
    unsigned char mac[crypto_auth_hmacsha256_BYTES];
    struct ig_buf b;
    enum ig_status st;

    out[0] = '\0';
    ig_buf_init(&b, IG_CANON_MAX_BYTES);
    st = ig_canon_write(v, &b, err);
    if (st != IG_OK)
        goto out;
    (void)crypto_auth_hmacsha256(mac, (const unsigned char *)b.data, b.len,
                                 key);
    memcpy(out, AUDIT_REDACT_PREFIX, strlen(AUDIT_REDACT_PREFIX));
    (void)sodium_bin2hex(out + strlen(AUDIT_REDACT_PREFIX),
                         AUDIT_REDACT_STRLEN + 1 - strlen(AUDIT_REDACT_PREFIX),
                         mac, sizeof(mac));
out:
    ig_buf_release_secret(&b);
    return st;
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

/* The token at p (up to '/' or the end), unescaped into tok; returns the
   characters it took in p. */
static size_t
take_token(const char *p, char tok[IG_AUDIT_POINTER_MAX + 1])
{
    size_t i = 0, n = 0;

    while (p[i] != '\0' && p[i] != '/') {
        if (p[i] == '~') {
            tok[n++] = p[i + 1] == '1' ? '/' : '~';
            i += 2;
        } else {
            tok[n++] = p[i++];
        }
    }
    tok[n] = '\0';
    return i;
}

/* An RFC 6901 array index: "0", or digits without a leading zero. */
static int
array_index(const char *tok, size_t *out)
{
    uint64_t v;

    if (audit_parse_u64(tok, strlen(tok), &v) != IG_OK || v > SIZE_MAX)
        return 0;
    *out = (size_t)v;
    return 1;
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
    char tok[IG_AUDIT_POINTER_MAX + 1], ph[AUDIT_REDACT_STRLEN + 1];
    json_t *parent = NULL, *cur = doc;
    enum ig_status st;
    size_t idx = 0;
    int rc;

    while (*p == '/') {
        p += 1 + take_token(p + 1, tok);
        parent = cur;
        if (json_is_object(parent))
            cur = json_object_get(parent, tok);
        else if (json_is_array(parent) && array_index(tok, &idx))
            cur = json_array_get(parent, idx);
        else
            cur = NULL;
        if (cur == NULL)
            return IG_OK; /* names nothing */
    }
    st = audit_redact_value(cur, key, ph, err);
    if (st != IG_OK)
        return st;
    /* Both _set_new calls steal the new string's reference, even on
       failure; json_string's NULL (out of memory) makes them fail. */
    if (json_is_object(parent))
        rc = json_object_set_new(parent, tok, json_string(ph));
    else
        rc = json_array_set_new(parent, idx, json_string(ph));
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
