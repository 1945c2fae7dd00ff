/*
 * appr_html_audit.c - the auditors' pages: the log's latest checkpoint
 * with the export links, a filtered page of events, and one intent's
 * timeline (see appr_html_audit.h).
 *
 * An event is shown through a fixed list of the fields people look for
 * first (who, what was decided, why), then every other field it has, so
 * an event type added later is still shown whole; nested values are
 * pretty JSON. Everything from an event goes through the escaping writers
 * of appr_html_int.h. Links carry only values that were checked against
 * the shape of an id or a type, percent-encoded all the same.
 */
#include "appr_html_audit.h"

#include <stdio.h>
#include <string.h>

#include "appr_html_int.h"
#include "ig_json.h"

/* The event types a PDP writes, for the filter's choices (*.refused:
   refusals aggregated per key and interval; approver.login_failed and
   auth.failed are what older PDPs wrote one by one). */
static const char *const event_types[] = {
    "intent.received", "intent.decided",        "approval.notified",
    "approval.voted",  "approval.vote_refused", "approval.resolved",
    "grant.redeemed",  "execution.outcome",     "approver.login_failed",
    "auth.failed",     "policy.reloaded",       "config.loaded",
    "auth.refused",    "login.refused",         "grant.refused",
    "outcome.refused", "slack.refused",
};

/* Fields shown first, in this order (then the others). */
static const char *const first_fields[] = {
    "principal",       "tenant", "approver", "vote",    "decision", "reasons",
    "message",         "trace",  "result",   "outcome", "executor", "channel",
    "comment",         "code",   "approval", "grant",   "jti",      "detail",
    "policy_revision",
};

/* Fields the layout shows elsewhere. */
static int
shown_elsewhere(const char *k)
{
    return strcmp(k, "type") == 0 || strcmp(k, "time") == 0 ||
           strcmp(k, "intent_id") == 0 || strcmp(k, "intent") == 0;
}

static int
is_first_field(const char *k)
{
    size_t i;

    for (i = 0; i < sizeof(first_fields) / sizeof(first_fields[0]); i++)
        if (strcmp(k, first_fields[i]) == 0)
            return 1;
    return 0;
}

/* The leaf index of {seq, ...}. */
static void
w_leaf(struct appr_w *w, const json_t *row)
{
    char n[32];

    (void)snprintf(n, sizeof(n), "%lld",
                   (long long)json_integer_value(json_object_get(row, "seq")) -
                       1);
    appr_w_raw(w, n);
}

/* One field as <dt>/<dd>: strings and numbers as text, arrays of strings
   joined, anything else pretty JSON. */
static void
w_event_field(struct appr_w *w, const char *k, const json_t *v)
{
    size_t i;
    int flat = json_is_array(v);

    for (i = 0; flat && i < json_array_size(v); i++)
        flat = json_is_string(json_array_get(v, i));
    appr_w_raw(w, "<dt>");
    appr_w_esc(w, k);
    appr_w_raw(w, "</dt><dd class=\"field-");
    appr_w_segment(w, k);
    appr_w_raw(w, "\">");
    if (strcmp(k, "trace") == 0 && json_is_array(v)) {
        appr_w_trace(w, NULL, v);
    } else if (flat) {
        for (i = 0; i < json_array_size(v); i++) {
            appr_w_raw(w, i > 0 ? ", <code>" : "<code>");
            appr_w_value(w, json_array_get(v, i));
            appr_w_raw(w, "</code>");
        }
        if (json_array_size(v) == 0)
            appr_w_raw(w, "<span class=\"muted\">none</span>");
    } else if (json_is_object(v) || json_is_array(v)) {
        appr_w_raw(w, "<pre class=\"json\">");
        appr_w_json(w, v);
        appr_w_raw(w, "</pre>");
    } else if (strcmp(k, "comment") == 0 || strcmp(k, "message") == 0) {
        appr_w_lines(w, v);
    } else if (json_is_string(v) || json_is_number(v)) {
        appr_w_value(w, v);
    } else {
        appr_w_raw(w, "<code>");
        appr_w_json(w, v);
        appr_w_raw(w, "</code>");
    }
    appr_w_raw(w, "</dd>\n");
}

/* The fields of an event, the usual ones first. */
static void
w_fields(struct appr_w *w, const json_t *ev)
{
    const char *k;
    json_t *v;
    size_t i;

    appr_w_raw(w, "<dl class=\"fields\">\n");
    for (i = 0; i < sizeof(first_fields) / sizeof(first_fields[0]); i++)
        if ((v = json_object_get(ev, first_fields[i])) != NULL)
            w_event_field(w, first_fields[i], v);
    json_object_foreach(ig_json_unconst(ev), k, v)
    {
        if (!is_first_field(k) && !shown_elsewhere(k))
            w_event_field(w, k, v);
    }
    appr_w_raw(w, "</dl>\n");
}

