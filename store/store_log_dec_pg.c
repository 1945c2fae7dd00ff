/*
 * store_log_dec_pg.c - the recorded decisions of a PostgreSQL store read
 * offline (store_log.h: store_log_scan_decisions), for `intentgate policy
 * replay`.
 *
 * Keyset pages (seq > the last one seen, ORDER BY seq LIMIT PAGE_ROWS)
 * inside the READ ONLY REPEATABLE READ transaction store_log_pg.c opened:
 * one page in memory at a time, one snapshot for the whole scan. The
 * page's intents, requests and resolutions are LATERAL subqueries with
 * LIMIT 1, index lookups per row: as plain joins the planner hashed the
 * whole approvals and resolutions tables once per page (a million
 * decisions took over a minute). Each row
 * is the decision joined to its intent and, for a decision that is not
 * its intent's first (one made when an approval request ended), to the
 * request, its resolution and its votes as one JSON array text
 * (json_agg in vote order) - the same texts as the SQLite reader gives.
 * Text results: every value is NUL-terminated as libpq hands it over.
 */
#include "store_log_be.h"

#include <inttypes.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAGE_ROWS 1000
#define STR_(x) #x
#define STR(x) STR_(x)
#define PAGE_ROWS_TEXT STR(PAGE_ROWS)

struct store_log_pg_dcursor {
    struct store_log_pg *l;
    char after[24], from[24], until[24]; /* $1 $2 $3 */
    PGresult *res;                       /* the current page */
    int row, rows;
    int last; /* the current page was the last one */
};

static const char SQL_DECISIONS[] =
    "SELECT d.seq, d.decided_at, i.intent_id, i.action, i.resource,"
    " i.binding, d.decision, d.reasons, d.message, d.policy_revision,"
    " d.later::int, a.approval_id, a.requirements, r.result,"
    " CASE WHEN d.later THEN (SELECT json_agg(json_build_object("
    "  'approver', v.approver, 'vote', v.vote, 'comment', v.comment,"
    "  'groups', v.groups, 'voted_at', v.voted_at, 'intent_hash',"
    "  v.intent_hash) ORDER BY v.seq)::text"
    "  FROM votes v WHERE v.intent_seq = d.intent_seq) END,"
    " i.created_at, i.intent_hash"
    " FROM (SELECT x.seq, x.intent_seq, x.decision, x.reasons, x.message,"
    "  x.policy_revision, x.decided_at, EXISTS (SELECT 1 FROM decisions y"
    "  WHERE y.intent_seq = x.intent_seq AND y.seq < x.seq) AS later"
    "  FROM decisions x WHERE x.seq > $1::bigint AND x.decided_at >="
    "  $2::bigint AND x.decided_at < $3::bigint ORDER BY x.seq"
    "  LIMIT " PAGE_ROWS_TEXT ") d"
    " LEFT JOIN LATERAL (SELECT i.intent_id, i.action, i.resource,"
    "  i.binding, i.created_at, i.intent_hash FROM intents i"
    "  WHERE i.seq = d.intent_seq LIMIT 1) i ON true"
    " LEFT JOIN LATERAL (SELECT a.approval_id, a.requirements FROM approvals"
    "  a WHERE d.later AND a.intent_seq = d.intent_seq LIMIT 1) a ON true"
    " LEFT JOIN LATERAL (SELECT r.result FROM resolutions r WHERE d.later"
    "  AND r.intent_seq = d.intent_seq LIMIT 1) r ON true"
    " ORDER BY d.seq";

enum ig_status
store_log_pg_scan_decisions(struct store_log_pg *l, int64_t from, int64_t until,
                            struct store_log_pg_dcursor **out,
                            struct ig_err *err)
{
    struct store_log_pg_dcursor *c = calloc(1, sizeof(*c));

    *out = NULL;
    if (c == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    c->l = l;
    (void)snprintf(c->after, sizeof(c->after), "%" PRId64, INT64_MIN);
    (void)snprintf(c->from, sizeof(c->from), "%" PRId64, from);
    (void)snprintf(c->until, sizeof(c->until), "%" PRId64, until);
    *out = c;
    return IG_OK;
}

/* A decimal column, 0 when NULL or not one. */
static int64_t
num(const PGresult *r, int row, int col)
{
    const char *p = PQgetvalue(r, row, col);
    char *end;
    long long v;

    if (PQgetisnull(r, row, col))
        return 0;
    v = strtoll(p, &end, 10);
    return *end == '\0' ? (int64_t)v : 0;
}

/* Column col as text (NULL for an SQL NULL), its length in *len. */
static const char *
text(const PGresult *r, int row, int col, size_t *len)
{
    const char *p = PQgetisnull(r, row, col) ? NULL : PQgetvalue(r, row, col);

    if (len != NULL)
        *len = p != NULL ? (size_t)PQgetlength(r, row, col) : 0;
    return p;
}

static enum ig_status
next_page(struct store_log_pg_dcursor *c, struct ig_err *err)
{
    const char *params[3] = {c->after, c->from, c->until};
    PGconn *pg = store_log_pg_conn(c->l);

    PQclear(c->res);
    c->row = c->rows = 0;
    c->res = PQexecParams(pg, SQL_DECISIONS, 3, NULL, params, NULL, NULL, 0);
    if (c->res == NULL || PQresultStatus(c->res) != PGRES_TUPLES_OK ||
        PQnfields(c->res) != 17) {
        PQclear(c->res);
        c->res = NULL;
        return ig_err_set(err, IG_ERR_IO, "reading decisions: %s",
                          store_log_pg_error(c->l));
    }
    c->rows = PQntuples(c->res);
    c->last = c->rows < PAGE_ROWS;
    if (c->rows > 0)
        (void)snprintf(c->after, sizeof(c->after), "%" PRId64,
                       num(c->res, c->rows - 1, 0));
    return IG_OK;
}

enum ig_status
store_log_pg_next_decision(struct store_log_pg_dcursor *c,
                           struct store_log_decision *d, struct ig_err *err)
{
    const PGresult *r;
    enum ig_status st;
    int i;

    memset(d, 0, sizeof(*d));
    if (c->res == NULL || (c->row == c->rows && !c->last)) {
        if ((st = next_page(c, err)) != IG_OK)
            return st;
    }
    if (c->row == c->rows)
        return IG_ERR_NOTFOUND;
    r = c->res;
    i = c->row++;
    d->seq = num(r, i, 0);
    d->decided_at = num(r, i, 1);
    d->intent_id = text(r, i, 2, NULL);
    d->action = text(r, i, 3, NULL);
    d->resource = text(r, i, 4, NULL);
    d->binding = text(r, i, 5, &d->binding_len);
    d->decision = text(r, i, 6, NULL);
    d->reasons = text(r, i, 7, &d->reasons_len);
    d->message = text(r, i, 8, NULL);
    d->policy_revision = text(r, i, 9, NULL);
    d->later = num(r, i, 10) != 0;
    d->approval_id = text(r, i, 11, NULL);
    d->requirements = text(r, i, 12, &d->requirements_len);
    d->result = text(r, i, 13, NULL);
    d->votes = text(r, i, 14, &d->votes_len);
    d->created_at = num(r, i, 15);
    d->intent_hash = text(r, i, 16, NULL);
    return IG_OK;
}

void
store_log_pg_dcursor_free(struct store_log_pg_dcursor *c)
{
    if (c == NULL)
        return;
    PQclear(c->res);
    free(c);
}
