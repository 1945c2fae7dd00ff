/*
 * ig_canon.c - RFC 8785 (JCS) serializer for jansson values.
 *
 * How it works. A recursive writer stages its output in a 1 KiB chunk on
 * the stack and moves it to the caller's capped struct ig_buf as the chunk
 * fills (one ig_buf_add() per KiB instead of one per token). Objects: the
 * members are gathered into an array of (key, length, value)
 * - on the stack for small objects, malloc'd for big ones - sorted, then
 * written. Keys compare as UTF-16 code-unit sequences without decoding:
 * UTF-8 byte order equals code-point order, and code-point order differs
 * from UTF-16 order only when a supplementary character (lead byte
 * F0..F4, a surrogate pair in UTF-16, units D800..DBFF) meets a character
 * in U+E000..U+FFFF (lead byte EE or EF); then the supplementary one sorts
 * first. Strings are checked to be valid UTF-8 while they are escaped,
 * because values built in code may not be. Numbers go through
 * ig_canon_number(). Nesting is bounded by IG_JSON_MAX_DEPTH (containers
 * only; the top-level container is depth 1) so the recursion is bounded
 * even for values built in code.
 */
#include "ig_canon.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ig_json.h"
#include "ig_limits.h"

/* Objects up to this many members are sorted on the stack. */
#define SMALL_OBJECT 16
/* Output is staged in a stack chunk of this size, then added to the buf. */
#define STAGE 1024

/* 2^53: a json_integer beyond this magnitude may not equal any double. */
#define MAX_SAFE_INT 9007199254740992LL

struct member {
    const unsigned char *key;
    size_t klen;
    const json_t *val;
};

/* The output: small appends go to stage, which is flushed to out. */
struct writer {
    struct ig_buf *out;
    struct ig_err *err;
    size_t n;
    char stage[STAGE];
};

static enum ig_status write_value(struct writer *w, const json_t *v, int depth);

static enum ig_status
add(struct writer *w, const void *p, size_t n)
{
    enum ig_status st = ig_buf_add(w->out, p, n);

    if (st == IG_ERR_LIMIT)
        return ig_err_set(w->err, st, "canonical form longer than %zu bytes",
                          w->out->max);
    if (st != IG_OK)
        return ig_err_set(w->err, st, "out of memory");
    return IG_OK;
}

static enum ig_status
flush(struct writer *w)
{
    size_t n = w->n;

    w->n = 0;
    return add(w, w->stage, n);
}

static enum ig_status
put(struct writer *w, const void *p, size_t n)
{
    enum ig_status st;

    if (n <= STAGE - w->n) {
        memcpy(w->stage + w->n, p, n);
        w->n += n;
        return IG_OK;
    }
    if ((st = flush(w)) != IG_OK)
        return st;
    if (n <= STAGE / 2)
        return put(w, p, n);
    return add(w, p, n);
}

static enum ig_status
putc_(struct writer *w, char c)
{
    if (w->n < STAGE) {
        w->stage[w->n++] = c;
        return IG_OK;
    }
    return put(w, &c, 1);
}

/* Length of the valid UTF-8 sequence at s (n > 0 bytes left), 0 if bad. */
static size_t
utf8_len(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    unsigned char lo = 0x80, hi = 0xBF;
    size_t k, i;

    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        k = 2;
    else if (c >= 0xE0 && c <= 0xEF)
        k = 3;
    else if (c >= 0xF0 && c <= 0xF4)
        k = 4;
    else
        return 0;
    if (c == 0xE0)
        lo = 0xA0; /* overlong */
    else if (c == 0xED)
        hi = 0x9F; /* UTF-16 surrogates */
    else if (c == 0xF0)
        lo = 0x90; /* overlong */
    else if (c == 0xF4)
        hi = 0x8F; /* above U+10FFFF */
    if (n < k || s[1] < lo || s[1] > hi)
        return 0;
    for (i = 2; i < k; i++)
        if (s[i] < 0x80 || s[i] > 0xBF)
            return 0;
    return k;
}

