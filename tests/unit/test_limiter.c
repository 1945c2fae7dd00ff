/*
 * test_limiter.c - failed sign-ins (approval/appr_limiter.c) and device
 * tokens (approval/appr_device.c), with the clock passed in: the backoff
 * doubles to its cap and is then forgotten; keys never share counts; a
 * full table drops forgotten keys first; a device token is bound to its
 * key, approver and expiry, and a changed byte is no token.
 */
#include "testutil.h"

#include <stdio.h>
#include <string.h>

#include "appr_device.h"
#include "appr_limiter.h"
#include "ig_limits.h"

static void
test_backoff_doubles_to_the_window(void **state)
{
    struct appr_limiter *l = appr_limiter_new(3, 100000); /* ms */
    int64_t t = 1000000, wait;
    int i;
    (void)state;

    for (i = 0; i < 2; i++) {
        assert_int_equal(appr_limiter_wait(l, "alice", t), 0);
        appr_limiter_fail(l, "alice", t);
    }
    assert_int_equal(appr_limiter_wait(l, "alice", t), 0); /* 2 of 3 */
    appr_limiter_fail(l, "alice", t);
    assert_int_equal(appr_limiter_failures(l, "alice", t), 3);
    /* Third failure: the first wait. */
    assert_int_equal(appr_limiter_wait(l, "alice", t),
                     IG_LOGIN_BACKOFF_FIRST_MS);
    assert_int_equal(
        appr_limiter_wait(l, "alice", t + IG_LOGIN_BACKOFF_FIRST_MS), 0);
    /* Each further failure doubles it, up to the window. */
    for (i = 1, wait = IG_LOGIN_BACKOFF_FIRST_MS * 2; i < 12; i++) {
        t += 1000; /* a second apart: not forgotten, the wait grows */
        appr_limiter_fail(l, "alice", t);
        assert_int_equal(appr_limiter_wait(l, "alice", t),
                         wait < 100000 ? wait : 100000);
        /* It counts down. */
        assert_int_equal(appr_limiter_wait(l, "alice", t + 7),
                         (wait < 100000 ? wait : 100000) - 7);
        wait *= 2;
    }
    /* Other keys are untouched. */
    assert_int_equal(appr_limiter_wait(l, "bob", t), 0);
    assert_int_equal(appr_limiter_failures(l, "bob", t), 0);
    /* Forgotten a window after the wait ends. */
    assert_int_equal(appr_limiter_failures(l, "alice", t + 199999), 14);
    assert_int_equal(appr_limiter_failures(l, "alice", t + 200000), 0);
    assert_int_equal(appr_limiter_wait(l, "alice", t + 200000), 0);
    appr_limiter_free(l);
}

static void
test_clear_and_forget(void **state)
{
    struct appr_limiter *l = appr_limiter_new(2, 50000);
    (void)state;

    appr_limiter_fail(l, "bob", 0);
    appr_limiter_fail(l, "bob", 0);
    assert_int_equal(appr_limiter_wait(l, "bob", 0), IG_LOGIN_BACKOFF_FIRST_MS);
    appr_limiter_clear(l, "bob");
    assert_int_equal(appr_limiter_wait(l, "bob", 0), 0);
    assert_int_equal(appr_limiter_failures(l, "bob", 0), 0);
    /* One failure, forgotten a window later. */
    appr_limiter_fail(l, "carol", 10000);
    assert_int_equal(appr_limiter_failures(l, "carol", 59999), 1);
    assert_int_equal(appr_limiter_failures(l, "carol", 60000), 0);
    appr_limiter_fail(l, "carol", 60000); /* counts from zero again */
    assert_int_equal(appr_limiter_failures(l, "carol", 60000), 1);
    appr_limiter_free(l);
    /* A wait never outlasts the window. */
    l = appr_limiter_new(1, 300);
    appr_limiter_fail(l, "erin", 0);
    assert_int_equal(appr_limiter_wait(l, "erin", 0), 300);
    appr_limiter_free(l);
}

