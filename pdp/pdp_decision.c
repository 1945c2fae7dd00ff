/*
 * pdp_decision.c - blocking a decision with our own reason, and signing
 * the grant of an ALLOW: the one copy of each that the first decision
 * (pdp_intake_steps.c) and the decision at quorum (pdp_approval.c) call.
 *
 * The two paths differ only in what they pass: the first decision bounds
 * the grant by the intent's expires_at; a grant issued on approval lives
 * grant_ttl from the approval, however long the humans took.
 */
#include "pdp_decision.h"

#include <stdio.h>
#include <string.h>

#include "ig_grant.h"
#include "pdp_int.h"

void
pdp_decision_block(struct pol_decision *d, const char *reason, const char *msg)
{
    struct pol_decision old = *d;
    size_t i;

    memset(d, 0, sizeof(*d));
    d->verdict = POL_BLOCK;
    (void)snprintf(d->reasons[0], POL_REASON_MAX, "%s", reason);
    d->nreasons = 1;
    /* Keep the policies' own reasons after ours. */
    for (i = 0; i < old.nreasons && d->nreasons < POL_MAX_REASONS; i++)
        if (strcmp(old.reasons[i], reason) != 0)
            memcpy(d->reasons[d->nreasons++], old.reasons[i], POL_REASON_MAX);
    (void)snprintf(d->message, POL_MESSAGE_MAX, "%s", msg);
}

void
pdp_decision_no_executor_msg(char *out, size_t cap, const char *action,
                             int at_quorum)
{
    if (at_quorum)
        (void)snprintf(out, cap,
                       "approved, but no configured executor handles %s",
                       action);
    else
        (void)snprintf(out, cap,
                       "policy allowed %s but no configured executor "
                       "handles it",
                       action);
}

json_t *
pdp_decision_reasons(const struct pol_decision *d)
{
    json_t *a = json_array();
    size_t i;

    for (i = 0; a != NULL && i < d->nreasons; i++)
        a = pdp_json_push(a, d->reasons[i]);
    return a;
}

static const char *
jstr(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

enum ig_status
pdp_decision_sign_grant(struct pdp_server *s, const struct pdp_grant_in *in,
                        struct pdp_grant *out, struct ig_err *err)
{
    struct ig_grant_claims cl;
    struct ig_err why;
    enum ig_status st;

    ig_uuid4(out->jti);
    out->expires_at = in->now + s->cfg->grant_ttl;
    if (in->not_after > 0 && out->expires_at > in->not_after)
        out->expires_at = in->not_after;
    if (ig_time_format(out->expires_at, out->expires) != IG_OK)
        return ig_err_set(err, IG_ERR_IO, "cannot read the clock");
    memset(&cl, 0, sizeof(cl));
    cl.iss = s->cfg->issuer;
    cl.aud = in->executor->id;
    cl.sub = jstr(in->binding, "principal");
    cl.jti = out->jti;
    cl.intent_id = in->intent_id;
    cl.intent_hash = in->intent_hash;
    cl.action = jstr(in->binding, "action");
    cl.resource = jstr(in->binding, "resource");
    cl.decision_id = in->decision_id;
    cl.policy_revision = in->policy_revision;
    cl.iat = cl.nbf = in->now;
    cl.exp = out->expires_at;
    ig_err_clear(&why);
    st = ig_grant_sign(s->key, &cl, out->token, &why);
    if (st != IG_OK) {
        pdp_log("error", "grant.sign_failed",
                json_pack("{s:s?, s:s}", "intent_id", in->intent_id, "error",
                          why.msg));
        return ig_err_set(err, st, "cannot sign the grant");
    }
    return IG_OK;
}
