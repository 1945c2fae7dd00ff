/*
 * test_store_pg_race.c - what only a shared PostgreSQL database has:
 * replicas (two store handles on one database) racing - 100 redemptions
 * of one grant, one idempotency key put by many at once, concurrent votes,
 * a vote waiting on a resolution, quota hits in one second - and the JSON
 * of the reads compared with the SQLite store's for the same records.
 * Needs IG_TEST_PG_URL (fails without it).
 */
#include "testutil.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ig_time.h"
#include "store.h"
#include "test_store_pg_util.h"

#define NTHREADS 100

struct fixture {
    struct pgt_db db;
    struct store *a, *b; /* two replicas */
};

static const char *const ev1[] = {"{\"type\":\"intent.received\"}"};

static int
setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));

    assert_non_null(f);
    pgt_db_create(&f->db, "ig_core_race");
    f->a = pgt_store_open(&f->db);
    f->b = pgt_store_open(&f->db);
    *state = f;
    return 0;
}

static int
teardown(void **state)
{
    struct fixture *f = *state;

    store_close(f->a);
    store_close(f->b);
    pgt_db_drop(&f->db);
    free(f);
    return 0;
}

static void
make_rec(struct store_intent_rec *r, char ids[4][40], int n, const char *idem,
         int64_t now)
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
    r->binding = "{\"action\":\"payments.refund\",\"amount\":12}";
    r->idempotency_key = idem;
    r->created_at = now;
    r->expires_at = now + 60;
    r->decision_id = ids[1];
    r->decision = "ALLOW";
    r->reasons = "[\"rule:small-refund\"]";
    r->message = "ok";
    r->policy_revision = "sha256:11";
    r->grant_jti = ids[2];
    r->grant_aud = "exec-1";
    r->grant_token = ids[3];
    r->grant_expires_at = now + 30;
    r->events = ev1;
    r->nevents = 1;
}

static void
make_escalated(struct store_intent_rec *r, char ids[4][40], char appr[40],
               int n, int64_t now)
{
    make_rec(r, ids, n, NULL, now);
    (void)snprintf(appr, 40, "30000000-0000-4000-8000-%012d", n);
    r->decision = "ESCALATE";
    r->grant_jti = NULL;
    r->approval_id = appr;
    r->approval_requirements = "{\"groups\":[\"finance\"],\"quorum\":2}";
    r->approval_expires_at = now + 900;
}

static void
make_vote(struct store_vote_rec *v, const char *intent_id, const char *approver,
          int64_t at)
{
    memset(v, 0, sizeof(*v));
    v->intent_id = intent_id;
    v->approver = approver;
    v->vote = "APPROVE";
    v->comment = "looks fine";
    v->channel = "ui";
    v->groups = "[\"finance\",\"ops\"]";
    v->intent_hash = "sha256:00";
    v->at = at;
    v->events = ev1;
    v->nevents = 1;
}

/* ---- threads started together ---- */

struct racer {
    pthread_barrier_t *start;
    struct store *s;
    const void *rec;
    char *replay;
    enum ig_status st;
    int64_t n;
};

static void *
redeem_main(void *arg)
{
    struct racer *x = arg;

    (void)pthread_barrier_wait(x->start);
    x->st = store_redeem(x->s, x->rec);
    return NULL;
}

static void *
put_main(void *arg)
{
    struct racer *x = arg;

    (void)pthread_barrier_wait(x->start);
    x->st = store_put_intent(x->s, x->rec, &x->replay);
    return NULL;
}

static void *
vote_main(void *arg)
{
    struct racer *x = arg;

    (void)pthread_barrier_wait(x->start);
    x->st = store_put_vote(x->s, x->rec);
    return NULL;
}

static void *
count_main(void *arg)
{
    struct racer *x = arg;

    (void)pthread_barrier_wait(x->start);
    x->n = store_count(x->s, "burst", 60, 1000);
    return NULL;
}

/* Run n racers of fn, alternating between the two replicas, rec[i] for
   the i-th (rec_size apart). */
static void
race(struct fixture *f, struct racer *x, int n, void *(*fn)(void *),
     const void *rec, size_t rec_size)
{
    pthread_barrier_t start;
    pthread_t t[NTHREADS];
    int i;

    assert_true(n <= NTHREADS);
    assert_int_equal(pthread_barrier_init(&start, NULL, (unsigned)n), 0);
    for (i = 0; i < n; i++) {
        memset(&x[i], 0, sizeof(x[i]));
        x[i].start = &start;
        x[i].s = i % 2 == 0 ? f->a : f->b;
        x[i].rec =
            rec != NULL ? (const char *)rec + (size_t)i * rec_size : NULL;
        assert_int_equal(pthread_create(&t[i], NULL, fn, &x[i]), 0);
    }
    for (i = 0; i < n; i++)
        assert_int_equal(pthread_join(t[i], NULL), 0);
    (void)pthread_barrier_destroy(&start);
}

