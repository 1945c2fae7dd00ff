/*
 * exec_git.c - the git gateway's HTTP side (see exec_git.h): the route and
 * the grant header are read on the first call, the body goes to an
 * unlinked temporary file as it arrives (past the repository's cap it is
 * counted and dropped), and the finished request is handed to a pool
 * worker (exec_git_run.c) while its connection is suspended. The worker
 * leaves the answer in g (a file, or a small buffer) and resumes the
 * connection; the access handler then queues it.
 *
 * Refused here, before any work: paths other than the three smart-HTTP
 * endpoints of a registered alias (404), the wrong method (405), query
 * arguments other than one `service` (400), no grant or more than one
 * Authorization header (401, with a hint), a grant that is not token
 * characters (400), a declared body over the cap (413), a body encoding
 * other than gzip, or gzip on a push (415).
 */
#include "exec_git_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exec_git_pkt.h"
#include "exec_verify.h"
#include "ig_body.h"
#include "ig_file.h"
#include "ig_limits.h"
#include "ig_time.h"

/* A fetch's negotiation body (the "have" lines) is capped at this. */
#define EXEC_GIT_UPLOAD_BODY_MAX (64ULL * 1024 * 1024)

static const char hint[] =
    "intentgate: this repository needs a grant. Push with `intentgate git "
    "push REMOTE REFSPEC...` (or fetch with `intentgate git fetch`), or "
    "give git the grant yourself: git -c http.extraHeader=\"Authorization: "
    "Bearer <grant>\" ...\n";

int
exec_git_path(const char *url)
{
    return strncmp(url, "/git/", 5) == 0;
}

static enum MHD_Result
queue_text(struct MHD_Connection *c, unsigned int status, const char *text)
{
    struct MHD_Response *r;
    enum MHD_Result ret;

    r = MHD_create_response_from_buffer(strlen(text), (void *)(uintptr_t)text,
                                        MHD_RESPMEM_PERSISTENT);
    if (r == NULL)
        return MHD_NO;
    (void)MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
                                  "text/plain; charset=utf-8");
    ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

/* "/git/<alias>/<rest>": the repository and the route, or an answer. */
static const char *
parse_route(struct exec_git_req *g, const char *url, const char *method,
            unsigned int *status)
{
    char alias[IG_EXEC_GIT_ALIAS_MAX + 1];
    const char *p = url + 5, *slash = strchr(p, '/');
    size_t n = slash != NULL ? (size_t)(slash - p) : 0;
    int get = strcmp(method, "GET") == 0;

    *status = 404;
    if (slash == NULL || n == 0 || n > IG_EXEC_GIT_ALIAS_MAX)
        return "intentgate: no such git path\n";
    memcpy(alias, p, n);
    alias[n] = '\0';
    g->repo = exec_registry_git(g->x->registry, alias);
    if (g->repo == NULL)
        return "intentgate: no repository by that name here\n";
    if (strcmp(slash, "/info/refs") == 0)
        g->route = EXEC_GIT_REFS;
    else if (strcmp(slash, "/git-receive-pack") == 0)
        g->route = EXEC_GIT_RPC, g->svc = EXEC_GIT_RECEIVE;
    else if (strcmp(slash, "/git-upload-pack") == 0)
        g->route = EXEC_GIT_RPC, g->svc = EXEC_GIT_UPLOAD;
    else
        return "intentgate: no such git path\n";
    *status = 405;
    if (g->route == EXEC_GIT_REFS ? !get : strcmp(method, "POST") != 0)
        return g->route == EXEC_GIT_REFS ? "intentgate: use GET\n"
                                         : "intentgate: use POST\n";
    return NULL;
}

struct arg_scan {
    int service, other;
};

static enum MHD_Result
count_arg(void *cls, enum MHD_ValueKind kind, const char *key,
          const char *value)
{
    struct arg_scan *a = cls;
    (void)kind;
    (void)value;

    if (strcmp(key, "service") == 0)
        a->service++;
    else
        a->other++;
    return MHD_YES;
}

