/*
 * audit_leaf.c - the top-level "time" of an audit leaf (audit_leaf.h).
 *
 * How it works. A cursor walks the object's members at depth 1: a key
 * (a string), a colon, a value. A value that is not wanted is skipped:
 * a string to its closing quote (a backslash skips the next byte), an
 * object or array by counting brackets outside strings, a scalar up to
 * white space or a structural character. Nesting is a counter, so a deep
 * value costs nothing but its bytes; every step checks the end first.
 *
 * `audit verify` runs this on every leaf, and most of a leaf's bytes are
 * inside strings (the event's "time" comes last, after the whole
 * intent), so a string is searched sixteen bytes at a time (SSE2) or
 * eight (SWAR) for its quote or backslash (find_stop); the other runs
 * are short and go a byte at a time through a class table. Each reads
 * only bytes before end.
 */
#include "audit_leaf.h"

#include <string.h>

#include "ig_time.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* Every string of a leaf goes through these two: a call apiece cost a
   sixth of the scan. */
#define INLINE static inline __attribute__((always_inline))

struct cur {
    const char *p, *end;
};

/* Byte classes (the table holds the union of a byte's classes). */
enum {
    C_WS = 1,     /* white space between tokens */
    C_SCALAR = 2, /* ends a scalar: white space, a structural byte, NUL */
    C_NEST = 4    /* matters inside an object or array: a quote, bracket */
};

static const unsigned char cls[256] = {
    [' '] = C_WS | C_SCALAR,   ['\t'] = C_WS | C_SCALAR,
    ['\n'] = C_WS | C_SCALAR,  ['\r'] = C_WS | C_SCALAR,
    [','] = C_SCALAR,          [':'] = C_SCALAR,
    ['\0'] = C_SCALAR,         ['"'] = C_SCALAR | C_NEST,
    ['{'] = C_SCALAR | C_NEST, ['['] = C_SCALAR | C_NEST,
    ['}'] = C_SCALAR | C_NEST, [']'] = C_SCALAR | C_NEST,
};

static int
is(char ch, unsigned mask)
{
    return (cls[(unsigned char)ch] & mask) != 0;
}

#define ONES UINT64_C(0x0101010101010101)
#define LOW7 UINT64_C(0x7f7f7f7f7f7f7f7f)

/* 0x80 in every byte of x that is zero and nothing elsewhere: exact, as
   no sum carries from one byte into the next. */
static uint64_t
zero_bytes(uint64_t x)
{
    return ~(((x & LOW7) + LOW7) | x | LOW7);
}

/* The offset of the first (lowest-addressed) byte flagged in m != 0. */
static size_t
first_flagged(uint64_t m)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return (size_t)__builtin_clzll(m) / 8;
#else
    return (size_t)__builtin_ctzll(m) / 8;
#endif
}

/* The first '"' or '\\' in [p, end), or end: sixteen bytes at a time with
   SSE2, else eight (SWAR), then one at a time for the rest. */
INLINE const char *
find_stop(const char *p, const char *end)
{
    uint64_t w, m;

#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\');
    __m128i v;
    unsigned bits;

    while (end - p >= 16) {
        v = _mm_loadu_si128((const void *)p);
        bits = (unsigned)_mm_movemask_epi8(
            _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)));
        if (bits != 0)
            return p + __builtin_ctz(bits);
        p += 16;
    }
#endif
    while (end - p >= 8) {
        memcpy(&w, p, sizeof(w));
        m = zero_bytes(w ^ (ONES * '"')) | zero_bytes(w ^ (ONES * '\\'));
        if (m != 0)
            return p + first_flagged(m);
        p += 8;
    }
    while (p < end && *p != '"' && *p != '\\')
        p++;
    return p;
}

static void
skip_ws(struct cur *c)
{
    while (c->p < c->end && is(*c->p, C_WS))
        c->p++;
}

/* At a '"': past the closing quote. -1 when it never closes. *esc: a
   backslash was seen. */
INLINE int
skip_string(struct cur *c, int *esc)
{
    const char *p = c->p + 1;

    *esc = 0;
    for (;;) {
        p = find_stop(p, c->end);
        if (p == c->end)
            return -1;
        if (*p == '"') {
            c->p = p + 1;
            return 0;
        }
        *esc = 1;
        if (c->end - p < 2)
            return -1; /* a backslash as the last byte */
        p += 2;
    }
}

/* Inside an object or array: past its closing bracket. -1 when it is
   cut short. Brackets are counted, not matched. */
static int
skip_nested(struct cur *c)
{
    size_t depth = 0;
    int esc;

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
        for (c->p++; c->p < c->end && !is(*c->p, C_NEST); c->p++)
            ;
    }
    return -1;
}

/* At a value: past it. -1 when it is cut short or empty. A string, an
   object or array, or a scalar (a run of bytes up to white space or a
   structural character). */
static int
skip_value(struct cur *c)
{
    const char *start = c->p;
    int esc;

    if (c->p < c->end && *c->p == '"')
        return skip_string(c, &esc);
    if (c->p < c->end && *c->p != '{' && *c->p != '[') {
        while (c->p < c->end && !is(*c->p, C_SCALAR))
            c->p++;
        return c->p > start ? 0 : -1;
    }
    return skip_nested(c);
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
