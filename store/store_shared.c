/*
 * store_shared.c - the state PDP replicas share (store.h: sessions, failed
 * sign-ins, Slack messages) in SQLite, and the helpers both backends use
 * to name and check it.
 *
 * These rows change all the time and record nothing that happened, so
 * they stay off the writer thread: they have a connection of their own,
 * opened at the first use (and again after a failure), used by one
 * caller at a time under sh_mu. Its statements wait for the writer's
 * group commits (busy timeout) but never queue behind intents. Writes run
 * with synchronous=NORMAL: a session's last use may be lost to a power
 * cut, a failure count only to one (WAL survives a crash of the process).
 *
 * Every rule lives in one SQL statement each (the PostgreSQL twin in
 * store_pg_shared.c says the same in its dialect): a key's failures are
 * counted, reset once forgotten, and its wait set, in one upsert.
 */
#include "store_int.h"

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ig_limits.h"

/* ---- helpers for both backends (store_be.h) ---- */

void
store_shared_hex(const unsigned char h[STORE_SESSION_HASH_BYTES],
                 char out[2 * STORE_SESSION_HASH_BYTES + 1])
{
    static const char digits[] = "0123456789abcdef";
    size_t i;

    for (i = 0; i < STORE_SESSION_HASH_BYTES; i++) {
        out[2 * i] = digits[h[i] >> 4];
        out[2 * i + 1] = digits[h[i] & 15];
    }
    out[2 * STORE_SESSION_HASH_BYTES] = '\0';
}

int64_t
store_shared_touch_every(int64_t idle)
{
    int64_t q = idle / 4;

    if (q > IG_SESSION_TOUCH_S)
        return IG_SESSION_TOUCH_S;
    return q > 0 ? q : 1;
}

int
store_login_names(const char *kind, const char *key,
                  struct store_login_names *out)
{
    size_t n = kind != NULL ? strlen(kind) : 0, i;

    if (n == 0 || n > STORE_LOGIN_KIND_MAX || key == NULL)
        return -1;
    for (i = 0; i < n; i++)
        if (kind[i] < 'a' || kind[i] > 'z')
            return -1;
    /* kind ":" key (cut), and the range [kind ":", kind ";") of its
       kind: ';' follows ':' in every collation used here (bytes). */
    (void)snprintf(out->key, sizeof(out->key), "%s:%.*s", kind,
                   (int)IG_LOGIN_LIMITER_KEY_MAX, key);
    (void)snprintf(out->lo, sizeof(out->lo), "%s:", kind);
    (void)snprintf(out->hi, sizeof(out->hi), "%s;", kind);
    return 0;
}

int
store_login_rule_ok(const struct store_login_rule *r)
{
    return r != NULL && r->max_failures >= 1 && r->window_ms >= 1 &&
           r->max_keys >= 1;
}

int
store_session_rec_ok(const struct store_session_rec *r, int64_t idle,
                     size_t max_sessions)
{
    return r != NULL && r->id_hash != NULL && r->approver != NULL &&
           r->csrf != NULL && r->approver[0] != '\0' &&
           strlen(r->approver) <= IG_ID_MAX &&
           strlen(r->csrf) <= IG_SESSION_CSRF_MAX && idle >= 1 &&
           max_sessions >= 1;
}

int
store_slack_ok(const char *intent_id, const char *channel, const char *ts)
{
    return intent_id != NULL && channel != NULL && ts != NULL &&
           intent_id[0] != '\0' && channel[0] != '\0' && ts[0] != '\0' &&
           strlen(intent_id) <= IG_INTENT_ID_MAX &&
           strlen(channel) <= IG_ID_MAX && strlen(ts) <= IG_SLACK_TS_MAX;
}

/* ---- the connection ---- */

