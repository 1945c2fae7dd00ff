/*
 * test_store_pg.c - the PostgreSQL store's writes and reads, each success
 * and refusal as test_store.c checks them on SQLite: records, immutability,
 * idempotent replay, exactly-once redemption (also across a reopen),
 * outcomes, votes, audit events, quota counters. Lost connections and
 * wake-ups are in test_store_pg_conn.c, the races only replicas have and
 * the two backends' JSON compared in test_store_pg_race.c. Needs
 * IG_TEST_PG_URL (fails without it); each case gets a database of its
 * own.
 */
#include "testutil.h"

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
    pgt_db_create(&f->db, "ig_core");
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
test_put_and_get(void **state)
{
    struct fixture *f = *state;
    struct store_intent_rec r;
    char ids[4][40], *replay = NULL;
    json_t *rec = NULL, *g;
    int64_t now = ig_time_now();

    pgt_make_rec(&r, ids, 1, NULL, now);
    assert_int_equal(store_put_intent(f->s, &r, &replay), IG_OK);
    assert_null(replay);
    assert_int_equal(store_get_intent(f->s, ids[0], &rec), IG_OK);
    assert_string_equal(json_string_value(json_object_get(rec, "principal")),
                        "agent-1");
    assert_int_equal(json_integer_value(json_object_get(rec, "created_at")),
                     now);
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(rec, "binding"), "action")),
                        "payments.refund");
    assert_int_equal(json_array_size(json_object_get(rec, "decisions")), 1);
    g = json_object_get(rec, "grant");
    assert_string_equal(json_string_value(json_object_get(g, "jti")), ids[2]);
    assert_string_equal(json_string_value(json_object_get(g, "token")), ids[3]);
    assert_int_equal(json_integer_value(json_object_get(g, "expires_at")),
                     now + 30);
    assert_null(json_object_get(rec, "redemption"));
    assert_null(json_object_get(rec, "approval"));
    json_decref(rec);
    /* What a redemption reads: the intent and its grant, no more. */
    assert_int_equal(store_get_grant(f->s, ids[0], &rec), IG_OK);
    assert_non_null(json_object_get(rec, "grant"));
    assert_null(json_object_get(rec, "decisions"));
    json_decref(rec);
    assert_int_equal(store_get_intent(f->s, "nope", &rec), IG_ERR_NOTFOUND);
    assert_null(rec);
    assert_int_equal(store_get_grant(f->s, "nope", &rec), IG_ERR_NOTFOUND);
    assert_int_equal(pgt_events(&f->db), 1);
    /* The same intent id again: refused, nothing written. */
    assert_int_equal(store_put_intent(f->s, &r, &replay), IG_ERR_IO);
    assert_int_equal(pgt_events(&f->db), 1);
}

static void
test_rows_are_immutable(void **state)
{
    static const char *const sql[] = {
        "UPDATE intents SET principal = 'x'",
        "DELETE FROM intents",
        "UPDATE decisions SET decision = 'ALLOW'",
        "DELETE FROM decisions",
        "UPDATE grants SET audience = 'x'",
        "DELETE FROM grants",
        "UPDATE redemptions SET executor = 'x'",
        "DELETE FROM redemptions",
        "UPDATE outcomes SET detail = '[]'",
        "DELETE FROM outcomes",
        "UPDATE approvals SET expires_at = 0",
        "DELETE FROM approvals",
        "UPDATE votes SET vote = 'DENY'",
        "DELETE FROM votes",
        "UPDATE resolutions SET result = 'DENIED'",
        "DELETE FROM resolutions",
        "TRUNCATE intents CASCADE"};
    struct fixture *f = *state;
    struct store_intent_rec r;
    struct store_redeem_rec rr;
    struct store_outcome_rec o;
    struct store_vote_rec v;
    char ids[4][40], ids2[4][40], appr[40], *replay = NULL, msg[512];
    int64_t now = ig_time_now();
    size_t i;

    pgt_make_rec(&r, ids, 2, NULL, now);
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
    pgt_make_escalated(&r, ids2, appr, 22, now);
    assert_int_equal(store_put_intent(f->s, &r, &replay), IG_OK);
    memset(&v, 0, sizeof(v));
    v.intent_id = ids2[0];
    v.approver = "alice";
    v.vote = "DENY";
    v.channel = "ui";
    v.groups = "[\"finance\"]";
    v.intent_hash = "sha256:00";
    v.at = now;
    v.result = "DENIED";
    assert_int_equal(store_put_vote(f->s, &v), IG_OK);
    for (i = 0; i < sizeof(sql) / sizeof(sql[0]); i++) {
        if (pgt_exec(&f->db, sql[i], msg, sizeof(msg)))
            fail_msg("allowed: %s", sql[i]);
        if (strstr(msg, "immutable") == NULL)
            fail_msg("%s: %s", sql[i], msg);
    }
}

