/*
 * exec_mcp_call.c - the gate in front of tools/call, resources/read and
 * prompts/get (see exec_mcp.h):
 *
 *   1. the intent goes to the PDP in the agent's name (its own token):
 *      {action, resource, params}; a retry of a call whose escalation
 *      was still pending picks that intent up instead of opening another;
 *   2. BLOCK: an isError result naming the reasons, so the model sees why;
 *   3. ESCALATE: the call is held up to mcp_escalation_wait_ms, the
 *      connection parked at the PDP (GET /v1/intents/{id}?wait=N), with
 *      progress notifications when the client asked for them and, when it
 *      takes URL elicitations and mcp_approval_url is set, one carrying
 *      the approval page; approved: on to 4; refused or expired: isError;
 *      still pending: isError naming the approval (call again to pick it
 *      up);
 *   4. ALLOW: the grant is verified offline against the binding the PDP
 *      answered (the intent hash recomputed here), the run record is
 *      written, the grant redeemed exactly once, and only then the call
 *      goes upstream; what comes back is scrubbed of the upstream's
 *      credential and the outcome is reported.
 * Nothing fails open: a PDP that cannot be reached, an answer that does
 * not parse, a grant that does not verify all end in an isError result
 * that says nothing was done.
 */
#include "exec_mcp_int.h"

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec_verify.h"
#include "ig_canon.h"
#include "ig_hash.h"
#include "ig_json.h"
#include "ig_log.h"
#include "ig_time.h"

/* A forwarded call's context for what the upstream says meanwhile. */
struct exec_mcp_fwd {
    struct exec_mcp_req *q;
    const struct exec_scrub *scrub;
};

/* What the PDP said about the intent. */
struct decided {
    char intent_id[IG_INTENT_ID_MAX + 1];
    char decision[16]; /* ALLOW, ESCALATE, BLOCK, or a state */
    json_t *answer;    /* the whole answer */
};

static void refuse(struct exec_mcp_req *q, const json_t *id, const char *fmt,
                   ...) IG_PRINTF(3, 4);

/* An isError result: the model reads text. */
static void
refuse(struct exec_mcp_req *q, const json_t *id, const char *fmt, ...)
{
    char text[1024];
    va_list ap;
    json_t *r;

    va_start(ap, fmt);
    (void)vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    r = json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text", "text",
                  text, "isError", 1);
    exec_mcp_result(q, id, r);
    json_decref(r);
}

/* The reasons of the last decision, joined with ", ". */
static void
reasons_text(const json_t *answer, char *out, size_t cap)
{
    const json_t *rs = json_object_get(answer, "reasons"), *d, *e;
    size_t i, n = 0;

    if (rs == NULL) {
        d = json_object_get(answer, "decisions");
        d = json_array_get(d, json_array_size(d) - 1);
        rs = json_object_get(d, "reasons");
    }
    out[0] = '\0';
    json_array_foreach(rs, i, e)
    {
        if (json_is_string(e) && n + 3 + json_string_length(e) < cap)
            n += (size_t)snprintf(out + n, cap - n, "%s%s", n > 0 ? ", " : "",
                                  json_string_value(e));
    }
    if (n == 0)
        (void)snprintf(out, cap, "no reason given");
}

/* The key of a call for picking up its pending escalation: 0, or -1
   when it cannot be computed (out of memory). */
static int
call_key(const struct exec_mcp_req *q, const char *action, const char *resource,
         const json_t *params, char out[65])
{
    unsigned char h[32];
    struct ig_buf b;
    int rc = 0;

    /* No cap: params came from a capped body, and a key that could not be
       written whole must not stand for every such call. */
    ig_buf_init(&b, SIZE_MAX / 2);
    if (ig_buf_adds(&b, q->principal) != IG_OK ||
        ig_buf_add(&b, "\n", 1) != IG_OK || ig_buf_adds(&b, action) != IG_OK ||
        ig_buf_add(&b, "\n", 1) != IG_OK ||
        ig_buf_adds(&b, resource) != IG_OK ||
        ig_buf_add(&b, "\n", 1) != IG_OK ||
        ig_canon_write(params, &b, NULL) != IG_OK)
        rc = -1;
    else
        ig_sha256(b.data, b.len, h);
    ig_buf_release(&b);
    if (rc == 0)
        (void)sodium_bin2hex(out, 65, h, sizeof(h));
    return rc;
}