enum shst {
    SH_SESS_PRUNE,
    SH_SESS_COUNT,
    SH_SESS_EVICT,
    SH_SESS_INSERT,
    SH_SESS_GET,
    SH_SESS_TOUCH,
    SH_SESS_END,
    SH_SESS_END_ALL,
    SH_LOGIN_CHECK,
    SH_LOGIN_EXISTS,
    SH_LOGIN_COUNT,
    SH_LOGIN_EVICT,
    SH_LOGIN_FAIL,
    SH_LOGIN_CLEAR,
    SH_SLACK_PUT,
    SH_SLACK_COUNT,
    SH_SLACK_TRIM,
    SH_SLACK_GET,
    SH_SLACK_FORGET,
    SH_COUNT
};

/* The failures a key has after one more at ?2 (window ?4): counting
   starts again once the old ones are forgotten. */
#define NEW_FAILURES                                                           \
    "(CASE WHEN ?2 >= max(wait_until_ms, last_failure_ms) + ?4 THEN 1"         \
    " ELSE min(failures + 1, 1000000) END)"

static const char *const sh_sql[SH_COUNT] = {
    [SH_SESS_PRUNE] = "DELETE FROM approver_sessions WHERE ?1 >= expires_at"
                      " OR ?1 - last_seen >= ?2",
    [SH_SESS_COUNT] = "SELECT count(*) FROM approver_sessions",
    [SH_SESS_EVICT] = "DELETE FROM approver_sessions WHERE id_hash IN"
                      " (SELECT id_hash FROM approver_sessions"
                      " ORDER BY last_seen LIMIT ?1)",
    [SH_SESS_INSERT] = "INSERT INTO approver_sessions (id_hash, approver,"
                       " csrf, created_at, last_seen, expires_at)"
                       " VALUES (?1, ?2, ?3, ?4, ?4, ?5)",
    [SH_SESS_GET] = "SELECT approver, csrf, last_seen, expires_at"
                    " FROM approver_sessions WHERE id_hash = ?1",
    [SH_SESS_TOUCH] = "UPDATE approver_sessions SET last_seen = ?2"
                      " WHERE id_hash = ?1 AND last_seen < ?2",
    [SH_SESS_END] = "DELETE FROM approver_sessions WHERE id_hash = ?1",
    [SH_SESS_END_ALL] = "DELETE FROM approver_sessions WHERE approver = ?1",
    [SH_LOGIN_CHECK] =
        "SELECT failures, max(wait_until_ms - ?2, 0) FROM login_failures"
        " WHERE key = ?1 AND ?2 < max(wait_until_ms, last_failure_ms) + ?3",
    [SH_LOGIN_EXISTS] = "SELECT 1 FROM login_failures WHERE key = ?1",
    [SH_LOGIN_COUNT] = "SELECT count(*) FROM login_failures"
                       " WHERE key >= ?1 AND key < ?2",
    /* Forgotten keys first, then the oldest last failure. */
    [SH_LOGIN_EVICT] =
        "DELETE FROM login_failures WHERE key IN (SELECT key"
        " FROM login_failures WHERE key >= ?1 AND key < ?2 ORDER BY"
        " (?3 >= max(wait_until_ms, last_failure_ms) + ?4) DESC,"
        " last_failure_ms LIMIT ?5)",
    /* ?1 key, ?2 now, ?3 max failures, ?4 window, ?5 first wait: from
       max failures on, the wait doubles per failure, at most the window
       (the shift is capped: 5000 << 30 is far past any window). */
    [SH_LOGIN_FAIL] =
        "INSERT INTO login_failures (key, failures, last_failure_ms,"
        " wait_until_ms) VALUES (?1, 1, ?2,"
        " CASE WHEN 1 >= ?3 THEN ?2 + min(?4, ?5) ELSE 0 END)"
        " ON CONFLICT (key) DO UPDATE SET failures = " NEW_FAILURES ","
        " last_failure_ms = ?2,"
        " wait_until_ms = CASE WHEN " NEW_FAILURES " >= ?3"
        " THEN ?2 + min(?4, ?5 << min(" NEW_FAILURES " - ?3, 30)) ELSE 0 END"
        " RETURNING failures",
    [SH_LOGIN_CLEAR] = "DELETE FROM login_failures WHERE key = ?1",
    [SH_SLACK_PUT] = "INSERT INTO slack_messages (intent_id, channel, ts)"
                     " VALUES (?1, ?2, ?3) ON CONFLICT (intent_id) DO UPDATE"
                     " SET channel = excluded.channel, ts = excluded.ts",
    [SH_SLACK_COUNT] = "SELECT count(*) FROM slack_messages",
    [SH_SLACK_TRIM] = "DELETE FROM slack_messages WHERE intent_id IN"
                      " (SELECT intent_id FROM slack_messages"
                      " ORDER BY ts DESC LIMIT -1 OFFSET ?1)",
    [SH_SLACK_GET] = "SELECT channel, ts FROM slack_messages"
                     " WHERE intent_id = ?1",
    [SH_SLACK_FORGET] = "DELETE FROM slack_messages WHERE intent_id = ?1",
};