static enum MHD_Result
count_auth(void *cls, enum MHD_ValueKind kind, const char *key,
           const char *value)
{
    int *n = cls;
    (void)kind;
    (void)value;

    if (strcasecmp(key, "Authorization") == 0)
        (*n)++;
    return MHD_YES;
}

/* info/refs: exactly one service= of the two; RPC: no arguments. */
static const char *
check_args(struct exec_git_req *g, struct MHD_Connection *c)
{
    struct arg_scan a = {0, 0};
    const char *svc;

    (void)MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, count_arg, &a);
    if (g->route == EXEC_GIT_RPC)
        return a.service + a.other == 0 ? NULL : "intentgate: no query here\n";
    svc = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "service");
    if (a.service != 1 || a.other != 0 || svc == NULL)
        return "intentgate: want ?service=git-receive-pack or "
               "?service=git-upload-pack (smart HTTP only)\n";
    if (strcmp(svc, "git-receive-pack") == 0)
        g->svc = EXEC_GIT_RECEIVE;
    else if (strcmp(svc, "git-upload-pack") == 0)
        g->svc = EXEC_GIT_UPLOAD;
    else
        return "intentgate: unknown service\n";
    return NULL;
}

/* The bearer token, once, token characters only; else an answer. */
static const char *
read_grant(struct exec_git_req *g, struct MHD_Connection *c,
           unsigned int *status)
{
    const char *h = NULL;
    size_t i, n, size = 0;
    int count = 0;

    (void)MHD_get_connection_values(c, MHD_HEADER_KIND, count_auth, &count);
    if (MHD_lookup_connection_value_n(
            c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION,
            strlen(MHD_HTTP_HEADER_AUTHORIZATION), &h, &size) != MHD_YES)
        h = NULL;
    *status = 401;
    if (h == NULL || count == 0)
        return hint;
    *status = 400; /* never check a prefix of what was sent */
    if (strlen(h) != size)
        return "intentgate: the Authorization header holds a NUL byte\n";
    *status = 401;
    if (count > 1 || strncmp(h, "Bearer ", 7) != 0)
        return "intentgate: give exactly one Authorization: Bearer <grant>"
               " header\n";
    h += 7;
    n = strlen(h);
    *status = 400;
    if (n == 0 || n > IG_TOKEN_MAX_BYTES)
        return "intentgate: the grant is empty or too long\n";
    for (i = 0; i < n; i++)
        if (!((h[i] >= 'A' && h[i] <= 'Z') || (h[i] >= 'a' && h[i] <= 'z') ||
              (h[i] >= '0' && h[i] <= '9') || h[i] == '.' || h[i] == '-' ||
              h[i] == '_'))
            return "intentgate: the grant holds characters no grant has\n";
    g->grant = strdup(h);
    *status = 500;
    return g->grant == NULL ? "intentgate: out of memory\n" : NULL;
}

/* Content-Encoding, Git-Protocol and the declared length. */
static const char *
read_headers(struct exec_git_req *g, struct MHD_Connection *c,
             unsigned int *status)
{
    const char *enc =
        MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Encoding");
    const char *proto =
        MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Git-Protocol");
    size_t i;

    *status = 415;
    if (enc != NULL && strcmp(enc, "identity") != 0) {
        if (strcmp(enc, "gzip") != 0 || g->svc == EXEC_GIT_RECEIVE)
            return "intentgate: this body encoding is not taken here\n";
        g->gzip = 1;
    }
    *status = 400;
    if (proto != NULL) {
        if (strlen(proto) >= sizeof(g->git_protocol))
            return "intentgate: Git-Protocol header too long\n";
        for (i = 0; proto[i] != '\0'; i++)
            if ((unsigned char)proto[i] < 0x20 || proto[i] == 0x7f)
                return "intentgate: Git-Protocol header holds controls\n";
        (void)snprintf(g->git_protocol, sizeof(g->git_protocol), "%s", proto);
    }
    g->body_cap = g->svc == EXEC_GIT_RECEIVE ? (uint64_t)g->repo->max_push_bytes
                                             : EXEC_GIT_UPLOAD_BODY_MAX;
    /* A declared length over the cap is refused before the body (git
       declares lengths only up to http.postBuffer, 1 MiB; larger pushes
       come chunked, and are refused after their body, with ng lines). */
    *status = 413;
    if (g->route == EXEC_GIT_RPC && ig_body_declared_over(c, g->body_cap))
        return "intentgate: the request body is over this repository's cap\n";
    return NULL;
}

