/*
 * exec_scrub.c - find and remove every spelling of a credential
 * (exec_scrub.h).
 *
 * Layout. One ig_secmem block holds the whole struct exec_scrub: the
 * spelling table, the window hash table and, after them, the bytes of
 * every spelling. Raw C and raw P+C are written first; every other
 * spelling is encoded from those copies, so the credential is never copied
 * to ordinary memory. The size is bounded before anything is written
 * (value_bound), so nothing is reallocated.
 *
 * Matching (find). For every text position i the bytes ending at i are
 * read as one 8-byte word and masked to the last q = min(8, shortest
 * spelling) bytes, then multiplied by a random odd number: the top 10
 * bits index a 1024-byte filter (set where a spelling's masked ending
 * lands), and on a hit the top 8 bits a 256-entry open-addressing table
 * keyed by those endings. A slot with the same key chains the spellings
 * that end so; each is compared whole with sodium_memcmp against the text
 * ending at i, and a match is pushed as a span [start, end). Spans arrive
 * in order of their end, so overlapping or touching ones are merged on a
 * stack as they come. Work is one multiply and one table load per byte,
 * plus whole-spelling compares only where the text holds a spelling's
 * real ending; a text that needs more than WORK_FACTOR compares per byte
 * (a periodic credential inside periodic text) is not scanned further and
 * is withheld instead.
 *
 * Views. The text may hide a spelling behind escapes the upstream chose:
 * JSON backslash escapes, %XX, HTML character references. For each, when
 * the text holds its trigger byte, the text is decoded token by token
 * into a view (never longer than the text), the view is matched as above,
 * and each span found is translated back by walking the tokens again: a
 * view span covers the source bytes of every token it touches. The spans
 * of the text and of each view are united.
 *
 * Passes. The spans are replaced by the marker, and the result is matched
 * again, because a marker next to a fragment can complete a spelling;
 * after EXEC_SCRUB_PASSES the text is withheld.
 */
#include "exec_scrub.h"

#include <sodium.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ig_canon.h"
#include "ig_limits.h"
#include "ig_secmem.h"
#include "ig_text.h"

#define MAX_SPELLINGS 80 /* 33 per value at most, two values */
#define TABLE_BITS 8     /* slots: 4 or more per spelling */
#define TABLE_SIZE (1u << TABLE_BITS)
#define FILTER_BITS 10 /* the first test: 1 in 13 or fewer set */
#define FILTER_SIZE (1u << FILTER_BITS)
#define WORK_FACTOR 16 /* whole-spelling compare bytes per text byte */
#define STRETCH 11     /* most source bytes one view byte comes from */
#define KEY_RETRIES 64 /* " (2)".. suffixes tried on a key collision */
#define MARKER_LEN (sizeof(EXEC_SCRUB_MARKER) - 1)

struct spelling {
    uint32_t off;  /* in text[] */
    uint32_t len;  /* > 0 */
    uint32_t next; /* 1 + index of the next spelling with this key; 0 */
};

struct slot {
    uint64_t key;   /* masked last bytes of its spellings */
    uint32_t first; /* 1 + index of the first spelling; 0: empty */
    uint32_t pad;
};

struct exec_scrub {
    uint64_t mul;  /* random, odd */
    uint64_t mask; /* keeps the last q bytes of an 8-byte load */
    size_t q, n, longest;
    int mark_bad, withheld_bad; /* the marker texts hold a spelling */
    struct spelling sp[MAX_SPELLINGS];
    struct slot slot[TABLE_SIZE];
    unsigned char filter[FILTER_SIZE]; /* 1: a key hashes here */
    unsigned char text[];
};

static int holds(const struct exec_scrub *s, const char *t, size_t n);

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
    IG_ASSERT(s->n < MAX_SPELLINGS);
    s->sp[s->n].off = (uint32_t)start;
    s->sp[s->n].len = (uint32_t)n;
    s->sp[s->n].next = 0;
    s->n++;
}

