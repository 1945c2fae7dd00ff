/*
 * test_store_pg_shared.c - the state PDP replicas share (shared_cases.c)
 * on the PostgreSQL store. Needs IG_TEST_PG_URL (pg_test.h): every case
 * gets a fresh database, dropped after it. Without the variable every
 * case FAILS: a PostgreSQL test that did not run has not passed.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pg_test.h"
#include "shared_cases.h"

static struct store *
open_pg(struct shared_fixture *f)
{
    struct store_opts o;
    struct store *s = NULL;
    struct ig_err err;

    memset(&o, 0, sizeof(o));
    o.path = f->path;
    o.synchronous_full = 1;
    if (store_open(&o, &s, &err) != IG_OK)
        fail_msg("open %s: %s", f->path, err.msg);
    return s;
}

static int
setup(void **state)
{
    struct shared_fixture *f = calloc(1, sizeof(*f));
    char *url;

    assert_non_null(f);
    *state = f;
    f->open = open_pg;
    f->cross_store_votes = 1;
    url = pg_test_db("ig_shared"); /* fails the case without the URL */
    (void)snprintf(f->path, sizeof(f->path), "%s", url);
    assert_true(strlen(url) < sizeof(f->path));
    free(url);
    return 0;
}

static int
teardown(void **state)
{
    struct shared_fixture *f = *state;
    char *url = strdup(f->path);

    assert_non_null(url);
    if (f->path[0] != '\0')
        pg_test_drop(url);
    else
        free(url);
    free(f);
    return 0;
}

/* End every other session on the test's database: each pooled
   connection of the stores fails at its next use. */
static void
kill_connections(const struct shared_fixture *f)
{
    assert_int_equal(pg_test_exec(f->path,
                                  "SELECT pg_terminate_backend(pid) FROM "
                                  "pg_stat_activity WHERE datname = "
                                  "current_database() AND pid <> "
                                  "pg_backend_pid()"),
                     0);
}

/* A lost connection fails the call that meets it (IG_ERR_IO: no
   session, no count, no vote lock - nothing let through), and the next
   call works again on a new one; the vote lock is not left held, in the
   process or on the server, whichever way it was lost. */
static void
test_fail_closed_then_recover(void **state)
{
    struct shared_fixture *f = *state;
    struct store *s = f->open(f), *b = f->open(f);
    unsigned char h[STORE_SESSION_HASH_BYTES] = {7};
    struct store_session_rec r;
    struct store_login_rule rule = {5, 60000, 100};
    char who[IG_ID_MAX + 1], csrf[IG_SESSION_CSRF_MAX + 1];
    enum ig_status st;
    int64_t w;
    int n, i;

    memset(&r, 0, sizeof(r));
    r.id_hash = h;
    r.approver = "alice";
    r.csrf = "c";
    r.created_at = 0;
    r.expires_at = 600;
    assert_int_equal(store_session_create(s, &r, 60, 10), IG_OK);
    assert_int_equal(store_login_fail(s, "id", "bob", 0, &rule, &n), IG_OK);

    kill_connections(f);
    /* The pool holds connections now dead: each call fails on one, or
       works on one opened since. Never a session, a count or a lock that
       was not read or taken. */
    for (i = 0; i < 40; i++) {
        st = store_session_get(s, h, 1, 60, who, csrf);
        assert_true(st == IG_OK || st == IG_ERR_IO);
        if (st == IG_OK)
            break;
    }
    assert_int_equal(st, IG_OK);
    assert_string_equal(who, "alice");
    for (i = 0; i < 40; i++) {
        st = store_login_check(s, "id", "bob", 1, &rule, &n, &w);
        assert_true(st == IG_OK || st == IG_ERR_IO);
        if (st == IG_OK)
            break;
    }
    assert_int_equal(st, IG_OK);
    assert_int_equal(n, 1);

    /* The vote lock: lost while held, it is released on the server (the
       other replica gets it) and in the process (this one gets it). */
    assert_int_equal(store_vote_lock(s), IG_OK);
    kill_connections(f);
    store_vote_unlock(s);
    for (i = 0; i < 40 && store_vote_lock(b) != IG_OK; i++)
        ;
    assert_true(i < 40);
    store_vote_unlock(b);
    for (i = 0; i < 40 && store_vote_lock(s) != IG_OK; i++)
        ;
    assert_true(i < 40);
    store_vote_unlock(s);
    store_close(b);
    store_close(s);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        SHARED_CASES(setup, teardown),
        cmocka_unit_test_setup_teardown(test_fail_closed_then_recover, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
