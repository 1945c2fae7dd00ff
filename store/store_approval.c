/*
 * store_approval.c - the SQL of votes, resolutions and audit-only
 * writes, and the reads the approval pages need.
 *
 * These run far less often than intake and redemption, so statements are
 * prepared per call instead of being cached on the connections. A vote job
 * runs on the single writer thread: checking "not voted, not resolved" and
 * inserting is atomic, and the UNIQUE / PRIMARY KEY constraints back it up.
 */
#include "store_int.h"

#include <stdlib.h>
#include <string.h>

#include "ig_json.h"

/* Prepare sql on db into *st: SQLITE_OK or SQLITE_ERROR. */
static int
run(sqlite3 *db, const char *sql, sqlite3_stmt **st)
{
    *st = NULL;
    return sqlite3_prepare_v2(db, sql, -1, st, NULL) == SQLITE_OK
               ? SQLITE_OK
               : SQLITE_ERROR;
}

static enum ig_status
step_done(sqlite3_stmt *st)
{
    int rc = sqlite3_step(st);

    sqlite3_finalize(st);
    if (rc == SQLITE_DONE)
        return IG_OK;
    return (rc & 0xff) == SQLITE_CONSTRAINT ? IG_ERR_EXISTS : IG_ERR_IO;
}

/* seq of the intent holding an approval; 0 none, -1 error. */
static sqlite3_int64
approval_seq(sqlite3 *db, const char *intent_id)
{
    sqlite3_stmt *st;
    sqlite3_int64 seq = -1;
    int rc;

    if (run(db,
            "SELECT a.intent_seq FROM approvals a JOIN intents i ON "
            "i.seq = a.intent_seq WHERE i.intent_id = ?1",
            &st) != SQLITE_OK)
        return -1;
    store_sql_bind_text(st, 1, intent_id);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        seq = sqlite3_column_int64(st, 0);
    else if (rc == SQLITE_DONE)
        seq = 0;
    sqlite3_finalize(st);
    return seq;
}

/* 1 when the query on seq returns a row, 0 when not, -1 on error. */
static int
exists(sqlite3 *db, const char *sql, sqlite3_int64 seq, const char *text)
{
    sqlite3_stmt *st;
    int rc;

    if (run(db, sql, &st) != SQLITE_OK)
        return -1;
    (void)sqlite3_bind_int64(st, 1, seq);
    if (text != NULL)
        store_sql_bind_text(st, 2, text);
    rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -1;
}

