/*
 * exec_scrub_b64.c - the base64 view (exec_scrub_b64_find in exec_scrub_int.h):
 * a credential inside base64 or base64url of a text that spells it its
 * own way - a JWT or cookie payload that is JSON written with "\/" or
 * "\u00XX", base64 of a percent-encoded or HTML-escaped value, of the
 * credential after a prefix that is not ours. The listed base64 spellings
 * only cover base64 of the credential's own bytes.
 *
 * How it works. The text is cut into runs: maximal stretches of the union
 * of both alphabets (A-Z a-z 0-9 + / - _, '-' read as '+' and '_' as '/',
 * so one decoder serves both), each with up to two '=' after it. A run
 * may begin with characters that are not part of the encoding (a word
 * glued to it), so it is decoded from each of its first four characters:
 * whole 4-character groups, then a 2- or 3-character tail (its spare bits
 * ignored). The decoded bytes are matched with the caller's scanner
 * (exec_scrub_scan, passed in so this file does not depend back on
 * exec_scrub_find.c), through the escape views when the caller asks. When they
 * hold a spelling, the whole run, '=' included, is one span: every character of
 * it is replaced, so no group that carried a bit of the credential is left -
 * except the end of a JSON escape the run begins with ("n" of "\naWdj..."),
 * which is decoded but kept, or JSON text would stop being JSON.
 *
 * One level. Decoded bytes are never read as base64 again: base64 inside
 * base64 is not caught. Inside an escape view the base64 view is read
 * without escape views (exec_scrub_find.c), so "%2F" in base64 is caught
 * but not base64 of "\u0041" in a percent-encoded query.
 *
 * Bounds. A run too short to decode to the shortest spelling is skipped
 * (the escape views only shorten). Each character of a run is decoded at
 * most 4 times, once per starting offset, so at most 3 decoded bytes per
 * text byte are matched (each as exec_scrub_scan does: linear, see
 * exec_scrub_find.c); a run's remaining offsets are skipped once one
 * holds a spelling. Whole-spelling compares take from out->work like any
 * other. One buffer holds one decoded run at a time; it is wiped before
 * it is freed.
 */
#include "exec_scrub_int.h"

#include <sodium.h>
#include <stdint.h>
#include <stdlib.h>

#include "ig_text.h"

/* 1 + the 6-bit value of each byte in either alphabet, 0 for any other
   (so the bytes from 0x80 up, left out, are 0). */
static const unsigned char sextet1[256] = {
    0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  /* 0x00 */
    0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  /* 0x10 */
    0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  63, 0,  63, 0,  64, /* 0x20 */
    53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 0,  0,  0,  0,  0,  0,  /* 0x30 */
    0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, /* 0x40 */
    16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 0,  0,  0,  0,  64, /* 0x50 */
    0,  27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, /* 0x60 */
    42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 0,  0,  0,  0,  0,  /* 0x70 */
};

#define IS_B64(c) (sextet1[(c)] != 0)
#define SEXTET(c) ((uint32_t)sextet1[(c)] - 1)

/* Bytes r characters of a run decode to (a lone last one: none). */
static size_t
decoded_len(size_t r)
{
    return r / 4 * 3 + (r % 4 > 1 ? r % 4 - 1 : 0);
}

/* The r characters at t (all in the alphabets) decoded into d; the
   count, decoded_len(r). */
static size_t
decode_run(const unsigned char *t, size_t r, unsigned char *d)
{
    size_t i, m = 0;
    uint32_t w;

    for (i = 0; i + 4 <= r; i += 4) {
        w = SEXTET(t[i]) << 18 | SEXTET(t[i + 1]) << 12 |
            SEXTET(t[i + 2]) << 6 | SEXTET(t[i + 3]);
        d[m++] = (unsigned char)(w >> 16);
        d[m++] = (unsigned char)(w >> 8);
        d[m++] = (unsigned char)w;
    }
    if (r - i >= 2) {
        w = SEXTET(t[i]) << 18 | SEXTET(t[i + 1]) << 12;
        if (r - i == 3)
            w |= SEXTET(t[i + 2]) << 6;
        d[m++] = (unsigned char)(w >> 16);
        if (r - i == 3)
            d[m++] = (unsigned char)(w >> 8);
    }
    return m;
}

