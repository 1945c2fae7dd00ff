/*
 * witness_http.c - the witness's HTTP routes (witness.h), on
 * libmicrohttpd started the one way the PDP and the executor start it
 * (net/ig_httpd.c): epoll threads, connection limits in all and per
 * address, an idle timeout and the request deadline (net/ig_conns.c).
 *
 * POST /add-checkpoint is rate-limited per client address before its body
 * is read (429 with Retry-After), its body capped at
 * AUDIT_WITNESS_REQ_MAX (413, before reading when Content-Length says
 * so), and answered by witness_add.c on the HTTP thread: the SQLite
 * commit it waits for is short, and one connection serialises them
 * anyway. Every refusal is text/plain, one line naming the problem.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ig_body.h"
#include "ig_httpd.h"
#include "ig_log.h"
#include "ig_time.h"
#include "witness_add.h"
#include "witness_int.h"

#define ROUTE_ADD "/add-checkpoint"
#define ROUTE_CHECKPOINT "/checkpoint"

struct req {
    struct ig_buf body;
    int too_large;
    int answered; /* a reply was queued before the body (413, 429) */
};

/* Queue a's answer (its body is taken), with Retry-After when retry_after
   > 0 and Allow when allow is not NULL. */
static enum MHD_Result
send_answer(struct MHD_Connection *c, struct witness_answer *a,
            unsigned retry_after, const char *allow)
{
    struct MHD_Response *r;
    enum MHD_Result ret;
    char ra[16];
    size_t n = 0;
    char *text = ig_buf_take(&a->body, &n);

    if (text == NULL)
        return MHD_NO;
    r = MHD_create_response_from_buffer(n, text, MHD_RESPMEM_MUST_FREE);
    if (r == NULL) {
        free(text);
        return MHD_NO;
    }
    (void)MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, a->type);
    (void)MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    if (retry_after > 0) {
        (void)snprintf(ra, sizeof(ra), "%u", retry_after);
        (void)MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, ra);
    }
    if (allow != NULL)
        (void)MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
    ret = MHD_queue_response(c, a->status, r);
    MHD_destroy_response(r);
    return ret;
}

/* A one-line text answer. */
static enum MHD_Result
send_text(struct MHD_Connection *c, unsigned int status, const char *problem,
          unsigned retry_after, const char *allow)
{
    struct witness_answer a;
    enum MHD_Result ret;

    witness_answer_init(&a);
    witness_answer_text(&a, status, problem);
    ret = send_answer(c, &a, retry_after, allow);
    ig_buf_release(&a.body);
    return ret;
}

/* The client's address bytes for the rate limit: an IPv4 address (also
   when mapped into IPv6), or an IPv6 address's /64. */
static size_t
client_addr(struct MHD_Connection *c, unsigned char out[16])
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    const struct sockaddr *sa = ci != NULL ? ci->client_addr : NULL;

    memset(out, 0, 16);
    if (sa != NULL && sa->sa_family == AF_INET) {
        memcpy(out, &((const struct sockaddr_in *)(const void *)sa)->sin_addr,
               4);
        return 4;
    }
    if (sa != NULL && sa->sa_family == AF_INET6) {
        const struct in6_addr *a6 =
            &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;

        if (IN6_IS_ADDR_V4MAPPED(a6)) { /* a dual-stack socket's IPv4 */
            memcpy(out, a6->s6_addr + 12, 4);
            return 4;
        }
        /* One IPv6 client holds a whole /64: its bucket is the prefix. */
        memcpy(out, a6->s6_addr, 8);
        return 8;
    }
    return 1;
}

/* GET /<64 lowercase hex>/checkpoint */
static enum MHD_Result
get_checkpoint(struct witness *w, struct MHD_Connection *c, const char *url)
{
    const struct witness_log *l;
    struct witness_answer a;
    enum MHD_Result ret;
    size_t n = strlen(url), len = 0;
    uint64_t size = 0;
    char *note = NULL;
    enum ig_status st;

    l = n == 1 + 64 + sizeof(ROUTE_CHECKPOINT) - 1
            ? witness_config_log_by_hash(w->cfg, url + 1, 64)
            : NULL;
    if (l == NULL)
        return send_text(c, 404, "unknown log", 0, NULL);
    st = witness_state_latest(w->state, l->origin, &note, &len, &size);
    if (st == IG_ERR_NOTFOUND)
        return send_text(c, 404,
                         "this witness has not cosigned a checkpoint of "
                         "this log",
                         0, NULL);
    if (st != IG_OK)
        return send_text(c, 500, "the witness cannot read its state", 0, NULL);
    witness_answer_init(&a);
    a.status = 200;
    if (ig_buf_add(&a.body, note, len) != IG_OK)
        witness_answer_text(&a, 500, "out of memory");
    free(note);
    ret = send_answer(c, &a, 0, NULL);
    ig_buf_release(&a.body);
    return ret;
}

