/*
 * pdp_ui_audit.c - the auditors' read-only pages under /ui/audit:
 *
 *   GET /ui/audit                    latest checkpoint, export links and
 *                                    events newest first (?type=T,
 *                                    ?intent=ID, ?before=SEQ to page)
 *   GET /ui/audit/intents/{id}       one intent's timeline
 *   GET /ui/audit/export.jsonl       the leaves as JSONL (?end=N: the
 *                                    first N), as an attachment
 *   GET /ui/audit/checkpoints.jsonl  the checkpoints as JSONL (?end=N:
 *                                    those of size <= N), as an attachment
 *
 * The head of /ui/audit shows the latest checkpoint with its witnesses'
 * cosignature lines (store_cosig_get) and, for each configured [witness],
 * whether its cosignature there is valid (audit_cosig_find under its
 * configured key), its time, and the largest size it cosigned
 * (store_cosig_latest).
 *
 * Same sign-in as the approval pages (pdp_ui.c: the ig_session cookie);
 * an approver sees these pages only when one of its groups is "auditors"
 * (others get 403). Nothing here writes: every read goes through the
 * store's read connections (store_audit_view.c and the audit reads of
 * store_audit_read.c). pdp_ui_route has already set the CSP and the
 * other security headers; the pages (appr_html_audit.c) escape everything.
 */
#include "pdp_int.h"

#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "appr_html_audit.h"
#include "audit_cosig.h"
#include "ig_limits.h"
#include "ig_time.h"
#include "pdp_approval.h"
#include "pdp_ui_int.h"
#include "store_audit_view.h"

#define AUDITORS_GROUP "auditors"
#define INTENTS_PREFIX APPR_AUDIT_PATH "/intents/"

struct aui {
    struct pdp_req *r;
    const struct pdp_approver *who;
    char csrf[PDP_CSRF_LEN + 1];
    struct appr_page page;
};

/* ---- replies (pdp_ui_page.c) ---- */

static void
error_page(struct aui *u, unsigned int status, const char *title,
           const char *message)
{
    pdp_ui_error_page(u->r, u->who != NULL ? &u->page : NULL, status, title,
                      message);
}

/* ---- who is asking ---- */

static int
chars_in(const char *s, size_t max, const char *set)
{
    size_t n = s != NULL ? strlen(s) : 0;

    return n > 0 && n <= max && strspn(s, set) == n;
}

#define B64URL                                                                 \
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

/* The signed-in approver (0), or a redirect to the login page (-1). */
static int
need_session(struct aui *u)
{
    const char *id =
        MHD_lookup_connection_value(u->r->conn, MHD_COOKIE_KIND, "ig_session");
    int down = 0;

    if (id != NULL && strlen(id) == PDP_SESSION_ID_LEN &&
        strncmp(id, "igs_", 4) == 0 && chars_in(id + 4, IG_ID_MAX, B64URL))
        u->who = pdp_approver_session(u->r->srv, id, u->csrf, &down);
    if (u->who == NULL && down) {
        error_page(u, 503, "Store unavailable",
                   "Your session cannot be checked right now. Try again in "
                   "a moment.");
        return -1;
    }
    if (u->who == NULL) {
        pdp_ui_redirect(u->r, "/ui/login");
        return -1;
    }
    u->page.approver_id = u->who->id;
    u->page.approver_name = u->who->name;
    u->page.csrf = u->csrf;
    u->page.auditor = 1;
    return 0;
}

/* Signed in as an auditor (0); else replied (-1). */
static int
need_auditor(struct aui *u)
{
    if (need_session(u) != 0)
        return -1;
    if (pdp_approver_in_group(u->who, AUDITORS_GROUP))
        return 0;
    error_page(u, 403, "Not an auditor",
               "The audit log is shown to members of the auditors group "
               "only.");
    return -1;
}

/* ---- query arguments ---- */

