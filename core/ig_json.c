/*
 * ig_json.c - strict reader for untrusted JSON text.
 *
 * How it works. Two passes over the bytes.
 *
 * 1. A pre-scan (no allocation) walks the text once, aware of strings and
 *    their escapes. It enforces the limits of ig_limits.h - size, nesting,
 *    members per object, elements per array, values in the document - and
 *    refuses what jansson reports badly or not at all: control bytes
 *    (jansson silently drops a NUL byte after a number or a literal, so
 *    "1\0" would parse), bad escapes and lone surrogate escapes. Each such
 *    error carries the line and column of the offending byte. The counting
 *    is exact for well-formed JSON; for malformed text it may be off, which
 *    does not matter because jansson then refuses the text.
 * 2. jansson (json_loadb) parses with JSON_REJECT_DUPLICATES,
 *    JSON_DECODE_INT_AS_REAL (every number becomes a double; jansson
 *    refuses a number whose magnitude overflows), JSON_ALLOW_NUL and
 *    JSON_DECODE_ANY. It checks UTF-8 (overlongs, encoded surrogates and
 *    code points above U+10FFFF are refused) and the grammar. Its error is
 *    mapped to a message of ours and a position: jansson reports where it
 *    stopped reading, after the token at fault, and counts columns in
 *    characters; we move back to the start of that token.
 *
 * Lines and columns are 1-based; columns count bytes.
 *
 * JSON pointers (RFC 6901) are resolved one token at a time: the token is
 * unescaped ("~1" -> "/", "~0" -> "~") into a stack buffer as long as the
 * longest pointer, then looked up as an object member (by length, so a key
 * may hold any byte) or as a decimal array index written without leading
 * zeros.
 */
#include "ig_json.h"

#include <stdint.h>
#include <string.h>

#include "ig_limits.h"

#define PARSE_FLAGS                                                            \
    (JSON_REJECT_DUPLICATES | JSON_DECODE_INT_AS_REAL | JSON_ALLOW_NUL |       \
     JSON_DECODE_ANY)

/* Longest piece of a key quoted in an error message, in bytes. */
#define KEY_EXCERPT 48

struct frame {
    size_t count;       /* members (object) or elements (array) so far */
    unsigned char obj;  /* 1 for an object */
    unsigned char want; /* object: the next string is a key */
};

struct scan {
    const unsigned char *p;
    size_t len;
    size_t values;
    int depth;
    struct frame stack[IG_JSON_MAX_DEPTH];
};

/* Put the 1-based line and byte column of offset off into err; return st. */
static enum ig_status
at(struct ig_err *err, enum ig_status st, const unsigned char *p, size_t off)
{
    const unsigned char *q = p, *nl;
    int line = 1;

    if (err == NULL)
        return st;
    while ((nl = memchr(q, '\n', (size_t)(p + off - q))) != NULL) {
        line++;
        q = nl + 1;
    }
    err->line = line;
    err->column = (int)(p + off - q) + 1;
    return st;
}

static int
is_delim(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',' ||
           c == ':' || c == '[' || c == ']' || c == '{' || c == '}' ||
           c == '"' || c < 0x20;
}

/* Count a value starting at off (not an object key). */
static enum ig_status
add_value(struct scan *s, size_t off, struct ig_err *err)
{
    struct frame *f = s->depth > 0 ? &s->stack[s->depth - 1] : NULL;

    if (++s->values > IG_JSON_MAX_VALUES)
        return at(err,
                  ig_err_set(err, IG_ERR_LIMIT,
                             "more than %d values in the document",
                             IG_JSON_MAX_VALUES),
                  s->p, off);
    if (f != NULL && !f->obj && ++f->count > IG_JSON_MAX_ARRAY_LENGTH)
        return at(err,
                  ig_err_set(err, IG_ERR_LIMIT, "array longer than %d elements",
                             IG_JSON_MAX_ARRAY_LENGTH),
                  s->p, off);
    return IG_OK;
}

