/*
 * test_scrub.c - the credential scrubber (exec_scrub) and the response
 * shaping built on it (exec_response).
 *
 * The signify idea: a reflected credential must never get through. Every
 * check recomputes the spellings here, independently of the module's own
 * list - base64 and hex with libsodium, JSON with jansson's encoder,
 * percent-encoding by hand - and greps the output for each of them. The
 * credential is put in every spelling, inside real encodings of longer
 * data (so all three base64 alignments occur), at the start and end, split
 * by the kept cap, overlapping itself and next to markers; and a body
 * that holds no credential (near misses included) must come back byte for
 * byte with credential_reflected false.
 */
#define _GNU_SOURCE /* memmem, to grep 16 MiB quickly */
#include "testutil.h"

#include <ctype.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exec_response.h"
#include "exec_scrub.h"
#include "ig_b64.h"
#include "ig_canon.h"
#include "ig_json.h"
#include "ig_limits.h"
#include "ig_secmem.h"

#define MARK EXEC_SCRUB_MARKER
#define PREFIX "Bearer "

/* The two credentials of the brief: one with every escape-worthy byte,
   one plain. */
static const char cred_hard[] = "s3cr3t-tok/+=\xc3\xa9\"\\";
static const char cred_plain[] = "dev-refund-0123456789abcdef";
/* Base64 of this holds '+' and '/' in every alignment. */
static const char cred_b64[] = "k3y>>>???~~~<<<";
/* Outside the BMP (a surrogate pair in ASCII-only JSON) and controls. */
static const char cred_emoji[] = "k\xf0\x9f\x94\x91y-\x01\x1f\t";

/* ---- independent spellings ---- */

#define LIST_MAX 160

struct list {
    char *s[LIST_MAX];
    size_t n[LIST_MAX];
    size_t count;
};

static void
list_add(struct list *l, const char *p, size_t n)
{
    if (n == 0)
        return;
    assert_true(l->count < LIST_MAX);
    l->s[l->count] = malloc(n + 1);
    assert_non_null(l->s[l->count]);
    memcpy(l->s[l->count], p, n);
    l->s[l->count][n] = '\0';
    l->n[l->count++] = n;
}

static void
list_free(struct list *l)
{
    size_t i;

    for (i = 0; i < l->count; i++)
        free(l->s[i]);
    l->count = 0;
}

static void
add_b64(struct list *l, const unsigned char *v, size_t n, int variant)
{
    size_t cap = sodium_base64_encoded_len(n, variant);
    char *b = malloc(cap);

    assert_non_null(b);
    (void)sodium_bin2base64(b, cap, v, n, variant);
    list_add(l, b, strlen(b));
    free(b);
}

static void
add_percent(struct list *l, const unsigned char *v, size_t m, int keep,
            int upper)
{
    char *b = malloc(3 * m + 1), esc[4];
    size_t i, n = 0;

    assert_non_null(b);
    for (i = 0; i < m; i++) {
        if (keep && v[i] != 0 &&
            strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                   "0123456789-._~",
                   v[i]) != NULL) {
            b[n++] = (char)v[i];
            continue;
        }
        (void)snprintf(esc, sizeof(esc), upper ? "%%%02X" : "%%%02x", v[i]);
        memcpy(b + n, esc, 3);
        n += 3;
    }
    list_add(l, b, n);
    free(b);
}

/* jansson's JSON encoding of v without the quotes; with ASCII-only
   output, also the same with the other case of hex digits. */
static void
add_json(struct list *l, const unsigned char *v, size_t m, size_t flags)
{
    json_t *str = json_stringn((const char *)v, m);
    char *d, *p;
    size_t n;

    if (str == NULL)
        return; /* not UTF-8: no JSON spelling */
    d = json_dumps(str, JSON_ENCODE_ANY | flags);
    assert_non_null(d);
    n = strlen(d);
    list_add(l, d + 1, n - 2);
    for (p = strstr(d, "\\u"); p != NULL; p = strstr(p + 2, "\\u")) {
        size_t k;
        for (k = 2; k < 6; k++)
            p[k] = p[k] >= 'a' ? (char)(p[k] - 32)
                               : (p[k] >= 'A' ? (char)(p[k] + 32) : p[k]);
    }
    list_add(l, d + 1, n - 2);
    free(d);
    json_decref(str);
}

static void
add_hex(struct list *l, const unsigned char *v, size_t m)
{
    char *h = malloc(2 * m + 1);
    size_t i;

    assert_non_null(h);
    (void)sodium_bin2hex(h, 2 * m + 1, v, m);
    list_add(l, h, 2 * m);
    for (i = 0; i < 2 * m; i++)
        if (h[i] >= 'a')
            h[i] = (char)(h[i] - 32);
    list_add(l, h, 2 * m);
    free(h);
}

/* Every spelling of one value, computed here. */
static void
spell_value(struct list *l, const unsigned char *v, size_t m)
{
    static const int nopad[] = {sodium_base64_VARIANT_ORIGINAL_NO_PADDING,
                                sodium_base64_VARIANT_URLSAFE_NO_PADDING};
    static const int pad[] = {sodium_base64_VARIANT_ORIGINAL,
                              sodium_base64_VARIANT_URLSAFE};
    size_t a, k;

    list_add(l, (const char *)v, m);
    for (a = 0; a < 2; a++)
        for (k = 0; k < 3 && k < m; k++) {
            add_b64(l, v + k, (m - k) / 3 * 3, nopad[a]); /* the core */
            add_b64(l, v + k, m - k, nopad[a]);
            add_b64(l, v + k, m - k, pad[a]);
        }
    for (k = 0; k < 4; k++)
        add_percent(l, v, m, (int)(k & 1), (int)(k >> 1));
    add_json(l, v, m, 0);
    add_json(l, v, m, JSON_ESCAPE_SLASH);
    add_json(l, v, m, JSON_ENSURE_ASCII);
    add_json(l, v, m, JSON_ENSURE_ASCII | JSON_ESCAPE_SLASH);
    add_hex(l, v, m);
}

/* The spellings of cred and of prefix + cred. */
static void
spell(struct list *l, const char *cred, const char *prefix)
{
    char both[512];

    l->count = 0;
    spell_value(l, (const unsigned char *)cred, strlen(cred));
    if (prefix != NULL && prefix[0] != '\0') {
        (void)snprintf(both, sizeof(both), "%s%s", prefix, cred);
        spell_value(l, (const unsigned char *)both, strlen(both));
    }
}

/* No spelling of l in the n bytes at t. */
static void
assert_clean(const struct list *l, const char *t, size_t n, const char *what)
{
    size_t i;

    for (i = 0; i < l->count; i++)
        if (memmem(t, n, l->s[i], l->n[i]) != NULL)
            fail_msg("%s: spelling %zu \"%s\" survived in \"%.*s\"", what, i,
                     l->s[i], (int)(n > 300 ? 300 : n), t);
}

static struct exec_scrub *
scrubber(const char *cred, const char *prefix)
{
    struct exec_scrub *s = NULL;
    struct ig_err err;

    assert_int_equal(exec_scrub_new((const unsigned char *)cred, strlen(cred),
                                    prefix, &s, &err),
                     IG_OK);
    assert_non_null(s);
    return s;
}

/* Scrub n bytes of t into a fresh buffer (cap: 64 MiB). */
static struct ig_buf
scrub(const struct exec_scrub *s, const void *t, size_t n, unsigned flags,
      int *found)
{
    struct ig_buf out;

    ig_buf_init(&out, 64 * 1024 * 1024);
    assert_int_equal(exec_scrub_bytes(s, t, n, flags, &out, found), IG_OK);
    if (out.data == NULL)
        assert_int_equal(ig_buf_add(&out, "", 0), IG_OK);
    return out;
}

/* t (n bytes) must lose every spelling and report it. */
static void
expect_removed(const struct exec_scrub *s, const struct list *l, const void *t,
               size_t n, const char *what)
{
    struct ig_buf out;
    int found = -1;

    out = scrub(s, t, n, 0, &found);
    if (found != 1)
        fail_msg("%s: not reported (\"%.*s\")", what, (int)n, (const char *)t);
    assert_clean(l, out.data, out.len, what);
    ig_buf_release(&out);
}

/* t (n bytes) holds no credential: it comes back byte for byte. */
static void
expect_same(const struct exec_scrub *s, const void *t, size_t n,
            const char *what)
{
    struct ig_buf out;
    int found = -1;

    out = scrub(s, t, n, 0, &found);
    if (found != 0 || out.len != n || memcmp(out.data, t, n) != 0)
        fail_msg("%s: changed (found %d): \"%.*s\"", what, found,
                 (int)(out.len > 200 ? 200 : out.len), out.data);
    ig_buf_release(&out);
}

static const char *const creds[] = {cred_hard, cred_plain, cred_b64,
                                    cred_emoji};
#define NCREDS (sizeof(creds) / sizeof(creds[0]))
static const char *const prefixes[] = {NULL, PREFIX};

/* ---- exec_scrub ---- */

