/*
 * appr_slack.h - Slack's side of an escalation, without any network: the
 * v0 request signature, the interaction body a button click sends, and the
 * chat.postMessage / chat.update bodies that show an approval.
 *
 * Signature: Slack signs "v0:" + X-Slack-Request-Timestamp + ":" + the raw
 * request body with HMAC-SHA256 keyed by the app's signing secret (the
 * text, any length) and sends "v0=" + 64 lowercase hex digits in
 * X-Slack-Signature. Verify the raw bytes before parsing anything.
 *
 * Click: the body is application/x-www-form-urlencoded with exactly one
 * field, payload=<JSON>. The JSON (read strictly, ig_json.h) must be a
 * block_actions payload whose first action is the approve or deny button
 * this module puts on a message, whose value is
 * "<approval id>:<intent hash>".
 *
 * Messages: built from the approval view of pdp_approval.h (approval_id,
 * intent_hash, status, requirements, expires_at, intent, principal,
 * operators, decision, votes, resolution). One click on Approve approves
 * the whole intent hash, so a message offers Approve only when it shows
 * the whole intent: every param and the agent's context (labelled as its
 * claim) as JSON in code blocks no value can close, & < > escaped
 * everywhere (no mention, no forged link), invisible characters as
 * escapes. When that does not fit Slack's limits the message shows the
 * intent hash and where to decide, with Deny only.
 *
 * All functions are pure and thread safe.
 */
#ifndef APPR_SLACK_H
#define APPR_SLACK_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "ig_buf.h"
#include "ig_error.h"
#include "ig_hash.h"
#include "ig_limits.h"

/* Largest interaction body accepted, in bytes (form-encoded). */
#define APPR_SLACK_BODY_MAX IG_SLACK_BODY_MAX
/* Most seconds a request's timestamp may differ from now. */
#define APPR_SLACK_MAX_SKEW IG_SLACK_MAX_SKEW
/* Longest ids kept from a click: Slack user/channel ids, approval ids
   (IG_ID_MAX, as every id; this name stays for pdp/ and the tests),
   message timestamps, response URLs. */
#define APPR_SLACK_ID_MAX IG_ID_MAX
#define APPR_SLACK_TS_MAX IG_SLACK_TS_MAX
#define APPR_SLACK_URL_MAX IG_SLACK_RESPONSE_URL_MAX
/* Longest text outside the intent shown in a message (a policy's
   message, names), in bytes (cut on a UTF-8 boundary). */
#define APPR_SLACK_VALUE_MAX IG_SLACK_VALUE_MAX

/*
 * Check a request's signature against secret (secret_len bytes, the text of
 * the signing secret). timestamp and signature are the header values (NULL
 * when absent); body is the raw request body; now is the current Unix
 * time. Checks, in order: the headers' shapes (timestamp digits only, at
 * most 12; signature "v0=" + 64 hex digits) and a non-empty secret, else
 * IG_ERR_INVALID; |now - timestamp| <= APPR_SLACK_MAX_SKEW, else
 * IG_ERR_EXPIRED; the HMAC in constant time, else IG_ERR_CRYPTO. err (may
 * be NULL) says which, without secret material.
 */
enum ig_status appr_slack_verify(const char *secret, size_t secret_len,
                                 const char *timestamp, const char *signature,
                                 const void *body, size_t body_len, int64_t now,
                                 struct ig_err *err) IG_WUR;

/* One button click, copied out of the payload (all NUL-terminated). */
struct appr_slack_click {
    char user_id[APPR_SLACK_ID_MAX + 1];       /* user.id */
    int approve;                               /* 1 "approve", 0 "deny" */
    char approval_id[APPR_SLACK_ID_MAX + 1];   /* from the button value */
    char intent_hash[IG_HASH_STRLEN + 1];      /* from the button value */
    char response_url[APPR_SLACK_URL_MAX + 1]; /* "" when absent */
    char channel_id[APPR_SLACK_ID_MAX + 1];    /* "" when absent */
    char message_ts[APPR_SLACK_TS_MAX + 1];    /* "" when absent */
};

/*
 * Parse an interaction body (len bytes, need not be NUL-terminated) into
 * out. IG_ERR_INVALID for anything but one payload= field holding a
 * block_actions JSON object whose user.id is a Slack id and whose
 * actions[0] is an approve/deny button with a well-formed value;
 * IG_ERR_LIMIT over APPR_SLACK_BODY_MAX or a JSON limit; IG_ERR_NOMEM. On
 * failure out is zeroed.
 */
enum ig_status appr_slack_parse_click(const char *body, size_t len,
                                      struct appr_slack_click *out,
                                      struct ig_err *err) IG_WUR;

/*
 * The JSON body of chat.postMessage (ts == NULL) or chat.update (ts is the
 * message's ts) showing approval view v in channel: {channel, [ts,] text,
 * blocks, unfurl_links:false, unfurl_media:false}. blocks: a summary
 * section (action, resource, the authenticated agent, the approvers the
 * config says run it, the requester the agent claims, reasons, groups,
 * the full intent hash, expiry); the params, then the agent's context,
 * as JSON in as many sections as it takes; a context block with the votes
 * so far and, once resolved, the result; and while the status is PENDING
 * an actions block with approve (primary) and deny (danger) buttons whose
 * value is "<approval id>:<intent hash>".
 *
 * When the whole intent does not fit (a section's 3000 characters, 50
 * blocks: appr_slack_shows_all() is 0), the summary's values are cut, a
 * section says where to decide - a link to <ui_url>/ui/approvals/<id>
 * when ui_url (NULL: none) is a plain http(s) URL, else that path - and
 * the actions block has deny only. *out is a new reference.
 * IG_ERR_INVALID when v lacks approval_id (letters, digits, - and _),
 * intent_hash or status; IG_ERR_NOMEM.
 */
enum ig_status appr_slack_message(const json_t *v, const char *channel,
                                  const char *ts, const char *ui_url,
                                  json_t **out) IG_WUR;

/* 1 when appr_slack_message shows view v whole (and so offers Approve);
   0 when it does not fit Slack's limits, or v is malformed. */
int appr_slack_shows_all(const json_t *v);

/*
 * Append text (len bytes) to b escaped for Slack mrkdwn: & < > become
 * &amp; &lt; &gt;, control characters and NULs become spaces, invisible
 * characters and '`' are written [U+XXXX], and the output is cut, on a
 * UTF-8 boundary and marked with "...", once it would pass
 * APPR_SLACK_VALUE_MAX bytes. IG_ERR_LIMIT / IG_ERR_NOMEM from the
 * buffer.
 */
enum ig_status appr_slack_escape(struct ig_buf *b, const char *text,
                                 size_t len) IG_WUR;

#endif
