/*
 * pdp_ui.c - the approval web pages under /ui: an approver signs in,
 * sees the requests waiting for their groups, reads one and votes.
 *
 *   GET  /ui, /ui/                 -> 303 /ui/approvals
 *   GET  /ui/static/style.css      the stylesheet
 *   GET  /ui/login, POST /ui/login sign in (session cookie ig_session,
 *                                  device cookie ig_device)
 *   POST /ui/logout                sign out
 *   GET  /ui/approvals             the pending list
 *   GET  /ui/approvals/{id}        one request, with the vote form
 *   POST /ui/approvals/{id}/vote   approve or deny (channel "web")
 *   GET  /ui/audit...              the auditors' pages (pdp_ui_audit.c)
 *
 * The rules live in pdp_approval.c and pdp_login.c; this file is the
 * browser's side of them: cookies, forms, CSRF and HTML. A page without a
 * live session redirects to the login page. Every POST is a strict
 * urlencoded form (appr_form.c) carrying a CSRF token: the login form's is
 * a double-submit cookie (ig_login_csrf, random, compared in constant
 * time), every other form's is the session's own token. Cookies are
 * HttpOnly, SameSite=Strict, Path=/ui, and Secure when secure_cookies is
 * set. Every reply carries a CSP that allows no script and no inline
 * style, and refuses framing; the pages (appr_html.c) escape everything
 * they show.
 */
#include "pdp_int.h"

#include <sodium.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "appr_form.h"
#include "appr_html.h"
#include "ig_b64.h"
#include "ig_limits.h"
#include "pdp_approval.h"
#include "pdp_ui_int.h"

#define UI_CSP                                                                 \
    "default-src 'none'; style-src 'self'; img-src 'self'; "                   \
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
#define SESSION_COOKIE "ig_session"
#define DEVICE_COOKIE "ig_device" /* the device token (pdp_login.c) */
#define LOGIN_COOKIE "ig_login_csrf"
#define LOGIN_CSRF_BYTES 32
#define LOGIN_CSRF_LEN IG_B64_ENCODED_LEN(LOGIN_CSRF_BYTES) /* 43 */

/* One /ui request: who is signed in, if anyone. */
struct ui {
    struct pdp_req *r;
    const struct pdp_approver *who; /* NULL: nobody */
    char session[PDP_SESSION_ID_LEN + 1];
    char csrf[PDP_CSRF_LEN + 1]; /* the session's token */
    struct appr_page page;
    int store_down; /* the session could not be checked (session_of) */
};

/* ---- replies ---- */

static void
error_page(struct ui *u, unsigned int status, const char *title,
           const char *message)
{
    pdp_ui_error_page(u->r, u->who != NULL ? &u->page : NULL, status, title,
                      message);
}

/* Set-Cookie name=value with our attributes; max_age 0 clears it. */
static void
set_cookie(struct pdp_req *r, const char *name, const char *value,
           long long max_age)
{
    char c[256];
    int n = snprintf(c, sizeof(c),
                     "%s=%s; Path=/ui; HttpOnly; SameSite=Strict; "
                     "Max-Age=%lld%s",
                     name, value, max_age,
                     r->srv->cfg->secure_cookies ? "; Secure" : "");

    if (n > 0 && (size_t)n < sizeof(c))
        (void)pdp_reply_header(r, "Set-Cookie", c);
}

/* ---- sessions and tokens ---- */

/* 1 when s is exactly len base64url characters after prefix. */
static int
token_shaped(const char *s, const char *prefix, size_t len)
{
    size_t pl = strlen(prefix), i;

    if (s == NULL || strlen(s) != len || strncmp(s, prefix, pl) != 0)
        return 0;
    for (i = pl; i < len; i++)
        if (strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                   "0123456789-_",
                   s[i]) == NULL)
            return 0;
    return 1;
}

