/*
 * pdp_approval.c - votes on escalations.
 *
 * DESIGN
 * Every channel (web page, Slack, API) calls pdp_approval_vote(). Under
 * the store's vote lock (store_vote_lock: a mutex, and with PostgreSQL an
 * advisory lock that every replica on the database takes) it reads what
 * is recorded about the intent, applies the rules
 * (pdp_approval_rules.c) in a fixed order (group, resolved, expired,
 * self-approval, already voted, intent hash), and either audits the refusal or
 * builds one vote record: the vote, and when it decides the request, the
 * resolution, the new decision and (for an ALLOW) the grant, all written in one
 * transaction by the store's writer. The lock makes "count the votes,
 * then add one" atomic across threads and replicas (it is released only
 * after the vote is committed); the store's constraints back it up. A
 * lock that cannot be taken refuses the vote (503 STORE_UNAVAILABLE).
 *
 * At quorum the policies run again on the binding plus intent.approval
 * ({approval_id, groups, quorum, approvals:[{approver, groups, comment,
 * at}]}); only their ALLOW issues a grant (pdp_decision.c, as for a first
 * decision), which expires grant_ttl after the approval. Expired requests
 * are resolved by the sweeper thread of pdp_approval_sweep.c, under the
 * same lock. After a vote counts, srv->approval_changed tells the Slack
 * notifier (set at start-up: this file does not call the notifier).
 */
#include "pdp_approval.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ig_limits.h"
#include "pdp_approval_int.h"
#include "pdp_approval_intent.h"
#include "pdp_decision.h"
#include "pdp_int.h"
#include "pdp_shadow.h"

#define COMMENT_MAX IG_APPROVAL_COMMENT_MAX

/* ---- small helpers ---- */

