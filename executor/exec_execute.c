/*
 * exec_execute.c - POST /v1/execute (see exec_execute.h for the order).
 */
#include "exec_execute.h"

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec_http.h"
#include "exec_runner.h"
#include "exec_sandbox.h"
#include "exec_verify.h"
#include "ig_time.h"

json_t *
exec_error(const char *code, const char *message)
{
    return json_pack("{s:{s:s, s:s}}", "error", "code", code, "message",
                     message);
}

static unsigned int
refusal_status(enum exec_refusal r)
{
    switch (r) {
    case EXEC_REFUSE_NO_GRANT:
    case EXEC_REFUSE_GRANT_MALFORMED:
    case EXEC_REFUSE_INTENT_INVALID:
        return 400;
    case EXEC_REFUSE_GRANT_EXPIRED:
        return 410;
    case EXEC_REFUSE_INTERNAL:
        return 500;
    default:
        return 403;
    }
}

/* 1 when the secrets hold name (without decrypting anything). */
static int
has_secret(const struct exec_secrets *s, const char *name)
{
    size_t i;

    for (i = 0; s != NULL && i < exec_secrets_count(s); i++)
        if (strcmp(exec_secrets_name(s, i), name) == 0)
            return 1;
    return 0;
}

/* Checks up to (not including) redemption; NULL when all pass. */
static json_t *
precheck(struct exec_ctx *x, const json_t *body, const json_t *intent,
         const struct exec_action **act, unsigned int *status)
{
    char hash[IG_HASH_STRLEN + 1];
    json_t *claims = NULL;
    struct ig_err err;
    enum exec_refusal r;
    const char *cred;

    ig_err_clear(&err);
    r = exec_verify_grant(x->keys, intent,
                          json_string_value(json_object_get(body, "grant")),
                          x->cfg->id, ig_time_now(), &claims, hash, &err);
    json_decref(claims);
    if (r != EXEC_ACCEPT) {
        *status = refusal_status(r);
        return exec_error(exec_refusal_code(r), err.msg);
    }
    *act = exec_registry_find(
        x->registry, json_string_value(json_object_get(intent, "action")));
    if (*act == NULL) {
        *status = 403;
        return exec_error("ACTION_NOT_REGISTERED",
                          "this executor has no such action");
    }
    if (exec_params_check(*act, json_object_get(intent, "params"), &err) !=
        IG_OK) {
        *status = 400;
        return exec_error("PARAMS_INVALID", err.msg);
    }
    if (exec_action_handler(*act) == EXEC_HANDLER_EXEC &&
        exec_runner_needs_sandbox(exec_action_settings(*act)) &&
        exec_sandbox_probe(&err) != IG_OK) {
        *status = 503;
        return exec_error("SANDBOX_UNAVAILABLE", err.msg);
    }
    cred = exec_action_credential(*act);
    if (cred != NULL && !has_secret(x->secrets, cred)) {
        *status = 503;
        return exec_error("CREDENTIAL_MISSING",
                          "the action's credential is not configured");
    }
    return NULL;
}

/* Redeem; NULL when the grant is now ours to spend. */
static json_t *
redeem(struct exec_ctx *x, const json_t *body, const char *intent_id,
       unsigned int *status)
{
    struct ig_err err;
    enum ig_status st;

    ig_err_clear(&err);
    st = exec_pdp_redeem(x->pdp,
                         json_string_value(json_object_get(body, "grant")),
                         intent_id, NULL, &err);
    switch (st) {
    case IG_OK:
        return NULL;
    case IG_ERR_EXISTS:
        *status = 409;
        return exec_error("ALREADY_REDEEMED", err.msg);
    case IG_ERR_EXPIRED:
        *status = 410;
        return exec_error("GRANT_EXPIRED", err.msg);
    case IG_ERR_CRYPTO:
    case IG_ERR_NOTFOUND:
        *status = 403;
        return exec_error("GRANT_REFUSED", err.msg);
    default:
        *status = 503;
        return exec_error("PDP_UNAVAILABLE", err.msg);
    }
}

