/*
 * test_store_pg.c - the PostgreSQL store's writes and reads, each success
 * and refusal as test_store.c checks them on SQLite: records, immutability,
 * idempotent replay, exactly-once redemption (also across a reopen),
 * outcomes, votes, audit events, quota counters, lost connections
 * (idle in the pool, and under a call), NOTIFYs and wake-ups. The
 * races only replicas have, and the two backends' JSON compared, are in
 * test_store_pg_race.c. Needs IG_TEST_PG_URL (fails without it); each
 * case gets a database of its own.
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

static const char *const ev1[] = {"{\"type\":\"intent.received\"}"};

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

/* An ALLOW record with a grant; ids derive from n. */
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
    r->events = ev1;
    r->nevents = 1;
}

/* The same, escalated: an approval request instead of a grant. */
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

/* Audit events the store holds, queued or sequenced. */
static int64_t
events(const struct fixture *f)
{
    return pgt_int(&f->db, "SELECT (SELECT count(*) FROM audit_queue) + "
                           "(SELECT count(*) FROM audit_events)");
}

static void
test_put_and_get(void **state)
{
    struct fixture *f = *state;
    struct store_intent_rec r;
    char ids[4][40], *replay = NULL;
    json_t *rec = NULL, *g;
    int64_t now = ig_time_now();

    make_rec(&r, ids, 1, NULL, now);
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
    assert_int_equal(events(f), 1);
    /* The same intent id again: refused, nothing written. */
    assert_int_equal(store_put_intent(f->s, &r, &replay), IG_ERR_IO);
    assert_int_equal(events(f), 1);
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

    make_rec(&r, ids, 2, NULL, now);
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
    make_escalated(&r, ids2, appr, 22, now);
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

    make_rec(&r, ids, 3, "key-1", now);
    assert_int_equal(store_put_intent(f->s, &r, &replay), IG_OK);
    assert_null(replay);
    make_rec(&r, ids2, 4, "key-1", now + 1);
    assert_int_equal(store_put_intent(f->s, &r, &replay), IG_ERR_EXISTS);
    assert_non_null(replay);
    assert_string_equal(replay, ids[0]); /* the FIRST intent */
    free(replay);
    replay = NULL;
    assert_int_equal(events(f), 1); /* the replay wrote nothing */
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
    make_rec(&r, ids2, 5, "key-1", now + 61);
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

    make_rec(&r, ids, 6, NULL, ig_time_now());
    assert_int_equal(store_put_intent(f->s, &r, &replay), IG_OK);
    memset(&rr, 0, sizeof(rr));
    rr.jti = "20000000-0000-4000-8000-999999999999";
    rr.intent_id = ids[0];
    rr.executor = "exec-1";
    rr.redeemed_at = 1234;
    rr.events = ev1;
    rr.nevents = 1;
    assert_int_equal(store_redeem(f->s, &rr), IG_ERR_NOTFOUND);
    rr.intent_id = "00000000-0000-4000-8000-999999999999";
    rr.jti = ids[2];
    assert_int_equal(store_redeem(f->s, &rr), IG_ERR_NOTFOUND);
    assert_int_equal(events(f), 1);
    rr.intent_id = ids[0];
    assert_int_equal(store_redeem(f->s, &rr), IG_OK);
    assert_int_equal(events(f), 2);
    assert_int_equal(store_redeem(f->s, &rr), IG_ERR_EXISTS);
    store_close(f->s);
    f->s = pgt_store_open(&f->db);
    assert_int_equal(store_redeem(f->s, &rr), IG_ERR_EXISTS);
    assert_int_equal(events(f), 2);
    assert_int_equal(store_get_intent(f->s, ids[0], &rec), IG_OK);
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(rec, "redemption"), "executor")),
                        "exec-1");
    assert_int_equal(json_integer_value(json_object_get(
                         json_object_get(rec, "redemption"), "redeemed_at")),
                     1234);
    json_decref(rec);
    /* An intent without a grant cannot be redeemed. */
    make_rec(&r, ids, 61, NULL, ig_time_now());
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

    make_rec(&r, ids, 8, NULL, ig_time_now());
    assert_int_equal(store_put_intent(f->s, &r, &replay), IG_OK);
    memset(&o, 0, sizeof(o));
    o.intent_id = ids[0];
    o.executor = "exec-1";
    o.outcome = "COMPLETED";
    o.detail = "{\"status\":200}";
    o.events = ev1;
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
    assert_int_equal(events(f), 1);
    assert_int_equal(store_put_outcome(f->s, &o), IG_OK);
    assert_int_equal(events(f), 2);
    assert_int_equal(store_put_outcome(f->s, &o), IG_ERR_EXISTS);
    o.outcome = "MAYBE"; /* after one: a repeat, whatever it says */
    assert_int_equal(store_put_outcome(f->s, &o), IG_ERR_EXISTS);
    o.outcome = "COMPLETED";
    /* With a duplicate flag: the same outcome again is a duplicate (and
       writes nothing); another one is still refused. */
    o.duplicate = &dup;
    assert_int_equal(store_put_outcome(f->s, &o), IG_OK);
    assert_int_equal(dup, 1);
    assert_int_equal(events(f), 2);
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

    make_rec(&r, ids, 9, "k-async", ig_time_now());
    dup = r; /* same intent id twice: the second insert fails alone */
    assert_int_equal(
        store_put_intent_async(f->s, &r, &replay, async_done, &st1), IG_OK);
    assert_int_equal(await(&st1), IG_OK);
    assert_null(replay);
    dup.idempotency_key = NULL;
    assert_int_equal(
        store_put_intent_async(f->s, &dup, &replay2, async_done, &st2), IG_OK);
    assert_int_equal(await(&st2), IG_ERR_IO);
    assert_int_equal(events(f), 1); /* the failed job's event rolled back */
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