static const char *
jstr(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

static unsigned int
status_of(const char *code)
{
    static const struct {
        const char *code;
        unsigned int status;
    } t[] = {{"APPROVAL_NOT_FOUND", 404},   {"NOT_ELIGIBLE", 403},
             {"SELF_APPROVAL", 403},        {"ALREADY_VOTED", 409},
             {"INTENT_HASH_MISMATCH", 409}, {"APPROVAL_RESOLVED", 409},
             {"APPROVAL_EXPIRED", 410},     {"INVALID_VOTE", 400},
             {"STORE_UNAVAILABLE", 503}};
    size_t i;

    for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
        if (strcmp(t[i].code, code) == 0)
            return t[i].status;
    return 500;
}

static const char *
message_of(const char *code)
{
    if (strcmp(code, "APPROVAL_NOT_FOUND") == 0)
        return "no such approval request";
    if (strcmp(code, "NOT_ELIGIBLE") == 0)
        return "you are not in a group this approval needs";
    if (strcmp(code, "SELF_APPROVAL") == 0)
        return "this is your own request (you are its agent, you run the "
               "agent that sent it, or it names you as its requester): "
               "someone else must decide it";
    if (strcmp(code, "ALREADY_VOTED") == 0)
        return "you already voted on this request";
    if (strcmp(code, "INTENT_HASH_MISMATCH") == 0)
        return "the intent hash you approved is not this intent's: reload "
               "and check what you approve";
    if (strcmp(code, "APPROVAL_RESOLVED") == 0)
        return "this request is already decided";
    if (strcmp(code, "APPROVAL_EXPIRED") == 0)
        return "this request expired; votes are no longer taken";
    if (strcmp(code, "INVALID_VOTE") == 0)
        return "a vote needs approve or deny and the intent hash it "
               "approves";
    return "the vote could not be recorded; try again";
}

static void
refuse(struct pdp_server *s, const struct pdp_vote *v, const char *intent_id,
       const char *code, struct pdp_vote_result *out)
{
    char now[IG_TIME_STRLEN + 1];
    /* Outside its groups the request does not exist for the approver (the
       same 404 as an unknown id); the audit keeps the real reason. A Slack
       clicker has seen the message already: told the reason. */
    const char *shown =
        strcmp(code, "NOT_ELIGIBLE") == 0 &&
                (v->channel == NULL || strcmp(v->channel, "slack") != 0)
            ? "APPROVAL_NOT_FOUND"
            : code;

    out->code = shown;
    out->http_status = status_of(shown);
    (void)snprintf(out->message, sizeof(out->message), "%s", message_of(shown));
    if (ig_time_format(ig_time_now(), now) != IG_OK)
        now[0] = '\0';
    pdp_audit_append(
        s, json_pack("{s:s, s:s, s:s, s:s?, s:s, s:s, s:s}", "type",
                     "approval.vote_refused", "time", now, "approval_id",
                     v->approval_id, "intent_id", intent_id, "approver",
                     v->approver != NULL ? v->approver->id : "", "channel",
                     v->channel != NULL ? v->channel : "", "code", code));
}

static int
vote_valid(const struct pdp_vote *v)
{
    return v->approval_id != NULL && v->approver != NULL &&
           v->intent_hash != NULL && ig_hash_is_valid(v->intent_hash) &&
           v->channel != NULL &&
           (v->comment == NULL || strlen(v->comment) <= COMMENT_MAX);
}

/* ---- deciding a request ---- */

struct outcome {
    const char *result; /* APPROVED, DENIED or NULL (still pending) */
    struct pol_decision d;
    char decision_id[IG_UUID_STRLEN + 1];
    char revision[IG_HASH_STRLEN + 1];
    char jti[IG_UUID_STRLEN + 1];
    char grant_exp_text[IG_TIME_STRLEN + 1];
    const struct pdp_principal *executor;
    struct ig_buf grant;
    int64_t grant_exp;
    json_t *reeval; /* what the policies evaluated at quorum, for the
                       shadow bundle (pdp_shadow.h); NULL otherwise */
    struct pol_decision policies; /* their own decision on it, for the same */
    json_t *trace; /* the re-evaluation's explain trace, or NULL */
};

/* a's groups as a new array; NULL on out-of-memory. */
static json_t *
groups_json(const struct pdp_approver *a)
{
    json_t *g = json_array();
    size_t i;

    for (i = 0; g != NULL && i < a->ngroups; i++)
        g = pdp_json_push(g, a->groups[i]);
    return g;
}

/* The intent the policies see at quorum (pdp_approval_intent.h): the
   binding plus approval, from the votes recorded so far and v's, cast at
   now. NULL on out-of-memory: the policies never see a list missing a
   vote. */
static json_t *
reeval_intent(const json_t *rec, const struct pdp_vote *v, int64_t now)
{
    const json_t *ap = json_object_get(rec, "approval");
    json_t *in, *deciding;

    /* "o" steals the groups (a NULL one fails the pack). */
    deciding = json_pack("{s:s, s:s, s:s, s:o, s:I}", "approver",
                         v->approver->id, "vote", "APPROVE", "comment",
                         v->comment != NULL ? v->comment : "", "groups",
                         groups_json(v->approver), "voted_at", (json_int_t)now);
    if (deciding == NULL)
        return NULL;
    in = pdp_approval_intent(json_object_get(rec, "binding"), v->approval_id,
                             json_object_get(ap, "requirements"),
                             json_object_get(ap, "votes"), deciding);
    json_decref(deciding);
    return in;
}

/* Sign the grant at quorum (pdp_decision.c): it lives grant_ttl from
   now, the approval, however long the humans took. */
static int
sign_grant(struct pdp_server *s, const json_t *rec, struct outcome *o,
           int64_t now)
{
    struct pdp_grant_in in;
    struct pdp_grant g;
    struct ig_err err;

    memset(&in, 0, sizeof(in));
    in.binding = json_object_get(rec, "binding");
    in.intent_id = jstr(rec, "intent_id");
    in.intent_hash = jstr(rec, "intent_hash");
    in.decision_id = o->decision_id;
    in.policy_revision = o->revision;
    in.executor = o->executor;
    in.now = now;
    g.token = &o->grant;
    if (pdp_decision_sign_grant(s, &in, &g, &err) != IG_OK)
        return -1;
    memcpy(o->jti, g.jti, sizeof(o->jti));
    memcpy(o->grant_exp_text, g.expires, sizeof(o->grant_exp_text));
    o->grant_exp = g.expires_at;
    return 0;
}

/* What this counted vote decides. 0, or -1 when a grant cannot be made. */
static int
decide(struct pdp_server *s, const json_t *rec, const struct pdp_vote *v,
       int approvals, int quorum, struct outcome *o, int64_t now)
{
    const json_t *b = json_object_get(rec, "binding");
    char msg[POL_MESSAGE_MAX];
    char *trace = NULL;
    json_t *in;

    ig_uuid4(o->decision_id);
    if (!v->approve) {
        o->result = "DENIED";
        (void)snprintf(msg, sizeof(msg), "denied by %s", v->approver->id);
        pdp_decision_block(&o->d, "APPROVAL_DENIED", msg);
        (void)snprintf(o->revision, sizeof(o->revision), "%s",
                       pdp_approval_revision(rec));
        return 0;
    }
    if (approvals < quorum)
        return 0;
    o->result = "APPROVED";
    in = reeval_intent(rec, v, now);
    if (in == NULL) {
        pdp_decision_block(&o->d, "POLICY_ERROR",
                           "out of memory building the re-evaluation");
        return 0;
    }
    if (pdp_policies_eval_traced(s, in, &o->d, o->revision, &trace) != 0) {
        free(trace);
        json_decref(in);
        return -1; /* the store failed: the vote is refused, unrecorded */
    }
    o->reeval = in; /* released by apply() */
    o->policies = o->d;
    /* Canonical text we made: parsing it back fails only out of memory,
       and a decision must not be recorded without its trace. */
    if (trace != NULL) {
        o->trace = json_loads(trace, 0, NULL);
        free(trace);
        if (o->trace == NULL)
            pdp_decision_block(&o->d, "POLICY_ERROR",
                               "out of memory recording the policy trace");
    }
    if (o->d.verdict == POL_ESCALATE)
        pdp_decision_block(
            &o->d, "APPROVAL_NOT_SUFFICIENT",
            "the policies still ask for approval after the quorum "
            "was reached");
    if (o->d.verdict == POL_BLOCK && o->d.nreasons == 0)
        pdp_decision_block(&o->d, "NO_POLICY_MATCHED",
                           "no policy allowed this intent after approval");
    if (o->d.verdict == POL_ALLOW) {
        o->executor = pdp_config_executor_for(s->cfg, jstr(b, "action"));
        if (o->executor == NULL) {
            pdp_decision_no_executor_msg(msg, sizeof(msg), jstr(b, "action"),
                                         1);
            pdp_decision_block(&o->d, "NO_EXECUTOR", msg);
        }
    }
    if (o->d.message[0] == '\0')
        (void)snprintf(o->d.message, sizeof(o->d.message), "%s",
                       o->d.verdict == POL_ALLOW ? "allowed after approval"
                                                 : "blocked after approval");
    return o->d.verdict == POL_ALLOW ? sign_grant(s, rec, o, now) : 0;
}

/* ---- recording a vote ---- */

struct vote_texts {
    char *groups, *reasons, *ev[3];
    size_t nev;
};

static void
texts_free(struct vote_texts *t)
{
    size_t i;

    free(t->groups);
    free(t->reasons);
    for (i = 0; i < t->nev; i++)
        free(t->ev[i]);
}

static int
add_event(struct vote_texts *t, json_t *ev)
{
    char *text = ev != NULL ? pdp_json_text(ev) : NULL;

    json_decref(ev);
    if (text == NULL)
        return -1;
    t->ev[t->nev++] = text;
    return 0;
}

/* The vote itself: r's vote fields and its approval.voted event. */
static int
build_vote(const json_t *rec, const struct pdp_vote *v, const char *when,
           int64_t now, struct store_vote_rec *r, struct vote_texts *t)
{
    json_t *g = groups_json(v->approver);

    t->groups = g != NULL ? pdp_json_text(g) : NULL;
    json_decref(g);
    r->intent_id = jstr(rec, "intent_id");
    r->approver = v->approver->id;
    r->vote = v->approve ? "APPROVE" : "DENY";
    r->comment = v->comment != NULL ? v->comment : "";
    r->channel = v->channel;
    r->groups = t->groups;
    r->intent_hash = v->intent_hash;
    r->at = now;
    if (t->groups == NULL)
        return -1;
    return add_event(
        t, json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, "
                     "s:s}",
                     "type", "approval.voted", "time", when, "approval_id",
                     v->approval_id, "intent_id", r->intent_id, "approver",
                     v->approver->id, "vote", r->vote, "comment", r->comment,
                     "channel", v->channel, "intent_hash", v->intent_hash));
}

