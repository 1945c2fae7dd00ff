/*
 * test_store_shared.c - the state PDP replicas share (shared_cases.c) on
 * the SQLite store, and its schema: the tables come with migration 6,
 * which holds when run twice.
 */
#include "testutil.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared_cases.h"

static struct store *
open_sqlite(struct shared_fixture *f)
{
    struct store_opts o;
    struct store *s = NULL;
    struct ig_err err;

    memset(&o, 0, sizeof(o));
    o.path = f->path;
    o.synchronous_full = 1;
    if (store_open(&o, &s, &err) != IG_OK)
        fail_msg("open: %s", err.msg);
    return s;
}

static int
setup(void **state)
{
    struct shared_fixture *f = calloc(1, sizeof(*f));

    assert_non_null(f);
    f->open = open_sqlite;
    (void)snprintf(f->dir, sizeof(f->dir), "/tmp/ig-shared-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    (void)snprintf(f->path, sizeof(f->path), "%s/t.db", f->dir);
    *state = f;
    return 0;
}

static int
teardown(void **state)
{
    struct shared_fixture *f = *state;
    char cmd[200];

    (void)snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
    assert_int_equal(system(cmd), 0);
    free(f);
    return 0;
}

/* Migration 6 run again (user_version set back) keeps the rows. */
static void
test_migration_twice(void **state)
{
    struct shared_fixture *f = *state;
    struct store *s = f->open(f);
    char ch[IG_ID_MAX + 1], ts[IG_SLACK_TS_MAX + 1];
    sqlite3 *db;

    assert_int_equal(store_slack_put(s, "i-1", "C1", "1.2"), IG_OK);
    store_close(s);
    assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
    assert_int_equal(
        sqlite3_exec(db, "PRAGMA user_version = 5", NULL, NULL, NULL),
        SQLITE_OK);
    sqlite3_close(db);
    s = f->open(f);
    assert_int_equal(store_slack_get(s, "i-1", ch, ts), IG_OK);
    assert_string_equal(ch, "C1");
    store_close(s);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        SHARED_CASES(setup, teardown),
        cmocka_unit_test_setup_teardown(test_migration_twice, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
