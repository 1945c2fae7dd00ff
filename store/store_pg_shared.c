/*
 * store_pg_shared.c - the state PDP replicas share (store.h: sessions,
 * failed sign-ins, Slack messages) on PostgreSQL, and the vote lock.
 *
 * The same rules as store_shared.c (SQLite), in PostgreSQL's dialect; the
 * cases of tests/unit/shared_cases.c run on both. A key's failures are
 * counted in one INSERT .. ON CONFLICT DO UPDATE .. RETURNING: the
 * conflict's row lock makes concurrent failures on several replicas add
 * up, none lost. Key ranges of a kind are matched with starts_with(), not
 * a range, since a database collation other than "C" may ignore the
 * punctuation a range would rely on.
 *
 * The vote lock is a session advisory lock (STORE_PG_LOCK_VOTES) taken
 * on a pooled connection that is kept (s->vote_conn) until the unlock;
 * store.c's mutex lets one thread of this replica at a time get here, so
 * a replica holds at most one connection for it. A lock not taken within
 * the statement timeout is IG_ERR_IO: the vote is refused. A connection
 * whose unlock fails is closed, which releases the lock on the server.
 */
#include "store_pg_int.h"

#include <stdlib.h>
#include <string.h>

#include "ig_limits.h"

/* ---- statements ---- */

static const char SQL_SESS_PRUNE[] =
    "DELETE FROM approver_sessions WHERE $1::bigint >= expires_at"
    " OR $1::bigint - last_seen >= $2::bigint";
static const char SQL_SESS_COUNT[] = "SELECT count(*) FROM approver_sessions";
static const char SQL_SESS_EVICT[] =
    "DELETE FROM approver_sessions WHERE id_hash IN (SELECT id_hash"
    " FROM approver_sessions ORDER BY last_seen LIMIT $1::bigint)";
static const char SQL_SESS_INSERT[] =
    "INSERT INTO approver_sessions (id_hash, approver, csrf, created_at,"
    " last_seen, expires_at) VALUES ($1, $2, $3, $4::bigint, $4::bigint,"
    " $5::bigint)";
static const char SQL_SESS_GET[] =
    "SELECT approver, csrf, last_seen, expires_at FROM approver_sessions"
    " WHERE id_hash = $1";
static const char SQL_SESS_TOUCH[] =
    "UPDATE approver_sessions SET last_seen = $2::bigint"
    " WHERE id_hash = $1 AND last_seen < $2::bigint";
static const char SQL_SESS_END[] =
    "DELETE FROM approver_sessions WHERE id_hash = $1";
static const char SQL_SESS_END_ALL[] =
    "DELETE FROM approver_sessions WHERE approver = $1";

static const char SQL_LOGIN_CHECK[] =
    "SELECT failures, GREATEST(wait_until_ms - $2::bigint, 0)"
    " FROM login_failures WHERE key = $1 AND $2::bigint <"
    " GREATEST(wait_until_ms, last_failure_ms) + $3::bigint";
static const char SQL_LOGIN_EXISTS[] =
    "SELECT 1 FROM login_failures WHERE key = $1";
static const char SQL_LOGIN_COUNT[] =
    "SELECT count(*) FROM login_failures WHERE starts_with(key, $1)";
/* Forgotten keys first, then the oldest last failure. */
static const char SQL_LOGIN_EVICT[] =
    "DELETE FROM login_failures WHERE key IN (SELECT key FROM login_failures"
    " WHERE starts_with(key, $1) ORDER BY ($2::bigint >="
    " GREATEST(wait_until_ms, last_failure_ms) + $3::bigint) DESC,"
    " last_failure_ms LIMIT $4::bigint)";
/* The failures a key has after one more at $2 (window $4): counting
   starts again once the old ones are forgotten. */
#define NEW_FAILURES                                                           \
    "(CASE WHEN $2::bigint >= GREATEST(f.wait_until_ms, f.last_failure_ms)"    \
    " + $4::bigint THEN 1 ELSE LEAST(f.failures + 1, 1000000) END)"
/* $1 key, $2 now, $3 max failures, $4 window, $5 first wait: from max
   failures on, the wait doubles per failure, at most the window (the
   shift is capped: 5000 << 30 is far past any window). */