static void
test_a_full_table(void **state)
{
    struct appr_limiter *l = appr_limiter_new(1, 100);
    char key[32];
    int i;
    (void)state;

    /* A key under backoff survives keys that are already forgotten. */
    for (i = 0; i < APPR_LIMITER_MAX; i++) {
        (void)snprintf(key, sizeof(key), "old-%d", i);
        appr_limiter_fail(l, key, 0);
    }
    appr_limiter_fail(l, "alice", 500);
    for (i = 0; i < APPR_LIMITER_MAX - 1; i++) {
        (void)snprintf(key, sizeof(key), "new-%d", i);
        appr_limiter_fail(l, key, 501);
    }
    assert_int_equal(appr_limiter_failures(l, "alice", 501), 1);
    /* Full of live keys: the oldest goes. */
    appr_limiter_fail(l, "late", 502);
    assert_int_equal(appr_limiter_failures(l, "late", 502), 1);
    assert_int_equal(appr_limiter_failures(l, "alice", 502), 0);
    appr_limiter_free(l);
}

static void
test_long_keys_are_cut_not_shared_by_prefix(void **state)
{
    struct appr_limiter *l = appr_limiter_new(1, 100);
    char a[100], b[100];
    (void)state;

    memset(a, 'a', sizeof(a) - 1);
    a[sizeof(a) - 1] = '\0';
    memcpy(b, a, sizeof(b));
    b[sizeof(b) - 2] = 'b'; /* differs past the cut: the same key */
    appr_limiter_fail(l, a, 0);
    assert_int_equal(appr_limiter_failures(l, b, 0), 1);
    assert_int_equal(appr_limiter_failures(l, "aaa", 0), 0);
    appr_limiter_free(l);
}

static const unsigned char key1[APPR_DEVICE_KEY_BYTES] = {1, 2, 3};
static const unsigned char key2[APPR_DEVICE_KEY_BYTES] = {1, 2, 4};

static void
test_device_tokens(void **state)
{
    char tok[APPR_DEVICE_LEN + 1], other[APPR_DEVICE_LEN + 1];
    char id[APPR_DEVICE_ID_LEN + 1], id2[APPR_DEVICE_ID_LEN + 1];
    size_t i;
    (void)state;

    appr_device_issue(key1, "alice", 1000, 60, tok);
    assert_int_equal(strlen(tok), APPR_DEVICE_LEN);
    assert_int_equal(strncmp(tok, "igd_", 4), 0);
    assert_true(appr_device_check(key1, tok, "alice", 1000, id));
    assert_int_equal(strlen(id), APPR_DEVICE_ID_LEN);
    assert_true(appr_device_check(key1, tok, "alice", 1059, id2));
    assert_string_equal(id, id2);
    /* Expired, another approver, another key. */
    assert_false(appr_device_check(key1, tok, "alice", 1060, id));
    assert_false(appr_device_check(key1, tok, "alicf", 1000, id));
    assert_false(appr_device_check(key1, tok, "alic", 1000, id));
    assert_false(appr_device_check(key2, tok, "alice", 1000, id));
    assert_false(appr_device_check(key1, NULL, "alice", 1000, id));
    assert_false(appr_device_check(key1, "", "alice", 1000, id));
    /* Every changed character is no token. */
    for (i = 0; i < APPR_DEVICE_LEN; i++) {
        memcpy(other, tok, sizeof(other));
        other[i] = other[i] == 'A' ? 'B' : 'A';
        assert_false(appr_device_check(key1, other, "alice", 1000, id));
    }
    /* Cut or lengthened. */
    memcpy(other, tok, sizeof(other));
    other[APPR_DEVICE_LEN - 1] = '\0';
    assert_false(appr_device_check(key1, other, "alice", 1000, id));
    /* Two sign-ins: two devices. */
    appr_device_issue(key1, "alice", 1000, 60, other);
    assert_string_not_equal(tok, other);
    assert_true(appr_device_check(key1, other, "alice", 1000, id2));
    assert_true(appr_device_check(key1, tok, "alice", 1000, id));
    assert_string_not_equal(id, id2);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_backoff_doubles_to_the_window),
        cmocka_unit_test(test_clear_and_forget),
        cmocka_unit_test(test_a_full_table),
        cmocka_unit_test(test_long_keys_are_cut_not_shared_by_prefix),
        cmocka_unit_test(test_device_tokens),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