/* The link to an intent's timeline. */
static void
w_intent_link(struct appr_w *w, const char *id)
{
    appr_w_raw(w,
               "<a class=\"intent-link\" href=\"" APPR_AUDIT_PATH "/intents/");
    appr_w_segment(w, id);
    appr_w_raw(w, "\"><code>");
    appr_w_esc(w, id);
    appr_w_raw(w, "</code></a>");
}

/* One event: type, leaf, time, intent, fields, and its whole JSON. */
static void
w_event(struct appr_w *w, const json_t *row, int with_intent)
{
    const json_t *ev = json_object_get(row, "event");
    const char *intent = appr_json_str(ev, "intent_id");

    appr_w_raw(w, "<li class=\"item card event\">\n<div class=\"item-head\">"
                  "<span class=\"action event-type\">");
    if (json_is_object(ev))
        appr_w_value(w, json_object_get(ev, "type"));
    else
        appr_w_raw(w, "not an event");
    appr_w_raw(w, "</span><span class=\"count\">leaf ");
    w_leaf(w, row);
    appr_w_raw(w, "</span></div>\n<div class=\"item-meta\">");
    appr_w_value(w, json_object_get(ev, "time"));
    if (with_intent && intent != NULL) {
        appr_w_raw(w, " \xC2\xB7 intent ");
        w_intent_link(w, intent);
    }
    appr_w_raw(w, "</div>\n");
    if (json_is_object(ev))
        w_fields(w, ev);
    appr_w_raw(w, "<details><summary>Event as logged</summary>"
                  "<pre class=\"json\">");
    /* An object, or a leaf that is not one as its text (store_audit_view). */
    appr_w_any(w, ev);
    appr_w_raw(w, "</pre></details>\n</li>\n");
}

/* The events as a list, tag "ul" or "ol" with id; with_intent: each
   links its intent's timeline. */
static void
w_event_list(struct appr_w *w, const char *tag, const char *id,
             const json_t *events, int with_intent)
{
    size_t i;

    appr_w_raw(w, "<");
    appr_w_raw(w, tag);
    appr_w_raw(w, " class=\"approvals\" id=\"");
    appr_w_raw(w, id);
    appr_w_raw(w, "\">\n");
    for (i = 0; i < json_array_size(events); i++)
        w_event(w, json_array_get(events, i), with_intent);
    appr_w_raw(w, "</");
    appr_w_raw(w, tag);
    appr_w_raw(w, ">\n");
}

/* ---- the events page ---- */

/* One configured witness: its cosignature on the latest checkpoint. */
static void
w_witness(struct appr_w *w, const json_t *wit)
{
    const char *state = appr_json_str(wit, "state");
    const char *when = appr_json_str(wit, "time");

    appr_w_raw(w, "<li class=\"witness\">\n<dl class=\"fields\">\n<dt>Witness"
                  "</dt><dd class=\"witness-id\">");
    appr_w_esc(w, appr_json_str(wit, "id"));
    appr_w_raw(w, "</dd>\n<dt>Key name</dt><dd class=\"witness-name\">");
    appr_w_esc(w, appr_json_str(wit, "name"));
    appr_w_raw(w, "</dd>\n<dt>Key ID</dt><dd class=\"witness-key-id\">");
    appr_w_esc(w, appr_json_str(wit, "key_id"));
    appr_w_raw(w, "</dd>\n<dt>Latest checkpoint</dt><dd "
                  "class=\"witness-state\">");
    if (state != NULL && strcmp(state, "cosigned") == 0)
        appr_w_raw(w, "cosigned (valid)");
    else if (state != NULL && strcmp(state, "invalid") == 0)
        appr_w_raw(w, "<strong>INVALID cosignature</strong>");
    else
        appr_w_raw(w, "not cosigned");
    appr_w_raw(w, "</dd>\n<dt>Cosigned at</dt><dd class=\"witness-time\">");
    appr_w_esc(w, when != NULL ? when : "-");
    appr_w_raw(w, "</dd>\n<dt>Last cosigned size</dt><dd "
                  "class=\"witness-last-size\">");
    appr_w_int(w, json_object_get(wit, "last_size"), "0");
    appr_w_raw(w, "</dd>\n</dl>\n</li>\n");
}

