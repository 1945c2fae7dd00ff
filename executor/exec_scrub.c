/*
 * exec_scrub.c - build every spelling of a credential, and remove them
 * from a text (exec_scrub.h). Finding the spans is exec_scrub_find.c, the
 * JSON walk exec_scrub_json.c; the struct is in exec_scrub_int.h.
 *
 * Layout. One ig_secmem block holds the whole struct exec_scrub: the
 * spelling table, the window hash table and, after them, the bytes of
 * every spelling. Raw C and raw P+C are written first; every other
 * spelling is encoded from those copies, so the credential is never copied
 * to ordinary memory. The size is bounded before anything is written
 * (value_bound), so nothing is reallocated.
 *
 * Passes. The spans exec_scrub_find_all returns are replaced by the marker, and
 * the result is matched again, because a marker next to a fragment can
 * complete a spelling; after EXEC_SCRUB_PASSES the text is withheld. Each
 * pass's result is sized before it is written and wiped before it is
 * freed.
 */
#include "exec_scrub.h"

#include <sodium.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "exec_scrub_int.h"
#include "ig_b64.h"
#include "ig_limits.h"
#include "ig_secmem.h"
#include "ig_text.h"

/* ---- building the spellings ---- */

struct gen {
    struct exec_scrub *s;
    size_t len, cap; /* bytes of s->text used and available */
};

static unsigned char *
room(struct gen *g, size_t n)
{
    IG_ASSERT(n <= g->cap - g->len);
    return g->s->text + g->len;
}

static void
put(struct gen *g, unsigned char c)
{
    *room(g, 1) = c;
    g->len++;
}

/* text[start..len) becomes a spelling unless empty or a duplicate. */
static void
commit(struct gen *g, size_t start)
{
    struct exec_scrub *s = g->s;
    size_t n = g->len - start, i;

    for (i = 0; i < s->n && n > 0; i++)
        if (s->sp[i].len == n &&
            sodium_memcmp(s->text + s->sp[i].off, s->text + start, n) == 0)
            n = 0;
    if (n == 0) {
        sodium_memzero(s->text + start, g->len - start);
        g->len = start;
        return;
    }
    IG_ASSERT(s->n < SCRUB_MAX_SPELLINGS);
    s->sp[s->n].off = (uint32_t)start;
    s->sp[s->n].len = (uint32_t)n;
    s->sp[s->n].next = 0;
    s->n++;
}

/* Append the len bytes at src as a spelling, with '+' and '/' mapped to
   '-' and '_' when url, and pad '='s after. */
static void
add_form(struct gen *g, const char *src, size_t len, int url, size_t pad)
{
    size_t start = g->len, i;
    unsigned char *d = room(g, len + pad);
    char c;

    for (i = 0; i < len; i++) {
        c = src[i];
        d[i] = (unsigned char)(url && c == '+'   ? '-'
                               : url && c == '/' ? '_'
                                                 : c);
    }
    memset(d + len, '=', pad);
    g->len += len + pad;
    commit(g, start);
}

/* The base64 spellings of the n bytes at v: standard and URL-safe
   alphabets, unpadded and padded, and the whole groups alone (what holds
   when more bytes follow). One constant-time libsodium encoding; every
   form is a copy of it. */
static void
add_b64(struct gen *g, const unsigned char *v, size_t n)
{
    const int std = sodium_base64_VARIANT_ORIGINAL_NO_PADDING;
    char enc[IG_B64_ENCODED_LEN(IG_EXEC_SCRUB_VALUE_MAX) + 1];
    size_t need = sodium_base64_encoded_len(n, std), len = need - 1;
    size_t whole = n / 3 * 4, pad = (3 - n % 3) % 3;
    int url;

    IG_ASSERT(need <= sizeof(enc));
    (void)sodium_bin2base64(enc, need, v, n, std);
    for (url = 0; url < 2; url++) {
        add_form(g, enc, len, url, 0);
        if (pad > 0)
            add_form(g, enc, len, url, pad);
        if (whole > 0 && whole < len)
            add_form(g, enc, whole, url, 0);
    }
    sodium_memzero(enc, need);
}

/* Base64 in all three alignments: the encoding of the bytes from each of
   the first three offsets (what a value embedded at offset k mod 3 of a
   larger encoded text shows). */
static void
add_base64(struct gen *g, const unsigned char *v, size_t m)
{
    size_t skip;

    for (skip = 0; skip < 3 && skip < m; skip++)
        add_b64(g, v + skip, m - skip);
}

