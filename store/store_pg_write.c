/*
 * store_pg_write.c - the PostgreSQL store's writes of an intent, a
 * redemption, an outcome and audit events alone.
 *
 * Each write is one transaction (store_pg_txn) holding its rows, its audit
 * events (store_pg_queue_events, in order) and a NOTIFY of the intent it
 * changed; after the COMMIT this replica's own waiters are woken
 * (store_pg_committed), other replicas' by the NOTIFY. The _async
 * variants run the same transaction on a worker (store_pg_async) with the
 * caller's record, which stays valid until done is called: nothing is
 * copied.
 *
 * Several replicas may write at once, so every promise is kept by the
 * database, never by a check in memory:
 * - exactly-once redemption: the PRIMARY KEY of redemptions, inserted with
 *   ON CONFLICT DO NOTHING (a concurrent second insert waits for the
 *   first's commit and then inserts nothing);
 * - idempotency keys: "look for an unexpired intent with this key, then
 *   insert" runs under a transaction-scoped advisory lock on a hash of
 *   (principal, key), so two replicas putting the same key at once take
 *   turns and the second finds the first's intent (READ COMMITTED: each
 *   statement sees what committed before it started);
 * - one outcome per redemption: the PRIMARY KEY of outcomes, the same way.
 * An intent's rows go in one statement (data-modifying WITH clauses), so
 * the common write is BEGIN, one INSERT, the queue, the NOTIFYs, COMMIT.
 */
#include "store_pg_int.h"

#include <stdlib.h>
#include <string.h>

/* The class (first key) of the advisory locks on idempotency keys, in the
   space of two-int4 keys, which never overlaps the bigint keys of
   store_pg_int.h. Two keys hashing alike only take turns. */
#define LOCK_CLASS_IDEM "1768357889" /* 0x69670001 */

/* One write: its record, where a replay goes, the intent to wake after
   the commit and, when async, the caller's callback. */
struct pg_write {
    struct store_pg *s;
    const void *rec;
    char **replay;
    const char *notify;
    store_done_fn done;
    void *ctx;
};

/* ---- running a write ---- */

static void
write_done(void *ctx, enum ig_status st)
{
    struct pg_write *w = ctx;

    if (st == IG_OK)
        store_pg_committed(w->s, w->notify);
    if (w->done != NULL)
        w->done(w->ctx, st);
}

static enum ig_status
run_sync(struct store_pg *s, store_pg_txn_fn fn, const void *rec, char **replay,
         const char *notify)
{
    struct pg_write w;
    enum ig_status st;

    memset(&w, 0, sizeof(w));
    w.s = s;
    w.rec = rec;
    w.replay = replay;
    w.notify = notify;
    st = store_pg_txn(s, fn, &w);
    if (st == IG_OK)
        store_pg_committed(s, notify);
    return st;
}

static enum ig_status
run_async(struct store_pg *s, store_pg_txn_fn fn, const void *rec,
          char **replay, const char *notify, store_done_fn done, void *ctx)
{
    struct pg_write *w = calloc(1, sizeof(*w));
    enum ig_status st;

    if (w == NULL)
        return IG_ERR_NOMEM;
    w->s = s;
    w->rec = rec;
    w->replay = replay;
    w->notify = notify;
    w->done = done;
    w->ctx = ctx;
    /* On a worker: fn(w), then write_done(w), then free(w). */
    st = store_pg_async(s, fn, w, free, write_done, w);
    if (st != IG_OK)
        free(w);
    return st;
}

/* The events and the NOTIFY every write of an intent ends with. */
static enum ig_status
finish(struct store_pg *s, struct store_pg_conn *c, const char *const *ev,
       size_t n, const char *intent_id)
{
    if (ev == NULL && n > 0)
        return IG_ERR_INVALID;
    return store_pg_finish(s, c, ev, n, intent_id);
}

/* Run a query that returns one row into *res: IG_OK, or IG_ERR_IO when it
   failed (logged). */
static enum ig_status
query_row(struct store_pg *s, struct store_pg_conn *c, const char *sql,
          const struct store_pg_params *p, PGresult **res)
{
    *res = store_pg_query(s, c, sql, p, NULL, NULL);
    if (*res == NULL)
        return IG_ERR_IO;
    if (PQntuples(*res) != 1) {
        PQclear(*res);
        *res = NULL;
        return IG_ERR_IO;
    }
    return IG_OK;
}

/* ---- intents ---- */