static void
test_redeem_race(void **state)
{
    struct fixture *f = *state;
    struct store_intent_rec r;
    struct store_redeem_rec rr;
    struct racer x[NTHREADS];
    char ids[4][40], *replay = NULL;
    int i, ok = 0, dup = 0;

    make_rec(&r, ids, 1, NULL, ig_time_now());
    assert_int_equal(store_put_intent(f->a, &r, &replay), IG_OK);
    memset(&rr, 0, sizeof(rr));
    rr.jti = ids[2];
    rr.intent_id = ids[0];
    rr.executor = "exec-1";
    rr.events = ev1;
    rr.nevents = 1;
    race(f, x, NTHREADS, redeem_main, &rr, 0);
    for (i = 0; i < NTHREADS; i++) {
        ok += x[i].st == IG_OK;
        dup += x[i].st == IG_ERR_EXISTS;
    }
    assert_int_equal(ok, 1);
    assert_int_equal(dup, NTHREADS - 1);
    assert_int_equal(pgt_int(&f->db, "SELECT count(*) FROM redemptions"), 1);
    assert_int_equal(pgt_int(&f->db, "SELECT count(*) FROM audit_queue") +
                         pgt_int(&f->db, "SELECT count(*) FROM audit_events"),
                     2);
}

static void
test_idempotency_race(void **state)
{
    enum { N = 20 };
    struct fixture *f = *state;
    struct store_intent_rec r[N];
    struct racer x[N];
    char ids[N][4][40];
    int64_t now = ig_time_now();
    int i, ok = -1, dup = 0;

    for (i = 0; i < N; i++)
        make_rec(&r[i], ids[i], 100 + i, "same-key", now);
    race(f, x, N, put_main, r, sizeof(r[0]));
    for (i = 0; i < N; i++)
        if (x[i].st == IG_OK) {
            assert_int_equal(ok, -1); /* only one */
            ok = i;
        }
    assert_true(ok >= 0);
    for (i = 0; i < N; i++) {
        if (i == ok) {
            assert_null(x[i].replay);
            continue;
        }
        assert_int_equal(x[i].st, IG_ERR_EXISTS);
        assert_non_null(x[i].replay);
        assert_string_equal(x[i].replay, ids[ok][0]);
        free(x[i].replay);
        dup++;
    }
    assert_int_equal(dup, N - 1);
    assert_int_equal(pgt_int(&f->db, "SELECT count(*) FROM intents"), 1);
}

static void
test_concurrent_votes(void **state)
{
    enum { APPROVERS = 25 };
    struct fixture *f = *state;
    struct store_intent_rec r;
    struct store_vote_rec v[2 * APPROVERS];
    struct racer x[2 * APPROVERS];
    char ids[4][40], appr[40], names[APPROVERS][16], *replay = NULL;
    json_t *rec = NULL;
    int64_t now = ig_time_now();
    int i, ok = 0, dup = 0;

    make_escalated(&r, ids, appr, 2, now);
    assert_int_equal(store_put_intent(f->a, &r, &replay), IG_OK);
    /* Every approver twice, the two on different replicas. */
    for (i = 0; i < APPROVERS; i++) {
        (void)snprintf(names[i], sizeof(names[i]), "approver-%d", i);
        make_vote(&v[2 * i], ids[0], names[i], now + i);
        make_vote(&v[2 * i + 1], ids[0], names[i], now + i);
    }
    race(f, x, 2 * APPROVERS, vote_main, v, sizeof(v[0]));
    for (i = 0; i < 2 * APPROVERS; i++) {
        ok += x[i].st == IG_OK;
        dup += x[i].st == IG_ERR_EXISTS;
    }
    assert_int_equal(ok, APPROVERS);
    assert_int_equal(dup, APPROVERS);
    assert_int_equal(store_get_intent(f->b, ids[0], &rec), IG_OK);
    assert_int_equal(json_array_size(json_object_get(
                         json_object_get(rec, "approval"), "votes")),
                     APPROVERS);
    json_decref(rec);
}

