/*
 * test_store_pg_conn.c - the PostgreSQL store's connections as the
 * operations see them: connections the server ended while idle in the
 * pool cost no call, a connection ended under a call fails that call
 * closed (nothing written) and the next one reconnects; every committed
 * write NOTIFYs its intent and wakes the replicas; async writes queued at
 * close are committed. Needs IG_TEST_PG_URL (fails without it).
 */
#include "testutil.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ig_time.h"
#include "store.h"
#include "test_store_pg_util.h"

struct fixture {
    struct pgt_db db;
    struct store *s;
};

static int
setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));

    assert_non_null(f);
    pgt_db_create(&f->db, "ig_core_conn");
    f->s = pgt_store_open(&f->db);
    *state = f;
    return 0;
}

static int
teardown(void **state)
{
    struct fixture *f = *state;

    store_close(f->s);
    pgt_db_drop(&f->db);
    free(f);
    return 0;
}

static void
async_done(void *ctx, enum ig_status st)
{
    atomic_store((atomic_int *)ctx, (int)st);
}

/* Connections the server ended while they sat in the pool (a restart, a
   failover) are replaced before use: no call fails for them. */
static void
test_idle_connections_lost(void **state)
{
    struct fixture *f = *state;
    struct store_intent_rec r;
    struct store_redeem_rec rr;
    char ids[4][40], ids2[4][40], *replay = NULL;
    json_t *rec = NULL;

    pgt_make_rec(&r, ids, 13, NULL, ig_time_now());
    assert_int_equal(store_put_intent(f->s, &r, &replay), IG_OK);
    assert_true(pgt_kill_sessions(&f->db) >= 1);
    memset(&rr, 0, sizeof(rr));
    rr.jti = ids[2];
    rr.intent_id = ids[0];
    rr.executor = "exec-1";
    assert_int_equal(store_redeem(f->s, &rr), IG_OK);
    assert_int_equal(store_redeem(f->s, &rr), IG_ERR_EXISTS);
    assert_true(pgt_kill_sessions(&f->db) >= 1);
    assert_int_equal(store_get_intent(f->s, ids[0], &rec), IG_OK);
    json_decref(rec);
    assert_true(pgt_kill_sessions(&f->db) >= 1);
    assert_int_equal(store_count(f->s, "k", 60, 100), 1);
    pgt_make_rec(&r, ids2, 14, NULL, ig_time_now());
    assert_true(pgt_kill_sessions(&f->db) >= 1);
    assert_int_equal(store_put_intent(f->s, &r, &replay), IG_OK);
}

/* A store call on its own thread. */
struct call {
    struct store *s;
    const struct store_intent_rec *intent;
    const struct store_vote_rec *vote;
    char *replay;
    enum ig_status st;
};

static void *
call_main(void *arg)
{
    struct call *x = arg;

    x->st = x->intent != NULL ? store_put_intent(x->s, x->intent, &x->replay)
                              : store_put_vote(x->s, x->vote);
    return NULL;
}

/* Run x's call while the test holds the advisory lock lock_sql takes (a
   transaction on a connection of its own) and, once the call waits for
   it, end the call's connection: the call fails closed. */
static void
kill_waiting_call(const struct pgt_db *db, const char *lock_sql,
                  const char *lock_class, struct call *x)
{
    char sql[512];
    pthread_t t;
    PGconn *c = pgt_connect(db);
    PGresult *res;
    int i;

    res = PQexec(c, "BEGIN");
    PQclear(res);
    res = PQexec(c, lock_sql);
    assert_int_equal(PQresultStatus(res), PGRES_TUPLES_OK);
    PQclear(res);
    assert_int_equal(pthread_create(&t, NULL, call_main, x), 0);
    (void)snprintf(sql, sizeof(sql),
                   "SELECT count(pg_terminate_backend(pid, 5000)) FROM "
                   "pg_locks WHERE locktype = 'advisory' AND NOT granted AND "
                   "classid = %s AND objsubid = 2 AND database = (SELECT oid "
                   "FROM pg_database WHERE datname = current_database())",
                   lock_class);
    for (i = 0; i < 1000 && pgt_int(db, sql) == 0; i++) {
        struct timespec ts = {0, 10000000L};
        (void)nanosleep(&ts, NULL);
    }
    assert_true(i < 1000);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(x->st, IG_ERR_IO);
    res = PQexec(c, "ROLLBACK");
    PQclear(res);
    PQfinish(c);
}

/* A connection killed under a call (a failover mid-request): that call
   is IG_ERR_IO, nothing written; the next one reconnects. */
