/*
 * test_store_pg_schema.c - the PostgreSQL store's schema: created on the
 * first open, migrated once when several replicas start at the same time,
 * a database newer than this binary refused, recorded rows immutable, an
 * unreachable server refused with a clear error. Needs IG_TEST_PG_URL
 * (pg_test.h).
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "pg_test.h"
#include "store.h"

#define SCHEMA_VERSION 2 /* store_pg_schema.c's migrations */

static enum ig_status
open_at(const char *url, struct store **out, struct ig_err *err)
{
    struct store_opts o;

    memset(&o, 0, sizeof(o));
    o.path = url;
    o.synchronous_full = 1;
    return store_open(&o, out, err);
}

static void
test_created_then_reopened(void **state)
{
    char *url = pg_test_db("igt_schema");
    struct store *s = NULL;
    struct ig_err err = {0};

    (void)state;
    assert_int_equal(open_at(url, &s, &err), IG_OK);
    store_close(s);
    assert_int_equal(pg_test_scalar(url, "SELECT version FROM ig_schema"),
                     SCHEMA_VERSION);
    assert_int_equal(pg_test_scalar(url, "SELECT count(*) FROM ig_schema"), 1);
    s = NULL;
    assert_int_equal(open_at(url, &s, &err), IG_OK);
    store_close(s);
    assert_int_equal(pg_test_scalar(url, "SELECT version FROM ig_schema"),
                     SCHEMA_VERSION);
    pg_test_drop(url);
}

struct opener {
    const char *url;
    enum ig_status st;
    struct ig_err err;
};

static void *
open_close(void *arg)
{
    struct opener *o = arg;
    struct store *s = NULL;

    o->st = open_at(o->url, &s, &o->err);
    store_close(s);
    return NULL;
}

/* Four replicas starting at once on an empty database: each opens, the
   schema is made once. */
static void
test_concurrent_first_opens(void **state)
{
    char *url = pg_test_db("igt_schema");
    struct opener o[4];
    pthread_t t[4];
    int i;

    (void)state;
    for (i = 0; i < 4; i++) {
        memset(&o[i], 0, sizeof(o[i]));
        o[i].url = url;
        assert_int_equal(pthread_create(&t[i], NULL, open_close, &o[i]), 0);
    }
    for (i = 0; i < 4; i++) {
        assert_int_equal(pthread_join(t[i], NULL), 0);
        if (o[i].st != IG_OK)
            fail_msg("replica %d: %s", i, o[i].err.msg);
    }
    assert_int_equal(pg_test_scalar(url, "SELECT count(*) FROM ig_schema"), 1);
    assert_int_equal(pg_test_scalar(url, "SELECT version FROM ig_schema"),
                     SCHEMA_VERSION);
    pg_test_drop(url);
}

static void
test_newer_database_refused(void **state)
{
    char *url = pg_test_db("igt_schema");
    struct store *s = NULL;
    struct ig_err err = {0};

    (void)state;
    assert_int_equal(open_at(url, &s, &err), IG_OK);
    store_close(s);
    s = NULL;
    assert_int_equal(pg_test_exec(url, "UPDATE ig_schema SET version = 99"), 0);
    assert_int_equal(open_at(url, &s, &err), IG_ERR_IO);
    assert_null(s);
    assert_non_null(strstr(err.msg, "schema version 99 is newer"));
    pg_test_drop(url);
}

/* The record tables refuse UPDATE, DELETE and TRUNCATE, even to their
   owner; the working tables do not. */
static void
test_recorded_rows_immutable(void **state)
{
    static const char *const tables[] = {
        "intents",      "decisions",   "grants",      "redemptions",
        "outcomes",     "approvals",   "votes",       "resolutions",
        "audit_events", "audit_tiles", "checkpoints", "cosignatures"};
    char *url = pg_test_db("igt_schema");
    struct store *s = NULL;
    struct ig_err err = {0};
    char sql[128];
    size_t i;

    (void)state;
    assert_int_equal(open_at(url, &s, &err), IG_OK);
    store_close(s);
    assert_int_equal(
        pg_test_exec(url, "INSERT INTO intents (intent_id, principal, tenant,"
                          " action, resource, intent_hash, binding,"
                          " created_at, expires_at) VALUES ('i1', 'a', 't',"
                          " 'x.y', 'r', 'h', '{}', 1, 2)"),
        0);
    assert_int_equal(pg_test_exec(url, "UPDATE intents SET action = 'x.z'"),
                     -1);
    assert_int_equal(pg_test_exec(url, "DELETE FROM intents"), -1);
    assert_int_equal(pg_test_scalar(url, "SELECT count(*) FROM intents"
                                         " WHERE action = 'x.y'"),
                     1);
    for (i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
        (void)snprintf(sql, sizeof(sql), "TRUNCATE %s CASCADE", tables[i]);
        if (pg_test_exec(url, sql) != -1)
            fail_msg("TRUNCATE %s was allowed", tables[i]);
    }
    assert_int_equal(
        pg_test_exec(url, "INSERT INTO counter_counts VALUES ('k', 1, 1);"
                          "UPDATE counter_counts SET hits = 2;"
                          "DELETE FROM counter_counts"),
        0);
    pg_test_drop(url);
}

