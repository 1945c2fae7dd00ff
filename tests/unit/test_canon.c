/*
 * test_canon.c - RFC 8785 serializer and ECMAScript number formatting.
 *
 * The JCS vectors (tests/vectors/jcs/input -> output) must match byte for
 * byte; all 20,000 lines of jcs/numbers.txt go through ig_canon_number();
 * then edge cases, with values refused by the canonicalizer (integers past
 * 2^53, invalid UTF-8 built in code, nesting past IG_JSON_MAX_DEPTH, the
 * output cap) as first-class tests.
 */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ig_canon.h"
#include "ig_limits.h"

/* Canonicalize text; the result is malloc'd; *st gets the status. */
static char *
canon_text(const char *text, size_t len, enum ig_status *st, struct ig_err *err)
{
    struct ig_buf b;
    char *s;

    ig_buf_init(&b, IG_CANON_MAX_BYTES);
    *st = ig_canon_text(text, len, &b, err);
    s = ig_buf_take(&b, NULL);
    assert_non_null(s);
    return s;
}

/* Assert that text canonicalizes to want. */
static void
check_canon(const char *text, const char *want)
{
    struct ig_err err;
    enum ig_status st;
    char *got = canon_text(text, strlen(text), &st, &err);

    if (st != IG_OK)
        fail_msg("%s: %s", text, err.msg);
    if (strcmp(got, want) != 0)
        fail_msg("%s: got %s want %s", text, got, want);
    free(got);
}

/* Assert that v canonicalizes to want. */
static void
check_value(const json_t *v, const char *want, size_t wantlen)
{
    struct ig_buf b;
    struct ig_err err;

    ig_buf_init(&b, IG_CANON_MAX_BYTES);
    if (ig_canon_write(v, &b, &err) != IG_OK)
        fail_msg("canon failed: %s", err.msg);
    assert_int_equal(b.len, wantlen);
    assert_memory_equal(b.data, want, wantlen);
    ig_buf_release(&b);
}

/* Assert that canonicalizing v fails with want. */
static void
check_refused(const json_t *v, enum ig_status want)
{
    struct ig_buf b;
    struct ig_err err;

    ig_buf_init(&b, IG_CANON_MAX_BYTES);
    assert_int_equal(ig_canon_write(v, &b, &err), want);
    assert_non_null(strchr(err.msg, '\0'));
    assert_true(strlen(err.msg) > 0);
    ig_buf_release(&b);
}

static void
test_jcs_vectors(void **state)
{
    static const char *names[] = {"arrays",  "french", "structures",
                                  "unicode", "values", "weird"};
    char path[256];
    size_t i, inlen, wantlen;
    struct ig_err err;
    enum ig_status st;

    (void)state;
    for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        char *in, *want, *got;
        (void)snprintf(path, sizeof(path), "jcs/input/%s.json", names[i]);
        in = tu_read_vector(path, &inlen);
        (void)snprintf(path, sizeof(path), "jcs/output/%s.json", names[i]);
        want = tu_read_vector(path, &wantlen);
        got = canon_text(in, inlen, &st, &err);
        if (st != IG_OK)
            fail_msg("%s: %s", names[i], err.msg);
        if (strlen(got) != wantlen || memcmp(got, want, wantlen) != 0)
            fail_msg("%s: got %s want %s", names[i], got, want);
        free(in);
        free(want);
        free(got);
    }
}

static double
bits_to_double(const char *hex)
{
    char *end;
    unsigned long long u = strtoull(hex, &end, 16);
    double d;

    if (end != hex + 16)
        fail_msg("bad hex %.16s", hex);
    memcpy(&d, &u, sizeof(d));
    return d;
}

