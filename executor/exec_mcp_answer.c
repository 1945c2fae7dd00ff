/*
 * exec_mcp_answer.c - a gateway request's answer (see exec_mcp_int.h):
 * one JSON body with its status, or an event stream the worker appends
 * to while the connection streams it, and the request's reference count.
 * Below both the HTTP side (exec_mcp.c) and the methods (exec_mcp_gate.c,
 * exec_mcp_call.c): it calls neither.
 */
#include "exec_mcp_int.h"

#include <sodium.h>
#include <stdlib.h>

#include "ig_sse.h"

void
exec_mcp_req_unref(struct exec_mcp_req *q)
{
    int last;

    pthread_mutex_lock(&q->mu);
    last = --q->refs == 0;
    pthread_mutex_unlock(&q->mu);
    if (!last)
        return;
    if (q->token != NULL)
        sodium_free(q->token);
    ig_buf_release(&q->body);
    ig_buf_release(&q->out);
    json_decref(q->client_caps);
    pthread_mutex_destroy(&q->mu);
    free(q);
}

/* ---- the answer ---- */

void
exec_mcp_wake_locked(struct exec_mcp_req *q)
{
    if (q->parked) {
        q->parked = 0;
        MHD_resume_connection(q->conn);
    }
}

void
exec_mcp_answer_json(struct exec_mcp_req *q, unsigned int status,
                     const char *text, size_t len)
{
    pthread_mutex_lock(&q->mu);
    if (!q->streaming) {
        q->status = status;
        ig_buf_reset(&q->out);
        if (len > 0 && ig_buf_add(&q->out, text, len) != IG_OK)
            q->status = 500;
    }
    pthread_mutex_unlock(&q->mu);
}

void
exec_mcp_stream_start(struct exec_mcp_req *q)
{
    pthread_mutex_lock(&q->mu);
    if (!q->streaming) {
        q->streaming = 1;
        q->status = 200;
        ig_buf_reset(&q->out);
        exec_mcp_wake_locked(q);
    }
    pthread_mutex_unlock(&q->mu);
}

void
exec_mcp_stream_send(struct exec_mcp_req *q, const struct ig_buf *msg)
{
    pthread_mutex_lock(&q->mu);
    if (q->streaming && !q->finished && !q->overflow) {
        /* A stream that cannot take the message ends broken: the client
           must not read a stream without its answer as complete. */
        if (ig_sse_write(&q->out, "message", NULL, msg->data, msg->len) !=
            IG_OK)
            q->overflow = 1;
        exec_mcp_wake_locked(q);
    }
    pthread_mutex_unlock(&q->mu);
}

/* One message as the answer: the body, or an event on the stream. */
static void
answer_message(struct exec_mcp_req *q, unsigned int status,
               const struct ig_buf *b)
{
    int streaming;

    pthread_mutex_lock(&q->mu);
    streaming = q->streaming;
    pthread_mutex_unlock(&q->mu);
    if (streaming)
        exec_mcp_stream_send(q, b);
    else
        exec_mcp_answer_json(q, status, b->data, b->len);
}

void
exec_mcp_result(struct exec_mcp_req *q, const json_t *id, const json_t *result)
{
    struct ig_buf b;

    ig_buf_init(&b, (size_t)IG_EXEC_MCP_REPLY_MAX_BYTES * 2);
    if (exec_mcp_write_result(&b, id, result) != IG_OK) {
        ig_buf_release(&b);
        exec_mcp_error(q, 500, id, EXEC_MCP_INTERNAL_ERROR,
                       "the answer could not be written", NULL);
        return;
    }
    answer_message(q, 200, &b);
    ig_buf_release(&b);
}

void
exec_mcp_error(struct exec_mcp_req *q, unsigned int http_status,
               const json_t *id, int code, const char *message,
               const json_t *data)
{
    struct ig_buf b;

    ig_buf_init(&b, 65536);
    if (exec_mcp_write_error(&b, id, code, message, data) != IG_OK)
        exec_mcp_answer_json(q, 500, "", 0);
    else
        answer_message(q, http_status, &b);
    ig_buf_release(&b);
}
