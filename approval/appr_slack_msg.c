/*
 * appr_slack_msg.c - the Slack messages for an approval request: the
 * chat.postMessage body when it opens (what is asked, by whom, why, the
 * intent hash prefix, Approve / Deny buttons whose value is
 * "<approval id>:<intent hash>") and the chat.update body after each vote
 * or the resolution (who voted, the result, no buttons once decided).
 * Every value is escaped for mrkdwn and cut on a UTF-8 boundary so a
 * section stays within Slack's 3000 characters.
 */
#include "appr_slack.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ig_json.h"

#define SECTION_MAX 3000 /* Slack's limit for a section's text */
#define KEY_MAX 40       /* bytes shown of a param name */
#define PARAMS_SHOWN 4
#define VOTES_SHOWN 10

/* 1 when v is exactly the string lit. */
static int
str_is(const json_t *v, const char *lit)
{
    const char *s = json_string_value(v);

    return s != NULL && json_string_length(v) == strlen(lit) &&
           strcmp(s, lit) == 0;
}

/* ---- messages ---- */

static const char *
vstr(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

/* appr_slack_escape with the output cut at max bytes. UTF-8 sequences
   (jansson hands us valid UTF-8) are copied whole or not at all. */
static enum ig_status
escape_cut(struct ig_buf *b, const char *text, size_t len, size_t max)
{
    size_t i = 0, start = b->len, n;
    const char *rep;
    enum ig_status st;

    while (i < len) {
        unsigned char c = (unsigned char)text[i];
        rep = c == '&'                  ? "&amp;"
              : c == '<'                ? "&lt;"
              : c == '>'                ? "&gt;"
              : (c < 0x20 || c == 0x7f) ? " "
                                        : NULL;
        n = rep != NULL ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
        if (n > len - i)
            n = len - i;
        if (b->len - start + (rep != NULL ? strlen(rep) : n) > max)
            return ig_buf_adds(b, "...");
        st = rep != NULL ? ig_buf_adds(b, rep) : ig_buf_add(b, text + i, n);
        if (st != IG_OK)
            return st;
        i += n;
    }
    return IG_OK;
}

enum ig_status
appr_slack_escape(struct ig_buf *b, const char *text, size_t len)
{
    return escape_cut(b, text, len, APPR_SLACK_VALUE_MAX);
}

static enum ig_status
escape_str(struct ig_buf *b, const char *s, size_t max)
{
    return escape_cut(b, s != NULL ? s : "-", s != NULL ? strlen(s) : 1, max);
}

/* A param value as shown: strings as they are, numbers as JSON writes
   them (500, not 500.0), anything else as compact JSON. */
static enum ig_status
add_value(struct ig_buf *b, const json_t *v)
{
    char num[40];
    char *dump;
    double d;
    enum ig_status st;

    if (json_is_string(v))
        return escape_cut(b, json_string_value(v), json_string_length(v),
                          APPR_SLACK_VALUE_MAX);
    if (json_is_integer(v)) {
        (void)snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT,
                       json_integer_value(v));
        return ig_buf_adds(b, num);
    }
    if (json_is_real(v)) {
        d = json_real_value(v);
        (void)snprintf(num, sizeof(num), "%.15g", d);
        if (strtod(num, NULL) != d)
            (void)snprintf(num, sizeof(num), "%.17g", d);
        return ig_buf_adds(b, num);
    }
    dump = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_SORT_KEYS);
    if (dump == NULL)
        return IG_ERR_NOMEM;
    st = escape_cut(b, dump, strlen(dump), APPR_SLACK_VALUE_MAX);
    free(dump);
    return st;
}

static enum ig_status
add_param(struct ig_buf *b, const char *key, const json_t *v, int first)
{
    enum ig_status st;

    if ((!first && (st = ig_buf_adds(b, ", ")) != IG_OK) ||
        (st = escape_str(b, key, KEY_MAX)) != IG_OK ||
        (st = ig_buf_adds(b, ": ")) != IG_OK)
        return st;
    return add_value(b, v);
}

