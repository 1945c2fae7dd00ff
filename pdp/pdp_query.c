/*
 * pdp_query.c - GET /v1/intents/{id}[?wait=N]: an intent's binding, its
 * decision history and its state, for the agent that submitted it, any
 * executor, or an admin.
 *
 * The state is derived from what is recorded and the clock:
 *   BLOCKED, PENDING_APPROVAL, ALLOWED (grant issued, not yet redeemed),
 *   EXPIRED (approval or grant ran out), REDEEMED (awaiting the outcome),
 *   then the outcome itself (COMPLETED, FAILED_BEFORE_DISPATCH,
 *   UNKNOWN_AFTER_DISPATCH, DEFINITELY_NOT_EXECUTED).
 * With wait=N (1..60) and a state that can still change, the request is
 * parked (pdp_wait.c) until a commit touches the intent, the state's own
 * expiry passes, or N seconds pass; then it answers with the state then.
 */
#include "pdp_int.h"

#include <stdlib.h>
#include <string.h>

struct query_op {
    char id[IG_UUID_STRLEN + 1];
    const struct pdp_principal *who;
};

static int64_t
int_at(const json_t *obj, const char *k1, const char *k2)
{
    json_t *v = json_object_get(obj, k1);

    if (k2 != NULL)
        v = json_object_get(v, k2);
    return json_is_integer(v) ? (int64_t)json_integer_value(v) : 0;
}

const char *
pdp_intent_state(const json_t *rec, int64_t now)
{
    json_t *ds = json_object_get(rec, "decisions"), *o;
    const char *last;

    o = json_object_get(json_object_get(rec, "outcome"), "outcome");
    if (json_is_string(o))
        return json_string_value(o);
    if (json_object_get(rec, "redemption") != NULL)
        return "REDEEMED";
    last = json_string_value(json_object_get(
        json_array_get(ds, json_array_size(ds) - 1), "decision"));
    if (last == NULL || strcmp(last, "BLOCK") == 0)
        return "BLOCKED";
    if (strcmp(last, "ESCALATE") == 0)
        return int_at(rec, "approval", "expires_at") <= now
                   ? "EXPIRED"
                   : "PENDING_APPROVAL";
    return int_at(rec, "grant", "expires_at") <= now ? "EXPIRED" : "ALLOWED";
}

int
pdp_state_is_open(const char *state)
{
    return strcmp(state, "PENDING_APPROVAL") == 0 ||
           strcmp(state, "ALLOWED") == 0 || strcmp(state, "REDEEMED") == 0;
}

/* When the state will change by itself (an expiry), in wall seconds. */
static int64_t
state_deadline(const json_t *rec, const char *state)
{
    if (strcmp(state, "PENDING_APPROVAL") == 0)
        return int_at(rec, "approval", "expires_at");
    if (strcmp(state, "ALLOWED") == 0)
        return int_at(rec, "grant", "expires_at");
    return 0;
}

/* Replace integer times (seconds) in obj (may be NULL) by RFC 3339
   strings. 0, or -1 when one cannot be replaced (out of memory). */
static int
times_to_text(json_t *obj)
{
    static const char *const keys[] = {
        "created_at",  "expires_at",  "issued_at", "decided_at",
        "redeemed_at", "reported_at", "voted_at",  "resolved_at"};
    char when[IG_TIME_STRLEN + 1];
    json_t *v;
    size_t i;

    for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        v = json_object_get(obj, keys[i]);
        /* json_object_set_new steals the string. */
        if (json_is_integer(v) &&
            ig_time_format((int64_t)json_integer_value(v), when) == IG_OK &&
            json_object_set_new(obj, keys[i], json_string(when)) != 0)
            return -1;
    }
    return 0;
}

/* rec's grant as its reader sees it (see view). 0, or -1 when a field
   cannot be set (out of memory). */
static int
grant_view(json_t *rec, const char *state, const struct pdp_principal *who)
{
    json_t *g = json_object_get(rec, "grant");
    char when[IG_TIME_STRLEN + 1];

    if (g == NULL)
        return 0;
    /* json_object_set adds a reference; json_object_set_new steals. */
    if (json_object_set(rec, "grant_info", g) != 0)
        return -1;
    if (who->role == PDP_ROLE_AGENT && strcmp(state, "ALLOWED") == 0 &&
        ig_time_format(
            (int64_t)json_integer_value(json_object_get(g, "expires_at")),
            when) == IG_OK) {
        if (json_object_set(rec, "grant", json_object_get(g, "token")) != 0 ||
            json_object_set_new(rec, "grant_expires_at", json_string(when)) !=
                0)
            return -1;
    } else {
        (void)json_object_del(rec, "grant");
    }
    (void)json_object_del(json_object_get(rec, "grant_info"), "token");
    return 0;
}

/* rec as its reader sees it (rec is taken; NULL, rec freed, when a field
   cannot be set: a 500, never a view missing one). The grant token goes
   only to the agent that asked, and only while it can still be redeemed
   (state ALLOWED): then "grant" is the token and "grant_expires_at" its
   expiry, as in the answer to POST /v1/intents, so an agent waiting on an
   escalation gets its grant from the long poll. Everyone sees the grant's
   metadata as grant_info. */
