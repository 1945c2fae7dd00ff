/*
 * test_json.c - the strict JSON reader.
 *
 * Mostly negative tests: every kind of refused text (duplicate keys,
 * invalid UTF-8, lone surrogates, NaN/Infinity, overflowing numbers,
 * trailing garbage, control bytes) and every limit of ig_limits.h at and
 * one past its value, with the reported line and column checked.
 */
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ig_json.h"
#include "ig_limits.h"

/* Parse text (len bytes) expecting st; returns the value (or NULL). */
static json_t *
parse(const char *text, size_t len, enum ig_status want, struct ig_err *err)
{
    json_t *v = json_null(); /* must be overwritten */
    enum ig_status st = ig_json_parse(text, len, &v, err);

    if (st != want)
        fail_msg("%.*s: status %d (%s), want %d", (int)(len > 80 ? 80 : len),
                 text, st, err->msg, want);
    if (st != IG_OK) {
        assert_null(v);
        assert_true(strlen(err->msg) > 0);
        assert_null(strchr(err->msg, '\n'));
        assert_true(err->line >= 1 && err->column >= 1);
    }
    return v;
}

static void
check_ok(const char *text)
{
    struct ig_err err;
    json_t *v = parse(text, strlen(text), IG_OK, &err);

    assert_non_null(v);
    json_decref(v);
}

/* Refused with st at line:column, with msg (when not NULL) in the text. */
static void
check_err_n(const char *text, size_t len, enum ig_status st, int line,
            int column, const char *msg)
{
    struct ig_err err;

    (void)parse(text, len, st, &err);
    if (err.line != line || err.column != column)
        fail_msg("%.*s: at %d:%d (%s), want %d:%d", (int)len, text, err.line,
                 err.column, err.msg, line, column);
    if (msg != NULL && strstr(err.msg, msg) == NULL)
        fail_msg("%.*s: message \"%s\" lacks \"%s\"", (int)len, text, err.msg,
                 msg);
}

static void
check_err(const char *text, enum ig_status st, int line, int column,
          const char *msg)
{
    check_err_n(text, strlen(text), st, line, column, msg);
}

static void
test_valid(void **state)
{
    static const char *names[] = {"arrays",  "french", "structures",
                                  "unicode", "values", "weird"};
    char path[64];
    struct ig_err err;
    size_t i, len;

    (void)state;
    for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        char *text;
        json_t *v;
        (void)snprintf(path, sizeof(path), "jcs/input/%s.json", names[i]);
        text = tu_read_vector(path, &len);
        v = parse(text, len, IG_OK, &err);
        json_decref(v);
        free(text);
    }
    check_ok("{}");
    check_ok("[]");
    check_ok(" \t\r\n[ ] \n");
    check_ok("\"top-level string\"");
    check_ok("true");
    check_ok("null");
    check_ok("-12.5e-3");
    check_ok("{\"a\":[1,{\"b\":null}],\"c\":\"\\ud83d\\ude02\"}");
    check_ok("\"\xf0\x9f\x98\x82\xe2\x82\xac\xc3\xa9\xef\xbf\xbf\"");
}

static void
test_numbers_are_reals(void **state)
{
    struct ig_err err;
    json_t *v;

    (void)state;
    static const char text[] =
        "[1, -0, 9007199254740993, 1e-400, 123456789012345678901234]";

    v = parse(text, sizeof(text) - 1, IG_OK, &err);
    assert_true(json_is_real(json_array_get(v, 0)));
    assert_true(json_real_value(json_array_get(v, 0)) == 1.0);
    assert_true(json_is_real(json_array_get(v, 1)));
    assert_true(signbit(json_real_value(json_array_get(v, 1))));
    assert_true(json_real_value(json_array_get(v, 2)) == 9007199254740992.0);
    assert_true(json_real_value(json_array_get(v, 3)) == 0.0);
    assert_true(json_real_value(json_array_get(v, 4)) ==
                123456789012345678901234.0);
    json_decref(v);
}