void
store_sq_shared_close(struct store_sq *s)
{
    int i;

    if (s->sh_st != NULL)
        for (i = 0; i < SH_COUNT; i++)
            sqlite3_finalize(s->sh_st[i]);
    free(s->sh_st);
    s->sh_st = NULL;
    sqlite3_close(s->sh_db);
    s->sh_db = NULL;
}

/* Open the connection unless it is; under sh_mu. IG_ERR_IO. */
static enum ig_status
sh_open(struct store_sq *s)
{
    int i;

    if (s->sh_db != NULL)
        return IG_OK;
    if (store_db_open(s->path, SQLITE_OPEN_READWRITE, &s->sh_db, NULL) !=
            IG_OK ||
        sqlite3_exec(s->sh_db, "PRAGMA synchronous=NORMAL", NULL, NULL, NULL) !=
            SQLITE_OK ||
        (s->sh_st = calloc(SH_COUNT, sizeof(*s->sh_st))) == NULL)
        goto fail;
    for (i = 0; i < SH_COUNT; i++)
        if (sqlite3_prepare_v3(s->sh_db, sh_sql[i], -1,
                               SQLITE_PREPARE_PERSISTENT, &s->sh_st[i],
                               NULL) != SQLITE_OK)
            goto fail;
    return IG_OK;
fail:
    store_sq_shared_close(s);
    return IG_ERR_IO;
}

/* Take the connection: IG_OK with sh_mu held, else IG_ERR_IO (not
   held). */
static enum ig_status
sh_take(struct store_sq *s)
{
    (void)pthread_mutex_lock(&s->sh_mu);
    if (sh_open(s) == IG_OK)
        return IG_OK;
    (void)pthread_mutex_unlock(&s->sh_mu);
    return IG_ERR_IO;
}

static void
sh_give(struct store_sq *s)
{
    int i;

    for (i = 0; i < SH_COUNT; i++) {
        (void)sqlite3_reset(s->sh_st[i]);
        (void)sqlite3_clear_bindings(s->sh_st[i]);
    }
    if (!sqlite3_get_autocommit(s->sh_db))
        (void)sqlite3_exec(s->sh_db, "ROLLBACK", NULL, NULL, NULL);
    (void)pthread_mutex_unlock(&s->sh_mu);
}

static enum ig_status
sh_exec(struct store_sq *s, const char *sql)
{
    return sqlite3_exec(s->sh_db, sql, NULL, NULL, NULL) == SQLITE_OK
               ? IG_OK
               : IG_ERR_IO;
}

static sqlite3_stmt *
st(struct store_sq *s, enum shst which)
{
    (void)sqlite3_reset(s->sh_st[which]);
    return s->sh_st[which];
}

static int
bind_text(sqlite3_stmt *q, int i, const char *v)
{
    return sqlite3_bind_text(q, i, v, -1, SQLITE_STATIC) == SQLITE_OK ? 0 : -1;
}

static int
bind_int(sqlite3_stmt *q, int i, int64_t v)
{
    return sqlite3_bind_int64(q, i, v) == SQLITE_OK ? 0 : -1;
}

/* Step q to its end (a statement without rows to read). */
static enum ig_status
done(sqlite3_stmt *q)
{
    int rc = sqlite3_step(q);

    (void)sqlite3_reset(q);
    return rc == SQLITE_DONE ? IG_OK : IG_ERR_IO;
}