static void
test_idempotent_replay(void **state)
{
    struct fixture *f = *state;
    struct store_intent_rec r;
    char ids[4][40], ids2[4][40], *replay = NULL;
    int64_t now = ig_time_now();

    pgt_make_rec(&r, ids, 3, "key-1", now);
    assert_int_equal(store_put_intent(f->s, &r, &replay), IG_OK);
    assert_null(replay);
    pgt_make_rec(&r, ids2, 4, "key-1", now + 1);
    assert_int_equal(store_put_intent(f->s, &r, &replay), IG_ERR_EXISTS);
    assert_non_null(replay);
    assert_string_equal(replay, ids[0]); /* the FIRST intent */
    free(replay);
    replay = NULL;
    assert_int_equal(pgt_events(&f->db), 1); /* the replay wrote nothing */
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
    assert_null(replay);
    assert_int_equal(
        store_find_idempotent(f->s, "agent-1", "key-1", now + 60, &replay),
        IG_ERR_NOTFOUND);
    pgt_make_rec(&r, ids2, 5, "key-1", now + 61);
    assert_int_equal(store_put_intent(f->s, &r, &replay), IG_OK);
    assert_null(replay);
    assert_int_equal(
        store_find_idempotent(f->s, "agent-1", "key-1", now + 61, &replay),
        IG_OK);
    assert_string_equal(replay, ids2[0]); /* the newest */
    free(replay);
}

static void
test_redeem_once_across_reopen(void **state)
{
    struct fixture *f = *state;
    struct store_intent_rec r;
    struct store_redeem_rec rr;
    char ids[4][40], *replay = NULL;
    json_t *rec = NULL;

    pgt_make_rec(&r, ids, 6, NULL, ig_time_now());
    assert_int_equal(store_put_intent(f->s, &r, &replay), IG_OK);
    memset(&rr, 0, sizeof(rr));
    rr.jti = "20000000-0000-4000-8000-999999999999";
    rr.intent_id = ids[0];
    rr.executor = "exec-1";
    rr.redeemed_at = 1234;
    rr.events = pgt_ev1;
    rr.nevents = 1;
    assert_int_equal(store_redeem(f->s, &rr), IG_ERR_NOTFOUND);
    rr.intent_id = "00000000-0000-4000-8000-999999999999";
    rr.jti = ids[2];
    assert_int_equal(store_redeem(f->s, &rr), IG_ERR_NOTFOUND);
    assert_int_equal(pgt_events(&f->db), 1);
    rr.intent_id = ids[0];
    assert_int_equal(store_redeem(f->s, &rr), IG_OK);
    assert_int_equal(pgt_events(&f->db), 2);
    assert_int_equal(store_redeem(f->s, &rr), IG_ERR_EXISTS);
    store_close(f->s);
    f->s = pgt_store_open(&f->db);
    assert_int_equal(store_redeem(f->s, &rr), IG_ERR_EXISTS);
    assert_int_equal(pgt_events(&f->db), 2);
    assert_int_equal(store_get_intent(f->s, ids[0], &rec), IG_OK);
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(rec, "redemption"), "executor")),
                        "exec-1");
    assert_int_equal(json_integer_value(json_object_get(
                         json_object_get(rec, "redemption"), "redeemed_at")),
                     1234);
    json_decref(rec);
    /* An intent without a grant cannot be redeemed. */
    pgt_make_rec(&r, ids, 61, NULL, ig_time_now());
    r.decision = "BLOCK";
    r.grant_jti = NULL;
    assert_int_equal(store_put_intent(f->s, &r, &replay), IG_OK);
    rr.intent_id = ids[0];
    rr.jti = ids[2];
    assert_int_equal(store_redeem(f->s, &rr), IG_ERR_NOTFOUND);
}