/* GET /v1/intents/{id}?wait=N in the agent's name. 0 with *answer, or
   -1 (the PDP unreachable or refusing). */
static int
intent_state(struct exec_mcp_req *q, const char *intent_id, long wait_s,
             json_t **answer)
{
    char path[sizeof("/v1/intents/?wait=") + IG_INTENT_ID_MAX + 24];
    struct ig_err err;
    long status;

    (void)snprintf(path, sizeof(path), "/v1/intents/%s?wait=%ld", intent_id,
                   wait_s);
    ig_err_clear(&err);
    if (exec_pdp_call_as(q->m->x->pdp, q->token, path, NULL,
                         (wait_s + 5) * 1000, &status, answer, &err) != IG_OK ||
        status != 200 || !json_is_object(*answer)) {
        json_decref(*answer);
        *answer = NULL;
        return -1;
    }
    return 0;
}

/* A progress notification to the client, when it asked for them. */
static void
progress(struct exec_mcp_req *q, const char *message)
{
    struct ig_buf b;
    json_t *p;

    if (q->progress_token == NULL)
        return;
    exec_mcp_stream_start(q);
    q->progress += 1;
    p = json_pack("{s:O, s:f, s:s}", "progressToken", q->progress_token,
                  "progress", q->progress, "message", message);
    ig_buf_init(&b, 8192);
    if (p != NULL &&
        exec_mcp_write_notification(&b, "notifications/progress", p) == IG_OK)
        exec_mcp_stream_send(q, &b);
    ig_buf_release(&b);
    json_decref(p);
}

/* The approval page, as a URL elicitation, when the client takes them. */
static void
elicit_approval(struct exec_mcp_req *q, const json_t *answer)
{
    const char *base = q->m->x->cfg->mcp_approval_url;
    const char *aid = json_string_value(
        json_object_get(json_object_get(answer, "approval"), "id"));
    const json_t *url =
        json_object_get(json_object_get(q->client_caps, "elicitation"), "url");
    char link[1024], rid[80];
    struct ig_buf b;
    json_t *p, *id;

    if (base == NULL || aid == NULL || url == NULL)
        return;
    exec_mcp_stream_start(q);
    (void)snprintf(link, sizeof(link), "%s%s", base, aid);
    (void)snprintf(rid, sizeof(rid), "intentgate-approval-%s", aid);
    p = json_pack("{s:s, s:s, s:s, s:s}", "mode", "url", "elicitationId", aid,
                  "url", link, "message",
                  "This call waits for a human's approval. Open the page to "
                  "see it; an approver decides.");
    id = json_string(rid);
    ig_buf_init(&b, 8192);
    if (p != NULL && id != NULL &&
        exec_mcp_write_request(&b, id, "elicitation/create", p) == IG_OK)
        exec_mcp_stream_send(q, &b);
    ig_buf_release(&b);
    json_decref(p);
    json_decref(id);
}

/* Submit the intent, or pick up the pending one; d filled. 0, or -1
   after answering. */
static int
submit(struct exec_mcp_req *q, const json_t *rid, const char *key,
       const char *action, const char *resource, const json_t *params,
       struct decided *d)
{
    struct exec_mcp *m = q->m;
    const char *pending = NULL, *state, *id, *dec;
    json_t *body, *answer = NULL, *e;
    struct ig_buf text;
    struct ig_err err;
    long status = 0;
    char held[IG_INTENT_ID_MAX + 1] = "";

    pthread_mutex_lock(&m->mu);
    pending = json_string_value(json_object_get(m->waiting, key));
    if (pending != NULL)
        (void)snprintf(held, sizeof(held), "%s", pending);
    pthread_mutex_unlock(&m->mu);
    if (held[0] != '\0' && intent_state(q, held, 0, &answer) == 0) {
        state = json_string_value(json_object_get(answer, "state"));
        if (state != NULL && (strcmp(state, "PENDING_APPROVAL") == 0 ||
                              strcmp(state, "ALLOWED") == 0)) {
            (void)snprintf(d->intent_id, sizeof(d->intent_id), "%s", held);
            (void)snprintf(d->decision, sizeof(d->decision), "%s",
                           strcmp(state, "ALLOWED") == 0 ? "ALLOW"
                                                         : "ESCALATE");
            d->answer = answer;
            return 0;
        }
        json_decref(answer);
        answer = NULL;
    }
    pthread_mutex_lock(&m->mu);
    (void)json_object_del(m->waiting, key);
    pthread_mutex_unlock(&m->mu);

