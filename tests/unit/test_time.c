/*
 * test_time.c - RFC 3339 timestamps: known instants, format/parse round
 * trips across the whole year range, every refusal of the strict parser,
 * and UUIDv4 shape.
 */
#include "testutil.h"

#include <sodium.h>
#include <string.h>

#include "ig_time.h"

static void
test_known_instants(void **state)
{
    static const struct {
        int64_t t;
        const char *s;
    } v[] = {
        {0, "1970-01-01T00:00:00Z"},
        {951782400, "2000-02-29T00:00:00Z"},
        {1640995200, "2022-01-01T00:00:00Z"},
        {1709210096, "2024-02-29T12:34:56Z"},
        {1798563600, "2026-12-29T17:00:00Z"},
        {-1, "1969-12-31T23:59:59Z"},
        {-62167219200, "0000-01-01T00:00:00Z"},
        {253402300799, "9999-12-31T23:59:59Z"},
        {4107542399, "2100-02-28T23:59:59Z"},
        {4107542400, "2100-03-01T00:00:00Z"},
    };
    char out[IG_TIME_STRLEN + 1];
    int64_t t;
    size_t i;
    (void)state;

    for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
        assert_int_equal(ig_time_format(v[i].t, out), IG_OK);
        assert_string_equal(out, v[i].s);
        assert_int_equal(ig_time_parse(v[i].s, strlen(v[i].s), &t), IG_OK);
        assert_int_equal(t, v[i].t);
    }
}

static void
test_round_trip(void **state)
{
    char out[IG_TIME_STRLEN + 1];
    int64_t t, back;
    uint32_t r;
    int i;
    (void)state;

    /* Every day boundary of four centuries around the epoch, then random. */
    for (t = -6311520000; t < 6311520000; t += 86400 - 1) {
        assert_int_equal(ig_time_format(t, out), IG_OK);
        assert_int_equal(ig_time_parse(out, IG_TIME_STRLEN, &back), IG_OK);
        assert_int_equal(back, t);
    }
    for (i = 0; i < 100000; i++) {
        randombytes_buf(&r, sizeof(r));
        t = -62167219200 + (int64_t)r * 73;
        assert_int_equal(ig_time_format(t, out), IG_OK);
        assert_int_equal(ig_time_parse(out, IG_TIME_STRLEN, &back), IG_OK);
        assert_int_equal(back, t);
    }
}

static void
test_format_range(void **state)
{
    char out[IG_TIME_STRLEN + 1];
    (void)state;

    assert_int_equal(ig_time_format(-62167219201, out), IG_ERR_INVALID);
    assert_int_equal(ig_time_format(253402300800, out), IG_ERR_INVALID);
    assert_int_equal(ig_time_format(INT64_MAX, out), IG_ERR_INVALID);
    assert_int_equal(ig_time_format(INT64_MIN, out), IG_ERR_INVALID);
}

