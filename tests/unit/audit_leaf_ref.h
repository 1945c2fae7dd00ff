/*
 * audit_leaf_ref.h - the first, byte-at-a-time audit_leaf_time, kept as
 * the reference the fast scanner (audit/audit_leaf.c) is checked against:
 * test_audit_leaf.c and fuzz_leaf.c require both to give the same status
 * and time on every input. Test code only; same contract as
 * audit_leaf_time (audit_leaf.h).
 */
#ifndef AUDIT_LEAF_REF_H
#define AUDIT_LEAF_REF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ig_error.h"
#include "ig_time.h"

struct ref_cur {
    const char *p, *end;
};

static void
ref_skip_ws(struct ref_cur *c)
{
    while (c->p < c->end &&
           (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

/* At a '"': past the closing quote. -1 when it never closes. *esc: a
   backslash was seen. */
static int
ref_skip_string(struct ref_cur *c, int *esc)
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
ref_skip_value(struct ref_cur *c)
{
    size_t depth = 0;
    int esc;
    const char *start = c->p;

    if (c->p < c->end && *c->p == '"')
        return ref_skip_string(c, &esc);
    if (c->p < c->end && *c->p != '{' && *c->p != '[') {
        while (c->p < c->end && strchr(",:}]{[\" \t\n\r", *c->p) == NULL)
            c->p++;
        return c->p > start ? 0 : -1;
    }
    while (c->p < c->end) {
        char ch = *c->p;

        if (ch == '"') {
            if (ref_skip_string(c, &esc) != 0)
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
ref_time_value(const char *val, const char *end, int64_t *t)
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

static enum ig_status
ref_leaf_time(const char *leaf, size_t len, int64_t *t)
{
    struct ref_cur c = {leaf, leaf + len};
    const char *key, *val;
    size_t klen;
    int esc, first = 1;

    ref_skip_ws(&c);
    if (c.p == c.end || *c.p++ != '{')
        return IG_ERR_INVALID;
    for (;;) {
        ref_skip_ws(&c);
        if (c.p < c.end && *c.p == '}' && first)
            return IG_ERR_NOTFOUND;
        if (c.p == c.end || *c.p != '"')
            return IG_ERR_INVALID;
        key = c.p + 1;
        if (ref_skip_string(&c, &esc) != 0)
            return IG_ERR_INVALID;
        klen = (size_t)(c.p - 1 - key);
        ref_skip_ws(&c);
        if (c.p == c.end || *c.p++ != ':')
            return IG_ERR_INVALID;
        ref_skip_ws(&c);
        val = c.p;
        if (ref_skip_value(&c) != 0)
            return IG_ERR_INVALID;
        if (!esc && klen == 4 && memcmp(key, "time", 4) == 0)
            return ref_time_value(val, c.p, t);
        first = 0;
        ref_skip_ws(&c);
        if (c.p < c.end && *c.p == ',') {
            c.p++;
            continue;
        }
        if (c.p < c.end && *c.p == '}')
            return IG_ERR_NOTFOUND;
        return IG_ERR_INVALID;
    }
}

#endif