/* The key params: amount, currency and order_id when any is there, else
   the first PARAMS_SHOWN members. */
static enum ig_status
add_params(struct ig_buf *b, const json_t *params)
{
    static const char *const keys[] = {"amount", "currency", "order_id"};
    const char *key;
    json_t *v;
    size_t i, shown = 0;
    enum ig_status st;

    if ((st = ig_buf_adds(b, "*Params:* ")) != IG_OK)
        return st;
    for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        v = json_object_get(params, keys[i]);
        if (v != NULL && (st = add_param(b, keys[i], v, shown++ == 0)) != IG_OK)
            return st;
    }
    if (shown == 0) {
        json_object_foreach(ig_json_unconst(params), key, v)
        {
            if (shown == PARAMS_SHOWN)
                break;
            if ((st = add_param(b, key, v, shown++ == 0)) != IG_OK)
                return st;
        }
    }
    if (shown == 0 && (st = ig_buf_adds(b, "none")) != IG_OK)
        return st;
    if (json_object_size(params) > shown &&
        (st = ig_buf_adds(b, ", ...")) != IG_OK)
        return st;
    return ig_buf_adds(b, "\n");
}

/* "*label:* value\n" with the value escaped. */
static enum ig_status
add_line(struct ig_buf *b, const char *label, const char *value)
{
    enum ig_status st;

    if ((st = ig_buf_adds(b, "*")) != IG_OK ||
        (st = ig_buf_adds(b, label)) != IG_OK ||
        (st = ig_buf_adds(b, ":* ")) != IG_OK ||
        (st = escape_str(b, value, APPR_SLACK_VALUE_MAX)) != IG_OK)
        return st;
    return ig_buf_adds(b, "\n");
}

/* The intent's field key, else the view's (the PDP keeps principal and
   tenant beside the binding). */
static const char *
intent_or_view(const json_t *v, const char *key)
{
    const char *s = vstr(json_object_get(v, "intent"), key);

    return s != NULL ? s : vstr(v, key);
}

/* A small count (integer or, as the PDP's records read back, real):
   0..9999, else 0. */
static int
count_of(const json_t *n)
{
    double d = json_number_value(n);

    return d >= 0 && d < 10000 ? (int)d : 0;
}

/* Groups joined with ", " (cut), and the quorum. */
static enum ig_status
add_needs(struct ig_buf *b, const json_t *req)
{
    const json_t *groups = json_object_get(req, "groups"), *g;
    int quorum = count_of(json_object_get(req, "quorum"));
    char num[32];
    size_t i, start = b->len;
    enum ig_status st;

    (void)snprintf(num, sizeof(num), "%d approval%s", quorum > 0 ? quorum : 1,
                   quorum > 1 ? "s" : "");
    if ((st = ig_buf_adds(b, "*Needs:* ")) != IG_OK ||
        (st = ig_buf_adds(b, num)) != IG_OK ||
        (st = ig_buf_adds(b, " from ")) != IG_OK)
        return st;
    start = b->len;
    json_array_foreach(groups, i, g)
    {
        if (b->len - start > APPR_SLACK_VALUE_MAX)
            break;
        if ((i > 0 && (st = ig_buf_adds(b, ", ")) != IG_OK) ||
            (st = escape_str(b, json_string_value(g), APPR_SLACK_ID_MAX)) !=
                IG_OK)
            return st;
    }
    return ig_buf_adds(b, "\n");
}

/* "*Why:* CODE, CODE - message" from the escalating decision. */
static enum ig_status
add_why(struct ig_buf *b, const json_t *dec)
{
    const char *msg = vstr(dec, "message");
    const json_t *r;
    size_t i;
    enum ig_status st;

    if ((st = ig_buf_adds(b, "*Why:* ")) != IG_OK)
        return st;
    json_array_foreach(json_object_get(dec, "reasons"), i, r)
    {
        if (i == 3)
            break;
        if ((i > 0 && (st = ig_buf_adds(b, ", ")) != IG_OK) ||
            (st = escape_str(b, json_string_value(r), APPR_SLACK_ID_MAX)) !=
                IG_OK)
            return st;
    }
    if (msg != NULL &&
        ((st = ig_buf_adds(b, " - ")) != IG_OK ||
         (st = escape_str(b, msg, APPR_SLACK_VALUE_MAX)) != IG_OK))
        return st;
    return ig_buf_adds(b, "\n");
}