static void
test_outcome_rules(void **state)
{
    struct fixture *f = *state;
    struct store_intent_rec r;
    struct store_redeem_rec rr;
    struct store_outcome_rec o;
    char ids[4][40], *replay = NULL;
    json_t *rec = NULL;
    int dup = -1;

    pgt_make_rec(&r, ids, 8, NULL, ig_time_now());
    assert_int_equal(store_put_intent(f->s, &r, &replay), IG_OK);
    memset(&o, 0, sizeof(o));
    o.intent_id = ids[0];
    o.executor = "exec-1";
    o.outcome = "COMPLETED";
    o.detail = "{\"status\":200}";
    o.events = pgt_ev1;
    o.nevents = 1;
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
    assert_int_equal(pgt_events(&f->db), 1);
    assert_int_equal(store_put_outcome(f->s, &o), IG_OK);
    assert_int_equal(pgt_events(&f->db), 2);
    assert_int_equal(store_put_outcome(f->s, &o), IG_ERR_EXISTS);
    o.outcome = "MAYBE"; /* after one: a repeat, whatever it says */
    assert_int_equal(store_put_outcome(f->s, &o), IG_ERR_EXISTS);
    o.outcome = "COMPLETED";
    /* With a duplicate flag: the same outcome again is a duplicate (and
       writes nothing); another one is still refused. */
    o.duplicate = &dup;
    assert_int_equal(store_put_outcome(f->s, &o), IG_OK);
    assert_int_equal(dup, 1);
    assert_int_equal(pgt_events(&f->db), 2);
    o.detail = "{\"status\":500}";
    assert_int_equal(store_put_outcome(f->s, &o), IG_ERR_EXISTS);
    assert_int_equal(dup, 0);
    o.detail = "{\"status\":200}";
    o.outcome = "UNKNOWN_AFTER_DISPATCH";
    assert_int_equal(store_put_outcome(f->s, &o), IG_ERR_EXISTS);
    assert_int_equal(store_get_intent(f->s, ids[0], &rec), IG_OK);
    assert_true(json_number_value(json_object_get(
                    json_object_get(json_object_get(rec, "outcome"), "detail"),
                    "status")) == 200);
    json_decref(rec);
}

static void
async_done(void *ctx, enum ig_status st)
{
    atomic_store((atomic_int *)ctx, (int)st);
}

/* Wait (at most 10 s) until *st is not IG_ERR_NOMEM (our "pending"). */
static int
await(atomic_int *st)
{
    int i;

    for (i = 0; i < 1000 && atomic_load(st) == IG_ERR_NOMEM; i++) {
        struct timespec ts = {0, 10000000L};
        (void)nanosleep(&ts, NULL);
    }
    return atomic_load(st);
}

static void
test_async_and_failed_job_isolated(void **state)
{
    struct fixture *f = *state;
    struct store_intent_rec r, dup;
    struct store_redeem_rec rr;
    struct store_outcome_rec o;
    char ids[4][40], *replay = NULL, *replay2 = NULL;
    atomic_int st1 = IG_ERR_NOMEM, st2 = IG_ERR_NOMEM, st3 = IG_ERR_NOMEM,
               st4 = IG_ERR_NOMEM, st5 = IG_ERR_NOMEM;

    pgt_make_rec(&r, ids, 9, "k-async", ig_time_now());
    dup = r; /* same intent id twice: the second insert fails alone */
    assert_int_equal(
        store_put_intent_async(f->s, &r, &replay, async_done, &st1), IG_OK);
    assert_int_equal(await(&st1), IG_OK);
    assert_null(replay);
    dup.idempotency_key = NULL;
    assert_int_equal(
        store_put_intent_async(f->s, &dup, &replay2, async_done, &st2), IG_OK);
    assert_int_equal(await(&st2), IG_ERR_IO);
    assert_int_equal(pgt_events(&f->db),
                     1); /* the failed job's event rolled back */
    /* A replay through the async call. */
    dup.idempotency_key = "k-async";
    dup.intent_id = "00000000-0000-4000-8000-000000000099";
    assert_int_equal(
        store_put_intent_async(f->s, &dup, &replay2, async_done, &st3), IG_OK);
    assert_int_equal(await(&st3), IG_ERR_EXISTS);
    assert_non_null(replay2);
    assert_string_equal(replay2, ids[0]);
    free(replay2);
    memset(&rr, 0, sizeof(rr));
    rr.jti = ids[2];
    rr.intent_id = ids[0];
    rr.executor = "exec-1";
    assert_int_equal(store_redeem_async(f->s, &rr, async_done, &st4), IG_OK);
    assert_int_equal(await(&st4), IG_OK);
    memset(&o, 0, sizeof(o));
    o.intent_id = ids[0];
    o.executor = "exec-1";
    o.outcome = "COMPLETED";
    o.detail = "{}";
    assert_int_equal(store_put_outcome_async(f->s, &o, async_done, &st5),
                     IG_OK);
    assert_int_equal(await(&st5), IG_OK);
    assert_int_equal(store_redeem(f->s, &rr), IG_ERR_EXISTS);
}

