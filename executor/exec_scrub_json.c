/*
 * exec_scrub_json.c - scrub a decoded JSON value (exec_scrub_json in
 * exec_scrub.h).
 *
 * How it works. A depth-first walk, at most IG_JSON_MAX_DEPTH deep. Every
 * string goes through exec_scrub_bytes and is replaced by a new string
 * when anything was removed (by the withheld marker when the result would
 * not be UTF-8); a number whose canonical text holds a spelling becomes
 * the marker string. Array members are replaced in place. An object's
 * values are walked first; only when one of its keys holds a spelling is
 * the object rebuilt as a copy with scrubbed keys. A scrubbed key already
 * in the copy is renamed " (2)", " (3)".. (skipping names that hold a
 * spelling), at most KEY_RETRIES tries; with no free name the member is
 * dropped.
 */
#include "exec_scrub.h"

#include <stdio.h>
#include <string.h>

#include "exec_scrub_int.h"
#include "ig_buf.h"
#include "ig_canon.h"
#include "ig_limits.h"
#include "ig_text.h"

#define KEY_RETRIES 64 /* " (2)".. suffixes tried on a key collision */

/* ---- JSON values ---- */

/* t scrubbed into b (cap: room for a marker per byte); *changed when
   anything was removed (b then holds the text, valid UTF-8 or the
   withheld marker). */
static enum ig_status
scrub_text(const struct exec_scrub *s, const char *t, size_t n,
           struct ig_buf *b, int *changed)
{
    enum ig_status st;

    ig_buf_init(b, n * SCRUB_MARKER_LEN + sizeof(EXEC_SCRUB_WITHHELD));
    *changed = 0;
    if ((st = exec_scrub_bytes(s, t, n, 0, b, changed)) != IG_OK)
        return st;
    if (*changed && !ig_utf8_valid(b->data, b->len)) {
        ig_buf_reset(b);
        return ig_buf_adds(b, s->withheld_bad ? "" : EXEC_SCRUB_WITHHELD);
    }
    return IG_OK;
}

static enum ig_status walk(const struct exec_scrub *s, json_t **v, int *found,
                           int depth);

/* obj[key] = val (stolen), renaming key " (2)".. while it is taken or the
   new name holds a spelling; dropped when no name works. */
static enum ig_status
set_renamed(const struct exec_scrub *s, json_t *obj, const char *key,
            size_t klen, json_t *val, int *found)
{
    char name[sizeof(EXEC_SCRUB_WITHHELD) + 16];
    size_t cut = klen < 48 ? klen : 48;
    int i, h;

    if (json_object_getn(obj, key, klen) == NULL)
        return json_object_setn_new(obj, key, klen, val) == 0 ? IG_OK
                                                              : IG_ERR_NOMEM;
    *found = 1;
    while (cut > 0 && cut < klen && ((unsigned char)key[cut] & 0xC0) == 0x80)
        cut--; /* keep whole UTF-8 characters */
    for (i = 2; i < KEY_RETRIES + 2; i++) {
        (void)snprintf(name, sizeof(name), "%.*s (%d)", (int)cut, key, i);
        if ((h = exec_scrub_holds(s, name, strlen(name))) < 0) {
            json_decref(val);
            return IG_ERR_NOMEM;
        }
        if (!h && json_object_get(obj, name) == NULL)
            return json_object_set_new(obj, name, val) == 0 ? IG_OK
                                                            : IG_ERR_NOMEM;
    }
    json_decref(val); /* no free name: the member is dropped */
    return IG_OK;
}