static void
test_numbers_file(void **state)
{
    char *text = tu_read_vector("jcs/numbers.txt", NULL);
    char *line = text, *nl;
    char got[IG_NUMBER_STRMAX];
    size_t n, lines = 0, len;

    (void)state;
    for (; *line != '\0'; line = nl + 1) {
        nl = strchr(line, '\n');
        assert_non_null(nl);
        *nl = '\0';
        assert_int_equal(line[16], ' ');
        assert_int_equal(ig_canon_number(bits_to_double(line), got, &n), IG_OK);
        len = strlen(line + 17);
        if (n != len || strcmp(got, line + 17) != 0)
            fail_msg("line %zu: %.16s: got %s want %s", lines + 1, line, got,
                     line + 17);
        lines++;
    }
    assert_int_equal(lines, 20000);
    free(text);
}

static void
check_number(double d, const char *want)
{
    char got[IG_NUMBER_STRMAX];
    size_t n;

    assert_int_equal(ig_canon_number(d, got, &n), IG_OK);
    assert_string_equal(got, want);
    assert_int_equal(n, strlen(want));
}

static void
test_number_edges(void **state)
{
    char got[IG_NUMBER_STRMAX];

    (void)state;
    check_number(0.0, "0");
    check_number(-0.0, "0");
    check_number(1.0, "1");
    check_number(-1.5, "-1.5");
    check_number(9007199254740991.0, "9007199254740991");
    check_number(9007199254740992.0, "9007199254740992");
    check_number(9007199254740993.0, "9007199254740992");
    check_number(1e21, "1e+21");
    check_number(999999999999999900000.0, "999999999999999900000");
    check_number(1e20, "100000000000000000000");
    check_number(1e-7, "1e-7");
    check_number(0.000001, "0.000001");
    check_number(0.1, "0.1");
    check_number(0.1 + 0.2, "0.30000000000000004");
    check_number(5e-324, "5e-324");
    check_number(-5e-324, "-5e-324");
    check_number(1.7976931348623157e308, "1.7976931348623157e+308");
    check_number(2.2250738585072014e-308, "2.2250738585072014e-308");
    check_number(0.5, "0.5");
    check_number(1152921504606846976.0, "1152921504606847000");
    check_number(123e-20, "1.23e-18");
    check_number(-1e-7, "-1e-7");
    check_number(333333333.33333329, "333333333.3333333");
    assert_int_equal(ig_canon_number(NAN, got, NULL), IG_ERR_INVALID);
    assert_int_equal(ig_canon_number(INFINITY, got, NULL), IG_ERR_INVALID);
    assert_int_equal(ig_canon_number(-INFINITY, got, NULL), IG_ERR_INVALID);
}

static void
test_powers_of_two(void **state)
{
    char got[IG_NUMBER_STRMAX];
    int e;

    /* Every power of two must read back exactly from its text. */
    (void)state;
    for (e = -1074; e <= 1023; e++) {
        double d = ldexp(1.0, e);
        assert_int_equal(ig_canon_number(d, got, NULL), IG_OK);
        assert_true(strtod(got, NULL) == d);
    }
    check_number(ldexp(1.0, -1074), "5e-324");
    check_number(ldexp(1.0, 1023), "8.98846567431158e+307");
    /* Here the nearest 16-digit decimal falls outside the narrow lower
     * half-interval of the power of two, but the one above reads back
     * (checked against node's String(2 ** e)). */
    check_number(ldexp(1.0, -1017), "7.120236347223045e-307");
    check_number(ldexp(1.0, -1007), "7.291122019556398e-304");
    check_number(ldexp(1.0, -957), "8.209073602596753e-289");
}