static const char *
cookie(struct pdp_req *r, const char *name)
{
    return MHD_lookup_connection_value(r->conn, MHD_COOKIE_KIND, name);
}

/* Look up the session cookie; 1 when someone is signed in. */
static int
session_of(struct ui *u)
{
    const char *id = cookie(u->r, SESSION_COOKIE);

    if (!token_shaped(id, "igs_", PDP_SESSION_ID_LEN))
        return 0;
    u->who = pdp_approver_session(u->r->srv, id, u->csrf, &u->store_down);
    if (u->who == NULL)
        return 0;
    (void)snprintf(u->session, sizeof(u->session), "%s", id);
    u->page.approver_id = u->who->id;
    u->page.approver_name = u->who->name;
    u->page.csrf = u->csrf;
    u->page.auditor = pdp_approver_in_group(u->who, "auditors");
    return 1;
}

/* Signed in, or redirected to the login page (-1). */
static int
need_session(struct ui *u)
{
    if (session_of(u))
        return 0;
    if (u->store_down) /* not "sign in again": the store is down */
        error_page(u, 503, "Store unavailable",
                   "Your session cannot be checked right now. Try again in "
                   "a moment.");
    else
        pdp_ui_redirect(u->r, "/ui/login");
    return -1;
}

/* 1 when the form's csrf field equals want (constant time). */
static int
csrf_ok(const struct appr_form *f, const char *want)
{
    size_t n;
    const char *got = appr_form_get(f, "csrf", &n);

    return got != NULL && want != NULL && n > 0 && n == strlen(want) &&
           sodium_memcmp(got, want, n) == 0;
}

/* The POST body as a form, or NULL after replying (415, 413, 400). */
static struct appr_form *
read_form(struct ui *u)
{
    static const char type[] = "application/x-www-form-urlencoded";
    const char *ct = MHD_lookup_connection_value(u->r->conn, MHD_HEADER_KIND,
                                                 MHD_HTTP_HEADER_CONTENT_TYPE);
    struct appr_form *f;
    struct ig_err err;
    enum ig_status st;

    if (ct == NULL || strncasecmp(ct, type, sizeof(type) - 1) != 0 ||
        (ct[sizeof(type) - 1] != '\0' && ct[sizeof(type) - 1] != ';')) {
        error_page(u, 415, "Unsupported form",
                   "Send the form as application/x-www-form-urlencoded.");
        return NULL;
    }
    st = appr_form_parse(u->r->body.data, u->r->body.len, &f, &err);
    if (st == IG_ERR_LIMIT)
        error_page(u, 413, "Form too large", err.msg);
    else if (st != IG_OK)
        error_page(u, st == IG_ERR_NOMEM ? 500 : 400, "Malformed form",
                   err.msg);
    return f;
}

/* ---- sign in, sign out ---- */

static void
login_page(struct ui *u, unsigned int status, const char *token, int set_token,
           const char *error, const char *approver)
{
    struct ig_buf b;
    enum ig_status st;

    if (set_token)
        set_cookie(u->r, LOGIN_COOKIE, token, IG_LOGIN_CSRF_MAX_AGE);
    ig_buf_init(&b, APPR_HTML_MAX_BYTES);
    st = appr_html_login(&b, token, error, approver);
    pdp_ui_html_reply(u->r, status, &b, st);
}

static void
new_login_token(char out[LOGIN_CSRF_LEN + 1])
{
    unsigned char raw[LOGIN_CSRF_BYTES];

    randombytes_buf(raw, sizeof(raw));
    (void)ig_b64_encode(raw, sizeof(raw), out, LOGIN_CSRF_LEN + 1);
    sodium_memzero(raw, sizeof(raw));
}

