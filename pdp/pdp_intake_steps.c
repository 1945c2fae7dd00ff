/*
 * pdp_intake_steps.c - the steps of POST /v1/intents (see pdp_intake.c):
 * validate the agent's body, bind it to trusted state, decide, and prepare
 * the records, the audit events and the answer.
 */
#include "pdp_intake_int.h"

#include <stdio.h>
#include <string.h>

#include "ig_canon.h"
#include "ig_limits.h"
#include "ig_text.h"
#include "pdp_decision.h"

/* ---- validate ---- */

/* Code points in valid UTF-8 text of len bytes. */
static size_t
utf8_chars(const char *s, size_t len)
{
    size_t i, n = 0;

    for (i = 0; i < len; i++)
        if (((unsigned char)s[i] & 0xc0) != 0x80)
            n++;
    return n;
}

static int
check_keys(struct pdp_req *r, json_t *body)
{
    static const char *const allowed[] = {"action", "resource", "params",
                                          "context", "idempotency_key"};
    void *it;
    size_t i, klen;
    const char *k;

    for (it = json_object_iter(body); it != NULL;
         it = json_object_iter_next(body, it)) {
        k = json_object_iter_key(it);
        klen = json_object_iter_key_len(it);
        for (i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++)
            if (klen == strlen(allowed[i]) && strcmp(k, allowed[i]) == 0)
                break;
        if (i == sizeof(allowed) / sizeof(allowed[0])) {
            pdp_reply_error(r, 400, "UNKNOWN_FIELD", k,
                            "unknown field \"%s\": the body may hold only "
                            "action, resource, params, context and "
                            "idempotency_key",
                            k);
            return -1;
        }
    }
    return 0;
}

static int
missing(struct pdp_req *r, const char *field, const char *what)
{
    pdp_reply_error(r, 400, "MISSING_FIELD", field, "%s is required: %s", field,
                    what);
    return -1;
}

static int
invalid(struct pdp_req *r, const char *field, const char *what)
{
    pdp_reply_error(r, 400, "INVALID_FIELD", field, "%s %s", field, what);
    return -1;
}

/* The same for a length out of 1..max (the limit's number is formatted
   from its constant, never typed). */
static int
invalid_length(struct pdp_req *r, const char *field, const char *what, long max,
               const char *unit_and_more)
{
    pdp_reply_error(r, 400, "INVALID_FIELD", field, "%s must be %s1 to %ld %s",
                    field, what, max, unit_and_more);
    return -1;
}

static int
invalid_action(struct pdp_req *r)
{
    pdp_reply_error(r, 400, "INVALID_FIELD", "action",
                    "action must match ^[a-z][a-z0-9._:-]{0,%d}$",
                    IG_ACTION_MAX - 1);
    return -1;
}

static int
check_idem(struct pdp_req *r, json_t *v, const char **out)
{
    const char *s;
    size_t i, n;

    *out = NULL;
    if (v == NULL)
        return 0;
    if (!json_is_string(v))
        return invalid(r, "idempotency_key", "must be a string");
    s = json_string_value(v);
    n = json_string_length(v);
    if (n < 1 || n > IG_IDEMPOTENCY_KEY_MAX)
        return invalid_length(r, "idempotency_key", "", IG_IDEMPOTENCY_KEY_MAX,
                              "characters");
    for (i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x21 || (unsigned char)s[i] > 0x7e)
            return invalid(r, "idempotency_key",
                           "must be printable ASCII without spaces");
    *out = s;
    return 0;
}

int
pdp_intake_validate(struct pdp_req *r, json_t *body, struct pdp_intake_body *in)
{
    json_t *v;

    memset(in, 0, sizeof(*in));
    if (check_keys(r, body) != 0)
        return -1;
    v = json_object_get(body, "action");
    if (v == NULL)
        return missing(r, "action", "the action to take, e.g. git.push");
    if (!json_is_string(v) || !ig_action_valid(json_string_value(v)) ||
        json_string_length(v) != strlen(json_string_value(v)))
        return invalid_action(r);
    in->action = json_string_value(v);
    v = json_object_get(body, "resource");
    if (v == NULL)
        return missing(r, "resource", "what the action applies to");
    if (!json_is_string(v) || json_string_length(v) == 0 ||
        strlen(json_string_value(v)) != json_string_length(v) ||
        utf8_chars(json_string_value(v), json_string_length(v)) >
            IG_RESOURCE_MAX_CHARS)
        return invalid_length(r, "resource", "a string of ",
                              IG_RESOURCE_MAX_CHARS, "characters, without NUL");
    in->resource = json_string_value(v);
    in->params = json_object_get(body, "params");
    if (in->params == NULL)
        return missing(r, "params", "an object (may be empty)");
    if (!json_is_object(in->params))
        return invalid(r, "params", "must be an object");
    in->context = json_object_get(body, "context");
    if (in->context != NULL && !json_is_object(in->context))
        return invalid(r, "context", "must be an object");
    return check_idem(r, json_object_get(body, "idempotency_key"), &in->idem);
}