/* A string starts at off: count it as an object key or as a value. */
static enum ig_status
add_string(struct scan *s, size_t off, struct ig_err *err)
{
    struct frame *f = s->depth > 0 ? &s->stack[s->depth - 1] : NULL;

    if (f == NULL || !f->obj || !f->want)
        return add_value(s, off, err);
    f->want = 0;
    if (++f->count > IG_JSON_MAX_OBJECT_MEMBERS)
        return at(err,
                  ig_err_set(err, IG_ERR_LIMIT,
                             "object with more than %d members",
                             IG_JSON_MAX_OBJECT_MEMBERS),
                  s->p, off);
    return IG_OK;
}

/* Four hex digits at p[i..i+3] (n bytes in all), or -1. */
static long
hex4(const unsigned char *p, size_t i, size_t n)
{
    long v = 0;
    size_t k;

    if (n < 4 || i > n - 4)
        return -1;
    for (k = i; k < i + 4; k++) {
        unsigned char c = p[k];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= c - '0';
        else if (c >= 'a' && c <= 'f')
            v |= c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            v |= c - 'A' + 10;
        else
            return -1;
    }
    return v;
}

/* The escape at p[*i] == '\\': check it, move *i past it. */
static enum ig_status
scan_escape(const struct scan *s, size_t *i, struct ig_err *err)
{
    const unsigned char *p = s->p;
    size_t b = *i;
    long u, lo;

    if (b + 1 >= s->len) {
        *i = s->len; /* unterminated; the caller reports it */
        return IG_OK;
    }
    if (memchr("\"\\/bfnrt", p[b + 1], 8) != NULL) {
        *i = b + 2;
        return IG_OK;
    }
    if (p[b + 1] != 'u')
        return at(err, ig_err_set(err, IG_ERR_INVALID, "invalid escape"), p, b);
    if ((u = hex4(p, b + 2, s->len)) < 0)
        return at(err, ig_err_set(err, IG_ERR_INVALID, "invalid \\u escape"), p,
                  b);
    *i = b + 6;
    if (u < 0xD800 || u > 0xDFFF)
        return IG_OK;
    if (u <= 0xDBFF && b + 7 < s->len && p[b + 6] == '\\' && p[b + 7] == 'u' &&
        (lo = hex4(p, b + 8, s->len)) >= 0xDC00 && lo <= 0xDFFF) {
        *i = b + 12;
        return IG_OK;
    }
    return at(
        err,
        ig_err_set(err, IG_ERR_INVALID, "lone surrogate escape \\u%04lx", u), p,
        b);
}

/* The string opening at p[*pos] == '"': check it, move *pos past it. */
static enum ig_status
scan_string(const struct scan *s, size_t *pos, struct ig_err *err)
{
    const unsigned char *p = s->p;
    size_t i = *pos + 1;
    enum ig_status st;

    while (i < s->len) {
        unsigned char c = p[i];
        if (c == '"') {
            *pos = i + 1;
            return IG_OK;
        }
        if (c == '\\') {
            if ((st = scan_escape(s, &i, err)) != IG_OK)
                return st;
        } else if (c < 0x20) {
            return at(err,
                      ig_err_set(err, IG_ERR_INVALID,
                                 "unescaped control character 0x%02x in "
                                 "string",
                                 c),
                      p, i);
        } else {
            i++;
        }
    }
    return at(err, ig_err_set(err, IG_ERR_INVALID, "unterminated string"), p,
              *pos);
}

/* An object or array opens at off. */
static enum ig_status
push(struct scan *s, size_t off, struct ig_err *err)
{
    enum ig_status st;
    struct frame *f;

    if ((st = add_value(s, off, err)) != IG_OK)
        return st;
    if (s->depth >= IG_JSON_MAX_DEPTH)
        return at(err,
                  ig_err_set(err, IG_ERR_LIMIT, "nesting deeper than %d levels",
                             IG_JSON_MAX_DEPTH),
                  s->p, off);
    f = &s->stack[s->depth++];
    f->count = 0;
    f->obj = s->p[off] == '{';
    f->want = f->obj;
    return IG_OK;
}

/* A scalar token (number, literal or garbage) starts at *i. */
static enum ig_status
scan_scalar(struct scan *s, size_t *i, struct ig_err *err)
{
    unsigned char c = s->p[*i];

    if (c < 0x20)
        return at(err,
                  ig_err_set(err, IG_ERR_INVALID,
                             "unexpected control character 0x%02x", c),
                  s->p, *i);
    while (*i < s->len && !is_delim(s->p[*i]))
        (*i)++;
    return IG_OK;
}