static void
test_nul_in_strings(void **state)
{
    struct ig_err err;
    json_t *v;

    (void)state;
    v = parse("\"a\\u0000b\"", 10, IG_OK, &err);
    assert_int_equal(json_string_length(v), 3);
    assert_memory_equal(json_string_value(v), "a\0b", 3);
    json_decref(v);
    /* jansson 2.14 refuses NUL in keys, even with JSON_ALLOW_NUL. */
    check_err("{\"a\\u0000b\":1}", IG_ERR_INVALID, 1, 2, "\\u0000");
    /* A raw NUL byte is never JSON; jansson alone would accept "1\0". */
    check_err_n("1\0", 2, IG_ERR_INVALID, 1, 2, "control character 0x00");
    check_err_n("true\0", 5, IG_ERR_INVALID, 1, 5, "0x00");
    check_err_n("[1\0]", 4, IG_ERR_INVALID, 1, 3, "0x00");
    check_err_n("\"a\0\"", 4, IG_ERR_INVALID, 1, 3, "0x00");
    check_err_n("\0", 1, IG_ERR_INVALID, 1, 1, NULL);
}

static void
test_duplicate_keys(void **state)
{
    char longkey[160];

    (void)state;
    /* A long key is quoted in part: {"aaa...":1,"aaa...":2}, 60 a's. */
    memset(longkey, 'a', sizeof(longkey));
    longkey[0] = '{';
    longkey[1] = longkey[62] = longkey[66] = longkey[127] = '"';
    memcpy(longkey + 63, ":1,", 3);
    memcpy(longkey + 128, ":2}", 4);
    check_err(longkey, IG_ERR_INVALID, 1, 67, "aaaaaaaa...\"");
    check_err("{\"a\":1,\"a\":2}", IG_ERR_INVALID, 1, 8,
              "duplicate object key \"a\"");
    check_err("{\"a\":1,\"b\":{\"x\":1,\"x\":[]}}", IG_ERR_INVALID, 1, 19,
              "duplicate object key \"x\"");
    /* Same key once decoded. */
    check_err("{\"a\":1,\"\\u0061\":2}", IG_ERR_INVALID, 1, 8,
              "duplicate object key \"\\u0061\"");
    check_err("{\"\":1,\"\":2}", IG_ERR_INVALID, 1, 7,
              "duplicate object key \"\"");
    check_err("{\"q\\\"\\\\\":1,\"q\\\"\\\\\":2}", IG_ERR_INVALID, 1, 12,
              "duplicate object key");
    check_err("{\n  \"a\": 1,\n  \"a\": 2\n}", IG_ERR_INVALID, 3, 3,
              "duplicate object key \"a\"");
    /* Same key in different objects is fine. */
    check_ok("[{\"a\":1},{\"a\":2}]");
    check_ok("{\"a\":1,\"A\":2,\"a \":3}");
}

static void
test_invalid_utf8(void **state)
{
    (void)state;
    check_err("\"\xff\"", IG_ERR_INVALID, 1, 2, "UTF-8");
    check_err("\"\x80\"", IG_ERR_INVALID, 1, 2, "UTF-8");
    check_err("\"\xc0\xaf\"", IG_ERR_INVALID, 1, 2, "UTF-8");
    check_err("\"\xc1\xbf\"", IG_ERR_INVALID, 1, 2, "UTF-8");
    check_err("\"\xe0\x80\xaf\"", IG_ERR_INVALID, 1, 2, "UTF-8");
    check_err("\"\xed\xa0\x80\"", IG_ERR_INVALID, 1, 2, "UTF-8");
    check_err("\"\xed\xbf\xbf\"", IG_ERR_INVALID, 1, 2, "UTF-8");
    check_err("\"\xf0\x80\x80\xaf\"", IG_ERR_INVALID, 1, 2, "UTF-8");
    check_err("\"\xf4\x90\x80\x80\"", IG_ERR_INVALID, 1, 2, "UTF-8");
    check_err("\"\xf8\x88\x80\x80\x80\"", IG_ERR_INVALID, 1, 2, "UTF-8");
    check_err("\"ab\xe2\x82\"", IG_ERR_INVALID, 1, 4, "UTF-8");
    check_err("[\"ok\",\n \"\xc3\"]", IG_ERR_INVALID, 2, 3, "UTF-8");
    check_err("{\"k\xff\":1}", IG_ERR_INVALID, 1, 4, "UTF-8");
    check_err("[1,\xff]", IG_ERR_INVALID, 1, 4, "UTF-8");
    check_err("\xef\xbb\xbf{}", IG_ERR_INVALID, 1, 1, NULL); /* BOM */
}

