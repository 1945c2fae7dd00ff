/*
 * store_read.c - read operations: idempotent replay lookup, the whole
 * record of one intent, the audit log size. Each borrows a read-only connection
 * from the pool (store_pool.c) and never waits for the writer: WAL readers see
 * the last committed state.
 */
#include "store_int.h"

#include <stdlib.h>
#include <string.h>

#include "ig_json.h"

static void
reset(sqlite3_stmt *st)
{
    (void)sqlite3_reset(st);
    (void)sqlite3_clear_bindings(st);
}

/* Borrow a read connection, run step on its statement which, reset the
   statement and give the connection back; step's status, or IG_ERR_IO
   when no connection could be had. */
static enum ig_status
with_stmt(struct store_sq *s, enum rstmt which,
          enum ig_status (*step)(sqlite3_stmt *st, void *ctx), void *ctx)
{
    struct store_rconn *c = store_rconn_get(s);
    enum ig_status rc;

    if (c == NULL)
        return IG_ERR_IO;
    rc = step(c->st[which], ctx);
    reset(c->st[which]);
    store_rconn_put(s, c);
    return rc;
}

struct idem_query {
    const char *principal, *key;
    int64_t now;
    char **replay;
};

static enum ig_status
idem_step(sqlite3_stmt *st, void *ctx)
{
    const struct idem_query *q = ctx;

    (void)sqlite3_bind_text(st, 1, q->principal, -1, SQLITE_STATIC);
    (void)sqlite3_bind_text(st, 2, q->key, -1, SQLITE_STATIC);
    (void)sqlite3_bind_int64(st, 3, q->now);
    switch (sqlite3_step(st)) {
    case SQLITE_ROW:
        *q->replay = strdup(store_sql_text(st, 0));
        return *q->replay != NULL ? IG_OK : IG_ERR_NOMEM;
    case SQLITE_DONE:
        return IG_ERR_NOTFOUND;
    default:
        return IG_ERR_IO;
    }
}

enum ig_status
store_sq_find_idempotent(struct store_sq *s, const char *principal,
                         const char *key, int64_t now, char **replay)
{
    struct idem_query q;

    q.principal = principal;
    q.key = key;
    q.now = now;
    q.replay = replay;
    return with_stmt(s, R_IDEM, idem_step, &q);
}

/* Run st (bound to intent_id) and set key on obj to what row() builds. */
static enum ig_status
add_optional(json_t *obj, const char *key, sqlite3_stmt *st,
             json_t *(*row)(sqlite3_stmt *st))
{
    enum ig_status rc = IG_OK;
    json_t *v;

    switch (sqlite3_step(st)) {
    case SQLITE_ROW:
        v = row(st);
        /* json_object_set_new steals v. */
        if (v == NULL || json_object_set_new(obj, key, v) != 0)
            rc = IG_ERR_NOMEM;
        break;
    case SQLITE_DONE:
        break;
    default:
        rc = IG_ERR_IO;
    }
    reset(st);
    return rc;
}

static json_t *
grant_row(sqlite3_stmt *st)
{
    return json_pack("{s:s, s:s, s:I, s:I, s:s}", "jti", store_sql_text(st, 0),
                     "audience", store_sql_text(st, 1), "issued_at",
                     (json_int_t)sqlite3_column_int64(st, 2), "expires_at",
                     (json_int_t)sqlite3_column_int64(st, 3), "token",
                     store_sql_text(st, 4));
}

static json_t *
redemption_row(sqlite3_stmt *st)
{
    return json_pack("{s:s, s:I}", "executor", store_sql_text(st, 0),
                     "redeemed_at", (json_int_t)sqlite3_column_int64(st, 1));
}

static json_t *
outcome_row(sqlite3_stmt *st)
{
    /* "o" steals the parsed detail. */
    return json_pack("{s:s, s:o?, s:s, s:I}", "outcome", store_sql_text(st, 0),
                     "detail", store_sql_json(st, 1), "executor",
                     store_sql_text(st, 2), "reported_at",
                     (json_int_t)sqlite3_column_int64(st, 3));
}

static json_t *
approval_row(sqlite3_stmt *st)
{
    /* "o" steals the parsed requirements. */
    return json_pack("{s:s, s:o?, s:I, s:I}", "approval_id",
                     store_sql_text(st, 0), "requirements",
                     store_sql_json(st, 1), "created_at",
                     (json_int_t)sqlite3_column_int64(st, 2), "expires_at",
                     (json_int_t)sqlite3_column_int64(st, 3));
}