static const char *
arg(struct aui *u, const char *name)
{
    const char *v =
        MHD_lookup_connection_value(u->r->conn, MHD_GET_ARGUMENT_KIND, name);

    return v != NULL && v[0] != '\0' ? v : NULL;
}

/* A decimal count argument: 0 when absent, -1 when malformed. */
static int
arg_count(struct aui *u, const char *name, int64_t *out)
{
    const char *v = arg(u, name);
    char *end;
    long long n;

    *out = 0;
    if (v == NULL)
        return 0;
    errno = 0;
    n = strtoll(v, &end, 10);
    if (errno != 0 || *end != '\0' || n < 0 || v[0] < '0' || v[0] > '9')
        return -1;
    *out = (int64_t)n;
    return 0;
}

/* ---- the pages ---- */

/* One configured witness's view of the latest checkpoint (full: its note
   with the cosignature lines, NULL when none) as an object for the page. */
static json_t *
witness_view(struct aui *u, const struct pdp_witness_cfg *w, const char *full)
{
    char kid[9], when[IG_TIME_STRLEN + 1];
    const char *state = "missing";
    uint64_t ts = 0, last = 0;
    struct ig_err e;
    enum ig_status st = IG_ERR_NOTFOUND;

    if (full != NULL)
        st = audit_cosig_find(full, strlen(full), &w->key, &ts, &e);
    if (st == IG_OK)
        state = "cosigned";
    else if (st != IG_ERR_NOTFOUND)
        state = "invalid";
    if (store_cosig_latest(u->r->srv->store, w->key.name, &last) != IG_OK)
        last = 0;
    (void)snprintf(kid, sizeof(kid), "%08x", (unsigned)w->key.key_id);
    if (st != IG_OK || ts > (uint64_t)INT64_MAX ||
        ig_time_format((int64_t)ts, when) != IG_OK)
        when[0] = '\0';
    /* "s*" skips an absent time. */
    return json_pack("{s:s, s:s, s:s, s:s, s:s*, s:I}", "id", w->id, "name",
                     w->key.name, "key_id", kid, "state", state, "time",
                     when[0] != '\0' ? when : NULL, "last_size",
                     (json_int_t)last);
}

/* view.witnesses: each configured witness on the latest checkpoint. */
static enum ig_status
add_witnesses(struct aui *u, json_t *view, const char *full)
{
    const struct pdp_config *cfg = u->r->srv->cfg;
    json_t *ws;
    size_t i;

    if (cfg->nwitnesses == 0)
        return IG_OK;
    /* set_new steals ws: the view holds it. */
    if ((ws = json_array()) == NULL ||
        json_object_set_new(view, "witnesses", ws) != 0)
        return IG_ERR_NOMEM;
    for (i = 0; i < cfg->nwitnesses; i++)
        if (json_array_append_new(
                ws, witness_view(u, &cfg->witnesses[i], full)) != 0)
            return IG_ERR_NOMEM;
    return IG_OK;
}

/* The note with the cosignature lines of its checkpoint appended (the
   lines stay "" when the store has none). *full malloc'd. */
static enum ig_status
with_cosignatures(struct aui *u, const char *note, uint64_t size, char **full)
{
    char *lines = NULL;
    size_t n, m;
    enum ig_status st;

    *full = NULL;
    st = store_cosig_get(u->r->srv->store, size, &lines);
    if (st == IG_ERR_NOTFOUND) {
        st = IG_OK;
        lines = NULL;
    }
    if (st != IG_OK)
        return st;
    n = strlen(note);
    m = lines != NULL ? strlen(lines) : 0;
    if ((*full = malloc(n + m + 1)) == NULL) {
        free(lines);
        return IG_ERR_NOMEM;
    }
    memcpy(*full, note, n);
    if (m > 0)
        memcpy(*full + n, lines, m);
    (*full)[n + m] = '\0';
    free(lines);
    return IG_OK;
}

/* view.checkpoint (with its cosignature lines), view.checkpoint_size,
   view.log_size and view.witnesses. */