static enum ig_status
prescan(struct scan *s, struct ig_err *err)
{
    enum ig_status st = IG_OK;
    size_t i = 0;

    while (i < s->len && st == IG_OK) {
        unsigned char c = s->p[i];
        switch (c) {
        case ' ':
        case '\t':
        case '\n':
        case '\r':
        case ':':
            i++;
            break;
        case ',':
            if (s->depth > 0 && s->stack[s->depth - 1].obj)
                s->stack[s->depth - 1].want = 1;
            i++;
            break;
        case '{':
        case '[':
            st = push(s, i++, err);
            break;
        case '}':
        case ']':
            if (s->depth > 0)
                s->depth--;
            i++;
            break;
        case '"':
            if ((st = add_string(s, i, err)) == IG_OK)
                st = scan_string(s, &i, err);
            break;
        default:
            if ((st = add_value(s, i, err)) == IG_OK)
                st = scan_scalar(s, &i, err);
            break;
        }
    }
    return st;
}

static int
is_scalar_byte(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
           (c >= 'A' && c <= 'Z') || c == '+' || c == '-' || c == '.';
}

/*
 * jansson stopped reading at pos, just after the token at fault. Find the
 * start of that token: a string's opening quote (an escaped quote follows
 * an odd run of backslashes), a number's or literal's first byte, or the
 * lead byte of a UTF-8 character.
 */
static size_t
token_start(const unsigned char *p, size_t len, size_t pos)
{
    size_t e, k, b;

    if (len == 0 || pos == 0)
        return 0;
    e = pos > len ? len - 1 : pos - 1;
    if (p[e] == '"') {
        for (k = e; k > 0;) {
            k--;
            if (p[k] != '"')
                continue;
            for (b = 0; b < k && p[k - b - 1] == '\\'; b++)
                ;
            if (b % 2 == 0)
                return k;
        }
        return e;
    }
    if (is_scalar_byte(p[e])) {
        while (e > 0 && is_scalar_byte(p[e - 1]))
            e--;
        return e;
    }
    while (e > 0 && (p[e] & 0xC0) == 0x80)
        e--;
    return e;
}

/* Duplicate key: quote (part of) its source text, which is valid UTF-8. */
static enum ig_status
duplicate_key(const unsigned char *p, size_t len, size_t pos,
              struct ig_err *err)
{
    size_t start = token_start(p, len, pos), n = 0;
    size_t end = pos > start + 1 ? pos - 1 : start + 1; /* closing quote */
    const char *more = "";

    if (end > len)
        end = len;
    n = end - start - 1;
    if (n > KEY_EXCERPT) {
        n = KEY_EXCERPT;
        while (n > 0 && (p[start + 1 + n] & 0xC0) == 0x80)
            n--;
        more = "...";
    }
    return at(err,
              ig_err_set(err, IG_ERR_INVALID, "duplicate object key \"%.*s%s\"",
                         (int)n, (const char *)p + start + 1, more),
              p, start);
}

/* Any other jansson error: its text with control bytes masked. */
static enum ig_status
syntax_error(const json_error_t *je, const unsigned char *p, size_t len,
             size_t pos, struct ig_err *err)
{
    char msg[JSON_ERROR_TEXT_LENGTH];
    size_t i;

    for (i = 0; i + 1 < sizeof(msg) && je->text[i] != '\0'; i++) {
        unsigned char c = (unsigned char)je->text[i];
        msg[i] = c < 0x20 || c == 0x7F ? '?' : (char)c;
    }
    msg[i] = '\0';
    return at(err, ig_err_set(err, IG_ERR_INVALID, "%s", msg), p,
              token_start(p, len, pos));
}

static enum ig_status
map_error(const json_error_t *je, const unsigned char *p, size_t len,
          struct ig_err *err)
{
    size_t pos = je->position < 0 ? 0 : (size_t)je->position;