static void
login_get(struct ui *u)
{
    const char *have = cookie(u->r, LOGIN_COOKIE);
    char token[LOGIN_CSRF_LEN + 1];

    if (session_of(u)) {
        pdp_ui_redirect(u->r, "/ui/approvals");
        return;
    }
    /* Keep a token already set (another tab's form stays valid). */
    if (token_shaped(have, "", LOGIN_CSRF_LEN))
        (void)snprintf(token, sizeof(token), "%s", have);
    else
        new_login_token(token);
    login_page(u, 200, token, 1, NULL, NULL);
}

static const char *
login_error(const struct pdp_login *in)
{
    if (in->http_status == 429)
        return "Too many failed sign-ins. Wait a few minutes, then try "
               "again.";
    if (in->http_status == 401)
        return "That approver id and password do not match.";
    return "Signing in is not possible right now. Try again later.";
}

/* The page after a login (pdp_login.c calls it, perhaps after a delay):
   the session and device cookies and the list, or the form again. */
static void
login_done(struct pdp_req *r, const struct pdp_login *in)
{
    struct ui u;

    memset(&u, 0, sizeof(u));
    u.r = r;
    if (in->code != NULL) {
        pdp_login_retry_after(r, in);
        login_page(&u, in->http_status, cookie(r, LOGIN_COOKIE), 0,
                   login_error(in), in->id);
        return;
    }
    /* A session this browser had before ends now. */
    if (session_of(&u))
        pdp_approver_logout(r->srv, u.session);
    set_cookie(r, SESSION_COOKIE, in->session,
               (long long)r->srv->cfg->session_max);
    set_cookie(r, DEVICE_COOKIE, in->device, (long long)IG_LOGIN_DEVICE_TTL);
    pdp_ui_redirect(r, "/ui/approvals");
}

static void
login_post(struct ui *u)
{
    const char *have = cookie(u->r, LOGIN_COOKIE), *id, *pw;
    struct appr_form *f = read_form(u);
    char token[LOGIN_CSRF_LEN + 1];

    /* The raw body holds the password too: the form has it now. */
    if (u->r->body.data != NULL)
        sodium_memzero(u->r->body.data, u->r->body.len);
    if (f == NULL)
        return;
    if (!token_shaped(have, "", LOGIN_CSRF_LEN) || !csrf_ok(f, have)) {
        new_login_token(token);
        login_page(u, 403, token, 1,
                   "Your sign-in form had expired. Please try again.", NULL);
    } else {
        id = appr_form_get(f, "approver", NULL);
        pw = appr_form_get(f, "password", NULL);
        if (id == NULL || pw == NULL || id[0] == '\0' || pw[0] == '\0')
            login_page(u, 400, have, 0, "Enter your approver id and password.",
                       id);
        else /* the login copies id and password */
            pdp_approver_login(u->r, id, pw, cookie(u->r, DEVICE_COOKIE),
                               login_done);
    }
    appr_form_free(f);
}

static void
logout_post(struct ui *u)
{
    struct appr_form *f;

    if (!session_of(u)) {
        set_cookie(u->r, SESSION_COOKIE, "", 0);
        pdp_ui_redirect(u->r, "/ui/login");
        return;
    }
    if ((f = read_form(u)) == NULL)
        return;
    if (!csrf_ok(f, u->csrf)) {
        error_page(u, 403, "Request refused",
                   "The form did not carry your session's token. Reload the "
                   "page and try again.");
    } else {
        pdp_approver_logout(u->r->srv, u->session);
        set_cookie(u->r, SESSION_COOKIE, "", 0);
        pdp_ui_redirect(u->r, "/ui/login");
    }
    appr_form_free(f);
}

/* ---- the pages ---- */

static void
root_get(struct ui *u)
{
    pdp_ui_redirect(u->r, "/ui/approvals");
}

static void
css_get(struct ui *u)
{
    size_t n;
    const char *css = appr_html_css(&n);

    pdp_reply_text(u->r, 200, css, n, "text/css; charset=utf-8");
}

