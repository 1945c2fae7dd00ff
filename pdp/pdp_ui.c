/* pdp_ui.c - placeholder while it is written; replaced before commit. */
#include "pdp_int.h"

void
pdp_ui_route(struct pdp_req *r, const char *url, const char *method)
{
    (void)method;
    pdp_reply_error(r, 404, "NOT_FOUND", NULL, "no such path: %s", url);
}