static json_t *
view(json_t *rec, int64_t now, const struct pdp_principal *who)
{
    static const char *const parts[] = {"grant_info", "redemption", "outcome",
                                        "approval"};
    json_t *ds = json_object_get(rec, "decisions"), *d;
    json_t *ap = json_object_get(rec, "approval");
    const char *state = pdp_intent_state(rec, now);
    size_t i;
    int bad;

    /* json_object_set_new steals the string. */
    bad = json_object_set_new(rec, "state", json_string(state)) != 0 ||
          grant_view(rec, state, who) != 0;
    json_array_foreach(json_object_get(ap, "votes"), i, d)
    {
        bad |= times_to_text(d) != 0;
    }
    bad |= times_to_text(json_object_get(ap, "resolution")) != 0;
    /* The binding is the intent as hashed; call it that. json_object_set
       adds a reference. */
    bad |= json_object_set(rec, "intent", json_object_get(rec, "binding")) != 0;
    (void)json_object_del(rec, "binding");
    bad |= times_to_text(rec) != 0;
    json_array_foreach(ds, i, d)
    {
        bad |= times_to_text(d) != 0;
    }
    for (i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
        bad |= times_to_text(json_object_get(rec, parts[i])) != 0;
    if (bad) {
        json_decref(rec);
        return NULL;
    }
    return rec;
}

/* 1 when executor ex handles action (one of its prefixes matches). */
static int
handles(const struct pdp_principal *ex, const char *action)
{
    size_t i;

    for (i = 0; action != NULL && i < ex->nactions; i++)
        if (strncmp(action, ex->actions[i], strlen(ex->actions[i])) == 0)
            return 1;
    return 0;
}

/* Read and check visibility: an agent sees its own intents, an executor
   those whose action it handles, an admin all. Replies 404/503 and returns
   NULL on failure. */
static json_t *
read_visible(struct pdp_req *r, const struct query_op *q)
{
    json_t *rec = NULL;
    enum ig_status st = store_get_intent(r->srv->store, q->id, &rec);
    const char *owner;

    if (st == IG_OK && q->who->role == PDP_ROLE_AGENT) {
        owner = json_string_value(json_object_get(rec, "principal"));
        if (owner == NULL || strcmp(owner, q->who->id) != 0)
            st = IG_ERR_NOTFOUND; /* another agent's: do not confirm it */
    }
    if (st == IG_OK && q->who->role == PDP_ROLE_EXECUTOR &&
        !handles(q->who, json_string_value(json_object_get(
                             json_object_get(rec, "binding"), "action"))))
        st = IG_ERR_NOTFOUND; /* an action this executor never runs */
    if (st == IG_OK)
        return rec;
    json_decref(rec);
    if (st == IG_ERR_NOTFOUND)
        pdp_reply_error(r, 404, "NOT_FOUND", NULL, "no intent %s", q->id);
    else
        pdp_reply_error(r, 503, "STORE_UNAVAILABLE", NULL,
                        "cannot read the store; try again");
    return NULL;
}

static void
answer(struct pdp_req *r)
{
    struct query_op *q = r->op;
    json_t *rec = read_visible(r, q);

    if (rec != NULL)
        pdp_reply_json(r, 200, view(rec, ig_time_now(), q->who));
}

static int
parse_wait(struct pdp_req *r, int *out)
{
    const char *w =
        MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, "wait");
    char *end;
    long n;

    *out = 0;
    if (w == NULL)
        return 0;
    n = strtol(w, &end, 10);
    if (end == w || *end != '\0' || n < 0 || n > IG_PDP_WAIT_MAX) {
        pdp_reply_error(r, 400, "INVALID_QUERY", "wait",
                        "wait must be a whole number of seconds, 0 to %d",
                        IG_PDP_WAIT_MAX);
        return -1;
    }
    *out = (int)n;
    return 0;
}

void
pdp_get_intent(struct pdp_req *r, const char *id)
{
    const struct pdp_principal *who;
    struct query_op *q;
    json_t *rec;
    const char *state;
    double mono;
    int64_t now, until;
    int wait, rc;

    who = pdp_req_auth(r, (1u << PDP_ROLE_AGENT) | (1u << PDP_ROLE_EXECUTOR) |
                              (1u << PDP_ROLE_ADMIN));
    if (who == NULL || parse_wait(r, &wait) != 0)
        return;
    if (strlen(id) != IG_UUID_STRLEN) {
        pdp_reply_error(r, 404, "NOT_FOUND", NULL, "no intent %s", id);
        return;
    }
    q = calloc(1, sizeof(*q));
    if (q == NULL) {
        pdp_reply_error(r, 500, "INTERNAL", NULL, "out of memory");
        return;
    }
    memcpy(q->id, id, IG_UUID_STRLEN + 1);
    q->who = who;
    r->op = q;
    r->op_free = free;
    mono = pdp_mono_seconds();
    if (wait > 0 && atomic_load(&r->srv->stopping))
        wait = 0;
    if (wait > 0) {
        rc = pdp_waiters_add(r->srv->waiters, r, id, who, mono + wait);
        if (rc == -2) /* too many parked: the state now */
            atomic_fetch_add(&r->srv->metrics.waits_capped, 1);
        if (rc != 0)
            wait = 0;
    }
    rec = read_visible(r, q);
    if (rec == NULL)
        return;
    now = ig_time_now();
    state = pdp_intent_state(rec, now);
    if (wait > 0 && pdp_state_is_open(state)) {
        until = state_deadline(rec, state);
        r->on_resume = answer;
        if (pdp_waiters_park(r->srv->waiters, r,
                             until > 0 && until - now < wait
                                 ? mono + (double)(until - now) + 0.05
                                 : mono + wait) == 0) {
            json_decref(rec);
            return;
        }
        json_decref(rec);
        answer(r); /* changed while we read: answer now */
        return;
    }
    pdp_reply_json(r, 200, view(rec, now, who));
}