static void
test_votes(void **state)
{
    struct fixture *f = *state;
    struct store_intent_rec r;
    struct store_vote_rec v;
    char ids[4][40], plain[4][40], appr[40], *replay = NULL, *id = NULL;
    json_t *rec = NULL, *open = NULL, *a;
    int64_t now = ig_time_now();

    make_escalated(&r, ids, appr, 10, now);
    assert_int_equal(store_put_intent(f->s, &r, &replay), IG_OK);
    make_rec(&r, plain, 11, NULL, now);
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
    v.events = ev1;
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
    assert_int_equal(events(f), 3);
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
    assert_int_equal(events(f), 4);
    /* Resolved: no vote, no second resolution (an expiry: no approver). */
    v.approver = "carol";
    v.result = NULL;
    assert_int_equal(store_put_vote(f->s, &v), IG_ERR_EXISTS);
    v.approver = NULL;
    v.result = "EXPIRED";
    v.decision_id = NULL;
    assert_int_equal(store_put_vote(f->s, &v), IG_ERR_EXISTS);
    assert_int_equal(events(f), 4);
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

    make_escalated(&r, ids, appr, 12, now);
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
    assert_int_equal(events(f), 2); /* the refused ones wrote nothing */
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

    make_rec(&r, ids, 13, NULL, ig_time_now());
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
    make_rec(&r, ids2, 14, NULL, ig_time_now());
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
    make_rec(&r, ids, 23, "k-lost", now);
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
    make_escalated(&r, ids, appr, 24, now);
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
    make_rec(&r, ids, 15, NULL, ig_time_now());
    assert_int_equal(store_put_intent(f->s, &r, &replay), IG_OK);
    assert_true(was_woken(&wa, ids[0])); /* at once */
    assert_true(await_woken(&wb, ids[0]));
    make_rec(&r, ids2, 16, NULL, ig_time_now());
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
    make_rec(&r, ids, 17, NULL, ig_time_now());
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
    make_escalated(&r, ids2, appr, 18, ig_time_now());
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
    make_rec(&r, ids3, 19, NULL, ig_time_now());
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
        make_rec(&r[i], ids[i], 200 + i, NULL, ig_time_now());
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
        cmocka_unit_test_setup_teardown(test_async_and_failed_job_isolated,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_votes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_vote_expiry, setup, teardown),
        cmocka_unit_test_setup_teardown(test_put_events, setup, teardown),
        cmocka_unit_test_setup_teardown(test_counters, setup, teardown),
        cmocka_unit_test_setup_teardown(test_idle_connections_lost, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_connection_lost_mid_call, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_commit_wakes_replicas, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_writes_notify, setup, teardown),
        cmocka_unit_test_setup_teardown(test_async_drained_at_close, setup,
                                        teardown),
        cmocka_unit_test(test_unreachable),
    };

    if (pgt_base_url() == NULL) {
        (void)fprintf(stderr, "IG_TEST_PG_URL is not set: these tests need a "
                              "PostgreSQL cluster (scripts/pg-cluster.sh)\n");
        return 1;
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
