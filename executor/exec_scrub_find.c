/*
 * exec_scrub_find.c - find every spelling of a credential in a text and in
 * its decoded views (exec_scrub_find_all in exec_scrub_int.h).
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
 * real ending; a text that needs more than SCRUB_WORK_FACTOR compares per byte
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
 * Layers (exec_scrub_scan). The text is matched itself, through its base64
 * view (exec_scrub_b64.c) and through its escape views. The base64 view's
 * bytes are matched through the escape views (base64 of JSON written with
 * "\/"), an escape view's bytes through the base64 view (base64 that a
 * URL percent-encodes), and no deeper: one level of each, never an escape
 * inside an escape or base64 inside base64. An escape view is at most
 * as long as the text, the base64 view at most 3 bytes per text byte (4
 * offsets of 3/4), so at most 1 + 3 x (1 + 3) + 3 x (1 + 3) = 25 bytes
 * are matched per text byte: linear, and the work bound above is shared
 * by all of them.
 */
#include "exec_scrub_int.h"

#include <sodium.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ig_text.h"

/* ---- finding spans ---- */

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
       size_t h, struct scrub_spans *out)
{
    const struct scrub_spelling *sp;
    uint32_t f;
    enum ig_status st;

    for (; (f = s->slot[h].first) != 0; h = (h + 1) % SCRUB_TABLE_SIZE) {
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
                (st = exec_scrub_spans_push(out, i + 1 - sp->len, i + 1)) !=
                    IG_OK)
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
      struct scrub_spans *out)
{
    if (s->filter[(w * s->mul) >> (64 - SCRUB_FILTER_BITS)] == 0 ||
        s->slot[scrub_slot_of(s, w)].first == 0)
        return IG_OK;
    return verify(s, t, i, w, scrub_slot_of(s, w), out);
}

/*
 * Every occurrence of a spelling in the n bytes at t, into out. The main
 * loop tests four positions with one branch (the filter is sparse, so
 * that branch is nearly always "none"), and keeps the filter and keys in
 * locals since verify's writes could alias them.
 */
static enum ig_status
find(const struct exec_scrub *s, const unsigned char *t, size_t n,
     struct scrub_spans *out)
{
    const unsigned char *filter = s->filter;
    const uint64_t mask = s->mask, mul = s->mul;
    const int sh = 64 - SCRUB_FILTER_BITS;
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

/* Whether the token at t[i] (n bytes in all) is an escape. */
static int
escape_at(const unsigned char *t, size_t n, size_t i, decode_fn dec)
{
    unsigned char tmp[4];
    size_t used;

    (void)dec(t, n, i, tmp, &used);
    return used > 1;
}

/* The first escape starting in t[from..n), or NULL. */
static const unsigned char *
first_escape(const unsigned char *t, size_t n, size_t from, decode_fn dec,
             unsigned char trig)
{
    const unsigned char *p;

    for (; from < n && (p = memchr(t + from, trig, n - from)) != NULL;
         from = (size_t)(p - t) + 1)
        if (escape_at(t, n, (size_t)(p - t), dec))
            return p;
    return NULL;
}

/* The last escape starting in t[from..to), or NULL. */
static const unsigned char *
last_escape(const unsigned char *t, size_t n, size_t from, size_t to,
            decode_fn dec, unsigned char trig)
{
    while (to > from)
        if (t[--to] == trig && escape_at(t, n, to, dec))
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
          const struct scrub_spans *vs, struct scrub_spans *out)
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
            if ((st = exec_scrub_spans_push(out, start, si + used)) != IG_OK)
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
 * The spans of t's view in one escape language, the view scanned with
 * views. A view match that takes in no escape is a match in t itself,
 * found already, so only regions within scrub_extent source bytes of an
 * escape (a trigger byte that decodes: most in random bytes do not) are
 * decoded and matched; that covers the longest spelling at its most
 * stretched (base64 in the view included), so a region never starts
 * inside an escape.
 */
static enum ig_status
view_find(const struct exec_scrub *s, const unsigned char *t, size_t n,
          decode_fn dec, unsigned char trig, unsigned views,
          struct scrub_spans *out)
{
    struct scrub_spans vs = {NULL, 0, 0, out->max, 0, out->one};
    struct scrub_spans ts = {NULL, 0, 0, out->max, 0, out->one};
    const unsigned char *p = first_escape(t, n, 0, dec, trig), *q;
    size_t r = scrub_extent(s), a, b, last, m, wipe = 0;
    unsigned char *v = NULL;
    enum ig_status st = IG_OK;

    while (st == IG_OK && p != NULL) {
        last = (size_t)(p - t);
        a = last > r ? last - r : 0;
        /* Extend over escapes closer than 2r: scanning back from each
           window's end, a byte is looked at twice at most. */
        while ((q = last_escape(t, n, last + 1,
                                n - last > 2 * r ? last + 2 * r + 1 : n, dec,
                                trig)) != NULL)
            last = (size_t)(q - t);
        b = n - last > r ? last + r + 1 : n;
        p = n - last > 2 * r + 1
                ? first_escape(t, n, last + 2 * r + 1, dec, trig)
                : NULL;
        if (v == NULL && (v = malloc(n)) == NULL)
            return IG_ERR_NOMEM;
        m = decode(t, a, b, dec, trig, v);
        wipe = m > wipe ? m : wipe;
        if (m == b - a)
            continue; /* no escape decoded */
        vs.n = 0;
        vs.work = out->work;
        st = exec_scrub_scan(s, v, m, views, &vs);
        out->work = vs.work;
        if (st == IG_OK && vs.n > 0)
            st = translate(t, a, b, dec, &vs, &ts);
    }
    if (st == IG_OK && ts.n > 0)
        st = exec_scrub_spans_unite(out, &ts);
    if (v != NULL)
        sodium_memzero(v, wipe);
    free(v);
    free(vs.v);
    free(ts.v);
    return st;
}

/* t, then its base64 view (whose bytes are scanned with the escape views
   when views holds both), then its escape views (whose bytes are scanned
   with the base64 view likewise). */
enum ig_status
exec_scrub_scan(const struct exec_scrub *s, const unsigned char *t, size_t n,
                unsigned views, struct scrub_spans *out)
{
    unsigned inner_b64 = views & ~SCRUB_VIEW_B64;
    unsigned inner_esc = views & ~SCRUB_VIEW_ESC;
    enum ig_status st = find(s, t, n, out);

    if (st == IG_OK && (views & SCRUB_VIEW_B64) != 0)
        st = exec_scrub_b64_find(s, t, n, inner_b64, exec_scrub_scan, out);
    if ((views & SCRUB_VIEW_ESC) == 0)
        return st;
    if (st == IG_OK)
        st = view_find(s, t, n, dec_json, '\\', inner_esc, out);
    if (st == IG_OK)
        st = view_find(s, t, n, dec_percent, '%', inner_esc, out);
    if (st == IG_OK)
        st = view_find(s, t, n, dec_html, '&', inner_esc, out);
    return st;
}

enum ig_status
exec_scrub_find_all(const struct exec_scrub *s, const unsigned char *t,
                    size_t n, int literal, struct scrub_spans *out)
{
    return exec_scrub_scan(s, t, n,
                           literal ? 0 : SCRUB_VIEW_ESC | SCRUB_VIEW_B64, out);
}