static void
test_escapes(void **state)
{
    static const char want[] =
        "\"\\u0000\\u0001\\u0002\\u0003\\u0004\\u0005\\u0006\\u0007"
        "\\b\\t\\n\\u000b\\f\\r\\u000e\\u000f\\u0010\\u0011\\u0012\\u0013"
        "\\u0014\\u0015\\u0016\\u0017\\u0018\\u0019\\u001a\\u001b\\u001c"
        "\\u001d\\u001e\\u001f \\\"\\\\/\x7f\xe2\x80\xa8\"";
    char raw[40];
    json_t *v;
    int i;

    (void)state;
    for (i = 0; i < 32; i++)
        raw[i] = (char)i;
    memcpy(raw + 32, " \"\\/\x7f\xe2\x80\xa8", 8);
    v = json_stringn(raw, 40);
    assert_non_null(v);
    check_value(v, want, sizeof(want) - 1);
    json_decref(v);
    check_canon("\"\\b\\f\\n\\r\\t\\\"\\\\\\/\"",
                "\"\\b\\f\\n\\r\\t\\\"\\\\/\"");
    check_canon("\"\\u007f\\u2028\\u2029\\u00e9\"",
                "\"\x7f\xe2\x80\xa8\xe2\x80\xa9\xc3\xa9\"");
    check_canon("\"\\u001F\\u000B\"", "\"\\u001f\\u000b\"");
    check_canon("\"\\u0000\"", "\"\\u0000\"");
    check_canon("\"<\\/script>\"", "\"</script>\"");
}

static void
test_structure_edges(void **state)
{
    (void)state;
    check_canon("{}", "{}");
    check_canon("[]", "[]");
    check_canon(" { } ", "{}");
    check_canon("[[],{},[{}]]", "[[],{},[{}]]");
    check_canon("\"\"", "\"\"");
    check_canon("true", "true");
    check_canon("[true,false,null]", "[true,false,null]");
    check_canon("-0", "0");
    check_canon("[-0.0, 0e5, -0e-5]", "[0,0,0]");
    check_canon("9007199254740993", "9007199254740992");
    check_canon("1E21", "1e+21");
    check_canon("1e-7", "1e-7");
    check_canon("0.000001", "0.000001");
    check_canon("1e-400", "0");
    check_canon("[1.0, 100, 1.50, 1e2]", "[1,100,1.5,100]");
    check_canon("{\"b\":[1,{\"d\":1,\"c\":2}],\"a\":\"x\"}",
                "{\"a\":\"x\",\"b\":[1,{\"c\":2,\"d\":1}]}");
}

static void
test_key_order(void **state)
{
    (void)state;
    /* Keys that look like numbers still sort as strings. */
    check_canon("{\"9\":1,\"10\":2,\"1\":3,\"\":4}",
                "{\"\":4,\"1\":3,\"10\":2,\"9\":1}");
    /* A prefix sorts first. */
    check_canon("{\"ab\":1,\"a\":2,\"abc\":3}", "{\"a\":2,\"ab\":1,\"abc\":3}");
    /* U+1F600 (D83D DE00) sorts below U+E000 and U+FFFD in UTF-16 order,
     * although its code point is larger. */
    check_canon("{\"\\uFFFD\":1,\"\\uE000\":2,\"\\ud83d\\ude00\":3,"
                "\"\\uD7FF\":4}",
                "{\"\xed\x9f\xbf\":4,\"\xf0\x9f\x98\x80\":3,"
                "\"\xee\x80\x80\":2,\"\xef\xbf\xbd\":1}");
    /* The same rule deeper in a key, after a common prefix. */
    check_canon("{\"a\\uE000\":1,\"a\\ud800\\udc00\":2}",
                "{\"a\xf0\x90\x80\x80\":2,\"a\xee\x80\x80\":1}");
    /* Two astral characters: ordered by their surrogates. */
    check_canon("{\"\\ud83d\\ude02\":1,\"\\ud800\\udc00\":2}",
                "{\"\xf0\x90\x80\x80\":2,\"\xf0\x9f\x98\x82\":1}");
    /* Upper case before lower case; no locale. */
    check_canon("{\"b\":1,\"B\":2,\"a\":3,\"A\":4}",
                "{\"A\":4,\"B\":2,\"a\":3,\"b\":1}");
}