/* ---- bind ---- */

static int
internal(struct pdp_req *r, const char *what)
{
    pdp_reply_error(r, 500, "INTERNAL", NULL, "%s", what);
    return -1;
}

int
pdp_intake_bind(struct pdp_req *r, struct pdp_intake_op *op,
                const struct pdp_principal *agent,
                const struct pdp_intake_body *in)
{
    const struct pdp_config *c = r->srv->cfg;
    json_t *ctx =
        in->context != NULL ? json_incref(in->context) : json_object();
    struct ig_err err;

    op->now = ig_time_now();
    op->expires_at = op->now + c->intent_ttl;
    ig_uuid7(op->intent_id);
    ig_uuid4(op->decision_id);
    if (ig_time_format(op->now, op->created) != IG_OK ||
        ig_time_format(op->expires_at, op->expires) != IG_OK || ctx == NULL)
        return internal(r, "cannot read the clock");
    if (in->idem != NULL)
        (void)snprintf(op->idem, sizeof(op->idem), "%s", in->idem);
    /* "O" takes a new reference to params; "o" steals ctx. */
    op->binding = json_pack(
        "{s:s, s:s, s:s, s:s, s:s, s:s, s:O, s:o, s:s, s:s}", "version",
        "intentgate.intent/1", "intent_id", op->intent_id, "principal",
        agent->id, "tenant", agent->tenant, "action", in->action, "resource",
        in->resource, "params", in->params, "context", ctx, "created_at",
        op->created, "expires_at", op->expires);
    if (op->binding == NULL)
        return internal(r, "cannot build the intent binding");
    if (ig_canon_write(op->binding, &op->canon, &err) != IG_OK) {
        pdp_reply_error(r, 400, "INVALID_JSON", NULL,
                        "the intent has no canonical form: %s", err.msg);
        return -1;
    }
    ig_hash_bytes(op->canon.data, op->canon.len, op->intent_hash);
    return 0;
}

/* ---- decide ---- */

/* Sign the ALLOW's grant (pdp_decision.c), bounded by the intent's own
   expiry. */
static int
sign_grant(struct pdp_req *r, struct pdp_intake_op *op)
{
    struct pdp_grant_in in;
    struct pdp_grant g;
    struct ig_err err;

    memset(&in, 0, sizeof(in));
    in.binding = op->binding;
    in.intent_id = op->intent_id;
    in.intent_hash = op->intent_hash;
    in.decision_id = op->decision_id;
    in.policy_revision = op->revision;
    in.executor = op->executor;
    in.now = op->now;
    in.not_after = op->expires_at;
    g.token = &op->grant;
    if (pdp_decision_sign_grant(r->srv, &in, &g, &err) != IG_OK)
        return internal(r, err.msg);
    memcpy(op->jti, g.jti, sizeof(op->jti));
    memcpy(op->grant_expires, g.expires, sizeof(op->grant_expires));
    op->grant_expires_at = g.expires_at;
    return 0;
}