/* *hit = 1 when the r characters at t, decoded from some starting
   offset into d and scanned with views, hold a spelling. ds is a
   one-span list (its work is the caller's); *wipe grows to the most of
   d used. */
static enum ig_status
run_holds(const struct exec_scrub *s, const unsigned char *t, size_t r,
          unsigned views, scrub_scan_fn scan, unsigned char *d, size_t *wipe,
          struct scrub_spans *ds, int *hit)
{
    enum ig_status st = IG_OK;
    size_t o, m;

    *hit = 0;
    for (o = 0; o < 4 && o < r && st == IG_OK && !*hit; o++) {
        if (decoded_len(r - o) < s->shortest)
            break;
        m = decode_run(t + o, r - o, d);
        *wipe = m > *wipe ? m : *wipe;
        ds->n = 0;
        st = scan(s, d, m, views, ds);
        *hit = ds->n > 0;
    }
    return st;
}

/*
 * How many characters at the start of the run t[a..e) end a JSON escape
 * ("n" of "\n", "u00e9" of "\u00e9"): they stay when the run is
 * replaced, so that JSON text stays JSON. Backslashes before a are
 * counted: "\\n" is a backslash and a letter. Less than the run.
 */
static size_t
escape_tail(const unsigned char *t, size_t a, size_t e)
{
    size_t b = a, k = 1;

    while (b > 0 && t[b - 1] == '\\')
        b--;
    if ((a - b) % 2 == 0)
        return 0;
    if (t[a] == 'u')
        while (k < 5 && a + k < e && ig_hex_digit(t[a + k]) >= 0)
            k++;
    return a + k < e ? k : 0;
}

/* The fewest characters that decode to len bytes. */
static size_t
chars_for(size_t len)
{
    return len / 3 * 4 + (len % 3 != 0 ? len % 3 + 1 : 0);
}

/*
 * Runs shorter than k characters cannot matter, so the scan looks at
 * every k-th byte only until one is in the alphabets, then walks back
 * and forward to that run's ends: each byte is looked at once at most,
 * and random text costs about n / k lookups. i == 0 or t[i - 1] is not
 * in the alphabets, so a run found never starts before i.
 */
enum ig_status
exec_scrub_b64_find(const struct exec_scrub *s, const unsigned char *t,
                    size_t n, unsigned views, scrub_scan_fn scan,
                    struct scrub_spans *out)
{
    struct scrub_spans rs = {NULL, 0, 0, out->max, 0, out->one};
    struct scrub_spans ds = {NULL, 0, 0, 1, out->work, 1};
    size_t k = chars_for(s->shortest), i = 0, a, e, p, wipe = 0;
    unsigned char *d = NULL;
    enum ig_status st = IG_OK;
    int hit;

    while (st == IG_OK && n - i >= k) {
        if (!IS_B64(t[i + k - 1])) {
            i += k;
            continue;
        }
        for (a = i + k - 1; a > i && IS_B64(t[a - 1]); a--)
            ;
        for (e = i + k; e < n && IS_B64(t[e]); e++)
            ;
        for (p = e; p < n && p - e < 2 && t[p] == '='; p++)
            ;
        i = p > e || p == n ? p : p + 1;
        if (e - a < k)
            continue;
        if (d == NULL && (d = malloc(decoded_len(n))) == NULL) {
            st = IG_ERR_NOMEM;
            break;
        }
        st = run_holds(s, t + a, e - a, views, scan, d, &wipe, &ds, &hit);
        if (st == IG_OK && hit)
            st = exec_scrub_spans_push(&rs, a + escape_tail(t, a, e), p);
    }
    out->work = ds.work;
    if (st == IG_OK && rs.n > 0)
        st = exec_scrub_spans_unite(out, &rs);
    if (d != NULL)
        sodium_memzero(d, wipe);
    free(d);
    free(ds.v);
    free(rs.v);
    return st;
}
