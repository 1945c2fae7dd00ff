/*
 * appr_slack_msg.c - the Slack messages for an approval request: the
 * chat.postMessage body when it opens and the chat.update body after each
 * vote or the resolution (who voted, the result, no buttons once decided).
 *
 * One click on Approve approves the whole intent hash, so the message
 * shows the whole intent: a summary (action, resource, the authenticated
 * agent, the policies' reasons, who must decide, the full intent hash),
 * then every param and the agent's context - labelled as its claim - as
 * JSON in code blocks (appr_slack_text.c), split over as many sections as
 * Slack allows. When that does not fit Slack's limits (3000 characters a
 * section, 50 blocks), the message shows the summary with its values cut,
 * the intent hash and where to decide (the web page, the CLI), and only a
 * Deny button: an intent no one could read in Slack is not approved from
 * Slack (pdp_slack_click.c refuses such an approve click too).
 */
#include "appr_slack.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "appr_slack_int.h"
#include "ig_json.h"

#define VOTES_SHOWN 10
#define SHORT_CUT 100 /* bytes of a value shown in a message too large */
#define PARAMS_TITLE "*Params* (all of them, as JSON):"
#define CONTEXT_TITLE "*Context, claimed by the agent (not verified):*"
#define URL_CHARS                                                              \
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"           \
    "-._~:/%[]"
#define ID_CHARS                                                               \
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

/* 1 when v is exactly the string lit. */
static int
str_is(const json_t *v, const char *lit)
{
    const char *s = json_string_value(v);

    return s != NULL && json_string_length(v) == strlen(lit) &&
           strcmp(s, lit) == 0;
}

static const char *
vstr(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

/* 1 when s is n > 0 characters of set, at most max. */
static int
made_of(const char *s, const char *set, size_t max)
{
    size_t n = s != NULL ? strlen(s) : 0;

    return n > 0 && n <= max && strspn(s, set) == n;
}

/* The intent's field key, else the view's (the PDP keeps principal and
   tenant beside the binding). */
static const char *
intent_or_view(const json_t *v, const char *key)
{
    const char *s = vstr(json_object_get(v, "intent"), key);

    return s != NULL ? s : vstr(v, key);
}

/* "*label:* value\n", the value plain mrkdwn cut at max. */
static enum ig_status
add_line(struct ig_buf *b, const char *label, const char *value, size_t max)
{
    enum ig_status st;

    if ((st = ig_buf_adds(b, "*")) != IG_OK ||
        (st = ig_buf_adds(b, label)) != IG_OK ||
        (st = ig_buf_adds(b, ":* ")) != IG_OK ||
        (st = appr_slack_str(b, value, max)) != IG_OK)
        return st;
    return ig_buf_adds(b, "\n");
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
            (st = appr_slack_str(b, json_string_value(g), IG_ID_MAX)) != IG_OK)
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
            (st = appr_slack_str(b, json_string_value(r), IG_ID_MAX)) != IG_OK)
            return st;
    }
    if (msg != NULL &&
        ((st = ig_buf_adds(b, " - ")) != IG_OK ||
         (st = appr_slack_str(b, msg, APPR_SLACK_VALUE_MAX)) != IG_OK))
        return st;
    return ig_buf_adds(b, "\n");
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
        (st = appr_slack_str(b, name != NULL ? name : id, 80)) != IG_OK ||
        (st = ig_buf_adds(b, " (")) != IG_OK ||
        (st = appr_slack_str(b, id, IG_ID_MAX)) != IG_OK ||
        (st = ig_buf_adds(b, ", via ")) != IG_OK ||
        (st = appr_slack_str(b, vstr(vote, "channel"), 16)) != IG_OK)
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

/* The actions block: Approve (when the message shows the whole intent)
   and Deny, both carrying value. */