static void
test_new_refusals(void **state)
{
    unsigned char *big = calloc(1, IG_EXEC_SCRUB_VALUE_MAX + 1);
    struct exec_scrub *s = (struct exec_scrub *)&s; /* must become NULL */
    struct ig_err err;

    (void)state;
    assert_non_null(big);
    assert_int_equal(
        exec_scrub_new((const unsigned char *)"", 0, NULL, &s, &err),
        IG_ERR_INVALID);
    assert_null(s);
    assert_non_null(strstr(err.msg, "empty"));
    assert_int_equal(exec_scrub_new(NULL, 3, NULL, &s, &err), IG_ERR_INVALID);
    assert_int_equal(
        exec_scrub_new(big, IG_EXEC_SCRUB_VALUE_MAX + 1, NULL, &s, &err),
        IG_ERR_LIMIT);
    assert_int_equal(
        exec_scrub_new(big, IG_EXEC_SCRUB_VALUE_MAX, PREFIX, &s, &err),
        IG_ERR_LIMIT);
    assert_int_equal(
        exec_scrub_new(big, IG_EXEC_SCRUB_VALUE_MAX, NULL, &s, &err), IG_OK);
    assert_true(exec_scrub_count(s) > 0);
    exec_scrub_free(s);
    exec_scrub_free(NULL);
    free(big);
}

/* Alone, a spelling becomes exactly one marker, also when matching the
   listed spellings only: the module's list holds every one of ours. */
static void
expect_marker(const struct exec_scrub *s, const char *t, size_t n)
{
    struct ig_buf out;
    unsigned flags;
    int found;

    for (flags = 0; flags <= EXEC_SCRUB_LITERAL; flags += EXEC_SCRUB_LITERAL) {
        out = scrub(s, t, n, flags, &found);
        if (strcmp(out.data, MARK) != 0 || found != 1)
            fail_msg("\"%s\" (flags %u) became \"%s\"", t, flags, out.data);
        ig_buf_release(&out);
    }
}

/* Each spelling alone, and inside text at offsets 0..5, at the start, at
   the end, twice, back to back. */
static void
test_every_spelling(void **state)
{
    static const char around[] = "x:=\"%\\";
    struct list l;
    char buf[2048];
    size_t c, p, i, k;

    (void)state;
    for (c = 0; c < NCREDS; c++) {
        for (p = 0; p < 2; p++) {
            struct exec_scrub *s = scrubber(creds[c], prefixes[p]);
            spell(&l, creds[c], prefixes[p]);
            assert_true(l.count > 20);
            for (i = 0; i < l.count; i++) {
                expect_marker(s, l.s[i], l.n[i]);
                expect_removed(s, &l, l.s[i], l.n[i], "alone");
                for (k = 0; k <= 5; k++) {
                    int n =
                        snprintf(buf, sizeof(buf), "%.*s%s and %s%s%s!", (int)k,
                                 "Hello", l.s[i], l.s[i], l.s[i], around);
                    expect_removed(s, &l, buf, (size_t)n, "in text");
                }
            }
            exec_scrub_free(s);
            list_free(&l);
        }
    }
}

/* The credential inside real encodings of longer data: base64 of k bytes
   + value + j bytes (every alignment), hex, percent and JSON of a whole
   sentence holding it. */
static void
test_inside_encodings(void **state)
{
    static const unsigned char pre[] = "\xfe\x01Zq#9";
    static const int variants[] = {sodium_base64_VARIANT_ORIGINAL,
                                   sodium_base64_VARIANT_ORIGINAL_NO_PADDING,
                                   sodium_base64_VARIANT_URLSAFE,
                                   sodium_base64_VARIANT_URLSAFE_NO_PADDING};
    unsigned char data[512];
    char enc[2048];
    struct list l, one;
    size_t c, p, k, j, v, m, n;

    (void)state;
    for (c = 0; c < NCREDS; c++) {
        for (p = 0; p < 2; p++) {
            struct exec_scrub *s = scrubber(creds[c], prefixes[p]);
            spell(&l, creds[c], prefixes[p]);
            m = (size_t)snprintf((char *)data + 8, sizeof(data) - 8, "%s%s",
                                 prefixes[p] != NULL ? prefixes[p] : "",
                                 creds[c]);
            for (k = 0; k <= 5; k++) {
                for (j = 0; j <= 3; j++) {
                    memcpy(data + 8 - k, pre, k);
                    memcpy(data + 8 + m, pre, j);
                    for (v = 0; v < 4; v++) {
                        (void)sodium_bin2base64(enc, sizeof(enc), data + 8 - k,
                                                k + m + j, variants[v]);
                        expect_removed(s, &l, enc, strlen(enc), "base64");
                    }
                    (void)sodium_bin2hex(enc, sizeof(enc), data + 8 - k,
                                         k + m + j);
                    expect_removed(s, &l, enc, strlen(enc), "hex");
                }
            }
            /* percent and JSON spellings of a sentence around the value */
            n = (size_t)snprintf((char *)data, sizeof(data), "say %s%s now",
                                 prefixes[p] != NULL ? prefixes[p] : "",
                                 creds[c]);
            one.count = 0;
            spell_value(&one, data, n);
            for (v = 0; v < one.count; v++)
                expect_removed(s, &l, one.s[v], one.n[v], "sentence");
            list_free(&one);
            exec_scrub_free(s);
            list_free(&l);
        }
    }
}

/* Escapes an upstream's encoder may choose beyond the listed spellings:
   every character as \uXXXX in mixed case, Go's \u0026-style HTML
   escapes, %XX for some bytes only, HTML character references. */
static void
test_mixed_escapes(void **state)
{
    static const unsigned cps[] = {0x73, 0x33, 0x63, 0x72, 0x33, 0x74,
                                   0x2d, 0x74, 0x6f, 0x6b, 0x2f, 0x2b,
                                   0x3d, 0xe9, 0x22, 0x5c};
    struct exec_scrub *s = scrubber(cred_hard, PREFIX);
    struct list l;
    char buf[1024];
    size_t i, n;

    (void)state;
    spell(&l, cred_hard, PREFIX);
    n = (size_t)snprintf(buf, sizeof(buf), "{\"h\": \"");
    for (i = 0; i < sizeof(cps) / sizeof(cps[0]); i++)
        n += (size_t)snprintf(buf + n, sizeof(buf) - n,
                              i % 2 ? "\\u%04X" : "\\u%04x", cps[i]);
    n += (size_t)snprintf(buf + n, sizeof(buf) - n, "\"}");
    expect_removed(s, &l, buf, n, "every character \\u");
    n = (size_t)snprintf(buf, sizeof(buf),
                         "{\"h\": \"\\u0073\\u0033"
                         "cr3t-tok\\u002f+\\u003D"
                         "\\u00E9\\\"\\\\\"}");
    expect_removed(s, &l, buf, n, "\\u escapes");
    n = (size_t)snprintf(buf, sizeof(buf),
                         "q=s3cr3t%%2dtok%%2F%%2b=%%c3%%A9"
                         "%%22%%5c&x=1");
    expect_removed(s, &l, buf, n, "mixed percent");
    n = (size_t)snprintf(buf, sizeof(buf),
                         "<p>Bad token s3cr3t-tok/+=\xc3\xa9&quot;\\</p>");
    expect_removed(s, &l, buf, n, "&quot;");
    n = (size_t)snprintf(buf, sizeof(buf),
                         "<p>s3cr3t-tok&#x2F;+&#61;&#233;&#34;&#x5c;</p>");
    expect_removed(s, &l, buf, n, "numeric references");
    list_free(&l);
    exec_scrub_free(s);
}

/* Escapes far apart (views are decoded only near them): the hidden
   credential at the start, between, and at the end. */
static void
test_views_far_apart(void **state)
{
    static const char *const hidden[] = {
        "\\u0064ev-refund-0123456789abcde\\u0066",
        "dev%2Drefund-0123456789abcdef",
        "&#100;ev-refund-0123456789abcdef",
    };
    struct exec_scrub *s = scrubber(cred_plain, PREFIX);
    size_t n = 40000, h, at, k;
    char *t = malloc(n + 64);
    struct list l;

    (void)state;
    assert_non_null(t);
    spell(&l, cred_plain, PREFIX);
    for (h = 0; h < 3; h++) {
        for (at = 0; at < 3; at++) {
            memset(t, '.', n);
            for (k = 1000; k + 10 < n; k += 7000)
                memcpy(t + k, h == 0 ? "\\n" : h == 1 ? "%41" : "&lt;", 3);
            k = at == 0 ? 0 : at == 1 ? n / 2 : n - strlen(hidden[h]);
            memcpy(t + k, hidden[h], strlen(hidden[h]));
            expect_removed(s, &l, t, n, hidden[h]);
        }
    }
    list_free(&l);
    free(t);
    exec_scrub_free(s);
}

/* ---- the base64 view: escaped values, escaped by hand, encoded by
   libsodium ---- */

/* How an upstream may spell a value before encoding it. */
enum form {
    F_RAW,
    F_PHP,       /* json_encode: \/ \" \\ and \u00e9 */
    F_PY,        /* json.dumps: \" \\ and \u00e9, "/" kept */
    F_U_ALL,     /* every character \uXXXX, upper hex */
    F_PCT_ALL,   /* every byte %XX */
    F_PCT_QUOTE, /* unreserved and "/" kept, lower hex */
    F_HTML,      /* html.escape */
    F_HTML_NUM,  /* every character but letters and digits as &#NNN; */
    NFORMS
};

