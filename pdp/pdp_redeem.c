/*
 * pdp_redeem.c - the executor's side of the PDP: POST /v1/grants/redeem
 * consumes a grant exactly once; POST /v1/executions/{id}/outcome records
 * what happened after.
 *
 * Redeem checks, in order: executor token; body {"grant","intent_id"}; the
 * intent exists; the grant is byte for byte the token the PDP signed and
 * stored for it (a constant-time comparison stands in for a second
 * signature check: these are the PDP's own bytes); that stored token's key
 * is still in the keyring, its claims name the RECORDED intent hash and
 * this intent, and it and its row say this executor and not expired. Then the
 * single writer inserts the redemption: the first insert wins, every later
 * one (concurrent or after a restart) gets 409.
 *
 * Every 4xx answer after the executor's token is accepted (a replayed,
 * forged, expired or misdirected grant; an outcome without a redemption,
 * a second one, a bad body) is counted for the aggregated grant.refused
 * or outcome.refused audit events (pdp_refusals.h).
 *
 * An outcome is recorded once. Executors retry until they hear back, so
 * the same outcome with the same detail again (compared as canonical
 * text) is answered 200 "duplicate" without a second audit event; a
 * different one is 409. A detail over IG_OUTCOME_DETAIL_MAX_BYTES
 * canonical bytes is recorded as a stub naming its size and SHA-256.
 */
#include "pdp_int.h"

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ig_grant.h"
#include "ig_hash.h"
#include "ig_limits.h"

struct redeem_op {
    const struct pdp_principal *ex; /* the executor asking */
    json_t *intent, *claims, *events[1];
    json_t *detail; /* the outcome's detail as recorded; NULL: none sent */
    char *event_text[1];
    char intent_id[IG_UUID_STRLEN + 1];
    char jti[IG_UUID_STRLEN + 1];
    char outcome[IG_OUTCOME_NAME_MAX + 1];
    char *detail_text;
    struct store_redeem_rec rec;
    struct store_outcome_rec orec;
    int duplicate;
};

static void
op_free(void *p)
{
    struct redeem_op *op = p;

    if (op == NULL)
        return;
    json_decref(op->intent);
    json_decref(op->claims);
    json_decref(op->detail);
    json_decref(op->events[0]);
    free(op->event_text[0]);
    free(op->detail_text);
    free(op);
}

static enum ig_status
submit_redeem(struct pdp_req *r)
{
    struct redeem_op *op = r->op;

    return store_redeem_async(r->srv->store, &op->rec, pdp_req_write_done, r);
}

static enum ig_status
submit_outcome(struct pdp_req *r)
{
    struct redeem_op *op = r->op;

    return store_put_outcome_async(r->srv->store, &op->orec, pdp_req_write_done,
                                   r);
}

/* Exactly the keys in want (NULL-terminated) may appear. */
static int
only_keys(struct pdp_req *r, json_t *body, const char *const *want)
{
    const char *k;
    json_t *v;
    size_t i;

    json_object_foreach(body, k, v)
    {
        for (i = 0; want[i] != NULL; i++)
            if (strcmp(k, want[i]) == 0)
                break;
        if (want[i] == NULL) {
            pdp_reply_error(r, 400, "UNKNOWN_FIELD", k, "unknown field \"%s\"",
                            k);
            return -1;
        }
    }
    return 0;
}

static const char *
string_field(struct pdp_req *r, json_t *body, const char *key, size_t max)
{
    json_t *v = json_object_get(body, key);

    if (v == NULL) {
        pdp_reply_error(r, 400, "MISSING_FIELD", key, "%s is required", key);
        return NULL;
    }
    if (!json_is_string(v) || json_string_length(v) == 0 ||
        json_string_length(v) > max ||
        strlen(json_string_value(v)) != json_string_length(v)) {
        pdp_reply_error(r, 400, "INVALID_FIELD", key,
                        "%s must be a string of 1 to %zu characters", key, max);
        return NULL;
    }
    return json_string_value(v);
}

/* ---- redeem ---- */

static void
on_redeemed(struct pdp_req *r)
{
    struct redeem_op *op = r->op;

    if (r->op_status == IG_OK) {
        atomic_fetch_add(&r->srv->metrics.redeemed, 1);
        /* "O" adds references. */
        pdp_reply_json(r, 200,
                       json_pack("{s:O, s:O}", "intent", op->intent, "claims",
                                 op->claims));
    } else if (r->op_status == IG_ERR_EXISTS) {
        pdp_reply_error(r, 409, "GRANT_ALREADY_REDEEMED", NULL,
                        "this grant was already redeemed");
    } else if (r->op_status == IG_ERR_NOTFOUND) {
        pdp_reply_error(r, 403, "GRANT_INVALID", NULL,
                        "no such grant was issued for this intent");
    } else {
        pdp_reply_error(r, 503, "STORE_UNAVAILABLE", NULL,
                        "the redemption could not be recorded; the grant "
                        "was not consumed");
    }
    pdp_req_refused_reply(r, PDP_REFUSED_GRANT, op->ex);
}