int
pdp_intake_decide(struct pdp_req *r, struct pdp_intake_op *op)
{
    struct pol_decision *d = &op->decision;
    char msg[POL_MESSAGE_MAX];
    int64_t ttl;
    const char *action;

    /* op->trace_text is freed with op, also after a 503. */
    if (pdp_policies_eval_traced(r->srv, op->binding, d, op->revision,
                                 &op->trace_text) != 0) {
        pdp_reply_error(r, 503, "STORE_UNAVAILABLE", NULL,
                        "the policies' count() could not be read from the "
                        "store; nothing was recorded; try again");
        return -1;
    }
    op->policies = *d; /* what the shadow compares (pdp_shadow.h) */
    action = json_string_value(json_object_get(op->binding, "action"));
    if (d->verdict == POL_ALLOW) {
        op->executor = pdp_config_executor_for(r->srv->cfg, action);
        if (op->executor == NULL) {
            pdp_decision_no_executor_msg(msg, sizeof(msg), action, 0);
            pdp_decision_block(d, "NO_EXECUTOR", msg);
        }
    }
    if (d->verdict == POL_BLOCK && d->nreasons == 0)
        pdp_decision_block(d, "NO_POLICY_MATCHED",
                           "no policy allowed this intent");
    op->verdict = d->verdict;
    if (d->message[0] == '\0')
        (void)snprintf(d->message, sizeof(d->message), "%s",
                       d->verdict == POL_ALLOW ? "allowed by policy"
                                               : "needs human approval");
    if (op->verdict == POL_ALLOW)
        return sign_grant(r, op);
    if (op->verdict == POL_ESCALATE) {
        ttl = d->ttl_seconds > 0 ? d->ttl_seconds : r->srv->cfg->approval_ttl;
        if (ttl > IG_APPROVAL_TTL_MAX)
            ttl = IG_APPROVAL_TTL_MAX;
        if (d->quorum < 1) /* the policy named none */
            d->quorum = r->srv->cfg->approval_quorum;
        ig_uuid4(op->approval_id);
        op->approval_expires_at = op->now + ttl;
        if (ig_time_format(op->approval_expires_at, op->approval_expires) !=
            IG_OK)
            return internal(r, "cannot read the clock");
    }
    return 0;
}

/* ---- prepare the record ---- */

static json_t *
requirements(const struct pol_decision *d)
{
    json_t *g = json_array();
    size_t i;

    for (i = 0; g != NULL && i < d->ngroups; i++)
        g = pdp_json_push(g, d->groups[i]);
    /* "o" steals g; a NULL g fails the pack: never a short list. */
    return json_pack("{s:o, s:i}", "groups", g, "quorum", d->quorum);
}

/* Move out's text into *text; -1 when st failed or out of memory. */
static int
take_text(enum ig_status st, struct ig_buf *out, char **text)
{
    if (st == IG_OK)
        *text = ig_buf_take(out, NULL);
    ig_buf_release(out);
    return st == IG_OK && *text != NULL ? 0 : -1;
}

/* The 201 body. */
static int
build_response(struct pdp_intake_op *op, const char *verdict)
{
    struct pdp_answer a;
    struct ig_buf out;

    memset(&a, 0, sizeof(a));
    a.intent_id = op->intent_id;
    a.intent_hash = op->intent_hash;
    a.binding = op->canon.data;
    a.binding_len = op->canon.len;
    a.decision = verdict;
    a.reasons = op->reasons_text;
    a.message = op->decision.message;
    a.policy_revision = op->revision;
    a.decision_id = op->decision_id;
    if (op->verdict == POL_ALLOW) {
        a.grant = op->grant.data;
        a.grant_expires_at = op->grant_expires;
    } else if (op->verdict == POL_ESCALATE) {
        a.approval_id = op->approval_id;
        a.approval_expires_at = op->approval_expires;
    }
    ig_buf_init(&out, IG_CANON_MAX_BYTES);
    return take_text(pdp_answer_text(&a, &out), &out, &op->response_text);
}

/* intent.received: the recorded copy of the binding (sensitive params
   redacted, pdp_audit.c; the intent hash is the real binding's). Without
   redaction that copy is the binding itself, whose canonical text is
   already written. */
static int
event_received(struct pdp_server *srv, struct pdp_intake_op *op,
               const struct pdp_principal *agent)
{
    json_t *recorded = pdp_audit_redact_intent(srv, op->binding);
    struct ig_buf copy, out;
    struct ig_canon_obj o;
    const struct ig_buf *intent = &op->canon;
    enum ig_status st = recorded != NULL ? IG_OK : IG_ERR_NOMEM;

    ig_buf_init(&copy, IG_CANON_MAX_BYTES);
    ig_buf_init(&out, IG_CANON_MAX_BYTES);
    if (st == IG_OK && recorded != op->binding) {
        st = ig_canon_write(recorded, &copy, NULL);
        intent = &copy;
    }
    json_decref(recorded);
    if (st == IG_OK) {
        ig_canon_obj_begin(&o, &out, NULL);
        ig_canon_obj_raw(&o, "intent", intent->data, intent->len);
        ig_canon_obj_str(&o, "intent_hash", op->intent_hash);
        ig_canon_obj_str(&o, "intent_id", op->intent_id);
        ig_canon_obj_str(&o, "principal", agent->id);
        ig_canon_obj_str(&o, "tenant", agent->tenant);
        ig_canon_obj_str(&o, "time", op->created);
        ig_canon_obj_str(&o, "type", "intent.received");
        st = ig_canon_obj_end(&o);
    }
    ig_buf_release(&copy);
    return take_text(st, &out, &op->event_text[0]);
}

