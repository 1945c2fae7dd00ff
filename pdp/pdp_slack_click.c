/*
 * pdp_slack_click.c - POST /slack/interactions: a click on an Approve or
 * Deny button in Slack.
 *
 * The v0 signature is checked over the raw body first (pdp_slack_verify:
 * HMAC-SHA256 with the signing secret, a 5-minute window, constant-time
 * compare; a bad or stale one is counted for the aggregated slack.refused
 * audit event); then the click is parsed, user.id is mapped to a configured
 * approver (slack_user), and the vote goes to pdp_approval_vote() with
 * channel "slack" - the same rules as every other channel. One rule is
 * Slack's own: an approve click counts only when the message for this
 * approval shows the whole intent (appr_slack_shows_all); such a message
 * has no Approve button, so the click comes from an old message or a
 * crafted payload, and is refused (INTENT_NOT_SHOWN, audited). Slack gets a
 * 200 with a short ephemeral text for the clicker whatever the outcome; a
 * counted vote queues the message update (pdp_approval_vote does), a
 * click on a stale message refreshes it.
 */
#include "pdp_int.h"

#include <stdio.h>
#include <string.h>

#include "appr_slack.h"
#include "pdp_approval.h"
#include "pdp_approval_int.h"

/* 200 with a text only the clicker sees; code (NULL: counted) too. */
static void
reply_clicker(struct pdp_req *r, const char *code, const char *text)
{
    pdp_reply_json(r, 200,
                   json_pack("{s:s, s:b, s:s, s:s*}", "response_type",
                             "ephemeral", "replace_original", 0, "text", text,
                             "code", code));
}

static void
log_click(const struct appr_slack_click *c, const struct pdp_approver *a,
          const char *code)
{
    pdp_log(code != NULL ? "warn" : "info",
            code != NULL ? "slack.vote_refused" : "slack.vote",
            json_pack("{s:s, s:s*, s:s, s:s, s:s*}", "slack_user", c->user_id,
                      "approver", a != NULL ? a->id : NULL, "approval_id",
                      c->approval_id, "vote", c->approve ? "APPROVE" : "DENY",
                      "code", code));
}

/* A click by a Slack user who is no approver: a refused vote, audited. */
static void
audit_stranger(struct pdp_server *s, const struct appr_slack_click *c)
{
    char when[IG_TIME_STRLEN + 1];

    if (ig_time_format(ig_time_now(), when) != IG_OK)
        when[0] = '\0';
    pdp_audit_append(s, json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "type",
                                  "approval.vote_refused", "time", when,
                                  "approval_id", c->approval_id, "slack_user",
                                  c->user_id, "approver", "", "channel",
                                  "slack", "code", "NOT_AN_APPROVER"));
}

/* 1 when c approves an intent the Slack message could not show whole
   (refused: audited, answered). An approval the clicker may not read is
   left to pdp_approval_vote (it refuses that); one that cannot be read
   now is refused here, not let through unchecked. */
static int
approve_unseen(struct pdp_req *r, const struct appr_slack_click *c,
               const struct pdp_approver *a)
{
    char when[IG_TIME_STRLEN + 1];
    json_t *view = NULL;
    enum ig_status st;
    int unseen;

    if (!c->approve)
        return 0;
    st = pdp_approval_get(r->srv, c->approval_id, a, &view);
    if (st == IG_ERR_NOTFOUND)
        return 0;
    if (st != IG_OK) {
        log_click(c, a, "STORE_UNAVAILABLE");
        reply_clicker(r, "STORE_UNAVAILABLE",
                      "Your vote was not counted: STORE_UNAVAILABLE: the "
                      "request could not be read; try again.");
        return 1;
    }
    unseen = !appr_slack_shows_all(view);
    if (unseen) {
        if (ig_time_format(ig_time_now(), when) != IG_OK)
            when[0] = '\0';
        pdp_audit_append(
            r->srv,
            json_pack("{s:s, s:s, s:s, s:s?, s:s, s:s, s:s, s:s}", "type",
                      "approval.vote_refused", "time", when, "approval_id",
                      c->approval_id, "intent_id",
                      json_string_value(json_object_get(view, "intent_id")),
                      "approver", a->id, "slack_user", c->user_id, "channel",
                      "slack", "code", "INTENT_NOT_SHOWN"));
        log_click(c, a, "INTENT_NOT_SHOWN");
        reply_clicker(r, "INTENT_NOT_SHOWN",
                      "Your vote was not counted: INTENT_NOT_SHOWN: this "
                      "request is too large to show in Slack in full; check "
                      "its intent hash and approve it on the web page or "
                      "with intentgate approvals.");
    }
    json_decref(view);
    return unseen;
}

