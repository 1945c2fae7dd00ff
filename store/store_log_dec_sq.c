/*
 * store_log_dec_sq.c - the recorded decisions of a SQLite store read
 * offline (store_log.h: store_log_scan_decisions), for `intentgate policy
 * replay`.
 *
 * One statement over the read transaction store_log_sq.c opened: the
 * decisions in seq order (the rowid: a B-tree walk in key order), each
 * joined to its intent, and - for a decision that is not its intent's
 * first, the one made when an approval request ended - to the request,
 * its resolution and its votes. The votes come as one JSON array text
 * built by SQLite (json_group_array over the votes in seq order), so a
 * row is only texts and the caller parses all of them the same way on
 * both backends. Nothing is checked here: rows are as stored.
 */
#include "store_log_be.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

struct store_log_sq_dcursor {
    struct store_log_sq *l;
    sqlite3_stmt *q;
};

/* Whether a decision is its intent's first: none of the same intent
   before it (the decisions_intent index answers). */
static const char SQL_DECISIONS[] =
    "SELECT d.seq, d.decided_at, i.intent_id, i.action, i.resource,"
    " i.binding, d.decision, d.reasons, d.message, d.policy_revision,"
    " d.later, a.approval_id, a.requirements, r.result,"
    " CASE WHEN d.later THEN (SELECT json_group_array(json_object("
    "  'approver', v.approver, 'vote', v.vote, 'comment', v.comment,"
    "  'groups', v.groups, 'voted_at', v.voted_at, 'intent_hash',"
    "  v.intent_hash)) FROM (SELECT * FROM"
    "  votes v WHERE v.intent_seq = d.intent_seq ORDER BY v.seq) v) END,"
    " i.created_at, i.intent_hash"
    " FROM (SELECT x.seq, x.intent_seq, x.decision, x.reasons, x.message,"
    "  x.policy_revision, x.decided_at, EXISTS (SELECT 1 FROM decisions y"
    "  WHERE y.intent_seq = x.intent_seq AND y.seq < x.seq) AS later"
    "  FROM decisions x WHERE x.decided_at >= ?1 AND x.decided_at < ?2) d"
    " LEFT JOIN intents i ON i.seq = d.intent_seq"
    " LEFT JOIN approvals a ON d.later AND a.intent_seq = d.intent_seq"
    " LEFT JOIN resolutions r ON d.later AND r.intent_seq = d.intent_seq"
    " ORDER BY d.seq";

enum ig_status
store_log_sq_scan_decisions(struct store_log_sq *l, int64_t from, int64_t until,
                            struct store_log_sq_dcursor **out,
                            struct ig_err *err)
{
    sqlite3 *db = store_log_sq_db(l);
    struct store_log_sq_dcursor *c;

    *out = NULL;
    if ((c = calloc(1, sizeof(*c))) == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    c->l = l;
    if (sqlite3_prepare_v2(db, SQL_DECISIONS, -1, &c->q, NULL) != SQLITE_OK) {
        free(c);
        return ig_err_set(err, IG_ERR_IO, "database: %s", sqlite3_errmsg(db));
    }
    (void)sqlite3_bind_int64(c->q, 1, from);
    (void)sqlite3_bind_int64(c->q, 2, until);
    *out = c;
    return IG_OK;
}

/* Column i as text (NULL for an SQL NULL), its length in *len. */
static const char *
text(sqlite3_stmt *q, int i, size_t *len)
{
    const char *p = (const char *)sqlite3_column_text(q, i);

    if (len != NULL)
        *len = p != NULL ? (size_t)sqlite3_column_bytes(q, i) : 0;
    return p;
}

enum ig_status
store_log_sq_next_decision(struct store_log_sq_dcursor *c,
                           struct store_log_decision *d, struct ig_err *err)
{
    sqlite3_stmt *q = c->q;
    int rc = sqlite3_step(q);

    memset(d, 0, sizeof(*d));
    if (rc == SQLITE_DONE)
        return store_log_sq_ended(c->l, IG_ERR_NOTFOUND, err);
    if (rc != SQLITE_ROW)
        return ig_err_set(err, IG_ERR_IO, "reading decisions: %s",
                          sqlite3_errmsg(store_log_sq_db(c->l)));
    d->seq = sqlite3_column_int64(q, 0);
    d->decided_at = sqlite3_column_int64(q, 1);
    d->intent_id = text(q, 2, NULL);
    d->action = text(q, 3, NULL);
    d->resource = text(q, 4, NULL);
    d->binding = text(q, 5, &d->binding_len);
    d->decision = text(q, 6, NULL);
    d->reasons = text(q, 7, &d->reasons_len);
    d->message = text(q, 8, NULL);
    d->policy_revision = text(q, 9, NULL);
    d->later = sqlite3_column_int(q, 10) != 0;
    d->approval_id = text(q, 11, NULL);
    d->requirements = text(q, 12, &d->requirements_len);
    d->result = text(q, 13, NULL);
    d->votes = text(q, 14, &d->votes_len);
    d->created_at = sqlite3_column_int64(q, 15);
    d->intent_hash = text(q, 16, NULL);
    return IG_OK;
}

void
store_log_sq_dcursor_free(struct store_log_sq_dcursor *c)
{
    if (c == NULL)
        return;
    sqlite3_finalize(c->q);
    free(c);
}