/* The credential is decrypted here, for this call only. */
static void
run_http(struct exec_ctx *x, const struct exec_action *act,
         const json_t *params, struct exec_http_result *res)
{
    const char *name = exec_action_credential(act);
    unsigned char *cred = NULL;
    size_t len = 0;
    struct ig_err err;

    if (name != NULL &&
        exec_secrets_get(x->secrets, name, &cred, &len, &err) != IG_OK) {
        memset(res, 0, sizeof(*res));
        res->outcome = EXEC_OUTCOME_FAILED_BEFORE_DISPATCH;
        res->detail =
            json_pack("{s:s}", "error", "the credential could not be read");
        return;
    }
    if (exec_http_run(exec_action_settings(act), params, cred, len, res,
                      &err) != IG_OK) {
        res->outcome = EXEC_OUTCOME_FAILED_BEFORE_DISPATCH;
        res->detail = json_pack("{s:s}", "error", err.msg);
    }
    exec_secret_free(cred, len);
}

/* ---- cancel registry ---- */

struct exec_running {
    char intent_id[64];
    unsigned char grant_hash[32];
    struct exec_run *run;
    struct exec_running *next;
};

struct run_ctx {
    struct exec_ctx *x;
    struct exec_running entry;
    void (*on_output)(void *ctx, const char *stream, const char *data,
                      size_t len);
    void *out_ctx;
};

static void
on_started(void *p, struct exec_run *run)
{
    struct run_ctx *rc = p;

    rc->entry.run = run;
    pthread_mutex_lock(&rc->x->mu);
    rc->entry.next = rc->x->inflight;
    rc->x->inflight = &rc->entry;
    pthread_mutex_unlock(&rc->x->mu);
}

static void
on_finished(void *p, struct exec_run *run)
{
    struct run_ctx *rc = p;
    struct exec_running **pp;
    (void)run;

    pthread_mutex_lock(&rc->x->mu);
    for (pp = &rc->x->inflight; *pp != NULL; pp = &(*pp)->next)
        if (*pp == &rc->entry) {
            *pp = rc->entry.next;
            break;
        }
    pthread_mutex_unlock(&rc->x->mu);
}

static void
on_output(void *p, const char *stream, const char *data, size_t len)
{
    struct run_ctx *rc = p;

    if (rc->on_output != NULL)
        rc->on_output(rc->out_ctx, stream, data, len);
}

json_t *
exec_cancel(struct exec_ctx *x, const char *intent_id, const json_t *body,
            unsigned int *status)
{
    const char *grant = json_string_value(json_object_get(body, "grant"));
    unsigned char h[32];
    struct exec_running *e;
    int found = 0;

    if (grant == NULL) {
        *status = 400;
        return exec_error("NO_GRANT", "send the grant of the execution");
    }
    crypto_hash_sha256(h, (const unsigned char *)grant, strlen(grant));
    pthread_mutex_lock(&x->mu);
    for (e = x->inflight; e != NULL; e = e->next)
        if (strcmp(e->intent_id, intent_id) == 0 &&
            sodium_memcmp(e->grant_hash, h, sizeof(h)) == 0) {
            exec_run_cancel(e->run);
            found = 1;
        }
    pthread_mutex_unlock(&x->mu);
    if (!found) {
        *status = 404;
        return exec_error("NOT_RUNNING",
                          "no running execution of this intent and grant");
    }
    *status = 200;
    return json_pack("{s:s, s:b}", "intent_id", intent_id, "cancelled", 1);
}

/* ---- per-action slots ---- */

struct exec_slots {
    const struct exec_action *act;
    long running;
    struct exec_slots *next;
};

/* Take one of act's slots (its settings' max_concurrent); 0 when full. */
static int
slot_take(struct exec_ctx *x, const struct exec_action *act)
{
    long limit = (long)json_number_value(
        json_object_get(exec_action_settings(act), "max_concurrent"));
    struct exec_slots *s;
    int ok = 0;

    pthread_mutex_lock(&x->mu);
    for (s = x->per_action; s != NULL && s->act != act; s = s->next)
        ;
    if (s == NULL && (s = calloc(1, sizeof(*s))) != NULL) {
        s->act = act;
        s->next = x->per_action;
        x->per_action = s;
    }
    if (s != NULL && (limit <= 0 || s->running < limit)) {
        s->running++;
        ok = 1;
    }
    pthread_mutex_unlock(&x->mu);
    return ok;
}