/* The one integer a count query answers; -1 on failure. */
static int64_t
one_int(sqlite3_stmt *q)
{
    int64_t v = sqlite3_step(q) == SQLITE_ROW ? sqlite3_column_int64(q, 0) : -1;

    (void)sqlite3_reset(q);
    return v;
}

/* Copy column c of q's row into out (cap bytes, NUL included). */
static int
col_copy(sqlite3_stmt *q, int c, char *out, size_t cap)
{
    const unsigned char *v = sqlite3_column_text(q, c);
    size_t n = (size_t)sqlite3_column_bytes(q, c);

    if (v == NULL || n >= cap)
        return -1;
    memcpy(out, v, n + 1);
    return 0;
}

/* ---- sessions ---- */

enum ig_status
store_sq_session_create(struct store_sq *s, const struct store_session_rec *r,
                        int64_t idle, size_t max_sessions)
{
    char hex[2 * STORE_SESSION_HASH_BYTES + 1];
    sqlite3_stmt *q;
    enum ig_status rc = IG_ERR_IO;
    int64_t n;
    int step;

    if (!store_session_rec_ok(r, idle, max_sessions))
        return IG_ERR_INVALID;
    store_shared_hex(r->id_hash, hex);
    if (sh_take(s) != IG_OK)
        return IG_ERR_IO;
    if (sh_exec(s, "BEGIN IMMEDIATE") != IG_OK)
        goto out;
    q = st(s, SH_SESS_PRUNE);
    if (bind_int(q, 1, r->created_at) || bind_int(q, 2, idle) ||
        done(q) != IG_OK)
        goto out;
    if ((n = one_int(st(s, SH_SESS_COUNT))) < 0)
        goto out;
    if ((size_t)n >= max_sessions) { /* the least recently seen go */
        q = st(s, SH_SESS_EVICT);
        if (bind_int(q, 1, n - (int64_t)max_sessions + 1) || done(q) != IG_OK)
            goto out;
    }
    q = st(s, SH_SESS_INSERT);
    if (bind_text(q, 1, hex) || bind_text(q, 2, r->approver) ||
        bind_text(q, 3, r->csrf) || bind_int(q, 4, r->created_at) ||
        bind_int(q, 5, r->expires_at))
        goto out;
    step = sqlite3_step(q);
    (void)sqlite3_reset(q);
    if (step == SQLITE_CONSTRAINT_PRIMARYKEY) {
        rc = IG_ERR_EXISTS;
        goto out;
    }
    if (step == SQLITE_DONE && sh_exec(s, "COMMIT") == IG_OK)
        rc = IG_OK;
out:
    sh_give(s);
    return rc;
}

enum ig_status
store_sq_session_get(struct store_sq *s, const unsigned char *id_hash,
                     int64_t now, int64_t idle, char *approver, char *csrf)
{
    char hex[2 * STORE_SESSION_HASH_BYTES + 1];
    char who[IG_ID_MAX + 1], token[IG_SESSION_CSRF_MAX + 1];
    sqlite3_stmt *q;
    enum ig_status rc = IG_ERR_IO;
    int64_t last, expires;
    int step;

    store_shared_hex(id_hash, hex);
    if (sh_take(s) != IG_OK)
        return IG_ERR_IO;
    q = st(s, SH_SESS_GET);
    if (bind_text(q, 1, hex))
        goto out;
    step = sqlite3_step(q);
    if (step == SQLITE_DONE) {
        rc = IG_ERR_NOTFOUND;
        goto out;
    }
    if (step != SQLITE_ROW || col_copy(q, 0, who, sizeof(who)) ||
        col_copy(q, 1, token, sizeof(token)))
        goto out;
    last = sqlite3_column_int64(q, 2);
    expires = sqlite3_column_int64(q, 3);
    (void)sqlite3_reset(q);
    if (now >= expires || now - last >= idle) { /* dead: forget it */
        q = st(s, SH_SESS_END);
        if (bind_text(q, 1, hex) == 0 && done(q) == IG_OK)
            rc = IG_ERR_NOTFOUND;
        goto out;
    }
    if (now - last >= store_shared_touch_every(idle)) {
        q = st(s, SH_SESS_TOUCH);
        if (bind_text(q, 1, hex) || bind_int(q, 2, now) || done(q) != IG_OK)
            goto out;
    }
    memcpy(approver, who, strlen(who) + 1);
    if (csrf != NULL)
        memcpy(csrf, token, strlen(token) + 1);
    rc = IG_OK;
out:
    sodium_memzero(token, sizeof(token));
    sh_give(s);
    return rc;
}

