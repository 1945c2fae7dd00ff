/*
 * pdp_ui_page.c - the replies both web page files (pdp_ui.c and
 * pdp_ui_audit.c) send: an HTML page, an error page, a 303 redirect.
 * They live below both so that the approval pages can route to the
 * auditors' pages without either depending on the other.
 */
#include "pdp_ui_int.h"

#define UI_HTML "text/html; charset=utf-8"

void
pdp_ui_html_reply(struct pdp_req *r, unsigned int status, struct ig_buf *b,
                  enum ig_status st)
{
    static const char fail[] = "<!doctype html><title>Error</title>"
                               "<p>The page could not be built.</p>\n";

    if (st == IG_OK)
        pdp_reply_text(r, status, b->data != NULL ? b->data : "", b->len,
                       UI_HTML);
    else
        pdp_reply_text(r, 500, fail, sizeof(fail) - 1, UI_HTML);
    ig_buf_release(b);
}

void
pdp_ui_error_page(struct pdp_req *r, const struct appr_page *page,
                  unsigned int status, const char *title, const char *message)
{
    struct ig_buf b;
    enum ig_status st;

    ig_buf_init(&b, APPR_HTML_MAX_BYTES);
    st = appr_html_error(&b, page, status, title, message);
    pdp_ui_html_reply(r, status, &b, st);
}

void
pdp_ui_redirect(struct pdp_req *r, const char *location)
{
    static const char body[] = "<!doctype html><title>Redirect</title>"
                               "<p>Continue <a href=\"/ui/\">here</a>.</p>\n";

    if (pdp_reply_header(r, "Location", location) != 0) {
        pdp_reply_text(r, 500, body, 0, UI_HTML);
        return;
    }
    pdp_reply_text(r, 303, body, sizeof(body) - 1, UI_HTML);
}
