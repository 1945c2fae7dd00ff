/*
 * ig_canon_obj.c - a canonical JSON object written member by member (see
 * ig_canon.h): the keys checked to be ASCII and in order, the values
 * written by the canonical string writer or copied when already
 * canonical.
 */
#include "ig_canon.h"

#include <string.h>

static void
fail(struct ig_canon_obj *o, enum ig_status st, const char *why,
     const char *key)
{
    if (o->st == IG_OK)
        o->st = ig_err_set(o->err, st, "%s: %s", why, key);
}

static void
add(struct ig_canon_obj *o, const void *p, size_t n)
{
    enum ig_status st;

    if (o->st != IG_OK)
        return;
    st = ig_buf_add(o->out, p, n);
    if (st == IG_ERR_LIMIT)
        o->st = ig_err_set(o->err, st, "canonical form longer than %zu bytes",
                           o->out->max);
    else if (st != IG_OK)
        o->st = ig_err_set(o->err, st, "out of memory");
}

/* A key only printable ASCII without '"' and '\\' needs no escaping, and
   its UTF-16 order is its byte order. */
static int
plain_key(const char *k)
{
    if (*k == '\0')
        return 0;
    for (; *k != '\0'; k++)
        if (*k < 0x20 || *k > 0x7e || *k == '"' || *k == '\\')
            return 0;
    return 1;
}

/* Write ,"key": after checking the key comes next. */
static void
member(struct ig_canon_obj *o, const char *key)
{
    if (o->st != IG_OK)
        return;
    if (!plain_key(key))
        fail(o, IG_ERR_INVALID, "object key is not plain ASCII", key);
    else if (o->last != NULL && strcmp(o->last, key) >= 0)
        fail(o, IG_ERR_INVALID, "object key out of canonical order", key);
    if (o->st != IG_OK)
        return;
    if (o->last != NULL)
        add(o, ",", 1);
    o->last = key;
    add(o, "\"", 1);
    add(o, key, strlen(key));
    add(o, "\":", 2);
}

void
ig_canon_obj_begin(struct ig_canon_obj *o, struct ig_buf *out,
                   struct ig_err *err)
{
    o->out = out;
    o->err = err;
    o->last = NULL;
    o->parent = NULL;
    o->st = IG_OK;
    add(o, "{", 1);
}

void
ig_canon_obj_str(struct ig_canon_obj *o, const char *key, const char *s)
{
    member(o, key);
    if (o->st != IG_OK)
        return;
    if (s == NULL)
        fail(o, IG_ERR_INVALID, "missing value", key);
    else
        o->st = ig_canon_string(s, strlen(s), o->out, o->err);
}

void
ig_canon_obj_raw(struct ig_canon_obj *o, const char *key, const char *canon,
                 size_t len)
{
    member(o, key);
    if (canon == NULL || len == 0)
        fail(o, IG_ERR_INVALID, "missing value", key);
    add(o, canon, len);
}

void
ig_canon_obj_open(struct ig_canon_obj *o, const char *key,
                  struct ig_canon_obj *child)
{
    member(o, key);
    ig_canon_obj_begin(child, o->out, o->err);
    child->parent = o;
    if (o->st != IG_OK)
        child->st = o->st;
}

enum ig_status
ig_canon_obj_end(struct ig_canon_obj *o)
{
    add(o, "}", 1);
    if (o->parent != NULL && o->parent->st == IG_OK)
        o->parent->st = o->st;
    return o->st;
}
