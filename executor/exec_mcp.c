/*
 * exec_mcp.c - the MCP gateway's HTTP side (see exec_mcp.h): /mcp, the
 * checks that need no I/O, the request's body, the hand-off to a gateway
 * thread while the connection is suspended, and the answer: one JSON
 * object, or an event stream the worker appends to.
 *
 * Checks before anything is read or asked (transports.mdx, 2025-11-25):
 *   - POST or DELETE (GET: 405, the gateway offers no server stream);
 *   - an Origin, when present, must be a loopback origin, and when the
 *     executor listens on loopback the Host must name loopback too (DNS
 *     rebinding): else 403;
 *   - exactly one `Authorization: Bearer`: else 401;
 *   - POST: Accept lists application/json and text/event-stream (406),
 *     Content-Type is application/json (415), the body fits
 *     IG_EXEC_MCP_BODY_MAX_BYTES (413);
 *   - Mcp-Session-Id, when present, is 64 lowercase hex (else 404 later:
 *     no such session).
 * Gateway requests run on their own threads (an escalated call can wait
 * minutes for a human), at most IG_EXEC_MCP_CALLS_MAX at once: 503 past
 * it.
 */
#include "exec_mcp_int.h"

#include <sodium.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ig_body.h"
#include "ig_limits.h"
#include "ig_sse.h"

int
exec_mcp_path(const char *url)
{
    return strcmp(url, "/mcp") == 0;
}

/* ---- small answers queued on the HTTP thread ---- */

static enum MHD_Result
queue_rpc_error(struct MHD_Connection *c, unsigned int status, int code,
                const char *message, const char *allow)
{
    struct MHD_Response *r;
    struct ig_buf b;
    enum MHD_Result ret;

    ig_buf_init(&b, 4096);
    if (exec_mcp_write_error(&b, NULL, code, message, NULL) != IG_OK) {
        ig_buf_release(&b);
        return MHD_NO;
    }
    r = MHD_create_response_from_buffer(b.len, b.data, MHD_RESPMEM_MUST_COPY);
    ig_buf_release(&b);
    if (r == NULL)
        return MHD_NO;
    (void)MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
                                  "application/json");
    if (allow != NULL)
        (void)MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
    if (status == 401)
        (void)MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
                                      "Bearer");
    ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

/* http(s)://localhost|127.0.0.1|[::1] with an optional port. */
static int
loopback_host(const char *h, size_t n)
{
    static const char *const names[] = {"localhost", "127.0.0.1", "[::1]"};
    size_t i, k;

    for (i = 0; i < sizeof(names) / sizeof(*names); i++) {
        k = strlen(names[i]);
        if (n >= k && strncasecmp(h, names[i], k) == 0) {
            if (n == k)
                return 1;
            if (h[k] != ':' || n == k + 1)
                continue;
            for (k++; k < n && h[k] >= '0' && h[k] <= '9'; k++)
                ;
            if (k == n)
                return 1;
        }
    }
    return 0;
}

static int
loopback_origin(const char *o)
{
    if (strncmp(o, "http://", 7) == 0)
        o += 7;
    else if (strncmp(o, "https://", 8) == 0)
        o += 8;
    else
        return 0;
    return loopback_host(o, strlen(o));
}

static int
listens_on_loopback(const struct exec_mcp *m)
{
    const char *h = m->x->cfg->listen_host;

    return strcmp(h, "127.0.0.1") == 0 || strcmp(h, "::1") == 0 ||
           strcmp(h, "localhost") == 0 || strncmp(h, "127.", 4) == 0;
}

/* Headers named name: how many, and the first value. */
struct hcount {
    const char *name;
    const char *value;
    int n;
};

static enum MHD_Result
count_header(void *cls, enum MHD_ValueKind kind, const char *key,
             const char *value)
{
    struct hcount *h = cls;

    (void)kind;
    if (strcasecmp(key, h->name) == 0) {
        if (h->n++ == 0)
            h->value = value;
    }
    return MHD_YES;
}

static const char *
one_header(struct MHD_Connection *c, const char *name, int *count)
{
    struct hcount h = {name, NULL, 0};

    (void)MHD_get_connection_values(c, MHD_HEADER_KIND, count_header, &h);
    *count = h.n;
    return h.value;
}

/* A media-range list holds type (exactly, or the wildcards for it). */
static int
accepts(const char *accept, const char *type)
{
    const char *p = accept;
    size_t tl = strlen(type);

    while (p != NULL && *p != '\0') {
        while (*p == ' ' || *p == ',')
            p++;
        if (strncasecmp(p, type, tl) == 0 &&
            (p[tl] == '\0' || p[tl] == ',' || p[tl] == ';' || p[tl] == ' '))
            return 1;
        if (strncmp(p, "*/*", 3) == 0)
            return 1;
        p = strchr(p, ',');
    }
    return 0;
}

