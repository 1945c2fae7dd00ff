/*
 * pdp_approval_api.c - the approvers' JSON API, for `intentgate approvals`
 * and any other client:
 *
 *   POST /v1/approver/login    {"approver","password"[,"device"]}
 *                              -> {token, device, ...}
 *   POST /v1/approver/logout   (Bearer session)
 *   GET  /v1/approvals         pending requests for my groups
 *   GET  /v1/approvals/{id}    one request (pdp_approval.h has the view)
 *   POST /v1/approvals/{id}/votes {"vote","intent_hash","comment"}
 *
 * Approvers authenticate with a session token ("igs_..."), never with an
 * agent, executor or admin token: no such principal can vote.
 */
#include "pdp_approval.h"

#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "ig_limits.h"
#include "pdp_int.h"

/* The cap on every field of a login body: the longest is the password. */
#define LOGIN_FIELD_MAX IG_PASSWORD_MAX

static const char *
jstr(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

static const char *
bearer(struct pdp_req *r)
{
    const char *h = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND,
                                                MHD_HTTP_HEADER_AUTHORIZATION);

    return h != NULL && strncmp(h, "Bearer ", 7) == 0 ? h + 7 : NULL;
}

static const struct pdp_approver *
approver_of(struct pdp_req *r)
{
    int down = 0;
    const struct pdp_approver *a =
        pdp_approver_session(r->srv, bearer(r), NULL, &down);

    if (a == NULL && down)
        pdp_reply_error(r, 503, "STORE_UNAVAILABLE", NULL,
                        "the session cannot be checked now: the store is "
                        "unavailable; try again");
    else if (a == NULL)
        pdp_reply_error(r, 401, "UNAUTHENTICATED", NULL,
                        "log in at POST /v1/approver/login and send "
                        "Authorization: Bearer <session token>");
    return a;
}

/* Only these keys, each a string (of at most max bytes). */
static int
string_keys(struct pdp_req *r, json_t *body, const char *const *keys,
            size_t max)
{
    const char *k;
    json_t *v;
    size_t i;

    json_object_foreach(body, k, v)
    {
        for (i = 0; keys[i] != NULL && strcmp(keys[i], k) != 0; i++)
            ;
        if (keys[i] == NULL) {
            pdp_reply_error(r, 400, "UNKNOWN_FIELD", k, "unknown field %s", k);
            return -1;
        }
        if (!json_is_string(v) || strlen(json_string_value(v)) > max) {
            pdp_reply_error(r, 400, "INVALID_FIELD", k,
                            "%s must be a string of at most %zu bytes", k, max);
            return -1;
        }
    }
    return 0;
}

/* The answer to a login (pdp_login.c calls it, perhaps after a delay). */
static void
login_done(struct pdp_req *r, const struct pdp_login *out)
{
    char exp[IG_TIME_STRLEN + 1];
    json_t *groups;
    size_t i;

    if (out->code != NULL) {
        pdp_login_retry_after(r, out);
        pdp_reply_error(r, out->http_status, out->code, NULL, "%s",
                        out->http_status == 429
                            ? "too many failed logins; wait and try again"
                        : out->http_status == 401
                            ? "wrong approver id or password"
                            : "cannot sign in now; try again");
        return;
    }
    groups = json_array();
    for (i = 0; groups != NULL && i < out->approver->ngroups; i++)
        /* json_array_append_new steals the string. */
        if (json_array_append_new(groups,
                                  json_string(out->approver->groups[i])) != 0) {
            json_decref(groups);
            groups = NULL;
        }
    if (ig_time_format(out->expires_at, exp) != IG_OK)
        exp[0] = '\0';
    /* "o" steals groups; NULL fails the pack, and a NULL reply is the 500
       out-of-memory answer (pdp_reply_json). */
    pdp_reply_json(r, 200,
                   json_pack("{s:s, s:s, s:s, s:{s:s, s:s, s:o}}", "token",
                             out->session, "expires_at", exp, "device",
                             out->device, "approver", "id", out->approver->id,
                             "name", out->approver->name, "groups", groups));
}

static void
post_login(struct pdp_req *r)
{
    static const char *const keys[] = {"approver", "password", "device", NULL};
    json_t *body = pdp_req_json_object(r);

    if (body != NULL && string_keys(r, body, keys, LOGIN_FIELD_MAX) == 0)
        pdp_approver_login(r, jstr(body, "approver"), jstr(body, "password"),
                           jstr(body, "device"), login_done);
    /* The raw body holds the password (the login has its own copy). */
    if (r->body.data != NULL)
        sodium_memzero(r->body.data, r->body.len);
    json_decref(body);
}

static void
post_logout(struct pdp_req *r)
{
    if (approver_of(r) == NULL)
        return;
    pdp_approver_logout(r->srv, bearer(r));
    pdp_reply_json(r, 200, json_pack("{s:b}", "logged_out", 1));
}

