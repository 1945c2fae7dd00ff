/*
 * appr_html_pages.c - the approval pages: login, the pending list, one
 * approval with its vote form, and errors (see appr_html.h).
 *
 * Each renderer walks its view with the sticky writer of appr_html_int.h:
 * fixed markup is written as is, everything from the view through the
 * escaping writers. Element ids and classes are the contract the browser
 * tests and the stylesheet rely on: #approver #password #login (login),
 * a.approval-link (list), #status #action #resource #params #principal
 * #operators #requested-by #tenant #context #reasons #message #trace
 * #resolution-trace #policy-revision
 * #intent-hash #created-at #expires-at #votes #flash #error #approve #deny
 * #comment (detail).
 */
#include "appr_html.h"

#include <stdio.h>
#include <string.h>

#include "appr_html_int.h"
#include "ig_time.h"

/* ---- small pieces ---- */

/* A time: RFC 3339 text as is, seconds formatted. */
static void
w_time(struct appr_w *w, const json_t *v)
{
    char t[IG_TIME_STRLEN + 1];

    if (json_is_integer(v) &&
        ig_time_format((int64_t)json_integer_value(v), t) == IG_OK) {
        appr_w_raw(w, t);
        return;
    }
    appr_w_value(w, v);
}

static const char *
status_class(const char *status)
{
    static const char *const known[] = {"PENDING", "APPROVED", "DENIED",
                                        "EXPIRED"};
    static const char *const cls[] = {"pending", "approved", "denied",
                                      "expired"};
    size_t i;

    for (i = 0; status != NULL && i < 4; i++)
        if (strcmp(status, known[i]) == 0)
            return cls[i];
    return "other";
}

/* The strings of an array, comma separated. */
static void
w_list(struct appr_w *w, const json_t *arr)
{
    size_t i;

    for (i = 0; i < json_array_size(arr); i++) {
        if (i > 0)
            appr_w_raw(w, ", ");
        appr_w_value(w, json_array_get(arr, i));
    }
}

/* The groups of requirements, comma separated. */
static void
w_groups(struct appr_w *w, const json_t *req)
{
    w_list(w, json_object_get(req, "groups"));
}

/* "1 of 2" approvals. */
static void
w_count(struct appr_w *w, const json_t *approvals, const json_t *req)
{
    appr_w_int(w, approvals, "?");
    appr_w_raw(w, " of ");
    appr_w_int(w, json_object_get(req, "quorum"), "?");
}

const char *
appr_html_cannot_vote_text(const char *code)
{
    static const struct {
        const char *code, *text;
    } texts[] = {
        {"NOT_ELIGIBLE", "You are not in a group that may decide this "
                         "request."},
        {"SELF_APPROVAL", "This is your own request (you run the agent that "
                          "sent it, or it names you as its requester): "
                          "someone else must decide it."},
        {"ALREADY_VOTED", "You have already voted on this request."},
        {"APPROVAL_EXPIRED", "This request has expired; it can no longer be "
                             "approved."},
        {"APPROVAL_RESOLVED", "This request has already been decided."},
    };
    size_t i;

    for (i = 0; code != NULL && i < sizeof(texts) / sizeof(texts[0]); i++)
        if (strcmp(code, texts[i].code) == 0)
            return texts[i].text;
    return "You cannot vote on this request.";
}

/* ---- login ---- */

