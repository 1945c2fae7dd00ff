/*
 * exec_execute.c - POST /v1/execute (see exec_execute.h for the order).
 */
#include "exec_execute.h"

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

json_t *
exec_execute(struct exec_ctx *x, const json_t *body, unsigned int *status)
{
    const json_t *intent = json_object_get(body, "intent");
    const char *intent_id =
        json_string_value(json_object_get(intent, "intent_id"));
    const struct exec_action *act = NULL;
    struct exec_http_result res;
    struct ig_err err;
    json_t *reply;
    int recorded;

    reply = precheck(x, body, intent, &act, status);
    if (reply != NULL)
        return reply;
    if (atomic_fetch_add(&x->running, 1) >= x->cfg->max_concurrent) {
        atomic_fetch_sub(&x->running, 1);
        *status = 429;
        return exec_error("TOO_MANY_EXECUTIONS",
                          "too many executions at once; the grant was not "
                          "spent, try again");
    }
    reply = redeem(x, body, intent_id, status);
    if (reply == NULL) {
        if (exec_action_handler(act) == EXEC_HANDLER_EXEC)
            exec_runner_run(exec_action_settings(act),
                            json_object_get(intent, "params"), x->cfg->work_dir,
                            &res);
        else
            run_http(x, act, json_object_get(intent, "params"), &res);
        ig_err_clear(&err);
        recorded =
            exec_pdp_outcome(x->pdp, intent_id, exec_outcome_name(res.outcome),
                             res.detail, &err) == IG_OK;
        *status = 200;
        /* "o?" steals the detail. */
        reply = json_pack("{s:s, s:s, s:o?, s:b}", "intent_id", intent_id,
                          "outcome", exec_outcome_name(res.outcome), "result",
                          res.detail, "outcome_recorded", recorded);
    }
    atomic_fetch_sub(&x->running, 1);
    return reply;
}
