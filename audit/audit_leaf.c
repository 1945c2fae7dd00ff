/*
 * audit_leaf.c - the top-level "time" of an audit leaf (audit_leaf.h).
 *
 * How it works. A cursor walks the object's members at depth 1: a key
 * (a string), a colon, a value. A value that is not wanted is skipped:
 * a string to its closing quote (a backslash skips the next byte), an
 * object or array by counting brackets outside strings, a scalar up to
 * white space or a structural character. Nesting is a counter, so a deep
 * value costs nothing but its bytes; every step checks the end first.
 */
#include "audit_leaf.h"

#include <string.h>

#include "ig_time.h"

struct cur {
    const char *p, *end;
};

static void
skip_ws(struct cur *c)
{
    while (c->p < c->end &&
           (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

/* At a '"': past the closing quote. -1 when it never closes. *esc: a
   backslash was seen. */
static int
skip_string(struct cur *c, int *esc)
{
    *esc = 0;
    for (c->p++; c->p < c->end; c->p++) {
        if (*c->p == '\\') {
            *esc = 1;
            if (++c->p == c->end)
                return -1;
        } else if (*c->p == '"') {
            c->p++;
            return 0;
        }
    }
    return -1;
}

/* At a value: past it. -1 when it is cut short or empty. A string, an
   object or array (brackets counted outside strings), or a scalar (a
   run of bytes up to white space or a structural character). */
static int
skip_value(struct cur *c)
{
    size_t depth = 0;
    int esc;
    const char *start = c->p;

    if (c->p < c->end && *c->p == '"')
        return skip_string(c, &esc);
    if (c->p < c->end && *c->p != '{' && *c->p != '[') {
        while (c->p < c->end && strchr(",:}]{[\" \t\n\r", *c->p) == NULL)
            c->p++;
        return c->p > start ? 0 : -1;
    }
    while (c->p < c->end) {
        char ch = *c->p;

        if (ch == '"') {
            if (skip_string(c, &esc) != 0)
                return -1;
            continue;
        }
        if (ch == '{' || ch == '[')
            depth++;
        else if ((ch == '}' || ch == ']') && --depth == 0) {
            c->p++;
            return 0;
        }
        c->p++;
    }
    return -1;
}

/* A member's value [val, end): a string without escapes holding a time. */
static enum ig_status
time_value(const char *val, const char *end, int64_t *t)
{
    size_t n = (size_t)(end - val);

    int64_t v;

    if (n < 2 || val[0] != '"' || val[n - 1] != '"' ||
        memchr(val + 1, '\\', n - 2) != NULL ||
        ig_time_parse(val + 1, n - 2, &v) != IG_OK)
        return IG_ERR_NOTFOUND;
    *t = v;
    return IG_OK;
}

enum ig_status
audit_leaf_time(const char *leaf, size_t len, int64_t *t)
{
    struct cur c = {leaf, leaf + len};
    const char *key, *val;
    size_t klen;
    int esc, first = 1;

    skip_ws(&c);
    if (c.p == c.end || *c.p++ != '{')
        return IG_ERR_INVALID;
    for (;;) {
        skip_ws(&c);
        if (c.p < c.end && *c.p == '}' && first)
            return IG_ERR_NOTFOUND;
        if (c.p == c.end || *c.p != '"')
            return IG_ERR_INVALID;
        key = c.p + 1;
        if (skip_string(&c, &esc) != 0)
            return IG_ERR_INVALID;
        klen = (size_t)(c.p - 1 - key);
        skip_ws(&c);
        if (c.p == c.end || *c.p++ != ':')
            return IG_ERR_INVALID;
        skip_ws(&c);
        val = c.p;
        if (skip_value(&c) != 0)
            return IG_ERR_INVALID;
        if (!esc && klen == 4 && memcmp(key, "time", 4) == 0)
            return time_value(val, c.p, t);
        first = 0;
        skip_ws(&c);
        if (c.p < c.end && *c.p == ',') {
            c.p++;
            continue;
        }
        if (c.p < c.end && *c.p == '}')
            return IG_ERR_NOTFOUND;
        return IG_ERR_INVALID;
    }
}