static json_t *
buttons(const char *value, int approve)
{
    json_t *acts = json_pack("{s:s, s:s, s:[]}", "type", "actions", "block_id",
                             "intentgate_vote", "elements");
    json_t *els = json_object_get(acts, "elements");

    /* json_array_append_new steals each button (NULL: fails). */
    if (acts == NULL ||
        (approve &&
         json_array_append_new(
             els, json_pack("{s:s, s:s, s:s, s:s, s:{s:s, s:s}}", "type",
                            "button", "action_id", "approve", "style",
                            "primary", "value", value, "text", "type",
                            "plain_text", "text", "Approve")) != 0) ||
        json_array_append_new(
            els,
            json_pack("{s:s, s:s, s:s, s:s, s:{s:s, s:s}}", "type", "button",
                      "action_id", "deny", "style", "danger", "value", value,
                      "text", "type", "plain_text", "text", "Deny")) != 0) {
        json_decref(acts);
        return NULL;
    }
    return acts;
}

/* "*Run by:* a, b (config)" when the config says approvers run the
   agent. */
static enum ig_status
add_operators(struct ig_buf *b, const json_t *ops)
{
    const json_t *o;
    size_t i, start;
    enum ig_status st;

    if (json_array_size(ops) == 0)
        return IG_OK;
    if ((st = ig_buf_adds(b, "*Run by:* ")) != IG_OK)
        return st;
    start = b->len;
    json_array_foreach(ops, i, o)
    {
        if (b->len - start > APPR_SLACK_VALUE_MAX)
            return ig_buf_adds(b, "...\n");
        if ((i > 0 && (st = ig_buf_adds(b, ", ")) != IG_OK) ||
            (st = appr_slack_str(b, json_string_value(o), IG_ID_MAX)) != IG_OK)
            return st;
    }
    return ig_buf_adds(b, " (config)\n");
}

/* "*Requested by:* claimed by the agent: ..." when the context says. */
static enum ig_status
add_claimed_by(struct ig_buf *b, const json_t *by, int full)
{
    enum ig_status st;

    if (by == NULL)
        return IG_OK;
    if ((st = ig_buf_adds(b, "*Requested by:* claimed by the agent: ")) !=
        IG_OK)
        return st;
    if (!json_is_string(by))
        st = ig_buf_adds(b, "(not a string; see the context)");
    else
        st = appr_slack_code_str(b, json_string_value(by),
                                 json_string_length(by), full ? 0 : SHORT_CUT);
    return st == IG_OK ? ig_buf_adds(b, "\n") : st;
}

/* The summary section's text. full: no value of the intent is cut (then
   IG_ERR_LIMIT when it does not fit a section). */
static enum ig_status
summary_text(struct ig_buf *b, const json_t *v, const char *status, int full)
{
    const json_t *in = json_object_get(v, "intent");
    const json_t *res = json_object_get(in, "resource");
    const json_t *by =
        json_object_get(json_object_get(in, "context"), "requested_by");
    size_t max = full ? APPR_SLACK_SECTION_MAX : APPR_SLACK_VALUE_MAX;
    enum ig_status st;

    if ((st = ig_buf_adds(b, strcmp(status, "PENDING") == 0
                                 ? "*Approval needed:* `"
                                 : "*Approval request:* `")) != IG_OK ||
        (st = appr_slack_str(b, vstr(in, "action"), max)) != IG_OK ||
        (st = ig_buf_adds(b, "`\n*Resource:* ")) != IG_OK ||
        (st = appr_slack_code_str(
             b, json_is_string(res) ? json_string_value(res) : "",
             json_string_length(res), full ? 0 : SHORT_CUT)) != IG_OK ||
        (st = ig_buf_adds(b, "\n*Agent:* ")) != IG_OK ||
        (st = appr_slack_str(b, intent_or_view(v, "principal"), max)) !=
            IG_OK ||
        (st = ig_buf_adds(b, " (authenticated)\n")) != IG_OK ||
        (st = add_operators(b, json_object_get(v, "operators"))) != IG_OK ||
        (st = add_claimed_by(b, by, full)) != IG_OK ||
        (intent_or_view(v, "tenant") != NULL &&
         (st = add_line(b, "Tenant", intent_or_view(v, "tenant"), max)) !=
             IG_OK) ||
        (st = add_why(b, json_object_get(v, "decision"))) != IG_OK ||
        (st = add_needs(b, json_object_get(v, "requirements"))) != IG_OK ||
        (st = ig_buf_adds(b, "*Intent hash:* `")) != IG_OK ||
        (st = appr_slack_str(b, vstr(v, "intent_hash"), IG_HASH_STRLEN)) !=
            IG_OK ||
        (st = ig_buf_adds(b, "`\n")) != IG_OK)
        return st;
    return add_line(b, "Expires", vstr(v, "expires_at"), APPR_SLACK_VALUE_MAX);
}