static void
get_list(struct pdp_req *r)
{
    const struct pdp_approver *a = approver_of(r);
    json_t *list = NULL;

    if (a == NULL)
        return;
    if (pdp_approval_list(r->srv, a, &list) != IG_OK) {
        pdp_reply_error(r, 503, "STORE_UNAVAILABLE", NULL,
                        "cannot read the store; try again");
        return;
    }
    /* "o" steals list. */
    pdp_reply_json(r, 200, json_pack("{s:o}", "approvals", list));
}

static void
get_one(struct pdp_req *r, const char *id)
{
    const struct pdp_approver *a = approver_of(r);
    json_t *v = NULL;
    enum ig_status st;

    if (a == NULL)
        return;
    st = pdp_approval_get(r->srv, id, a, &v);
    if (st == IG_ERR_NOTFOUND)
        pdp_reply_error(r, 404, "APPROVAL_NOT_FOUND", NULL,
                        "no approval request %s", id);
    else if (st != IG_OK)
        pdp_reply_error(r, 503, "STORE_UNAVAILABLE", NULL,
                        "cannot read the store; try again");
    else
        pdp_reply_json(r, 200, v);
}

static void
post_vote(struct pdp_req *r, const char *id)
{
    static const char *const keys[] = {"vote", "intent_hash", "comment", NULL};
    const struct pdp_approver *a = approver_of(r);
    json_t *body = NULL;
    struct pdp_vote_result res;
    struct pdp_vote v;
    const char *vote;

    if (a == NULL)
        return;
    if (strlen(id) != IG_UUID_STRLEN) {
        pdp_reply_error(r, 404, "APPROVAL_NOT_FOUND", NULL,
                        "no approval request %s", id);
        return;
    }
    if ((body = pdp_req_json_object(r)) == NULL ||
        string_keys(r, body, keys, 500) != 0)
        goto out;
    vote = jstr(body, "vote");
    if (vote == NULL ||
        (strcmp(vote, "approve") != 0 && strcmp(vote, "deny") != 0) ||
        jstr(body, "intent_hash") == NULL) {
        pdp_reply_error(r, 400, "INVALID_VOTE", NULL,
                        "send {\"vote\": \"approve\" or \"deny\", "
                        "\"intent_hash\": the hash you were shown}");
        goto out;
    }
    memset(&v, 0, sizeof(v));
    v.approval_id = id;
    v.approver = a;
    v.approve = strcmp(vote, "approve") == 0;
    v.intent_hash = jstr(body, "intent_hash");
    v.comment = jstr(body, "comment");
    v.channel = "api";
    pdp_approval_vote(r->srv, &v, &res);
    if (res.code != NULL) {
        pdp_reply_error(r, res.http_status, res.code, NULL, "%s", res.message);
        goto out;
    }
    pdp_reply_json(r, 200,
                   json_pack("{s:b, s:s, s:s?, s:i, s:i, s:s, s:s}", "counted",
                             1, "status", res.status, "decision", res.decision,
                             "approvals", res.approvals, "quorum", res.quorum,
                             "intent_id", res.intent_id, "message",
                             res.message));
out:
    json_decref(body);
}

static void
wrong_method(struct pdp_req *r, const char *allow)
{
    pdp_reply_error(r, 405, "METHOD_NOT_ALLOWED", NULL, "use %s for this path",
                    allow);
    r->reply.allow = allow;
}

int
pdp_approval_api_route(struct pdp_req *r, const char *url, const char *method)
{
    const char *rest, *slash;
    char id[IG_ID_MAX + 1];
    size_t n;
    int get = strcmp(method, "GET") == 0, post = strcmp(method, "POST") == 0;

    if (strcmp(url, "/v1/approver/login") == 0) {
        post ? post_login(r) : wrong_method(r, "POST");
    } else if (strcmp(url, "/v1/approver/logout") == 0) {
        post ? post_logout(r) : wrong_method(r, "POST");
    } else if (strcmp(url, "/v1/approvals") == 0) {
        get ? get_list(r) : wrong_method(r, "GET");
    } else if (strncmp(url, "/v1/approvals/", 14) == 0) {
        rest = url + 14;
        slash = strchr(rest, '/');
        n = slash != NULL ? (size_t)(slash - rest) : strlen(rest);
        if (n == 0 || n >= sizeof(id) ||
            (slash != NULL && strcmp(slash, "/votes") != 0)) {
            pdp_reply_error(r, 404, "NOT_FOUND", NULL, "no such path: %s", url);
            return 1;
        }
        memcpy(id, rest, n);
        id[n] = '\0';
        if (slash == NULL)
            get ? get_one(r, id) : wrong_method(r, "GET");
        else
            post ? post_vote(r, id) : wrong_method(r, "POST");
    } else {
        return 0;
    }
    return 1;
}