/* intent.decided, with the grant or the approval request. */
static int
event_decided(struct pdp_intake_op *op, const char *verdict)
{
    struct ig_canon_obj o, sub;
    struct ig_buf out;

    ig_buf_init(&out, IG_CANON_MAX_BYTES);
    ig_canon_obj_begin(&o, &out, NULL);
    if (op->verdict == POL_ESCALATE) {
        ig_canon_obj_open(&o, "approval", &sub);
        ig_canon_obj_str(&sub, "approval_id", op->approval_id);
        ig_canon_obj_str(&sub, "expires_at", op->approval_expires);
        ig_canon_obj_raw(&sub, "requirements", op->requirements_text,
                         strlen(op->requirements_text));
        (void)ig_canon_obj_end(&sub);
    }
    ig_canon_obj_str(&o, "decision", verdict);
    ig_canon_obj_str(&o, "decision_id", op->decision_id);
    if (op->verdict == POL_ALLOW) {
        ig_canon_obj_open(&o, "grant", &sub);
        ig_canon_obj_str(&sub, "audience", op->executor->id);
        ig_canon_obj_str(&sub, "expires_at", op->grant_expires);
        ig_canon_obj_str(&sub, "jti", op->jti);
        (void)ig_canon_obj_end(&sub);
    }
    ig_canon_obj_str(&o, "intent_id", op->intent_id);
    ig_canon_obj_str(&o, "message", op->decision.message);
    ig_canon_obj_str(&o, "policy_revision", op->revision);
    ig_canon_obj_raw(&o, "reasons", op->reasons_text, strlen(op->reasons_text));
    ig_canon_obj_str(&o, "time", op->created);
    if (op->trace_text != NULL) /* the agent's answer never carries it */
        ig_canon_obj_raw(&o, "trace", op->trace_text, strlen(op->trace_text));
    ig_canon_obj_str(&o, "type", "intent.decided");
    return take_text(ig_canon_obj_end(&o), &out, &op->event_text[1]);
}

/* The texts the record and the answer are made of. */
static int
fill_texts(struct pdp_server *srv, struct pdp_intake_op *op,
           const struct pdp_principal *agent, const char *verdict)
{
    json_t *reasons = pdp_decision_reasons(&op->decision), *req = NULL;

    op->reasons_text = reasons != NULL ? pdp_json_text(reasons) : NULL;
    json_decref(reasons);
    if (op->reasons_text == NULL)
        return -1;
    if (op->verdict == POL_ESCALATE) {
        req = requirements(&op->decision);
        op->requirements_text = pdp_json_text(req);
        json_decref(req);
        if (op->requirements_text == NULL)
            return -1;
    }
    op->nevents = 2;
    return build_response(op, verdict) != 0 ||
                   event_received(srv, op, agent) != 0 ||
                   event_decided(op, verdict) != 0
               ? -1
               : 0;
}

int
pdp_intake_prepare_record(struct pdp_req *r, struct pdp_intake_op *op,
                          const struct pdp_principal *agent,
                          const struct pdp_intake_body *in)
{
    const char *verdict = pol_verdict_name(op->verdict);
    struct store_intent_rec *rec = &op->rec;

    if (fill_texts(r->srv, op, agent, verdict) != 0)
        return internal(r, "out of memory");
    memset(rec, 0, sizeof(*rec));
    rec->intent_id = op->intent_id;
    rec->principal = agent->id;
    rec->tenant = agent->tenant;
    rec->action = json_string_value(json_object_get(op->binding, "action"));
    rec->resource = json_string_value(json_object_get(op->binding, "resource"));
    rec->intent_hash = op->intent_hash;
    rec->binding = op->canon.data;
    rec->idempotency_key = in->idem != NULL ? op->idem : NULL;
    rec->created_at = op->now;
    rec->expires_at = op->expires_at;
    rec->decision_id = op->decision_id;
    rec->decision = verdict;
    rec->reasons = op->reasons_text;
    rec->message = op->decision.message;
    rec->policy_revision = op->revision;
    if (op->verdict == POL_ALLOW) {
        rec->grant_jti = op->jti;
        rec->grant_aud = op->executor->id;
        rec->grant_token = op->grant.data;
        rec->grant_expires_at = op->grant_expires_at;
    } else if (op->verdict == POL_ESCALATE) {
        rec->approval_id = op->approval_id;
        rec->approval_requirements = op->requirements_text;
        rec->approval_expires_at = op->approval_expires_at;
    }
    rec->events = (const char *const *)op->event_text;
    rec->nevents = op->nevents;
    return 0;
}