/* Run one statement of a text parameter. */
static enum ig_status
run_text(struct store_sq *s, enum shst which, const char *v)
{
    enum ig_status rc = IG_ERR_IO;
    sqlite3_stmt *q;

    if (sh_take(s) != IG_OK)
        return IG_ERR_IO;
    q = st(s, which);
    if (bind_text(q, 1, v) == 0)
        rc = done(q);
    sh_give(s);
    return rc;
}

enum ig_status
store_sq_session_end(struct store_sq *s, const unsigned char *id_hash)
{
    char hex[2 * STORE_SESSION_HASH_BYTES + 1];

    store_shared_hex(id_hash, hex);
    return run_text(s, SH_SESS_END, hex);
}

enum ig_status
store_sq_session_end_all(struct store_sq *s, const char *approver)
{
    if (approver == NULL)
        return IG_ERR_INVALID;
    return run_text(s, SH_SESS_END_ALL, approver);
}

/* ---- failed sign-ins ---- */

enum ig_status
store_sq_login_check(struct store_sq *s, const char *kind, const char *key,
                     int64_t now_ms, const struct store_login_rule *rule,
                     int *failures, int64_t *wait_ms)
{
    struct store_login_names k;
    enum ig_status rc = IG_ERR_IO;
    sqlite3_stmt *q;
    int step;

    *failures = 0;
    *wait_ms = 0;
    if (store_login_names(kind, key, &k) != 0 || !store_login_rule_ok(rule))
        return IG_ERR_INVALID;
    if (sh_take(s) != IG_OK)
        return IG_ERR_IO;
    q = st(s, SH_LOGIN_CHECK);
    if (bind_text(q, 1, k.key) || bind_int(q, 2, now_ms) ||
        bind_int(q, 3, rule->window_ms))
        goto out;
    step = sqlite3_step(q);
    if (step == SQLITE_ROW) {
        *failures = sqlite3_column_int(q, 0);
        *wait_ms = sqlite3_column_int64(q, 1);
    }
    if (step == SQLITE_ROW || step == SQLITE_DONE)
        rc = IG_OK;
out:
    sh_give(s);
    return rc;
}

/* Make room for a new key in k's kind; in the transaction. */
static enum ig_status
login_room(struct store_sq *s, const struct store_login_names *k,
           int64_t now_ms, const struct store_login_rule *rule)
{
    sqlite3_stmt *q = st(s, SH_LOGIN_EXISTS);
    int64_t n;
    int step;

    if (bind_text(q, 1, k->key))
        return IG_ERR_IO;
    step = sqlite3_step(q);
    (void)sqlite3_reset(q);
    if (step == SQLITE_ROW)
        return IG_OK; /* not new */
    if (step != SQLITE_DONE)
        return IG_ERR_IO;
    q = st(s, SH_LOGIN_COUNT);
    if (bind_text(q, 1, k->lo) || bind_text(q, 2, k->hi) ||
        (n = one_int(q)) < 0)
        return IG_ERR_IO;
    if ((size_t)n < rule->max_keys)
        return IG_OK;
    q = st(s, SH_LOGIN_EVICT);
    if (bind_text(q, 1, k->lo) || bind_text(q, 2, k->hi) ||
        bind_int(q, 3, now_ms) || bind_int(q, 4, rule->window_ms) ||
        bind_int(q, 5, n - (int64_t)rule->max_keys + 1))
        return IG_ERR_IO;
    return done(q);
}

