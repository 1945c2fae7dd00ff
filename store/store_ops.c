/*
 * store_ops.c - the writer jobs behind each store operation (their
 * statements are prepared from store_stmt.c's texts).
 *
 * Write operations run on the writer thread inside the group-commit
 * transaction (each in its own savepoint, see store_sqlite.c); because
 * there is exactly one writer, a check followed by an insert is atomic.
 * Read operations borrow a read connection from the pool.
 */
#include "store_int.h"

#include <stdlib.h>
#include <string.h>

/* Step a write statement to completion and reset it. */
static enum ig_status
exec_stmt(sqlite3_stmt *st)
{
    int rc = sqlite3_step(st);

    (void)sqlite3_reset(st);
    (void)sqlite3_clear_bindings(st);
    if (rc == SQLITE_DONE)
        return IG_OK;
    if ((rc & 0xff) == SQLITE_CONSTRAINT)
        return IG_ERR_EXISTS;
    return IG_ERR_IO;
}

/* 1 when the query returns a row, 0 when not, -1 on error; resets. */
static int
has_row(sqlite3_stmt *st)
{
    int rc = sqlite3_step(st);

    (void)sqlite3_reset(st);
    (void)sqlite3_clear_bindings(st);
    return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -1;
}

/* The seq of intent_id: > 0, 0 when unknown, -1 on error. */
static sqlite3_int64
intent_seq(struct store_sq *s, const char *intent_id)
{
    sqlite3_stmt *st = s->wst[W_SEQ];
    sqlite3_int64 seq;
    int rc;

    store_sql_bind_text(st, 1, intent_id);
    rc = sqlite3_step(st);
    seq = rc == SQLITE_ROW    ? sqlite3_column_int64(st, 0)
          : rc == SQLITE_DONE ? 0
                              : -1;
    (void)sqlite3_reset(st);
    (void)sqlite3_clear_bindings(st);
    return seq;
}

/* ---- writer jobs ---- */

static enum ig_status
idempotent_replay(struct store_sq *s, const struct store_intent_rec *r,
                  char **replay)
{
    sqlite3_stmt *st = s->wst[W_IDEM];
    enum ig_status rc = IG_OK;

    store_sql_bind_text(st, 1, r->principal);
    store_sql_bind_text(st, 2, r->idempotency_key);
    (void)sqlite3_bind_int64(st, 3, r->created_at);
    switch (sqlite3_step(st)) {
    case SQLITE_ROW:
        *replay = strdup((const char *)sqlite3_column_text(st, 0));
        rc = *replay != NULL ? IG_ERR_EXISTS : IG_ERR_NOMEM;
        break;
    case SQLITE_DONE:
        break;
    default:
        rc = IG_ERR_IO;
    }
    (void)sqlite3_reset(st);
    (void)sqlite3_clear_bindings(st);
    return rc;
}

static enum ig_status
insert_intent_rows(struct store_sq *s, const struct store_intent_rec *r,
                   sqlite3_int64 *seq)
{
    sqlite3_stmt *st = s->wst[W_INTENT];
    enum ig_status rc;

    store_sql_bind_text(st, 1, r->intent_id);
    store_sql_bind_text(st, 2, r->principal);
    store_sql_bind_text(st, 3, r->tenant);
    store_sql_bind_text(st, 4, r->action);
    store_sql_bind_text(st, 5, r->resource);
    store_sql_bind_text(st, 6, r->intent_hash);
    store_sql_bind_text(st, 7, r->binding);
    store_sql_bind_text(st, 8, r->idempotency_key);
    (void)sqlite3_bind_int64(st, 9, r->created_at);
    (void)sqlite3_bind_int64(st, 10, r->expires_at);
    if ((rc = exec_stmt(st)) != IG_OK)
        return rc;
    *seq = sqlite3_last_insert_rowid(s->wdb);
    st = s->wst[W_DECISION];
    (void)sqlite3_bind_int64(st, 1, *seq);
    store_sql_bind_text(st, 2, r->decision_id);
    store_sql_bind_text(st, 3, r->decision);
    store_sql_bind_text(st, 4, r->reasons);
    store_sql_bind_text(st, 5, r->message);
    store_sql_bind_text(st, 6, r->policy_revision);
    (void)sqlite3_bind_int64(st, 7, r->created_at);
    return exec_stmt(st);
}

enum ig_status
store_job_put_intent(struct store_sq *s, struct store_job *j)
{
    const struct store_intent_rec *r = j->rec;
    sqlite3_int64 seq = 0;
    sqlite3_stmt *st;
    enum ig_status rc;

    if (r->idempotency_key != NULL) {
        rc = idempotent_replay(s, r, j->replay);
        if (rc != IG_OK)
            return rc;
    }
    if ((rc = insert_intent_rows(s, r, &seq)) != IG_OK)
        return rc == IG_ERR_EXISTS ? IG_ERR_IO : rc;
    if (r->grant_jti != NULL) {
        st = s->wst[W_GRANT];
        (void)sqlite3_bind_int64(st, 1, seq);
        store_sql_bind_text(st, 2, r->grant_jti);
        store_sql_bind_text(st, 3, r->decision_id);
        store_sql_bind_text(st, 4, r->grant_aud);
        (void)sqlite3_bind_int64(st, 5, r->created_at);
        (void)sqlite3_bind_int64(st, 6, r->grant_expires_at);
        store_sql_bind_text(st, 7, r->grant_token);
        if ((rc = exec_stmt(st)) != IG_OK)
            return IG_ERR_IO;
    }
    if (r->approval_id != NULL) {
        st = s->wst[W_APPROVAL];
        (void)sqlite3_bind_int64(st, 1, seq);
        store_sql_bind_text(st, 2, r->approval_id);
        store_sql_bind_text(st, 3, r->approval_requirements);
        (void)sqlite3_bind_int64(st, 4, r->created_at);
        (void)sqlite3_bind_int64(st, 5, r->approval_expires_at);
        if ((rc = exec_stmt(st)) != IG_OK)
            return IG_ERR_IO;
    }
    return store_append_events(s, r->events, r->nevents);
}

