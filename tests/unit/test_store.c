/*
 * test_store.c - the PDP's SQLite store: records, immutability, idempotent
 * replay, exactly-once redemption (also concurrent and across a reopen),
 * outcomes, audit events, quota counters, schema versions.
 */
#include "testutil.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ig_time.h"
#include "store.h"

struct fixture {
    char dir[64];
    char path[128];
    struct store *s;
};

static struct store *
open_store(const char *path)
{
    struct store_opts o;
    struct store *s = NULL;
    struct ig_err err;

    memset(&o, 0, sizeof(o));
    o.path = path;
    o.synchronous_full = 1;
    if (store_open(&o, &s, &err) != IG_OK)
        fail_msg("open: %s", err.msg);
    return s;
}

static int
setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));

    assert_non_null(f);
    (void)snprintf(f->dir, sizeof(f->dir), "/tmp/ig-store-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    (void)snprintf(f->path, sizeof(f->path), "%s/t.db", f->dir);
    f->s = open_store(f->path);
    *state = f;
    return 0;
}

static int
teardown(void **state)
{
    struct fixture *f = *state;
    char cmd[200];

    store_close(f->s);
    (void)snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
    assert_int_equal(system(cmd), 0);
    free(f);
    return 0;
}

/* An ALLOW record with a grant; ids derive from n. */
static void
make_rec(struct store_intent_rec *r, char ids[4][40], int n, const char *idem,
         int64_t now, char **ev)
{
    (void)snprintf(ids[0], 40, "00000000-0000-4000-8000-%012d", n);
    (void)snprintf(ids[1], 40, "10000000-0000-4000-8000-%012d", n);
    (void)snprintf(ids[2], 40, "20000000-0000-4000-8000-%012d", n);
    (void)snprintf(ids[3], 40, "{\"n\":%d}", n);
    memset(r, 0, sizeof(*r));
    r->intent_id = ids[0];
    r->principal = "agent-1";
    r->tenant = "t";
    r->action = "payments.refund";
    r->resource = "orders/1";
    r->intent_hash = "sha256:00";
    r->binding = "{\"action\":\"payments.refund\"}";
    r->idempotency_key = idem;
    r->created_at = now;
    r->expires_at = now + 60;
    r->decision_id = ids[1];
    r->decision = "ALLOW";
    r->reasons = "[]";
    r->message = "ok";
    r->policy_revision = "sha256:11";
    r->grant_jti = ids[2];
    r->grant_aud = "exec-1";
    r->grant_token = ids[3];
    r->grant_expires_at = now + 30;
    ev[0] = strdup("{\"type\":\"intent.received\"}");
    assert_non_null(ev[0]);
    r->events = (const char *const *)ev;
    r->nevents = 1;
}

static void
test_put_and_get(void **state)
{
    struct fixture *f = *state;
    struct store_intent_rec r;
    char ids[4][40], *replay = NULL;
    char *ev[1];
    json_t *rec = NULL;
    int64_t n = -1;

    make_rec(&r, ids, 1, NULL, ig_time_now(), ev);
    assert_int_equal(store_put_intent(f->s, &r, &replay), IG_OK);
    assert_null(replay);
    assert_int_equal(store_get_intent(f->s, ids[0], &rec), IG_OK);
    assert_string_equal(json_string_value(json_object_get(rec, "principal")),
                        "agent-1");
    assert_int_equal(json_array_size(json_object_get(rec, "decisions")), 1);
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(rec, "grant"), "jti")),
                        ids[2]);
    assert_null(json_object_get(rec, "redemption"));
    json_decref(rec);
    assert_int_equal(store_get_intent(f->s, "nope", &rec), IG_ERR_NOTFOUND);
    assert_int_equal(store_audit_size(f->s, &n), IG_OK);
    assert_int_equal(n, 1);
    free(ev[0]);
}