static void
test_lone_surrogates(void **state)
{
    (void)state;
    check_err("\"\\ud800\"", IG_ERR_INVALID, 1, 2, "lone surrogate");
    check_err("\"\\udc00x\"", IG_ERR_INVALID, 1, 2, "\\udc00");
    check_err("\"\\uDBFF\"", IG_ERR_INVALID, 1, 2, "\\udbff");
    check_err("\"ab\\ud800\\u0041\"", IG_ERR_INVALID, 1, 4, "\\ud800");
    check_err("\"\\ud800\\ud800\"", IG_ERR_INVALID, 1, 2, NULL);
    check_err("\"\\udc00\\ud800\"", IG_ERR_INVALID, 1, 2, "\\udc00");
    check_err("\"\\ud800\\n\"", IG_ERR_INVALID, 1, 2, NULL);
    check_err("\"\\ud800\\u\"", IG_ERR_INVALID, 1, 2, NULL);
    check_err("{\"\\ud800\":1}", IG_ERR_INVALID, 1, 3, "lone surrogate");
    check_ok("\"\\ud800\\udc00\\uDBFF\\uDFFF\"");
}

static void
test_bad_strings(void **state)
{
    (void)state;
    check_err("\"a\\q\"", IG_ERR_INVALID, 1, 3, "invalid escape");
    check_err("\"\\x41\"", IG_ERR_INVALID, 1, 2, "invalid escape");
    check_err("\"\\u12\"", IG_ERR_INVALID, 1, 2, "\\u escape");
    check_err("\"\\u12G4\"", IG_ERR_INVALID, 1, 2, "\\u escape");
    check_err("\"\\U0041\"", IG_ERR_INVALID, 1, 2, "invalid escape");
    check_err("\"a\tb\"", IG_ERR_INVALID, 1, 3, "control character 0x09");
    check_err("\"a\nb\"", IG_ERR_INVALID, 1, 3, "control character 0x0a");
    check_err("\"\x1f\"", IG_ERR_INVALID, 1, 2, "0x1f");
    check_err("\"abc", IG_ERR_INVALID, 1, 1, "unterminated string");
    check_err("[\"abc\\", IG_ERR_INVALID, 1, 2, "unterminated string");
    check_err("'single'", IG_ERR_INVALID, 1, 1, NULL);
    check_ok("\"\x7f\"");
}

static void
test_bad_numbers(void **state)
{
    (void)state;
    check_err("NaN", IG_ERR_INVALID, 1, 1, "NaN");
    check_err("[1, NaN]", IG_ERR_INVALID, 1, 5, NULL);
    check_err("Infinity", IG_ERR_INVALID, 1, 1, NULL);
    check_err("-Infinity", IG_ERR_INVALID, 1, 1, NULL);
    check_err("{\"a\": -Infinity}", IG_ERR_INVALID, 1, 7, NULL);
    check_err("1e400", IG_ERR_INVALID, 1, 1, "too large");
    check_err("[0, -1e400]", IG_ERR_INVALID, 1, 5, "too large");
    check_err("[1.8e308]", IG_ERR_INVALID, 1, 2, "too large");
    check_err("+1", IG_ERR_INVALID, 1, 1, NULL);
    check_err("01", IG_ERR_INVALID, 1, 1, NULL);
    check_err("1.", IG_ERR_INVALID, 1, 1, NULL);
    check_err(".5", IG_ERR_INVALID, 1, 1, NULL);
    check_err("0x10", IG_ERR_INVALID, 1, 1, NULL);
    check_err("1e", IG_ERR_INVALID, 1, 1, NULL);
    check_err("-", IG_ERR_INVALID, 1, 1, NULL);
    check_ok("1.7976931348623157e308");
    check_ok("-1e-400");
}

