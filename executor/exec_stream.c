/*
 * exec_stream.c - POST /v1/execute with Accept: application/x-ndjson: the
 * reply streams one JSON object per line as the action runs,
 *   {"stream":"stdout","data":"…"}   (or "data_b64url" when not UTF-8)
 * and ends with the same object a plain request receives (outcome, result,
 * outcome_recorded).
 *
 * The checks and the redemption run first, in the request's thread, so a
 * refusal is still a plain JSON error. Then a worker thread runs the
 * handler and reports the outcome, pushing lines into a capped buffer; the
 * libmicrohttpd content reader (allowed to block in thread-per-connection
 * mode) hands them to the client as they come.
 */
#include "exec_stream.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ig_b64.h"
#include "ig_buf.h"
#include "ig_canon.h"
#include "ig_limits.h"

#define PENDING_MAX (1024 * 1024)

struct stream {
    struct exec_ctx *x;
    json_t *body;
    const struct exec_action *act;
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct ig_buf pending;
    int done, dropped;
};

/* Append one line; when the client lags past the cap, later output
   lines are dropped (the final line always fits: it is pushed with
   room reserved). */
static void
push(struct stream *s, const json_t *line, int final)
{
    struct ig_buf b;

    ig_buf_init(&b, IG_CANON_MAX_BYTES);
    if (line != NULL && ig_canon_write(line, &b, NULL) == IG_OK &&
        ig_buf_addc(&b, '\n') == IG_OK) {
        pthread_mutex_lock(&s->mu);
        if (!final && s->pending.len + b.len > PENDING_MAX / 2)
            s->dropped = 1;
        else if (ig_buf_add(&s->pending, b.data, b.len) != IG_OK)
            s->dropped = 1;
        pthread_cond_signal(&s->cv);
        pthread_mutex_unlock(&s->mu);
    }
    ig_buf_release(&b);
}

static void
on_out(void *ctx, const char *stream, const char *data, size_t len)
{
    struct stream *s = ctx;
    char enc[8192];
    json_t *text = json_stringn(data, len), *line;

    if (text != NULL) {
        /* "o" steals text. */
        line = json_pack("{s:s, s:o}", "stream", stream, "data", text);
    } else { /* not UTF-8: send the bytes base64url-encoded */
        if (len > 6000)
            len = 6000;
        (void)ig_b64_encode_public(data, len, enc, sizeof(enc));
        line = json_pack("{s:s, s:s}", "stream", stream, "data_b64url", enc);
    }
    push(s, line, 0);
    json_decref(line);
}

static void *
worker(void *p)
{
    struct stream *s = p;
    json_t *reply = exec_finish(s->x, s->body, s->act, on_out, s);

    push(s, reply, 1);
    json_decref(reply);
    pthread_mutex_lock(&s->mu);
    s->done = 1;
    pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

static ssize_t
reader(void *cls, uint64_t pos, char *buf, size_t max)
{
    struct stream *s = cls;
    size_t n;
    (void)pos;

    pthread_mutex_lock(&s->mu);
    while (s->pending.len == 0 && !s->done)
        pthread_cond_wait(&s->cv, &s->mu);
    if (s->pending.len == 0) {
        pthread_mutex_unlock(&s->mu);
        return MHD_CONTENT_READER_END_OF_STREAM;
    }
    n = s->pending.len < max ? s->pending.len : max;
    memcpy(buf, s->pending.data, n);
    memmove(s->pending.data, s->pending.data + n, s->pending.len - n);
    s->pending.len -= n;
    pthread_mutex_unlock(&s->mu);
    return (ssize_t)n;
}

static void
stream_free(void *cls)
{
    struct stream *s = cls;

    pthread_join(s->th, NULL); /* bounded by the action's timeout */
    json_decref(s->body);
    ig_buf_release(&s->pending);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    free(s);
}

enum MHD_Result
exec_stream_execute(struct exec_ctx *x, struct MHD_Connection *c, json_t *body,
                    enum MHD_Result (*send_json)(struct MHD_Connection *c,
                                                 unsigned int status,
                                                 json_t *v))
{
    const struct exec_action *act = NULL;
    unsigned int status = 200;
    struct MHD_Response *r;
    struct stream *s;
    enum MHD_Result ret;
    json_t *reply = exec_prepare(x, body, &act, &status);

    if (reply != NULL)
        return send_json(c, status, reply);
    s = calloc(1, sizeof(*s));
    if (s == NULL) /* the grant is spent: finish without streaming */
        return send_json(c, 200, exec_finish(x, body, act, NULL, NULL));
    s->x = x;
    s->body = json_incref(body);
    s->act = act;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    ig_buf_init(&s->pending, PENDING_MAX);
    if (pthread_create(&s->th, NULL, worker, s) != 0) {
        json_decref(s->body);
        free(s);
        return send_json(c, 200, exec_finish(x, body, act, NULL, NULL));
    }
    r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, reader, s,
                                          stream_free);
    if (r == NULL) {
        stream_free(s);
        return MHD_NO;
    }
    (void)MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
                                  "application/x-ndjson");
    ret = MHD_queue_response(c, 200, r);
    MHD_destroy_response(r);
    return ret;
}