static void
test_rows_are_immutable(void **state)
{
    static const char *const sql[] = {
        "UPDATE intents SET principal = 'x'",      "DELETE FROM intents",
        "UPDATE decisions SET decision = 'ALLOW'", "DELETE FROM decisions",
        "UPDATE grants SET audience = 'x'",        "DELETE FROM grants",
        "UPDATE audit_events SET event = '{}'",    "DELETE FROM audit_events",
        "UPDATE redemptions SET executor = 'x'",   "DELETE FROM redemptions",
        "UPDATE outcomes SET detail = '[]'",       "DELETE FROM outcomes",
        "UPDATE approvals SET expires_at = 0",     "DELETE FROM approvals"};
    struct fixture *f = *state;
    struct store_intent_rec r;
    struct store_redeem_rec rr;
    struct store_outcome_rec o;
    char ids[4][40], ids2[4][40], *replay = NULL, *msg = NULL;
    char *ev[1], *ev2[1];
    sqlite3 *db;
    size_t i;

    make_rec(&r, ids, 2, NULL, ig_time_now(), ev);
    assert_int_equal(store_put_intent(f->s, &r, &replay), IG_OK);
    memset(&rr, 0, sizeof(rr));
    rr.jti = ids[2];
    rr.intent_id = ids[0];
    rr.executor = "exec-1";
    assert_int_equal(store_redeem(f->s, &rr), IG_OK);
    memset(&o, 0, sizeof(o));
    o.intent_id = ids[0];
    o.executor = "exec-1";
    o.outcome = "COMPLETED";
    o.detail = "{}";
    assert_int_equal(store_put_outcome(f->s, &o), IG_OK);
    make_rec(&r, ids2, 22, NULL, ig_time_now(), ev2);
    r.decision = "ESCALATE";
    r.grant_jti = NULL;
    r.approval_id = "30000000-0000-4000-8000-000000000022";
    r.approval_requirements = "{\"groups\":[\"finance\"],\"quorum\":1}";
    r.approval_expires_at = ig_time_now() + 900;
    assert_int_equal(store_put_intent(f->s, &r, &replay), IG_OK);
    assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
    for (i = 0; i < sizeof(sql) / sizeof(sql[0]); i++) {
        int rc = sqlite3_exec(db, sql[i], NULL, NULL, &msg);
        if (rc == SQLITE_OK)
            fail_msg("allowed: %s", sql[i]);
        assert_non_null(strstr(msg, "immutable"));
        sqlite3_free(msg);
        msg = NULL;
    }
    sqlite3_close(db);
    free(ev[0]);
    free(ev2[0]);
}

static void
test_idempotent_replay(void **state)
{
    struct fixture *f = *state;
    struct store_intent_rec r;
    char ids[4][40], ids2[4][40], *replay = NULL;
    char *ev[1], *ev2[1];
    int64_t now = ig_time_now();

    make_rec(&r, ids, 3, "key-1", now, ev);
    assert_int_equal(store_put_intent(f->s, &r, &replay), IG_OK);
    make_rec(&r, ids2, 4, "key-1", now + 1, ev2);
    assert_int_equal(store_put_intent(f->s, &r, &replay), IG_ERR_EXISTS);
    assert_non_null(replay);
    assert_string_equal(replay, ids[0]); /* the FIRST intent */
    free(replay);
    replay = NULL;
    assert_int_equal(
        store_find_idempotent(f->s, "agent-1", "key-1", now + 1, &replay),
        IG_OK);
    assert_string_equal(replay, ids[0]);
    free(replay);
    replay = NULL;
    /* Another principal, or after the first intent expired: no replay. */
    assert_int_equal(
        store_find_idempotent(f->s, "agent-2", "key-1", now + 1, &replay),
        IG_ERR_NOTFOUND);
    assert_int_equal(
        store_find_idempotent(f->s, "agent-1", "key-1", now + 60, &replay),
        IG_ERR_NOTFOUND);
    free(ev2[0]);
    make_rec(&r, ids2, 5, "key-1", now + 61, ev2);
    assert_int_equal(store_put_intent(f->s, &r, &replay), IG_OK);
    free(ev[0]);
    free(ev2[0]);
}