/* 1 when the presented grant is, byte for byte, the token stored for the
   intent. Constant time: only whether the lengths differ can show. */
static int
same_token(const char *grant, const char *stored)
{
    size_t n = strlen(grant);

    return stored != NULL && strlen(stored) == n &&
           sodium_memcmp(grant, stored, n) == 0;
}

/* The stored grant row's own audience, expiry and jti agree with this
   redemption (st: the stored token's check); replies on failure. */
static int
check_row(struct pdp_req *r, const json_t *g, const char *executor, int64_t now,
          enum ig_status st, const struct ig_err *err)
{
    const char *aud = json_string_value(json_object_get(g, "audience"));

    if (st == IG_ERR_EXPIRED ||
        (st == IG_OK &&
         now >= json_integer_value(json_object_get(g, "expires_at")))) {
        pdp_reply_error(r, 410, "GRANT_EXPIRED", NULL, "the grant expired");
        return -1;
    }
    if (st != IG_OK) {
        pdp_reply_error(r, 403, "GRANT_INVALID", NULL,
                        "the grant does not verify for this intent and "
                        "executor: %s",
                        err->msg);
        return -1;
    }
    if (aud == NULL || strcmp(aud, executor) != 0) {
        pdp_reply_error(r, 403, "GRANT_INVALID", NULL,
                        "the grant was issued for another executor");
        return -1;
    }
    return 0;
}

/*
 * Check the grant against the recorded intent; replies on failure. The
 * PDP signed the grant and stored its token with the intent, so the
 * presented token must be exactly that one (compared in constant time);
 * no second signature check is needed. Then every claim check a verify
 * makes still holds, on the STORED token and row, never on what was
 * presented: its key is still trusted, audience = this executor, not
 * expired (test clock), the recorded intent hash and this intent's id.
 */
static int
check_grant(struct pdp_req *r, struct redeem_op *op, const char *grant,
            const char *executor, const json_t *rec)
{
    const json_t *g = json_object_get(rec, "grant");
    const char *stored = json_string_value(json_object_get(g, "token"));
    const char *hash = json_string_value(json_object_get(rec, "intent_hash"));
    const char *cid, *jti, *row_jti;
    int64_t now = ig_time_now();
    struct ig_err err;
    enum ig_status st;

    if (!same_token(grant, stored)) {
        pdp_reply_error(r, 403, "GRANT_INVALID", NULL,
                        "the grant is not the one issued for this intent");
        return -1;
    }
    ig_err_clear(&err);
    st = ig_grant_check_stored(r->srv->keyring, stored, strlen(stored), hash,
                               executor, now, &op->claims, &err);
    if (check_row(r, g, executor, now, st, &err) != 0)
        return -1;
    cid = json_string_value(json_object_get(op->claims, "intent_id"));
    jti = json_string_value(json_object_get(op->claims, "jti"));
    row_jti = json_string_value(json_object_get(g, "jti"));
    if (cid == NULL || strcmp(cid, op->intent_id) != 0 || jti == NULL ||
        strlen(jti) != IG_UUID_STRLEN || row_jti == NULL ||
        strcmp(jti, row_jti) != 0) {
        pdp_reply_error(r, 403, "GRANT_INVALID", NULL,
                        "the grant was issued for another intent");
        return -1;
    }
    memcpy(op->jti, jti, IG_UUID_STRLEN + 1);
    return 0;
}

/* Load the recorded intent named by intent_id into op; replies on
   failure. */
static int
load_intent(struct pdp_req *r, struct redeem_op *op, const char *intent_id,
            json_t **rec)
{
    enum ig_status st;

    if (strlen(intent_id) != IG_UUID_STRLEN) {
        pdp_reply_error(r, 404, "NOT_FOUND", NULL, "no intent %s", intent_id);
        return -1;
    }
    memcpy(op->intent_id, intent_id, IG_UUID_STRLEN + 1);
    st = store_get_grant(r->srv->store, intent_id, rec);
    if (st == IG_ERR_NOTFOUND) {
        pdp_reply_error(r, 404, "NOT_FOUND", NULL, "no intent %s", intent_id);
        return -1;
    }
    if (st != IG_OK) {
        pdp_reply_error(r, 503, "STORE_UNAVAILABLE", NULL,
                        "cannot read the store; try again");
        return -1;
    }
    return 0;
}

