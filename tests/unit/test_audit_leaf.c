/*
 * test_audit_leaf.c - audit_leaf_time: the event's own top-level "time",
 * never one nested in its params (an agent writes those), in objects with
 * every kind of value before it; no time, a time that is not a string or
 * not in the one form, escapes, and cut or broken text each give their
 * status; every prefix of a good leaf is refused without reading past it.
 * The scanner classifies bytes 64 at a time: escapes, quotes, brackets
 * and the end at every offset across a block's edges, and random and
 * mutated inputs one to five blocks long, give
 * what the byte-at-a-time reference (audit_leaf_ref.h) gives.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit_leaf.h"
#include "audit_leaf_ref.h"

static enum ig_status
at(const char *s, int64_t *t)
{
    return audit_leaf_time(s, strlen(s), t);
}

static void
test_the_event_time(void **state)
{
    int64_t t = 0;

    (void)state;
    assert_int_equal(at("{\"time\":\"1970-01-01T00:00:10Z\"}", &t), IG_OK);
    assert_int_equal(t, 10);
    /* As the PDP writes events: keys sorted, "time" after nested ones. */
    assert_int_equal(
        at("{\"intent\":{\"params\":{\"time\":\"2001-01-01T00:00:00Z\","
           "\"x\":[1,{\"time\":\"2002-01-01T00:00:00Z\"},\"}\"]},"
           "\"s\":\"a\\\"time\\\":\\\"2003\"},\"n\":-1.5e3,\"ok\":true,"
           "\"nil\":null,\"arr\":[[],{}],\"time\":\"2026-12-01T21:33:04Z\","
           "\"type\":\"intent.received\"}",
           &t),
        IG_OK);
    assert_int_equal(t, 1796160784);
    /* White space between tokens (not canonical, still an object). */
    assert_int_equal(
        at(" { \"a\" : 1 , \"time\" : \"1970-01-01T00:01:00Z\" }", &t), IG_OK);
    assert_int_equal(t, 60);
}

static void
test_no_time(void **state)
{
    static const char *const cases[] = {
        "{}",
        "{\"type\":\"x\"}",
        "{\"a\":{\"time\":\"2001-01-01T00:00:00Z\"}}",
        "{\"time\":12}",
        "{\"time\":null}",
        "{\"time\":\"yesterday\"}",
        "{\"time\":\"2001-01-01T00:00:00+00:00\"}",
        "{\"time\":\"2001-01-01T00:00:00.5Z\"}",
        "{\"time\":\"2001-01-01T00:00:0\\u0030Z\"}",
        "{\"tim\\u0065\":\"2001-01-01T00:00:00Z\"}",
        "{\"times\":\"2001-01-01T00:00:00Z\"}",
    };
    int64_t t = 77;
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        if (at(cases[i], &t) != IG_ERR_NOTFOUND)
            fail_msg("case %zu: %s", i, cases[i]);
        assert_int_equal(t, 77);
    }
}

static void
test_not_an_object(void **state)
{
    static const char *const cases[] = {
        "",
        "   ",
        "[]",
        "\"time\"",
        "{",
        "{\"a\"",
        "{\"a\":",
        "{\"a\" 1}",
        "{\"a\":1,",
        "{\"a\":1 \"b\":2}",
        "{,}",
        "{\"a\":\"unclosed}",
        "{\"a\":{\"b\":1}",
        "{\"a\":[1,2}",
        "{\"a\":}",
        "{\"a\":1]",
    };
    int64_t t = 77;
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        if (at(cases[i], &t) != IG_ERR_INVALID)
            fail_msg("case %zu: %s", i, cases[i]);
        assert_int_equal(t, 77);
    }
}

/* Every prefix, in a buffer of exactly its size (ASan sees a read past). */
static void
test_prefixes(void **state)
{
    static const char leaf[] =
        "{\"a\":[{\"b\":\"]}\\\\\"},2],\"time\":\"2026-01-02T03:04:05Z\"}";
    size_t n, full = strlen(leaf);
    int64_t t;
    char *p;

    (void)state;
    for (n = 0; n < full; n++) {
        p = malloc(n > 0 ? n : 1);
        assert_non_null(p);
        memcpy(p, leaf, n);
        /* Up to the time's closing quote, the member is cut short. */
        if (audit_leaf_time(p, n, &t) == IG_OK)
            assert_true(n >= full - 1);
        free(p);
    }
    assert_int_equal(audit_leaf_time(leaf, full, &t), IG_OK);
}

/* The scanner and the reference on s[0..n) copied to a buffer of exactly
   n bytes (ASan sees a read past): same status, same time. */