static int
unreserved(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
           (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
           c == '~';
}

static void
add_percent(struct gen *g, const unsigned char *v, size_t m, int keep,
            const char *digits)
{
    size_t start = g->len, i;

    for (i = 0; i < m; i++) {
        if (keep && unreserved(v[i])) {
            put(g, v[i]);
            continue;
        }
        put(g, '%');
        put(g, (unsigned char)digits[v[i] >> 4]);
        put(g, (unsigned char)digits[v[i] & 15]);
    }
    commit(g, start);
}

/* "\uXXXX" for one UTF-16 unit. */
static void
put_u(struct gen *g, uint32_t u, const char *digits)
{
    int k;

    put(g, '\\');
    put(g, 'u');
    for (k = 12; k >= 0; k -= 4)
        put(g, (unsigned char)digits[(u >> k) & 15]);
}

/* The letter of a two-character JSON escape for c, or 0. */
static unsigned char
short_escape(unsigned char c)
{
    switch (c) {
    case '"':
    case '\\':
        return c;
    case '\b':
        return 'b';
    case '\f':
        return 'f';
    case '\n':
        return 'n';
    case '\r':
        return 'r';
    case '\t':
        return 't';
    default:
        return 0;
    }
}

/* One JSON escaping: "\/" or "/", non-ASCII as \uXXXX (ascii) or as
   UTF-8, hex digits in the case of digits. */
static void
add_json(struct gen *g, const unsigned char *v, size_t m, int slash, int ascii,
         const char *digits)
{
    size_t start = g->len, i = 0, k;
    uint32_t cp;

    while (i < m) {
        unsigned char c = v[i], e = short_escape(c);
        if (e != 0 || (c == '/' && slash)) {
            put(g, '\\');
            put(g, e != 0 ? e : c);
        } else if (c < 0x20) {
            put_u(g, c, digits);
        } else if (c < 0x80) {
            put(g, c);
        } else if ((k = ig_utf8_next(v + i, m - i, &cp)) == 0) {
            if (ascii)
                put_u(g, c, digits); /* a stray byte, read as Latin-1 */
            else
                put(g, c);
        } else if (!ascii) {
            memcpy(room(g, k), v + i, k);
            g->len += k;
            i += k;
            continue;
        } else {
            if (cp >= 0x10000) {
                put_u(g, 0xD800 + ((cp - 0x10000) >> 10), digits);
                cp = 0xDC00 + ((cp - 0x10000) & 0x3FF);
            }
            put_u(g, cp, digits);
            i += k;
            continue;
        }
        i++;
    }
    commit(g, start);
}

static void
add_hex(struct gen *g, const unsigned char *v, size_t m, const char *digits)
{
    size_t start = g->len, i;

    for (i = 0; i < m; i++) {
        put(g, (unsigned char)digits[v[i] >> 4]);
        put(g, (unsigned char)digits[v[i] & 15]);
    }
    commit(g, start);
}

/* Bytes of text[] the spellings of one m-byte value may need, with the
   NUL sodium's base64 writes: raw m, base64 18 x (4m/3 + 5), percent
   4 x 3m, JSON 8 x 6m (a control byte or a stray one is 6 characters),
   hex 2 x 2m. */
static size_t
value_bound(size_t m)
{
    return 89 * m + 96;
}

/* Every spelling of the m-byte value already stored at text[off]. */
/* What in v makes an escaped spelling differ from the raw bytes: a byte
   percent-encoding changes, one JSON escapes ('"', '\\', a control), a
   '/', a byte above 0x7f. A spelling that would equal the raw one (or
   another) is not built at all: the common credential, letters and
   digits, has none of these, and most of its spellings are raw. */
struct kinds {
    int pct, json, slash, high;
};

static void
kinds_of(const unsigned char *v, size_t m, struct kinds *k)
{
    size_t i;

    memset(k, 0, sizeof(*k));
    for (i = 0; i < m; i++) {
        k->pct |= !unreserved(v[i]);
        k->json |= v[i] < 0x20 || v[i] == '"' || v[i] == '\\';
        k->slash |= v[i] == '/';
        k->high |= v[i] >= 0x80;
    }
}

static void
add_value(struct gen *g, size_t off, size_t m)
{
    static const char up[] = "0123456789ABCDEF", lo[] = "0123456789abcdef";
    const unsigned char *v = g->s->text + off;
    struct kinds k;
    int slash, ascii;

    kinds_of(v, m, &k);
    add_base64(g, v, m);
    if (k.pct) {
        add_percent(g, v, m, 1, up);
        add_percent(g, v, m, 1, lo);
    }
    add_percent(g, v, m, 0, up);
    add_percent(g, v, m, 0, lo);
    for (slash = 0; slash < 2; slash++) {
        for (ascii = 0; ascii < 2; ascii++) {
            if (!k.json && !(slash && k.slash) && !(ascii && k.high))
                continue; /* the raw bytes, already a spelling */
            add_json(g, v, m, slash, ascii, lo);
            if (k.json || (ascii && k.high)) /* a \u escape: its case */
                add_json(g, v, m, slash, ascii, up);
        }
    }
    add_hex(g, v, m, lo);
    add_hex(g, v, m, up);
}

/* The masked last bytes of a spelling, as find reads a text position. */
static uint64_t
key_of(const struct exec_scrub *s, const unsigned char *p, size_t len)
{
    unsigned char w[8] = {0};
    size_t k = len < 8 ? len : 8;
    uint64_t x;

    memcpy(w + 8 - k, p + len - k, k);
    memcpy(&x, w, 8);
    return x & s->mask;
}

/* q, the mask, the multiplier, and every spelling in the table. */
static void
index_spellings(struct exec_scrub *s)
{
    unsigned char m[8] = {0};
    size_t i, h, shortest = SIZE_MAX;
    uint64_t key;

    for (i = 0; i < s->n; i++) {
        if (s->sp[i].len < shortest)
            shortest = s->sp[i].len;
        if (s->sp[i].len > s->longest)
            s->longest = s->sp[i].len;
    }
    s->shortest = shortest;
    s->q = shortest < EXEC_SCRUB_WINDOW ? shortest : EXEC_SCRUB_WINDOW;
    memset(m + 8 - s->q, 0xff, s->q);
    memcpy(&s->mask, m, 8);
    randombytes_buf(&s->mul, sizeof(s->mul));
    s->mul |= 1;
    for (i = 0; i < s->n; i++) {
        key = key_of(s, s->text + s->sp[i].off, s->sp[i].len);
        h = scrub_slot_of(s, key);
        while (s->slot[h].first != 0 && s->slot[h].key != key)
            h = (h + 1) % SCRUB_TABLE_SIZE;
        s->sp[i].next = s->slot[h].first;
        s->slot[h].key = key;
        s->slot[h].first = (uint32_t)(i + 1);
        s->filter[(key * s->mul) >> (64 - SCRUB_FILTER_BITS)] = 1;
    }
}

enum ig_status
exec_scrub_new(const unsigned char *cred, size_t len, const char *prefix,
               struct exec_scrub **out, struct ig_err *err)
{
    size_t plen = prefix != NULL ? strlen(prefix) : 0;
    struct gen g;

    *out = NULL;
    if (cred == NULL || len == 0)
        return ig_err_set(err, IG_ERR_INVALID, "empty credential");
    if (len > IG_EXEC_SCRUB_VALUE_MAX || plen > IG_EXEC_SCRUB_VALUE_MAX - len)
        return ig_err_set(err, IG_ERR_LIMIT,
                          "credential and prefix longer than %d bytes",
                          IG_EXEC_SCRUB_VALUE_MAX);
    g.cap = value_bound(len) + (plen > 0 ? value_bound(plen + len) : 0);
    if ((g.s = ig_secmem_get(sizeof(struct exec_scrub) + g.cap)) == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    memset(g.s, 0, sizeof(*g.s));
    g.len = 0;
    if (plen > 0)
        memcpy(room(&g, plen + len), prefix, plen);
    memcpy(room(&g, plen + len) + plen, cred, len);
    g.len = plen + len;
    commit(&g, 0); /* raw P+C, or C */
    if (plen > 0) {
        memcpy(room(&g, len), cred, len);
        g.len += len;
        commit(&g, plen + len); /* raw C */
        add_value(&g, 0, plen + len);
    }
    add_value(&g, g.s->sp[plen > 0 ? 1 : 0].off, len);
    index_spellings(g.s);
    /* A credential the markers themselves hold: use nothing instead. */
    g.s->mark_bad =
        exec_scrub_holds(g.s, EXEC_SCRUB_MARKER, SCRUB_MARKER_LEN) != 0;
    g.s->withheld_bad = exec_scrub_holds(g.s, EXEC_SCRUB_WITHHELD,
                                         strlen(EXEC_SCRUB_WITHHELD)) != 0;
    *out = g.s;
    return IG_OK;
}

void
exec_scrub_free(struct exec_scrub *s)
{
    ig_secmem_put(s); /* wipes the whole block */
}

size_t
exec_scrub_count(const struct exec_scrub *s)
{
    return s != NULL ? s->n : 0;
}

size_t
exec_scrub_reach(const struct exec_scrub *s)
{
    return s != NULL ? (scrub_extent(s) + 63) / 64 * 64 : 0;
}

/* ---- replacing ---- */

/* A pass's result: sized exactly before it is written, never grown, so
   no unwiped copy is left behind. */
struct scratch {
    unsigned char *p;
    size_t len, alloc;
};

static void
scratch_wipe(struct scratch *x)
{
    if (x->p != NULL)
        sodium_memzero(x->p, x->alloc);
    free(x->p);
    x->p = NULL;
    x->len = x->alloc = 0;
}

/* t with every span replaced by the marker, into x; IG_ERR_LIMIT when
   that is longer than room. */
static enum ig_status
rebuild(const unsigned char *t, size_t n, const struct scrub_spans *ss,
        size_t room, struct scratch *x)
{
    size_t i, at = 0, len = n;

    for (i = 0; i < ss->n; i++) {
        len -= ss->v[i].b - ss->v[i].a;
        if (len > room || SCRUB_MARKER_LEN > room - len)
            return IG_ERR_LIMIT;
        len += SCRUB_MARKER_LEN;
    }
    if (len > x->alloc) {
        scratch_wipe(x);
        if ((x->p = malloc(len)) == NULL)
            return IG_ERR_NOMEM;
        x->alloc = len;
    }
    x->len = 0;
    for (i = 0; i < ss->n; i++) {
        memcpy(x->p + x->len, t + at, ss->v[i].a - at);
        x->len += ss->v[i].a - at;
        memcpy(x->p + x->len, EXEC_SCRUB_MARKER, SCRUB_MARKER_LEN);
        x->len += SCRUB_MARKER_LEN;
        at = ss->v[i].b;
    }
    memcpy(x->p + x->len, t + at, n - at);
    x->len += n - at;
    return IG_OK;
}

/* 1 when t holds any spelling (or cannot be scanned), 0 when clean;
   -1 out of memory. */
int
exec_scrub_holds(const struct exec_scrub *s, const char *t, size_t n)
{
    struct scrub_spans ss = {
        NULL, 0, 0, 1, SCRUB_WORK_FACTOR * (n + s->longest), 0};
    enum ig_status st =
        exec_scrub_find_all(s, (const unsigned char *)t, n, 0, &ss);

    free(ss.v);
    return st == IG_ERR_NOMEM ? -1 : st != IG_OK || ss.n > 0;
}

/*
 * The scrubbed text of t in *res (t itself when clean, else the data of
 * one of x; at most room bytes). IG_ERR_LIMIT: it must be withheld.
 * *found as exec_scrub_bytes.
 */
static enum ig_status
scrub_passes(const struct exec_scrub *s, const unsigned char *t, size_t n,
             size_t room, int literal, struct scratch x[2],
             const unsigned char **res, size_t *rlen, int *found)
{
    struct scrub_spans ss = {NULL, 0, 0, 0, 0, 0};
    enum ig_status st = IG_OK;
    int pass;

    *res = t;
    *rlen = n;
    for (pass = 0; pass < EXEC_SCRUB_PASSES; pass++) {
        ss.n = 0;
        ss.max = room / SCRUB_MARKER_LEN + 1;
        ss.work = SCRUB_WORK_FACTOR * (*rlen + s->longest);
        if ((st = exec_scrub_find_all(s, *res, *rlen, literal, &ss)) != IG_OK ||
            ss.n == 0)
            break;
        *found = 1;
        if ((st = rebuild(*res, *rlen, &ss, room, &x[pass % 2])) != IG_OK)
            break;
        *res = x[pass % 2].p;
        *rlen = x[pass % 2].len;
    }
    if (st == IG_OK && pass == EXEC_SCRUB_PASSES)
        st = IG_ERR_LIMIT; /* still not clean */
    free(ss.v);
    return st;
}

enum ig_status
exec_scrub_bytes(const struct exec_scrub *s, const char *in, size_t len,
                 unsigned flags, struct ig_buf *out, int *found)
{
    struct scratch x[2] = {{NULL, 0, 0}, {NULL, 0, 0}};
    size_t room = out->max - out->len, rlen;
    const unsigned char *res;
    enum ig_status st;

    *found = 0;
    if (len == 0)
        in = ""; /* may be NULL */
    if (s == NULL)
        return ig_buf_add(out, in, len);
    if ((flags & EXEC_SCRUB_CUT) != 0)
        len = len > exec_scrub_reach(s) ? len - exec_scrub_reach(s) : 0;
    st = scrub_passes(s, (const unsigned char *)in, len, room,
                      (flags & EXEC_SCRUB_LITERAL) != 0, x, &res, &rlen, found);
    if (st == IG_OK) {
        st = ig_buf_add(out, res, rlen);
        if (st != IG_ERR_LIMIT || !*found)
            goto out; /* done, or a clean text over the caller's cap */
    } else if (st != IG_ERR_LIMIT) {
        goto out;
    }
    /* Withheld: the marker, or nothing when even it holds a spelling. */
    *found = 1;
    st = ig_buf_adds(out, s->withheld_bad ? "" : EXEC_SCRUB_WITHHELD);
out:
    scratch_wipe(&x[0]);
    scratch_wipe(&x[1]);
    return st;
}
