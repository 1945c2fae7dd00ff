/*
 * pdp_route.c - the HTTP layer's top: libmicrohttpd's access handler,
 * request bodies and the route table that calls every endpoint.
 *
 * MHD calls the handler several times per request: first with no state
 * (we allocate struct pdp_req; an oversized Content-Length is refused
 * right there with 413), then once per body chunk (appended under a cap;
 * a chunked body over the cap is drained and refused at the end), then
 * with no more data: we route. An endpoint either fills r->reply at once
 * or suspends the connection (store write in flight, long poll) and is
 * resumed from another thread; MHD then calls the handler again and the
 * endpoint's on_resume fills the reply. Every reply is queued from the
 * handler, on an MHD thread. The replies themselves are built with
 * pdp_reply.c, below every endpoint.
 */
#include "pdp_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ig_body.h"
#include "ig_conns.h"
#include "ig_httpd.h"
#include "ig_limits.h"
#include "pdp_shadow.h"

/* A request is in flight from the moment it is routed until its reply is
   queued (or its connection ends without one): stopping waits for none to
   be left, so no store write, no resume and no reply outlives the daemon.
   Entering before looking at `stopping` closes the race with stop(). */
static void
flight_enter(struct pdp_req *r)
{
    atomic_fetch_add(&r->srv->inflight, 1);
    r->counted = 1;
}

static void
flight_leave(struct pdp_req *r)
{
    if (r->counted) {
        r->counted = 0;
        atomic_fetch_sub(&r->srv->inflight, 1);
    }
}

/* ---- routing ---- */

static int
is_method(const char *m, const char *want)
{
    return strcmp(m, want) == 0;
}

static void
method_not_allowed(struct pdp_req *r, const char *allow)
{
    pdp_reply_error(r, 405, "METHOD_NOT_ALLOWED", NULL, "use %s for this path",
                    allow);
    r->reply.allow = allow;
}

/* "/v1/intents/{id}" style: the part after prefix up to an optional
   suffix; NULL when url does not match. Copies into id (<= idcap). */
static const char *
path_param(const char *url, const char *prefix, const char *suffix, char *id,
           size_t idcap)
{
    size_t pl = strlen(prefix), sl = strlen(suffix), n;

    if (strncmp(url, prefix, pl) != 0)
        return NULL;
    n = strlen(url + pl);
    if (n <= sl || strcmp(url + pl + n - sl, suffix) != 0)
        return NULL;
    n -= sl;
    if (n == 0 || n >= idcap || memchr(url + pl, '/', n) != NULL)
        return NULL;
    memcpy(id, url + pl, n);
    id[n] = '\0';
    return id;
}

static void
serve_health(struct pdp_req *r)
{
    pdp_reply_json(r, 200, json_pack("{s:s}", "status", "ok"));
}

static void
serve_metrics(struct pdp_req *r)
{
    struct pdp_server *s = r->srv;
    struct ig_buf b;

    atomic_store(&s->metrics.connections, ig_conns_open(s->conns));
    atomic_store(&s->metrics.connections_cut, ig_conns_cut(s->conns));
    atomic_store(&s->metrics.waiters, pdp_waiters_parked(s->waiters));
    atomic_store(&s->metrics.queued, store_queue_depth(s->store));
    atomic_store(&s->metrics.in_flight,
                 (uint_fast64_t)atomic_load(&s->inflight));
    ig_buf_init(&b, IG_PDP_METRICS_MAX_BYTES);
    if (pdp_metrics_render(&s->metrics, &b) != IG_OK ||
        pdp_refusals_render(s->refusals, &b) != IG_OK ||
        pdp_shadow_metrics(s, &b) != IG_OK) {
        ig_buf_release(&b);
        pdp_reply_error(r, 500, "INTERNAL", NULL, "cannot render metrics");
        return;
    }
    pdp_reply_text(r, 200, b.data != NULL ? b.data : "", b.len,
                   "text/plain; version=0.0.4");
    ig_buf_release(&b);
}

/* GET /v1/whoami: who the bearer token is. Any principal may ask about
   its own token: the executor's MCP gateway binds a session to the agent
   this says (docs/api.md). */
