/*
 * pdp_ui_int.h - what the web pages (pdp_ui.c, pdp_ui_audit.c) share,
 * defined in pdp_ui_page.c: the HTML reply, the error page and the 303
 * redirect. Each /ui reply also carries the pages' security headers,
 * added by the caller.
 */
#ifndef PDP_UI_INT_H
#define PDP_UI_INT_H

#include "appr_html.h"
#include "pdp_int.h"

/* Reply b's HTML with status (a fixed 500 page when st is not IG_OK);
   releases b. */
void pdp_ui_html_reply(struct pdp_req *r, unsigned int status, struct ig_buf *b,
                       enum ig_status st);

/* An error page; page NULL when nobody is signed in. */
void pdp_ui_error_page(struct pdp_req *r, const struct appr_page *page,
                       unsigned int status, const char *title,
                       const char *message);

/* 303 See Other to location. */
void pdp_ui_redirect(struct pdp_req *r, const char *location);

#endif
