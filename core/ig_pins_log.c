/*
 * ig_pins_log.c - the pin file's lines (format in ig_pins.h): reading one
 * line strictly, and folding lines into the state.
 *
 * A line is accepted only when it is exactly what a writer would have
 * written: strict JSON (ig_json_parse) whose canonical form is the line
 * byte for byte, exactly the members of its event, each value checked,
 * and for "changed" a hash that is the definition's. Then the event must
 * follow from the state before it (ig_pins.h). Nothing is repaired or
 * skipped: the file decides which tool definitions an agent may see, so
 * a line we do not understand stops the fold and names its number.
 */
#include "ig_pins_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ig_buf.h"
#include "ig_canon.h"
#include "ig_json.h"

int
ig_pins_word_valid(const char *s, size_t max)
{
    size_t i;

    for (i = 0; s[i] != '\0'; i++)
        if (i >= max || s[i] < 0x21 || s[i] > 0x7e)
            return 0;
    return i > 0;
}

int
ig_pins_key_valid(const char *key)
{
    const char *slash;
    size_t len;

    if (key == NULL || !ig_pins_word_valid(key, IG_PIN_KEY_MAX))
        return 0;
    len = strlen(key);
    slash = strchr(key, '/');
    return slash != NULL && slash != key && key[len - 1] != '/';
}

static void
entry_free(struct ig_pin_entry *e)
{
    size_t i;

    if (e == NULL)
        return;
    for (i = 0; i < e->npending; i++)
        json_decref(e->pending[i].def);
    free(e->key);
    free(e);
}

void
ig_pins_state_release(struct ig_pins_state *s)
{
    size_t i;

    for (i = 0; i < s->n; i++)
        entry_free(s->v[i]);
    free(s->v);
    memset(s, 0, sizeof(*s));
}