static int
new_op(struct pdp_req *r, struct redeem_op **out)
{
    *out = calloc(1, sizeof(**out));
    if (*out == NULL) {
        pdp_reply_error(r, 500, "INTERNAL", NULL, "out of memory");
        return -1;
    }
    r->op = *out;
    r->op_free = op_free;
    return 0;
}

void
pdp_post_redeem(struct pdp_req *r)
{
    static const char *const keys[] = {"grant", "intent_id", NULL};
    const struct pdp_principal *ex;
    struct redeem_op *op;
    json_t *body, *rec = NULL;
    const char *grant, *intent_id;
    char now[IG_TIME_STRLEN + 1];

    ex = pdp_req_auth(r, 1u << PDP_ROLE_EXECUTOR);
    if (ex == NULL)
        return; /* counted as auth.refused */
    if ((body = pdp_req_json_object(r)) == NULL) {
        pdp_req_refused_reply(r, PDP_REFUSED_GRANT, ex);
        return;
    }
    if (only_keys(r, body, keys) != 0 ||
        (grant = string_field(r, body, "grant", IG_TOKEN_MAX_BYTES)) == NULL ||
        (intent_id = string_field(r, body, "intent_id", IG_INTENT_ID_MAX)) ==
            NULL ||
        new_op(r, &op) != 0 || load_intent(r, op, intent_id, &rec) != 0 ||
        check_grant(r, op, grant, ex->id, rec) != 0)
        goto out;
    op->intent = json_incref(json_object_get(rec, "binding"));
    if (ig_time_format(ig_time_now(), now) != IG_OK)
        now[0] = '\0';
    op->events[0] = json_pack(
        "{s:s, s:s, s:s, s:s, s:s}", "type", "grant.redeemed", "time", now,
        "intent_id", op->intent_id, "jti", op->jti, "executor", ex->id);
    if (op->events[0] != NULL)
        op->event_text[0] = pdp_json_text(op->events[0]);
    if (op->event_text[0] == NULL) {
        pdp_reply_error(r, 500, "INTERNAL", NULL, "out of memory");
        goto out;
    }
    op->rec.jti = op->jti;
    op->rec.intent_id = op->intent_id;
    op->rec.executor = ex->id;
    op->rec.redeemed_at = ig_time_now();
    op->rec.events = (const char *const *)op->event_text;
    op->rec.nevents = 1;
    op->ex = ex;
    pdp_req_write(r, on_redeemed, submit_redeem);
out:
    /* A refusal before the write (a forged, expired or misdirected
       grant, a bad body) is counted as grant.refused; the write's
       refusals (a replay) in on_redeemed. */
    pdp_req_refused_reply(r, PDP_REFUSED_GRANT, ex);
    json_decref(rec);
    json_decref(body);
}

/* ---- outcome ---- */

static const char *const outcomes[] = {"COMPLETED", "FAILED_BEFORE_DISPATCH",
                                       "UNKNOWN_AFTER_DISPATCH",
                                       "DEFINITELY_NOT_EXECUTED", NULL};

static void
on_outcome(struct pdp_req *r)
{
    struct redeem_op *op = r->op;

    if (r->op_status == IG_OK && op->duplicate)
        pdp_reply_json(r, 200,
                       json_pack("{s:s, s:s, s:b}", "intent_id", op->intent_id,
                                 "outcome", op->outcome, "duplicate", 1));
    else if (r->op_status == IG_OK)
        pdp_reply_json(r, 200,
                       json_pack("{s:s, s:s}", "intent_id", op->intent_id,
                                 "outcome", op->outcome));
    else if (r->op_status == IG_ERR_EXISTS)
        pdp_reply_error(r, 409, "OUTCOME_ALREADY_RECORDED", NULL,
                        "an outcome is already recorded for this intent");
    else if (r->op_status == IG_ERR_NOTFOUND)
        pdp_reply_error(r, 409, "NOT_REDEEMED", NULL,
                        "this executor has not redeemed a grant for this "
                        "intent");
    else
        pdp_reply_error(r, 503, "STORE_UNAVAILABLE", NULL,
                        "the outcome could not be recorded; try again");
    pdp_req_refused_reply(r, PDP_REFUSED_OUTCOME, op->ex);
}

/* Replace a detail over IG_OUTCOME_DETAIL_MAX_BYTES by its stub: never
   lost, never huge. detail_text NULL when out of memory. */