/* The resolution this vote makes: r's decision fields, the
   approval.resolved and intent.decided events (with the grant of an
   ALLOW). A field that cannot be added fails the whole record. */
static int
build_resolution(const struct pdp_vote *v, const struct outcome *o,
                 const char *when, struct store_vote_rec *r,
                 struct vote_texts *t)
{
    const char *verdict = pol_verdict_name(o->d.verdict);
    json_t *g, *ev;

    r->result = o->result;
    if (add_event(t, json_pack("{s:s, s:s, s:s, s:s, s:s}", "type",
                               "approval.resolved", "time", when, "approval_id",
                               v->approval_id, "intent_id", r->intent_id,
                               "result", o->result)) != 0)
        return -1;
    g = pdp_decision_reasons(&o->d);
    t->reasons = g != NULL ? pdp_json_text(g) : NULL;
    r->decision_id = o->decision_id;
    r->decision = verdict;
    r->reasons = t->reasons;
    r->message = o->d.message;
    r->policy_revision = o->revision;
    /* "o" steals the reasons array (a NULL one fails the pack). */
    ev = json_pack("{s:s, s:s, s:s, s:s, s:s, s:o, s:s, s:s, s:s}", "type",
                   "intent.decided", "time", when, "intent_id", r->intent_id,
                   "decision_id", o->decision_id, "decision", verdict,
                   "reasons", g, "message", o->d.message, "policy_revision",
                   o->revision, "approval_id", v->approval_id);
    /* json_object_set steals nothing: o keeps its trace. */
    if (ev != NULL && o->trace != NULL &&
        json_object_set(ev, "trace", o->trace) != 0) {
        json_decref(ev);
        ev = NULL;
    }
    if (ev != NULL && o->d.verdict == POL_ALLOW) {
        r->grant_jti = o->jti;
        r->grant_aud = o->executor->id;
        r->grant_token = o->grant.data;
        r->grant_expires_at = o->grant_exp;
        /* json_object_set_new steals the grant object. */
        if (json_object_set_new(ev, "grant",
                                json_pack("{s:s, s:s, s:s}", "jti", o->jti,
                                          "audience", o->executor->id,
                                          "expires_at", o->grant_exp_text)) !=
            0) {
            json_decref(ev);
            ev = NULL;
        }
    }
    return add_event(t, ev) != 0 || t->reasons == NULL ? -1 : 0;
}