static void
test_redeem_once_across_reopen(void **state)
{
    struct fixture *f = *state;
    struct store_intent_rec r;
    struct store_redeem_rec rr;
    char ids[4][40], *replay = NULL;
    char *ev[1];
    json_t *rec = NULL;

    make_rec(&r, ids, 6, NULL, ig_time_now(), ev);
    assert_int_equal(store_put_intent(f->s, &r, &replay), IG_OK);
    memset(&rr, 0, sizeof(rr));
    rr.jti = "20000000-0000-4000-8000-999999999999";
    rr.intent_id = ids[0];
    rr.executor = "exec-1";
    assert_int_equal(store_redeem(f->s, &rr), IG_ERR_NOTFOUND);
    rr.jti = ids[2];
    assert_int_equal(store_redeem(f->s, &rr), IG_OK);
    assert_int_equal(store_redeem(f->s, &rr), IG_ERR_EXISTS);
    store_close(f->s);
    f->s = open_store(f->path);
    assert_int_equal(store_redeem(f->s, &rr), IG_ERR_EXISTS);
    assert_int_equal(store_get_intent(f->s, ids[0], &rec), IG_OK);
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(rec, "redemption"), "executor")),
                        "exec-1");
    json_decref(rec);
    free(ev[0]);
}

struct race {
    struct store *s;
    const struct store_redeem_rec *rr;
    enum ig_status st;
};

static void *
race_main(void *arg)
{
    struct race *x = arg;

    x->st = store_redeem(x->s, x->rr);
    return NULL;
}

static void
test_redeem_race(void **state)
{
    struct fixture *f = *state;
    struct store_intent_rec r;
    struct store_redeem_rec rr;
    struct race x[100];
    pthread_t t[100];
    char ids[4][40], *replay = NULL;
    char *ev[1];
    int i, ok = 0, dup = 0;

    make_rec(&r, ids, 7, NULL, ig_time_now(), ev);
    assert_int_equal(store_put_intent(f->s, &r, &replay), IG_OK);
    memset(&rr, 0, sizeof(rr));
    rr.jti = ids[2];
    rr.intent_id = ids[0];
    rr.executor = "exec-1";
    for (i = 0; i < 100; i++) {
        x[i].s = f->s;
        x[i].rr = &rr;
        assert_int_equal(pthread_create(&t[i], NULL, race_main, &x[i]), 0);
    }
    for (i = 0; i < 100; i++) {
        pthread_join(t[i], NULL);
        ok += x[i].st == IG_OK;
        dup += x[i].st == IG_ERR_EXISTS;
    }
    assert_int_equal(ok, 1);
    assert_int_equal(dup, 99);
    free(ev[0]);
}