static void
shrink_detail(struct redeem_op *op)
{
    char hash[IG_HASH_STRLEN + 1], what[64];
    size_t n = strlen(op->detail_text);

    ig_hash_bytes(op->detail_text, n, hash);
    (void)snprintf(what, sizeof(what), "detail larger than %d bytes",
                   IG_OUTCOME_DETAIL_MAX_BYTES);
    json_decref(op->detail);
    op->detail =
        json_pack("{s:s, s:I, s:s}", "omitted", what, "size", (json_int_t)n,
                  "sha256", hash + strlen(IG_HASH_PREFIX));
    free(op->detail_text);
    op->detail_text = op->detail != NULL ? pdp_json_text(op->detail) : NULL;
}

static int
read_outcome(struct pdp_req *r, json_t *body, struct redeem_op *op)
{
    static const char *const keys[] = {"outcome", "detail", NULL};
    json_t *detail = json_object_get(body, "detail");
    const char *o;
    size_t i;

    if (only_keys(r, body, keys) != 0 ||
        (o = string_field(r, body, "outcome", IG_OUTCOME_NAME_MAX)) == NULL)
        return -1;
    for (i = 0; outcomes[i] != NULL && strcmp(o, outcomes[i]) != 0; i++)
        ;
    if (outcomes[i] == NULL) {
        pdp_reply_error(r, 400, "INVALID_FIELD", "outcome",
                        "outcome must be COMPLETED, FAILED_BEFORE_DISPATCH, "
                        "UNKNOWN_AFTER_DISPATCH or DEFINITELY_NOT_EXECUTED");
        return -1;
    }
    memcpy(op->outcome, o, strlen(o) + 1);
    if (detail != NULL && !json_is_object(detail)) {
        pdp_reply_error(r, 400, "INVALID_FIELD", "detail",
                        "detail must be an object");
        return -1;
    }
    if (detail != NULL)
        op->detail = json_incref(detail);
    op->detail_text = detail != NULL ? pdp_json_text(detail) : strdup("{}");
    if (op->detail_text != NULL &&
        strlen(op->detail_text) > IG_OUTCOME_DETAIL_MAX_BYTES)
        shrink_detail(op);
    if (op->detail_text == NULL) {
        pdp_reply_error(r, 500, "INTERNAL", NULL, "out of memory");
        return -1;
    }
    return 0;
}

void
pdp_post_outcome(struct pdp_req *r, const char *id)
{
    const struct pdp_principal *ex;
    struct redeem_op *op;
    json_t *body;
    char now[IG_TIME_STRLEN + 1];

    ex = pdp_req_auth(r, 1u << PDP_ROLE_EXECUTOR);
    if (ex == NULL)
        return; /* counted as auth.refused */
    if ((body = pdp_req_json_object(r)) == NULL) {
        pdp_req_refused_reply(r, PDP_REFUSED_OUTCOME, ex);
        return;
    }
    if (new_op(r, &op) != 0 || read_outcome(r, body, op) != 0)
        goto out;
    if (strlen(id) != IG_UUID_STRLEN) {
        pdp_reply_error(r, 404, "NOT_FOUND", NULL, "no intent %s", id);
        goto out;
    }
    memcpy(op->intent_id, id, IG_UUID_STRLEN + 1);
    if (ig_time_format(ig_time_now(), now) != IG_OK)
        now[0] = '\0';
    /* "O" adds a reference to detail (or null). */
    op->events[0] = json_pack("{s:s, s:s, s:s, s:s, s:s, s:O?}", "type",
                              "execution.outcome", "time", now, "intent_id",
                              op->intent_id, "executor", ex->id, "outcome",
                              op->outcome, "detail", op->detail);
    if (op->events[0] != NULL)
        op->event_text[0] = pdp_json_text(op->events[0]);
    if (op->event_text[0] == NULL) {
        pdp_reply_error(r, 500, "INTERNAL", NULL, "out of memory");
        goto out;
    }
    op->orec.intent_id = op->intent_id;
    op->orec.executor = ex->id;
    op->orec.outcome = op->outcome;
    op->orec.detail = op->detail_text;
    op->orec.reported_at = ig_time_now();
    op->orec.events = (const char *const *)op->event_text;
    op->orec.nevents = 1;
    op->orec.duplicate = &op->duplicate;
    op->ex = ex;
    pdp_req_write(r, on_outcome, submit_outcome);
out:
    pdp_req_refused_reply(r, PDP_REFUSED_OUTCOME, ex);
    json_decref(body);
}
