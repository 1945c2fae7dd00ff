/*
 * exec_mcp_up.c - one upstream MCP server (see exec_mcp_up.h): the
 * request/answer matching both transports share, and the stdio transport.
 *
 * stdio: the server runs through exec_run_start (the exec sandbox unless
 * its entry says "sandbox": "none"; PATH, its "env" and, with a
 * credential, credential_env=<credential> are all it sees) with a pipe as
 * stdin. A reader thread splits its stdout into lines (capped at
 * max_reply_bytes; a longer line fails the call it answers) and
 * dispatches each message; a waiter thread drains stderr and reaps it.
 * When stdout ends the server is down: every call in flight fails and
 * the next call starts it again. A start that fails is not tried again
 * for a while (1 s, doubling to 30 s).
 *
 * Lines go to its stdin one at a time, non-blocking under a deadline, so a
 * server that stops reading cannot hang a gateway thread.
 */
#include "exec_mcp_up_int.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sodium.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "exec_mcp_rpc.h"
#include "exec_sandbox.h"
#include "ig_log.h"

#define MCP_PROTOCOL "2025-11-25"
#define START_BACKOFF_MS 1000.0
#define START_BACKOFF_MAX_MS 30000.0

double
exec_mcp_now_ms(void)
{
    struct timespec ts;

    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

#define QUOTE_MAX 4096 /* bytes of upstream text looked at for a quote */

void
exec_mcp_up_quote(const struct exec_mcp_up *u, const char *text, char *out,
                  size_t cap)
{
    size_t len = text != NULL ? strlen(text) : 0, n;
    struct ig_buf b;
    int found = 0;

    if (cap == 0)
        return;
    out[0] = '\0';
    if (text == NULL) {
        (void)snprintf(out, cap, "(none)");
        return;
    }
    /* Room for a marker in place of every byte. */
    ig_buf_init(&b, QUOTE_MAX * (sizeof(EXEC_SCRUB_MARKER) + 1) + 64);
    if (exec_scrub_bytes(u->scrub, text, len > QUOTE_MAX ? QUOTE_MAX : len,
                         len > QUOTE_MAX ? EXEC_SCRUB_CUT : 0, &b,
                         &found) != IG_OK) {
        ig_buf_release(&b);
        (void)snprintf(out, cap, "%s", EXEC_SCRUB_WITHHELD);
        return;
    }
    n = b.len < cap - 1 ? b.len : cap - 1;
    while (n > 0 && n < b.len && ((unsigned char)b.data[n] & 0xC0) == 0x80)
        n--;
    if (n > 0)
        memcpy(out, b.data, n);
    out[n] = '\0';
    sodium_memzero(b.data, b.len);
    ig_buf_release(&b);
}

/* The versions we speak with an upstream, newest first. */
static int
version_known(const char *v)
{
    static const char *const known[] = {"2025-11-25", "2025-06-18",
                                        "2025-03-26", NULL};
    size_t i;

    for (i = 0; v != NULL && known[i] != NULL; i++)
        if (strcmp(v, known[i]) == 0)
            return 1;
    return 0;
}

enum ig_status
exec_mcp_up_new(struct exec_ctx *x, const struct exec_mcp_server *srv,
                struct exec_mcp_up **out, struct ig_err *err)
{
    struct exec_mcp_up *u = calloc(1, sizeof(*u));
    unsigned char *cred = NULL;
    size_t len = 0;
    enum ig_status st = IG_OK;

    *out = NULL;
    if (u == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    u->x = x;
    u->srv = srv;
    u->deliver = exec_mcp_up_dispatch;
    u->in_fd = u->out_fd = -1;
    u->next_id = 1;
    (void)pthread_mutex_init(&u->mu, NULL);
    (void)pthread_mutex_init(&u->wmu, NULL);
    (void)pthread_cond_init(&u->cv, NULL);
    if (srv->credential != NULL) {
        st = exec_secrets_get(x->secrets, srv->credential, &cred, &len, err);
        if (st != IG_OK)
            st = ig_err_set(err, st,
                            "mcp \"%s\": the credential \"%s\" cannot be read",
                            srv->alias, srv->credential);
        else
            st = exec_scrub_new(cred, len, srv->http ? srv->cred_prefix : NULL,
                                &u->scrub, err);
        exec_secret_free(cred, len);
    }
    if (st != IG_OK) {
        exec_mcp_up_free(u);
        return st;
    }
    *out = u;
    return IG_OK;
}

/* ---- calls in flight ---- */

static void
fail_all_locked(struct exec_mcp_up *u, const char *why)
{
    struct exec_mcp_pending *p;

    for (p = u->calls; p != NULL; p = p->next)
        if (!p->done) {
            p->done = 1;
            (void)snprintf(p->why, sizeof(p->why), "%.199s", why);
        }
    (void)pthread_cond_broadcast(&u->cv);
}

static void
unlink_locked(struct exec_mcp_up *u, struct exec_mcp_pending *p)
{
    struct exec_mcp_pending **pp;

    for (pp = &u->calls; *pp != NULL; pp = &(*pp)->next)
        if (*pp == p) {
            *pp = p->next;
            return;
        }
}

static struct exec_mcp_pending *
find_locked(struct exec_mcp_up *u, const json_t *id)
{
    struct exec_mcp_pending *p;
    double v;

    if (!json_is_number(id))
        return NULL;
    v = json_number_value(id);
    for (p = u->calls; p != NULL; p = p->next)
        if (!p->done && (double)p->id == v)
            return p;
    return NULL;
}

static struct exec_mcp_pending *
find_token_locked(struct exec_mcp_up *u, const json_t *tok)
{
    struct exec_mcp_pending *p;

    if (!json_is_string(tok))
        return NULL;
    for (p = u->calls; p != NULL; p = p->next)
        if (!p->done && p->token[0] != '\0' &&
            strcmp(p->token, json_string_value(tok)) == 0)
            return p;
    return NULL;
}

/* ---- writing to a stdio server ---- */

/* Write all of buf to fd (non-blocking) before deadline (ms). */
static int
write_all(int fd, const char *buf, size_t len, double deadline)
{
    struct pollfd pf;
    ssize_t n;
    double left;

    while (len > 0) {
        n = write(fd, buf, len);
        if (n > 0) {
            buf += n;
            len -= (size_t)n;
            continue;
        }
        if (n < 0 && errno != EAGAIN && errno != EINTR)
            return -1;
        left = deadline - exec_mcp_now_ms();
        if (left <= 0)
            return -1;
        pf.fd = fd;
        pf.events = POLLOUT;
        if (poll(&pf, 1, (int)(left > 1000 ? 1000 : left + 1)) < 0 &&
            errno != EINTR)
            return -1;
    }
    return 0;
}

/* One message line to the stdio server. */
static enum ig_status
send_line(struct exec_mcp_up *u, struct ig_buf *msg, double deadline,
          struct ig_err *err)
{
    int rc, fd;

    if (ig_buf_add(msg, "\n", 1) != IG_OK)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    (void)pthread_mutex_lock(&u->wmu);
    (void)pthread_mutex_lock(&u->mu);
    fd = u->state != EXEC_MCP_DOWN ? u->in_fd : -1;
    (void)pthread_mutex_unlock(&u->mu);
    rc = fd >= 0 ? write_all(fd, msg->data, msg->len, deadline) : -1;
    (void)pthread_mutex_unlock(&u->wmu);
    return rc == 0 ? IG_OK
                   : ig_err_set(err, IG_ERR_IO,
                                "mcp \"%s\": the server does not read its "
                                "input",
                                u->srv->alias);
}

/* ---- what the upstream sends ---- */

/* Answer the upstream's own request: ping, and nothing else (we declared
   no capability: no roots, sampling or elicitation reach the agent). */
static void
answer_upstream(struct exec_mcp_up *u, const struct exec_mcp_msg *m)
{
    struct ig_buf out;
    struct ig_err err;
    json_t *empty = json_object();
    enum ig_status st;

    ig_buf_init(&out, 4096);
    if (strcmp(m->method, "ping") == 0)
        st = exec_mcp_write_result(&out, m->id, empty);
    else
        st = exec_mcp_write_error(&out, m->id, EXEC_MCP_METHOD_NOT_FOUND,
                                  "the intentgate gateway does not offer "
                                  "this to upstream servers",
                                  NULL);
    json_decref(empty);
    if (st == IG_OK && u->srv->http)
        st = exec_mcp_http_note(u, out.data, out.len, &err);
    else if (st == IG_OK)
        st = send_line(u, &out, exec_mcp_now_ms() + 1000, &err);
    (void)st; /* best effort: the server gave up on its request */
    ig_buf_release(&out);
}

void
exec_mcp_up_dispatch(struct exec_mcp_up *u, const char *line, size_t len,
                     struct exec_mcp_pending *only)
{
    struct exec_mcp_msg m;
    struct exec_mcp_pending *p;
    struct ig_err err;
    json_t *bad = NULL;
    int code;

    if (exec_mcp_parse(line, len, &m, &code, &bad, &err) != IG_OK) {
        json_decref(bad);
        ig_log(
            "warn", "mcp.upstream_garbage",
            json_pack("{s:s, s:s}", "server", u->srv->alias, "error", err.msg));
        return;
    }
    (void)pthread_mutex_lock(&u->mu);
    switch (m.kind) {
    case EXEC_MCP_RESULT:
    case EXEC_MCP_ERROR:
        p = find_locked(u, m.id);
        if (p != NULL && (only == NULL || p == only)) {
            p->result = m.kind == EXEC_MCP_RESULT
                            ? json_incref((json_t *)(uintptr_t)m.result)
                            : NULL;
            p->error = m.kind == EXEC_MCP_ERROR
                           ? json_incref((json_t *)(uintptr_t)m.error)
                           : NULL;
            p->done = 1;
            (void)pthread_cond_broadcast(&u->cv);
        }
        break;
    case EXEC_MCP_NOTIFICATION:
        if (strcmp(m.method, "notifications/tools/list_changed") == 0) {
            u->gen++;
        } else if (strcmp(m.method, "notifications/progress") == 0 ||
                   strcmp(m.method, "notifications/message") == 0) {
            p = strcmp(m.method, "notifications/progress") == 0
                    ? find_token_locked(
                          u, json_object_get(m.params, "progressToken"))
                    : only;
            if (p != NULL && p->fn != NULL)
                p->fn(p->ctx, m.method, m.params);
        }
        break;
    case EXEC_MCP_REQUEST:
        (void)pthread_mutex_unlock(&u->mu);
        answer_upstream(u, &m);
        exec_mcp_msg_release(&m);
        return;
    }
    (void)pthread_mutex_unlock(&u->mu);
    exec_mcp_msg_release(&m);
}

/* ---- the stdio server's threads ---- */

static int
on_line(void *ctx, const char *line, size_t len, int too_long)
{
    struct exec_mcp_up *u = ctx;

    if (too_long) {
        /* Which call it answered cannot be known: every call in flight
           fails now rather than waiting for its timeout. */
        ig_log("warn", "mcp.upstream_line_too_long",
               json_pack("{s:s}", "server", u->srv->alias));
        (void)pthread_mutex_lock(&u->mu);
        fail_all_locked(u, "the server sent a message over max_reply_bytes");
        (void)pthread_mutex_unlock(&u->mu);
        return 0;
    }
    exec_mcp_up_dispatch(u, line, len, NULL);
    return 0;
}

/* The server is gone: fail what waits on it, once. */
static void
mark_down(struct exec_mcp_up *u, const char *why)
{
    (void)pthread_mutex_lock(&u->mu);
    /* While the starter reaps, the old server's waiter may only now see
       it end: the state is the new start's (STARTING), not this one's. */
    if (u->state != EXEC_MCP_DOWN && !u->reaping) {
        u->state = EXEC_MCP_DOWN;
        u->gen++;
        (void)snprintf(u->down_why, sizeof(u->down_why), "%s", why);
        fail_all_locked(u, why);
        if (!u->closing)
            ig_log(
                "warn", "mcp.upstream_down",
                json_pack("{s:s, s:s}", "server", u->srv->alias, "why", why));
    }
    (void)pthread_mutex_unlock(&u->mu);
}

static void *
reader_main(void *arg)
{
    struct exec_mcp_up *u = arg;
    struct exec_mcp_lines lines;
    char buf[65536];
    ssize_t n;

    exec_mcp_lines_init(&lines, (size_t)u->srv->max_reply_bytes);
    for (;;) {
        n = read(u->out_fd, buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        if (exec_mcp_lines_feed(&lines, buf, (size_t)n, on_line, u) != IG_OK)
            break;
    }
    exec_mcp_lines_release(&lines);
    mark_down(u, "the server exited");
    (void)pthread_mutex_lock(&u->mu);
    u->drained = 1;
    (void)pthread_cond_broadcast(&u->cv);
    (void)pthread_mutex_unlock(&u->mu);
    return NULL;
}

/* After the server exited: let the reader take what it wrote before it
   went (an answer and then exit is a normal way to end), for at most
   DRAIN_MS - a descendant may hold the pipe open. */
#define DRAIN_MS 2000
static void
await_drained(struct exec_mcp_up *u)
{
    struct timespec until;

    (void)clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += DRAIN_MS / 1000;
    (void)pthread_mutex_lock(&u->mu);
    while (!u->drained && pthread_cond_timedwait(&u->cv, &u->mu, &until) == 0)
        ;
    (void)pthread_mutex_unlock(&u->mu);
}

static enum ig_status spawn_here(struct exec_mcp_up *u, struct ig_err *err);

/* The server's own thread: it forks the server (bwrap's --die-with-parent
   ties the server's life to the thread that forked it, so that is this
   one, which lives exactly as long), reports the start to spawn_stdio,
   then drains stderr and reaps. */
static void *
waiter_main(void *arg)
{
    struct exec_mcp_up *u = arg;
    struct exec_run_result res;
    struct ig_buf clean;
    struct ig_err err;
    enum ig_status st;
    int found = 0;

    ig_err_clear(&err);
    st = spawn_here(u, &err);
    (void)pthread_mutex_lock(&u->mu);
    u->spawn_st = st;
    (void)snprintf(u->spawn_why, sizeof(u->spawn_why), "%.199s", err.msg);
    u->spawned = 1;
    (void)pthread_cond_broadcast(&u->cv);
    (void)pthread_mutex_unlock(&u->mu);
    if (st != IG_OK)
        return NULL;
    if (exec_run_wait(u->run, NULL, NULL, &res, &err) != IG_OK) {
        mark_down(u, "the server exited");
        return NULL;
    }
    /* The calls still in flight fail only once the reader has taken the
       answers the server wrote before it exited: failing them at once
       lost an answer written just before the exit. */
    await_drained(u);
    mark_down(u, "the server exited"); /* before the log says so */
    /* What it said on stderr, scrubbed and cut, tells the operator why. */
    ig_buf_init(&clean, 4096);
    if (!u->closing)
        ig_log("warn", "mcp.upstream_exit",
               json_pack("{s:s, s:i, s:i, s:b}", "server", u->srv->alias,
                         "exit_code", res.exit_code, "signal", res.term_signal,
                         "timed_out", res.timed_out));
    if (res.err_len > 0 && !u->closing &&
        exec_scrub_bytes(
            u->scrub, res.err, res.err_len > 600 ? 600 : res.err_len,
            res.err_len > 600 ? EXEC_SCRUB_CUT : 0, &clean, &found) == IG_OK &&
        ig_buf_add(&clean, "", 1) == IG_OK)
        ig_log("warn", "mcp.upstream_stderr",
               json_pack("{s:s, s:s%, s:i}", "server", u->srv->alias, "stderr",
                         clean.data, strlen(clean.data), "exit_code",
                         res.exit_code));
    ig_buf_release(&clean);
    exec_run_result_release(&res);
    return NULL;
}

/* Join the threads of a server that is down and free its run. Caller
   holds no lock; only the starter (state STARTING) or free calls it. */
static void
reap_old(struct exec_mcp_up *u)
{
    (void)pthread_mutex_lock(&u->mu);
    u->reaping = 1;
    (void)pthread_mutex_unlock(&u->mu);
    if (u->threads) {
        if (u->run != NULL)
            exec_run_cancel(u->run);
        (void)pthread_join(u->reader, NULL);
        (void)pthread_join(u->waiter, NULL);
        u->threads = 0;
    }
    (void)pthread_mutex_lock(&u->mu);
    u->reaping = 0;
    (void)pthread_mutex_unlock(&u->mu);
    exec_run_free(u->run);
    u->run = NULL;
    if (u->in_fd >= 0)
        (void)close(u->in_fd);
    if (u->out_fd >= 0)
        (void)close(u->out_fd);
    u->in_fd = u->out_fd = -1;
}

/* The child's environment: the entry's env and the credential. */
static json_t *
child_env(struct exec_mcp_up *u, struct ig_err *err)
{
    const struct exec_mcp_server *s = u->srv;
    json_t *env = s->env != NULL ? json_deep_copy(s->env) : json_object();
    unsigned char *cred = NULL;
    size_t len = 0;
    json_t *v;

    if (env == NULL || s->credential == NULL)
        return env;
    if (exec_secrets_get(u->x->secrets, s->credential, &cred, &len, err) !=
        IG_OK) {
        json_decref(env);
        return NULL;
    }
    v = json_stringn((const char *)cred, len);
    exec_secret_free(cred, len);
    if (v == NULL || json_object_set_new(env, s->cred_env, v) != 0) {
        json_decref(env);
        (void)ig_err_set(err, IG_ERR_NOMEM, "out of memory");
        return NULL;
    }
    return env;
}

/* Wipe the credential's copy in the environment object, then free it. */
static void
env_free(json_t *env, const char *cred_var)
{
    json_t *v = cred_var != NULL ? json_object_get(env, cred_var) : NULL;

    if (v != NULL)
        sodium_memzero((char *)(uintptr_t)json_string_value(v),
                       json_string_length(v));
    json_decref(env);
}

static enum ig_status
spawn_here(struct exec_mcp_up *u, struct ig_err *err)
{
    const struct exec_mcp_server *s = u->srv;
    struct exec_run_opts o;
    enum ig_status st;
    json_t *env;

    if ((env = child_env(u, err)) == NULL)
        return IG_ERR_IO;
    memset(&o, 0, sizeof(o));
    o.argv = (char *const *)(uintptr_t)s->argv;
    o.argc = s->argc;
    o.sandbox = s->sandbox;
    o.network = s->network;
    /* A day at most (the longest a run may last); it is started again by
       the next call after that. */
    o.timeout_ms = IG_EXEC_RUN_TIMEOUT_MAX_MS;
    o.max_output_bytes = 65536;
    o.env = env;
    o.binds = s->binds;
    o.nbinds = s->nbinds;
    o.switch_user = s->sandbox && u->x->run_env.switch_user;
    o.uid = u->x->run_env.uid;
    o.gid = u->x->run_env.gid;
    o.cpu_seconds = 1UL << 30;
    o.address_space_bytes = 16ULL << 30; /* V8 reserves much it never uses */
    o.open_files = 1024;
    o.processes = 512;
    o.pipe_stdin = 1;
    st = exec_run_start(&o, &u->run, err);
    env_free(env, s->cred_env);
    if (st != IG_OK)
        return st;
    exec_run_take_stdio(u->run, &u->in_fd, &u->out_fd);
    if (u->in_fd < 0 || u->out_fd < 0 ||
        fcntl(u->in_fd, F_SETFL, O_NONBLOCK) != 0)
        return ig_err_set(err, IG_ERR_IO, "the server could not be started");
    return IG_OK;
}

/* Start the server on its own thread, then the reader. */
static enum ig_status
spawn_stdio(struct exec_mcp_up *u, struct ig_err *err)
{
    enum ig_status st;

    u->spawned = 0;
    u->drained = 0;
    if (pthread_create(&u->waiter, NULL, waiter_main, u) != 0)
        return ig_err_set(err, IG_ERR_IO, "cannot start a thread");
    (void)pthread_mutex_lock(&u->mu);
    while (!u->spawned)
        (void)pthread_cond_wait(&u->cv, &u->mu);
    st = u->spawn_st;
    (void)pthread_mutex_unlock(&u->mu);
    if (st != IG_OK) {
        (void)pthread_join(u->waiter, NULL);
        return ig_err_set(err, st, "%s", u->spawn_why);
    }
    if (pthread_create(&u->reader, NULL, reader_main, u) != 0) {
        exec_run_cancel(u->run);
        (void)pthread_join(u->waiter, NULL);
        return ig_err_set(err, IG_ERR_IO, "cannot start a thread");
    }
    u->threads = 1;
    return IG_OK;
}

/* ---- requests ---- */

static enum ig_status call_raw(struct exec_mcp_up *u, const char *method,
                               const json_t *params, const char *token,
                               exec_mcp_note_fn fn, void *ctx,
                               const atomic_int *cancel, long timeout_ms,
                               json_t **result, json_t **error,
                               struct ig_err *err);

static enum ig_status
handshake(struct exec_mcp_up *u, struct ig_err *err)
{
    json_t *params, *result = NULL, *error = NULL, *caps;
    const char *v;
    enum ig_status st;
    struct ig_buf note;
    char quote[128];

    params = json_pack("{s:s, s:{}, s:{s:s, s:s}}", "protocolVersion",
                       MCP_PROTOCOL, "capabilities", "clientInfo", "name",
                       "intentgate-gateway", "version", "1");
    if (params == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    st = call_raw(u, "initialize", params, NULL, NULL, NULL, NULL,
                  u->srv->timeout_ms, &result, &error, err);
    json_decref(params);
    if (st == IG_OK && error != NULL) {
        exec_mcp_up_quote(u,
                          json_string_value(json_object_get(error, "message")),
                          quote, 121);
        st = ig_err_set(err, IG_ERR_IO, "initialize was refused: %s", quote);
    }
    v = json_string_value(json_object_get(result, "protocolVersion"));
    if (st == IG_OK && !version_known(v)) {
        exec_mcp_up_quote(u, v, quote, 41);
        st = ig_err_set(err, IG_ERR_IO,
                        "the server speaks protocol %s, which the gateway "
                        "does not",
                        quote);
    }
    if (st == IG_OK) {
        caps = json_object_get(result, "capabilities");
        (void)pthread_mutex_lock(&u->mu);
        json_decref(u->caps);
        u->caps = json_is_object(caps) ? json_incref(caps) : json_object();
        (void)snprintf(u->version, sizeof(u->version), "%s", v);
        (void)pthread_mutex_unlock(&u->mu);
        ig_buf_init(&note, 256);
        if (exec_mcp_write_notification(&note, "notifications/initialized",
                                        NULL) != IG_OK)
            st = ig_err_set(err, IG_ERR_NOMEM, "out of memory");
        else if (u->srv->http)
            st = exec_mcp_http_note(u, note.data, note.len, err);
        else
            st = send_line(u, &note, exec_mcp_now_ms() + 5000, err);
        ig_buf_release(&note);
    }
    json_decref(result);
    json_decref(error);
    return st;
}

/* Start the server unless it is up (or being started). Caller holds no
   lock. */
static enum ig_status
ensure_up(struct exec_mcp_up *u, struct ig_err *err)
{
    enum ig_status st;
    double now;

    (void)pthread_mutex_lock(&u->mu);
    for (;;) {
        if (u->closing) {
            (void)pthread_mutex_unlock(&u->mu);
            return ig_err_set(err, IG_ERR_IO, "the gateway is stopping");
        }
        if (u->state == EXEC_MCP_UP) {
            (void)pthread_mutex_unlock(&u->mu);
            return IG_OK;
        }
        if (u->state == EXEC_MCP_DOWN)
            break;
        (void)pthread_cond_wait(&u->cv, &u->mu);
    }
    now = exec_mcp_now_ms();
    if (now < u->retry_at) {
        st = ig_err_set(err, IG_ERR_IO,
                        "mcp \"%s\" is down (%s); next start in %.0f ms",
                        u->srv->alias, u->down_why, u->retry_at - now);
        (void)pthread_mutex_unlock(&u->mu);
        return st;
    }
    u->state = EXEC_MCP_STARTING;
    u->reaping = !u->srv->http; /* until reap_old has joined the old */
    (void)pthread_mutex_unlock(&u->mu);

    if (u->srv->http) {
        st = exec_mcp_http_start(u, err);
    } else {
        reap_old(u);
        st = spawn_stdio(u, err);
    }
    if (st == IG_OK)
        st = handshake(u, err);
    (void)pthread_mutex_lock(&u->mu);
    if (st == IG_OK && u->state == EXEC_MCP_STARTING) {
        u->state = EXEC_MCP_UP;
        u->gen++;
        u->backoff_ms = 0;
    } else {
        if (st == IG_OK)
            st = ig_err_set(err, IG_ERR_IO, "the server exited while starting");
        u->state = EXEC_MCP_DOWN;
        u->backoff_ms = u->backoff_ms == 0 ? START_BACKOFF_MS
                        : u->backoff_ms * 2 > START_BACKOFF_MAX_MS
                            ? START_BACKOFF_MAX_MS
                            : u->backoff_ms * 2;
        u->retry_at = exec_mcp_now_ms() + u->backoff_ms;
        (void)snprintf(u->down_why, sizeof(u->down_why), "%.199s", err->msg);
        fail_all_locked(u, err->msg);
        ig_log("warn", "mcp.upstream_start_failed",
               json_pack("{s:s, s:s}", "server", u->srv->alias, "error",
                         err->msg));
    }
    (void)pthread_cond_broadcast(&u->cv);
    (void)pthread_mutex_unlock(&u->mu);
    if (st != IG_OK && !u->srv->http) {
        /* Not under STARTING any more: nobody else reaps it now, and a
           later start reaps it first. */
        if (u->run != NULL)
            exec_run_cancel(u->run);
    }
    return st;
}

/* Wait for p until deadline; 0 done, -1 timed out, -2 cancelled by the
   agent. Caller holds mu. */
static int
wait_locked(struct exec_mcp_up *u, struct exec_mcp_pending *p, double deadline)
{
    struct timespec ts;
    double left;

    while (!p->done) {
        if (p->cancel != NULL && atomic_load(p->cancel))
            return -2;
        left = deadline - exec_mcp_now_ms();
        if (left <= 0)
            return -1;
        (void)clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += (time_t)(left / 1000);
        ts.tv_nsec += (long)((left - (double)(long)(left / 1000) * 1000) * 1e6);
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        (void)pthread_cond_timedwait(&u->cv, &u->mu, &ts);
    }
    return 0;
}

/* Tell the upstream to stop working on id (best effort). */
static void
cancel_upstream(struct exec_mcp_up *u, uint64_t id, const char *reason)
{
    struct ig_buf out;
    struct ig_err err;
    json_t *params =
        json_pack("{s:I, s:s}", "requestId", (json_int_t)id, "reason", reason);

    ig_buf_init(&out, 1024);
    if (params != NULL && !u->srv->http &&
        exec_mcp_write_notification(&out, "notifications/cancelled", params) ==
            IG_OK)
        (void)send_line(u, &out, exec_mcp_now_ms() + 1000, &err);
    json_decref(params);
    ig_buf_release(&out);
}

static enum ig_status
call_raw(struct exec_mcp_up *u, const char *method, const json_t *params,
         const char *token, exec_mcp_note_fn fn, void *ctx,
         const atomic_int *cancel, long timeout_ms, json_t **result,
         json_t **error, struct ig_err *err)
{
    struct exec_mcp_pending p;
    struct ig_buf msg;
    json_t *id, *sent = NULL, *meta;
    enum ig_status st = IG_OK;
    double deadline = exec_mcp_now_ms() + (double)timeout_ms;
    int timed_out;

    *result = *error = NULL;
    memset(&p, 0, sizeof(p));
    p.fn = fn;
    p.ctx = ctx;
    p.cancel = cancel;
    if (token != NULL)
        (void)snprintf(p.token, sizeof(p.token), "%s", token);
    (void)pthread_mutex_lock(&u->mu);
    p.id = u->next_id++;
    p.next = u->calls;
    u->calls = &p;
    (void)pthread_mutex_unlock(&u->mu);

    id = json_integer((json_int_t)p.id);
    sent = params != NULL ? json_deep_copy(params) : NULL;
    if (token != NULL && sent != NULL) {
        meta = json_object_get(sent, "_meta");
        if (!json_is_object(meta)) {
            meta = json_object();
            (void)json_object_set_new(sent, "_meta", meta);
        }
        if (meta == NULL ||
            json_object_set_new(meta, "progressToken", json_string(token)) != 0)
            st = ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    }
    ig_buf_init(&msg, IG_EXEC_MCP_BODY_MAX_BYTES + 1024);
    if (st == IG_OK &&
        (id == NULL || (params != NULL && sent == NULL) ||
         exec_mcp_write_request(&msg, id, method, sent) != IG_OK))
        st = ig_err_set(err, IG_ERR_NOMEM, "cannot write the request");
    json_decref(id);
    json_decref(sent);
    if (st == IG_OK)
        st = u->srv->http ? exec_mcp_http_call(u, &p, msg.data, msg.len, err)
                          : send_line(u, &msg, deadline, err);
    ig_buf_release(&msg);

    (void)pthread_mutex_lock(&u->mu);
    timed_out = st == IG_OK ? wait_locked(u, &p, deadline) : 0;
    unlink_locked(u, &p);
    (void)pthread_mutex_unlock(&u->mu);
    if (cancel != NULL && atomic_load(cancel) && (st != IG_OK || timed_out)) {
        json_decref(p.result);
        json_decref(p.error);
        if (st == IG_OK)
            cancel_upstream(u, p.id, "cancelled by the client");
        return ig_err_set(err, IG_ERR_EXPIRED,
                          "the client cancelled the call; it may or may not "
                          "have happened");
    }
    if (st != IG_OK) {
        json_decref(p.result);
        json_decref(p.error);
        return st;
    }
    if (timed_out) {
        cancel_upstream(u, p.id, "timed out at the intentgate gateway");
        return ig_err_set(err, IG_ERR_EXPIRED,
                          "mcp \"%s\" did not answer %s within %ld ms",
                          u->srv->alias, method, timeout_ms);
    }
    if (p.result == NULL && p.error == NULL)
        return ig_err_set(err, IG_ERR_IO, "mcp \"%s\": %s", u->srv->alias,
                          p.why[0] != '\0' ? p.why : "no answer");
    *result = p.result;
    *error = p.error;
    return IG_OK;
}

enum ig_status
exec_mcp_up_call(struct exec_mcp_up *u, const char *method,
                 const json_t *params, exec_mcp_note_fn fn, void *ctx,
                 const atomic_int *cancel, json_t **result, json_t **error,
                 struct ig_err *err)
{
    char token[32];
    enum ig_status st;
    static atomic_ulong tokens;

    *result = *error = NULL;
    if ((st = ensure_up(u, err)) != IG_OK)
        return st;
    if (fn != NULL)
        (void)snprintf(token, sizeof(token), "igp-%lu",
                       (unsigned long)atomic_fetch_add(&tokens, 1) + 1);
    return call_raw(u, method, params, fn != NULL ? token : NULL, fn, ctx,
                    cancel, u->srv->timeout_ms, result, error, err);
}

void
exec_mcp_up_wake(struct exec_mcp_up *u)
{
    (void)pthread_mutex_lock(&u->mu);
    (void)pthread_cond_broadcast(&u->cv);
    (void)pthread_mutex_unlock(&u->mu);
}

void
exec_mcp_up_close(struct exec_mcp_up *u)
{
    atomic_store(&u->stopping, 1);
    (void)pthread_mutex_lock(&u->mu);
    u->closing = 1;
    fail_all_locked(u, "the gateway is stopping");
    (void)pthread_mutex_unlock(&u->mu);
}

void
exec_mcp_up_free(struct exec_mcp_up *u)
{
    if (u == NULL)
        return;
    (void)pthread_mutex_lock(&u->mu);
    u->closing = 1;
    while (u->state == EXEC_MCP_STARTING)
        (void)pthread_cond_wait(&u->cv, &u->mu);
    fail_all_locked(u, "the gateway is stopping");
    (void)pthread_mutex_unlock(&u->mu);
    if (u->srv->http)
        exec_mcp_http_stop(u);
    else
        reap_old(u);
    exec_scrub_free(u->scrub);
    json_decref(u->caps);
    (void)pthread_mutex_destroy(&u->mu);
    (void)pthread_mutex_destroy(&u->wmu);
    (void)pthread_cond_destroy(&u->cv);
    free(u);
}

const struct exec_scrub *
exec_mcp_up_scrub(const struct exec_mcp_up *u)
{
    return u->scrub;
}

unsigned long
exec_mcp_up_generation(struct exec_mcp_up *u)
{
    unsigned long g;

    (void)pthread_mutex_lock(&u->mu);
    g = u->gen;
    (void)pthread_mutex_unlock(&u->mu);
    return g;
}

json_t *
exec_mcp_up_caps(struct exec_mcp_up *u)
{
    json_t *c;

    (void)pthread_mutex_lock(&u->mu);
    c = u->caps != NULL ? json_incref(u->caps) : NULL;
    (void)pthread_mutex_unlock(&u->mu);
    return c;
}

const struct exec_mcp_server *
exec_mcp_up_server(const struct exec_mcp_up *u)
{
    return u->srv;
}
