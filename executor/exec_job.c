/*
 * exec_job.c - admitted executions on the worker pool (see exec_job.h).
 *
 * Suspension is tracked by one flag, `parked`, under the job's mutex:
 * whoever suspends the connection (the access handler after admitting,
 * or the stream reader when it has nothing to send) sets it while holding
 * the mutex; whoever has news (the worker: a refusal, the stream may
 * start, more output, the end) clears it and resumes the connection,
 * also under the mutex. So a connection is resumed exactly once per
 * suspension and never after libmicrohttpd may have freed it (a
 * suspended connection is not freed until resumed).
 *
 * Lines wait in `pending` (capped: when the client lags, output lines are
 * dropped and the final object says nothing about them, but the final
 * line always fits).
 */
#include "exec_job.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "exec_inflight.h"
#include "ig_b64.h"
#include "ig_buf.h"
#include "ig_canon.h"
#include "ig_limits.h"

struct exec_job {
    pthread_mutex_t mu;
    int refs;
    struct exec_ctx *x;
    struct MHD_Connection *conn;
    json_t *body;
    const struct exec_action *act;
    uint64_t ticket; /* the run record, once redeemed */
    int stream;      /* the client asked for NDJSON */
    int parked;      /* the connection is suspended by us */
    int streaming;   /* redeemed: the stream response may be queued */
    int done;        /* nothing more will come */
    unsigned int status;
    json_t *reply; /* a plain reply (or a refusal), once ready */
    struct ig_buf pending;
    int dropped; /* a line did not fit */
};

static void
job_ref(struct exec_job *j)
{
    pthread_mutex_lock(&j->mu);
    j->refs++;
    pthread_mutex_unlock(&j->mu);
}

void
exec_job_unref(struct exec_job *j)
{
    int last;

    if (j == NULL)
        return;
    pthread_mutex_lock(&j->mu);
    last = --j->refs == 0;
    pthread_mutex_unlock(&j->mu);
    if (!last)
        return;
    json_decref(j->body);
    json_decref(j->reply);
    ig_buf_release(&j->pending);
    pthread_mutex_destroy(&j->mu);
    free(j);
}

/* Resume the connection if we parked it. Caller holds mu. */
static void
wake_locked(struct exec_job *j)
{
    if (j->parked) {
        j->parked = 0;
        MHD_resume_connection(j->conn);
    }
}

/* Append one line; output lines past the cap are dropped. */
static void
push(struct exec_job *j, const json_t *line, int final)
{
    struct ig_buf b;

    ig_buf_init(&b, IG_CANON_MAX_BYTES);
    if (line != NULL && ig_canon_write(line, &b, NULL) == IG_OK &&
        ig_buf_addc(&b, '\n') == IG_OK) {
        pthread_mutex_lock(&j->mu);
        /* A lagging client loses output lines, never the final one
           (the cap leaves it room). */
        if ((final ||
             j->pending.len + b.len <= IG_EXEC_STREAM_PENDING_MAX_BYTES / 2) &&
            ig_buf_add(&j->pending, b.data, b.len) != IG_OK)
            j->dropped = 1;
        if (final)
            j->done = 1;
        wake_locked(j);
        pthread_mutex_unlock(&j->mu);
    }
    ig_buf_release(&b);
}

static void
on_out(void *ctx, const char *stream, const char *data, size_t len)
{
    struct exec_job *j = ctx;
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
    push(j, line, 0);
    json_decref(line);
}

/* A plain reply is ready (refusal or result): hand it over. */
static void
complete(struct exec_job *j, unsigned int status, json_t *reply)
{
    pthread_mutex_lock(&j->mu);
    j->status = status;
    j->reply = reply;
    j->done = 1;
    wake_locked(j);
    pthread_mutex_unlock(&j->mu);
}

/* Redeem, run, answer - and only then report the outcome to the PDP:
   its commit is not part of the agent's wait. */