/* The escape for byte c (< 0x20, '"' or '\\') into e; returns its length. */
static size_t
escape(unsigned char c, char e[6])
{
    static const char hex[] = "0123456789abcdef";

    e[0] = '\\';
    switch (c) {
    case '"':
    case '\\':
        e[1] = (char)c;
        return 2;
    case '\b':
        e[1] = 'b';
        return 2;
    case '\t':
        e[1] = 't';
        return 2;
    case '\n':
        e[1] = 'n';
        return 2;
    case '\f':
        e[1] = 'f';
        return 2;
    case '\r':
        e[1] = 'r';
        return 2;
    default:
        break;
    }
    e[1] = 'u';
    e[2] = '0';
    e[3] = '0';
    e[4] = hex[c >> 4];
    e[5] = hex[c & 0xF];
    return 6;
}

/*
 * Length of the leading run of s (n bytes) with nothing to escape or check:
 * no byte below 0x20, '"', '\\' or 0x80 and above. Eight bytes at a time
 * (the "has a zero byte" bit trick), then bytewise.
 */
static size_t
plain_run(const unsigned char *s, size_t n)
{
    const uint64_t ones = 0x0101010101010101ULL, highs = ones * 0x80;
    size_t i = 0;
    uint64_t x, q, b;

    for (; n - i >= 8; i += 8) {
        memcpy(&x, s + i, 8);
        q = x ^ (ones * '"');
        b = x ^ (ones * '\\');
        if ((((x - ones * 0x20) & ~x) | ((q - ones) & ~q) | ((b - ones) & ~b) |
             x) &
            highs)
            break;
    }
    while (i < n && s[i] >= 0x20 && s[i] != '"' && s[i] != '\\' && s[i] < 0x80)
        i++;
    return i;
}

/* Write s (len bytes, may hold NULs) as a JSON string. */
static enum ig_status
write_string(struct writer *w, const unsigned char *s, size_t len)
{
    size_t i = 0, run = 0, n;
    char e[6];
    enum ig_status st;

    if ((st = putc_(w, '"')) != IG_OK)
        return st;
    while (i < len) {
        unsigned char c;
        i += plain_run(s + i, len - i);
        if (i == len)
            break;
        c = s[i];
        if (c >= 0x80) {
            if ((n = utf8_len(s + i, len - i)) == 0)
                return ig_err_set(w->err, IG_ERR_INVALID,
                                  "string is not valid UTF-8 (byte %zu)", i);
            i += n;
            continue;
        }
        if ((st = put(w, s + run, i - run)) != IG_OK)
            return st;
        if ((st = put(w, e, escape(c, e))) != IG_OK)
            return st;
        run = ++i;
    }
    if ((st = put(w, s + run, len - run)) != IG_OK)
        return st;
    return putc_(w, '"');
}

/* Compare two keys as UTF-16 code-unit sequences (see the top comment). */
static int
key_cmp(const struct member *a, const struct member *b)
{
    size_t i = 0, n = a->klen < b->klen ? a->klen : b->klen;
    unsigned char x, y;

    while (i < n && a->key[i] == b->key[i])
        i++;
    if (i == n)
        return a->klen < b->klen ? -1 : a->klen > b->klen;
    x = a->key[i];
    y = b->key[i];
    if (x >= 0xEE && y >= 0xEE && (x >= 0xF0) != (y >= 0xF0))
        return x >= 0xF0 ? -1 : 1;
    return x < y ? -1 : 1;
}

static int
key_qsort_cmp(const void *a, const void *b)
{
    return key_cmp(a, b);
}

static void
sort_members(struct member *m, size_t n)
{
    size_t i, j;
    struct member t;

    if (n > SMALL_OBJECT) {
        qsort(m, n, sizeof(*m), key_qsort_cmp);
        return;
    }
    for (i = 1; i < n; i++) {
        t = m[i];
        for (j = i; j > 0 && key_cmp(&m[j - 1], &t) > 0; j--)
            m[j] = m[j - 1];
        m[j] = t;
    }
}

static enum ig_status
write_members(struct writer *w, const struct member *m, size_t n, int depth)
{
    enum ig_status st;
    size_t i;

    for (i = 0; i < n; i++) {
        if (i > 0 && (st = putc_(w, ',')) != IG_OK)
            return st;
        if ((st = write_string(w, m[i].key, m[i].klen)) != IG_OK)
            return st;
        if ((st = putc_(w, ':')) != IG_OK)
            return st;
        if ((st = write_value(w, m[i].val, depth)) != IG_OK)
            return st;
    }
    return IG_OK;
}

