/*
 * exec_server.c - the executor's HTTP server.
 *
 * libmicrohttpd with a small pool of epoll threads (`threads`) that never
 * block: an execute request is admitted on the HTTP thread (no I/O), its
 * connection suspended, and the execution runs on a worker pool of
 * max_concurrent threads (exec_job.c). Idle connections cost a socket and
 * a few hundred bytes, so thousands of them do not stop it serving; the
 * total and per-address connection limits, libmicrohttpd's idle timeout
 * and the request deadline (net/ig_conns.c) bound what a client can hold.
 * Bodies are capped at IG_JSON_MAX_BYTES (413 before reading when the
 * Content-Length says so). JSON in, canonical JSON out.
 *
 * Routes: POST /v1/execute, POST /v1/executions/{intent_id}/cancel,
 * GET /healthz, GET /metrics, and the git gateway under /git/
 * (exec_git.c). Start-up (exec_server_start) loads the
 * parts, proves the sandbox sees none of the executor's files
 * (exec_selfcheck.c), opens the outcome spool and listens; stopping
 * refuses new executions, cancels running exec actions, lets every
 * execution finish and report, then stops listening.
 */
#include "exec_server.h"

#include <microhttpd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exec_git.h"
#include "exec_job.h"
#include "exec_mcp.h"
#include "exec_server_int.h"
#include "ig_body.h"
#include "ig_buf.h"
#include "ig_canon.h"
#include "ig_conns.h"
#include "ig_httpd.h"
#include "ig_json.h"
#include "ig_limits.h"

struct req {
    struct ig_buf body;
    int too_large;
    int answered; /* a reply was queued early (413) */
    struct exec_job *job;
    struct exec_git_req *git; /* a git gateway request (exec_git.c) */
    struct exec_mcp_req *mcp; /* an MCP gateway request (exec_mcp.c) */
};

static enum MHD_Result
send_text(struct MHD_Connection *c, unsigned int status, const char *type,
          char *text, size_t n)
{
    struct MHD_Response *r;
    enum MHD_Result ret;

    r = MHD_create_response_from_buffer(n, text, MHD_RESPMEM_MUST_FREE);
    if (r == NULL) {
        free(text);
        return MHD_NO;
    }
    (void)MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result
send_json(struct MHD_Connection *c, unsigned int status, json_t *v)
{
    static const char oops[] = "{\"error\":{\"code\":\"INTERNAL\","
                               "\"message\":\"cannot write the reply\"}}";
    struct ig_buf b;
    size_t n = 0;
    char *text;

    ig_buf_init(&b, IG_CANON_MAX_BYTES);
    if (v == NULL || ig_canon_write(v, &b, NULL) != IG_OK) {
        ig_buf_reset(&b);
        status = 500;
        if (ig_buf_add(&b, oops, sizeof(oops) - 1) != IG_OK) {
            json_decref(v);
            ig_buf_release(&b);
            return MHD_NO;
        }
    }
    json_decref(v);
    text = ig_buf_take(&b, &n);
    if (text == NULL)
        return MHD_NO;
    return send_text(c, status, "application/json", text, n);
}

/* Strict body {"intent": {...}, "grant": "..."} or an error reply. */
static json_t *
read_body(const struct req *q, json_t **reply, unsigned int *status)
{
    struct ig_err err;
    const char *k;
    json_t *v = NULL, *val, *g;

    *status = 400;
    if (ig_json_parse(q->body.data != NULL ? q->body.data : "", q->body.len, &v,
                      &err) != IG_OK) {
        *reply = exec_error("INVALID_JSON", err.msg);
        return NULL;
    }
    if (!json_is_object(v)) {
        json_decref(v);
        *reply = exec_error("INVALID_JSON", "the body must be an object");
        return NULL;
    }
    json_object_foreach(v, k, val)
    {
        if (strcmp(k, "intent") != 0 && strcmp(k, "grant") != 0) {
            json_decref(v);
            *reply = exec_error("UNKNOWN_FIELD",
                                "the body holds only intent and grant");
            return NULL;
        }
    }
    g = json_object_get(v, "grant");
    if (json_is_string(g) &&
        strlen(json_string_value(g)) != json_string_length(g)) {
        json_decref(v); /* never verify a prefix of what was sent */
        *reply = exec_error("GRANT_MALFORMED",
                            "the grant holds a NUL byte and more after it");
        return NULL;
    }
    return v;
}

/* "/v1/executions/{id}/cancel" -> id (into buf), else NULL. */
static const char *
cancel_id(const char *url, char *buf, size_t cap)
{
    static const char pre[] = "/v1/executions/", suf[] = "/cancel";
    size_t n = strlen(url), pl = sizeof(pre) - 1, sl = sizeof(suf) - 1;

    if (n <= pl + sl || strncmp(url, pre, pl) != 0 ||
        strcmp(url + n - sl, suf) != 0 || n - pl - sl >= cap)
        return NULL;
    memcpy(buf, url + pl, n - pl - sl);
    buf[n - pl - sl] = '\0';
    return strchr(buf, '/') == NULL ? buf : NULL;
}

static int
wants_stream(struct MHD_Connection *c)
{
    const char *a =
        MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);

    return a != NULL && strstr(a, "application/x-ndjson") != NULL;
}

