/*
 * pdp_intake.c - POST /v1/intents: the agent asks; the PDP records and
 * decides.
 *
 * 1. authenticate the agent; 2. validate the body strictly (only action,
 * resource, params, context, idempotency_key); 3. replay the original
 * answer for a repeated idempotency key; 4. build the binding from the body
 * plus trusted state (principal, tenant, ids, times) and hash its canonical
 * form; 5. evaluate the policies; 6. for ALLOW sign a grant for the
 * executor that handles the action; for ESCALATE open an approval request;
 * 7. record intent, decision, grant/approval and audit events in one
 * durable write, suspended until it commits; 8. answer 201. A store
 * failure answers 503 and the signed grant is dropped unseen.
 */
#include "pdp_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ig_canon.h"
#include "ig_grant.h"
#include "ig_limits.h"
#include "pdp_intake_int.h"
#include "pdp_shadow.h"

static void
op_free(void *p)
{
    struct pdp_intake_op *op = p;
    size_t i;

    if (op == NULL)
        return;
    json_decref(op->binding);
    for (i = 0; i < op->nevents; i++)
        free(op->event_text[i]);
    free(op->response_text);
    free(op->reasons_text);
    free(op->requirements_text);
    free(op->trace_text);
    free(op->replay);
    ig_buf_release(&op->canon);
    ig_buf_release(&op->grant);
    free(op);
}

static void
finish_reply(struct pdp_req *r, unsigned int status, const char *text)
{
    pdp_reply_text(r, status, text, strlen(text), "application/json");
    pdp_hist_observe(&r->srv->metrics.decision_seconds,
                     pdp_mono_seconds() - r->t_start);
}

/* Answer 200 with the first answer of intent_id; 0, or -1 when it could
   not be rebuilt (replied 503). */
static int
reply_replay(struct pdp_req *r, const char *intent_id)
{
    char *text = NULL;

    if (pdp_answer_replay(r->srv, intent_id, &text) != IG_OK) {
        pdp_reply_error(r, 503, "STORE_UNAVAILABLE", NULL,
                        "cannot read the store; try again");
        return -1;
    }
    atomic_fetch_add(&r->srv->metrics.idempotent_replays, 1);
    finish_reply(r, 200, text);
    free(text);
    return 0;
}

/* On the MHD thread, after the store write finished. */
static void
on_recorded(struct pdp_req *r)
{
    struct pdp_intake_op *op = r->op;

    if (r->op_status == IG_OK) {
        atomic_fetch_add(&r->srv->metrics.decisions[op->verdict], 1);
        if (op->verdict == POL_ESCALATE)
            pdp_slack_escalated(r->srv, op->intent_id);
        finish_reply(r, 201, op->response_text);
        /* Committed: the shadow bundle's turn, queued, never waited for. */
        pdp_shadow_submit(r->srv, op->binding, op->intent_id, &op->policies,
                          op->revision, op->now);
    } else if (r->op_status == IG_ERR_EXISTS && op->replay != NULL) {
        /* A concurrent twin with the same idempotency key won: its answer,
           and the grant signed here is dropped unseen. */
        (void)reply_replay(r, op->replay);
    } else {
        pdp_log("error", "store.write_failed",
                json_pack("{s:s, s:s}", "intent_id", op->intent_id, "status",
                          ig_strerror(r->op_status)));
        pdp_reply_error(r, 503, "STORE_UNAVAILABLE", NULL,
                        "the intent could not be recorded; nothing was "
                        "granted, try again");
    }
}

static enum ig_status
submit_intent(struct pdp_req *r)
{
    struct pdp_intake_op *op = r->op;

    return store_put_intent_async(r->srv->store, &op->rec, &op->replay,
                                  pdp_req_write_done, r);
}

/* Step 3: an earlier answer for this (principal, key)? Replies if so. */
static int
replayed(struct pdp_req *r, const struct pdp_principal *agent, const char *key)
{
    char *id = NULL;
    enum ig_status st;

    if (key == NULL)
        return 0;
    st = store_find_idempotent(r->srv->store, agent->id, key, ig_time_now(),
                               &id);
    if (st == IG_ERR_NOTFOUND)
        return 0;
    if (st != IG_OK)
        pdp_reply_error(r, 503, "STORE_UNAVAILABLE", NULL,
                        "cannot read the store; try again");
    else
        (void)reply_replay(r, id);
    free(id);
    return 1;
}

void
pdp_post_intent(struct pdp_req *r)
{
    const struct pdp_principal *agent;
    struct pdp_intake_body in;
    struct pdp_intake_op *op = NULL;
    json_t *body;

    agent = pdp_req_auth(r, 1u << PDP_ROLE_AGENT);
    if (agent == NULL)
        return;
    if (store_overloaded(r->srv->store)) {
        /* Before anything is decided or counted: nothing of it recorded. */
        (void)pdp_reply_header(r, "Retry-After", "1");
        pdp_reply_error(r, 503, "OVERLOADED", NULL,
                        "the server has more writes queued than it takes; "
                        "nothing was recorded, try again in a second");
        return;
    }
    body = pdp_req_json_object(r);
    if (body == NULL)
        return;
    if (pdp_intake_validate(r, body, &in) != 0 || replayed(r, agent, in.idem))
        goto out;
    op = calloc(1, sizeof(*op));
    if (op == NULL) {
        pdp_reply_error(r, 500, "INTERNAL", NULL, "out of memory");
        goto out;
    }
    ig_buf_init(&op->canon, IG_CANON_MAX_BYTES);
    ig_buf_init(&op->grant, IG_TOKEN_MAX_BYTES);
    r->op = op;
    r->op_free = op_free;
    if (pdp_intake_bind(r, op, agent, &in) != 0 ||
        pdp_intake_decide(r, op) != 0 ||
        pdp_intake_prepare_record(r, op, agent, &in) != 0)
        goto out;
    pdp_req_write(r, on_recorded, submit_intent);
out:
    json_decref(body);
}
