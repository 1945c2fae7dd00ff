/*
 * exec_execute.c - POST /v1/execute (see exec_execute.h for the order).
 *
 * exec_admit refuses everything it can without spending the grant;
 * exec_redeem writes the "run" record, then spends the grant (the disk
 * flush of the record overlaps the PDP's answer); exec_finish waits for
 * the record to be durable before the credential is decrypted (so a crash
 * mid-action is still reported, as UNKNOWN_AFTER_DISPATCH, after a
 * restart), runs the handler, and writes the outcome to the spool; the
 * agent gets its answer then, and only after it does exec_report_send
 * deliver the outcome to the PDP (the spool retries until acknowledged),
 * so the PDP's commit of the outcome adds nothing to the agent's wait. If the
 * spool cannot record that the action is about to run, the grant is not spent;
 * if the record cannot be made durable, the action does not run.
 */
#include "exec_execute.h"

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec_http.h"
#include "exec_inflight.h"
#include "exec_runner.h"
#include "exec_sandbox.h"
#include "exec_verify.h"
#include "ig_json.h"
#include "ig_log.h"
#include "ig_time.h"

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

/* The action's own checks: params, the request they make, the sandbox,
   the credential. NULL when all pass. */
static json_t *
check_action(struct exec_ctx *x, const struct exec_action *act,
             const json_t *params, unsigned int *status)
{
    const json_t *settings = exec_action_settings(act);
    const char *cred = exec_action_credential(act);
    struct ig_err err;

    ig_err_clear(&err);
    if (exec_params_check(act, params, &err) != IG_OK ||
        (exec_action_handler(act) == EXEC_HANDLER_HTTP &&
         exec_http_check(settings, params, &err) != IG_OK)) {
        *status = 400;
        return exec_error("PARAMS_INVALID", err.msg);
    }
    if (exec_action_handler(act) == EXEC_HANDLER_EXEC &&
        exec_runner_needs_sandbox(settings) &&
        exec_sandbox_probe(&err) != IG_OK) {
        *status = 503;
        return exec_error("SANDBOX_UNAVAILABLE", err.msg);
    }
    if (cred != NULL && !has_secret(x->secrets, cred)) {
        *status = 503;
        return exec_error("CREDENTIAL_MISSING",
                          "the action's credential is not configured");
    }
    return NULL;
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
    return check_action(x, *act, json_object_get(intent, "params"), status);
}

json_t *
exec_admit(struct exec_ctx *x, const json_t *body,
           const struct exec_action **act, unsigned int *status)
{
    json_t *reply =
        precheck(x, body, json_object_get(body, "intent"), act, status);

    if (reply == NULL && exec_slot_take(x, *act, status, &reply) != 0)
        return reply;
    if (reply != NULL)
        atomic_fetch_add(&x->metrics.refused, 1);
    return reply;
}

/* The run record, written before the grant is spent; NULL, or the
   refusal (nothing recorded, the grant not spent). */
static json_t *
write_run(struct exec_ctx *x, const char *intent_id, uint64_t *ticket,
          unsigned int *status)
{
    struct ig_err err;
    enum ig_status st;

    ig_err_clear(&err);
    st = exec_spool_run_write(x->spool, intent_id, ticket, &err);
    if (st == IG_OK)
        return NULL;
    *status = st == IG_ERR_EXISTS ? 409 : 503;
    ig_log("error", "spool.refused",
           json_pack("{s:s, s:s}", "intent_id", intent_id, "error", err.msg));
    return st == IG_ERR_EXISTS
               ? exec_error("ALREADY_RUNNING",
                            "this intent is already being executed here")
               : exec_error("SPOOL_UNAVAILABLE",
                            "the executor cannot record executions now; the "
                            "grant was not spent");
}

json_t *
exec_redeem(struct exec_ctx *x, const json_t *body,
            const struct exec_action *act, uint64_t *ticket,
            unsigned int *status)
{
    const char *intent_id = json_string_value(
        json_object_get(json_object_get(body, "intent"), "intent_id"));
    struct ig_err err;
    json_t *reply;
    enum ig_status st;

    if ((reply = write_run(x, intent_id, ticket, status)) != NULL)
        goto refused;
    ig_err_clear(&err);
    st = exec_pdp_redeem(x->pdp,
                         json_string_value(json_object_get(body, "grant")),
                         intent_id, NULL, &err);
    if (st == IG_OK)
        return NULL;
    exec_spool_run_cancel(x->spool, intent_id);
    if (st == IG_ERR_EXISTS) {
        *status = 409;
        reply = exec_error("ALREADY_REDEEMED", err.msg);
    } else if (st == IG_ERR_EXPIRED) {
        *status = 410;
        reply = exec_error("GRANT_EXPIRED", err.msg);
    } else if (st == IG_ERR_CRYPTO || st == IG_ERR_NOTFOUND) {
        *status = 403;
        reply = exec_error("GRANT_REFUSED", err.msg);
    } else {
        *status = 503;
        reply = exec_error("PDP_UNAVAILABLE", err.msg);
    }
refused:
    exec_slot_give(x, act);
    atomic_fetch_add(&x->metrics.refused, 1);
    return reply;
}

/* The credential is decrypted here, for this call only. */
static void
run_http(struct exec_ctx *x, const struct exec_action *act,
         const json_t *params, struct exec_result *res)
{
    const char *name = exec_action_credential(act);
    unsigned char *cred = NULL;
    size_t len = 0;
    struct ig_err err;

    memset(res, 0, sizeof(*res));
    if (name != NULL &&
        exec_secrets_get(x->secrets, name, &cred, &len, &err) != IG_OK) {
        res->outcome = EXEC_OUTCOME_FAILED_BEFORE_DISPATCH;
        res->detail =
            json_pack("{s:s}", "error", "the credential could not be read");
        return;
    }
    if (exec_http_run(exec_action_settings(act), params, cred, len, res,
                      &err) != IG_OK) {
        exec_result_release(res);
        res->outcome = EXEC_OUTCOME_FAILED_BEFORE_DISPATCH;
        res->detail = json_pack("{s:s}", "error", err.msg);
    }
    exec_secret_free(cred, len);
}

