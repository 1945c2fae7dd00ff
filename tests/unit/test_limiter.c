/*
 * test_limiter.c - device tokens (approval/appr_device.c), with the clock
 * passed in: a token is bound to its key, approver and expiry, and a
 * changed byte is no token. (The failed sign-ins they let past are
 * counted by the store: shared_cases.c.)
 */
#include "testutil.h"

#include <stdio.h>
#include <string.h>

#include "appr_device.h"
#include "ig_limits.h"

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
        cmocka_unit_test(test_device_tokens),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