static atomic_size_t batch_max; /* the most writes one commit held */

static void
observe_batch(void *ctx, double seconds, size_t writes)
{
    size_t cur = atomic_load(&batch_max);

    (void)ctx;
    (void)seconds;
    while (writes > cur &&
           !atomic_compare_exchange_weak(&batch_max, &cur, writes))
        ;
}

/* Async writes queued together commit together (group commit), each in
   its own savepoint: a failing one (an intent id used twice) and a
   refused one (a second redeem of one grant in the same batch) leave the
   others recorded, and nothing of their own. */
static void
test_async_batch(void **state)
{
    enum { N = 48 };
    struct fixture *f = *state;
    static struct store_intent_rec r[N];
    static struct store_redeem_rec rr[2];
    static char ids[N][4][40], *replay[N];
    static atomic_int st[N], rst[2];
    int64_t now = ig_time_now();
    int i;

    atomic_store(&batch_max, 0);
    store_set_observer(f->s, observe_batch, NULL);
    for (i = 0; i < N; i++) {
        pgt_make_rec(&r[i], ids[i], 100 + i, NULL, now);
        atomic_store(&st[i], IG_ERR_NOMEM);
    }
    r[N - 1].intent_id = ids[0][0]; /* its insert fails: 23505 */
    assert_int_equal(store_put_intent(f->s, &r[0], &replay[0]), IG_OK);
    for (i = 1; i < N; i++)
        assert_int_equal(
            store_put_intent_async(f->s, &r[i], &replay[i], async_done, &st[i]),
            IG_OK);
    for (i = 1; i < N - 1; i++)
        assert_int_equal(await(&st[i]), IG_OK);
    assert_int_equal(await(&st[N - 1]), IG_ERR_IO);
    assert_int_equal(pgt_events(&f->db), N - 1);
    /* Two redeems of one grant, queued together: one each way. */
    for (i = 0; i < 2; i++) {
        memset(&rr[i], 0, sizeof(rr[i]));
        rr[i].jti = ids[1][2];
        rr[i].intent_id = ids[1][0];
        rr[i].executor = "exec-1";
        atomic_store(&rst[i], IG_ERR_NOMEM);
        assert_int_equal(store_redeem_async(f->s, &rr[i], async_done, &rst[i]),
                         IG_OK);
    }
    assert_int_equal(await(&rst[0]) + await(&rst[1]), IG_OK + IG_ERR_EXISTS);
    assert_true(await(&rst[0]) == IG_OK || await(&rst[1]) == IG_OK);
    assert_int_equal(pgt_events(&f->db), N - 1); /* redeems here carry none */
    /* 47 writes queued at once by one thread: some commit shared one. */
    assert_true(atomic_load(&batch_max) > 1);
    store_set_observer(f->s, NULL, NULL);
}