/* Write the outcome to the spool before the agent's answer (it survives
   a crash of this process from then on); rep keeps what
   exec_report_send delivers after the answer. 1 when spooled. */
static int
record(struct exec_ctx *x, const char *intent_id, const struct exec_result *r,
       struct exec_report *rep)
{
    const json_t *report = r->report != NULL ? r->report : r->detail;
    struct ig_err err;
    enum ig_status st;

    memset(rep, 0, sizeof(*rep));
    /* The spool took its run record: at most IG_INTENT_ID_MAX bytes. */
    (void)snprintf(rep->intent_id, sizeof(rep->intent_id), "%s", intent_id);
    rep->outcome = exec_outcome_name(r->outcome);
    rep->detail = report != NULL ? json_incref(ig_json_unconst(report)) : NULL;
    ig_err_clear(&err);
    st = exec_spool_outcome_write(x->spool, intent_id, rep->outcome,
                                  rep->detail, &rep->ticket, &err);
    rep->spooled = st == IG_OK;
    if (st != IG_OK) /* malformed or oversized: sent once, after */
        ig_log(
            "error", "outcome.not_spooled",
            json_pack("{s:s, s:s}", "intent_id", intent_id, "error", err.msg));
    return rep->spooled;
}

void
exec_report_send(struct exec_ctx *x, struct exec_report *rep)
{
    struct ig_err err;
    enum ig_status st;
    int delivered = 0;

    ig_err_clear(&err);
    if (!rep->spooled) {
        if (exec_pdp_outcome(x->pdp, rep->intent_id, rep->outcome, rep->detail,
                             &err) != IG_OK)
            ig_log("error", "outcome.lost",
                   json_pack("{s:s, s:s}", "intent_id", rep->intent_id, "error",
                             err.msg));
    } else {
        st = exec_spool_outcome_send(x->spool, rep->intent_id, rep->detail,
                                     rep->ticket, &delivered, &err);
        if (st != IG_OK) /* pending in memory, retried while we live */
            ig_log("error", "outcome.not_durable",
                   json_pack("{s:s, s:s}", "intent_id", rep->intent_id, "error",
                             err.msg));
    }
    json_decref(rep->detail);
    rep->detail = NULL;
}

/* Run the handler, unless the run cannot be recorded first. */
static void
run_action(struct exec_ctx *x, const json_t *intent,
           const struct exec_action *act, uint64_t ticket,
           struct exec_inflight_run *rc, struct exec_result *res)
{
    const char *intent_id =
        json_string_value(json_object_get(intent, "intent_id"));
    struct exec_runner_hooks hooks;
    struct ig_err err;

    memset(res, 0, sizeof(*res));
    ig_err_clear(&err);
    if (exec_spool_run_durable(x->spool, ticket, &err) != IG_OK) {
        res->outcome = EXEC_OUTCOME_DEFINITELY_NOT_EXECUTED;
        res->detail = json_pack("{s:s}", "error",
                                "the outcome spool cannot be written: "
                                "nothing was run");
        ig_log(
            "error", "spool.unwritable",
            json_pack("{s:s, s:s}", "intent_id", intent_id, "error", err.msg));
        return;
    }
    if (exec_action_handler(act) == EXEC_HANDLER_EXEC) {
        exec_inflight_hooks(rc, &hooks);
        exec_runner_run(act, json_object_get(intent, "params"), &x->run_env,
                        &hooks, res);
    } else {
        run_http(x, act, json_object_get(intent, "params"), res);
    }
}

json_t *
exec_finish(struct exec_ctx *x, const json_t *body,
            const struct exec_action *act, uint64_t ticket,
            void (*out_fn)(void *ctx, const char *stream, const char *data,
                           size_t len),
            void *out_ctx, struct exec_report *rep)
{
    const json_t *intent = json_object_get(body, "intent");
    const char *intent_id =
        json_string_value(json_object_get(intent, "intent_id"));
    struct exec_inflight_run rc;
    struct exec_result res;
    json_t *reply;
    int spooled;

    exec_inflight_init(&rc, x, intent_id,
                       json_string_value(json_object_get(body, "grant")),
                       out_fn, out_ctx);
    run_action(x, intent, act, ticket, &rc, &res);
    atomic_fetch_add(&x->metrics.executions[res.outcome], 1);
    if (res.credential_reflected)
        atomic_fetch_add(&x->metrics.credential_reflected, 1);
    spooled = record(x, intent_id, &res, rep);
    /* "O?" adds a reference to the detail (or null). */
    reply = json_pack("{s:s, s:s, s:O?, s:b}", "intent_id", intent_id,
                      "outcome", exec_outcome_name(res.outcome), "result",
                      res.detail, "outcome_recorded", spooled);
    exec_result_release(&res);
    exec_slot_give(x, act);
    return reply;
}

json_t *
exec_execute(struct exec_ctx *x, const json_t *body, unsigned int *status)
{
    const struct exec_action *act = NULL;
    json_t *reply = exec_admit(x, body, &act, status);
    struct exec_report rep;
    uint64_t ticket = 0;

    if (reply == NULL)
        reply = exec_redeem(x, body, act, &ticket, status);
    if (reply != NULL)
        return reply;
    *status = 200;
    reply = exec_finish(x, body, act, ticket, NULL, NULL, &rep);
    exec_report_send(x, &rep);
    return reply;
}