static enum MHD_Result queue_answer(struct exec_git_req *g,
                                    struct MHD_Connection *c);

/* Requests alive at once (each may hold a body file and an answer file):
   at most twice max_concurrent, within the descriptors the executor
   keeps in reserve beyond one per connection. */
static const char *
hold_slot(struct exec_git_req *g, unsigned int *status)
{
    if (atomic_fetch_add(&g->x->git_open, 1) >= 2 * g->x->cfg->max_concurrent) {
        atomic_fetch_sub(&g->x->git_open, 1);
        *status = 503;
        return "intentgate: too many git requests at once; try again\n";
    }
    g->counted = 1;
    return NULL;
}

/* The grant's own checks (signature for the intent hash it claims, key,
   audience, validity, action for this service, this alias), before any
   body is taken or the PDP asked: 0 with g->intent_id set, or -1 with
   g's answer set. The worker then checks the intent the PDP recorded
   against the same token (exec_verify_grant). */
static int
check_token(struct exec_git_req *g)
{
    const char *want = g->svc == EXEC_GIT_RECEIVE ? "git.push" : "git.fetch";
    const char *action, *res, *id;
    json_t *claims = NULL;
    struct ig_err err;
    enum exec_refusal r;
    char why[300];

    ig_err_clear(&err);
    r = exec_verify_token(g->x->keys, g->grant, g->x->cfg->id, ig_time_now(),
                          &claims, &err);
    action = json_string_value(json_object_get(claims, "action"));
    res = json_string_value(json_object_get(claims, "resource"));
    id = json_string_value(json_object_get(claims, "intent_id"));
    if (r != EXEC_ACCEPT)
        (void)snprintf(why, sizeof(why), "grant refused: %s (%.200s)",
                       exec_refusal_code(r), err.msg);
    else if (action == NULL || strcmp(action, want) != 0)
        (void)snprintf(
            why, sizeof(why), "this grant is for %.64s; %s needs a %s grant",
            action != NULL ? action : "?", exec_git_service_name(g->svc), want);
    else if (res == NULL || strcmp(res, g->repo->alias) != 0)
        (void)snprintf(why, sizeof(why),
                       "this grant is for another repository");
    else if (id == NULL || strlen(id) >= sizeof(g->intent_id))
        (void)snprintf(why, sizeof(why), "the grant is malformed");
    else /* the intent the worker asks the PDP for */
        (void)snprintf(g->intent_id, sizeof(g->intent_id), "%s", id);
    json_decref(claims);
    if (g->intent_id[0] != '\0')
        return 0;
    exec_git_refuse(g, why);
    return -1;
}

enum MHD_Result
exec_git_begin(struct exec_ctx *x, struct MHD_Connection *c, const char *url,
               const char *method, struct exec_git_req **out, int *answered)
{
    struct exec_git_req *g = calloc(1, sizeof(*g));
    unsigned int status = 500;
    const char *no;

    *out = g;
    *answered = 0;
    if (g == NULL)
        return MHD_NO;
    pthread_mutex_init(&g->mu, NULL);
    g->refs = 1;
    g->x = x;
    g->conn = c;
    g->body_fd = g->reply_fd = -1;
    ig_buf_init(&g->reply_mem, 1024 * 1024);
    no = parse_route(g, url, method, &status);
    if (no == NULL && (no = check_args(g, c)) != NULL)
        status = 400;
    if (no == NULL)
        no = read_grant(g, c, &status);
    if (no == NULL)
        no = read_headers(g, c, &status);
    if (no == NULL && (no = hold_slot(g, &status)) == NULL) {
        if (check_token(g) == 0)
            return MHD_YES;
        *answered = 1; /* refused as git shows it: g holds the answer */
        atomic_fetch_add(
            &x->metrics.git[g->svc == EXEC_GIT_UPLOAD][EXEC_GIT_REFUSED], 1);
        return queue_answer(g, c);
    }
    *answered = 1;
    atomic_fetch_add(&x->metrics.refused, 1);
    if (g->svc != 0)
        atomic_fetch_add(
            &x->metrics.git[g->svc == EXEC_GIT_UPLOAD][EXEC_GIT_REFUSED], 1);
    return queue_text(c, status, no);
}