static void
test_bad_syntax(void **state)
{
    (void)state;
    check_err("", IG_ERR_INVALID, 1, 1, "end of input");
    check_err("  \n ", IG_ERR_INVALID, 2, 2, "end of input");
    check_err("{}x", IG_ERR_INVALID, 1, 3, "after the value");
    check_err("{} {}", IG_ERR_INVALID, 1, 4, "after the value");
    check_err("1 2", IG_ERR_INVALID, 1, 3, "after the value");
    check_err("[1]]", IG_ERR_INVALID, 1, 4, "after the value");
    check_err("\"a\" \"b\"", IG_ERR_INVALID, 1, 5, "after the value");
    check_err("[1,]", IG_ERR_INVALID, 1, 4, NULL);
    check_err("{\"a\":1,}", IG_ERR_INVALID, 1, 8, NULL);
    check_err("{\"a\" \"b\"}", IG_ERR_INVALID, 1, 6, "':' expected");
    check_err("{a:1}", IG_ERR_INVALID, 1, 2, NULL);
    check_err("[1,2", IG_ERR_INVALID, 1, 5, "end of input");
    check_err("{\"a\":", IG_ERR_INVALID, 1, 6, "end of input");
    check_err("\n\n  tru", IG_ERR_INVALID, 3, 3, "tru");
    check_err("[true false]", IG_ERR_INVALID, 1, 7, NULL);
    check_err("[1\x01]", IG_ERR_INVALID, 1, 3, "0x01");
    check_err("[\xc3\xa9]", IG_ERR_INVALID, 1, 2, NULL);
    check_err("/* c */ 1", IG_ERR_INVALID, 1, 1, NULL);
    check_err("\f1", IG_ERR_INVALID, 1, 1, NULL);
}

static void
test_null_args(void **state)
{
    json_t *v = NULL;

    (void)state;
    assert_int_equal(ig_json_parse(NULL, 0, &v, NULL), IG_ERR_INVALID);
    assert_null(v);
    assert_int_equal(ig_json_parse("{}x", 3, &v, NULL), IG_ERR_INVALID);
    assert_null(v);
    assert_int_equal(ig_json_parse("[[", 1, &v, NULL), IG_ERR_INVALID);
    /* len bounds the text: no NUL terminator needed. */
    assert_int_equal(ig_json_parse("[1]garbage", 3, &v, NULL), IG_OK);
    json_decref(v);
}

/* n containers nested, 1 deep inside: open * n, "1", close * n. */
static char *
nested(int n, const char *open, const char *close)
{
    size_t ol = strlen(open), cl = strlen(close);
    char *s = malloc((size_t)n * (ol + cl) + 2), *p = s;
    int i;

    assert_non_null(s);
    for (i = 0; i < n; i++, p += ol)
        memcpy(p, open, ol);
    *p++ = '1';
    for (i = 0; i < n; i++, p += cl)
        memcpy(p, close, cl);
    *p = '\0';
    return s;
}

static void
test_depth(void **state)
{
    char *s, *t;

    (void)state;
    s = nested(IG_JSON_MAX_DEPTH, "[", "]");
    check_ok(s);
    free(s);
    s = nested(IG_JSON_MAX_DEPTH + 1, "[", "]");
    check_err(s, IG_ERR_LIMIT, 1, IG_JSON_MAX_DEPTH + 1,
              "nesting deeper than 32 levels");
    free(s);
    s = nested(IG_JSON_MAX_DEPTH + 1, "[\n  ", "]");
    check_err(s, IG_ERR_LIMIT, IG_JSON_MAX_DEPTH + 1, 3, "nesting deeper");
    free(s);
    s = nested(100000, "[", "]");
    check_err(s, IG_ERR_LIMIT, 1, IG_JSON_MAX_DEPTH + 1, NULL);
    free(s);
    /* Objects count too; going back up frees a level. */
    s = nested(IG_JSON_MAX_DEPTH, "{\"k\":", "}");
    check_ok(s);
    free(s);
    s = nested(IG_JSON_MAX_DEPTH + 1, "{\"k\":", "}");
    check_err(s, IG_ERR_LIMIT, 1, 5 * IG_JSON_MAX_DEPTH + 1, "nesting deeper");
    free(s);
    /* Two siblings each 31 deep under the top array: 32 levels. */
    s = nested(IG_JSON_MAX_DEPTH - 1, "[", "]");
    t = malloc(2 * strlen(s) + 4);
    assert_non_null(t);
    (void)snprintf(t, 2 * strlen(s) + 4, "[%s,%s]", s, s);
    check_ok(t);
    free(s);
    free(t);
}

