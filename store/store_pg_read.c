/*
 * store_pg_read.c - the PostgreSQL store's reads: the idempotent replay
 * lookup, the record of one intent (all of it, or what a redemption
 * needs), the open approval requests and an approval's intent.
 *
 * Each read is one statement on a pooled connection, outside any
 * transaction block: a statement sees one snapshot, so the parts of an
 * intent read together agree with each other (the 1:1 parts are LEFT
 * JOINs; decisions and votes come as JSON arrays of rows, json_agg).
 * The JSON built is the SQLite store's (store_read.c, store_approval.c):
 * the same keys, numbers where it has numbers, JSON columns parsed.
 */
#include "store_pg_int.h"

#include <stdlib.h>
#include <string.h>

#include "ig_json.h"

/* Columns of SQL_INTENT (and, up to C_TOKEN, of SQL_GRANT). */
enum intent_col {
    C_SEQ,
    C_INTENT_ID,
    C_PRINCIPAL,
    C_TENANT,
    C_INTENT_HASH,
    C_BINDING,
    C_CREATED_AT,
    C_EXPIRES_AT,
    C_HAS_GRANT, /* then jti, audience, issued_at, expires_at, token */
    C_JTI,
    C_AUDIENCE,
    C_ISSUED_AT,
    C_GRANT_EXPIRES_AT,
    C_TOKEN,
    C_HAS_REDEMPTION,                      /* then executor, redeemed_at */
    C_HAS_OUTCOME = C_HAS_REDEMPTION + 3,  /* outcome, detail, executor, at */
    C_HAS_APPROVAL = C_HAS_OUTCOME + 5,    /* id, requirements, created, exp */
    C_HAS_RESOLUTION = C_HAS_APPROVAL + 5, /* result, resolved_at */
    C_DECISIONS = C_HAS_RESOLUTION + 3,    /* json_agg of rows, or NULL */
    C_VOTES
};

#define INTENT_COLS                                                            \
    "SELECT i.seq, i.intent_id, i.principal, i.tenant, i.intent_hash, "        \
    "i.binding, i.created_at, i.expires_at, g.intent_seq IS NOT NULL, "        \
    "g.jti, g.audience, g.issued_at, g.expires_at, g.token"
#define INTENT_FROM " FROM intents i LEFT JOIN grants g ON g.intent_seq = i.seq"

static const char SQL_GRANT[] =
    INTENT_COLS INTENT_FROM " WHERE i.intent_id = $1::text";
static const char SQL_INTENT[] =
    INTENT_COLS ", r.intent_seq IS NOT NULL, r.executor, r.redeemed_at, "
                "o.intent_seq IS NOT NULL, o.outcome, o.detail, o.executor, "
                "o.reported_at, a.intent_seq IS NOT NULL, a.approval_id, "
                "a.requirements, a.created_at, a.expires_at, "
                "z.intent_seq IS NOT NULL, z.result, z.resolved_at, "
                "(SELECT json_agg(json_build_array(decision_id, decision, "
                "reasons, message, policy_revision, decided_at) ORDER BY seq) "
                "FROM decisions WHERE intent_seq = i.seq), "
                "(SELECT json_agg(json_build_array(approver, vote, comment, "
                "channel, groups, intent_hash, voted_at) ORDER BY seq) "
                "FROM votes WHERE intent_seq = i.seq)" INTENT_FROM
                " LEFT JOIN redemptions r ON r.intent_seq = i.seq"
                " LEFT JOIN outcomes o ON o.intent_seq = i.seq"
                " LEFT JOIN approvals a ON a.intent_seq = i.seq"
                " LEFT JOIN resolutions z ON z.intent_seq = i.seq"
                " WHERE i.intent_id = $1::text";
static const char SQL_IDEM[] =
    "SELECT intent_id FROM intents WHERE principal = $1::text AND "
    "idempotency_key = $2::text AND expires_at > $3::bigint "
    "ORDER BY seq DESC LIMIT 1";