static void
test_connection_lost_mid_call(void **state)
{
    struct fixture *f = *state;
    struct store_intent_rec r;
    struct store_vote_rec v;
    struct call x;
    char ids[4][40], appr[40], sql[256], *replay = NULL;
    int64_t now = ig_time_now();

    /* An intent with an idempotency key waits for the key's lock (the
       class store_pg_write.c uses, the same hash). */
    pgt_make_rec(&r, ids, 23, "k-lost", now);
    memset(&x, 0, sizeof(x));
    x.s = f->s;
    x.intent = &r;
    kill_waiting_call(&f->db,
                      "SELECT pg_advisory_xact_lock(1768357889, hashtext("
                      "'7:agent-1' || 'k-lost'))",
                      "1768357889", &x);
    assert_null(x.replay);
    assert_int_equal(pgt_int(&f->db, "SELECT count(*) FROM intents"), 0);
    assert_int_equal(store_put_intent(f->s, &r, &replay), IG_OK);
    /* A vote waits for its request's lock (store_pg_vote.c). */
    pgt_make_escalated(&r, ids, appr, 24, now);
    assert_int_equal(store_put_intent(f->s, &r, &replay), IG_OK);
    memset(&v, 0, sizeof(v));
    v.intent_id = ids[0];
    v.approver = "alice";
    v.vote = "APPROVE";
    v.channel = "ui";
    v.groups = "[]";
    v.intent_hash = "sha256:00";
    memset(&x, 0, sizeof(x));
    x.s = f->s;
    x.vote = &v;
    (void)snprintf(sql, sizeof(sql),
                   "SELECT pg_advisory_xact_lock(1768357890, hashint8(seq)) "
                   "FROM intents WHERE intent_id = '%s'",
                   ids[0]);
    kill_waiting_call(&f->db, sql, "1768357890", &x);
    assert_int_equal(pgt_int(&f->db, "SELECT count(*) FROM votes"), 0);
    assert_int_equal(store_put_vote(f->s, &v), IG_OK);
    assert_int_equal(store_put_vote(f->s, &v), IG_ERR_EXISTS);
}

/* The intents on_commit was called for, each once. */
struct woken {
    pthread_mutex_t mu;
    char ids[16][40];
    int n;
};

static void
on_commit(void *ctx, const char *intent_id)
{
    struct woken *w = ctx;
    int i;

    if (intent_id == NULL)
        return; /* the listener reconnected: "any may have changed" */
    (void)pthread_mutex_lock(&w->mu);
    for (i = 0; i < w->n && strcmp(w->ids[i], intent_id) != 0; i++)
        ;
    if (i == w->n && w->n < 16) /* each id once */
        (void)snprintf(w->ids[w->n++], 40, "%s", intent_id);
    (void)pthread_mutex_unlock(&w->mu);
}

/* 1 when on_commit was called for id. */
static int
was_woken(struct woken *w, const char *id)
{
    int i, found = 0;

    (void)pthread_mutex_lock(&w->mu);
    for (i = 0; i < w->n; i++)
        found |= strcmp(w->ids[i], id) == 0;
    (void)pthread_mutex_unlock(&w->mu);
    return found;
}

/* Wait (at most 10 s) until on_commit was called for id. */
static int
await_woken(struct woken *w, const char *id)
{
    int i;

    for (i = 0; i < 1000 && !was_woken(w, id); i++) {
        struct timespec ts = {0, 10000000L};
        (void)nanosleep(&ts, NULL);
    }
    return was_woken(w, id);
}

/* Wait (at most 10 s) until a store's listener hears NOTIFYs: store_open
   returns before it has LISTENed. */
static void
await_listening(const struct pgt_db *db, struct woken *w, const char *probe)
{
    char sql[128];
    int i;

    (void)snprintf(sql, sizeof(sql), "NOTIFY ig_intent, '%s'", probe);
    for (i = 0; i < 1000 && !was_woken(w, probe); i++) {
        struct timespec ts = {0, 10000000L};

        assert_true(pgt_exec(db, sql, NULL, 0));
        (void)nanosleep(&ts, NULL);
    }
    assert_true(was_woken(w, probe));
}

/* A write wakes its own replica's waiters before it returns, and another
   replica's through the NOTIFY it commits. */
static void
test_commit_wakes_replicas(void **state)
{
    struct fixture *f = *state;
    struct store_opts o;
    struct store *b;
    struct store_intent_rec r;
    struct woken wa, wb;
    char ids[4][40], ids2[4][40], *replay = NULL;

    memset(&wa, 0, sizeof(wa));
    memset(&wb, 0, sizeof(wb));
    (void)pthread_mutex_init(&wa.mu, NULL);
    (void)pthread_mutex_init(&wb.mu, NULL);
    store_close(f->s);
    memset(&o, 0, sizeof(o));
    o.on_commit = on_commit;
    o.on_commit_ctx = &wa;
    f->s = pgt_store_open_opts(&f->db, &o);
    o.on_commit_ctx = &wb;
    b = pgt_store_open_opts(&f->db, &o);
    await_listening(&f->db, &wa, "probe-a");
    await_listening(&f->db, &wb, "probe-b");
    pgt_make_rec(&r, ids, 15, NULL, ig_time_now());
    assert_int_equal(store_put_intent(f->s, &r, &replay), IG_OK);
    assert_true(was_woken(&wa, ids[0])); /* at once */
    assert_true(await_woken(&wb, ids[0]));
    pgt_make_rec(&r, ids2, 16, NULL, ig_time_now());
    assert_int_equal(store_put_intent(b, &r, &replay), IG_OK);
    assert_true(was_woken(&wb, ids2[0]));
    assert_true(await_woken(&wa, ids2[0]));
    store_close(b);
    store_close(f->s);
    f->s = NULL;
    (void)pthread_mutex_destroy(&wa.mu);
    (void)pthread_mutex_destroy(&wb.mu);
}