/* The section's mrkdwn text into b. */
static enum ig_status
section_text(struct ig_buf *b, const json_t *v, const char *status)
{
    const json_t *intent = json_object_get(v, "intent");
    const char *hash = vstr(v, "intent_hash");
    char prefix[7 + 12 + 4];
    enum ig_status st;

    (void)snprintf(prefix, sizeof(prefix), "%.19s...", hash);
    if ((st = ig_buf_adds(b, strcmp(status, "PENDING") == 0
                                 ? "*Approval needed:* "
                                 : "*Approval request:* ")) != IG_OK ||
        (st = escape_str(b, vstr(intent, "action"), APPR_SLACK_VALUE_MAX)) !=
            IG_OK ||
        (st = ig_buf_adds(b, "\n")) != IG_OK ||
        (st = add_line(b, "Resource", vstr(intent, "resource"))) != IG_OK ||
        (st = add_params(b, json_object_get(intent, "params"))) != IG_OK ||
        (st = add_line(b, "Requested by", intent_or_view(v, "principal"))) !=
            IG_OK ||
        (intent_or_view(v, "tenant") != NULL &&
         (st = add_line(b, "Tenant", intent_or_view(v, "tenant"))) != IG_OK) ||
        (st = add_why(b, json_object_get(v, "decision"))) != IG_OK ||
        (st = add_needs(b, json_object_get(v, "requirements"))) != IG_OK ||
        (st = add_line(b, "Intent", prefix)) != IG_OK)
        return st;
    return add_line(b, "Expires", vstr(v, "expires_at"));
}

/* One vote: "approved by NAME (id, via CHANNEL)". */
static enum ig_status
add_vote(struct ig_buf *b, const json_t *vote)
{
    const char *name = vstr(vote, "name"), *id = vstr(vote, "approver");
    enum ig_status st;

    if ((st = ig_buf_adds(b, str_is(json_object_get(vote, "vote"), "APPROVE")
                                 ? "approved by "
                                 : "denied by ")) != IG_OK ||
        (st = escape_str(b, name != NULL ? name : id, 80)) != IG_OK ||
        (st = ig_buf_adds(b, " (")) != IG_OK ||
        (st = escape_str(b, id, APPR_SLACK_ID_MAX)) != IG_OK ||
        (st = ig_buf_adds(b, ", via ")) != IG_OK ||
        (st = escape_str(b, vstr(vote, "channel"), 16)) != IG_OK)
        return st;
    return ig_buf_adds(b, ")");
}

/* The context line: status or result, approvals so far, the votes. */
static enum ig_status
context_text(struct ig_buf *b, const json_t *v, const char *status)
{
    const json_t *votes = json_object_get(v, "votes"), *vote;
    const json_t *res = json_object_get(v, "resolution");
    const char *decision = vstr(res, "decision");
    char num[96];
    size_t i;
    enum ig_status st;

    if (strcmp(status, "PENDING") == 0)
        (void)snprintf(num, sizeof(num), "*Pending:* %d of %d approvals",
                       count_of(json_object_get(v, "approvals")),
                       count_of(json_object_get(
                           json_object_get(v, "requirements"), "quorum")));
    else
        (void)snprintf(num, sizeof(num), "*Result:* %.16s%s%.8s", status,
                       decision != NULL ? ", decision " : "",
                       decision != NULL ? decision : "");
    if ((st = ig_buf_adds(b, num)) != IG_OK)
        return st;
    json_array_foreach(votes, i, vote)
    {
        if (i == VOTES_SHOWN)
            return ig_buf_adds(b, "; ...");
        if ((st = ig_buf_adds(b, i == 0 ? " - " : "; ")) != IG_OK ||
            (st = add_vote(b, vote)) != IG_OK)
            return st;
    }
    if (json_array_size(votes) == 0 && strcmp(status, "PENDING") == 0)
        return ig_buf_adds(b, " - no votes yet");
    return IG_OK;
}

