/*
 * exec_stream.h - streaming executions (NDJSON), see exec_stream.c.
 */
#ifndef EXEC_STREAM_H
#define EXEC_STREAM_H

#include <microhttpd.h>

#include "exec_execute.h"

/* Answer c for body: a JSON error, or a 200 NDJSON stream. */
enum MHD_Result exec_stream_execute(
    struct exec_ctx *x, struct MHD_Connection *c, json_t *body,
    enum MHD_Result (*send_json)(struct MHD_Connection *c, unsigned int status,
                                 json_t *v));

#endif