static int
session_syntax(const char *s)
{
    size_t i;

    for (i = 0; s[i] != '\0'; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
    return i == EXEC_MCP_SESSION_LEN;
}

enum MHD_Result
exec_mcp_begin(struct exec_mcp *m, struct MHD_Connection *c, const char *method,
               struct exec_mcp_req **out, int *answered)
{
    const char *v, *auth;
    struct exec_mcp_req *q;
    int n;
    size_t len;

    *out = NULL;
    *answered = 1;
    if (m == NULL)
        return queue_rpc_error(c, 404, EXEC_MCP_INVALID_REQUEST,
                               "this executor has no MCP servers", NULL);
    if (strcmp(method, "GET") == 0)
        return queue_rpc_error(c, 405, EXEC_MCP_INVALID_REQUEST,
                               "the gateway offers no server-sent stream",
                               "POST, DELETE");
    if (strcmp(method, "POST") != 0 && strcmp(method, "DELETE") != 0)
        return queue_rpc_error(c, 405, EXEC_MCP_INVALID_REQUEST,
                               "use POST (or DELETE to end a session)",
                               "POST, DELETE");
    v = one_header(c, "Origin", &n);
    if (n > 1 || (v != NULL && !loopback_origin(v)))
        return queue_rpc_error(c, 403, EXEC_MCP_INVALID_REQUEST,
                               "this Origin may not use the gateway", NULL);
    v = one_header(c, "Host", &n);
    if (listens_on_loopback(m) && (n != 1 || !loopback_host(v, strlen(v))))
        return queue_rpc_error(c, 403, EXEC_MCP_INVALID_REQUEST,
                               "the Host must be a loopback name", NULL);
    auth = one_header(c, MHD_HTTP_HEADER_AUTHORIZATION, &n);
    if (n != 1 || strncmp(auth, "Bearer ", 7) != 0 || auth[7] == '\0')
        return queue_rpc_error(c, 401, EXEC_MCP_INVALID_REQUEST,
                               "send your agent token as Authorization: "
                               "Bearer",
                               NULL);
    if (strcmp(method, "POST") == 0) {
        v = one_header(c, MHD_HTTP_HEADER_ACCEPT, &n);
        if (v == NULL || !accepts(v, "application/json") ||
            !accepts(v, "text/event-stream"))
            return queue_rpc_error(c, 406, EXEC_MCP_INVALID_REQUEST,
                                   "Accept must list application/json and "
                                   "text/event-stream",
                                   NULL);
        v = one_header(c, MHD_HTTP_HEADER_CONTENT_TYPE, &n);
        if (n != 1 || strncasecmp(v, "application/json", 16) != 0 ||
            (v[16] != '\0' && v[16] != ';' && v[16] != ' '))
            return queue_rpc_error(c, 415, EXEC_MCP_INVALID_REQUEST,
                                   "the body must be application/json", NULL);
        if (ig_body_declared_over(c, IG_EXEC_MCP_BODY_MAX_BYTES))
            return queue_rpc_error(c, 413, EXEC_MCP_INVALID_REQUEST,
                                   "the message is too large", NULL);
    }
    if ((q = calloc(1, sizeof(*q))) == NULL)
        return MHD_NO;
    pthread_mutex_init(&q->mu, NULL);
    q->refs = 1;
    q->m = m;
    q->conn = c;
    q->is_delete = strcmp(method, "DELETE") == 0;
    ig_buf_init(&q->body, IG_EXEC_MCP_BODY_MAX_BYTES);
    ig_buf_init(&q->out, (size_t)IG_EXEC_MCP_REPLY_MAX_BYTES * 2);
    len = strlen(auth + 7);
    if (len > IG_TOKEN_MAX_BYTES ||
        (q->token = sodium_malloc(len + 1)) == NULL) {
        exec_mcp_req_unref(q);
        return queue_rpc_error(c, 401, EXEC_MCP_INVALID_REQUEST,
                               "the bearer token is too long", NULL);
    }
    memcpy(q->token, auth + 7, len + 1);
    v = one_header(c, "Mcp-Session-Id", &n);
    if (n > 1 || (v != NULL && !session_syntax(v)))
        q->bad_session = 1;
    else if (v != NULL)
        memcpy(q->session, v, EXEC_MCP_SESSION_LEN + 1);
    v = one_header(c, "MCP-Protocol-Version", &n);
    if (v != NULL)
        (void)snprintf(q->version, sizeof(q->version), "%s",
                       n == 1 && strlen(v) < sizeof(q->version) ? v : "?");
    *out = q;
    *answered = 0;
    return MHD_YES;
}

void
exec_mcp_body(struct exec_mcp_req *q, const char *data, size_t n)
{
    if (q->too_large || ig_buf_add(&q->body, data, n) != IG_OK)
        q->too_large = 1;
}

static ssize_t
stream_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
    struct exec_mcp_req *q = cls;
    size_t n;

    pthread_mutex_lock(&q->mu);
    if (pos < q->out.len) {
        n = q->out.len - (size_t)pos < max ? q->out.len - (size_t)pos : max;
        memcpy(buf, q->out.data + pos, n);
        pthread_mutex_unlock(&q->mu);
        return (ssize_t)n;
    }
    if (q->overflow) {
        pthread_mutex_unlock(&q->mu);
        return MHD_CONTENT_READER_END_WITH_ERROR;
    }
    if (q->finished) {
        pthread_mutex_unlock(&q->mu);
        return MHD_CONTENT_READER_END_OF_STREAM;
    }
    q->parked = 1;
    MHD_suspend_connection(q->conn);
    pthread_mutex_unlock(&q->mu);
    return 0;
}

