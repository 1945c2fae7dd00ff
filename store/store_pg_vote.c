/*
 * store_pg_vote.c - the PostgreSQL store's votes on approval requests,
 * with the resolution, decision and grant that follow from them, and the
 * quota counters.
 *
 * Votes: "not resolved, not voted by this approver, then insert" must hold
 * across replicas. The transaction takes an advisory lock on the approval
 * request (transaction-scoped, in the two-int4 key space) and only then
 * checks, each check a statement that sees every commit before it; every
 * vote and resolution of the request takes the same lock, so none slips
 * in between. (A row lock, SELECT .. FOR UPDATE, would need the UPDATE
 * privilege the PDP's role lacks on the immutable tables.) The UNIQUE and
 * PRIMARY KEY constraints of votes and resolutions back it up.
 *
 * Quota counters: each hit is added to counter_counts (one row per key and
 * second) by an upsert whose statement also sums the window, so replicas
 * count each other's hits. The row's own count comes from the upsert (the
 * latest committed value plus this hit: concurrent hits in one second
 * serialise on the row); the other seconds come from the statement's
 * snapshot.
 */
#include "store_pg_int.h"

#include <stdatomic.h>
#include <string.h>

#include "ig_limits.h"

/* The class of the advisory locks on approval requests (0x69670002), in
   the space of two-int4 keys: see store_pg_write.c. */
#define LOCK_CLASS_APPROVAL "1768357890"

/* Count calls between two prunings of day-old counter rows. */
#define COUNT_PRUNE_EVERY 4096

/* ---- votes ---- */

static const char SQL_APPROVAL_LOCK[] =
    "SELECT a.intent_seq, pg_advisory_xact_lock(" LOCK_CLASS_APPROVAL
    ", hashint8(a.intent_seq)) FROM approvals a, intents i "
    "WHERE i.intent_id = $1::text AND a.intent_seq = i.seq";
static const char SQL_VOTE_CHECK[] =
    "SELECT EXISTS (SELECT 1 FROM resolutions WHERE intent_seq = "
    "$1::bigint), EXISTS (SELECT 1 FROM votes WHERE intent_seq = $1::bigint "
    "AND approver = $2::text)";
/* The vote ($2 approver NULL: none), the resolution ($9 NULL: none), its
   decision ($10 NULL: none) and grant ($15 NULL: none). */
static const char SQL_VOTE[] =
    "WITH v AS (INSERT INTO votes (intent_seq, approver, vote, comment, "
    "channel, groups, intent_hash, voted_at) SELECT $1::bigint, $2::text, "
    "$3::text, $4::text, $5::text, $6::text, $7::text, $8::bigint "
    "WHERE $2::text IS NOT NULL), "
    "r AS (INSERT INTO resolutions (intent_seq, result, resolved_at) "
    "SELECT $1::bigint, $9::text, $8::bigint WHERE $9::text IS NOT NULL), "
    "d AS (INSERT INTO decisions (intent_seq, decision_id, decision, "
    "reasons, message, policy_revision, decided_at) SELECT $1::bigint, "
    "$10::text, $11::text, $12::text, $13::text, $14::text, $8::bigint "
    "WHERE $9::text IS NOT NULL AND $10::text IS NOT NULL), "
    "g AS (INSERT INTO grants (intent_seq, jti, decision_id, audience, "
    "issued_at, expires_at, token) SELECT $1::bigint, $15::text, "
    "$10::text, $16::text, $8::bigint, $17::bigint, $18::text "
    "WHERE $9::text IS NOT NULL AND $10::text IS NOT NULL AND "
    "$15::text IS NOT NULL) "
    "SELECT 1";

/* Lock the request of r's intent and check it takes this vote: IG_OK with
   *seq, IG_ERR_NOTFOUND (no request), IG_ERR_EXISTS (resolved, or this
   approver voted). */
static enum ig_status
vote_check(struct store_pg *s, struct store_pg_conn *c,
           const struct store_vote_rec *r, int64_t *seq)
{
    struct store_pg_params p;
    PGresult *res;
    enum ig_status st = IG_OK;

    store_pg_params_init(&p);
    store_pg_param_text(&p, r->intent_id);
    res = store_pg_query(s, c, SQL_APPROVAL_LOCK, &p, NULL, NULL);
    if (res == NULL)
        return IG_ERR_IO;
    if (PQntuples(res) != 1) {
        PQclear(res);
        return IG_ERR_NOTFOUND;
    }
    *seq = store_pg_int(res, 0, 0);
    PQclear(res);
    store_pg_params_init(&p);
    store_pg_param_int(&p, *seq);
    store_pg_param_text(&p, r->approver != NULL ? r->approver : "");
    res = store_pg_query(s, c, SQL_VOTE_CHECK, &p, NULL, NULL);
    if (res == NULL || PQntuples(res) != 1)
        st = IG_ERR_IO;
    else if (strcmp(store_pg_text(res, 0, 0), "t") == 0 ||
             (r->approver != NULL &&
              strcmp(store_pg_text(res, 0, 1), "t") == 0))
        st = IG_ERR_EXISTS;
    PQclear(res);
    return st;
}