static const char SQL_IDEM_LOCK[] =
    "SELECT pg_advisory_xact_lock(" LOCK_CLASS_IDEM ", hashtext("
    "length($1::text) || ':' || $1::text || $2::text))";
static const char SQL_IDEM_FIND[] =
    "SELECT intent_id FROM intents WHERE principal = $1::text AND "
    "idempotency_key = $2::text AND expires_at > $3::bigint "
    "ORDER BY seq DESC LIMIT 1";
/* The intent, its decision and, when there is one, its grant or its
   approval request: $16 (jti) and $20 (approval id) NULL when none. */
static const char SQL_INTENT[] =
    "WITH i AS (INSERT INTO intents (intent_id, principal, tenant, action, "
    "resource, intent_hash, binding, idempotency_key, created_at, "
    "expires_at) VALUES ($1::text, $2::text, $3::text, $4::text, $5::text, "
    "$6::text, $7::text, $8::text, $9::bigint, $10::bigint) RETURNING seq), "
    "d AS (INSERT INTO decisions (intent_seq, decision_id, decision, "
    "reasons, message, policy_revision, decided_at) SELECT seq, $11::text, "
    "$12::text, $13::text, $14::text, $15::text, $9::bigint FROM i), "
    "g AS (INSERT INTO grants (intent_seq, jti, decision_id, audience, "
    "issued_at, expires_at, token) SELECT seq, $16::text, $11::text, "
    "$17::text, $9::bigint, $18::bigint, $19::text FROM i "
    "WHERE $16::text IS NOT NULL), "
    "a AS (INSERT INTO approvals (intent_seq, approval_id, requirements, "
    "created_at, expires_at) SELECT seq, $20::text, $21::text, $9::bigint, "
    "$22::bigint FROM i WHERE $20::text IS NOT NULL) "
    "SELECT seq FROM i";

/* Under the key's lock: IG_ERR_EXISTS with *replay when the principal has
   an unexpired intent with this key, IG_OK when not. */
static enum ig_status
idem_check(struct store_pg *s, struct store_pg_conn *c,
           const struct store_intent_rec *r, char **replay)
{
    struct store_pg_params p;
    PGresult *res;
    enum ig_status st = IG_OK;

    store_pg_params_init(&p);
    store_pg_param_text(&p, r->principal);
    store_pg_param_text(&p, r->idempotency_key);
    if (store_pg_exec(s, c, SQL_IDEM_LOCK, &p) != IG_OK)
        return IG_ERR_IO;
    store_pg_param_int(&p, r->created_at);
    res = store_pg_query(s, c, SQL_IDEM_FIND, &p, NULL, NULL);
    if (res == NULL)
        return IG_ERR_IO;
    if (PQntuples(res) > 0) {
        *replay = strdup(store_pg_text(res, 0, 0));
        st = *replay != NULL ? IG_ERR_EXISTS : IG_ERR_NOMEM;
    }
    PQclear(res);
    return st;
}

static void
intent_params(struct store_pg_params *p, const struct store_intent_rec *r)
{
    store_pg_params_init(p);
    store_pg_param_text(p, r->intent_id);
    store_pg_param_text(p, r->principal);
    store_pg_param_text(p, r->tenant);
    store_pg_param_text(p, r->action);
    store_pg_param_text(p, r->resource);
    store_pg_param_text(p, r->intent_hash);
    store_pg_param_text(p, r->binding);
    store_pg_param_text(p, r->idempotency_key);
    store_pg_param_int(p, r->created_at);
    store_pg_param_int(p, r->expires_at);
    store_pg_param_text(p, r->decision_id);
    store_pg_param_text(p, r->decision);
    store_pg_param_text(p, r->reasons);
    store_pg_param_text(p, r->message);
    store_pg_param_text(p, r->policy_revision);
    store_pg_param_text(p, r->grant_jti);
    store_pg_param_text(p, r->grant_aud);
    store_pg_param_int(p, r->grant_expires_at);
    store_pg_param_text(p, r->grant_token);
    store_pg_param_text(p, r->approval_id);
    store_pg_param_text(p, r->approval_requirements);
    store_pg_param_int(p, r->approval_expires_at);
}