static const char SQL_LOGIN_FAIL[] =
    "INSERT INTO login_failures AS f (key, failures, last_failure_ms,"
    " wait_until_ms) VALUES ($1, 1, $2::bigint, CASE WHEN 1 >= $3::int"
    " THEN $2::bigint + LEAST($4::bigint, $5::bigint) ELSE 0 END)"
    " ON CONFLICT (key) DO UPDATE SET failures = " NEW_FAILURES ","
    " last_failure_ms = $2::bigint,"
    " wait_until_ms = CASE WHEN " NEW_FAILURES " >= $3::int"
    " THEN $2::bigint + LEAST($4::bigint, $5::bigint * (1::bigint <<"
    " LEAST(" NEW_FAILURES " - $3::int, 30))) ELSE 0 END"
    " RETURNING failures";
static const char SQL_LOGIN_CLEAR[] =
    "DELETE FROM login_failures WHERE key = $1";

static const char SQL_SLACK_PUT[] =
    "INSERT INTO slack_messages (intent_id, channel, ts) VALUES ($1, $2, $3)"
    " ON CONFLICT (intent_id) DO UPDATE SET channel = EXCLUDED.channel,"
    " ts = EXCLUDED.ts";
static const char SQL_SLACK_COUNT[] = "SELECT count(*) FROM slack_messages";
static const char SQL_SLACK_TRIM[] =
    "DELETE FROM slack_messages WHERE intent_id IN (SELECT intent_id"
    " FROM slack_messages ORDER BY ts COLLATE \"C\" DESC OFFSET $1::bigint)";
static const char SQL_SLACK_GET[] =
    "SELECT channel, ts FROM slack_messages WHERE intent_id = $1";
static const char SQL_SLACK_FORGET[] =
    "DELETE FROM slack_messages WHERE intent_id = $1";

static const char SQL_VOTE_LOCK[] = "SELECT pg_advisory_lock($1::bigint)";
static const char SQL_VOTE_UNLOCK[] = "SELECT pg_advisory_unlock($1::bigint)";

/* ---- helpers ---- */

/* Run one statement on a pooled connection; *out (may be NULL: then
   cleared here) gets its result. IG_ERR_IO. */
static enum ig_status
run(struct store_pg *s, const char *sql, const struct store_pg_params *p,
    PGresult **out)
{
    struct ig_err err;
    struct store_pg_conn *c = store_pg_conn_get(s, &err);
    PGresult *r;

    if (out != NULL)
        *out = NULL;
    if (c == NULL) {
        store_pg_log(s, "warn", "store.pg_unavailable",
                     json_pack("{s:s}", "message", err.msg));
        return IG_ERR_IO;
    }
    r = store_pg_query(s, c, sql, p, NULL, NULL);
    store_pg_conn_put(s, c);
    if (r == NULL)
        return IG_ERR_IO;
    if (out != NULL)
        *out = r;
    else
        PQclear(r);
    return IG_OK;
}

/* A count query's one number, or -1. */
static int64_t
count_of(struct store_pg *s, struct store_pg_conn *c, const char *sql,
         const struct store_pg_params *p)
{
    PGresult *r = store_pg_query(s, c, sql, p, NULL, NULL);
    int64_t n = r != NULL && PQntuples(r) == 1 ? store_pg_int(r, 0, 0) : -1;

    PQclear(r);
    return n;
}

/* Copy a text column into out (cap bytes, NUL included). */
static int
col_copy(const PGresult *r, int col, char *out, size_t cap)
{
    const char *v = store_pg_text(r, 0, col);
    size_t n = strlen(v);

    if (n >= cap)
        return -1;
    memcpy(out, v, n + 1);
    return 0;
}

/* ---- sessions ---- */

struct sess_create {
    const struct store_session_rec *r;
    const char *hex;
    int64_t idle;
    size_t max;
};

