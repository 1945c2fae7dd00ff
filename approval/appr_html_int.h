/*
 * appr_html_int.h - private to the HTML renderers (appr_html.c,
 * appr_html_pages.c): a writer with a sticky status, so a page is a
 * straight list of appends checked once at the end, and the layout.
 */
#ifndef APPR_HTML_INT_H
#define APPR_HTML_INT_H

#include "appr_html.h"

/* Appends to b until one fails; then st keeps the first failure and the
   rest are no-ops. */
struct appr_w {
    struct ig_buf *b;
    enum ig_status st;
};

/* Trusted markup, written as is. */
void appr_w_raw(struct appr_w *w, const char *s);
/* Escaped text (NULL writes nothing). */
void appr_w_esc(struct appr_w *w, const char *s);
/* A JSON string (json_string_length bytes) or number as escaped text with
   invisible characters shown; anything else, or NULL, writes dash. */
void appr_w_value(struct appr_w *w, const json_t *v);
/* The same with newlines and tabs kept (a comment). */
void appr_w_lines(struct appr_w *w, const json_t *v);
/* v pretty-printed and escaped. */
void appr_w_json(struct appr_w *w, const json_t *v);
/* A path segment: percent-encoded (RFC 3986 unreserved kept), then
   escaped for an attribute. */
void appr_w_segment(struct appr_w *w, const char *s);

/* <!doctype> to <main>: title (escaped) and the header with p's approver
   and a logout form (p or p->approver_id NULL: no header user). */
void appr_w_begin(struct appr_w *w, const struct appr_page *p,
                  const char *title);
/* </main> to the end. */
void appr_w_end(struct appr_w *w);

/* The string member k of o, or NULL. */
const char *appr_json_str(const json_t *o, const char *k);

#endif