/* "[v,v,...]" with n copies of v, or "{"k0":v,...}" when obj. */
static char *
repeat(size_t n, const char *v, int obj)
{
    size_t cap = n * (strlen(v) + 12) + 3, o = 0, i;
    char *s = malloc(cap);

    assert_non_null(s);
    s[o++] = obj ? '{' : '[';
    for (i = 0; i < n; i++) {
        int k;
        if (i > 0)
            s[o++] = ',';
        if (obj)
            k = snprintf(s + o, cap - o, "\"%05zu\":%s", i, v);
        else
            k = snprintf(s + o, cap - o, "%s", v);
        assert_true(k > 0 && (size_t)k < cap - o);
        o += (size_t)k;
    }
    s[o++] = obj ? '}' : ']';
    s[o] = '\0';
    return s;
}

static void
test_array_length(void **state)
{
    char *s;

    (void)state;
    s = repeat(IG_JSON_MAX_ARRAY_LENGTH, "0", 0);
    check_ok(s);
    free(s);
    s = repeat(IG_JSON_MAX_ARRAY_LENGTH + 1, "0", 0);
    check_err(s, IG_ERR_LIMIT, 1, 2 * IG_JSON_MAX_ARRAY_LENGTH + 2,
              "array longer than 4096 elements");
    free(s);
    /* Strings, objects and arrays are elements; keys are not. */
    s = repeat(IG_JSON_MAX_ARRAY_LENGTH, "{\"a\":\"b\"}", 0);
    check_ok(s);
    free(s);
    s = repeat(IG_JSON_MAX_ARRAY_LENGTH + 1, "\"x\"", 0);
    check_err(s, IG_ERR_LIMIT, 1, 4 * IG_JSON_MAX_ARRAY_LENGTH + 2, NULL);
    free(s);
}

static void
test_object_members(void **state)
{
    char *s;

    (void)state;
    s = repeat(IG_JSON_MAX_OBJECT_MEMBERS, "[1,2]", 1);
    check_ok(s);
    free(s);
    /* Each member is "nnnnn":0, 9 bytes plus a comma. */
    s = repeat(IG_JSON_MAX_OBJECT_MEMBERS + 1, "0", 1);
    check_err(s, IG_ERR_LIMIT, 1, 10 * IG_JSON_MAX_OBJECT_MEMBERS + 2,
              "object with more than 1024 members");
    free(s);
    s = repeat(IG_JSON_MAX_OBJECT_MEMBERS + 1, "\"v\"", 1);
    check_err(s, IG_ERR_LIMIT, 1, 12 * IG_JSON_MAX_OBJECT_MEMBERS + 2, NULL);
    free(s);
}

/*
 * [[0,...4094 zeros],... x16, then extra zeros]: 1 + 16 + 16 * 4094 +
 * extra values.
 */
static char *
many_values(size_t extra)
{
    char *inner = repeat(4094, "0", 0);
    size_t il = strlen(inner), cap = 16 * (il + 1) + extra * 2 + 3, o = 0;
    char *s = malloc(cap);
    size_t i;

    assert_non_null(s);
    s[o++] = '[';
    for (i = 0; i < 16; i++) {
        if (i > 0)
            s[o++] = ',';
        memcpy(s + o, inner, il);
        o += il;
    }
    for (i = 0; i < extra; i++) {
        s[o++] = ',';
        s[o++] = '7';
    }
    s[o++] = ']';
    s[o] = '\0';
    free(inner);
    return s;
}