static enum ig_status
add_head(struct aui *u, json_t *view)
{
    char *note = NULL, *full = NULL;
    uint64_t size = 0;
    int64_t n = 0;
    json_t *head = NULL;
    enum ig_status st;

    if ((st = store_audit_size(u->r->srv->store, &n)) != IG_OK)
        return st;
    st = store_checkpoint_get(u->r->srv->store, 0, &note, &size);
    if (st == IG_ERR_NOTFOUND)
        st = IG_OK;
    if (st == IG_OK && note != NULL)
        st = with_cosignatures(u, note, size, &full);
    /* "s*" skips a NULL note. */
    if (st == IG_OK &&
        ((head = json_pack("{s:I, s:s*, s:I}", "log_size", (json_int_t)n,
                           "checkpoint", full, "checkpoint_size",
                           (json_int_t)size)) == NULL ||
         json_object_update(view, head) != 0))
        st = IG_ERR_NOMEM;
    if (st == IG_OK)
        st = add_witnesses(u, view, full);
    json_decref(head);
    free(full);
    free(note);
    return st;
}

static void
events_get(struct aui *u)
{
    const char *type = arg(u, "type"), *intent = arg(u, "intent");
    json_t *view = NULL, *events = NULL;
    int64_t before, older = 0;
    struct ig_buf b;
    enum ig_status st;

    if ((type != NULL && !chars_in(type, IG_ID_MAX,
                                   "abcdefghijklmnopqrstuvwxyz"
                                   "0123456789._")) ||
        (intent != NULL && !chars_in(intent, IG_ID_MAX, B64URL)) ||
        arg_count(u, "before", &before) != 0) {
        error_page(u, 400, "Bad filter",
                   "A type is lowercase letters, digits, dots and "
                   "underscores; an intent id letters, digits, - and _.");
        return;
    }
    st = store_audit_events(u->r->srv->store, before, IG_AUDIT_UI_PAGE, type,
                            intent, &events, &older);
    /* "o" steals events; "s*" skips NULL filters. */
    if (st == IG_OK &&
        (view = json_pack("{s:o, s:s*, s:s*}", "events", events, "type", type,
                          "intent_id", intent)) == NULL)
        st = IG_ERR_NOMEM;
    if (st == IG_OK && older > 0 &&
        json_object_set_new(view, "older", json_integer(older)) != 0)
        st = IG_ERR_NOMEM;
    if (st == IG_OK)
        st = add_head(u, view);
    if (st != IG_OK) {
        json_decref(view);
        error_page(u, 503, "Store unavailable",
                   "The audit log cannot be read right now.");
        return;
    }
    ig_buf_init(&b, APPR_HTML_MAX_BYTES);
    st = appr_html_audit_events(&b, &u->page, view);
    json_decref(view);
    pdp_ui_html_reply(u->r, 200, &b, st);
}

static void
intent_get(struct aui *u, const char *id)
{
    json_t *events = NULL, *view;
    struct ig_buf b;
    enum ig_status st;

    if (!chars_in(id, IG_ID_MAX, B64URL)) {
        error_page(u, 404, "Not found", "There is no such intent.");
        return;
    }
    st = store_audit_intent_events(u->r->srv->store, id, &events);
    if (st != IG_OK) {
        error_page(u, st == IG_ERR_LIMIT ? 413 : 503, "Cannot show it",
                   st == IG_ERR_LIMIT
                       ? "This intent has too many events for a page; use "
                         "`intentgate audit show`."
                       : "The audit log cannot be read right now.");
        return;
    }
    if (json_array_size(events) == 0) {
        json_decref(events);
        error_page(u, 404, "Not found",
                   "The audit log holds no event of "
                   "this intent.");
        return;
    }
    /* "o" steals events. */
    view = json_pack("{s:s, s:o}", "intent_id", id, "events", events);
    ig_buf_init(&b, APPR_HTML_MAX_BYTES);
    st = view != NULL ? appr_html_audit_intent(&b, &u->page, view)
                      : IG_ERR_NOMEM;
    json_decref(view);
    pdp_ui_html_reply(u->r, 200, &b, st);
}