static void
stream_free(void *cls)
{
    exec_mcp_req_unref(cls);
}

static void
common_headers(struct exec_mcp_req *q, struct MHD_Response *r)
{
    (void)MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL,
                                  "no-cache, no-transform");
    if (q->new_session[0] != '\0')
        (void)MHD_add_response_header(r, "Mcp-Session-Id", q->new_session);
}

static enum MHD_Result
queue_answer(struct exec_mcp_req *q, struct MHD_Connection *c)
{
    struct MHD_Response *r;
    enum MHD_Result ret;

    if (q->streaming) {
        pthread_mutex_lock(&q->mu);
        q->refs++; /* the response's */
        pthread_mutex_unlock(&q->mu);
        r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 64 * 1024,
                                              stream_reader, q, stream_free);
        if (r == NULL) {
            exec_mcp_req_unref(q);
            return MHD_NO;
        }
        (void)MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
                                      "text/event-stream");
        (void)MHD_add_response_header(r, "X-Accel-Buffering", "no");
    } else {
        r = MHD_create_response_from_buffer(
            q->out.len,
            q->out.data != NULL ? q->out.data : (void *)(uintptr_t) "",
            MHD_RESPMEM_MUST_COPY);
        if (r == NULL)
            return MHD_NO;
        if (q->out.len > 0)
            (void)MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
                                          "application/json");
        if (q->status == 401)
            (void)MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
                                          "Bearer");
    }
    common_headers(q, r);
    ret = MHD_queue_response(c, q->status != 0 ? q->status : 500, r);
    MHD_destroy_response(r);
    return ret;
}

enum MHD_Result
exec_mcp_step(struct exec_mcp_req *q, struct MHD_Connection *c)
{
    int ready;

    if (!q->started) {
        if (q->too_large)
            return queue_rpc_error(c, 413, EXEC_MCP_INVALID_REQUEST,
                                   "the message is too large", NULL);
        if (atomic_load(&q->m->stopping))
            return queue_rpc_error(c, 503, EXEC_MCP_INTERNAL_ERROR,
                                   "the executor is stopping", NULL);
        if (atomic_fetch_add(&q->m->calls, 1) >= IG_EXEC_MCP_CALLS_MAX) {
            atomic_fetch_sub(&q->m->calls, 1);
            return queue_rpc_error(c, 503, EXEC_MCP_INTERNAL_ERROR,
                                   "too many gateway requests at once; try "
                                   "again",
                                   NULL);
        }
        q->started = 1;
        pthread_mutex_lock(&q->mu);
        q->refs++; /* the worker's */
        q->parked = 1;
        MHD_suspend_connection(c);
        pthread_mutex_unlock(&q->mu);
        if (exec_mcp_dispatch(q) != 0) {
            atomic_fetch_sub(&q->m->calls, 1);
            exec_mcp_answer_json(q, 503, "", 0);
            pthread_mutex_lock(&q->mu);
            q->finished = 1;
            exec_mcp_wake_locked(q);
            pthread_mutex_unlock(&q->mu);
            exec_mcp_req_unref(q);
        }
        return MHD_YES;
    }
    pthread_mutex_lock(&q->mu);
    ready = q->finished || q->streaming;
    if (!ready) {
        q->parked = 1;
        MHD_suspend_connection(c);
    }
    pthread_mutex_unlock(&q->mu);
    return ready ? queue_answer(q, c) : MHD_YES;
}

void
exec_mcp_done(struct exec_mcp_req *q)
{
    if (q != NULL)
        exec_mcp_req_unref(q);
}