static int
is_checkpoint_path(const char *url)
{
    size_t n = strlen(url), rl = sizeof(ROUTE_CHECKPOINT) - 1;

    return n > rl && url[0] == '/' &&
           strcmp(url + n - rl, ROUTE_CHECKPOINT) == 0;
}

static enum MHD_Result
add_checkpoint(struct witness *w, struct MHD_Connection *c, struct req *q)
{
    struct witness_answer a;
    enum MHD_Result ret;

    if (q->too_large)
        return send_text(c, 413, "the request body is too large", 0, NULL);
    witness_answer_init(&a);
    witness_add_checkpoint(w->cfg, w->state, &w->signer,
                           q->body.data != NULL ? q->body.data : "",
                           q->body.len, ig_time_now(), &a);
    ret = send_answer(c, &a, 0, NULL);
    ig_buf_release(&a.body);
    return ret;
}

static enum MHD_Result
route(struct witness *w, struct MHD_Connection *c, const char *url,
      const char *method, struct req *q)
{
    int get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;

    if (strcmp(url, ROUTE_ADD) == 0)
        return strcmp(method, "POST") == 0
                   ? add_checkpoint(w, c, q)
                   : send_text(c, 405, "use POST", 0, "POST");
    if (strcmp(url, "/healthz") == 0)
        return get ? send_text(c, 200, "ok", 0, NULL)
                   : send_text(c, 405, "use GET", 0, "GET, HEAD");
    if (is_checkpoint_path(url))
        return get ? get_checkpoint(w, c, url)
                   : send_text(c, 405, "use GET", 0, "GET, HEAD");
    return send_text(c, 404, "no such path", 0, NULL);
}

/* First call: the request's state; for add-checkpoint the rate limit and
   a declared body over the cap are answered at once. */
static enum MHD_Result
begin(struct witness *w, struct MHD_Connection *c, const char *url,
      const char *method, void **con_cls)
{
    struct req *q = calloc(1, sizeof(*q));
    unsigned char addr[16];
    unsigned retry = 0;
    size_t n;

    if (q == NULL)
        return MHD_NO;
    ig_buf_init(&q->body, AUDIT_WITNESS_REQ_MAX);
    *con_cls = q;
    if (strcmp(url, ROUTE_ADD) != 0 || strcmp(method, "POST") != 0)
        return MHD_YES;
    n = client_addr(c, addr);
    if (!witness_rate_take(w->rate, addr, n, ig_time_mono(), &retry)) {
        q->answered = 1;
        return send_text(c, 429, "too many requests from this address", retry,
                         NULL);
    }
    if (ig_body_declared_over(c, AUDIT_WITNESS_REQ_MAX)) {
        q->answered = 1;
        return send_text(c, 413, "the request body is too large", 0, NULL);
    }
    return MHD_YES;
}

static enum MHD_Result
on_request(void *cls, struct MHD_Connection *c, const char *url,
           const char *method, const char *version, const char *upload,
           size_t *upload_size, void **con_cls)
{
    struct witness *w = cls;
    struct req *q = *con_cls;
    (void)version;

    if (q == NULL)
        return begin(w, c, url, method, con_cls);
    if (q->answered) { /* 413 or 429 queued: drain what follows */
        *upload_size = 0;
        return MHD_YES;
    }
    if (*upload_size > 0) {
        ig_body_take(&q->body, &q->too_large, upload, upload_size);
        return MHD_YES;
    }
    ig_conns_busy(w->conns, c, 1); /* the whole request is here */
    return route(w, c, url, method, q);
}

static void
on_done(void *cls, struct MHD_Connection *c, void **con_cls,
        enum MHD_RequestTerminationCode toe)
{
    struct witness *w = cls;
    struct req *q = *con_cls;
    (void)toe;

    ig_conns_busy(w->conns, c, 0);
    if (q != NULL) {
        ig_buf_release(&q->body);
        free(q);
    }
    *con_cls = NULL;
}

struct MHD_Daemon *
witness_http_start(struct witness *w, struct ig_err *err)
{
    const struct witness_config *c = w->cfg;
    struct ig_httpd o = {
        .host = c->listen_host,
        .port = c->listen_port,
        .threads = (unsigned int)c->threads,
        .max_connections = w->max_connections,
        .max_per_address = (unsigned int)c->max_per_address,
        .idle_timeout_s = (unsigned int)((c->request_timeout_ms + 999) / 1000),
        .connection_memory = 32 * 1024,
        .backlog = 256,
        .request = on_request,
        .request_cls = w,
        .completed = on_done,
        .completed_cls = w,
        .conns = w->conns,
    };

    return ig_httpd_start(&o, &w->port, err);
}