static void
list_get(struct ui *u)
{
    json_t *list = NULL;
    struct ig_buf b;
    enum ig_status st;

    if (need_session(u) != 0)
        return;
    if (pdp_approval_list(u->r->srv, u->who, &list) != IG_OK) {
        error_page(u, 503, "Store unavailable",
                   "The pending requests cannot be read right now.");
        return;
    }
    ig_buf_init(&b, APPR_HTML_MAX_BYTES);
    st = appr_html_list(&b, &u->page, list);
    json_decref(list);
    pdp_ui_html_reply(u->r, 200, &b, st);
}

/* The flash line after a vote: what this approver's recorded vote was. */
static const char *
vote_flash(const struct ui *u, const json_t *view)
{
    const json_t *votes = json_object_get(view, "votes"), *v;
    const char *vote, *who;
    size_t i;

    json_array_foreach(votes, i, v)
    {
        who = json_string_value(json_object_get(v, "approver"));
        if (who == NULL || strcmp(who, u->who->id) != 0)
            continue;
        vote = json_string_value(json_object_get(v, "vote"));
        if (vote != NULL && strcmp(vote, "DENY") == 0)
            return "Your denial was recorded.";
        return "Your approval was recorded.";
    }
    return NULL;
}

/* The detail page of id, with status and an optional refused vote. */
static void
detail_page(struct ui *u, const char *id, unsigned int status,
            const struct pdp_vote_result *refused)
{
    const char *voted =
        MHD_lookup_connection_value(u->r->conn, MHD_GET_ARGUMENT_KIND, "voted");
    json_t *view = NULL;
    struct ig_buf b;
    enum ig_status st;

    st = pdp_approval_get(u->r->srv, id, u->who, &view);
    if (st == IG_ERR_NOTFOUND) {
        error_page(u, 404, "Not found", "There is no such approval request.");
        return;
    }
    if (st != IG_OK) {
        error_page(u, 503, "Store unavailable",
                   "This request cannot be read right now.");
        return;
    }
    pdp_approval_add_traces(u->r->srv, view);
    ig_buf_init(&b, APPR_HTML_MAX_BYTES);
    st = appr_html_detail(&b, &u->page, view,
                          refused == NULL && voted != NULL &&
                                  strcmp(voted, "1") == 0
                              ? vote_flash(u, view)
                              : NULL,
                          refused != NULL ? refused->code : NULL,
                          refused != NULL ? refused->message : NULL);
    json_decref(view);
    pdp_ui_html_reply(u->r, status, &b, st);
}

/* 1 when s can be an approval id (what the store's ids look like). */
static int
id_shaped(const char *s, size_t n)
{
    size_t i;

    if (n == 0 || n > IG_ID_MAX)
        return 0;
    for (i = 0; i < n; i++)
        if (strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                   "0123456789-_",
                   s[i]) == NULL)
            return 0;
    return 1;
}

static void
detail_get(struct ui *u, const char *id)
{
    if (need_session(u) != 0)
        return;
    detail_page(u, id, 200, NULL);
}

static void
vote_post(struct ui *u, const char *id)
{
    struct appr_form *f;
    struct pdp_vote v;
    struct pdp_vote_result res;
    const char *vote, *comment;
    char loc[128];

    if (need_session(u) != 0 || (f = read_form(u)) == NULL)
        return;
    vote = appr_form_get(f, "vote", NULL);
    comment = appr_form_get(f, "comment", NULL);
    if (!csrf_ok(f, u->csrf)) {
        error_page(u, 403, "Request refused",
                   "The form did not carry your session's token. Reload the "
                   "page and try again.");
        goto out;
    }
    if (vote == NULL ||
        (strcmp(vote, "approve") != 0 && strcmp(vote, "deny") != 0)) {
        error_page(u, 400, "Malformed vote", "Choose Approve or Deny.");
        goto out;
    }
    memset(&v, 0, sizeof(v));
    v.approval_id = id;
    v.approver = u->who;
    v.approve = strcmp(vote, "approve") == 0;
    v.intent_hash = appr_form_get(f, "intent_hash", NULL);
    v.comment = comment != NULL && comment[0] != '\0' ? comment : NULL;
    v.channel = "web";
    memset(&res, 0, sizeof(res));
    pdp_approval_vote(u->r->srv, &v, &res);
    if (res.code == NULL) {
        (void)snprintf(loc, sizeof(loc), "/ui/approvals/%s?voted=1", id);
        pdp_ui_redirect(u->r, loc);
    } else if (strcmp(res.code, "APPROVAL_NOT_FOUND") == 0) {
        error_page(u, 404, "Not found", "There is no such approval request.");
    } else {
        detail_page(u, id, res.http_status >= 400 ? res.http_status : 409,
                    &res);
    }
out:
    appr_form_free(f);
}