static void
serve_whoami(struct pdp_req *r)
{
    const struct pdp_principal *pr =
        pdp_req_auth(r, (1u << PDP_ROLE_AGENT) | (1u << PDP_ROLE_EXECUTOR) |
                            (1u << PDP_ROLE_ADMIN) | (1u << PDP_ROLE_AUDITOR));
    json_t *v;

    if (pr == NULL)
        return;
    v = json_pack("{s:s, s:s}", "principal", pr->id, "role",
                  pdp_role_name(pr->role));
    if (v != NULL && pr->tenant != NULL &&
        json_object_set_new(v, "tenant", json_string(pr->tenant)) != 0) {
        json_decref(v);
        v = NULL;
    }
    if (v == NULL) {
        pdp_reply_error(r, 500, "INTERNAL", NULL, "out of memory");
        return;
    }
    pdp_reply_json(r, 200, v);
}

/* GET /v1/policy/shadow: what the shadow bundle disagreed with (admin;
   docs/api.md). */
static void
serve_shadow(struct pdp_req *r)
{
    json_t *v;
    int configured;

    if (pdp_req_auth(r, 1u << PDP_ROLE_ADMIN) == NULL)
        return;
    v = pdp_shadow_summary(r->srv, &configured);
    if (!configured)
        pdp_reply_error(r, 404, "NO_SHADOW", NULL,
                        "no shadow bundle is configured (shadow_policy_dir)");
    else if (v == NULL)
        pdp_reply_error(r, 500, "INTERNAL", NULL, "out of memory");
    else
        pdp_reply_json(r, 200, v);
}

/* Fixed paths: the method each takes and its handler. */
static const struct {
    const char *path, *method;
    void (*fn)(struct pdp_req *r);
} fixed_routes[] = {
    {"/healthz", "GET", serve_health},
    {"/metrics", "GET", serve_metrics},
    {"/v1/intents", "POST", pdp_post_intent},
    {"/v1/whoami", "GET", serve_whoami},
    {"/v1/policy/shadow", "GET", serve_shadow},
    {"/v1/executor/events", "POST", pdp_post_executor_event},
    {"/v1/grants/redeem", "POST", pdp_post_redeem},
    {"/slack/interactions", "POST", pdp_post_slack_interactions},
};

static void
route(struct pdp_req *r, const char *url, const char *method)
{
    char id[IG_PATH_ID_MAX + 1];
    size_t i;

    r->url = url;
    r->method = method;
    for (i = 0; i < sizeof(fixed_routes) / sizeof(fixed_routes[0]); i++) {
        if (strcmp(url, fixed_routes[i].path) != 0)
            continue;
        if (is_method(method, fixed_routes[i].method))
            fixed_routes[i].fn(r);
        else
            method_not_allowed(r, fixed_routes[i].method);
        return;
    }
    if (strcmp(url, "/ui") == 0 || strncmp(url, "/ui/", 4) == 0) {
        pdp_ui_route(r, url, method);
    } else if (pdp_approval_api_route(r, url, method)) {
        ; /* answered */
    } else if (pdp_audit_api_route(r, url, method)) {
        ; /* answered */
    } else if (path_param(url, "/v1/intents/", "", id, sizeof(id)) != NULL) {
        if (is_method(method, "GET"))
            pdp_get_intent(r, id);
        else
            method_not_allowed(r, "GET");
    } else if (path_param(url, "/v1/executions/", "/outcome", id, sizeof(id)) !=
               NULL) {
        if (is_method(method, "POST"))
            pdp_post_outcome(r, id);
        else
            method_not_allowed(r, "POST");
    } else {
        pdp_reply_error(r, 404, "NOT_FOUND", NULL, "no such path: %s", url);
    }
}

/* ---- the MHD callbacks ---- */

static enum MHD_Result
queue_reply(struct pdp_req *r)
{
    struct MHD_Response *resp;
    enum MHD_Result ret;
    size_t i;

    resp = MHD_create_response_from_buffer(r->reply.len, r->reply.body,
                                           MHD_RESPMEM_MUST_FREE);
    if (resp == NULL)
        return MHD_NO;
    r->reply.body = NULL; /* MHD frees it now */
    (void)MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
                                  r->reply.content_type);
    (void)MHD_add_response_header(resp, "Cache-Control", "no-store");
    if (r->reply.allow != NULL)
        (void)MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW,
                                      r->reply.allow);
    if (r->reply.status == 401 &&
        strncmp(r->reply.content_type, "application/json", 16) == 0)
        (void)MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
                                      "Bearer");
    (void)MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
    for (i = 0; i < r->reply.nhdr; i++)
        (void)MHD_add_response_header(resp, r->reply.hdr_name[i],
                                      r->reply.hdr_value[i]);
    ret = MHD_queue_response(r->conn, r->reply.status, resp);
    MHD_destroy_response(resp);
    r->queued = 1;
    flight_leave(r);
    return ret;
}