enum ig_status
appr_html_login(struct ig_buf *b, const char *csrf, const char *error,
                const char *approver)
{
    struct appr_w w = {b, IG_OK};

    appr_w_begin(&w, NULL, "Sign in");
    appr_w_raw(&w, "<section class=\"card narrow\">\n"
                   "<h1>Sign in to review requests</h1>\n");
    if (error != NULL) {
        appr_w_raw(&w, "<p class=\"error\" id=\"error\" role=\"alert\">");
        appr_w_esc(&w, error);
        appr_w_raw(&w, "</p>\n");
    }
    appr_w_raw(&w, "<form method=\"post\" action=\"/ui/login\" "
                   "class=\"stack\" id=\"login-form\">\n"
                   "<input type=\"hidden\" name=\"csrf\" value=\"");
    appr_w_esc(&w, csrf);
    appr_w_raw(&w, "\">\n<label for=\"approver\">Approver id</label>\n"
                   "<input id=\"approver\" name=\"approver\" type=\"text\" "
                   "autocomplete=\"username\" autocapitalize=\"none\" "
                   "spellcheck=\"false\" required maxlength=\"" IG_STR(
                       IG_ID_MAX) "\" value=\"");
    appr_w_esc(&w, approver);
    appr_w_raw(&w,
               "\">\n<label for=\"password\">Password</label>\n"
               "<input id=\"password\" name=\"password\" type=\"password\" "
               "autocomplete=\"current-password\" required "
               "maxlength=\"" IG_STR(
                   IG_PASSWORD_MAX) "\">\n"
                                    "<button type=\"submit\" id=\"login\" "
                                    "class=\"primary\">"
                                    "Sign in</button>\n</form>\n</section>\n");
    appr_w_end(&w);
    return w.st;
}

/* ---- the pending list ---- */

static void
w_item(struct appr_w *w, const json_t *it)
{
    const json_t *req = json_object_get(it, "requirements");

    appr_w_raw(w, "<li class=\"item\"><a class=\"approval-link\" "
                  "href=\"/ui/approvals/");
    appr_w_segment(w, appr_json_str(it, "approval_id"));
    appr_w_raw(w, "\">\n<span class=\"item-head\"><span class=\"action\">");
    appr_w_value(w, json_object_get(it, "action"));
    appr_w_raw(w, "</span><span class=\"count\" title=\"approvals\">");
    w_count(w, json_object_get(it, "approvals"), req);
    appr_w_raw(w, "</span></span>\n<span class=\"resource\">");
    appr_w_value(w, json_object_get(it, "resource"));
    appr_w_raw(w, "</span>\n<span class=\"item-meta\">by <span "
                  "class=\"principal\">");
    appr_w_value(w, json_object_get(it, "principal"));
    appr_w_raw(w, "</span> \xC2\xB7 for ");
    w_groups(w, req);
    appr_w_raw(w, " \xC2\xB7 expires <span class=\"expires\">");
    w_time(w, json_object_get(it, "expires_at"));
    appr_w_raw(w, "</span>");
    if (!json_is_true(json_object_get(it, "can_vote")))
        appr_w_raw(w, " \xC2\xB7 <span class=\"tag\">view only</span>");
    appr_w_raw(w, "</span>\n</a></li>\n");
}

enum ig_status
appr_html_list(struct ig_buf *b, const struct appr_page *p, const json_t *list)
{
    struct appr_w w = {b, IG_OK};
    size_t i, n = json_array_size(list);

    appr_w_begin(&w, p, "Pending approvals");
    appr_w_raw(&w, "<h1>Waiting for a decision</h1>\n");
    if (n == 0) {
        appr_w_raw(&w, "<p class=\"card empty\" id=\"empty\">Nothing is "
                       "waiting for you. New requests appear here when a "
                       "policy asks for a human decision.</p>\n");
    } else {
        appr_w_raw(&w, "<ul class=\"approvals\" id=\"approvals\">\n");
        for (i = 0; i < n; i++)
            w_item(&w, json_array_get(list, i));
        appr_w_raw(&w, "</ul>\n");
    }
    appr_w_end(&w);
    return w.st;
}

/* ---- one approval ---- */