/* Vote as a and answer the clicker. */
static void
vote(struct pdp_req *r, const struct appr_slack_click *c,
     const struct pdp_approver *a)
{
    struct pdp_vote_result res;
    struct pdp_vote v;
    char text[512];

    if (approve_unseen(r, c, a))
        return;
    memset(&v, 0, sizeof(v));
    v.approval_id = c->approval_id;
    v.approver = a;
    v.approve = c->approve;
    v.intent_hash = c->intent_hash;
    v.channel = "slack";
    pdp_approval_vote(r->srv, &v, &res);
    log_click(c, a, res.code);
    if (res.code == NULL) {
        (void)snprintf(text, sizeof(text),
                       "Your %s was counted (%d of %d approvals); the "
                       "request is %s%s%s.",
                       c->approve ? "approval" : "denial", res.approvals,
                       res.quorum, res.status != NULL ? res.status : "?",
                       res.decision != NULL ? ", decision " : "",
                       res.decision != NULL ? res.decision : "");
        reply_clicker(r, NULL, text);
        return;
    }
    /* A stale message (resolved or expired meanwhile): refresh it. */
    if (strcmp(res.code, "APPROVAL_RESOLVED") == 0 ||
        strcmp(res.code, "APPROVAL_EXPIRED") == 0)
        pdp_slack_changed(r->srv, res.intent_id[0] ? res.intent_id : NULL);
    (void)snprintf(text, sizeof(text), "Your vote was not counted: %s: %s",
                   res.code, res.message);
    reply_clicker(r, res.code, text);
}

void
pdp_post_slack_interactions(struct pdp_req *r)
{
    const struct pdp_approver *a;
    struct appr_slack_click c;
    const char *ts, *sig;
    struct ig_err err;
    enum ig_status st;

    if (r->srv->slack == NULL) {
        pdp_reply_error(r, 404, "NOT_FOUND", NULL, "Slack is not configured");
        return;
    }
    ts = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND,
                                     "X-Slack-Request-Timestamp");
    sig = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND,
                                      "X-Slack-Signature");
    st = pdp_slack_verify(r->srv, ts, sig, r->body.data, r->body.len, &err);
    if (st != IG_OK) {
        /* Counted for slack.refused: no log line or leaf per request. */
        pdp_reply_error(r, 401,
                        st == IG_ERR_EXPIRED ? "SLACK_STALE_REQUEST"
                                             : "SLACK_SIGNATURE_INVALID",
                        NULL, "%s", err.msg);
        pdp_req_refused_reply(r, PDP_REFUSED_SLACK, NULL);
        return;
    }
    if (appr_slack_parse_click(r->body.data != NULL ? r->body.data : "",
                               r->body.len, &c, &err) != IG_OK) {
        pdp_reply_error(r, 400, "SLACK_PAYLOAD_INVALID", NULL, "%s", err.msg);
        pdp_req_refused_reply(r, PDP_REFUSED_SLACK, NULL);
        return;
    }
    a = pdp_config_approver_by_slack(r->srv->cfg, c.user_id);
    if (a == NULL) {
        log_click(&c, NULL, "NOT_AN_APPROVER");
        audit_stranger(r->srv, &c);
        reply_clicker(r, "NOT_AN_APPROVER",
                      "Your vote was not counted: your Slack account is not "
                      "an approver in intentgate.");
        return;
    }
    vote(r, &c, a);
}