    body = json_pack("{s:s, s:s, s:O}", "action", action, "resource", resource,
                     "params", params);
    ig_buf_init(&text, IG_EXEC_MCP_BODY_MAX_BYTES + 4096);
    ig_err_clear(&err);
    if (body == NULL || ig_canon_write(body, &text, &err) != IG_OK ||
        exec_pdp_call_as(m->x->pdp, q->token, "/v1/intents", text.data, 0,
                         &status, &answer, &err) != IG_OK) {
        json_decref(body);
        ig_buf_release(&text);
        refuse(q, rid,
               "intentgate: the PDP cannot be reached; nothing was done "
               "(%.200s)",
               err.msg);
        return -1;
    }
    json_decref(body);
    ig_buf_release(&text);
    id = json_string_value(json_object_get(answer, "intent_id"));
    dec = json_string_value(json_object_get(answer, "decision"));
    if ((status != 200 && status != 201) || id == NULL || dec == NULL ||
        strlen(id) > IG_INTENT_ID_MAX) {
        e = json_object_get(answer, "error");
        refuse(q, rid,
               "intentgate refused the call before deciding: %.64s: %.300s",
               json_is_string(json_object_get(e, "code"))
                   ? json_string_value(json_object_get(e, "code"))
                   : "PDP_ERROR",
               json_is_string(json_object_get(e, "message"))
                   ? json_string_value(json_object_get(e, "message"))
                   : "the PDP's answer was not understood");
        json_decref(answer);
        return -1;
    }
    (void)snprintf(d->intent_id, sizeof(d->intent_id), "%s", id);
    (void)snprintf(d->decision, sizeof(d->decision), "%s", dec);
    d->answer = answer;
    return 0;
}

/* Hold an escalated call until it is decided or the wait ends. 0: d is
   now ALLOW (with its grant in d->answer); -1 after answering. */
static int
await_human(struct exec_mcp_req *q, const json_t *rid, const char *key,
            struct decided *d)
{
    struct exec_mcp *m = q->m;
    double end = exec_mcp_now_ms() + (double)m->x->cfg->mcp_wait_ms, left;
    const char *state, *aid;
    json_t *answer = NULL;
    char reasons[512], approval[80] = "";

    aid = json_string_value(
        json_object_get(json_object_get(d->answer, "approval"), "id"));
    if (aid == NULL)
        aid = json_string_value(json_object_get(
            json_object_get(d->answer, "approval"), "approval_id"));
    if (aid != NULL)
        (void)snprintf(approval, sizeof(approval), "%s", aid);
    if (strcmp(d->decision, "ALLOW") == 0)
        return 0;
    elicit_approval(q, d->answer);
    for (;;) {
        progress(q, "waiting for a human to approve this call");
        left = end - exec_mcp_now_ms();
        if (left < 1000 || atomic_load(&m->stopping) ||
            atomic_load(&q->cancelled))
            break;
        json_decref(answer);
        answer = NULL;
        if (intent_state(q, d->intent_id, left > 5000 ? 5 : (long)(left / 1000),
                         &answer) != 0) {
            refuse(q, rid,
                   "intentgate: the PDP cannot be reached while this call "
                   "waits for approval; nothing was done (intent %s)",
                   d->intent_id);
            return -1;
        }
        state = json_string_value(json_object_get(answer, "state"));
        if (state == NULL || strcmp(state, "PENDING_APPROVAL") == 0)
            continue;
        pthread_mutex_lock(&m->mu);
        (void)json_object_del(m->waiting, key);
        pthread_mutex_unlock(&m->mu);
        if (strcmp(state, "ALLOWED") == 0) {
            json_decref(d->answer);
            d->answer = answer;
            (void)snprintf(d->decision, sizeof(d->decision), "ALLOW");
            return 0;
        }
        reasons_text(answer, reasons, sizeof(reasons));
        refuse(q, rid,
               "intentgate: this call was not approved (%s: %s); nothing "
               "was done (intent %s)",
               state, reasons, d->intent_id);
        json_decref(answer);
        return -1;
    }
    json_decref(answer);
    pthread_mutex_lock(&m->mu);
    (void)json_object_set_new(m->waiting, key, json_string(d->intent_id));
    pthread_mutex_unlock(&m->mu);
    q->result = EXEC_MCP_R_HELD;
    refuse(q, rid,
           "intentgate: %sthis call waits for a human's approval (approval %s, "
           "intent %s). Nothing was done yet. Make the same call again later "
           "to pick up the decision.",
           atomic_load(&q->cancelled) ? "cancelled by the client; " : "",
           approval[0] != '\0' ? approval : "?", d->intent_id);
    return -1;
}