static void
w_summary(struct appr_w *w, const json_t *view)
{
    const json_t *in = json_object_get(view, "intent");
    const json_t *req = json_object_get(view, "requirements");
    const json_t *by =
        json_object_get(json_object_get(in, "context"), "requested_by");
    const char *status = appr_json_str(view, "status");

    appr_w_raw(w, "<section class=\"card summary\">\n<p class=\"headline\">"
                  "<span id=\"status\" class=\"badge status-");
    appr_w_raw(w, status_class(status));
    appr_w_raw(w, "\">");
    appr_w_value(w, json_object_get(view, "status"));
    appr_w_raw(w, "</span></p>\n<h1 id=\"action\" class=\"action\">");
    appr_w_value(w, json_object_get(in, "action"));
    appr_w_raw(w, "</h1>\n<dl class=\"fields\">\n");
    appr_w_field(w, "Resource", "resource", json_object_get(in, "resource"), 1);
    /* What the PDP established (the agent's token, the config), then
       what the agent only says (its context): labelled for what it is. */
    appr_w_field(w, "Agent (authenticated)", "principal",
                 json_object_get(in, "principal"), 0);
    if (json_array_size(json_object_get(view, "operators")) > 0) {
        appr_w_raw(w, "<dt>Run by (config)</dt><dd id=\"operators\">");
        w_list(w, json_object_get(view, "operators"));
        appr_w_raw(w, "</dd>\n");
    }
    if (by != NULL) {
        appr_w_raw(w, "<dt>Requested by</dt><dd id=\"requested-by\" "
                      "class=\"claim\">claimed by the agent: ");
        appr_w_any(w, by);
        appr_w_raw(w, "</dd>\n");
    }
    appr_w_field(w, "Tenant", "tenant", json_object_get(in, "tenant"), 0);
    appr_w_raw(w, "<dt>Approvals</dt><dd id=\"approvals\">");
    w_count(w, json_object_get(view, "approvals"), req);
    appr_w_raw(w, " from ");
    w_groups(w, req);
    appr_w_raw(w, "</dd>\n<dt>Created</dt><dd id=\"created-at\">");
    w_time(w, json_object_get(view, "created_at"));
    appr_w_raw(w, "</dd>\n<dt>Expires</dt><dd id=\"expires-at\">");
    w_time(w, json_object_get(view, "expires_at"));
    appr_w_raw(w, "</dd>\n</dl>\n</section>\n");
}

static void
w_reasons(struct appr_w *w, const char *id, const json_t *reasons)
{
    size_t i;

    appr_w_raw(w, "<ul class=\"reasons\" id=\"");
    appr_w_raw(w, id);
    appr_w_raw(w, "\">");
    for (i = 0; i < json_array_size(reasons); i++) {
        appr_w_raw(w, "<li><code>");
        appr_w_value(w, json_array_get(reasons, i));
        appr_w_raw(w, "</code></li>");
    }
    if (json_array_size(reasons) == 0)
        appr_w_raw(w, "<li class=\"muted\">none given</li>");
    appr_w_raw(w, "</ul>\n");
}

static void
w_why(struct appr_w *w, const json_t *view)
{
    const json_t *in = json_object_get(view, "intent");
    const json_t *d = json_object_get(view, "decision");
    const json_t *res = json_object_get(view, "resolution");

    appr_w_raw(w, "<section class=\"card\">\n<h2>Parameters</h2>\n"
                  "<pre id=\"params\" class=\"json\">");
    appr_w_json(w, json_object_get(in, "params"));
    appr_w_raw(w, "</pre>\n<h2>Why it needs a human</h2>\n");
    w_reasons(w, "reasons", json_object_get(d, "reasons"));
    appr_w_raw(w, "<p id=\"message\" class=\"message\">");
    appr_w_lines(w, json_object_get(d, "message"));
    appr_w_raw(w, "</p>\n");
    if (json_is_array(json_object_get(d, "trace"))) {
        appr_w_raw(w, "<h3>Why: policy \xE2\x86\x92 verdict</h3>\n");
        appr_w_trace(w, "trace", json_object_get(d, "trace"));
    }
    appr_w_raw(w, "</section>\n");
    if (json_is_object(res)) {
        appr_w_raw(w, "<section class=\"card\" id=\"resolution\">\n"
                      "<h2>Outcome</h2>\n<dl class=\"fields\">\n");
        appr_w_field(w, "Result", "resolution-result",
                     json_object_get(res, "result"), 0);
        appr_w_field(w, "Decision now", "resolution-decision",
                     json_object_get(res, "decision"), 0);
        appr_w_raw(w, "<dt>Resolved</dt><dd id=\"resolved-at\">");
        w_time(w, json_object_get(res, "resolved_at"));
        appr_w_raw(w, "</dd>\n</dl>\n");
        if (json_array_size(json_object_get(res, "reasons")) > 0)
            w_reasons(w, "resolution-reasons", json_object_get(res, "reasons"));
        if (json_is_array(json_object_get(res, "trace"))) {
            appr_w_raw(w, "<h3>Re-evaluation: policy \xE2\x86\x92 "
                          "verdict</h3>\n");
            appr_w_trace(w, "resolution-trace", json_object_get(res, "trace"));
        }
        appr_w_raw(w, "</section>\n");
    }
    appr_w_raw(w, "<section class=\"card claims\">\n<h2>Context, claimed "
                  "by the agent (not verified)</h2>\n"
                  "<pre id=\"context\" class=\"json\">");
    appr_w_json(w, json_object_get(in, "context"));
    appr_w_raw(w, "</pre>\n</section>\n");
}