void
exec_git_body(struct exec_git_req *g, const char *data, size_t n)
{
    if (g->io_error || g->route != EXEC_GIT_RPC)
        return;
    if (g->too_large || n > g->body_cap - g->body_len) {
        /* Over the cap: keep only what a refusal needs (the commands at
           the start, for the ng lines), drop and count the rest. */
        g->too_large = 1;
        n = g->body_len < EXEC_GIT_HEAD_MAX
                ? (n < EXEC_GIT_HEAD_MAX - g->body_len
                       ? n
                       : (size_t)(EXEC_GIT_HEAD_MAX - g->body_len))
                : 0;
        if (n == 0)
            return;
    }
    if (g->body_fd < 0 && (g->body_fd = exec_git_tmpfile(g->x)) < 0) {
        g->io_error = 1;
        return;
    }
    if (ig_file_write_all(g->body_fd, data, n) != 0) {
        g->io_error = 1;
        return;
    }
    g->body_len += n;
}

static void
git_unref(struct exec_git_req *g)
{
    int last;

    pthread_mutex_lock(&g->mu);
    last = --g->refs == 0;
    pthread_mutex_unlock(&g->mu);
    if (!last)
        return;
    if (g->counted)
        atomic_fetch_sub(&g->x->git_open, 1);
    if (g->body_fd >= 0)
        (void)close(g->body_fd);
    if (g->reply_fd >= 0)
        (void)close(g->reply_fd);
    ig_buf_release(&g->reply_mem);
    json_decref(g->rep.detail); /* when never sent */
    if (g->grant != NULL) {
        memset(g->grant, 0, strlen(g->grant));
        free(g->grant);
    }
    pthread_mutex_destroy(&g->mu);
    free(g);
}

/* The answer is set: resume the connection if we parked it. */
static void
finish(struct exec_git_req *g)
{
    pthread_mutex_lock(&g->mu);
    g->finished = 1;
    exec_git_wake_locked(g);
    pthread_mutex_unlock(&g->mu);
}

/* On a pool worker: do the work, then resume the connection. */
static void
work(void *arg)
{
    struct exec_git_req *g = arg;

    exec_git_work(g);
    atomic_fetch_sub(&g->x->git_running, 1);
    atomic_fetch_add(&g->x->metrics.git[g->svc == EXEC_GIT_UPLOAD][g->result],
                     1);
    finish(g);
    /* The agent has its answer: now deliver the outcome (the spool
       retries it). */
    if (g->has_report)
        exec_report_send(g->x, &g->rep);
    git_unref(g);
}

static enum MHD_Result
queue_answer(struct exec_git_req *g, struct MHD_Connection *c)
{
    struct MHD_Response *r;
    enum MHD_Result ret;

    if (g->reply_fd >= 0) {
        r = MHD_create_response_from_fd64(g->reply_len, g->reply_fd);
        if (r != NULL)
            g->reply_fd = -1; /* libmicrohttpd closes it */
    } else {
        r = MHD_create_response_from_buffer(g->reply_mem.len,
                                            g->reply_mem.data != NULL
                                                ? g->reply_mem.data
                                                : (void *)(uintptr_t) "",
                                            MHD_RESPMEM_MUST_COPY);
    }
    if (r == NULL)
        return MHD_NO;
    (void)MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
                                  g->content_type);
    (void)MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
    ret = MHD_queue_response(c, g->status, r);
    MHD_destroy_response(r);
    return ret;
}