/* Binary search: the index of key, or where it would go (*found 0). */
static size_t
state_index(const struct ig_pins_state *s, const char *key, int *found)
{
    size_t lo = 0, hi = s->n, mid;
    int c;

    *found = 0;
    while (lo < hi) {
        mid = lo + (hi - lo) / 2;
        c = strcmp(s->v[mid]->key, key);
        if (c == 0) {
            *found = 1;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

struct ig_pin_entry *
ig_pins_state_find(const struct ig_pins_state *s, const char *key)
{
    int found;
    size_t i = state_index(s, key, &found);

    return found ? s->v[i] : NULL;
}

int
ig_pins_entry_pending(const struct ig_pin_entry *e, const char *hash)
{
    size_t i;

    for (i = 0; i < e->npending; i++)
        if (strcmp(e->pending[i].hash, hash) == 0)
            return (int)i;
    return -1;
}

/* The string member name of doc, 1..max bytes, no NUL inside; NULL when
   missing, not a string or out of bounds. */
static const char *
str_member(const json_t *doc, const char *name, size_t max)
{
    const json_t *v = json_object_get(doc, name);
    const char *s;

    if (v == NULL || !json_is_string(v))
        return NULL;
    s = json_string_value(v);
    if (json_string_length(v) != strlen(s) || strlen(s) > max || s[0] == '\0')
        return NULL;
    return s;
}

/* Which event, and how many members it has. */
static enum ig_status
line_event(const json_t *doc, struct ig_pin_line *out, struct ig_err *err)
{
    const char *ev = str_member(doc, "event", 16);
    size_t want;

    if (ev == NULL)
        return ig_err_set(err, IG_ERR_INVALID, "no \"event\" string");
    if (strcmp(ev, "pinned") == 0) {
        out->event = PIN_EV_PINNED;
        want = 4;
    } else if (strcmp(ev, "changed") == 0) {
        out->event = PIN_EV_CHANGED;
        want = 5;
    } else if (strcmp(ev, "accepted") == 0) {
        out->event = PIN_EV_ACCEPTED;
        want = 5;
    } else {
        return ig_err_set(err, IG_ERR_INVALID, "unknown event \"%s\"", ev);
    }
    if (json_object_size(doc) != want)
        return ig_err_set(err, IG_ERR_INVALID,
                          "event \"%s\" has %zu members, not %zu", ev,
                          json_object_size(doc), want);
    return IG_OK;
}

/* The members of out->doc, checked (the event is known). */
static enum ig_status
line_members(struct ig_pin_line *out, struct ig_err *err)
{
    int64_t t;

    out->key = str_member(out->doc, "key", IG_PIN_KEY_MAX);
    if (out->key == NULL || !ig_pins_key_valid(out->key))
        return ig_err_set(err, IG_ERR_INVALID, "bad or missing \"key\"");
    out->hash = str_member(out->doc, "hash", IG_HASH_STRLEN);
    if (out->hash == NULL || !ig_hash_is_valid(out->hash))
        return ig_err_set(err, IG_ERR_INVALID, "bad or missing \"hash\"");
    out->at = str_member(out->doc, "at", IG_TIME_STRLEN);
    if (out->at == NULL || ig_time_parse(out->at, strlen(out->at), &t) != IG_OK)
        return ig_err_set(err, IG_ERR_INVALID, "bad or missing \"at\"");
    if (out->event == PIN_EV_ACCEPTED) {
        out->by = str_member(out->doc, "by", IG_PIN_BY_MAX);
        if (out->by == NULL || !ig_pins_word_valid(out->by, IG_PIN_BY_MAX))
            return ig_err_set(err, IG_ERR_INVALID, "bad or missing \"by\"");
    }
    if (out->event == PIN_EV_CHANGED) {
        out->def = json_object_get(out->doc, "definition");
        if (out->def == NULL || !json_is_object(out->def))
            return ig_err_set(err, IG_ERR_INVALID,
                              "\"definition\" is not an object");
    }
    return IG_OK;
}

/* The line is its own canonical form, and a definition has its hash. */
static enum ig_status
line_canonical(const char *line, size_t len, const struct ig_pin_line *pl,
               struct ig_err *err)
{
    char h[IG_PIN_HASH_SIZE];
    struct ig_buf b;
    enum ig_status st;

    ig_buf_init(&b, IG_PIN_LINE_MAX);
    st = ig_canon_write(pl->doc, &b, err);
    if (st != IG_OK)
        goto out;
    if (b.len != len || memcmp(b.data, line, len) != 0) {
        st = ig_err_set(err, IG_ERR_INVALID, "not canonical JSON (RFC 8785)");
        goto out;
    }
    if (pl->event == PIN_EV_CHANGED) {
        st = ig_pins_hash(pl->def, h, err);
        if (st == IG_OK && strcmp(h, pl->hash) != 0)
            st = ig_err_set(err, IG_ERR_INVALID,
                            "\"hash\" is not the definition's hash");
    }
out:
    ig_buf_release(&b);
    return st;
}

enum ig_status
ig_pins_line_parse(const char *line, size_t len, struct ig_pin_line *out,
                   struct ig_err *err)
{
    enum ig_status st;

    memset(out, 0, sizeof(*out));
    if (len > IG_PIN_LINE_MAX)
        return ig_err_set(err, IG_ERR_LIMIT, "line over %d bytes",
                          IG_PIN_LINE_MAX);
    st = ig_json_parse(line, len, &out->doc, err);
    if (st != IG_OK)
        return st;
    if (!json_is_object(out->doc))
        st = ig_err_set(err, IG_ERR_INVALID, "not a JSON object");
    if (st == IG_OK)
        st = line_event(out->doc, out, err);
    if (st == IG_OK)
        st = line_members(out, err);
    if (st == IG_OK)
        st = line_canonical(line, len, out, err);
    if (st != IG_OK) {
        json_decref(out->doc);
        memset(out, 0, sizeof(*out));
    }
    return st;
}

/* A new entry for key pinned to hash, inserted in order. */
static enum ig_status
state_insert(struct ig_pins_state *s, const char *key, const char *hash,
             struct ig_err *err)
{
    struct ig_pin_entry *e, **v;
    size_t i, alloc;
    int found;

    i = state_index(s, key, &found);
    IG_ASSERT(!found);
    if (s->n == s->alloc) {
        alloc = s->alloc ? s->alloc * 2 : 16;
        v = realloc(s->v, alloc * sizeof(*v));
        if (v == NULL)
            return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
        s->v = v;
        s->alloc = alloc;
    }
    e = calloc(1, sizeof(*e));
    if (e == NULL || (e->key = strdup(key)) == NULL) {
        free(e);
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    }
    memcpy(e->pinned, hash, IG_PIN_HASH_SIZE);
    memmove(s->v + i + 1, s->v + i, (s->n - i) * sizeof(*s->v));
    s->v[i] = e;
    s->n++;
    return IG_OK;
}

/* Apply a parsed line to s, if it follows from s. */
static enum ig_status
state_apply(struct ig_pins_state *s, const struct ig_pin_line *pl,
            struct ig_err *err)
{
    struct ig_pin_entry *e = ig_pins_state_find(s, pl->key);
    struct ig_pin_pending *pp;
    int i;

    if (pl->event == PIN_EV_PINNED) {
        if (e != NULL)
            return ig_err_set(err, IG_ERR_INVALID, "%s is already pinned",
                              pl->key);
        return state_insert(s, pl->key, pl->hash, err);
    }
    if (e == NULL)
        return ig_err_set(err, IG_ERR_INVALID, "%s was never pinned", pl->key);
    i = ig_pins_entry_pending(e, pl->hash);
    if (pl->event == PIN_EV_ACCEPTED) {
        if (i < 0)
            return ig_err_set(err, IG_ERR_INVALID,
                              "accepted %s for %s, which is not pending",
                              pl->hash, pl->key);
        memcpy(e->pinned, pl->hash, IG_PIN_HASH_SIZE);
        json_decref(e->pending[i].def);
        memmove(e->pending + i, e->pending + i + 1,
                (e->npending - (size_t)i - 1) * sizeof(e->pending[0]));
        e->npending--;
        return IG_OK;
    }
    if (i >= 0 || strcmp(e->pinned, pl->hash) == 0)
        return ig_err_set(err, IG_ERR_INVALID,
                          "changed %s for %s, which is already %s", pl->hash,
                          pl->key, i >= 0 ? "pending" : "pinned");
    if (e->npending == IG_PIN_PENDING_MAX)
        return ig_err_set(err, IG_ERR_INVALID,
                          "more than %d pending changes for %s",
                          IG_PIN_PENDING_MAX, pl->key);
    pp = &e->pending[e->npending++];
    memcpy(pp->hash, pl->hash, IG_PIN_HASH_SIZE);
    (void)snprintf(pp->at, sizeof(pp->at), "%s", pl->at);
    pp->def = json_incref(ig_json_unconst(pl->def));
    return IG_OK;
}

/* Parse and apply one line; errors say which. */
static enum ig_status
feed_line(struct ig_pins_state *s, const char *line, size_t len,
          struct ig_err *err)
{
    struct ig_pin_line pl;
    struct ig_err e;
    enum ig_status st;

    ig_err_clear(&e);
    st = ig_pins_line_parse(line, len, &pl, &e);
    if (st == IG_OK) {
        st = state_apply(s, &pl, &e);
        json_decref(pl.doc);
    }
    if (st != IG_OK)
        return ig_err_set(err, st, "line %llu: %s",
                          (unsigned long long)(s->lines + 1), e.msg);
    s->lines++;
    return IG_OK;
}

enum ig_status
ig_pins_state_feed(struct ig_pins_state *s, const char *data, size_t len,
                   size_t *used, struct ig_err *err)
{
    const char *nl;
    size_t off = 0;
    enum ig_status st;

    *used = 0;
    while (off < len && (nl = memchr(data + off, '\n', len - off)) != NULL) {
        st = feed_line(s, data + off, (size_t)(nl - (data + off)), err);
        if (st != IG_OK)
            return st;
        off = (size_t)(nl - data) + 1;
        *used = off;
    }
    return IG_OK;
}

enum ig_status
ig_pins_hash(const json_t *def, char out[IG_PIN_HASH_SIZE], struct ig_err *err)
{
    return ig_hash_json(def, out, err);
}