static enum ig_status
txn_put_intent(struct store_pg *s, struct store_pg_conn *c, void *arg)
{
    const struct pg_write *w = arg;
    const struct store_intent_rec *r = w->rec;
    struct store_pg_params p;
    PGresult *res;
    enum ig_status st;

    if (r->idempotency_key != NULL) {
        /* A retried transaction starts again from here. */
        free(*w->replay);
        *w->replay = NULL;
        if ((st = idem_check(s, c, r, w->replay)) != IG_OK)
            return st;
    }
    intent_params(&p, r);
    /* A second intent with the same id (23505) is a caller's bug: the
       SQLite store answers IG_ERR_IO too. */
    if (query_row(s, c, SQL_INTENT, &p, &res) != IG_OK)
        return IG_ERR_IO;
    PQclear(res);
    return finish(s, c, r->events, r->nevents, r->intent_id);
}

enum ig_status
store_pg_put_intent(struct store_pg *s, const struct store_intent_rec *r,
                    char **replay)
{
    *replay = NULL;
    return run_sync(s, txn_put_intent, r, replay, r->intent_id);
}

enum ig_status
store_pg_put_intent_async(struct store_pg *s, const struct store_intent_rec *r,
                          char **replay, store_done_fn done, void *ctx)
{
    *replay = NULL;
    return run_async(s, txn_put_intent, r, replay, r->intent_id, done, ctx);
}

/* ---- redemptions ---- */

/* The intent's seq (NULL: no such intent) and whether this call inserted
   the redemption: only with a grant of that jti, only once. */
static const char SQL_REDEEM[] =
    "WITH i AS (SELECT seq FROM intents WHERE intent_id = $1::text), "
    "r AS (INSERT INTO redemptions (intent_seq, jti, executor, "
    "redeemed_at) SELECT g.intent_seq, g.jti, $3::text, $4::bigint "
    "FROM grants g, i WHERE g.intent_seq = i.seq AND g.jti = $2::text "
    "ON CONFLICT (intent_seq) DO NOTHING RETURNING intent_seq) "
    "SELECT (SELECT seq FROM i), (SELECT count(*) FROM r)";
static const char SQL_REDEEMED[] =
    "SELECT 1 FROM redemptions WHERE intent_seq = $1::bigint";

/* Nothing was inserted for seq: IG_ERR_EXISTS when it was redeemed before
   (this statement sees what committed meanwhile), IG_ERR_NOTFOUND when it
   has no grant of that jti. */
static enum ig_status
redeem_refusal(struct store_pg *s, struct store_pg_conn *c, int64_t seq)
{
    struct store_pg_params p;
    PGresult *res;
    enum ig_status st;

    store_pg_params_init(&p);
    store_pg_param_int(&p, seq);
    res = store_pg_query(s, c, SQL_REDEEMED, &p, NULL, NULL);
    if (res == NULL)
        return IG_ERR_IO;
    st = PQntuples(res) > 0 ? IG_ERR_EXISTS : IG_ERR_NOTFOUND;
    PQclear(res);
    return st;
}

static enum ig_status
txn_redeem(struct store_pg *s, struct store_pg_conn *c, void *arg)
{
    const struct pg_write *w = arg;
    const struct store_redeem_rec *r = w->rec;
    struct store_pg_params p;
    PGresult *res;
    int64_t seq, inserted;
    int known;

    store_pg_params_init(&p);
    store_pg_param_text(&p, r->intent_id);
    store_pg_param_text(&p, r->jti);
    store_pg_param_text(&p, r->executor);
    store_pg_param_int(&p, r->redeemed_at);
    if (query_row(s, c, SQL_REDEEM, &p, &res) != IG_OK)
        return IG_ERR_IO;
    known = !PQgetisnull(res, 0, 0);
    seq = store_pg_int(res, 0, 0);
    inserted = store_pg_int(res, 0, 1);
    PQclear(res);
    if (!known)
        return IG_ERR_NOTFOUND;
    if (inserted != 1)
        return redeem_refusal(s, c, seq);
    return finish(s, c, r->events, r->nevents, r->intent_id);
}

enum ig_status
store_pg_redeem(struct store_pg *s, const struct store_redeem_rec *r)
{
    return run_sync(s, txn_redeem, r, NULL, r->intent_id);
}

enum ig_status
store_pg_redeem_async(struct store_pg *s, const struct store_redeem_rec *r,
                      store_done_fn done, void *ctx)
{
    return run_async(s, txn_redeem, r, NULL, r->intent_id, done, ctx);
}

/* ---- outcomes ---- */