/* Fill r and t (texts r points into) for this vote and its outcome. */
static int
build_record(const json_t *rec, const struct pdp_vote *v,
             const struct outcome *o, int64_t now, struct store_vote_rec *r,
             struct vote_texts *t)
{
    char when[IG_TIME_STRLEN + 1];

    memset(r, 0, sizeof(*r));
    if (ig_time_format(now, when) != IG_OK ||
        build_vote(rec, v, when, now, r, t) != 0 ||
        (o->result != NULL && build_resolution(v, o, when, r, t) != 0))
        return -1;
    r->events = (const char *const *)t->ev;
    r->nevents = t->nev;
    return 0;
}

static void
counted(const struct outcome *o, int approvals, int quorum,
        struct pdp_vote_result *out)
{
    out->code = NULL;
    out->http_status = 200;
    out->approvals = approvals;
    out->quorum = quorum;
    out->status = o->result != NULL ? o->result : "PENDING";
    out->decision = o->result != NULL ? pol_verdict_name(o->d.verdict) : NULL;
    (void)snprintf(out->message, sizeof(out->message), "%s",
                   o->result == NULL           ? "your vote was counted; more "
                                                 "approvals are needed"
                   : o->d.verdict == POL_ALLOW ? "approved: the grant was "
                                                 "issued"
                                               : o->d.message);
}