static void
slot_give(struct exec_ctx *x, const struct exec_action *act)
{
    struct exec_slots *s;

    pthread_mutex_lock(&x->mu);
    for (s = x->per_action; s != NULL && s->act != act; s = s->next)
        ;
    if (s != NULL && s->running > 0)
        s->running--;
    pthread_mutex_unlock(&x->mu);
}

void
exec_slots_free(struct exec_ctx *x)
{
    struct exec_slots *s, *next;

    for (s = x->per_action; s != NULL; s = next) {
        next = s->next;
        free(s);
    }
    x->per_action = NULL;
}

/* ---- execute ---- */

json_t *
exec_prepare(struct exec_ctx *x, const json_t *body,
             const struct exec_action **act, unsigned int *status)
{
    const json_t *intent = json_object_get(body, "intent");
    const char *intent_id =
        json_string_value(json_object_get(intent, "intent_id"));
    json_t *reply;

    reply = precheck(x, body, intent, act, status);
    if (reply != NULL)
        return reply;
    if (atomic_fetch_add(&x->running, 1) >= x->cfg->max_concurrent) {
        atomic_fetch_sub(&x->running, 1);
        *status = 429;
        return exec_error("TOO_MANY_EXECUTIONS",
                          "too many executions at once; the grant was not "
                          "spent, try again");
    }
    if (!slot_take(x, *act)) {
        atomic_fetch_sub(&x->running, 1);
        *status = 429;
        return exec_error("TOO_MANY_EXECUTIONS",
                          "too many executions of this action at once; the "
                          "grant was not spent, try again");
    }
    reply = redeem(x, body, intent_id, status);
    if (reply != NULL) {
        slot_give(x, *act);
        atomic_fetch_sub(&x->running, 1);
    }
    return reply;
}

json_t *
exec_finish(struct exec_ctx *x, const json_t *body,
            const struct exec_action *act,
            void (*out_fn)(void *ctx, const char *stream, const char *data,
                           size_t len),
            void *out_ctx)
{
    const json_t *intent = json_object_get(body, "intent");
    const char *intent_id =
        json_string_value(json_object_get(intent, "intent_id"));
    const char *grant = json_string_value(json_object_get(body, "grant"));
    struct exec_runner_hooks hooks;
    struct exec_http_result res;
    struct run_ctx rc;
    struct ig_err err;
    json_t *reply;
    int recorded;

    memset(&rc, 0, sizeof(rc));
    rc.x = x;
    rc.on_output = out_fn;
    rc.out_ctx = out_ctx;
    (void)snprintf(rc.entry.intent_id, sizeof(rc.entry.intent_id), "%s",
                   intent_id);
    crypto_hash_sha256(rc.entry.grant_hash, (const unsigned char *)grant,
                       strlen(grant));
    hooks.on_output = on_output;
    hooks.on_started = on_started;
    hooks.on_finished = on_finished;
    hooks.ctx = &rc;
    if (exec_action_handler(act) == EXEC_HANDLER_EXEC)
        exec_runner_run(exec_action_settings(act),
                        json_object_get(intent, "params"), x->cfg->work_dir,
                        &hooks, &res);
    else
        run_http(x, act, json_object_get(intent, "params"), &res);
    ig_err_clear(&err);
    recorded =
        exec_pdp_outcome(x->pdp, intent_id, exec_outcome_name(res.outcome),
                         res.detail, &err) == IG_OK;
    /* "o?" steals the detail. */
    reply = json_pack("{s:s, s:s, s:o?, s:b}", "intent_id", intent_id,
                      "outcome", exec_outcome_name(res.outcome), "result",
                      res.detail, "outcome_recorded", recorded);
    slot_give(x, act);
    atomic_fetch_sub(&x->running, 1);
    return reply;
}

json_t *
exec_execute(struct exec_ctx *x, const json_t *body, unsigned int *status)
{
    const struct exec_action *act = NULL;
    json_t *reply = exec_prepare(x, body, &act, status);

    if (reply != NULL)
        return reply;
    *status = 200;
    return exec_finish(x, body, act, NULL, NULL);
}