/* A vote whose transaction starts while a resolution of the same request
   is being written (its lock held here, on a connection of the test's)
   must see the resolution once it is committed: IG_ERR_EXISTS. */
static void
test_vote_waits_for_resolution(void **state)
{
    struct fixture *f = *state;
    struct store_intent_rec r;
    struct store_vote_rec v;
    struct racer x[1];
    char ids[4][40], appr[40], sql[512], *replay = NULL;
    pthread_barrier_t start;
    pthread_t t;
    PGconn *c;
    PGresult *res;
    int64_t seq, now = ig_time_now();
    int i;
    static const char waiting[] =
        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND "
        "NOT granted AND classid = 1768357890 AND objsubid = 2 AND "
        "database = (SELECT oid FROM pg_database WHERE datname = "
        "current_database())";

    make_escalated(&r, ids, appr, 3, now);
    assert_int_equal(store_put_intent(f->a, &r, &replay), IG_OK);
    seq = pgt_int(&f->db, "SELECT seq FROM intents");
    c = pgt_connect(&f->db);
    /* The lock store_pg_vote.c takes on the request (its class). */
    (void)snprintf(sql, sizeof(sql),
                   "BEGIN; SELECT pg_advisory_xact_lock(1768357890, "
                   "hashint8(%lld)); INSERT INTO resolutions VALUES (%lld, "
                   "'DENIED', %lld)",
                   (long long)seq, (long long)seq, (long long)now);
    res = PQexec(c, sql);
    assert_int_equal(PQresultStatus(res), PGRES_COMMAND_OK);
    PQclear(res);
    make_vote(&v, ids[0], "late", now + 1);
    assert_int_equal(pthread_barrier_init(&start, NULL, 1), 0);
    memset(x, 0, sizeof(x));
    x[0].start = &start;
    x[0].s = f->b;
    x[0].rec = &v;
    assert_int_equal(pthread_create(&t, NULL, vote_main, &x[0]), 0);
    /* Until the vote waits for the lock. */
    for (i = 0; i < 1000 && pgt_int(&f->db, waiting) == 0; i++) {
        struct timespec ts = {0, 10000000L};
        (void)nanosleep(&ts, NULL);
    }
    assert_true(i < 1000);
    res = PQexec(c, "COMMIT");
    assert_int_equal(PQresultStatus(res), PGRES_COMMAND_OK);
    PQclear(res);
    PQfinish(c);
    assert_int_equal(pthread_join(t, NULL), 0);
    (void)pthread_barrier_destroy(&start);
    assert_int_equal(x[0].st, IG_ERR_EXISTS);
    assert_int_equal(pgt_int(&f->db, "SELECT count(*) FROM votes"), 0);
}

/* Hits in one second from both replicas: each call counts every hit
   committed before it and its own, so the answers are 1..n. */
static void
test_count_race(void **state)
{
    enum { N = 40 };
    struct fixture *f = *state;
    struct racer x[N];
    int seen[N + 1];
    int i;

    race(f, x, N, count_main, NULL, 0);
    memset(seen, 0, sizeof(seen));
    for (i = 0; i < N; i++) {
        assert_true(x[i].n >= 1 && x[i].n <= N);
        seen[x[i].n]++;
    }
    for (i = 1; i <= N; i++)
        assert_int_equal(seen[i], 1);
    assert_int_equal(store_count(f->a, "burst", 60, 1000), N + 1);
}

/* ---- the two backends' JSON ---- */