enum ig_status
store_job_redeem(struct store_sq *s, struct store_job *j)
{
    const struct store_redeem_rec *r = j->rec;
    sqlite3_int64 seq = intent_seq(s, r->intent_id);
    sqlite3_stmt *st = s->wst[W_REDEEMED];
    int n;

    if (seq <= 0)
        return seq == 0 ? IG_ERR_NOTFOUND : IG_ERR_IO;
    (void)sqlite3_bind_int64(st, 1, seq);
    n = has_row(st);
    if (n != 0)
        return n > 0 ? IG_ERR_EXISTS : IG_ERR_IO;
    st = s->wst[W_REDEEM];
    (void)sqlite3_bind_int64(st, 1, seq);
    store_sql_bind_text(st, 2, r->jti);
    store_sql_bind_text(st, 3, r->executor);
    (void)sqlite3_bind_int64(st, 4, r->redeemed_at);
    if (exec_stmt(st) != IG_OK)
        return IG_ERR_IO;
    if (sqlite3_changes(s->wdb) != 1)
        return IG_ERR_NOTFOUND;
    return store_append_events(s, r->events, r->nevents);
}

/* The outcome already recorded for seq: 0 none, 1 one that differs from
   r, 2 the same outcome and detail text, -1 on error. */
static int
recorded_outcome(struct store_sq *s, sqlite3_int64 seq,
                 const struct store_outcome_rec *r)
{
    sqlite3_stmt *st = s->wst[W_OUTCOME_GET];
    const char *detail = r->detail != NULL ? r->detail : "";
    int rc, n;

    (void)sqlite3_bind_int64(st, 1, seq);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        n = strcmp(store_sql_text(st, 0), r->outcome) == 0 &&
                    strcmp(store_sql_text(st, 1), detail) == 0
                ? 2
                : 1;
    else
        n = rc == SQLITE_DONE ? 0 : -1;
    (void)sqlite3_reset(st);
    (void)sqlite3_clear_bindings(st);
    return n;
}

enum ig_status
store_job_put_outcome(struct store_sq *s, struct store_job *j)
{
    const struct store_outcome_rec *r = j->rec;
    sqlite3_int64 seq = intent_seq(s, r->intent_id);
    sqlite3_stmt *st = s->wst[W_REDEMPTION_BY];
    int n;

    if (r->duplicate != NULL)
        *r->duplicate = 0;
    if (seq <= 0)
        return seq == 0 ? IG_ERR_NOTFOUND : IG_ERR_IO;
    (void)sqlite3_bind_int64(st, 1, seq);
    store_sql_bind_text(st, 2, r->executor);
    n = has_row(st);
    if (n <= 0)
        return n == 0 ? IG_ERR_NOTFOUND : IG_ERR_IO;
    n = recorded_outcome(s, seq, r);
    if (n == 2 && r->duplicate != NULL) {
        *r->duplicate = 1; /* a retry of what is recorded: nothing new */
        return IG_OK;
    }
    if (n != 0)
        return n > 0 ? IG_ERR_EXISTS : IG_ERR_IO;
    st = s->wst[W_OUTCOME];
    (void)sqlite3_bind_int64(st, 1, seq);
    store_sql_bind_text(st, 2, r->outcome);
    store_sql_bind_text(st, 3, r->detail);
    store_sql_bind_text(st, 4, r->executor);
    (void)sqlite3_bind_int64(st, 5, r->reported_at);
    if (exec_stmt(st) != IG_OK)
        return IG_ERR_IO;
    return store_append_events(s, r->events, r->nevents);
}

/* Add the quota hits pending since the last flush to counter_counts. On a
   rerun of the batch (store_sqlite.c) the job writes the hits it took the
   first time. */
enum ig_status
store_job_flush_hits(struct store_sq *s, struct store_job *j)
{
    sqlite3_stmt *st = s->wst[W_HITS];
    size_t i;

    if (j->hits == NULL && (j->hits = store_counter_take(s)) == NULL)
        return IG_ERR_NOMEM;
    for (i = 0; i < j->hits->n; i++) {
        store_sql_bind_text(st, 1, j->hits->p[i].key);
        (void)sqlite3_bind_int64(st, 2, j->hits->p[i].sec);
        (void)sqlite3_bind_int64(st, 3, j->hits->p[i].hits);
        if (exec_stmt(st) != IG_OK)
            return IG_ERR_IO;
    }
    return IG_OK;
}