/* The streamed answer: what the worker has said is safe, then the end
   (or a cut connection when the upstream failed or held the credential:
   git then sees a broken answer, never a wrong one). */
static ssize_t
reader(void *cls, uint64_t pos, char *buf, size_t max)
{
    struct exec_git_req *g = cls;
    size_t n;
    ssize_t r;

    pthread_mutex_lock(&g->mu);
    if (g->stream_failed) {
        pthread_mutex_unlock(&g->mu);
        return MHD_CONTENT_READER_END_WITH_ERROR;
    }
    if (pos < g->safe_len) {
        n = g->safe_len - pos < max ? (size_t)(g->safe_len - pos) : max;
        pthread_mutex_unlock(&g->mu);
        do
            r = pread(g->reply_fd, buf, n, (off_t)pos);
        while (r < 0 && errno == EINTR);
        return r > 0 ? r : MHD_CONTENT_READER_END_WITH_ERROR;
    }
    if (g->finished) {
        pthread_mutex_unlock(&g->mu);
        return MHD_CONTENT_READER_END_OF_STREAM;
    }
    g->parked = 1; /* nothing yet: the worker wakes us */
    MHD_suspend_connection(g->conn);
    pthread_mutex_unlock(&g->mu);
    return 0;
}

static void
reader_free(void *cls)
{
    git_unref(cls);
}

static enum MHD_Result
queue_stream(struct exec_git_req *g, struct MHD_Connection *c)
{
    struct MHD_Response *r;
    enum MHD_Result ret;

    pthread_mutex_lock(&g->mu);
    g->refs++; /* the response's */
    pthread_mutex_unlock(&g->mu);
    r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 256 * 1024, reader,
                                          g, reader_free);
    if (r == NULL) {
        git_unref(g);
        return MHD_NO;
    }
    (void)MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
                                  g->content_type);
    (void)MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
    ret = MHD_queue_response(c, 200, r);
    MHD_destroy_response(r);
    return ret;
}

enum MHD_Result
exec_git_step(struct exec_git_req *g, struct exec_pool *pool,
              struct MHD_Connection *c)
{
    enum MHD_Result ret = MHD_YES;

    if (!g->started) {
        if (g->too_large && g->svc != EXEC_GIT_RECEIVE)
            return queue_text(c, 413,
                              "intentgate: the request body is over this "
                              "repository's cap\n");
        if (g->io_error)
            return queue_text(c, 503,
                              "intentgate: the executor cannot spool the "
                              "request body now\n");
        /* Half the pool at most: executions keep their workers. */
        if (atomic_fetch_add(&g->x->git_running, 1) >=
            g->x->cfg->max_concurrent) {
            atomic_fetch_sub(&g->x->git_running, 1);
            return queue_text(c, 503,
                              "intentgate: too many git requests at once; "
                              "try again\n");
        }
        g->started = 1;
        pthread_mutex_lock(&g->mu);
        g->refs++; /* the worker's */
        g->parked = 1;
        MHD_suspend_connection(c);
        pthread_mutex_unlock(&g->mu);
        if (exec_pool_submit(pool, work, g) != IG_OK) {
            exec_git_answer_text(g, 503,
                                 "intentgate: the executor is stopping\n");
            atomic_fetch_sub(&g->x->git_running, 1);
            finish(g);
            git_unref(g); /* the worker's */
        }
        return MHD_YES;
    }
    pthread_mutex_lock(&g->mu);
    if (g->streaming) {
        pthread_mutex_unlock(&g->mu);
        return queue_stream(g, c);
    }
    if (!g->finished) {
        g->parked = 1;
        MHD_suspend_connection(c);
    }
    pthread_mutex_unlock(&g->mu);
    if (g->finished)
        ret = queue_answer(g, c);
    return ret;
}

void
exec_git_done(struct exec_git_req *g)
{
    if (g != NULL)
        git_unref(g);
}
