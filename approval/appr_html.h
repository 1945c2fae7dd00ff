/*
 * appr_html.h - the approval web pages as HTML text: escaping, and one
 * renderer per page (login, pending list, one approval, error) around a
 * common layout. Pure functions of their arguments: no I/O, no session or
 * request state, so each page is tested from a hand-built view.
 *
 * Every text that comes from a view (an agent's params, context, resource,
 * a comment...) is untrusted: it is escaped (& < > " ') before it is
 * written, in text and in attribute values alike, and invisible or
 * direction-changing characters (bidi overrides, zero-width spaces) are
 * shown as [U+XXXX] so an approver sees what the agent really sent. JSON is
 * pretty-printed (2-space indent, sorted keys, numbers as RFC 8785 writes
 * them, those characters as \uXXXX escapes) and then escaped. The pages
 * carry no script and no inline style, for a Content-Security-Policy of
 * default-src 'none'; the stylesheet, appr_html_css(), is served from
 * APPR_CSS_PATH.
 *
 * Renderers append to a caller's ig_buf (whose cap bounds the page) and
 * return IG_OK, IG_ERR_LIMIT or IG_ERR_NOMEM; on failure the buffer holds
 * a partial page the caller discards. Thread safe.
 */
#ifndef APPR_HTML_H
#define APPR_HTML_H

#include <jansson.h>
#include <stddef.h>

#include "ig_buf.h"
#include "ig_error.h"
#include "ig_limits.h"

/* Largest page rendered: escaping may make a 1 MiB intent six times as
   long. */
#define APPR_HTML_MAX_BYTES IG_HTML_MAX_BYTES
/* Where the pages link the stylesheet. */
#define APPR_CSS_PATH "/ui/static/style.css"

/* The stylesheet (approval/static/style.css, compiled in): static text,
   NUL-terminated; *len (when not NULL) gets its length. */
const char *appr_html_css(size_t *len);

/* Escape n bytes of s for HTML text or a quoted attribute value. */
enum ig_status appr_html_escape(struct ig_buf *b, const char *s,
                                size_t n) IG_WUR;

/* The same for a NUL-terminated string; NULL writes nothing. */
enum ig_status appr_html_escape_str(struct ig_buf *b, const char *s) IG_WUR;

/* Escape, and show invisible and bidi control characters as [U+XXXX]:
   for identifiers an approver must read right (resource, action). */
enum ig_status appr_html_text(struct ig_buf *b, const char *s, size_t n) IG_WUR;

/* v pretty-printed as JSON, then escaped. NULL writes "null".
   IG_ERR_INVALID for a value with no JSON text (NaN). */
enum ig_status appr_html_json(struct ig_buf *b, const json_t *v) IG_WUR;

/* Who is looking at a page, for the layout's header; all NULL when
   nobody is logged in (no name, no logout form). */
struct appr_page {
    const char *approver_id;
    const char *approver_name; /* NULL: the id is shown */
    const char *csrf;          /* the session's token, for POST forms */
    int auditor;               /* 1: link the audit pages in the header */
};

/*
 * The login page. csrf: the login form's double-submit token (required).
 * error: NULL, or a line shown in #error. approver: NULL or the id to
 * fill in again after a failure.
 */
enum ig_status appr_html_login(struct ig_buf *b, const char *csrf,
                               const char *error, const char *approver) IG_WUR;

/* The pending list: list is pdp_approval_list()'s array. */
enum ig_status appr_html_list(struct ig_buf *b, const struct appr_page *p,
                              const json_t *list) IG_WUR;

/*
 * One approval: view is pdp_approval_get()'s object. flash: NULL or a
 * line shown in #flash (a recorded vote). error_code/error_message: NULL,
 * or a refused vote shown in #error. The vote form (when view's can_vote
 * is true) posts p->csrf and the intent_hash shown.
 */
enum ig_status appr_html_detail(struct ig_buf *b, const struct appr_page *p,
                                const json_t *view, const char *flash,
                                const char *error_code,
                                const char *error_message) IG_WUR;

/* An error page: status (404, 403...), a title and one line in #error.
   p may be NULL. */
enum ig_status appr_html_error(struct ig_buf *b, const struct appr_page *p,
                               unsigned int status, const char *title,
                               const char *message) IG_WUR;

/* The text a cannot_vote code explains to an approver ("You have already
   voted on this request."); a generic line for an unknown code. */
const char *appr_html_cannot_vote_text(const char *code);

#endif