static const char SQL_OPEN_APPROVALS[] =
    "SELECT i.intent_id, a.approval_id, a.requirements, a.created_at, "
    "a.expires_at FROM approvals a JOIN intents i ON i.seq = a.intent_seq "
    "WHERE NOT EXISTS (SELECT 1 FROM resolutions r WHERE r.intent_seq = "
    "a.intent_seq) AND ($1::bigint <= 0 OR a.expires_at <= $1::bigint) "
    "ORDER BY a.intent_seq LIMIT 10000";
static const char SQL_APPROVAL_INTENT[] =
    "SELECT i.intent_id FROM approvals a JOIN intents i ON "
    "i.seq = a.intent_seq WHERE a.approval_id = $1::text";

/* Run one read statement on a pooled connection: its result, or NULL
   (IG_ERR_IO: logged by store_pg_query, or no connection). */
static PGresult *
read_query(struct store_pg *s, const char *sql, const struct store_pg_params *p)
{
    struct ig_err err;
    struct store_pg_conn *c = store_pg_conn_get(s, &err);
    PGresult *res;

    if (c == NULL) {
        store_pg_log(s, "warn", "store.pg_unavailable",
                     json_pack("{s:s}", "message", err.msg));
        return NULL;
    }
    res = store_pg_query(s, c, sql, p, NULL, NULL);
    store_pg_conn_put(s, c);
    return res;
}

/* An integer column of the first row, for json_pack's "I". */
static json_int_t
int_of(const PGresult *r, int col)
{
    return (json_int_t)store_pg_int(r, 0, col);
}

/* ---- the parts of an intent ---- */

static json_t *
intent_obj(const PGresult *r)
{
    /* "o" steals the parsed binding. */
    return json_pack("{s:s, s:s, s:s, s:s, s:o?, s:I, s:I}", "intent_id",
                     store_pg_text(r, 0, C_INTENT_ID), "principal",
                     store_pg_text(r, 0, C_PRINCIPAL), "tenant",
                     store_pg_text(r, 0, C_TENANT), "intent_hash",
                     store_pg_text(r, 0, C_INTENT_HASH), "binding",
                     store_pg_json(r, 0, C_BINDING), "created_at",
                     int_of(r, C_CREATED_AT), "expires_at",
                     int_of(r, C_EXPIRES_AT));
}

static json_t *
grant_obj(const PGresult *r, int c)
{
    return json_pack("{s:s, s:s, s:I, s:I, s:s}", "jti", store_pg_text(r, 0, c),
                     "audience", store_pg_text(r, 0, c + 1), "issued_at",
                     int_of(r, c + 2), "expires_at", int_of(r, c + 3), "token",
                     store_pg_text(r, 0, c + 4));
}

static json_t *
redemption_obj(const PGresult *r, int c)
{
    return json_pack("{s:s, s:I}", "executor", store_pg_text(r, 0, c),
                     "redeemed_at", int_of(r, c + 1));
}

static json_t *
outcome_obj(const PGresult *r, int c)
{
    /* "o" steals the parsed detail. */
    return json_pack("{s:s, s:o?, s:s, s:I}", "outcome", store_pg_text(r, 0, c),
                     "detail", store_pg_json(r, 0, c + 1), "executor",
                     store_pg_text(r, 0, c + 2), "reported_at",
                     int_of(r, c + 3));
}

static json_t *
approval_obj(const PGresult *r, int c)
{
    /* "o" steals the parsed requirements. */
    return json_pack("{s:s, s:o?, s:I, s:I}", "approval_id",
                     store_pg_text(r, 0, c), "requirements",
                     store_pg_json(r, 0, c + 1), "created_at", int_of(r, c + 2),
                     "expires_at", int_of(r, c + 3));
}

static json_t *
resolution_obj(const PGresult *r, int c)
{
    return json_pack("{s:s, s:I}", "result", store_pg_text(r, 0, c),
                     "resolved_at", int_of(r, c + 1));
}

/* Element i of an aggregated row, a JSON text column, parsed: NULL when
   it does not parse, which json_pack's "o?" turns into null, as the
   SQLite store's store_sql_json does. */
static json_t *
parsed(const json_t *row, size_t i)
{
    const char *t = json_string_value(json_array_get(row, i));
    json_t *v = NULL;

    if (t == NULL || ig_json_parse(t, strlen(t), &v, NULL) != IG_OK)
        return NULL;
    return v;
}