/* Count the NOTIFYs (channel ig_intent) with payload a, and b, received
   on c until one with payload last arrives (at most 10 s). */
static void
notified(PGconn *c, const char *last, const char *a, int *na, const char *b,
         int *nb)
{
    int i, done = 0;

    *na = *nb = 0;
    for (i = 0; i < 1000 && !done; i++) {
        PGnotify *m;
        struct timespec ts = {0, 10000000L};

        assert_int_equal(PQconsumeInput(c), 1);
        while ((m = PQnotifies(c)) != NULL) {
            if (strcmp(m->relname, "ig_intent") == 0) {
                *na += strcmp(m->extra, a) == 0;
                *nb += strcmp(m->extra, b) == 0;
                done |= strcmp(m->extra, last) == 0;
            }
            PQfreemem(m);
        }
        if (!done)
            (void)nanosleep(&ts, NULL);
    }
    assert_true(done);
}

/* Every committed write of an intent NOTIFYs its id once; a refused one
   (rolled back) does not. */
static void
test_writes_notify(void **state)
{
    struct fixture *f = *state;
    struct store_intent_rec r;
    struct store_redeem_rec rr;
    struct store_outcome_rec o;
    struct store_vote_rec v;
    char ids[4][40], ids2[4][40], ids3[4][40], appr[40], *replay = NULL;
    int na, nb;
    PGconn *c = pgt_connect(&f->db);
    PGresult *res = PQexec(c, "LISTEN ig_intent");

    assert_int_equal(PQresultStatus(res), PGRES_COMMAND_OK);
    PQclear(res);
    pgt_make_rec(&r, ids, 17, NULL, ig_time_now());
    assert_int_equal(store_put_intent(f->s, &r, &replay), IG_OK);
    memset(&rr, 0, sizeof(rr));
    rr.jti = ids[2];
    rr.intent_id = ids[0];
    rr.executor = "exec-1";
    assert_int_equal(store_redeem(f->s, &rr), IG_OK);
    assert_int_equal(store_redeem(f->s, &rr), IG_ERR_EXISTS);
    memset(&o, 0, sizeof(o));
    o.intent_id = ids[0];
    o.executor = "exec-1";
    o.outcome = "COMPLETED";
    o.detail = "{}";
    assert_int_equal(store_put_outcome(f->s, &o), IG_OK);
    assert_int_equal(store_put_outcome(f->s, &o), IG_ERR_EXISTS);
    pgt_make_escalated(&r, ids2, appr, 18, ig_time_now());
    assert_int_equal(store_put_intent(f->s, &r, &replay), IG_OK);
    memset(&v, 0, sizeof(v));
    v.intent_id = ids2[0];
    v.approver = "alice";
    v.vote = "APPROVE";
    v.channel = "ui";
    v.groups = "[]";
    v.intent_hash = "sha256:00";
    assert_int_equal(store_put_vote(f->s, &v), IG_OK);
    assert_int_equal(store_put_vote(f->s, &v), IG_ERR_EXISTS);
    /* The last one: every earlier NOTIFY is delivered before it. */
    pgt_make_rec(&r, ids3, 19, NULL, ig_time_now());
    assert_int_equal(store_put_intent(f->s, &r, &replay), IG_OK);
    notified(c, ids3[0], ids[0], &na, ids2[0], &nb);
    assert_int_equal(na, 3); /* put, redeem, outcome */
    assert_int_equal(nb, 2); /* put, vote */
    PQfinish(c);
}

/* Writes queued when the store closes are committed first, each with
   its callback. */
static void
test_async_drained_at_close(void **state)
{
    enum { N = 40 };
    struct fixture *f = *state;
    struct store_intent_rec r[N];
    char ids[N][4][40], *replay[N];
    atomic_int st[N];
    int i;

    for (i = 0; i < N; i++) {
        pgt_make_rec(&r[i], ids[i], 200 + i, NULL, ig_time_now());
        atomic_init(&st[i], IG_ERR_NOMEM);
        assert_int_equal(
            store_put_intent_async(f->s, &r[i], &replay[i], async_done, &st[i]),
            IG_OK);
    }
    store_close(f->s);
    f->s = NULL;
    for (i = 0; i < N; i++)
        assert_int_equal(atomic_load(&st[i]), IG_OK);
    assert_int_equal(pgt_int(&f->db, "SELECT count(*) FROM intents"), N);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_idle_connections_lost, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_connection_lost_mid_call, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_commit_wakes_replicas, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_writes_notify, setup, teardown),
        cmocka_unit_test_setup_teardown(test_async_drained_at_close, setup,
                                        teardown),
    };

    if (pgt_base_url() == NULL) {
        (void)fprintf(stderr, "IG_TEST_PG_URL is not set: these tests need a "
                              "PostgreSQL cluster (scripts/pg-cluster.sh)\n");
        return 1;
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