static enum ig_status
sess_create_txn(struct store_pg *s, struct store_pg_conn *c, void *arg)
{
    struct sess_create *a = arg;
    struct store_pg_params p;
    char state[6];
    PGresult *r;
    int64_t n;

    store_pg_params_init(&p);
    store_pg_param_int(&p, a->r->created_at);
    store_pg_param_int(&p, a->idle);
    if (store_pg_exec(s, c, SQL_SESS_PRUNE, &p) != IG_OK ||
        (n = count_of(s, c, SQL_SESS_COUNT, NULL)) < 0)
        return IG_ERR_IO;
    if ((size_t)n >= a->max) { /* the least recently seen go */
        store_pg_params_init(&p);
        store_pg_param_int(&p, n - (int64_t)a->max + 1);
        if (store_pg_exec(s, c, SQL_SESS_EVICT, &p) != IG_OK)
            return IG_ERR_IO;
    }
    store_pg_params_init(&p);
    store_pg_param_text(&p, a->hex);
    store_pg_param_text(&p, a->r->approver);
    store_pg_param_text(&p, a->r->csrf);
    store_pg_param_int(&p, a->r->created_at);
    store_pg_param_int(&p, a->r->expires_at);
    r = store_pg_query(s, c, SQL_SESS_INSERT, &p, state, "23505");
    if (r == NULL)
        return strcmp(state, "23505") == 0 ? IG_ERR_EXISTS : IG_ERR_IO;
    PQclear(r);
    return IG_OK;
}

enum ig_status
store_pg_session_create(struct store_pg *s, const struct store_session_rec *r,
                        int64_t idle, size_t max_sessions)
{
    char hex[2 * STORE_SESSION_HASH_BYTES + 1];
    struct sess_create a;

    if (!store_session_rec_ok(r, idle, max_sessions))
        return IG_ERR_INVALID;
    store_shared_hex(r->id_hash, hex);
    a.r = r;
    a.hex = hex;
    a.idle = idle;
    a.max = max_sessions;
    return store_pg_txn(s, sess_create_txn, &a);
}

enum ig_status
store_pg_session_get(struct store_pg *s, const unsigned char *id_hash,
                     int64_t now, int64_t idle, char *approver, char *csrf)
{
    char hex[2 * STORE_SESSION_HASH_BYTES + 1];
    char who[IG_ID_MAX + 1], token[IG_SESSION_CSRF_MAX + 1];
    struct store_pg_params p;
    enum ig_status st = IG_ERR_IO;
    PGresult *r = NULL;
    int64_t last, expires;

    store_shared_hex(id_hash, hex);
    store_pg_params_init(&p);
    store_pg_param_text(&p, hex);
    if (run(s, SQL_SESS_GET, &p, &r) != IG_OK)
        return IG_ERR_IO;
    if (PQntuples(r) == 0) {
        PQclear(r);
        return IG_ERR_NOTFOUND;
    }
    if (col_copy(r, 0, who, sizeof(who)) ||
        col_copy(r, 1, token, sizeof(token)))
        goto out;
    last = store_pg_int(r, 0, 2);
    expires = store_pg_int(r, 0, 3);
    if (now >= expires || now - last >= idle) { /* dead: forget it */
        if (run(s, SQL_SESS_END, &p, NULL) == IG_OK)
            st = IG_ERR_NOTFOUND;
        goto out;
    }
    if (now - last >= store_shared_touch_every(idle)) {
        store_pg_param_int(&p, now);
        if (run(s, SQL_SESS_TOUCH, &p, NULL) != IG_OK)
            goto out;
    }
    memcpy(approver, who, strlen(who) + 1);
    if (csrf != NULL)
        memcpy(csrf, token, strlen(token) + 1);
    st = IG_OK;
out:
    memset(token, 0, sizeof(token));
    PQclear(r);
    return st;
}

enum ig_status
store_pg_session_end(struct store_pg *s, const unsigned char *id_hash)
{
    char hex[2 * STORE_SESSION_HASH_BYTES + 1];
    struct store_pg_params p;

    store_shared_hex(id_hash, hex);
    store_pg_params_init(&p);
    store_pg_param_text(&p, hex);
    return run(s, SQL_SESS_END, &p, NULL);
}

enum ig_status
store_pg_session_end_all(struct store_pg *s, const char *approver)
{
    struct store_pg_params p;

    if (approver == NULL)
        return IG_ERR_INVALID;
    store_pg_params_init(&p);
    store_pg_param_text(&p, approver);
    return run(s, SQL_SESS_END_ALL, &p, NULL);
}

/* ---- failed sign-ins ---- */