static const char *
str_at(const json_t *row, size_t i)
{
    const char *t = json_string_value(json_array_get(row, i));

    return t != NULL ? t : "";
}

static json_int_t
int_at(const json_t *row, size_t i)
{
    return json_integer_value(json_array_get(row, i));
}

/* [decision_id, decision, reasons, message, policy_revision, decided_at] */
static json_t *
decision_obj(const json_t *row)
{
    /* "o" steals the parsed reasons. */
    return json_pack("{s:s, s:s, s:o?, s:s, s:s, s:I}", "decision_id",
                     str_at(row, 0), "decision", str_at(row, 1), "reasons",
                     parsed(row, 2), "message", str_at(row, 3),
                     "policy_revision", str_at(row, 4), "decided_at",
                     int_at(row, 5));
}

/* [approver, vote, comment, channel, groups, intent_hash, voted_at] */
static json_t *
vote_obj(const json_t *row)
{
    /* "o" steals the parsed groups. */
    return json_pack("{s:s, s:s, s:s, s:s, s:o?, s:s, s:I}", "approver",
                     str_at(row, 0), "vote", str_at(row, 1), "comment",
                     str_at(row, 2), "channel", str_at(row, 3), "groups",
                     parsed(row, 4), "intent_hash", str_at(row, 5), "voted_at",
                     int_at(row, 6));
}

/* Set key on obj to the array of what each row of column col (a json_agg,
   NULL for none) makes. */
static enum ig_status
add_rows(json_t *obj, const char *key, const PGresult *r, int col,
         json_t *(*make)(const json_t *row))
{
    const char *t = store_pg_text(r, 0, col);
    json_t *rows = NULL, *arr = json_array(), *row;
    size_t i;

    if (arr == NULL)
        return IG_ERR_NOMEM;
    /* json_object_set_new steals arr. */
    if (json_object_set_new(obj, key, arr) != 0)
        return IG_ERR_NOMEM;
    if (t[0] == '\0')
        return IG_OK;
    /* The server's own JSON, of any size: not ig_json_parse's limits. */
    rows = json_loads(t, 0, NULL);
    if (!json_is_array(rows)) {
        json_decref(rows);
        return IG_ERR_IO;
    }
    json_array_foreach(rows, i, row)
    {
        /* json_array_append_new steals what make returns. */
        if (json_array_append_new(arr, make(row)) != 0) {
            json_decref(rows);
            return IG_ERR_NOMEM;
        }
    }
    json_decref(rows);
    return IG_OK;
}

/* Set key on obj to what make builds from the columns after has (a
   boolean column), when has is true. */
static enum ig_status
add_part(json_t *obj, const char *key, const PGresult *r, int has,
         json_t *(*make)(const PGresult *r, int c))
{
    if (strcmp(store_pg_text(r, 0, has), "t") != 0)
        return IG_OK;
    /* json_object_set_new steals what make returns (NULL: fails). */
    return json_object_set_new(obj, key, make(r, has + 1)) == 0 ? IG_OK
                                                                : IG_ERR_NOMEM;
}

/* The intent of r's row and, when full, everything recorded about it. */
static enum ig_status
intent_json(const PGresult *r, int full, json_t **out)
{
    json_t *obj = intent_obj(r), *approval;
    enum ig_status st;

    if (obj == NULL)
        return IG_ERR_NOMEM;
    st =
        full ? add_rows(obj, "decisions", r, C_DECISIONS, decision_obj) : IG_OK;
    if (st == IG_OK)
        st = add_part(obj, "grant", r, C_HAS_GRANT, grant_obj);
    if (full && st == IG_OK)
        st = add_part(obj, "redemption", r, C_HAS_REDEMPTION, redemption_obj);
    if (full && st == IG_OK)
        st = add_part(obj, "outcome", r, C_HAS_OUTCOME, outcome_obj);
    if (full && st == IG_OK)
        st = add_part(obj, "approval", r, C_HAS_APPROVAL, approval_obj);
    approval = json_object_get(obj, "approval");
    if (st == IG_OK && approval != NULL) {
        st = add_rows(approval, "votes", r, C_VOTES, vote_obj);
        if (st == IG_OK)
            st = add_part(approval, "resolution", r, C_HAS_RESOLUTION,
                          resolution_obj);
    }
    if (st != IG_OK) {
        json_decref(obj);
        return st;
    }
    *out = obj;
    return IG_OK;
}

