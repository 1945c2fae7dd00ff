/*
 * test_session.c - approver session ids, CSRF tokens and the hash an id
 * is stored as, and passwords. (The sessions themselves, with their
 * timeouts, and failed logins are kept by the store: shared_cases.c.)
 */
#include "testutil.h"

#include <sodium.h>
#include <string.h>

#include "appr_password.h"
#include "appr_session.h"

static void
test_ids_and_hashes(void **state)
{
    char id[APPR_SESSION_ID_LEN + 1], csrf[APPR_CSRF_LEN + 1];
    char id2[APPR_SESSION_ID_LEN + 1], csrf2[APPR_CSRF_LEN + 1];
    unsigned char h[APPR_SESSION_HASH_BYTES], h2[APPR_SESSION_HASH_BYTES];
    unsigned char want[APPR_SESSION_HASH_BYTES];
    (void)state;

    assert_true(sodium_init() >= 0);
    appr_session_new(id, csrf, h);
    assert_int_equal(strlen(id), APPR_SESSION_ID_LEN);
    assert_int_equal(strncmp(id, "igs_", 4), 0);
    assert_int_equal(strlen(csrf), APPR_CSRF_LEN);
    /* What is stored is the SHA-256 of the id, and only that. */
    crypto_hash_sha256(want, (const unsigned char *)id, strlen(id));
    assert_memory_equal(h, want, sizeof(h));
    assert_int_equal(appr_session_hash(id, h2), 0);
    assert_memory_equal(h2, want, sizeof(h2));
    /* Two sessions never share an id or a token. */
    appr_session_new(id2, csrf2, h2);
    assert_string_not_equal(id, id2);
    assert_string_not_equal(csrf, csrf2);
    assert_memory_not_equal(h, h2, sizeof(h));
    /* A one-character change is another session. */
    id2[10] = id2[10] == 'A' ? 'B' : 'A';
    assert_int_equal(appr_session_hash(id2, h2), 0);
    assert_memory_not_equal(h2, want, sizeof(h2));
    /* Not shaped as an id: no hash. */
    assert_int_equal(appr_session_hash("igs_short", h2), -1);
    assert_int_equal(appr_session_hash(NULL, h2), -1);
    memcpy(id2, id, sizeof(id2));
    memcpy(id2, "igx_", 4);
    assert_int_equal(appr_session_hash(id2, h2), -1);
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
        cmocka_unit_test(test_ids_and_hashes),
        cmocka_unit_test(test_password),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
