/*
 * appr_show.c - the approver's JSON printer (see appr_show.h).
 *
 * Strings are decoded as UTF-8 (a byte that is not part of a well-formed
 * sequence is written as \ufffd: the views come from parsed JSON, so it
 * does not happen) and each code point is copied, or escaped when JSON
 * requires it or ig_utf8_hidden() says a human would not see it for what
 * it is. Object keys are sorted byte-wise so two views of one intent read
 * the same.
 */
#include "appr_show.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ig_canon.h"
#include "ig_json.h"
#include "ig_text.h"

#define JSON_MAX_DEPTH 64 /* views come from ig_json_parse: 32 at most */

static enum ig_status pretty(struct ig_buf *t, const json_t *v, int depth,
                             unsigned flags);

/* \uXXXX for cp, as a surrogate pair past U+FFFF. */
static enum ig_status
add_u(struct ig_buf *t, uint32_t cp)
{
    char esc[16];

    if (cp > 0xffff) {
        cp -= 0x10000;
        (void)snprintf(esc, sizeof(esc), "\\u%04x\\u%04x",
                       (unsigned)(0xd800 + (cp >> 10)),
                       (unsigned)(0xdc00 + (cp & 0x3ff)));
    } else {
        (void)snprintf(esc, sizeof(esc), "\\u%04x", (unsigned)cp);
    }
    return ig_buf_adds(t, esc);
}

enum ig_status
appr_show_string(struct ig_buf *t, const char *s, size_t n, unsigned flags)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0, k;
    uint32_t cp;
    enum ig_status st = ig_buf_addc(t, '"');

    while (st == IG_OK && i < n) {
        k = ig_utf8_next(u + i, n - i, &cp);
        if (k == 0) {
            st = add_u(t, 0xfffd);
            k = 1;
        } else if (cp == '"' || cp == '\\') {
            st = ig_buf_addc(t, '\\');
            if (st == IG_OK)
                st = ig_buf_addc(t, (char)cp);
        } else if (cp == '\n') {
            st = ig_buf_adds(t, "\\n");
        } else if (cp == '\r') {
            st = ig_buf_adds(t, "\\r");
        } else if (cp == '\t') {
            st = ig_buf_adds(t, "\\t");
        } else if (ig_utf8_hidden(cp) ||
                   (cp == '`' && (flags & APPR_SHOW_NO_BACKTICK))) {
            st = add_u(t, cp);
        } else {
            st = ig_buf_add(t, s + i, k);
        }
        i += k;
    }
    return st == IG_OK ? ig_buf_addc(t, '"') : st;
}

static enum ig_status
indent(struct ig_buf *t, int depth)
{
    enum ig_status st = ig_buf_addc(t, '\n');
    int i;

    for (i = 0; st == IG_OK && i < depth; i++)
        st = ig_buf_adds(t, "  ");
    return st;
}

static int
key_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The n members of an object (keys, sorted) or elements of an array (keys
   NULL) of v, one a line at depth + 1, between brackets; n > 0. */
static enum ig_status
items_out(struct ig_buf *t, const json_t *v, const char *const *keys, size_t n,
          int depth, unsigned flags)
{
    size_t i;
    enum ig_status st = ig_buf_addc(t, keys != NULL ? '{' : '[');

    for (i = 0; st == IG_OK && i < n; i++) {
        if (i > 0)
            st = ig_buf_addc(t, ',');
        if (st == IG_OK)
            st = indent(t, depth + 1);
        if (st == IG_OK && keys != NULL)
            st = appr_show_string(t, keys[i], strlen(keys[i]), flags);
        if (st == IG_OK && keys != NULL)
            st = ig_buf_adds(t, ": ");
        if (st == IG_OK)
            st = pretty(t,
                        keys != NULL ? json_object_get(v, keys[i])
                                     : json_array_get(v, i),
                        depth + 1, flags);
    }
    if (st == IG_OK)
        st = indent(t, depth);
    return st == IG_OK ? ig_buf_addc(t, keys != NULL ? '}' : ']') : st;
}

static enum ig_status
object_out(struct ig_buf *t, const json_t *v, int depth, unsigned flags)
{
    size_t n = json_object_size(v), i = 0;
    const char **keys, *k;
    json_t *e;
    enum ig_status st;

    if (n == 0)
        return ig_buf_adds(t, "{}");
    if ((keys = malloc(n * sizeof(*keys))) == NULL)
        return IG_ERR_NOMEM;
    json_object_foreach(ig_json_unconst(v), k, e)
    {
        (void)e;
        keys[i++] = k;
    }
    qsort(keys, n, sizeof(*keys), key_cmp);
    st = items_out(t, v, keys, n, depth, flags);
    free(keys);
    return st;
}

static enum ig_status
pretty(struct ig_buf *t, const json_t *v, int depth, unsigned flags)
{
    char num[IG_NUMBER_STRMAX];

    if (depth > JSON_MAX_DEPTH)
        return IG_ERR_LIMIT;
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return object_out(t, v, depth, flags);
    case JSON_ARRAY:
        if (json_array_size(v) == 0)
            return ig_buf_adds(t, "[]");
        return items_out(t, v, NULL, json_array_size(v), depth, flags);
    case JSON_STRING:
        return appr_show_string(t, json_string_value(v), json_string_length(v),
                                flags);
    case JSON_INTEGER:
        (void)snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT,
                       json_integer_value(v));
        return ig_buf_adds(t, num);
    case JSON_REAL:
        if (ig_canon_number(json_real_value(v), num, NULL) != IG_OK)
            return IG_ERR_INVALID;
        return ig_buf_adds(t, num);
    case JSON_TRUE:
        return ig_buf_adds(t, "true");
    case JSON_FALSE:
        return ig_buf_adds(t, "false");
    case JSON_NULL:
    default:
        return ig_buf_adds(t, "null");
    }
}

enum ig_status
appr_show_json(struct ig_buf *b, const json_t *v, unsigned flags)
{
    if (v == NULL)
        return ig_buf_adds(b, "null");
    return pretty(b, v, 0, flags);
}