static void
test_outcome_rules(void **state)
{
    struct fixture *f = *state;
    struct store_intent_rec r;
    struct store_redeem_rec rr;
    struct store_outcome_rec o;
    char ids[4][40], *replay = NULL;
    char *ev[1];
    json_t *rec = NULL;

    make_rec(&r, ids, 8, NULL, ig_time_now(), ev);
    assert_int_equal(store_put_intent(f->s, &r, &replay), IG_OK);
    memset(&o, 0, sizeof(o));
    o.intent_id = ids[0];
    o.executor = "exec-1";
    o.outcome = "COMPLETED";
    o.detail = "{\"status\":200}";
    assert_int_equal(store_put_outcome(f->s, &o), IG_ERR_NOTFOUND);
    memset(&rr, 0, sizeof(rr));
    rr.jti = ids[2];
    rr.intent_id = ids[0];
    rr.executor = "exec-1";
    assert_int_equal(store_redeem(f->s, &rr), IG_OK);
    o.executor = "exec-2"; /* not the redeemer */
    assert_int_equal(store_put_outcome(f->s, &o), IG_ERR_NOTFOUND);
    o.executor = "exec-1";
    o.outcome = "MAYBE"; /* refused by the schema's CHECK */
    assert_int_equal(store_put_outcome(f->s, &o), IG_ERR_IO);
    o.outcome = "COMPLETED";
    assert_int_equal(store_put_outcome(f->s, &o), IG_OK);
    assert_int_equal(store_put_outcome(f->s, &o), IG_ERR_EXISTS);
    /* With a duplicate flag: the same outcome again is a duplicate (and
       writes nothing); another one is still refused. */
    {
        int dup = -1;
        o.duplicate = &dup;
        assert_int_equal(store_put_outcome(f->s, &o), IG_OK);
        assert_int_equal(dup, 1);
        o.detail = "{\"status\":500}";
        assert_int_equal(store_put_outcome(f->s, &o), IG_ERR_EXISTS);
        o.detail = "{\"status\":200}";
        o.outcome = "UNKNOWN_AFTER_DISPATCH";
        assert_int_equal(store_put_outcome(f->s, &o), IG_ERR_EXISTS);
        o.outcome = "COMPLETED";
        o.duplicate = NULL;
    }
    assert_int_equal(store_get_intent(f->s, ids[0], &rec), IG_OK);
    assert_true(json_number_value(json_object_get(
                    json_object_get(json_object_get(rec, "outcome"), "detail"),
                    "status")) == 200);
    json_decref(rec);
    free(ev[0]);
}

static void
async_done(void *ctx, enum ig_status st)
{
    atomic_store((atomic_int *)ctx, (int)st);
}

static void
test_async_and_failed_job_isolated(void **state)
{
    struct fixture *f = *state;
    struct store_intent_rec r, dup;
    char ids[4][40], *replay = NULL, *replay2 = NULL;
    char *ev[1];
    atomic_int st1 = IG_ERR_NOMEM, st2 = IG_ERR_NOMEM;
    int64_t n0 = 0, n1 = 0;
    int i;

    assert_int_equal(store_audit_size(f->s, &n0), IG_OK);
    make_rec(&r, ids, 9, NULL, ig_time_now(), ev);
    dup = r; /* same intent id twice: the second insert fails alone */
    assert_int_equal(
        store_put_intent_async(f->s, &r, &replay, async_done, &st1), IG_OK);
    assert_int_equal(
        store_put_intent_async(f->s, &dup, &replay2, async_done, &st2), IG_OK);
    for (i = 0; i < 500 && (st1 == IG_ERR_NOMEM || st2 == IG_ERR_NOMEM); i++) {
        struct timespec ts = {0, 10000000L};
        (void)nanosleep(&ts, NULL);
    }
    assert_int_equal(st1, IG_OK);
    assert_int_equal(st2, IG_ERR_IO);
    assert_int_equal(store_audit_size(f->s, &n1), IG_OK);
    assert_int_equal(n1, n0 + 1); /* the failed job's event rolled back */
    free(ev[0]);
}

static void
test_counters(void **state)
{
    struct fixture *f = *state;
    int64_t now = ig_time_now();

    assert_int_equal(store_count(f->s, "k", 60, now - 100), 1);
    assert_int_equal(store_count(f->s, "k", 60, now - 10), 1);
    assert_int_equal(store_count(f->s, "k", 60, now), 2);
    assert_int_equal(store_count(f->s, "k", 60, now), 3);
    assert_int_equal(store_count(f->s, "k", 1, now), 3); /* same second */
    assert_int_equal(store_count(f->s, "other", 60, now), 1);
    assert_int_equal(store_count(f->s, "k", 0, now), -1);
    assert_int_equal(store_count(f->s, "k", 86401, now), -1);
    assert_int_equal(store_count(f->s, "", 60, now), -1);
    /* Persisted: a reopened store still counts them. */
    store_close(f->s);
    f->s = open_store(f->path);
    assert_int_equal(store_count(f->s, "k", 3600, now), 6);
}