static void
test_total_values(void **state)
{
    char *s;
    size_t len;

    (void)state;
    s = many_values(IG_JSON_MAX_VALUES - 65521);
    check_ok(s);
    free(s);
    s = many_values(IG_JSON_MAX_VALUES - 65521 + 1);
    len = strlen(s);
    check_err(s, IG_ERR_LIMIT, 1, (int)len - 1,
              "more than 65536 values in the document");
    free(s);
}

static void
test_size(void **state)
{
    size_t n = IG_JSON_MAX_BYTES;
    char *s = malloc(n + 2);
    struct ig_err err;
    json_t *v;

    (void)state;
    assert_non_null(s);
    memset(s, ' ', n + 1);
    s[0] = '"';
    s[n - 1] = '"';
    s[n] = '\n';
    s[n + 1] = '\0';
    v = parse(s, n, IG_OK, &err); /* a string of exactly the limit */
    assert_int_equal(json_string_length(v), n - 2);
    json_decref(v);
    check_err_n(s, n + 1, IG_ERR_LIMIT, 1, IG_JSON_MAX_BYTES + 1,
                "text longer than 1048576 bytes");
    s[10] = '\n';
    check_err_n(s, n + 1, IG_ERR_LIMIT, 2, IG_JSON_MAX_BYTES - 10, NULL);
    free(s);
}

/* The number p names in d, or -1 when it names nothing or a non-number. */
static double
num_at(const json_t *d, const char *p)
{
    const json_t *v = ig_json_pointer_get(d, p);

    return json_is_number(v) ? json_number_value(v) : -1;
}

static void
test_pointer_valid(void **state)
{
    char *p = malloc(IG_AUDIT_POINTER_MAX + 2);

    (void)state;
    assert_non_null(p);
    assert_true(ig_json_pointer_valid(""));
    assert_true(ig_json_pointer_valid("/"));
    assert_true(ig_json_pointer_valid("//"));
    assert_true(ig_json_pointer_valid("/a~0b~1c/0"));
    assert_true(ig_json_pointer_valid("/-"));
    assert_false(ig_json_pointer_valid(NULL));
    assert_false(ig_json_pointer_valid("a"));
    assert_false(ig_json_pointer_valid(" /a"));
    assert_false(ig_json_pointer_valid("/a~"));
    assert_false(ig_json_pointer_valid("/a~2"));
    assert_false(ig_json_pointer_valid("/~/"));
    memset(p, 'x', IG_AUDIT_POINTER_MAX + 1);
    p[0] = '/';
    p[IG_AUDIT_POINTER_MAX] = '\0'; /* exactly the limit */
    assert_true(ig_json_pointer_valid(p));
    p[IG_AUDIT_POINTER_MAX - 1] = '~'; /* "~" then the end */
    assert_false(ig_json_pointer_valid(p));
    p[IG_AUDIT_POINTER_MAX - 1] = 'x';
    p[IG_AUDIT_POINTER_MAX] = 'x';
    p[IG_AUDIT_POINTER_MAX + 1] = '\0'; /* one past */
    assert_false(ig_json_pointer_valid(p));
    assert_null(ig_json_pointer_get(json_null(), p));
    free(p);
}