static enum ig_status
insert_vote(sqlite3 *db, sqlite3_int64 seq, const struct store_vote_rec *r)
{
    sqlite3_stmt *st;

    if (run(db,
            "INSERT INTO votes (intent_seq, approver, vote, comment, "
            "channel, groups, intent_hash, voted_at) VALUES "
            "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            &st) != SQLITE_OK)
        return IG_ERR_IO;
    (void)sqlite3_bind_int64(st, 1, seq);
    store_sql_bind_text(st, 2, r->approver);
    store_sql_bind_text(st, 3, r->vote);
    store_sql_bind_text(st, 4, r->comment != NULL ? r->comment : "");
    store_sql_bind_text(st, 5, r->channel);
    store_sql_bind_text(st, 6, r->groups);
    store_sql_bind_text(st, 7, r->intent_hash);
    (void)sqlite3_bind_int64(st, 8, r->at);
    return step_done(st);
}

static enum ig_status
insert_outcome_rows(sqlite3 *db, sqlite3_int64 seq,
                    const struct store_vote_rec *r)
{
    sqlite3_stmt *st;
    enum ig_status rc;

    if (run(db, "INSERT INTO resolutions VALUES (?1, ?2, ?3)", &st) !=
        SQLITE_OK)
        return IG_ERR_IO;
    (void)sqlite3_bind_int64(st, 1, seq);
    store_sql_bind_text(st, 2, r->result);
    (void)sqlite3_bind_int64(st, 3, r->at);
    if ((rc = step_done(st)) != IG_OK)
        return rc;
    if (r->decision_id == NULL)
        return IG_OK;
    if (run(db,
            "INSERT INTO decisions (intent_seq, decision_id, decision, "
            "reasons, message, policy_revision, decided_at) VALUES "
            "(?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            &st) != SQLITE_OK)
        return IG_ERR_IO;
    (void)sqlite3_bind_int64(st, 1, seq);
    store_sql_bind_text(st, 2, r->decision_id);
    store_sql_bind_text(st, 3, r->decision);
    store_sql_bind_text(st, 4, r->reasons);
    store_sql_bind_text(st, 5, r->message);
    store_sql_bind_text(st, 6, r->policy_revision);
    (void)sqlite3_bind_int64(st, 7, r->at);
    if (step_done(st) != IG_OK)
        return IG_ERR_IO;
    if (r->grant_jti == NULL)
        return IG_OK;
    if (run(db, "INSERT INTO grants VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            &st) != SQLITE_OK)
        return IG_ERR_IO;
    (void)sqlite3_bind_int64(st, 1, seq);
    store_sql_bind_text(st, 2, r->grant_jti);
    store_sql_bind_text(st, 3, r->decision_id);
    store_sql_bind_text(st, 4, r->grant_aud);
    (void)sqlite3_bind_int64(st, 5, r->at);
    (void)sqlite3_bind_int64(st, 6, r->grant_expires_at);
    store_sql_bind_text(st, 7, r->grant_token);
    return step_done(st) == IG_OK ? IG_OK : IG_ERR_IO;
}

static enum ig_status
job_vote(struct store_sq *s, struct store_job *j)
{
    const struct store_vote_rec *r = j->rec;
    sqlite3_int64 seq = approval_seq(s->wdb, r->intent_id);
    enum ig_status rc;
    int n;

    if (seq <= 0)
        return seq == 0 ? IG_ERR_NOTFOUND : IG_ERR_IO;
    n = exists(s->wdb, "SELECT 1 FROM resolutions WHERE intent_seq = ?1", seq,
               NULL);
    if (n != 0)
        return n > 0 ? IG_ERR_EXISTS : IG_ERR_IO;
    if (r->approver != NULL) {
        n = exists(s->wdb,
                   "SELECT 1 FROM votes WHERE intent_seq = ?1 AND "
                   "approver = ?2",
                   seq, r->approver);
        if (n != 0)
            return n > 0 ? IG_ERR_EXISTS : IG_ERR_IO;
        if ((rc = insert_vote(s->wdb, seq, r)) != IG_OK)
            return rc;
    }
    if (r->result != NULL &&
        (rc = insert_outcome_rows(s->wdb, seq, r)) != IG_OK)
        return rc;
    return store_append_events(s, r->events, r->nevents);
}

enum ig_status
store_sq_put_vote(struct store_sq *s, const struct store_vote_rec *r)
{
    return store_run_events(s, job_vote, r, r->intent_id, r->events,
                            r->nevents);
}

struct events_rec {
    const char *const *events;
    size_t n;
};

static enum ig_status
job_events(struct store_sq *s, struct store_job *j)
{
    const struct events_rec *r = j->rec;

    return store_append_events(s, r->events, r->n);
}

enum ig_status
store_sq_put_events(struct store_sq *s, const char *const *events, size_t n)
{
    struct events_rec r;

    r.events = events;
    r.n = n;
    return store_run_events(s, job_events, &r, NULL, events, n);
}

/* ---- reads ---- */

static json_t *
vote_row(sqlite3_stmt *st)
{
    /* "o" steals the parsed groups. */
    return json_pack("{s:s, s:s, s:s, s:s, s:o?, s:s, s:I}", "approver",
                     store_sql_text(st, 0), "vote", store_sql_text(st, 1),
                     "comment", store_sql_text(st, 2), "channel",
                     store_sql_text(st, 3), "groups", store_sql_json(st, 4),
                     "intent_hash", store_sql_text(st, 5), "voted_at",
                     (json_int_t)sqlite3_column_int64(st, 6));
}

enum ig_status
store_read_votes(struct store_rconn *c, sqlite3_int64 seq, json_t *approval)
{
    json_t *votes = json_array(), *res;
    sqlite3_stmt *st;
    enum ig_status rc;
    int step;

    if (votes == NULL)
        return IG_ERR_NOMEM;
    /* json_object_set_new steals votes. */
    if (json_object_set_new(approval, "votes", votes) != 0)
        return IG_ERR_NOMEM;
    if (run(c->db,
            "SELECT approver, vote, comment, channel, groups, intent_hash, "
            "voted_at FROM votes WHERE intent_seq = ?1 ORDER BY seq",
            &st) != SQLITE_OK)
        return IG_ERR_IO;
    (void)sqlite3_bind_int64(st, 1, seq);
    rc = store_sql_rows(st, vote_row, votes);
    sqlite3_finalize(st);
    if (rc != IG_OK)
        return rc;
    if (run(c->db,
            "SELECT result, resolved_at FROM resolutions WHERE "
            "intent_seq = ?1",
            &st) != SQLITE_OK)
        return IG_ERR_IO;
    (void)sqlite3_bind_int64(st, 1, seq);
    step = sqlite3_step(st);
    if (step == SQLITE_ROW) {
        res = json_pack("{s:s, s:I}", "result", store_sql_text(st, 0),
                        "resolved_at", (json_int_t)sqlite3_column_int64(st, 1));
        /* json_object_set_new steals res (NULL: fails). */
        if (json_object_set_new(approval, "resolution", res) != 0) {
            sqlite3_finalize(st);
            return IG_ERR_NOMEM;
        }
    }
    sqlite3_finalize(st);
    return step == SQLITE_ROW || step == SQLITE_DONE ? IG_OK : IG_ERR_IO;
}

static json_t *
open_row(sqlite3_stmt *st)
{
    /* "o" steals the requirements. */
    return json_pack("{s:s, s:s, s:o?, s:I, s:I}", "intent_id",
                     store_sql_text(st, 0), "approval_id",
                     store_sql_text(st, 1), "requirements",
                     store_sql_json(st, 2), "created_at",
                     (json_int_t)sqlite3_column_int64(st, 3), "expires_at",
                     (json_int_t)sqlite3_column_int64(st, 4));
}

enum ig_status
store_sq_open_approvals(struct store_sq *s, int64_t expired_before,
                        json_t **out)
{
    struct store_rconn *c = store_rconn_get(s);
    json_t *arr = json_array();
    enum ig_status rc;
    sqlite3_stmt *st = NULL;

    *out = NULL;
    if (c == NULL || arr == NULL ||
        run(c->db,
            "SELECT i.intent_id, a.approval_id, a.requirements, "
            "a.created_at, a.expires_at FROM approvals a JOIN intents i ON "
            "i.seq = a.intent_seq WHERE NOT EXISTS (SELECT 1 FROM "
            "resolutions r WHERE r.intent_seq = a.intent_seq) AND "
            "(?1 <= 0 OR a.expires_at <= ?1) ORDER BY a.intent_seq LIMIT "
            "10000",
            &st) != SQLITE_OK) {
        json_decref(arr);
        if (c != NULL)
            store_rconn_put(s, c);
        return c == NULL || arr == NULL ? IG_ERR_NOMEM : IG_ERR_IO;
    }
    (void)sqlite3_bind_int64(st, 1, expired_before);
    rc = store_sql_rows(st, open_row, arr);
    sqlite3_finalize(st);
    store_rconn_put(s, c);
    if (rc != IG_OK)
        json_decref(arr);
    else
        *out = arr;
    return rc;
}

enum ig_status
store_sq_approval_intent(struct store_sq *s, const char *approval_id,
                         char **intent_id)
{
    struct store_rconn *c = store_rconn_get(s);
    sqlite3_stmt *st = NULL;
    enum ig_status rc = IG_ERR_IO;
    int step;

    *intent_id = NULL;
    if (c == NULL)
        return IG_ERR_IO;
    if (run(c->db,
            "SELECT i.intent_id FROM approvals a JOIN intents i ON "
            "i.seq = a.intent_seq WHERE a.approval_id = ?1",
            &st) == SQLITE_OK) {
        store_sql_bind_text(st, 1, approval_id);
        step = sqlite3_step(st);
        if (step == SQLITE_ROW) {
            *intent_id = strdup(store_sql_text(st, 0));
            rc = *intent_id != NULL ? IG_OK : IG_ERR_NOMEM;
        } else if (step == SQLITE_DONE) {
            rc = IG_ERR_NOTFOUND;
        }
        sqlite3_finalize(st);
    }
    store_rconn_put(s, c);
    return rc;
}
