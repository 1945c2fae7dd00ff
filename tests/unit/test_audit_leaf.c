/*
 * test_audit_leaf.c - audit_leaf_time: the event's own top-level "time",
 * never one nested in its params (an agent writes those), in objects with
 * every kind of value before it; no time, a time that is not a string or
 * not in the one form, escapes, and cut or broken text each give their
 * status; every prefix of a good leaf is refused without reading past it.
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "audit_leaf.h"

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

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_event_time),
        cmocka_unit_test(test_no_time),
        cmocka_unit_test(test_not_an_object),
        cmocka_unit_test(test_prefixes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