/* sodium's constant-time base64 of n bytes at v, one spelling. */
static void
add_b64(struct gen *g, const unsigned char *v, size_t n, int variant)
{
    size_t start = g->len, need = sodium_base64_encoded_len(n, variant);

    (void)sodium_bin2base64((char *)room(g, need), need, v, n, variant);
    g->len += need - 1; /* without the NUL */
    commit(g, start);
}

/* Both alphabets, three alignments: the core of whole groups, and the
   tail as it ends an encoding, padded and not. */
static void
add_base64(struct gen *g, const unsigned char *v, size_t m)
{
    static const int pad[2] = {sodium_base64_VARIANT_ORIGINAL,
                               sodium_base64_VARIANT_URLSAFE};
    static const int nopad[2] = {sodium_base64_VARIANT_ORIGINAL_NO_PADDING,
                                 sodium_base64_VARIANT_URLSAFE_NO_PADDING};
    size_t a, skip, n;

    for (a = 0; a < 2; a++) {
        for (skip = 0; skip < 3 && skip < m; skip++) {
            n = m - skip;
            if (n >= 3)
                add_b64(g, v + skip, n / 3 * 3, nopad[a]);
            if (n % 3 != 0) {
                add_b64(g, v + skip, n, nopad[a]);
                add_b64(g, v + skip, n, pad[a]);
            }
        }
    }
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
static void
add_value(struct gen *g, size_t off, size_t m)
{
    static const char up[] = "0123456789ABCDEF", lo[] = "0123456789abcdef";
    const unsigned char *v = g->s->text + off;
    int slash, ascii;

    add_base64(g, v, m);
    add_percent(g, v, m, 1, up);
    add_percent(g, v, m, 1, lo);
    add_percent(g, v, m, 0, up);
    add_percent(g, v, m, 0, lo);
    for (slash = 0; slash < 2; slash++) {
        for (ascii = 0; ascii < 2; ascii++) {
            add_json(g, v, m, slash, ascii, lo);
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

static size_t
slot_of(const struct exec_scrub *s, uint64_t key)
{
    return (size_t)((key * s->mul) >> (64 - TABLE_BITS));
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
    s->q = shortest < EXEC_SCRUB_WINDOW ? shortest : EXEC_SCRUB_WINDOW;
    memset(m + 8 - s->q, 0xff, s->q);
    memcpy(&s->mask, m, 8);
    randombytes_buf(&s->mul, sizeof(s->mul));
    s->mul |= 1;
    for (i = 0; i < s->n; i++) {
        key = key_of(s, s->text + s->sp[i].off, s->sp[i].len);
        h = slot_of(s, key);
        while (s->slot[h].first != 0 && s->slot[h].key != key)
            h = (h + 1) % TABLE_SIZE;
        s->sp[i].next = s->slot[h].first;
        s->slot[h].key = key;
        s->slot[h].first = (uint32_t)(i + 1);
        s->filter[(key * s->mul) >> (64 - FILTER_BITS)] = 1;
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
    if (len > EXEC_SCRUB_VALUE_MAX || plen > EXEC_SCRUB_VALUE_MAX - len)
        return ig_err_set(err, IG_ERR_LIMIT,
                          "credential and prefix longer than %d bytes",
                          EXEC_SCRUB_VALUE_MAX);
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
    g.s->mark_bad = holds(g.s, EXEC_SCRUB_MARKER, MARKER_LEN) != 0;
    g.s->withheld_bad =
        holds(g.s, EXEC_SCRUB_WITHHELD, strlen(EXEC_SCRUB_WITHHELD)) != 0;
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
    return s != NULL ? (STRETCH * s->longest + 63) / 64 * 64 : 0;
}

/* ---- finding spans ---- */

struct span {
    size_t a, b; /* [a, b) */
};

struct spans {
    struct span *v;
    size_t n, cap;
    size_t max;  /* more spans than this: the result cannot fit */
    size_t work; /* compare bytes left */
};

/* Add [a, b); b is never below the last span's end. Overlapping or
   touching spans merge. IG_ERR_LIMIT past max, IG_ERR_NOMEM. */
static enum ig_status
spans_push(struct spans *ss, size_t a, size_t b)
{
    struct span *v;

    while (ss->n > 0 && ss->v[ss->n - 1].b >= a) {
        ss->n--;
        if (ss->v[ss->n].a < a)
            a = ss->v[ss->n].a;
        if (ss->v[ss->n].b > b)
            b = ss->v[ss->n].b;
    }
    if (ss->n >= ss->max)
        return IG_ERR_LIMIT;
    if (ss->n == ss->cap) {
        ss->cap = ss->cap > 0 ? 2 * ss->cap : 16;
        v = realloc(ss->v, ss->cap * sizeof(*v));
        if (v == NULL)
            return IG_ERR_NOMEM;
        ss->v = v;
    }
    ss->v[ss->n].a = a;
    ss->v[ss->n].b = b;
    ss->n++;
    return IG_OK;
}

/* Unite the sorted, disjoint spans of add into ss (also sorted). */
static enum ig_status
spans_unite(struct spans *ss, const struct spans *add)
{
    struct spans u = {NULL, 0, 0, ss->max, ss->work};
    size_t i = 0, j = 0;
    const struct span *next;
    enum ig_status st = IG_OK;

    while (st == IG_OK && (i < ss->n || j < add->n)) {
        if (j >= add->n || (i < ss->n && ss->v[i].a <= add->v[j].a))
            next = &ss->v[i++];
        else
            next = &add->v[j++];
        if (u.n > 0 && u.v[u.n - 1].b >= next->a) {
            if (next->b > u.v[u.n - 1].b)
                u.v[u.n - 1].b = next->b;
        } else {
            st = spans_push(&u, next->a, next->b);
        }
    }
    if (st != IG_OK) {
        free(u.v);
        return st;
    }
    free(ss->v);
    ss->v = u.v;
    ss->n = u.n;
    ss->cap = u.cap;
    return IG_OK;
}

static uint64_t
load8(const unsigned char *p)
{
    uint64_t x;

    memcpy(&x, p, 8);
    return x;
}

/* The text ending at i (key w, slot h) holds a spelling's last bytes:
   compare each spelling with that ending whole. */
static enum ig_status
verify(const struct exec_scrub *s, const unsigned char *t, size_t i, uint64_t w,
       size_t h, struct spans *out)
{
    const struct spelling *sp;
    uint32_t f;
    enum ig_status st;

    for (; (f = s->slot[h].first) != 0; h = (h + 1) % TABLE_SIZE) {
        if (s->slot[h].key != w)
            continue;
        for (; f != 0; f = sp->next) {
            sp = &s->sp[f - 1];
            if (sp->len > i + 1)
                continue;
            if (out->work < sp->len)
                return IG_ERR_LIMIT;
            out->work -= sp->len;
            if (sodium_memcmp(t + i + 1 - sp->len, s->text + sp->off,
                              sp->len) == 0 &&
                (st = spans_push(out, i + 1 - sp->len, i + 1)) != IG_OK)
                return st;
        }
        break;
    }
    return IG_OK;
}

/* The text ending at i: verify it when the filter says a key may end
   there. */
static enum ig_status
check(const struct exec_scrub *s, const unsigned char *t, size_t i, uint64_t w,
      struct spans *out)
{
    if (s->filter[(w * s->mul) >> (64 - FILTER_BITS)] == 0 ||
        s->slot[slot_of(s, w)].first == 0)
        return IG_OK;
    return verify(s, t, i, w, slot_of(s, w), out);
}

/*
 * Every occurrence of a spelling in the n bytes at t, into out. The main
 * loop tests four positions with one branch (the filter is sparse, so
 * that branch is nearly always "none"), and keeps the filter and keys in
 * locals since verify's writes could alias them.
 */
static enum ig_status
find(const struct exec_scrub *s, const unsigned char *t, size_t n,
     struct spans *out)
{
    const unsigned char *filter = s->filter;
    const uint64_t mask = s->mask, mul = s->mul;
    const int sh = 64 - FILTER_BITS;
    unsigned char head[16] = {0};
    enum ig_status st = IG_OK;
    uint64_t w0, w1, w2, w3;
    size_t i, j;

    memcpy(head + 8, t, n < 8 ? n : 8);
    for (i = s->q - 1; i < n && i < 7 && st == IG_OK; i++)
        st = check(s, t, i, load8(head + 1 + i) & mask, out);
    for (i = i > 7 ? i : 7; i + 3 < n && st == IG_OK; i += 4) {
        w0 = load8(t + i - 7) & mask;
        w1 = load8(t + i - 6) & mask;
        w2 = load8(t + i - 5) & mask;
        w3 = load8(t + i - 4) & mask;
        if ((filter[(w0 * mul) >> sh] | filter[(w1 * mul) >> sh] |
             filter[(w2 * mul) >> sh] | filter[(w3 * mul) >> sh]) == 0)
            continue;
        for (j = i; j < i + 4 && st == IG_OK; j++)
            st = check(s, t, j, load8(t + j - 7) & mask, out);
    }
    for (; i < n && st == IG_OK; i++)
        st = check(s, t, i, load8(t + i - 7) & mask, out);
    return st;
}

/* ---- views: the text with one escape language decoded ---- */

/* A decoder reads the token at t[i] (n bytes in all): writes its bytes
   to out (1..4) and returns how many, with *used source bytes (>= the
   count). Anything that is not a complete escape is one literal byte. */
typedef size_t (*decode_fn)(const unsigned char *t, size_t n, size_t i,
                            unsigned char out[4], size_t *used);

static size_t
utf8_put(uint32_t cp, unsigned char out[4])
{
    if (cp < 0x80) {
        out[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (unsigned char)(0xC0 | cp >> 6);
        out[1] = (unsigned char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (unsigned char)(0xE0 | cp >> 12);
        out[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (unsigned char)(0xF0 | cp >> 18);
    out[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}

/* k hex digits at t[i] (within n), or -1. */
static long
hexn(const unsigned char *t, size_t n, size_t i, size_t k)
{
    long v = 0;
    int d;

    if (i > n || n - i < k)
        return -1;
    for (; k > 0; k--, i++) {
        if ((d = ig_hex_digit(t[i])) < 0)
            return -1;
        v = v * 16 + d;
    }
    return v;
}

static size_t
dec_json(const unsigned char *t, size_t n, size_t i, unsigned char out[4],
         size_t *used)
{
    static const char map[] = "\"\"\\\\//b\bf\fn\nr\rt\t";
    const char *e;
    long u, lo;

    *used = 1;
    out[0] = t[i];
    if (t[i] != '\\' || i + 1 >= n || t[i + 1] == 0)
        return 1;
    if (t[i + 1] != 'u') {
        for (e = map; *e != '\0' && *e != (char)t[i + 1]; e += 2)
            ;
        if (*e != '\0') {
            out[0] = (unsigned char)e[1];
            *used = 2;
        }
        return 1;
    }
    if ((u = hexn(t, n, i + 2, 4)) < 0 || (u >= 0xDC00 && u <= 0xDFFF))
        return 1;
    if (u < 0xD800 || u > 0xDBFF) {
        *used = 6;
        return utf8_put((uint32_t)u, out);
    }
    if (i + 12 > n || t[i + 6] != '\\' || t[i + 7] != 'u' ||
        (lo = hexn(t, n, i + 8, 4)) < 0xDC00 || lo > 0xDFFF)
        return 1; /* a lone surrogate stays literal */
    *used = 12;
    return utf8_put((uint32_t)(0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00)),
                    out);
}

static size_t
dec_percent(const unsigned char *t, size_t n, size_t i, unsigned char out[4],
            size_t *used)
{
    long b = t[i] == '%' ? hexn(t, n, i + 1, 2) : -1;

    *used = b < 0 ? 1 : 3;
    out[0] = b < 0 ? t[i] : (unsigned char)b;
    return 1;
}

/* "&#NNN;", "&#xHHH;" (1 to 7 digits, a Unicode scalar value) and the
   five XML entities. */
static size_t
dec_html(const unsigned char *t, size_t n, size_t i, unsigned char out[4],
         size_t *used)
{
    static const char *const names[] = {"&quot;\"", "&amp;&", "&lt;<", "&gt;>",
                                        "&apos;'"};
    size_t k, j, hex, len;
    unsigned long cp = 0;

    *used = 1;
    out[0] = t[i];
    if (t[i] != '&' || i + 3 >= n)
        return 1;
    for (k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
        if (names[k][1] != (char)t[i + 1])
            continue;
        len = strlen(names[k]) - 1;
        if (n - i >= len && memcmp(t + i, names[k], len) == 0) {
            out[0] = (unsigned char)names[k][len];
            *used = len;
            return 1;
        }
    }
    if (t[i + 1] != '#')
        return 1;
    hex = t[i + 2] == 'x' || t[i + 2] == 'X';
    for (j = i + 2 + hex; j < n && j < i + 9 + hex && t[j] != ';'; j++) {
        int d = ig_hex_digit(t[j]);
        if (d < 0 || (!hex && d > 9))
            return 1;
        cp = cp * (hex ? 16 : 10) + (unsigned long)d;
    }
    if (j >= n || t[j] != ';' || j == i + 2 + hex || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF))
        return 1;
    *used = j + 1 - i;
    return utf8_put((uint32_t)cp, out);
}

/* The last c in t[from..to), or NULL. */
static const unsigned char *
last_in(const unsigned char *t, size_t from, size_t to, unsigned char c)
{
    while (to > from)
        if (t[--to] == c)
            return t + to;
    return NULL;
}

/* Decode t[a..b) into v, literal runs copied whole; the view's length. */
static size_t
decode(const unsigned char *t, size_t a, size_t b, decode_fn dec,
       unsigned char trig, unsigned char *v)
{
    const unsigned char *q;
    size_t m = 0, run, used;

    while (a < b) {
        q = memchr(t + a, trig, b - a);
        run = (q != NULL ? (size_t)(q - t) : b) - a;
        memcpy(v + m, t + a, run);
        m += run;
        a += run;
        if (a < b) {
            m += dec(t, b, a, v + m, &used);
            a += used;
        }
    }
    return m;
}

/* The view spans of t[a..b) (sorted) as source spans: each covers the
   source of every token it touches. */
static enum ig_status
translate(const unsigned char *t, size_t a, size_t b, decode_fn dec,
          const struct spans *vs, struct spans *out)
{
    unsigned char tmp[4];
    size_t si = a, vi = 0, k = 0, start = 0, used, end;
    enum ig_status st;
    int open = 0;

    while (k < vs->n && si < b) {
        end = vi + dec(t, b, si, tmp, &used);
        while (k < vs->n && vs->v[k].a < end) {
            if (!open)
                start = si;
            open = 1;
            if (vs->v[k].b > end)
                break;
            if ((st = spans_push(out, start, si + used)) != IG_OK)
                return st;
            open = 0;
            k++;
        }
        vi = end;
        si += used;
    }
    return IG_OK;
}

/*
 * The spans of t's view in one escape language. A view match that takes
 * in no escape is a match in t itself, found already, so only regions
 * within r source bytes of a trigger byte are decoded and matched; r
 * covers the longest spelling at its most stretched, so a region never
 * starts inside an escape.
 */
static enum ig_status
view_find(const struct exec_scrub *s, const unsigned char *t, size_t n,
          decode_fn dec, unsigned char trig, struct spans *out)
{
    struct spans vs = {NULL, 0, 0, out->max, 0};
    struct spans ts = {NULL, 0, 0, out->max, 0};
    const unsigned char *p = n > 0 ? memchr(t, trig, n) : NULL, *q;
    size_t r = STRETCH * s->longest, a, b, last, m, wipe = 0;
    unsigned char *v = NULL;
    enum ig_status st = IG_OK;

    while (st == IG_OK && p != NULL) {
        last = (size_t)(p - t);
        a = last > r ? last - r : 0;
        /* Extend over triggers closer than 2r: scanning back from each
           window's end, the scanned ranges never overlap. */
        while ((q = last_in(t, last + 1,
                            n - last > 2 * r ? last + 2 * r + 1 : n, trig)) !=
               NULL)
            last = (size_t)(q - t);
        b = n - last > r ? last + r + 1 : n;
        p = n - last > 2 * r + 1
                ? memchr(t + last + 2 * r + 1, trig, n - last - 2 * r - 1)
                : NULL;
        if (v == NULL && (v = malloc(n)) == NULL)
            return IG_ERR_NOMEM;
        m = decode(t, a, b, dec, trig, v);
        wipe = m > wipe ? m : wipe;
        if (m == b - a)
            continue; /* no escape decoded */
        vs.n = 0;
        vs.work = out->work;
        st = find(s, v, m, &vs);
        out->work = vs.work;
        if (st == IG_OK && vs.n > 0)
            st = translate(t, a, b, dec, &vs, &ts);
    }
    if (st == IG_OK && ts.n > 0)
        st = spans_unite(out, &ts);
    if (v != NULL)
        sodium_memzero(v, wipe);
    free(v);
    free(vs.v);
    free(ts.v);
    return st;
}

/* All spans of t: its own, and (unless literal) those of its three
   views. */
static enum ig_status
find_all(const struct exec_scrub *s, const unsigned char *t, size_t n,
         int literal, struct spans *out)
{
    enum ig_status st = find(s, t, n, out);

    if (st == IG_OK && literal)
        return st;
    if (st == IG_OK)
        st = view_find(s, t, n, dec_json, '\\', out);
    if (st == IG_OK)
        st = view_find(s, t, n, dec_percent, '%', out);
    if (st == IG_OK)
        st = view_find(s, t, n, dec_html, '&', out);
    return st;
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
rebuild(const unsigned char *t, size_t n, const struct spans *ss, size_t room,
        struct scratch *x)
{
    size_t i, at = 0, len = n;

    for (i = 0; i < ss->n; i++) {
        len -= ss->v[i].b - ss->v[i].a;
        if (len > room || MARKER_LEN > room - len)
            return IG_ERR_LIMIT;
        len += MARKER_LEN;
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
        memcpy(x->p + x->len, EXEC_SCRUB_MARKER, MARKER_LEN);
        x->len += MARKER_LEN;
        at = ss->v[i].b;
    }
    memcpy(x->p + x->len, t + at, n - at);
    x->len += n - at;
    return IG_OK;
}

/* 1 when t holds any spelling (or cannot be scanned), 0 when clean;
   -1 out of memory. */
static int
holds(const struct exec_scrub *s, const char *t, size_t n)
{
    struct spans ss = {NULL, 0, 0, 1, WORK_FACTOR * (n + s->longest)};
    enum ig_status st = find_all(s, (const unsigned char *)t, n, 0, &ss);

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
    struct spans ss = {NULL, 0, 0, 0, 0};
    enum ig_status st = IG_OK;
    int pass;

    *res = t;
    *rlen = n;
    for (pass = 0; pass < EXEC_SCRUB_PASSES; pass++) {
        ss.n = 0;
        ss.max = room / MARKER_LEN + 1;
        ss.work = WORK_FACTOR * (*rlen + s->longest);
        if ((st = find_all(s, *res, *rlen, literal, &ss)) != IG_OK || ss.n == 0)
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

/* ---- JSON values ---- */

/* t scrubbed into b (cap: room for a marker per byte); *changed when
   anything was removed (b then holds the text, valid UTF-8 or the
   withheld marker). */
static enum ig_status
scrub_text(const struct exec_scrub *s, const char *t, size_t n,
           struct ig_buf *b, int *changed)
{
    enum ig_status st;

    ig_buf_init(b, n * MARKER_LEN + sizeof(EXEC_SCRUB_WITHHELD));
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
        if ((h = holds(s, name, strlen(name))) < 0) {
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
        h = holds(s, json_object_iter_key(it), json_object_iter_key_len(it));
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
        if ((h = holds(s, num, n)) < 0)
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