static enum ig_status
get_intent(struct store_pg *s, const char *sql, const char *intent_id, int full,
           json_t **out)
{
    struct store_pg_params p;
    PGresult *r;
    enum ig_status st;

    *out = NULL;
    store_pg_params_init(&p);
    store_pg_param_text(&p, intent_id);
    if ((r = read_query(s, sql, &p)) == NULL)
        return IG_ERR_IO;
    st = PQntuples(r) == 1 ? intent_json(r, full, out) : IG_ERR_NOTFOUND;
    PQclear(r);
    return st;
}

enum ig_status
store_pg_get_intent(struct store_pg *s, const char *intent_id, json_t **out)
{
    return get_intent(s, SQL_INTENT, intent_id, 1, out);
}

enum ig_status
store_pg_get_grant(struct store_pg *s, const char *intent_id, json_t **out)
{
    return get_intent(s, SQL_GRANT, intent_id, 0, out);
}

/* ---- the other reads ---- */

/* The first column of the first row, strdup'd into *out: IG_OK,
   IG_ERR_NOTFOUND (no row), IG_ERR_IO, IG_ERR_NOMEM. */
static enum ig_status
read_text(struct store_pg *s, const char *sql, const struct store_pg_params *p,
          char **out)
{
    PGresult *r = read_query(s, sql, p);
    enum ig_status st = IG_ERR_NOTFOUND;

    *out = NULL;
    if (r == NULL)
        return IG_ERR_IO;
    if (PQntuples(r) > 0) {
        *out = strdup(store_pg_text(r, 0, 0));
        st = *out != NULL ? IG_OK : IG_ERR_NOMEM;
    }
    PQclear(r);
    return st;
}

enum ig_status
store_pg_find_idempotent(struct store_pg *s, const char *principal,
                         const char *key, int64_t now, char **replay)
{
    struct store_pg_params p;

    store_pg_params_init(&p);
    store_pg_param_text(&p, principal);
    store_pg_param_text(&p, key);
    store_pg_param_int(&p, now);
    return read_text(s, SQL_IDEM, &p, replay);
}

enum ig_status
store_pg_approval_intent(struct store_pg *s, const char *approval_id,
                         char **intent_id)
{
    struct store_pg_params p;

    store_pg_params_init(&p);
    store_pg_param_text(&p, approval_id);
    return read_text(s, SQL_APPROVAL_INTENT, &p, intent_id);
}

static json_t *
open_obj(const PGresult *r, int row)
{
    /* "o" steals the parsed requirements. */
    return json_pack("{s:s, s:s, s:o?, s:I, s:I}", "intent_id",
                     store_pg_text(r, row, 0), "approval_id",
                     store_pg_text(r, row, 1), "requirements",
                     store_pg_json(r, row, 2), "created_at",
                     (json_int_t)store_pg_int(r, row, 3), "expires_at",
                     (json_int_t)store_pg_int(r, row, 4));
}

enum ig_status
store_pg_open_approvals(struct store_pg *s, int64_t expired_before,
                        json_t **out)
{
    struct store_pg_params p;
    PGresult *r;
    json_t *arr;
    int i, n;

    *out = NULL;
    store_pg_params_init(&p);
    store_pg_param_int(&p, expired_before);
    if ((r = read_query(s, SQL_OPEN_APPROVALS, &p)) == NULL)
        return IG_ERR_IO;
    if ((arr = json_array()) == NULL) {
        PQclear(r);
        return IG_ERR_NOMEM;
    }
    n = PQntuples(r);
    for (i = 0; i < n; i++)
        /* json_array_append_new steals the object (NULL: fails). */
        if (json_array_append_new(arr, open_obj(r, i)) != 0) {
            PQclear(r);
            json_decref(arr);
            return IG_ERR_NOMEM;
        }
    PQclear(r);
    *out = arr;
    return IG_OK;
}