enum ig_status
exec_server_metrics(struct exec_server *s, struct ig_buf *out)
{
    struct exec_metrics_view v;
    struct exec_spool_stats st;

    memset(&v, 0, sizeof(v));
    exec_spool_stats(s->x.spool, &st);
    v.outcomes_pending = st.pending;
    v.outcomes_delivered = st.delivered_total;
    v.outcome_retries = st.retries_total;
    v.outcomes_undeliverable = st.undeliverable_total;
    v.connections = ig_conns_open(s->conns);
    v.connections_cut = ig_conns_cut(s->conns);
    v.running = (uint64_t)atomic_load(&s->x.running);
    return exec_metrics_render(&s->x.metrics, &v, out);
}

static enum MHD_Result
serve_metrics(struct exec_server *s, struct MHD_Connection *c)
{
    struct ig_buf b;
    size_t n = 0;
    char *text;

    ig_buf_init(&b, 64 * 1024);
    if (exec_server_metrics(s, &b) != IG_OK) {
        ig_buf_release(&b);
        return send_json(c, 500,
                         exec_error("INTERNAL", "cannot render metrics"));
    }
    text = ig_buf_take(&b, &n);
    if (text == NULL)
        return MHD_NO;
    return send_text(c, 200, "text/plain; version=0.0.4", text, n);
}

/* POST /v1/execute: admit and start, under the stop gate. */
static enum MHD_Result
execute(struct exec_server *s, struct MHD_Connection *c, struct req *q,
        json_t *body)
{
    unsigned int status = 200;
    json_t *reply;

    pthread_rwlock_rdlock(&s->gate);
    if (s->stopping) {
        pthread_rwlock_unlock(&s->gate);
        return send_json(c, 503,
                         exec_error("SHUTTING_DOWN",
                                    "the executor is stopping; the grant "
                                    "was not spent"));
    }
    reply = exec_job_start(&s->x, s->pool, c, body, wants_stream(c), &q->job,
                           &status);
    if (q->job != NULL)
        atomic_fetch_add(&s->live_jobs, 1);
    pthread_rwlock_unlock(&s->gate);
    return reply != NULL ? send_json(c, status, reply) : MHD_YES;
}

static enum MHD_Result
route(struct exec_server *s, struct MHD_Connection *c, const char *url,
      const char *method, struct req *q)
{
    unsigned int status = 200;
    json_t *body, *reply = NULL;
    enum MHD_Result ret;
    char id[80];
    int cancel, get = strcmp(method, "GET") == 0;

    if (strcmp(url, "/healthz") == 0 && get)
        return send_json(c, 200, json_pack("{s:s}", "status", "ok"));
    if (strcmp(url, "/metrics") == 0 && get)
        return serve_metrics(s, c);
    cancel = cancel_id(url, id, sizeof(id)) != NULL;
    if (strcmp(url, "/v1/execute") != 0 && !cancel)
        return send_json(c, 404, exec_error("NOT_FOUND", "no such path"));
    if (strcmp(method, "POST") != 0)
        return send_json(c, 405, exec_error("METHOD_NOT_ALLOWED", "use POST"));
    if (q->too_large)
        return send_json(c, 413,
                         exec_error("BODY_TOO_LARGE", "the body is too big"));
    body = read_body(q, &reply, &status);
    if (body == NULL)
        return send_json(c, status, reply);
    if (cancel) {
        reply = exec_cancel(&s->x, id, body, &status);
        ret = send_json(c, status, reply);
    } else {
        ret = execute(s, c, q, body);
    }
    json_decref(body);
    return ret;
}