static void
test_pointer_get(void **state)
{
    static const char text[] =
        "{\"a\": [1, {\"b\": 2}, 3, 4, 5, 6, 7, 8, 9, 10, 11], "
        "\"\": {\"\": 10, \"c\": 3}, \"m~n\": 4, \"x/y\": 5, "
        "\"~1\": 6, \"0\": 7, \" \": 8}";
    struct ig_err err;
    json_t *d;

    (void)state;
    d = parse(text, strlen(text), IG_OK, &err);
    assert_ptr_equal(ig_json_pointer_get(d, ""), d);
    assert_true(json_is_object(ig_json_pointer_get(d, "/")));
    assert_true(num_at(d, "//") == 10);
    assert_true(num_at(d, "//c") == 3);
    assert_true(num_at(d, "/a/0") == 1);
    assert_true(num_at(d, "/a/1/b") == 2);
    assert_true(num_at(d, "/a/10") == 11);
    assert_true(num_at(d, "/m~0n") == 4);
    assert_true(num_at(d, "/x~1y") == 5);
    assert_true(num_at(d, "/~01") == 6); /* "~01" is "~1", not "/" */
    assert_true(num_at(d, "/0") == 7);   /* a member, not an index */
    assert_true(num_at(d, "/ ") == 8);
    /* Names nothing. */
    assert_null(ig_json_pointer_get(d, "/a/01"));
    assert_null(ig_json_pointer_get(d, "/a/00"));
    assert_null(ig_json_pointer_get(d, "/a/+1"));
    assert_null(ig_json_pointer_get(d, "/a/-1"));
    assert_null(ig_json_pointer_get(d, "/a/1a"));
    assert_null(ig_json_pointer_get(d, "/a/ 1"));
    assert_null(ig_json_pointer_get(d, "/a/"));
    assert_null(ig_json_pointer_get(d, "/a/11"));
    assert_null(ig_json_pointer_get(d, "/a/-"));
    assert_null(ig_json_pointer_get(d, "/a/99999999999999999999"));
    assert_null(ig_json_pointer_get(d, "/a/18446744073709551616"));
    assert_null(ig_json_pointer_get(d, "/a/0/x"));
    assert_null(ig_json_pointer_get(d, "/a/1/b/c"));
    assert_null(ig_json_pointer_get(d, "/x/y"));
    assert_null(ig_json_pointer_get(d, "/~1"));
    assert_null(ig_json_pointer_get(d, "/k"));
    assert_null(ig_json_pointer_get(d, "/nope"));
    assert_null(ig_json_pointer_get(d, "a"));
    assert_null(ig_json_pointer_get(d, "/m~2n"));
    assert_null(ig_json_pointer_get(d, NULL));
    assert_null(ig_json_pointer_get(NULL, ""));
    assert_null(ig_json_pointer_get(NULL, "/a"));
    json_decref(d);
}

/* ig_json_pointer_find tells where the value was taken from, so that a
   caller can replace it there (the audit log's redaction). */
static void
test_pointer_find(void **state)
{
    static const char text[] = "{\"a\": [1, {\"x/y\": 2}], \"b\": 3}";
    struct ig_json_step last;
    struct ig_err err;
    const json_t *v;
    json_t *d;

    (void)state;
    d = parse(text, strlen(text), IG_OK, &err);
    assert_ptr_equal(ig_json_pointer_find(d, "", &last), d);
    assert_null(last.parent);
    v = ig_json_pointer_find(d, "/a/1/x~1y", &last);
    assert_true(json_number_value(v) == 2);
    assert_ptr_equal(last.parent, json_array_get(json_object_get(d, "a"), 1));
    assert_int_equal(last.key_len, 3);
    assert_string_equal(last.key, "x/y");
    v = ig_json_pointer_find(d, "/a/1", &last);
    assert_true(json_is_object(v));
    assert_ptr_equal(last.parent, json_object_get(d, "a"));
    assert_int_equal(last.index, 1);
    assert_null(ig_json_pointer_find(d, "/a/2", &last));
    assert_null(ig_json_pointer_find(d, "/b/c", &last));
    json_decref(d);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid),
        cmocka_unit_test(test_numbers_are_reals),
        cmocka_unit_test(test_nul_in_strings),
        cmocka_unit_test(test_duplicate_keys),
        cmocka_unit_test(test_invalid_utf8),
        cmocka_unit_test(test_lone_surrogates),
        cmocka_unit_test(test_bad_strings),
        cmocka_unit_test(test_bad_numbers),
        cmocka_unit_test(test_bad_syntax),
        cmocka_unit_test(test_null_args),
        cmocka_unit_test(test_depth),
        cmocka_unit_test(test_array_length),
        cmocka_unit_test(test_object_members),
        cmocka_unit_test(test_total_values),
        cmocka_unit_test(test_size),
        cmocka_unit_test(test_pointer_valid),
        cmocka_unit_test(test_pointer_get),
        cmocka_unit_test(test_pointer_find),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