/* The configured witnesses (none: nothing). */
static void
w_witnesses(struct appr_w *w, const json_t *view)
{
    const json_t *ws = json_object_get(view, "witnesses"), *wit;
    size_t i;

    if (json_array_size(ws) == 0)
        return;
    appr_w_raw(w, "<h3>Witnesses</h3>\n<ul class=\"witnesses\" "
                  "id=\"witnesses\">\n");
    json_array_foreach(ws, i, wit)
    {
        w_witness(w, wit);
    }
    appr_w_raw(w, "</ul>\n");
}

static void
w_checkpoint(struct appr_w *w, const json_t *view)
{
    const json_t *note = json_object_get(view, "checkpoint");

    appr_w_raw(w, "<section class=\"card\" id=\"log\">\n<h2>Latest "
                  "checkpoint</h2>\n<dl class=\"fields\">\n<dt>Events "
                  "logged</dt><dd id=\"log-size\">");
    appr_w_int(w, json_object_get(view, "log_size"), "0");
    appr_w_raw(w,
               "</dd>\n<dt>Signed tree size</dt><dd id=\"checkpoint-size\">");
    if (json_is_string(note))
        appr_w_int(w, json_object_get(view, "checkpoint_size"), "0");
    else
        appr_w_raw(w, "none");
    appr_w_raw(w, "</dd>\n</dl>\n");
    if (json_is_string(note)) {
        appr_w_raw(w, "<pre id=\"checkpoint\">");
        appr_w_lines(w, note);
        appr_w_raw(w, "</pre>\n");
    } else {
        appr_w_raw(w, "<p class=\"muted\" id=\"no-checkpoint\">No checkpoint "
                      "has been signed yet.</p>\n");
    }
    w_witnesses(w, view);
    appr_w_raw(w, "<p><a id=\"export\" download href=\"" APPR_AUDIT_PATH
                  "/export.jsonl?end=");
    appr_w_int(w, json_object_get(view, "log_size"), "0");
    appr_w_raw(w,
               "\">Download the log</a> (JSONL, one event a line) and "
               "<a id=\"export-checkpoints\" download href=\"" APPR_AUDIT_PATH
               "/checkpoints.jsonl?end=");
    appr_w_int(w, json_object_get(view, "log_size"), "0");
    appr_w_raw(w, "\">its checkpoints</a>, then check them offline "
                  "with the log's verifier key");
    if (json_array_size(json_object_get(view, "witnesses")) > 0)
        appr_w_raw(w, " and the witnesses' keys, from their operators");
    appr_w_raw(w, ":</p>\n<pre>intentgate audit verify --leaves log.jsonl "
                  "--checkpoints checkpoints.jsonl --key KEY");
    if (json_array_size(json_object_get(view, "witnesses")) > 0)
        appr_w_raw(w, " \\\n    --witness WITNESS_KEY ... "
                      "--witness-quorum K");
    appr_w_raw(w, "</pre>\n</section>\n");
}

static void
w_filter(struct appr_w *w, const json_t *view)
{
    size_t i;

    appr_w_raw(w, "<section class=\"card\">\n<form method=\"get\" "
                  "action=\"" APPR_AUDIT_PATH "\" class=\"stack\" "
                  "id=\"filter\">\n<label for=\"type\">Event type</label>\n"
                  "<input id=\"type\" name=\"type\" type=\"text\" "
                  "list=\"event-types\" maxlength=\"" IG_STR(
                      IG_ID_MAX) "\" "
                                 "autocomplete=\"off\" spellcheck=\"false\" "
                                 "placeholder=\"any\" value=\"");
    appr_w_esc(w, appr_json_str(view, "type"));
    appr_w_raw(w, "\">\n<datalist id=\"event-types\">");
    for (i = 0; i < sizeof(event_types) / sizeof(event_types[0]); i++) {
        appr_w_raw(w, "<option value=\"");
        appr_w_raw(w, event_types[i]);
        appr_w_raw(w, "\"></option>");
    }
    appr_w_raw(w, "</datalist>\n<label for=\"intent\">Intent id</label>\n"
                  "<input id=\"intent\" name=\"intent\" type=\"text\" "
                  "maxlength=\"" IG_STR(
                      IG_INTENT_ID_MAX) "\" autocomplete=\"off\" "
                                        "spellcheck=\"false\" "
                                        "placeholder=\"any\" value=\"");
    appr_w_esc(w, appr_json_str(view, "intent_id"));
    appr_w_raw(w, "\">\n<button type=\"submit\" class=\"primary\">Show"
                  "</button>\n</form>\n</section>\n");
}