static void
test_votes(void **state)
{
    struct fixture *f = *state;
    struct store_intent_rec r;
    struct store_vote_rec v;
    char ids[4][40], plain[4][40], appr[40], *replay = NULL, *id = NULL;
    json_t *rec = NULL, *open = NULL, *a;
    int64_t now = ig_time_now();

    pgt_make_escalated(&r, ids, appr, 10, now);
    assert_int_equal(store_put_intent(f->s, &r, &replay), IG_OK);
    pgt_make_rec(&r, plain, 11, NULL, now);
    assert_int_equal(store_put_intent(f->s, &r, &replay), IG_OK);
    assert_int_equal(store_approval_intent(f->s, appr, &id), IG_OK);
    assert_string_equal(id, ids[0]);
    free(id);
    assert_int_equal(store_approval_intent(f->s, "nope", &id), IG_ERR_NOTFOUND);
    assert_int_equal(store_open_approvals(f->s, 0, &open), IG_OK);
    assert_int_equal(json_array_size(open), 1);
    assert_string_equal(json_string_value(json_object_get(
                            json_array_get(open, 0), "intent_id")),
                        ids[0]);
    json_decref(open);
    assert_int_equal(store_open_approvals(f->s, now + 899, &open), IG_OK);
    assert_int_equal(json_array_size(open), 0);
    json_decref(open);
    assert_int_equal(store_open_approvals(f->s, now + 900, &open), IG_OK);
    assert_int_equal(json_array_size(open), 1);
    json_decref(open);

    memset(&v, 0, sizeof(v));
    v.intent_id = ids[0];
    v.approver = "alice";
    v.vote = "APPROVE";
    v.comment = NULL; /* stored as "" */
    v.channel = "ui";
    v.groups = "[\"finance\"]";
    v.intent_hash = "sha256:00";
    v.at = now + 5;
    v.events = pgt_ev1;
    v.nevents = 1;
    assert_int_equal(store_put_vote(f->s, &v), IG_OK);
    assert_int_equal(store_put_vote(f->s, &v), IG_ERR_EXISTS); /* again */
    v.intent_id = plain[0]; /* no approval request */
    assert_int_equal(store_put_vote(f->s, &v), IG_ERR_NOTFOUND);
    v.intent_id = "nope";
    assert_int_equal(store_put_vote(f->s, &v), IG_ERR_NOTFOUND);
    v.intent_id = ids[0];
    v.vote = "MAYBE"; /* the schema's CHECK */
    v.approver = "carol";
    assert_int_equal(store_put_vote(f->s, &v), IG_ERR_IO);
    assert_int_equal(pgt_events(&f->db), 3);
    /* The second vote resolves it: a decision and a grant follow. */
    v.approver = "bob";
    v.vote = "APPROVE";
    v.comment = "fine";
    v.at = now + 7;
    v.result = "APPROVED";
    v.decision_id = "10000000-0000-4000-8000-100000000010";
    v.decision = "ALLOW";
    v.reasons = "[\"approved\"]";
    v.message = "approved";
    v.policy_revision = "sha256:11";
    v.grant_jti = "20000000-0000-4000-8000-100000000010";
    v.grant_aud = "exec-1";
    v.grant_token = "tok";
    v.grant_expires_at = now + 60;
    assert_int_equal(store_put_vote(f->s, &v), IG_OK);
    assert_int_equal(pgt_events(&f->db), 4);
    /* Resolved: no vote, no second resolution (an expiry: no approver). */
    v.approver = "carol";
    v.result = NULL;
    assert_int_equal(store_put_vote(f->s, &v), IG_ERR_EXISTS);
    v.approver = NULL;
    v.result = "EXPIRED";
    v.decision_id = NULL;
    assert_int_equal(store_put_vote(f->s, &v), IG_ERR_EXISTS);
    assert_int_equal(pgt_events(&f->db), 4);
    assert_int_equal(store_open_approvals(f->s, 0, &open), IG_OK);
    assert_int_equal(json_array_size(open), 0);
    json_decref(open);

    assert_int_equal(store_get_intent(f->s, ids[0], &rec), IG_OK);
    assert_int_equal(json_array_size(json_object_get(rec, "decisions")), 2);
    assert_string_equal(
        json_string_value(json_object_get(
            json_array_get(json_object_get(rec, "decisions"), 1), "decision")),
        "ALLOW");
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(rec, "grant"), "token")),
                        "tok");
    a = json_object_get(rec, "approval");
    assert_int_equal(json_array_size(json_object_get(a, "votes")), 2);
    assert_string_equal(
        json_string_value(json_object_get(
            json_array_get(json_object_get(a, "votes"), 0), "approver")),
        "alice");
    assert_string_equal(
        json_string_value(json_object_get(
            json_array_get(json_object_get(a, "votes"), 0), "comment")),
        "");
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(a, "resolution"), "result")),
                        "APPROVED");
    assert_int_equal(json_integer_value(json_object_get(
                         json_object_get(a, "resolution"), "resolved_at")),
                     now + 7);
    json_decref(rec);
}