/* Spool an outcome now; it is sent after the answer. detail stolen. */
static void
record(struct exec_mcp_req *q, const char *intent_id, enum exec_outcome o,
       json_t *detail)
{
    exec_report_spool(q->m->x, intent_id, o, detail, &q->rep);
    q->has_report = 1;
}

/* Verify the grant offline, write the run record, redeem. 0, or -1 after
   answering (the grant unspent, or spent with its outcome recorded). */
static int
redeem(struct exec_mcp_req *q, const json_t *rid, const struct decided *d,
       const char *action, const char *resource, const json_t *params)
{
    struct exec_ctx *x = q->m->x;
    const json_t *binding = json_object_get(d->answer, "intent");
    const char *grant = json_string_value(json_object_get(d->answer, "grant"));
    char hash[IG_HASH_STRLEN + 1], why[200];
    json_t *claims = NULL;
    enum exec_refusal r;
    struct ig_err err;
    uint64_t ticket;

    ig_err_clear(&err);
    r = exec_verify_grant(x->keys, binding, grant, x->cfg->id, ig_time_now(),
                          &claims, hash, &err);
    if (r == EXEC_ACCEPT &&
        (!json_equal(json_object_get(claims, "action"),
                     json_object_get(binding, "action")) ||
         strcmp(json_string_value(json_object_get(binding, "action")),
                action) != 0 ||
         strcmp(json_string_value(json_object_get(binding, "resource")),
                resource) != 0 ||
         !json_equal(json_object_get(binding, "params"),
                     (json_t *)(uintptr_t)params) ||
         strcmp(json_string_value(json_object_get(binding, "intent_id")),
                d->intent_id) != 0))
        r = EXEC_REFUSE_INTENT_CHANGED;
    json_decref(claims);
    if (r != EXEC_ACCEPT) {
        refuse(q, rid,
               "intentgate: the grant was refused here (%s: %.200s); nothing "
               "was done (intent %s)",
               exec_refusal_code(r), err.msg, d->intent_id);
        return -1;
    }
    if (exec_gw_redeem(x, grant, d->intent_id, &ticket, why, sizeof(why),
                       &q->rep, &q->has_report) != 0) {
        refuse(q, rid, "intentgate: %s; nothing was done (intent %s)", why,
               d->intent_id);
        return -1;
    }
    return 0;
}

/* What the upstream says about this call while it runs - progress (only
   when the client asked for it, under the client's token) and log
   messages - relayed on the call's stream, scrubbed like the answer. */
static void
on_note(void *ctx, const char *method, const json_t *params)
{
    struct exec_mcp_fwd *f = ctx;
    struct exec_mcp_req *q = f->q;
    struct ig_buf b;
    json_t *p;
    int found = 0;

    if (strcmp(method, "notifications/progress") == 0 &&
        q->progress_token == NULL)
        return;
    p = json_is_object(params) ? json_deep_copy(params) : json_object();
    if (p == NULL || exec_scrub_json(f->scrub, &p, &found) != IG_OK ||
        (strcmp(method, "notifications/progress") == 0 &&
         json_object_set(p, "progressToken",
                         (json_t *)(uintptr_t)q->progress_token) != 0)) {
        json_decref(p);
        return;
    }
    exec_mcp_stream_start(q);
    ig_buf_init(&b, 65536);
    if (exec_mcp_write_notification(&b, method, p) == IG_OK)
        exec_mcp_stream_send(q, &b);
    ig_buf_release(&b);
    json_decref(p);
}

