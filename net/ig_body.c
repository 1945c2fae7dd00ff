/*
 * ig_body.c - a request body under a cap (see ig_body.h).
 */
#include "ig_body.h"

#include <stdlib.h>

int
ig_body_declared_over(struct MHD_Connection *c, size_t cap)
{
    const char *cl;
    char *end;
    unsigned long long n;

    cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                     MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (cl == NULL)
        return 0;
    n = strtoull(cl, &end, 10);
    return *end == '\0' && n > cap;
}

void
ig_body_take(struct ig_buf *b, int *too_large, const char *upload,
             size_t *upload_size)
{
    if (!*too_large && ig_buf_add(b, upload, *upload_size) != IG_OK)
        *too_large = 1; /* keep draining; the caller refuses at the end */
    *upload_size = 0;
}