/* The qsort path (more than 16 members) orders keys as the small path. */
static void
test_key_order_large(void **state)
{
    static const char *keys[] = {"\xef\xbf\xbd",
                                 "\xf0\x9f\x98\x80",
                                 "\xee\x80\x80",
                                 "z",
                                 "a",
                                 "\xc3\xa9",
                                 "10",
                                 "9",
                                 "1",
                                 "",
                                 "\xed\x9f\xbf",
                                 "A",
                                 "ab",
                                 "b",
                                 "aa",
                                 "\xf4\x8f\xbf\xbf",
                                 "Z",
                                 "_",
                                 "~",
                                 "a\x7f"};
    static const char want[] =
        "{\"\":0,\"1\":0,\"10\":0,\"9\":0,\"A\":0,\"Z\":0,\"_\":0,\"a\":0,"
        "\"aa\":0,\"ab\":0,\"a\x7f\":0,\"b\":0,\"z\":0,\"~\":0,"
        "\"\xc3\xa9\":0,\"\xed\x9f\xbf\":0,\"\xf0\x9f\x98\x80\":0,"
        "\"\xf4\x8f\xbf\xbf\":0,\"\xee\x80\x80\":0,\"\xef\xbf\xbd\":0}";
    json_t *o = json_object();
    size_t i;

    (void)state;
    assert_non_null(o);
    for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        assert_int_equal(json_object_set_new(o, keys[i], json_integer(0)), 0);
    check_value(o, want, sizeof(want) - 1);
    json_decref(o);
}

/* Strings longer than the writer's stage, plain and full of escapes. */
static void
test_long_strings(void **state)
{
    size_t n = 100000, i, o = 0;
    char *raw = malloc(n), *want = malloc(6 * n + 2);
    json_t *v;

    (void)state;
    assert_non_null(raw);
    assert_non_null(want);
    memset(raw, 'x', n);
    want[o++] = '"';
    memset(want + o, 'x', n);
    o += n;
    want[o++] = '"';
    v = json_stringn(raw, n);
    check_value(v, want, o);
    json_decref(v);
    o = 0;
    want[o++] = '"';
    for (i = 0; i < n; i++) {
        raw[i] = (char)(i % 3 == 0 ? 0x01 : i % 3 == 1 ? '"' : 'y');
        if (i % 3 == 0) {
            memcpy(want + o, "\\u0001", 6);
            o += 6;
        } else if (i % 3 == 1) {
            memcpy(want + o, "\\\"", 2);
            o += 2;
        } else {
            want[o++] = 'y';
        }
    }
    want[o++] = '"';
    v = json_stringn(raw, n);
    check_value(v, want, o);
    json_decref(v);
    free(raw);
    free(want);
}

/* A 1024-member object built in reverse comes out in order. */
static void
test_many_members(void **state)
{
    json_t *o = json_object();
    struct ig_buf b;
    struct ig_err err;
    char key[16], *p;
    int i;

    (void)state;
    assert_non_null(o);
    for (i = IG_JSON_MAX_OBJECT_MEMBERS - 1; i >= 0; i--) {
        (void)snprintf(key, sizeof(key), "k%04d", i);
        assert_int_equal(json_object_set_new(o, key, json_integer(i)), 0);
    }
    ig_buf_init(&b, IG_CANON_MAX_BYTES);
    assert_int_equal(ig_canon_write(o, &b, &err), IG_OK);
    p = b.data;
    for (i = 0; i < IG_JSON_MAX_OBJECT_MEMBERS; i++) {
        (void)snprintf(key, sizeof(key), "\"k%04d\":%d", i, i);
        p = strstr(p, key);
        assert_non_null(p);
    }
    ig_buf_release(&b);
    json_decref(o);
}