/* First call for a request: allocate state, refuse oversized bodies. */
static enum MHD_Result
begin(struct pdp_server *srv, struct MHD_Connection *conn, void **con_cls)
{
    struct pdp_req *r = calloc(1, sizeof(*r));

    if (r == NULL)
        return MHD_NO;
    r->srv = srv;
    r->conn = conn;
    r->t_start = pdp_mono_seconds();
    ig_buf_init(&r->body, srv->cfg->max_body_bytes);
    *con_cls = r;
    if (ig_body_declared_over(conn, srv->cfg->max_body_bytes)) {
        pdp_reply_error(r, 413, "BODY_TOO_LARGE", NULL,
                        "the body is larger than %zu bytes",
                        srv->cfg->max_body_bytes);
        return queue_reply(r);
    }
    return MHD_YES;
}

static enum MHD_Result
on_request(void *cls, struct MHD_Connection *conn, const char *url,
           const char *method, const char *version, const char *upload,
           size_t *upload_size, void **con_cls)
{
    struct pdp_req *r = *con_cls;
    (void)version;

    if (r == NULL)
        return begin(cls, conn, con_cls);
    if (r->queued) { /* answered early (413): drain whatever follows */
        *upload_size = 0;
        return MHD_YES;
    }
    if (r->phase == PH_READING && *upload_size > 0) {
        ig_body_take(&r->body, &r->too_large, upload, upload_size);
        return MHD_YES;
    }
    if (r->phase == PH_READING) {
        if (r->too_large)
            pdp_reply_error(r, 413, "BODY_TOO_LARGE", NULL,
                            "the body is larger than %zu bytes",
                            r->srv->cfg->max_body_bytes);
        else {
            flight_enter(r);
            ig_conns_busy(r->srv->conns, conn, 1); /* the whole request */
            if (atomic_load(&r->srv->stopping))
                pdp_reply_error(r, 503, "SHUTTING_DOWN", NULL,
                                "the server is shutting down");
            else
                route(r, url, method);
        }
    } else if (r->phase == PH_WAITING) {
        r->on_resume(r); /* resumed: fill the reply */
    }
    if (r->phase == PH_READY)
        return queue_reply(r);
    return MHD_YES; /* suspended */
}

static void
on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
             enum MHD_RequestTerminationCode toe)
{
    struct pdp_req *r = *con_cls;
    size_t i;
    (void)toe;

    if (r == NULL)
        return;
    flight_leave(r);
    ig_conns_busy(r->srv->conns, conn, 0); /* the next request's clock */
    pdp_waiters_remove(((struct pdp_server *)cls)->waiters, r);
    if (r->op_free != NULL)
        r->op_free(r->op);
    free(r->reply.body);
    for (i = 0; i < r->reply.nhdr; i++)
        free(r->reply.hdr_value[i]);
    ig_buf_release(&r->body);
    free(r);
    *con_cls = NULL;
}

/* A stopping server takes no new connection. (Not MHD_quiesce_daemon:
   libmicrohttpd 0.9.75 races its worker threads removing the listen
   socket from their epoll sets and aborts the process, "Failed to
   remove listen FD from epoll set".) */
static enum MHD_Result
on_accept(void *cls, const struct sockaddr *addr, socklen_t addrlen)
{
    struct pdp_server *srv = cls;
    (void)addr;
    (void)addrlen;
    return atomic_load(&srv->stopping) ? MHD_NO : MHD_YES;
}

struct MHD_Daemon *
pdp_route_start(struct pdp_server *srv, struct ig_err *err)
{
    struct ig_httpd o = {
        .host = srv->cfg->listen_host,
        .port = srv->cfg->listen_port,
        .threads = (unsigned int)srv->cfg->threads,
        .max_connections = (unsigned int)srv->max_connections,
        .max_per_address = (unsigned int)srv->cfg->max_per_address,
        .idle_timeout_s = IG_PDP_IDLE_TIMEOUT,
        .connection_memory = IG_PDP_CONNECTION_MEMORY,
        .backlog = IG_PDP_LISTEN_BACKLOG,
        .accept = on_accept,
        .accept_cls = srv,
        .request = on_request,
        .request_cls = srv,
        .completed = on_completed,
        .completed_cls = srv,
        .conns = srv->conns,
    };

    return ig_httpd_start(&o, &srv->port, err);
}