/* The code point of the UTF-8 character at v (valid), its length in *k. */
static unsigned
utf8_at(const unsigned char *v, size_t *k)
{
    if (v[0] < 0x80) {
        *k = 1;
        return v[0];
    }
    if (v[0] < 0xe0) {
        *k = 2;
        return (v[0] & 0x1fu) << 6 | (v[1] & 0x3fu);
    }
    if (v[0] < 0xf0) {
        *k = 3;
        return (v[0] & 0x0fu) << 12 | (v[1] & 0x3fu) << 6 | (v[2] & 0x3fu);
    }
    *k = 4;
    return (v[0] & 0x07u) << 18 | (v[1] & 0x3fu) << 12 | (v[2] & 0x3fu) << 6 |
           (v[3] & 0x3fu);
}

/* One code point as \uXXXX (two for a surrogate pair). */
static size_t
put_u16(char *o, unsigned cp, int upper)
{
    if (cp >= 0x10000) {
        cp -= 0x10000;
        (void)put_u16(o, 0xd800 + (cp >> 10), upper);
        return 6 + put_u16(o + 6, 0xdc00 + (cp & 0x3ff), upper);
    }
    return (size_t)snprintf(o, 8, upper ? "\\u%04X" : "\\u%04x", cp);
}

/* v (m bytes of UTF-8) in form f, into o (room for 16 m + 1). */
static size_t
escape_form(const unsigned char *v, size_t m, int f, char *o)
{
    static const char *const ctl = "\bb\ff\nn\rr\tt";
    size_t i, k, n = 0;
    const char *e;
    unsigned cp;

    for (i = 0; i < m; i += k) {
        cp = utf8_at(v + i, &k);
        if (f == F_RAW ||
            (f == F_PCT_QUOTE && (isalnum(v[i]) || strchr("-._~/", v[i])))) {
            memcpy(o + n, v + i, k);
            n += k;
        } else if (f == F_PHP || f == F_PY) {
            e = cp != 0 && cp < 0x20 ? strchr(ctl, (int)cp) : NULL;
            if (cp == '"' || cp == '\\' || (cp == '/' && f == F_PHP))
                n += (size_t)snprintf(o + n, 4, "\\%c", (int)cp);
            else if (e != NULL && (e - ctl) % 2 == 0)
                n += (size_t)snprintf(o + n, 4, "\\%c", e[1]);
            else if (cp < 0x20 || cp >= 0x80)
                n += put_u16(o + n, cp, 0);
            else
                o[n++] = (char)cp;
        } else if (f == F_U_ALL) {
            n += put_u16(o + n, cp, 1);
        } else if (f == F_PCT_ALL || f == F_PCT_QUOTE) {
            for (size_t j = 0; j < k; j++)
                n += (size_t)snprintf(
                    o + n, 4, f == F_PCT_ALL ? "%%%02X" : "%%%02x", v[i + j]);
        } else if (f == F_HTML) {
            e = cp == '&'    ? "&amp;"
                : cp == '<'  ? "&lt;"
                : cp == '>'  ? "&gt;"
                : cp == '"'  ? "&quot;"
                : cp == '\'' ? "&#x27;"
                             : NULL;
            if (e == NULL) {
                memcpy(o + n, v + i, k);
                n += k;
            } else {
                n += (size_t)snprintf(o + n, 8, "%s", e);
            }
        } else if (cp < 0x80 && isalnum((int)cp)) {
            o[n++] = (char)cp;
        } else {
            n += (size_t)snprintf(o + n, 12, "&#%u;", cp);
        }
    }
    o[n] = '\0';
    return n;
}

static int
b64_char(unsigned char c)
{
    return isalnum(c) || c == '+' || c == '/' || c == '-' || c == '_';
}

/* n bytes at d hold a spelling of l or one of the extra strings. */
static int
holds_any(const struct list *l, const char *const *extra, size_t nextra,
          const unsigned char *d, size_t n)
{
    size_t i;

    for (i = 0; i < l->count; i++)
        if (memmem(d, n, l->s[i], l->n[i]) != NULL)
            return 1;
    for (i = 0; i < nextra; i++)
        if (memmem(d, n, extra[i], strlen(extra[i])) != NULL)
            return 1;
    return 0;
}

/*
 * The independent check of the base64 view: every run of base64 or
 * base64url characters in t, read from each of its first four
 * characters, decoded by libsodium (whole groups, then the tail when it
 * decodes), holds no spelling of l and none of extra.
 */
static void
assert_clean_b64(const struct list *l, const char *const *extra, size_t nextra,
                 const char *t, size_t n, const char *what)
{
    size_t a = 0, e, o, len, dl;
    unsigned char *d;
    char *run;

    assert_clean(l, t, n, what);
    while (a < n) {
        if (!b64_char((unsigned char)t[a])) {
            a++;
            continue;
        }
        for (e = a; e < n && b64_char((unsigned char)t[e]); e++)
            ;
        run = malloc(e - a + 1);
        d = malloc(e - a + 1);
        assert_non_null(run);
        assert_non_null(d);
        for (o = 0; o < 4 && a + o < e; o++) {
            len = e - a - o;
            memcpy(run, t + a + o, len);
            for (size_t i = 0; i < len; i++)
                run[i] = run[i] == '-' ? '+' : run[i] == '_' ? '/' : run[i];
            if (sodium_base642bin(d, e - a + 1, run, len, NULL, &dl, NULL,
                                  sodium_base64_VARIANT_ORIGINAL_NO_PADDING) !=
                    0 &&
                sodium_base642bin(d, e - a + 1, run, len / 4 * 4, NULL, &dl,
                                  NULL, sodium_base64_VARIANT_ORIGINAL) != 0)
                fail_msg("%s: libsodium cannot decode a run", what);
            if (holds_any(l, extra, nextra, d, dl))
                fail_msg("%s: a spelling survived in base64 \"%.*s\"", what,
                         (int)(e - a > 200 ? 200 : e - a), t + a);
        }
        free(run);
        free(d);
        a = e;
    }
}

/* base64 of payload, by libsodium, in variant v; malloc'd. */
static char *
b64_of(const void *payload, size_t n, int v)
{
    size_t cap = sodium_base64_encoded_len(n, v);
    char *b = malloc(cap);

    assert_non_null(b);
    (void)sodium_bin2base64(b, cap, payload, n, v);
    return b;
}

static const int b64_variants[] = {
    sodium_base64_VARIANT_ORIGINAL, sodium_base64_VARIANT_ORIGINAL_NO_PADDING,
    sodium_base64_VARIANT_URLSAFE, sodium_base64_VARIANT_URLSAFE_NO_PADDING};

/* Scrub t: exactly want comes back, reported, and clean to the
   independent check (extra: the hand-made spellings). */
static void
expect_exact(const struct exec_scrub *s, const struct list *l,
             const char *const *extra, size_t nextra, const char *t,
             const char *want, const char *what)
{
    struct ig_buf out;
    int found = -1;

    out = scrub(s, t, strlen(t), 0, &found);
    if (found != 1 || strcmp(out.data, want) != 0)
        fail_msg("%s: found %d, \"%s\" became \"%s\", not \"%s\"", what, found,
                 t, out.data, want);
    assert_clean_b64(l, extra, nextra, out.data, out.len, what);
    ig_buf_release(&out);
}

/* The value (C, P + C, or C after another prefix) in every form, inside
   a JSON payload at offsets 0..5, base64'd in every variant, glued to
   0..3 characters that are not part of the encoding: the whole run
   goes. */
static void
test_b64_of_escaped(void **state)
{
    static const char *const others[] = {"", PREFIX, "Token "};
    static const char glue[] = "Qz_-";
    char val[512], esc[8192], payload[9000], text[16384], want[64];
    const char *extra[2];
    size_t c, p, w, f, k, v, j, m;
    struct list l;

    (void)state;
    for (c = 0; c < NCREDS; c++) {
        for (p = 0; p < 2; p++) {
            struct exec_scrub *s = scrubber(creds[c], prefixes[p]);
            spell(&l, creds[c], prefixes[p]);
            for (w = 0; w < 3; w++) {
                if (w == 1 && prefixes[p] == NULL)
                    continue;
                m = (size_t)snprintf(val, sizeof(val), "%s%s", others[w],
                                     creds[c]);
                for (f = 0; f < NFORMS; f++) {
                    (void)escape_form((const unsigned char *)val, m, (int)f,
                                      esc);
                    extra[0] = esc;
                    extra[1] = creds[c];
                    for (k = 0; k <= 5; k++) {
                        int pn = snprintf(payload, sizeof(payload),
                                          "%.*s{\"t\":\"%s\",\"n\":1}", (int)k,
                                          "     ", esc);
                        for (v = 0; v < 4; v++) {
                            char *enc =
                                b64_of(payload, (size_t)pn, b64_variants[v]);
                            for (j = 0; j < 4; j++) {
                                (void)snprintf(text, sizeof(text),
                                               "data: %.*s%s\n", (int)j, glue,
                                               enc);
                                (void)snprintf(want, sizeof(want), "data: %s\n",
                                               MARK);
                                expect_exact(s, &l, extra, 2, text, want,
                                             "base64 of a spelled value");
                            }
                            free(enc);
                        }
                    }
                }
            }
            list_free(&l);
            exec_scrub_free(s);
        }
    }
}