/* The actions block with both buttons carrying value. */
static json_t *
buttons(const char *value)
{
    return json_pack("{s:s, s:s, s:[{s:s, s:s, s:s, s:s, s:{s:s, s:s}},"
                     " {s:s, s:s, s:s, s:s, s:{s:s, s:s}}]}",
                     "type", "actions", "block_id", "intentgate_vote",
                     "elements", "type", "button", "action_id", "approve",
                     "style", "primary", "value", value, "text", "type",
                     "plain_text", "text", "Approve", "type", "button",
                     "action_id", "deny", "style", "danger", "value", value,
                     "text", "type", "plain_text", "text", "Deny");
}

/* Fallback text for notifications: "Approval needed: ACTION on RES". */
static enum ig_status
fallback_text(struct ig_buf *b, const json_t *v, const char *status)
{
    const json_t *intent = json_object_get(v, "intent");
    enum ig_status st;

    if ((st = ig_buf_adds(b, strcmp(status, "PENDING") == 0
                                 ? "Approval needed: "
                                 : "Approval closed: ")) != IG_OK ||
        (st = escape_str(b, vstr(intent, "action"), APPR_SLACK_VALUE_MAX)) !=
            IG_OK ||
        (st = ig_buf_adds(b, " on ")) != IG_OK)
        return st;
    return escape_str(b, vstr(intent, "resource"), APPR_SLACK_VALUE_MAX);
}

enum ig_status
appr_slack_message(const json_t *v, const char *channel, const char *ts,
                   json_t **out)
{
    const char *id = vstr(v, "approval_id"), *hash = vstr(v, "intent_hash");
    const char *status = vstr(v, "status");
    struct ig_buf sec, ctx, fb, val;
    json_t *blocks = NULL, *msg = NULL;
    enum ig_status st = IG_ERR_INVALID;

    *out = NULL;
    ig_buf_init(&sec, SECTION_MAX);
    ig_buf_init(&ctx, SECTION_MAX);
    ig_buf_init(&fb, SECTION_MAX);
    ig_buf_init(&val, APPR_SLACK_ID_MAX + IG_HASH_STRLEN + 2);
    if (id == NULL || hash == NULL || status == NULL || channel == NULL)
        goto out;
    if ((st = section_text(&sec, v, status)) != IG_OK ||
        (st = context_text(&ctx, v, status)) != IG_OK ||
        (st = fallback_text(&fb, v, status)) != IG_OK ||
        (st = ig_buf_adds(&val, id)) != IG_OK ||
        (st = ig_buf_adds(&val, ":")) != IG_OK ||
        (st = ig_buf_adds(&val, hash)) != IG_OK)
        goto out;
    st = IG_ERR_NOMEM;
    blocks =
        json_pack("[{s:s, s:{s:s, s:s}}, {s:s, s:[{s:s, s:s}]}]", "type",
                  "section", "text", "type", "mrkdwn", "text", sec.data, "type",
                  "context", "elements", "type", "mrkdwn", "text", ctx.data);
    if (blocks == NULL)
        goto out;
    /* json_array_append_new steals the buttons (NULL: fails). */
    if (strcmp(status, "PENDING") == 0 &&
        json_array_append_new(blocks, buttons(val.data)) != 0)
        goto out;
    /* "o" steals blocks, also when json_pack fails. */
    msg = json_pack("{s:s, s:s, s:o}", "channel", channel, "text", fb.data,
                    "blocks", blocks);
    blocks = NULL;
    if (msg == NULL ||
        (ts != NULL && json_object_set_new(msg, "ts", json_string(ts)) != 0))
        goto out;
    *out = msg;
    msg = NULL;
    st = IG_OK;
out:
    json_decref(blocks);
    json_decref(msg);
    ig_buf_release(&sec);
    ig_buf_release(&ctx);
    ig_buf_release(&fb);
    ig_buf_release(&val);
    return st;
}