/* A copy of *obj with scrubbed keys (values already scrubbed). */
static enum ig_status
rekey(const struct exec_scrub *s, json_t **obj, int *found)
{
    json_t *copy = json_object(), *val;
    const char *key;
    struct ig_buf b;
    enum ig_status st = copy != NULL ? IG_OK : IG_ERR_NOMEM;
    size_t klen;
    void *it;
    int changed;

    for (it = json_object_iter(*obj); st == IG_OK && it != NULL;
         it = json_object_iter_next(*obj, it)) {
        key = json_object_iter_key(it);
        klen = json_object_iter_key_len(it);
        val = json_incref(json_object_iter_value(it));
        if ((st = scrub_text(s, key, klen, &b, &changed)) == IG_OK)
            st = set_renamed(s, copy, changed ? b.data : key,
                             changed ? b.len : klen, val, found);
        else
            json_decref(val);
        ig_buf_release(&b);
    }
    if (st != IG_OK) {
        json_decref(copy);
        return st;
    }
    json_decref(*obj);
    *obj = copy;
    return IG_OK;
}

/* *v becomes r (NULL: out of memory). */
static enum ig_status
replace(json_t **v, json_t *r)
{
    if (r == NULL)
        return IG_ERR_NOMEM;
    json_decref(*v);
    *v = r;
    return IG_OK;
}

/* Scrub a container's member (a new reference in *val, handed back in
 *val, possibly replaced); on failure it is released. */
static enum ig_status
walk_child(const struct exec_scrub *s, json_t **val, int *found, int depth)
{
    enum ig_status st = walk(s, val, found, depth + 1);

    if (st != IG_OK) {
        json_decref(*val);
        *val = NULL;
    }
    return st;
}

static enum ig_status
walk_object(const struct exec_scrub *s, json_t **obj, int *found, int depth)
{
    json_t *val;
    enum ig_status st;
    void *it;
    int dirty = 0, h;

    for (it = json_object_iter(*obj); it != NULL;
         it = json_object_iter_next(*obj, it)) {
        val = json_incref(json_object_iter_value(it));
        if ((st = walk_child(s, &val, found, depth)) != IG_OK)
            return st;
        /* json_object_iter_set_new steals val, also when it fails. */
        if (json_object_iter_set_new(*obj, it, val) != 0)
            return IG_ERR_NOMEM;
        h = exec_scrub_holds(s, json_object_iter_key(it),
                             json_object_iter_key_len(it));
        if (h < 0)
            return IG_ERR_NOMEM;
        dirty |= h;
    }
    if (!dirty)
        return IG_OK;
    *found = 1;
    return rekey(s, obj, found);
}

static enum ig_status
walk(const struct exec_scrub *s, json_t **v, int *found, int depth)
{
    char num[IG_NUMBER_STRMAX];
    json_t *val;
    struct ig_buf b;
    enum ig_status st = IG_OK;
    size_t i, n;
    int changed, h;

    if (depth > IG_JSON_MAX_DEPTH)
        return IG_ERR_LIMIT;
    if (json_is_object(*v))
        return walk_object(s, v, found, depth);
    for (i = 0; json_is_array(*v) && i < json_array_size(*v); i++) {
        val = json_incref(json_array_get(*v, i));
        if ((st = walk_child(s, &val, found, depth)) != IG_OK)
            return st;
        /* json_array_set_new steals val, also when it fails. */
        if (json_array_set_new(*v, i, val) != 0)
            return IG_ERR_NOMEM;
    }
    if (json_is_string(*v)) {
        st = scrub_text(s, json_string_value(*v), json_string_length(*v), &b,
                        &changed);
        if (st == IG_OK && changed) {
            *found = 1;
            st = replace(v, json_stringn(b.data, b.len));
        }
        ig_buf_release(&b);
    } else if (json_is_number(*v) &&
               ig_canon_number(json_number_value(*v), num, &n) == IG_OK) {
        if ((h = exec_scrub_holds(s, num, n)) < 0)
            return IG_ERR_NOMEM;
        if (h) {
            *found = 1;
            st = replace(v, json_string(s->mark_bad ? "" : EXEC_SCRUB_MARKER));
        }
    }
    return st;
}

enum ig_status
exec_scrub_json(const struct exec_scrub *s, json_t **v, int *found)
{
    *found = 0;
    if (s == NULL || *v == NULL)
        return IG_OK;
    return walk(s, v, found, 1);
}