/* An expiry (no approver) resolves a request without a vote. */
static void
test_vote_expiry(void **state)
{
    struct fixture *f = *state;
    struct store_intent_rec r;
    struct store_vote_rec v;
    char ids[4][40], appr[40], *replay = NULL;
    json_t *rec = NULL, *a;
    int64_t now = ig_time_now();

    pgt_make_escalated(&r, ids, appr, 12, now);
    assert_int_equal(store_put_intent(f->s, &r, &replay), IG_OK);
    memset(&v, 0, sizeof(v));
    v.intent_id = ids[0];
    v.at = now + 900;
    v.result = "EXPIRED";
    v.decision_id = "10000000-0000-4000-8000-100000000012";
    v.decision = "BLOCK";
    v.reasons = "[\"expired\"]";
    v.message = "expired";
    v.policy_revision = "sha256:11";
    assert_int_equal(store_put_vote(f->s, &v), IG_OK);
    assert_int_equal(store_get_intent(f->s, ids[0], &rec), IG_OK);
    a = json_object_get(rec, "approval");
    assert_int_equal(json_array_size(json_object_get(a, "votes")), 0);
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(a, "resolution"), "result")),
                        "EXPIRED");
    assert_null(json_object_get(rec, "grant"));
    json_decref(rec);
}

static void
test_put_events(void **state)
{
    static const char *const two[] = {"{\"type\":\"a\"}", "{\"type\":\"b\"}"};
    static const char *const bad[] = {"{\"type\":\"c\"}", NULL};
    struct fixture *f = *state;

    assert_int_equal(store_put_events(f->s, two, 2), IG_OK);
    assert_int_equal(store_put_events(f->s, two, 0), IG_OK);
    assert_int_equal(store_put_events(f->s, bad, 2), IG_ERR_INVALID);
    assert_int_equal(store_put_events(f->s, NULL, 1), IG_ERR_INVALID);
    assert_int_equal(pgt_events(&f->db),
                     2); /* the refused ones wrote nothing */
    assert_int_equal(pgt_int(&f->db, "SELECT count(*) FROM (SELECT event "
                                     "FROM audit_queue UNION ALL SELECT "
                                     "event FROM audit_events) e WHERE "
                                     "event = '{\"type\":\"b\"}'"),
                     1);
}

static void
test_counters(void **state)
{
    struct fixture *f = *state;
    int64_t now = ig_time_now();
    struct store *b;

    assert_int_equal(store_count(f->s, "k", 60, now - 100), 1);
    assert_int_equal(store_count(f->s, "k", 60, now - 10), 1);
    assert_int_equal(store_count(f->s, "k", 60, now), 2);
    assert_int_equal(store_count(f->s, "k", 60, now), 3);
    assert_int_equal(store_count(f->s, "k", 1, now), 3); /* same second */
    assert_int_equal(store_count(f->s, "other", 60, now), 1);
    assert_int_equal(store_count(f->s, "k", 0, now), -1);
    assert_int_equal(store_count(f->s, "k", 86401, now), -1);
    assert_int_equal(store_count(f->s, "", 60, now), -1);
    assert_int_equal(store_count(f->s, NULL, 60, now), -1);
    /* Another replica counts the same hits; a reopened store too. */
    b = pgt_store_open(&f->db);
    assert_int_equal(store_count(b, "k", 3600, now), 6);
    store_close(b);
    store_close(f->s);
    f->s = pgt_store_open(&f->db);
    assert_int_equal(store_count(f->s, "k", 3600, now), 7);
    /* One row per key and second, however many hits. */
    assert_int_equal(pgt_int(&f->db, "SELECT count(*) FROM counter_counts"), 4);
}

/* No server: opening fails, naming it. */
static void
test_unreachable(void **state)
{
    struct store_opts o;
    struct store *s = NULL;
    struct ig_err err;

    (void)state;
    memset(&o, 0, sizeof(o));
    o.path = "postgresql://nobody@127.0.0.1:1/none";
    assert_int_equal(store_open(&o, &s, &err), IG_ERR_IO);
    assert_null(s);
    assert_non_null(strstr(err.msg, "PostgreSQL"));
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
        cmocka_unit_test_setup_teardown(test_outcome_rules, setup, teardown),
        cmocka_unit_test_setup_teardown(test_async_batch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_async_and_failed_job_isolated,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_votes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_vote_expiry, setup, teardown),
        cmocka_unit_test_setup_teardown(test_put_events, setup, teardown),
        cmocka_unit_test_setup_teardown(test_counters, setup, teardown),
        cmocka_unit_test(test_unreachable),
    };

    if (pgt_base_url() == NULL) {
        (void)fprintf(stderr, "IG_TEST_PG_URL is not set: these tests need a "
                              "PostgreSQL cluster (scripts/pg-cluster.sh)\n");
        return 1;
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
