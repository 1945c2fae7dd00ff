/*
 * pdp_approval_view.c - what an approver is shown: one approval request
 * with its intent, reasons and votes, and the list of pending requests for
 * the approver's groups. Built from the recorded intent (store) so the
 * web page, Slack and the CLI all show the same thing.
 *
 * Who may read: an approver in one of the request's groups (the voting
 * rule's first test); to anyone else it does not exist. The view keeps
 * what the PDP established (principal, tenant, the approvers the config
 * says run that agent) apart from what the agent claims (its context,
 * repeated as claimed_by_agent) so every channel can label the claims.
 */
#include "pdp_approval.h"

#include <stdlib.h>
#include <string.h>

#include "ig_json.h"
#include "pdp_approval_int.h"
#include "pdp_int.h"
#include "store_audit_view.h"

static const char *
jstr(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

static json_t *
time_text(const json_t *secs)
{
    char when[IG_TIME_STRLEN + 1];

    if (!json_is_integer(secs) ||
        ig_time_format((int64_t)json_integer_value(secs), when) != IG_OK)
        return json_null();
    return json_string(when);
}

static const char *
status_of(const json_t *ap, int64_t now)
{
    const char *r = jstr(json_object_get(ap, "resolution"), "result");

    if (r != NULL)
        return r;
    return json_integer_value(json_object_get(ap, "expires_at")) <= now
               ? "EXPIRED"
               : "PENDING";
}

static json_t *
votes_view(struct pdp_server *s, const json_t *votes)
{
    json_t *out = json_array(), *v;
    const struct pdp_approver *who;
    size_t i;

    if (out == NULL)
        return NULL;
    json_array_foreach(votes, i, v)
    {
        who = pdp_config_approver(s->cfg, jstr(v, "approver"));
        /* json_array_append_new steals; "o" steals the time. A vote that
           cannot be added fails the view: never one missing a vote. */
        if (json_array_append_new(
                out,
                json_pack("{s:s?, s:s?, s:s?, s:s?, s:s?, s:o}", "approver",
                          jstr(v, "approver"), "name",
                          who != NULL ? who->name : jstr(v, "approver"), "vote",
                          jstr(v, "vote"), "comment", jstr(v, "comment"),
                          "channel", jstr(v, "channel"), "at",
                          time_text(json_object_get(v, "voted_at")))) != 0) {
            json_decref(out);
            return NULL;
        }
    }
    return out;
}

/* The ids of the approvers who run the agent principal (config). */
static json_t *
operators_of(const struct pdp_config *c, const char *principal)
{
    json_t *out = json_array();
    size_t i;

    for (i = 0; out != NULL && i < c->napprovers; i++)
        if (pdp_approver_runs(&c->approvers[i], principal))
            out = pdp_json_push(out, c->approvers[i].id);
    return out;
}

/* Add the established and the claimed parts to view v (0, or -1). */
static int
add_provenance(struct pdp_server *s, const json_t *rec, json_t *v)
{
    const json_t *ctx =
        json_object_get(json_object_get(rec, "binding"), "context");
    json_t *ops = operators_of(s->cfg, jstr(rec, "principal"));

    /* json_object_set_new steals; ctx gets a new reference. */
    if (ops == NULL || json_object_set_new(v, "operators", ops) != 0)
        return -1;
    return json_object_set_new(v, "claimed_by_agent",
                               ctx != NULL ? json_incref(ig_json_unconst(ctx))
                                           : json_object());
}

/* The view of the record rec (which holds an approval) for a. */
static json_t *
view_of(struct pdp_server *s, const json_t *rec, const struct pdp_approver *a)
{
    const json_t *ap = json_object_get(rec, "approval");
    const json_t *ds = json_object_get(rec, "decisions");
    const json_t *first = json_array_get(ds, 0);
    const json_t *last = json_array_get(ds, json_array_size(ds) - 1);
    int64_t now = ig_time_now();
    const char *why = pdp_approval_refusal(rec, a, now);
    json_t *v, *res = NULL;

    /* "O" adds references, "o" steals. */
    v = json_pack("{s:s?, s:s?, s:s?, s:s, s:O?, s:o, s:o, s:O?, s:s?, s:s?, "
                  "s:{s:s?, s:O?, s:s?, s:s?, s:o}, s:o, s:i, s:b}",
                  "approval_id", jstr(ap, "approval_id"), "intent_id",
                  jstr(rec, "intent_id"), "intent_hash",
                  jstr(rec, "intent_hash"), "status", status_of(ap, now),
                  "requirements", json_object_get(ap, "requirements"),
                  "created_at", time_text(json_object_get(ap, "created_at")),
                  "expires_at", time_text(json_object_get(ap, "expires_at")),
                  "intent", json_object_get(rec, "binding"), "principal",
                  jstr(rec, "principal"), "tenant", jstr(rec, "tenant"),
                  "decision", "decision", jstr(first, "decision"), "reasons",
                  json_object_get(first, "reasons"), "message",
                  jstr(first, "message"), "policy_revision",
                  jstr(first, "policy_revision"), "decided_at",
                  time_text(json_object_get(first, "decided_at")), "votes",
                  votes_view(s, json_object_get(ap, "votes")), "approvals",
                  pdp_approval_count(json_object_get(ap, "votes")), "can_vote",
                  why == NULL);
    if (v == NULL)
        return NULL;
    if (add_provenance(s, rec, v) != 0) {
        json_decref(v);
        return NULL;
    }
    /* json_object_set_new steals the string. */
    if (why != NULL &&
        json_object_set_new(v, "cannot_vote", json_string(why)) != 0)
        goto fail;
    if (json_object_get(ap, "resolution") != NULL && json_array_size(ds) > 1 &&
        (res = json_pack("{s:s?, s:o, s:s?, s:O?, s:s?}", "result",
                         jstr(json_object_get(ap, "resolution"), "result"),
                         "resolved_at",
                         time_text(json_object_get(
                             json_object_get(ap, "resolution"), "resolved_at")),
                         "decision", jstr(last, "decision"), "reasons",
                         json_object_get(last, "reasons"), "message",
                         jstr(last, "message"))) == NULL)
        goto fail;
    /* json_object_set_new steals res (null when not resolved). */
    if (json_object_set_new(v, "resolution", res != NULL ? res : json_null()) ==
        0)
        return v;
fail:
    json_decref(v);
    return NULL;
}

/* 1 when v is the string s. */
static int
str_is(const json_t *v, const char *s)
{
    return json_is_string(v) && strcmp(json_string_value(v), s) == 0;
}

void
pdp_approval_add_traces(struct pdp_server *s, json_t *view)
{
    const char *aid = jstr(view, "approval_id");
    json_t *events = NULL, *first = NULL, *last = NULL, *ev;
    const json_t *res = json_object_get(view, "resolution");
    size_t i;

    if (aid == NULL || jstr(view, "intent_id") == NULL ||
        store_audit_intent_events(s->store, jstr(view, "intent_id"), &events) !=
            IG_OK)
        return;
    for (i = 0; i < json_array_size(events); i++) {
        ev = json_object_get(json_array_get(events, i), "event");
        if (!json_is_object(ev) || jstr(ev, "type") == NULL ||
            strcmp(jstr(ev, "type"), "intent.decided") != 0 ||
            !json_is_array(json_object_get(ev, "trace")))
            continue;
        if (first == NULL &&
            str_is(
                json_object_get(json_object_get(ev, "approval"), "approval_id"),
                aid))
            first = json_object_get(ev, "trace");
        else if (str_is(json_object_get(ev, "approval_id"), aid))
            last = json_object_get(ev, "trace");
    }
    /* json_object_set adds a reference; a trace that cannot be added is
       left out, as one the log does not hold. */
    if (first != NULL)
        (void)json_object_set(json_object_get(view, "decision"), "trace",
                              first);
    if (last != NULL && json_is_object(res))
        (void)json_object_set(ig_json_unconst(res), "trace", last);
    json_decref(events);
}

/* The view of intent_id's approval for a; with check, only when a may
   read it (IG_ERR_NOTFOUND otherwise). */
static enum ig_status
view_by_intent(struct pdp_server *s, const char *intent_id,
               const struct pdp_approver *a, int check, json_t **out)
{
    json_t *rec = NULL;
    enum ig_status st = store_get_intent(s->store, intent_id, &rec);
    const json_t *ap = json_object_get(rec, "approval");

    *out = NULL;
    if (st == IG_OK &&
        (ap == NULL ||
         (check && (a == NULL || !pdp_approval_in_groups(
                                     json_object_get(ap, "requirements"), a)))))
        st = IG_ERR_NOTFOUND;
    if (st == IG_OK) {
        *out = view_of(s, rec, a);
        if (*out == NULL)
            st = IG_ERR_NOMEM;
    }
    json_decref(rec);
    return st;
}

enum ig_status
pdp_approval_notice_view(struct pdp_server *s, const char *intent_id,
                         json_t **out)
{
    return view_by_intent(s, intent_id, NULL, 0, out);
}

enum ig_status
pdp_approval_get(struct pdp_server *s, const char *approval_id,
                 const struct pdp_approver *a, json_t **out)
{
    char *intent_id = NULL;
    enum ig_status st;

    *out = NULL;
    if (a == NULL || approval_id == NULL ||
        strlen(approval_id) != IG_UUID_STRLEN)
        return IG_ERR_NOTFOUND;
    st = store_approval_intent(s->store, approval_id, &intent_id);
    if (st == IG_OK)
        st = view_by_intent(s, intent_id, a, 1, out);
    free(intent_id);
    return st;
}

/* The list entry of view v ({approval_id, intent_id, action, ...}); NULL
   on out-of-memory. */
static json_t *
list_entry(const json_t *v)
{
    const json_t *in = json_object_get(v, "intent");

    /* "O" adds references. */
    return json_pack("{s:O?, s:O?, s:O?, s:O?, s:O?, s:O?, s:O?, s:O?, "
                     "s:O?, s:O?, s:O?, s:O?}",
                     "approval_id", json_object_get(v, "approval_id"),
                     "intent_id", json_object_get(v, "intent_id"), "action",
                     json_object_get(in, "action"), "resource",
                     json_object_get(in, "resource"), "principal",
                     json_object_get(v, "principal"), "tenant",
                     json_object_get(v, "tenant"), "intent_hash",
                     json_object_get(v, "intent_hash"), "created_at",
                     json_object_get(v, "created_at"), "expires_at",
                     json_object_get(v, "expires_at"), "requirements",
                     json_object_get(v, "requirements"), "approvals",
                     json_object_get(v, "approvals"), "can_vote",
                     json_object_get(v, "can_vote"));
}

enum ig_status
pdp_approval_list(struct pdp_server *s, const struct pdp_approver *a,
                  json_t **out)
{
    json_t *open = NULL, *list, *x, *v;
    int64_t now = ig_time_now();
    enum ig_status st;
    size_t i;

    *out = NULL;
    st = store_open_approvals(s->store, 0, &open);
    if (st != IG_OK)
        return st;
    list = json_array();
    st = list != NULL ? IG_OK : IG_ERR_NOMEM;
    for (i = json_array_size(open); st == IG_OK && i-- > 0;) {
        x = json_array_get(open, i);
        if (json_integer_value(json_object_get(x, "expires_at")) <= now ||
            !pdp_approval_in_groups(json_object_get(x, "requirements"), a))
            continue;
        /* Gone since it was listed: skipped; any other failure fails the
           list rather than leave a request out of it. */
        st = view_by_intent(s, jstr(x, "intent_id"), a, 1, &v);
        if (st == IG_ERR_NOTFOUND) {
            st = IG_OK;
            continue;
        }
        /* json_array_append_new steals the entry. */
        if (st == IG_OK && json_array_append_new(list, list_entry(v)) != 0)
            st = IG_ERR_NOMEM;
        json_decref(v);
    }
    json_decref(open);
    if (st != IG_OK) {
        json_decref(list);
        return st;
    }
    *out = list;
    return IG_OK;
}