/* The seq of the intent when this executor redeemed its grant (NULL: not),
   and whether this call inserted the outcome. An outcome recorded before
   is not even tried (so a bad value after it is IG_ERR_EXISTS, as in the
   SQLite store); one committed meanwhile is the conflict. */
static const char SQL_OUTCOME[] =
    "WITH x AS (SELECT r.intent_seq FROM intents i, redemptions r "
    "WHERE i.intent_id = $1::text AND r.intent_seq = i.seq AND "
    "r.executor = $2::text), "
    "o AS (INSERT INTO outcomes (intent_seq, outcome, detail, executor, "
    "reported_at) SELECT x.intent_seq, $3::text, $4::text, $2::text, "
    "$5::bigint FROM x WHERE NOT EXISTS (SELECT 1 FROM outcomes p "
    "WHERE p.intent_seq = x.intent_seq) "
    "ON CONFLICT (intent_seq) DO NOTHING RETURNING intent_seq) "
    "SELECT (SELECT intent_seq FROM x), (SELECT count(*) FROM o)";
static const char SQL_OUTCOME_GET[] =
    "SELECT outcome, detail FROM outcomes WHERE intent_seq = $1::bigint";

/* An outcome is recorded for seq: a repeat of it (IG_OK, *duplicate = 1,
   when the caller takes repeats) or IG_ERR_EXISTS. */
static enum ig_status
outcome_refusal(struct store_pg *s, struct store_pg_conn *c, int64_t seq,
                const struct store_outcome_rec *r)
{
    const char *detail = r->detail != NULL ? r->detail : "";
    struct store_pg_params p;
    PGresult *res;
    int same;

    store_pg_params_init(&p);
    store_pg_param_int(&p, seq);
    if (query_row(s, c, SQL_OUTCOME_GET, &p, &res) != IG_OK)
        return IG_ERR_IO;
    same = r->outcome != NULL &&
           strcmp(store_pg_text(res, 0, 0), r->outcome) == 0 &&
           strcmp(store_pg_text(res, 0, 1), detail) == 0;
    PQclear(res);
    if (same && r->duplicate != NULL) {
        *r->duplicate = 1; /* a retry of what is recorded: nothing new */
        return IG_OK;
    }
    return IG_ERR_EXISTS;
}

static enum ig_status
txn_put_outcome(struct store_pg *s, struct store_pg_conn *c, void *arg)
{
    const struct pg_write *w = arg;
    const struct store_outcome_rec *r = w->rec;
    struct store_pg_params p;
    PGresult *res;
    int64_t seq, inserted;
    int redeemed;

    if (r->duplicate != NULL)
        *r->duplicate = 0;
    store_pg_params_init(&p);
    store_pg_param_text(&p, r->intent_id);
    store_pg_param_text(&p, r->executor);
    store_pg_param_text(&p, r->outcome);
    store_pg_param_text(&p, r->detail);
    store_pg_param_int(&p, r->reported_at);
    if (query_row(s, c, SQL_OUTCOME, &p, &res) != IG_OK)
        return IG_ERR_IO;
    redeemed = !PQgetisnull(res, 0, 0);
    seq = store_pg_int(res, 0, 0);
    inserted = store_pg_int(res, 0, 1);
    PQclear(res);
    if (!redeemed)
        return IG_ERR_NOTFOUND;
    if (inserted != 1)
        return outcome_refusal(s, c, seq, r);
    return finish(s, c, r->events, r->nevents, r->intent_id);
}

enum ig_status
store_pg_put_outcome(struct store_pg *s, const struct store_outcome_rec *r)
{
    return run_sync(s, txn_put_outcome, r, NULL, r->intent_id);
}

enum ig_status
store_pg_put_outcome_async(struct store_pg *s,
                           const struct store_outcome_rec *r,
                           store_done_fn done, void *ctx)
{
    return run_async(s, txn_put_outcome, r, NULL, r->intent_id, done, ctx);
}

/* ---- audit events alone ---- */

struct events_rec {
    const char *const *ev;
    size_t n;
};

static enum ig_status
txn_events(struct store_pg *s, struct store_pg_conn *c, void *arg)
{
    const struct pg_write *w = arg;
    const struct events_rec *r = w->rec;

    return finish(s, c, r->ev, r->n, NULL);
}

enum ig_status
store_pg_put_events(struct store_pg *s, const char *const *events, size_t n)
{
    struct events_rec r;

    r.ev = events;
    r.n = n;
    return run_sync(s, txn_events, &r, NULL, NULL);
}