enum ig_status
store_pg_login_check(struct store_pg *s, const char *kind, const char *key,
                     int64_t now_ms, const struct store_login_rule *rule,
                     int *failures, int64_t *wait_ms)
{
    struct store_login_names k;
    struct store_pg_params p;
    PGresult *r;

    *failures = 0;
    *wait_ms = 0;
    if (store_login_names(kind, key, &k) != 0 || !store_login_rule_ok(rule))
        return IG_ERR_INVALID;
    store_pg_params_init(&p);
    store_pg_param_text(&p, k.key);
    store_pg_param_int(&p, now_ms);
    store_pg_param_int(&p, rule->window_ms);
    if (run(s, SQL_LOGIN_CHECK, &p, &r) != IG_OK)
        return IG_ERR_IO;
    if (PQntuples(r) == 1) {
        *failures = (int)store_pg_int(r, 0, 0);
        *wait_ms = store_pg_int(r, 0, 1);
    }
    PQclear(r);
    return IG_OK;
}

struct login_fail {
    const struct store_login_names *k;
    int64_t now;
    const struct store_login_rule *rule;
    int failures;
};

/* Make room for a new key in its kind; in the transaction. */
static enum ig_status
login_room(struct store_pg *s, struct store_pg_conn *c,
           const struct login_fail *a)
{
    struct store_pg_params p;
    PGresult *r;
    int64_t n;
    int found;

    store_pg_params_init(&p);
    store_pg_param_text(&p, a->k->key);
    if ((r = store_pg_query(s, c, SQL_LOGIN_EXISTS, &p, NULL, NULL)) == NULL)
        return IG_ERR_IO;
    found = PQntuples(r) > 0;
    PQclear(r);
    if (found)
        return IG_OK;
    store_pg_params_init(&p);
    store_pg_param_text(&p, a->k->lo);
    if ((n = count_of(s, c, SQL_LOGIN_COUNT, &p)) < 0)
        return IG_ERR_IO;
    if ((size_t)n < a->rule->max_keys)
        return IG_OK;
    store_pg_param_int(&p, a->now);
    store_pg_param_int(&p, a->rule->window_ms);
    store_pg_param_int(&p, n - (int64_t)a->rule->max_keys + 1);
    return store_pg_exec(s, c, SQL_LOGIN_EVICT, &p);
}

static enum ig_status
login_fail_txn(struct store_pg *s, struct store_pg_conn *c, void *arg)
{
    struct login_fail *a = arg;
    struct store_pg_params p;
    PGresult *r;

    if (login_room(s, c, a) != IG_OK)
        return IG_ERR_IO;
    store_pg_params_init(&p);
    store_pg_param_text(&p, a->k->key);
    store_pg_param_int(&p, a->now);
    store_pg_param_int(&p, a->rule->max_failures);
    store_pg_param_int(&p, a->rule->window_ms);
    store_pg_param_int(&p, IG_LOGIN_BACKOFF_FIRST_MS);
    r = store_pg_query(s, c, SQL_LOGIN_FAIL, &p, NULL, NULL);
    if (r == NULL || PQntuples(r) != 1) {
        PQclear(r);
        return IG_ERR_IO;
    }
    a->failures = (int)store_pg_int(r, 0, 0);
    PQclear(r);
    return IG_OK;
}

enum ig_status
store_pg_login_fail(struct store_pg *s, const char *kind, const char *key,
                    int64_t now_ms, const struct store_login_rule *rule,
                    int *failures)
{
    struct store_login_names k;
    struct login_fail a;
    enum ig_status st;

    if (store_login_names(kind, key, &k) != 0 || !store_login_rule_ok(rule))
        return IG_ERR_INVALID;
    a.k = &k;
    a.now = now_ms;
    a.rule = rule;
    a.failures = 0;
    st = store_pg_txn(s, login_fail_txn, &a);
    if (st == IG_OK && failures != NULL)
        *failures = a.failures;
    return st;
}

enum ig_status
store_pg_login_clear(struct store_pg *s, const char *kind, const char *key)
{
    struct store_login_names k;
    struct store_pg_params p;

    if (store_login_names(kind, key, &k) != 0)
        return IG_ERR_INVALID;
    store_pg_params_init(&p);
    store_pg_param_text(&p, k.key);
    return run(s, SQL_LOGIN_CLEAR, &p, NULL);
}

/* ---- Slack messages ---- */

struct slack_put {
    const char *intent_id, *channel, *ts;
};