static void
test_code_built_numbers(void **state)
{
    json_t *v;

    (void)state;
    v = json_integer(9007199254740992LL);
    check_value(v, "9007199254740992", 16);
    json_decref(v);
    v = json_integer(-9007199254740992LL);
    check_value(v, "-9007199254740992", 17);
    json_decref(v);
    v = json_integer(9007199254740993LL);
    check_refused(v, IG_ERR_INVALID);
    json_decref(v);
    v = json_integer(-9007199254740993LL);
    check_refused(v, IG_ERR_INVALID);
    json_decref(v);
    v = json_integer(0);
    check_value(v, "0", 1);
    json_decref(v);
    v = json_real(-0.0);
    check_value(v, "0", 1);
    json_decref(v);
    v = json_pack("{s:I}", "n", (json_int_t)9223372036854775807LL);
    check_refused(v, IG_ERR_INVALID);
    json_decref(v);
    /* jansson will not build a NaN or infinite real at all... */
    assert_null(json_real(NAN));
    assert_null(json_real(INFINITY));
    v = json_real(1.0);
    assert_int_equal(json_real_set(v, NAN), -1);
    check_value(v, "1", 1);
    json_decref(v);
}

static void
test_invalid_utf8_built(void **state)
{
    static const char *bad[] = {"\xff",
                                "\xc0\xaf",
                                "\xe0\x80\x80",
                                "\xed\xa0\x80",
                                "\xf4\x90\x80\x80",
                                "ab\xe2\x82",
                                "\x80",
                                "\xf8\x88\x80\x80\x80"};
    json_t *v, *o;
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        v = json_stringn_nocheck(bad[i], strlen(bad[i]));
        assert_non_null(v);
        check_refused(v, IG_ERR_INVALID);
        o = json_object();
        assert_int_equal(
            json_object_setn_new_nocheck(o, bad[i], strlen(bad[i]), v), 0);
        check_refused(o, IG_ERR_INVALID);
        json_decref(o);
    }
    /* A key holding NUL, built in code, is written with \u0000. */
    o = json_object();
    assert_int_equal(json_object_setn_new(o, "a\0b", 3, json_null()), 0);
    check_value(o, "{\"a\\u0000b\":null}", 17);
    json_decref(o);
}

/* Containers nested n deep, built in code. */
static json_t *
nest(int n)
{
    json_t *v = json_array(), *outer;
    int i;

    assert_non_null(v);
    for (i = 1; i < n; i++) {
        outer = i % 2 ? json_object() : json_array();
        assert_non_null(outer);
        if (json_is_object(outer))
            assert_int_equal(json_object_set_new(outer, "k", v), 0);
        else
            assert_int_equal(json_array_append_new(outer, v), 0);
        v = outer;
    }
    return v;
}

static void
test_depth_built(void **state)
{
    struct ig_buf b;
    struct ig_err err;
    json_t *v;

    (void)state;
    v = nest(IG_JSON_MAX_DEPTH);
    ig_buf_init(&b, IG_CANON_MAX_BYTES);
    assert_int_equal(ig_canon_write(v, &b, &err), IG_OK);
    ig_buf_release(&b);
    json_decref(v);
    v = nest(IG_JSON_MAX_DEPTH + 1);
    check_refused(v, IG_ERR_LIMIT);
    json_decref(v);
    v = nest(1000);
    check_refused(v, IG_ERR_LIMIT);
    json_decref(v);
}

static void
test_output_cap(void **state)
{
    struct ig_buf b;
    struct ig_err err;
    json_t *v = json_pack("{s:s}", "key", "value");

    (void)state;
    ig_buf_init(&b, 15); /* {"key":"value"} is 15 bytes */
    assert_int_equal(ig_canon_write(v, &b, &err), IG_OK);
    assert_string_equal(b.data, "{\"key\":\"value\"}");
    ig_buf_release(&b);
    ig_buf_init(&b, 14);
    assert_int_equal(ig_canon_write(v, &b, &err), IG_ERR_LIMIT);
    assert_non_null(strstr(err.msg, "longer than 14 bytes"));
    ig_buf_release(&b);
    assert_int_equal(ig_canon_write(NULL, &b, &err), IG_ERR_INVALID);
    assert_int_equal(ig_canon_write(NULL, &b, NULL), IG_ERR_INVALID);
    ig_buf_release(&b);
    json_decref(v);
}