/* A JWT's payload, a cookie's value, base64 in a PHP JSON string ("\/")
   and in a percent-encoded query: the run goes, the rest stays. */
static void
test_b64_shapes(void **state)
{
    static const char header[] = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9";
    unsigned char sig[32];
    char esc[1024], payload[2048], text[8192], want[8192], jsig[64];
    char *enc, *std, *q;
    const char *extra[2];
    size_t c, i, n;
    struct list l;

    (void)state;
    randombytes_buf_deterministic(
        sig, sizeof(sig),
        (const unsigned char *)"test_scrub: a JWT signature, 32B");
    (void)sodium_bin2base64(jsig, sizeof(jsig), sig, sizeof(sig),
                            sodium_base64_VARIANT_URLSAFE_NO_PADDING);
    for (c = 0; c < NCREDS; c++) {
        struct exec_scrub *s = scrubber(creds[c], PREFIX);
        spell(&l, creds[c], PREFIX);
        (void)escape_form((const unsigned char *)creds[c], strlen(creds[c]),
                          F_PHP, esc);
        extra[0] = esc;
        extra[1] = creds[c];
        n = (size_t)snprintf(payload, sizeof(payload),
                             "{\"sub\":\"u-1\",\"tok\":\"%s\",\"iat\":1}", esc);
        enc = b64_of(payload, n, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
        (void)snprintf(text, sizeof(text), "{\"id_token\":\"%s.%s.%s\"}",
                       header, enc, jsig);
        (void)snprintf(want, sizeof(want), "{\"id_token\":\"%s.%s.%s\"}",
                       header, MARK, jsig);
        expect_exact(s, &l, extra, 2, text, want, "JWT");
        (void)snprintf(text, sizeof(text),
                       "Set-Cookie: sess=%s; Path=/; HttpOnly\r\n", enc);
        expect_exact(s, &l, extra, 2, text,
                     "Set-Cookie: sess=" MARK "; Path=/; HttpOnly\r\n",
                     "Set-Cookie");
        free(enc);
        /* standard base64, escaped again around it */
        std = b64_of(payload, n, sodium_base64_VARIANT_ORIGINAL);
        q = text + snprintf(text, 32, "{\"cookie\":\"");
        for (i = 0; std[i] != '\0'; i++) {
            if (std[i] == '/')
                *q++ = '\\';
            *q++ = std[i];
        }
        (void)snprintf(q, 8, "\"}");
        expect_exact(s, &l, extra, 2, text, "{\"cookie\":\"" MARK "\"}",
                     "base64 in PHP JSON");
        q = text + snprintf(text, 32, "GET /cb?state=");
        for (i = 0; std[i] != '\0'; i++) {
            if (isalnum((unsigned char)std[i]))
                *q++ = std[i];
            else
                q += snprintf(q, 4, "%%%02X", (unsigned)std[i]);
        }
        (void)snprintf(q, 8, "&x=1");
        expect_exact(s, &l, extra, 2, text, "GET /cb?state=" MARK "&x=1",
                     "percent-encoded base64");
        free(std);
        /* after a JSON escape: the escape stays whole, the text JSON */
        enc = b64_of(payload, n, sodium_base64_VARIANT_ORIGINAL);
        (void)snprintf(text, sizeof(text),
                       "{\"e\":\"\\n%s\",\"f\":\"\\u00e9%s\",\"g\":\"\\\\%s\"}",
                       enc, enc, enc);
        expect_exact(s, &l, extra, 2, text,
                     "{\"e\":\"\\n" MARK "\",\"f\":\"\\u00e9" MARK
                     "\",\"g\":\"\\\\" MARK "\"}",
                     "after JSON escapes");
        free(enc);
        list_free(&l);
        exec_scrub_free(s);
    }
}

/* Split across two JSON strings, or cut by the kept cap: not claimed
   (a part of a spelling is not a spelling), and nothing of it kept. */
static void
test_b64_split_and_cut(void **state)
{
    struct exec_scrub *s = scrubber(cred_hard, PREFIX);
    char esc[1024], payload[2048], text[8192];
    size_t n, h, pad = 2000, reach = exec_scrub_reach(s);
    struct ig_buf out;
    json_t *doc;
    char *enc, *t;
    int found;

    (void)state;
    (void)escape_form((const unsigned char *)cred_hard, strlen(cred_hard),
                      F_PHP, esc);
    n = (size_t)snprintf(payload, sizeof(payload), "{\"t\":\"%s\"}", esc);
    enc = b64_of(payload, n, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
    for (h = 1; h < strlen(enc); h++) {
        n = (size_t)snprintf(text, sizeof(text),
                             "{\"a\":\"%.*s\",\"b\":\"%s\"}", (int)h, enc,
                             enc + h);
        out = scrub(s, text, n, 0, &found);
        ig_buf_release(&out);
        assert_int_equal(ig_json_parse(text, n, &doc, NULL), IG_OK);
        assert_int_equal(exec_scrub_json(s, &doc, &found), IG_OK);
        json_decref(doc);
    }
    t = malloc(pad + strlen(enc) + 1);
    assert_non_null(t);
    memset(t, '.', pad); /* not a base64 character */
    memcpy(t + pad, enc, strlen(enc));
    for (h = 1; h <= strlen(enc); h++) {
        out = scrub(s, t, pad + h, EXEC_SCRUB_CUT, &found);
        assert_int_equal(found, 0);
        assert_int_equal(out.len, pad + h > reach ? pad + h - reach : 0);
        assert_null(memchr(out.data, enc[0], out.len));
        ig_buf_release(&out);
    }
    /* The whole run before the cut tail: found. */
    free(t);
    t = malloc(pad + strlen(enc) + reach + 1);
    assert_non_null(t);
    memset(t, '.', pad + strlen(enc) + reach);
    memcpy(t + 10, enc, strlen(enc));
    out = scrub(s, t, pad + strlen(enc) + reach, EXEC_SCRUB_CUT, &found);
    assert_int_equal(found, 1);
    assert_int_equal(out.len, pad + strlen(MARK));
    assert_memory_equal(out.data, "..........", 10);
    assert_memory_equal(out.data + 10, MARK, strlen(MARK));
    assert_int_equal(strspn(out.data + 10 + strlen(MARK), "."), pad - 10);
    ig_buf_release(&out);
    free(t);
    free(enc);
    exec_scrub_free(s);
}

/* CPU time of one scrub of n bytes of t, best of three. */
static double
scrub_seconds(const struct exec_scrub *s, const char *t, size_t n)
{
    struct timespec a, b;
    double best = 1e9, d;
    struct ig_buf out;
    int i, found;

    for (i = 0; i < 3; i++) {
        (void)clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
        out = scrub(s, t, n, 0, &found);
        (void)clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
        assert_int_equal(found, 0);
        assert_memory_equal(out.data, t, n);
        ig_buf_release(&out);
        d = (double)(b.tv_sec - a.tv_sec) +
            (double)(b.tv_nsec - a.tv_nsec) / 1e9;
        best = d < best ? d : best;
    }
    return best;
}

/* No false positive on long base64 runs of random data, and the work
   stays linear on the worst runs: one run of "A", one of random
   characters, and many runs just long enough to decode (a short
   credential makes them short). */
static void
test_b64_clean_and_linear(void **state)
{
    static const char alpha[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_";
    size_t small = 512u << 10, big = 4u << 20, n = 65536, c, v, i, kind;
    unsigned char *rnd = malloc(big);
    char *t = malloc(big), *enc;
    struct exec_scrub *s;
    double t1, t8;

    (void)state;
    assert_non_null(rnd);
    assert_non_null(t);
    randombytes_buf_deterministic(
        rnd, big, (const unsigned char *)"test_scrub: base64 random, 32 B.");
    for (c = 0; c < NCREDS; c++) {
        s = scrubber(creds[c], PREFIX);
        for (v = 0; v < 4; v++) {
            enc = b64_of(rnd, n, b64_variants[v]);
            expect_same(s, enc, strlen(enc), "base64 of random bytes");
            free(enc);
        }
        for (i = 0; i < n; i++)
            t[i] = alpha[rnd[i] % 66];
        expect_same(s, t, n, "random base64 characters");
        exec_scrub_free(s);
    }
    /* Near misses: the middle byte changed, in every form, base64'd. */
    for (c = 0; c < NCREDS; c++) {
        char val[64], esc[1024], payload[2048];
        size_t m = strlen(creds[c]), f;
        s = scrubber(creds[c], PREFIX);
        memcpy(val, creds[c], m);
        val[m / 2] = val[m / 2] == 'Z' ? 'Y' : 'Z';
        for (f = 0; f < NFORMS; f++) {
            (void)escape_form((const unsigned char *)val, m, (int)f, esc);
            i = (size_t)snprintf(payload, sizeof(payload), "{\"t\":\"%s\"}",
                                 esc);
            for (v = 0; v < 4; v++) {
                enc = b64_of(payload, i, b64_variants[v]);
                expect_same(s, enc, strlen(enc), "a near miss");
                free(enc);
            }
        }
        exec_scrub_free(s);
    }
    for (kind = 0; kind < 3; kind++) {
        s = scrubber(kind == 2 ? "k" : cred_plain, kind == 2 ? NULL : PREFIX);
        for (i = 0; i < big; i++)
            t[i] = kind == 0   ? 'A'
                   : kind == 1 ? alpha[rnd[i] % 64]
                               : (i % 3 == 2 ? '.' : 'A');
        t1 = scrub_seconds(s, t, small);
        t8 = scrub_seconds(s, t, big);
        if (t8 > 24 * t1 + 0.05)
            fail_msg("kind %zu: 512 KiB %.3f s, 4 MiB %.3f s: not linear", kind,
                     t1, t8);
        exec_scrub_free(s);
    }
    free(t);
    free(rnd);
}

/* No credential: byte for byte, nothing reported; near misses too. */
static void
test_clean_is_identical(void **state)
{
    static const char *const bodies[] = {
        "",
        "x",
        "{\"id\": \"re_123\", \"url\": \"https:\\/\\/x\\u00e9\\n\"}",
        "a%20b&c=%2F%zz%",
        "&quot;&amp;&#x41;&#65;&bogus; &#xD800; &#99999999;",
        "\\u0041\\ud800\\\\u0041\\",
        "dev-refund-0123456789abcde",  /* one short */
        "dev-refund-0123456789abcdeF", /* one changed */
        "ev-refund-0123456789abcdef",
        "s3cr3t-tok/+=\xc3\xa9\"",
        "Bearer dev-refund-0123456789abcdeg",
    };
    struct exec_scrub *s = scrubber(cred_plain, PREFIX);
    struct exec_scrub *h = scrubber(cred_hard, PREFIX);
    unsigned char *rnd = malloc(65536);
    size_t i;

    (void)state;
    assert_non_null(rnd);
    for (i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
        expect_same(s, bodies[i], strlen(bodies[i]), bodies[i]);
        expect_same(h, bodies[i], strlen(bodies[i]), bodies[i]);
    }
    randombytes_buf_deterministic(
        rnd, 65536, (const unsigned char *)"test_scrub random body, 32 bytes");
    expect_same(s, rnd, 65536, "random bytes");
    expect_same(h, rnd, 65536, "random bytes");
    expect_same(NULL, rnd, 65536, "no scrubber");
    free(rnd);
    exec_scrub_free(s);
    exec_scrub_free(h);
}

/* Exact outputs: overlapping and adjacent occurrences make one marker;
   text around survives. */
static void
test_exact_output(void **state)
{
    struct exec_scrub *s = scrubber("abcab", NULL);
    struct ig_buf out;
    int found;

    (void)state;
    out = scrub(s, "abcabcab", 8, 0, &found);
    assert_string_equal(out.data, MARK);
    ig_buf_release(&out);
    out = scrub(s, "<abcababcab>", 12, 0, &found);
    assert_string_equal(out.data, "<" MARK ">");
    ig_buf_release(&out);
    out = scrub(s, "abca", 4, 0, &found);
    assert_string_equal(out.data, "abca");
    assert_int_equal(found, 0);
    ig_buf_release(&out);
    exec_scrub_free(s);
    s = scrubber(cred_plain, PREFIX);
    out = scrub(s, "Authorization: Bearer dev-refund-0123456789abcdef\n", 50, 0,
                &found);
    assert_string_equal(out.data, "Authorization: " MARK "\n");
    assert_int_equal(found, 1);
    ig_buf_release(&out);
    exec_scrub_free(s);
}

/* A marker next to a fragment can complete a spelling; a credential the
   marker itself holds cannot be removed at all. */
static void
test_marker_neighbours(void **state)
{
    static const char *const tricky[] = {"ed]Q", "]]]]", "[cred", "al re"};
    static const char *const inside[] = {"removed", "credential", "d]", "["};
    struct ig_buf out;
    struct list l;
    char buf[256];
    size_t i;
    int found, n;

    (void)state;
    for (i = 0; i < sizeof(tricky) / sizeof(tricky[0]); i++) {
        struct exec_scrub *s = scrubber(tricky[i], NULL);
        spell(&l, tricky[i], NULL);
        n = snprintf(buf, sizeof(buf), "%s%s%sQ %s]]x", tricky[i], tricky[i],
                     MARK, tricky[i]);
        expect_removed(s, &l, buf, (size_t)n, tricky[i]);
        list_free(&l);
        exec_scrub_free(s);
    }
    for (i = 0; i < sizeof(inside) / sizeof(inside[0]); i++) {
        struct exec_scrub *s = scrubber(inside[i], NULL);
        out = scrub(s, inside[i], strlen(inside[i]), 0, &found);
        assert_int_equal(found, 1);
        spell(&l, inside[i], NULL);
        assert_clean(&l, out.data, out.len, inside[i]);
        list_free(&l);
        ig_buf_release(&out);
        exec_scrub_free(s);
    }
}

/* Periodic text cannot make the work quadratic; what is found goes. */
static void
test_periodic(void **state)
{
    static const char *const cs[] = {"aaab", "aaaa", "abababab", "a"};
    static const int want[] = {0, 1, 0, 1};
    size_t n = 1024 * 1024, i;
    char *big = malloc(n), *cred = malloc(301);
    struct ig_buf out;
    struct list l;
    int found;

    (void)state;
    assert_non_null(big);
    assert_non_null(cred);
    memset(big, 'a', n);
    expect_same(NULL, big, n, "no scrubber");
    for (i = 0; i < sizeof(cs) / sizeof(cs[0]); i++) {
        struct exec_scrub *s = scrubber(cs[i], PREFIX);
        spell(&l, cs[i], PREFIX);
        out = scrub(s, big, n, 0, &found);
        assert_int_equal(found, want[i]);
        assert_clean(&l, out.data, out.len, cs[i]);
        ig_buf_release(&out);
        list_free(&l);
        exec_scrub_free(s);
    }
    memset(cred, 'a', 300); /* a long periodic credential: withheld */
    cred[300] = '\0';
    {
        struct exec_scrub *s = scrubber(cred, NULL);
        out = scrub(s, big, n, 0, &found);
        assert_int_equal(found, 1);
        assert_string_equal(out.data, EXEC_SCRUB_WITHHELD);
        ig_buf_release(&out);
        exec_scrub_free(s);
    }
    free(cred);
    free(big);
}

/* EXEC_SCRUB_CUT drops the tail a spelling might start in; caps. */
static void
test_cut_and_caps(void **state)
{
    struct exec_scrub *s = scrubber(cred_plain, PREFIX);
    size_t reach = exec_scrub_reach(s), n = reach + 100, k;
    char *t = malloc(n + 64);
    struct ig_buf out;
    int found;

    (void)state;
    assert_non_null(t);
    assert_true(reach >= 11 * 3 * (strlen(PREFIX) + strlen(cred_plain)));
    assert_int_equal(reach % 64, 0);
    for (k = 1; k < strlen(cred_plain); k++) {
        memset(t, '_', n);
        memcpy(t + n - k, cred_plain, k); /* cut after k bytes */
        out = scrub(s, t, n, EXEC_SCRUB_CUT, &found);
        assert_int_equal(out.len, n - reach);
        assert_int_equal(found, 0);
        assert_null(strchr(out.data, 'd'));
        ig_buf_release(&out);
    }
    out = scrub(s, t, reach, EXEC_SCRUB_CUT, &found);
    assert_int_equal(out.len, 0);
    ig_buf_release(&out);
    /* A clean text over the cap: refused, out untouched. */
    ig_buf_init(&out, 10);
    assert_int_equal(ig_buf_adds(&out, "ab"), IG_OK);
    assert_int_equal(exec_scrub_bytes(s, "0123456789", 10, 0, &out, &found),
                     IG_ERR_LIMIT);
    assert_string_equal(out.data, "ab");
    ig_buf_release(&out);
    /* Markers that would not fit: withheld. */
    ig_buf_init(&out, strlen(EXEC_SCRUB_WITHHELD));
    k = (size_t)snprintf(t, n, "%s|%s|%s", cred_plain, cred_plain, cred_plain);
    assert_int_equal(exec_scrub_bytes(s, t, k, 0, &out, &found), IG_OK);
    assert_int_equal(found, 1);
    assert_string_equal(out.data, EXEC_SCRUB_WITHHELD);
    ig_buf_release(&out);
    free(t);
    exec_scrub_free(s);
}

/* Decoded JSON: strings, keys (with collisions), numbers, nesting. */
static void
test_json_values(void **state)
{
    struct exec_scrub *s = scrubber("100000000000000000000", NULL);
    struct exec_scrub *h = scrubber(cred_hard, PREFIX);
    struct list l;
    json_t *v;
    char *d;
    int found;

    (void)state;
    v = json_pack("{s:[f, f, s], s:{s:f}}", "a", 1e20, 2.5, "x", "b", "n",
                  1e20);
    assert_int_equal(exec_scrub_json(s, &v, &found), IG_OK);
    assert_int_equal(found, 1);
    assert_string_equal(
        json_string_value(json_array_get(json_object_get(v, "a"), 0)), MARK);
    assert_true(json_number_value(json_array_get(json_object_get(v, "a"), 1)) ==
                2.5);
    json_decref(v);
    v = json_real(1e20); /* the top value itself */
    assert_int_equal(exec_scrub_json(s, &v, &found), IG_OK);
    assert_string_equal(json_string_value(v), MARK);
    json_decref(v);

    spell(&l, cred_hard, PREFIX);
    v = json_pack("{s:s, s:s, s:s, s:[s, {s:s}], s:s}", cred_hard, "k1",
                  "Bearer s3cr3t-tok/+=\xc3\xa9\"\\", "k2", MARK, "k3", "deep",
                  "x", "y", "see s3cr3t-tok/+=\xc3\xa9\"\\!", "plain",
                  "untouched");
    assert_int_equal(exec_scrub_json(h, &v, &found), IG_OK);
    assert_int_equal(found, 1);
    d = json_dumps(v, JSON_SORT_KEYS);
    assert_clean(&l, d, strlen(d), "json");
    assert_string_equal(json_string_value(json_object_get(v, "plain")),
                        "untouched");
    /* both keys became the marker: one was renamed */
    assert_non_null(json_object_get(v, MARK));
    assert_non_null(json_object_get(v, MARK " (2)"));
    assert_int_equal(json_object_size(v), 5);
    free(d);
    json_decref(v);
    v = json_string("clean");
    assert_int_equal(exec_scrub_json(NULL, &v, &found), IG_OK);
    assert_int_equal(found, 0);
    assert_int_equal(exec_scrub_json(h, &v, &found), IG_OK);
    assert_int_equal(found, 0);
    assert_string_equal(json_string_value(v), "clean");
    json_decref(v);
    list_free(&l);
    exec_scrub_free(s);
    exec_scrub_free(h);
}

/* ---- exec_response ---- */

static json_t *
settings_of(const char *text)
{
    struct ig_err err;
    json_t *h = NULL;

    assert_int_equal(ig_json_parse(text, strlen(text), &h, &err), IG_OK);
    if (exec_response_settings_check(h, &err) != IG_OK)
        fail_msg("%s: %s", text, err.msg);
    return h;
}

static void
build(const json_t *settings, const struct exec_scrub *s, const char *ct,
      const void *body, size_t kept, uint64_t size, json_t **res, json_t **det)
{
    struct exec_response_in in = {settings, 200, ct, body, kept, size, s};
    struct ig_err err;

    if (exec_response_build(&in, res, det, &err) != IG_OK)
        fail_msg("exec_response_build: %s", err.msg);
    assert_non_null(*res);
    assert_non_null(*det);
}

static size_t
canon_len(const json_t *v)
{
    struct ig_buf b;
    size_t n;

    ig_buf_init(&b, IG_CANON_MAX_BYTES * 16);
    assert_int_equal(ig_canon_write(v, &b, NULL), IG_OK);
    n = b.len;
    ig_buf_release(&b);
    return n;
}

/* The lowercase hex SHA-256 of n bytes. */
static void
sha_hex(const void *p, size_t n, char hex[65])
{
    unsigned char d[32];

    (void)crypto_hash_sha256(d, p, n);
    (void)sodium_bin2hex(hex, 65, d, 32);
}

/* The keys of v, sorted, joined by ",". */
static char *
keys_of(const json_t *v)
{
    json_t *k = json_array();
    const char *key;
    json_t *x;
    char *out;
    size_t i;

    json_object_foreach(ig_json_unconst(v), key, x)(void)
        json_array_append_new(k, json_string(key));
    for (i = 1; i < json_array_size(k); i++) { /* insertion sort */
        size_t j = i;
        while (j > 0 && strcmp(json_string_value(json_array_get(k, j - 1)),
                               json_string_value(json_array_get(k, j))) > 0) {
            json_t *a = json_incref(json_array_get(k, j - 1));
            (void)json_array_set(k, j - 1, json_array_get(k, j));
            (void)json_array_set_new(k, j, a);
            j--;
        }
    }
    out = json_dumps(k, JSON_COMPACT);
    json_decref(k);
    return out;
}

static void
assert_keys(const json_t *v, const char *want)
{
    char *got = keys_of(v);

    assert_non_null(got);
    if (strcmp(got, want) != 0)
        fail_msg("keys %s, want %s", got, want);
    free(got);
}

#define BASE_KEYS                                                              \
    "\"content_type\",\"credential_reflected\",\"sha256\",\"size\","           \
    "\"status\",\"truncated\""

static void
test_settings(void **state)
{
    static const struct {
        const char *text, *msg;
    } bad[] = {
        {"{\"response\": \"full\"}", "http.response: must be"},
        {"{\"response\": 1}", "http.response: must be"},
        {"{\"response\": \"fields\"}", "http.response_fields: required"},
        {"{\"response\": \"status\", \"response_fields\": {\"a\": \"/a\"}}",
         "only with"},
        {"{\"response_fields\": {\"a\": \"/a\"}}", "only with"},
        {"{\"response\": \"body\", \"response_fields\": {}}", "only with"},
        {"{\"response\": \"fields\", \"response_fields\": {}}", "1 to 32"},
        {"{\"response\": \"fields\", \"response_fields\": [\"/a\"]}",
         "must be an object"},
        {"{\"response\": \"fields\", \"response_fields\": {\"a b\": \"/a\"}}",
         "field name"},
        {"{\"response\": \"fields\", \"response_fields\": {\"\": \"/a\"}}",
         "field name"},
        {"{\"response\": \"fields\", \"response_fields\": {\"a\": \"a\"}}",
         "http.response_fields.a: must be a JSON pointer"},
        {"{\"response\": \"fields\", \"response_fields\": {\"a\": \"/~2\"}}",
         "http.response_fields.a: must be a JSON pointer"},
        {"{\"response\": \"fields\", \"response_fields\": {\"a\": 5}}",
         "http.response_fields.a: must be a JSON pointer"},
        {"{\"response\": \"fields\", \"response_fields\": "
         "{\"a\": \"/x\\u0000y\"}}",
         "http.response_fields.a: must be a JSON pointer"},
    };
    struct ig_err err;
    json_t *h;
    size_t i;

    (void)state;
    h = settings_of("{\"method\": \"GET\"}");
    assert_string_equal(json_string_value(json_object_get(h, "response")),
                        "status");
    json_decref(h);
    json_decref(settings_of("{\"response\": \"body\"}"));
    json_decref(settings_of("{\"response\": \"fields\", \"response_fields\": "
                            "{\"id\": \"/refund/id\", \"all\": \"\", "
                            "\"A-z_0.9\": \"/a~0b~1c/0\"}}"));
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(
            ig_json_parse(bad[i].text, strlen(bad[i].text), &h, &err), IG_OK);
        assert_int_equal(exec_response_settings_check(h, &err), IG_ERR_INVALID);
        if (strstr(err.msg, bad[i].msg) == NULL)
            fail_msg("%s: \"%s\" lacks \"%s\"", bad[i].text, err.msg,
                     bad[i].msg);
        json_decref(h);
    }
}

/* 32 fields are fine, 33 are not; a name of 65 bytes is not. */
static void
test_settings_limits(void **state)
{
    struct ig_err err;
    json_t *h;
    char *many;
    size_t i, n;

    (void)state;
    many = malloc(4096);
    assert_non_null(many);
    for (i = 32; i <= 33; i++) {
        size_t k;
        n = (size_t)snprintf(
            many, 4096, "{\"response\": \"fields\", \"response_fields\": {");
        for (k = 0; k < i; k++)
            n += (size_t)snprintf(many + n, 4096 - n, "%s\"f%zu\": \"/%zu\"",
                                  k ? ", " : "", k, k);
        (void)snprintf(many + n, 4096 - n, "}}");
        assert_int_equal(ig_json_parse(many, strlen(many), &h, &err), IG_OK);
        assert_int_equal(exec_response_settings_check(h, &err),
                         i == 32 ? IG_OK : IG_ERR_INVALID);
        json_decref(h);
    }
    (void)snprintf(many, 4096,
                   "{\"response\": \"fields\", \"response_fields\": "
                   "{\"%065d\": \"/a\"}}",
                   0);
    assert_int_equal(ig_json_parse(many, strlen(many), &h, &err), IG_OK);
    assert_int_equal(exec_response_settings_check(h, &err), IG_ERR_INVALID);
    json_decref(h);
    free(many);
}

static void
test_status_mode(void **state)
{
    static const char body[] = "{\"ok\": true, \"echo\": "
                               "\"Bearer dev-refund-0123456789abcdef\"}";
    json_t *set = settings_of("{}"), *bset = settings_of("{\"response\": "
                                                         "\"body\"}");
    struct exec_scrub *s = scrubber(cred_plain, PREFIX);
    json_t *res, *det, *bres, *bdet;
    struct list l;
    char hex[65];
    char *d;

    (void)state;
    spell(&l, cred_plain, PREFIX);
    build(set, s, "text/plain", "hello", 5, 5, &res, &det);
    assert_keys(res, "[" BASE_KEYS "]");
    assert_true(json_equal(res, det));
    sha_hex("hello", 5, hex);
    assert_string_equal(json_string_value(json_object_get(res, "sha256")), hex);
    assert_int_equal(json_integer_value(json_object_get(res, "status")), 200);
    assert_int_equal(json_integer_value(json_object_get(res, "size")), 5);
    assert_true(json_is_false(json_object_get(res, "truncated")));
    assert_true(json_is_false(json_object_get(res, "credential_reflected")));
    assert_string_equal(json_string_value(json_object_get(res, "content_type")),
                        "text/plain");
    json_decref(res);
    json_decref(det);

    /* A reflected credential: reported; the digest is of the scrubbed
       bytes, the same body mode returns. */
    build(set, s, NULL, body, strlen(body), strlen(body), &res, &det);
    build(bset, s, NULL, body, strlen(body), strlen(body), &bres, &bdet);
    assert_true(json_is_null(json_object_get(res, "content_type")));
    assert_true(json_is_true(json_object_get(res, "credential_reflected")));
    assert_true(json_is_false(json_object_get(res, "truncated")));
    assert_non_null(strstr(json_string_value(json_object_get(bres, "body")),
                           "\"echo\": \"" MARK "\"}"));
    d = json_dumps(bres, 0);
    assert_clean(&l, d, strlen(d), "body mode");
    free(d);
    sha_hex(json_string_value(json_object_get(bres, "body")),
            json_string_length(json_object_get(bres, "body")), hex);
    assert_string_equal(json_string_value(json_object_get(res, "sha256")), hex);
    assert_string_equal(json_string_value(json_object_get(bres, "sha256")),
                        hex);
    assert_keys(bdet, "[" BASE_KEYS "]");
    json_decref(res);
    json_decref(det);
    json_decref(bres);
    json_decref(bdet);
    list_free(&l);
    json_decref(set);
    json_decref(bset);
    exec_scrub_free(s);
}

static void
test_fields_mode(void **state)
{
    static const char body[] =
        "{\"refund\": {\"id\": \"re_1\", \"amount\": 10}, \"list\": [1, 2], "
        "\"tok\": \"Bearer \\u0064ev-refund-0123456789abcdef\", \"n\": null}";
    json_t *set = settings_of(
        "{\"response\": \"fields\", \"response_fields\": {\"id\": "
        "\"/refund/id\", \"amt\": \"/refund/amount\", \"second\": \"/list/1\", "
        "\"none\": \"/nope\", \"tok\": \"/tok\", \"null\": \"/n\", \"all\": "
        "\"\", \"bad_index\": \"/list/01\"}}");
    struct exec_scrub *s = scrubber(cred_plain, PREFIX);
    json_t *res, *det, *f;
    struct list l;
    char *d;

    (void)state;
    spell(&l, cred_plain, PREFIX);
    build(set, s, "application/json", body, strlen(body), strlen(body), &res,
          &det);
    assert_keys(res, "[\"content_type\",\"credential_reflected\",\"fields\","
                     "\"fields_missing\",\"sha256\",\"size\",\"status\","
                     "\"truncated\"]");
    f = json_object_get(res, "fields");
    assert_string_equal(json_string_value(json_object_get(f, "id")), "re_1");
    assert_true(json_number_value(json_object_get(f, "amt")) == 10);
    assert_true(json_number_value(json_object_get(f, "second")) == 2);
    assert_true(json_is_null(json_object_get(f, "null")));
    assert_string_equal(json_string_value(json_object_get(f, "tok")), MARK);
    assert_true(json_is_object(json_object_get(f, "all")));
    d = json_dumps(res, 0);
    assert_non_null(strstr(d, "\"fields_missing\": [\"none\", \"bad_index\"]"));
    assert_clean(&l, d, strlen(d), "fields");
    free(d);
    assert_true(json_is_true(json_object_get(res, "credential_reflected")));
    assert_true(json_equal(res, det));
    json_decref(res);
    json_decref(det);

    list_free(&l);
    json_decref(set);
    exec_scrub_free(s);
}

/* Not JSON, cut, too large: an error, every field missing. */
static void
test_fields_errors(void **state)
{
    static const char body[] = "{\"refund\": {\"id\": \"re_1\"}}";
    json_t *set = settings_of(
        "{\"response\": \"fields\", \"response_fields\": {\"id\": "
        "\"/refund/id\", \"amt\": \"/refund/amount\", \"second\": \"/list/1\", "
        "\"none\": \"/nope\", \"tok\": \"/tok\", \"null\": \"/n\", \"all\": "
        "\"\", \"bad_index\": \"/list/01\"}}");
    struct exec_scrub *s = scrubber(cred_plain, PREFIX);
    json_t *res, *det;

    (void)state;
    build(set, s, NULL, "<html>", 6, 6, &res, &det);
    assert_string_equal(json_string_value(json_object_get(res, "fields_error")),
                        "the body is not JSON");
    assert_int_equal(json_object_size(json_object_get(res, "fields")), 0);
    assert_int_equal(json_array_size(json_object_get(res, "fields_missing")),
                     8);
    assert_true(json_equal(res, det));
    json_decref(res);
    json_decref(det);
    build(set, s, NULL, body, 20, strlen(body), &res, &det);
    assert_string_equal(json_string_value(json_object_get(res, "fields_error")),
                        "the body was cut at max_response_bytes");
    json_decref(res);
    json_decref(det);
    {
        size_t n = IG_JSON_MAX_BYTES + 1;
        char *big = malloc(n);
        assert_non_null(big);
        memset(big, ' ', n);
        big[0] = '1';
        build(set, NULL, NULL, big, n, n, &res, &det);
        assert_string_equal(
            json_string_value(json_object_get(res, "fields_error")),
            "the body is over the JSON limits");
        json_decref(res);
        json_decref(det);
        free(big);
    }
    json_decref(set);
    exec_scrub_free(s);
}

static void
test_body_mode(void **state)
{
    json_t *set = settings_of("{\"response\": \"body\"}");
    struct exec_scrub *s = scrubber("100000000000000000000", NULL);
    static const unsigned char bin[] = {0xff, 0x00, 'a', 0xc3};
    unsigned char back[8];
    size_t n;
    json_t *res, *det;

    (void)state;
    build(set, s, NULL, "h\xc3\xa9llo", 6, 6, &res, &det);
    assert_string_equal(json_string_value(json_object_get(res, "body")),
                        "h\xc3\xa9llo");
    assert_keys(res, "[\"body\"," BASE_KEYS "]");
    assert_keys(det, "[" BASE_KEYS "]");
    json_decref(res);
    json_decref(det);
    /* Not UTF-8: base64url of the bytes, NUL included. */
    build(set, s, NULL, bin, sizeof(bin), sizeof(bin), &res, &det);
    assert_null(json_object_get(res, "body"));
    assert_int_equal(
        ig_b64_decode(json_string_value(json_object_get(res, "body_b64url")),
                      json_string_length(json_object_get(res, "body_b64url")),
                      back, sizeof(back), &n),
        IG_OK);
    assert_int_equal(n, sizeof(bin));
    assert_memory_equal(back, bin, n);
    assert_keys(det, "[" BASE_KEYS "]");
    json_decref(res);
    json_decref(det);
    /* Cut inside a character (no scrubber): the partial one is dropped. */
    build(set, NULL, NULL, "h\xc3\xa9l\xe2\x82", 6, 10, &res, &det);
    assert_string_equal(json_string_value(json_object_get(res, "body")),
                        "h\xc3\xa9l");
    json_decref(res);
    json_decref(det);
    /* Only decoding shows it (a number's canonical text): the body becomes
       the canonical JSON of the scrubbed document. */
    build(set, s, NULL, "{\"b\": 1e20, \"a\": [1.50]}", 24, 24, &res, &det);
    assert_string_equal(json_string_value(json_object_get(res, "body")),
                        "{\"a\":[1.5],\"b\":\"" MARK "\"}");
    assert_true(json_is_true(json_object_get(res, "credential_reflected")));
    json_decref(res);
    json_decref(det);
    /* Nothing found after decoding: the upstream's own text. */
    build(set, s, NULL, "{\"b\": 1e2, \"a\": [1.50]}", 23, 23, &res, &det);
    assert_string_equal(json_string_value(json_object_get(res, "body")),
                        "{\"b\": 1e2, \"a\": [1.50]}");
    assert_true(json_is_false(json_object_get(res, "credential_reflected")));
    json_decref(res);
    json_decref(det);
    json_decref(set);
    exec_scrub_free(s);
}

static void
test_content_type(void **state)
{
    json_t *set = settings_of("{}");
    struct exec_scrub *s = scrubber("ab?cd", PREFIX);
    char *longct = malloc(1001);
    json_t *res, *det;

    (void)state;
    assert_non_null(longct);
    build(set, s, "text/plain; x=Bearer ab?cd", "", 0, 0, &res, &det);
    assert_string_equal(json_string_value(json_object_get(res, "content_type")),
                        "text/plain; x=" MARK);
    assert_true(json_is_true(json_object_get(res, "credential_reflected")));
    assert_true(json_equal(res, det));
    json_decref(res);
    json_decref(det);
    /* A control byte becomes '?', which completes the credential. */
    build(set, s,
          "text/\x01\xc3\xa9; ab\x7f"
          "cd",
          "", 0, 0, &res, &det);
    assert_string_equal(json_string_value(json_object_get(res, "content_type")),
                        "text/???; " MARK);
    assert_true(json_is_true(json_object_get(res, "credential_reflected")));
    json_decref(res);
    json_decref(det);
    memset(longct, 'x', 1000);
    longct[1000] = '\0';
    build(set, s, longct, "", 0, 0, &res, &det);
    assert_int_equal(json_string_length(json_object_get(res, "content_type")),
                     IG_EXEC_RESPONSE_CONTENT_TYPE_MAX);
    assert_true(json_is_false(json_object_get(res, "credential_reflected")));
    json_decref(res);
    json_decref(det);
    free(longct);
    json_decref(set);
    exec_scrub_free(s);
}

/* The credential split by the kept cap: nothing of it comes back. */
static void
test_split_across_cap(void **state)
{
    json_t *set = settings_of("{\"response\": \"body\"}");
    struct exec_scrub *s = scrubber(cred_plain, PREFIX);
    size_t pad = 4000, k, n;
    char *t = malloc(pad + 64);
    const char *b;
    json_t *res, *det;
    char part[64];

    (void)state;
    assert_non_null(t);
    memset(t, '_', pad);
    n = pad + (size_t)snprintf(t + pad, 64, "%s%s", PREFIX, cred_plain);
    for (k = 1; k < n - pad; k++) {
        build(set, s, NULL, t, pad + k, n, &res, &det);
        b = json_string_value(json_object_get(res, "body"));
        assert_non_null(b);
        assert_true(strlen(b) + exec_scrub_reach(s) == pad + k ||
                    (pad + k < exec_scrub_reach(s) && b[0] == '\0'));
        assert_null(strchr(b, 'B'));
        (void)snprintf(part, sizeof(part), "%.4s", cred_plain);
        assert_null(strstr(b, part));
        assert_true(json_is_true(json_object_get(res, "truncated")));
        json_decref(res);
        json_decref(det);
    }
    free(t);
    json_decref(set);
    exec_scrub_free(s);
}

/* 16 MiB of body, a spelling every 256 KiB. */
static void
test_caps_body(void **state)
{
    json_t *bset = settings_of("{\"response\": \"body\"}");
    struct exec_scrub *s = scrubber(cred_hard, PREFIX);
    size_t n = IG_EXEC_MAX_OUTPUT_BYTES, i, k;
    char *big = malloc(n + 1), hex[65];
    json_t *res, *det;
    struct list l;
    const char *b;

    (void)state;
    assert_non_null(big);
    spell(&l, cred_hard, PREFIX);
    for (i = 0; i < n; i++)
        big[i] = (char)('a' + i % 26);
    for (i = 0, k = 0; i + 200 < n; i += n / 64, k++)
        memcpy(big + i, l.s[k % l.count], l.n[k % l.count]);
    build(bset, s, NULL, big, n, n, &res, &det);
    b = json_string_value(json_object_get(res, "body"));
    assert_non_null(b);
    assert_clean(&l, b, json_string_length(json_object_get(res, "body")),
                 "16 MiB");
    sha_hex(b, json_string_length(json_object_get(res, "body")), hex);
    assert_string_equal(json_string_value(json_object_get(res, "sha256")), hex);
    assert_true(json_is_true(json_object_get(res, "credential_reflected")));
    assert_true(canon_len(det) <= IG_OUTCOME_DETAIL_MAX_BYTES);
    json_decref(res);
    json_decref(det);

    json_decref(bset);
    list_free(&l);
    free(big);
    exec_scrub_free(s);
}

/* 32 fields of 2 KiB: each omitted in the detail, all in the result;
   32 fields that fit one by one but not together: some dropped. */
static void
test_caps_fields(void **state)
{
    struct exec_scrub *s = scrubber(cred_hard, PREFIX);
    char spec[4096], *json;
    json_t *res, *det, *set, *f;
    size_t i, k;

    (void)state;
    k = (size_t)snprintf(spec, sizeof(spec),
                         "{\"response\": \"fields\", \"response_fields\": {");
    for (i = 0; i < IG_EXEC_RESPONSE_FIELDS_MAX; i++)
        k += (size_t)snprintf(spec + k, sizeof(spec) - k,
                              "%s\"f%02zu\": \"/%zu\"", i ? ", " : "", i, i);
    (void)snprintf(spec + k, sizeof(spec) - k, "}}");
    set = settings_of(spec);
    for (k = 0; k < 2; k++) {
        size_t each = k == 0 ? 2048 : 900, m = 0;
        json = malloc(IG_EXEC_RESPONSE_FIELDS_MAX * (each + 8) + 8);
        assert_non_null(json);
        json[m++] = '[';
        for (i = 0; i < IG_EXEC_RESPONSE_FIELDS_MAX; i++) {
            m += (size_t)snprintf(json + m, 8, "%s\"", i ? "," : "");
            memset(json + m, 'v', each);
            m += each;
            json[m++] = '"';
        }
        json[m++] = ']';
        build(set, s, NULL, json, m, m, &res, &det);
        f = json_object_get(det, "fields");
        assert_int_equal(json_object_size(json_object_get(res, "fields")),
                         IG_EXEC_RESPONSE_FIELDS_MAX);
        assert_true(canon_len(det) <= IG_OUTCOME_DETAIL_MAX_BYTES);
        if (k == 0) {
            assert_int_equal(json_object_size(f), IG_EXEC_RESPONSE_FIELDS_MAX);
            assert_string_equal(json_string_value(json_object_get(
                                    json_object_get(f, "f07"), "omitted")),
                                "larger than 1024 bytes");
            assert_null(json_object_get(det, "fields_omitted"));
        } else {
            assert_true(json_object_size(f) < IG_EXEC_RESPONSE_FIELDS_MAX);
            assert_true(json_object_size(f) >= 10);
            assert_true(json_is_true(json_object_get(det, "fields_omitted")));
            assert_true(canon_len(det) > IG_OUTCOME_DETAIL_MAX_BYTES - 1000);
        }
        json_decref(res);
        json_decref(det);
        free(json);
    }
    json_decref(set);
    exec_scrub_free(s);
}

/* Without a credential the shapes are the same and nothing changes. */
static void
test_no_scrubber(void **state)
{
    static const char *const modes[] = {"{}", "{\"response\": \"body\"}",
                                        "{\"response\": \"fields\", "
                                        "\"response_fields\": {\"a\": "
                                        "\"/a\"}}"};
    static const char body[] = "{\"a\": \"dev-refund-0123456789abcdef\"}";
    json_t *set, *res, *det, *res2, *det2;
    struct exec_scrub *s = scrubber("unrelated-credential", NULL);
    struct exec_response_in in = {NULL, 200, NULL, NULL, 5, 5, NULL};
    struct ig_err err;
    size_t i;

    (void)state;
    for (i = 0; i < 3; i++) {
        set = settings_of(modes[i]);
        build(set, NULL, "a/b", body, strlen(body), strlen(body), &res, &det);
        build(set, s, "a/b", body, strlen(body), strlen(body), &res2, &det2);
        assert_true(json_equal(res, res2));
        assert_true(json_equal(det, det2));
        json_decref(res);
        json_decref(det);
        json_decref(res2);
        json_decref(det2);
        json_decref(set);
    }
    set = settings_of("{}");
    in.settings = set;
    res = det = json_null();
    assert_int_equal(exec_response_build(&in, &res, &det, &err),
                     IG_ERR_INVALID);
    assert_null(res);
    assert_null(det);
    in.body = "x";
    in.kept = 1;
    in.size = 0;
    assert_int_equal(exec_response_build(&in, &res, &det, &err),
                     IG_ERR_INVALID);
    json_decref(set);
    exec_scrub_free(s);
}

static int
teardown(void **state)
{
    (void)state;
    ig_secmem_drain();
    return 0;
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_new_refusals),
        cmocka_unit_test(test_every_spelling),
        cmocka_unit_test(test_inside_encodings),
        cmocka_unit_test(test_mixed_escapes),
        cmocka_unit_test(test_views_far_apart),
        cmocka_unit_test(test_b64_of_escaped),
        cmocka_unit_test(test_b64_shapes),
        cmocka_unit_test(test_b64_split_and_cut),
        cmocka_unit_test(test_b64_clean_and_linear),
        cmocka_unit_test(test_clean_is_identical),
        cmocka_unit_test(test_exact_output),
        cmocka_unit_test(test_marker_neighbours),
        cmocka_unit_test(test_periodic),
        cmocka_unit_test(test_cut_and_caps),
        cmocka_unit_test(test_json_values),
        cmocka_unit_test(test_settings),
        cmocka_unit_test(test_settings_limits),
        cmocka_unit_test(test_status_mode),
        cmocka_unit_test(test_fields_mode),
        cmocka_unit_test(test_fields_errors),
        cmocka_unit_test(test_body_mode),
        cmocka_unit_test(test_content_type),
        cmocka_unit_test(test_split_across_cap),
        cmocka_unit_test(test_caps_body),
        cmocka_unit_test(test_caps_fields),
        cmocka_unit_test(test_no_scrubber),
    };

    if (sodium_init() < 0)
        return 1;
    return cmocka_run_group_tests(tests, NULL, teardown);
}
