/*
 * ig_body.h - taking in a request body in a libmicrohttpd server (the
 * PDP's and the executor's) under a cap, one way for both.
 *
 * A request whose Content-Length declares more than the cap is refused
 * before a byte of its body is read. A body that grows past the cap
 * anyway (chunked, or a lying header) is read to its end and dropped, and
 * the request is refused when it is complete: the connection stays in a
 * state libmicrohttpd can answer on.
 */
#ifndef IG_BODY_H
#define IG_BODY_H

#include <microhttpd.h>
#include <stddef.h>

#include "ig_buf.h"

/* 1 when c's Content-Length header declares more than cap bytes (answer
   413 at once); 0 without the header or with one that is not a plain
   number (the capped read decides then). Thread safe. */
int ig_body_declared_over(struct MHD_Connection *c, size_t cap);

/* Take one chunk of upload data (MHD's upload_data, *upload_size bytes)
   into b, whose cap is the body's. Past the cap *too_large is set and this
   chunk and every later one are dropped. All is consumed: *upload_size
   becomes 0. */
void ig_body_take(struct ig_buf *b, int *too_large, const char *upload,
                  size_t *upload_size);

#endif