static enum ig_status
slack_put_txn(struct store_pg *s, struct store_pg_conn *c, void *arg)
{
    struct slack_put *a = arg;
    struct store_pg_params p;
    int64_t n;

    store_pg_params_init(&p);
    store_pg_param_text(&p, a->intent_id);
    store_pg_param_text(&p, a->channel);
    store_pg_param_text(&p, a->ts);
    if (store_pg_exec(s, c, SQL_SLACK_PUT, &p) != IG_OK ||
        (n = count_of(s, c, SQL_SLACK_COUNT, NULL)) < 0)
        return IG_ERR_IO;
    if (n <= IG_SLACK_MESSAGES_MAX) /* the trim sorts them all */
        return IG_OK;
    store_pg_params_init(&p);
    store_pg_param_int(&p, IG_SLACK_MESSAGES_MAX);
    return store_pg_exec(s, c, SQL_SLACK_TRIM, &p);
}

enum ig_status
store_pg_slack_put(struct store_pg *s, const char *intent_id,
                   const char *channel, const char *ts)
{
    struct slack_put a;

    if (!store_slack_ok(intent_id, channel, ts))
        return IG_ERR_INVALID;
    a.intent_id = intent_id;
    a.channel = channel;
    a.ts = ts;
    return store_pg_txn(s, slack_put_txn, &a);
}

enum ig_status
store_pg_slack_get(struct store_pg *s, const char *intent_id, char *channel,
                   char *ts)
{
    struct store_pg_params p;
    enum ig_status st = IG_ERR_IO;
    PGresult *r;

    if (intent_id == NULL)
        return IG_ERR_INVALID;
    store_pg_params_init(&p);
    store_pg_param_text(&p, intent_id);
    if (run(s, SQL_SLACK_GET, &p, &r) != IG_OK)
        return IG_ERR_IO;
    if (PQntuples(r) == 0)
        st = IG_ERR_NOTFOUND;
    else if (col_copy(r, 0, channel, IG_ID_MAX + 1) == 0 &&
             col_copy(r, 1, ts, IG_SLACK_TS_MAX + 1) == 0)
        st = IG_OK;
    PQclear(r);
    return st;
}

enum ig_status
store_pg_slack_forget(struct store_pg *s, const char *intent_id)
{
    struct store_pg_params p;

    if (intent_id == NULL)
        return IG_ERR_INVALID;
    store_pg_params_init(&p);
    store_pg_param_text(&p, intent_id);
    return run(s, SQL_SLACK_FORGET, &p, NULL);
}

/* ---- the vote lock ---- */

enum ig_status
store_pg_vote_lock(struct store_pg *s)
{
    struct store_pg_params p;
    struct ig_err err;
    struct store_pg_conn *c = store_pg_conn_get(s, &err);
    PGresult *r;

    if (c == NULL) {
        store_pg_log(s, "warn", "store.pg_unavailable",
                     json_pack("{s:s}", "message", err.msg));
        return IG_ERR_IO;
    }
    store_pg_params_init(&p);
    store_pg_param_int(&p, STORE_PG_LOCK_VOTES);
    r = store_pg_query(s, c, SQL_VOTE_LOCK, &p, NULL, NULL);
    if (r == NULL) { /* logged; not held */
        store_pg_conn_put(s, c);
        return IG_ERR_IO;
    }
    PQclear(r);
    s->vote_conn = c;
    return IG_OK;
}

void
store_pg_vote_unlock(struct store_pg *s)
{
    struct store_pg_conn *c = s->vote_conn;
    struct store_pg_params p;
    PGresult *r;
    int released;

    if (c == NULL)
        return;
    s->vote_conn = NULL;
    store_pg_params_init(&p);
    store_pg_param_int(&p, STORE_PG_LOCK_VOTES);
    r = store_pg_query(s, c, SQL_VOTE_UNLOCK, &p, NULL, NULL);
    released = r != NULL && PQntuples(r) == 1 &&
               strcmp(store_pg_text(r, 0, 0), "t") == 0;
    PQclear(r);
    if (!released) {
        /* Closing the session releases its advisory locks for sure. */
        store_pg_log(s, "warn", "store.pg_vote_unlock_failed",
                     json_pack("{s:s}", "message",
                               "closing the vote lock's connection"));
        PQfinish(c->pg);
        c->pg = NULL;
        c->bad = 1;
    }
    store_pg_conn_put(s, c);
}