/* ---- routing ---- */

static void
method_not_allowed(struct ui *u, const char *allow)
{
    (void)session_of(u);
    error_page(u, 405, "Method not allowed",
               "This page does not take that kind of request.");
    u->r->reply.allow = allow;
}

static void
security_headers(struct pdp_req *r)
{
    (void)pdp_reply_header(r, "Content-Security-Policy", UI_CSP);
    (void)pdp_reply_header(r, "X-Frame-Options", "DENY");
    (void)pdp_reply_header(r, "Referrer-Policy", "no-referrer");
}

static const struct {
    const char *path, *allow;
    void (*get)(struct ui *u);
    void (*post)(struct ui *u);
} fixed[] = {
    {"/ui", "GET", root_get, NULL},
    {"/ui/", "GET", root_get, NULL},
    {"/ui/static/style.css", "GET", css_get, NULL},
    {"/ui/login", "GET, POST", login_get, login_post},
    {"/ui/logout", "POST", NULL, logout_post},
    {"/ui/approvals", "GET", list_get, NULL},
};

/* /ui/approvals/{id} and /ui/approvals/{id}/vote. */
static void
route_approval(struct ui *u, const char *rest, int get, int post)
{
    const char *slash = strchr(rest, '/');
    size_t n = slash != NULL ? (size_t)(slash - rest) : strlen(rest);
    char id[IG_ID_MAX + 1];

    if (!id_shaped(rest, n) || (slash != NULL && strcmp(slash, "/vote") != 0)) {
        (void)session_of(u);
        error_page(u, 404, "Not found", "There is no such page.");
        return;
    }
    memcpy(id, rest, n);
    id[n] = '\0';
    if (slash == NULL && get)
        detail_get(u, id);
    else if (slash != NULL && post)
        vote_post(u, id);
    else
        method_not_allowed(u, slash == NULL ? "GET" : "POST");
}

void
pdp_ui_route(struct pdp_req *r, const char *url, const char *method)
{
    struct ui u;
    int get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
    int post = strcmp(method, "POST") == 0;
    size_t i;

    memset(&u, 0, sizeof(u));
    u.r = r;
    security_headers(r);
    for (i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
        if (strcmp(url, fixed[i].path) != 0)
            continue;
        if (get && fixed[i].get != NULL)
            fixed[i].get(&u);
        else if (post && fixed[i].post != NULL)
            fixed[i].post(&u);
        else
            method_not_allowed(&u, fixed[i].allow);
        goto out;
    }
    if (strncmp(url, "/ui/approvals/", 14) == 0) {
        route_approval(&u, url + 14, get, post);
        goto out;
    }
    if (strcmp(url, "/ui/audit") == 0 || strncmp(url, "/ui/audit/", 10) == 0) {
        pdp_ui_audit_route(r, url, method);
        goto out;
    }
    (void)session_of(&u);
    error_page(&u, 404, "Not found", "There is no such page.");
out:
    sodium_memzero(u.csrf, sizeof(u.csrf));
    sodium_memzero(u.session, sizeof(u.session));
}
