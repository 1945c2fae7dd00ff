/*
 * test_buf.c - the capped growable buffer: growth, the cap, take, reset.
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "ig_buf.h"

static void
test_append_and_terminate(void **state)
{
    struct ig_buf b;
    (void)state;

    ig_buf_init(&b, 1000);
    assert_int_equal(ig_buf_adds(&b, "hello"), IG_OK);
    assert_int_equal(ig_buf_addc(&b, ' '), IG_OK);
    assert_int_equal(ig_buf_add(&b, "world!!", 5), IG_OK);
    assert_int_equal(b.len, 11);
    assert_string_equal(b.data, "hello world");
    ig_buf_reset(&b);
    assert_int_equal(b.len, 0);
    assert_string_equal(b.data, "");
    ig_buf_release(&b);
    assert_null(b.data);
    ig_buf_release(NULL);
}

static void
test_cap_is_exact(void **state)
{
    struct ig_buf b;
    char big[300];
    (void)state;

    memset(big, 'x', sizeof(big));
    ig_buf_init(&b, 256);
    assert_int_equal(ig_buf_add(&b, big, 256), IG_OK);
    assert_int_equal(ig_buf_addc(&b, 'y'), IG_ERR_LIMIT);
    assert_int_equal(b.len, 256);
    assert_int_equal(b.data[256], '\0');
    ig_buf_reset(&b);
    assert_int_equal(ig_buf_add(&b, big, 257), IG_ERR_LIMIT);
    assert_int_equal(b.len, 0);
    /* A length that would overflow size_t arithmetic is refused. */
    assert_int_equal(ig_buf_add(&b, big, (size_t)-1), IG_ERR_LIMIT);
    ig_buf_release_secret(&b);
}

static void
test_growth_many_appends(void **state)
{
    struct ig_buf b;
    size_t i;
    (void)state;

    ig_buf_init(&b, 1 << 20);
    for (i = 0; i < 100000; i++)
        assert_int_equal(ig_buf_addc(&b, (char)('a' + i % 26)), IG_OK);
    assert_int_equal(b.len, 100000);
    assert_int_equal(b.data[26], 'a');
    assert_int_equal(b.data[99999], 'a' + 99999 % 26);
    ig_buf_release(&b);
}

static void
test_take(void **state)
{
    struct ig_buf b;
    size_t n = 99;
    char *p;
    (void)state;

    ig_buf_init(&b, 64);
    p = ig_buf_take(&b, &n);
    assert_non_null(p);
    assert_int_equal(n, 0);
    assert_string_equal(p, "");
    free(p);
    assert_int_equal(ig_buf_adds(&b, "abc"), IG_OK);
    p = ig_buf_take(&b, &n);
    assert_int_equal(n, 3);
    assert_string_equal(p, "abc");
    assert_null(b.data);
    assert_int_equal(b.len, 0);
    free(p);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_append_and_terminate),
        cmocka_unit_test(test_cap_is_exact),
        cmocka_unit_test(test_growth_many_appends),
        cmocka_unit_test(test_take),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
