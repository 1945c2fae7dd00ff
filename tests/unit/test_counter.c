/*
 * test_counter.c - core/ig_counter.h: windows end at `now` and include
 * its hit, old buckets fall out, time running backwards inside a key
 * counts in the newest bucket, a full table evicts idle keys before it
 * refuses, and loaded counts add up.
 */
#include "testutil.h"

#include <stdio.h>

#include "ig_counter.h"

static void
test_window(void **state)
{
    struct ig_counter *c = ig_counter_new(16, 86400);

    (void)state;
    assert_non_null(c);
    assert_int_equal(ig_counter_hit(c, "k", 60, 1000), 1);
    assert_int_equal(ig_counter_hit(c, "k", 60, 1000), 2);
    assert_int_equal(ig_counter_hit(c, "k", 60, 1059), 3);
    /* 1000 is no longer inside (1000, 1060]. */
    assert_int_equal(ig_counter_hit(c, "k", 60, 1060), 2);
    assert_int_equal(ig_counter_hit(c, "other", 60, 1060), 1);
    /* A longer window sees them all; one past max_window is capped. */
    assert_int_equal(ig_counter_hit(c, "k", 3600, 1061), 5);
    assert_int_equal(ig_counter_hit(c, "k", 1000000, 1062), 6);
    ig_counter_free(c);
}

static void
test_time_backwards(void **state)
{
    struct ig_counter *c = ig_counter_new(4, 100);

    (void)state;
    assert_int_equal(ig_counter_hit(c, "k", 10, 500), 1);
    /* Earlier than the newest bucket: counted in it, never lost. */
    assert_int_equal(ig_counter_hit(c, "k", 10, 400), 2);
    assert_int_equal(ig_counter_hit(c, "k", 10, 505), 3);
    ig_counter_free(c);
}

static void
test_full_evicts_idle_then_refuses(void **state)
{
    struct ig_counter *c = ig_counter_new(2, 100);

    (void)state;
    assert_int_equal(ig_counter_hit(c, "a", 10, 0), 1);
    assert_int_equal(ig_counter_hit(c, "b", 10, 50), 1);
    /* Full, and nothing idle for 100 s: a third key is refused. */
    assert_int_equal(ig_counter_hit(c, "c", 10, 60), -1);
    assert_int_equal(ig_counter_keys(c), 2);
    /* At 100, "a" (hit at 0) is idle: evicted, "c" fits. */
    assert_int_equal(ig_counter_hit(c, "c", 10, 100), 1);
    assert_int_equal(ig_counter_keys(c), 2);
    assert_int_equal(ig_counter_hit(c, "b", 100, 100), 2);
    ig_counter_free(c);
}

static void
test_load(void **state)
{
    struct ig_counter *c = ig_counter_new(8, 86400);
    char key[16];
    int i;

    (void)state;
    assert_int_equal(ig_counter_load(c, "k", 10, 3), 0);
    assert_int_equal(ig_counter_load(c, "k", 20, 4), 0);
    assert_int_equal(ig_counter_load(c, "k", 20, 0), -1);
    assert_int_equal(ig_counter_hit(c, "k", 5, 21), 5); /* 20 and 21 */
    assert_int_equal(ig_counter_hit(c, "k", 60, 21), 9);
    for (i = 0; i < 7; i++) {
        (void)snprintf(key, sizeof(key), "k%d", i);
        assert_int_equal(ig_counter_load(c, key, 30, 1), 0);
    }
    assert_int_equal(ig_counter_load(c, "full", 30, 1), -1);
    ig_counter_free(c);
    ig_counter_free(NULL);
    assert_null(ig_counter_new(8, 0));
}

/* A policy counting many keys per evaluation spends the bucket budget:
   then count() fails (-1), it does not grow without bound; buckets that
   fell out of the window are given back first. */
static void
test_bucket_budget(void **state)
{
    struct ig_counter *c = ig_counter_new(100000, 100);
    char key[32];
    int i, refused = 0;

    (void)state;
    ig_counter_set_max_buckets(c, 800);
    for (i = 0; i < 1000; i++) {
        (void)snprintf(key, sizeof(key), "hoard:%d", i);
        if (ig_counter_hit(c, key, 100, 10) < 0)
            refused++;
        assert_true(ig_counter_buckets(c) <= 800);
    }
    assert_int_equal(refused, 900); /* 8 buckets a key: 100 keys fit */
    /* A key that has a bucket keeps counting in its newest second. */
    assert_int_equal(ig_counter_hit(c, "hoard:0", 100, 10), 2);
    /* 100 s later every bucket is out of the window: given back. */
    assert_int_equal(ig_counter_hit(c, "hoard:999", 100, 110), 1);
    assert_true(ig_counter_buckets(c) <= 800);
    /* One key past its 8 seconds grows its array: budget again. */
    for (i = 0; i < 50; i++)
        assert_true(ig_counter_hit(c, "k", 100, 200 + i) > 0);
    assert_int_equal(ig_counter_hit(c, "k", 100, 250), 51);
    ig_counter_free(c);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_window),
        cmocka_unit_test(test_time_backwards),
        cmocka_unit_test(test_full_evicts_idle_then_refuses),
        cmocka_unit_test(test_load),
        cmocka_unit_test(test_bucket_budget),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