/* ?end=N into *end (0 when absent); a 400 page and -1 when malformed. */
static int
arg_end(struct aui *u, int64_t *end)
{
    if (arg_count(u, "end", end) == 0)
        return 0;
    error_page(u, 400, "Bad range", "end must be a number of events.");
    return -1;
}

/* Reply b as a download named intentgate-<what>-<n>.jsonl, or, when st
   says the read failed, the error page (status, message). Releases b. */
static void
download(struct aui *u, struct ig_buf *b, enum ig_status st, const char *what,
         unsigned long long n, unsigned int status, const char *message)
{
    char disp[128];

    if (st != IG_OK) {
        ig_buf_release(b);
        error_page(u, status, "Cannot export", message);
        return;
    }
    (void)snprintf(disp, sizeof(disp),
                   "attachment; filename=\"intentgate-%s-%llu.jsonl\"", what,
                   n);
    (void)pdp_reply_header(u->r, "Content-Disposition", disp);
    pdp_reply_text(u->r, 200, b->data != NULL ? b->data : "", b->len,
                   "application/x-ndjson");
    ig_buf_release(b);
}

static void
export_get(struct aui *u)
{
    uint64_t size = 0, count = 0, want;
    int64_t end;
    struct ig_buf b;
    enum ig_status st;

    if (arg_end(u, &end) != 0)
        return;
    ig_buf_init(&b, IG_AUDIT_UI_EXPORT_MAX_BYTES + 2 * IG_CANON_MAX_BYTES);
    st = store_audit_leaves(u->r->srv->store, 0,
                            end > 0 ? (uint64_t)end : UINT64_MAX,
                            IG_AUDIT_UI_EXPORT_MAX_BYTES, &b, &size, &count);
    want = end > 0 && (uint64_t)end < size ? (uint64_t)end : size;
    if (st == IG_OK && count < want)
        st = IG_ERR_LIMIT;
    download(u, &b, st, "audit", (unsigned long long)count,
             st == IG_ERR_LIMIT ? 413 : 503,
             st == IG_ERR_LIMIT
                 ? "The log is too large for a download from this page; use "
                   "`intentgate audit export`."
                 : "The audit log cannot be read right now.");
}

static void
checkpoints_get(struct aui *u)
{
    int64_t end;
    struct ig_buf b;
    enum ig_status st;

    if (arg_end(u, &end) != 0)
        return;
    ig_buf_init(&b, IG_AUDIT_UI_EXPORT_MAX_BYTES);
    st = store_audit_checkpoints(u->r->srv->store, (uint64_t)end, &b);
    download(u, &b, st, "checkpoints", (unsigned long long)end, 503,
             "The checkpoints cannot be read right now.");
}

/* ---- routing ---- */

void
pdp_ui_audit_route(struct pdp_req *r, const char *url, const char *method)
{
    struct aui u;
    int get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;

    memset(&u, 0, sizeof(u));
    u.r = r;
    if (need_auditor(&u) != 0)
        goto out;
    if (!get) {
        error_page(&u, 405, "Method not allowed", "These pages are read-only.");
        r->reply.allow = "GET";
    } else if (strcmp(url, APPR_AUDIT_PATH) == 0 ||
               strcmp(url, APPR_AUDIT_PATH "/") == 0) {
        events_get(&u);
    } else if (strncmp(url, INTENTS_PREFIX, strlen(INTENTS_PREFIX)) == 0) {
        intent_get(&u, url + strlen(INTENTS_PREFIX));
    } else if (strcmp(url, APPR_AUDIT_PATH "/export.jsonl") == 0) {
        export_get(&u);
    } else if (strcmp(url, APPR_AUDIT_PATH "/checkpoints.jsonl") == 0) {
        checkpoints_get(&u);
    } else {
        error_page(&u, 404, "Not found", "There is no such page.");
    }
out:
    sodium_memzero(u.csrf, sizeof(u.csrf));
}