/* First call: per-request state, and 413 at once for a declared body
   over the cap. */
static enum MHD_Result
begin(struct exec_server *s, struct MHD_Connection *c, const char *url,
      const char *method, void **con_cls)
{
    struct req *q = calloc(1, sizeof(*q));

    if (q == NULL)
        return MHD_NO;
    ig_buf_init(&q->body, IG_JSON_MAX_BYTES);
    *con_cls = q;
    if (exec_git_path(url))
        return exec_git_begin(&s->x, c, url, method, &q->git, &q->answered);
    if (exec_mcp_path(url))
        return exec_mcp_begin(s->x.mcp, c, method, &q->mcp, &q->answered);
    if (ig_body_declared_over(c, IG_JSON_MAX_BYTES)) {
        q->answered = 1;
        return send_json(c, 413,
                         exec_error("BODY_TOO_LARGE", "the body is too big"));
    }
    return MHD_YES;
}

static enum MHD_Result
on_request(void *cls, struct MHD_Connection *c, const char *url,
           const char *method, const char *version, const char *upload,
           size_t *upload_size, void **con_cls)
{
    struct exec_server *s = cls;
    struct req *q = *con_cls;
    (void)version;

    if (q == NULL)
        return begin(s, c, url, method, con_cls);
    if (q->answered) { /* 413 queued: drain what follows */
        *upload_size = 0;
        return MHD_YES;
    }
    if (q->git != NULL) {
        if (*upload_size > 0) {
            exec_git_body(q->git, upload, *upload_size);
            *upload_size = 0;
            return MHD_YES;
        }
        ig_conns_busy(s->conns, c, 1);
        return exec_git_step(q->git, s->pool, c);
    }
    if (q->mcp != NULL) {
        if (*upload_size > 0) {
            exec_mcp_body(q->mcp, upload, *upload_size);
            *upload_size = 0;
            return MHD_YES;
        }
        ig_conns_busy(s->conns, c, 1);
        return exec_mcp_step(q->mcp, c);
    }
    if (*upload_size > 0) {
        ig_body_take(&q->body, &q->too_large, upload, upload_size);
        return MHD_YES;
    }
    if (q->job != NULL) /* resumed */
        return exec_job_resumed(q->job, c, send_json);
    ig_conns_busy(s->conns, c, 1); /* the whole request is here */
    return route(s, c, url, method, q);
}

static void
on_done(void *cls, struct MHD_Connection *c, void **con_cls,
        enum MHD_RequestTerminationCode toe)
{
    struct exec_server *s = cls;
    struct req *q = *con_cls;
    (void)toe;

    ig_conns_busy(s->conns, c, 0);
    if (q != NULL) {
        if (q->job != NULL)
            atomic_fetch_sub(&s->live_jobs, 1);
        exec_job_unref(q->job);
        exec_git_done(q->git);
        exec_mcp_done(q->mcp);
        ig_buf_release(&q->body);
        free(q);
    }
    *con_cls = NULL;
}

struct MHD_Daemon *
exec_server_listen(struct exec_server *s, struct ig_err *err)
{
    const struct exec_config *c = s->x.cfg;
    struct ig_httpd o = {
        .host = c->listen_host,
        .port = c->listen_port,
        .threads = (unsigned int)c->threads,
        .max_connections = (unsigned int)s->max_connections,
        .max_per_address = (unsigned int)c->max_per_address,
        .idle_timeout_s = (unsigned int)((c->request_timeout_ms + 999) / 1000),
        .connection_memory = 64 * 1024,
        .backlog = 1024,
        .request = on_request,
        .request_cls = s,
        .completed = on_done,
        .completed_cls = s,
        .conns = s->conns,
    };

    return ig_httpd_start(&o, &s->port, err);
}
