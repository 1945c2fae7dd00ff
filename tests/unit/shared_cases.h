/*
 * shared_cases.h - the cases of the state PDP replicas share (store.h:
 * sessions, failed sign-ins, Slack messages, the vote lock), written once
 * and run on each backend: test_store_shared.c (SQLite) and
 * test_store_pg_shared.c (PostgreSQL). Each file gives the opener; every
 * case opens its own fresh store (two, on one database, where it shows
 * what replicas share).
 */
#ifndef SHARED_CASES_H
#define SHARED_CASES_H

#include <stddef.h>

#include "store.h"

/* The backend under test: open a store on the fixture's database (a
   second call opens another store on the same database: a replica).
   Fails the test when it cannot. */
struct shared_fixture {
    struct store *(*open)(struct shared_fixture *f);
    /* 1 when two stores on one database exclude each other's votes
       (PostgreSQL's advisory lock); SQLite serves one process a file. */
    int cross_store_votes;
    char dir[64], path[256]; /* the backend's own use */
};

/* The cases, as cmocka tests; *state is the struct shared_fixture. */
void sc_sessions(void **state);
void sc_session_timeouts(void **state);
void sc_session_capacity(void **state);
void sc_sessions_across_stores(void **state);
void sc_login_backoff(void **state);
void sc_login_clear_and_forget(void **state);
void sc_login_full_kind(void **state);
void sc_login_keys(void **state);
void sc_login_concurrent(void **state);
void sc_slack(void **state);
void sc_vote_lock(void **state);

#define SHARED_CASES(setup, teardown)                                          \
    cmocka_unit_test_setup_teardown(sc_sessions, setup, teardown),             \
        cmocka_unit_test_setup_teardown(sc_session_timeouts, setup, teardown), \
        cmocka_unit_test_setup_teardown(sc_session_capacity, setup, teardown), \
        cmocka_unit_test_setup_teardown(sc_sessions_across_stores, setup,      \
                                        teardown),                             \
        cmocka_unit_test_setup_teardown(sc_login_backoff, setup, teardown),    \
        cmocka_unit_test_setup_teardown(sc_login_clear_and_forget, setup,      \
                                        teardown),                             \
        cmocka_unit_test_setup_teardown(sc_login_full_kind, setup, teardown),  \
        cmocka_unit_test_setup_teardown(sc_login_keys, setup, teardown),       \
        cmocka_unit_test_setup_teardown(sc_login_concurrent, setup, teardown), \
        cmocka_unit_test_setup_teardown(sc_slack, setup, teardown),            \
        cmocka_unit_test_setup_teardown(sc_vote_lock, setup, teardown)

#endif