/* Forward, scrub, answer, record. */
static void
forward(struct exec_mcp_req *q, const json_t *rid, struct exec_mcp_upc *uc,
        const char *intent_id, const char *method, const json_t *params)
{
    struct exec_mcp_fwd f = {q, exec_mcp_up_scrub(uc->up)};
    json_t *result = NULL, *error = NULL, *detail;
    struct ig_err err;
    enum ig_status st;
    int found = 0, found2 = 0, is_error;

    ig_err_clear(&err);
    st = exec_mcp_up_call(uc->up, method, params, on_note, &f, &q->cancelled,
                          &result, &error, &err);
    if (st != IG_OK) {
        q->result = EXEC_MCP_R_FAILED;
        record(q, intent_id, EXEC_OUTCOME_UNKNOWN_AFTER_DISPATCH,
               json_pack("{s:s}", "error", err.msg));
        refuse(q, rid,
               "intentgate: the call was sent but no answer came back "
               "(%.300s); it may or may not have happened (intent %s)",
               err.msg, intent_id);
        return;
    }
    if (exec_scrub_json(exec_mcp_up_scrub(uc->up), &result, &found) != IG_OK ||
        exec_scrub_json(exec_mcp_up_scrub(uc->up), &error, &found2) != IG_OK) {
        json_decref(result);
        json_decref(error);
        q->result = EXEC_MCP_R_FAILED;
        record(q, intent_id, EXEC_OUTCOME_UNKNOWN_AFTER_DISPATCH,
               json_pack("{s:s}", "error", "the answer could not be scrubbed"));
        refuse(q, rid,
               "intentgate: the answer could not be checked for the "
               "credential and was withheld (intent %s)",
               intent_id);
        return;
    }
    q->result = EXEC_MCP_R_FORWARDED;
    if (found || found2)
        atomic_fetch_add(&q->m->x->metrics.credential_reflected, 1);
    if (found || found2)
        ig_log("warn", "mcp.credential_removed",
               json_pack("{s:s, s:s}", "server", uc->srv->alias, "intent_id",
                         intent_id));
    if (error != NULL) {
        record(q, intent_id, EXEC_OUTCOME_UNKNOWN_AFTER_DISPATCH,
               json_pack("{s:O*, s:O*}", "code", json_object_get(error, "code"),
                         "message", json_object_get(error, "message")));
        exec_mcp_error(
            q, 200, rid,
            json_is_integer(json_object_get(error, "code")) ||
                    json_is_number(json_object_get(error, "code"))
                ? (int)json_number_value(json_object_get(error, "code"))
                : EXEC_MCP_INTERNAL_ERROR,
            json_is_string(json_object_get(error, "message"))
                ? json_string_value(json_object_get(error, "message"))
                : "the server refused the call",
            json_object_get(error, "data"));
        json_decref(error);
        return;
    }
    is_error = json_is_true(json_object_get(result, "isError"));
    detail = json_pack("{s:b, s:b}", "is_error", is_error, "credential_removed",
                       found);
    record(q, intent_id, EXEC_OUTCOME_COMPLETED, detail);
    exec_mcp_result(q, rid, result);
    json_decref(result);
}

void
exec_mcp_gate_call(struct exec_mcp_req *q, const struct exec_mcp_msg *msg,
                   struct exec_mcp_upc *uc, const char *action,
                   const char *resource, const json_t *params,
                   const char *up_method, const json_t *up_params)
{
    struct decided d;
    char key[65], reasons[512];
    const char *message;

    memset(&d, 0, sizeof(d));
    q->result = EXEC_MCP_R_REFUSED;
    if (call_key(q, action, resource, params, key) != 0) {
        refuse(q, msg->id, "intentgate: out of memory; nothing was done");
        atomic_fetch_add(&q->m->x->metrics.mcp[q->result], 1);
        return;
    }
    if (submit(q, msg->id, key, action, resource, params, &d) != 0) {
        atomic_fetch_add(&q->m->x->metrics.mcp[q->result], 1);
        return;
    }
    if (strcmp(d.decision, "BLOCK") == 0) {
        q->result = EXEC_MCP_R_BLOCKED;
        reasons_text(d.answer, reasons, sizeof(reasons));
        message = json_string_value(json_object_get(d.answer, "message"));
        refuse(q, msg->id,
               "intentgate BLOCKED this call (%s)%s%.400s. Nothing was done "
               "(intent %s).",
               reasons, message != NULL && message[0] != '\0' ? ": " : "",
               message != NULL ? message : "", d.intent_id);
    } else if (strcmp(d.decision, "ESCALATE") != 0 &&
               strcmp(d.decision, "ALLOW") != 0) {
        refuse(q, msg->id, "intentgate: unknown decision %.16s (intent %s)",
               d.decision, d.intent_id);
    } else if (await_human(q, msg->id, key, &d) == 0 &&
               redeem(q, msg->id, &d, action, resource, params) == 0) {
        forward(q, msg->id, uc, d.intent_id, up_method, up_params);
    }
    json_decref(d.answer);
    atomic_fetch_add(&q->m->x->metrics.mcp[q->result], 1);
}