static json_t *
decision_row(sqlite3_stmt *st)
{
    /* "o" steals the parsed reasons. */
    return json_pack("{s:s, s:s, s:o?, s:s, s:s, s:I}", "decision_id",
                     store_sql_text(st, 0), "decision", store_sql_text(st, 1),
                     "reasons", store_sql_json(st, 2), "message",
                     store_sql_text(st, 3), "policy_revision",
                     store_sql_text(st, 4), "decided_at",
                     (json_int_t)sqlite3_column_int64(st, 5));
}

static enum ig_status
add_decisions(json_t *obj, sqlite3_stmt *st)
{
    json_t *arr = json_array();
    enum ig_status rc;

    if (arr == NULL)
        return IG_ERR_NOMEM;
    rc = store_sql_rows(st, decision_row, arr);
    reset(st);
    /* json_object_set_new steals arr. */
    if (json_object_set_new(obj, "decisions", arr) != 0 && rc == IG_OK)
        rc = IG_ERR_NOMEM;
    return rc;
}

static json_t *
intent_row(sqlite3_stmt *st)
{
    /* Column 0 is the seq. "o" steals the parsed binding. */
    return json_pack("{s:s, s:s, s:s, s:s, s:o?, s:I, s:I}", "intent_id",
                     store_sql_text(st, 1), "principal", store_sql_text(st, 2),
                     "tenant", store_sql_text(st, 3), "intent_hash",
                     store_sql_text(st, 4), "binding", store_sql_json(st, 5),
                     "created_at", (json_int_t)sqlite3_column_int64(st, 6),
                     "expires_at", (json_int_t)sqlite3_column_int64(st, 7));
}

/* The intent row and, when full, everything recorded about it (else only
   its grant: what a redemption needs). */
static enum ig_status
read_intent(struct store_rconn *c, const char *id, int full, json_t **out)
{
    static const struct {
        enum rstmt st;
        const char *key;
        json_t *(*row)(sqlite3_stmt *st);
    } parts[] = {/* the grant first: all a redemption reads (!full) */
                 {R_GRANT, "grant", grant_row},
                 {R_REDEMPTION, "redemption", redemption_row},
                 {R_OUTCOME, "outcome", outcome_row},
                 {R_APPROVAL, "approval", approval_row}};
    sqlite3_stmt *st = c->st[R_INTENT];
    enum ig_status rc = IG_OK;
    sqlite3_int64 seq = 0;
    json_t *obj = NULL;
    size_t i;
    int step;

    (void)sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
    step = sqlite3_step(st);
    if (step == SQLITE_ROW) {
        seq = sqlite3_column_int64(st, 0);
        obj = intent_row(st);
    }
    reset(st);
    if (step != SQLITE_ROW)
        return step == SQLITE_DONE ? IG_ERR_NOTFOUND : IG_ERR_IO;
    if (obj == NULL)
        return IG_ERR_NOMEM;
    if (full) {
        (void)sqlite3_bind_int64(c->st[R_DECISIONS], 1, seq);
        rc = add_decisions(obj, c->st[R_DECISIONS]);
    }
    for (i = 0;
         rc == IG_OK && i < (full ? sizeof(parts) / sizeof(parts[0]) : 1);
         i++) {
        st = c->st[parts[i].st];
        (void)sqlite3_bind_int64(st, 1, seq);
        rc = add_optional(obj, parts[i].key, st, parts[i].row);
    }
    if (rc == IG_OK && json_object_get(obj, "approval") != NULL)
        rc = store_read_votes(c, seq, json_object_get(obj, "approval"));
    if (rc != IG_OK) {
        json_decref(obj);
        return rc;
    }
    *out = obj;
    return IG_OK;
}

enum ig_status
store_sq_get_intent(struct store_sq *s, const char *intent_id, json_t **out)
{
    /* One read transaction, so the parts agree with each other. */
    struct store_rconn *c = store_read_begin(s);
    enum ig_status rc;

    *out = NULL;
    if (c == NULL)
        return IG_ERR_IO;
    rc = read_intent(c, intent_id, 1, out);
    store_read_end(s, c);
    return rc;
}

enum ig_status
store_sq_get_grant(struct store_sq *s, const char *intent_id, json_t **out)
{
    struct store_rconn *c = store_read_begin(s);
    enum ig_status rc;

    *out = NULL;
    if (c == NULL)
        return IG_ERR_IO;
    rc = read_intent(c, intent_id, 0, out);
    store_read_end(s, c);
    return rc;
}

static enum ig_status
size_step(sqlite3_stmt *st, void *ctx)
{
    if (sqlite3_step(st) != SQLITE_ROW)
        return IG_ERR_IO;
    *(int64_t *)ctx = sqlite3_column_int64(st, 0); /* NULL (0) when empty */
    return IG_OK;
}

enum ig_status
store_sq_audit_size(struct store_sq *s, int64_t *out)
{
    return with_stmt(s, R_AUDIT_SIZE, size_step, out);
}