static void
test_parse_refusals(void **state)
{
    static const char *const bad[] = {
        "2025-02-30T00:00:00Z",      /* Feb 30 */
        "2025-02-29T00:00:00Z",      /* not a leap year */
        "1900-02-29T00:00:00Z",      /* century, not leap */
        "2025-04-31T00:00:00Z",      /* April has 30 */
        "2025-13-01T00:00:00Z",      /* month 13 */
        "2025-00-01T00:00:00Z",      /* month 0 */
        "2025-01-00T00:00:00Z",      /* day 0 */
        "2025-01-32T00:00:00Z",      /* day 32 */
        "2025-01-01T24:00:00Z",      /* hour 24 */
        "2025-01-01T23:60:00Z",      /* minute 60 */
        "2025-01-01T23:59:60Z",      /* leap second */
        "2025-01-01T00:00:00z",      /* lowercase z */
        "2025-01-01t00:00:00Z",      /* lowercase t */
        "2025-01-01 00:00:00Z",      /* space */
        "2025-01-01T00:00:00+00:00", /* offset */
        "2025-01-01T00:00:00.000Z",  /* fraction */
        "2025-01-01T00:00:00.5Z",    /* fraction */
        "2025-01-01T00:00:00",       /* no zone */
        "2025-01-01T00:00:00ZZ",     /* trailing */
        " 2025-01-01T00:00:00Z",     /* leading space */
        "2025-1-01T00:00:00Z",       /* short month */
        "25-01-01T00:00:00Z",        /* short year */
        "+2025-01-01T00:00:00Z",     /* signed year */
        "2025-01-01T0:00:00Z0",      /* misplaced digits */
        "2025/01/01T00:00:00Z",      /* wrong separators */
        "2025-01-01T00-00-00Z",      /* wrong separators */
        "2025-0a-01T00:00:00Z",      /* not a digit */
        "2025-01-01T00:00:0-Z",      /* not a digit */
        "-025-01-01T00:00:00Z",      /* sign in year */
        "",                          /* empty */
    };
    int64_t t = 42;
    size_t i;
    (void)state;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (ig_time_parse(bad[i], strlen(bad[i]), &t) != IG_ERR_INVALID)
            fail_msg("accepted %s", bad[i]);
        assert_int_equal(t, 0);
    }
    /* Length is what the caller says: a valid prefix is not enough. */
    assert_int_equal(ig_time_parse("2025-01-01T00:00:00Z", 19, &t),
                     IG_ERR_INVALID);
    assert_int_equal(ig_time_parse("2025-01-01T00:00:00Z\0", 21, &t),
                     IG_ERR_INVALID);
    /* Leap days that exist. */
    assert_int_equal(ig_time_parse("2024-02-29T00:00:00Z", 20, &t), IG_OK);
    assert_int_equal(ig_time_parse("2000-02-29T00:00:00Z", 20, &t), IG_OK);
    assert_int_equal(ig_time_parse("0000-02-29T00:00:00Z", 20, &t), IG_OK);
}

static void
test_now(void **state)
{
    int64_t a = ig_time_now(), b;
    (void)state;

    /* After 2024 and before 2100, and it does not run backwards much. */
    assert_true(a > 1704067200 && a < 4102444800);
    b = ig_time_now();
    assert_true(b >= a);
}

static void
test_uuid4(void **state)
{
    char a[IG_UUID_STRLEN + 1], b[IG_UUID_STRLEN + 1];
    size_t i;
    int k;
    (void)state;

    for (k = 0; k < 1000; k++) {
        ig_uuid4(a);
        assert_int_equal(strlen(a), IG_UUID_STRLEN);
        for (i = 0; i < IG_UUID_STRLEN; i++) {
            if (i == 8 || i == 13 || i == 18 || i == 23)
                assert_int_equal(a[i], '-');
            else
                assert_non_null(strchr("0123456789abcdef", a[i]));
        }
        assert_int_equal(a[14], '4');
        assert_non_null(strchr("89ab", a[19]));
    }
    ig_uuid4(b);
    assert_string_not_equal(a, b);
}

/* Version 7: the version and variant nibbles, its first 48 bits the
   real clock's milliseconds (so ids sort by creation in text order), and
   a random tail: two ids of the same millisecond still differ. */
static void
test_uuid7(void **state)
{
    char prev[IG_UUID_STRLEN + 1] = "", a[IG_UUID_STRLEN + 1];
    char b[IG_UUID_STRLEN + 1];
    struct timespec ts;
    long long ms, before;
    int k;
    (void)state;

    (void)clock_gettime(CLOCK_REALTIME, &ts);
    before = (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    for (k = 0; k < 1000; k++) {
        ig_uuid7(a);
        assert_int_equal(strlen(a), IG_UUID_STRLEN);
        assert_int_equal(a[14], '7');
        assert_non_null(strchr("89ab", a[19]));
        /* Only the random tail may go down within one millisecond. */
        assert_true(strncmp(prev, a, 13) <= 0);
        memcpy(prev, a, sizeof(a));
    }
    ms = strtoll((char[]){a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[9],
                          a[10], a[11], a[12], '\0'},
                 NULL, 16);
    (void)clock_gettime(CLOCK_REALTIME, &ts);
    assert_true(ms >= before);
    assert_true(ms <= (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
    ig_uuid7(b);
    assert_string_not_equal(a, b);
    assert_string_not_equal(a + 15, b + 15);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_instants),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_format_range),
        cmocka_unit_test(test_parse_refusals),
        cmocka_unit_test(test_now),
        cmocka_unit_test(test_uuid4),
        cmocka_unit_test(test_uuid7),
    };

    if (sodium_init() < 0)
        return 1;
    return cmocka_run_group_tests(tests, NULL, NULL);
}