/* Apply v to the recorded rec; under the vote lock. */
static void
apply(struct pdp_server *s, const json_t *rec, const struct pdp_vote *v,
      struct pdp_vote_result *out)
{
    const json_t *ap = json_object_get(rec, "approval");
    int64_t now = ig_time_now();
    const char *code = pdp_approval_refusal(rec, v->approver, now);
    struct store_vote_rec r;
    struct vote_texts t;
    struct outcome o;
    int approvals, quorum;
    enum ig_status st;

    if (code == NULL && strcmp(v->intent_hash, jstr(rec, "intent_hash")) != 0)
        code = "INTENT_HASH_MISMATCH";
    if (code != NULL) {
        refuse(s, v, jstr(rec, "intent_id"), code, out);
        return;
    }
    /* Stored JSON numbers read back as reals (I-JSON). */
    quorum = (int)json_number_value(
        json_object_get(json_object_get(ap, "requirements"), "quorum"));
    if (quorum < 1)
        quorum = 1;
    approvals = pdp_approval_count(json_object_get(ap, "votes")) + v->approve;
    memset(&o, 0, sizeof(o));
    memset(&t, 0, sizeof(t));
    ig_buf_init(&o.grant, IG_TOKEN_MAX_BYTES);
    if (decide(s, rec, v, approvals, quorum, &o, now) != 0 ||
        build_record(rec, v, &o, now, &r, &t) != 0)
        st = IG_ERR_NOMEM;
    else
        st = store_put_vote(s->store, &r);
    if (st == IG_OK && o.reeval != NULL) /* after the commit, off the reply */
        pdp_shadow_submit(s, o.reeval, jstr(rec, "intent_id"), &o.policies,
                          o.revision, now);
    json_decref(o.reeval);
    if (st == IG_OK)
        counted(&o, approvals, quorum, out);
    else
        refuse(s, v, jstr(rec, "intent_id"),
               st == IG_ERR_EXISTS ? "ALREADY_VOTED" : "STORE_UNAVAILABLE",
               out);
    texts_free(&t);
    ig_buf_release(&o.grant);
    json_decref(o.trace);
}

void
pdp_approval_vote(struct pdp_server *s, const struct pdp_vote *v,
                  struct pdp_vote_result *out)
{
    char *intent_id = NULL;
    json_t *rec = NULL;
    enum ig_status st;

    memset(out, 0, sizeof(*out));
    if (!vote_valid(v)) {
        refuse(s, v, NULL, "INVALID_VOTE", out);
        return;
    }
    if (store_vote_lock(s->store) != IG_OK) {
        refuse(s, v, NULL, "STORE_UNAVAILABLE", out);
        return;
    }
    st = store_approval_intent(s->store, v->approval_id, &intent_id);
    if (st == IG_OK)
        st = store_get_intent(s->store, intent_id, &rec);
    if (st == IG_OK) {
        (void)snprintf(out->intent_id, sizeof(out->intent_id), "%s", intent_id);
        apply(s, rec, v, out);
    } else {
        refuse(s, v, NULL,
               st == IG_ERR_NOTFOUND ? "APPROVAL_NOT_FOUND"
                                     : "STORE_UNAVAILABLE",
               out);
    }
    store_vote_unlock(s->store);
    if (out->code == NULL && s->approval_changed != NULL)
        s->approval_changed(s, intent_id);
    json_decref(rec);
    free(intent_id);
}