static void
test_unreachable_server(void **state)
{
    struct store *s = NULL;
    struct ig_err err = {0};

    (void)state;
    /* Port 1 on loopback: refused at once. */
    assert_int_equal(open_at("postgresql://nobody@127.0.0.1:1/none", &s, &err),
                     IG_ERR_IO);
    assert_null(s);
    assert_non_null(strstr(err.msg, "cannot connect to PostgreSQL"));
}

/* The roles of docs/operations.md ("Roles: least privilege"): the owner
   migrates, the PDP's role opens the store, writes and sequences, and
   can neither change a recorded row nor drop a trigger. */
static void
test_least_privilege_role(void **state)
{
    char *url = pg_test_db("igt_schema"), *pdp_url, sql[2048], role[64];
    const char *at;
    struct store *s = NULL;
    struct ig_err err = {0};
    const char *ev[] = {"{\"type\":\"test.event\"}"};

    (void)state;
    (void)snprintf(role, sizeof(role), "igt_pdp_%ld", (long)getpid());
    (void)snprintf(sql, sizeof(sql),
                   "DROP ROLE IF EXISTS %s; CREATE ROLE %s LOGIN", role, role);
    assert_int_equal(pg_test_exec(url, sql), 0);
    assert_int_equal(open_at(url, &s, &err), IG_OK); /* the owner migrates */
    store_close(s);
    (void)snprintf(
        sql, sizeof(sql),
        "REVOKE ALL ON ALL TABLES IN SCHEMA public FROM PUBLIC;"
        "REVOKE CREATE ON SCHEMA public FROM PUBLIC;"
        "GRANT USAGE ON SCHEMA public TO %s;"
        "GRANT SELECT, INSERT ON intents, decisions, grants, redemptions,"
        " outcomes, approvals, votes, resolutions, audit_events, audit_tiles,"
        " checkpoints, cosignatures TO %s;"
        "GRANT SELECT, INSERT, UPDATE, DELETE ON audit_queue, counter_counts,"
        " approver_sessions, login_failures, slack_messages TO %s;"
        "GRANT SELECT ON ig_schema TO %s;"
        "GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO %s",
        role, role, role, role, role);
    assert_int_equal(pg_test_exec(url, sql), 0);
    /* The same URL with the PDP's role as its user. */
    at = strchr(url, '@');
    assert_non_null(at);
    (void)snprintf(sql, sizeof(sql), "postgresql://%s%s", role, at);
    pdp_url = strdup(sql);
    assert_non_null(pdp_url);
    s = NULL;
    if (open_at(pdp_url, &s, &err) != IG_OK)
        fail_msg("the PDP's role cannot open the store: %s", err.msg);
    assert_int_equal(store_put_events(s, ev, 1), IG_OK);
    assert_true(store_count(s, "k", 60, 1000) == 1);
    store_close(s); /* the sequencer moved the event before it stopped */
    assert_int_equal(pg_test_scalar(url, "SELECT count(*) FROM audit_events"),
                     1);
    assert_int_equal(pg_test_scalar(url, "SELECT count(*) FROM audit_queue"),
                     0);
    assert_int_equal(pg_test_exec(pdp_url, "UPDATE audit_events SET event = "
                                           "'{}'"),
                     -1);
    assert_int_equal(pg_test_exec(pdp_url, "DELETE FROM audit_events"), -1);
    assert_int_equal(pg_test_exec(pdp_url, "DROP TRIGGER audit_events_immutable"
                                           " ON audit_events"),
                     -1);
    free(pdp_url);
    pg_test_drop(url);
    (void)snprintf(sql, sizeof(sql), "DROP ROLE IF EXISTS %s", role);
    (void)pg_test_exec(getenv("IG_TEST_PG_URL"), sql);
}

/* What server.started logs of `database =`: never a password. */
static void
test_url_for_log(void **state)
{
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"postgresql://u:s3cret@h:5432/db?sslmode=require",
         "postgresql://u@h:5432/db?(parameters withheld)"},
        {"postgres://u:s3cret@h/db", "postgres://u@h/db"},
        {"postgresql://u@h/db?sslmode=verify-full&password=s3cret",
         "postgresql://u@h/db?(parameters withheld)"},
        {"postgresql://u@h/db?pass%77ord=s3cret",
         "postgresql://u@h/db?(parameters withheld)"},
        {"postgresql://u@h/db?sslmode=require",
         "postgresql://u@h/db?sslmode=require"},
        {"/var/lib/intentgate/ig.db", "/var/lib/intentgate/ig.db"},
    };
    char out[128];
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        store_url_for_log(cases[i].in, out, sizeof(out));
        assert_string_equal(out, cases[i].out);
        assert_null(strstr(out, "s3cret"));
    }
    store_url_for_log(cases[0].in, out, 12); /* cut, never past cap */
    assert_int_equal(strlen(out), 11);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_created_then_reopened),
        cmocka_unit_test(test_concurrent_first_opens),
        cmocka_unit_test(test_newer_database_refused),
        cmocka_unit_test(test_recorded_rows_immutable),
        cmocka_unit_test(test_unreachable_server),
        cmocka_unit_test(test_url_for_log),
        cmocka_unit_test(test_least_privilege_role),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