static void
test_canon_text_errors(void **state)
{
    struct ig_err err;
    enum ig_status st;
    char *s;

    (void)state;
    s = canon_text("{\"a\":1,\"a\":2}", 13, &st, &err);
    assert_int_equal(st, IG_ERR_INVALID);
    assert_string_equal(s, "");
    free(s);
    s = canon_text("[1e400]", 7, &st, &err);
    assert_int_equal(st, IG_ERR_INVALID);
    free(s);
    s = canon_text("[NaN]", 5, &st, &err);
    assert_int_equal(st, IG_ERR_INVALID);
    free(s);
}

/* Canonical text is a fixed point: canon(canon(x)) == canon(x). */
static void
test_idempotent(void **state)
{
    static const char *names[] = {"jcs/input/values.json",
                                  "jcs/input/weird.json",
                                  "jcs/input/structures.json"};
    struct ig_err err;
    enum ig_status st;
    size_t i, len;

    (void)state;
    for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        char *in = tu_read_vector(names[i], &len);
        char *once = canon_text(in, len, &st, &err);
        char *twice;
        assert_int_equal(st, IG_OK);
        twice = canon_text(once, strlen(once), &st, &err);
        assert_int_equal(st, IG_OK);
        assert_string_equal(once, twice);
        free(in);
        free(once);
        free(twice);
    }
}

/* ---- ig_canon_obj: the member-by-member writer ---- */

/* Strings that need every kind of escape, and raw UTF-8. */
static const char *const tricky[] = {
    "plain",
    "",
    "quote \" and backslash \\",
    "ctl \x01\x1f\b\t\n\f\r",
    "del \x7f",
    "utf8 \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
    "</script>",
};

/* The writer's bytes equal ig_canon_write's for the same object, with
   nested objects and raw canonical values spliced in. */
static void
test_obj_matches_canon_write(void **state)
{
    struct ig_buf a, b, raw;
    struct ig_canon_obj o, sub;
    json_t *v, *inner;
    size_t i, j;
    (void)state;

    for (i = 0; i < sizeof(tricky) / sizeof(tricky[0]); i++)
        for (j = 0; j < sizeof(tricky) / sizeof(tricky[0]); j++) {
            inner = json_pack("{s:s, s:[s, i, n], s:f}", "k", tricky[j], "l",
                              tricky[i], 7, "m", 0.5);
            assert_non_null(inner);
            ig_buf_init(&raw, 4096);
            assert_int_equal(ig_canon_write(inner, &raw, NULL), IG_OK);
            v = json_pack("{s:s, s:O, s:{s:s, s:s}, s:s}", "a", tricky[i], "b",
                          inner, "c", "x", tricky[j], "y", "z", "d", tricky[j]);
            assert_non_null(v);
            ig_buf_init(&a, 4096);
            ig_buf_init(&b, 4096);
            assert_int_equal(ig_canon_write(v, &a, NULL), IG_OK);
            ig_canon_obj_begin(&o, &b, NULL);
            ig_canon_obj_str(&o, "a", tricky[i]);
            ig_canon_obj_raw(&o, "b", raw.data, raw.len);
            ig_canon_obj_open(&o, "c", &sub);
            ig_canon_obj_str(&sub, "x", tricky[j]);
            ig_canon_obj_str(&sub, "y", "z");
            assert_int_equal(ig_canon_obj_end(&sub), IG_OK);
            ig_canon_obj_str(&o, "d", tricky[j]);
            assert_int_equal(ig_canon_obj_end(&o), IG_OK);
            assert_int_equal(a.len, b.len);
            assert_memory_equal(a.data, b.data, a.len);
            ig_buf_release(&a);
            ig_buf_release(&b);
            ig_buf_release(&raw);
            json_decref(v);
            json_decref(inner);
        }
}