enum ig_status
store_sq_login_fail(struct store_sq *s, const char *kind, const char *key,
                    int64_t now_ms, const struct store_login_rule *rule,
                    int *failures)
{
    struct store_login_names k;
    enum ig_status rc = IG_ERR_IO;
    sqlite3_stmt *q;
    int n = 0;

    if (store_login_names(kind, key, &k) != 0 || !store_login_rule_ok(rule))
        return IG_ERR_INVALID;
    if (sh_take(s) != IG_OK)
        return IG_ERR_IO;
    if (sh_exec(s, "BEGIN IMMEDIATE") != IG_OK ||
        login_room(s, &k, now_ms, rule) != IG_OK)
        goto out;
    q = st(s, SH_LOGIN_FAIL);
    if (bind_text(q, 1, k.key) || bind_int(q, 2, now_ms) ||
        bind_int(q, 3, rule->max_failures) || bind_int(q, 4, rule->window_ms) ||
        bind_int(q, 5, IG_LOGIN_BACKOFF_FIRST_MS) ||
        sqlite3_step(q) != SQLITE_ROW)
        goto out;
    n = sqlite3_column_int(q, 0);
    if (sqlite3_step(q) == SQLITE_DONE && sh_exec(s, "COMMIT") == IG_OK)
        rc = IG_OK;
out:
    sh_give(s);
    if (rc == IG_OK && failures != NULL)
        *failures = n;
    return rc;
}

enum ig_status
store_sq_login_clear(struct store_sq *s, const char *kind, const char *key)
{
    struct store_login_names k;

    if (store_login_names(kind, key, &k) != 0)
        return IG_ERR_INVALID;
    return run_text(s, SH_LOGIN_CLEAR, k.key);
}

/* ---- Slack messages ---- */

enum ig_status
store_sq_slack_put(struct store_sq *s, const char *intent_id,
                   const char *channel, const char *ts)
{
    enum ig_status rc = IG_ERR_IO;
    sqlite3_stmt *q;
    int64_t n;

    if (!store_slack_ok(intent_id, channel, ts))
        return IG_ERR_INVALID;
    if (sh_take(s) != IG_OK)
        return IG_ERR_IO;
    if (sh_exec(s, "BEGIN IMMEDIATE") != IG_OK)
        goto out;
    q = st(s, SH_SLACK_PUT);
    if (bind_text(q, 1, intent_id) || bind_text(q, 2, channel) ||
        bind_text(q, 3, ts) || done(q) != IG_OK)
        goto out;
    if ((n = one_int(st(s, SH_SLACK_COUNT))) < 0)
        goto out;
    q = st(s, SH_SLACK_TRIM); /* only when over: it sorts them all */
    if (n > IG_SLACK_MESSAGES_MAX &&
        (bind_int(q, 1, IG_SLACK_MESSAGES_MAX) || done(q) != IG_OK))
        goto out;
    rc = sh_exec(s, "COMMIT");
out:
    sh_give(s);
    return rc;
}

enum ig_status
store_sq_slack_get(struct store_sq *s, const char *intent_id, char *channel,
                   char *ts)
{
    enum ig_status rc = IG_ERR_IO;
    sqlite3_stmt *q;
    int step;

    if (intent_id == NULL)
        return IG_ERR_INVALID;
    if (sh_take(s) != IG_OK)
        return IG_ERR_IO;
    q = st(s, SH_SLACK_GET);
    if (bind_text(q, 1, intent_id))
        goto out;
    step = sqlite3_step(q);
    if (step == SQLITE_DONE)
        rc = IG_ERR_NOTFOUND;
    else if (step == SQLITE_ROW &&
             col_copy(q, 0, channel, IG_ID_MAX + 1) == 0 &&
             col_copy(q, 1, ts, IG_SLACK_TS_MAX + 1) == 0)
        rc = IG_OK;
out:
    sh_give(s);
    return rc;
}

enum ig_status
store_sq_slack_forget(struct store_sq *s, const char *intent_id)
{
    if (intent_id == NULL)
        return IG_ERR_INVALID;
    return run_text(s, SH_SLACK_FORGET, intent_id);
}