/* The link to the next (older) page, with the same filters. */
static void
w_older(struct appr_w *w, const json_t *view)
{
    const char *type = appr_json_str(view, "type");
    const char *intent = appr_json_str(view, "intent_id");

    if (!json_is_number(json_object_get(view, "older")))
        return;
    appr_w_raw(w, "<p><a id=\"older\" href=\"" APPR_AUDIT_PATH "?before=");
    appr_w_int(w, json_object_get(view, "older"), "0");
    if (type != NULL) {
        appr_w_raw(w, "&amp;type=");
        appr_w_segment(w, type);
    }
    if (intent != NULL) {
        appr_w_raw(w, "&amp;intent=");
        appr_w_segment(w, intent);
    }
    appr_w_raw(w, "\">Older events</a></p>\n");
}

enum ig_status
appr_html_audit_events(struct ig_buf *b, const struct appr_page *p,
                       const json_t *view)
{
    struct appr_w w = {b, IG_OK};
    const json_t *events = json_object_get(view, "events");

    appr_w_begin(&w, p, "Audit log");
    appr_w_raw(&w, "<h1>Audit log</h1>\n");
    w_checkpoint(&w, view);
    w_filter(&w, view);
    if (json_array_size(events) == 0) {
        appr_w_raw(&w, "<p class=\"card empty\" id=\"empty\">No events "
                       "match.</p>\n");
    } else {
        appr_w_raw(&w, "<h2>Events, newest first</h2>\n");
        w_event_list(&w, "ul", "events", events, 1);
    }
    w_older(&w, view);
    appr_w_end(&w);
    return w.st;
}

/* ---- one intent ---- */

static void
w_intent_head(struct appr_w *w, const char *id, const json_t *received)
{
    const json_t *in = json_object_get(received, "intent");

    appr_w_raw(w, "<p class=\"back\"><a href=\"" APPR_AUDIT_PATH
                  "\">\xE2\x86\x90 Audit log</a></p>\n"
                  "<section class=\"card summary\">\n<h1 id=\"action\" "
                  "class=\"action\">");
    if (in != NULL)
        appr_w_value(w, json_object_get(in, "action"));
    else
        appr_w_raw(w, "Intent");
    appr_w_raw(w, "</h1>\n<dl class=\"fields\">\n<dt>Intent</dt><dd "
                  "id=\"intent-id\"><code>");
    appr_w_esc(w, id);
    appr_w_raw(w, "</code></dd>\n");
    appr_w_field(w, "Resource", "resource", json_object_get(in, "resource"), 1);
    appr_w_field(w, "Agent", "principal",
                 json_object_get(received, "principal"), 0);
    appr_w_field(w, "Tenant", "tenant", json_object_get(received, "tenant"), 0);
    appr_w_field(w, "Intent hash", "intent-hash",
                 json_object_get(received, "intent_hash"), 1);
    appr_w_raw(w, "</dl>\n</section>\n");
    if (in == NULL)
        return;
    appr_w_raw(w, "<section class=\"card\">\n<h2>Parameters</h2>\n"
                  "<pre id=\"params\" class=\"json\">");
    appr_w_json(w, json_object_get(in, "params"));
    appr_w_raw(w, "</pre>\n<h2>Context</h2>\n<pre id=\"context\" "
                  "class=\"json\">");
    appr_w_json(w, json_object_get(in, "context"));
    appr_w_raw(w, "</pre>\n</section>\n");
}

/* The first intent.received event of the rows, or NULL. */
static const json_t *
received_event(const json_t *events)
{
    const json_t *ev;
    size_t i;

    for (i = 0; i < json_array_size(events); i++) {
        ev = json_object_get(json_array_get(events, i), "event");
        if (json_is_object(ev) && appr_json_str(ev, "type") != NULL &&
            strcmp(appr_json_str(ev, "type"), "intent.received") == 0)
            return ev;
    }
    return NULL;
}

enum ig_status
appr_html_audit_intent(struct ig_buf *b, const struct appr_page *p,
                       const json_t *view)
{
    struct appr_w w = {b, IG_OK};
    const json_t *events = json_object_get(view, "events");
    const char *id = appr_json_str(view, "intent_id");

    appr_w_begin(&w, p, "Intent timeline");
    w_intent_head(&w, id != NULL ? id : "", received_event(events));
    appr_w_raw(&w, "<h2>Timeline</h2>\n");
    w_event_list(&w, "ol", "timeline", events, 0);
    appr_w_end(&w);
    return w.st;
}