static enum ig_status
write_object(struct writer *w, const json_t *obj, int depth)
{
    struct member small[SMALL_OBJECT], *m = small;
    size_t n = json_object_size(obj), i = 0;
    enum ig_status st;
    void *it;

    if (n > SMALL_OBJECT) {
        if (n > SIZE_MAX / sizeof(*m) || (m = malloc(n * sizeof(*m))) == NULL)
            return ig_err_set(w->err, IG_ERR_NOMEM, "out of memory");
    }
    for (it = json_object_iter(ig_json_unconst(obj)); it != NULL && i < n;
         it = json_object_iter_next(ig_json_unconst(obj), it), i++) {
        m[i].key = (const unsigned char *)json_object_iter_key(it);
        m[i].klen = json_object_iter_key_len(it);
        m[i].val = json_object_iter_value(it);
    }
    sort_members(m, i);
    if ((st = putc_(w, '{')) != IG_OK)
        goto out;
    if ((st = write_members(w, m, i, depth)) != IG_OK)
        goto out;
    st = putc_(w, '}');
out:
    if (m != small)
        free(m);
    return st;
}

static enum ig_status
write_array(struct writer *w, const json_t *arr, int depth)
{
    size_t i, n = json_array_size(arr);
    enum ig_status st;

    if ((st = putc_(w, '[')) != IG_OK)
        return st;
    for (i = 0; i < n; i++) {
        if (i > 0 && (st = putc_(w, ',')) != IG_OK)
            return st;
        if ((st = write_value(w, json_array_get(arr, i), depth)) != IG_OK)
            return st;
    }
    return putc_(w, ']');
}

static enum ig_status
write_number(struct writer *w, const json_t *v)
{
    char num[IG_NUMBER_STRMAX];
    size_t n;
    double d;

    if (json_is_integer(v)) {
        json_int_t i = json_integer_value(v);
        if (i > MAX_SAFE_INT || i < -MAX_SAFE_INT)
            return ig_err_set(w->err, IG_ERR_INVALID,
                              "integer %" JSON_INTEGER_FORMAT
                              " is beyond 2^53 in magnitude",
                              i);
        d = (double)i;
    } else {
        d = json_real_value(v);
    }
    if (ig_canon_number(d, num, &n) != IG_OK)
        return ig_err_set(w->err, IG_ERR_INVALID, "number is NaN or infinite");
    return put(w, num, n);
}

static enum ig_status
write_value(struct writer *w, const json_t *v, int depth)
{
    if (v == NULL)
        return ig_err_set(w->err, IG_ERR_INVALID, "missing value");
    switch (json_typeof(v)) {
    case JSON_OBJECT:
    case JSON_ARRAY:
        if (depth >= IG_JSON_MAX_DEPTH)
            return ig_err_set(w->err, IG_ERR_LIMIT,
                              "nesting deeper than %d levels",
                              IG_JSON_MAX_DEPTH);
        if (json_is_object(v))
            return write_object(w, v, depth + 1);
        return write_array(w, v, depth + 1);
    case JSON_STRING:
        return write_string(w, (const unsigned char *)json_string_value(v),
                            json_string_length(v));
    case JSON_INTEGER:
    case JSON_REAL:
        return write_number(w, v);
    case JSON_TRUE:
        return put(w, "true", 4);
    case JSON_FALSE:
        return put(w, "false", 5);
    case JSON_NULL:
        return put(w, "null", 4);
    }
    return ig_err_set(w->err, IG_ERR_INVALID, "unknown JSON type");
}

enum ig_status
ig_canon_write(const json_t *v, struct ig_buf *out, struct ig_err *err)
{
    struct writer w;
    enum ig_status st;

    w.out = out;
    w.err = err;
    w.n = 0;
    st = write_value(&w, v, 0);
    if (st == IG_OK)
        st = flush(&w);
    return st;
}

enum ig_status
ig_canon_string(const char *s, size_t len, struct ig_buf *out,
                struct ig_err *err)
{
    struct writer w;
    enum ig_status st;

    w.out = out;
    w.err = err;
    w.n = 0;
    st = write_string(&w, (const unsigned char *)s, len);
    if (st == IG_OK)
        st = flush(&w);
    return st;
}

enum ig_status
ig_canon_text(const char *text, size_t len, struct ig_buf *out,
              struct ig_err *err)
{
    json_t *v = NULL;
    enum ig_status st;

    st = ig_json_parse(text, len, &v, err);
    if (st != IG_OK)
        goto out;
    st = ig_canon_write(v, out, err);
out:
    json_decref(v);
    return st;
}