static void
w_integrity(struct appr_w *w, const json_t *view)
{
    const json_t *d = json_object_get(view, "decision");

    appr_w_raw(w, "<section class=\"card fine\">\n<h2>What you are deciding "
                  "on</h2>\n<dl class=\"fields\">\n");
    appr_w_field(w, "Intent hash", "intent-hash",
                 json_object_get(view, "intent_hash"), 1);
    appr_w_field(w, "Policy revision", "policy-revision",
                 json_object_get(d, "policy_revision"), 1);
    appr_w_field(w, "Intent", "intent-id", json_object_get(view, "intent_id"),
                 1);
    appr_w_field(w, "Approval", "approval-id",
                 json_object_get(view, "approval_id"), 1);
    appr_w_raw(w, "</dl>\n</section>\n");
}

static void
w_vote_form(struct appr_w *w, const struct appr_page *p, const json_t *view)
{
    if (!json_is_true(json_object_get(view, "can_vote"))) {
        const char *code = appr_json_str(view, "cannot_vote");

        /* A decided request shows its outcome card instead. */
        if (code != NULL && strcmp(code, "APPROVAL_RESOLVED") == 0 &&
            json_is_object(json_object_get(view, "resolution")))
            return;

        appr_w_raw(w, "<p class=\"card notice\" id=\"cannot-vote\">");
        appr_w_esc(w, appr_html_cannot_vote_text(code));
        if (code != NULL) {
            appr_w_raw(w, " <code>");
            appr_w_esc(w, code);
            appr_w_raw(w, "</code>");
        }
        appr_w_raw(w, "</p>\n");
        return;
    }
    appr_w_raw(w, "<section class=\"card\">\n<h2>Your decision</h2>\n"
                  "<form method=\"post\" class=\"stack vote\" id=\"vote-form\" "
                  "action=\"/ui/approvals/");
    appr_w_segment(w, appr_json_str(view, "approval_id"));
    appr_w_raw(w, "/vote\">\n<input type=\"hidden\" name=\"csrf\" value=\"");
    appr_w_esc(w, p != NULL ? p->csrf : NULL);
    appr_w_raw(w, "\">\n<input type=\"hidden\" name=\"intent_hash\" value=\"");
    appr_w_esc(w, appr_json_str(view, "intent_hash"));
    appr_w_raw(
        w, "\">\n<label for=\"comment\">Comment (optional)</label>\n"
           "<textarea id=\"comment\" name=\"comment\" rows=\"3\" "
           "maxlength=\"" IG_STR(
               IG_APPROVAL_COMMENT_MAX) "\"></textarea>\n"
                                        "<div class=\"buttons\">\n"
                                        "<button type=\"submit\" "
                                        "id=\"approve\" name=\"vote\" "
                                        "value=\"approve\" "
                                        "class=\"approve\">Approve</button>\n"
                                        "<button type=\"submit\" id=\"deny\" "
                                        "name=\"vote\" "
                                        "value=\"deny\" "
                                        "class=\"deny\">Deny</button>\n"
                                        "</div>\n</form>\n</section>\n");
}

