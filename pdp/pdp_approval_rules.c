/*
 * pdp_approval_rules.c - who may read and vote on an approval request, as
 * pure functions of its record (pdp_approval_int.h): the groups, the
 * count of approvals, and the refusal a vote would get, in the order
 * pdp_approval.c applies them. Used by votes and by the views alike, so
 * what an approver is shown ("you cannot vote: ...") is what a vote gets.
 *
 * Own request: decided on facts the PDP established - the principal whose
 * token submitted the intent, and the agents the config says an approver
 * runs - and never relaxed by what the agent claims. context.requested_by
 * is the agent's claim: when it names the approver it adds a refusal,
 * nothing else.
 */
#include "pdp_approval_int.h"

#include <string.h>
#include <strings.h>

#include "pdp_config.h"

static const char *
jstr(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

int
pdp_approval_in_groups(const json_t *req, const struct pdp_approver *a)
{
    json_t *g;
    size_t i;

    json_array_foreach(json_object_get(req, "groups"), i, g)
    {
        if (pdp_approver_in_group(a, json_string_value(g)))
            return 1;
    }
    return 0;
}

int
pdp_approval_count(const json_t *votes)
{
    json_t *v;
    size_t i;
    int n = 0;

    json_array_foreach(votes, i, v)
    {
        const char *s = jstr(v, "vote");
        if (s != NULL && strcmp(s, "APPROVE") == 0)
            n++;
    }
    return n;
}

static int
has_voted(const json_t *votes, const char *approver)
{
    json_t *v;
    size_t i;

    json_array_foreach(votes, i, v)
    {
        const char *s = jstr(v, "approver");
        if (s != NULL && strcmp(s, approver) == 0)
            return 1;
    }
    return 0;
}

const char *
pdp_approval_revision(const json_t *rec)
{
    const json_t *ds = json_object_get(rec, "decisions");
    const char *r =
        jstr(json_array_get(ds, json_array_size(ds) - 1), "policy_revision");

    return r != NULL ? r : "";
}

/* 1 when claim (a string, or an array of strings) names a: its id, its
   name or its Slack user, ignoring ASCII case. */
static int
claim_names(const json_t *claim, const struct pdp_approver *a)
{
    const char *s = json_string_value(claim);
    const json_t *x;
    size_t i;

    if (json_is_array(claim)) {
        json_array_foreach(claim, i, x)
        {
            if (claim_names(json_is_string(x) ? x : NULL, a))
                return 1;
        }
        return 0;
    }
    return s != NULL &&
           (strcasecmp(s, a->id) == 0 ||
            (a->name != NULL && strcasecmp(s, a->name) == 0) ||
            (a->slack_user != NULL && strcasecmp(s, a->slack_user) == 0));
}

int
pdp_approval_self(const json_t *rec, const struct pdp_approver *a)
{
    const json_t *b = json_object_get(rec, "binding");
    const char *who[2];
    size_t i;

    /* Facts: the principal whose token submitted the intent (as recorded
       beside the binding and inside it) is a, or an agent the config
       says a runs. An intent without one is refused outright. */
    who[0] = jstr(rec, "principal");
    who[1] = jstr(b, "principal");
    for (i = 0; i < 2; i++)
        if (who[i] == NULL || strcmp(who[i], a->id) == 0 ||
            pdp_approver_runs(a, who[i]))
            return 1;
    /* The agent's claim (context.requested_by) can only add a refusal. */
    return claim_names(
        json_object_get(json_object_get(b, "context"), "requested_by"), a);
}

const char *
pdp_approval_refusal(const json_t *rec, const struct pdp_approver *a,
                     int64_t now)
{
    const json_t *ap = json_object_get(rec, "approval");
    const char *result = jstr(json_object_get(ap, "resolution"), "result");

    if (ap == NULL)
        return "APPROVAL_NOT_FOUND";
    /* First: for an approver outside its groups nothing else about the
       request may show (its state included). */
    if (a == NULL ||
        !pdp_approval_in_groups(json_object_get(ap, "requirements"), a))
        return "NOT_ELIGIBLE";
    if (json_object_get(ap, "resolution") != NULL)
        return result != NULL && strcmp(result, "EXPIRED") == 0
                   ? "APPROVAL_EXPIRED"
                   : "APPROVAL_RESOLVED";
    if (json_integer_value(json_object_get(ap, "expires_at")) <= now)
        return "APPROVAL_EXPIRED";
    if (pdp_approval_self(rec, a))
        return "SELF_APPROVAL";
    if (has_voted(json_object_get(ap, "votes"), a->id))
        return "ALREADY_VOTED";
    return NULL;
}