static void
vote_params(struct store_pg_params *p, int64_t seq,
            const struct store_vote_rec *r)
{
    store_pg_params_init(p);
    store_pg_param_int(p, seq);
    store_pg_param_text(p, r->approver);
    store_pg_param_text(p, r->vote);
    store_pg_param_text(p, r->comment != NULL ? r->comment : "");
    store_pg_param_text(p, r->channel);
    store_pg_param_text(p, r->groups);
    store_pg_param_text(p, r->intent_hash);
    store_pg_param_int(p, r->at);
    store_pg_param_text(p, r->result);
    store_pg_param_text(p, r->decision_id);
    store_pg_param_text(p, r->decision);
    store_pg_param_text(p, r->reasons);
    store_pg_param_text(p, r->message);
    store_pg_param_text(p, r->policy_revision);
    store_pg_param_text(p, r->grant_jti);
    store_pg_param_text(p, r->grant_aud);
    store_pg_param_int(p, r->grant_expires_at);
    store_pg_param_text(p, r->grant_token);
}

struct vote_arg {
    const struct store_vote_rec *r;
};

static enum ig_status
txn_vote(struct store_pg *s, struct store_pg_conn *c, void *arg)
{
    const struct store_vote_rec *r = ((const struct vote_arg *)arg)->r;
    struct store_pg_params p;
    PGresult *res;
    char state[6];
    enum ig_status st;
    int64_t seq = 0;

    if (r->events == NULL && r->nevents > 0)
        return IG_ERR_INVALID;
    if ((st = vote_check(s, c, r, &seq)) != IG_OK)
        return st;
    vote_params(&p, seq, r);
    /* Under the lock a unique violation (23505) cannot happen; if it does
       the constraint refused a second vote or resolution. */
    res = store_pg_query(s, c, SQL_VOTE, &p, state, "23505");
    if (res == NULL)
        return strcmp(state, "23505") == 0 ? IG_ERR_EXISTS : IG_ERR_IO;
    PQclear(res);
    return store_pg_finish(s, c, r->events, r->nevents, r->intent_id);
}

enum ig_status
store_pg_put_vote(struct store_pg *s, const struct store_vote_rec *r)
{
    struct vote_arg a = {r};
    enum ig_status st = store_pg_txn(s, txn_vote, &a);

    if (st == IG_OK)
        store_pg_committed(s, r->intent_id);
    return st;
}

/* ---- quota counters ---- */

/* The hit and the window's sum in one statement, run outside a
   transaction block (it is its own transaction). Its commit does not wait
   for the WAL flush (synchronous_commit off, set for this transaction
   only): a server crash may lose up to a moment of quota hits - as the
   SQLite store's asynchronous persistence may - but nothing a replica
   decided was ever made durable on them. */
static const char SQL_COUNT[] =
    "WITH h AS (INSERT INTO counter_counts (key, at, hits) "
    "VALUES ($1::text, $2::bigint, 1) ON CONFLICT (key, at) DO UPDATE "
    "SET hits = counter_counts.hits + 1 RETURNING hits) "
    "SELECT set_config('synchronous_commit', 'off', true), "
    "(SELECT hits FROM h) + (SELECT coalesce(sum(hits), 0) "
    "FROM counter_counts WHERE key = $1::text AND at <> $2::bigint AND "
    "at > $2::bigint - $3::bigint)";
/* Rows out of every window (the longest is a day). */
static const char SQL_COUNT_PRUNE[] =
    "DELETE FROM counter_counts WHERE at <= $1::bigint - 86400";

static atomic_uint count_calls;

int64_t
store_pg_count(struct store_pg *s, const char *key, int64_t window_seconds,
               int64_t now)
{
    struct store_pg_params p;
    struct store_pg_conn *c;
    struct ig_err err;
    PGresult *res;
    int64_t n = -1;

    if (key == NULL || strlen(key) == 0 ||
        strlen(key) > IG_STORE_COUNT_KEY_MAX || window_seconds < 1 ||
        window_seconds > IG_STORE_COUNT_WINDOW_MAX)
        return -1;
    if ((c = store_pg_conn_get(s, &err)) == NULL) {
        store_pg_log(s, "warn", "store.pg_unavailable",
                     json_pack("{s:s}", "message", err.msg));
        return -1;
    }
    store_pg_params_init(&p);
    store_pg_param_text(&p, key);
    store_pg_param_int(&p, now);
    store_pg_param_int(&p, window_seconds);
    res = store_pg_query(s, c, SQL_COUNT, &p, NULL, NULL);
    if (res != NULL && PQntuples(res) == 1 && !PQgetisnull(res, 0, 1))
        n = store_pg_int(res, 0, 1);
    PQclear(res);
    if (n >= 0 && atomic_fetch_add(&count_calls, 1) % COUNT_PRUNE_EVERY == 0) {
        store_pg_params_init(&p);
        store_pg_param_int(&p, now);
        /* Failing to prune costs only space: the next one tries again. */
        if (store_pg_exec(s, c, SQL_COUNT_PRUNE, &p) != IG_OK)
            store_pg_log(s, "info", "store.pg_count_prune_failed", NULL);
    }
    store_pg_conn_put(s, c);
    return n;
}