/* The same records written to s. */
static void
write_all(struct store *s, int64_t now)
{
    struct store_intent_rec r;
    struct store_redeem_rec rr;
    struct store_outcome_rec o;
    struct store_vote_rec v;
    char ids[4][40], appr[40], *replay = NULL;

    make_rec(&r, ids, 10, "k", now); /* ALLOW, redeemed, outcome */
    assert_int_equal(store_put_intent(s, &r, &replay), IG_OK);
    memset(&rr, 0, sizeof(rr));
    rr.jti = ids[2];
    rr.intent_id = ids[0];
    rr.executor = "exec-1";
    rr.redeemed_at = now + 1;
    assert_int_equal(store_redeem(s, &rr), IG_OK);
    memset(&o, 0, sizeof(o));
    o.intent_id = ids[0];
    o.executor = "exec-1";
    o.outcome = "COMPLETED";
    o.detail = "{\"status\":200,\"body\":\"\\u00e9\\\"x\"}";
    o.reported_at = now + 2;
    assert_int_equal(store_put_outcome(s, &o), IG_OK);
    make_rec(&r, ids, 11, NULL, now); /* BLOCK */
    r.decision = "BLOCK";
    r.grant_jti = NULL;
    r.message = "no \"quotes\" \\ here";
    assert_int_equal(store_put_intent(s, &r, &replay), IG_OK);
    make_escalated(&r, ids, appr, 12, now); /* approved by two votes */
    assert_int_equal(store_put_intent(s, &r, &replay), IG_OK);
    make_vote(&v, ids[0], "alice", now + 3);
    assert_int_equal(store_put_vote(s, &v), IG_OK);
    make_vote(&v, ids[0], "bob", now + 4);
    v.comment = NULL;
    v.result = "APPROVED";
    v.decision_id = "10000000-0000-4000-8000-100000000012";
    v.decision = "ALLOW";
    v.reasons = "[\"approved\"]";
    v.message = "approved";
    v.policy_revision = "sha256:11";
    v.grant_jti = "20000000-0000-4000-8000-100000000012";
    v.grant_aud = "exec-1";
    v.grant_token = "tok";
    v.grant_expires_at = now + 60;
    assert_int_equal(store_put_vote(s, &v), IG_OK);
    make_escalated(&r, ids, appr, 13, now); /* still open */
    assert_int_equal(store_put_intent(s, &r, &replay), IG_OK);
}

static void
same_json(json_t *sq, json_t *pg, const char *what)
{
    if (!json_equal(sq, pg)) {
        char *a = json_dumps(sq, JSON_SORT_KEYS | JSON_ENCODE_ANY);
        char *b = json_dumps(pg, JSON_SORT_KEYS | JSON_ENCODE_ANY);

        fail_msg("%s differs:\nSQLite     %s\nPostgreSQL %s", what, a, b);
    }
    json_decref(sq);
    json_decref(pg);
}

static void
test_same_json_as_sqlite(void **state)
{
    static const int ns[] = {10, 11, 12, 13};
    struct fixture *f = *state;
    struct store_opts o;
    struct store *sq = NULL;
    struct ig_err err;
    char dir[64], path[128], cmd[160], id[40], *x = NULL, *y = NULL;
    json_t *a = NULL, *b = NULL;
    int64_t now = ig_time_now();
    size_t i;

    (void)snprintf(dir, sizeof(dir), "/tmp/ig-store-pg-XXXXXX");
    assert_non_null(mkdtemp(dir));
    (void)snprintf(path, sizeof(path), "%s/t.db", dir);
    memset(&o, 0, sizeof(o));
    o.path = path;
    o.synchronous_full = 1;
    if (store_open(&o, &sq, &err) != IG_OK)
        fail_msg("open: %s", err.msg);
    write_all(sq, now);
    write_all(f->a, now);
    for (i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
        (void)snprintf(id, sizeof(id), "00000000-0000-4000-8000-%012d", ns[i]);
        assert_int_equal(store_get_intent(sq, id, &a), IG_OK);
        assert_int_equal(store_get_intent(f->b, id, &b), IG_OK);
        same_json(a, b, "store_get_intent");
        assert_int_equal(store_get_grant(sq, id, &a), IG_OK);
        assert_int_equal(store_get_grant(f->b, id, &b), IG_OK);
        same_json(a, b, "store_get_grant");
    }
    assert_int_equal(store_open_approvals(sq, 0, &a), IG_OK);
    assert_int_equal(store_open_approvals(f->b, 0, &b), IG_OK);
    assert_int_equal(json_array_size(b), 1);
    same_json(a, b, "store_open_approvals");
    assert_int_equal(store_find_idempotent(sq, "agent-1", "k", now, &x), IG_OK);
    assert_int_equal(store_find_idempotent(f->b, "agent-1", "k", now, &y),
                     IG_OK);
    assert_string_equal(x, y);
    free(x);
    free(y);
    store_close(sq);
    (void)snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_redeem_race, setup, teardown),
        cmocka_unit_test_setup_teardown(test_idempotency_race, setup, teardown),
        cmocka_unit_test_setup_teardown(test_concurrent_votes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_vote_waits_for_resolution, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_count_race, setup, teardown),
        cmocka_unit_test_setup_teardown(test_same_json_as_sqlite, setup,
                                        teardown),
    };

    if (pgt_base_url() == NULL) {
        (void)fprintf(stderr, "IG_TEST_PG_URL is not set: these tests need a "
                              "PostgreSQL cluster (scripts/pg-cluster.sh)\n");
        return 1;
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
