/*
 * pdp_intake_int.h - private to POST /v1/intents: the validated body and the
 * operation state that lives until the durable write completes
 * (pdp_intake.c drives it, pdp_intake_steps.c does each step).
 */
#ifndef PDP_INTAKE_INT_H
#define PDP_INTAKE_INT_H

#include "pdp_int.h"

/* The agent's body after validation; pointers borrowed from the body. */
struct pdp_intake_body {
    const char *action, *resource, *idem;
    json_t *params, *context; /* context may be NULL */
};

struct pdp_intake_op {
    json_t *binding;     /* the full binding (version … expires_at) */
    struct ig_buf canon; /* its canonical bytes */
    char intent_hash[IG_HASH_STRLEN + 1];
    char intent_id[IG_UUID_STRLEN + 1];
    char decision_id[IG_UUID_STRLEN + 1];
    char jti[IG_UUID_STRLEN + 1];
    char approval_id[IG_UUID_STRLEN + 1];
    char created[IG_TIME_STRLEN + 1], expires[IG_TIME_STRLEN + 1];
    char grant_expires[IG_TIME_STRLEN + 1];
    char approval_expires[IG_TIME_STRLEN + 1];
    char revision[IG_HASH_STRLEN + 1];
    char idem[IG_IDEMPOTENCY_KEY_MAX + 1];
    int64_t now, expires_at, grant_expires_at, approval_expires_at;

    struct pol_decision decision; /* after NO_EXECUTOR adjustment */
    struct pol_decision policies; /* before it: for the shadow bundle */
    enum pol_verdict verdict;
    const struct pdp_principal *executor; /* ALLOW: the grant's audience */
    struct ig_buf grant;

    char *response_text; /* the 201 body */
    char *reasons_text, *requirements_text;
    char *trace_text; /* the explain trace (intent.decided only), or NULL */
    /* The audit events' canonical text, what the store appends. */
    char *event_text[2];
    size_t nevents;

    struct store_intent_rec rec;
    char *replay; /* idempotent twin's answer, from the store */
};

/* Each returns 0, or -1 after replying with an error. */
int pdp_intake_validate(struct pdp_req *r, json_t *body,
                        struct pdp_intake_body *in);
int pdp_intake_bind(struct pdp_req *r, struct pdp_intake_op *op,
                    const struct pdp_principal *agent,
                    const struct pdp_intake_body *in);
int pdp_intake_decide(struct pdp_req *r, struct pdp_intake_op *op);
int pdp_intake_prepare_record(struct pdp_req *r, struct pdp_intake_op *op,
                              const struct pdp_principal *agent,
                              const struct pdp_intake_body *in);

#endif