static void
same(const char *s, size_t n)
{
    char *p = malloc(n > 0 ? n : 1);
    int64_t a = 77, b = 77;
    enum ig_status sa, sb;

    assert_non_null(p);
    memcpy(p, s, n);
    sa = audit_leaf_time(p, n, &a);
    sb = ref_leaf_time(p, n, &b);
    free(p);
    if (sa != sb || a != b)
        fail_msg("scan %d (%lld), reference %d (%lld) on %.*s", (int)sa,
                 (long long)a, (int)sb, (long long)b, (int)n, s);
}

/* Every prefix of s, and s itself. */
static void
same_prefixes(const char *s)
{
    size_t n, len = strlen(s);

    for (n = 0; n <= len; n++)
        same(s, n);
}

/* A backslash, an escaped quote, a real quote and the end of the input at
   every offset across the edges of eight-byte words and of the first
   64-byte block, in keys, values and nested ones. */
static void
test_block_edges(void **state)
{
    /* Each: the text before and after a run of 'x' of every length. */
    static const char *const forms[][2] = {
        {"{\"a\":\"", "\\\"x\",\"time\":\"2026-01-02T03:04:05Z\"}"},
        {"{\"a\":\"", "\\\\\",\"time\":\"2026-01-02T03:04:05Z\"}"},
        {"{\"", "\\\\\":1,\"time\":\"2026-01-02T03:04:05Z\"}"},
        {"{\"a\":[\"", "\\\"]\",{\"time\":\"2001-01-01T00:00:00Z\"}],"
                       "\"time\":\"2026-01-02T03:04:05Z\"}"},
        {"{\"a\":{\"s\":\"", "\\\",\\\"time\\\":\\\"2002-01-01T00:00:00Z\"},"
                             "\"time\":\"2026-01-02T03:04:05Z\"}"},
        {"{\"a\":\"", "\\\",\\\"time\\\":\\\"2002-01-01T00:00:00Z\\\"\"}"},
        {"{\"a\":\"", "\""},
        {"{\"a\":\"", "\\"},
    };
    char pad[80], s[256];
    size_t f, k;
    int64_t t;

    (void)state;
    for (f = 0; f < sizeof(forms) / sizeof(forms[0]); f++)
        for (k = 0; k < sizeof(pad); k++) {
            memset(pad, 'x', k);
            pad[k] = '\0';
            (void)snprintf(s, sizeof(s), "%s%s%s", forms[f][0], pad,
                           forms[f][1]);
            same_prefixes(s);
            t = 0;
            /* The first five have the event's time; the rest none. */
            if (f < 5) {
                assert_int_equal(at(s, &t), IG_OK);
                assert_int_equal(t, 1767323045);
            } else {
                assert_int_not_equal(at(s, &t), IG_OK);
            }
        }
}

static uint64_t
rnd(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

/* Random strings over JSON's structural bytes and a few others, and
   random byte edits of a good leaf: the scanner agrees with the
   reference on every one. */
static void
test_differential(void **state)
{
    static const char alpha[] = "{}[]\":,\\ \t\n\r\0tiem0123456789-TZ:x";
    static const char good[] =
        "{\"intent\":{\"params\":{\"time\":\"2001-01-01T00:00:00Z\","
        "\"x\":[1,{\"q\":\"a\\\\\\\"b\"},\"}\"]}},\"n\":-1.5e3,"
        "\"time\":\"2026-12-01T21:33:04Z\",\"type\":\"intent.received\"}";
    char s[sizeof(good) + 256];
    uint64_t x = 0x9e3779b97f4a7c15u;
    size_t i, j, n, edits;

    (void)state;
    for (i = 0; i < 20000; i++) {
        n = rnd(&x) % (i % 2 == 0 ? 48 : 300);
        s[0] = '{';
        for (j = 1; j < n; j++)
            s[j] = alpha[rnd(&x) % (sizeof(alpha) - 1)];
        same(s, n);
    }
    for (i = 0; i < 20000; i++) {
        n = sizeof(good) - 1;
        memcpy(s, good, n);
        for (edits = 1 + rnd(&x) % 3; edits > 0; edits--)
            s[rnd(&x) % n] = alpha[rnd(&x) % (sizeof(alpha) - 1)];
        same(s, n - rnd(&x) % 4);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_event_time),
        cmocka_unit_test(test_no_time),
        cmocka_unit_test(test_not_an_object),
        cmocka_unit_test(test_prefixes),
        cmocka_unit_test(test_block_edges),
        cmocka_unit_test(test_differential),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