/* Where to decide when Slack cannot show the intent whole: a link under
   ui_url (when it is a plain http(s) URL), else the path, and the CLI. */
static enum ig_status
notice_text(struct ig_buf *b, const json_t *v, int pending, const char *ui_url)
{
    const char *id = vstr(v, "approval_id");
    int link =
        made_of(ui_url, URL_CHARS, 512) && strncmp(ui_url, "http", 4) == 0;
    enum ig_status st;

    st = ig_buf_adds(b, pending ? "*This request cannot be approved in "
                                  "Slack:* it is too large to show here in "
                                  "full, and Approve would approve all of "
                                  "it. Check the intent hash and decide on "
                                  "the web page: "
                                : "*Too large to show in Slack in full:* "
                                  "see the web page: ");
    if (st == IG_OK)
        st = ig_buf_adds(b, link ? "<" : "`");
    if (st == IG_OK && link)
        st = ig_buf_adds(b, ui_url);
    if (st == IG_OK)
        st = ig_buf_adds(b, "/ui/approvals/");
    if (st == IG_OK)
        st = ig_buf_adds(b, id);
    if (st == IG_OK)
        st = ig_buf_adds(b, link ? "|open the request>" : "` on the PDP");
    if (st == IG_OK)
        st = ig_buf_adds(b, ", or `intentgate approvals show ");
    if (st == IG_OK)
        st = ig_buf_adds(b, id);
    return st == IG_OK ? ig_buf_adds(b, "`.") : st;
}

/* Append a section holding text to blocks. */
static enum ig_status
add_section(json_t *blocks, const struct ig_buf *text)
{
    /* json_array_append_new steals the section (NULL: fails). */
    return json_array_append_new(blocks, appr_slack_section(text->data)) == 0
               ? IG_OK
               : IG_ERR_NOMEM;
}

/* The blocks that show the whole intent; IG_ERR_LIMIT when Slack's limits
   do not hold them (room is kept for the votes and the buttons). */
static enum ig_status
full_blocks(const json_t *v, const char *status, json_t *blocks)
{
    const json_t *in = json_object_get(v, "intent");
    const json_t *ctx = json_object_get(in, "context");
    const size_t room = APPR_SLACK_BLOCKS_MAX - 2;
    struct ig_buf sec;
    enum ig_status st;

    ig_buf_init(&sec, APPR_SLACK_SECTION_MAX);
    st = summary_text(&sec, v, status, 1);
    if (st == IG_OK)
        st = add_section(blocks, &sec);
    ig_buf_release(&sec);
    if (st == IG_OK)
        st = appr_slack_json_sections(blocks, PARAMS_TITLE,
                                      json_object_get(in, "params"), room);
    if (st == IG_OK && ctx != NULL &&
        !(json_is_object(ctx) && json_object_size(ctx) == 0))
        st = appr_slack_json_sections(blocks, CONTEXT_TITLE, ctx, room);
    return st;
}

/* The blocks of a message too large: the summary cut, where to decide. */
static enum ig_status
short_blocks(const json_t *v, const char *status, const char *ui_url,
             json_t *blocks)
{
    struct ig_buf sec;
    enum ig_status st;

    ig_buf_init(&sec, APPR_SLACK_SECTION_MAX);
    st = summary_text(&sec, v, status, 0);
    if (st == IG_OK)
        st = add_section(blocks, &sec);
    ig_buf_reset(&sec);
    if (st == IG_OK)
        st = notice_text(&sec, v, strcmp(status, "PENDING") == 0, ui_url);
    if (st == IG_OK)
        st = add_section(blocks, &sec);
    ig_buf_release(&sec);
    return st;
}