/* One integer the query returns, on a connection of the test's own. */
static int64_t
query_int(const char *path, const char *sql)
{
    sqlite3 *db;
    sqlite3_stmt *st;
    int64_t v = -1;

    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    if (sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

/* Hits are stored as one row per key and second, however many. */
static void
test_counters_stored_per_second(void **state)
{
    struct fixture *f = *state;
    int64_t now = ig_time_now();
    int i;

    for (i = 0; i < 500; i++)
        assert_int_equal(store_count(f->s, "busy", 60, now), i + 1);
    assert_int_equal(store_count(f->s, "busy", 60, now + 1), 501);
    assert_int_equal(store_count(f->s, "calm", 60, now), 1);
    store_close(f->s);
    f->s = NULL;
    assert_int_equal(query_int(f->path, "SELECT count(*) FROM "
                                        "counter_counts"),
                     3);
    assert_int_equal(query_int(f->path, "SELECT sum(hits) FROM "
                                        "counter_counts WHERE key = 'busy'"),
                     501);
    f->s = open_store(f->path);
    assert_int_equal(store_count(f->s, "busy", 60, now + 1), 502);
    assert_int_equal(store_count(f->s, "busy", 1, now + 1), 3);
}

/* A database from before migration 4 kept one counter_hits row per hit:
   its hits count after the upgrade. */
static void
test_counter_hits_migrate(void **state)
{
    struct fixture *f = *state;
    int64_t now = ig_time_now();
    char sql[512];
    sqlite3 *db;

    store_close(f->s);
    f->s = NULL;
    (void)snprintf(sql, sizeof(sql),
                   "DROP TABLE counter_counts; CREATE TABLE counter_hits ("
                   "key TEXT NOT NULL, at INTEGER NOT NULL); CREATE INDEX "
                   "counter_hits_at ON counter_hits(at); INSERT INTO "
                   "counter_hits VALUES ('q', %lld), ('q', %lld), ('q', "
                   "%lld), ('r', %lld); PRAGMA user_version = 3",
                   (long long)now, (long long)now, (long long)now - 30,
                   (long long)now);
    assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    f->s = open_store(f->path);
    assert_int_equal(store_count(f->s, "q", 60, now), 4);
    assert_int_equal(store_count(f->s, "q", 10, now), 4);
    assert_int_equal(store_count(f->s, "r", 60, now), 2);
    store_close(f->s);
    f->s = NULL;
    assert_int_equal(query_int(f->path, "SELECT count(*) FROM sqlite_schema "
                                        "WHERE name LIKE 'counter_hits%'"),
                     0);
    f->s = open_store(f->path);
}

static void
test_newer_schema_refused(void **state)
{
    struct fixture *f = *state;
    struct store_opts o;
    struct store *s = NULL;
    struct ig_err err;
    sqlite3 *db;

    store_close(f->s);
    f->s = NULL;
    assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
    assert_int_equal(
        sqlite3_exec(db, "PRAGMA user_version = 999", NULL, NULL, NULL),
        SQLITE_OK);
    sqlite3_close(db);
    memset(&o, 0, sizeof(o));
    o.path = f->path;
    assert_int_equal(store_open(&o, &s, &err), IG_ERR_IO);
    assert_non_null(strstr(err.msg, "newer"));
    assert_null(s);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_put_and_get, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rows_are_immutable, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_idempotent_replay, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_redeem_once_across_reopen, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_redeem_race, setup, teardown),
        cmocka_unit_test_setup_teardown(test_outcome_rules, setup, teardown),
        cmocka_unit_test_setup_teardown(test_async_and_failed_job_isolated,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_counters, setup, teardown),
        cmocka_unit_test_setup_teardown(test_counters_stored_per_second, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_counter_hits_migrate, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_newer_schema_refused, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