static void
w_votes(struct appr_w *w, const json_t *votes)
{
    size_t i, n = json_array_size(votes);

    appr_w_raw(w, "<section class=\"card\">\n<h2>Votes</h2>\n"
                  "<ul class=\"votes\" id=\"votes\">\n");
    for (i = 0; i < n; i++) {
        const json_t *v = json_array_get(votes, i);
        const char *verdict = appr_json_str(v, "vote");
        const json_t *name = json_object_get(v, "name");
        int approve = verdict != NULL && strcmp(verdict, "APPROVE") == 0;

        appr_w_raw(w, approve ? "<li class=\"vote vote-approve\">"
                              : "<li class=\"vote vote-deny\">");
        appr_w_raw(w, "<span class=\"verdict\">");
        appr_w_value(w, json_object_get(v, "vote"));
        appr_w_raw(w, "</span> <span class=\"voter\">");
        appr_w_value(w, json_is_string(name) ? name
                                             : json_object_get(v, "approver"));
        appr_w_raw(w, "</span> <span class=\"voter-id\">(");
        appr_w_value(w, json_object_get(v, "approver"));
        appr_w_raw(w, ")</span>\n<span class=\"item-meta\"><time>");
        w_time(w, json_object_get(v, "at"));
        appr_w_raw(w, "</time> via ");
        appr_w_value(w, json_object_get(v, "channel"));
        appr_w_raw(w, "</span>");
        if (json_string_length(json_object_get(v, "comment")) > 0) {
            appr_w_raw(w, "\n<span class=\"comment\">");
            appr_w_lines(w, json_object_get(v, "comment"));
            appr_w_raw(w, "</span>");
        }
        appr_w_raw(w, "</li>\n");
    }
    if (n == 0)
        appr_w_raw(w, "<li class=\"muted\">No votes yet.</li>\n");
    appr_w_raw(w, "</ul>\n</section>\n");
}

enum ig_status
appr_html_detail(struct ig_buf *b, const struct appr_page *p,
                 const json_t *view, const char *flash, const char *error_code,
                 const char *error_message)
{
    struct appr_w w = {b, IG_OK};

    appr_w_begin(&w, p, "Approval request");
    appr_w_raw(&w, "<p class=\"back\"><a href=\"/ui/approvals\">\xE2\x86\x90 "
                   "All pending requests</a></p>\n");
    if (flash != NULL) {
        appr_w_raw(&w, "<p class=\"flash\" id=\"flash\" role=\"status\">");
        appr_w_esc(&w, flash);
        appr_w_raw(&w, "</p>\n");
    }
    if (error_code != NULL || error_message != NULL) {
        appr_w_raw(&w, "<p class=\"error\" id=\"error\" role=\"alert\">"
                       "<strong class=\"code\">");
        appr_w_esc(&w, error_code);
        appr_w_raw(&w, "</strong> ");
        appr_w_esc(&w, error_message);
        appr_w_raw(&w, "</p>\n");
    }
    w_summary(&w, view);
    w_why(&w, view);
    w_integrity(&w, view);
    w_vote_form(&w, p, view);
    w_votes(&w, json_object_get(view, "votes"));
    appr_w_end(&w);
    return w.st;
}

/* ---- errors ---- */

enum ig_status
appr_html_error(struct ig_buf *b, const struct appr_page *p,
                unsigned int status, const char *title, const char *message)
{
    struct appr_w w = {b, IG_OK};
    char code[32];

    (void)snprintf(code, sizeof(code), "%u", status);
    appr_w_begin(&w, p, title);
    appr_w_raw(&w, "<section class=\"card narrow\">\n<p class=\"muted\">"
                   "Error ");
    appr_w_raw(&w, code);
    appr_w_raw(&w, "</p>\n<h1>");
    appr_w_esc(&w, title);
    appr_w_raw(&w, "</h1>\n<p class=\"error\" id=\"error\" role=\"alert\">");
    appr_w_esc(&w, message);
    appr_w_raw(&w, "</p>\n<p><a href=\"/ui/approvals\">Back to the pending "
                   "requests</a></p>\n</section>\n");
    appr_w_end(&w);
    return w.st;
}