int
appr_slack_shows_all(const json_t *v)
{
    const char *status = vstr(v, "status");
    json_t *blocks = json_array();
    int ok = blocks != NULL && status != NULL &&
             full_blocks(v, status, blocks) == IG_OK;

    json_decref(blocks);
    return ok;
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
        (st = appr_slack_str(b, vstr(intent, "action"),
                             APPR_SLACK_VALUE_MAX)) != IG_OK ||
        (st = ig_buf_adds(b, " on ")) != IG_OK)
        return st;
    return appr_slack_str(b, vstr(intent, "resource"), APPR_SLACK_VALUE_MAX);
}

/* The view's blocks: the whole intent when it fits, else the short
   form; *complete says which. */
static enum ig_status
body_blocks(const json_t *v, const char *status, const char *ui_url,
            json_t *blocks, int *complete)
{
    enum ig_status st = full_blocks(v, status, blocks);

    *complete = st == IG_OK;
    if (st != IG_ERR_LIMIT)
        return st;
    if (json_array_clear(blocks) != 0)
        return IG_ERR_NOMEM;
    return short_blocks(v, status, ui_url, blocks);
}

enum ig_status
appr_slack_message(const json_t *v, const char *channel, const char *ts,
                   const char *ui_url, json_t **out)
{
    const char *id = vstr(v, "approval_id"), *hash = vstr(v, "intent_hash");
    const char *status = vstr(v, "status");
    struct ig_buf ctx, fb, val;
    json_t *blocks = json_array(), *msg = NULL;
    enum ig_status st = IG_ERR_INVALID;
    int complete = 0, pending;

    *out = NULL;
    ig_buf_init(&ctx, APPR_SLACK_SECTION_MAX);
    ig_buf_init(&fb, APPR_SLACK_SECTION_MAX);
    ig_buf_init(&val, IG_ID_MAX + IG_HASH_STRLEN + 2);
    if (!made_of(id, ID_CHARS, IG_ID_MAX) || hash == NULL || status == NULL ||
        channel == NULL)
        goto out;
    pending = strcmp(status, "PENDING") == 0;
    if (blocks == NULL)
        st = IG_ERR_NOMEM;
    else if ((st = body_blocks(v, status, ui_url, blocks, &complete)) !=
                 IG_OK ||
             (st = context_text(&ctx, v, status)) != IG_OK ||
             (st = fallback_text(&fb, v, status)) != IG_OK ||
             (st = ig_buf_adds(&val, id)) != IG_OK ||
             (st = ig_buf_adds(&val, ":")) != IG_OK ||
             (st = ig_buf_adds(&val, hash)) != IG_OK)
        goto out;
    st = IG_ERR_NOMEM;
    /* json_array_append_new steals the blocks (NULL: fails). */
    if (json_array_append_new(blocks, json_pack("{s:s, s:[{s:s, s:s}]}", "type",
                                                "context", "elements", "type",
                                                "mrkdwn", "text", ctx.data)) !=
            0 ||
        (pending &&
         json_array_append_new(blocks, buttons(val.data, complete)) != 0))
        goto out;
    /* "O" adds a reference to blocks. Links in the message are not
       unfurled: nothing an agent wrote is fetched or previewed. */
    msg = json_pack("{s:s, s:s, s:O, s:b, s:b}", "channel", channel, "text",
                    fb.data, "blocks", blocks, "unfurl_links", 0,
                    "unfurl_media", 0);
    if (msg == NULL ||
        (ts != NULL && json_object_set_new(msg, "ts", json_string(ts)) != 0))
        goto out;
    *out = msg;
    msg = NULL;
    st = IG_OK;
out:
    json_decref(blocks);
    json_decref(msg);
    ig_buf_release(&ctx);
    ig_buf_release(&fb);
    ig_buf_release(&val);
    return st;
}