    if (pos > len)
        pos = len;
    if (je->text[0] == '\0')
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    switch (json_error_code(je)) {
    case json_error_out_of_memory:
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    case json_error_invalid_utf8:
        return at(err,
                  ig_err_set(err, IG_ERR_INVALID, "invalid UTF-8 (byte 0x%02x)",
                             pos < len ? p[pos] : 0),
                  p, pos);
    case json_error_premature_end_of_input:
        return at(err,
                  ig_err_set(err, IG_ERR_INVALID, "unexpected end of input"), p,
                  len);
    case json_error_duplicate_key:
        return duplicate_key(p, len, pos, err);
    case json_error_null_byte_in_key:
        return at(err,
                  ig_err_set(err, IG_ERR_INVALID,
                             "\\u0000 in an object key is not supported"),
                  p, token_start(p, len, pos));
    case json_error_numeric_overflow:
        return at(
            err,
            ig_err_set(err, IG_ERR_INVALID, "number too large for a double"), p,
            token_start(p, len, pos));
    case json_error_end_of_input_expected:
        return at(
            err,
            ig_err_set(err, IG_ERR_INVALID, "unexpected text after the value"),
            p, token_start(p, len, pos));
    default:
        return syntax_error(je, p, len, pos, err);
    }
}

enum ig_status
ig_json_parse(const char *text, size_t len, json_t **out, struct ig_err *err)
{
    struct scan s;
    json_error_t je;
    enum ig_status st;

    IG_ASSERT(out != NULL);
    *out = NULL;
    ig_err_clear(err);
    if (text == NULL)
        return ig_err_set(err, IG_ERR_INVALID, "no text");
    if (len > IG_JSON_MAX_BYTES)
        return at(err,
                  ig_err_set(err, IG_ERR_LIMIT, "text longer than %d bytes",
                             IG_JSON_MAX_BYTES),
                  (const unsigned char *)text, IG_JSON_MAX_BYTES);
    s.p = (const unsigned char *)text;
    s.len = len;
    s.values = 0;
    s.depth = 0;
    if ((st = prescan(&s, err)) != IG_OK)
        return st;
    memset(&je, 0, sizeof(je));
    *out = json_loadb(text, len, PARSE_FLAGS, &je);
    if (*out == NULL)
        return map_error(&je, s.p, len, err);
    return IG_OK;
}

int
ig_json_pointer_valid(const char *p)
{
    size_t n, i;

    if (p == NULL)
        return 0;
    n = strnlen(p, IG_AUDIT_POINTER_MAX + 1);
    if (n > IG_AUDIT_POINTER_MAX || (n > 0 && p[0] != '/'))
        return 0;
    for (i = 0; i < n; i++)
        if (p[i] == '~' && p[i + 1] != '0' && p[i + 1] != '1')
            return 0;
    return 1;
}

/* An RFC 6901 array index: "0", or digits without a leading zero. */
static int
pointer_index(const char *tok, size_t len, size_t *out)
{
    size_t i, v = 0;

    if (len == 0 || (len > 1 && tok[0] == '0'))
        return 0;
    for (i = 0; i < len; i++) {
        if (tok[i] < '0' || tok[i] > '9')
            return 0;
        if (v > (SIZE_MAX - 9) / 10)
            return 0; /* past any array jansson can hold */
        v = v * 10 + (size_t)(tok[i] - '0');
    }
    *out = v;
    return 1;
}

const json_t *
ig_json_pointer_find(const json_t *doc, const char *p,
                     struct ig_json_step *last)
{
    const json_t *v = doc;
    size_t i = 0, k;

    memset(last, 0, sizeof(*last));
    if (!ig_json_pointer_valid(p))
        return NULL;
    while (v != NULL && p[i] == '/') {
        for (i++, k = 0; p[i] != '\0' && p[i] != '/'; k++) {
            last->key[k] = p[i] == '~' ? (p[i + 1] == '1' ? '/' : '~') : p[i];
            i += p[i] == '~' ? 2 : 1;
        }
        last->key[k] = '\0';
        last->key_len = k;
        last->parent = v;
        if (json_is_object(v))
            v = json_object_getn(v, last->key, k);
        else if (json_is_array(v) && pointer_index(last->key, k, &last->index))
            v = json_array_get(v, last->index);
        else
            v = NULL;
    }
    return v;
}

const json_t *
ig_json_pointer_get(const json_t *doc, const char *p)
{
    struct ig_json_step last;

    return ig_json_pointer_find(doc, p, &last);
}