/* Write one object with keys k1 then k2 (and value v2); its status. */
static enum ig_status
obj_two(const char *k1, const char *k2, const char *v2, size_t cap)
{
    struct ig_buf b;
    struct ig_canon_obj o;
    struct ig_err err;
    enum ig_status st;

    ig_buf_init(&b, cap);
    ig_canon_obj_begin(&o, &b, &err);
    ig_canon_obj_str(&o, k1, "v");
    ig_canon_obj_str(&o, k2, v2);
    st = ig_canon_obj_end(&o);
    ig_buf_release(&b);
    return st;
}

/* Never subtly off: what would not be canonical is refused. */
static void
test_obj_refusals(void **state)
{
    struct ig_buf b;
    struct ig_canon_obj o, sub;
    (void)state;

    assert_int_equal(obj_two("a", "b", "v", 100), IG_OK);
    assert_int_equal(obj_two("b", "a", "v", 100), IG_ERR_INVALID);
    assert_int_equal(obj_two("a", "a", "v", 100), IG_ERR_INVALID);
    assert_int_equal(obj_two("a", "\xc3\xa9", "v", 100), IG_ERR_INVALID);
    assert_int_equal(obj_two("a", "q\"", "v", 100), IG_ERR_INVALID);
    assert_int_equal(obj_two("a", "b\\", "v", 100), IG_ERR_INVALID);
    assert_int_equal(obj_two("a", "\x01", "v", 100), IG_ERR_INVALID);
    assert_int_equal(obj_two("", "b", "v", 100), IG_ERR_INVALID);
    assert_int_equal(obj_two("a", "b", "\xff", 100), IG_ERR_INVALID);
    assert_int_equal(obj_two("a", "b", NULL, 100), IG_ERR_INVALID);
    assert_int_equal(obj_two("a", "b", "v", 12), IG_ERR_LIMIT);
    /* A raw value that is missing; a child's failure is its parent's. */
    ig_buf_init(&b, 100);
    ig_canon_obj_begin(&o, &b, NULL);
    ig_canon_obj_raw(&o, "a", NULL, 0);
    assert_int_equal(ig_canon_obj_end(&o), IG_ERR_INVALID);
    ig_buf_reset(&b);
    ig_canon_obj_begin(&o, &b, NULL);
    ig_canon_obj_open(&o, "a", &sub);
    ig_canon_obj_str(&sub, "y", "v");
    ig_canon_obj_str(&sub, "x", "v");
    (void)ig_canon_obj_end(&sub);
    ig_canon_obj_str(&o, "b", "v");
    assert_int_equal(ig_canon_obj_end(&o), IG_ERR_INVALID);
    ig_buf_release(&b);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_jcs_vectors),
        cmocka_unit_test(test_numbers_file),
        cmocka_unit_test(test_number_edges),
        cmocka_unit_test(test_powers_of_two),
        cmocka_unit_test(test_escapes),
        cmocka_unit_test(test_structure_edges),
        cmocka_unit_test(test_key_order),
        cmocka_unit_test(test_key_order_large),
        cmocka_unit_test(test_long_strings),
        cmocka_unit_test(test_many_members),
        cmocka_unit_test(test_code_built_numbers),
        cmocka_unit_test(test_invalid_utf8_built),
        cmocka_unit_test(test_depth_built),
        cmocka_unit_test(test_output_cap),
        cmocka_unit_test(test_canon_text_errors),
        cmocka_unit_test(test_idempotent),
        cmocka_unit_test(test_obj_matches_canon_write),
        cmocka_unit_test(test_obj_refusals),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
