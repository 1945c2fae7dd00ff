/*
 * test_session.c - approver sessions (ids, CSRF tokens, idle and absolute
 * timeouts, logout) and passwords. (The failed-login limiter:
 * test_limiter.c.)
 */
#include "testutil.h"

#include <sodium.h>
#include <string.h>

#include "appr_password.h"
#include "appr_session.h"

static void
test_create_and_lookup(void **state)
{
    struct appr_sessions *s = appr_sessions_new(60, 600);
    char id[APPR_SESSION_ID_LEN + 1], csrf[APPR_CSRF_LEN + 1];
    char who[APPR_APPROVER_MAX + 1], csrf2[APPR_CSRF_LEN + 1];
    char id2[APPR_SESSION_ID_LEN + 1];
    int64_t exp;
    (void)state;

    assert_true(sodium_init() >= 0);
    assert_non_null(s);
    assert_int_equal(appr_session_create(s, "alice", 1000, id, csrf, &exp),
                     IG_OK);
    assert_int_equal(strlen(id), APPR_SESSION_ID_LEN);
    assert_int_equal(strncmp(id, "igs_", 4), 0);
    assert_int_equal(strlen(csrf), APPR_CSRF_LEN);
    assert_int_equal(exp, 1600);
    assert_int_equal(appr_session_lookup(s, id, 1010, who, csrf2), IG_OK);
    assert_string_equal(who, "alice");
    assert_string_equal(csrf2, csrf);
    /* Two sessions never share an id or a token. */
    assert_int_equal(appr_session_create(s, "alice", 1000, id2, csrf2, &exp),
                     IG_OK);
    assert_string_not_equal(id, id2);
    assert_string_not_equal(csrf, csrf2);
    /* A one-character change is another (unknown) session. */
    id2[10] = id2[10] == 'A' ? 'B' : 'A';
    assert_int_equal(appr_session_lookup(s, id2, 1010, who, NULL),
                     IG_ERR_NOTFOUND);
    assert_int_equal(appr_session_lookup(s, "igs_short", 1010, who, NULL),
                     IG_ERR_NOTFOUND);
    assert_int_equal(appr_session_lookup(s, NULL, 1010, who, NULL),
                     IG_ERR_NOTFOUND);
    appr_sessions_free(s);
}

static void
test_timeouts_and_logout(void **state)
{
    struct appr_sessions *s = appr_sessions_new(60, 300);
    char id[APPR_SESSION_ID_LEN + 1], csrf[APPR_CSRF_LEN + 1];
    char who[APPR_APPROVER_MAX + 1];
    int64_t exp, t;
    (void)state;

    /* Idle: 60 s without a lookup ends it. */
    assert_int_equal(appr_session_create(s, "bob", 0, id, csrf, &exp), IG_OK);
    assert_int_equal(appr_session_lookup(s, id, 59, who, NULL), IG_OK);
    assert_int_equal(appr_session_lookup(s, id, 119, who, NULL),
                     IG_ERR_NOTFOUND);
    /* Absolute: kept busy, it still ends at 300 s. */
    assert_int_equal(appr_session_create(s, "bob", 0, id, csrf, &exp), IG_OK);
    for (t = 30; t < 300; t += 30)
        assert_int_equal(appr_session_lookup(s, id, t, who, NULL), IG_OK);
    assert_int_equal(appr_session_lookup(s, id, 300, who, NULL),
                     IG_ERR_NOTFOUND);
    /* Logout. */
    assert_int_equal(appr_session_create(s, "bob", 0, id, csrf, &exp), IG_OK);
    appr_session_end(s, id);
    assert_int_equal(appr_session_lookup(s, id, 1, who, NULL), IG_ERR_NOTFOUND);
    assert_int_equal(appr_session_create(s, "carol", 0, id, csrf, &exp), IG_OK);
    appr_session_end_all(s, "carol");
    assert_int_equal(appr_session_lookup(s, id, 1, who, NULL), IG_ERR_NOTFOUND);
    appr_sessions_free(s);
}

static void
test_password(void **state)
{
    char hash[APPR_HASH_MAX];
    (void)state;

    assert_int_equal(appr_password_hash("short", 5, hash), -1);
    assert_int_equal(appr_password_hash("correct horse", 13, hash), 0);
    assert_true(appr_password_hash_valid(hash));
    assert_true(appr_password_verify(hash, "correct horse", 13));
    assert_false(appr_password_verify(hash, "correct horsf", 13));
    assert_false(appr_password_verify("$argon2i$v=19$m=1", "x", 1));
    assert_false(appr_password_hash_valid("plain text"));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create_and_lookup),
        cmocka_unit_test(test_timeouts_and_logout),
        cmocka_unit_test(test_password),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
