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

int
main(void)
{
    const struct CMUnitTest tests[] = {
        SHARED_CASES(setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