static void
work(void *arg)
{
    struct exec_job *j = arg;
    struct exec_report rep;
    unsigned int status = 200;
    json_t *reply = exec_redeem(j->x, j->body, j->act, &j->ticket, &status);

    if (reply != NULL) {
        complete(j, status, reply);
        exec_job_unref(j);
        return;
    }
    if (!j->stream) {
        complete(
            j, 200,
            exec_finish(j->x, j->body, j->act, j->ticket, NULL, NULL, &rep));
    } else {
        pthread_mutex_lock(&j->mu);
        j->streaming = 1;
        wake_locked(j);
        pthread_mutex_unlock(&j->mu);
        reply = exec_finish(j->x, j->body, j->act, j->ticket, on_out, j, &rep);
        push(j, reply, 1);
        json_decref(reply);
    }
    exec_report_send(j->x, &rep);
    exec_job_unref(j);
}

json_t *
exec_job_start(struct exec_ctx *x, struct exec_pool *pool,
               struct MHD_Connection *c, json_t *body, int stream,
               struct exec_job **out, unsigned int *status)
{
    const struct exec_action *act = NULL;
    json_t *reply = exec_admit(x, body, &act, status);
    struct exec_job *j;

    *out = NULL;
    if (reply != NULL)
        return reply;
    if ((j = calloc(1, sizeof(*j))) == NULL) {
        exec_slot_give(x, act);
        *status = 503;
        return exec_error("BUSY", "out of memory; the grant was not spent");
    }
    pthread_mutex_init(&j->mu, NULL);
    ig_buf_init(&j->pending, IG_EXEC_STREAM_PENDING_MAX_BYTES);
    j->refs = 2; /* the request's and the worker's */
    j->x = x;
    j->conn = c;
    j->body = json_incref(body);
    j->act = act;
    j->stream = stream;
    pthread_mutex_lock(&j->mu);
    j->parked = 1;
    MHD_suspend_connection(c);
    pthread_mutex_unlock(&j->mu);
    if (exec_pool_submit(pool, work, j) != IG_OK) {
        exec_slot_give(x, act);
        complete(j, 503,
                 exec_error("SHUTTING_DOWN", "the executor is stopping; the "
                                             "grant was not spent"));
        exec_job_unref(j); /* the worker's */
    }
    *out = j;
    return NULL;
}

static ssize_t
reader(void *cls, uint64_t pos, char *buf, size_t max)
{
    struct exec_job *j = cls;
    size_t n;
    (void)pos;

    pthread_mutex_lock(&j->mu);
    if (j->pending.len == 0) {
        if (j->done) {
            pthread_mutex_unlock(&j->mu);
            return MHD_CONTENT_READER_END_OF_STREAM;
        }
        j->parked = 1;
        MHD_suspend_connection(j->conn);
        pthread_mutex_unlock(&j->mu);
        return 0;
    }
    n = j->pending.len < max ? j->pending.len : max;
    memcpy(buf, j->pending.data, n);
    memmove(j->pending.data, j->pending.data + n, j->pending.len - n);
    j->pending.len -= n;
    pthread_mutex_unlock(&j->mu);
    return (ssize_t)n;
}

static void
reader_free(void *cls)
{
    exec_job_unref(cls);
}

static enum MHD_Result
queue_stream(struct exec_job *j, struct MHD_Connection *c)
{
    struct MHD_Response *r;
    enum MHD_Result ret;

    job_ref(j);
    r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16384, reader, j,
                                          reader_free);
    if (r == NULL) {
        exec_job_unref(j);
        return MHD_NO;
    }
    (void)MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
                                  "application/x-ndjson");
    ret = MHD_queue_response(c, 200, r);
    MHD_destroy_response(r);
    return ret;
}

enum MHD_Result
exec_job_resumed(struct exec_job *j, struct MHD_Connection *c,
                 exec_send_json_fn send_json)
{
    json_t *reply;
    unsigned int status;

    pthread_mutex_lock(&j->mu);
    if (j->reply != NULL) {
        reply = j->reply;
        status = j->status;
        j->reply = NULL;
        pthread_mutex_unlock(&j->mu);
        return send_json(c, status, reply);
    }
    if (j->streaming) {
        pthread_mutex_unlock(&j->mu);
        return queue_stream(j, c);
    }
    j->parked = 1; /* nothing yet: wait again */
    MHD_suspend_connection(c);
    pthread_mutex_unlock(&j->mu);
    return MHD_YES;
}
